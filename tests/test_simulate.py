"""`hwcheck simulate`: random walks that find the known bugs, reproducibly, with minimised
traces that replay; statistics; any protocol."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import kafka

from hwcheck.checker.cli.main import main
from hwcheck.checker.sim.simulate import SimOptions, simulate, trace_of
from hwcheck.checker.traces.trace import replay

SPECS = Path(__file__).resolve().parent / "specs"
R2 = ["-R", "2", "-M", "2", "-E", "3"]


def run(*args: str):
    res = CliRunner().invoke(main, ["simulate", *args, "--json", "-q"])
    obj = json.loads(res.stdout.strip().splitlines()[-1]) if res.stdout.strip() else None
    return res, obj


def test_simulate_finds_kip_101s_loss_and_the_minimised_trace_replays(tmp_path):
    res, obj = run(*R2, "--truncation", "hw", "--walks", "2000", "--seed", "3", "--out",
                   str(tmp_path))
    assert res.exit_code == 12, res.output
    assert obj["verdict"] == "violated"
    v = obj["violations"][0]
    assert v["property"] in ("CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw")
    assert 8 <= v["length"] <= v["walk_steps"]  # exhaustive search's shortest is 8 steps
    ok = CliRunner().invoke(main, ["replay", v["trace"]])
    assert ok.exit_code == 0 and "confirmed" in ok.output
    # the walk that found it, run alone, finds it again
    alone, again = run(*R2, "--truncation", "hw", "--seed", "3", "--first-walk",
                       str(v["walk"]), "--walks", "1", "--out", str(tmp_path / "alone"))
    assert alone.exit_code == 12
    assert again["violations"][0]["walk"] == v["walk"]
    assert again["violations"][0]["length"] == v["length"]


@pytest.mark.slow
def test_the_same_seed_gives_the_same_walks_on_any_number_of_workers():
    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation="kip-279",
                 isr_expansion="epoch-start")
    a = simulate(spec, SimOptions(seed=7, walks=300, depth=40, workers=1, max_seconds=None))
    b = simulate(spec, SimOptions(seed=7, walks=300, depth=40, workers=2, max_seconds=None))
    c = simulate(spec, SimOptions(seed=8, walks=300, depth=40, workers=1, max_seconds=None))
    assert a.found is None and b.found is None
    assert (a.walks, a.steps, a.taken, a.enabled, a.distinct) == \
        (b.walks, b.steps, b.taken, b.enabled, b.distinct)
    assert a.taken != c.taken  # another seed, other walks
    assert a.verdict == "unknown"  # a simulation never says holds
    assert a.distinct <= 4_978  # the states exhaustive search finds
    assert not a.never_taken


def test_a_violation_is_the_least_walk_whatever_the_workers():
    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
    one = simulate(spec, SimOptions(seed=3, walks=2000, workers=1, max_seconds=None))
    two = simulate(spec, SimOptions(seed=3, walks=2000, workers=2, max_seconds=None))
    assert one.found is not None and two.found is not None
    assert (one.found.walk, one.found.path) == (two.found.walk, two.found.path)
    trace = trace_of(spec, one.found)
    replay(spec, trace)


@pytest.mark.slow
def test_simulate_runs_any_spec_and_reports_unknown_when_nothing_is_found(tmp_path):
    res, obj = run("--spec", str(SPECS / "two_phase.py"), "--param", "tm_commits_early=true",
                   "--walks", "500", "--out", str(tmp_path))
    assert res.exit_code == 12
    assert obj["violations"][0]["property"] in ("TCConsistent", "CommitAfterAllPrepared")
    res, obj = run("--spec", str(SPECS / "two_phase.py"), "--walks", "200", "--out",
                   str(tmp_path))
    assert res.exit_code == 3 and obj["verdict"] == "unknown"
    assert obj["walks"] == 200 and obj["distinct_seen"] <= 288  # two-phase's reachable states
    # uniform walks rarely get every RM prepared before one aborts: committing is rare
    assert set(obj["never_taken"]) <= {"TMCommit", "RMRcvCommitMsg"}
    res, obj = run("--spec", str(SPECS / "two_phase.py"), "--walks", "200", "--swarm",
                   "--out", str(tmp_path))
    assert res.exit_code == 3 and obj["never_taken"] == []  # swarm walks turn aborts off
    assert set(obj["actions"]) == {"TMRcvPrepared", "TMCommit", "TMAbort", "RMPrepare",
                                   "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg"}


@pytest.mark.slow
def test_a_step_out_of_the_domains_is_a_finding_that_replays(tmp_path):
    res, obj = run("--spec", str(SPECS / "domains_overflow.py"), "--walks", "200", "--out",
                   str(tmp_path))
    assert res.exit_code == 12, res.output
    v = obj["violations"][0]
    assert v["kind"] == "domain" and v["property"].startswith("DomainError(")
    ok = CliRunner().invoke(main, ["replay", v["trace"], "--spec",
                                   str(SPECS / "domains_overflow.py")])
    assert ok.exit_code == 0, ok.output


def test_swarm_mode_is_reproducible_too():
    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
    a = simulate(spec, SimOptions(seed=5, walks=2000, swarm=True, workers=1, max_seconds=None))
    b = simulate(spec, SimOptions(seed=5, walks=2000, swarm=True, workers=2, max_seconds=None))
    assert (a.found.walk, a.found.path) == (b.found.walk, b.found.path)


@pytest.mark.slow
def test_five_replicas_beyond_exhaustive_sizes(tmp_path):
    res, obj = run("-R", "5", "-M", "8", "-E", "8", "--truncation", "hw", "--max-seconds", "60",
                   "--out", str(tmp_path))
    assert res.exit_code == 12 and obj["violations"][0]["property"] == "CommittedNotLost"
    assert CliRunner().invoke(main, ["replay", obj["violations"][0]["trace"]]).exit_code == 0
    res, obj = run("-R", "5", "-M", "8", "-E", "8", "--truncation", "kip-279",
                   "--isr-expansion", "epoch-start", "--max-seconds", "5", "--out",
                   str(tmp_path))
    assert res.exit_code == 3 and obj["violations"] == [] and obj["steps"] > 0
