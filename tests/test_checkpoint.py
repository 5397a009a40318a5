"""Checkpoint and resume: a run killed with SIGKILL (between levels, or in the middle of writing
a checkpoint) and resumed ends with exactly the counts and traces of a run never stopped; a
checkpoint of another spec, other parameters or another format is refused.

The kills are real SIGKILLs, sent by the process to itself at a chosen point
(HWCHECK_FAULT), so that they land where the test means them to on any machine."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import tiered

# 10,487 states, depth 38, three violations (8, 8, 9 steps): small, deep, and the fast tier's
# configuration (its kernel is compiled once for every test)
ARGS = ["check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--continue",
        "--json", "-q"]


def hwcheck(*args, fault: str | None = None):
    env = dict(os.environ)
    if fault:
        env["HWCHECK_FAULT"] = fault
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, env=env)


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


def traces(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*.itf.json"))}


def same_run(got: dict, want: dict) -> None:
    for key in ("distinct", "generated", "depth", "verdict", "complete"):
        assert got[key] == want[key], key
    assert [(v["property"], v["length"]) for v in got["violations"]] == \
        [(v["property"], v["length"]) for v in want["violations"]]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    res = hwcheck(*ARGS, "--out", str(out), "--run-name", "r")
    assert res.returncode == 12
    return last_json(res.stdout), traces(out)


@pytest.mark.parametrize("depth", tiered([0, 5, 13, 28], {13}))
def test_killed_and_resumed_ends_like_an_uninterrupted_run(depth, uninterrupted, tmp_path):
    want, want_traces = uninterrupted
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    res = hwcheck(*ARGS, "--checkpoint", str(ckpt), "--checkpoint-every", "0", "--out", str(out),
                  "--run-name", "r", fault=f"after-checkpoint:{depth}")
    assert res.returncode == -signal.SIGKILL and res.stdout == ""
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--out", str(out), "--run-name", "r")
    assert res.returncode == 12, res.stderr
    same_run(last_json(res.stdout), want)
    assert traces(out) == want_traces  # byte for byte


@pytest.mark.slow
def test_killed_in_the_middle_of_a_checkpoint_write(uninterrupted, tmp_path):
    """The process dies halfway through writing the checkpoint of depth 10: the one of depth 9
    stays current, and resuming from it ends like an uninterrupted run."""
    want, want_traces = uninterrupted
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    res = hwcheck(*ARGS, "--checkpoint", str(ckpt), "--checkpoint-every", "0", "--out", str(out),
                  "--run-name", "r", fault="checkpoint-write:10")
    assert res.returncode == -signal.SIGKILL
    assert list(ckpt.glob("state-*.tmp")), "the kill came in the middle of a write"
    meta = json.loads((ckpt / (ckpt / "CURRENT").read_text().strip() / "meta.json").read_text())
    assert meta["depth"] == 9
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--out", str(out), "--run-name", "r")
    assert res.returncode == 12, res.stderr
    same_run(last_json(res.stdout), want)
    assert traces(out) == want_traces


@pytest.mark.slow
@pytest.mark.parametrize("before, after", [("1", "3"), ("2", "1")])
def test_resumed_with_another_number_of_workers(before, after, uninterrupted, tmp_path):
    """The visited set is split between the workers: a checkpoint of N workers, resumed with
    M, ends like a run never stopped."""
    want, want_traces = uninterrupted
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    res = hwcheck(*ARGS, "--workers", before, "--checkpoint", str(ckpt), "--checkpoint-every",
                  "0", "--out", str(out), "--run-name", "r", fault="after-checkpoint:13")
    assert res.returncode == -signal.SIGKILL
    res = hwcheck(*ARGS, "--workers", after, "--resume", str(ckpt), "--out", str(out),
                  "--run-name", "r")
    assert res.returncode == 12, res.stderr
    same_run(last_json(res.stdout), want)
    assert traces(out) == want_traces


@pytest.mark.slow
def test_a_checkpoint_of_other_parameters_or_format_is_refused(tmp_path):
    ckpt = tmp_path / "ckpt"
    res = hwcheck("check", "-R", "2", "--checkpoint", str(ckpt), "--checkpoint-every", "0",
                  "-q", "--out", str(tmp_path / "o"))
    assert res.returncode == 12
    res = hwcheck("check", "-R", "2", "--acks", "1", "--resume", str(ckpt), "-q", "--out",
                  str(tmp_path / "o2"))
    assert res.returncode == 2
    assert "the checkpoint is of another parameters" in res.stderr
    state = ckpt / (ckpt / "CURRENT").read_text().strip() / "meta.json"
    meta = json.loads(state.read_text())
    meta["format"] = 99
    state.write_text(json.dumps(meta))
    res = hwcheck("check", "-R", "2", "--resume", str(ckpt), "-q", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "another format version" in res.stderr
    res = hwcheck("check", "--resume", str(tmp_path / "nothing"), "-q")
    assert res.returncode == 2 and "no complete checkpoint there" in res.stderr
    res = hwcheck("check", "--engine", "spark", "--checkpoint", str(ckpt))
    assert res.returncode == 2 and "for the local engine" in res.stderr


def test_a_checkpoint_of_the_fingerprint_before_word_sums_is_refused_saying_why(tmp_path):
    # a format-3 checkpoint holds fingerprints of the earlier function: refused in one line
    # before any of its files is read, never resumed into wrong counts
    import numpy as np

    from hwcheck.checker.engines import checkpoint

    ident = {"format": checkpoint.FORMAT, "protocol": "p", "params": {}, "symmetry": False,
             "kernel": "k"}
    (tmp_path / "state-1").mkdir()
    (tmp_path / "CURRENT").write_text("state-1\n")
    (tmp_path / "state-1" / "meta.json").write_text(json.dumps({**ident, "format": 3}))
    with pytest.raises(checkpoint.CheckpointError) as e:
        checkpoint.load(tmp_path, ident, np.uint8)
    assert "\n" not in str(e.value)
    assert "another format version (3, this run: 4)" in str(e.value)
    assert "fingerprint function before" in str(e.value)


# -- the checkpoint of a graceful stop -----------------------------------------------------------

STOPS = {  # how the run is stopped, and the depth its checkpoint is at
    "SIGTERM between levels": ([], "terminate:13", 13),
    "SIGTERM in the middle of a level": ([], "terminate-mid:13", 13),
    "SIGTERM in the middle of a level, one worker": (["--workers", "1"], "terminate-mid:13", 13),
    "--max-states": (["--max-states", "3000"], None, 14),
    "--max-seconds": (["--max-seconds", "0.000001"], None, 0),
}


def current_meta(ckpt: Path) -> dict:
    return json.loads((ckpt / (ckpt / "CURRENT").read_text().strip() / "meta.json").read_text())


@pytest.mark.parametrize("how", tiered(list(STOPS), {"SIGTERM in the middle of a level",
                                                     "--max-seconds"}))
def test_a_graceful_stop_writes_a_checkpoint_that_resumes_to_the_whole_run(how, uninterrupted,
                                                                           tmp_path):
    """With the default interval (60 s) no checkpoint is due in this run: the one there is
    the stop's own, at the last consistent point (the start of a level stopped in the middle;
    what that level had found is explored again). Resumed, the run ends as one never stopped,
    traces byte for byte."""
    want, want_traces = uninterrupted
    extra, fault, depth = STOPS[how]
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    res = hwcheck(*ARGS, *extra, "--checkpoint", str(ckpt), "--out", str(out), "--run-name", "r",
                  fault=fault)
    assert res.returncode in (3, 12), res.stderr
    stopped = last_json(res.stdout)
    assert stopped["complete"] is False and stopped["distinct"] < want["distinct"]
    # a stop in the middle of level 13's expansion: level 14 is counted as far as it went
    assert stopped["partial_level"] == (14 if "middle" in how else None)
    assert current_meta(ckpt)["depth"] == depth
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--out", str(out), "--run-name", "r")
    assert res.returncode == 12, res.stderr
    same_run(last_json(res.stdout), want)
    assert traces(out) == want_traces


@contextlib.contextmanager
def read_only(folder: Path):
    """``folder`` cannot be written while inside: its mode, and for root (whom modes do not
    bind) the immutable attribute; skipped where neither holds."""
    folder.chmod(0o555)
    immutable = os.geteuid() == 0 and subprocess.run(
        ["chattr", "+i", str(folder)], capture_output=True).returncode == 0
    try:
        if os.geteuid() == 0 and not immutable:
            pytest.skip("root, and no immutable attribute here: nothing makes a folder read-only")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def test_a_checkpoint_folder_that_cannot_be_written_is_one_line_before_the_run(tmp_path):
    """A read-only folder (one a run wrote before: its ``levels`` is there) is refused before
    the exploration, in one line, exit 2; the run never starts."""
    ckpt = tmp_path / "ckpt"
    (ckpt / "levels").mkdir(parents=True)
    with read_only(ckpt):
        res = hwcheck(*ARGS, "--checkpoint", str(ckpt), "--checkpoint-every", "0", "--out",
                      str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert res.stderr.strip().splitlines()[-1].startswith(
        f"hwcheck: error: --checkpoint {ckpt} cannot be written: ")


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """Checkpoints of runs stopped by --max-states: of every property, and of one."""
    folders = {}
    for name, extra in (("all", []), ("one", ["--property", "LogsMatchBelowHw"])):
        ckpt = tmp_path_factory.mktemp(f"ckpt-{name}")
        res = hwcheck(*ARGS, *extra, "--max-states", "3000", "--checkpoint", str(ckpt),
                      "--checkpoint-every", "0", "--out", str(ckpt.parent / f"out-{name}"))
        assert res.returncode == 3, res.stderr
        folders[name] = ckpt
    return folders


def test_resume_checks_the_property_it_is_given(limited, uninterrupted, tmp_path):
    """--property narrows what a resumed run checks: that property's verdict, the same
    exploration."""
    want, _ = uninterrupted
    ckpt = limited["all"]
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--property", "CommittedNotLost", "--out",
                  str(tmp_path))
    assert res.returncode == 12, res.stderr
    got = last_json(res.stdout)
    assert (got["distinct"], got["generated"], got["depth"], got["complete"]) == \
        (want["distinct"], want["generated"], want["depth"], True)
    assert [(v["property"], v["length"]) for v in got["violations"]] == [("CommittedNotLost", 8)]


def test_resume_refuses_a_property_the_checkpoint_did_not_check(limited, tmp_path):
    """The levels explored before the checkpoint were not checked against it: refused in one
    line, exit 2, before anything is explored."""
    ckpt = limited["one"]
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--property", "CommittedNotLost", "--out",
                  str(tmp_path))
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert res.stderr.strip().splitlines()[-1] == (
        f"hwcheck: error: --resume {ckpt}: the checkpoint's run did not check CommittedNotLost "
        "(it checked LogsMatchBelowHw); resume with some of those, or without --property, or "
        "start a new run")
