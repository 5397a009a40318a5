"""Existential candidates of ``prove --infer``: ``forall i: exists j: clause`` (for every member
some member, or some offset, makes a literal true), filtered with numpy as the interpreter
judges them, written as ``exists`` in the spec language."""

from __future__ import annotations

import itertools
from pathlib import Path

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
