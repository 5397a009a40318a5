"""The worker threads a level source runs its parallel work on, the same for every source: the
local engine's (``parallel.Workers`` is one, with its expansion's buffers) and the state
graph's (``graph/explore.py``, whose calling thread works beside them); the graph's analyses
run on one too (the reverse search's shared sweeps, liveness's properties side by side).

A pool's threads never take Ctrl-C or SIGTERM (``signals.block_signals``, each thread's
initializer): the main thread takes them, between safe points. ``map`` waits for every task
before it raises the first task's exception, so no task is left writing what the caller goes
on to read or free; ``close`` ends the threads and waits for them, so a run that stops or
fails leaves none behind (the level sources close theirs in ``finish``, which the driver
always calls)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from types import TracebackType
from typing import Any

from hwcheck.checker.search.signals import block_signals


class Pool:
    """``threads`` worker threads named ``name``-N; ``close()`` when done (or use it as a
    context manager)."""

    def __init__(self, threads: int, name: str = "hwcheck-worker"):
        if threads < 1:
            raise ValueError(f"a pool needs at least one thread, not {threads}")
        self.n = threads
        self._threads = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name,
                                           initializer=block_signals)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """``fn(*args)`` on a thread of the pool; its future."""
        return self._threads.submit(fn, *args)

    def map(self, fn: Callable[..., Any], args: Sequence[tuple[Any, ...]]) -> list[Any]:
        """``fn(*a)`` for each ``a`` of ``args`` on the pool's threads; the results in order
        (the first exception raised, once all are done)."""
        return results([self._threads.submit(fn, *a) for a in args])

    def close(self) -> None:
        """The threads end once their tasks are done; returns when they have."""
        self._threads.shutdown(wait=True)

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def results(futures: Sequence[Future[Any]]) -> list[Any]:
    """Wait for every future; then raise the first exception of one, if any, or return their
    results."""
    wait(futures)
    for f in futures:
        if (e := f.exception()) is not None:
            raise e
    return [f.result() for f in futures]
