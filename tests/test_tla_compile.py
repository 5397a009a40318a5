"""The compiled path's first case: a TLA+ model as a `Spec`, whose states, transitions, step
names and invariants are the reference search's (the interpreter runs the compiled spec here;
the slow tier runs it on the kernel too)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.tla.cfg import parse_cfg
from hwcheck.checker.tla.compile import Compiled, compile_model
from hwcheck.checker.tla.explore import Model, explore, model
from hwcheck.checker.tla.syntax import TlaError
from hwcheck.checker.tla.values import Fcn
from hwcheck.spec import lang as L

ROOT = Path(__file__).resolve().parent.parent
TLA = ROOT / "tests" / "specs" / "tla"

CASES = {
    "DieHard": "CONSTANTS Big = 5 Small = 3 Goal = 4\nINIT Init NEXT Next\n"
               "INVARIANTS TypeOK NotSolved",
    "ViewCounter": "CONSTANTS N = 3 M = 2 K = 4 Peek = TRUE\nINIT Init NEXT Next\n"
                   "INVARIANT YBounded",
    "Relay": "CONSTANTS Procs = {p1, p2, p3} Max = 2\nINIT Init NEXT Next\n"
             "INVARIANTS TurnsBounded NotAllDone",
    "Branches": "CONSTANTS N = 2 Max = 3\nINIT Init NEXT Next\nINVARIANT Bounded",
    "TokenRing": "CONSTANT N = 3\nINIT Init NEXT Next\nINVARIANT TokenInRing",
    "Peterson": "CONSTANT Naive = FALSE\nINIT Init NEXT Next\nINVARIANT Mutex",
    "PetersonNaive": "CONSTANT Naive = TRUE\nINIT Init NEXT Next\nINVARIANT Mutex",
    "TwoPhase": "CONSTANT RM = {r1, r2, r3}\nSPECIFICATION TPSpec\n"
                "INVARIANTS TPTypeOK TCConsistent",
    "Bins": "CONSTANT Items = {1, 2, 3}\nINIT Init NEXT Next\nINVARIANTS Conserved Logged",
    "InitReads": "CONSTANT N = 2\nINIT Init NEXT Next\nINVARIANT Consistent",
    "Records": "CONSTANTS Procs = {p1, p2} Max = 2\nINIT Init NEXT Next\n"
               "INVARIANTS LeaderKnown SameLast",
    "Slots": "CONSTANTS Nodes = {n1, n2} Size = 2 MaxEpoch = 1\nINIT Init NEXT Next\n"
             "INVARIANTS NilBeyondLength LastIsWritten",
    "LetTwice": "INIT Init NEXT Next\nINVARIANT Small",
    "EqRec": "INIT Init NEXT Next\nINVARIANT Bounded",
}
MODULE = {"PetersonNaive": "Peterson"}


def compiled(name: str) -> tuple[Model, Compiled]:
    module = MODULE.get(name, name)
    m = model(TLA / f"{module}.tla", parse_cfg(CASES[name], f"{module}.cfg"))
    res = explore(m, check_deadlock=False)
    return m, compile_model(m, {v: res.values(v) for v in m.root.variables})


def frozen(state: dict) -> tuple:
    return tuple(sorted(state.items()))


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_compiled_spec_is_the_reference_searchs(name: str) -> None:
    m, c = compiled(name)
    ref = explore(m, check_deadlock=False)
    it, layout = Interpreter(c.spec), Layout.of(c.spec)
    # every state, every transition with its step name, every invariant's value: the
    # interpreter on the compiled spec against the evaluator on the module
    initial = [dict(s) for s in m.ev.initial(m.init)]
    rows = it.initials()
    assert {frozen(c.decode(layout.to_dict(r))) for r in rows} == {frozen(s) for s in initial}
    seen = {r.tobytes(): r for r in rows}
    level, depth, transitions = list(rows), 0, 0
    while level:
        depth += 1
        nxt = []
        for row in level:
            state = c.decode(layout.to_dict(row))
            ways = Counter((label.name, frozen(t)) for label, t in
                           m.ev.successors(m.next, state))
            mine = Counter((c.steps[inst.action.name], frozen(c.decode(layout.to_dict(t))))
                           for inst, t in it.successors(row))
            assert mine == ways, state
            transitions += sum(mine.values())
            for inv in m.invariants:
                assert it.holds(c.spec.invariant_named(inv.name).expr, row) == \
                    m.ev.predicate(inv, state)
            # TLC's deadlock check (the cfgs leave it on): some way of Next is possible
            assert it.holds(c.spec.invariant_named("Deadlock").expr, row) == bool(ways)
            for _, t in it.successors(row):
                if t.tobytes() not in seen:
                    seen[t.tobytes()] = t
                    nxt.append(t)
        level = nxt
    assert (len(seen), len(initial) + transitions, depth) == (ref.distinct, ref.generated,
                                                              ref.depth)


def test_model_values_and_functions_over_them_are_stored_as_enums_and_arrays() -> None:
    _, c = compiled("Relay")
    enc = c.encodings
    assert (enc["holder"].kind, enc["phase"].kind, enc["turns"].kind) == ("atom", "atom", "int")
    assert [str(x) for x in enc["turns"].domain or ()] == ["p1", "p2", "p3"]
    assert [v.name for v in c.spec.variables] == ["holder", "turns", "phase"]
    assert [(a.name, [p.size for p in a.params]) for a in c.spec.actions] == [
        ("Take", [3]), ("Give", [3, 3]), ("Reset", [])]


@pytest.mark.parametrize(("name", "action", "var"), [
    ("Relay", "Take", "turns"),  # turns[p] < Max: a function applied at the parameter
    ("Bins", "Take", "pool"),  # \E i \in pool: the parameter's membership in a set variable
    ("Bins", "Return", "taken"),
    ("TwoPhase", "TMRcvPrepared", "msgs"),  # [type |-> "Prepared", rm |-> r] \in msgs
])
def test_a_parameter_reads_the_one_cell_its_value_indexes(name: str, action: str,
                                                          var: str) -> None:
    # the value at a parameter (or its membership) is one read indexed by the parameter, not a
    # choice among every element by the parameter's value (p == 0, p == 1, ...); the values
    # stay the evaluator's (test_the_compiled_spec_is_the_reference_searchs)
    _, c = compiled(name)
    a = next(a for a in c.spec.actions if a.name == action)
    params = {id(p) for p in a.params}
    nodes = list(L.walk(a.guard))
    assert any(isinstance(x, L.Read) and x.var.name == var and
               any(id(y) in params for i in x.index for y in L.walk(i)) for x in nodes)
    assert not [L.show(x) for x in nodes if isinstance(x, L.Cmp) and {
        type(x.a), type(x.b)} == {L.ActionParam, L.Const}]


def test_a_let_definition_read_through_several_operators_is_computed_once() -> None:
    # LetTwice's `a` is read as Set's argument, as Put's through `b`, and in the guard: the
    # effect computes it into one local (the evaluator's value: the state-by-state test)
    _, c = compiled("LetTwice")
    body = list(L.walk_stmts(c.spec.actions[0].body))
    computed = [s for s in body if isinstance(s, L.SetLocal) and isinstance(s.value, L.Ite)
                and L.show(s.value.cond) == "x[p0] < 2"]
    assert len(computed) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["Relay", "Branches", "TwoPhase", "PetersonNaive", "Bins",
                                  "InitReads", "Records", "Slots", "EqRec"])
def test_the_kernel_counts_the_compiled_spec_as_the_reference_search(name: str) -> None:
    m, c = compiled(name)
    ref = explore(m, check_deadlock=False)
    report = check(c.spec, Options(stop_at_violation=False))
    ex = report.exploration
    initial_ways = sum(1 for _ in m.ev.initial(m.init))
    assert (ex.distinct, ex.generated + initial_ways, ex.depth + 1) == (
        ref.distinct, ref.generated, ref.depth)
    with_deadlock = explore(m)  # the cfg's CHECK_DEADLOCK, on by default
    assert {o.name: o.length for o in report.violations()} == {
        **{k: len(v) - 1 for k, v in ref.violations.items()},
        **({"Deadlock": len(with_deadlock.deadlock) - 1} if with_deadlock.deadlock else {})}


REFUSED = """---- MODULE R ----
EXTENDS Naturals
VARIABLES x, y
Init == x = 0 /\\ y = 0
Guarded == CASE x = 0 -> x' = 1 /\\ y' = y [] y = 0 -> x' = 0 /\\ y' = 1
Product == x' = x * y /\\ y' = y
Partial == x' = 1
====
"""


@pytest.mark.parametrize("action, message", [
    ("Guarded", "R.tla:5:12: not compiled yet: a CASE without OTHER in an action (TLC stops "
                "with an error where no arm applies)"),
    ("Product", "R.tla:6:17: not compiled yet: * of two values read from the state (the "
                "language multiplies and divides by constants)"),
])
def test_what_the_first_case_does_not_compile_is_refused_at_its_place(
        tmp_path: Path, action: str, message: str) -> None:
    (tmp_path / "R.tla").write_text(REFUSED)
    m = model(tmp_path / "R.tla", parse_cfg(f"INIT Init NEXT {action}", "R.cfg"))
    with pytest.raises(TlaError) as e:
        compile_model(m, {"x": [0, 1], "y": [0]})
    assert str(e.value).endswith(message) and "\n" not in str(e.value)


def test_sets_are_a_bit_per_member_and_records_are_members() -> None:
    _, c = compiled("TwoPhase")
    enc = c.encodings
    assert (enc["tmPrepared"].kind, [str(x) for x in enc["tmPrepared"].members]) == (
        "set", ["r1", "r2", "r3"])
    assert len(enc["msgs"].members) == 5  # three Prepared records, Commit, Abort


def test_a_function_holding_sets_is_an_array_of_bits(tmp_path: Path) -> None:
    (tmp_path / "F.tla").write_text("---- MODULE F ----\nVARIABLE f\n"
                                    "Init == f = [i \\in {1, 2} |-> {}]\n"
                                    "Next == \\E i \\in {1, 2} : f' = [f EXCEPT ![i] = @ \\cup {i}]"
                                    "\n====\n")
    m = model(tmp_path / "F.tla", parse_cfg("INIT Init NEXT Next", "F.cfg"))
    res = explore(m, check_deadlock=False)
    c = compile_model(m, {v: res.values(v) for v in m.root.variables})
    assert c.spec.variables[0].shape == (2, 2)  # f[1], f[2]: a bit for 1 and for 2 each
    it, layout = Interpreter(c.spec), Layout.of(c.spec)
    seen, level = {r.tobytes(): r for r in it.initials()}, list(it.initials())
    while level:
        level = [t for r in level for _, t in it.successors(r) if t.tobytes() not in seen]
        seen.update((t.tobytes(), t) for t in level)
    assert {frozen(c.decode(layout.to_dict(r))) for r in seen.values()} == {
        frozen({"f": Fcn({1: a, 2: b})}) for a in (frozenset(), frozenset({1}))
        for b in (frozenset(), frozenset({2}))} and res.distinct == 4


def test_a_variable_holding_a_number_and_a_set_is_refused(tmp_path: Path) -> None:
    (tmp_path / "F.tla").write_text("---- MODULE F ----\nVARIABLE f\n"
                                    "Init == f = 1\nNext == f' = {f}\n====\n")
    m = model(tmp_path / "F.tla", parse_cfg("INIT Init NEXT Next", "F.cfg"))
    with pytest.raises(TlaError, match=r"F.tla:1:1: not compiled yet: variable f holds values "
                                       r"this case does not store"):
        compile_model(m, {"f": [1, frozenset({1})]})


def test_a_set_written_with_a_value_outside_its_members_is_a_domain_error() -> None:
    m, _ = compiled("Bins")
    res = explore(m, check_deadlock=False)
    domains = {v: res.values(v) for v in m.root.variables}
    domains["taken"] = [frozenset({1, 2})]  # too small: Take(3) puts 3 in it
    c = compile_model(m, domains)
    it = Interpreter(c.spec)
    (row,) = it.initials()
    with pytest.raises(ModelError, match=r"Take\(2\): reads taken\[2\], outside its shape"):
        list(it.successors(row))


def test_a_value_some_parameter_fails_on_behind_a_guard_is_refused_not_an_error(
        tmp_path: Path) -> None:
    # m.value is read only where m.type = "b" (TLC's conjunction never reads it of the "a"
    # message): the compiled path refuses it (the interpreter checks the module), and does not
    # stop at the "a" message's missing field
    (tmp_path / "G.tla").write_text(
        "---- MODULE G ----\nVARIABLE msgs\n"
        "Init == msgs = {[type |-> \"a\"]}\n"
        "Next == \\E m \\in msgs : m.type = \"b\" /\\ m.value = 1 /\\ msgs' = msgs\n====\n")
    m = model(tmp_path / "G.tla", parse_cfg("INIT Init NEXT Next CHECK_DEADLOCK FALSE",
                                            "G.cfg"))
    assert explore(m).distinct == 1  # the interpreter's answer
    with pytest.raises(TlaError, match="not compiled yet"):
        compile_model(m, {"msgs": [frozenset({Fcn({"type": "a"})})]})


def test_widening_adds_a_record_as_it_is_and_doubles_an_integer_range() -> None:
    from hwcheck.checker.tla.front import _doubled

    # a record's fields each have their range: no value made of one integer for every field,
    # the field past its range doubled in a copy of the new record
    old = [Fcn({"hw": 0, "epoch": 1, "isr": frozenset()})]
    new = [Fcn({"hw": 3, "epoch": 1, "isr": frozenset()})]
    assert _doubled(old, new) == [Fcn({"hw": 7, "epoch": 1, "isr": frozenset()})]
    # a record or a marker (-1) in a log's slots: the marker's place is not doubled
    slot = [Fcn({0: -1}), Fcn({0: Fcn({"id": 0})})]
    assert _doubled(slot, [Fcn({0: Fcn({"id": 1})}), Fcn({0: -2})]) == [Fcn({0: Fcn({"id": 3})})]
    assert _doubled([0, 1], [2]) == [5]  # 0..2, doubled: up to 5
    assert _doubled([Fcn({1: 0, 2: 1})], [Fcn({1: 2, 2: 0})]) == [Fcn({1: 5, 2: 5})]


def test_membership_in_a_constant_record_set_is_its_members_or_refused(tmp_path: Path) -> None:
    # TLC keeps [a : S, b : T] lazy; a type invariant's f \in [D -> [a : S, b : T]] compiles
    # against the record set's members where there are few, and is refused (the interpreter
    # checks the module) where there are too many (it was a TypeError, a traceback)
    (tmp_path / "M.tla").write_text(
        "---- MODULE M ----\nEXTENDS Naturals\nCONSTANT N\nVARIABLE f\n"
        "Init == f = [i \\in {1, 2} |-> [a |-> 0, b |-> FALSE]]\n"
        "Next == \\E i \\in {1, 2} : f[i].a < 2 /\\ f' = [f EXCEPT ![i].a = @ + 1]\n"
        "TypeOK == f \\in [{1, 2} -> [a : 0..N, b : BOOLEAN]]\n====\n")
    for n in (1, 2, 2000):
        m = model(tmp_path / "M.tla", parse_cfg(
            f"CONSTANT N = {n}\nINIT Init NEXT Next INVARIANT TypeOK CHECK_DEADLOCK FALSE",
            "M.cfg"))
        res = explore(m, check_deadlock=False)
        domains = {v: res.values(v) for v in m.root.variables}
        if n == 2000:
            with pytest.raises(TlaError, match=r"M.tla:7:\d+: not compiled yet: membership in "
                                               r"a constant set of more than 1,024 values"):
                compile_model(m, domains)
            continue
        c = compile_model(m, domains)
        it, layout = Interpreter(c.spec), Layout.of(c.spec)
        seen, level = {r.tobytes(): r for r in it.initials()}, list(it.initials())
        while level:
            level = [t for r in level for _, t in it.successors(r) if t.tobytes() not in seen]
            seen.update((t.tobytes(), t) for t in level)
        assert len(seen) == res.distinct == 9
        (inv,) = m.invariants  # TypeOK, state by state: the compiled test and the evaluator's
        values = {it.holds(c.spec.invariant_named("TypeOK").expr, r) for r in seen.values()}
        assert values == {m.ev.predicate(inv, c.decode(layout.to_dict(r)))
                          for r in seen.values()} == ({True} if n == 2 else {True, False})
