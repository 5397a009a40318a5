"""``prove --infer`` on Kafka without the shipped lemmas: which of the lemmas the proof of
CommittedNotLost needs (the shipped proof's unsat core at R=2, M=2, E=3) the templates reach.

Each of them but PendingRecordHeld is stated here as the template clause that says it at this
size (a log's offsets by constants or a bound offset, the leader's cells through ``leader``, the
count ``leo(f)`` by the cells of a two-record log), its literals looked up in the vocabulary, the
clause filtered over the reachable states; given those clauses and PendingRecordHeld alone,
Houdini proves CommittedNotLost. PendingRecordHeld ("some log holds the record in flight, after
the same records as the follower's") is an existential over a conjunction; at M=2 two lemmas say
it, and they prove CommittedNotLost in its place: ``HeldFirst`` (some log holds the record in
flight first) and ``HeldSecond`` (some log holds the follower's record and the one in flight
after it), three guards and an existential conjunction of one and of two literals, candidates
of the existential conjunction tier."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import kafka

from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.z3 import candidates as K
from hwcheck.checker.z3.checks import conjuncts, index_scalars, symmetry_of
from hwcheck.checker.z3.infer import houdini, reachable, tier_candidates

T, L, C = K.Term, K.Literal, K.Candidate
RS, OS = -2, 2  # the replicas (renamed by the symmetry) and the offsets, at R=2 and M=2
BI, BJ = ("b", 0), ("b", 1)
LEADER = ("s", "leader")


def cell(var: str, *index) -> K.Term:
    return T(var, tuple(index))


def c(n: int):
    return ("c", n)


# the shipped lemma -> the clause that says it at R=2, M=2, E=3
SHAPES = {
    "LeaderNotPending": C((), (L("not", cell("pending", LEADER)),)),
    "PendingRoom": C((RS,), (L("not", cell("pending", BI)), L("==", cell("respRec", BI), 0),
                            L("==", cell("log", BI, c(1)), 0))),
    "LogPrefix": C((RS,), (L("!=", cell("log", BI, c(0)), 0), L("==", cell("log", BI, c(1)), 0))),
    "LogSorted": C((RS,), (L("==", cell("log", BI, c(1)), 0),
                          L("<=", cell("log", BI, c(0)), cell("log", BI, c(1))))),
    "LogBelowEpoch": C((RS, OS), (L("<=", cell("log", BI, BJ), cell("epoch")),)),
    "LogMatching": C((RS, RS), (L("==", cell("log", BI, c(1)), 0),
                              L("!=", cell("log", BI, c(1)), cell("log", BJ, c(1))),
                              L("==", cell("log", BI, c(0)), cell("log", BJ, c(0))))),
    "EpochStartsAgree": C((RS, RS), (L("==", cell("log", BI, c(1)), 0),
                                   L("!=", cell("log", BI, c(1)), cell("log", BJ, c(0))),
                                   L("==", cell("log", BI, c(0)), cell("log", BI, c(1))))),
    "SyncedPrefix": C((RS, OS), (L("not", cell("synced", BI)), L("==", cell("log", BI, BJ), 0),
                               L("==", cell("log", BI, BJ), cell("log", LEADER, BJ)))),
    "CurrentEpochFromLeader": C((RS, OS), (L("!=", cell("log", BI, BJ), cell("epoch")),
                                         L("==", cell("log", LEADER, BJ), cell("epoch")))),
    # IsrRleo's two conclusions, each its own clause (true for the leader too at this size)
    "IsrRleo": C((RS, OS), (L("not", cell("isr", BI)), L("<=", cell("rleo", BI), T(None, (), 1)),
                          L("==", cell("log", BI, BJ), cell("log", LEADER, BJ)))),
    "IsrRleoHeld": C((RS, OS), (L("not", cell("isr", BI)),
                                L("<=", cell("rleo", BI), T(None, (), 1)),
                                L("!=", cell("log", BI, BJ), 0))),
    "IsrHasCommitted": C((RS, OS), (L("not", cell("isr", BI)), L("==", cell("committed", BJ), 0),
                                  L("==", cell("log", BI, BJ), cell("committed", BJ)))),
    "CurrentEpochCommittedBelowHw": C((OS,), (L("!=", cell("committed", BI), cell("epoch")),
                                             L("<", T(None, (), 0), cell("hw", LEADER)))),
    "NoOutOfRange": C((RS,), (L("!=", cell("respRec", BI), 4),)),
}


def _spec():
    return kafka(truncation="kip-279", isr_expansion="epoch-start")


def _present(lit: K.Literal, lits: set[K.Literal]) -> bool:
    """The literal, or the same comparison written the other way round, is in ``lits``."""
    if lit in lits:
        return True
    if not isinstance(lit.b, K.Term):
        return False
    flip = {"==": "==", "!=": "!=", "<": None, "<=": None}[lit.op]
    if flip is not None:
        return L(flip, lit.b, lit.a) in lits
    return False


def test_the_templates_say_every_needed_lemma_but_the_existential():
    """Every literal of those clauses is in the vocabulary of its bound variables: an epoch
    (1..E) is compared with a log's epochs and the committed ones (0..E, 0 for none), as an
    offset with the leader's HW. Values of different kinds stay apart: an HW (0..M) is not
    compared with an epoch."""
    spec = _spec()
    vocab = K.Vocabulary(spec, index_scalars(spec), symmetry_of(spec))
    for name, cand in SHAPES.items():
        lits = set(vocab.literals(cand.sizes))
        missing = [lit for lit in cand.literals if not _present(lit, lits)]
        assert not missing, (name, missing)
        assert K.uses_all(cand.sizes, cand.literals), name
    hw_epoch = L("<=", cell("hw", BI), cell("epoch"))
    assert not _present(hw_epoch, set(vocab.literals((RS,))))


# PendingRecordHeld at M=2, for a follower whose log holds no record: some log holds the
# record in flight first; for one holding a record: some log holds it and the record in flight
# after it. Each is three guards over the follower and an existential conjunction.
_GUARD = (L("not", cell("pending", BI)), L("==", cell("respRec", BI), 0))
HELD_FIRST = C((RS, RS), _GUARD + (L("!=", cell("log", BI, c(0)), 0),), 1,
               (L("==", cell("log", BJ, c(0)), cell("respRec", BI)),))
HELD_SECOND = C((RS, RS), _GUARD + (L("==", cell("log", BI, c(0)), 0),), 1,
                (L("==", cell("log", BI, c(0)), cell("log", BJ, c(0))),
                 L("==", cell("log", BJ, c(1)), cell("respRec", BI))))


@pytest.mark.slow
def test_the_needed_lemmas_as_clauses_hold_and_prove_committed_not_lost_with_the_existential():
    """Each clause holds in every reachable state (the filter keeps it, or a smaller clause
    that says more); with them and the shipped PendingRecordHeld alone Houdini keeps them all
    and proves CommittedNotLost; without PendingRecordHeld it meets a counterexample to
    induction; with PendingRecordHeld's two cases at this size, as the existential conjunction
    tier generates them, in its place, it proves it."""
    spec = _spec()
    sym = symmetry_of(spec)
    rows, complete, path = reachable(spec, "CommittedNotLost", 100_000)
    assert complete and path is None
    ev = K.Evaluator(spec, Layout.of(spec), rows)
    for name, cand in SHAPES.items():
        for b in itertools.product(*(range(abs(n)) for n in cand.sizes)):
            assert np.logical_or.reduce([ev.literal(lit, b) for lit in cand.literals]).all(), \
                (name, b)
    target = conjuncts(spec, "CommittedNotLost", [])
    pool = [(n, K.to_expr(spec, cand)) for n, cand in SHAPES.items()]
    held = [x for x in conjuncts(spec, "CommittedNotLost", None) if x[0] == "PendingRecordHeld"]
    h = houdini(spec, target, pool + held, 60.0, sym)
    assert h.status == "holds" and "PendingRecordHeld" in h.kept, h.kept
    h = houdini(spec, target, pool, 60.0, sym)
    assert h.status == "violated" and h.cti is not None
    # PendingRecordHeld's two cases at this size, candidates of the existential conjunction
    # tier (they hold in every reachable state), prove it in its place
    vocab = K.Vocabulary(spec, index_scalars(spec), sym)
    tier = {(frozenset(x.literals), x.conj)
            for x in tier_candidates(ev, vocab, (RS, RS), 4, 1, 2)}
    for held in (HELD_FIRST, HELD_SECOND):
        assert (frozenset(held.literals), held.conj) in tier, K.to_source(spec, held)
    assert K.to_source(spec, HELD_SECOND).endswith(
        "exists(2, lambda j: (log[i, 0] == log[j, 0]) & (log[j, 1] == respRec[i]), 'j'), 'i')")
    split = [("HeldFirst", K.to_expr(spec, HELD_FIRST)),
             ("HeldSecond", K.to_expr(spec, HELD_SECOND))]
    h = houdini(spec, target, pool + split, 60.0, sym)
    assert h.status == "holds" and {"HeldFirst", "HeldSecond"} <= set(h.kept), h.kept
