"""The scenario suite: the table, `hwcheck scenarios` / `suite` / `check --scenario`, HTML pages,
and the canonical counterexamples committed in counterexamples/."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import kafka as build

from hwcheck.checker import protocols
from hwcheck.checker import suite as runner
from hwcheck.checker.cli import common
from hwcheck.checker.cli.main import main
from hwcheck.checker.traces import html, itf
from hwcheck.spec.kafka import scenarios, views
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.kafka.scenarios import HOLDS, Scenario, scenario, verdicts

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "counterexamples"
REQUIRED = ("hw-truncation", "kip-101", "kip-279", "kafka-7128-fix", "acks-1", "unclean-election",
            "min-isr-2")
# Every scenario with a violation is small (well under a second to explore); the big ones hold.
PROTOCOL = protocols.load("kafka")  # as the command line loads it (its source is known)
VIOLATING = [s for s in scenarios.SCENARIOS if s.violated()]


def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


# -- the table ---------------------------------------------------------------------------------


def test_the_table_names_every_required_scenario_once():
    names = [s.name for s in scenarios.SCENARIOS]
    assert len(names) == len(set(names))
    assert set(REQUIRED) <= set(names)
    assert {s.params["replicas"] for s in scenarios.SCENARIOS
            if s.name.startswith("kafka-7128-fix")} \
        == {2, 3}


@pytest.mark.parametrize("sc", scenarios.SCENARIOS, ids=lambda s: s.name)
def test_each_scenario_expects_a_verdict_for_every_property(sc: Scenario):
    spec = build(sc.params)
    props = {p.name for p in spec.invariants + spec.action_properties + spec.liveness}
    assert set(sc.expect) == props
    assert {"LeaderHwMonotonic", "EpochMonotonic"} <= set(sc.expect)
    assert all(v == HOLDS or (isinstance(v, int) and v > 0) for v in sc.expect.values())
    assert set(sc.reached) == {r.name for r in spec.reachables}
    assert sc.story and "\n" not in sc.story


def test_the_table_agrees_with_model_md():
    """The base model (docs/model.md) publishes these shortest violations for the same
    configurations."""
    got = {s.name: s.violated() for s in scenarios.SCENARIOS}
    assert got["hw-truncation"] == {"CommittedNotLost": 8, "AckedNotLost": 8, "LogsMatchBelowHw": 9}
    assert got["kip-101"] == {"LogsMatchBelowHw": 11}
    assert got["kip-279"] == {"CommittedNotLost": 12, "AckedNotLost": 12, "LogsMatchBelowHw": 14}
    assert got["acks-1"] == {"AckedNotLost": 3}
    assert got["unclean-election"]["CommittedNotLost"] == 4
    assert got["kafka-7128-fix"] == {} and got["min-isr-2"] == {}
    assert got["min-isr-2-unclean"]["AckedNotLost"] > 0
    states = {s.name: s.states for s in scenarios.SCENARIOS}
    assert (states["hw-truncation"], states["kip-101"], states["kip-279"]) == (10487, 5368, 69689)
    assert (states["acks-1"], states["unclean-election"]) == (12294, 12291)
    assert (got["kip-279-r2"], states["kip-279-r2"]) == ({}, 4978)
    assert all(states.values())


def test_spec_scenarios_imports_no_checker_code():
    code = ("import sys, hwcheck.spec.kafka; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'click', 'z3', 'pyspark', 'numba'} | "
            "{m for m in sys.modules if m.startswith('hwcheck.checker')}))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_an_unknown_scenario_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown scenario 'nope' .*hw-truncation"):
        PROTOCOL.scenario("nope")


# -- runs against the table and the committed traces ---------------------------------------------


# one scenario with one worker and two (the slow tier: two Kafka runs with their traces written
# and compared); the whole suite (the slow tier, below) runs every scenario against the
# committed traces
@pytest.mark.parametrize("sc", [pytest.param(s, marks=pytest.mark.slow) for s in VIOLATING
                                if s.name == "hw-truncation"], ids=lambda s: s.name)
def test_violating_scenario_matches_and_its_traces_are_the_committed_ones(sc, tmp_path):
    first = runner.run_scenario(PROTOCOL, sc, out=tmp_path / "a")
    assert first.rows and not first.mismatches, [runner.mismatch_line(r) for r in first.mismatches]
    second = runner.run_scenario(PROTOCOL, sc, out=tmp_path / "b", workers=2)
    assert second.rows and not second.mismatches, \
        [runner.mismatch_line(r) for r in second.mismatches]
    a, b = files_of(tmp_path / "a" / sc.name), files_of(tmp_path / "b" / sc.name)
    expected = {f"{p}{suffix}" for p in sc.violated() for suffix in runner.TRACE_SUFFIXES}
    expected.add(runner.MARKER)  # what wrote the traces: command, protocol, parameters
    assert set(a) == expected
    assert a == b, "one worker and two wrote different bytes"
    committed = files_of(COMMITTED / sc.name)
    assert set(committed) == set(a), "counterexamples/ is stale: run `make check` and commit it"
    for name in a:
        assert committed[name] == a[name], \
            f"counterexamples/{sc.name}/{name} differs from a fresh run"


def test_every_committed_trace_replays():
    # only the scenario folders: a user's own `hwcheck check` runs may sit beside them
    traces = sorted(t for s in VIOLATING for t in (COMMITTED / s.name).glob("*.itf.json"))
    assert {t.parent.name for t in traces} == {s.name for s in VIOLATING}
    for t in traces:
        res = cli("replay", str(t))
        assert res.exit_code == 0, res.output
        assert res.output.startswith("replay: confirmed: ")
        assert t.name.split(".")[0] in res.output


@pytest.fixture(scope="module")
def hw_report(tmp_path_factory):
    sc = PROTOCOL.scenario("hw-truncation")
    return sc, runner.run_scenario(PROTOCOL, sc, out=tmp_path_factory.mktemp("cx")).report


def test_compare_names_each_difference(hw_report):
    sc, report = hw_report
    assert not [r for r in runner.compare(sc, report) if not r.ok]

    longer = dataclasses.replace(sc, expect={**sc.expect, "CommittedNotLost": 9})
    [bad] = [r for r in runner.compare(longer, report) if not r.ok]
    assert runner.mismatch_line(bad) == ("mismatch: hw-truncation: CommittedNotLost: expected "
                                         "violated in 9, found violated in 8")

    holds = dataclasses.replace(sc, expect={**sc.expect, "LogsMatchBelowHw": HOLDS})
    [bad] = [r for r in runner.compare(holds, report) if not r.ok]
    assert (bad.prop, bad.why) == ("LogsMatchBelowHw", "expected holds, found violated in 9")

    missing = {k: v for k, v in sc.expect.items() if k != "EpochMonotonic"}
    [bad] = [r for r in runner.compare(dataclasses.replace(sc, expect=missing), report)
             if not r.ok]
    assert (bad.prop, bad.why) == ("EpochMonotonic", "the scenario has no expectation for it")

    extra = dataclasses.replace(sc, expect={**sc.expect, "NoSuchProperty": HOLDS})
    [bad] = [r for r in runner.compare(extra, report) if not r.ok]
    assert (bad.prop, bad.why) == ("NoSuchProperty", "the model has no such property")

    [bad] = [r for r in runner.compare(dataclasses.replace(sc, states=10_000), report)
             if not r.ok]
    assert runner.mismatch_line(bad) == ("mismatch: hw-truncation: (states): expected 10,000 "
                                         "distinct states, found 10,487")


@pytest.mark.slow
def test_changing_one_expected_length_makes_the_suite_fail_naming_it(monkeypatch, tmp_path):
    changed = tuple(dataclasses.replace(s, expect={**s.expect, "AckedNotLost": 4})
                    if s.name == "acks-1" else s for s in scenarios.SCENARIOS)
    monkeypatch.setattr(common, "DEFAULT", dataclasses.replace(PROTOCOL, scenarios=changed))
    res = cli("suite", "--scenario", "acks-1", "--out", str(tmp_path), "-q")
    assert res.exit_code == 1
    assert ("mismatch: acks-1: AckedNotLost: expected violated in 4, found violated in 3"
            in res.output.splitlines())
    assert res.output.rstrip().splitlines()[-1].startswith("suite: 1 mismatch;")


@pytest.mark.slow
def test_a_scenario_that_never_truncates_is_reported_as_vacuous(tmp_path):
    """One replica: nothing to replicate, so no follower ever truncates. Every invariant holds,
    and the suite says that the run never reached a truncation."""
    lonely = scenario("one-replica", "A single broker.", "-", Params(1, 1, 2), verdicts())
    res = runner.run_scenario(PROTOCOL, lonely, out=tmp_path)
    assert res.report.exploration.complete
    assert [(r.prop, r.found) for r in res.mismatches] == [("FollowerTruncated", "unreached")]
    assert "vacuously" in res.mismatches[0].why
    assert not (tmp_path / "one-replica").exists()  # no trace, no folder


@pytest.mark.slow
def test_the_suite_prints_the_table_and_writes_the_traces(tmp_path):
    res = cli("suite", "--scenario", "unclean-election", "--out", str(tmp_path), "-q")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["scenario", "property", "expected", "found", "length", "states",
                                "seconds"]
    row = next(line for line in lines if "CommittedNotLost" in line).split()
    assert row[:7] == ["unclean-election", "CommittedNotLost", "violated", "in", "4", "violated",
                       "4"]
    assert row[7] == "12,291"
    assert lines[-1].startswith("suite: ok; 1 scenario, 10 checks, 12,291 states")
    for prop in ("CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw"):
        for suffix in runner.TRACE_SUFFIXES:
            assert (tmp_path / "unclean-election" / f"{prop}{suffix}").is_file()


def test_the_suite_replaces_stale_traces_and_keeps_other_files(tmp_path):
    folder = tmp_path / "hw-truncation"
    folder.mkdir()
    (folder / "HwBelowLeo.txt").write_text("an old trace of an invariant that holds\n")
    (folder / "AckedNotLost.txt").write_text("an old trace\n")
    (folder / "notes.md").write_text("mine\n")
    res = cli("suite", "--scenario", "hw-truncation", "--out", str(tmp_path), "-q")
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in folder.iterdir()) == sorted([runner.MARKER, "notes.md"] + [
        f"{prop}{suffix}" for prop in ("CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw")
        for suffix in (".html", ".itf.json", ".txt")])
    assert (folder / "AckedNotLost.txt").read_text().startswith("AckedNotLost violated in 8")


def test_scenarios_lists_every_scenario():
    res = cli("scenarios")
    assert res.exit_code == 0
    listed = [line.split()[0] for line in res.output.splitlines()]
    assert listed == [s.name for s in scenarios.SCENARIOS]
    verbose = cli("scenarios", "-v").output
    assert "expected violations (shortest, steps): CommittedNotLost 12, AckedNotLost 12" in verbose


def test_suite_rejects_an_unknown_scenario(tmp_path):
    res = cli("suite", "--scenario", "nope", "--out", str(tmp_path))
    assert res.exit_code == 2
    assert "unknown scenario 'nope'" in res.output


# -- check --scenario ----------------------------------------------------------------------------


def test_check_scenario_runs_its_parameters_under_its_name(tmp_path):
    res = cli("check", "--scenario", "hw-truncation", "--out", str(tmp_path), "-q")
    assert res.exit_code == 12
    assert "R=2 M=2 E=3 truncation=hw isr-expansion=hw acks=all" in res.output
    assert "verdict: violated (CommittedNotLost in 8 steps, AckedNotLost in 8 steps)" in res.output
    assert (tmp_path / "hw-truncation" / "AckedNotLost.itf.json").is_file()


@pytest.mark.slow
def test_check_scenario_explicit_options_override_it(tmp_path):
    res = cli("check", "--scenario", "acks-1", "--acks", "all", "--out", str(tmp_path), "-q")
    assert res.exit_code == 0, res.output
    assert "acks=all" in res.output and "verdict: holds; 4,978 distinct states" in res.output
    assert not (tmp_path / "acks-1").exists()


def test_check_unknown_scenario_is_a_one_line_error():
    res = subprocess.run([sys.executable, "-m", "hwcheck.checker", "check", "--scenario", "nope"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.startswith("hwcheck: error: unknown scenario 'nope' (known: hw-truncation")
    assert len(res.stderr.strip().splitlines()) == 1


# -- HTML ----------------------------------------------------------------------------------------


def test_html_page_is_self_contained_and_shows_the_trace():
    path = COMMITTED / "hw-truncation" / "CommittedNotLost.itf.json"
    data = itf.read(path)
    spec = build(Params.from_dict(data["#meta"]["params"]))
    trace = itf.from_itf(spec, data)
    trace.views = PROTOCOL.views
    page = html.page(trace, html.describe(spec, "CommittedNotLost"))
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</html>\n")
    for external in ("http://", "https://", "<script", "<link", "src=", "url("):
        assert external not in page
    assert "<th>r0</th><th>r1</th><th>partition</th>" in page
    assert page.count("<tr>") == 1 + len(trace.states)
    assert page.count('<td class="step">') == 9 and "Elect(1)" in page
    assert "violates <b>CommittedNotLost</b>: the leader&#x27;s log holds every committed" in page
    assert page == (COMMITTED / "hw-truncation" / "CommittedNotLost.html").read_text()


# -- the whole suite -----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_whole_suite_matches_and_writes_exactly_the_committed_traces(tmp_path):
    res = cli("suite", "--out", str(tmp_path), "-q")
    assert res.exit_code == 0, res.output
    assert "MISMATCH" not in res.output
    assert res.output.rstrip().splitlines()[-1].startswith(
        f"suite: ok; {len(scenarios.SCENARIOS)} scenarios")
    for sc in scenarios.SCENARIOS:
        assert files_of(tmp_path / sc.name) == files_of(COMMITTED / sc.name), sc.name


def test_html_explains_the_violation_and_outlines_the_records():
    data = itf.read(COMMITTED / "kip-101" / "LogsMatchBelowHw.itf.json")
    spec = build(Params.from_dict(data["#meta"]["params"]))
    trace = itf.from_itf(spec, data)
    trace.views = PROTOCOL.views
    why, flagged = views.explain(trace)
    assert why == ("r0 (HW 1) and r1 (HW 1) disagree at offset 0: a record of epoch 1 against a "
                   "record of epoch 2")
    assert flagged == {0: frozenset({0}), 1: frozenset({0})}
    page = html.page(trace)
    assert page.count("box bad") == 2 and "Here r0 (HW 1) and r1 (HW 1)" in page

    # Action properties are explained from the last step.
    st = trace.states[-1]
    back = dict(st, epoch=st["epoch"] - 1)
    step = dataclasses.replace(trace, property="EpochMonotonic", kind="action",
                               states=[st, back], actions=["Elect(0)"])
    assert views.explain(step) == (f"the epoch went from {st['epoch']} to {st['epoch'] - 1}", {})
