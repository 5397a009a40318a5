"""Checkpoint and resume: a run killed with SIGKILL (between levels, or in the middle of writing
a checkpoint) and resumed ends with exactly the counts and traces of a run never stopped; a
checkpoint of another spec, other parameters or another format is refused.

The kills are real SIGKILLs, sent by the process to itself at a chosen point
(HWCHECK_FAULT), so that they land where the test means them to on any machine."""

from __future__ import annotations

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
