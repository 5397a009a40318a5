"""Ctrl-C and SIGTERM while the driver waits on Spark: taken between py4j calls, never inside.

A Python signal handler that raises in the middle of a py4j call leaves the gateway connection
half read; the calls after it (cancelling the jobs, looking up the parents of the traces) then
fail, and what the run found loses its traces. So while a backend call runs (``Stops.held``),
the two signals only record themselves; a watcher thread, woken at once through
``signal.set_wakeup_fd``, cancels the running jobs on its own connection; the job's call comes
back (cancelled), and as the held block is left the signal's own handler runs (Ctrl-C's
``KeyboardInterrupt``, the CLI's ``Terminated``): the level loop stops at a clean point, with a
gateway that still answers.

Only in the main thread (signal handlers live there); elsewhere ``held`` holds nothing.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)


class Stops:
    """The watcher for one SparkContext; ``close()`` when the backend closes."""

    def __init__(self, sc: Any):  # a SparkContext
        self.sc = sc
        self.active = threading.current_thread() is threading.main_thread()
        self.thread = None
        if not self.active:
            return
        self.r, self.w = os.pipe()
        os.set_blocking(self.w, False)
        try:
            self.prev_fd = signal.set_wakeup_fd(self.w, warn_on_full_buffer=False)
        except ValueError:  # (not the main thread of the main interpreter)
            os.close(self.r)
            os.close(self.w)
            self.active = False
            return
        self.thread = threading.Thread(target=self._watch, name="hwcheck-spark-stops",
                                       daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while True:
            try:
                data = os.read(self.r, 64)
            except OSError:
                return
            if not data:  # the write end closed: the backend is closing
                return
            if any(b in HELD for b in data):
                try:
                    self.sc.cancelAllJobs()
                except Exception:  # noqa: BLE001 - a context already stopped: nothing to cancel
                    pass

    @contextmanager
    def held(self) -> Iterator[None]:
        """Ctrl-C and SIGTERM recorded, not raised, until the block ends; then the first one
        is handled as usual (its handler raises there)."""
        if not self.active:
            yield
            return
        got: list[int] = []
        prev = {s: signal.getsignal(s) for s in HELD}
        for s in HELD:
            signal.signal(s, lambda signum, frame: got.append(signum))
        try:
            yield
        finally:
            for s, h in prev.items():
                signal.signal(s, h)
            if got:
                handler = prev[signal.Signals(got[0])]
                if callable(handler):
                    handler(got[0], None)
                elif handler == signal.SIG_DFL:
                    signal.raise_signal(got[0])

    def close(self) -> None:
        if not self.active:
            return
        self.active = False
        try:
            signal.set_wakeup_fd(self.prev_fd)
        except ValueError:
            pass
        os.close(self.w)
        if self.thread is not None:
            self.thread.join(timeout=5)
        os.close(self.r)
