"""The contract every engine meets: MODEL.md's published counts and shortest violations.

Each engine's test module subclasses ``EngineContract`` and sets ``engine`` (and
``engine_opts``); pytest collects the subclass and runs every check against that engine.
"""

from __future__ import annotations

import pytest

from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from pathlib import Path

from hwcheck.checker import protocols
from hwcheck.spec.kafka.params import Params
from helpers import kafka

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
INVARIANTS = ("HwBelowLeo", "LeaderInIsr", "CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw")
FIXED = dict(truncation="kip-279", isr_expansion="epoch-start")


SPECS = Path(__file__).parent / "specs"

# Protocols that are not Kafka: (spec file, params, distinct, generated, depth, shortest
# violations). tests/test_protocols.py derives every figure again with a plain-Python BFS written
# from the TLA+ originals, not through hwcheck.
PROTOCOL_TABLE = [
    ("two_phase.py", {"rms": 3}, 288, 1145, 10, {}),
    ("two_phase.py", {"rms": 2, "tm_commits_early": True}, 76, 207, 7,
     {"TCConsistent": 5, "CommitAfterAllPrepared": 3}),
    ("die_hard.py", {}, 16, 96, 7, {"NotSolved": 6}),
    ("die_hard.py", {"big": 7, "small": 4, "goal": 6}, 22, 132, 10, {"NotSolved": 6}),
]


def protocol_spec(file: str, params: dict):
    return protocols.build(protocols.load(str(SPECS / file)), params)


class EngineContract:
    engine = "local"
    engine_opts: dict = {}

    def explore(self, params: Params, **opts):
        opts.setdefault("stop_at_violation", False)
        return check(kafka(params), Options(**opts), engine=self.engine, **self.engine_opts)

    @pytest.mark.parametrize("row", MODEL_TABLE, ids=lambda r: f"R{r[0]}M{r[1]}E{r[2]}-{r[3]}-{r[4]}")
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

    def test_acks_1_loses_acknowledged_writes(self):
        report = self.explore(Params(2, 2, 3, acks="1", **FIXED))
        assert report.exploration.distinct == 12294
        assert {o.name: o.length for o in report.violations()} == {"AckedNotLost": 3}

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
        report = self.explore(Params(2, 2, 3, "kip-279", "hw"), max_states=500)
        assert report.verdict == "unknown"
        assert 500 <= report.exploration.distinct < 4978

    @pytest.mark.parametrize("row", PROTOCOL_TABLE,
                             ids=lambda r: f"{r[0][:-3]}-" + "-".join(f"{k}{v}" for k, v in
                                                                     r[1].items()))
    def test_protocols_that_are_not_kafka(self, row, tmp_path):
        file, params, distinct, generated, depth, shortest = row
        spec = protocol_spec(file, params)
        report = check(spec, Options(stop_at_violation=False), engine=self.engine,
                       out=tmp_path, run_name="run", **self.engine_opts)
        ex = report.exploration
        assert (ex.distinct, ex.generated, ex.depth, ex.complete) == (
            distinct, generated, depth, True)
        assert {o.name: o.length for o in report.violations()} == shortest
        assert report.verdict == ("violated" if shortest else "holds")
        for o in report.violations():  # replayed on the way (from_path); written and readable
            assert o.trace.length == o.length and o.files
        assert all(o.status == "reached" for o in report.outcomes if o.kind == "reachable")
