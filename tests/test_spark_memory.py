"""What a Spark run needs in memory (``checker.spark.memory``), decided before any JVM starts;
and the partition functions that bound it: a slice's candidates, a piece's successors, the
visited runs and the inbox read a range at a time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hwcheck.checker.engines import inbox, partition
from hwcheck.checker.engines import runs as runs_module
from hwcheck.checker.engines.partition import (
    BUCKETS,
    SLICE,
    WORKER_BASE,
    Batch,
    bytes_a_candidate,
    largest_slice,
    memory_bound,
    split_by_owner,
)
from hwcheck.checker.engines.runs import Runs
from hwcheck.checker.spark import memory

ROW = 48  # bytes of a Kafka R3 M3 E3 state


def test_the_default_plan_takes_the_default_slice():
    p = memory.plan(ROW, "local[2]")
    assert (p.slice, p.slots) == (SLICE, 2)
    assert p.worker == WORKER_BASE + SLICE * bytes_a_candidate(ROW)
    assert bytes_a_candidate(ROW) >= 3 * ROW  # the reads, their concatenation, the new rows
    assert p.total == p.jvm + 2 * p.worker
    assert memory.plan(ROW, "spark://h:7077").total is None  # a cluster's slots: unknown here


def test_worker_memory_picks_the_largest_slice_that_fits():
    budget = 300 << 20
    p = memory.plan(ROW, "local[1]", worker_memory=budget)
    assert p.slice == largest_slice(ROW, budget) < SLICE
    assert memory_bound(ROW, p.slice) <= budget < memory_bound(ROW, p.slice + 1)


@pytest.mark.parametrize("kwargs, says", [
    (dict(worker_memory=200 << 20), "less than a Python worker needs before its first slice"),
    (dict(slice=10**7, worker_memory=512 << 20),
     f"use --spark-slice {largest_slice(ROW, 512 << 20):,} or less"),
    (dict(slice=10**9), "more than this machine's"),
])
def test_a_run_that_cannot_fit_is_refused_in_one_line(kwargs, says):
    with pytest.raises(memory.SparkMemory) as e:
        memory.plan(ROW, "local[2]", **kwargs)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_the_command_line_refuses_it_before_any_jvm(capsys):
    from hwcheck.checker.cli.main import run

    for args, says in (
            (["--engine", "spark", "--spark-master", "local[2]", "--spark-worker-memory",
              "100M"], "hwcheck: error: --spark-worker-memory 100 MiB is less than a Python "
                       "worker needs before its first slice (288 MiB)"),
            (["--spark-slice", "9"], "hwcheck: error: --spark-slice and "
                                     "--spark-worker-memory are for --engine spark")):
        with pytest.raises(SystemExit) as e:
            run(["check", "-R", "2", "-M", "2", "-E", "3", *args])
        assert e.value.code == 2
        assert capsys.readouterr().err.strip().splitlines() == [says]


@pytest.mark.parametrize("text, size", [("512m", 512 << 20), ("2g", 2 << 30), ("1024", 1024)])
def test_jvm_sizes(text, size):
    assert memory.jvm_size(text) == size


def _batch(fps):
    fps = np.asarray(fps, np.uint64)
    n = fps.size
    rows = (np.arange(n * 6) % 97).astype(np.int8).reshape(n, 6)
    return Batch(rows, fps, fps ^ np.uint64(5), (np.arange(n) % 7).astype(np.uint8))


u64 = st.integers(min_value=1, max_value=2**64 - 1)


@settings(max_examples=40, deadline=None)
@given(st.sets(u64, max_size=200), st.integers(0, BUCKETS - 1), st.integers(1, BUCKETS))
def test_a_block_file_reads_back_any_run_of_buckets(tmp_path_factory, fps, b0, width):
    store = str(tmp_path_factory.mktemp("inbox"))
    b1 = min(BUCKETS, b0 + width)
    for o, blk in split_by_owner(_batch(sorted(fps)), 2):
        inbox.write_block(store, 1, o, (3, 4), blk)
        (item,) = inbox.read_inbox(store, 1, o)
        assert item[:2] == ("cand", (3, 4))
        got, want = item[2].read(b0, b1), blk.read(b0, b1)
        for f in ("rows", "fps", "parents", "acts"):
            assert np.array_equal(getattr(got, f), getattr(want, f))
        assert np.array_equal(item[2].bounds, blk.bounds)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sets(u64, max_size=40), min_size=1, max_size=5), st.sets(u64, max_size=60))
def test_the_visited_check_reads_runs_a_chunk_at_a_time(tmp_path_factory, levels, probe):
    """Runs read in chunks of 3 fingerprints, merged in chunks of 3: the same answers."""
    mp = pytest.MonkeyPatch()
    mp.setattr(runs_module, "MERGE_CHUNK", 3)
    try:
        r = Runs(tmp_path_factory.mktemp("runs"), 0)
        seen: set[int] = set()
        for level, found in enumerate(levels):
            new = np.array(sorted(found - seen), np.uint64)
            r.write_level(level, new, new, np.zeros(new.size, np.uint8))
            seen |= found
        keys = np.array(sorted(probe | set(list(seen)[:10])), np.uint64)
        got = r.seen(keys, len(levels))
        assert {int(f) for f, s in zip(keys, got) if s} == {int(f) for f in keys} & seen
    finally:
        mp.undo()


def test_a_task_holds_a_slice_of_candidates_and_a_piece_of_successors(tmp_path, monkeypatch):
    """Every merge reads at most ``slice`` candidates (no bucket here holds more), every piece
    of successors sent has at most ``slice``: what bounds a worker's memory."""
    from helpers import kafka

    from hwcheck.checker.engines.options import Options
    from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine
    from hwcheck.checker.semantics.kernel import Kernel
    from hwcheck.spec.kafka.params import Params

    merged: list[int] = []
    sent: list[int] = []
    merge, expand = partition.merge_slice, partition.expand_pieces

    def counting_merge(task, runs, cand):
        merged.append(len(cand))
        return merge(task, runs, cand)

    def counting_expand(*args, **kwargs):
        for ex in expand(*args, **kwargs):
            sent.append(len(ex.succ))
            yield ex

    monkeypatch.setattr(partition, "merge_slice", counting_merge)
    monkeypatch.setattr(partition, "expand_pieces", counting_expand)
    most = 400
    k = Kernel(kafka(Params(2, 2, 3, "hw", "hw")))
    ex = LevelEngine(k, Options(stop_at_violation=False),
                     InProcessBackend(2, store=str(tmp_path), slice=most)).run()
    assert ex.distinct == 10_487
    assert max(merged) <= most < sum(merged) and max(sent) <= most < sum(sent)
