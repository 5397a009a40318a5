"""The state graph checkpoints and resumes (``check --recoverable`` and liveness with
``--checkpoint``, ``--resume``): a run killed with SIGKILL after a checkpoint and resumed ends with
the counts, verdicts, recoverability, liveness verdicts and trace files (byte for byte) of a
run never stopped; a damaged checkpoint, one of another search or another graph is refused in
one line; a folder that cannot be written is one line before the run.

The kills are real SIGKILLs at a chosen checkpoint (``HWCHECK_FAULT=after-checkpoint:D``, sent
by the process to itself: no test waits for a moment to come), or sent by the test to a run it
stopped right after a checkpoint (``pause-after-checkpoint:D``: SIGSTOP)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import started, tiered

ROOT = Path(__file__).resolve().parent.parent
# the fast tier's configuration: 10,487 states, 30,880 transitions, depth 38; its check stops
# at its first violations at depth 8, the graph goes on to the whole
RECOVERABLE = ["check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--recoverable",
               "--json", "-q"]
LIVENESS = ["check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--liveness",
            "--json", "-q"]
TOKEN_RING = ["check", "--spec", str(ROOT / "tests" / "specs" / "token_ring.py"), "--param",
              "use=weak", "--json", "-q"]


def hwcheck(*args: str, fault: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if fault:
        env["HWCHECK_FAULT"] = fault
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args],
                          capture_output=True, text=True, env=env)


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


def files(folder: Path) -> dict[str, bytes]:
    """Every trace file of a run folder (the ITF files, their text and their pages)."""
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and not p.name.startswith(".")}


TIMES = {"seconds", "search_seconds", "explore_seconds", "liveness_seconds", "trace"}


def results(obj: dict) -> dict:
    """A run's --json object without its times, memory and file names: what a resumed run
    must report as one never stopped."""
    def strip(v):
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if k not in TIMES}
        if isinstance(v, list):
            return [strip(x) for x in v]
        return v
    return strip({k: v for k, v in obj.items() if k != "memory"})


def whole(args: list[str], out: Path) -> tuple[dict, dict]:
    res = hwcheck(*args, "--out", str(out), "--run-name", "r")
    assert res.returncode == 12, res.stderr
    return last_json(res.stdout), files(out)


@pytest.fixture(scope="module")
def recoverable_run(tmp_path_factory):
    return whole(RECOVERABLE, tmp_path_factory.mktemp("whole"))


def killed_and_resumed(args: list[str], depth: int, tmp: Path) -> tuple[dict, dict, Path]:
    """``args`` run with a checkpoint at every level, killed (SIGKILL) right after the one of
    ``depth``, then resumed from it: the resumed run's --json object and files."""
    ckpt, out = tmp / "ckpt", tmp / "out"
    res = hwcheck(*args, "--checkpoint", str(ckpt), "--checkpoint-every", "0", "--out",
                  str(out), "--run-name", "r", fault=f"after-checkpoint:{depth}")
    assert res.returncode == -signal.SIGKILL and res.stdout == "", res.stderr
    meta = current_meta(ckpt)
    assert meta["search"] == "state graph" and meta["depth"] == depth
    res = hwcheck(*args, "--resume", str(ckpt), "--out", str(out), "--run-name", "r")
    assert res.returncode == 12, res.stderr
    return last_json(res.stdout), files(out / "r"), ckpt


def current_meta(ckpt: Path) -> dict:
    return json.loads((ckpt / (ckpt / "CURRENT").read_text().strip() / "meta.json").read_text())


# depth 5: inside the check's own part (it stops at depth 8); 20: past it, on the way to the
# whole graph (the check's report comes from the checkpoint)
@pytest.mark.parametrize("depth", tiered([0, 5, 20, 37], {20}))
def test_recoverable_killed_and_resumed_ends_like_an_uninterrupted_run(depth, recoverable_run,
                                                                       tmp_path):
    want, want_files = recoverable_run
    got, got_files, ckpt = killed_and_resumed(RECOVERABLE, depth, tmp_path)
    assert results(got) == results(want)
    assert got["recoverability"]["states"] == 10_487 and got["verdict"] == "violated"
    assert got_files == want_files  # Recoverable.*, the check's traces: byte for byte
    # the levels expanded before the kill, each written once with its transitions (the resumed
    # run's interval, the default minute, has no checkpoint due)
    assert len(list((ckpt / "levels").glob("level-*.npz"))) == depth


@pytest.mark.slow
@pytest.mark.parametrize("args", [LIVENESS, TOKEN_RING], ids=["kafka", "token-ring"])
def test_liveness_killed_and_resumed_ends_like_an_uninterrupted_run(args, tmp_path):
    want, want_files = whole(args, tmp_path / "whole")
    got, got_files, _ = killed_and_resumed(args, 2, tmp_path)
    assert results(got) == results(want)
    assert got["liveness"]["graph"]["complete"] and got["liveness"]["graph"]["decided"] == 4
    assert got_files == want_files  # the lassos too


@pytest.mark.slow
def test_a_run_the_test_kills_after_a_checkpoint_resumes(recoverable_run, tmp_path):
    """The test sends the SIGKILL: the run stops itself (SIGSTOP) right after its checkpoint of
    depth 12, the test sees it stopped and kills its group."""
    want, want_files = recoverable_run
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    env = dict(os.environ, HWCHECK_FAULT="pause-after-checkpoint:12")
    cmd = [sys.executable, "-m", "hwcheck.checker", *RECOVERABLE, "--checkpoint", str(ckpt),
           "--checkpoint-every", "0", "--out", str(out), "--run-name", "r"]
    with started(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), status
        assert current_meta(ckpt)["depth"] == 12
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    res = hwcheck(*RECOVERABLE, "--resume", str(ckpt), "--out", str(out), "--run-name", "r")
    assert res.returncode == 12, res.stderr
    assert results(last_json(res.stdout)) == results(want)
    assert files(out / "r") == want_files


@pytest.mark.slow
def test_a_sigterm_between_levels_writes_a_checkpoint_that_resumes(recoverable_run, tmp_path):
    """With the default interval (a minute) no checkpoint is due in this run: the one there is
    the stop's own, at depth 12 where SIGTERM stopped the graph; resumed, the run ends as one
    never stopped."""
    want, want_files = recoverable_run
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    res = hwcheck(*RECOVERABLE, "--checkpoint", str(ckpt), "--out", str(out), "--run-name", "r",
                  fault="terminate:12")
    assert res.returncode != -signal.SIGKILL and last_json(res.stdout)["complete"] is False
    assert current_meta(ckpt)["depth"] == 12
    res = hwcheck(*RECOVERABLE, "--resume", str(ckpt), "--out", str(out), "--run-name", "r")
    assert res.returncode == 12, res.stderr
    assert results(last_json(res.stdout)) == results(want)
    assert files(out / "r") == want_files


@pytest.fixture(scope="module")
def graph_checkpoint(tmp_path_factory):
    """A checkpoint of the graph at depth 10 (the run killed there)."""
    tmp = tmp_path_factory.mktemp("graph")
    ckpt = tmp / "ckpt"
    res = hwcheck(*RECOVERABLE, "--checkpoint", str(ckpt), "--checkpoint-every", "0", "--out",
                  str(tmp / "out"), fault="after-checkpoint:10")
    assert res.returncode == -signal.SIGKILL, res.stderr
    return ckpt


def refusal(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    return res.stderr.strip().splitlines()[-1]


def copy(ckpt: Path, tmp: Path) -> Path:
    import shutil

    return Path(shutil.copytree(ckpt, tmp / "ckpt"))


@pytest.mark.slow  # the store that checks them is the local engine's too (test_integrity.py)
@pytest.mark.parametrize("what", ["level", "frontier", "meta"])
def test_a_damaged_graph_checkpoint_is_refused_in_one_line(what, graph_checkpoint, tmp_path):
    ckpt = copy(graph_checkpoint, tmp_path)
    state = (ckpt / "CURRENT").read_text().strip()
    target = {"level": ckpt / "levels" / "level-3.npz", "frontier": ckpt / state / "front.npy",
              "meta": ckpt / state / "meta.json"}[what]
    if what == "meta":  # a counter edited
        meta = json.loads(target.read_text())
        meta["distinct"] += 1
        target.write_text(json.dumps(meta))
    else:  # one byte flipped in the middle
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0xFF
        target.write_bytes(bytes(data))
    line = refusal(hwcheck(*RECOVERABLE, "--resume", str(ckpt), "--out", str(tmp_path / "o")))
    rel = target.relative_to(ckpt).as_posix()
    assert line == (f"hwcheck: error: --resume {ckpt}: {rel} is damaged (its content does not "
                    "match " + ("its digest)" if what == "meta" else
                                "the digest meta.json records)"))


@pytest.mark.slow
def test_a_checkpoint_of_another_search_is_refused(graph_checkpoint, tmp_path):
    """The graph's checkpoint is not the local engine's: a plain check refuses it."""
    local = refusal(hwcheck(*[a for a in RECOVERABLE if a != "--recoverable"], "--resume",
                            str(graph_checkpoint), "--out", str(tmp_path / "o")))
    assert local == (f"hwcheck: error: --resume {graph_checkpoint}: the checkpoint is of another "
                     "search ('state graph', this run: 'local engine')")


def test_an_unwritable_checkpoint_folder_is_one_line_before_the_graph_run(tmp_path):
    target = tmp_path / "file"
    target.write_text("")  # a file where the folder should be
    line = refusal(hwcheck(*RECOVERABLE, "--checkpoint", str(target / "ckpt"), "--out",
                           str(tmp_path / "o")))
    assert line.startswith(f"hwcheck: error: --checkpoint {target / 'ckpt'} cannot be written: ")


@pytest.mark.parametrize("args", tiered([RECOVERABLE, [a for a in RECOVERABLE  # local: slow
                                                       if a != "--recoverable"]],
                                        {True}, key=lambda a: "--recoverable" in a))
def test_an_unwritable_work_folder_is_one_line_before_the_run(args, tmp_path):
    """--workdir that cannot be written is one line before the search, for the state graph
    (which makes its folder when a level first passes the memory budget) as for the local
    engine."""
    target = tmp_path / "file"
    target.write_text("")
    line = refusal(hwcheck(*args, "--workdir", str(target / "work"), "--out",
                           str(tmp_path / "o")))
    assert line == f"hwcheck: error: --workdir {target / 'work'} cannot be written: Not a " \
        "directory"
