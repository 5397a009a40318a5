"""`make bench`: the local engine on R=3, M=2, E=3, truncation=hw, full exploration (--continue).

Each repetition runs in a fresh process (so peak RSS is that run's own) after one warm-up run
that compiles the kernel into the disk cache. Prints each run and the medians. The counts double
as a correctness check: the run fails unless they are 6,168,544 distinct, 29,257,761 generated,
depth 58 (with --symmetry, one state per orbit of the replica symmetry: 1,223,366 orbits,
5,810,893 generated, depth 53, the figure every canonical-form method gives).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

EXPECTED = (6_168_544, 29_257_761, 58)
EXPECTED_ORBITS = (1_223_366, 5_810_893, 53)

ONE_RUN = """
import json, time
from hwcheck.checker import protocols
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.semantics.kernel import Kernel
spec = protocols.build(protocols.load("kafka"), json.loads({params!r}))
t0 = time.perf_counter()
k = Kernel(spec, symmetry={symmetry!r}); k.warm("local")
load = time.perf_counter() - t0
ex = LocalEngine(k, Options(stop_at_violation=False)).run()
print(json.dumps(dict(distinct=ex.distinct, generated=ex.generated, depth=ex.depth,
                      seconds=ex.seconds, load=load, **ex.stats,
                      shortest={{n: h.length for n, h in ex.hits.items() if h.kind != "reachable"}})))
"""


def run_once(params: dict, symmetry: bool = False) -> dict:
    src = ONE_RUN.format(params=json.dumps(params), symmetry=symmetry)
    out = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-R", type=int, default=3)
    ap.add_argument("-M", type=int, default=2)
    ap.add_argument("-E", type=int, default=3)
    ap.add_argument("--truncation", default="hw")
    ap.add_argument("--isr-expansion", default="hw")
    ap.add_argument("--symmetry", action="store_true",
                    help="one state per orbit of the replica symmetry (distinct = orbits)")
    a = ap.parse_args()
    params = dict(replicas=a.R, max_offset=a.M, max_epoch=a.E, truncation=a.truncation,
                  isr_expansion=a.isr_expansion)
    sym = " with symmetry (distinct = orbits)" if a.symmetry else ""
    print(f"hwcheck bench (local engine, one core){sym}: {params}", flush=True)
    run_once(params, a.symmetry)  # warm-up: compiles the kernel into the disk cache
    runs = []
    for i in range(a.runs):
        r = run_once(params, a.symmetry)
        runs.append(r)
        print(f"  run {i + 1}: {r['distinct']:,} distinct, {r['generated']:,} generated, depth "
              f"{r['depth']}, {r['seconds']:.2f} s, {r['distinct'] / r['seconds']:,.0f} states/s, "
              f"peak RSS {r['peak_rss'] / 2**20:.0f} MiB", flush=True)
    med = lambda key: statistics.median(r[key] for r in runs)
    secs = med("seconds")
    r0 = runs[0]
    print()
    print(f"distinct            {r0['distinct']:,}")
    print(f"generated           {r0['generated']:,}")
    print(f"depth               {r0['depth']}")
    print(f"shortest            {r0['shortest']}")
    print(f"wall seconds        {secs:.2f}  (median of {len(runs)}; kernel load {med('load'):.2f} s)")
    print(f"distinct states/s   {statistics.median(r['distinct'] / r['seconds'] for r in runs):,.0f}")
    print(f"generated/s         {statistics.median(r['generated'] / r['seconds'] for r in runs):,.0f}")
    print(f"peak RSS            {med('peak_rss') / 2**20:.0f} MiB "
          f"({med('bytes_per_state'):.1f} bytes/state; "
          f"{med('explore_bytes_per_state'):.1f} bytes/state above the "
          f"{med('base_rss') / 2**20:.0f} MiB the process had before exploring)")
    print(f"visited table       {r0['table_bytes'] / 2**20:.0f} MiB; "
          f"parent records {r0['level_bytes'] / 2**20:.0f} MiB")
    got = (r0["distinct"], r0["generated"], r0["depth"])
    want = EXPECTED_ORBITS if a.symmetry else EXPECTED
    if params == dict(replicas=3, max_offset=2, max_epoch=3, truncation="hw", isr_expansion="hw") \
            and got != want:
        print(f"COUNT MISMATCH: expected {want}, got {got}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
