"""The compiled path on docs/tla/KafkaHW.tla and KafkaKRaft.tla: functions of functions,
function values passed to operators (``Truncate(log[f], n)``, a LET's
``[log EXCEPT ![L][n] = epoch]``), CHOOSE (``MinS``, ``MaxS``), set filters and maps over
the state, ``1..last`` with an end read from the state, Cardinality of computed sets, a
value-level CASE, the recursive ``Kip279`` and (in KafkaKRaft) functions to sets. The fast
tier compares the compiled spec with the evaluator state by state on the first states of one
configuration of each; the slow tier runs R=2 configurations of each on the kernel (KafkaHW's
each truncation once), against TLC's counts and each invariant's shortest violation
(docs/tla/README.md)."""

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


def compare_first_states(module: str, cfg: str, states: int) -> Counter[str]:
    """The compiled spec against the evaluator on the first ``states`` states in breadth
    first order: initial states, every transition with its step name, every invariant, the
    deadlock check; the step names taken."""
    m = model(KAFKA / module, parse_cfg_file(KAFKA / cfg))
    # the first states' domains: the states compared and their successors lie in them (a
    # value outside would be the interpreter's domain error, not a pass)
    ref = explore(m, check_deadlock=False, max_states=1_500)
    c = compile_model(m, {v: ref.values(v) for v in m.root.variables})
    it, layout = Interpreter(c.spec), Layout.of(c.spec)
    rows = it.initials()
    assert [c.decode(layout.to_dict(r)) for r in rows] == list(m.ev.initial(m.init))
    seen = {r.tobytes() for r in rows}
    queue, compared, labels = list(rows), 0, Counter[str]()
    while queue and compared < states:
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
    assert compared == states
    return labels


def test_kafka_hw_compiled_is_the_evaluators_state_by_state() -> None:
    # kip-279 truncation (the recursive Kip279, MaxS over a set map intersected with 1..last),
    # epoch-start expansion (EpochStart's MinS) and acks=1 (an IF between two functions)
    labels = compare_first_states("KafkaHW.tla", "R2-M2-E3-fixed-acks-1.cfg", 100)
    # every action of the module was taken in the states compared
    assert set(labels) == {"Produce", "FetchRequest", "FetchResponse", "BecomeFollower",
                           "ShrinkIsr", "Crash", "Restart", "Elect"}


def test_kafka_kraft_compiled_is_the_evaluators_state_by_state() -> None:
    # a function to sets (each broker's ISR view lIsr), a function of functions (rleo), the
    # ELR and fencing sets
    labels = compare_first_states("KafkaKRaft.tla", "KRaft-R2-M1-E2-kraft-fencing-elr.cfg", 80)
    assert {"ShrinkIsr", "FenceBroker", "UnfenceBroker", "LearnMetadata", "Elect"} <= set(labels)


KAFKA_ROWS = {_kafka_cfg(*r[:5]): (r[5], r[6] + 1, r[7] + 1, r[8])
              for r in MODEL_TABLE if r[0] == 2}
KAFKA_ROWS.update(KAFKA_TLC_MORE)
# On the kernel: each truncation once (each a kernel compiled for minutes): hw, leader-epoch,
# and of the kip-279 rows the one that reaches the most (the recursive Kip279, EpochStart's
# MinS, the unclean election, three violations' lengths). The plain kip-279 row and acks=1 are
# TLC's counts on the evaluator (test_tla_explore.py), acks=1's IF the compiled spec's state by
# state in the fast tier.
ON_THE_KERNEL = ["R2-M2-E3-hw", "R2-M2-E3-leader-epoch", "R2-M2-E3-fixed-unclean"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ON_THE_KERNEL)
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


# docs/tla/README.md, "The KRaft controller": TLC's distinct / generated / depth
KRAFT_TLC = {"KRaft-R2-M1-E2-kraft": (5042, 21850, 22),
             "KRaft-R2-M1-E2-kraft-fencing-elr": (4371, 19550, 23)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KRAFT_TLC))
def test_kafka_kraft_compiled_gives_tlcs_counts_on_the_kernel(name: str) -> None:
    m = model(KAFKA / "KafkaKRaft.tla", parse_cfg_file(KAFKA / f"{name}.cfg"))
    ref = explore(m, check_deadlock=False)
    c = compile_model(m, {v: ref.values(v) for v in m.root.variables}, deadlock=False)
    report = check(c.spec, Options(stop_at_violation=False))
    ex = report.exploration
    assert not [o for o in report.outcomes if o.kind == "domain"]
    assert (ex.distinct, ex.generated + 1, ex.depth + 1) == KRAFT_TLC[name]
    assert report.violations() == []


# hachikuji/kafka-specification's Kip320.tla and the modules it extends are not in this
# repository (tests/specs/tla/README.md): copied beside the cfgs of tests/specs/tla/kip320/,
# the slow tier checks the original on the compiled path
KIP320 = Path(__file__).resolve().parent / "specs" / "tla" / "kip320"
KIP320_MODULES = ["Kip320.tla", "Kip279.tla", "KafkaReplication.tla", "FiniteReplicatedLog.tla",
                  "IdSequence.tla", "Util.tla"]


@pytest.mark.slow
def test_hachikujis_kip320_on_the_compiled_path_gives_tlcs_counts(tmp_path: Path) -> None:
    # records (replicaState[r].hw), a record or Nil (replicaLog[r].records[o]), named
    # INSTANCEs renaming the variables their actions assign (ReplicaLog!Append): TLC's
    # 5,973 / 11,839 / 18 at two replicas, after the domains' discovery and widening
    missing = [f for f in KIP320_MODULES if not (KIP320 / f).is_file()]
    if missing:
        pytest.skip(f"hachikuji's modules not copied beside {KIP320} ({', '.join(missing)})")
    from hwcheck.checker.tla.front import build

    for f in KIP320_MODULES:
        (tmp_path / f).write_bytes((KIP320 / f).read_bytes())
    cfg = tmp_path / "Kip320.cfg"  # TLC's -deadlock: CHECK_DEADLOCK FALSE
    cfg.write_text((KIP320 / "Kip320-R2.cfg").read_text() + "CHECK_DEADLOCK FALSE\n")
    c = build(tmp_path / "Kip320.tla", cfg, say=lambda _: None, cache=tmp_path / "cache")
    assert {v.name for v in c.spec.variables} >= {"replicaState.hw", "replicaLog.records.tag"}
    report = check(c.spec, Options(stop_at_violation=False))
    ex = report.exploration
    assert (ex.complete, ex.distinct, ex.generated + 1, ex.depth + 1) == (True, 5973, 11839, 18)
    assert {o.name: (o.kind, o.status) for o in report.outcomes} == {
        "WeakIsr": ("invariant", "holds"), "StrongIsr": ("invariant", "holds")}
