"""Which thread takes Ctrl-C and SIGTERM: the main thread, between safe points.

Python runs a signal's handler in the main thread, whichever thread of the process the system
delivered the signal to (numpy's and numba's own threads block nothing). A search's worker
threads block both signals anyway (``block_signals``, their pools' initializer). While the main
thread moves a search from one consistent state to the next (``signals_held``), a signal that
arrives is only noted; it is taken as the block is left, by the handler that was in place (as
``KeyboardInterrupt`` or ``Terminated``), and everything up to the last safe point is kept.

A compiled search that runs long in the main thread (the state graph's analyses: the backward
search of recoverability, liveness's components) cannot take a signal until it returns, so
inside ``stoppable`` a signal (or the end of a time limit) sets a flag at once, from a thread
that waits on the signal wake-up descriptor: the compiled loops read the flag every
``POLL + 1`` iterations and return early, the Python between them asks ``poll``, and the block
is left with the signal taken as above (or ``Stopped``, for the time limit)."""

from __future__ import annotations

import os
import select
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

HELD = (signal.SIGINT, signal.SIGTERM)
POLL = (1 << 16) - 1  # a compiled loop reads the stop flag when its counter & POLL == 0
LIMIT_EVERY = 0.2  # seconds between two looks at a ``stoppable`` block's limit


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


class StopRequested(Exception):
    """Raised inside ``stoppable`` once its flag is set: unwinds the work to the block's end."""


class Stopped(Exception):
    """A ``stoppable`` block stopped by its time limit: ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def poll(flag: np.ndarray) -> None:
    """Between pieces of work: ``StopRequested`` once ``flag`` is set."""
    if flag[0]:
        raise StopRequested()


def no_stop() -> np.ndarray:
    """A stop flag nothing sets (work run outside ``stoppable``)."""
    return np.zeros(1, np.int64)


@contextmanager
def stoppable(limit: Callable[[], str] | None = None) -> Iterator[np.ndarray]:
    """A stop flag (int64 [1]) for the work inside: set by Ctrl-C or SIGTERM the moment one
    arrives (even while the main thread runs a compiled loop), and once ``limit()`` (asked
    every ``LIMIT_EVERY`` seconds: a time or memory limit) gives a reason. ``StopRequested``
    raised inside (``poll``) ends the block: the signal is then taken by the handler in place
    before it (``KeyboardInterrupt``, ``Terminated``), or ``Stopped`` raised with the limit's
    reason. A signal that arrives after the work is done is taken as the block is left, like
    one inside ``signals_held``. Outside the main thread only the limit sets the flag."""
    flag = no_stop()
    main = threading.current_thread() is threading.main_thread()
    pending: list[signal.Signals] = []
    reason: list[str] = []

    def note(signum: int, frame: Any) -> None:
        pending.append(signal.Signals(signum))
        flag[0] = 1

    before = {s: signal.signal(s, note) for s in HELD} if main else {}
    wake_r, wake_w = os.pipe()
    quit_r, quit_w = os.pipe()
    os.set_blocking(wake_w, False)
    old_fd = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False) if main else -1
    held = {int(s) for s in HELD}

    def watch() -> None:  # the flag set while the main thread is inside a compiled loop
        asking = limit is not None
        while True:
            ready, _, _ = select.select([wake_r, quit_r], [], [],
                                        LIMIT_EVERY if asking else None)
            if quit_r in ready:
                return
            if wake_r in ready:
                if held & set(os.read(wake_r, 64)):
                    flag[0] = 1
            elif asking and limit is not None:
                why = limit()
                if why:
                    reason.append(why)
                    flag[0] = flag[0] or 2
                    asking = False

    watcher = threading.Thread(target=watch, name="hwcheck-stop", daemon=True)
    watcher.start()
    cut = False
    try:
        yield flag
    except StopRequested:
        cut = True
    finally:
        if main:
            signal.set_wakeup_fd(old_fd)
        os.write(quit_w, b"q")
        watcher.join()
        for fd in (wake_r, wake_w, quit_r, quit_w):
            os.close(fd)
        for s, handler in before.items():
            signal.signal(s, handler)
        if pending:
            _deliver(pending[0], before[pending[0]])
    if cut:
        raise Stopped(reason[0] if reason else "stopped")


def _deliver(signum: signal.Signals, handler: Any) -> None:
    """Take a noted signal as its handler would have."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)  # the default action, now that it is in place again
