"""`make bench`: the local engine on R=3, M=2, E=3, truncation=hw, full exploration (--continue),
with one worker and with every core (``--workers``, default: the cores this process may use).

Each repetition runs in a fresh process (so peak RSS is that run's own) after one warm-up run
that compiles the kernel into the disk cache; runs alternate between the two worker counts, so
that a busy spell of the machine is shared between them. Prints each run and the medians side
by side, then the kernel's compile time: cold (a fresh, empty cache) and warm (the cache
filled). The counts double as a correctness check: the run fails unless they are 6,168,544
distinct, 29,257,761 generated, depth 58 with every worker count (with --symmetry, one state
per orbit of the replica symmetry: 1,223,366 orbits, 5,810,893 generated, depth 53, the figure
every canonical-form method gives, with every worker count).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

EXPECTED = (6_168_544, 29_257_761, 58)
EXPECTED_ORBITS = (1_223_366, 5_810_893, 53)
DEFAULT = dict(replicas=3, max_offset=2, max_epoch=3, truncation="hw", isr_expansion="hw")

ONE_RUN = """
import json, time
from hwcheck.checker import protocols
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.semantics.kernel import Kernel
spec = protocols.build(protocols.load("kafka"), json.loads({params!r}))
t0 = time.perf_counter()
k = Kernel(spec, symmetry={symmetry!r}); k.warm("local" if {workers} == 1 else "parallel")
load = time.perf_counter() - t0
ex = LocalEngine(k, Options(stop_at_violation=False), workers={workers}).run()
print(json.dumps(dict(distinct=ex.distinct, generated=ex.generated, depth=ex.depth,
                      seconds=ex.seconds, load=load, **ex.stats,
                      shortest={{n: h.length for n, h in ex.hits.items() if h.kind != "reachable"}})))
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
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compile_seconds(params: dict, symmetry: bool = False) -> tuple[float, float]:
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

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=default_workers(),
                    help="the all-workers column [default: the cores this process may use]")
    ap.add_argument("-R", type=int, default=3)
    ap.add_argument("-M", type=int, default=2)
    ap.add_argument("-E", type=int, default=3)
    ap.add_argument("--truncation", default="hw")
    ap.add_argument("--isr-expansion", default="hw")
    ap.add_argument("--symmetry", action="store_true",
                    help="one state per orbit of the replica symmetry (distinct = orbits)")
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time figures")
    a = ap.parse_args()
    params = dict(replicas=a.R, max_offset=a.M, max_epoch=a.E, truncation=a.truncation,
                  isr_expansion=a.isr_expansion)
    counts = sorted({1, a.workers})
    sym = " with symmetry (distinct = orbits)" if a.symmetry else ""
    print(f"hwcheck bench (local engine, workers {' and '.join(map(str, counts))}){sym}: "
          f"{params}", flush=True)
    script = {w: ONE_RUN.format(params=json.dumps(params), workers=w, symmetry=a.symmetry)
              for w in counts}
    for w in counts:
        run_once(script[w])  # warm-up: compiles the kernel into the disk cache
    runs = {w: [] for w in counts}
    for i in range(a.runs):
        for w in counts:
            r = run_once(script[w])
            runs[w].append(r)
            print(f"  run {i + 1}, {w} worker{'s' * (w > 1)}: {r['distinct']:,} distinct, "
                  f"{r['generated']:,} generated, depth {r['depth']}, {r['seconds']:.2f} s, "
                  f"{r['distinct'] / r['seconds']:,.0f} states/s, "
                  f"peak RSS {r['peak_rss'] / 2**20:.0f} MiB", flush=True)

    def med(w, fn):
        return statistics.median(fn(r) for r in runs[w])

    rows = [
        ("wall seconds", lambda w: f"{med(w, lambda r: r['seconds']):.2f}"),
        ("distinct states/s", lambda w: f"{med(w, lambda r: r['distinct'] / r['seconds']):,.0f}"),
        ("generated/s", lambda w: f"{med(w, lambda r: r['generated'] / r['seconds']):,.0f}"),
        ("peak RSS MiB", lambda w: f"{med(w, lambda r: r['peak_rss']) / 2**20:.0f}"),
        ("bytes/state", lambda w: f"{med(w, lambda r: r['bytes_per_state']):.1f}"),
        ("  above start", lambda w: f"{med(w, lambda r: r['explore_bytes_per_state']):.1f}"),
        ("visited table MiB", lambda w: f"{runs[w][0]['table_bytes'] / 2**20:.0f}"),
        ("parent records MiB", lambda w: f"{runs[w][0]['level_bytes'] / 2**20:.0f}"),
        ("kernel load s", lambda w: f"{med(w, lambda r: r['load']):.2f}"),
    ]
    r0 = runs[counts[0]][0]
    print()
    orbits = " (orbits)" if a.symmetry else ""
    print(f"distinct {r0['distinct']:,}{orbits}, generated {r0['generated']:,}, "
          f"depth {r0['depth']}, shortest {r0['shortest']}")
    head = [f"{w} worker{'s' * (w > 1)}" for w in counts]
    print(f"{'(median of ' + str(a.runs) + ')':<20}" + "".join(f"{h:>14}" for h in head))
    for name, cell in rows:
        print(f"{name:<20}" + "".join(f"{cell(w):>14}" for w in counts))
    if len(counts) > 1:
        one, all_ = (med(w, lambda r: r["distinct"] / r["seconds"]) for w in counts)
        print(f"{'speed-up':<20}{'':>14}{all_ / one:>13.2f}x")
    if not a.no_compile:
        cold, warm = compile_seconds(params, a.symmetry)
        print(f"kernel compile      cold {cold:.1f} s (empty cache), warm {warm:.2f} s "
              "(process start to a kernel ready to explore)")
    want = EXPECTED_ORBITS if a.symmetry else EXPECTED
    bad = 0
    for w in counts:
        got = {(r["distinct"], r["generated"], r["depth"]) for r in runs[w]}
        if params == DEFAULT and got != {want}:
            print(f"COUNT MISMATCH with {w} workers: expected {want}, got {sorted(got)}")
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
