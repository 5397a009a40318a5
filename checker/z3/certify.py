"""Certify a trace with Z3: its first state is the initial one, every step satisfies its action's
guard and effect (with the frame of the action's modifies list and no ModelError), and the last
state violates the property (or, for a reachability check, satisfies it; for a domain error
``DomainError(variable, action)``, the last step's first access out of range is the variable's).
Of a lasso (a liveness counterexample) Z3 certifies the steps (a stuttering step changes
nothing) and that the cycle closes (the last state is the state at ``#meta.loop``); that the
behaviour breaks the liveness property under the spec's fairness is the interpreter's check
(``traces/lasso.py``), which ``replay`` runs first, not Z3's.

Each state is a fresh symbolic state constrained to the recorded values, so the check runs
through the same symbolic translation that ``prove`` and ``bmc`` use, not the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.traces.lasso import STUTTER
from hwcheck.checker.traces.trace import Trace
from hwcheck.checker.z3 import translate as T
from hwcheck.checker.z3.solver import Result, Solver
from hwcheck.spec.lang import Expr, Instance, Spec, reads_next
from hwcheck.spec.verdicts import Verdict


@dataclass
class Certificate:
    ok: bool
    steps: int
    property: str | None
    kind: str
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        what = "satisfies" if self.kind == "reachable" else "violates"
        if self.ok and self.kind == "liveness":
            return (f"certified by Z3: the initial state, all {self.steps} step(s) (guard and "
                    f"effect of each; a stuttering step changes nothing) and that the cycle "
                    f"closes; that the lasso breaks {self.property} under the spec's fairness "
                    "is the interpreter's confirmation, not Z3's")
        if self.ok and self.property is None:
            return (f"certified by Z3: the initial state and all {self.steps} step(s) (guard "
                    "and effect of each); the trace claims no property")
        if self.ok and self.kind == "domain":
            return (f"certified by Z3: the initial state, all {self.steps} step(s) (guard and "
                    f"effect of each) and that the next one leaves the declared domains as "
                    f"{self.property} says")
        if self.ok:
            last = "step" if self.kind == "action" else "state"
            return (f"certified by Z3: the initial state, all {self.steps} step(s) (guard and "
                    f"effect of each) and that the last {last} {what} {self.property}")
        return "NOT certified by Z3: " + "; ".join(self.problems)


def _property(spec: Spec, name: str) -> Expr | None:
    for group in (spec.invariants, spec.action_properties, spec.reachables):
        for p in group:
            if p.name == name:
                return p.expr
    from hwcheck.spec.protocol import lemmas_of

    for n, e in lemmas_of(spec):
        if n == name:
            return e
    return None


def _pinned(spec: Spec, layout: Layout, state: dict[str, Any],
            tag: str) -> tuple[T.State, T.Term, T.State]:
    """A symbolic state and the constraints that fix it to ``state``."""
    row = layout.from_dict(state)
    sym = T.fresh_state(spec, tag)
    values = T.const_state(spec, layout, row)
    return sym, T.eq_states(sym, values), values


def certify(spec: Spec, trace: Trace, timeout: float | None = 60.0) -> Certificate:
    layout = Layout.of(spec)
    tr = T.Translator(spec)
    insts = {i.label: i for i in spec.instances()}
    cert = Certificate(True, len(trace.labels), trace.property, trace.kind)

    def fail(msg: str) -> None:
        cert.ok = False
        cert.problems.append(msg)

    def verdict(res: Result, msg: str) -> bool:
        if res.status == Verdict.HOLDS:
            return True
        fail(msg + (f" (unknown: {res.reason})" if res.status == Verdict.UNKNOWN else ""))
        return False

    states = []
    for i, st in enumerate(trace.states):
        states.append(_pinned(spec, layout, st, f"t{i}"))
    solver = Solver(timeout, logic=None)
    for _sym, pin, _ in states:
        solver.add(pin)

    if not trace.meta.get("cti"):
        verdict(solver.can_fail(T.mk_or([T.eq_states(states[0][0], s0)
                                         for s0 in tr.initials()])),
                "the first state is not an initial state")
    lasso = trace.kind == "liveness"
    for i, label in enumerate(trace.labels, start=1):  # "?": an unknown action
        pre, post = states[i - 1][0], states[i][0]
        if lasso and label == STUTTER:
            verdict(solver.can_fail(T.eq_states(pre, post)),
                    f"step {i} ({label}): the stuttering step changes the state")
            continue
        inst = insts.get(label)
        if inst is None:
            fail(f"step {i}: unknown action {label!r}")
            continue
        eff = tr.effect(inst, pre)
        if not verdict(solver.can_fail(T.to_bool(eff.guard)), f"step {i} ({label}): guard false"):
            continue
        if not verdict(solver.can_fail(eff.ok), f"step {i} ({label}): an index or a value "
                                                 "leaves its range"):
            continue
        for v in spec.variables:
            if not solver.can_fail(T.eq_states(eff.post, post, [v.name])).holds:
                fail(f"step {i} ({label}): {v.name} is not what the effect gives")
    if lasso:
        loop = trace.meta.get("loop")
        if isinstance(loop, bool) or not isinstance(loop, int) \
                or not 0 <= loop < len(states) - 1:
            fail(f"#meta.loop is {loop!r}, not the index of a state before the last")
        else:
            verdict(solver.can_fail(T.eq_states(states[loop][0], states[-1][0])),
                    f"the cycle does not close: the last state differs from state {loop}")
        return cert
    if trace.property is None:  # a behaviour that claims nothing: its steps are all
        return cert
    if trace.kind == "domain":
        _certify_domain(spec, tr, trace, insts, [s for s, _, _ in states], solver, fail, verdict)
        return cert
    expr = _property(spec, trace.property)
    if expr is None:
        fail(f"no property or lemma named {trace.property!r}")
        return cert
    last = states[-1][0]
    if reads_next(expr):
        if len(states) < 2:
            fail(f"{trace.property} is a property of transitions; the trace has no step")
            return cert
        val, ok = tr.expr_ok(expr, states[-2][0], last)
    else:
        val, ok = tr.expr_ok(expr, last)
    holds = T.mk_and([ok, T.to_bool(val)])
    if trace.kind == "reachable":
        verdict(solver.can_fail(holds), f"the last state does not satisfy {trace.property}")
    else:
        verdict(solver.can_fail(T.mk_not(holds)),
                f"the last {'step' if reads_next(expr) else 'state'} does not violate "
                f"{trace.property}")
    return cert


def _certify_domain(spec: Spec, tr: T.Translator, trace: Trace, insts: dict[str, Instance],
                    states: list[T.State], solver: Solver, fail: Callable[[str], None],
                    verdict: Callable[[Result, str], bool]) -> None:
    """The trace ends where the spec leaves its declared domains: the step #meta.domain_error
    names (or, without one, the property its name gives, on the last state) makes its first
    access out of range one of the variable's that ``DomainError(variable, where)`` names."""
    from hwcheck.checker.traces.trace import DOMAIN_ERROR

    m = DOMAIN_ERROR.match(trace.property or "")
    claimed = trace.meta.get("domain_error")
    if m is None or not isinstance(claimed, dict):
        fail(f"{trace.property!r} is not a domain error with its #meta.domain_error")
        return
    var, where, label = m["var"], m["where"], claimed.get("step")
    last = states[-1]
    if label is not None:
        inst = insts.get(label)
        if inst is None or inst.action.name != where:
            fail(f"the failing step {label!r} is not an instance of {where}")
            return
        checks = tr.effect(inst, last).checks
        what = f"the step {label}"
    else:
        expr = _property(spec, where)
        if expr is None:
            fail(f"no property or lemma named {where!r}")
            return
        if reads_next(expr):
            if len(states) < 2:
                fail(f"{where} is a property of transitions; the trace has no step")
                return
            _, checks = tr.expr_checks(expr, states[-2], last)
        else:
            _, checks = tr.expr_checks(expr, last)
        what = f"the property {where}"
    verdict(solver.can_fail(T.first_errors(checks).get(var, False)),
            f"{what} does not leave the declared domains of {var} first")
