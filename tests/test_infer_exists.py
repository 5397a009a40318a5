"""Existential candidates of ``prove --infer``: ``forall i: exists j: clause`` (for every member
some member, or some offset, makes a literal true), filtered with numpy as the interpreter
judges them, written as ``exists`` in the spec language."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from hwcheck.checker import protocols
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.z3 import candidates as K
from hwcheck.checker.z3.checks import index_scalars
from hwcheck.checker.z3.infer import reachable

SPECS = Path(__file__).parent / "specs"


def test_the_existential_filter_agrees_with_the_interpreter():
    """Every clause of one and two literals over Peterson's two processes, the second bound
    variable existential: the filter keeps it exactly when the interpreter finds it true in
    every explored state (a smaller true clause or a tautology aside); no kept clause compares
    the existential variable with a bound variable only (``exists j: j == i`` says nothing)."""
    spec = protocols.build(protocols.load(str(SPECS / "peterson.py")), {})
    rows, _, _ = reachable(spec, "Mutex", 10_000)
    ev = K.Evaluator(spec, Layout.of(spec), rows)
    vocab = K.Vocabulary(spec, index_scalars(spec))
    interp = Interpreter(spec)

    def true(c: K.Candidate) -> bool:
        return all(interp.holds(K.to_expr(spec, c), r) for r in rows)

    sets = K.bound_sets(vocab, 2, 1)
    assert sets == [(2, 2)]
    (sizes,) = sets
    lits = K.existential_literals(sizes, vocab.literals(sizes), 1)
    assert all(not (lit.a.var is None and isinstance(lit.b, K.Term) and lit.b.var is None)
               for lit in lits)
    # nor one that j taken equal to i makes a comparison of a term with itself
    pc_i, pc_j = K.Term("pc", (("b", 0),)), K.Term("pc", (("b", 1),))
    assert K.Literal("!=", pc_i, pc_j) in lits
    assert not {K.Literal(op, pc_i, pc_j) for op in ("==", "<=")} & set(lits)
    kept = set(K.survivors(ev, sizes, vocab.literals(sizes), 2, exists=1))
    assert kept and all(c.exists == 1 for c in kept)
    checked = found = 0
    for pair in list(itertools.combinations(lits, 2))[::9] + [(x,) for x in lits]:
        if not K.uses_all(sizes, pair):
            continue
        c = K.Candidate(sizes, tuple(pair), 1)
        truth = true(c)
        if c in kept:
            assert truth, K.to_source(spec, c)
            found += 1
        elif truth:
            # a clause containing a true smaller one (with fewer variables, maybe) says less
            smaller = len(pair) > 1 and any(true(K.Candidate(sizes, (x,), 1)) for x in pair)
            assert smaller or K._tautology(ev, sizes, pair), K.to_source(spec, c)
        checked += 1
    assert checked >= 30 and found >= 1
    c = next(iter(sorted(kept, key=repr)))
    assert K.to_source(spec, c).startswith("forall(2, lambda i: exists(2, lambda j: ")
    # a counterexample row is judged the same way: a kept clause is false on no reachable row
    assert not any(K.false_on(ev, sorted(kept, key=repr), [rows[0], rows[-1]]))


def test_the_existential_conjunction_filter_agrees_with_the_interpreter():
    """Every clause of at most one guard and a conjunction of one or two literals over
    Peterson's two processes, ``forall i: g | exists j: a & b``: the filter keeps it exactly when
    the interpreter finds it true in every explored state, unless its guard holds alone, the
    witness ``j = i`` makes its conjunction true whatever the state, or it leaves ``i`` unused;
    a counterexample row is judged the same way."""
    spec = protocols.build(protocols.load(str(SPECS / "peterson.py")), {})
    rows, _, _ = reachable(spec, "Mutex", 10_000)
    ev = K.Evaluator(spec, Layout.of(spec), rows)
    vocab = K.Vocabulary(spec, index_scalars(spec))
    interp = Interpreter(spec)
    sizes = (2, 2)

    def true(c: K.Candidate) -> bool:
        return all(interp.holds(K.to_expr(spec, c), r) for r in rows)

    guards = K.guard_literals(vocab, sizes[:1], vocab.literals(sizes[:1]))
    conj = K.conj_literals(sizes, vocab.literals(sizes))
    assert guards and conj
    assert all(isinstance(g.b, int) or g.op in ("is", "not") for g in guards)
    assert all(any(1 in t.bounds() for t in lit.terms()) for lit in conj)
    kept = set(K.conj_survivors(ev, sizes, guards, conj, 2, 2, minimal=False))
    assert kept and all(c.exists == 1 and c.conj for c in kept)
    pc_i, pc_j = K.Term("pc", (("b", 0),)), K.Term("pc", (("b", 1),))
    same = K.Literal("==", pc_i, pc_j)
    checked = found = 0
    for gs in [()] + [(g,) for g in guards]:
        for size in (1, 2):
            for atom in itertools.combinations(conj, size):
                c = K.Candidate(sizes, gs, 1, atom)
                truth = true(c)
                if c in kept:
                    assert truth, K.to_source(spec, c)
                    found += 1
                elif truth:
                    alone = bool(gs) and true(K.Candidate(sizes[:1], gs))
                    witnessed = all(K._rebind(lit.a, 1, 0) == K._rebind(lit.b, 1, 0)
                                    for lit in atom if isinstance(lit.b, K.Term)) and \
                        all(isinstance(lit.b, K.Term) and lit.op == "==" for lit in atom)
                    assert alone or witnessed or not K.uses_all(sizes, gs + atom), \
                        K.to_source(spec, c)
                checked += 1
    assert checked >= 100 and found >= 5
    # pc[i] == pc[j] alone is true at j = i: no kept clause says only that
    assert not any(c.conj == (same,) for c in kept)
    c = sorted(kept, key=lambda c: (len(c.literals), -len(c.conj), repr(c)))[0]
    src = K.to_source(spec, c)
    assert src.startswith("forall(2, lambda i: ") and "exists(2, lambda j: " in src
    assert not any(K.false_on(ev, sorted(kept, key=repr), [rows[0], rows[-1]]))
    # one that fails: false_on finds the row the interpreter finds it false on
    wrong = K.Candidate(sizes, (), 1, (K.Literal("==", pc_j, 3),))
    bad = [r for r in rows if not interp.holds(K.to_expr(spec, wrong), r)]
    assert bad and K.false_on(ev, [wrong], [bad[0]]) == [True]
    assert K.false_on(ev, [wrong], [r for r in rows if interp.holds(K.to_expr(spec, wrong),
                                                                    r)][:1]) == [False]


@pytest.mark.slow  # LogCopy's kernel, compiled for this test alone in the fast tier
def test_an_existential_conjunction_proves_what_no_clause_of_the_first_tier_does():
    """LogCopy's Matching needs "the record in flight is held by some log after the same first
    record": the first tier meets a counterexample to induction at Append, the existential
    conjunction tier proves it with that lemma (checked again by the ordinary proof). Two ids
    keep it cheap (with two, wider clauses over the order of the ids may prove it too: the
    slow test below, with three, shows no tier of clauses does)."""
    from hwcheck.checker.z3.checks import symmetry_of
    from hwcheck.checker.z3.infer import infer

    spec = protocols.build(protocols.load(str(SPECS / "log_copy.py")), {"ids": 2})
    sym = symmetry_of(spec)
    rep = infer(spec, "Matching", symmetry=sym, tiers=((2, 1), (4, 2, 1, 2)))
    assert rep.status == "holds", rep.reason
    assert [t.outcome for t in rep.tiers] == ["cti", "proved"]
    assert rep.tiers[1].conj == 2 and rep.tiers[1].generated > 0
    assert rep.proof is not None and rep.proof.status == "holds"
    held = [lm.source for lm in rep.lemmas if "exists(" in lm.source]
    assert any("~pending[i]" in s and " & " in s and "resp[i]" in s for s in held), \
        [lm.source for lm in rep.lemmas]


@pytest.mark.slow
def test_log_copy_is_unknown_without_the_conjunction_tier_and_proved_with_it(tmp_path):
    """``prove --infer`` with every tier, three ids: each tier of clauses (the existential one
    of three literals too) meets a counterexample to induction, the existential conjunction
    tier proves Matching; the saved file proves it again with ``--lemmas-file``."""
    from click.testing import CliRunner

    from hwcheck.checker.cli.main import main

    spec = str(SPECS / "log_copy.py")
    args = ["prove", "--spec", spec, "--invariant", "Matching"]
    res = CliRunner().invoke(main, args + ["--infer", "--out", str(tmp_path), "--json", "-q"])
    assert res.exit_code == 0, res.output
    (got,) = json.loads(res.output.strip().splitlines()[-1])["invariants"]
    tiers = got["inferred"]["tiers"]
    assert [t["outcome"] for t in tiers[:-1]] == ["cti"] * (len(tiers) - 1), tiers
    assert tiers[-1]["outcome"] == "proved" and tiers[-1]["conjunction"] == 2, \
        (tiers, got["inferred"]["lemmas"])
    assert all(t["conjunction"] == 0 for t in tiers[:-1])
    saved = got["inferred"]["file"]
    res = CliRunner().invoke(main, args + ["--lemmas-file", saved, "--out", str(tmp_path), "-q"])
    assert res.exit_code == 0 and "verdict: proved Matching inductive" in res.output, res.output
