"""Start-up: a configuration whose kernel is not in the cache is compiled once, and hwcheck says
so on stderr (not with --quiet; with --json stdout keeps only the JSON object); what the
compile helper process put in the cache is what a later run loads, so that run compiles
nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from engine_contract import SPECS

# two workers: a spec this small gets one by default, and the test is of the helper that compiles
# the entry points beside the expansion of several workers
BASE = ["--spec", str(SPECS / "two_phase.py"), "--param", "rms=2"]
SPEC = [*BASE, "--workers", "2"]
SAYS = "compiling the kernel for this configuration"


def hwcheck(cache, *args, **env):
    env = dict(os.environ, HWCHECK_CACHE=str(cache), **env)
    env.pop("NUMBA_CACHE_DIR", None)  # the fresh cache's own
    env.pop("HWCHECK_COMPILE_HELPER", None)  # the helper is what this tests
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, env=env)


@pytest.mark.slow  # a fresh cache a run: every generic function of the engines compiled again
def test_a_first_run_says_it_compiles_and_a_second_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    first = hwcheck(cache, "check", *SPEC, "--json", "--out", str(tmp_path / "out"))
    assert first.returncode == 0, first.stderr
    assert [line for line in first.stderr.splitlines() if SAYS in line] == [
        f"  {SAYS} (first run: some seconds; cached after that)..."]
    assert json.loads(first.stdout)["distinct"] == 56  # stdout: the JSON object alone
    assert [p.name.split(".", 1)[1] for p in (cache / "kernels").glob("k_*.compiled")] == [
        "parallel.compiled"]

    second = hwcheck(cache, "check", *SPEC, "--out", str(tmp_path / "out"),
                     NUMBA_DEBUG_CACHE="1")
    assert second.returncode == 0, second.stderr
    assert SAYS not in second.stderr
    assert _saved(second) == []  # every function the run calls came from the cache

    # another number of workers runs the same compiled expansion: the owners are rows of its
    # arrays, not a tuple whose length numba would specialise on
    kernels = sorted(p.name for p in (cache / "kernels").iterdir())
    third = hwcheck(cache, "check", *BASE, "--workers", "3", "--json", "--out",
                    str(tmp_path / "out"), NUMBA_DEBUG_CACHE="1")
    assert third.returncode == 0, third.stderr
    assert SAYS not in third.stderr
    assert _saved(third) == []
    assert sorted(p.name for p in (cache / "kernels").iterdir()) == kernels
    report = [line for line in third.stdout.splitlines() if not line.startswith("[cache] ")]
    assert json.loads("\n".join(report))["distinct"] == 56


def _saved(res) -> list[str]:
    """The functions numba compiled and saved to its cache during the run (NUMBA_DEBUG_CACHE)."""
    return [line for line in res.stdout.splitlines() if line.startswith("[cache] data saved")]


@pytest.mark.slow
def test_quiet_says_nothing_of_it(tmp_path):
    """With one worker (the fused expand kernel) and --quiet; the cache is complete as well."""
    args = ["check", *BASE, "-q", "--workers", "1", "--out", str(tmp_path / "out")]
    res = hwcheck(tmp_path / "cache", *args)
    assert res.returncode == 0, res.stderr
    assert SAYS not in res.stderr
    res = hwcheck(tmp_path / "cache", *args, NUMBA_DEBUG_CACHE="1")
    assert _saved(res) == []


def test_the_compile_lock_is_one_holder_at_a_time(tmp_path):
    """While a process compiles a generated module, another that needs it waits (then loads
    what the first wrote): the lock beside the module's file is not free to another open file;
    a nested warm in the same thread does not wait on itself; the lock is free after."""
    import fcntl

    from hwcheck.checker.semantics.kernel import compile_lock

    module = tmp_path / "k_0123.py"
    with compile_lock(module):
        fd = os.open(module.with_suffix(".lock"), os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with compile_lock(module):  # the same thread holds it: no wait
                pass
            with pytest.raises(BlockingIOError):  # still held by the outer one
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    fd = os.open(module.with_suffix(".lock"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released
    finally:
        os.close(fd)
    unwritable = tmp_path / "missing" / "k_4567.py"  # its folder does not exist: no lock
    with compile_lock(unwritable):
        assert not unwritable.with_suffix(".lock").exists()


HELPER = ("import sys; from hwcheck.checker import protocols; "
          "from hwcheck.checker.semantics.kernel import Kernel, cache_dir, precompile; "
          "spec = protocols.build(protocols.load(sys.argv[1]), {'rms': 2}); k = Kernel(spec); "
          "precompile(str(cache_dir() / 'kernels' / f'k_{k.key}.py'), k.key, int(sys.argv[2]))")


def _helper(tmp_path, parent: int) -> subprocess.CompletedProcess[str]:
    """The compile helper's work for two-phase commit's kernel, in a fresh cache, told that
    ``parent`` is the process it compiles for."""
    env = dict(os.environ, HWCHECK_CACHE=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1")
    env.pop("NUMBA_CACHE_DIR", None)
    res = subprocess.run([sys.executable, "-c", HELPER, str(SPECS / "two_phase.py"),
                          str(parent)], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    return res


def test_the_compile_helper_ends_once_its_process_is_gone(tmp_path):
    """The helper checks between compiles that the process it compiles for is still its
    parent: a run killed while compiling (before it could end the helper) leaves no helper
    compiling on. Here its parent is named as another process (pid 1, no test's parent): it
    compiles nothing."""
    assert _saved(_helper(tmp_path, 1)) == []


@pytest.mark.slow
def test_the_compile_helper_compiles_while_its_process_is_there(tmp_path):
    assert _saved(_helper(tmp_path, os.getpid()))
