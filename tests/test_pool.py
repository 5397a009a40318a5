"""The level sources' one worker pool (``engines/pool.py``): the local engine's workers and the
state graph's run on it, and a run that fails in a worker leaves no thread behind."""

from __future__ import annotations

import signal
import threading
import time

import pytest
from helpers import kafka

from hwcheck.checker.engines import parallel
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options, PropertySet
from hwcheck.checker.engines.pool import Pool
from hwcheck.checker.graph import recover
from hwcheck.checker.graph.explore import GraphSource
from hwcheck.checker.search.driver import search
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.protocol import recovery_of

HW = dict(replicas=2, max_offset=2, max_epoch=3, truncation="hw")  # the fast tier's kernel


def test_map_gives_results_in_order_and_raises_the_first_error_once_all_are_done():
    done = []

    def task(i: int) -> int:
        if i == 0:
            raise ValueError("first")
        if i == 1:
            raise KeyError("second")
        time.sleep(0.05)  # still running when the first task has failed
        done.append(i)
        return i

    with Pool(2, "hwcheck-test") as pool:
        assert pool.map(lambda i: i * i, [(i,) for i in range(5)]) == [0, 1, 4, 9, 16]
        with pytest.raises(ValueError, match="first"):
            pool.map(task, [(i,) for i in range(4)])
        assert sorted(done) == [2, 3]  # no task left running past the raise


def test_a_pools_threads_leave_signals_to_the_main_thread_and_end_with_it():
    before = set(threading.enumerate())
    pool = Pool(3, "hwcheck-test")
    masks = pool.map(lambda: signal.pthread_sigmask(signal.SIG_BLOCK, set()),
                     [() for _ in range(3)])
    started = set(threading.enumerate()) - before
    assert started and all(t.name.startswith("hwcheck-test") for t in started)
    assert all({signal.SIGINT, signal.SIGTERM} <= m for m in masks)
    pool.close()
    assert not any(t.is_alive() for t in started)
    with pytest.raises(ValueError, match="at least one thread"):
        Pool(0)


def _failing_in(monkeypatch, owner, name: str, prefix: str) -> None:
    """``owner.name`` raises in the pool's threads (named ``prefix``...) from its third call."""
    real, calls = getattr(owner, name), []

    def failing(*args, **kw):
        if threading.current_thread().name.startswith(prefix):
            calls.append(1)
            if len(calls) > 2:
                raise RuntimeError("a worker failed")
        return real(*args, **kw)

    monkeypatch.setattr(owner, name, failing)


def _ran_and_failed(run) -> set[threading.Thread]:
    """Run ``run`` (which must fail with the worker's error); the threads it left alive."""
    before = set(threading.enumerate())
    with pytest.raises(RuntimeError, match="a worker failed"):
        run()
    return {t for t in set(threading.enumerate()) - before if t.is_alive()}


def test_a_local_run_that_fails_in_a_worker_leaves_no_thread(monkeypatch):
    spec = kafka(**HW)
    engine = LocalEngine(Kernel(spec), Options(stop_at_violation=False), workers=2)
    _failing_in(monkeypatch, parallel, "_insert_owned", "hwcheck-worker")
    assert not _ran_and_failed(engine.run)
    assert engine.pool is None  # closed by ``finish``


@pytest.mark.parametrize("level_end", [False, True])
def test_a_graph_that_fails_in_a_worker_leaves_no_thread(monkeypatch, level_end):
    """A pool thread failing while it expands a run of rows (``level_end``: while it orders and
    gathers a level's end instead) ends the search with its error, every thread ended."""
    spec = kafka(**HW)
    k = Kernel(spec)
    source = GraphSource(k, recover.predicates(recovery_of(spec)),
                         props=PropertySet(k, Options()), workers=2, worker_rows=64)
    if level_end:
        from hwcheck.checker.graph import explore

        _failing_in(monkeypatch, explore, "gather_level", "hwcheck-graph")
    else:
        _failing_in(monkeypatch, GraphSource, "_candidates", "hwcheck-graph")
    assert not _ran_and_failed(lambda: search(source, StopRule(first_hit=False)))
    assert source.pool is None


def test_a_graph_stopped_inside_a_level_leaves_no_thread(monkeypatch):
    """Ctrl-C while the workers expand a level: the search stops incomplete and, once
    finished, no pool thread is left."""
    spec = kafka(**HW)
    k = Kernel(spec)
    source = GraphSource(k, recover.predicates(recovery_of(spec)),
                         props=PropertySet(k, Options()), workers=2, worker_rows=64)
    asked, stop = [], GraphSource._stop

    def interrupted(self, *args):
        asked.append(1)
        if len(asked) == 30:
            raise KeyboardInterrupt
        return stop(self, *args)

    monkeypatch.setattr(GraphSource, "_stop", interrupted)
    before = set(threading.enumerate())
    ex = search(source, StopRule(first_hit=False))
    assert ex.stop_reason == "interrupted" and not ex.complete
    assert not {t for t in set(threading.enumerate()) - before if t.is_alive()}
    assert source.pool is None
