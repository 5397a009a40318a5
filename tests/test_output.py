"""Output that stays where it belongs: atomic files, run names that cannot leave --out, run
folders that never mix configurations, an unusable --out said before anything is explored."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hwcheck.checker.traces.output import (
    MARKER,
    OutputError,
    check_run_name,
    prepare_run_folder,
    write_atomic,
)

R2 = ["-R", "2", "-M", "2", "-E", "3"]


def hwcheck(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, cwd=cwd)


@pytest.mark.parametrize("name", ["../x", "/abs/olute", "a/b", "..", ".", "", "x" * 300,
                                  "tab\there"])
def test_run_names_cannot_leave_out(name):
    with pytest.raises(OutputError):
        check_run_name(name)


@pytest.mark.parametrize("args, message", [
    (["--run-name", "../x"], "--run-name must be a single folder name, got '../x'"),
    (["--run-name", "x" * 300], "--run-name is 300 characters; at most 120"),
    (["--out", "/dev/null"], "--out /dev/null is not a folder"),
    (["--out", "/proc/hwcheck-out"], "--out /proc/hwcheck-out cannot be written"),
])
def test_bad_output_options_are_one_line_before_exploring(args, message, tmp_path):
    res = hwcheck("check", *R2, *args, cwd=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "verdict" not in res.stdout and "level" not in res.stderr  # before exploring
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hwcheck: error: {message}")


def test_ad_hoc_runs_do_not_write_into_counterexamples(tmp_path):
    res = hwcheck("check", *R2, "-q", cwd=tmp_path)
    assert res.returncode == 12
    assert not (tmp_path / "counterexamples").exists()
    folder = tmp_path / "hwcheck-out" / "R2-M2-E3-hw-isr-hw-acks-all-minisr1"
    assert (folder / "CommittedNotLost.itf.json").is_file()
    marker = json.loads((folder / MARKER).read_text())
    assert marker["command"] == "check" and marker["params"]["truncation"] == "hw"


def test_a_run_folder_of_another_configuration_is_refused(tmp_path):
    first = hwcheck("check", *R2, "-q", "--run-name", "mine", cwd=tmp_path)
    assert first.returncode == 12
    other = hwcheck("check", *R2, "--acks", "1", "-q", "--run-name", "mine", cwd=tmp_path)
    assert other.returncode == 2
    assert "holds traces of another configuration or command" in other.stderr
    again = hwcheck("check", *R2, "-q", "--run-name", "mine", cwd=tmp_path)  # same: fine
    assert again.returncode == 12


@pytest.mark.slow
def test_bmc_and_prove_never_overwrite_checks_traces(tmp_path):
    hwcheck("check", *R2, "-q", cwd=tmp_path)
    res = hwcheck("bmc", *R2, "--depth", "8", "-q", cwd=tmp_path)
    assert res.returncode == 12
    names = sorted(p.name for p in (tmp_path / "hwcheck-out").iterdir())
    assert names == ["R2-M2-E3-hw-isr-hw-acks-all-minisr1",
                     "R2-M2-E3-hw-isr-hw-acks-all-minisr1-bmc"]
    res = hwcheck("bmc", *R2, "--depth", "8", "-q", "--run-name",
                  "R2-M2-E3-hw-isr-hw-acks-all-minisr1", cwd=tmp_path)
    assert res.returncode == 2 and "another configuration or command" in res.stderr


def test_a_failed_write_leaves_nothing_partial(tmp_path, monkeypatch):
    target = tmp_path / "t.txt"
    write_atomic(target, "old\n")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_a_trace_that_cannot_be_written_still_reports_the_verdict(tmp_path, monkeypatch):
    from helpers import kafka

    from hwcheck.checker.engines.options import Options
    from hwcheck.checker.run import check
    from hwcheck.checker.traces import output

    def full_disk(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output, "write_atomic", full_disk)
    report = check(kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw"),
                   Options(stop_at_violation=False), out=tmp_path, run_name="r")
    assert report.verdict == "violated"
    assert {o.name: o.length for o in report.violations()} == {
        "CommittedNotLost": 8, "AckedNotLost": 8, "LogsMatchBelowHw": 9}
    assert all("could not be written: No space left on device" in o.note
               for o in report.violations())
    assert all(o.trace is not None for o in report.violations())
    assert [v.get("note") for v in report.as_json()["violations"]] != [None, None, None]


def test_prepare_run_folder_checks_before_creating(tmp_path):
    folder = prepare_run_folder(tmp_path / "out", "run", {"command": "check"})
    assert folder == tmp_path / "out" / "run" and not folder.exists()
    assert [p.name for p in (tmp_path / "out").iterdir()] == []  # the probe file is gone


def test_environment_faults_are_one_line(tmp_path, monkeypatch):
    """No Java, a Spark master that does not answer (a bounded wait), an unwritable kernel
    cache: one line each, exit 2, nothing left behind."""
    import shutil

    from hwcheck.checker.environment import EnvironmentFault
    from hwcheck.checker.spark import session

    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(EnvironmentFault, match="needs Java 17"):
        session.preflight("local[2]")
    monkeypatch.undo()
    with pytest.raises(EnvironmentFault, match="no Spark master answers there"):
        session.preflight("spark://127.0.0.1:9")
    with pytest.raises(EnvironmentFault, match="expected local"):
        session.preflight("yarn")

    env = dict(os.environ, HWCHECK_CACHE="/proc/hwcheck-cache")
    res = subprocess.run([sys.executable, "-m", "hwcheck.checker", "check", *R2, "--acks", "0",
                          "--out", str(tmp_path)], capture_output=True, text=True, env=env)
    assert res.returncode == 2
    assert res.stderr.strip() == ("hwcheck: error: the kernel cache /proc/hwcheck-cache/kernels "
                                  "cannot be written (No such file or directory); set "
                                  "HWCHECK_CACHE to a writable folder")
