"""`make bench`: the local engine in one table: R=3, M=2, E=3 (6,168,544 states) and R=3, M=3,
E=3 (67,917,067 states), truncation=hw, explored to the end (--continue), with one worker and
with every core (``--workers``, default: the cores this process may use), without and with
replica symmetry (``--symmetry``: distinct counts orbits).

Each cell is the median of ``--runs`` runs (``--runs-large`` for 68M), each in a fresh
process (so peak RSS is that run's own), after a warm-up run that puts the kernel in the disk
cache; the runs of a row's cells alternate, so that a busy spell of the machine is shared
between them. Columns: distinct states (or orbits) a second of exploration; seconds of
exploration; seconds of the whole process (interpreter start, imports, kernel from the warm
cache, exploration); bytes a state held above the process's memory before exploring (peak RSS
minus the starting RSS, over distinct states); peak RSS; the most the work folder held on
disk; and the kernel's compile time from a fresh process, cold (empty cache) and warm. Then
``hwcheck check --continue`` itself on 6.2M states with every core, start to exit (traces
written), against TLC. The counts double as a correctness check: the run fails unless every
cell gives the published counts, and every worker count the same counts (the orbit count of
R=3, M=3, E=3, 13,718,454, is this engine's own; the tests check orbit counts against an
independent search on smaller models).

``--tlc SECONDS``: TLC's measured time on the R=3, M=2, E=3 model (default 106 s, 2 workers, a
quiet machine), for the ratio to the whole-process time with every core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BASE = dict(max_epoch=3, truncation="hw", isr_expansion="hw")
SIZES = {  # name: (parameters, counts without symmetry, counts with it)
    "6.2M": (dict(replicas=3, max_offset=2, **BASE), (6_168_544, 29_257_761, 58),
             (1_223_366, 5_810_893, 53)),
    "68M": (dict(replicas=3, max_offset=3, **BASE), (67_917_067, 324_780_456, 71), None),
}

ONE_RUN = """
import json, time
t0 = time.perf_counter()
from hwcheck.checker import protocols
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.semantics.kernel import Kernel
spec = protocols.build(protocols.load("kafka"), json.loads({params!r}))
k = Kernel(spec, symmetry={symmetry!r}); k.warm("local" if {workers} == 1 else "parallel")
ex = LocalEngine(k, Options(stop_at_violation=False, max_states={limit}),
                 workers={workers}).run()
print(json.dumps(dict(distinct=ex.distinct, generated=ex.generated, depth=ex.depth,
                      seconds=ex.seconds, **ex.stats)))
"""

# What a first run of a configuration pays before exploring: the kernel compiled (or loaded)
# for the default `hwcheck check` (every core), and the step function traces need.
COMPILE = """
import json, time
t0 = time.perf_counter()
from hwcheck.checker import protocols
from hwcheck.checker.engines.parallel import Workers
from hwcheck.checker.semantics.kernel import Kernel
spec = protocols.build(protocols.load("kafka"), json.loads({params!r}))
k = Kernel(spec, symmetry={symmetry!r}); k.warm("parallel", "step"); Workers(k, 2).close()
print(json.dumps(dict(seconds=time.perf_counter() - t0)))
"""


def run_once(script: str, env: dict | None = None) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env=env)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["process"] = time.perf_counter() - t0
    return res


def cli_seconds(params: dict, workers: int, symmetry: bool) -> float:
    """Start to exit of ``hwcheck check ... --continue`` (traces written), warm cache."""
    with tempfile.TemporaryDirectory(prefix="hwcheck-bench-out-") as out:
        args = [sys.executable, "-m", "hwcheck.checker", "check", "-R", str(params["replicas"]),
                "-M", str(params["max_offset"]), "-E", str(params["max_epoch"]),
                "--truncation", params["truncation"], "--isr-expansion",
                params["isr_expansion"], "--continue", "-q", "--workers", str(workers),
                "--out", out, "--symmetry" if symmetry else "--no-symmetry"]
        t0 = time.perf_counter()
        subprocess.run(args, capture_output=True, text=True)  # exit code 12: violations
        return time.perf_counter() - t0


def compile_seconds(params: dict, symmetry: bool) -> tuple[float, float]:
    """(cold, warm) seconds from a fresh process to a kernel ready to explore."""
    with tempfile.TemporaryDirectory(prefix="hwcheck-bench-cache-") as cache:
        env = dict(os.environ, HWCHECK_CACHE=cache)
        env.pop("NUMBA_CACHE_DIR", None)
        script = COMPILE.format(params=json.dumps(params), symmetry=symmetry)
        cold = run_once(script, env)["seconds"]
        warm = statistics.median(run_once(script, env)["seconds"] for _ in range(3))
    return cold, warm


def main() -> int:
    from hwcheck.checker.engines.parallel import default_workers

    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs a cell (the median is shown)")
    ap.add_argument("--runs-large", type=int, default=3, help="the same for 68M")
    ap.add_argument("--workers", type=int, default=default_workers(),
                    help="the all-workers column [default: the cores this process may use]")
    ap.add_argument("--sizes", default=",".join(SIZES),
                    help=f"which configurations [default: {','.join(SIZES)}]")
    ap.add_argument("--tlc", type=float, default=106.0,
                    help="TLC's seconds on the 6.2M-state model, for the ratio")
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time figures")
    a = ap.parse_args()
    counts = sorted({1, a.workers})
    sizes = [s.strip() for s in a.sizes.split(",") if s.strip()]
    for s in sizes:
        if s not in SIZES:
            print(f"bench: unknown size {s!r} (one of {', '.join(SIZES)})", file=sys.stderr)
            return 2
    print(f"hwcheck bench, local engine: workers {' and '.join(map(str, counts))}, "
          f"median of {a.runs} (6.2M), {a.runs_large} (68M)", flush=True)
    head = ("size", "sym", "workers", "distinct", "states/s", "explore s", "process s",
            "B/state", "peak MiB", "disk MiB", "compile cold/warm s")
    widths = (6, 4, 8, 13, 11, 10, 10, 8, 9, 9, 20)
    table, bad, whole = [], 0, None
    for size in sizes:
        params, want, want_sym = SIZES[size]
        for sym in (False, True):
            scripts = {w: ONE_RUN.format(params=json.dumps(params), workers=w, symmetry=sym,
                                         limit=None)
                       for w in counts}
            for w in counts:  # warm-up: the kernel into the disk cache
                run_once(ONE_RUN.format(params=json.dumps(params), workers=w, symmetry=sym,
                                        limit=1000))
            runs = {w: [] for w in counts}
            for i in range(a.runs if size == "6.2M" else a.runs_large):
                for w in counts:
                    r = run_once(scripts[w])
                    runs[w].append(r)
                    print(f"  {size} {'sym' if sym else '   '} {w} worker{'s' * (w > 1)}, "
                          f"run {i + 1}: {r['distinct']:,} distinct, {r['seconds']:.2f} s, "
                          f"{r['distinct'] / r['seconds']:,.0f} states/s, "
                          f"{r['explore_bytes_per_state']:.1f} B/state", flush=True)
            same = {(r["distinct"], r["generated"], r["depth"]) for w in counts for r in runs[w]}
            if len(same) > 1:
                print(f"WORKERS DISAGREE {size} symmetry={sym}: {sorted(same)}")
                bad = 1
            comp = "" if a.no_compile else "{:.1f} / {:.2f}".format(*compile_seconds(params, sym))
            for w in counts:
                rs = runs[w]

                def med(fn, rs=rs):
                    return statistics.median(fn(r) for r in rs)

                got = {(r["distinct"], r["generated"], r["depth"]) for r in rs}
                expect = want_sym if sym else want
                if expect is not None and got != {expect}:
                    print(f"COUNT MISMATCH {size} symmetry={sym} workers={w}: expected "
                          f"{expect}, got {sorted(got)}")
                    bad = 1
                table.append((size, "yes" if sym else "no", str(w), f"{rs[0]['distinct']:,}",
                              f"{med(lambda r: r['distinct'] / r['seconds']):,.0f}",
                              f"{med(lambda r: r['seconds']):.2f}",
                              f"{med(lambda r: r['process']):.2f}",
                              f"{med(lambda r: r['explore_bytes_per_state']):.1f}",
                              f"{med(lambda r: r['peak_rss']) / 2**20:,.0f}",
                              f"{med(lambda r: r['disk_bytes']) / 2**20:,.0f}", comp))
        if size == "6.2M":
            whole = statistics.median(cli_seconds(params, counts[-1], False)
                                      for _ in range(a.runs))
    print()
    print("  ".join(f"{h:>{w}}" for h, w in zip(head, widths)))
    for row in table:
        print("  ".join(f"{c:>{w}}" for c, w in zip(row, widths)))
    if whole is not None:
        print(f"\nhwcheck check on 6.2M states, {counts[-1]} workers, whole process (warm "
              f"cache, traces written): {whole:.2f} s; TLC {a.tlc:g} s: {a.tlc / whole:.1f}x")
    return bad


if __name__ == "__main__":
    sys.exit(main())
