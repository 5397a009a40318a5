"""`make bench-tla`: TLA+ modules through `hwcheck check --spec FILE.tla`, against their hand
ports and TLC on the same module and cfg.

For each row: the module with its cfg (written to a temporary folder, the constants sized so
that a run is long enough to time), ``hwcheck check --spec MODULE --config CFG --continue
--workers 1`` and, where a hand port exists, the port with the same invariants; a first run of
each compiles the kernel (and finds the module's domains), then ``--runs`` timed runs each in a
fresh process, module and port alternating, the medians shown. The distinct and generated
counts must be the port's, and TLC's (by TLC's conventions: the ``tlc`` object of ``--json``).
With ``--tlc JAR`` TLC runs the same module and cfg with one worker and with two (``-deadlock``
as the cfgs say ``CHECK_DEADLOCK FALSE``; its metadir in the temporary folder, removed after),
``--tlc-runs`` times each; without it the run says "TLC not given" and shows hwcheck's half.
A row whose module the compiled path does not take yet (``optional``) is shown with hwcheck's
one-line reason instead of failing the run.
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TLA = ROOT / "tests" / "specs" / "tla"


@dataclass(frozen=True)
class Row:
    name: str
    module: Path
    cfg: str  # the cfg's text, or "@path" for a cfg file of the repository
    port: list[str] | None = None  # `hwcheck check` arguments of the hand port
    invariants: tuple[str, ...] = ()  # the port's invariants that are the cfg's
    optional: bool = False  # a module the compiled path may not take yet: skipped with the reason


def _two_phase(rms: int) -> str:
    members = ", ".join(f"r{i}" for i in range(1, rms + 1))
    return (f"CONSTANT RM = {{{members}}}\nSPECIFICATION TPSpec\n"
            "INVARIANTS TPTypeOK TCConsistent\nCHECK_DEADLOCK FALSE\n")


ROWS = [
    Row("TwoPhase-RM6", TLA / "TwoPhase.tla", _two_phase(6),
        ["--spec", "tests/specs/two_phase.py", "--param", "rms=6"], ("TPTypeOK", "TCConsistent")),
    # the hand port stops at 6 resource managers
    Row("TwoPhase-RM7", TLA / "TwoPhase.tla", _two_phase(7)),
    Row("TwoPhase-RM8", TLA / "TwoPhase.tla", _two_phase(8)),
    Row("TokenRing-N14", TLA / "TokenRing.tla",
        "CONSTANT N = 14\nSPECIFICATION SpecUseNone_PassWeak\nINVARIANT TokenInRing\n"
        "CHECK_DEADLOCK FALSE\n",
        ["--spec", "tests/specs/token_ring.py", "--param", "nodes=14"], ("TokenInRing",)),
    Row("Peterson", TLA / "Peterson.tla",
        "CONSTANT Naive = FALSE\nSPECIFICATION SpecNone\nINVARIANT Mutex\nCHECK_DEADLOCK FALSE\n",
        ["--spec", "tests/specs/peterson.py"], ("Mutex",)),
    Row("DieHard", TLA / "DieHard.tla",
        "CONSTANTS Big = 5\n Small = 3\n Goal = 4\nINIT Init\nNEXT Next\nINVARIANT TypeOK\n"
        "CHECK_DEADLOCK FALSE\n",
        ["--spec", "tests/specs/die_hard.py"], ("TypeOK",)),
    # one level of a few states after another: what a run costs per level
    Row("DieHard-1000-999", TLA / "DieHard.tla",
        "CONSTANTS Big = 1000\n Small = 999\n Goal = 4\nINIT Init\nNEXT Next\nINVARIANT TypeOK\n"
        "CHECK_DEADLOCK FALSE\n",
        ["--spec", "tests/specs/die_hard.py", "--param", "big=1000", "--param", "small=999"],
        ("TypeOK",)),
    Row("KafkaHW-R2-M2-E3-hw", ROOT / "docs" / "tla" / "KafkaHW.tla",
        "@docs/tla/R2-M2-E3-hw.cfg", ["-R", "2", "-M", "2", "-E", "3", "--truncation", "hw"],
        optional=True),
]


class Skip(Exception):
    """A module the compiled path does not take: hwcheck's one-line reason."""


def cfg_path(row: Row, folder: Path) -> Path:
    if row.cfg.startswith("@"):
        return ROOT / row.cfg[1:]
    path = folder / f"{row.name}.cfg"
    path.write_text(row.cfg)
    return path


def hwcheck(args: list[str], out: str) -> dict:
    """One `hwcheck check ... --continue --json` in a fresh process: its counts and times."""
    cmd = [sys.executable, "-m", "hwcheck.checker", "check", *args, "--continue", "--json",
           "--workers", "1", "--out", out, "-q"]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    whole = time.perf_counter() - t0
    if res.returncode == 2:
        raise Skip((res.stderr.strip().splitlines() or ["exit code 2"])[-1])
    if res.returncode not in (0, 12):
        raise SystemExit(f"hwcheck {' '.join(args)} failed (exit code {res.returncode}): "
                         f"{res.stderr.strip().splitlines()[-1:]}")
    data = json.loads(res.stdout.strip().splitlines()[-1])
    if not data["complete"]:
        raise SystemExit(f"hwcheck {' '.join(args)} did not explore everything")
    return {"distinct": data["distinct"], "generated": data["generated"],
            "tlc": data.get("tlc"), "seconds": data["seconds"], "whole": whole}


def parse_tlc(stdout: str) -> dict:
    """TLC's generated and distinct counts from its output."""
    m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", stdout)
    if m is None:
        raise SystemExit(f"TLC gave no counts:\n{stdout[-2000:]}")
    return {"generated": int(m.group(1).replace(",", "")),
            "distinct": int(m.group(2).replace(",", ""))}


def tlc(jar: str, module: Path, cfg: Path, workers: int) -> dict:
    """One TLC run of the module and cfg, its states and metadir in a folder removed after."""
    with tempfile.TemporaryDirectory(prefix="tlc-") as meta:
        t0 = time.perf_counter()
        res = subprocess.run(["java", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers",
                              str(workers), "-deadlock", "-metadir", meta, "-config", str(cfg),
                              str(module)], capture_output=True, text=True, cwd=module.parent)
        whole = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"TLC exited with {res.returncode} on {module.name}:\n"
                         f"{res.stdout[-2000:]}")
    return {**parse_tlc(res.stdout), "whole": whole}


def same_counts(name: str, what: str, theirs: dict, ours: dict) -> None:
    """Fail the run unless two runs found the same distinct and generated counts."""
    a = (theirs["distinct"], theirs["generated"])
    b = (ours["distinct"], ours["generated"])
    if a != b:
        raise SystemExit(f"{name}: {what} found {a[0]:,} distinct / {a[1]:,} generated, the "
                         f".tla module {b[0]:,} / {b[1]:,}")


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def bench_row(row: Row, folder: Path, out: str, runs: int, jar: str | None,
              tlc_runs: int) -> str:
    cfg = cfg_path(row, folder)
    # the compiled path, timed: auto would check a small module on the interpreter
    mine = ["--spec", str(row.module), "--config", str(cfg), "--tla-engine", "compiled"]
    port = None
    if row.port is not None:
        port = [*row.port]
        for inv in row.invariants:
            port += ["--invariant", inv]
    try:
        hwcheck(mine, out)  # the first run: domains found, kernel compiled and cached
    except Skip as e:
        return f"| {row.name} | {cfg.name} | skipped: {e} |"
    if port is not None:
        hwcheck(port, out)
    module_runs, port_runs = [], []
    for _ in range(runs):  # alternating, so that the machine's load falls on both alike
        module_runs.append(hwcheck(mine, out))
        if port is not None:
            port_runs.append(hwcheck(port, out))
    first = module_runs[0]
    for r in module_runs[1:]:
        same_counts(row.name, "another run", r, first)
    for r in port_runs:
        same_counts(row.name, "the hand port", r, first)
    counts = first["tlc"]  # TLC's conventions: the initial states generated too
    explore, whole = median(module_runs, "seconds"), median(module_runs, "whole")
    d = first["distinct"]
    cells = [row.name, cfg.name, f"{d:,}", f"{explore:.2f} s", f"{d / explore:,.0f}",
             f"{whole:.2f} s"]
    if port_runs:
        p_explore, p_whole = median(port_runs, "seconds"), median(port_runs, "whole")
        cells += [f"{p_explore:.2f} s / {p_whole:.2f} s",
                  f"{explore / p_explore:.2f}x / {whole / p_whole:.2f}x"]
    else:
        cells += ["no port", ""]
    for workers in (1, 2):
        if jar is None:
            cells += ["", ""]
            continue
        t_runs = [tlc(jar, row.module, cfg, workers) for _ in range(tlc_runs)]
        for t in t_runs:
            same_counts(row.name, f"TLC ({workers} worker{'s' * (workers > 1)})", t, counts)
        t_whole = median(t_runs, "whole")
        cells += [f"{t_whole:.2f} s ({d / t_whole:,.0f}/s)", f"{t_whole / whole:.1f}x"]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| module | cfg | distinct | .tla: exploring | states/s | whole process | "
          "hand port: exploring / whole | .tla / port | TLC 1 worker | TLC / .tla | "
          "TLC 2 workers | TLC / .tla |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="timed hwcheck runs (the median shown)")
    ap.add_argument("--tlc", default=os.environ.get("TLA2TOOLS"), metavar="JAR",
                    help="tla2tools.jar (a Java class path)")
    ap.add_argument("--tlc-runs", type=int, default=1, help="TLC runs per worker count")
    ap.add_argument("--only", default="", metavar="NAMES",
                    help=f"comma-separated rows to run (of {', '.join(r.name for r in ROWS)})")
    a = ap.parse_args(argv)
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in {r.name for r in ROWS}]
    if unknown:
        ap.exit(2, f"bench_tla.py: error: unknown row(s) {', '.join(unknown)}: choose from "
                   f"{', '.join(r.name for r in ROWS)}\n")
    if a.runs < 1 or a.tlc_runs < 1:
        ap.exit(2, "bench_tla.py: error: --runs and --tlc-runs must be at least 1\n")
    if a.tlc is None:
        print("TLC not given (--tlc tla2tools.jar or TLC=... for make): hwcheck's half only")
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} "
          f"{os.getloadavg()[2]:.1f} on {len(os.sched_getaffinity(0))} cores", flush=True)
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-tla-") as tmp:
        folder = Path(tmp)
        out = str(folder / "out")
        for row in ROWS:
            if only and row.name not in only:
                continue
            print(bench_row(row, folder, out, a.runs, a.tlc, a.tlc_runs), flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} "
          f"{os.getloadavg()[2]:.1f} at the end")


if __name__ == "__main__":
    main()
