"""Which thread takes Ctrl-C and SIGTERM: the main thread, between safe points.

A search's worker threads block both signals (``block_signals``, their pool's initializer), so
a signal always lands in the main thread; the main thread holds them pending while it moves
the search from one consistent state to the next (``signals_held``), and takes them as the
block is left (as ``KeyboardInterrupt`` or ``Terminated``), where everything up to the last
safe point is kept."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

HELD = {signal.SIGINT, signal.SIGTERM}


def block_signals() -> None:
    """A worker thread never takes Ctrl-C or SIGTERM: they go to the main thread."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, HELD)


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM stay pending until the block ends, then are taken as usual (the
    KeyboardInterrupt is raised as the block is left)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
