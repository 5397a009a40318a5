"""Which thread takes Ctrl-C and SIGTERM: the main thread, between safe points.

Python runs a signal's handler in the main thread, whichever thread of the process the system
delivered the signal to (numpy's and numba's own threads block nothing). A search's worker
threads block both signals anyway (``block_signals``, their pools' initializer). While the main
thread moves a search from one consistent state to the next (``signals_held``), a signal that
arrives is only noted; it is taken as the block is left, by the handler that was in place (as
``KeyboardInterrupt`` or ``Terminated``), and everything up to the last safe point is kept."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)


def block_signals() -> None:
    """A worker thread never takes Ctrl-C or SIGTERM: they go to the main thread."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, set(HELD))


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM are noted while inside and taken as the block is left (by the
    handler in place before it: the KeyboardInterrupt is raised there). Outside the main
    thread (where no handler can be set) the block is left as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[signal.Signals] = []

    def note(signum: int, frame: Any) -> None:
        pending.append(signal.Signals(signum))

    before = {s: signal.signal(s, note) for s in HELD}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        if pending:
            _deliver(pending[0], before[pending[0]])


def _deliver(signum: signal.Signals, handler: Any) -> None:
    """Take a noted signal as its handler would have."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)  # the default action, now that it is in place again
