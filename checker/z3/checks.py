"""The checks built on the translator: Init implies a property, the induction step per action,
and bounded model checking.

Induction step and symmetry. The step check asks, for every action, whether a state satisfying
the hypotheses (the invariant and its lemmas, each variable within its domain) can take the
action to a state that breaks one of them, or that makes the interpreter raise (an index out of
range, a value outside its domain). Two reductions keep the queries small:

* Case split on index-like scalars: a scalar variable that appears in an index (``leader`` in
  ``log[leader, k]``) is pinned to each of its values in turn, so every read through it is a
  plain cell instead of an If-chain.
* Replica symmetry (the protocol's ``symmetry``, for Kafka ``replica_symmetry``): renaming
  replicas by a permutation maps a
  state satisfying the hypotheses to another one (they are quantified uniformly over replicas),
  and maps the successor of state s by action A(f) to the successor of the renamed state by
  A(renamed f). So a counterexample with action parameter f and leader l becomes, after the
  renaming f -> 0, l -> 1, a counterexample with parameter 0 and leader 1. Checking one
  representative per orbit of (parameters, replica-id scalars) is therefore as strong as
  checking them all. This holds for this model because replicas are only ever compared for
  equality, quantified over uniformly, or ordered (``a < b``) where the body is symmetric in
  the two, and the shipped lemmas are written the same way. The Init check does not use
  symmetry (Init is checked on the one initial state). tests/test_z3_agreement.py checks the
  symmetry claim on random states, and tests/test_z3_prove.py compares verdicts with the
  unreduced check.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import z3

if TYPE_CHECKING:
    import numpy as np

from hwcheck.checker.semantics.exprgen import domain_error_name
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.semantics.symmetry import check_symmetry as _check_symmetry
from hwcheck.checker.semantics.symmetry import permute_row as permute_row  # re-exported
from hwcheck.checker.semantics.symmetry import symmetry_of as symmetry_of  # re-exported
from hwcheck.checker.z3 import translate as T
from hwcheck.checker.z3.solver import Result, Solver, worst
from hwcheck.spec.lang import (
    Expr,
    Instance,
    Local,
    Read,
    SetLocal,
    Spec,
    SpecError,
    stmt_exprs,
    walk,
    walk_stmts,
)
from hwcheck.spec.protocol import lemmas_of, protocol_of
from hwcheck.spec.verdicts import Verdict

# -- case splits and symmetry ---------------------------------------------------------------------


def index_scalars(spec: Spec, extra: Sequence[Expr] = ()) -> list[str]:
    """Scalar variables whose value is used (directly or through a local) as an index."""
    scalars = {v.name for v in spec.variables if not v.shape}
    found: set[str] = set()

    def scalars_in(e: Expr, defs: dict[str, set[str]]) -> set[str]:
        out: set[str] = set()
        for x in walk(e):
            if isinstance(x, Read) and x.var.name in scalars:
                out.add(x.var.name)
            elif isinstance(x, Local) and x.name in defs:
                out |= defs[x.name]
        return out

    def scan(e: Expr, defs: dict[str, set[str]]) -> None:
        for x in walk(e):
            if isinstance(x, Read):
                for i in x.index:
                    found.update(scalars_in(i, defs))

    for a in spec.actions:
        defs: dict[str, set[str]] = {}
        scan(a.guard, defs)
        for s in walk_stmts(a.body):
            if isinstance(s, SetLocal):
                defs[s.local.name] = defs.get(s.local.name, set()) | scalars_in(s.value, defs)
            for e in stmt_exprs(s):
                scan(e, defs)
    for group in (spec.invariants, spec.action_properties):
        for p in group:
            scan(p.expr, {})
    for e in extra:
        scan(e, {})
    return [v.name for v in spec.variables if v.name in found]


def _canonical(values: list[int]) -> bool:
    """Replica ids (>= 0) in order of first appearance are 0, 1, 2, ..."""
    nxt = 0
    seen = {}
    for x in values:
        if x < 0:
            continue
        if x not in seen:
            if x != nxt:
                return False
            seen[x] = nxt
            nxt += 1
    return True


@dataclass
class Case:
    inst: Instance
    fixed: dict[str, int]  # scalar variable name -> value

    @property
    def label(self) -> str:
        pins = ", ".join(f"{k}={v}" for k, v in self.fixed.items())
        return f"{self.inst.label}" + (f" [{pins}]" if pins else "")


def check_symmetry(spec: Spec, symmetry: dict[str, Any]) -> None:
    """The symmetry description covers every variable exactly once and every action parameter
    ranges over the replicas; otherwise the reduction would not be sound (the case split
    renames action parameters as members)."""
    _check_symmetry(spec, symmetry, member_params=True)


def cases(spec: Spec, split: list[str],
          symmetry: dict[str, Any] | None) -> dict[str, list[Case]]:
    """For each action, the (instance, pinned scalars) cases the step check must cover."""
    if symmetry:
        check_symmetry(spec, symmetry)
    ids = set(symmetry["ids"]) if symmetry else set()
    out: dict[str, list[Case]] = {}
    insts = spec.instances()
    for a in spec.actions:
        mine = [i for i in insts if i.action is a]
        ranges = [range(spec.var(n).lo, spec.var(n).hi + 1) for n in split]
        lst = []
        for inst in mine:
            for vals in itertools.product(*ranges):
                if symmetry:
                    rep = list(inst.args) + [x for n, x in zip(split, vals) if n in ids]
                    if not _canonical(rep):
                        continue
                lst.append(Case(inst, dict(zip(split, vals))))
        out[a.name] = lst
    return out


# -- results ---------------------------------------------------------------------------------------


@dataclass
class Obligation:
    """One query: under ``case``, can ``goal`` (a named conjunct) fail after the step?"""

    action: str
    case: str
    goal: str
    result: Result
    pre: np.ndarray | None = None  # layout rows for a counterexample
    post: np.ndarray | None = None  # None when the step leaves the declared domains (goal
    # DomainError(..))
    inst: Instance | None = None


@dataclass
class ActionVerdict:
    action: str
    status: str  # holds (inductive) | violated (a CTI) | unknown
    cti: Obligation | None = None
    unknown: list[Obligation] = field(default_factory=list)
    seconds: float = 0.0
    queries: int = 0

    @property
    def counterexample(self) -> Obligation:
        """The CTI of a violated verdict."""
        if self.cti is None:
            raise ValueError(f"{self.action}: a verdict that is {self.status} has no CTI")
        return self.cti


@dataclass
class InductionReport:
    init: list[tuple[str, Result]]
    actions: list[ActionVerdict]
    seconds: float

    @property
    def init_status(self) -> str:
        return worst(r.status for _, r in self.init)

    @property
    def status(self) -> str:
        return worst([self.init_status] + [a.status for a in self.actions])


# -- Init -----------------------------------------------------------------------------------------


def check_init(spec: Spec, conjuncts: list[tuple[str, Expr]], timeout: float | None = None,
               tr: T.Translator | None = None) -> list[tuple[str, Result]]:
    """Whether the initial state satisfies each conjunct (and is inside every domain)."""
    tr = tr or T.Translator(spec)
    s0, facts = tr.initial()
    solver = Solver(timeout)
    solver.add(*facts)
    out = [("domains", solver.can_fail(T.mk_and(T.domain(spec, s0))))]
    for name, e in conjuncts:
        val, ok = tr.expr_ok(e, s0)
        out.append((name, solver.can_fail(T.mk_and([ok, T.to_bool(val)]))))
    return out


# -- the induction step ---------------------------------------------------------------------------


def check_step(spec: Spec, conjuncts: list[tuple[str, Expr]], timeout: float | None = None,
               symmetry: dict[str, Any] | None = None, actions: list[str] | None = None,
               progress: Callable[[ActionVerdict], object] | None = None,
               tr: T.Translator | None = None,
               logic: str | None = None) -> list[ActionVerdict]:
    """For every action: do the conjuncts (with domains) imply themselves after the action?
    (Z3's general solver: on these one-step queries it beats the finite-domain one.)"""
    tr = tr or T.Translator(spec)
    cache: _Hypotheses = {}
    layout = Layout.of(spec)
    split = index_scalars(spec, [e for _, e in conjuncts])
    all_cases = cases(spec, split, symmetry)
    verdicts = []
    for a in spec.actions:
        if actions and a.name not in actions:
            continue
        t0 = time.perf_counter()
        v = ActionVerdict(a.name, Verdict.HOLDS)
        for case in all_cases[a.name]:
            ob = _step_case(spec, tr, layout, case, conjuncts, timeout, v, cache, logic)
            if ob is not None:
                v.status, v.cti = Verdict.VIOLATED, ob
                break
        if v.status == Verdict.HOLDS and v.unknown:
            v.status = Verdict.UNKNOWN
        v.seconds = time.perf_counter() - t0
        if progress:
            progress(v)
        verdicts.append(v)
    return verdicts


# the hypotheses per pinned scalars: (pre-state, conjunct name -> its value over it)
_Hypotheses = dict[tuple[tuple[str, int], ...], tuple[T.State, dict[str, T.Term]]]


def _hypotheses(spec: Spec, tr: T.Translator, case: Case, conjuncts: list[tuple[str, Expr]],
                cache: _Hypotheses) -> tuple[T.State, dict[str, T.Term]]:
    """The pre-state for the case's pinned scalars and each conjunct over it (shared by every
    action with the same pins)."""
    key = tuple(sorted(case.fixed.items()))
    if key not in cache:
        fixed = {name: [val] for name, val in case.fixed.items()}
        pre = T.fresh_state(spec, "pre", fixed)
        hyps = {}
        for name, e in conjuncts:
            val, ok = tr.expr_ok(e, pre)
            hyps[name] = T.mk_and([ok, T.to_bool(val)])
        cache[key] = (pre, hyps)
    return cache[key]


def _step_case(spec: Spec, tr: T.Translator, layout: Layout, case: Case,
               conjuncts: list[tuple[str, Expr]], timeout: float | None, v: ActionVerdict,
               cache: _Hypotheses, logic: str | None) -> Obligation | None:
    pre, hyps = _hypotheses(spec, tr, case, conjuncts, cache)
    eff = tr.effect(case.inst, pre)
    if eff.guard is False:
        return None
    solver = Solver(timeout, logic)
    solver.add(*T.domain(spec, pre))
    solver.add(*hyps.values())
    solver.add(T.to_bool(eff.guard))
    goals = [("well-defined", eff.ok)]
    changed = []
    for var in spec.variables:
        for c_pre, c_post in zip(pre[var.name], eff.post[var.name]):
            if not T.same(c_pre, c_post):
                changed.append(T.mk_and([c_post >= var.lo, c_post <= var.hi])
                               if not T.is_const(c_post) else var.lo <= c_post <= var.hi)
    goals.append(("domains", T.mk_and(changed)))
    for name, e in conjuncts:
        val, ok = tr.expr_ok(e, eff.post)
        goal = T.mk_and([ok, T.to_bool(val)])
        if not T.same(goal, hyps[name]):  # the same term as a hypothesis: holds trivially
            goals.append((name, goal))
    # One query for all goals: unsat means every goal holds. On sat, the model names the
    # first goal it breaks (in order: well-definedness, domains, the invariant, the lemmas).
    res = solver.can_fail(T.mk_and([g for _, g in goals]))
    v.queries += 1
    if res.status == Verdict.HOLDS:
        return None
    if res.status == Verdict.UNKNOWN:
        v.unknown.append(Obligation(case.inst.action.name, case.label,
                                    f"{len(goals)} goals", res))
        return None
    broken = next((n for n, g in goals
                   if z3.is_false(res.witness.eval(T._zb(g), model_completion=True))), goals[0][0])
    domain = broken in ("well-defined", "domains")
    if domain:  # name it as the engines do: the variable of the first access out of range
        broken = next((domain_error_name(var, case.inst.action.name)
                       for var, c in T.first_errors(eff.checks).items()
                       if z3.is_true(res.witness.eval(T._zb(c), model_completion=True))), broken)
    ob = Obligation(case.inst.action.name, case.label, broken, res)
    ob.pre = T.decode(spec, layout, pre, res.model)
    # a step that leaves the domains has no post-state (its values may not even fit a cell)
    ob.post = None if domain else T.decode(spec, layout, eff.post, res.model)
    ob.inst = case.inst
    return ob


def prove(spec: Spec, conjuncts: list[tuple[str, Expr]], timeout: float | None = None,
          symmetry: dict[str, Any] | None = None,
          progress: Callable[[ActionVerdict], object] | None = None) -> InductionReport:
    t0 = time.perf_counter()
    tr = T.Translator(spec)
    init = check_init(spec, conjuncts, timeout, tr)
    acts = check_step(spec, conjuncts, timeout, symmetry, progress=progress, tr=tr)
    return InductionReport(init, acts, time.perf_counter() - t0)


# -- bounded model checking ----------------------------------------------------------------------


@dataclass
class BmcHit:
    prop: str
    kind: str  # invariant | action | domain
    depth: int
    # [(instance index, fingerprint of the Z3 state)]; a domain error's path ends with the step
    # that leaves the declared domains (fingerprint None: it has no successor)
    path: list[tuple[int, int | None]]


@dataclass
class BmcReport:
    status: str  # violated | unknown (no violation within the bound, or a solver timeout)
    depth: int  # the last depth fully checked (-1 if none)
    hits: list[BmcHit]
    seconds: float
    reason: str = ""


class Unrolling:
    """Z3 states s0 (the initial state), s1, ..., linked by the transition relation: at each step
    a selector ``act@k`` picks the action instance whose guard holds and whose effect (with its
    frame) gives the next state. (Unlike the induction step, bmc does not case-split on the
    leader: with the finite-domain solver, splitting measured 2x slower at R=5.)"""

    def __init__(self, spec: Spec, tr: T.Translator | None = None,
                 symmetry: dict[str, Any] | None = None, timeout: float | None = None,
                 assume: Sequence[tuple[str, Expr]] = ()) -> None:
        self.spec = spec
        self.timeout = timeout
        self.assume = list(assume)  # state predicates proved invariant: true in every state
        self._possible: set[str] | None = None
        self.tr = tr or T.Translator(spec)
        self.layout = Layout.of(spec)
        self.insts = spec.instances()
        s0, self.init_facts = self.tr.initial()  # facts: which initial state s0 is
        self.states = [s0]
        self.acts: list[T.Term] = []
        # per state k: [(instance, Effect from state k)]
        self.effects: list[list[tuple[Instance, T.Effect]]] = []
        # Symmetry breaking: replicas that the initial states cannot tell apart (all but the
        # first leader, here) are interchangeable along the whole path, because every action
        # and property is invariant under renaming replicas. Any path can be renamed so that
        # such replicas first appear as action parameters in increasing order; requiring that
        # order keeps one path per class and the same lengths.
        if symmetry:
            check_symmetry(spec, symmetry)
        self.classes = interchangeable(spec, self.layout, self.tr.initials(), symmetry) \
            if symmetry else []
        self.used: dict[int, object] = {}

    def effects_from(self, k: int) -> list[tuple[Instance, T.Effect]]:
        """[(instance, its Effect from state k)] for every instance (translated once)."""
        while len(self.effects) <= k:
            pre = self.states[len(self.effects)]
            self.effects.append([(inst, self.tr.effect(inst, pre)) for inst in self.insts])
        return self.effects[k]

    @staticmethod
    def _errors(effects: Iterable[tuple[Instance, T.Effect]]
                ) -> dict[str, list[tuple[Instance, T.Term]]]:
        out: dict[str, list[tuple[Instance, T.Term]]] = {}
        for inst, eff in effects:  # a guard may fail a read even when it is False
            for var, cond in T.first_errors(eff.checks).items():
                out.setdefault(domain_error_name(var, inst.action.name), []).append((inst, cond))
        return out

    def possible_errors(self) -> set[str]:
        """The domain errors that some state of the declared domains (satisfying the assumed
        invariants) can make, asked once on a symbolic state: the others need no query at any
        depth."""
        if self._possible is None:
            pre = T.fresh_state(self.spec, "any")
            solver = Solver(self.timeout)
            solver.add(*T.domain(self.spec, pre))
            solver.add(*(T.to_bool(self.tr.expr(e, pre)) for _, e in self.assume))
            errors = self._errors((inst, self.tr.effect(inst, pre)) for inst in self.insts)
            self._possible = {name for name, insts in errors.items()
                              if not solver.can_fail(T.mk_not(T.mk_or([c for _, c in insts])))
                              .holds}
        return self._possible

    def domain_errors(self, k: int) -> dict[str, list[tuple[Instance, T.Term]]]:
        """The ways a step from state k can leave the declared domains: DomainError(variable,
        action) -> [(instance, condition)], the condition under which the instance's first
        access out of range (as the interpreter runs it) is one of that variable's."""
        possible = self.possible_errors()
        if not possible:
            return {}
        return {name: insts for name, insts in self._errors(self.effects_from(k)).items()
                if name in possible}

    def extend(self) -> list[T.Term]:
        """Add one step; returns the constraints that define it."""
        k = len(self.acts)
        nxt = T.fresh_state(self.spec, f"s{k + 1}")
        act = T.int_const(f"act@{k}")
        facts = [act >= 0, act < len(self.insts)] + T.domain(self.spec, nxt)
        for inst, eff in self.effects_from(k):
            if eff.guard is False:
                facts.append(act != inst.index)
                continue
            facts.append(T.mk_implies(act == inst.index,
                                      T.mk_and([T.to_bool(eff.guard), T.eq_states(eff.post, nxt)])))
        for cls in self.classes:
            for r in cls:
                now = T.mk_or([act == i.index for i in self.insts if r in i.args])
                self.used[r] = T.mk_or([self.used.get(r, False), now])
            for a, b in zip(cls, cls[1:]):
                facts.append(T.mk_implies(self.used[b], self.used[a]))
        self.states.append(nxt)
        self.acts.append(act)
        return facts

    def path(self, model: z3.ModelRef, depth: int) -> list[tuple[int, int | None]]:
        from hwcheck.checker.traces.trace import _fp

        out: list[tuple[int, int | None]] = []
        for k in range(depth):
            a = model.eval(self.acts[k], model_completion=True).as_long()
            row = T.decode(self.spec, self.layout, self.states[k + 1], model)
            out.append((a, _fp(row, self.layout)))
        return out


def interchangeable(spec: Spec, layout: Layout, starts: list[T.State],
                    symmetry: dict[str, Any]) -> list[list[int]]:
    """Classes of replicas whose swaps map the set of initial states onto itself (swapping is
    an equivalence: (a c) = (a b)(b c)(a b))."""
    n = symmetry["size"]
    rows = [T.decode(spec, layout, s0, None) for s0 in starts]
    keys = {r.tobytes() for r in rows}

    def swap_keeps(a: int, b: int) -> bool:
        perm = list(range(n))
        perm[a], perm[b] = b, a
        return all(permute_row(spec, layout, r, perm, symmetry).tobytes() in keys for r in rows)

    classes: list[list[int]] = []
    for r in range(n):
        for c in classes:
            if swap_keeps(c[0], r):
                c.append(r)
                break
        else:
            classes.append([r])
    return [c for c in classes if len(c) > 1]


class LemmasNotStated(SpecError):
    """The protocol ships lemmas for an invariant that it does not state for these parameters
    (an unknown result for that invariant, not an input error)."""


def conjuncts(spec: Spec, inv: str, names: list[str] | None = None) -> list[tuple[str, Expr]]:
    """The invariant ``inv`` and its lemmas (``names``, default: the ones the protocol ships for
    it), each a lemma of the protocol or another invariant of the spec, as (name, expression).
    A spec without lemmas is proved by plain induction on the invariant."""
    known = dict(lemmas_of(spec))
    invariants = {i.name: i.expr for i in spec.invariants}
    out = [(inv, spec.invariant_named(inv).expr)]
    for n in (shipped_lemmas(spec, inv) if names is None else names):
        if any(n == x for x, _ in out):
            continue
        if n in known:
            out.append((n, known[n]))
        elif n in invariants:
            out.append((n, invariants[n]))
        elif names is None:
            raise LemmasNotStated(
                f"{spec.name} does not state the lemmas {inv} is proved with for these "
                f"parameters ({n} among them): try it alone with --no-lemmas, or check it by "
                "exploring (hwcheck check)")
        else:
            raise SpecError(f"unknown lemma {n!r} (known: {', '.join(known) or 'none'})")
    return out


def shipped_lemmas(spec: Spec, inv: str) -> list[str]:
    """The names of the lemmas the protocol proves ``inv`` with by default."""
    fn = protocol_of(spec).checking.shipped_lemmas
    return list(fn(inv)) if fn is not None else []


def proven_facts(spec: Spec, timeout: float | None = None,
                 symmetry: dict[str, Any] | None = None) -> list[tuple[str, Expr]]:
    """The protocol's cheap invariants (``Checking.cheap``) with their lemmas, for those whose
    proof succeeds here: true in every reachable state, so bmc may assume them (it then explores
    no unreachable state that breaks them, which helps the solver: ~40% less time at R=5)."""
    out: list[tuple[str, Expr]] = []
    for inv in protocol_of(spec).checking.cheap:
        conj = conjuncts(spec, inv)
        if prove(spec, conj, timeout, symmetry).status == Verdict.HOLDS:
            out.extend(c for c in conj if all(c[0] != n for n, _ in out))
    return out


def _domain_hits(un: Unrolling, solver: Solver, d: int) -> tuple[Result, list[BmcHit]]:
    """The domain errors of step ``d`` (from state d-1), asked before the step is added: a step
    that leaves the declared domains has no successor, so it must not need one. Returns the
    query's result and a hit per DomainError(variable, action) that some path of d-1 steps
    reaches (its path ends with the failing instance)."""
    errors = un.domain_errors(d - 1)
    if not errors:
        return Result(Verdict.HOLDS), []
    bad = {name: T.mk_or([c for _, c in insts]) for name, insts in errors.items()}
    res = solver.can_fail(T.mk_not(T.mk_or(list(bad.values()))))
    if res.status != Verdict.VIOLATED:
        return res, []
    hits = []
    for name, b in bad.items():
        r = res if z3.is_true(res.witness.eval(T._zb(b), model_completion=True)) \
            else solver.can_fail(T.mk_not(b))
        if r.status != Verdict.VIOLATED:
            continue
        inst = next(i for i, c in errors[name]
                    if z3.is_true(r.witness.eval(T._zb(c), model_completion=True)))
        hits.append(BmcHit(name, "domain", d, un.path(r.model, d - 1) + [(inst.index, None)]))
    return res, hits


def bmc(spec: Spec, props: list[tuple[str, str, Expr]], depth: int, timeout: float | None = None,
        progress: Callable[[int, str, float], object] | None = None,
        symmetry: dict[str, Any] | None = None,
        assume: Sequence[tuple[str, Expr]] = ()) -> BmcReport:
    """Check depths 0..depth in order; stop at the first depth where some property fails, or
    some step leaves the declared domains (``DomainError(variable, action)``, kind domain), and
    report every one failing there (a shortest violation of each). ``assume``: state predicates
    proved invariant (``proven_facts``), asserted in every state."""
    t0 = time.perf_counter()
    un = Unrolling(spec, symmetry=symmetry, timeout=timeout, assume=assume)
    solver = Solver(timeout)
    solver.add(*un.init_facts)
    last = -1
    for d in range(depth + 1):
        dom_hits: list[BmcHit] = []
        dom_seconds = 0.0
        if d:
            dres, dom_hits = _domain_hits(un, solver, d)
            dom_seconds = dres.seconds
            if dres.status == Verdict.UNKNOWN:
                return BmcReport(Verdict.UNKNOWN, last, [], time.perf_counter() - t0,
                                 f"solver gave up at depth {d}: {dres.reason}")
            solver.add(*un.extend())
            solver.add(*(T.to_bool(un.tr.expr(e, un.states[d])) for _, e in assume))
        bad = []
        for name, kind, e in props:
            if kind == "action" and d == 0:
                continue
            cur = un.states[d]
            if kind == "action":  # a property of the last step: (previous state, this state)
                val = un.tr.expr(e, un.states[d - 1], cur)
            else:
                val = un.tr.expr(e, cur)
            bad.append((name, kind, T.mk_not(T.to_bool(val))))
        res = (solver.can_fail(T.mk_not(T.mk_or([b for _, _, b in bad]))) if bad
               else Result(Verdict.HOLDS))
        res.seconds += dom_seconds
        if res.status == Verdict.UNKNOWN:
            return BmcReport(Verdict.UNKNOWN, last, [], time.perf_counter() - t0,
                             f"solver gave up at depth {d}: {res.reason}")
        if res.status == Verdict.VIOLATED or dom_hits:
            hits = list(dom_hits)
            for name, kind, b in (bad if res.status == Verdict.VIOLATED else ()):
                # the model at hand may already break this property; else ask for one that does
                if z3.is_true(res.witness.eval(T._zb(b), model_completion=True)):
                    r = res
                else:
                    r = solver.can_fail(T.mk_not(b))
                if r.status == Verdict.VIOLATED:
                    hits.append(BmcHit(name, kind, d, un.path(r.model, d)))
            if progress:
                progress(d, "violated", res.seconds)
            return BmcReport(Verdict.VIOLATED, d, hits, time.perf_counter() - t0)
        last = d
        if progress:
            progress(d, "holds", res.seconds)
    return BmcReport(Verdict.UNKNOWN, last, [], time.perf_counter() - t0,
                     f"no violation within {depth} steps (bounded; not a proof)")
