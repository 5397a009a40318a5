"""``prove --infer``: lemmas found, not written. Peterson's mutual exclusion, two-phase commit
and the token ring proved with no lemma from the protocol; the numpy filter agrees with the
interpreter; a protocol whose invariant fails ends with a real trace that replays, never a
proof; what the templates cannot reach is unknown, with the last counterexample to induction;
the lemmas saved are what ``--lemmas-file`` proves with."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import kafka

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.z3 import candidates as K
from hwcheck.checker.z3.checks import index_scalars, symmetry_of
from hwcheck.checker.z3.infer import _revive, infer, reachable, tier_candidates

SPECS = Path(__file__).parent / "specs"


def build(name: str, **params):
    return protocols.build(protocols.load(str(SPECS / f"{name}.py")), params)


def run(*args: str):
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


@pytest.mark.parametrize("name, inv, given", [
    ("peterson", "Mutex", {}),
    pytest.param("two_phase", "TCConsistent", {"rms": 2}, marks=pytest.mark.slow),
    pytest.param("token_ring", "TokenInRing", {}, marks=pytest.mark.slow),
])
def test_proved_with_inferred_lemmas_and_the_file_proves_again(tmp_path, name, inv, given):
    spec = str(SPECS / f"{name}.py")
    params = [x for k, v in given.items() for x in ("--param", f"{k}={v}")]
    code, out = run("prove", "--spec", spec, *params, "--invariant", inv, "--infer",
                    "--out", str(tmp_path), "--json", "-q")
    assert code == 0, out
    (res,) = last_json(out)["invariants"]
    assert res["status"] == "holds" and res["lemmas"] == []  # nothing given: all inferred
    saved = Path(res["inferred"]["file"])
    assert saved.parent.name == "lemmas" and saved.is_file()
    assert [lm["name"] for lm in res["inferred"]["lemmas"]] == \
        [n for n, _ in _load(saved, build(name, **given))]
    tiers = res["inferred"]["tiers"]
    assert tiers and tiers[-1]["outcome"] == "proved"
    # the file alone proves it, with the ordinary proof
    code, out = run("prove", "--spec", spec, *params, "--invariant", inv, "--lemmas-file",
                    str(saved), "--out", str(tmp_path), "-q")
    assert code == 0 and f"verdict: proved {inv} inductive" in out, out


def _load(path: Path, spec):
    from hwcheck.checker.z3.infer import read_lemmas_file

    return read_lemmas_file(str(path), spec)


def test_peterson_needs_its_lemmas_plain_induction_is_unknown(tmp_path):
    """Mutex is true but not inductive alone: plain prove gives a counterexample to induction,
    exit 3 (unknown, never 12); --infer proves it."""
    spec = str(SPECS / "peterson.py")
    code, out = run("prove", "--spec", spec, "--invariant", "Mutex", "--out", str(tmp_path),
                    "-q")
    assert code == 3 and "counterexample to induction" in out and "verdict: unknown" in out
    code, out = run("prove", "--spec", spec, "--invariant", "Mutex", "--infer", "--out",
                    str(tmp_path), "-q")
    assert code == 0 and "inferred" in out and "forall" in out or "|" in out, out


def test_inferred_lemmas_hold_in_every_reachable_state_by_the_interpreter():
    """Each lemma of a proof is true in every reachable state, judged by the interpreter (not
    the numpy filter that chose it)."""
    spec = build("peterson")
    rep = infer(spec, "Mutex")
    assert rep.status == "holds" and rep.lemmas and rep.proof is not None
    rows, complete, path = reachable(spec, "Mutex", 10_000)
    assert complete and path is None
    interp = Interpreter(spec)
    for lm in rep.lemmas:
        assert all(interp.holds(lm.expr, r) for r in rows), lm.source


def test_the_numpy_filter_agrees_with_the_interpreter():
    """Every clause of one and two literals over Peterson's and the token ring's variables:
    the filter keeps it exactly when the interpreter finds it true in every explored state."""
    # (the token ring with weak fairness for Use, as the liveness tests compile it: fairness
    # changes neither the variables nor the reachable states the filter reads)
    for spec, inv in ((build("peterson"), "Mutex"),
                      (build("token_ring", use="weak"), "TokenInRing")):
        rows, _, _ = reachable(spec, inv, 10_000)
        layout = Layout.of(spec)
        ev = K.Evaluator(spec, layout, rows)
        vocab = K.Vocabulary(spec, index_scalars(spec))
        interp = Interpreter(spec)
        checked = 0
        for sizes in K.bound_sets(vocab, 1):
            lits = vocab.literals(sizes)
            kept = set(K.survivors(ev, sizes, lits, 2))
            sample = list(itertools.islice(itertools.combinations(lits, 2), 0, None, 7))[:300]
            for pair in sample + [(x,) for x in lits[:80]]:
                c = K.Candidate(sizes, tuple(pair))
                if not K.uses_all(sizes, pair):
                    continue
                truth = all(interp.holds(K.to_expr(spec, c), r) for r in rows)
                # a clause containing a true smaller one is left out: it says less
                smaller = len(pair) > 1 and any(
                    all(interp.holds(K.to_expr(spec, K.Candidate(sizes, (x,))), r)
                        for r in rows) for x in pair)
                taut = K._tautology(ev, sizes, pair)
                if c in kept:
                    assert truth, K.to_source(spec, c)
                elif truth and not smaller and not taut:
                    pytest.fail(f"dropped a true clause: {K.to_source(spec, c)}")
                checked += 1
        assert checked >= 20, spec.name


@pytest.mark.slow
def test_a_violated_invariant_is_a_real_trace_that_replays(tmp_path):
    """The TM that commits early: the exploration finds TCConsistent broken; prove --infer
    writes that path as a trace (exit 12) and replay confirms it."""
    code, out = run("prove", "--spec", str(SPECS / "two_phase.py"), "--param", "rms=2",
                    "--param", "tm_commits_early=true", "--invariant", "TCConsistent",
                    "--infer", "--out", str(tmp_path), "--json", "-q")
    assert code == 12, out
    (res,) = last_json(out)["invariants"]
    assert res["status"] == "violated" and res["length"] == 5
    trace = tmp_path / res["trace"] if not Path(res["trace"]).is_absolute() else \
        Path(res["trace"])
    code, out = run("replay", str(trace), "--spec", str(SPECS / "two_phase.py"))
    assert code == 0, out


@pytest.mark.slow
def test_kafka_hw_truncation_ends_with_a_real_counterexample_never_proved(tmp_path):
    code, out = run("prove", "--truncation", "hw", "--no-lemmas", "--infer", "--invariant",
                    "CommittedNotLost", "--out", str(tmp_path), "--json", "-q")
    assert code == 12, out
    (res,) = last_json(out)["invariants"]
    assert res["status"] == "violated" and res["length"] == 8  # the shortest: docs/model.md
    code, out = run("replay", res["trace"])
    assert code == 0, out


def test_beyond_the_templates_is_unknown_with_the_last_counterexample_to_induction():
    """Clauses of one literal without bound variables cannot prove Mutex: unknown, with a
    counterexample to induction whose pre-state satisfies the invariant, and no proof."""
    spec = build("peterson")
    rep = infer(spec, "Mutex", tiers=((1, 0),))
    assert rep.status == "unknown" and rep.cti is not None and not rep.lemmas
    assert rep.proof is None and "no inductive strengthening" in rep.reason
    assert Interpreter(spec).holds(spec.invariant_named("Mutex").expr, np.asarray(rep.cti.pre))
    assert rep.cti.goal == "Mutex"


def test_symmetric_candidates_name_no_member_by_a_constant():
    """Under Kafka's replica symmetry (R=2 and M=2: the same size, apart by the declared
    dimensions) no candidate indexes a replica by a constant or by an offset's variable, names
    the leader by a constant or compares replicas by order (the prover checks one action
    instance per symmetry class: lemmas must be symmetric); offsets still get constants."""
    spec = kafka(truncation="kip-279", isr_expansion="epoch-start")
    sym = symmetry_of(spec)
    vocab = K.Vocabulary(spec, index_scalars(spec), sym)
    offsets_const = False
    for sizes in K.bound_sets(vocab, 2):
        for t in vocab.terms(sizes):
            if t.var is None:
                assert sizes[t.bound] > 0  # a replica is never used as a number
                continue
            for a, (kind, x) in enumerate(t.index):
                member = a in dict(sym["dims"]).get(t.var, ())
                if kind == "c":
                    assert not member, t
                    offsets_const = True
                if kind == "b":
                    assert (sizes[x] < 0) == member, (t, sizes)
        for lit in vocab.literals(sizes):
            if lit.op == "<" and all(t.var is None for t in lit.terms()):
                assert all(sizes[t.bound] > 0 for t in lit.terms())
            if lit.a.var in sym["ids"]:  # the leader: equal to another member, or none
                assert lit.op in ("==", "!=")
                assert (isinstance(lit.b, int) and lit.b < 0) or lit.b.var in sym["ids"], lit
    assert offsets_const


def test_a_bad_lemmas_file_is_one_line_exit_2(tmp_path):
    spec = str(SPECS / "peterson.py")
    missing = tmp_path / "none.py"
    code, out = run("prove", "--spec", spec, "--lemmas-file", str(missing))
    assert code == 2 and "no such file" in out and "Traceback" not in out
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n")
    code, out = run("prove", "--spec", spec, "--lemmas-file", str(bad))
    assert code == 2 and "defines no function lemmas(spec)" in out
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def lemmas(spec):\n    return [('A', spec.var('nope'))]\n")
    code, out = run("prove", "--spec", spec, "--lemmas-file", str(wrong))
    assert code == 2 and "unknown variable nope" in out and "Traceback" not in out


@pytest.mark.slow
def test_invariants_proved_earlier_in_a_run_help_the_later_ones(tmp_path):
    """Every invariant of two-phase commit in one run: each proved is given, with its lemmas,
    to the next; each saved file still proves its invariant alone."""
    spec = str(SPECS / "two_phase.py")
    code, out = run("prove", "--spec", spec, "--param", "rms=2", "--infer", "--out",
                    str(tmp_path), "--json", "-q")
    assert code == 0, out
    got = last_json(out)["invariants"]
    assert [r["status"] for r in got] == ["holds"] * 3
    assert got[0]["lemmas"] == [] and "TPTypeOK" in got[1]["lemmas"]
    for r in got:
        code, out = run("prove", "--spec", spec, "--param", "rms=2", "--invariant",
                        r["property"], "--lemmas-file", r["inferred"]["file"], "--out",
                        str(tmp_path), "-q")
        assert code == 0, out


def test_a_dropped_candidate_comes_back_once_a_new_one_excludes_the_step_that_dropped_it():
    """Houdini drops a candidate on a step from some state; a candidate added later that is
    false on that state excludes the step, and the dropped one comes back to the pool (and,
    in turn, brings back those whose state it is false on); one whose state every new
    candidate satisfies stays out."""
    spec = build("peterson")
    rows, _, _ = reachable(spec, "Mutex", 10_000)
    ev = K.Evaluator(spec, Layout.of(spec), rows)
    turn = K.Term("turn", ())

    def pc(i) -> K.Term:
        return K.Term("pc", (i if isinstance(i, tuple) else ("c", i),))

    def at(*lits: K.Literal) -> np.ndarray:  # the first explored row where all of them hold
        return rows[np.flatnonzero(np.logical_and.reduce([ev.literal(x, ()) for x in lits]))[0]]

    lit = K.Literal
    first_idle = K.Candidate((), (lit("==", pc(0), 0),))  # process 0 not yet started
    turn_0 = K.Candidate((), (lit("==", turn, 0),))
    never_crit = K.Candidate((2,), (lit("!=", pc(("b", 0)), 3),))
    crit = at(lit("==", pc(0), 3), lit("==", turn, 0))
    turn1 = at(lit("!=", turn, 0), lit("!=", pc(0), 0), lit("!=", pc(0), 3), lit("!=", pc(1), 3))
    idle = at(lit("==", pc(0), 0), lit("==", pc(1), 0), lit("==", turn, 0))
    parked = {turn_0: ("Turn0", crit), first_idle: ("FirstIdle", turn1),
              K.Candidate((), (lit("!=", pc(1), 3),)): ("Kept", idle)}
    back = _revive(ev, parked, [never_crit])
    # never_crit is false where a process is critical: turn_0 comes back; turn_0 is false
    # where the turn is 1: first_idle comes back with it; the idle state excludes nothing
    assert back == [(turn_0, "Turn0"), (first_idle, "FirstIdle")]
    assert list(parked.values()) == [("Kept", idle)]
    assert _revive(ev, parked, [turn_0, first_idle]) == [] and len(parked) == 1
    counts = K.excluded(ev, [never_crit, turn_0], [crit, turn1, idle])
    assert counts == [1, 1]
    assert K.falsified(ev, [never_crit, turn_0], [crit, turn1, idle]).tolist() == \
        [[True, False, False], [False, True, False]]



def test_a_pool_that_grows_keeps_what_houdini_kept_and_takes_every_candidate_a_round_at_a_time(
        monkeypatch):
    """Rounds of 20 candidates on Peterson, the untried ones let in: every candidate Houdini
    kept is in the next Houdini run's pool (never evicted, even one that excludes no
    counterexample to induction), every candidate of the first tier enters over its rounds,
    those that exclude no counterexample included (none left out as implied by a kept one),
    and Mutex is proved, checked again by the ordinary proof."""
    from hwcheck.checker.z3 import infer as inf

    runs: list[tuple[list[str], list[str]]] = []
    real = inf.houdini

    def houdini(spec, target, pool, *args, **kwargs):
        h = real(spec, target, pool, *args, **kwargs)
        runs.append(([n for n, _ in pool], list(h.kept)))
        return h

    monkeypatch.setattr(inf, "houdini", houdini)
    rep = infer(build("peterson"), "Mutex", max_candidates=20, untried=True, subsume=False)
    assert rep.status == "holds" and rep.proof is not None and rep.proof.status == "holds"
    first = rep.tiers[0]
    assert first.outcome == "cti" and first.generated > 20
    assert first.tried == first.generated and first.pool == first.generated
    assert len(runs) >= 3
    for (_, kept), (pool, _) in zip(runs, runs[1:]):
        assert set(kept) <= set(pool)
    assert all(len(set(pool) - set(before)) <= 20 for (before, _), (pool, _) in
               zip(runs, runs[1:]))  # a round adds at most its 20 (and those that come back)


def test_a_round_takes_the_ranked_candidates_then_the_untried_in_order():
    """Those the counterexamples rank, in their order, at most the room left; when none ranks,
    the tier's untried ones in their order (unless the tier is too big for the pool); each
    taken out of the untried, and one ranked but already tried not taken again."""
    from hwcheck.checker.z3.infer import _round

    cands = [K.Candidate((), (K.Literal("==", K.Term("turn", ()), v),)) for v in range(7)]
    untried = dict.fromkeys(cands[1:])
    assert _round([cands[4], cands[0], cands[2], cands[3]], untried, 2) == \
        ([cands[4], cands[2]], False)
    assert list(untried) == [cands[1], cands[3], cands[5], cands[6]]
    assert _round([cands[0]], untried, 3) == ([cands[1], cands[3], cands[5]], True)  # none ranks
    assert list(untried) == [cands[6]]
    assert _round([], untried, 0) == ([], False)
    assert _round([], untried, 4, fill=False) == ([], False)
    assert _round([cands[6]], untried, 4, fill=False) == ([cands[6]], False) and not untried


def test_a_round_the_solver_gives_up_on_is_undone_and_the_next_tier_goes_on(monkeypatch):
    """The solver gives up on the first tier's first round: that round leaves the pool, the
    tier ends unknown, the next tier starts from the pool as it was and proves Mutex, checked
    again by the ordinary proof; when it gives up on every round, the answer is unknown,
    saying so, never a proof."""
    from hwcheck.checker.z3 import infer as inf

    real = inf.houdini
    calls: list[int] = []

    def flaky(spec, target, pool, *args, **kwargs):
        calls.append(len(pool))
        if len(calls) == 1 or always:
            return inf.Houdini("unknown", sorted(n for n, _ in pool), reason="canceled")
        return real(spec, target, pool, *args, **kwargs)

    monkeypatch.setattr(inf, "houdini", flaky)
    always = False
    rep = infer(build("peterson"), "Mutex")
    assert rep.status == "holds" and rep.proof is not None and rep.proof.status == "holds"
    assert rep.tiers[0].outcome == "unknown" and rep.tiers[-1].outcome == "proved"
    assert calls[0] == rep.tiers[0].tried and calls[1] == rep.tiers[1].tried  # nothing kept
    always = True
    rep = infer(build("peterson"), "Mutex")
    assert rep.status == "unknown" and not rep.lemmas and rep.proof is None
    assert all(t.outcome == "unknown" for t in rep.tiers) and len(rep.tiers) == len(inf.TIERS)
    assert "the solver gave up on a round: canceled" in rep.reason


def test_the_fixpoint_is_the_proof_reported_with_a_shrink_budget_of_zero(tmp_path, monkeypatch):
    """With no time to shrink, Houdini's fixpoint that keeps Mutex is reported proved with
    every candidate it kept: the proof is its last pass (each step case's query unsat with
    exactly those selected) and Init, not the ordinary proof, which is not run; the set printed
    is inductive by that ordinary proof all the same, and the saved file proves Mutex again."""
    from hwcheck.checker.z3 import infer as inf
    from hwcheck.checker.z3.checks import conjuncts, prove

    def no_prove(*args, **kwargs):
        raise AssertionError("the ordinary proof ran")

    spec = build("peterson")
    with monkeypatch.context() as m:
        m.setattr(inf, "prove", no_prove)
        rep = infer(spec, "Mutex", shrink_budget=0.0)
    assert rep.status == "holds" and rep.tiers[-1].outcome == "proved"
    assert rep.shrink is not None and "budget" in rep.shrink.reason and not rep.shrink.steps
    assert len(rep.lemmas) == rep.fixpoint > 5  # every candidate kept (5 once shrunk)
    assert rep.proof is not None and rep.proof.status == "holds"
    assert {n for n, _ in rep.proof.init} >= {"domains", "Mutex"} | {lm.name for lm in rep.lemmas}
    assert all(a.status == "holds" for a in rep.proof.actions)
    assert sum(a.queries for a in rep.proof.actions) > 0
    again = prove(spec, conjuncts(spec, "Mutex", []) + [(lm.name, lm.expr) for lm in rep.lemmas])
    assert again.status == "holds"
    # the command line: exit 0, every kept candidate saved, the file proves Mutex alone
    peterson = str(SPECS / "peterson.py")
    code, out = run("prove", "--spec", peterson, "--invariant", "Mutex", "--infer",
                    "--infer-shrink", "0", "--out", str(tmp_path), "--json", "-q")
    assert code == 0, out
    (res,) = last_json(out)["invariants"]
    assert res["status"] == "holds" and res["inferred"]["fixpoint"] == len(rep.lemmas)
    assert len(res["inferred"]["lemmas"]) == len(rep.lemmas)
    assert res["inferred"]["shrink"]["complete"] is False
    assert sum(t["implied"] for t in res["inferred"]["tiers"]) > 0
    code, out = run("prove", "--spec", peterson, "--invariant", "Mutex", "--lemmas-file",
                    res["inferred"]["file"], "--out", str(tmp_path), "-q")
    assert code == 0 and "verdict: proved Mutex inductive" in out, out


def test_a_candidate_left_out_as_implied_is_implied_by_the_one_named():
    """``candidates.subsumed`` on Peterson's clauses of tiers 2/1, 3/1 and 2/2: each
    candidate it names is true wherever the one it gives is, judged on states drawn at random
    from the declared domains (not only the reachable ones); the one given has fewer literals,
    or as many and fewer bound variables, or as many of both and is listed first, so no chain
    of them comes back on itself."""
    spec = build("peterson")
    layout = Layout.of(spec)
    rows, _, _ = reachable(spec, "Mutex", 10_000)
    ev = K.Evaluator(spec, layout, rows)
    vocab = K.Vocabulary(spec, index_scalars(spec), symmetry_of(spec))
    cands: list[K.Candidate] = []
    for width, nb in ((2, 1), (3, 1), (2, 2)):
        for sizes in K.bound_sets(vocab, nb):
            cands += [c for c in tier_candidates(ev, vocab, sizes, width, 0, 0)
                      if c not in cands]
    sub = K.subsumed(ev, cands)
    assert len(sub) > 10, len(sub)
    rng = np.random.default_rng(1)
    drawn = np.zeros((3000, layout.width), rows.dtype)
    for v in spec.variables:
        cells = int(np.prod(v.shape)) if v.shape else 1
        off = layout.offsets[v.name]
        drawn[:, off:off + cells] = rng.integers(v.lo, v.hi + 1, (3000, cells))
    false = K.falsified(ev, cands, list(drawn))
    for d, c in sub.items():
        assert not (false[d] & ~false[c]).any(), (K.to_source(spec, cands[d]),
                                                   K.to_source(spec, cands[c]))
        assert (len(cands[c].literals), len(cands[c].sizes), c) < \
            (len(cands[d].literals), len(cands[d].sizes), d)  # a strict order: no cycle


def test_a_candidate_implied_by_a_kept_one_waits_outside_the_pool_until_that_one_leaves():
    """Process 0 idle (kept) implies process 0 not critical: that one leaves the pool, and one
    entering that it implies never enters; once process 0 idle has left the pool (dropped),
    both come back; a candidate only entering (not kept yet) leaves nothing out."""
    from hwcheck.checker.z3.infer import TierReport, _shadow

    spec = build("peterson")
    rows, _, _ = reachable(spec, "Mutex", 10_000)
    ev = K.Evaluator(spec, Layout.of(spec), rows)
    pc0 = K.Term("pc", (("c", 0),))
    lit = K.Literal
    idle = (K.Candidate((), (lit("==", pc0, 0),)), "Idle")
    not_crit = (K.Candidate((), (lit("!=", pc0, 3),)), "NotCrit")
    low = (K.Candidate((), (lit("<=", pc0, 2),)), "Low")
    turn = (K.Candidate((), (lit("==", K.Term("turn", ()), 0),)), "Turn0")
    shadow: dict = {}
    tier = TierReport(2, 1, 0, 0, 0, 0, 0, 0.0, "")
    pool, back, added = _shadow(ev, shadow, [idle, not_crit, turn], [], [low], tier)
    assert pool == [idle, turn] and back == [] and added == []
    assert shadow == {not_crit[0]: ("NotCrit", "Idle"), low[0]: ("Low", "Idle")}
    assert tier.implied == 2
    pool, back, added = _shadow(ev, shadow, [turn], [], [], tier)  # Idle dropped
    assert pool == [turn] and sorted(n for _, n in back) == ["Low", "NotCrit"] and not shadow
    pool, back, added = _shadow(ev, shadow, [turn], [], [idle, not_crit], tier)
    assert added == [idle, not_crit] and not shadow  # neither was kept: both enter


def test_each_set_the_shrinking_keeps_is_inductive_and_smaller(monkeypatch):
    """Shrinking Peterson's fixpoint (its candidates after the first tier's counterexample):
    by the unsat cores alone, then one lemma at a time; each set it keeps is a subset of the
    one before, checked inductive on the Houdini solvers, and the ordinary proof agrees; with
    no time left it keeps the fixpoint and says why."""
    from hwcheck.checker.z3 import infer as inf
    from hwcheck.checker.z3.checks import conjuncts, prove

    spec = build("peterson")
    rep = infer(spec, "Mutex", shrink_budget=0.0)
    target = conjuncts(spec, "Mutex", [])
    pool = [(lm.name, lm.expr) for lm in rep.lemmas]
    terms = inf.Terms(spec)
    h = inf.houdini(spec, target, pool, 60.0, None, terms=terms)
    assert h.status == "holds" and set(h.kept) == {n for n, _ in pool}
    sizes = []
    for greedy in (0, inf.GREEDY):
        monkeypatch.setattr(inf, "GREEDY", greedy)
        sh = inf.shrink(spec, h, terms, {"Mutex"}, 60.0, 60.0)
        assert not sh.reason and sh.proof is not None and sh.proof.status == "holds"
        assert set(sh.kept) < set(h.kept) and [s[1] for s in sh.steps] == \
            sorted((s[1] for s in sh.steps), reverse=True)
        chosen = [(n, e) for n, e in pool if n in set(sh.kept)]
        assert prove(spec, target + chosen).status == "holds"
        sizes.append(len(sh.kept))
    assert sizes[1] <= sizes[0]
    sh = inf.shrink(spec, h, terms, {"Mutex"}, 0.0, 60.0)
    assert sh.kept == h.kept and sh.proof is None and "budget" in sh.reason
