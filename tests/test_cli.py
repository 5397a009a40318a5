"""The hwcheck command line: verdicts, exit codes, traces on disk, replay, one-line errors."""

import json
import os
import subprocess
import sys

import pytest
from helpers import started

R2 = ["--replicas", "2", "--max-offset", "2", "--max-epoch", "3"]


def hwcheck(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, cwd=cwd)


@pytest.fixture(scope="module")
def hw_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cx")
    res = hwcheck("check", *R2, "--truncation", "hw", "--out", str(out), "--run-name", "hw")
    return res, out / "hw"


def test_hw_truncation_finds_the_8_step_data_loss(hw_run):
    res, folder = hw_run
    assert res.returncode == 12, res.stderr
    assert "CommittedNotLost violated in 8 steps" in res.stdout
    assert "Step 8: Elect(1)" in res.stdout
    verdict = [line for line in res.stdout.splitlines() if line.startswith("verdict: ")]
    assert len(verdict) == 1 and verdict[0].startswith("verdict: violated (CommittedNotLost in 8")
    assert (folder / "CommittedNotLost.itf.json").exists()
    assert (folder / "CommittedNotLost.txt").read_text().startswith(
        "CommittedNotLost violated in 8 steps")


def test_every_written_trace_replays(hw_run):
    _, folder = hw_run
    traces = sorted(folder.glob("*.itf.json"))
    assert traces
    for t in traces:
        res = hwcheck("replay", str(t))
        assert res.returncode == 0, res.stdout + res.stderr
        assert res.stdout.startswith("replay: confirmed: ")


def test_itf_shape(hw_run):
    _, folder = hw_run
    data = json.loads((folder / "CommittedNotLost.itf.json").read_text())
    assert data["#meta"]["params"]["truncation"] == "hw"
    assert data["#meta"]["property"] == "CommittedNotLost"
    assert data["vars"][:3] == ["log", "hw", "alive"]
    assert len(data["states"]) == 9
    first = data["states"][0]
    assert first["alive"] == {"#set": [0, 1]}
    assert first["log"] == {"#map": [[0, {"#map": [[0, 0], [1, 0]]}],
                                     [1, {"#map": [[0, 0], [1, 0]]}]]}
    assert data["states"][8]["#meta"]["action"] == "Elect(1)"


def test_a_tampered_trace_says_where_it_stops_matching(hw_run, tmp_path):
    _, folder = hw_run
    data = json.loads((folder / "CommittedNotLost.itf.json").read_text())
    data["states"][3]["hw"] = {"#map": [[0, 0], [1, 1]]}
    bad = tmp_path / "bad.itf.json"
    bad.write_text(json.dumps(data))
    res = hwcheck("replay", str(bad))
    assert res.returncode == 1
    assert "step 3 (FetchResponse(1)): hw is" in res.stdout


@pytest.mark.slow
def test_fixed_protocol_holds_with_json():
    res = hwcheck("check", *R2, "--truncation", "kip-279", "--json", "--quiet")
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    assert obj["verdict"] == "holds" and obj["violations"] == []
    assert (obj["distinct"], obj["generated"], obj["depth"]) == (4978, 14722, 19)
    assert set(obj) >= {"verdict", "distinct", "generated", "depth", "seconds", "violations"}


def test_continue_reports_each_shortest_violation_in_json(tmp_path):
    res = hwcheck("check", *R2, "--truncation", "hw", "--continue", "--json", "--quiet",
                  "--out", str(tmp_path))
    assert res.returncode == 12
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    assert {v["property"]: v["length"] for v in obj["violations"]} == {
        "CommittedNotLost": 8, "AckedNotLost": 8, "LogsMatchBelowHw": 9}
    assert obj["distinct"] == 10487


def test_max_states_is_unknown_not_holds():
    res = hwcheck("check", *R2, "--truncation", "hw", "--max-states", "100", "--quiet")
    assert res.returncode == 3
    assert "verdict: unknown" in res.stdout


@pytest.mark.parametrize("args, message", [
    (["check", "--replicas", "0"], "replicas must be an integer in 1..5"),
    (["check", "--max-offset", "99"], "max-offset must be an integer in 1..8"),
    (["check", "--replicas", "2", "--min-isr", "3"], "min-isr must be in 1..replicas"),
    (["check", "--invariant", "NoSuchThing"], "unknown property 'NoSuchThing'"),
    (["check", "--truncation", "sometimes"], "'sometimes' is not one of"),
    (["check", "--replicas", "two"], "'two' is not a valid integer"),
    (["replay", "/nonexistent/trace.itf.json"], "no such trace file"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    res = hwcheck(*args)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: error: ")
    assert message in lines[0]


@pytest.mark.parametrize("content", ["{not json", '{"states": []}', "[1, 2]"])
def test_malformed_trace_is_exit_2(tmp_path, content):
    bad = tmp_path / "bad.itf.json"
    bad.write_text(content)
    res = hwcheck("replay", str(bad))
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and res.stderr.startswith("hwcheck: error: ")


def test_interrupted_run_reports_what_it_found(tmp_path):
    """Ctrl-C keeps what was computed: the counts so far, the violations found, their traces.
    The SIGINT is the process's own, sent before level 12 (HWCHECK_FAULT), past the first
    violations (levels 8 and 9)."""
    cmd = [sys.executable, "-m", "hwcheck.checker", "check", *R2, "--truncation", "hw",
           "--continue", "--json", "-q", "--out", str(tmp_path)]
    with started(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                 env=dict(os.environ, HWCHECK_FAULT="interrupt:12")) as proc:
        out, err = proc.communicate()
    obj = json.loads(out.strip().splitlines()[-1])
    assert proc.returncode == 12, err
    assert (obj["verdict"], obj["complete"], obj["stop_reason"], obj["depth"]) == (
        "violated", False, "interrupted", 12)
    assert 0 < obj["distinct"] < 10_487
    assert {v["property"]: v["length"] for v in obj["violations"]} == {
        "CommittedNotLost": 8, "AckedNotLost": 8, "LogsMatchBelowHw": 9}
    for v in obj["violations"]:
        assert hwcheck("replay", v["trace"]).returncode == 0


def last_json(res) -> dict:
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_every_verdict_command_has_json_with_shared_field_names(hw_run, tmp_path):
    """One object on the last line of stdout; human text on stderr; the same names for the same
    meaning (command, verdict, protocol, params, violations[property, kind, length, trace])."""
    _, folder = hw_run
    res = hwcheck("replay", str(folder / "CommittedNotLost.itf.json"), "--json")
    obj = last_json(res)
    assert res.returncode == 0 and len(res.stdout.strip().splitlines()) == 1
    assert (obj["command"], obj["verdict"], obj["property"], obj["length"]) == (
        "replay", "confirmed", "CommittedNotLost", 8)
    assert obj["protocol"] == "hwcheck.spec.kafka:PROTOCOL"

    res = hwcheck("bmc", *R2, "--truncation", "hw", "--depth", "8", "--json", "-q", "--out",
                  str(tmp_path))
    obj = last_json(res)
    assert res.returncode == 12 and obj["command"] == "bmc" and obj["verdict"] == "violated"
    assert {(v["property"], v["kind"], v["length"]) for v in obj["violations"]} == {
        ("CommittedNotLost", "invariant", 8), ("AckedNotLost", "invariant", 8)}
    assert obj["params"]["truncation"] == "hw"
    assert "-bmc" in obj["violations"][0]["trace"]  # never over check's traces

    res = hwcheck("prove", *R2, "--truncation", "kip-279", "--isr-expansion", "epoch-start",
                  "--invariant", "HwBelowLeo", "--json", "-q", "--out", str(tmp_path))
    obj = last_json(res)
    assert res.returncode == 0 and (obj["command"], obj["verdict"]) == ("prove", "holds")
    assert obj["invariants"][0]["property"] == "HwBelowLeo"

    res = hwcheck("suite", "--scenario", "hw-truncation", "--json", "-q", "--out", str(tmp_path))
    obj = last_json(res)
    assert res.returncode == 0 and (obj["command"], obj["verdict"]) == ("suite", "ok")
    assert obj["scenarios"][0]["distinct"] == 10487

    res = hwcheck("params", "--json")
    obj = last_json(res)
    assert {p["name"] for p in obj["params"]} >= {"replicas", "max_offset", "truncation"}


def test_kafka_options_do_not_mix_with_another_spec():
    res = hwcheck("check", "--spec", "hwcheck.spec.kafka", "--replicas", "3")
    assert res.returncode == 2
    assert res.stderr.startswith("hwcheck: error: --replicas belongs to the kafka protocol")


def test_a_spec_by_module_and_params_runs():
    # hw truncation: the configuration the fast tier compiles anyway (kip-279's own expand
    # kernel would be this test's alone); --continue explores it whole
    res = hwcheck("check", "--spec", "hwcheck.spec.kafka:PROTOCOL", "--param", "replicas=2",
                  "--param", "truncation=hw", "--continue", "--json", "-q", "--workers", "1")
    assert res.returncode == 12, res.stderr
    obj = last_json(res)
    assert (obj["distinct"], obj["params"]["truncation"]) == (10487, "hw")
