"""Traces: one type for every engine (the BFS engines and Z3), built and checked by replay.

An engine reports a path: the action instances taken from the initial state, with the
fingerprint it recorded after each. ``from_path`` replays the path through the interpreter (the
slow, independent path) and checks every step against the engine's fingerprints, so a trace is
never shown unless the model itself produces it. ``replay`` re-checks a trace read from a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spec.lang import Spec, reads_next

from .interp import Interpreter
from .rt import fingerprint


class TraceError(ValueError):
    """A trace that does not replay: names the step and the likely cause."""


@dataclass
class Trace:
    spec: str
    params: dict
    engine: str
    property: str  # the invariant, action property or reachability check the trace is about
    kind: str  # invariant | action | reachable
    actions: list[str]  # the label of each step (len(states) - 1 of them)
    states: list[dict]  # each state as the layout's readable dict
    meta: dict = field(default_factory=dict)

    @property
    def length(self) -> int:
        return len(self.actions)

    @property
    def is_cti(self) -> bool:
        """A counterexample to induction: its first state is a hypothetical pre-state."""
        return bool(self.meta.get("cti"))

    @property
    def start_label(self) -> str:
        """What the first state is: the initial state, or a CTI's pre-state."""
        return "pre-state (satisfies every hypothesis; not necessarily reachable)" \
            if self.is_cti else "initial"


def _fp(row: np.ndarray) -> int:
    return int(fingerprint(np.ascontiguousarray(row, dtype=np.int8)))


def from_path(spec: Spec, interp: Interpreter, prop: str, kind: str, engine: str,
              path: list[tuple[int, int | None]]) -> Trace:
    """Replay ``path`` [(action instance, expected fingerprint or None), ...] into a Trace."""
    row = interp.initial()
    rows, labels = [row], []
    for step, (inst_index, want) in enumerate(path, start=1):
        inst = interp.instance(int(inst_index))
        nxt = interp.step(inst, row)
        if nxt is None:
            raise TraceError(f"step {step} ({inst.label}): the action is not enabled on replay; "
                             "the engine and the interpreter disagree on its guard, or actions "
                             "were numbered in a different order")
        if want is not None and _fp(nxt) != want:
            raise TraceError(f"step {step} ({inst.label}): the replayed state differs from the one "
                             "the engine recorded; the compiled effect and the interpreter "
                             "disagree, or actions were enumerated in a nondeterministic order")
        rows.append(nxt)
        labels.append(inst.label)
        row = nxt
    _confirm(spec, interp, prop, kind, rows)
    layout = interp.layout
    return Trace(spec.name, dict(spec.params), engine, prop, kind, labels,
                 [layout.to_dict(r) for r in rows])


def _property(spec: Spec, name: str):
    for group in (spec.invariants, spec.action_properties, spec.reachables):
        for p in group:
            if p.name == name:
                return p
    raise TraceError(f"the spec has no property named {name!r}")


def _confirm(spec: Spec, interp: Interpreter, prop: str, kind: str, rows: list) -> None:
    """Check that the trace ends in a violation (or, for a reachability check, a witness)."""
    p = _property(spec, prop)
    if reads_next(p.expr):
        if len(rows) < 2:
            raise TraceError(f"{prop} is a property of transitions; the trace has none")
        ok = interp.holds(p.expr, rows[-2], rows[-1])
    else:
        ok = interp.holds(p.expr, rows[-1])
    if kind == "reachable" and not ok:
        raise TraceError(f"the last state does not satisfy {prop}")
    if kind != "reachable" and ok:
        raise TraceError(f"the last {'step' if reads_next(p.expr) else 'state'} does not violate {prop}")


def replay(spec: Spec, trace: Trace) -> list[np.ndarray]:
    """Re-run a trace's actions through the interpreter and compare every state with the one
    the trace records; returns the rows. Raises TraceError naming the first step that differs."""
    interp = Interpreter(spec)
    layout = interp.layout
    row = interp.initial()
    if not trace.states:
        raise TraceError("the trace has no states")
    _same(layout, row, trace.states[0], 0, "the initial state")
    rows = [row]
    if len(trace.actions) != len(trace.states) - 1:
        raise TraceError(f"the trace has {len(trace.states)} states but {len(trace.actions)} actions")
    for step, label in enumerate(trace.actions, start=1):
        try:
            inst = interp.instance(label)
        except Exception:
            raise TraceError(f"step {step}: unknown action {label!r}") from None
        nxt = interp.step(inst, row)
        if nxt is None:
            raise TraceError(f"step {step} ({label}): the action is not enabled in the state "
                             "before it")
        _same(layout, nxt, trace.states[step], step, label)
        rows.append(nxt)
        row = nxt
    _confirm(spec, interp, trace.property, trace.kind, rows)
    return rows


def _same(layout, row, recorded: dict, step: int, what: str) -> None:
    got = layout.to_dict(row)
    diff = [name for name in got if recorded.get(name) != got[name]]
    if diff:
        name = diff[0]
        raise TraceError(f"step {step} ({what}): {name} is {recorded.get(name)!r} in the trace "
                         f"but {got[name]!r} on replay")
