"""The Spark engine: level-synchronous BFS with the partitions of the state space in Spark.

Partition i of the state space (fingerprints whose high bits map to i, see
``checker.engines.partition.owners``) is partition i of two RDDs: ``base``, the partition's base (the
sorted fingerprints of the states it owns, nothing else: all the visited check needs), and
``cur``, a shuffled RDD with the partition's pending store (the states found since the base was
written, with parent fingerprint and action) and the candidate blocks the other partitions sent
it. One level is one Spark job with one Python stage:

1. ``union(cur, base).mapPartitionsWithIndex(step)``: the two share a partitioner, so the
   union is partition-aware (partition i of both: the zip PySpark lacks). Each executor merges
   its candidates into its stores and expands the new states with the compiled kernel (numpy
   blocks, never a Python loop over states), emitting ``(owner, block)`` pairs: its pending
   store to itself, one block of successors to each owning partition;
2. ``partitionBy`` (identity on the owner) shuffles them, and the JVM caches the result as the
   next ``cur`` (no Python runs on that side).

When the pending stores reach half the bases' size, a compaction job folds their fingerprints
into a new ``base``, and that level's ``cur`` is kept (``links``): its pending stores hold the
parents of the states just folded, for traces. Every RDD kept is persisted and its lineage cut:
local checkpoints on a local master; on a cluster, reliable checkpoints of every base and of
``cur`` every few levels (``checkpoint_every``), so the partitions of a lost executor are
recomputed from the last checkpoint. Per-partition statistics come back through an accumulator
keyed by partition, so a task that runs twice overwrites rather than adds. The driver holds only
those statistics; a trace is rebuilt by looking up one parent per level in the owning
partitions' stores.
"""

from __future__ import annotations

import os
import tempfile
from functools import partial

from pyspark import AccumulatorParam, StorageLevel
from pyspark import RDD
from pyspark.serializers import BatchedSerializer, CPickleSerializer

from hwcheck.checker.engines.options import Options
from hwcheck.checker.engines.exploration import Exploration
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.engines.partitioned import Backend, LevelEngine, should_compact
from hwcheck.checker.engines.partition import (LevelTask, compact_part, initial_part, lookup_part, owner,
                         step_part)
from hwcheck.checker.spark import session


def _by_owner(key: int) -> int:
    """The shuffle's partition function: blocks are already keyed by their owner."""
    return key


class _Keyed(AccumulatorParam):
    """Per-partition statistics: a dict merged by key, so a task that runs twice (a retry after
    a lost executor) leaves the same value as one that ran once."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        a.update(b)
        return a


def _drain(iterator) -> None:
    for _ in iterator:  # a reused Python worker must have read all of its input
        pass


def _initial_items(task: LevelTask, index: int, iterator):
    _drain(iterator)
    return iter([(index, item) for item in initial_part(task, index)[0]])


def _initial_base(task: LevelTask, index: int, iterator):
    _drain(iterator)
    return iter([(index, item) for item in initial_part(task, index)[1]])


def _step(task: LevelTask, acc, index: int, iterator):
    out, stats = step_part(task, index, [value for _, value in iterator])
    acc.add({index: stats})
    return iter(out)


def _compact(index: int, iterator):
    return iter(compact_part(index, [value for _, value in iterator]))


def _lookup(fps, iterator):
    return iter(lookup_part([value for _, value in iterator], fps).items())


class SparkBackend(Backend):
    def __init__(self, master: str, parts: int, checkpoint: str | None = None,
                 checkpoint_every: int = 8, checkpoint_dir: str | None = None,
                 compact_ratio: float | None = None, compact_min_bytes: int | None = None):
        self.master = master
        self.parts = parts
        if compact_ratio is not None:
            self.compact_ratio = compact_ratio
        if compact_min_bytes is not None:
            self.compact_min_bytes = compact_min_bytes
        self.sc = session.spark_context(master, parts)
        self.mode = checkpoint or ("local" if session.is_local(master) else "reliable")
        self.every = max(1, checkpoint_every)
        if self.mode == "reliable":
            d = checkpoint_dir or os.environ.get("HWCHECK_SPARK_CHECKPOINT_DIR")
            if not d:
                d = tempfile.mkdtemp(prefix="hwcheck-checkpoints-")
            self.sc.setCheckpointDir(d)
        self.cur = None
        self.base = None
        self.links = []  # each level's items at a compaction: their pending store has the parents
        self.level_no = 0
        self.jobs = 0
        self.compactions = 0

    def _materialize(self, rdd, reliable: bool = False) -> None:
        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        if self.mode == "local":
            rdd.localCheckpoint()
        elif reliable or self.level_no % self.every == 0:
            rdd.checkpoint()
        rdd._jrdd.count()  # computes and caches on the JVM side: no Python pass over the data
        self.jobs += 1

    def _with_base(self, cur):
        return self._with(cur, self.base)

    def _with(self, cur, *others):
        """``cur`` and ``others`` (the base stores, or kept items), partition i of all in
        partition i: they share a partitioner, so the JVM's union is partition-aware (the zip
        PySpark lacks). All hold pickled batches of (partition, item) pairs, so the union is
        read as such without PySpark's re-serialization of each side."""
        j = cur._jrdd
        for o in others:
            j = j.union(o._jrdd)
        both = RDD(j, self.sc, BatchedSerializer(CPickleSerializer()))
        both.partitioner = cur.partitioner
        if both.getNumPartitions() != self.parts:
            raise RuntimeError("the level's items and the base stores are not co-partitioned")
        return both

    def start(self, task: LevelTask) -> None:
        sc, n = self.sc, self.parts
        keyed = sc.parallelize([(i, None) for i in range(n)], n).partitionBy(n, _by_owner)
        self.base = keyed.mapPartitionsWithIndex(partial(_initial_base, task),
                                                 preservesPartitioning=True)
        self._materialize(self.base, reliable=True)
        cur = sc.parallelize(range(n), n).mapPartitionsWithIndex(
            partial(_initial_items, task)).partitionBy(n, _by_owner)
        self._materialize(cur)
        self.cur = cur

    def step(self, task: LevelTask):
        sc, n, prev = self.sc, self.parts, self.cur
        acc = sc.accumulator({}, _Keyed())
        cur = self._with_base(prev).mapPartitionsWithIndex(partial(_step, task, acc)) \
            .partitionBy(n, _by_owner)
        self.level_no += 1
        self._materialize(cur)
        self.cur = cur
        if not any(prev is r for r in self.links):
            prev.unpersist()
        stats = acc.value
        missing = [i for i in range(n) if i not in stats]
        if missing:
            raise RuntimeError(f"no statistics from partition(s) {missing}")
        stats = [stats[i] for i in range(n)]
        if should_compact(stats, self.compact_ratio, self.compact_min_bytes):
            old = self.base
            self.base = self._with_base(cur).mapPartitionsWithIndex(
                _compact, preservesPartitioning=True)
            self._materialize(self.base, reliable=True)
            old.unpersist()
            self.links.append(cur)  # kept (cached, its lineage cut) for traces only
            self.compactions += 1
        return stats

    def lookup(self, fps):
        fps = sorted(fps)
        owning = sorted({owner(f, self.parts) for f in fps})
        self.jobs += 1
        return dict(self.sc.runJob(self._with(self.cur, *self.links), partial(_lookup, fps),
                                   owning))

    def info(self) -> dict:
        pid = session.jvm_pid(self.sc)
        return {"master": self.master, "jobs": self.jobs, "checkpoint": self.mode,
                "compactions": self.compactions,
                "jvm_peak_rss": session.peak_rss_of(pid) if session.is_local(self.master) else 0}

    def cancel(self) -> None:
        self.sc.cancelAllJobs()

    def close(self) -> None:
        for rdd in [self.cur, self.base] + self.links:
            if rdd is not None:
                rdd.unpersist()
        self.cur = self.base = None
        self.links = []


class SparkEngine(LevelEngine):
    """``hwcheck check --engine spark``: the level driver over the Spark backend."""

    name = "spark"

    def __init__(self, kernel: Kernel, opts: Options, master: str = "local[*]",
                 partitions: int | None = None, **backend_opts):
        if partitions is None:  # one partition per executor core: the fewest tasks per level
            partitions = session.spark_context(master).defaultParallelism
        super().__init__(kernel, opts, SparkBackend(master, partitions, **backend_opts))

    def run(self) -> Exploration:
        try:
            return super().run()
        finally:
            self.backend.close()
