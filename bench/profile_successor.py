"""Where a successor's time goes in the compiled expansion, by hand (not a test, not in `make`).

Takes one BFS level of a spec (the first level with at least ``--rows`` states, found with the
local engine's expansion), then runs over it, single-threaded and timed by the process's CPU
time (so a loaded machine skews it less than wall time), a ladder of loops compiled from the
spec's own guards and effects, each adding one part of what ``expand_dedup`` does per
successor:

- ``guards``: every action instance's guard on every row;
- ``+ copy``: the parent's row copied into the scratch successor for every enabled instance;
- ``+ effects``: the effect applied;
- ``+ fingerprint``: the successor's fingerprint as the kernel computes it;
- ``+ keep``: the successor written to the output buffers;
- ``expand_dedup``: the kernel itself against a fresh visited table (insert included).

Each step's cost is its difference from the one before, in nanoseconds per transition
(successor generated). The median of ``--runs`` runs of each.

    python bench/profile_successor.py tests/specs/kraft_v35.py --param view=false
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from hwcheck.checker.engines.expand import expand
from hwcheck.checker.engines.visited import VisitedTable
from hwcheck.checker.protocols import build, load, parse_params
from hwcheck.checker.semantics.kernel import Kernel, load_generated
from hwcheck.checker.semantics.templates import instances

LADDER = ("guards", "copy", "effects", "fingerprint", "keep")


def ladder_source(kernel: Kernel) -> str:
    """The kernel's source plus one loop per rung of the ladder (``run_<rung>``)."""
    src = [kernel.source]
    for r, rung in enumerate(LADDER):
        lines = ["\n@njit(cache=True)",
                 f"def run_{rung}(front, out, err):",
                 "    tw = np.empty(WORDS, np.uint64)",
                 "    t = tw.view(DTYPE)",
                 "    fw = front.view(np.uint64)",
                 "    ow = out.view(np.uint64)",
                 "    gen = 0",
                 "    acc = np.uint64(0)",
                 "    for i in range(front.shape[0]):",
                 "        s = front[i]"]
        for ai, a, _ in instances(kernel.spec):
            pad = "        "
            args = []
            for d, p in enumerate(a.params):
                lines.append(f"{pad}for p{d} in range({p.size}):")
                args.append(f"p{d}")
                pad += "    "
            lines.append(f"{pad}if g_{ai}({', '.join(['s', *args, 'err'])}):")
            lines.append(f"{pad}    gen += 1")
            if r >= 1:
                lines.append(f"{pad}    _get_words(fw, i, tw)")
            if r >= 2:
                lines.append(f"{pad}    e_{ai}({', '.join(['t', *args, 'err'])})")
            if r >= 3:
                lines.append(f"{pad}    acc += fingerprint_words(tw)")
            if r >= 4:
                lines.append(f"{pad}    _put_words(tw, ow, gen % out.shape[0])")
        lines.append("    return gen, acc")
        src.append("\n".join(lines) + "\n")
    return "\n".join(src)


def level_of(kernel: Kernel, rows: int) -> np.ndarray:
    """The first BFS level with at least ``rows`` states (or the last one)."""
    table = VisitedTable()
    for fp in (kernel.fingerprint(r) for r in kernel.starts):
        table.add(fp)
    front = kernel.starts.copy()
    nt = max(len(kernel.props.transition), 1)
    while front.shape[0] < rows:
        err, dom_row, dom_inst = kernel.error_arrays()
        succ = expand(kernel, front, table, np.zeros(nt, np.bool_), np.full(nt, -1, np.int64),
                      np.full(nt, -1, np.int64), dom_row, dom_inst)
        if succ.rows.shape[0] == 0:
            break
        front = succ.rows.copy()
    return front


def cpu(f) -> float:
    t0 = time.process_time()
    f()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kernel-only", action="store_true",
                    help="time expand_dedup alone (no ladder to compile)")
    a = ap.parse_args()
    proto = load(a.spec)
    spec = build(proto, parse_params(proto, a.param))
    kernel = Kernel(spec)
    front = level_of(kernel, a.rows)
    width = kernel.stride * np.dtype(kernel.dtype).itemsize
    print(f"{spec.name}: row {kernel.stride} cells, {width} bytes ({kernel.mod.WORDS} words), "
          f"{kernel.ninst} action instances; a level of {front.shape[0]:,} rows",
          file=sys.stderr)
    times: dict[str, float] = {}
    if not a.kernel_only:
        mod = load_generated(ladder_source(kernel), "profile", "p", "hwcheck_profile")
        out = np.empty((4096, kernel.stride), kernel.dtype)
        err = np.zeros(1, np.int64)
        for rung in LADDER:  # compile
            getattr(mod, f"run_{rung}")(front[:1], out, err)
        for rung in LADDER:
            f = getattr(mod, f"run_{rung}")
            times[rung] = statistics.median(cpu(lambda f=f: f(front, out, err))
                                            for _ in range(a.runs))

    def probe() -> tuple[np.ndarray, ...]:
        nt = max(len(kernel.props.transition), 1)
        _, dom_row, dom_inst = kernel.error_arrays()
        return (np.zeros(nt, np.bool_), np.full(nt, -1, np.int64), np.full(nt, -1, np.int64),
                dom_row, dom_inst)

    def dedup() -> None:
        expand(kernel, front, VisitedTable(), *probe())

    gen = expand(kernel, front, VisitedTable(), *probe()).generated
    times["expand_dedup"] = statistics.median(cpu(dedup) for _ in range(a.runs))
    print(f"{gen:,} transitions from {front.shape[0]:,} rows "
          f"({gen / front.shape[0]:.2f} a row); CPU ns per transition, median of {a.runs}:")
    last = 0.0
    for name, t in times.items():
        ns = t / gen * 1e9
        print(f"  {name:<14} {ns:8.1f}  (+{ns - last:7.1f})")
        last = ns


if __name__ == "__main__":
    main()
