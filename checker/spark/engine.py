"""The Spark engine: level-synchronous BFS with the partitions of the state space in Spark.

Partition i of the state space (fingerprints whose high bits map to i, see
``checker.engines.partition.owners``) keeps its visited set on disk (``checker.engines.runs``:
sorted runs of fingerprints, with each level's parents), in a store folder every executor
reaches (``store``, or ``HWCHECK_SPARK_STORE_DIR``; by default a temporary folder: local disk on
one machine, a shared filesystem across machines). One level is one Spark job, with one Python
task per partition that merges the candidate blocks sent to its partition into its visited set
and expands the new states with the compiled kernel (numpy blocks, never a Python loop over
states). How the candidate blocks travel (``exchange``):

- ``"inbox"`` (the default): as raw array files in the store folder (``checker.engines.inbox``).
  The job is one stage over no data (``parallelize(range(parts))``), its statistics come back by
  ``collect``, and no RDD is kept between levels: a lost executor's task runs again elsewhere,
  reads the same inbox and rewrites identical files. A job runs level after level
  (``inbox.run_levels``) while the partitions' statistics, shared through the store, say the
  driver would go on, up to ``levels_per_job`` levels and ``job_seconds`` of work: Spark's fixed
  cost of a job (~0.1 s on this machine, mostly launching its tasks) is paid once for many
  levels. The driver hands the levels' statistics to the level loop one level at a time, as if
  each were a job of its own; levels a job ran past the point where the loop stops (a limit
  only the driver knows) are not counted.
- ``"shuffle"``: pickled ``(owner, block)`` pairs through ``partitionBy`` (identity on the
  owner); the JVM caches the shuffled result as the next level's ``cur``, persisted with its
  lineage cut: local checkpoints on a local master; on a cluster, a reliable checkpoint every
  ``checkpoint_every`` levels, so the partitions of a lost executor are recomputed from the
  last checkpoint (a recomputed level rewrites identical runs and reads only the levels below
  it). Statistics come back through an accumulator keyed by partition, so a task that runs
  twice overwrites rather than adds.

The visited set never passes through the JVM. The driver holds only the per-level statistics;
a trace is rebuilt by looking up one parent per level in the owning partitions' level files.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from pyspark import AccumulatorParam, StorageLevel

from hwcheck.checker.engines import inbox
from hwcheck.checker.engines.options import Options
from hwcheck.checker.engines.partition import (
    SLICE,
    Item,
    LevelTask,
    initial_part,
    lookup_part,
    owner,
    step_part,
)
from hwcheck.checker.engines.partitioned import Backend, LevelEngine
from hwcheck.checker.search.exploration import Exploration
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.spark import memory, session
from hwcheck.checker.spark.stops import Stops

if TYPE_CHECKING:
    from pyspark import RDD, Accumulator

T = TypeVar("T")
Stats = dict[str, Any]  # a partition's statistics of a level (``partition.step_part``)

JOB_SECONDS = 3.0  # work a job does before the driver takes stock (progress, limits, Ctrl-C)
# the candidate blocks: raw files (``engines.inbox``), or pickled through a shuffle
EXCHANGES = ("inbox", "shuffle")


def _by_owner(key: int) -> int:
    """The shuffle's partition function: blocks are already keyed by their owner."""
    return key


class _Keyed(AccumulatorParam[dict[int, Stats]]):
    """Per-partition statistics: a dict merged by key, so a task that runs twice (a retry after
    a lost executor) leaves the same value as one that ran once."""

    def zero(self, value: dict[int, Stats]) -> dict[int, Stats]:
        return {}

    def addInPlace(self, a: dict[int, Stats], b: dict[int, Stats]) -> dict[int, Stats]:
        a.update(b)
        return a


def _drain(iterator: Iterable[object]) -> None:
    for _ in iterator:  # a reused Python worker must have read all of its input
        pass


def _initial_items(task: LevelTask, index: int,
                   iterator: Iterable[object]) -> Iterator[tuple[int, Item]]:
    _drain(iterator)
    return iter([(index, item) for item in initial_part(task, index)])


def _step(task: LevelTask, acc: Accumulator[dict[int, Stats]], index: int,
          iterator: Iterable[tuple[int, Item]]) -> Iterator[tuple[int, Item]]:
    out, stats = step_part(task, index, [value for _, value in iterator])
    acc.add({index: stats})
    return iter(out)


def _same(iterator: T) -> T:
    return iterator


def _warm(task: LevelTask, index: int, iterator: Iterable[object]) -> Iterator[object]:
    _drain(iterator)
    task.kernel()  # built (or loaded from the disk cache) once per Python worker
    return iter([])


def _run_levels(task: LevelTask, levels: inbox.Levels, index: int,
                iterator: Iterable[object]) -> Iterator[tuple[int, list[Stats]]]:
    _drain(iterator)
    return iter([(index, inbox.run_levels(task, index, levels))])


def _lookup(task: LevelTask, fps: Iterable[int], index: int,
            iterator: Iterable[object]) -> Iterator[tuple[int, tuple[int, int]]]:
    _drain(iterator)
    return iter(lookup_part(task, index, fps).items())


class SparkBackend(Backend):
    def __init__(self, master: str, parts: int, checkpoint: str | None = None,
                 checkpoint_every: int = 8, checkpoint_dir: str | None = None,
                 store: str | None = None, merge_ratio: float | None = None,
                 exchange: str = "inbox", levels_per_job: int = 256,
                 job_seconds: float | None = None, slice: int | None = None) -> None:
        if exchange not in EXCHANGES:
            raise ValueError(f"exchange {exchange!r}: expected one of {', '.join(EXCHANGES)}")
        self.master = master
        self.parts = parts
        self.exchange = exchange
        if merge_ratio is not None:
            self.merge_ratio = merge_ratio
        self.slice = SLICE if slice is None else slice
        self.sc = session.spark_context(master, parts)
        self.open_store(store or os.environ.get("HWCHECK_SPARK_STORE_DIR"))
        # the inbox exchange keeps no RDD between levels: nothing to checkpoint
        self.mode = "none" if exchange == "inbox" else \
            checkpoint or ("local" if session.is_local(master) else "reliable")
        self.every = max(1, checkpoint_every)
        if self.mode == "reliable":
            d = checkpoint_dir or os.environ.get("HWCHECK_SPARK_CHECKPOINT_DIR")
            if not d:
                d = tempfile.mkdtemp(prefix="hwcheck-checkpoints-")
            self.sc.setCheckpointDir(d)
        self.cur: Any = None  # the RDD of the level under way (one level a job)
        if job_seconds is None:
            job_seconds = float(os.environ.get("HWCHECK_SPARK_JOB_SECONDS", JOB_SECONDS))
        self.levels = inbox.Levels(max(1, levels_per_job), job_seconds)
        self.ready: list[tuple[int, list[Stats]]] = []  # (level, statistics) a job ran ahead
        self.task: LevelTask | None = None
        self.jobs = 0
        self.stops = Stops(self.sc)  # Ctrl-C and SIGTERM cancel the job, never cut a py4j call

    def _materialize(self, rdd: RDD[Any]) -> None:
        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        if self.mode == "local":
            rdd.localCheckpoint()
        elif self.next_level % self.every == 0:
            rdd.checkpoint()
        rdd._jrdd.count()  # computes and caches on the JVM side: no Python pass over the data
        self.jobs += 1

    def _tasks(self, fn: Callable[[int, Iterable[int]], Iterable[T]]) -> RDD[T]:
        """One task per partition over no data: the inbox exchange's job."""
        return self.sc.parallelize(range(self.parts), self.parts).mapPartitionsWithIndex(fn)

    def start(self, task: LevelTask) -> None:
        with self.stops.held():
            self._do_start(task)

    def step(self, task: LevelTask) -> list[Stats]:
        with self.stops.held():
            return self._do_step(task)

    def lookup(self, fps: set[int]) -> dict[int, tuple[int, int]]:
        with self.stops.held():
            return self._do_lookup(fps)

    def _do_start(self, task: LevelTask) -> None:
        sc, n = self.sc, self.parts
        self.task = self.level_task(task)
        if self.exchange == "inbox":
            self._tasks(partial(_warm, self.task)).collect()
            self.jobs += 1
            return
        cur = sc.parallelize(range(n), n).mapPartitionsWithIndex(
            partial(_initial_items, self.task)).partitionBy(n, _by_owner)
        self._materialize(cur)
        self.cur = cur

    def _do_step(self, task: LevelTask) -> list[Stats]:
        n, prev = self.parts, self.cur
        self.task = task = self.level_task(task)
        if self.exchange == "inbox":
            if not self.ready or self.ready[0][0] != task.level:
                # several levels a job only while every partition's task can run at once:
                # a task waits for all the others at the end of each level
                levels = self.levels if session.task_slots(self.sc) >= n else inbox.Levels(1)
                got = dict(self._tasks(partial(_run_levels, task, levels)).collect())
                self.jobs += 1
                missing = [i for i in range(n) if not got.get(i)]
                if missing:
                    raise RuntimeError(f"no statistics from partition(s) {missing}")
                done = min(len(v) for v in got.values())  # the levels every partition finished
                if done < max(len(v) for v in got.values()):
                    self.levels = inbox.Levels(1)  # a task gave up waiting (an executor lost):
                    # one level a job from here on
                self.ready = [(task.level + j, [got[i][j] for i in range(n)])
                              for j in range(done)]
            self.next_level += 1
            return self.ready.pop(0)[1]
        acc = self.sc.accumulator({}, _Keyed())
        cur = prev.mapPartitionsWithIndex(partial(_step, task, acc)).partitionBy(n, _by_owner)
        self.next_level += 1
        self._materialize(cur)
        self.cur = cur
        prev.unpersist()
        stats = acc.value
        missing = [i for i in range(n) if i not in stats]
        if missing:
            raise RuntimeError(f"no statistics from partition(s) {missing}")
        return [stats[i] for i in range(n)]

    def _do_lookup(self, fps: Collection[int]) -> dict[int, tuple[int, int]]:
        fps = sorted(fps)
        owning = sorted({owner(f, self.parts) for f in fps})
        self.jobs += 1
        if self.task is None:
            raise RuntimeError("a lookup before the level task is set (start first)")
        if self.exchange == "inbox":
            found = self._tasks(partial(_lookup, self.task, fps))
        else:
            found = self.cur.mapPartitionsWithIndex(partial(_lookup, self.task, fps))
        return dict(self.sc.runJob(found, _same, owning))

    def info(self) -> dict[str, Any]:
        pid = session.jvm_pid(self.sc)
        return {"master": self.master, "jobs": self.jobs, "checkpoint": self.mode,
                "exchange": self.exchange,
                "jvm_peak_rss": session.peak_rss_of(pid) if session.is_local(self.master) else 0}

    def cancel(self) -> None:
        self.sc.cancelAllJobs()

    def close(self) -> None:
        try:
            if self.cur is not None:
                self.cur.unpersist()
        finally:  # the files go even when the JVM does not answer
            self.cur = None
            self.stops.close()
            inbox.remove_inboxes(self.store)
            super().close()


class SparkEngine(LevelEngine):
    """``hwcheck check --engine spark``: the level driver over the Spark backend."""

    name = "spark"

    def __init__(self, kernel: Kernel, opts: Options, master: str = "local[*]",
                 partitions: int | None = None, slice: int | None = None,
                 worker_memory: int | None = None, **backend_opts: Any) -> None:
        if slice is None and "HWCHECK_SPARK_SLICE" in os.environ:
            slice = int(os.environ["HWCHECK_SPARK_SLICE"])
        # before any JVM: a run that cannot fit says so (``memory``)
        self.memory = memory.plan(kernel.stride * np.dtype(kernel.dtype).itemsize, master,
                                  slice, worker_memory)
        if partitions is None:  # one partition per executor core: the fewest tasks per level
            partitions = session.spark_context(master).defaultParallelism
        super().__init__(kernel, opts, SparkBackend(master, partitions, slice=self.memory.slice,
                                                    **backend_opts))

    def _backend_info(self, ex: Exploration) -> dict[str, Any]:
        return {**super()._backend_info(ex), "spark_memory": self.memory.as_json()}
