"""`make bench-scaling`: the local engine's curve over worker counts, with where each run's time
went. The Kafka model at R=3, M=3, E=3, truncation=hw (67,917,067 states; ``--size 6.2M`` for
R=3, M=2, E=3), explored to the end with 1, 2, 4, ... workers (``--workers``; default the powers
of two up to the cores this process may use), each run in a fresh process after a warm-up that
puts both kernel parts (one worker, several) in the cache.

Each run has ``HWCHECK_PHASES=1`` (``checker/engines/phases.py``): besides its exploring time it
reports the main thread's CPU time in the levels (the part of a level no worker shares: the
serial part *S*) and the workers' tasks' CPU time (*P*). The table gives, per worker count, the
exploring seconds, the speed-up over one worker, the efficiency (speed-up / workers), states a
second, *S*, *P*, the whole process's CPU and its peak RSS; then Amdahl's law fitted from the
one- and two-worker runs (serial fraction ``S / (S + P)`` of the two-worker run) and what it
predicts for each count, against what was measured.

``--baseline DIR``: also run the code in DIR (a folder holding ``hwcheck/checker`` and
``hwcheck/spec``, e.g. an older checkout's, put first on ``PYTHONPATH``) at
``--baseline-workers``, alternating with this checkout's runs, for a before/after on the same
machine. ``--workdir DIR``: where the runs' levels go (``check --workdir``; e.g. a
memory-backed folder, to see what the disk costs). ``--json FILE``: every run's figures as
JSON. The counts double as a check: the run fails unless every run gives the published counts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BASE = dict(max_epoch=3, truncation="hw", isr_expansion="hw")
SIZES = {  # name: (parameters, (distinct, generated, depth))
    "6.2M": (dict(replicas=3, max_offset=2, **BASE), (6_168_544, 29_257_761, 58)),
    "68M": (dict(replicas=3, max_offset=3, **BASE), (67_917_067, 324_780_456, 71)),
}

ONE_RUN = """
import json, resource, time
t0 = time.perf_counter()
from hwcheck.checker import protocols
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.semantics.kernel import Kernel
from pathlib import Path
spec = protocols.build(protocols.load("hwcheck.spec.kafka:PROTOCOL"), json.loads({params!r}))
k = Kernel(spec); k.warm("local" if {workers} == 1 else "parallel")
local = LocalSettings(workdir={workdir!r} and Path({workdir!r}))
ex = LocalEngine(k, Options(stop_at_violation=False, max_states={limit}), workers={workers},
                 local=local).run()
ru = resource.getrusage(resource.RUSAGE_SELF)
ph = ex.stats.get("phases", {{}})
def cpu(name, where):
    return ph.get(name, {{}}).get(where, {{}}).get("cpu", 0.0)
print(json.dumps(dict(distinct=ex.distinct, generated=ex.generated, depth=ex.depth,
                      seconds=ex.seconds, process=time.perf_counter() - t0,
                      process_cpu=ru.ru_utime + ru.ru_stime, peak_rss=ex.stats["peak_rss"],
                      serial=cpu("level", "main"),
                      tasks=sum(v.get("workers", {{}}).get("cpu", 0.0) for v in ph.values()),
                      phases=ph)))
"""


WORKDIR: str | None = None  # --workdir


def run(params: dict, workers: int, path: str | None, limit: int | None = None) -> dict:
    env = dict(os.environ, HWCHECK_PHASES="1", PYTHONUNBUFFERED="1")
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([path] + [p for p in [env.get("PYTHONPATH")] if p])
    code = ONE_RUN.format(params=json.dumps(params), workers=workers, limit=limit,
                          workdir=WORKDIR)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        sys.exit(f"bench-scaling: a run with {workers} workers failed:\n{out.stderr[-2000:]}")
    result: dict = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def default_counts() -> list[int]:
    cores = len(os.sched_getaffinity(0))
    counts, n = [], 1
    while n <= cores:
        counts.append(n)
        n *= 2
    return counts if counts[-1] == cores else counts + [cores]


def table(runs: dict[int, list[dict]], label: str) -> list[str]:
    one = statistics.median(r["seconds"] for r in runs[1]) if 1 in runs else None
    lines = [f"**{label}**", "",
             "| workers | exploring | speed-up | efficiency | states/s | main thread CPU (S) "
             "| workers' CPU (P) | process CPU | peak RSS |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n, rs in sorted(runs.items()):
        t = statistics.median(r["seconds"] for r in rs)
        r = rs[len(rs) // 2]
        up = f"{one / t:.2f}x | {one / t / n:.0%}" if one else "| "
        lines.append(
            f"| {n} | {t:.2f} s | {up} | "
            f"{r['distinct'] / t:,.0f} | {r['serial']:.2f} s | {r['tasks']:.2f} s | "
            f"{r['process_cpu']:.1f} s | {r['peak_rss'] / 2**20:,.0f} MiB |")
    if 2 in runs and one:
        r2 = runs[2][0]
        f = r2["serial"] / max(r2["serial"] + r2["tasks"], 1e-9)
        lines += ["", f"Amdahl from the two-worker run: serial fraction {f:.3f} (at most "
                  f"{1 / max(f, 1e-9):.1f}x on any number of cores); predicted against measured "
                  "speed-up: " + ", ".join(
                      f"{n}: {1 / (f + (1 - f) / n):.2f}x / "
                      f"{one / statistics.median(x['seconds'] for x in runs[n]):.2f}x"
                      for n in sorted(runs))]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=sorted(SIZES), default="68M")
    ap.add_argument("--workers", type=int, nargs="+", default=None)
    ap.add_argument("--runs", type=int, default=1, help="runs a worker count (median)")
    ap.add_argument("--baseline", help="a folder holding another version's hwcheck/ package")
    ap.add_argument("--baseline-workers", type=int, nargs="+", default=None)
    ap.add_argument("--json", help="write every run's figures here")
    ap.add_argument("--workdir", help="the runs' work folder's parent (--workdir of check)")
    a = ap.parse_args()
    global WORKDIR
    WORKDIR = a.workdir
    params, want = SIZES[a.size]
    counts = a.workers or default_counts()
    versions: list[tuple[str, str | None, list[int]]] = [("this checkout", None, counts)]
    if a.baseline:
        versions.append(("baseline", str(Path(a.baseline).resolve()),
                         a.baseline_workers or counts))
    for label, path, _ in versions:  # the kernels compiled or loaded once, outside the timing
        t = time.perf_counter()
        for w in (1, 2):
            run(params, w, path, limit=1000)
        print(f"# warm-up ({label}): {time.perf_counter() - t:.1f} s", flush=True)
    runs: dict[str, dict[int, list[dict]]] = {label: {} for label, _, _ in versions}
    for _ in range(a.runs):
        for n in counts:
            for label, path, ns in versions:
                if n not in ns:
                    continue
                r = run(params, n, path)
                got = (r["distinct"], r["generated"], r["depth"])
                if got != want:
                    sys.exit(f"bench-scaling: {label} with {n} workers gave {got}, not {want}")
                runs[label].setdefault(n, []).append(r)
                print(f"# {label}, {n} workers: {r['seconds']:.2f} s exploring, serial "
                      f"{r['serial']:.2f} s, tasks {r['tasks']:.2f} s", flush=True)
                if a.json:  # after every run: a session cut short keeps what it measured
                    save(a.json, a.size, runs)
    print(f"\n{a.size} ({want[0]:,} states), {os.cpu_count()} CPUs, "
          f"{time.strftime('%Y-%m-%d')}, `{' '.join(sys.argv)}`\n")
    for label, _, _ in versions:
        print("\n".join(table(runs[label], label)) + "\n")


def save(path: str, size: str, runs: dict[str, dict[int, list[dict]]]) -> None:
    """Every run's figures so far, written atomically."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"size": size, "cpus": os.cpu_count(), "runs": runs,
                   "max_rss_self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}, f)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
