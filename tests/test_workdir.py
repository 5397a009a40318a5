"""The run's work folder: named by the process that owns it, and the folders that runs killed
with SIGKILL left behind removed by the next run that makes one in the same place."""

from __future__ import annotations

import os
import subprocess
import sys

from hwcheck.checker.engines.workdir import PREFIX, WorkDir, clear_orphans


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_a_killed_runs_folder_is_removed_by_the_next_run(tmp_path):
    dead = tmp_path / f"{PREFIX}{_dead_pid()}-k1ll3d"
    (dead / "sub").mkdir(parents=True)
    (dead / "levels-fp-1.bin").write_bytes(b"\0" * 64)
    (dead / "sub" / "bucket-2.bin").write_bytes(b"\0" * 64)
    live = tmp_path / f"{PREFIX}{os.getpid()}-running"  # a run under way (this process)
    live.mkdir()
    init = tmp_path / f"{PREFIX}1-init"  # a process this one may not signal or that lives
    init.mkdir()
    others = [tmp_path / "hwcheck-work-notapid", tmp_path / "mine", tmp_path / f"{PREFIX}7"]
    for f in others:
        f.mkdir()

    work = WorkDir(tmp_path)
    try:
        assert work.path.parent == tmp_path
        assert work.path.name.startswith(f"{PREFIX}{os.getpid()}-")
        assert not dead.exists()
        assert live.exists() and init.exists() and all(f.exists() for f in others)
    finally:
        work.close()
    assert not work.path.exists()


def test_clearing_says_what_it_removed_and_a_missing_parent_is_nothing(tmp_path):
    dead = tmp_path / f"{PREFIX}{_dead_pid()}-abcd"
    dead.mkdir()
    assert clear_orphans(tmp_path) == [dead]
    assert clear_orphans(tmp_path) == []
    assert clear_orphans(tmp_path / "nowhere") == []
