"""The TLA+ evaluator: values with TLC's equalities, the fragment's expressions, and actions
enumerated as every way they are satisfied, with their step labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwcheck.checker.tla.cfg import parse_cfg
from hwcheck.checker.tla.evaluate import Evaluator, Label
from hwcheck.checker.tla.modules import load
from hwcheck.checker.tla.syntax import OpApp, TlaError
from hwcheck.checker.tla.values import Fcn, ModelValue, key, record, show, sorted_values, tup

HEADER = "---- MODULE E ----\nEXTENDS Integers, Sequences, FiniteSets, TLC, Bags, " \
         "SequencesExt, FiniteSetsExt, Functions\nCONSTANTS A, B\n"


def evaluator(tmp_path: Path, body: str, cfg: str = "CONSTANTS A = a B = {1, 2}") -> Evaluator:
    (tmp_path / "E.tla").write_text(HEADER + body + "\n====\n")
    return Evaluator(load(tmp_path / "E.tla", parse_cfg(cfg, "E.cfg")))


def value(tmp_path: Path, expr: str) -> object:
    ev = evaluator(tmp_path, f"e == {expr}")
    return ev.value(OpApp(ev.definition("e").d.pos, "e"), {})


def test_values_have_tlcs_equalities() -> None:
    assert tup([7, 8]) == Fcn({1: 7, 2: 8})
    assert record([("a", 1)]) == Fcn({"a": 1})
    assert hash(tup([7, 8])) == hash(Fcn({2: 8, 1: 7}))
    assert ModelValue("m") == ModelValue("m") and ModelValue("m") != "m"
    assert show(Fcn({1: frozenset({2, 1}), 2: record([("b", True)])})) == \
        "<<{1, 2}, [b |-> TRUE]>>"
    assert sorted([frozenset({3}), 2, "s", True], key=key) == [True, 2, "s", frozenset({3})]
    # the canonical order, with and without the shortcut for elements all of one kind
    for items in ([3, -1, 2], ["b", "a"], [True, False], [ModelValue("n"), ModelValue("m")],
                  [2, True, "a", ModelValue("m"), frozenset({1}), tup([1])], [1, "a", 0]):
        assert sorted_values(items) == sorted(items, key=key)


CASES = [
    # % binds more loosely than + and - in TLA+ (precedence 10-11), and -. than \div
    ("1 + 2 * 3 - 4 \\div 3 - 7 % 3", 2), ("-3 \\div 2", -1), ("(-3) \\div 2", -2),
    ("(-7) % 3", 2), ("2 ^ 10", 1024),
    ("{1, 2} \\cup {3} \\ {1}", frozenset({2, 3})), ("{1, 2} \\cap {2, 3}", frozenset({2})),
    ("{x \\in 1..5 : x % 2 = 0}", frozenset({2, 4})), ("{x * x : x \\in 1..3}",
                                                        frozenset({1, 4, 9})),
    ("{<<x, y>> : x \\in 1..2, y \\in {3}}", frozenset({tup([1, 3]), tup([2, 3])})),
    ("SUBSET {1, 2} = {{}, {1}, {2}, {1, 2}}", True), ("UNION {{1}, {2, 3}}",
                                                      frozenset({1, 2, 3})),
    ("Cardinality({1, 2} \\X {3, 4, 5})", 6), ("{1} \\X {2} \\X {3}",
                                               frozenset({tup([1, 2, 3])})),
    ("{1, 2} \\subseteq 1..3 /\\ ~({1, 4} \\subseteq 1..3)", True),
    ("<<1, 2>> = [i \\in 1..2 |-> i]", True), ("[a |-> 1] = (\"a\" :> 1)", True),
    ("[f EXCEPT ![2] = @ * 10] = <<1, 20>>", None),
    ("[[a |-> <<1, 2>>, b |-> 0] EXCEPT !.a[2] = 9, !.b = @ + 1]",
     record([("a", tup([1, 9])), ("b", 1)])),
    ("[[a |-> 1] EXCEPT ![\"z\"] = 2]", record([("a", 1)])),  # outside the domain: unchanged
    ("DOMAIN [x \\in {3, 4} |-> 0]", frozenset({3, 4})), ("[x, y \\in 1..2 |-> x + y][2, 2]", 4),
    ("(1 :> \"a\" @@ 2 :> \"b\" @@ 1 :> \"c\")[1]", "a"),
    ("Append(<<1>>, 2) \\o Tail(<<7, 8>>)", tup([1, 2, 8])), ("Len(SubSeq(<<1, 2, 3>>, 2, 3))",
                                                              2),
    ("Head(SelectSeq(<<1, 2, 3, 4>>, IsEven))", 2), ("<<1, 2>> \\in Seq({1, 2})", True),
    ("CHOOSE x \\in 1..10 : x * x > 10", 4), ("CASE 1 = 2 -> \"a\" [] OTHER -> \"b\"", "b"),
    ("LET sq(x) == x * x  n == 3 IN sq(n) + n", 12), ("Fact(5)", 120), ("fact[5]", 120),
    ("\\E x \\in 1..3 : \\A y \\in 1..x : y < 3", True),
    ("\\A <<x, y>> \\in {1, 2} \\X {3} : x < y", True),
    ("IF A = A THEN B ELSE {}", frozenset({1, 2})), ("A \\in {A} /\\ A # \"a\"", True),
    ("[a : {1, 2}, b : {TRUE}] = {[a |-> 1, b |-> TRUE], [a |-> 2, b |-> TRUE]}", True),
    ("Cardinality([{1, 2} -> {3, 4, 5}])", 9), ("[1..2 -> {0}] = {<<0, 0>>}", True),
    ("(SetToBag({1, 2}) (+) SetToBag({2})) = (1 :> 1 @@ 2 :> 2)", True),
    ("BagCardinality(SetToBag({1, 2}) (+) SetToBag({2}))", 3),
    ("Max({3, 1, 2}) + Min({3, 1, 2}) + SumSet({1, 2})", 7),
    ("FoldSet(Plus, 0, {1, 2, 3})", 6), ("Reverse(<<1, 2>>) = <<2, 1>> /\\ Last(<<4, 5>>) = 5",
                                          True),
    ("Range(<<3, 3, 4>>)", frozenset({3, 4})), ("Permutations({1, 2}) = {<<1, 2>>, <<2, 1>>}",
                                               True),
    ("42 \\in Nat /\\ -1 \\notin Nat /\\ -1 \\in Int /\\ \"s\" \\in STRING", True),
    ("(FALSE => 1 = \"a\") /\\ (TRUE <=> ~FALSE)", True),
]

LIBRARY = """
IsEven(x) == x % 2 = 0
Plus(a, b) == a + b
f == <<1, 2>>
RECURSIVE Fact(_)
Fact(n) == IF n = 0 THEN 1 ELSE n * Fact(n - 1)
fact[n \\in Nat] == IF n = 0 THEN 1 ELSE n * fact[n - 1]
"""


@pytest.mark.parametrize("expr, expected", CASES, ids=[c[0] for c in CASES])
def test_expressions(tmp_path: Path, expr: str, expected: object) -> None:
    ev = evaluator(tmp_path, LIBRARY + f"e == {expr}")
    got = ev.value(OpApp(ev.definition("e").d.pos, "e"), {})
    assert got == (True if expected is None else expected)
    assert type(got) is type(True if expected is None else expected) or isinstance(got, Fcn)


@pytest.mark.parametrize("expr, message", [
    ("1 + \"a\"", "E.tla:4:6: + applied to a string (\"a\"), not an integer"),
    ("<<1>>[2]", "E.tla:4:6: <<1>>[2]: 2 is not in the function's domain"),
    ("CHOOSE x \\in {} : TRUE", "E.tla:4:6: CHOOSE found no value"),
    ("\\E x \\in Nat : x = 1", "E.tla:4:15: cannot enumerate the infinite set Nat"),
    ("Head(<<>>)", "E.tla:4:6: Head of the empty sequence"),
    ("1 = TRUE", "E.tla:4:6: comparing an integer (1) with a boolean (TRUE)"),
    ("IF 1 THEN 2 ELSE 3", "E.tla:4:9: expected a boolean, found an integer (1)"),
    ("Undefined + 1", "E.tla:4:6: unknown operator Undefined"),
    ("x'", "E.tla:4:6: a primed expression where no next state is given"),
    ("[a |-> 1].b", "E.tla:4:6: [a |-> 1] has no field b"),
    ("LET F(x) == SelectSeq(<<1>>, x) IN F(1)", "E.tla:4:18: expected an operator as this "
                                                "argument, found a value"),
])
def test_errors_are_one_line_at_the_place(tmp_path: Path, expr: str, message: str) -> None:
    with pytest.raises(TlaError) as e:
        value(tmp_path, expr)
    assert str(e.value).endswith(message) or message in str(e.value)
    assert str(e.value).startswith(str(tmp_path / "E.tla")) and "\n" not in str(e.value)


ACTIONS = """
VARIABLES x, y
Init == x \\in 1..2 /\\ y = 0
Both == x' = 1 \\/ x' = 1
Pick(k) == x' \\in 1..k /\\ UNCHANGED y
Step(i) == x < 5 /\\ x' = x + i /\\ y' = y
Next == \\/ \\E i \\in {1, 2} : Step(i)
        \\/ Pick(2)
        \\/ Both /\\ UNCHANGED <<y>>
        \\/ \\E j \\in {7} : x' = j /\\ y' = j
        \\/ IF x = 1 THEN x' = 0 /\\ y' = 1 ELSE FALSE
Half == x' = 1
"""


def test_initial_states_every_way(tmp_path: Path) -> None:
    ev = evaluator(tmp_path, ACTIONS)
    assert list(ev.initial(OpApp(ev.definition("Init").d.pos, "Init"))) == [
        {"x": 1, "y": 0}, {"x": 2, "y": 0}]


def test_successors_every_way_with_labels(tmp_path: Path) -> None:
    ev = evaluator(tmp_path, ACTIONS)
    got = [(str(label), s["x"], s["y"]) for label, s in
           ev.successors(OpApp(ev.definition("Next").d.pos, "Next"), {"x": 1, "y": 0})]
    assert got == [
        ("Step(1)", 2, 0), ("Step(2)", 3, 0),
        ("Pick(2)", 1, 0), ("Pick(2)", 2, 0),
        # a disjunction true both ways: two ways to one state; the label is the disjunct of
        # Next it lies in (a conjunction names no operator), as TLC's actions are
        ("Next", 1, 0), ("Next", 1, 0),
        ("Next(7)", 7, 7),
        ("Next", 0, 1),
    ]
    assert Label("Step", (1,)) == next(ev.successors(OpApp(ev.definition("Next").d.pos,
                                                           "Next"), {"x": 1, "y": 0}))[0]


def test_a_variable_left_unassigned_is_an_error(tmp_path: Path) -> None:
    ev = evaluator(tmp_path, ACTIONS)
    with pytest.raises(TlaError, match=r"E.tla:15:1: the step Half does not determine y'"):
        list(ev.successors(OpApp(ev.definition("Half").d.pos, "Half"), {"x": 1, "y": 0}))


def test_enabled_and_action_predicates(tmp_path: Path) -> None:
    ev = evaluator(tmp_path, ACTIONS + "CanStep == ENABLED Step(1)\nMoved == x' # x\n")
    assert ev.predicate(ev.definition("CanStep"), {"x": 4, "y": 0}) is True
    assert ev.predicate(ev.definition("CanStep"), {"x": 5, "y": 0}) is False
    assert ev.predicate(ev.definition("Moved"), {"x": 1, "y": 0}, {"x": 2, "y": 0}) is True


def test_operators_that_read_no_state_are_evaluated_once_per_argument(tmp_path: Path) -> None:
    ev = evaluator(tmp_path, ACTIONS + "Sq(n) == n * n\nUses == Sq(x) + Sq(2)\n")
    uses = ev.definition("Uses")
    assert ev.value(uses.d.body, {"x": 3, "y": 0}) == 13
    assert ev.value(uses.d.body, {"x": 4, "y": 0}) == 20
    sq = ev.scope.defs["Sq"]
    assert sq.free is True and sq.memo == {(3,): 9, (2,): 4, (4,): 16}  # type: ignore[union-attr]
    assert ev.definition("Init").free is not True


def test_what_the_examples_collection_writes(tmp_path: Path) -> None:
    """User-defined infix operators, labels, a set difference of an infinite set, an unbounded
    CHOOSE that the cfg replaces (TLC cannot evaluate one either), theorems and proofs skipped,
    the proof system's library extended."""
    (tmp_path / "E.tla").write_text(
        "---- MODULE E ----\nEXTENDS Naturals, TLAPS\nCONSTANT NoVal, N\n"
        "a \\prec b == a < b\n"
        "Pos == Nat \\ {0}\n"
        "Free == CHOOSE v : v \\notin {1, 2}\n"
        "e == lbl:: /\\ 1 \\prec 2\n            /\\ N \\in Pos /\\ 0 \\notin Pos\n"
        "THEOREM T == 1 \\prec 2\n  BY DEF \\prec\n"
        "====\n")
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg("CONSTANTS NoVal = NoVal N = 3 "
                                                      "Free = Free\nALIAS e", "E.cfg")))
    assert ev.value(OpApp(ev.definition("e").d.pos, "e"), {}) is True
    assert ev.value(OpApp(ev.definition("T").d.pos, "T"), {}) is True  # a theorem's name
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg("CONSTANTS NoVal = NoVal N = 3", "E.cfg")))
    with pytest.raises(TlaError, match="E.tla:6:9: unsupported construct: an unbounded CHOOSE, "
                                       "which TLC cannot evaluate either"):
        ev.value(OpApp(ev.definition("Free").d.pos, "Free"), {})


@pytest.mark.parametrize("expr, want", [
    ("LET Twice(Op(_, _), x) == Op(x, x) IN Twice(LAMBDA a, b : a * b + Cardinality(B), 3)",
     11),
    ("SelectSeq(<<1, 2, 3>>, LAMBDA z : z > Cardinality(B))", tup([3])),
    ("LET k == 10\n     f[n \\in 0..3] == IF n = 0 THEN k ELSE n + f[n - 1] IN f[3]", 16),
    ("LET fact[n \\in Nat] == IF n = 0 THEN 1 ELSE n * fact[n - 1] IN fact[5]", 120),
    ("LET g[n \\in Nat, v \\in B] == IF n = 0 THEN v ELSE g[n - 1, v] + 1 IN g[3, 2]", 5),
    ("[a |-> 3] \\in [a : Nat] \\cup [b : BOOLEAN]", True),
])
def test_lambda_and_functions_defined_in_let(tmp_path: Path, expr: str, want: object) -> None:
    assert value(tmp_path, expr) == want


def test_a_primed_variable_given_to_an_operator_is_assigned_in_its_body(tmp_path: Path) -> None:
    """Specifying Systems' memory interface: ``Send(p, d, memInt, memInt')`` with ``Send``'s
    body ``newMemInt = <<p, d>>`` assigns memInt', as TLC reads it."""
    ev = evaluator(tmp_path, "VARIABLE mi\nSend(p, d, old, new) == new = <<p, d>>\n"
                             "Init == mi = 0\nNext == \\E d \\in B : Send(1, d, mi, mi')")
    nxt = ev.definition("Next").d.body
    assert [s["mi"] for _, s in ev.successors(nxt, {"mi": 0})] == [tup([1, 1]), tup([1, 2])]


def test_a_parameter_naming_a_variable_is_assigned_primed(tmp_path: Path) -> None:
    """``Lose(q) == q' = ...`` applied to a variable assigns that variable (AlternatingBit)."""
    ev = evaluator(tmp_path, "VARIABLE q\nLose(s) == s' = Tail(s)\nNext == Lose(q)")
    nxt = ev.definition("Next").d.body
    assert [s["q"] for _, s in ev.successors(nxt, {"q": tup([1, 2])})] == [tup([2])]


def test_an_instantiated_modules_operator_constant_is_the_instantiating_operator(
        tmp_path: Path) -> None:
    (tmp_path / "Inner.tla").write_text("---- MODULE Inner ----\nCONSTANT XInit(_)\n"
                                        "VARIABLE x\nInit == XInit(x)\n====\n")
    ev = evaluator(tmp_path, "VARIABLE x\nXInit(v) == v \\in {3, 4}\nI == INSTANCE Inner\n"
                             "Start == I!Init")
    states = list(ev.initial(ev.definition("Start").d.body))
    assert [s["x"] for s in states] == [3, 4]


def test_undirected_graphs_as_the_community_modules_override_them(tmp_path: Path) -> None:
    (tmp_path / "E.tla").write_text(
        "---- MODULE E ----\nEXTENDS UndirectedGraphs\n"
        "G == [node |-> {1, 2, 3, 4}, edge |-> {{1, 2}, {2, 3}, {4}}]\n"
        "e == <<IsUndirectedGraph(G), IsLoopFreeUndirectedGraph(G), ConnectedComponents(G),\n"
        "       IsStronglyConnected(G), AreConnectedIn(1, 3, G), AreConnectedIn(1, 4, G),\n"
        "       IsStronglyConnected([node |-> {1, 2}, edge |-> {{1, 2}}])>>\n====\n")
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg("", "E.cfg")))
    assert ev.value(OpApp(ev.definition("e").d.pos, "e"), {}) == tup([
        True, False, frozenset({frozenset({1, 2, 3}), frozenset({4})}), False, True, False,
        True])


def test_a_module_scoped_substitution_and_a_conjunct_reference(tmp_path: Path) -> None:
    """The cfg's ``Ballot <- [Voting] MCBallot`` (in module Voting, Ballot is the root's
    MCBallot) and ``Inv!2`` (the second conjunct of Inv), as Paxos's models use them."""
    (tmp_path / "Voting.tla").write_text("---- MODULE Voting ----\nCONSTANT Ballot\n"
                                         "Big == Ballot\n====\n")
    (tmp_path / "E.tla").write_text(
        "---- MODULE E ----\nEXTENDS Naturals\nCONSTANT Ballot\nV == INSTANCE Voting\n"
        "MCBallot == 0..1\nInv == /\\ 1 = 1\n       /\\ V!Big\n"
        "e == Inv!2\n====\n")
    cfg = "CONSTANTS Ballot = {7}\n  Ballot <-[Voting] MCBallot\n"
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg(cfg, "E.cfg")))
    assert ev.value(OpApp(ev.definition("e").d.pos, "e"), {}) == frozenset({0, 1})
    # Name = [M] Other (NanoBlockchain's cfg): in M, Name is the root's constant Other
    (tmp_path / "Voting.tla").write_text("---- MODULE Voting ----\nNone == CHOOSE v : FALSE\n"
                                         "Big == None\n====\n")
    (tmp_path / "E.tla").write_text("---- MODULE E ----\nCONSTANT NoVal\nV == INSTANCE Voting\n"
                                    "e == V!Big\n====\n")
    cfg = "CONSTANTS NoVal = NoVal\n  None = [Voting]NoVal\n"
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg(cfg, "E.cfg")))
    assert ev.value(OpApp(ev.definition("e").d.pos, "e"), {}) == ModelValue("NoVal")


def test_a_cfg_override_of_a_standard_operator_stands_in_instances(tmp_path: Path) -> None:
    """``Seq <- BoundedSeq`` (Majority's model): the instantiated module's Seq is the bounded
    one too, as TLC overrides the one definition."""
    (tmp_path / "Inner.tla").write_text("---- MODULE Inner ----\nEXTENDS Sequences\n"
                                        "Seqs == Seq({1})\n====\n")
    (tmp_path / "E.tla").write_text(
        "---- MODULE E ----\nEXTENDS Naturals\nINSTANCE Inner\n"
        "Bounded(S) == UNION {[1 .. n -> S] : n \\in 0 .. 2}\ne == Seqs\n====\n")
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg("CONSTANT Seq <- Bounded", "E.cfg")))
    assert ev.value(OpApp(ev.definition("e").d.pos, "e"), {}) == frozenset(
        {Fcn({}), tup([1]), tup([1, 1])})


def test_action_composition(tmp_path: Path) -> None:
    """``A \\cdot B``: A to an intermediate state, B from it (TLC's composition; the
    property TLC's model asks for says it is on)."""
    ev = evaluator(tmp_path, "VARIABLE x, y\nInc == x' = x + 1 /\\ y' = y\n"
                             "Mul == x' = x * 10 /\\ y' = x\nNext == Inc \\cdot Mul\n"
                             "On == TLCGet(\"-Dtlc2.tool.impl.Tool.cdot\") = \"true\"")
    nxt = ev.definition("Next").d.body
    assert [s for _, s in ev.successors(nxt, {"x": 1, "y": 0})] == [{"x": 20, "y": 2}]
    assert ev.value(OpApp(ev.definition("On").d.pos, "On"), {}) is True


def test_bitwise(tmp_path: Path) -> None:
    (tmp_path / "E.tla").write_text(
        "---- MODULE E ----\nEXTENDS Bitwise\n"
        "e == <<12 & 10, 12 | 10, 12 ^^ 10, Not(10), Not(0), shiftR(12, 2)>>\n====\n")
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg("", "E.cfg")))
    assert ev.value(OpApp(ev.definition("e").d.pos, "e"), {}) == tup([8, 14, 6, 5, 0, 3])


def test_community_functions_and_an_infix_operator_as_an_argument(tmp_path: Path) -> None:
    """FoldFunctionOnSet(+, ...) as EWD998 writes it; MapThenFoldSet's order (the first
    element outermost); AntiFunction; A!B!Op through two instances."""
    (tmp_path / "Leaf.tla").write_text("---- MODULE Leaf ----\nK == 7\n====\n")
    (tmp_path / "Mid.tla").write_text("---- MODULE Mid ----\nL == INSTANCE Leaf\n====\n")
    (tmp_path / "E.tla").write_text(
        "---- MODULE E ----\nEXTENDS Naturals, Sequences, Functions, FiniteSetsExt\n"
        "M == INSTANCE Mid\n"
        "e == <<FoldFunctionOnSet(+, 0, <<3, 4, 5>>, {1, 3}), SumFunction(<<1, 2>>),\n"
        "       FoldSet(LAMBDA x, acc : Append(acc, x), <<>>, {1, 2, 3}),\n"
        "       AntiFunction(<<\"a\", \"b\">>)[\"b\"], M!L!K>>\n====\n")
    ev = Evaluator(load(tmp_path / "E.tla", parse_cfg("", "E.cfg")))
    assert ev.value(OpApp(ev.definition("e").d.pos, "e"), {}) == tup([
        8, 3, tup([3, 2, 1]), 2, 7])


def test_constant_expressions_are_evaluated_once_and_bound_names_are_not(
        tmp_path: Path) -> None:
    # Add's parameter k is named like the definition k after it: inside Add, k is the
    # parameter, so {k, k + 1} is not the constant {10, 11}
    ev = evaluator(tmp_path, ACTIONS + "Add(k) == {k, k + 1}\nk == 10\n"
                   "Const == {1, 2} \\cup {k}\n"
                   "Uses == Add(x) \\cup Add(2) \\cup Const \\cup {y : y \\in {x}}\n")
    uses = ev.definition("Uses")
    assert ev.value(uses.d.body, {"x": 3, "y": 0}) == frozenset({1, 2, 3, 4, 10})
    assert ev.value(uses.d.body, {"x": 5, "y": 0}) == frozenset({1, 2, 3, 5, 6, 10})
    body = ev.definition("Const").d.body
    kept = ev._const[id(body)]
    assert kept[2] is not None and kept[3] and kept[4] == frozenset({1, 2, 10})
    add = ev.scope.defs["Add"].d.body  # type: ignore[union-attr]
    assert ev._const[id(add)][3] is False  # evaluated each time: it reads k


def test_a_sets_kept_order_is_its_own(tmp_path: Path) -> None:
    # {1} and {TRUE} are equal Python sets: each is still enumerated as itself
    ev = evaluator(tmp_path, ACTIONS)
    pos = ev.definition("Init").d.pos
    assert ev.finite(frozenset({True}), pos) == [True]
    got = ev.finite(frozenset({1}), pos)
    assert got == [1] and type(got[0]) is int


CYCLE = ("IsSimpleCycle(D, r) ==\n"
         "  LET F[i \\in 1..Cardinality(D)] ==\n"
         "        IF i = 1 THEN <<CHOOSE s \\in D : TRUE>> ELSE <<r[Head(F[i-1])]>> \\o F[i-1]\n"
         "  IN {F[Cardinality(D)][i] : i \\in 1..Cardinality(D)} = D\n")


@pytest.mark.parametrize("expr,want", [
    # TLC's witnesses (tla2tools: a CHOOSE takes the first in its normalized order): the
    # functions of [S -> T] by their values, the first argument's most significant
    ("CHOOSE r \\in [1..5 -> 1..5] : IsSimpleCycle(1..5, r)", "<<2, 3, 4, 5, 1>>"),
    # sets by their size first, then their elements; functions by their domain's size first
    ("CHOOSE s \\in SUBSET (1..3) : 3 \\in s", "{3}"),
    ("CHOOSE s \\in SUBSET (1..4) : Cardinality(s) = 2 /\\ 4 \\in s", "{1, 4}"),
    ("CHOOSE x \\in {{1, 2}, {3}, {1, 3}} : TRUE", "{3}"),
    ("CHOOSE f \\in {<<3>>, <<1, 2>>, [i \\in {2} |-> 1]} : TRUE", "<<3>>"),
    ("CHOOSE r \\in [a : 1..3, b : 1..3] : r.a > r.b", "[a |-> 2, b |-> 1]"),
    ("CHOOSE t \\in (1..3) \\X (1..3) : t[1] > t[2]", "<<2, 1>>"),
    # too many members to build (12^12, 2^40): enumerated one at a time, in that order, up
    # to the first witness
    ("CHOOSE f \\in [1..12 -> 1..12] : f[12] = 2",
     "<<1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2>>"),
    ("CHOOSE s \\in SUBSET (1..40) : 40 \\in s", "{40}"),
    ("\\E f \\in [1..12 -> 1..12] : f[12] = 2", "TRUE"),
    ("\\A s \\in SUBSET (1..40) : Cardinality(s) < 3", "FALSE"),
])
def test_choose_takes_tlcs_witness_from_a_set_enumerated_lazily(
        tmp_path: Path, expr: str, want: str) -> None:
    ev = evaluator(tmp_path, CYCLE + f"e == {expr}\n")
    assert show(ev.value(OpApp(ev.definition("e").d.pos, "e"), {})) == want


def test_a_definition_with_a_function_in_a_let_is_evaluated_once(tmp_path: Path) -> None:
    # IsSimpleCycle reads no state though it defines a function in a LET: Ring, a CHOOSE
    # over 3,125 functions, is computed once, not once per state that reads it
    ev = evaluator(tmp_path, ACTIONS + CYCLE +
                   "Ring == CHOOSE r \\in [1..5 -> 1..5] : IsSimpleCycle(1..5, r)\n"
                   "Uses == Ring[x]\n")
    uses = ev.definition("Uses")
    assert ev.value(uses.d.body, {"x": 1, "y": 0}) == 2
    assert ev.value(uses.d.body, {"x": 5, "y": 0}) == 1
    ring = ev.scope.defs["Ring"]
    assert ring.free is True and show(ring.memo[()]) == "<<2, 3, 4, 5, 1>>"  # type: ignore[union-attr]


def test_an_operators_kept_values_tell_false_from_zero(tmp_path: Path) -> None:
    # Python takes FALSE for 0: [i |-> FALSE] and [i |-> 0] are one dict key, not one value
    ev = evaluator(tmp_path, ACTIONS + "Copy(f) == [i \\in DOMAIN f |-> f[i]]\n"
                   "Same(s) == {v : v \\in s}\n"
                   "Uses == <<Copy([i \\in 1..2 |-> x = 1]), Copy([i \\in 1..2 |-> y]),"
                   " Same({x = 1}), Same({y})>>\n")
    got = ev.value(ev.definition("Uses").d.body, {"x": 2, "y": 0})
    assert show(got) == "<<<<FALSE, FALSE>>, <<0, 0>>, {FALSE}, {0}>>"
    assert ev.scope.defs["Copy"].memo  # type: ignore[union-attr]


def test_membership_in_a_set_filter_tests_the_element_only(tmp_path: Path) -> None:
    # as TLC decides x \in {y \in S : p}: x \in S and p for x, without enumerating S (here
    # 2^32 sets of sets; a filter that reads the state is not kept whole)
    ev = evaluator(tmp_path, ACTIONS +
                   "Parts == {DP \\in SUBSET SUBSET (1..x) : UNION DP = 1..x}\n"
                   "In == /\\ {1..x} \\in Parts /\\ {1..x, {}} \\in Parts\n"
                   "      /\\ {{1}} \\notin Parts /\\ {{6}} \\notin Parts\n"
                   "      /\\ {1..x} \\in {DP \\in SUBSET SUBSET (1..x) : {} \\notin DP}\n"
                   "      /\\ 3 \\notin {i \\in 1..x : i # 3}\n")
    assert ev.predicate(ev.definition("In"), {"x": 5, "y": 0}) is True
    assert ev.predicate(ev.definition("In"), {"x": 4, "y": 0}) is True


def test_an_instances_constant_expressions_are_evaluated_once(tmp_path: Path) -> None:
    # Disruptor's RingBuffer: INSTANCE ... WITH Values <- Int, its TypeOk's set of records
    # built from the instance's constants reads no state: computed once, not per state
    (tmp_path / "Inner.tla").write_text(
        "---- MODULE Inner ----\nEXTENDS Integers\nCONSTANTS Vals, R\nVARIABLE v\n"
        "TypeOk == v \\in [a : UNION {[0..2 -> SUBSET R]}, b : Vals]\n====\n")
    ev = evaluator(tmp_path, "VARIABLE v\nI == INSTANCE Inner WITH Vals <- Int, R <- B\n"
                             "Ok == I!TypeOk\n")
    ok = ev.definition("Ok")
    good = record([("a", Fcn({0: frozenset(), 1: frozenset({2}), 2: frozenset({1, 2})})),
                   ("b", -3)])
    bad = record([("a", Fcn({0: frozenset({3}), 1: frozenset(), 2: frozenset()})),
                  ("b", 0)])
    assert ev.predicate(ok, {"v": good}) is True
    assert ev.predicate(ok, {"v": bad}) is False
    kept = [info for info in ev._const.values() if type(info[0]).__name__ == "RecordSet"]
    assert len(kept) == 1 and kept[0][3] is True  # evaluated and kept


def test_a_function_over_tuples_binds_each_component(tmp_path: Path) -> None:
    # [<<a, b>> \in S |-> e] and f[<<a, b>> \in S] == e: the domain is S, its tuples the keys
    ev = evaluator(tmp_path, "F == [<<a, b>> \\in {<<1, 2>>, <<3, 4>>} |-> a + b]\n"
                             "G[<<a, b>> \\in {<<1, 2>>, <<3, 4>>}] == IF a = 1 THEN b "
                             "ELSE G[<<1, 2>>] * a\n")
    f = ev.value(OpApp(ev.definition("F").d.pos, "F"), {})
    assert f == Fcn({tup([1, 2]): 3, tup([3, 4]): 7})
    g = ev.value(OpApp(ev.definition("F").d.pos, "G"), {})
    assert g == Fcn({tup([1, 2]): 2, tup([3, 4]): 6})
