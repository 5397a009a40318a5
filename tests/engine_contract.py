"""The contract every engine meets: the base model's published counts and shortest violations,
and the same figures for protocols that are not Kafka.

Each engine's test module subclasses ``EngineContract`` (``KafkaContract`` and
``ProtocolContract`` together) and sets ``engine`` (and ``engine_opts``); pytest collects the
subclass and runs every check against that engine. A module may subclass the two halves apart,
e.g. to put one in the slow tier.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import kafka, tiered

from hwcheck.checker import protocols
from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.spec.kafka.params import Params

# (R, M, E, truncation, isr_expansion, distinct, generated, depth, shortest violations)
MODEL_TABLE = [
    (2, 2, 3, "hw", "hw", 10487, 30880, 38,
     {"CommittedNotLost": 8, "AckedNotLost": 8, "LogsMatchBelowHw": 9}),
    (2, 2, 3, "leader-epoch", "hw", 5368, 15777, 20, {"LogsMatchBelowHw": 11}),
    (2, 2, 3, "kip-279", "hw", 4978, 14722, 19, {}),
    (3, 1, 3, "kip-279", "hw", 69689, 326053, 29,
     {"CommittedNotLost": 12, "AckedNotLost": 12, "LogsMatchBelowHw": 14}),
    (3, 1, 3, "kip-279", "epoch-start", 57673, 272541, 25, {}),
]
# the row the fast tier runs on every engine (the slow tier runs them all): each row a kernel to
# compile, and each engine its own expansion of it
FAST_ROW = {(2, 2, 3, "hw", "hw")}
INVARIANTS = ("HwBelowLeo", "LeaderInIsr", "CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw")
FIXED = dict(truncation="kip-279", isr_expansion="epoch-start")


SPECS = Path(__file__).parent / "specs"

# Protocols that are not Kafka: (spec file, params, distinct, generated, depth, shortest
# violations). tests/test_protocols.py derives every figure again with a plain-Python BFS written
# from the TLA+ originals, not through hwcheck; 288 (3 RMs) and 8,832 (5 RMs) are also the
# distinct states TLC and Stateright publish for TwoPhase.
PROTOCOL_TABLE = [
    ("two_phase.py", {"rms": 3}, 288, 1145, 10, {}),
    ("two_phase.py", {"rms": 5}, 8832, 58145, 16, {}),
    ("two_phase.py", {"rms": 2, "tm_commits_early": True}, 76, 207, 7,
     {"TCConsistent": 5, "CommitAfterAllPrepared": 3}),
    ("die_hard.py", {}, 16, 96, 7, {"NotSolved": 6}),
    ("die_hard.py", {"big": 7, "small": 4, "goal": 6}, 22, 132, 10, {"NotSolved": 6}),
    ("die_hard.py", {"big": 6, "small": 4, "goal": 3}, 10, 60, 4, {}),  # gcd 2: 3 unreachable
]


def row_id(row) -> str:
    file, params = row[0], row[1]
    return "-".join([file[:-3]] + [f"{k}{v}" for k, v in params.items()])


# the protocols the fast tier runs on the local engine, and on the others
FAST_PROTOCOLS = {"two_phase-rms3", "two_phase-rms2-tm_commits_earlyTrue", "die_hard"}
FAST_PROTOCOL = {"two_phase-rms2-tm_commits_earlyTrue"}


def protocol_spec(file: str, params: dict):
    """The spec of ``file`` under tests/specs, loaded as ``--spec`` loads it."""
    return protocols.build(protocols.load(str(SPECS / file)), params)


class Engine:
    """The engine a contract runs on: ``check(..., engine=engine, **engine_opts)``."""

    engine = "local"
    engine_opts: dict = {}


def model_table_test(fast: set):
    """The check of every row of the base model's table, ``fast`` the rows of the fast tier."""

    @pytest.mark.parametrize("row", tiered(MODEL_TABLE, fast, key=lambda r: r[:5]),
                             ids=lambda r: f"R{r[0]}M{r[1]}E{r[2]}-{r[3]}-{r[4]}")
    def test_model_table(self, row):
        R, M, E, trunc, exp, distinct, generated, depth, shortest = row
        report = self.explore(Params(R, M, E, trunc, exp))
        ex = report.exploration
        assert (ex.distinct, ex.generated, ex.depth) == (distinct, generated, depth)
        assert ex.complete
        found = {o.name: o.length for o in report.outcomes
                 if o.kind == "invariant" and o.status == "violated"}
        assert found == shortest
        held = {o.name for o in report.outcomes if o.kind == "invariant" and o.status == "holds"}
        assert held == set(INVARIANTS) - set(shortest)
        assert report.verdict == ("violated" if shortest else "holds")

    return test_model_table


class KafkaContract(Engine):
    """The base model's table and the scenarios' headline figures."""

    def explore(self, params: Params, **opts):
        opts.setdefault("stop_at_violation", False)
        return check(kafka(params), Options(**opts), engine=self.engine, **self.engine_opts)

    test_model_table = model_table_test(FAST_ROW)

    @pytest.mark.slow
    def test_acks_1_loses_acknowledged_writes(self):
        report = self.explore(Params(2, 2, 3, acks="1", **FIXED))
        assert report.exploration.distinct == 12294
        assert {o.name: o.length for o in report.violations()} == {"AckedNotLost": 3}

    @pytest.mark.slow
    def test_unclean_election_loses_committed_data(self):
        report = self.explore(Params(2, 2, 3, unclean=True, **FIXED))
        assert report.exploration.distinct == 12291
        lengths = {o.name: o.length for o in report.violations()}
        assert lengths["CommittedNotLost"] == 4

    def test_traces_replay_and_end_in_the_violation(self):
        report = self.explore(Params(2, 2, 3, "hw", "hw"))
        for o in report.violations():
            assert o.trace.length == o.length
            assert len(o.trace.states) == o.length + 1
            assert o.trace.engine == report.exploration.engine

    def test_stops_at_the_first_violating_level(self):
        report = self.explore(Params(2, 2, 3, "hw", "hw"), stop_at_violation=True)
        ex = report.exploration
        assert not ex.complete and ex.depth == 8
        assert {o.name: o.length for o in report.violations()} == {
            "CommittedNotLost": 8, "AckedNotLost": 8}

    def test_max_states_gives_unknown(self):
        report = self.explore(Params(2, 2, 3, "hw", "hw"), max_states=200)
        assert report.verdict == "unknown"  # before the first violation (level 8, 623 states)
        assert 200 <= report.exploration.distinct < 623


def protocol_table_test(fast: set):
    """The check of every row of PROTOCOL_TABLE, ``fast`` the rows of the fast tier."""

    @pytest.mark.parametrize("row", tiered(PROTOCOL_TABLE, fast, key=row_id),
                             ids=row_id)
    def test_protocol_table(self, row, tmp_path):
        file, params, distinct, generated, depth, shortest = row
        report = self.explore_spec(file, params, out=tmp_path)
        ex = report.exploration
        assert (ex.distinct, ex.generated, ex.depth, ex.complete) == (
            distinct, generated, depth, True)
        assert {o.name: o.length for o in report.violations()} == shortest
        spec = report.spec
        held = {o.name for o in report.outcomes if o.kind == "invariant" and o.status == "holds"}
        assert held == {i.name for i in spec.invariants} - set(shortest)
        assert report.verdict == ("violated" if shortest else "holds")
        for o in report.violations():  # replayed on the way (from_path); written and readable
            assert o.trace.length == o.length == len(o.trace.states) - 1
            assert o.trace.engine == ex.engine
            assert [f.suffixes[-1] for f in o.files] == [".json", ".txt", ".html"]
            assert all(f.is_file() for f in o.files)
        assert {o.name: o.status for o in report.outcomes if o.kind == "reachable"} == {
            r.name: "reached" for r in spec.reachables}

    return test_protocol_table


def protocol_max_states_test(fast: bool):
    """A state limit on a protocol loaded from a spec file, before its end and without a
    violation (two-phase commit at three RMs): unknown. ``fast``: in the fast tier; an engine
    whose fast rows are FAST_PROTOCOL runs it in the slow tier (KafkaContract's
    ``test_max_states_gives_unknown`` is its limit in the fast tier)."""

    def test_protocol_max_states_gives_unknown(self):
        report = self.explore_spec("two_phase.py", {"rms": 3}, max_states=100)
        assert report.verdict == "unknown" and not report.exploration.complete
        assert 100 <= report.exploration.distinct < 288

    return test_protocol_max_states_gives_unknown if fast else \
        pytest.mark.slow(test_protocol_max_states_gives_unknown)


class ProtocolContract(Engine):
    """PROTOCOL_TABLE: the same counts, shortest violations, verdicts and traces on every
    engine, for protocols loaded from spec files as ``--spec`` loads them."""

    def explore_spec(self, file: str, params: dict, out=None, **opts):
        opts.setdefault("stop_at_violation", False)
        return check(protocol_spec(file, params), Options(**opts), engine=self.engine, out=out,
                     run_name="run", **self.engine_opts)

    test_protocol_table = protocol_table_test(FAST_PROTOCOLS)

    @pytest.mark.slow
    @pytest.mark.parametrize("row", [r for r in PROTOCOL_TABLE if r[5]], ids=row_id)
    def test_protocol_traces_are_the_local_engines(self, row):
        """Every engine picks the same shortest trace (the canonical parent: the least
        (parent fingerprint, action instance)); the local engine's is the reference."""
        file, params, *_, shortest = row
        mine = self.explore_spec(file, params)
        local = check(protocol_spec(file, params), Options(stop_at_violation=False))
        traces = {o.name: (o.trace.actions, o.trace.states) for o in mine.violations()}
        assert set(traces) == set(shortest)
        assert traces == {o.name: (o.trace.actions, o.trace.states) for o in local.violations()}

    def test_protocol_stops_at_the_first_violating_level(self):
        # two-phase with the broken TM: CommitAfterAllPrepared at level 3, TCConsistent at 5
        report = self.explore_spec("two_phase.py", {"rms": 2, "tm_commits_early": True},
                                   stop_at_violation=True)
        ex = report.exploration
        assert (ex.complete, ex.depth, report.verdict) == (False, 3, "violated")
        assert {o.name: o.length for o in report.violations()} == {"CommitAfterAllPrepared": 3}
        assert {o.name: o.status for o in report.outcomes if o.kind == "invariant"} == {
            "TPTypeOK": "unknown", "TCConsistent": "unknown", "CommitAfterAllPrepared": "violated"}

    test_protocol_max_states_gives_unknown = protocol_max_states_test(fast=True)


class EngineContract(KafkaContract, ProtocolContract):
    """Every check of the contract."""
