"""Lasso traces: the counterexamples of liveness properties, built and confirmed by replay.

A lasso is a path from the initial state and a cycle repeated forever. It is written as an
ordinary trace whose last state equals the state at index ``#meta.loop`` (Apalache's ITF
convention for lassos): the steps after ``loop`` are the cycle. A cycle that is one state
stuttering is one step labelled ``(stutter)`` that changes nothing.

``confirm`` is what makes a lasso a counterexample, checked by the interpreter alone, never
taken from the engine: every step is real (replay), the cycle closes, the property fails on the
behaviour, no action the property asks to stop (``quiet``) is taken on the cycle, and every
fairness condition the spec declares holds on the cycle: a weakly fair instance enabled in
every state of the cycle is taken on it, a strongly fair instance enabled in some state of the
cycle is taken on it (enabled: it leads to a state other than the one it starts from).
"""

from __future__ import annotations

import numpy as np

from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.traces.trace import (
    Trace,
    TraceError,
    _fp,
    presenter_of,
    replayed_rows,
    views_of,
)
from hwcheck.spec.lang import Expr, Instance, Liveness, Spec

STUTTER = "(stutter)"
FORMS = {"leads_to": "~>", "always_eventually": "[]<>", "eventually_always": "<>[]"}


def liveness_named(spec: Spec, name: str | None) -> Liveness:
    for p in spec.liveness:
        if p.name == name:
            return p
    raise TraceError(f"the spec has no liveness property named {name!r}")


def from_lasso(spec: Spec, interp: Interpreter, name: str, engine: str,
               prefix: list[tuple[int, int]], cycle: list[tuple[int, int]]) -> Trace:
    """Replay a lasso (steps of (action instance, fingerprint after it); an empty cycle: the
    last state stutters) into a Trace, checking every fingerprint, and confirm it. With
    several initial states, from the first from which the whole lasso replays."""
    starts = interp.initials()
    first: TraceError | None = None
    for row in starts:
        try:
            return _from_start(spec, interp, name, engine, prefix, cycle, row)
        except TraceError as e:
            first = first or e
    assert first is not None
    raise first


def _from_start(spec: Spec, interp: Interpreter, name: str, engine: str,
                prefix: list[tuple[int, int]], cycle: list[tuple[int, int]],
                row: np.ndarray) -> Trace:
    rows, labels = [row], []
    for step, (inst_index, want) in enumerate(prefix + cycle, start=1):
        inst = interp.instance(int(inst_index))
        try:
            nxt = interp.step(inst, row)
        except ModelError as e:
            raise TraceError(f"step {step} ({inst.label}): the interpreter refuses the step: "
                             f"{e}") from None
        if nxt is None or _fp(nxt, interp.layout) != want:
            raise TraceError(f"step {step} ({inst.label}): the replayed state differs from the "
                             "one the state graph recorded")
        rows.append(nxt)
        labels.append(inst.label)
        row = nxt
    if not cycle:
        rows.append(row.copy())
        labels.append(STUTTER)
    loop = len(prefix)
    confirm(spec, interp, name, rows, labels, loop)
    layout = interp.layout
    p = liveness_named(spec, name)
    meta = {"loop": loop, "liveness": {"form": p.form, "cycle_steps": len(rows) - 1 - loop,
                                       "quiet": list(p.quiet)}}
    return Trace(spec.name, dict(spec.params), engine, name, "liveness", labels,
                 [layout.to_dict(r) for r in rows], meta, views=views_of(spec),
                 present=presenter_of(spec))


def replay(spec: Spec, trace: Trace) -> list[np.ndarray]:
    interp = Interpreter(spec)
    rows = replayed_rows(interp, trace, STUTTER)
    loop = trace.meta.get("loop")
    if isinstance(loop, bool) or not isinstance(loop, int):
        raise TraceError("a liveness counterexample needs #meta.loop, the index of the state "
                         "its cycle starts from")
    confirm(spec, interp, trace.property, rows, list(trace.actions or []), loop)
    return rows


def confirm(spec: Spec, interp: Interpreter, name: str | None, rows: list[np.ndarray],
            labels: list[str],
            loop: int) -> None:
    """Raise TraceError unless (rows, labels) with its cycle from ``loop`` is a fair behaviour
    of ``spec`` that breaks the liveness property ``name``."""
    p = liveness_named(spec, name)
    last = len(rows) - 1
    if not 0 <= loop < last:
        raise TraceError(f"#meta.loop is {loop}: the cycle must start at a state before the "
                         f"last (0..{last - 1})")
    if _fp(rows[last]) != _fp(rows[loop]) or not (rows[last] == rows[loop]).all():
        raise TraceError(f"the cycle does not close: the last state differs from state {loop}")
    cycle_states = rows[loop:last]
    cycle_labels = labels[loop:]
    for label in cycle_labels:
        if label != STUTTER and interp.instance(label).action.name in p.quiet:
            raise TraceError(f"the cycle takes {label}, which {p.name} asks to stop "
                             "(quiet actions are taken finitely often)")
    _breaks(interp, p, rows, loop)
    _fair(spec, interp, cycle_states, rows[loop + 1:last + 1], cycle_labels)


def _holds(interp: Interpreter, e: Expr, row: np.ndarray) -> bool:
    try:
        return bool(interp.holds(e, row))
    except ModelError as err:
        raise TraceError(f"the property reads outside the declared domains: {err}") from None


def _breaks(interp: Interpreter, p: Liveness, rows: list[np.ndarray], loop: int) -> None:
    cyc = rows[loop:-1]
    if p.form == "eventually_always":
        if all(_holds(interp, p.p, r) for r in cyc):
            raise TraceError(f"{p.name} (<>[]p) holds on this behaviour: p holds at every state "
                             "of the cycle")
        return
    if p.form == "always_eventually":
        if any(_holds(interp, p.p, r) for r in cyc):
            raise TraceError(f"{p.name} ([]<>p) holds on this behaviour: p holds on the cycle")
        return
    assert p.q is not None
    if any(_holds(interp, p.q, r) for r in cyc):
        raise TraceError(f"{p.name} (p ~> q) holds on this behaviour: q holds on the cycle")
    # a state with p after which q never holds: q fails from it to the end of the path
    i = len(rows) - 2
    while i >= 0 and not _holds(interp, p.q, rows[i]):
        if _holds(interp, p.p, rows[i]):
            return
        i -= 1
    raise TraceError(f"{p.name} (p ~> q) holds on this behaviour: every state with p is "
                     "followed by one with q")


def _fair(spec: Spec, interp: Interpreter, states: list[np.ndarray], after: list[np.ndarray],
          labels: list[str]) -> None:
    """Every fairness condition of the spec on the cycle (states[i] --labels[i]--> after[i])."""
    taken = set()
    for row, nxt, label in zip(states, after, labels, strict=True):
        if label != STUTTER and not (row == nxt).all():
            taken.add(label)
    for cond in spec.fairness_conditions():
        insts = [interp.instances[i] for i in cond.instances]
        if any(inst.label in taken for inst in insts):
            continue
        enabled = [any(_enabled(interp, inst, r) for inst in insts) for r in states]
        if cond.kind == "weak" and all(enabled):
            raise TraceError(f"the cycle is not fair: {cond.name} (weakly fair) is enabled in "
                             "every state of the cycle and never taken")
        if cond.kind == "strong" and any(enabled):
            raise TraceError(f"the cycle is not fair: {cond.name} (strongly fair) is enabled "
                             "on the cycle and never taken")


def _enabled(interp: Interpreter, inst: Instance, row: np.ndarray) -> bool:
    try:
        nxt = interp.step(inst, row)
    except ModelError:
        return False  # a step out of the declared domains is no transition of the graph
    return nxt is not None and not (nxt == row).all()


def describe(spec: Spec, name: str) -> str:
    """The property in words, for the text and the page."""
    p = liveness_named(spec, name)
    form = {"leads_to": "every state where p holds is followed by one where q holds",
            "always_eventually": "p holds infinitely often",
            "eventually_always": "from some point on p holds forever"}[p.form]
    quiet = (f", on the behaviours that take {', '.join(p.quiet)} finitely often"
             if p.quiet else "")
    return f"{p.doc or p.name} ({form}{quiet}, under the actions' fairness)"
