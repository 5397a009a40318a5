"""Shared helpers of the tests: the Kafka protocol as the registry loads it."""

from __future__ import annotations

from hwcheck.checker import protocols
from hwcheck.spec.kafka.params import Params


def kafka(params: Params | dict | None = None, **kw):
    """The Kafka spec of ``params`` (a Params, a dict, or keyword arguments), built through the
    registry as the command line builds it (so it knows its protocol: lemmas, views, source)."""
    if isinstance(params, Params):
        params = params.as_dict()
    given = dict(params or {})
    given.update(kw)
    return protocols.build(protocols.load("kafka"), given)


def _has_java() -> bool:
    import os
    import shutil
    from pathlib import Path

    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and Path(home, "bin", "java").exists()))


# The Spark engine needs Java 17; everything else runs without it.
NEEDS_JAVA = __import__("pytest").mark.skipif(
    not _has_java(), reason="no Java on this machine: the Spark engine needs Java 17")


def _default_sigint() -> None:
    """In the child: SIGINT at its default (a shell running the tests in the background
    ignores it, and children inherit that), so Ctrl-C reaches the command under test."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def end_group(proc) -> None:
    """End ``proc`` and every process of its group (its own session): SIGTERM, then SIGKILL
    for what is still there after a while. Nothing a test started outlives it."""
    import os
    import signal
    import subprocess

    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break  # the group is gone
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone; anything left in its group goes too
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        break


def started(cmd: list, **kw):
    """``subprocess.Popen(cmd)`` in a session of its own, SIGINT at its default; use as a
    context manager (``with started(...) as proc``) so that its group is ended on exit."""
    import contextlib
    import subprocess

    @contextlib.contextmanager
    def run():
        proc = subprocess.Popen(cmd, start_new_session=True, preexec_fn=_default_sigint, **kw)
        try:
            yield proc
        finally:
            end_group(proc)

    return run()


def tiered(values, fast, key=None, unpack: bool = False) -> list:
    """The values of a parametrized test, those whose ``key(value)`` (the value itself by
    default) is in ``fast`` in the fast tier and every other one in the slow tier (``make
    test`` runs a representative of each family; ``make test-all`` runs them all).
    ``unpack``: each value is a tuple of several argument names' values."""
    import pytest

    key = key or (lambda v: v)
    slow = pytest.mark.slow
    return [v if key(v) in fast else pytest.param(*v, marks=slow) if unpack
            else pytest.param(v, marks=slow) for v in values]
