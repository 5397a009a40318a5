"""The Z3 translation agrees with the interpreter: on random states (every cell within its
domain) and random action instances, the guard, every cell of the successor, whether the
interpreter raises a ModelError, and every invariant and lemma have the same value.

The translation is built once per (configuration, instance) over a symbolic state and then
evaluated by substituting the random state's values, so the symbolic execution itself (If
merges, If-chains for symbolic indices) is what is tested, not constant folding. The same
states also check the replica symmetry that the induction step relies on.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import z3
from helpers import kafka as build
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.z3 import translate as T
from hwcheck.checker.z3.checks import permute_row, symmetry_of
from hwcheck.spec.kafka.lemmas import lemmas
from hwcheck.spec.kafka.params import Params

CONFIGS = [
    Params(2, 2, 3, "hw", "hw"),
    Params(2, 2, 3, "leader-epoch", "hw", acks="1"),
    Params(3, 2, 3, "kip-279", "epoch-start"),
    Params(3, 3, 4, "kip-279", "hw", acks="0", min_isr=2, unclean=True),
    Params(2, 3, 2, "leader-epoch", "epoch-start", min_isr=2),
]


@functools.cache
def setup(ci: int):
    spec = build(CONFIGS[ci])
    return spec, Interpreter(spec), T.Translator(spec), dict(lemmas(spec))


@functools.cache
def symbolic(ci: int, inst_index: int, pin: bool, leader: int):
    """The translation of one instance over a symbolic pre-state (optionally pinning leader)."""
    spec, interp, tr, _ = setup(ci)
    fixed = {"leader": [leader]} if pin else None
    pre = T.fresh_state(spec, "pre", fixed)
    return pre, tr.effect(interp.instances[inst_index], pre)


def states(ci: int):
    """Any state within the domains; half the time with well-formed logs (records as a prefix,
    epochs non-decreasing), so that the truncation rules see realistic inputs too."""
    spec = setup(ci)[0]
    cells = []
    for v in spec.variables:
        cells.extend([st.integers(v.lo, v.hi)] * v.size)
    any_state = st.tuples(*cells)
    p = CONFIGS[ci]
    off = setup(ci)[1].layout.offsets["log"]

    def shaped(values, logs):
        out = list(values)
        for r, lg in enumerate(logs):
            out[off + r * p.M: off + (r + 1) * p.M] = lg
        return tuple(out)

    one_log = st.integers(0, p.M).flatmap(lambda n: st.lists(
        st.integers(1, p.E), min_size=n, max_size=n).map(lambda xs: sorted(xs) + [0] * (p.M - n)))
    return st.one_of(any_state, st.builds(shaped, any_state,
                                          st.lists(one_log, min_size=p.R, max_size=p.R)))


def row_of(spec, layout, values):
    row = layout.empty()
    row[:len(values)] = values
    return row


def evaluate(term, subs):
    if T.is_const(term):
        return int(term)
    v = z3.simplify(z3.substitute(term, *subs)) if subs else z3.simplify(term)
    if z3.is_true(v):
        return 1
    if z3.is_false(v):
        return 0
    return v.as_long()


def substitution(spec, pre, row, layout):
    cst = T.const_state(spec, layout, row)
    return [(s, z3.IntVal(c)) for n in pre for s, c in zip(pre[n], cst[n]) if not T.is_const(s)]


@st.composite
def case(draw):
    ci = draw(st.integers(0, len(CONFIGS) - 1))
    values = draw(states(ci))
    pin = draw(st.booleans())
    return ci, values, pin


SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.slow
@SETTINGS
@given(case())
def test_guard_effect_and_well_definedness_agree(c):
    ci, values, pin = c
    spec, interp, tr, _ = setup(ci)
    layout = interp.layout
    row = row_of(spec, layout, values)
    leader = int(row[layout.offsets["leader"]])
    for inst in interp.instances:
        pre, eff = symbolic(ci, inst.index, pin, leader)
        subs = substitution(spec, pre, row, layout)
        _agree(spec, interp, layout, row, inst, eff, subs)


def _agree(spec, interp, layout, row, inst, eff, subs):
    try:
        want = interp.step(inst, row)
        raised = False
    except ModelError:
        raised = True
    ok = evaluate(T.to_bool(eff.ok), subs)
    if raised:
        assert ok == 0, f"{inst.label}: the interpreter raises but Z3 says well-defined"
        return
    assert ok == 1, f"{inst.label}: Z3 flags an error the interpreter does not raise"
    assert evaluate(T.to_bool(eff.guard), subs) == int(want is not None), inst.label
    if want is None:
        return
    for v in spec.variables:
        off = layout.offsets[v.name]
        got = [evaluate(c, subs) for c in eff.post[v.name]]
        assert got == [int(x) for x in want[off:off + v.size]], f"{inst.label}: {v.name}"


@pytest.mark.slow
@SETTINGS
@given(st.integers(0, len(CONFIGS) - 1).flatmap(lambda ci: st.tuples(st.just(ci), states(ci))))
def test_invariants_and_lemmas_agree(c):
    ci, values = c
    spec, interp, tr, lem = setup(ci)
    layout = interp.layout
    row = row_of(spec, layout, values)
    pre = symbolic(ci, 0, False, 0)[0]
    subs = substitution(spec, pre, row, layout)
    props = [(i.name, i.expr) for i in spec.invariants] + list(lem.items())
    for name, e in props:
        try:
            want = int(interp.holds(e, row))
        except ModelError:
            want = None
        val, ok = tr.expr_ok(e, pre)
        if want is None:
            assert evaluate(T.to_bool(ok), subs) == 0, name
        else:
            assert evaluate(T.to_bool(ok), subs) == 1, name
            assert evaluate(T.to_bool(val), subs) == want, name


def permute(spec, layout, row, perm):
    """Rename replicas: replica r becomes perm[r]."""
    return permute_row(spec, layout, row, perm, symmetry_of(spec))


@SETTINGS
@given(st.integers(0, len(CONFIGS) - 1).flatmap(
    lambda ci: st.tuples(st.just(ci), states(ci),
                         st.permutations(range(CONFIGS[ci].R)),
                         st.integers(0, 10 ** 6))))
def test_replica_symmetry(c):
    """step(pi(s), A(pi(args))) = pi(step(s, A(args))), and every invariant and lemma has the
    same value on s and pi(s): what makes one instance per symmetry class enough."""
    ci, values, perm, pick = c
    spec, interp, tr, lem = setup(ci)
    layout = interp.layout
    row = row_of(spec, layout, values)
    prow = permute(spec, layout, row, perm)
    for name, e in [(i.name, i.expr) for i in spec.invariants] + list(lem.items()):
        try:
            a = interp.holds(e, row)
        except ModelError:
            continue
        assert interp.holds(e, prow) == a, name
    inst = interp.instances[pick % len(interp.instances)]
    pinst = next(i for i in interp.instances if i.action is inst.action
                 and i.args == tuple(perm[x] for x in inst.args))
    try:
        a = interp.step(inst, row)
    except ModelError:
        with pytest.raises(ModelError):
            interp.step(pinst, prow)
        return
    b = interp.step(pinst, prow)
    assert (a is None) == (b is None), inst.label
    if a is not None:
        assert np.array_equal(permute(spec, layout, a, perm), b), inst.label


def test_initial_state_agrees():
    for ci in range(len(CONFIGS)):
        spec, interp, tr, _ = setup(ci)
        s0, facts = tr.initial()
        assert facts == []  # one initial state: concrete
        row = interp.initial()
        assert np.array_equal(T.decode(spec, interp.layout, s0, None), row)


@SETTINGS
@given(st.integers(0, len(CONFIGS) - 1).flatmap(
    lambda ci: st.tuples(st.just(ci), states(ci), states(ci))))
def test_action_properties_agree(c):
    """Properties of a transition (reading the next state) over two random states."""
    ci, a, b = c
    spec, interp, tr, _ = setup(ci)
    layout = interp.layout
    ra, rb = row_of(spec, layout, a), row_of(spec, layout, b)
    cur = T.fresh_state(spec, "cur")
    nxt = T.fresh_state(spec, "nxt")
    subs = substitution(spec, cur, ra, layout) + substitution(spec, nxt, rb, layout)
    for p in spec.action_properties:
        try:
            want = int(interp.holds(p.expr, ra, rb))
        except ModelError:
            continue
        val, ok = tr.expr_ok(p.expr, cur, nxt)
        assert evaluate(T.to_bool(ok), subs) == 1, p.name
        assert evaluate(T.to_bool(val), subs) == want, p.name
