"""Certification of traces by Z3 (``hwcheck replay --z3``)."""

from __future__ import annotations

import copy

import pytest
from helpers import kafka as build

from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.z3.certify import certify
from hwcheck.spec.kafka.params import Params


@pytest.fixture(scope="module")
def bfs_traces():
    params = Params(2, 2, 3, "hw", "hw")
    report = check(build(params), Options(stop_at_violation=False))
    return build(params), [o.trace for o in report.violations()]


def test_bfs_counterexamples_are_certified(bfs_traces):
    spec, traces = bfs_traces
    assert {t.property for t in traces} == {"CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw"}
    for t in traces:
        res = certify(spec, t)
        assert res.ok, res.summary()
        assert "certified by Z3" in res.summary()


def test_a_tampered_state_is_rejected(bfs_traces):
    spec, traces = bfs_traces
    t = copy.deepcopy(traces[0])
    t.states[3]["hw"][0] = (t.states[3]["hw"][0] + 1) % 3
    res = certify(spec, t)
    assert not res.ok
    assert "step 3" in res.summary() and "hw" in res.summary()


def test_a_wrong_action_is_rejected(bfs_traces):
    spec, traces = bfs_traces
    t = copy.deepcopy(traces[0])
    t.actions[0] = "Crash(1)" if t.actions[0] != "Crash(1)" else "Crash(0)"
    assert not certify(spec, t).ok


def test_a_trace_that_does_not_violate_is_rejected(bfs_traces):
    spec, traces = bfs_traces
    t = copy.deepcopy(traces[0])
    t.property = "HwBelowLeo"
    res = certify(spec, t)
    assert not res.ok and "does not violate HwBelowLeo" in res.summary()
