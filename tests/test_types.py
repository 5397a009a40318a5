"""The structured state types (``spec/types.py``) and arithmetic by constants.

A typed value is stored as leaves in the flat row, so the compiled kernel, the interpreter
and Z3 read it through the code they already share; what is new is the canonical form (one
encoding a value) and the front end. Each is checked here by all three backends: equal values
reached along different paths give equal rows, and the backends agree step by step.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import z3
from specs.structured import build as structured

from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.z3 import translate as T
from hwcheck.spec.lang import Block, Spec, SpecError
from hwcheck.spec.types import (
    Bag,
    Enum,
    Int,
    Opt,
    Record,
    Seq,
    SetOf,
    ValueSet,
    none_of,
    set_of,
    some,
)

# -- three backends over one spec --------------------------------------------------------------


@cache
def backends(name: str):
    spec = {"structured": lambda: structured(values=1), "canon": canon_spec,
            "arith": arith_spec}[name]()
    spec.validate()
    return spec, Kernel(spec), Interpreter(spec), T.Translator(spec)


def z3_step(spec, tr, interp, inst, row):
    """The successor of ``row`` by ``inst`` as Z3 computes it (None: disabled or ill-defined)."""
    eff = tr.effect(inst, T.const_state(spec, interp.layout, row))
    if _value(T.to_bool(eff.ok)) != 1 or _value(T.to_bool(eff.guard)) != 1:
        return None
    out = interp.layout.empty()
    for v in spec.variables:
        off = interp.layout.offsets[v.name]
        out[off:off + v.size] = [_value(c) for c in eff.post[v.name]]
    return out


def _value(term) -> int:
    if T.is_const(term):
        return int(term)
    v = z3.simplify(term)
    return 1 if z3.is_true(v) else 0 if z3.is_false(v) else v.as_long()


def walk(name: str, labels: list[str]) -> list[np.ndarray]:
    """The rows after ``labels`` from the initial state, by the kernel, the interpreter and Z3
    (each must agree with the others at every step)."""
    spec, kernel, interp, tr = backends(name)
    row = interp.initial()
    assert np.array_equal(row, kernel.initial)
    for label in labels:
        inst = interp.instance(label)
        by_interp = interp.step(inst, row)
        by_kernel = kernel.step(inst.index, row)
        by_z3 = z3_step(spec, tr, interp, inst, row)
        assert by_interp is not None, f"{label} is not enabled"
        assert np.array_equal(by_interp, by_kernel), label
        assert np.array_equal(by_interp, by_z3), label
        row = by_interp
    return row


# -- canonical forms -----------------------------------------------------------------------------


def canon_spec() -> Spec:
    """An optional record, a sequence of records, a set inside a record inside a record."""
    spec = Spec("Canon", {})
    Item = Record(v=Int(0, 2), tag=SetOf(2))
    Inner = Record(members=SetOf(3), count=Int(0, 3))
    Slot = Opt(Record(owner=Int(0, 2), epoch=Int(0, 3)))
    q = spec.declare("q", Seq(Item, 3))
    outer = spec.declare("outer", Record(inner=Inner, flag=Int(0, 1)))
    slot = spec.declare("slot", Slot)
    spec.initial(lambda b: None)

    @spec.action("Push", over=[3], modifies=[q])
    def push(b: Block, v) -> None:
        b.require(q.len < 3)
        b.append(q, Item(v=v, tag=set_of(2, v % 2)))

    @spec.action("Pop", modifies=[q])
    def pop(b: Block) -> None:
        b.require(q.len > 0)
        b.truncate(q, q.len - 1)

    @spec.action("Add", over=[3], modifies=[outer])
    def add(b: Block, m) -> None:
        b.put(outer.inner.members, outer.inner.members.add(m))

    @spec.action("PutWhole", over=[3], modifies=[outer])
    def put_whole(b: Block, c) -> None:
        b.put(outer, outer.replace(inner=Inner(members=outer.inner.members, count=c), flag=1))

    @spec.action("PutFields", over=[3], modifies=[outer])
    def put_fields(b: Block, c) -> None:
        b.set(outer.flag, 1)
        b.set(outer.inner.count, c)

    @spec.action("Take", over=[3], modifies=[slot])
    def take(b: Block, o) -> None:
        b.put(slot, some(Slot, slot.value.replace(owner=o, epoch=3)))

    @spec.action("Free", modifies=[slot])
    def free(b: Block) -> None:
        b.require(slot.is_some())
        b.put(slot, none_of(Slot))

    Msg = Record(src=Int(0, 2), epoch=Int(0, 3), ok=Enum("No", "Yes"))
    msgs = spec.declare("msgs", Bag(Msg, 3, max_count=2))
    reqs = spec.declare("reqs", ValueSet(Record(leader=Opt(Int(0, 2)), isr=SetOf(3)), 2))

    @spec.action("Send", over=[3, 2], modifies=[msgs])
    def send(b: Block, src, e) -> None:
        b.insert(msgs, Msg(src=src, epoch=e + 1, ok=e))

    @spec.action("Receive", over=[3], modifies=[msgs])
    def receive(b: Block, k) -> None:  # one instance a slot: TLA+'s \E m \in DOMAIN msgs
        b.require(msgs.present(k))
        b.deliver(msgs, k)

    @spec.action("Request", over=[3], modifies=[reqs])
    def request(b: Block, ld) -> None:
        b.insert(reqs, reqs.item(0).replace(leader=ld, isr=set_of(3, ld)))

    @spec.action("Drop", over=[2], modifies=[reqs])
    def drop(b: Block, k) -> None:
        b.require(k < reqs.used)
        b.remove(reqs, k)

    @spec.action("Overfill", modifies=[q])
    def overfill(b: Block) -> None:  # no guard: past the capacity it is a domain error
        b.append(q, Item(v=2, tag=set_of(2)))

    spec.reachable("Busy", (msgs.used == 2) & (reqs.used == 2) & slot.is_some() & (q.len == 2))

    return spec


def test_two_send_orders_are_one_row():
    one = walk("canon", ["Send(2, 0)", "Send(0, 1)", "Send(1, 1)"])
    other = walk("canon", ["Send(1, 1)", "Send(2, 0)", "Send(0, 1)"])
    assert np.array_equal(one, other)
    spec, _, interp, _ = backends("canon")
    srcs = one[interp.layout.offsets["msgs.items.src"]:][:3]
    assert list(srcs) == [0, 1, 2]  # sorted by value


def test_a_bag_counts_and_keeps_delivered_messages():
    # sent twice: one slot, count 2; delivered twice: still known, count 0 (TLA+'s function
    # from messages to counts keeps its domain)
    spec, _, interp, _ = backends("canon")
    lay = interp.layout
    row = walk("canon", ["Send(1, 0)", "Send(1, 0)"])
    assert row[lay.offsets["msgs.used"]] == 1 and row[lay.offsets["msgs.count"]] == 2
    row = walk("canon", ["Send(1, 0)", "Send(1, 0)", "Receive(0)", "Receive(0)"])
    assert row[lay.offsets["msgs.used"]] == 1 and row[lay.offsets["msgs.count"]] == 0
    assert interp.step(interp.instance("Receive(0)"), row) is None  # nothing left to deliver
    with pytest.raises(ModelError, match=r"msgs\.count"):  # a third send of one message
        interp.step(interp.instance("Send(1, 0)"),
                    walk("canon", ["Send(1, 0)", "Send(1, 0)"]))


def test_a_set_of_records_removed_and_added_again_is_one_row():
    a = walk("canon", ["Request(2)", "Request(0)"])
    b = walk("canon", ["Request(0)", "Request(1)", "Drop(1)", "Request(2)", "Request(0)"])
    assert np.array_equal(a, b)
    with pytest.raises(ModelError, match=r"reqs\.used"):  # a third member: past the capacity
        _, _, interp, _ = backends("canon")
        interp.step(interp.instance("Request(1)"), a)


def test_a_set_emptied_again_is_the_initial_row():
    # every leaf starts at its default (an optional's sentinel), as removal leaves it
    assert np.array_equal(walk("canon", []), walk("canon", ["Request(1)", "Drop(0)"]))


BUSY = ["Send(2, 0)", "Send(0, 1)", "Send(2, 0)", "Request(2)", "Request(0)", "Take(1)",
        "Push(1)", "Push(0)", "Add(2)"]


def busy_trace():
    from hwcheck.checker.traces.trace import from_path

    spec, _, interp, _ = backends("canon")
    path = [(interp.instance(label).index, None) for label in BUSY]
    return spec, from_path(spec, interp, "Busy", "reachable", "test", path)


def test_itf_shows_typed_variables_as_values():
    from hwcheck.checker.traces import itf

    spec, trace = busy_trace()
    data = itf.to_itf(spec, trace)
    assert data["vars"] == ["q", "outer", "slot", "msgs", "reqs"]
    last = data["states"][-1]
    assert last["q"] == [{"v": 1, "tag": {"#set": [1]}}, {"v": 0, "tag": {"#set": [0]}}]
    assert last["slot"] == {"tag": "Some", "value": {"owner": 1, "epoch": 3}}
    assert last["outer"] == {"inner": {"members": {"#set": [2]}, "count": 0}, "flag": 0}
    assert last["msgs"] == {"#map": [[{"src": 0, "epoch": 2, "ok": "Yes"}, 1],
                                     [{"src": 2, "epoch": 1, "ok": "No"}, 2]]}
    assert last["reqs"]["#set"][0] == {"leader": {"tag": "Some", "value": 0},
                                       "isr": {"#set": [0]}}
    from hwcheck.checker.traces.text import generic

    text = generic(trace)
    assert "slot   Some([owner |-> 1, epoch |-> 3])" in text
    assert "q      <<[v |-> 1, tag |-> {1}], [v |-> 0, tag |-> {0}]>>" in text


def test_a_typed_itf_with_members_in_any_order_replays_and_a_wrong_one_does_not():
    import json

    from hwcheck.checker.traces import itf
    from hwcheck.checker.traces.trace import TraceError, replay

    spec, trace = busy_trace()
    data = json.loads(itf.dumps(spec, trace))
    for st in data["states"]:  # another tool may list a set's or a bag's members in any order
        st["msgs"]["#map"].reverse()
        st["reqs"]["#set"].reverse()
    replay(spec, itf.from_itf(spec, data))
    data["states"][3]["msgs"]["#map"][0][1] = 1  # a count the run never had (it is 2)
    with pytest.raises(TraceError, match="step 3"):
        replay(spec, itf.from_itf(spec, data))
    data["states"][3]["slot"] = {"tag": "Maybe", "value": 1}
    with pytest.raises(TraceError, match="state 3: slot should be"):
        itf.from_itf(spec, data)


def test_a_sequence_truncated_and_appended_again_is_the_same_row():
    direct = walk("canon", ["Push(2)", "Push(1)"])
    again = walk("canon", ["Push(2)", "Push(0)", "Push(1)", "Pop", "Pop", "Push(1)"])
    assert np.array_equal(direct, again)
    # and not a row that keeps the popped items past the length
    assert not np.array_equal(walk("canon", ["Push(2)"]), walk("canon", ["Push(2)", "Push(0)"]))


def test_an_absent_optional_is_one_row_whatever_it_held():
    start = walk("canon", [])
    assert np.array_equal(start, walk("canon", ["Take(2)", "Free"]))
    assert np.array_equal(walk("canon", ["Take(1)", "Free"]), walk("canon", ["Take(2)", "Free"]))


def test_a_set_in_a_nested_record_in_two_orders_is_one_row():
    assert np.array_equal(walk("canon", ["Add(0)", "Add(2)"]),
                          walk("canon", ["Add(2)", "Add(0)", "Add(2)"]))


def test_a_nested_record_written_whole_or_field_by_field_is_one_row():
    assert np.array_equal(walk("canon", ["Add(1)", "PutWhole(2)"]),
                          walk("canon", ["PutFields(2)", "Add(1)"]))


def test_appending_past_the_capacity_is_a_domain_error_naming_the_sequence():
    spec, kernel, interp, _ = backends("canon")
    row = walk("canon", ["Push(0)", "Push(1)", "Push(2)"])
    inst = interp.instance("Overfill")
    with pytest.raises(ModelError, match=r"q\.len"):
        interp.step(inst, row)
    assert kernel.step(inst.index, row) is None
    assert kernel.domain_errors.entries[kernel.last_error] == ("q.len", "Overfill")


@pytest.mark.slow  # its own compiled expansion
def test_a_check_reports_the_overflow_as_a_finding(tmp_path):
    spec = canon_spec()  # its bag and set overflow too (from 3 steps): each its own finding
    report = check(spec, Options(stop_at_violation=False, max_states=20_000), out=tmp_path)
    found = {n: h.length for n, h in report.exploration.hits.items() if h.kind == "domain"}
    [name] = [n for n in found if "q.len" in n]
    assert "Overfill" in name
    assert found[name] == 4  # three pushes, then one too many
    assert all(n.startswith(("DomainError(msgs.", "DomainError(reqs.")) and length >= 3
               for n, length in found.items() if n != name), found


# -- the structured protocol: three backends, one state space -----------------------------------


@pytest.mark.parametrize("params,counts", [
    (dict(values=1), (3_475, 23_228, 15)),
    pytest.param({}, (29_923, 216_628, 15), marks=pytest.mark.slow),
], ids=["values-1", "values-2"])
def test_kernel_and_interpreter_explore_the_same_structured_state_space(params, counts):
    spec = structured(**params)
    interp = Interpreter(spec)
    seen = {interp.initial().tobytes()}
    front, generated, depth = [interp.initial()], 0, 0
    while front:
        nxt = []
        for row in front:
            for _, t in interp.successors(row):
                generated += 1
                if t.tobytes() not in seen:
                    seen.add(t.tobytes())
                    nxt.append(t)
        front, depth = nxt, depth + (1 if nxt else 0)
    ex = check(spec, Options(stop_at_violation=False)).exploration
    assert (ex.distinct, ex.generated, ex.depth) == (len(seen), generated, depth) == counts


def test_z3_agrees_with_the_interpreter_on_sampled_states():
    spec, kernel, interp, tr = backends("structured")
    rows, front = [interp.initial()], [interp.initial()]
    for _ in range(4):  # the first levels, and every successor of a sample of them
        front = [t for r in front[:12] for _, t in interp.successors(r)]
        rows += front[::5]
    for row in rows:
        for inst in interp.instances:
            want = interp.step(inst, row)
            got = z3_step(spec, tr, interp, inst, row)
            assert (want is None) == (got is None), inst.label
            if want is not None:
                assert np.array_equal(want, got), inst.label
                assert np.array_equal(want, kernel.step(inst.index, row)), inst.label


def test_a_choice_is_one_successor_each():
    spec = structured()
    elect = next(a for a in spec.actions if a.name == "Elect")
    assert [p.size for p in elect.params] == [2, 2]  # the node, then the choice
    interp = backends("structured")[2]
    labels = [i.label for i, _ in interp.successors(interp.initial())]
    assert labels == ["Elect(0, 0)", "Elect(0, 1)", "Elect(1, 0)", "Elect(1, 1)"]


def test_enum_members_are_constants_of_their_index():
    role = Enum("Follower", "Leader", "Observer")
    assert (role.Leader.value, role.Observer.label, role.names) == (1, "Observer",
                                                                    role.names)
    with pytest.raises(SpecError, match="distinct"):
        Enum("A", "A")


def test_malformed_structured_specs_are_refused():
    spec = Spec("Bad", {})
    rec = spec.declare("r", Record(a=Int(0, 1), s=SetOf(2)))
    with pytest.raises(SpecError, match="no field 'b'"):
        rec.b  # noqa: B018
    with pytest.raises(SpecError, match="missing"):
        Record(a=Int(0, 1))(b=1)
    with pytest.raises(SpecError, match="constant"):
        rec.a * rec.a  # noqa: B018
    with pytest.raises(SpecError, match="positive"):
        rec.a // 0  # noqa: B018

    def write_computed(b: Block) -> None:
        b.put(rec.s | rec.s, set_of(2))

    with pytest.raises(SpecError, match="computed"):
        spec.action("W", modifies=["r.s"])(write_computed)


# -- arithmetic by constants ---------------------------------------------------------------------


def arith_spec() -> Spec:
    spec = Spec("Arith", {})
    x = spec.scalar("x", -7, 7)
    y = spec.scalar("y", -30, 30)
    spec.initial(lambda b: b.set(x, -7))

    @spec.action("Next", modifies=[x])
    def nxt(b: Block) -> None:
        b.require(x < 7)
        b.set(x, x + 1)

    @spec.action("Compute", over=[3], modifies=[y])
    def compute(b: Block, k) -> None:
        b.set(y, (x * 3 + 1) % 7 - x // 2 + 2 * (x % 3) + (k + 1) * 2 // 3)

    return spec


def test_products_and_floor_quotients_agree_everywhere():
    spec, kernel, interp, tr = backends("arith")
    row = interp.initial()
    for xv in range(-7, 8):  # every x, negative ones included: // and % floor, as in TLA+
        for k in range(3):
            got = walk("arith", ["Next"] * (xv + 7) + [f"Compute({k})"])
            y = got[interp.layout.offsets["y"]]
            assert y == (xv * 3 + 1) % 7 - xv // 2 + 2 * (xv % 3) + (k + 1) * 2 // 3
    assert row is not None


def test_symmetry_refuses_to_rename_members_held_in_sorted_slots():
    from hwcheck.checker.semantics.symmetry import check_symmetry

    spec = Spec("Sym", {})
    reqs = spec.declare("reqs", ValueSet(Record(leader=Int(0, 2)), 2))
    spec.initial(lambda b: None)
    names = [v.name for _, v in spec.typed[0].leaves]
    assert names == ["reqs.used", "reqs.items.leader"] and reqs.cap == 2
    sym = {"size": 3, "dims": {}, "ids": {"reqs.items.leader": 1}, "other": ["reqs.used"]}
    with pytest.raises(SpecError, match="reqs is a set or bag kept in sorted slots"):
        check_symmetry(spec, sym)
