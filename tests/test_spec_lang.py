"""The spec language rejects malformed specs when they are built, naming the culprit."""

import pytest
from helpers import kafka as build

from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import Block, Spec, SpecError, Var, count, forall, ite


def tiny() -> tuple[Spec, object, object]:
    s = Spec("Counter", {})
    x = s.scalar("x", 0, 3)
    flag = s.set_of("flag", 2)
    return s, x, flag


def test_effect_outside_modifies_is_named():
    s, x, flag = tiny()

    @s.action("Bump", modifies=[x])
    def bump(b: Block):
        b.require(x < 3)
        b.set(x, x + 1)
        b.set(flag[0], True)

    with pytest.raises(SpecError, match="Bump: writes flag, which is not in its modifies list"):
        s.validate()


def test_undeclared_variable_is_named():
    s, x, _ = tiny()
    ghost = Var("ghost", (), 0, 1)

    @s.action("Peek", modifies=[x])
    def peek(b: Block):
        b.set(x, ghost[()])

    with pytest.raises(SpecError, match="Peek: reads or writes undeclared variable ghost"):
        s.validate()


def test_unknown_modifies_entry_is_named():
    s, x, _ = tiny()
    other = Var("other", (), 0, 1)

    @s.action("Noop", modifies=[x, other])
    def noop(b: Block):
        b.set(x, x)

    with pytest.raises(SpecError, match="Noop: modifies unknown variable"):
        s.validate()


def test_expression_has_no_python_truth_value():
    _, x, _ = tiny()
    with pytest.raises(SpecError, match="no Python truth value"):
        if x > 1:
            pass


def test_guard_after_effect_is_rejected():
    s, x, _ = tiny()
    with pytest.raises(SpecError, match="Late: require\\(\\) after an effect"):
        @s.action("Late", modifies=[x])
        def late(b: Block):
            b.set(x, 1)
            b.require(x == 1)


def test_local_out_of_scope_is_rejected():
    s, x, _ = tiny()

    @s.action("Scoped", modifies=[x])
    def scoped(b: Block):
        with b.when(x == 0):
            inner = b.let("inner", x + 1)
        b.set(x, inner)

    with pytest.raises(SpecError, match="Scoped: local inner read before it is set"):
        s.validate()


def test_sort_mismatch_is_rejected():
    s, x, flag = tiny()
    with pytest.raises(SpecError, match="Mixed: assigning a bool to x"):
        @s.action("Mixed", modifies=[x])
        def mixed(b: Block):
            b.set(x, flag[0])


def test_duplicate_invariant_is_named():
    s, x, _ = tiny()
    s.invariant("Small", x <= 3)
    s.invariant("Small", x >= 0)
    with pytest.raises(SpecError, match="invariant Small declared twice"):
        s.validate()


def test_quantifiers_and_ite_build_typed_terms():
    _, x, flag = tiny()
    assert forall(2, lambda i: flag[i]).sort == "bool"
    assert count(2, lambda i: flag[i]).sort == "int"
    assert ite(x > 1, 1, 0).sort == "int"


@pytest.mark.parametrize("truncation", ["hw", "leader-epoch", "kip-279"])
def test_the_model_validates_and_declares_what_it_writes(truncation):
    spec = build(Params(3, 2, 3, truncation=truncation, acks="1", unclean=True))
    names = [a.name for a in spec.actions]
    assert names == ["Produce", "FetchRequest", "FetchResponse", "BecomeFollower", "ShrinkIsr",
                     "Crash", "Restart", "Elect"]
    assert [i.name for i in spec.invariants] == [
        "HwBelowLeo", "LeaderInIsr", "CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw"]
    assert len(spec.instances()) == 1 + 7 * 3


@pytest.mark.parametrize("bad, message", [
    (dict(replicas=0), "replicas must be an integer in 1..5"),
    (dict(max_offset=99), "max-offset must be an integer in 1..8"),
    (dict(min_isr=3), "min-isr must be in 1..replicas"),
    (dict(truncation="none"), "truncation must be one of"),
])
def test_params_reject_bad_input(bad, message):
    with pytest.raises(SpecError, match=message):
        Params(**bad)


def test_the_node_unions_name_every_node_class():
    """``Expr`` is what the readers match on (mypy fails a reader that forgets a member): a node
    class left out of it would escape that check."""
    import typing

    from hwcheck.spec import lang

    assert set(typing.get_args(lang.Expr)) == set(lang.ExprBase.__subclasses__())


def test_a_stray_object_in_a_tree_is_a_spec_error():
    """What is no node of the language (a tree built around it by hand) gets a one-line
    SpecError from every reader, as before readers matched on the node classes."""
    from hwcheck.checker.semantics.interp import Interpreter
    from hwcheck.spec.lang import And, show

    s, x, _ = tiny()
    stray = And((x == 1, object()))  # type: ignore[arg-type]
    assert show(stray) == "x == 1 & object"  # shown as the type's name, as always
    with pytest.raises(SpecError, match="property: unknown expression node object"):
        Interpreter(s).holds(stray, [1, 0, 0])
