"""`make bench-spark`: the Spark engine in local[2] next to the local engine with one worker, in
the same run, and the measured inputs of the cluster model (docs/spark-cluster-model.md).

Configurations: a tiny one (R=2, M=2, E=3, kip-279: a few hundred states a level) whose seconds
per level are Spark's fixed cost per level, at 2 and at 8 partitions (the cost of a task more);
R=3, M=2, E=3, hw to the end (6,168,544 distinct, 29,257,761 generated, depth 58; the counts are
checked); then the large one (``--large``, default R=3, M=3, E=3, hw: 67,917,067 states), whose
Spark run gets ``--executor-memory`` (default 512m, the least Spark accepts) to show a visited
set on disk several times the executor's memory. Every run is a fresh process, after a warm-up
that puts the kernel in the disk cache.

Figures: total seconds (the engine's clock: JVM start and kernel loading excluded, as the local
engine excludes compilation), whole-process seconds (each engine's process from start to exit:
what a user waits for), seconds per level, distinct states/s, executor seconds per
transition and states per executor core-second (the summed task times), bytes exchanged per new
state (the candidate blocks), bytes on disk per state (the visited runs with their parents), peak
memory of the driver (Python), the driver JVM (which hosts the executor in local mode) and the
largest Python worker; then the projection of a 10^10-state run on N executors.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from hwcheck.checker.spark.engine import JOB_SECONDS  # a job's work before the driver takes stock

EXPECTED = (6_168_544, 29_257_761, 58)
LARGE_EXPECTED = {(3, 3, 3, "hw"): 67_917_067}  # the base model (docs/model.md)
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
if engine == "warm":  # the kernel compiled into the disk cache, nothing run
    print("{{}}"); raise SystemExit(0)
if engine == "local":
    ex = LocalEngine(k, Options(stop_at_violation=False), workers=1).run()
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


def run_once(params: dict, engine: str, master: str = "local[2]", parts: int = 4,
             env: dict | None = None) -> dict:
    src = ONE_RUN.format(params=json.dumps(params), engine=engine, master=master, parts=parts)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                         env=dict(os.environ, **(env or {})))
    process = time.perf_counter() - t0  # the whole process: start, kernel, JVM, run, exit
    if out.returncode:
        sys.stderr.write(out.stderr[-4000:])
        raise SystemExit(f"bench run failed: {engine} {params}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]), process=process)


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def med(runs, f):
    return statistics.median(f(r) for r in runs)


def compare(name: str, params: dict, runs: int, master: str, parts: int,
            in_process: bool = False, spark_env: dict | None = None) -> dict:
    print(f"\n== {name}: {params}", flush=True)
    run_once(params, "warm")  # compiles the kernel into the disk cache
    loc, spk = [], []
    for i in range(runs):
        loc.append(run_once(params, "local"))
        one = loc[-1]
        print(f"  local run {i + 1} (one worker): {one['distinct']:,} distinct, "
              f"{one['generated']:,} generated, depth {one['depth']}, {one['seconds']:.2f} s",
              flush=True)
        spk.append(run_once(params, "spark", master, parts, spark_env))
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
    task = med(spk, lambda r: r["task_merge_seconds"] + r["task_expand_seconds"])
    # the time no task accounts for, a level on average: the wall time of the levels (a job's
    # time falls on the level that ran it) minus each level's slowest task
    overhead = med(spk, lambda r: sum(t[0] - t[1] for t in r["level_tasks"]) / r["levels"])
    jobs = med(spk, lambda r: r["jobs"])
    l_ns = lsec / l0["generated"] * 1e9
    s_ns = task / s0["generated"] * 1e9
    res = dict(name=name, params=params, distinct=l0["distinct"], generated=l0["generated"],
               depth=l0["depth"], local_seconds=lsec, spark_seconds=ssec, levels=levels,
               spark_seconds_per_level=ssec / levels, jobs=jobs, level_overhead=overhead,
               local_states_per_s=l0["distinct"] / lsec, spark_states_per_s=s0["distinct"] / ssec,
               local_ns_per_transition=l_ns, executor_ns_per_transition=s_ns,
               states_per_core_second=s0["distinct"] / task,
               exchanged_bytes_per_state=s0["shuffled_bytes"] / s0["distinct"],
               disk_bytes_per_state=s0["store_bytes"] / s0["distinct"],
               startup=med(spk, lambda r: r["startup"]),
               local_peak_rss=med(loc, lambda r: r["peak_rss"]),
               driver_peak_rss=med(spk, lambda r: r["driver_peak_rss"]),
               driver_bytes_per_level=med(spk, lambda r: max(0, r["driver_peak_rss"] -
                                                             r["base_rss"]) / r["levels"]),
               jvm_peak_rss=med(spk, lambda r: r["jvm_peak_rss"]),
               worker_peak_rss=med(spk, lambda r: r["worker_peak_rss"]),
               store_bytes=s0["store_bytes"], exchanged_bytes=s0["shuffled_bytes"])
    print(f"  distinct {res['distinct']:,}, generated {res['generated']:,}, depth {res['depth']}"
          f" (medians of {runs})")
    print(f"  {'':28}{'local (1 worker)':>18}{f'spark {master}':>18}")
    print(f"  {'total seconds':28}{lsec:>18.2f}{ssec:>18.2f}")
    lproc, sproc = med(loc, lambda r: r["process"]), med(spk, lambda r: r["process"])
    res.update(local_process=lproc, spark_process=sproc)
    print(f"  {'whole process seconds':28}{lproc:>18.2f}{sproc:>18.2f}   (Spark "
          f"{lproc / sproc:.2f}x the local engine: start, kernel, JVM, run and exit)")
    print(f"  {'seconds per level':28}{lsec / levels:>18.3f}{ssec / levels:>18.3f}"
          f"   ({jobs:.0f} Spark jobs; {overhead:.3f} s a level outside the tasks)")
    print(f"  {'distinct states/s':28}{res['local_states_per_s']:>18,.0f}"
          f"{res['spark_states_per_s']:>18,.0f}   "
          f"({100 * res['spark_states_per_s'] / res['local_states_per_s']:.0f}% of local)")
    print(f"  {'ns per transition':28}{l_ns:>18.0f}{s_ns:>18.0f}   (executor task time, "
          f"{s_ns / l_ns:.2f}x local)")
    print(f"  {'states per core-second':28}{res['local_states_per_s']:>18,.0f}"
          f"{res['states_per_core_second']:>18,.0f}")
    if inp is not None:
        i_ns = (inp["task_merge_seconds"] + inp["task_expand_seconds"]) / inp["generated"] * 1e9
        res["inprocess_ns_per_transition"] = i_ns
        print(f"  {'':28}{'':>18}{i_ns:>18.0f}   (the same partition functions in one process, "
              f"no Spark: {i_ns / l_ns:.2f}x local)")
    print(f"  {'exchanged per new state':28}{'':>18}{res['exchanged_bytes_per_state']:>16.0f} B"
          f"   ({mib(res['exchanged_bytes'])} in all)")
    print(f"  {'on disk per state':28}{'':>18}{res['disk_bytes_per_state']:>16.1f} B"
          f"   (visited runs and parents: {mib(res['store_bytes'])})")
    print(f"  {'peak memory':28}{mib(res['local_peak_rss']):>18}{'':>4}driver "
          f"{mib(res['driver_peak_rss'])} ({res['driver_bytes_per_level'] / 1024:,.0f} KiB a "
          f"level above its start), driver JVM+executor {mib(res['jvm_peak_rss'])}, Python "
          f"worker {mib(res['worker_peak_rss'])}; session start {res['startup']:.1f} s")
    return res


def fixed_cost(parts: int, master: str, one_level_a_job: bool) -> float:
    """Seconds a level of the tiny configuration: with one level a job, Spark's fixed cost of a
    job; with many levels a job, the cost of the partitions' meeting between two levels."""
    env = {"HWCHECK_SPARK_JOB_SECONDS": "0"} if one_level_a_job else None
    r = run_once(TINY, "spark", master, parts, env)
    return r["seconds"] / r["levels"]


PRICE_CORE_HOUR = 0.045  # USD, an on-demand compute-optimised vCPU hour (assumption)
DISK_BYTES_S = 1e9  # an executor's local-disk sequential read, bytes/s (assumption)
SHARED_BYTES_S = 5e9  # the shared filesystem's aggregate bandwidth, bytes/s (assumption)
TARGET = 10 ** 10


def project(f2: float, f8: float, sync: float, big: dict) -> None:
    """A 10^10-state run on N one-core executors, from the measured figures. Per level: the
    fixed cost (two measured points, linear in the tasks); the states over N cores at the
    measured states per core-second; the visited check's pass over each executor's runs (the
    probes are sorted, so a level reads its runs once: 8 bytes a visited state, at an assumed
    disk speed, when the runs outgrow the page cache); the inbox through a shared filesystem
    (written and read once, at an assumed aggregate bandwidth). The depth is assumed twice the
    large configuration's; the visited set grows linearly over the levels (half on average).
    A job runs levels for JOB_SECONDS of work, so the fixed cost of a job is paid once for
    that much work (at least once a level once a level outgrows it); the levels inside a job
    each cost the partitions' meeting, measured on one machine."""
    per_task = max(0.0, (f8 - f2) / 6)
    base = f2 - 2 * per_task
    levels = 2 * big["levels"]
    rate = big["states_per_core_second"]
    xb = big["exchanged_bytes_per_state"]
    print(f"\n== model inputs: fixed cost {f2:.3f} s a job at 2 partitions, {f8:.3f} s at 8 "
          f"({1000 * per_task:.1f} ms a task more), {1000 * sync:.1f} ms a level inside a job; "
          f"{rate:,.0f} states per core-second; "
          f"{xb:.0f} B exchanged and {big['disk_bytes_per_state']:.1f} B on disk per state; "
          f"driver {big['driver_bytes_per_level'] / 1024:,.0f} KiB a level")
    print(f"== projection: {TARGET:.0e} states, {levels} levels (assumed), "
          f"${PRICE_CORE_HOUR}/core-hour, disk {DISK_BYTES_S / 1e9:.0f} GB/s an executor, "
          f"shared filesystem {SHARED_BYTES_S / 1e9:.0f} GB/s (assumed)")
    print(f"  {'N':>5}{'fixed s':>9}{'work s':>9}{'scan s':>9}{'inbox s':>9}{'wall h':>8}"
          f"{'cost $':>8}{'inbox files/level':>19}{'disk/exec':>11}")
    for n in (8, 64, 256):
        work = TARGET / (rate * n)
        jobs = min(levels, max(1.0, work / JOB_SECONDS) + 1)
        fixed = jobs * (base + n * per_task) + levels * sync
        scan = levels * (TARGET / 2 / n * 8) / DISK_BYTES_S
        inbox_s = 2 * TARGET * xb / SHARED_BYTES_S
        wall = fixed + work + scan + inbox_s
        disk = TARGET * big["disk_bytes_per_state"] / n
        print(f"  {n:>5}{fixed:>9,.0f}{work:>9,.0f}{scan:>9,.0f}{inbox_s:>9,.0f}"
              f"{wall / 3600:>8.1f}{wall / 3600 * n * PRICE_CORE_HOUR:>8.2f}{n * n:>19,}"
              f"{disk / 2**30:>8.0f} GiB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=1, help="repetitions per engine (medians)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=2, help="one per core of local[2]")
    ap.add_argument("--large", default="3,3,3,hw",
                    help="R,M,E,truncation of the large configuration ('' to skip)")
    ap.add_argument("--executor-memory", default="512m",
                    help="the large Spark run's executor (in local mode: driver JVM) memory")
    ap.add_argument("--json", help="also write the results to this file")
    a = ap.parse_args()
    # local mode: the driver JVM hosts the executor; the visited sets are on disk
    os.environ.setdefault("HWCHECK_SPARK_DRIVER_MEMORY", "2g")
    print(f"hwcheck bench-spark: Spark {a.master}, {a.partitions} partitions, "
          f"next to the local engine with one worker")
    f2, f8 = fixed_cost(2, a.master, True), fixed_cost(8, a.master, True)
    sync = fixed_cost(2, a.master, False)
    print(f"\n== fixed cost (tiny, {TINY}): one level a job {f2:.3f} s a level at 2 partitions, "
          f"{f8:.3f} s at 8; many levels a job {sync:.3f} s a level at 2 partitions")
    results = [compare("R3 M2 E3 hw", BASE, a.runs, a.master, a.partitions, in_process=True)]
    base = results[-1]
    if (base["distinct"], base["generated"], base["depth"]) != EXPECTED:
        print(f"COUNT MISMATCH: expected {EXPECTED}")
        return 1
    if a.large:
        R, M, E, trunc = a.large.split(",")
        large = dict(replicas=int(R), max_offset=int(M), max_epoch=int(E), truncation=trunc,
                     isr_expansion="hw")
        mem = a.executor_memory
        big = compare("large", large, 1, a.master, a.partitions,
                      spark_env={"HWCHECK_SPARK_DRIVER_MEMORY": mem,
                                 "HWCHECK_SPARK_EXECUTOR_MEMORY": mem})
        want = LARGE_EXPECTED.get((int(R), int(M), int(E), trunc))
        if want is not None and big["distinct"] != want:
            print(f"COUNT MISMATCH: expected {want:,}")
            return 1
        heap = int(mem[:-1]) << {"m": 20, "g": 30}[mem[-1].lower()]
        big["executor_memory"] = heap
        print(f"  visited set on disk {mib(big['store_bytes'])} (fingerprints alone "
              f"{mib(8 * big['distinct'])}) with {mem} given to the executor: "
              f"{big['store_bytes'] / heap:.1f}x ({8 * big['distinct'] / heap:.1f}x)")
        results.append(big)
    else:
        big = base
    project(f2, f8, sync, big)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(fixed_cost={"2": f2, "8": f8, "sync": sync}, results=results), f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
