"""`make bench-wide`: wide rows against TLC, by rate. Vanlightly's KRaft v3.5 specification at
its shipped constants (CleanShutdownLimit 1, UncleanShutdownLimit 0, FenceBrokerLimit 1,
AlterPartitionLimit 1), full state (rows of 648 cells): a space of billions of states, so each
tool explores it for the same wall time in the same run, two workers each, and the rates of
distinct states are compared.

hwcheck: the hand port (``tests/specs/kraft_v35.py --param view=false``, the cfg's invariants),
``check --continue --workers W --max-seconds S`` after a warm-up that compiles its kernel; its
rate is the distinct states over the verdict line's seconds (every level, the first small ones
included). TLC: the original module (``tests/specs/tla/kraft_v35/``) with the same invariants,
``-workers W -deadlock``, stopped after S seconds of its own progress reports; its rate is the
distinct states of its last progress report over the seconds since TLC started (JVM start and
parse included, about 2 s), and, beside it, the rate TLC reports for its last minute (``ds/min``
/ 60). Needs ``--tlc tla2tools.jar:CommunityModules.jar``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ROOT / "tests" / "specs" / "tla" / "kraft_v35"
MODULE = "kafka_replication_v3_5_simple.tla"
CFG = "KafkaReplicationV35Simple.cfg"
SHIPPED = {"CleanShutdownLimit": 1, "UncleanShutdownLimit": 0, "FenceBrokerLimit": 1,
           "AlterPartitionLimit": 1}
PROGRESS = re.compile(r"Progress\(\d+\) at [^:]+:\d+:\d+: ([\d,]+) states generated"
                      r"(?: \(([\d,]+) s/min\))?, ([\d,]+) distinct states found"
                      r"(?: \(([\d,]+) ds/min\))?")


def shipped_cfg(text: str) -> str:
    """The repository's cfg with the shipped limits."""
    for name, value in SHIPPED.items():
        text, n = re.subn(rf"(\n\s*{name}\s*=\s*)\d+", rf"\g<1>{value}", text)
        if n != 1:
            raise SystemExit(f"{CFG} does not set {name} once")
    return text


def hwcheck(workers: int, seconds: float, out: str) -> dict:
    args = [sys.executable, "-m", "hwcheck.checker", "check", "--spec",
            str(ROOT / "tests" / "specs" / "kraft_v35.py"), "--param", "view=false",
            "--continue", "--json", "-q", "--workers", str(workers), "--max-seconds",
            str(seconds), "--out", out]
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode not in (0, 3, 12):
        raise SystemExit(f"hwcheck failed: {res.stderr.strip().splitlines()[-1:]}")
    data = json.loads(res.stdout.strip().splitlines()[-1])
    return {"distinct": data["distinct"], "generated": data["generated"],
            "depth": data["depth"], "seconds": data["seconds"],
            "rate": data["distinct"] / data["seconds"]}


def tlc(jar: str, folder: Path, workers: int, seconds: float) -> dict:
    """TLC until its first progress report at least ``seconds`` after it started."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(["java", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers",
                             str(workers), "-deadlock", "-config", CFG, MODULE],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=folder, start_new_session=True)
    last: dict | None = None
    tail: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = (tail + [line])[-20:]
            m = PROGRESS.search(line)
            if m is None:
                continue
            at = time.perf_counter() - t0
            distinct = int(m.group(3).replace(",", ""))
            per_min = int(m.group(4).replace(",", "")) if m.group(4) else None
            last = {"distinct": distinct, "generated": int(m.group(1).replace(",", "")),
                    "seconds": at, "rate": distinct / at,
                    "last_minute_rate": per_min / 60 if per_min else None}
            if at >= seconds:
                break
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if last is None:
        raise SystemExit("TLC gave no progress report:\n" + "".join(tail))
    return last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tlc", default=os.environ.get("TLA2TOOLS"), metavar="JAR",
                    help="tla2tools.jar:CommunityModules.jar")
    ap.add_argument("--seconds", type=float, default=180.0, help="each tool's time")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, default=None, help="write the figures here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tla"
        shutil.copytree(MODULES, folder)
        (folder / CFG).write_text(shipped_cfg((MODULES / CFG).read_text()))
        hwcheck(1, 5, tmp)  # warm-up: the kernel into the cache
        ours = hwcheck(a.workers, a.seconds, tmp)
        theirs = tlc(a.tlc, folder, a.workers, a.seconds) if a.tlc else None
    print("| tool | workers | distinct | seconds | distinct states/s |")
    print("|---|---|---|---|---|")
    print(f"| hwcheck | {a.workers} | {ours['distinct']:,} (depth {ours['depth']}) | "
          f"{ours['seconds']:.1f} | {ours['rate']:,.0f} |")
    if theirs is None:
        print("TLC not given (--tlc tla2tools.jar:CommunityModules.jar)")
    else:
        minute = theirs["last_minute_rate"]
        print(f"| TLC | {a.workers} | {theirs['distinct']:,} | {theirs['seconds']:.1f} | "
              f"{theirs['rate']:,.0f}" + (f" (last minute {minute:,.0f})" if minute else "")
              + " |")
        print(f"\nhwcheck / TLC by rate: {ours['rate'] / theirs['rate']:.1f}x"
              + (f" ({ours['rate'] / minute:.1f}x against TLC's last minute)" if minute else ""))
    if a.json is not None:
        tmp_json = a.json.with_suffix(".tmp")
        tmp_json.write_text(json.dumps({"hwcheck": ours, "tlc": theirs}, indent=2))
        tmp_json.replace(a.json)


if __name__ == "__main__":
    main()
