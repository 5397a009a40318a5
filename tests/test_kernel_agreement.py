"""The compiled kernel and the interpreter agree on every guard, effect and property.

Two independent readings of the same spec objects: the code generator (unrolled, folded,
numba-compiled) and the tree-walking interpreter. Hypothesis drives both over random walks from
the initial state and over arbitrary states of the variables' domains.
"""

from functools import cache

import numpy as np
import pytest
from helpers import kafka as build
from helpers import tiered
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwcheck.checker.semantics.fingerprint import fingerprint
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.kafka.params import Params

CONFIGS = {
    "hw": Params(2, 2, 3, "hw", "hw"),
    "leader-epoch": Params(2, 2, 3, "leader-epoch", "hw"),
    "kip-279": Params(2, 2, 3, "kip-279", "hw"),
    "kip-279-R3": Params(3, 1, 3, "kip-279", "epoch-start"),
    "acks-1": Params(2, 2, 3, "kip-279", "epoch-start", acks="1"),
    "unclean": Params(2, 2, 3, "kip-279", "epoch-start", unclean=True),
}
FAST = {"hw", "kip-279"}  # the fast tier's configurations (compiled once for every test)


@cache
def pair(name: str):
    spec = build(CONFIGS[name])
    return spec, Kernel(spec), Interpreter(spec)


def compare_state(name: str, row: np.ndarray, arbitrary: bool) -> list[np.ndarray]:
    return compare(*pair(name), row, arbitrary)


def compare(spec, kernel, interp, row: np.ndarray, arbitrary: bool) -> list[np.ndarray]:
    """Every guard, effect and property of ``spec`` on ``row``, kernel against interpreter.
    Where the interpreter refuses (an index outside a shape, a value outside a domain: possible
    on arbitrary states), the kernel must report the same domain error."""
    succs = []
    for inst in interp.instances:
        try:
            want, refused = interp.step(inst, row), None
        except ModelError as e:
            if not arbitrary:
                raise
            want, refused = None, e
        got = kernel.step(inst.index, row)
        if refused is not None:
            assert got is None and kernel.last_error, f"{inst.label}: no error on {row}"
            assert kernel.domain_errors.entries[kernel.last_error] == (
                refused.variable, inst.action.name), f"{inst.label}: {refused}"
            continue
        assert kernel.last_error == 0, f"{inst.label}: a domain error the interpreter has not"
        assert (want is None) == (got is None), f"{inst.label}: guards disagree on {row}"
        if want is not None:
            assert np.array_equal(want, got), f"{inst.label}: effects disagree on {row}"
            succs.append(want)
            for j, (pname, expr, _) in enumerate(kernel.props.transition):
                tp = getattr(kernel.mod, f"tp_{j}")
                err = np.zeros(1, np.int64)
                assert bool(tp(row, got, err)) == interp.holds(expr, row, want), pname
                assert err[0] == 0
    for j, (pname, expr, _) in enumerate(kernel.props.state):
        err = np.zeros(1, np.int64)
        value = bool(getattr(kernel.mod, f"sp_{j}")(row, err))
        try:
            want = interp.holds(expr, row)
        except ModelError as e:
            assert err[0] and kernel.domain_errors.entries[err[0]] == (e.variable, pname)
            continue
        assert err[0] == 0 and value == want, pname
    return succs


@pytest.mark.parametrize("name", tiered(list(CONFIGS), FAST))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(choices=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=40))
def test_random_walks_agree(name, choices):
    _, kernel, interp = pair(name)
    row = interp.initial()
    assert np.array_equal(row, kernel.initial)
    for c in choices:
        succs = compare_state(name, row, arbitrary=False)
        row = succs[c % len(succs)]


@st.composite
def arbitrary_state(draw, name: str):
    spec, kernel, _ = pair(name)
    row = np.zeros(kernel.stride, kernel.dtype)
    for v in spec.variables:
        off = kernel.layout.offsets[v.name]
        for i in range(v.size):
            row[off + i] = draw(st.integers(v.lo, v.hi))
    return row


@pytest.mark.parametrize("name", tiered(["hw", "kip-279", "kip-279-R3", "unclean"], FAST))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_arbitrary_states_agree(name, data):
    compare_state(name, data.draw(arbitrary_state(name)), arbitrary=True)


PINNED = 0xA4E1A12E8B99EE56  # fingerprint(0, 1, ..., 15): traces and Spark rely on stability


def test_fingerprint_is_stable_across_processes():
    import subprocess
    import sys

    row = np.arange(16, dtype=np.int8)
    assert int(fingerprint(row)) == PINNED
    code = ("import numpy as np; from hwcheck.checker.semantics.fingerprint import fingerprint; "
            "print(int(fingerprint(np.arange(16, dtype=np.int8))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == PINNED
    row[15] = 0
    assert int(fingerprint(row)) != PINNED


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=12), data=st.data())
def test_a_fingerprint_updated_from_the_changed_words_is_the_rows(words, data):
    # the kernels fingerprint a successor from its parent's sum and the words its action wrote
    from hwcheck.checker.semantics.fingerprint import (
        fingerprint_of_sum,
        fingerprint_sum,
        word_term,
    )

    row = np.array(words, np.uint64)
    q = data.draw(st.integers(0, row.size - 1))
    new = np.uint64(data.draw(st.integers(0, 2**64 - 1)))
    h = (int(fingerprint_sum(row)) - int(word_term(q, row[q])) + int(word_term(q, new))) % 2**64
    changed = row.copy()
    changed[q] = new
    assert int(fingerprint_of_sum(np.uint64(h))) == int(fingerprint(changed.view(np.int8)))


def expanded_levels(kernel, levels: int):
    """(frontier, its successors) for the first ``levels`` levels, through the engines'
    expansion."""
    from hwcheck.checker.engines.expand import expand
    from hwcheck.checker.engines.visited import VisitedTable

    table = VisitedTable()
    for row in kernel.starts:
        table.add(kernel.fingerprint(row))
    front = kernel.starts.copy()
    nt = max(len(kernel.props.transition), 1)
    for _ in range(levels):
        _, dom_row, dom_inst = kernel.error_arrays()
        succ = expand(kernel, front, table, np.ones(nt, np.bool_), np.full(nt, -1, np.int64),
                      np.full(nt, -1, np.int64), dom_row, dom_inst)
        yield front, succ
        front = succ.rows.copy()


def wide_rows(view: bool):
    """A small protocol with rows of 26 words (wider than ``templates.NARROW``): counters at
    both ends of a wide array and one in the middle, actions writing one, two or a slot of the
    array each; under a VIEW, one counter left out."""
    from hwcheck.spec.lang import Block, Spec

    spec = Spec("WideRows", {"view": view})
    lo = spec.scalar("lo", 0, 3)
    pad = spec.array("pad", (96,), 0, 2)
    mid = spec.scalar("mid", 0, 3)
    slots = spec.array("slots", (96,), 0, 1)
    hi = spec.scalar("hi", 0, 2)
    spec.initial(lambda b: None)

    @spec.action("Lo", modifies=[lo])
    def inc_lo(b: Block) -> None:
        b.require(lo < 3)
        b.set(lo, lo + 1)

    @spec.action("Both", modifies=[lo, hi])
    def both(b: Block) -> None:
        b.require(hi < 2, lo > 0)
        b.set(hi, hi + 1)
        b.set(lo, lo - 1)

    @spec.action("Mid", modifies=[mid, pad])
    def inc_mid(b: Block) -> None:
        b.require(mid < 3)
        b.set(mid, mid + 1)
        b.set(pad[mid * 31], 2)

    @spec.action("Slot", over=[96], modifies=[slots])
    def slot(b: Block, k) -> None:
        b.require(k < 2 + mid, slots[k] == 0)
        b.set(slots[k], 1)

    if view:
        spec.view = frozenset(v.name for v in spec.variables if v.name != "hi")
    return spec


@pytest.mark.parametrize("name", ["hw", pytest.param("view", marks=pytest.mark.slow), "wide",
                                  pytest.param("wide-view", marks=pytest.mark.slow)])
def test_every_successor_fingerprint_is_its_rows(name):
    # the expansion updates a wide row's successor's fingerprint from the words its action
    # modifies and puts those words back for the next instance (a narrow row's is hashed
    # whole): each successor it lets through is its parent's step, and its fingerprint the
    # trace tools' of that row (under a VIEW too)
    from hwcheck.checker.semantics.templates import NARROW

    if name == "view":
        from pathlib import Path

        from hwcheck.checker import protocols

        spec = protocols.build(protocols.load(
            str(Path(__file__).parent / "specs" / "view_counter.py")), {})
        kernel = Kernel(spec)
    elif name.startswith("wide"):
        kernel = Kernel(wide_rows(view=name == "wide-view"))
        assert kernel.mod.WORDS > NARROW and "h = _fp_delta" in kernel.source
        assert ("h = _fp_delta_masked(" in kernel.source) == (name == "wide-view")
    else:
        kernel = pair(name)[1]
    seen = 0
    for front, succ in expanded_levels(kernel, 6):
        for j in range(succ.rows.shape[0]):
            row = succ.rows[j]
            assert int(succ.fps[j]) == kernel.fingerprint(row)
            step = kernel.step(int(succ.acts[j]), front[succ.parents[j]])
            assert step is not None and np.array_equal(step, row)
            seen += 1
    assert seen >= 8  # (the view's counter has 9 states)


def test_a_guard_filter_never_rules_out_an_enabled_instance():
    # the expansion skips the instances a filter of the guard rules out (its leading
    # conjuncts that cannot fail, each level tested as soon as the loops it reads are set);
    # on every state of the first levels, wherever a filter is false the guard is false too,
    # with no domain error, and the filters rule out some instances
    import itertools

    from hwcheck.checker.semantics.templates import guard_filters

    kernel = pair("hw")[1]
    spec, mod = kernel.spec, kernel.mod
    err = np.zeros(1, np.int64)
    ruled_out = 0
    for front, _ in expanded_levels(kernel, 5):
        for s in front:
            for ai, a in enumerate(spec.actions):
                plan = guard_filters(a)
                if plan is None:
                    continue
                order, conj = plan
                for level in sorted({level for level, _ in conj}):
                    if kernel.fails.get(f"g_first_{ai}_{level}") is not False:
                        continue
                    test = getattr(mod, f"g_first_{ai}_{level}")
                    for ps in itertools.product(*(range(p.size) for p in a.params)):
                        if not test(s, *(ps[d] for d in order[:level]), err):
                            ruled_out += 1
                            assert not getattr(mod, f"g_{ai}")(s, *ps, err) and err[0] == 0
    assert ruled_out > 0


@pytest.mark.slow
def test_filters_nest_first_the_loops_their_first_conjunct_reads_and_keep_every_successor():
    # Take's first conjunct reads its second parameter (a message present): the kernel loops
    # over q outside p, tests each filter as soon as its loops are set, and its levels are
    # the interpreter's, successor for successor (a spec of its own: a kernel compile)
    from hwcheck.checker.engines.options import Options
    from hwcheck.checker.run import check
    from hwcheck.spec.lang import Spec

    spec = Spec("Nested", {})
    a = spec.array("a", (3,), 0, 2)
    m = spec.array("m", (4,), 0, 1)
    spec.initial(lambda b: b.set(m[1], 1))

    @spec.action("Take", over=[3, 4], modifies=[a, m])
    def take(b, p, q):
        b.require(m[q] == 1, a[p] < 2, (p + q) % 2 == 0)
        b.set(a[p], a[p] + 1)
        b.set(m[q], 0)

    @spec.action("Put", over=[4], modifies=[m])
    def put(b, q):
        b.require(m[q] == 0)
        b.set(m[q], 1)

    kernel, interp = Kernel(spec), Interpreter(spec)
    source = open(kernel.mod.__file__).read()
    assert "for p1 in range(4):" in source and source.index("for p1 in range(4):") < \
        source.index("for p0 in range(3):")
    # the interpreter's search, transition by transition, against the kernel's counts
    seen = {r.tobytes() for r in interp.initials()}
    level, generated = list(interp.initials()), 0
    while level:
        nxt = []
        for row in level:
            for _, t in interp.successors(row):
                generated += 1
                if t.tobytes() not in seen:
                    seen.add(t.tobytes())
                    nxt.append(t)
        level = nxt
    ex = check(spec, Options(stop_at_violation=False)).exploration
    assert (ex.complete, ex.distinct, ex.generated) == (True, len(seen), generated)
