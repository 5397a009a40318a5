#!/usr/bin/env python3
"""The TLA+ community's examples (tlaplus/Examples) through ``hwcheck check --spec``.

    python scripts/tla_corpus.py --root /path/to/Examples [--max-seconds 120] [--out table.md]

Reads every ``specifications/*/manifest.json``, selects the small exhaustive models (mode
"exhaustive search", TLC's runtime under 30 s, TLC's distinctStates recorded), runs each
through the command line (``hwcheck check --spec MODULE.tla --config MODEL.cfg --json``, one
subprocess each, in its own process group, stopped by ``--max-seconds`` and killed, with
everything it started, past a grace period), and writes a markdown table: TLC's distinct
states and hwcheck's, the engine that ran (compiled or interpreted), the seconds, and for a
model not read the one-line reason. TLC's totalStates (its states generated: every way Init
and Next are satisfied, the initial states included) and stateDepth (the levels, the initial
one counted) are compared with hwcheck's ``tlc`` counts, which follow the same conventions.

A model "matches" when hwcheck explored it whole and found TLC's distinct count, or found the
same verdict (a violation) where TLC stopped at one: after a violation the counts depend on the
order of the search, which is TLC's (several workers) and hwcheck's own.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

SMALL_SECONDS = 30  # TLC's runtime under this: a small model
GRACE = 60  # seconds past --max-seconds before a run is killed (parsing, compiling, traces)
RUNNING: set[subprocess.Popen[str]] = set()  # the runs in progress (killed on Ctrl-C)


@dataclass
class Model:
    name: str  # the cfg's path under specifications/
    tla: Path
    cfg: Path
    result: str  # TLC's: success, safety failure, ...
    distinct: int
    total: int | None
    depth: int | None


def _seconds(runtime: str) -> int | None:
    parts = runtime.split(":")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    h, m, s = map(int, parts)
    return h * 3600 + m * 60 + s


def models(root: Path) -> list[Model]:
    """The small exhaustive models of every manifest, in the manifests' order."""
    out = []
    for manifest in sorted(root.glob("specifications/*/manifest.json")):
        doc = json.loads(manifest.read_text())
        for mod in doc.get("modules", []):
            for mo in mod.get("models", []):
                secs = _seconds(str(mo.get("runtime", "")))
                if mo.get("mode") != "exhaustive search" or secs is None \
                        or secs >= SMALL_SECONDS or "distinctStates" not in mo:
                    continue
                cfg = root / mo["path"]
                out.append(Model(str(cfg.relative_to(root / "specifications")),
                                 root / mod["path"], cfg,
                                 mo.get("result", ""), mo["distinctStates"],
                                 mo.get("totalStates"), mo.get("stateDepth")))
    return out


@dataclass
class Run:
    model: Model
    engine: str  # compiled | interpreted | -
    seconds: float
    verdict: str | None = None
    tlc: dict[str, int] | None = None
    complete: bool = False
    reason: str = ""  # why it was not read ('' when it was)

    @property
    def matches(self) -> bool:
        """TLC's distinct count, from a whole run (TLC's: success) or from one stopped at
        a violation, as TLC's was (any other)."""
        if self.tlc is None or self.tlc["distinct"] != self.model.distinct:
            return False
        if self.model.result == "success":  # unknown: PROPERTY, not decided by the interpreter
            return self.complete and self.verdict in ("holds", "unknown")
        return self.verdict == "violated"


def run(m: Model, max_seconds: float, python: str, grace: float = GRACE) -> Run:
    """One model through ``hwcheck check``; never leaves a process behind."""
    with tempfile.TemporaryDirectory(prefix="tla-corpus-") as out:
        cmd = [python, "-m", "hwcheck.checker", "check", "--spec", str(m.tla), "--config",
               str(m.cfg), "--json", "--quiet", "--out", out, "--max-seconds",
               str(max_seconds)]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        RUNNING.add(proc)
        try:
            stdout, stderr = proc.communicate(timeout=max_seconds + grace)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            return Run(m, "-", time.monotonic() - start,
                       reason=f"no result within {max_seconds + grace:g} s (killed)")
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        finally:
            RUNNING.discard(proc)
        seconds = time.monotonic() - start
    engine = "interpreted" if "checking on the interpreter" in stderr else "compiled"
    try:
        res = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        lines = [x for x in stderr.splitlines() if x.strip()
                 and "checking on the interpreter" not in x]
        why = lines[-1] if lines else f"exit {proc.returncode}, no output"
        why = re.sub(r"^hwcheck: error: ", "", why)
        return Run(m, engine if "not compiled" in stderr else "-", seconds,
                   reason=_short(why, m))
    engine = "interpreted" if res.get("engine") == "interpreter" else "compiled"
    r = Run(m, engine, seconds, res["verdict"], res.get("tlc"), res["complete"])
    if not r.matches:
        if not res["complete"] and res["verdict"] != "violated":
            r.reason = f"stopped: {res['stop_reason']}"
        elif m.result == "success" and res["verdict"] == "violated":
            names = ", ".join(v["property"] for v in res["violations"])
            r.reason = f"hwcheck finds {names} violated; TLC: success"
        elif m.result != "success" and res["verdict"] != "violated":
            r.reason = f"hwcheck: {res['verdict']}; TLC: {m.result}"
        elif r.tlc is not None and m.result != "success":
            r.reason = (f"violated as TLC's; {r.tlc['distinct']:,} distinct at the stop, TLC "
                        f"{m.distinct:,} (the order of the search)")
        elif r.tlc is not None:
            r.reason = f"{r.tlc['distinct']:,} distinct, TLC {m.distinct:,}"
    return r


def _short(why: str, m: Model) -> str:
    """A reason without the corpus's root in its paths."""
    base = str(m.tla.parent.parent.parent) + "/"
    return why.replace(base, "").replace("|", "\\|")[:300]


def table(runs: list[Run]) -> str:
    lines = ["| model | TLC distinct | hwcheck distinct | generated (TLC / hwcheck) | depth (TLC "
             "/ hwcheck) | engine | seconds | result |",
             "|---|---:|---:|---|---|---|---:|---|"]
    for r in runs:
        m = r.model
        got = f"{r.tlc['distinct']:,}" if r.tlc else ""
        gen = f"{m.total:,} / {r.tlc['generated']:,}" if r.tlc and m.total is not None else ""
        dep = f"{m.depth} / {r.tlc['depth']}" if r.tlc and m.depth is not None else ""
        # the command line's note on the cfg parameter adds nothing to a module's error
        verdict = "matches" if r.matches else r.reason.split(" (config='")[0]
        if r.matches and r.verdict == "unknown":
            verdict += " (PROPERTY not decided)"
        if r.matches and r.tlc and m.total is not None and r.tlc["generated"] != m.total:
            verdict += " (generated differs)"
        lines.append(f"| {m.name} | {m.distinct:,} | {got} | {gen} | {dep} | {r.engine} | "
                     f"{r.seconds:.1f} | {verdict} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, required=True,
                    help="a copy of tlaplus/Examples (its specifications/*/manifest.json)")
    ap.add_argument("--max-seconds", type=float, default=120.0,
                    help="each model's --max-seconds (it is killed --grace seconds past it)")
    ap.add_argument("--only", default=None, metavar="REGEX",
                    help="only the models whose name matches")
    ap.add_argument("--grace", type=float, default=GRACE,
                    help="seconds past --max-seconds before a run is killed (the compiled "
                         "path's kernel compilations and domain widening are not limited by "
                         "--max-seconds) [default: 60]")
    ap.add_argument("--jobs", type=int, default=1,
                    help="models run at once (each one process) [default: 1]")
    ap.add_argument("--out", type=Path, default=None, help="write the table here (atomically)")
    ap.add_argument("--results", type=Path, default=None, metavar="FILE.json",
                    help="keep each model's result here, and take the models not run now "
                         "(outside --only) from it: the table is of every model")
    args = ap.parse_args(argv)
    if not (args.root / "specifications").is_dir():
        print(f"tla_corpus: {args.root} has no specifications/ folder", file=sys.stderr)
        return 2
    every = models(args.root)
    kept: dict[str, Run] = {}
    if args.results is not None and args.results.is_file():
        by_name = {m.name: m for m in every}
        for name, d in json.loads(args.results.read_text()).items():
            if name in by_name:
                kept[name] = Run(by_name[name], **d)
    chosen = [m for m in every if args.only is None or re.search(args.only, m.name)]
    lock = threading.Lock()

    def one(m: Model) -> Run:
        r = run(m, args.max_seconds, sys.executable, args.grace)
        print(f"{m.name}: {'matches' if r.matches else r.reason} ({r.engine}, "
              f"{r.seconds:.1f} s)", file=sys.stderr, flush=True)
        if args.results is not None:
            with lock:
                kept[m.name] = r
                _write(args.results, json.dumps(
                    {n: {k: v for k, v in vars(x).items() if k != "model"}
                     for n, x in kept.items()}, indent=1))
        return r

    pool = ThreadPoolExecutor(max(1, args.jobs))  # each run is a subprocess
    try:
        runs = list(pool.map(one, chosen))
    except BaseException:  # Ctrl-C: no run left behind
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(RUNNING):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        raise
    pool.shutdown()
    done = {r.model.name: r for r in runs}
    runs = [done.get(m.name) or kept[m.name] for m in every if m.name in done or m.name in kept]
    matched = sum(r.matches for r in runs)
    text = table(runs) + f"\n{matched} of {len(runs)} models match TLC.\n"
    if args.out is not None:
        _write(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def _write(path: Path, text: str) -> None:
    """``text`` to ``path`` through a temporary file and a rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
