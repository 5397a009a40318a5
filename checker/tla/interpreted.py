"""Checking a TLA+ module on the interpreter: what ``check --spec FILE.tla`` runs for a small
module, when the compiled path refuses the module, or when asked to (decision record 0019).

``search`` explores with a check's settings, under a budget when it chooses the engine: a
search that ends within it (``Explored.final``) is the interpreter's whole answer, and
``report`` says it; one that does not goes to the compiled path.

The reference search (`explore.py`) explores the module a state at a time, with TLC's
conventions, and this module gives its results the shape of a compiled check's: a verdict per
invariant (holds, violated, unknown), the deadlock as the invariant ``Deadlock`` (TLC's check,
unless the cfg says ``CHECK_DEADLOCK FALSE``), hwcheck's counts and TLC's, each violation's
shortest trace written as the compiled path writes traces (``<out>/<run>/<Name>.itf.json``,
``.txt``, ``.html``: steps named as TLC names actions, values as TLA+ values), the limits and
Ctrl-C stopping the search with the verdict unknown. Temporal properties (PROPERTY) are not
decided here: each is unknown, with the reason, and so is the verdict.

A trace it writes says ``"engine": "interpreter"``; `replay` checks it on the interpreter
again: each state must be the one the step's action gives, as its ITF value.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwcheck.spec.lang import SpecError

from .explore import Model, Result, State, Step, explore, model
from .syntax import TlaError, fail
from .values import Fcn, ModelValue, Value, key, show, sorted_values

ENGINE = "interpreter"
DEADLOCK = "Deadlock"  # the compiled path's name for TLC's deadlock check
UNDECIDED = "temporal properties are not decided by the interpreter"
BUDGET = "the budget of the search that chooses the engine"  # a stop reason ``report`` never says
# what the compiled path says when it refuses a module the interpreter can still check
_REFUSALS = ("not compiled yet: ", "the compiled model left its domains",
             "the domains still grow after")

Say = Callable[[str], None]


def refusal(e: SpecError, module: str) -> tuple[str, str] | None:
    """(where, why) when ``e`` is the compiled path refusing the module at ``module`` (the
    module itself is fine: the interpreter checks it), None for any other error (a module or
    cfg at fault)."""
    msg = str(e)
    at = getattr(e, "at", None) or ""
    if not isinstance(e, TlaError):  # the spec language refusing the compiled spec itself
        body = msg[len(at) + 2:] if at and msg.startswith(at + ": ") else msg
        return f"{module}:1:1", f"the compiled spec: {body}"
    body = msg[len(at) + 2:] if at and msg.startswith(at + ": ") else msg
    for mark in _REFUSALS:
        if body.startswith(mark):
            return at, body.removeprefix("not compiled yet: ")
    return None


def note(where: str, why: str) -> str:
    """The one stderr line that says the interpreter runs, and why."""
    return f"{where}: not compiled ({why}): checking on the interpreter, a state at a time"


@dataclass
class Request:
    """A check as the command line asks it."""

    tla: Path
    cfg: Path
    source: str  # the protocol's source (the module's path), as traces and run folders name it
    params: dict[str, Any]  # {"config": the cfg as given}
    run_name: str
    properties: tuple[str, ...] = ()  # --invariant/--property; () for all
    keep_going: bool = False
    max_states: int | None = None
    max_seconds: float | None = None
    max_memory: int | None = None
    out: Path | None = None


@dataclass
class Outcome:
    """What the check found: the verdict and the --json object (its lines already said)."""

    verdict: str
    result: dict[str, Any]


@dataclass
class Explored:
    """The module searched with a check's settings (``search``)."""

    m: Model
    deadlock: bool  # whether TLC's deadlock is checked (the cfg's, and selected)
    res: Result
    seconds: float

    @property
    def final(self) -> bool:
        """Whether the search is the check's answer: it ended, or stopped where a check on
        the interpreter stops (a violation without --continue, a limit of the run, Ctrl-C),
        not at the budget of a search that chooses the engine."""
        return self.res.stop_reason != BUDGET

    def stop(self, reason: str) -> None:
        """Say that the run stopped, for ``reason``, where this search had stopped."""
        self.res.complete = False
        self.res.stop_reason = reason


def _model(req: Request) -> tuple[Model, bool]:
    m = model(req.tla, req.cfg)
    deadlock = m.check_deadlock
    known = [i.name for i in m.invariants] + ([DEADLOCK] if deadlock else []) + m.properties
    wanted = set(req.properties) if req.properties else None
    if wanted is not None:
        unknown = sorted(wanted - set(known))
        if unknown:
            raise SpecError(f"{unknown[0]} is not a property of {m.root.scope.module.name} "
                            f"(it has {', '.join(known) or 'none'})")
        m.invariants = [i for i in m.invariants if i.name in wanted]
        m.properties = [p for p in m.properties if p in wanted]
        deadlock = deadlock and DEADLOCK in wanted
    return m, deadlock


def _identity(req: Request) -> dict[str, Any]:
    return {"command": "check", "protocol": req.source, "params": dict(req.params)}


def search(req: Request, budget: tuple[int, float] | None = None,
           spent: float = 0.0) -> Explored:
    """The module explored as a check on the interpreter explores it, stopped by the run's
    limits (``spent``: the seconds the run spent already, counted against --max-seconds),
    Ctrl-C and SIGTERM; and with ``budget`` (distinct states, seconds), also stopped past it
    (then not ``final``). A TlaError (a SpecError) for a module or cfg the evaluator does not
    take, or an output folder that cannot be used (``OutputError``), before anything is
    explored."""
    from hwcheck.checker.search.exploration import interrupt_reason
    from hwcheck.checker.search.stop import StopRule
    from hwcheck.checker.traces.output import prepare_run_folder

    m, deadlock = _model(req)
    if req.out is not None:
        prepare_run_folder(req.out, req.run_name, _identity(req))
    rule = StopRule(max_states=req.max_states, max_seconds=req.max_seconds,
                    max_memory=req.max_memory)
    start = time.monotonic()

    def limit(n: int) -> str:
        took = time.monotonic() - start
        why = rule.limit(n, spent + took)
        if not why and budget is not None and (n >= budget[0] or took >= budget[1]):
            return BUDGET
        return why

    res = explore(m, check_deadlock=deadlock, stop_at_first=not req.keep_going, limit=limit,
                  interrupted=interrupt_reason)
    return Explored(m, deadlock, res, time.monotonic() - start)


def check(req: Request, say: Say, spent: float = 0.0) -> Outcome:
    """Check the module on the interpreter (``spent``: see ``search``); ``say`` gets the
    human lines."""
    return report(req, search(req, spent=spent), say)


def report(req: Request, done: Explored, say: Say) -> Outcome:
    """Say what a search found (its traces written), as a check on the interpreter says it.
    An ``OutputError`` for an output folder that cannot be used."""
    from hwcheck.checker.traces.output import prepare_run_folder

    m, deadlock, res, seconds = done.m, done.deadlock, done.res, done.seconds
    identity = _identity(req)
    folder = prepare_run_folder(req.out, req.run_name, identity) if req.out is not None \
        else None
    found: dict[str, list[Step]] = dict(res.violations)
    if res.deadlock is not None:
        found[DEADLOCK] = res.deadlock
    limited = res.stop_reason.startswith("reached --max-")
    status: dict[str, str] = {}
    for name in [i.name for i in m.invariants] + ([DEADLOCK] if deadlock else []):
        status[name] = "violated" if name in found else "holds" if res.complete else "unknown"
    for p in m.properties:
        status[p] = "unknown"
    verdict = ("unknown" if limited else "violated") if found else \
        "holds" if res.complete and not m.properties else "unknown"
    violations = []
    for name, steps in found.items():
        files: list[Path] = []
        note_ = ""
        text = trace_text(m, name, steps)
        say("")
        say(text.rstrip("\n"))
        if folder is not None:
            try:
                files = write(folder, identity, req, m, name, steps, text)
                say(f"written: {', '.join(str(p) for p in files)}")
            except OSError as e:
                note_ = f"its trace could not be written: {e.strerror or e}"
                say(f"note: {name}: {note_}")
        v: dict[str, Any] = {"property": name, "kind": "invariant", "length": len(steps) - 1,
                             "trace": str(files[0]) if files else None}
        if note_:
            v["note"] = note_
        violations.append(v)
    for p in m.properties:
        say(f"property: {p} unknown ({UNDECIDED})")
    if not res.complete:
        say(f"note: exploration incomplete: {res.stop_reason}")
    init_states = res.init_states
    if init_states > 1:
        say(f"note: {init_states:,} initial states (Init allows {res.init_generated:,} "
            "choices; the generated count is of successors only)")
    parts = [f"{name} in {len(steps) - 1} steps" for name, steps in found.items()]
    detail = f" ({', '.join(parts)})" if parts else ""
    generated = res.generated - res.init_generated
    depth = max(res.depth - 1, 0)
    say(f"verdict: {verdict}{detail}; {res.distinct:,} distinct states, {generated:,} "
        f"generated, depth {depth}, {seconds:.2f} s")
    tlc = {"distinct": res.distinct, "generated": res.generated, "depth": res.depth}
    say(f"TLC's counts: {tlc['distinct']:,} distinct states, {tlc['generated']:,} generated, "
        f"depth {tlc['depth']} (the initial states counted)")
    result = {
        "command": "check", "verdict": verdict, "protocol": req.source,
        "params": dict(req.params), "distinct": res.distinct, "symmetry": False,
        "counts": "states", "generated": generated, "depth": depth,
        "initial_states": init_states, "initial_choices": res.init_generated,
        "seconds": round(seconds, 3), "violations": violations, "properties": status,
        "unchecked": {p: UNDECIDED for p in m.properties},
        "complete": res.complete, "stop_reason": res.stop_reason,
        "partial_level": None, "engine": ENGINE, "workers": 1, "coverage": None, "tlc": tlc,
    }
    return Outcome(verdict, result)


# -- traces ----------------------------------------------------------------------------------


def to_itf(v: Value) -> Any:
    """A TLA+ value as ITF: sets ``{"#set": [...]}``, sequences and tuples (functions on
    ``1..n``) lists, records objects, other functions ``{"#map": [[k, v], ...]}``, model
    values by name (as the compiled path writes them), integers past 2^53 ``#bigint``."""
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v if abs(v) < 2 ** 53 else {"#bigint": str(v)}
    if isinstance(v, ModelValue):
        return v.name
    if isinstance(v, frozenset):
        return {"#set": [to_itf(x) for x in sorted_values(v)]}
    if isinstance(v, Fcn):
        if v.is_seq():
            return [to_itf(x) for x in v.seq()]
        if v.is_record():
            return {k: to_itf(x) for k, x in sorted(v.map.items())}
        return {"#map": [[to_itf(k), to_itf(x)] for k, x in
                         sorted(v.map.items(), key=lambda kv: key(kv[0]))]}
    raise fail(None, f"the value {show(v)} has no ITF form")


def _itf_state(s: State, variables: tuple[str, ...]) -> dict[str, Any]:
    return {n: to_itf(s[n]) for n in variables}


def trace_text(m: Model, name: str, steps: list[Step]) -> str:
    """The trace as the compiled path's text view: each step named as TLC names it, each
    variable as a TLA+ value, ``*`` where the step changed it."""
    out = [f"{name} violated in {len(steps) - 1} steps ({ENGINE} engine)",
           f"(module {m.root.scope.module.name})", ""]
    variables = m.root.variables
    width = max((len(n) for n in variables), default=0)
    prev: State | None = None
    for i, st in enumerate(steps):
        out.append("State 0: Init" if i == 0 else f"Step {i}: {st.label}")
        for n in variables:
            star = "*" if prev is not None and key(prev[n]) != key(st.state[n]) else ""
            out.append(f"    {n.ljust(width)}  {show(st.state[n])}{star}")
        out.append("")
        prev = st.state
    out.append("The last state has no successor (a deadlock)." if name == DEADLOCK else
               f"The last state violates {name}.")
    return "\n".join(out) + "\n"


def _trace_object(m: Model, req: Request, name: str, steps: list[Step]) -> Any:
    from hwcheck.checker.traces.trace import Trace

    variables = m.root.variables
    return Trace(m.root.scope.module.name, dict(req.params), ENGINE, name, "invariant",
                 [str(s.label) for s in steps[1:]], [dict(s.state) for s in steps],
                 present=lambda st: {n: show(st[n]) for n in variables})


def itf_document(m: Model, req: Request, name: str, steps: list[Step]) -> dict[str, Any]:
    from hwcheck.checker import protocols
    from hwcheck.checker.traces import itf

    variables = m.root.variables
    states = []
    for i, st in enumerate(steps):
        meta: dict[str, Any] = {"index": i}
        if i:
            meta["action"] = str(st.label)
        states.append({"#meta": meta, **_itf_state(st.state, variables)})
    head: dict[str, Any] = {"format": itf.FORMAT, "format-description": itf.FORMAT_DESCRIPTION,
                            "source": "hwcheck", "spec": m.root.scope.module.name,
                            "protocol": req.source}
    digest = protocols.source_digest(req.source)
    if digest is not None:
        head[itf.DIGEST] = digest
    head.update({"params": dict(req.params), "engine": ENGINE, "property": name,
                 "kind": "invariant", "length": len(steps) - 1})
    return {"#meta": head, "vars": list(variables), "states": states}


def write(folder: Path, identity: dict[str, Any], req: Request, m: Model, name: str,
          steps: list[Step], text: str) -> list[Path]:
    """``<folder>/<name>.itf.json``, ``.txt`` and ``.html``, each written atomically."""
    from hwcheck.checker.traces import html
    from hwcheck.checker.traces.output import file_name, write_atomic, write_trace_marker

    write_trace_marker(folder, identity)
    base = file_name(name)
    doc = itf_document(m, req, name, steps)
    return [write_atomic(folder / f"{base}.itf.json", json.dumps(doc, indent=1) + "\n"),
            write_atomic(folder / f"{base}.txt", text),
            write_atomic(folder / f"{base}.html", html.page(_trace_object(m, req, name, steps)))]


# -- replay ----------------------------------------------------------------------------------


def is_interpreted(data: dict[str, Any]) -> bool:
    """Whether an ITF document is a trace this module wrote."""
    meta = data.get("#meta")
    return isinstance(meta, dict) and meta.get("engine") == ENGINE


def replay(data: dict[str, Any], tla: Path, cfg: Path | None, where: str) -> tuple[str, int]:
    """Check an interpreter's trace on the module again: its first state an initial state,
    each step a way of Next with the step's name to the next state, and what it claims (the
    last state violates the invariant, or has no successor for ``Deadlock``). Returns (the
    property, the steps); raises TlaError (a SpecError) naming the step that does not
    replay."""
    meta = data["#meta"]
    params = meta.get("params") if isinstance(meta.get("params"), dict) else {}
    if cfg is None:
        given = params.get("config")
        cfg = Path(given) if isinstance(given, str) else tla.with_suffix(".cfg")
    m = model(tla, cfg)
    variables = m.root.variables
    prop = meta.get("property")
    items = data.get("states")
    if not isinstance(items, list) or not items:
        raise fail(None, f"{where}: the trace has no states")
    if data.get("vars") is not None and list(data["vars"]) != list(variables):
        raise fail(None, f"{where}: vars {data['vars']} are not the variables of "
                         f"{m.root.scope.module.name} ({', '.join(variables)})")

    def want(i: int) -> dict[str, Any]:
        item = items[i]
        if not isinstance(item, dict):
            raise fail(None, f"{where}: state {i} is not an object")
        return {n: item.get(n) for n in variables}

    current = next((s for s in m.ev.initial(m.init) if _itf_state(s, variables) == want(0)),
                   None)
    if current is None:
        raise fail(None, f"{where}: state 0 is not an initial state of the module")
    for i in range(1, len(items)):
        label = (items[i].get("#meta") or {}).get("action") if isinstance(items[i], dict) \
            else None
        target = want(i)
        nxt = next((t for lab, t in m.ev.successors(m.next, current)
                    if (label is None or str(lab) == label)
                    and _itf_state(t, variables) == target), None)
        if nxt is None:
            raise fail(None, f"{where}: step {i} ({label}): no way of Next with that name "
                             f"leads from state {i - 1} to state {i}")
        current = nxt
    if prop == DEADLOCK:
        if any(True for _ in m.ev.successors(m.next, current)):
            raise fail(None, f"{where}: the last state has a successor: not a deadlock")
    elif isinstance(prop, str):
        inv = next((i for i in m.invariants if i.name == prop), None)
        if inv is None:
            entry = m.root.scope.defs.get(prop)
            from .modules import Defn

            if not isinstance(entry, Defn):
                raise fail(None, f"{where}: {prop} is not an invariant of "
                                 f"{m.root.scope.module.name}")
            inv = entry
        if m.ev.predicate(inv, current):
            raise fail(None, f"{where}: the last state satisfies {prop}: the trace shows no "
                             "violation")
    return str(prop), len(items) - 1
