"""`make bench-ports`: the TLA+ specifications ported to the spec language, hwcheck against TLC
on the same configuration.

For each port (``tests/specs/``): ``hwcheck check --continue`` with one worker and with every
core, each the median of ``--runs`` runs in fresh processes after a warm-up that puts the
kernel in the disk cache; the counts must be TLC's (by its conventions: its generated and
depth are hwcheck's plus one). With ``--tlc JAR`` and ``--tla DIR`` (the TLA+ modules and the
cfgs of ``tests/specs/tla/``, all in one folder), TLC runs once with one worker and once with
two, in the same run; otherwise TLC's recorded time (``tests/specs/tla/README.md``) is shown,
marked so. ``JAR`` is a Java class path: the KRaft specs need CommunityModules.jar beside
tla2tools.jar (``--tlc tla2tools.jar:CommunityModules.jar``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KRAFT = {"clean_limit": 0, "unclean_limit": 0, "fence_limit": 0, "ap_limit": 0, "view": False}
# name: (spec file, parameters, TLC's distinct / generated / depth, the module and cfg for
# TLC, TLC's recorded seconds on one worker)
PORTS = {
    "kip320-R3": ("kip320.py", {"replicas": 3}, (737_794, 1_967_560, 26),
                  ("Kip320.tla", "Kip320.cfg"), 121.0),
    "kip320-first-try-R3": ("kip320.py", {"replicas": 3, "variant": "first-try"},
                            (1_437_076, 4_966_921, 28),
                            ("Kip320FirstTry.tla", "Kip320FirstTry-full.cfg"), 489.0),
    # Vanlightly's KRaft specs (rows of ~700 cells), the unclean shutdown limit at 1
    "kraft-v35-unclean": ("kraft_v35.py", {**KRAFT, "unclean_limit": 1},
                          (252_254, 820_125, 44),
                          ("kafka_replication_v3_5_simple.tla", "KafkaReplicationV35Simple.cfg"),
                          27.0),
    "kraft-elr-unclean": ("kraft_elr.py", {**KRAFT, "unclean_limit": 1},
                          (543_014, 2_143_943, 46),
                          ("kafka_replication_v_elr_simple.tla", "KafkaReplicationVElrSimple.cfg"),
                          150.0),
}


def hwcheck(spec: str, params: dict, workers: int, out: str) -> dict:
    args = [sys.executable, "-m", "hwcheck.checker", "check", "--spec",
            str(ROOT / "tests" / "specs" / spec), "--continue", "--json", "--workers",
            str(workers), "--out", out, "-q"]
    for k, v in params.items():
        args += ["--param", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    t0 = time.perf_counter()
    res = subprocess.run(args, capture_output=True, text=True)
    whole = time.perf_counter() - t0
    if res.returncode not in (0, 12):
        raise SystemExit(f"hwcheck failed: {res.stderr.strip().splitlines()[-1:]}")
    data = json.loads(res.stdout.strip().splitlines()[-1])
    return {"distinct": data["distinct"], "generated": data["generated"],
            "depth": data["depth"], "seconds": data["seconds"], "whole": whole}


def tlc(jar: str, folder: Path, module: str, cfg: str, workers: int) -> dict:
    t0 = time.perf_counter()
    res = subprocess.run(["java", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers",
                          str(workers), "-deadlock", "-config", cfg, module],
                         capture_output=True, text=True, cwd=folder)
    whole = time.perf_counter() - t0
    m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", res.stdout)
    if m is None:
        raise SystemExit(f"TLC gave no counts:\n{res.stdout[-2000:]}")
    return {"generated": int(m.group(1).replace(",", "")),
            "distinct": int(m.group(2).replace(",", "")), "whole": whole}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tlc", default=os.environ.get("TLA2TOOLS"), metavar="JAR")
    ap.add_argument("--tla", type=Path, default=None, metavar="DIR")
    ap.add_argument("--only", default="", metavar="NAMES",
                    help=f"comma-separated ports to run (of {', '.join(PORTS)}); all by default")
    a = ap.parse_args()
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in PORTS]
    if unknown:
        raise SystemExit(f"unknown port(s) {', '.join(unknown)}: choose from {', '.join(PORTS)}")
    cores = len(os.sched_getaffinity(0))
    print("| port | workers | distinct | states/s | exploring | whole process | TLC |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as out:
        for name, (spec, params, (d, g, depth), (module, cfg), recorded) in PORTS.items():
            if only and name not in only:
                continue
            hwcheck(spec, params, 1, out)  # warm-up: the kernel into the cache
            tlc_runs = {}
            if a.tlc and a.tla:
                tlc_runs = {w: tlc(a.tlc, a.tla, module, cfg, w) for w in (1, 2)}
                for r in tlc_runs.values():
                    assert (r["distinct"], r["generated"]) == (d, g), (name, r)
            for workers in sorted({1, cores}):
                runs = [hwcheck(spec, params, workers, out) for _ in range(a.runs)]
                for r in runs:  # TLC's counts, by its conventions
                    assert (r["distinct"], r["generated"] + 1, r["depth"] + 1) == (d, g, depth)
                explore = statistics.median(r["seconds"] for r in runs)
                whole = statistics.median(r["whole"] for r in runs)
                t = tlc_runs.get(min(workers, 2))
                theirs = (f"{t['whole']:.1f} s ({min(workers, 2)} worker"
                          f"{'s' * (workers > 1)}), {t['whole'] / whole:.0f}x" if t else
                          f"{recorded:.0f} s recorded (1 worker), {recorded / whole:.0f}x")
                print(f"| {name} | {workers} | {d:,} | {d / explore:,.0f} | {explore:.2f} s | "
                      f"{whole:.2f} s | {theirs} |")


if __name__ == "__main__":
    main()
