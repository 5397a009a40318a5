"""The visited sets (the plain table: ordered linear probing, grown in place; the table with
ids, the state graph's) and the work folder's levels and buckets (``spill.py``): exact sets,
the same layout however they were built, and the same exploration whether levels stay in
memory or go to files."""

from __future__ import annotations

import numpy as np
import pytest

from hwcheck.checker.engines import idtable, spill, visited
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.engines.visited import MAX_LOAD, IdTable, VisitedTable
from hwcheck.checker.engines.workdir import WorkDir
from hwcheck.checker.semantics.fingerprint import TAIL, table_grow
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.kafka.model import build
from hwcheck.spec.kafka.params import Params


def _fps(n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    fps = np.unique(rng.integers(1, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2)
                    + np.uint64(1))
    rng.shuffle(fps)
    return fps


def _check_layout(t: VisitedTable) -> None:
    """Keys increase through the table; each sits at or after its home slot with no free slot
    in between; the last slot is free."""
    table = t.table
    pos = np.flatnonzero(table)
    keys = table[pos]
    assert np.all(keys[1:] > keys[:-1])
    homes = ((keys >> np.uint64(32)) * np.uint64(t.cap)) >> np.uint64(32)
    assert np.all(pos >= homes.astype(np.int64))
    occupied = np.cumsum(table != 0)
    for p, h in zip(pos[:: max(1, pos.size // 500)], homes[:: max(1, pos.size // 500)]):
        h = int(h)
        assert occupied[p] - (occupied[h - 1] if h else 0) == p - h + 1  # no gap
    assert table[-1] == 0


def test_the_table_holds_exactly_what_was_added_through_many_growths():
    fps = _fps(60_000)
    t = VisitedTable(16)
    assert all(t.add(int(fp)) for fp in fps[:40_000])
    assert not any(t.add(int(fp)) for fp in fps[:40_000])  # every one is found again
    assert all(t.add(int(fp)) for fp in fps[40_000:])
    assert t.filled == fps.size
    assert np.array_equal(np.sort(t.fingerprints()), np.sort(fps))
    assert MAX_LOAD / 1.3 < t.filled / t.cap <= MAX_LOAD
    _check_layout(t)


def test_the_layout_does_not_depend_on_the_order_of_inserts_or_on_growing():
    """Ordered linear probing has one layout per set and capacity: built at once, inserted in
    another order, or grown in place from a smaller table, the arrays are equal."""
    fps = _fps(5_000, seed=11)
    built = VisitedTable.of(fps)
    one = VisitedTable(built.cap)
    for fp in fps[::-1]:
        one.add(int(fp))
    assert one.cap == built.cap and np.array_equal(one.table, built.table)
    small = VisitedTable.of(fps)  # the same set grown in place to a larger capacity
    bigger = int(small.cap * 1.7)
    table = np.zeros(bigger + TAIL, np.uint64)
    table[:small.table.size] = small.table
    assert table_grow(table, small.cap, bigger)
    again = VisitedTable(bigger)
    for fp in fps:
        again.add(int(fp))
    assert np.array_equal(table, again.table)


def test_room_for_a_large_batch_of_inserts():
    """``make_room(n)``: n inserts stay under the fill limit and short of the last slot."""
    t = VisitedTable(16)
    t.make_room(3 * TAIL)
    fps = _fps(3 * TAIL, seed=5)
    for fp in fps:
        t.add(int(fp))
    assert t.filled == fps.size
    _check_layout(t)


def test_a_large_table_grows_inside_reserved_address_space():
    t = VisitedTable(16)
    t.make_room(3 << 20)
    assert t.mem is not None and t.mem.size > t.table.size  # room to grow into
    before = t.mem
    t.grow()
    assert t.mem is before  # grown where it was: no second copy


def _ids_of(t: IdTable, fps: np.ndarray) -> np.ndarray:
    shift = idtable.home_shift(t.mask)
    return np.array([idtable.table_find(t.tab, t.mask, shift, fp)[0] for fp in fps])


@pytest.mark.parametrize("reserve_from", [1 << 30, 1 << 6])  # fresh arrays; a reserved range
def test_the_table_with_ids_keeps_every_id_through_its_growths(monkeypatch, reserve_from):
    """The set with ids: every fingerprint put in keeps its id, and takes the id it is
    numbered with, through doublings in fresh arrays or in place in a reserved range (the
    fresh words told to the caller once, before they are written); it is a visited set like
    the others (its fingerprints, its size)."""
    monkeypatch.setattr(visited, "RESERVE_FROM", reserve_from)
    rng = np.random.default_rng(7)
    fps = np.unique(rng.integers(1, 2**64 - 1, 6000, dtype=np.uint64, endpoint=True))
    t, told = IdTable(16), []
    t.fill(fps[:10], 0)
    t.make_room(fps.size, lambda fresh: told.append((fresh.size, int(fresh.any()))))
    mem = t.mem
    t.fill(fps[10:], 10)
    assert t.slots * visited.ID_LOAD >= fps.size and len(t) == fps.size
    assert np.array_equal(_ids_of(t, fps), np.arange(fps.size))
    assert np.array_equal(np.sort(t.fingerprints()), fps)
    order = np.argsort(fps[::-1], kind="stable")
    t.number(fps[::-1][order], 100)  # numbered anew: the ids of that order
    assert np.array_equal(_ids_of(t, fps[::-1][order]), 100 + np.arange(fps.size))
    t.grow()
    assert np.array_equal(_ids_of(t, fps[::-1][order]), 100 + np.arange(fps.size))
    if reserve_from < 1 << 30:
        assert mem is not None and t.mem is mem  # grown where it was
        assert told and all(not written for _, written in told)  # fresh: never written
        t.release()
        assert len(t) == 0  # its pages given back
    else:
        assert t.mem is None and not told


def test_both_tables_grow_in_place_the_same_way(monkeypatch):
    """The plain table and the table with ids share their growth in a reserved range
    (``visited.grow_words``): from the same size on, both live at the start of one."""
    monkeypatch.setattr(visited, "RESERVE_FROM", 1 << 12)
    plain, ids = VisitedTable(16), IdTable(16)
    plain.make_room(1 << 12)
    ids.make_room(1 << 12)
    for t, a in ((plain, plain.table), (ids, ids.tab)):
        assert t.mem is not None and a.ctypes.data == t.mem.ctypes.data


def _engine(workdir=None, workers=1, **opts) -> LocalEngine:
    k = Kernel(build(Params(replicas=3, max_offset=1, max_epoch=3, truncation="hw",
                            isr_expansion="hw")))
    return LocalEngine(k, Options(stop_at_violation=False, **opts), workers=workers,
                       local=LocalSettings(workdir=workdir))


def _levels(engine: LocalEngine) -> list:
    return [(np.array(lv.fps), np.array(lv.parents), np.array(lv.actions))
            for lv in engine.levels]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2])  # one worker: tests/test_part_matrix.py (local-disk)
def test_levels_and_frontiers_on_disk_explore_exactly_as_in_memory(monkeypatch, tmp_path,
                                                                  workers):
    """Small buckets spilled to files from the first byte: the same counts, the same levels
    (fingerprints, parents, actions) and the same hits as with everything in memory."""
    mem = _engine(workers=workers)
    ex_mem = mem.run()
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(spill, "BUCKET_BYTES", 4096)
    disk = _engine(workdir=tmp_path / "work", workers=workers)
    ex_disk = disk.run()
    assert (ex_disk.distinct, ex_disk.generated, ex_disk.depth) == \
        (ex_mem.distinct, ex_mem.generated, ex_mem.depth)
    assert ex_disk.hits == ex_mem.hits and ex_disk.hits
    for a, b in zip(_levels(disk), _levels(mem), strict=True):
        for x, y in zip(a, b):
            assert np.array_equal(x, y)
    assert ex_disk.stats["disk_bytes"] >= 13 * (ex_disk.distinct - 1)  # every level's records
    assert list((tmp_path / "work").iterdir()) == []  # the run's folder is gone


class _Threads:
    """Three threads as the local engine's workers are a ``spill.Pool``."""

    n = 3

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor
        self.ex = ThreadPoolExecutor(self.n)
        self.calls = 0

    def map(self, fn, args):
        self.calls += 1
        return [f.result() for f in [self.ex.submit(fn, *a) for a in args]]

    def submit(self, fn, *args):
        self.calls += 1
        return self.ex.submit(fn, *args)


@pytest.mark.parametrize("pooled", [False, True])
@pytest.mark.parametrize("in_order", [False, True])
def test_a_level_splits_into_buckets_in_fingerprint_order(tmp_path, monkeypatch, in_order,
                                                         pooled):
    """Pieces added in any order, or each in fingerprint order (as several workers hand them
    over: cut into buckets where they are, without sorting), give the same level; so do the
    buckets written, read back, sorted and checked by a pool's threads, the checks' findings
    handed over in bucket order."""
    monkeypatch.setattr(spill, "SPILL_BYTES", 1000)
    work = WorkDir(tmp_path)
    rec = spill.record_dtype(8, np.int8, np.uint8)
    pool = _Threads() if pooled else None
    nxt = spill.NextLevel(work, 8, rec, pool)
    fps = _fps(3000, seed=9)
    rows = np.arange(fps.size * 8, dtype=np.int64).astype(np.int8).reshape(-1, 8)
    for lo in range(0, fps.size, 700):
        idx = np.arange(lo, min(fps.size, lo + 700))
        if in_order:
            idx = idx[np.argsort(fps[idx])]
        nxt.add(rows[idx], fps[idx], idx.astype(np.int32), np.full(idx.size, 3, np.uint8))
    seen = []
    store = spill.LevelStore(work, rec)
    store.append({"fp": np.array([7], np.uint64), "par": np.array([-1], np.int32),
                  "act": np.array([0], np.uint8)})  # an earlier level: this one starts after it
    found = []
    level, front = nxt.finish(store, lambda r, off, f: (seen.append((off, r.shape[0])),
                                                        found.append(f)),
                              (lambda r: ("checked", r.copy())) if pooled else None)
    if pooled:
        assert pool.calls > 2  # the spill, the read-back waves, the frontier's writes
        assert all(f[0] == "checked" for f in found)  # each bucket's own rows, checked there
        assert np.array_equal(np.concatenate([f[1] for f in found]), rows[np.argsort(fps)])
    else:
        assert found == [None] * len(found)
    assert level.entry(5) == (int(np.sort(fps)[5]), int(np.argsort(fps)[5]), 3)
    order = np.argsort(fps)
    assert np.array_equal(np.asarray(level.fps), fps[order])
    assert np.array_equal(np.asarray(level.parents), order.astype(np.int32))
    assert np.array_equal(front.rows(), rows[order])
    offs = [off for off, _ in seen]
    assert offs == sorted(offs) and sum(n for _, n in seen) == fps.size
    got = np.concatenate([r for _, r in front.take()])
    assert np.array_equal(got, rows[order])
    work.close()
    assert not work.path.exists()
    assert np.array_equal(np.asarray(level.fps), fps[order])  # still readable: the store's
    store.close()  # files are open
    if pool is not None:
        pool.ex.shutdown()


@pytest.mark.slow
def test_a_run_thousands_of_levels_deep_keeps_a_few_files_open(tmp_path):
    """Every level's records go to the same three files: the open files do not grow with the
    depth (tests/specs/domains_wide.py counts to 5,000: 5,001 levels)."""
    import os

    from engine_contract import protocol_spec

    before = len(os.listdir("/proc/self/fd"))
    engine = LocalEngine(Kernel(protocol_spec("domains_wide.py", {"top": 5000})),
                         Options(stop_at_violation=False))
    ex = engine.run()
    assert (ex.distinct, ex.depth, ex.complete) == (10_002, 5_001, True)
    assert len(os.listdir("/proc/self/fd")) - before <= 3
    path = engine.levels[-1]
    assert len(path) >= 1 and path.entry(0)[1] >= 0


@pytest.mark.parametrize("workers", [1, 2])
def test_a_full_work_folder_stops_a_local_run_keeping_what_it_found(monkeypatch, tmp_path,
                                                                    workers):
    """A disk that fills up under the local engine's spilled levels stops the run as the
    state graph's does (``workdir.writing``: no room left in the work folder, said as out of
    memory), keeping the levels and the hits' traces found before, and the folder removed."""
    import errno
    import os

    from helpers import kafka

    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
    whole = LocalEngine(Kernel(spec), Options(stop_at_violation=False), workers=workers).run()
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)  # every level in files
    real_open, writes = open, []

    class Filling:
        """A bucket's file on a disk that is full after some writes."""

        def __init__(self, f):
            self.f, self.name = f, f.name

        def write(self, data):
            writes.append(1)
            if len(writes) > 60:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return self.f.write(data)

        def close(self):
            self.f.close()

    def opening(path, mode="r", *args, **kw):
        f = real_open(path, mode, *args, **kw)
        return Filling(f) if mode == "ab" else f

    monkeypatch.setattr(spill, "open", opening, raising=False)
    engine = LocalEngine(Kernel(spec), Options(stop_at_violation=False), workers=workers,
                         local=LocalSettings(workdir=tmp_path))
    ex = engine.run()
    assert len(writes) > 60  # the disk did fill
    assert not ex.complete
    assert ex.stop_reason == f"no room left in the work folder ({engine.work.path}: " \
                             f"{os.strerror(errno.ENOSPC)})"
    assert 0 < ex.distinct < whole.distinct and 0 < ex.depth < whole.depth
    assert ex.hits and all(h.path == whole.hits[n].path for n, h in ex.hits.items())
    assert list(tmp_path.iterdir()) == []
