"""`make bench-spark`: the Spark engine in local[2] next to the local engine, in the same run.

Configurations: R=3, M=2, E=3, truncation=hw to the end (6,168,544 distinct, 29,257,761
generated, depth 58; the counts are checked), then a larger one (``--large``, default R=3, M=2,
E=4, hw), and a tiny one (R=2, M=2, E=3, kip-279: a few hundred states a level) whose seconds per
level are Spark's fixed cost per level. Every run is a fresh process, after a warm-up that puts
the kernel in the disk cache.

Figures: total seconds (the engine's clock: JVM start and kernel loading excluded, as the local
engine excludes compilation), seconds per level, distinct states/s, executor seconds per
generated transition (the summed task times of the merge and expand steps) against the local
engine's seconds per transition, and peak memory: the driver (Python), the driver JVM (which
hosts the executor in local mode) and the largest Python worker.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

EXPECTED = (6_168_544, 29_257_761, 58)
BASE = dict(replicas=3, max_offset=2, max_epoch=3, truncation="hw", isr_expansion="hw")
TINY = dict(replicas=2, max_offset=2, max_epoch=3, truncation="kip-279", isr_expansion="hw")

ONE_RUN = """
import json, os, time
from hwcheck.checker.engines.local import LocalEngine, Options
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.kafka.model import build
from hwcheck.spec.kafka.params import Params
p = Params(**json.loads({params!r}))
engine = {engine!r}
k = Kernel(build(p)); k.warm()
t0 = time.perf_counter()
if engine == "local":
    ex = LocalEngine(k, Options(stop_at_violation=False)).run()
    extra = {{}}
elif engine == "inprocess":
    from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine
    ex = LevelEngine(k, Options(stop_at_violation=False), InProcessBackend({parts})).run()
    extra = {{}}
else:
    from hwcheck.checker.spark.engine import SparkEngine
    from hwcheck.checker.spark import session
    eng = SparkEngine(k, Options(stop_at_violation=False), master={master!r},
                      partitions={parts})
    started = time.perf_counter() - t0
    ex = eng.run()
    extra = {{"startup": started,
              "jvm_peak_rss": session.peak_rss_of(session.jvm_pid(eng.backend.sc))}}
wall = time.perf_counter() - t0
out = dict(distinct=ex.distinct, generated=ex.generated, depth=ex.depth, seconds=ex.seconds,
           wall=wall, **ex.stats)
out.update(extra)
print(json.dumps(out))
"""


def run_once(params: dict, engine: str, master: str = "local[2]", parts: int = 4) -> dict:
    src = ONE_RUN.format(params=json.dumps(params), engine=engine, master=master, parts=parts)
    out = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True)
    if out.returncode:
        sys.stderr.write(out.stderr[-4000:])
        raise SystemExit(f"bench run failed: {engine} {params}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def med(runs, f):
    return statistics.median(f(r) for r in runs)


def compare(name: str, params: dict, runs: int, master: str, parts: int,
            in_process: bool = False) -> dict:
    print(f"\n== {name}: {params}", flush=True)
    run_once(params, "local")  # warm-up: compiles the kernel into the disk cache
    loc, spk = [], []
    for i in range(runs):
        loc.append(run_once(params, "local"))
        l = loc[-1]
        print(f"  local run {i + 1}: {l['distinct']:,} distinct, {l['generated']:,} generated, "
              f"depth {l['depth']}, {l['seconds']:.2f} s", flush=True)
        spk.append(run_once(params, "spark", master, parts))
        s = spk[-1]
        print(f"  spark run {i + 1}: {s['distinct']:,} distinct, {s['generated']:,} generated, "
              f"depth {s['depth']}, {s['seconds']:.2f} s (+{s['startup']:.1f} s session start)",
              flush=True)
    l0, s0 = loc[0], spk[0]
    if (l0["distinct"], l0["generated"], l0["depth"]) != (s0["distinct"], s0["generated"],
                                                           s0["depth"]):
        raise SystemExit("COUNT MISMATCH between the engines")
    lsec, ssec = med(loc, lambda r: r["seconds"]), med(spk, lambda r: r["seconds"])
    inp = run_once(params, "inprocess", parts=parts) if in_process else None
    levels = s0["levels"]
    per_level = med(spk, lambda r: statistics.median(r["level_seconds"]))
    task = med(spk, lambda r: r["task_merge_seconds"] + r["task_expand_seconds"])
    l_ns = lsec / l0["generated"] * 1e9
    s_ns = task / s0["generated"] * 1e9
    res = dict(name=name, params=params, distinct=l0["distinct"], generated=l0["generated"],
               depth=l0["depth"], local_seconds=lsec, spark_seconds=ssec, levels=levels,
               spark_seconds_per_level=ssec / levels, spark_median_level=per_level,
               local_states_per_s=l0["distinct"] / lsec, spark_states_per_s=s0["distinct"] / ssec,
               local_ns_per_transition=l_ns, executor_ns_per_transition=s_ns,
               startup=med(spk, lambda r: r["startup"]),
               local_peak_rss=med(loc, lambda r: r["peak_rss"]),
               driver_peak_rss=med(spk, lambda r: r["driver_peak_rss"]),
               jvm_peak_rss=med(spk, lambda r: r["jvm_peak_rss"]),
               worker_peak_rss=med(spk, lambda r: r["worker_peak_rss"]),
               store_bytes=s0["store_bytes"])
    print(f"  distinct {res['distinct']:,}, generated {res['generated']:,}, depth {res['depth']}"
          f" (medians of {runs})")
    print(f"  {'':28}{'local':>14}{'spark local[2]':>18}")
    print(f"  {'total seconds':28}{lsec:>14.2f}{ssec:>18.2f}")
    print(f"  {'seconds per level':28}{lsec / levels:>14.3f}{ssec / levels:>18.3f}"
          f"   (median level {per_level:.3f} s)")
    print(f"  {'distinct states/s':28}{res['local_states_per_s']:>14,.0f}"
          f"{res['spark_states_per_s']:>18,.0f}   "
          f"({100 * res['spark_states_per_s'] / res['local_states_per_s']:.0f}% of local)")
    print(f"  {'ns per transition':28}{l_ns:>14.0f}{s_ns:>18.0f}   (executor task time, "
          f"{s_ns / l_ns:.2f}x local)")
    if inp is not None:
        i_ns = (inp["task_merge_seconds"] + inp["task_expand_seconds"]) / inp["generated"] * 1e9
        res["inprocess_ns_per_transition"] = i_ns
        print(f"  {'':28}{'':>14}{i_ns:>18.0f}   (the same partition functions in one process, "
              f"no Spark: {i_ns / l_ns:.2f}x local)")
    print(f"  {'peak memory':28}{mib(res['local_peak_rss']):>14}{'':>4}driver {mib(res['driver_peak_rss'])}, "
          f"driver JVM+executor {mib(res['jvm_peak_rss'])}, Python worker "
          f"{mib(res['worker_peak_rss'])}")
    print(f"  {'':28}{'':>14}{'':>4}stores {mib(res['store_bytes'])} "
          f"({res['store_bytes'] / res['distinct']:.0f} bytes/state); session start "
          f"{res['startup']:.1f} s")
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1, help="repetitions per engine (medians)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=2, help="one per core of local[2]")
    ap.add_argument("--large", default="3,2,4,hw",
                    help="R,M,E,truncation of the large configuration ('' to skip)")
    ap.add_argument("--json", help="also write the results to this file")
    a = ap.parse_args()
    # local mode: the driver JVM hosts the executor and caches the stores
    os.environ.setdefault("HWCHECK_SPARK_DRIVER_MEMORY", "6g")
    print(f"hwcheck bench-spark: Spark {a.master}, {a.partitions} partitions, "
          f"next to the local engine (one core)")
    results = [compare("tiny (fixed cost per level)", TINY, a.runs, a.master, a.partitions),
               compare("R3 M2 E3 hw", BASE, a.runs, a.master, a.partitions, in_process=True)]
    base = results[-1]
    if (base["distinct"], base["generated"], base["depth"]) != EXPECTED:
        print(f"COUNT MISMATCH: expected {EXPECTED}")
        return 1
    if a.large:
        R, M, E, trunc = a.large.split(",")
        large = dict(replicas=int(R), max_offset=int(M), max_epoch=int(E), truncation=trunc,
                     isr_expansion="hw")
        results.append(compare("large", large, 1, a.master, a.partitions))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
