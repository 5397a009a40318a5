"""What a checkpoint holds is checked before it is resumed: a truncated or altered file, an
edited counter or a missing file is refused in one line (exit 2), never resumed into a wrong
count; an undamaged checkpoint resumes into the exact counts of a run never stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import tiered

# 10,487 states, depth 38 (the fast tier's configuration): every level checkpointed, stopped
# partway by --max-states
ARGS = ["check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--continue",
        "--json", "-q"]


def hwcheck(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True)


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def stopped(tmp_path_factory) -> Path:
    """A checkpoint folder of a run stopped after 2,000 states (every level checkpointed)."""
    ckpt = tmp_path_factory.mktemp("ckpt")
    res = hwcheck(*ARGS, "--checkpoint", str(ckpt), "--checkpoint-every", "0",
                  "--max-states", "2000", "--out", str(ckpt.parent / "out0"))
    assert res.returncode == 3, res.stderr  # unknown: stopped by the limit
    assert (ckpt / "CURRENT").exists()
    return ckpt


def copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def current(ckpt: Path) -> Path:
    return ckpt / (ckpt / "CURRENT").read_text().strip()


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def edit_distinct(path: Path) -> None:
    meta = json.loads(path.read_text())
    meta["distinct"] += 5
    path.write_text(json.dumps(meta))


DAMAGE = {
    "a truncated level file": (lambda c: c / "levels" / "level-3.npz", truncate,
                               "levels/level-3.npz is damaged"),
    "a flipped byte in the visited set": (lambda c: current(c) / "visited.npy", flip,
                                          "visited.npy is damaged"),
    "an edited counter": (lambda c: current(c) / "meta.json", edit_distinct,
                          "meta.json is damaged"),
    "a missing frontier": (lambda c: current(c) / "front.npy", Path.unlink,
                           "front.npy cannot be read"),
}


@pytest.mark.parametrize("what", list(DAMAGE))
def test_a_damaged_checkpoint_is_refused_in_one_line(what, stopped, tmp_path):
    ckpt = copy(stopped, tmp_path / "ckpt")
    where, damage, message = DAMAGE[what]
    damage(where(ckpt))
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("hwcheck: error:")]
    assert len(errors) == 1 and errors[0].startswith("hwcheck: error: --resume "), res.stderr
    assert message in errors[0] and "Traceback" not in res.stderr
    assert res.stderr.rstrip().endswith(errors[0])  # the last line: nothing explored after it


def test_an_undamaged_checkpoint_resumes_into_the_exact_counts(stopped, tmp_path):
    ckpt = copy(stopped, tmp_path / "ckpt")
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--out", str(tmp_path / "out"))
    assert res.returncode == 12, res.stderr
    got = last_json(res.stdout)
    assert (got["distinct"], got["generated"], got["depth"], got["complete"]) == \
        (10487, 30880, 38, True)
    assert {v["property"]: v["length"] for v in got["violations"]} == {
        "CommittedNotLost": 8, "AckedNotLost": 8, "LogsMatchBelowHw": 9}


@pytest.fixture(scope="module")
def stopped_mid_level(tmp_path_factory) -> Path:
    """The checkpoint a SIGTERM in the middle of level 13 writes (the default interval: it is
    the run's only one), at the start of that level."""
    ckpt = tmp_path_factory.mktemp("ckpt-mid")
    res = subprocess.run([sys.executable, "-m", "hwcheck.checker", *ARGS, "--checkpoint",
                          str(ckpt), "--out", str(ckpt.parent / "out-mid")],
                         capture_output=True, text=True,
                         env=dict(os.environ, HWCHECK_FAULT="terminate-mid:13"))
    assert res.returncode == 12, res.stderr  # the violations found before it
    assert json.loads((current(ckpt) / "meta.json").read_text())["depth"] == 13
    return ckpt


@pytest.mark.slow  # the fast tier resumes such a checkpoint in test_checkpoint.py
def test_the_checkpoint_of_a_stop_resumes_into_the_exact_counts(stopped_mid_level, tmp_path):
    ckpt = copy(stopped_mid_level, tmp_path / "ckpt")
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--out", str(tmp_path / "out"))
    assert res.returncode == 12, res.stderr
    got = last_json(res.stdout)
    assert (got["distinct"], got["generated"], got["depth"], got["complete"]) == \
        (10487, 30880, 38, True)


@pytest.mark.parametrize("what", tiered(list(DAMAGE), {"a flipped byte in the visited set"}))
def test_the_checkpoint_of_a_stop_is_checked_like_any(what, stopped_mid_level, tmp_path):
    """The final checkpoint of a graceful stop carries the digests of every file it uses:
    each damage is refused in one line."""
    ckpt = copy(stopped_mid_level, tmp_path / "ckpt")
    where, damage, message = DAMAGE[what]
    damage(where(ckpt))
    res = hwcheck(*ARGS, "--resume", str(ckpt), "--out", str(tmp_path / "out"))
    assert res.returncode == 2, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("hwcheck: error:")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in res.stderr


def test_a_level_file_cut_short_is_named_not_read_as_garbage(tmp_path):
    import numpy as np

    from hwcheck.checker.engines.spill import LevelStore, record_dtype
    from hwcheck.checker.engines.workdir import WorkDir
    from hwcheck.checker.environment import EnvironmentFault

    work = WorkDir(tmp_path)
    store = LevelStore(work, record_dtype(8, np.int8, np.uint8))
    n = 100
    store.append({"fp": np.arange(1, n + 1, dtype=np.uint64), "par": np.zeros(n, np.int32),
                  "act": np.zeros(n, np.uint8)})
    store.flush()
    assert store.read("fp", 90, 10).tolist() == list(range(91, 101))
    store.files["fp"].truncate(50 * 8)
    with pytest.raises(EnvironmentFault, match="was cut short"):
        store.read("fp", 90, 10)
    store.close()
    work.close()
