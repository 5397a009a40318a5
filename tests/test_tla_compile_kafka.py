"""The compiled path on docs/tla/KafkaHW.tla: functions of functions, function values passed to
operators (``Truncate(log[f], n)``, a LET's ``[log EXCEPT ![L][n] = epoch]``), CHOOSE
(``MinS``, ``MaxS``), set filters and maps over the state, ``1..last`` with an end read from
the state, Cardinality of computed sets, a value-level CASE and the recursive ``Kip279``. The
fast tier compares the compiled spec with the evaluator state by state on the first states of
one configuration; the slow tier runs every R=2 configuration on the kernel, against TLC's
counts and each invariant's shortest violation (docs/tla/README.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from engine_contract import MODEL_TABLE
from test_tla_explore import KAFKA_TLC_MORE, _kafka_cfg

from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.tla.cfg import parse_cfg_file
from hwcheck.checker.tla.compile import compile_model
from hwcheck.checker.tla.explore import explore, model

KAFKA = Path(__file__).resolve().parent.parent / "docs" / "tla"


def frozen(state: dict) -> tuple:
    return tuple(sorted(state.items()))


def test_kafka_hw_compiled_is_the_evaluators_state_by_state() -> None:
    # kip-279 truncation (the recursive Kip279, MaxS over a set map intersected with 1..last),
    # epoch-start expansion (EpochStart's MinS) and acks=1 (an IF between two functions)
    m = model(KAFKA / "KafkaHW.tla", parse_cfg_file(KAFKA / "R2-M2-E3-fixed-acks-1.cfg"))
    # the first states' domains: the states compared below and their successors lie in them
    # (a value outside would be the interpreter's domain error, not a pass)
    ref = explore(m, check_deadlock=False, max_states=1_500)
    c = compile_model(m, {v: ref.values(v) for v in m.root.variables})
    assert [(v.name, v.shape) for v in c.spec.variables][:2] == [("log", (2, 2)), ("hw", (2,))]
    it, layout = Interpreter(c.spec), Layout.of(c.spec)
    rows = it.initials()
    assert [c.decode(layout.to_dict(r)) for r in rows] == list(m.ev.initial(m.init))
    seen = {r.tobytes() for r in rows}
    queue, compared, labels = list(rows), 0, Counter[str]()
    while queue and compared < 150:
        row = queue.pop(0)
        state = c.decode(layout.to_dict(row))
        ways = Counter((label.name, frozen(t)) for label, t in m.ev.successors(m.next, state))
        mine = Counter((c.steps[inst.action.name], frozen(c.decode(layout.to_dict(t))))
                       for inst, t in it.successors(row))
        assert mine == ways, state
        labels.update(name for name, _ in mine)
        for inv in m.invariants:
            assert it.holds(c.spec.invariant_named(inv.name).expr, row) == \
                m.ev.predicate(inv, state), inv.name
        assert it.holds(c.spec.invariant_named("Deadlock").expr, row) == bool(ways)
        for _, t in it.successors(row):
            if t.tobytes() not in seen:
                seen.add(t.tobytes())
                queue.append(t)
        compared += 1
    assert compared == 150
    # every action of the module was taken in the states compared
    assert set(labels) == {"Produce", "FetchRequest", "FetchResponse", "BecomeFollower",
                           "ShrinkIsr", "Crash", "Restart", "Elect"}


KAFKA_ROWS = {_kafka_cfg(*r[:5]): (r[5], r[6] + 1, r[7] + 1, r[8])
              for r in MODEL_TABLE if r[0] == 2}
KAFKA_ROWS.update(KAFKA_TLC_MORE)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KAFKA_ROWS))
def test_kafka_hw_compiled_gives_tlcs_counts_on_the_kernel(name: str) -> None:
    distinct, generated, depth, shortest = KAFKA_ROWS[name]
    m = model(KAFKA / "KafkaHW.tla", parse_cfg_file(KAFKA / f"{name}.cfg"))
    ref = explore(m, check_deadlock=False)
    c = compile_model(m, {v: ref.values(v) for v in m.root.variables}, deadlock=False)
    report = check(c.spec, Options(stop_at_violation=False))
    ex = report.exploration
    assert not [o for o in report.outcomes if o.kind == "domain"]
    # TLC counts the initial state as generated and as a level
    assert (ex.distinct, ex.generated + 1, ex.depth + 1) == (distinct, generated, depth)
    assert {o.name: o.length for o in report.violations()} == shortest
    assert {o.name for o in report.outcomes if o.kind == "invariant" and o.status == "holds"} \
        == {inv.name for inv in m.invariants} - set(shortest)
