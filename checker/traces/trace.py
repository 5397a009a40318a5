"""Traces: one type for every engine (the BFS engines and Z3), built and checked by replay.

An engine reports a path: the action instances taken from the initial state, with the
fingerprint it recorded after each. ``from_path`` replays the path through the interpreter (the
slow, independent path) and checks every step against the engine's fingerprints, so a trace is
never shown unless the model itself produces it. ``replay`` re-checks a trace read from a file.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from hwcheck.checker.semantics.fingerprint import fingerprint
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.layout import Layout
from hwcheck.spec.lang import (
    ActionProperty,
    Instance,
    Invariant,
    Liveness,
    Reachable,
    Spec,
    reads_next,
)
from hwcheck.spec.protocol import NO_VIEWS, Views, protocol_of

# a state as the layout's readable dict (``Layout.to_dict``): variable name -> value
State = dict[str, Any]
# a kernel's ``canonical``: the representative of a row's orbit under a symmetry
Canon = Callable[[np.ndarray], np.ndarray]


class TraceError(ValueError):
    """A trace that does not replay: names the step and the likely cause."""


@dataclass
class Trace:
    spec: str
    params: dict[str, Any]
    engine: str
    property: str | None  # the invariant, action property or reachability check it is about
    # (None: a behaviour read from another tool, with no claim to check)
    kind: str  # invariant | action | reachable
    actions: list[str] | None  # the label of each step (len(states) - 1); None: not given
    states: list[State]  # each state as the layout's readable dict
    meta: dict[str, Any] = field(default_factory=dict)
    # How the protocol draws its traces; NO_VIEWS: the generic table.
    views: Views = field(default=NO_VIEWS, repr=False, compare=False)
    # How a state is shown when the spec has typed variables (``values.present``): each as one
    # value instead of its leaves; None: as it is.
    present: Callable[[State], State] | None = field(default=None, repr=False, compare=False)

    def shown(self) -> list[State]:
        """The states as a user reads them (typed variables as values)."""
        return [self.present(s) for s in self.states] if self.present else self.states

    @builtins.property
    def length(self) -> int:
        """Steps, the one that leaves the declared domains included (it has no state after)."""
        failing = 1 if (self.meta.get("domain_error") or {}).get("step") else 0
        return len(self.actions or []) + failing

    @builtins.property
    def labels(self) -> list[str]:
        """The label of each step, ``?`` for each of a trace read without them (another tool's,
        before ``replay.find_actions`` names them)."""
        return self.actions if self.actions is not None else ["?"] * (len(self.states) - 1)

    @builtins.property
    def is_cti(self) -> bool:
        """A counterexample to induction: its first state is a hypothetical pre-state."""
        return bool(self.meta.get("cti"))

    @builtins.property
    def start_label(self) -> str:
        """What the first state is: the initial state, or a CTI's pre-state."""
        return "pre-state (satisfies every hypothesis; not necessarily reachable)" \
            if self.is_cti else "initial"


def _fp(row: np.ndarray, layout: Layout | None = None) -> int:
    """A state's fingerprint as the engines record it (under a VIEW, of the view's cells)."""
    return int(fingerprint(layout.identity(row) if layout is not None
                           else np.ascontiguousarray(row)))


def from_path(spec: Spec, interp: Interpreter, prop: str | None, kind: str, engine: str,
              path: Sequence[tuple[int, int | None]], canon: Canon | None = None,
              first: int = 0) -> Trace:
    """Replay ``path`` [(action instance, expected fingerprint or None), ...] into a Trace.

    ``canon`` (a kernel's ``canonical``) says the engine kept one representative per orbit of
    a symmetry: its path is a chain of representatives, each fingerprint that of the
    representative reached, and each instance one taken from a representative. The trace is
    then rebuilt concretely from the real initial state (``_concrete_step``), so it is a real
    path of the same length that ``replay`` confirms.

    A path does not say which initial state it starts from: with several, the trace starts
    from the first (in Init's order, from the ``first``-th on, then the rest) from which the
    whole path replays, every fingerprint and the property's hit confirmed."""
    starts = interp.initials()
    error: TraceError | None = None
    for k in range(len(starts)):
        try:
            return _from_start(spec, interp, prop, kind, engine, path, canon,
                               starts[(first + k) % len(starts)])
        except TraceError as e:
            error = error or e
    assert error is not None
    if len(starts) > 1:
        raise TraceError(f"from none of the {len(starts)} initial states: {error}")
    raise error


def _from_start(spec: Spec, interp: Interpreter, prop: str | None, kind: str, engine: str,
                path: Sequence[tuple[int, int | None]], canon: Canon | None,
                row: np.ndarray) -> Trace:
    """``from_path`` from the initial state ``row``."""
    rows, labels, failing = [row], [], None
    for step, (inst_index, want) in enumerate(path, start=1):
        if canon is not None:
            inst, nxt, err = _concrete_step(spec, interp, canon, row, int(inst_index), want,
                                            prop, kind, step, step == len(path))
            if err is not None:
                failing = (inst, err)
                break
            nxt = cast(np.ndarray, nxt)  # a successor whenever there is no error
            rows.append(nxt)
            labels.append(inst.label)
            row = nxt
            continue
        inst = interp.instance(int(inst_index))
        try:
            nxt = interp.step(inst, row)
        except ModelError as e:
            if kind == "domain" and step == len(path):  # the step the engine said leaves
                failing = (inst, e)  # the declared domains: it has no successor
                break
            raise TraceError(f"step {step} ({inst.label}): the interpreter refuses the step: "
                             f"{e}") from None
        if nxt is None:
            raise TraceError(f"step {step} ({inst.label}): the action is not enabled on replay; "
                             "the engine and the interpreter disagree on its guard, or actions "
                             "were numbered in a different order")
        if want is not None and _fp(nxt, interp.layout) != want:
            raise TraceError(f"step {step} ({inst.label}): the replayed state differs from the one "
                             "the engine recorded; the compiled effect and the interpreter "
                             "disagree, or actions were enumerated in a nondeterministic order")
        rows.append(nxt)
        labels.append(inst.label)
        row = nxt
    meta = {}
    if kind == "domain":
        meta["domain_error"] = _confirm_domain(spec, interp, prop, rows,
                                               failing[0].label if failing else None)
    else:
        _confirm(spec, interp, prop, kind, rows)
    layout = interp.layout
    return Trace(spec.name, dict(spec.params), engine, prop, kind, labels,
                 [layout.to_dict(r) for r in rows], meta, views=views_of(spec),
                 present=presenter_of(spec))


DOMAIN_ERROR = re.compile(r"^DomainError\((?P<var>[^,()]+), (?P<where>[^()]+)\)$")


def _concrete_step(spec: Spec, interp: Interpreter, canon: Canon, row: np.ndarray, taken: int,
                   want: int | None, prop: str | None, kind: str, step: int, final: bool
                   ) -> tuple[Instance, np.ndarray | None, ModelError | None]:
    """One step of a symmetry-reduced path, on the concrete state ``row``: (instance, successor,
    None), or (instance, None, the ModelError) for the step that leaves the declared domains.

    The engine took instance ``taken`` from the representative of ``row``'s orbit, to a state
    whose representative has fingerprint ``want``. Since the symmetry maps transitions to
    transitions, some instance takes ``row`` to a state of that orbit: the first in instance
    order is chosen. On the last step of a transition property's path it must also be a hit of
    the property (another instance may reach the same orbit without one); a step that leaves
    the domains (``want`` None) is the first instance of the same action that the
    interpreter refuses on the same variable."""
    insts = interp.instances
    if want is None:
        m = DOMAIN_ERROR.match(prop or "")
        var = m["var"] if m else None
        action = insts[taken].action
        for inst in insts:
            if inst.action is not action:
                continue
            try:
                nxt = interp.step(inst, row)
            except ModelError as e:
                if var is None or e.variable == var:
                    return inst, None, e
                continue
            if nxt is not None and m is not None and _refuses(spec, interp, m["where"], var,
                                                               row, nxt):
                return inst, nxt, None  # a transition property reads outside the domains
        raise TraceError(f"step {step}: no instance of {action.name} leaves the declared "
                         f"domains from the rebuilt state; the declared symmetry is not one of "
                         "the spec")
    goal = None
    if final and prop is not None and kind in KINDS:
        p = _safety_property(spec, prop, kind)
        goal = p.expr if reads_next(p.expr) else None
    for inst in insts:
        try:
            nxt = interp.step(inst, row)
        except ModelError:  # another instance: not the step the path took
            continue
        if nxt is None or _fp(canon(nxt), interp.layout) != want:
            continue
        if goal is not None:
            try:
                hit = interp.holds(goal, row, nxt) == (kind == "reachable")
            except ModelError:
                hit = False
            if not hit:
                continue
        return inst, nxt, None
    raise TraceError(f"step {step}: no action takes the rebuilt state to the orbit the engine "
                     "recorded; the declared symmetry is not one of the spec, or the kernel and "
                     "the interpreter disagree")


def _refuses(spec: Spec, interp: Interpreter, where: str, var: str | None, row: np.ndarray,
             nxt: np.ndarray) -> bool:
    """Whether the transition property ``where`` reads ``var`` outside its shape on (row, nxt)."""
    for p in spec.action_properties + spec.reachables:
        if p.name == where and reads_next(p.expr):
            try:
                interp.holds(p.expr, row, nxt)
            except ModelError as e:
                return e.variable == var
    return False


def _confirm_domain(spec: Spec, interp: Interpreter, name: str | None, rows: list[np.ndarray],
                    label: str | None) -> dict[str, Any]:
    """Check that the trace ends where the spec leaves its declared domains, as its name
    ``DomainError(variable, action or property)`` says: the step ``label`` from the last state
    (or, without a step, the property evaluated on the last state) makes the interpreter refuse
    a write or a read of that variable. Returns what ``#meta.domain_error`` records."""
    m = DOMAIN_ERROR.match(name or "")
    if m is None:
        raise TraceError(f"{name!r} is not a domain error (DomainError(variable, action))")
    var, where = m["var"], m["where"]
    if var not in {v.name for v in spec.variables}:
        raise TraceError(f"{name}: {spec.name} has no variable {var!r}")
    try:
        if label is not None:
            inst = interp.instance(label)
            if inst.action.name != where:
                raise TraceError(f"the failing step {label} is not an instance of {where}")
            interp.step(inst, rows[-1])
        else:
            p = _safety_property(spec, where)
            if reads_next(p.expr):
                if len(rows) < 2:
                    raise TraceError(f"{where} is a property of transitions; the trace has none")
                interp.holds(p.expr, rows[-2], rows[-1])
            else:
                interp.holds(p.expr, rows[-1])
    except ModelError as e:
        if e.variable != var:
            raise TraceError(f"the interpreter refuses {e.variable}, not {var}: {e}") from None
        return {"variable": var, "where": where, "step": label, "message": str(e)}
    what = f"step {label}" if label is not None else f"property {where}"
    raise TraceError(f"the {what} stays inside the declared domains of {var}")


def domain_cti(spec: Spec, name: str, label: str, pre: np.ndarray,
               meta: dict[str, Any]) -> Trace:
    """A counterexample to induction whose step leaves the declared domains: the pre-state
    ``pre`` (a layout row) and the step ``label`` that the interpreter refuses on the variable
    ``name`` (``DomainError(variable, action)``) names. It has no post-state: ``#meta``'s
    ``domain_error`` records the step, as in an engine's domain-error trace."""
    interp = Interpreter(spec)
    meta = dict(meta, cti=True, domain_error=_confirm_domain(spec, interp, name, [pre], label))
    return Trace(spec.name, dict(spec.params), "z3-induction", name, "domain", [],
                 [interp.layout.to_dict(pre)], meta, views=views_of(spec),
                 present=presenter_of(spec))


def presenter_of(spec: Spec) -> Callable[[State], State] | None:
    """How ``spec``'s states are shown: its typed variables as values, if it has any."""
    if not spec.typed:
        return None
    from hwcheck.checker.traces.values import present

    return functools.partial(present, spec)


def views_of(spec: Spec) -> Views:
    """The views of the protocol that built ``spec`` (none for a spec built by hand)."""
    return protocol_of(spec).views


KINDS = {"invariant": "invariants", "action": "action_properties", "reachable": "reachables",
         "liveness": "liveness"}


def _property(spec: Spec, name: str, kind: str | None = None
              ) -> Invariant | ActionProperty | Reachable | Liveness:
    """The property ``name`` of ``spec``, of ``kind`` when given (a trace that claims another
    kind of property than the spec declares is rejected)."""
    for k, group in KINDS.items():
        props: list[Invariant | ActionProperty | Reachable | Liveness] = getattr(spec, group)
        for p in props:
            if p.name == name:
                if kind is not None and k != kind:
                    raise TraceError(f"{name} is a {_kind_word(k)} of {spec.name}, but the trace "
                                     f"claims a {_kind_word(kind)}")
                return p
    raise TraceError(f"the spec has no property named {name!r}")


def _safety_property(spec: Spec, name: str, kind: str | None = None
                     ) -> Invariant | ActionProperty | Reachable:
    """``_property``, for a trace that ends in one state or step: a liveness property's
    counterexample is a lasso (``lasso.replay``), never such a trace."""
    p = _property(spec, name, kind)
    if isinstance(p, Liveness):
        raise TraceError(f"{name} is a liveness property: its counterexample is a lasso, not a "
                         "trace that ends in one state")
    return p


def _kind_word(kind: str) -> str:
    return {"invariant": "invariant", "action": "action property",
            "reachable": "reachability check",
            "liveness": "liveness property"}.get(kind, repr(kind))


def _confirm(spec: Spec, interp: Interpreter, prop: str | None, kind: str,
             rows: list[np.ndarray]) -> None:
    """Check that the trace ends in a violation (or, for a reachability check, a witness)."""
    if prop is None:
        return
    p = _safety_property(spec, prop, kind)
    if reads_next(p.expr):
        if len(rows) < 2:
            raise TraceError(f"{prop} is a property of transitions; the trace has none")
        ok = interp.holds(p.expr, rows[-2], rows[-1])
    else:
        ok = interp.holds(p.expr, rows[-1])
    if kind == "reachable" and not ok:
        raise TraceError(f"the last state does not satisfy {prop}")
    if kind != "reachable" and ok:
        what = "step" if reads_next(p.expr) else "state"
        raise TraceError(f"the last {what} does not violate {prop}")


def replay(spec: Spec, trace: Trace) -> list[np.ndarray]:
    """Re-run a trace's actions through the interpreter and compare every state with the one
    the trace records; returns the rows. Raises TraceError naming the first step that differs.
    A lasso (a liveness counterexample) is confirmed by ``lasso.replay``."""
    if trace.kind == "liveness":
        from hwcheck.checker.traces import lasso

        return lasso.replay(spec, trace)
    interp = Interpreter(spec)
    rows = replayed_rows(interp, trace)
    if trace.kind == "domain":
        claimed = trace.meta.get("domain_error")
        if not isinstance(claimed, dict):
            raise TraceError("a domain-error trace needs #meta.domain_error")
        last = claimed.get("step")
        if last is not None and not isinstance(last, str):
            raise TraceError(f"#meta.domain_error.step must name an action, got {last!r}")
        _confirm_domain(spec, interp, trace.property, rows, last)
    else:
        _confirm(spec, interp, trace.property, trace.kind, rows)
    return rows


def replayed_rows(interp: Interpreter, trace: Trace,
                  stutter: str | None = None) -> list[np.ndarray]:
    """The rows of ``trace``, each step replayed from the initial state and compared with the
    state it records; a step labelled ``stutter`` (a lasso's) must change nothing."""
    layout = interp.layout
    if not trace.states:
        raise TraceError("the trace has no states")
    row = _start(interp, trace.states[0])
    rows = [row]
    if trace.actions is None or len(trace.actions) != len(trace.states) - 1:
        raise TraceError(f"the trace has {len(trace.states)} states but "
                         f"{len(trace.actions or [])} actions")
    for step, label in enumerate(trace.actions, start=1):
        if stutter is not None and label == stutter:
            _same(layout, row, trace.states[step], step, "a stuttering step changes nothing")
            nxt = row.copy()
        else:
            nxt = _checked_step(interp, row, label, step, trace.states[step],
                                "the state before it")
        rows.append(nxt)
        row = nxt
    return rows


def _checked_step(interp: Interpreter, row: np.ndarray, label: str, step: int, recorded: State,
                  before: str) -> np.ndarray:
    """The successor of ``row`` by the action ``label``, which must be enabled, stay inside the
    declared domains and give the ``recorded`` state."""
    try:
        inst = interp.instance(label)
    except Exception:  # noqa: BLE001 - an unknown label or index
        raise TraceError(f"step {step}: unknown action {label!r}") from None
    try:
        nxt = interp.step(inst, row)
    except ModelError as e:
        raise TraceError(f"step {step} ({label}): the interpreter refuses the step: {e}") from None
    if nxt is None:
        raise TraceError(f"step {step} ({label}): the action is not enabled in {before}")
    _same(interp.layout, nxt, recorded, step, label)
    return nxt


def _start(interp: Interpreter, recorded: State) -> np.ndarray:
    """The initial state a trace's first state records (one of Init's, compared whole)."""
    starts = interp.initials()
    if len(starts) == 1:
        _same(interp.layout, starts[0], recorded, 0, "the initial state")
        return starts[0]
    for row in starts:
        got = interp.layout.to_dict(row)
        if all(recorded.get(name) == value for name, value in got.items()):
            return row
    raise TraceError(f"step 0: the first state is none of the {len(starts)} initial states")


def _same(layout: Layout, row: np.ndarray, recorded: State, step: int, what: str) -> None:
    got = layout.to_dict(row)
    diff = [name for name in got if recorded.get(name) != got[name]]
    if diff:
        name = diff[0]
        raise TraceError(f"step {step} ({what}): {name} is {recorded.get(name)!r} in the trace "
                         f"but {got[name]!r} on replay")


def replay_cti(spec: Spec, trace: Trace) -> list[np.ndarray]:
    """Check a counterexample to induction: one step from a pre-state (any state in the
    variables' domains, not necessarily reachable) by the named action to the recorded
    post-state, which breaks the named conjunct (a property of the spec or a lemma of its
    protocol) while every hypothesis the trace lists holds in the pre-state. A domain-error
    CTI (kind ``domain``) has no post-state: the step #meta.domain_error names must make the
    interpreter refuse the variable the trace's name says."""
    from hwcheck.spec.protocol import lemmas_of

    interp = Interpreter(spec)
    layout = interp.layout
    domain = trace.kind == "domain"  # the step leaves the domains: no post-state
    if (len(trace.states), len(trace.actions or [])) != ((1, 0) if domain else (2, 1)):
        raise TraceError("a counterexample to induction has exactly one step" + (
            " (the one #meta.domain_error names) and only its pre-state" if domain else ""))
    try:
        pre = layout.from_dict(trace.states[0])
    except Exception as e:  # noqa: BLE001 - a SpecError naming the variable
        raise TraceError(f"step 0 (the pre-state): {e}") from None
    if not domain:
        assert trace.actions is not None  # one step, checked above
        nxt = _checked_step(interp, pre, trace.actions[0], 1, trace.states[1], "the pre-state")
    named = {p.name: p.expr for p in spec.invariants}
    named.update(dict(lemmas_of(spec)))
    for h in trace.meta.get("hypotheses", []):
        if h not in named:
            raise TraceError(f"the pre-state's hypothesis {h!r} is neither an invariant nor a "
                             "lemma of the spec")
        if not interp.holds(named[h], pre):
            raise TraceError(f"step 0 (the pre-state): hypothesis {h} does not hold")
    if domain:
        claimed = trace.meta.get("domain_error")
        if not isinstance(claimed, dict) or not isinstance(claimed.get("step"), str):
            raise TraceError("#meta.domain_error.step must name the step that leaves the "
                             "declared domains")
        _confirm_domain(spec, interp, trace.property, [pre], claimed["step"])
        return [pre]
    goal = trace.property
    if goal in named:
        if interp.holds(named[goal], nxt):
            raise TraceError(f"the post-state does not break {goal}")
    else:
        raise TraceError(f"the trace breaks {goal!r}, which is neither an invariant nor a lemma "
                         "of the spec")
    return [pre, nxt]
