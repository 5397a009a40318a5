"""``prove --infer``: strengthening lemmas found, not written.

1. Explore the instance (the state graph, its rows kept; at most ``max_states`` of them). A
   state that breaks the invariant is a real counterexample: its path from an initial state is
   the answer, and nothing is proved.
2. Candidates (``candidates.py``: clauses over the spec's variables, quantified over its index
   sets) that hold in every explored state, evaluated with numpy over the rows.
3. Houdini with Z3: for every action case (the step check's cases: pinned index scalars, one
   action instance per symmetry class), ask whether a state satisfying the invariant, the
   domains and every live candidate can step to one that breaks any of them; drop every
   candidate the model breaks, and ask again until no case has such a step. What is left is
   inductive together with the invariant, unless the invariant itself (or a step leaving the
   domains) breaks: that counterexample to induction ends the tier.
4. Tiers grow the templates (wider clauses, more bound variables), guided by the
   counterexamples to induction. The pool only grows: what Houdini kept stays in every later
   pool (inductive relative to the pool, it stays so as the pool grows; if not, a later run
   drops it). A round (one Houdini run) adds at most ``max_candidates`` of the tier: those
   false on a counterexample met (that exclude it) or on the counterexamples of the
   candidates Houdini dropped that would have excluded it (the lemma each lacked), those that
   exclude the most first, then those over the variables the failing action reads; when none
   does, the tier's untried candidates, narrowest first, if the whole tier fits in the room
   ``max_pool`` leaves, so that a lemma that excludes no counterexample met yet still enters.
   A candidate Houdini dropped waits outside the pool with the state its dropping step
   started from, and comes back when a candidate added later is false on that state (the step
   that dropped it is excluded now). A tier is left when it has nothing new to add, after
   ``max_rounds`` runs, or when the solver gives up on a run: then its rounds of untried
   candidates are undone, and the next tier goes on.

A candidate that one Houdini kept implies (``candidates.subsumed``) waits outside the pool until
that one leaves it.

5. Houdini's fixpoint that keeps the invariant is the proof: its last pass asked every case's
   query with exactly the kept candidates selected and none was sat, and Init implies each of
   them and the invariant (``Houdini.proof``). The lemmas printed are then shrunk within a
   budget (``shrink``: unsat cores on the Houdini solvers, then one at a time); each smaller
   set is checked inductive on those solvers before it replaces the last, and, when the
   shrinking ends within its budget, again by ``checks.prove`` (the check ``prove
   --lemmas-file`` runs), so every set printed proves the invariant again from its file.
Candidates filtered on an incomplete exploration (``max_states`` reached) are still only
candidates: Houdini and the final check decide, never the filter.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from hwcheck.checker.semantics.exprgen import domain_error_name
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.z3 import candidates as K
from hwcheck.checker.z3 import translate as T
from hwcheck.checker.z3.checks import (
    ActionVerdict,
    Case,
    InductionReport,
    Obligation,
    cases,
    check_init,
    index_scalars,
    prove,
)
from hwcheck.checker.z3.solver import Result
from hwcheck.spec.lang import Expr, Read, Spec, walk
from hwcheck.spec.verdicts import Verdict

# (clause width, bound variables[, of them existential[, literals of an existential
# conjunction]]) of each tier, in order: then, for each member or offset some other one (the
# record in flight that some log holds); last, up to three guards and some member or offset
# whose cells say up to two things at once (a log that holds the record in flight after the
# same record as the follower's)
TIERS: tuple[tuple[int, ...], ...] = ((2, 1), (3, 1), (2, 2), (3, 2), (3, 2, 1), (4, 2, 1, 2))


@dataclass
class Lemma:
    name: str
    expr: Expr
    source: str  # the spec-language Python that builds it


@dataclass
class TierReport:
    width: int
    bounds: int
    generated: int  # candidates that hold in every explored state
    tried: int  # of them, given to Houdini
    kept: int  # left inductive
    rounds: int  # Houdini passes over the cases
    queries: int
    seconds: float
    outcome: str  # proved | cti | unknown
    exists: int = 0  # of the bound variables, existential
    conj: int = 0  # the most literals of an existential conjunction (0: none)
    pool: int = 0  # the most candidates Houdini held at once
    implied: int = 0  # times a round left a candidate out of its pool: a kept one implies it


@dataclass
class InferReport:
    status: str  # holds | violated | unknown
    lemmas: list[Lemma] = field(default_factory=list)
    proof: InductionReport | None = None
    path: list[tuple[int, int]] | None = None  # violated: the path to a violating state
    cti: Obligation | None = None  # unknown: the last counterexample to induction
    states: int = 0
    complete: bool = False
    tiers: list[TierReport] = field(default_factory=list)
    reason: str = ""
    seconds: float = 0.0
    fixpoint: int = 0  # holds: the candidates Houdini's fixpoint kept (the lemmas: of them)
    shrink: Shrunk | None = None  # holds: how the lemmas printed were shrunk from them


# -- the reachable rows ---------------------------------------------------------------------------


def reachable(spec: Spec, inv: str, max_states: int) -> tuple[np.ndarray, bool,
                                                                list[tuple[int, int]] | None]:
    """The explored states' rows, whether the exploration was complete, and the shortest path
    to a state that breaks ``inv`` (None if the explored states all satisfy it)."""
    from hwcheck.checker.graph.explore import explore
    from hwcheck.checker.semantics.kernel import Kernel

    g = explore(Kernel(spec), invariants=True, max_states=max_states, keep_rows=True)
    assert g.rows is not None
    bad = np.flatnonzero(~g.flag(inv))
    path = g.path_to(int(bad[0])) if bad.size else None
    return g.rows[:g.n], g.complete, path


# -- Houdini ---------------------------------------------------------------------------------------


@dataclass
class _Case:
    case: Case
    solver: z3.Solver
    names: list[str]  # every candidate the solver holds behind its selector
    pre: T.State
    post: T.State
    checks: list[tuple[str, T.Term]]
    goals: dict[str, T.Term]  # name -> the conjunct after the step
    wd: T.Term  # the step is well-defined and stays in the domains
    base: list[T.Term]  # the domains of the pre-state and the guard
    hyps: dict[str, T.Term]  # name -> the conjunct before the step
    query: z3.BoolRef  # pushed above the candidates: the step breaks wd, a target or one of them


@dataclass
class Houdini:
    status: str  # holds (the target survived) | violated (a CTI of the target) | unknown
    kept: list[str]
    cti: Obligation | None = None
    rounds: int = 0
    queries: int = 0
    reason: str = ""
    # a dropped candidate -> the state its counterexample to induction starts from
    dropped: dict[str, np.ndarray] = field(default_factory=dict)
    # holds: the fixpoint's check, its last pass (every case's query unsat with exactly the
    # kept candidates selected) and Init (each kept candidate's, and the target's)
    proof: InductionReport | None = None
    work: list[_Case] = field(default_factory=list, repr=False)  # the cases, for shrinking


class Terms:
    """The Z3 terms of the candidates, kept from one Houdini run to the next (a candidate keeps
    its name): each pre-state per pinned scalars, each conjunct over it and after each case's
    step, and whether Init satisfies it."""

    def __init__(self, spec: Spec) -> None:
        self.tr = T.Translator(spec)
        self.pre: dict[Any, T.State] = {}
        self.hyp: dict[Any, T.Term] = {}
        self.eff: dict[Any, T.Effect] = {}
        self.goal: dict[Any, T.Term | None] = {}
        self.bad: dict[Any, z3.BoolRef] = {}  # a candidate selected and broken by the step
        self.init: dict[str, Result] = {}  # Init implies the candidate (holds) or not
        # each case's solver (per target), with the candidates it holds behind selectors:
        # a later run adds only its new candidates, and replaces the query (pushed above
        # them) with its own
        self.solver: dict[Any, tuple[z3.Solver, list[str], set[str]]] = {}
        self.sel: dict[str, tuple[z3.BoolRef, z3.BoolRef]] = {}


def houdini(spec: Spec, target: Sequence[tuple[str, Expr]], pool: Sequence[tuple[str, Expr]],
            timeout: float | None, symmetry: dict[str, Any] | None,
            note: Callable[[str], object] | None = None,
            terms: Terms | None = None) -> Houdini:
    """The greatest subset of ``pool`` that is inductive together with ``target`` (never
    dropped); violated with a counterexample to induction when the target cannot be kept.

    Holds is a proof: in its last pass every case's query (a step from a state of the domains
    that satisfies the target and every kept candidate, breaking well-definedness, the domains,
    the target or a kept candidate) was unsat with exactly the kept candidates selected, and
    Init implies each kept candidate and the target (``Houdini.proof``, the same cases and
    translation as ``checks.prove``)."""
    t_start = time.perf_counter()
    terms = terms or Terms(spec)
    tr = terms.tr
    layout = Layout.of(spec)
    # Init: a candidate Init breaks is dropped (the exploration's initial states make this rare)
    todo = [(n, e) for n, e in pool if n not in terms.init]
    for name, r in check_init(spec, todo, timeout, tr)[1:] if todo else []:
        terms.init[name] = r
    alive = {n for n, _ in pool if terms.init[n].status == Verdict.HOLDS}
    exprs = list(target) + list(pool)
    split = index_scalars(spec, [e for _, e in exprs])
    for n, _ in pool:
        if n not in terms.sel:
            b = z3.Bool(f"sel!{n}")
            terms.sel[n] = (b, z3.Not(b))
    sels = {n: terms.sel[n][0] for n, _ in pool}
    reads = {n: {x.var.name for x in walk(e) if isinstance(x, Read)} for n, e in exprs}
    targets = {n for n, _ in target}
    work: list[_Case] = []
    if note:
        note(f"Houdini: {len(alive)} candidate(s) past Init, {time.perf_counter() - t_start:.1f} s")
    for per_action in cases(spec, split, symmetry).values():
        for case in per_action:
            key = tuple(sorted(case.fixed.items()))
            if key not in terms.pre:
                terms.pre[key] = T.fresh_state(spec, "pre",
                                               {k: [v] for k, v in case.fixed.items()})
            pre = terms.pre[key]
            hyps = {}
            for name, e in exprs:
                if (key, name) not in terms.hyp:
                    val, ok = tr.expr_ok(e, pre)
                    terms.hyp[key, name] = T.mk_and([ok, T.to_bool(val)])
                hyps[name] = terms.hyp[key, name]
            ekey = (key, case.inst.index)
            if ekey not in terms.eff:
                terms.eff[ekey] = tr.effect(case.inst, pre)
            eff = terms.eff[ekey]
            if eff.guard is False:
                continue
            base = [T._zb(f) for f in T.domain(spec, pre) + [T.to_bool(eff.guard)]
                    if f is not True]
            skey = (ekey, tuple(sorted(targets)))
            if skey not in terms.solver:
                s = _solver(timeout)
                s.add(*base)
                for name in sorted(targets):
                    s.add(T._zb(hyps[name]))
                s.push()  # the query of the run before: none yet
                terms.solver[skey] = (s, [], set())
            s, names, held = terms.solver[skey]
            s.pop()
            changed = []
            for var in spec.variables:
                for c_pre, c_post in zip(pre[var.name], eff.post[var.name]):
                    if not T.same(c_pre, c_post):
                        changed.append(T.mk_and([c_post >= var.lo, c_post <= var.hi])
                                       if not T.is_const(c_post) else var.lo <= c_post <= var.hi)
            wd = T.mk_and([eff.ok, T.mk_and(changed)])
            goals: dict[str, T.Term] = {}
            bad = [T.mk_not(wd)]
            for name, e in exprs:
                if name not in targets and name not in held:
                    s.add(z3.Implies(sels[name], T._zb(hyps[name])))
                    held.add(name)
                    names.append(name)
                if not reads[name] & case.inst.action.modifies:
                    continue  # the action leaves its variables as they were
                gkey = (ekey, name)
                if gkey not in terms.goal:
                    val, ok = tr.expr_ok(e, eff.post)
                    g = T.mk_and([ok, T.to_bool(val)])
                    terms.goal[gkey] = None if T.same(g, hyps[name]) else g
                g = terms.goal[gkey]
                if g is None:
                    continue
                goals[name] = g
                if name in targets:
                    bad.append(T.mk_not(g))
                    continue
                if gkey not in terms.bad:
                    terms.bad[gkey] = z3.And(sels[name], T._zb(T.mk_not(g)))
                bad.append(terms.bad[gkey])
            query = T._zb(T.mk_or(bad))
            s.push()
            s.add(query)
            work.append(_Case(case, s, names, pre, eff.post, eff.checks, goals, wd, base,
                              hyps, query))
    out = Houdini(Verdict.HOLDS, [], work=work)
    if note:
        note(f"Houdini: {len(work)} case(s) built, {time.perf_counter() - t_start:.1f} s")
    changed_any = True
    while changed_any:
        changed_any = False
        out.rounds += 1
        # this pass's queries and seconds per action: the last pass's are the proof's
        last: dict[str, list[float]] = {}
        for wc in work:
            while True:
                if not any(n in alive or n in targets for n in wc.goals) and \
                        T.is_const(wc.wd) and wc.wd is True:
                    break
                t0 = time.perf_counter()
                r = wc.solver.check(*_assumptions(terms, wc, alive))
                out.queries += 1
                tally = last.setdefault(wc.case.inst.action.name, [0, 0.0])
                tally[0] += 1
                tally[1] += time.perf_counter() - t0
                if r == z3.unsat:
                    break
                if r != z3.sat:
                    out.status = Verdict.UNKNOWN
                    out.reason = (f"{wc.case.label}: {wc.solver.reason_unknown() or 'unknown'} "
                                  f"after {time.perf_counter() - t0:.1f} s")
                    out.kept = sorted(alive)
                    return out
                m = wc.solver.model()

                def false(t: T.Term, m: z3.ModelRef = m) -> bool:
                    return bool(z3.is_false(m.eval(T._zb(t), model_completion=True)))

                broken_target = [n for n in targets if n in wc.goals and false(wc.goals[n])]
                if broken_target or false(wc.wd):
                    out.status = Verdict.VIOLATED
                    out.cti = _obligation(spec, layout, wc, broken_target, m)
                    out.kept = sorted(alive)
                    return out
                broken = {n for n, g in wc.goals.items() if n in alive and false(g)}
                assert broken, "a model that breaks nothing"
                alive -= broken
                row = np.asarray(T.decode(spec, layout, wc.pre, m))[:layout.width]
                for n in broken:
                    out.dropped[n] = row
                changed_any = True
        if note:
            note(f"Houdini pass {out.rounds}: {len(alive)} candidate(s) left, "
                 f"{out.queries} queries, {time.perf_counter() - t_start:.1f} s")
    out.kept = [n for n, _ in pool if n in alive]
    # the fixpoint is the proof: the last pass changed nothing, so each of its queries was
    # unsat with exactly the kept candidates selected; Init is checked for the target here
    # (each candidate's was checked before it entered)
    init = check_init(spec, list(target), timeout, tr) + [(n, terms.init[n]) for n in out.kept]
    out.proof = InductionReport(
        init, [ActionVerdict(a.name, Verdict.HOLDS, seconds=last.get(a.name, [0, 0.0])[1],
                             queries=int(last.get(a.name, [0, 0.0])[0]))
               for a in spec.actions], time.perf_counter() - t_start)
    return out


GREEDY = 200  # kept sets up to this size are shrunk one lemma at a time as well


@dataclass
class Shrunk:
    kept: list[str]  # a subset of the fixpoint's kept candidates, inductive with the target
    proof: InductionReport | None  # its check by the Houdini solvers (None: nothing shrunk)
    steps: list[tuple[str, int, float]] = field(default_factory=list)  # (how, size, seconds)
    queries: int = 0
    reason: str = ""  # why it stopped before the end, if it did


def shrink(spec: Spec, h: Houdini, terms: Terms, targets: set[str], budget: float,
           timeout: float | None) -> Shrunk:
    """A smaller inductive subset of a Houdini fixpoint's kept candidates, within ``budget``
    seconds: the lemmas the target's step needs by unsat cores, then those theirs need, until
    none is added (repeated while it shrinks); then, for at most ``GREEDY``, one lemma at a
    time. Every set it returns was checked inductive with the target on the Houdini solvers
    (every case's query unsat with exactly it selected); at the budget it returns the last
    set so checked. No query runs past the budget (each one's timeout is what is left)."""
    t_start = time.perf_counter()
    deadline = t_start + budget
    work = h.work
    out = Shrunk(list(h.kept), None)
    order = list(h.kept)
    fixpoint = set(order)

    def left() -> float:
        return deadline - time.perf_counter()

    def check(wc: _Case, on: set[str]) -> z3.CheckSatResult:
        rest = left()
        if rest <= 0.05:
            return z3.unknown
        wc.solver.set("timeout", int(1000 * (min(rest, timeout) if timeout else rest)))
        out.queries += 1
        return wc.solver.check(*_assumptions(terms, wc, on))

    def inductive(on: set[str]) -> InductionReport | None:
        tally: dict[str, list[float]] = {}
        for wc in work:
            t0 = time.perf_counter()
            if check(wc, on) != z3.unsat:
                return None
            x = tally.setdefault(wc.case.inst.action.name, [0, 0.0])
            x[0] += 1
            x[1] += time.perf_counter() - t0
        init = [(n, r) for n, r in h.proof.init if n in on or n not in fixpoint] \
            if h.proof else []
        return InductionReport(init, [ActionVerdict(a.name, Verdict.HOLDS,
                                                    seconds=tally.get(a.name, [0, 0.0])[1],
                                                    queries=int(tally.get(a.name, [0, 0])[0]))
                                      for a in spec.actions], time.perf_counter() - t_start)

    def accept(how: str, cand: set[str], proof: InductionReport) -> None:
        out.kept = [n for n in order if n in cand]
        out.proof = proof
        out.steps.append((how, len(cand), time.perf_counter() - t_start))

    try:
        kept = set(h.kept)
        while kept and left() > 0:
            needed = _needed(work, targets, kept, check)
            if needed is None or needed == kept:
                break
            proof = inductive(needed)
            if proof is None:  # a core the check does not confirm (or the budget spent)
                break
            kept = needed
            accept("cores", kept, proof)
        if len(kept) <= GREEDY:
            for x in [n for n in reversed(order) if n in kept]:
                if left() <= 0:
                    break
                proof = inductive(kept - {x})
                if proof is not None:
                    kept = kept - {x}
                    accept("one at a time", kept, proof)
    finally:
        for wc in work:  # the solvers go on with their own timeout
            wc.solver.set("timeout", int(timeout * 1000) if timeout else 0)
    if left() <= 0:
        out.reason = f"the budget of {budget:g} s ran out"
    return out


def _assumptions(terms: Terms, wc: _Case, on: set[str]) -> list[z3.BoolRef]:
    """A case's query with the candidates of ``on`` as hypotheses, and no other."""
    return [terms.sel[n][0] if n in on else terms.sel[n][1] for n in wc.names]


def _solver(timeout: float | None) -> z3.Solver:
    s = z3.Solver()
    if timeout:
        s.set("timeout", int(timeout * 1000))
    return s


def _needed(work: list[_Case], targets: set[str], kept: set[str],
            check: Callable[[_Case, set[str]], z3.CheckSatResult]) -> set[str] | None:
    """The lemmas the proof needs, from unsat cores on the Houdini solvers (their query popped,
    the step's goals pushed instead: the candidates stay behind their selectors): those the
    target's step needs, then those theirs need, until none is added. Every case's core is
    taken with every kept lemma as a hypothesis. No core is minimized (over thousands of
    hypotheses that is the slow part). None when a query is not decided."""
    needed: set[str] = set()
    frontier = set(targets)
    sel = {f"sel!{n}": n for n in kept}
    first = True
    while frontier:
        new: set[str] = set()
        for wc in work:
            goals = [T.mk_not(wc.goals[n]) for n in frontier if n in wc.goals]
            if first:  # the step must stay well-defined too
                goals.append(T.mk_not(wc.wd))
            goals = [g for g in goals if not (T.is_const(g) and g is False)]
            if not goals:
                continue
            s = wc.solver
            s.pop()  # the Houdini query
            s.push()
            s.add(T._zb(T.mk_or(goals)))
            try:
                r = check(wc, kept)
                core = s.unsat_core() if r == z3.unsat else None
            finally:
                s.pop()
                s.push()
                s.add(wc.query)
            if core is None:
                return None
            names = (x.decl().name() for x in core if z3.is_const(x))
            new |= {sel[x] for x in names if x in sel} - needed
        needed |= new
        frontier = new
        first = False
    return needed


def _obligation(spec: Spec, layout: Layout, wc: _Case, broken: list[str],
                m: z3.ModelRef) -> Obligation:
    domain = not broken
    goal = broken[0] if broken else "domains"
    if domain:
        goal = next((domain_error_name(var, wc.case.inst.action.name)
                     for var, c in T.first_errors(wc.checks).items()
                     if z3.is_true(m.eval(T._zb(c), model_completion=True))), goal)
    ob = Obligation(wc.case.inst.action.name, wc.case.label, goal, Result(Verdict.VIOLATED, m))
    ob.pre = T.decode(spec, layout, wc.pre, m)
    ob.post = None if domain else T.decode(spec, layout, wc.post, m)
    ob.inst = wc.case.inst
    return ob


DROPPED_ROWS = 16  # the most counterexamples of dropped candidates taken from one Houdini run

# -- the driver -----------------------------------------------------------------------------------


def infer(spec: Spec, inv: str, given: Sequence[tuple[str, Expr]] = (), *,
          timeout: float | None = 60.0, symmetry: dict[str, Any] | None = None,
          max_states: int = 2_000_000, sample: int = 200_000, max_candidates: int = 4000,
          max_pool: int = 40_000, max_rounds: int = 8, untried: bool = False,
          tiers: Sequence[tuple[int, ...]] = TIERS, shrink_budget: float = 300.0,
          subsume: bool = True,
          note: Callable[[str], object] | None = None) -> InferReport:
    """Prove ``inv`` with lemmas inferred over ``spec`` (``given``: lemmas to keep besides).
    ``max_candidates``: the most candidates one Houdini run adds to the pool; ``max_pool``:
    the most it holds with them (what Houdini keeps stays, and the candidates it dropped that
    come back may pass it); ``max_rounds``: the most Houdini runs of a tier; ``untried``: when
    the counterexamples met rank none of a tier's candidates, its untried ones enter a round
    at a time (if the whole tier fits in the pool)."""
    t0 = time.perf_counter()
    say = note or (lambda s: None)
    target = [(inv, spec.invariant_named(inv).expr)] + list(given)
    rows, complete, path = reachable(spec, inv, max_states)
    rep = InferReport(Verdict.UNKNOWN, states=rows.shape[0], complete=complete)
    say(f"explored {rows.shape[0]:,} states "
        f"({'every reachable one' if complete else 'a limit stopped it'})")
    if path is not None:
        rep.status, rep.path = Verdict.VIOLATED, path
        rep.seconds = time.perf_counter() - t0
        return rep
    layout = Layout.of(spec)
    if rows.shape[0] > sample:  # the filter reads a uniform sample; Houdini decides the rest
        pick = np.random.default_rng(0).choice(rows.shape[0], sample, replace=False)
        rows = rows[np.sort(pick)]
    ev = K.Evaluator(spec, layout, rows)
    vocab = K.Vocabulary(spec, index_scalars(spec, [e for _, e in target]), symmetry)
    ctis: list[np.ndarray] = []
    seen: set[K.Candidate] = set()
    pool: list[tuple[K.Candidate, str]] = []
    # dropped by Houdini: candidate -> (its name, the pre-state of the step that broke it); one
    # comes back when a candidate of the pool is false on that state (the step is excluded)
    parked: dict[K.Candidate, tuple[str, np.ndarray]] = {}
    n_names = 0
    done = False
    gave_up = ""  # why the solver last gave up on a round
    terms = Terms(spec)
    # left out of the pool, implied by a candidate Houdini kept: candidate -> (its name, the
    # name of the kept one); one comes back once that one has left the pool
    shadow: dict[K.Candidate, tuple[str, str]] = {}
    for width, nb, *more in tiers:
        ex = more[0] if more else 0
        k = more[1] if len(more) > 1 else 0
        t1 = time.perf_counter()
        found = [c for sizes in K.bound_sets(vocab, nb, ex)
                 for c in tier_candidates(ev, vocab, sizes, width, ex, k) if c not in seen]
        seen.update(found)
        found.sort(key=lambda c: (len(c.literals) + len(c.conj), len(c.sizes)))
        # the tier's candidates not yet given to Houdini, narrowest first, and of them those
        # that exclude a counterexample to induction met so far, those that exclude the most
        # first: a round takes the ranked ones; when none is left (or nothing ranks yet), the
        # untried in order, if the whole tier fits in the room the pool has left
        left: dict[K.Candidate, None] = dict.fromkeys(found)
        whole = untried and len(found) <= max(0, max_pool - len(pool))
        ranked: list[K.Candidate] = []
        if ctis:
            hits = K.excluded(ev, found, ctis)
            ranked = [found[i] for _, i in sorted((-x, i) for i, x in enumerate(hits) if x)]
        tier = TierReport(width, nb, len(found), 0, 0, 0, 0, 0.0, "", ex, k)
        rep.tiers.append(tier)
        runs = 0
        # the pool before the tier's first round of untried candidates, and what Houdini
        # dropped since: if the solver gives up, those rounds are undone
        unranked: list[tuple[K.Candidate, str]] | None = None
        dropped: set[str] = set()
        while True:
            room = min(max_candidates, max(0, max_pool - len(pool)))
            batch, filled = _round(ranked, left, room, whole or not ctis)
            if filled and unranked is None:
                unranked = list(pool)
            added = []
            for c in batch:
                n_names += 1
                added.append((c, f"Inferred{n_names}"))
            back = _revive(ev, parked, batch)
            if subsume:
                pool, back, added = _shadow(ev, shadow, pool, back, added, tier)
            before = list(pool)
            if (runs or ctis) and not added and not back:
                if not runs:
                    tier.outcome = "cti"  # the pool as it was: its counterexample stands
                break  # nothing new: every candidate of the tier tried, or the pool full
            pool += back + added
            runs += 1
            tier.tried += len(added)
            tier.pool = max(tier.pool, len(pool))
            say(f"tier {width} literal(s), {nb} bound variable(s)"
                f"{f' ({ex} existential)' if ex else ''}"
                f"{f', an existential conjunction of up to {k}' if k else ''}, "
                f"round {runs}: {tier.generated:,} "
                f"candidate(s) hold in the explored states, {len(left):,} not yet tried; "
                f"{len(pool):,} in the pool"
                f"{f' ({len(back):,} Houdini dropped before, back)' if back else ''}"
                f"{f'; {tier.implied:,} left out, implied by one kept' if tier.implied else ''}")
            exprs = [(n, K.to_expr(spec, c)) for c, n in pool]
            h = houdini(spec, target, exprs, timeout, symmetry, say, terms=terms)
            tier.rounds += h.rounds
            tier.queries += h.queries
            tier.kept = len(h.kept)
            for c, n in pool:
                if n in h.dropped:
                    parked[c] = (n, h.dropped[n])
            dropped |= set(h.dropped)
            if h.status == Verdict.UNKNOWN:
                # the round is undone, and the tier's rounds of untried candidates with it
                # (what they dropped stays dropped: a step that breaks a candidate in a pool
                # breaks it in a smaller one); the next tiers go on from the pool as it was
                tier.outcome = "unknown"
                gave_up = h.reason
                pool = [(c, n) for c, n in (before if unranked is None else unranked)
                        if n not in dropped]
                say(f"the solver gave up ({h.reason}): the pool goes back to "
                    f"{len(pool):,} candidate(s), and the tier ends")
                break
            if h.status == Verdict.HOLDS:
                # the fixpoint keeps the target: with Init checked, it is the proof
                assert h.proof is not None
                done = True
                tier.outcome = "proved" if h.proof.status == Verdict.HOLDS else "unknown"
                lemma_of = {n: (c, e) for (c, n), (_, e) in zip(pool, exprs)}
                rep.proof, rep.fixpoint = h.proof, len(h.kept)
                rep.lemmas = [Lemma(n, lemma_of[n][1], K.to_source(spec, lemma_of[n][0]))
                              for n in h.kept]
                if h.proof.status != Verdict.HOLDS:
                    bad = next(n for n, r in h.proof.init if r.status != Verdict.HOLDS)
                    rep.reason = f"Init does not imply {bad}"
                    break
                rep.status, rep.cti = Verdict.HOLDS, None
                say(f"Houdini's fixpoint keeps {inv} with {len(h.kept):,} candidate(s): "
                    f"proved ({time.perf_counter() - t0:.1f} s); shrinking the lemmas "
                    f"within {shrink_budget:g} s")
                sh = shrink(spec, h, terms, {n for n, _ in target}, shrink_budget, timeout)
                rep.shrink = sh
                if sh.proof is not None:
                    # the shrunk set, checked inductive on the Houdini solvers; when the
                    # shrinking ended within its budget, by the ordinary proof too (what
                    # --lemmas-file runs)
                    on = set(sh.kept)
                    rep.lemmas = [lm for lm in rep.lemmas if lm.name in on]
                    rep.proof = sh.proof
                    if not sh.reason:
                        again = prove(spec, target + [(lm.name, lm.expr) for lm in rep.lemmas],
                                      timeout, symmetry)
                        if again.status == Verdict.VIOLATED:
                            # two checks of the same set disagree: neither is trusted
                            rep.status, tier.outcome = Verdict.UNKNOWN, "unknown"
                            rep.reason = ("the ordinary proof of the shrunk lemmas found a "
                                          "counterexample to induction Houdini's solvers did not")
                        if again.status == Verdict.HOLDS:
                            rep.proof = again
                say(f"{len(rep.lemmas):,} lemma(s) printed of the {len(h.kept):,} kept"
                    f"{f' ({sh.reason})' if sh.reason else ''}; "
                    f"{time.perf_counter() - t0:.1f} s")
                break
            assert h.cti is not None
            tier.outcome = "cti"
            rep.cti = h.cti
            row = np.asarray(h.cti.pre)[:layout.width]
            # the candidates Houdini dropped that would have excluded it: the states their own
            # counterexamples to induction start from are counterexamples too (what excludes
            # them is the lemma each lacked)
            lost = [(c, n) for c, n in pool if n in h.dropped]
            lost_rows = [h.dropped[n] for (_, n), x in
                         zip(lost, K.false_on(ev, [c for c, _ in lost], [row])) if x]
            extra = list({r.tobytes(): r for r in lost_rows}.values())[:DROPPED_ROWS]
            ctis += [row] + extra
            # what Houdini kept stays in every later pool: it is inductive relative to a pool
            # that only grows, or Houdini drops it again later
            kept = set(h.kept)
            pool = [(c, n) for c, n in pool if n in kept]
            rest = list(left)
            on_row = K.excluded(ev, rest, [row])
            on_extra = K.excluded(ev, rest, extra)
            score = {c: (x + y, x) for c, x, y in zip(rest, on_row, on_extra) if x + y}
            # those that exclude the most of them first (it before the others), then those
            # over the variables the failing action reads (the counterexample's cone), then the
            # narrower
            cone = _action_reads(spec, h.cti.action)
            ranked = sorted(score, key=lambda c: (-score[c][0], -score[c][1], -_share(c, cone),
                                                  len(c.literals) + len(c.conj), len(c.sizes)))
            say(f"counterexample to induction: {h.cti.case} breaks {h.cti.goal}"
                f"{f', and {len(extra)} of candidates it dropped' if extra else ''}; "
                f"{len(ranked):,} untried candidate(s) exclude them")
            if runs >= max_rounds:
                break
        tier.seconds = time.perf_counter() - t1
        if done:
            break
    else:
        rep.reason = (f"no inductive strengthening among {len(seen):,} candidate(s) of every "
                      "template tier"
                      f"{f' (the solver gave up on a round: {gave_up})' if gave_up else ''}")
    rep.seconds = time.perf_counter() - t0
    return rep


def _shadow(ev: K.Evaluator, shadow: dict[K.Candidate, tuple[str, str]],
            pool: list[tuple[K.Candidate, str]], back: list[tuple[K.Candidate, str]],
            added: list[tuple[K.Candidate, str]], tier: TierReport
            ) -> tuple[list[tuple[K.Candidate, str]], list[tuple[K.Candidate, str]],
                       list[tuple[K.Candidate, str]]]:
    """The round's pool, those coming back and those added, less the candidates a candidate
    of the pool implies (``candidates.subsumed``: every candidate in the pool when a round
    starts was kept by Houdini), each left in ``shadow`` with the name of the one that implies
    it; and, back among them, those waiting there whose one has left the pool (dropped, or
    its round undone). A pool without them is inductive exactly when it is with them, as long
    as the ones that imply them stay."""
    held = {n for _, n in pool}
    free = [(c, n) for c, (n, by) in shadow.items() if by not in held]
    for cand, _ in free:
        del shadow[cand]
    back = back + free
    everything = pool + back + added
    sub = K.subsumed(ev, [c for c, _ in everything])
    npool = len(pool)

    def root(i: int) -> int:  # the kept one at the end of a chain of implications
        while i in sub and sub[i] < npool:
            i = sub[i]
        return i

    gone = set()
    for d, by in sub.items():
        if by < npool:
            shadow[everything[d][0]] = (everything[d][1], everything[root(by)][1])
            gone.add(d)
    tier.implied += len(gone)
    keep = [i not in gone for i in range(len(everything))]
    return ([x for x, k in zip(pool, keep) if k],
            [x for x, k in zip(back, keep[npool:]) if k],
            [x for x, k in zip(added, keep[npool + len(back):]) if k])


def _round(ranked: list[K.Candidate], untried: dict[K.Candidate, None], room: int,
           fill: bool = True) -> tuple[list[K.Candidate], bool]:
    """The candidates one Houdini run adds (taken out of ``untried``): those ``ranked`` by
    the counterexamples to induction, at most ``room``; with none ranked and ``fill``, the
    untried in their order (then True). A lemma that excludes no counterexample met (it
    excludes one the others would meet next) still enters, a round at a time."""
    batch: list[K.Candidate] = []
    for c in ranked:
        if len(batch) >= room:
            break
        if c in untried:
            del untried[c]
            batch.append(c)
    if batch or not fill:
        return batch, False
    for c in list(itertools.islice(untried, room)):
        del untried[c]
        batch.append(c)
    return batch, bool(batch)


def tier_candidates(ev: K.Evaluator, vocab: K.Vocabulary, sizes: tuple[int, ...], width: int,
                     ex: int, k: int) -> list[K.Candidate]:
    """The candidates of one bound set of a tier that hold in the explored states: clauses of
    up to ``width`` literals, or, with ``k``, up to ``width - 1`` guards and an existential
    conjunction of up to ``k`` literals over the last bound variable."""
    if not k:
        return list(K.survivors(ev, sizes, vocab.literals(sizes), width, exists=ex))
    if ex != 1:
        raise ValueError("an existential conjunction is over one existential variable")
    guards = K.guard_literals(vocab, sizes[:-1], vocab.literals(sizes[:-1]))
    return list(K.conj_survivors(ev, sizes, guards, K.conj_literals(sizes, vocab.literals(sizes)),
                                 width, k, minimal=False))


def _action_reads(spec: Spec, action: str) -> set[str]:
    """The variables an action's guard and effect read."""
    from hwcheck.spec.lang import stmt_exprs, walk_stmts

    a = next(x for x in spec.actions if x.name == action)
    exprs = [a.guard] + [e for st in walk_stmts(a.body) for e in stmt_exprs(st)]
    return {x.var.name for e in exprs for x in walk(e) if isinstance(x, Read)}


def _share(c: K.Candidate, cone: set[str]) -> float:
    """The share of a candidate's cell terms over the variables of ``cone``."""
    names = [t.var for lit in c.literals + c.conj for t in lit.terms() if t.var is not None]
    return sum(n in cone for n in names) / max(1, len(names))


def _revive(ev: K.Evaluator, parked: dict[K.Candidate, tuple[str, np.ndarray]],
            added: Sequence[K.Candidate]) -> list[tuple[K.Candidate, str]]:
    """The candidates Houdini dropped that come back (taken out of ``parked``): those whose
    dropping step starts from a state some candidate of ``added``, or one coming back, is false
    on. Every candidate alive when it was dropped was true there, so only a candidate new to
    the pool excludes that step, and the drop no longer says the candidate is not inductive."""
    back: list[tuple[K.Candidate, str]] = []
    new = list(added)
    while new and parked:
        rows = {r.tobytes(): r for _, r in parked.values()}
        keys = list(rows)
        hit = np.flatnonzero(K.falsified(ev, new, [rows[k] for k in keys]).any(axis=0))
        gone = {keys[i] for i in hit}
        new = [c for c, (_, r) in parked.items() if r.tobytes() in gone]
        back += [(c, parked.pop(c)[0]) for c in new]
    return back


def lemmas_file(spec: Spec, inv: str, lemmas: Sequence[Lemma]) -> str:
    """The inferred lemmas as a Python file of the spec language (``prove --lemmas-file``)."""
    params = ", ".join(f"{k}={v!r}" for k, v in spec.params.items())
    lines = [f'"""Lemmas hwcheck prove --infer found for {inv} of {spec.name} ({params}).',
             "",
             "Each is true in every reachable state, and with the invariant they are inductive.",
             '"""', "",
             "from hwcheck.spec.lang import exists, forall  # noqa: F401", "", "",
             "def lemmas(spec):"]
    lines += [f"    {h}  # noqa: F841" for h in K.handles_source(spec)]
    lines.append("    return [")
    for lm in lemmas:
        lines.append(f"        ({lm.name!r}, {lm.source}),")
    lines.append("    ]")
    return "\n".join(lines) + "\n"


def read_lemmas_file(path: str, spec: Spec) -> list[tuple[str, Expr]]:
    """The lemmas of a file ``prove --infer`` wrote (or one written the same way by hand): a
    Python file with ``lemmas(spec) -> [(name, expression), ...]``. Raises SpecError with one
    line naming what is wrong."""
    import importlib.util
    from pathlib import Path

    from hwcheck.spec.lang import SpecError

    p = Path(path)
    if not p.is_file():
        raise SpecError(f"--lemmas-file {path}: no such file")
    mod_spec = importlib.util.spec_from_file_location("hwcheck_lemmas_file", p)
    if mod_spec is None or mod_spec.loader is None:
        raise SpecError(f"--lemmas-file {path}: not a Python file")
    mod = importlib.util.module_from_spec(mod_spec)
    try:
        mod_spec.loader.exec_module(mod)
        fn = getattr(mod, "lemmas", None)
        if not callable(fn):
            raise SpecError("it defines no function lemmas(spec)")
        got = list(fn(spec))
    except SpecError as e:
        raise SpecError(f"--lemmas-file {path}: {e}") from None
    except Exception as e:  # the file is the user's code: any failure is bad input
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise SpecError(f"--lemmas-file {path}: {type(e).__name__}: {first}") from None
    out: list[tuple[str, Expr]] = []
    for item in got:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], Expr) and item[1].sort == "bool"):
            raise SpecError(f"--lemmas-file {path}: lemmas(spec) must return (name, boolean "
                            f"expression) pairs, got {item!r:.60}")
        try:
            spec._check_expr(f"lemma {item[0]}", item[1], "bool", set(), set(), set(), False)
        except SpecError as e:
            raise SpecError(f"--lemmas-file {path}: {e}") from None
        out.append(item)
    return out
