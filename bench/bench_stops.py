"""How soon a stop lands: SIGTERM sent to a large `hwcheck check` at moments spread over its
run, the time from the signal to the process's exit, worst case per phase; and `--max-seconds S`,
the process's end against S. Run by hand (not a test: it measures time): ``python
bench/bench_stops.py [--points N] [--only NAME ...] [--max-seconds S ...]``.

Each configuration is first run briefly (its kernel compiled if the disk cache lacks it), then
whole (its wall time T); then, in a fresh process each, SIGTERM
is sent at T * k / (N + 1) for k = 1..N. The phase a signal landed in is the one the report
itself names (``stop_reason``: the exploration, with the level it came in the middle of, or
after the exploration: "before the graph was analysed", "while liveness was decided", ...), so
no moment has to be guessed. A signal that came after the report was out (the process already
gone) is not counted. The latency includes everything the process does after the signal: the
report, the traces of the violations found, freeing its memory, exiting.

For ``--max-seconds S`` the figure is the process's exit against the moment its first line
(``hwcheck check: ...``) came out, less S: an upper bound on the overshoot (it also counts the
kernel loaded from the disk cache and the report written).

``--held``: instead, each configuration runs once whole in a process whose ``signals_held``
blocks (where the exploration holds a signal to the end of a chunk, of a level's bookkeeping,
of a checkpoint) are timed: the longest of each place is the most a signal waited there, on
this run, wherever it came.

Every run checks its report: a stopped run exits 3 (or 12 with a violation found), its
verdict is ``holds`` only for the invariants of a whole exploration whose analysis (liveness,
recoverability) is then unknown, and its figures are no larger than the whole run's.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

CONFIGS = {  # name: the command's arguments after `hwcheck check`
    "liveness": ["--scenario", "kafka-7128-fix", "--liveness"],
    "recoverable": ["--scenario", "kafka-7128-fix", "--recoverable"],
    "plain": ["-R", "3", "-M", "3", "-E", "3", "--continue"],
    # liveness properties violated: the lassos' cycles built (not run unless named)
    "lassos": ["-R", "3", "-M", "2", "-E", "3", "--truncation", "hw", "--liveness", "--continue"],
}
DEFAULT = ["liveness", "recoverable", "plain"]


class Run:
    """One `hwcheck check` process: its stderr read as it comes (the first line's time kept),
    its last stdout line the JSON report."""

    def __init__(self, args: list[str], out: str):
        cmd = [sys.executable, "-m", "hwcheck.checker", "check", *args, "--json",
               "--out", out]
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.first_line: float | None = None
        self.err: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if self.first_line is None:
                self.first_line = time.monotonic()
            self.err.append(line)

    def finish(self) -> tuple[dict, float]:
        """(the JSON report, the moment the process exited)."""
        out, _ = self.proc.communicate()
        end = time.monotonic()
        self.reader.join()
        lines = out.strip().splitlines()
        if not lines:
            raise SystemExit(f"no report (exit {self.proc.returncode}):\n{''.join(self.err)}")
        return json.loads(lines[-1]), end

    def end(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def phase(obj: dict) -> str:
    """Where the stop landed, as the report says it."""
    reason = obj.get("stop_reason") or ""
    if not obj.get("complete", True):
        if obj.get("partial_level") is not None:
            return "exploration (in the middle of a level)"
        return "exploration (between levels)"
    for word in ("before", "while", "after"):
        at = reason.find(f" {word} ")
        if at >= 0:
            return reason[at + 1:]
    return "after the analysis (report)" if not reason else reason


def check_report(obj: dict, code: int, whole: dict) -> None:
    """A stopped run exits 3 or 12; its verdict is `holds` only when the exploration was whole
    (the invariants checked on every state) and an analysis after it is unknown."""
    undecided = (obj.get("recoverability") or {}).get("verdict") == "unknown" or any(
        v.get("status") == "unknown" for k, v in (obj.get("liveness") or {}).items()
        if k != "graph")
    if code not in (3, 12) or (obj["verdict"] == "holds"
                               and not (obj["complete"] and undecided)):
        raise SystemExit(f"a stopped run said {obj['verdict']} (exit {code}): {obj}")
    if obj["distinct"] > whole["distinct"]:
        raise SystemExit(f"a stopped run counted more states than the whole run: {obj}")


def config(name: str, args: list[str], points: int, folder: str) -> list[tuple]:
    print(f"\n## {name}: hwcheck check {' '.join(args)}", flush=True)
    warm = Run([*args, "--max-seconds", "1"], folder)  # its kernels compiled, if they were not
    warm.finish()
    whole_run = Run(args, folder)
    whole, end = whole_run.finish()
    total = end - whole_run.t0
    print(f"whole run: {total:.1f} s, exit {whole_run.proc.returncode}, {whole['distinct']:,} "
          f"states, verdict {whole['verdict']}", flush=True)
    rows = []
    for k in range(1, points + 1):
        at = total * k / (points + 1)
        run = Run(args, folder)
        try:
            time.sleep(max(0.0, run.t0 + at - time.monotonic()))
            if run.proc.poll() is not None:
                run.finish()
                print(f"  at {at:6.1f} s: the run had ended", flush=True)
                continue
            sent = time.monotonic()
            os.kill(run.proc.pid, signal.SIGTERM)
            obj, end = run.finish()
        finally:
            run.end()
        code = run.proc.returncode
        if not obj.get("stop_reason"):
            print(f"  at {at:6.1f} s: the report was out before the signal", flush=True)
            continue
        check_report(obj, code, whole)
        where = phase(obj)
        rows.append((where, end - sent))
        print(f"  at {at:6.1f} s: {end - sent:5.2f} s to exit, exit {code}; {where}; "
              f"{obj['distinct']:,} states", flush=True)
    return rows


def max_seconds(name: str, args: list[str], limit: float, folder: str) -> None:
    run = Run([*args, "--max-seconds", str(limit)], folder)
    try:
        obj, end = run.finish()
    finally:
        run.end()
    start = run.first_line or run.t0
    print(f"  {name} --max-seconds {limit:g}: exit {run.proc.returncode} after "
          f"{end - start:.1f} s from its first line ({end - start - limit:+.1f} s), "
          f"{end - run.t0:.1f} s from its start; {obj['stop_reason'] or 'not stopped'}",
          flush=True)


HELD = """
import json, sys, time
from hwcheck.checker.search import signals
from hwcheck.checker.cli.main import run
real, longest = signals.signals_held, {}


class Timed:
    def __init__(self, where):
        self.where, self.cm = where, real()

    def __enter__(self):
        self.t = time.perf_counter()
        return self.cm.__enter__()

    def __exit__(self, *exc):
        d = time.perf_counter() - self.t
        n, worst = longest.get(self.where, (0, 0.0))
        longest[self.where] = (n + 1, max(worst, d))
        return self.cm.__exit__(*exc)


def held():
    f = sys._getframe(1)
    return Timed(f"{f.f_globals['__name__'].rsplit('.', 1)[-1]}.{f.f_code.co_name}")


import hwcheck.checker.engines.local, hwcheck.checker.engines.parallel  # noqa: E401
import hwcheck.checker.graph.explore, hwcheck.checker.graph.recover  # noqa: E401
for m in list(sys.modules.values()):
    if getattr(m, "signals_held", None) is real:
        m.signals_held = held
try:
    run(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    json.dump(longest, f)
"""


def held_blocks(name: str, args: list[str], folder: str) -> None:
    """The longest ``signals_held`` block of each place, on one whole run."""
    into = os.path.join(folder, "held.json")
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", HELD, into, "check", *args, "--json", "-q", "--out",
                    folder], check=False, capture_output=True)
    with open(into) as f:
        longest = json.load(f)
    print(f"\n## {name}: hwcheck check {' '.join(args)} ({time.monotonic() - t0:.1f} s)")
    print("| where | blocks | longest |\n|---|---:|---:|")
    for where, (n, worst) in sorted(longest.items(), key=lambda kv: -kv[1][1]):
        print(f"| {where} | {n:,} | {worst:.3f} s |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=8, help="signals per configuration")
    ap.add_argument("--only", nargs="*", choices=list(CONFIGS), help="these configurations")
    ap.add_argument("--max-seconds", type=float, nargs="*", default=[10.0, 30.0],
                    help="limits to run each configuration with")
    ap.add_argument("--held", action="store_true",
                    help="time the blocks that hold a signal instead (one whole run each)")
    a = ap.parse_args()
    names = a.only or DEFAULT
    if a.held:
        with tempfile.TemporaryDirectory(prefix="hwcheck-stops-") as folder:
            for name in names:
                held_blocks(name, CONFIGS[name], folder)
        return
    worst: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory(prefix="hwcheck-stops-") as folder:
        for name in names:
            for where, secs in config(name, CONFIGS[name], a.points, folder):
                worst[name, where] = max(worst.get((name, where), 0.0), secs)
        print("\n## --max-seconds")
        for name in names:
            for limit in a.max_seconds:
                max_seconds(name, CONFIGS[name], limit, folder)
    print("\n## worst case per phase (seconds from SIGTERM to exit)")
    print("| configuration | phase | worst |\n|---|---|---:|")
    for (name, where), secs in sorted(worst.items()):
        print(f"| {name} | {where} | {secs:.2f} s |")


if __name__ == "__main__":
    main()
