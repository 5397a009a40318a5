"""TLC's and the community's standard modules that hwcheck gives natively beyond the basic ones
(Randomization, TLC's RandomElement, TLCExt, IOUtils, Json, Folds, BagsExt), subexpression
references ``Name!:``, and an operator constant passed through two instances: each with TLC's
meaning, on tiny modules checked with the evaluator and the reference search."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwcheck.checker.tla.cfg import parse_cfg
from hwcheck.checker.tla.evaluate import Evaluator
from hwcheck.checker.tla.explore import explore, model
from hwcheck.checker.tla.modules import load
from hwcheck.checker.tla.syntax import OpApp, TlaError
from hwcheck.checker.tla.values import Fcn, ModelValue, tup


def evaluate(folder: Path, extends: str, body: str, name: str = "e") -> object:
    """The value of ``name`` in module E (``EXTENDS extends``, then ``body``)."""
    (folder / "E.tla").write_text(f"---- MODULE E ----\nEXTENDS {extends}\n{body}\n====\n")
    ev = Evaluator(load(folder / "E.tla", parse_cfg("", "E.cfg")))
    return ev.value(OpApp(ev.definition(name).d.pos, name), {})


def test_a_subexpression_reference_is_the_body_of_its_definition(tmp_path: Path) -> None:
    """``T!:`` (Paxos's ``ASSUME QuorumNonEmpty!:``), ``Op(a)!:`` and ``I!Op!:``."""
    (tmp_path / "Inner.tla").write_text("---- MODULE Inner ----\nK == 7\n====\n")
    body = ("THEOREM Pos == 2 > 1\nASSUME Pos!:\nSq(x) == x * x\nI == INSTANCE Inner\n"
            "e == <<Pos!: , Sq(3)!:, I!K!: >>")  # `!:>>` would read as `:>`
    assert evaluate(tmp_path, "Naturals", body) == tup([True, 9, 7])
    with pytest.raises(TlaError, match=r"F.tla:4:8: this ASSUME is false"):
        (tmp_path / "F.tla").write_text("---- MODULE F ----\nEXTENDS Naturals\n"
                                        "THEOREM Neg == 1 > 2\nASSUME Neg!:\nVARIABLE x\n"
                                        "Init == x = 0\nNext == x' = x\n====\n")
        model(tmp_path / "F.tla", parse_cfg("INIT Init NEXT Next", "F.cfg"))


def test_an_instances_operator_constant_given_by_the_instance_above(tmp_path: Path) -> None:
    """Sailfish instantiates BlockDag, whose ``Leader(_)`` is Sailfish's own constant, which
    the root (TLCSailfish1) gives as an operator: the root's operator is applied. And an
    operator constant given as a LAMBDA."""
    (tmp_path / "Dag.tla").write_text("---- MODULE Dag ----\nCONSTANT Leader(_)\n"
                                      "LeaderOf(r) == <<Leader(r), r>>\n====\n")
    (tmp_path / "Mid.tla").write_text("---- MODULE Mid ----\nCONSTANT Leader(_)\n"
                                      "INSTANCE Dag\n====\n")
    body = "Leader(r) == r * 10\nINSTANCE Mid\ne == LeaderOf(2)"
    assert evaluate(tmp_path, "Naturals", body) == tup([20, 2])
    # given as a LAMBDA (TLC/TestGraphs: INSTANCE TLCMC WITH Constraint <- LAMBDA s, l : TRUE)
    body = "D == INSTANCE Dag WITH Leader <- LAMBDA r : r + 1\ne == D!LeaderOf(2)"
    assert evaluate(tmp_path, "Naturals", body) == tup([3, 2])


def test_randomization_draws_reproducibly_with_tlcs_meaning(tmp_path: Path) -> None:
    body = ("R(x) == RandomElement(1..100000)\n"
            "e == <<RandomSubset(3, 1..10), RandomSetOfSubsets(4, 2, 1..6),\n"
            "       RandomSubsetSet(5, \"0.5\", 1..6), TestRandomSetOfSubsets(3, 1, 1..4),\n"
            "       RandomElement(SUBSET (1..5)), RandomElement([a : 1..3, b : {9}]),\n"
            "       {R(1), R(1), R(1)}>>")
    ext = "Naturals, FiniteSets, TLC, Randomization"
    first = evaluate(tmp_path, ext, body)
    assert evaluate(tmp_path, ext, body) == first  # seeded on each load: the same values
    assert isinstance(first, Fcn)
    sub, sets, ssets, sizes, subset, rec, draws = first.seq()
    assert isinstance(sub, frozenset) and len(sub) == 3 and sub <= frozenset(range(1, 11))
    for s in (sets, ssets):
        assert isinstance(s, frozenset) and 1 <= len(s) <= 5
        assert all(isinstance(x, frozenset) and x <= frozenset(range(1, 7)) for x in s)
    assert isinstance(sizes, Fcn) and len(sizes.seq()) == 5
    assert all(isinstance(n, int) and 1 <= n <= 3 for n in sizes.seq())
    assert isinstance(subset, frozenset) and subset <= frozenset(range(1, 6))
    assert isinstance(rec, Fcn) and rec.map["b"] == 9 and rec.map["a"] in (1, 2, 3)
    # a random choice is made at each evaluation: never kept as an operator's memo
    assert isinstance(draws, frozenset) and len(draws) == 3
    for bad, message in [("RandomSubset(4, 1..3)", "the set has only 3 element"),
                         ("RandomSubsetSet(1, \"2\", 1..3)", "not a string giving a probability"),
                         ("RandomElement({})", "RandomElement of the empty set")]:
        with pytest.raises(TlaError, match=message):
            evaluate(tmp_path, ext, f"e == {bad}")


def test_a_constant_definition_draws_once_and_an_action_at_each_evaluation(
        tmp_path: Path) -> None:
    """TLC evaluates a definition without parameters that reads no variable once, when it
    starts (MisraReachability's ``RandomSuccSet``): every reading of it is the one draw. A
    draw in an action is made each time the action is evaluated."""
    body = ("C == RandomElement(1..100000)\nD == <<C, 1>>\n"
            "e == {C, C, D[1], LET x == C IN x}\nVARIABLE y\nInit == y = 0\n"
            "Next == y' = RandomElement(1..100000)")
    ext = "Naturals, TLC"
    got = evaluate(tmp_path, ext, body)
    assert isinstance(got, frozenset) and len(got) == 1
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg("", "E.cfg")))
    nxt = ev.definition("Next").d.body
    drawn = {s["y"] for _ in range(3) for _, s in ev.successors(nxt, {"y": 0})}
    assert len(drawn) == 3


def test_tlcext_operators_and_the_refused_ones(tmp_path: Path) -> None:
    body = ("e == <<AssertEq(1, 1), AssertEq(1, 2), TLCModelValue(\"m\"), TLCNoOp(4),\n"
            "       TLCDefer(FALSE), TLCCache(5, {}), PickSuccessor(TRUE)>>\n"
            "t == Trace\np == PickSuccessor(FALSE)")
    assert evaluate(tmp_path, "TLCExt", body) == tup(
        [True, False, ModelValue("m"), 4, True, 5, True])
    with pytest.raises(TlaError, match=r"E.tla:5:6: unsupported operator Trace: "):
        evaluate(tmp_path, "TLCExt", body, "t")
    with pytest.raises(TlaError, match=r"E.tla:6:6: unsupported operator PickSuccessor: "):
        evaluate(tmp_path, "TLCExt", body, "p")


def test_ioutils_reads_the_environment_and_runs_no_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TLC/TestGraphs's ``IF "K" \\in DOMAIN IOEnv THEN atoi(IOEnv.K) ELSE 1``."""
    monkeypatch.setenv("K", "12")
    body = ("W == IF \"K\" \\in DOMAIN IOEnv THEN atoi(IOEnv.K) ELSE 1\n"
            "e == <<W, atoi(\"-3\")>>\nx == IOExec(<<\"touch\", \"ran\">>)\nbad == atoi(\"1x\")")
    assert evaluate(tmp_path, "IOUtils", body) == tup([12, -3])
    monkeypatch.delenv("K")
    assert evaluate(tmp_path, "IOUtils", body) == tup([1, -3])
    with pytest.raises(TlaError, match="unsupported operator IOExec: hwcheck never runs"):
        evaluate(tmp_path, "IOUtils", body, "x")
    assert not (Path.cwd() / "ran").exists()
    with pytest.raises(TlaError, match=r"atoi\(\"1x\"\): not a string of decimal digits"):
        evaluate(tmp_path, "IOUtils", body, "bad")


def test_an_invariants_unevaluated_disjunct_may_serialize_a_trace(tmp_path: Path) -> None:
    """EWD840_json's ``JsonInv == RealInv:: Inv \\/ Export:: JsonSerialize(..., Trace)``: the
    second disjunct is read only where Inv is false, and is then refused with one line (its
    argument Trace's, evaluated first)."""
    (tmp_path / "J.tla").write_text(
        "---- MODULE J ----\nEXTENDS Naturals, TLC, TLCExt, Json\nCONSTANT Lim\nVARIABLE x\n"
        "Init == x = 0\nNext == x' = (x + 1) % 3\nInv == x < Lim\n"
        "JsonInv == \\/ RealInv:: Inv\n"
        "           \\/ Export:: /\\ JsonSerialize(\"t.json\", Trace)\n"
        "                         /\\ TLCSet(\"exit\", TRUE)\n====\n")
    cfg = "INIT Init NEXT Next INVARIANT JsonInv CONSTANT Lim = {}"
    res = explore(model(tmp_path / "J.tla", parse_cfg(cfg.format(3), "J.cfg")))
    assert (res.distinct, res.violations, res.complete) == (3, {}, True)
    with pytest.raises(TlaError, match=r"J.tla:9:51: unsupported operator Trace: "):
        explore(model(tmp_path / "J.tla", parse_cfg(cfg.format(2), "J.cfg")))
    assert not (tmp_path / "t.json").exists()


def test_bagsext_and_folds(tmp_path: Path) -> None:
    body = ("B == BagAdd(BagAdd(SetToBag({1, 2}), 1), 3)\n"
            "e == <<B, BagRemove(B, 1), BagRemove(B, 2), BagRemove(B, 9), BagRemoveAll(B, 1),\n"
            "       SumBag(B), ProductBag(BagAdd(B, 3)), FoldBag(LAMBDA x, y : <<x, y>>, 0, B),\n"
            "       MapThenFoldSet(LAMBDA x, y : <<x, y>>, 0, LAMBDA x : 2 * x,\n"
            "                      LAMBDA S : CHOOSE x \\in S : TRUE, {1, 2}),\n"
            "       MapThenFoldBag(LAMBDA x, y : <<x, y>>, 0, LAMBDA x : 2 * x,\n"
            "                      LAMBDA S : CHOOSE x \\in S : TRUE, SetToBag({1, 2}))>>")
    got = evaluate(tmp_path, "Naturals, Bags, BagsExt, Folds", body)
    bag = Fcn({1: 2, 2: 1, 3: 1})
    # TLC's values (its FoldBag is the Java override's left fold, each copy once, not the
    # module's definition; MapThenFoldSet the first element outermost)
    assert got == tup([bag, Fcn({1: 1, 2: 1, 3: 1}), Fcn({1: 2, 3: 1}), bag,
                       Fcn({2: 1, 3: 1}), 7, 18,
                       tup([tup([tup([tup([0, 1]), 1]), 2]), 3]),
                       tup([2, tup([4, 0])]), tup([tup([0, 2]), tup([tup([0, 4]), 0])])])
