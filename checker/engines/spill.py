"""What the local engine keeps on disk: the parent records of finished levels, and the frontier.

A run's work folder (``--workdir``; by default a temporary folder) holds every level's parent
records (fingerprints, parent positions, action instances: 13 bytes a state, appended level
after level to three files and read back an entry at a time, so a trace reads only what it
walks through) and, while a level is the frontier or the next level, its states in buckets.

A level's states are split into buckets by the high bits of their fingerprints
(``partition.owners``), so bucket b holds a range of fingerprints below bucket b+1's: a level
read bucket by bucket, each sorted, is the level in fingerprint order, and only one bucket has
to be in memory at a time. While a level is expanded, its successors are appended to the next
level's buckets as they are found (``NextLevel``); when it is done, each bucket is sorted, its
states checked, its records appended to the level file and its rows kept for expansion
(``Frontier``). Buckets stay in memory until a level's buckets pass ``SPILL_BYTES``; then they
go to files, so the memory the frontier takes is one bucket's, however large the level.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, wait
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numpy.typing import DTypeLike

from hwcheck.checker.engines.fpsort import gather, radix_order
from hwcheck.checker.engines.partition import owners
from hwcheck.checker.engines.pool import Pool
from hwcheck.checker.engines.workdir import WorkDir, writing
from hwcheck.checker.environment import EnvironmentFault

SPILL_BYTES = 64 << 20  # a level's buckets past this go to files
BUCKET_BYTES = 16 << 20  # what a bucket is sized for
MAX_BUCKETS = 256

Columns = dict[str, np.ndarray]  # a column name -> its array, one entry a record


def record_dtype(stride: int, dtype: DTypeLike, act_dtype: DTypeLike) -> np.dtype:
    """One successor as it waits in a bucket: fingerprint, parent position, action, row."""
    return np.dtype([("fp", np.uint64), ("par", np.int32), ("act", act_dtype),
                     ("row", dtype, (stride,))])


class _Buckets:
    """Columns of records (a dict of arrays, one entry a record) appended to numbered buckets:
    kept as they come in memory, or packed into records (``rec``) in files once they hold more
    than ``SPILL_BYTES`` (then every bucket is in a file). A bucket's file is held open until
    the bucket is read (``take``, ``flush``) or let go of, and written unbuffered: a write is
    one system call, made without the GIL, straight from the caller's records (a buffer's
    copy would be made holding it: many workers appending at once waited for each other
    there, and opening a file for each append was slower still)."""

    def __init__(self, work: WorkDir, count: int, stem: str, rec: np.dtype) -> None:
        self.work, self.stem, self.rec = work, stem, rec
        self.mem: list[list[Columns]] = [[] for _ in range(count)]
        self.files: list[Path] | None = None
        self.writers: dict[int, BinaryIO] = {}  # the open files, by bucket
        self.nbytes = 0
        self.lock = threading.Lock()  # the accounting, when threads append (``append_own``)

    def __len__(self) -> int:
        return len(self.mem)

    def append(self, b: int, cols: Columns) -> None:
        n = len(next(iter(cols.values())))
        if not n:
            return
        self.nbytes += n * self.rec.itemsize
        if self.files is None and self.nbytes > SPILL_BYTES:
            self._spill()
        if self.files is None:
            self.mem[b].append(cols)
        else:
            self._write(b, cols)

    def to_files(self) -> None:
        """Every bucket in a file from now on, whatever it holds."""
        if self.files is None:
            self._spill()

    def _spill(self) -> None:
        self.files = [self.work.new_file(f"{self.stem}-{b}") for b in range(len(self.mem))]
        for b, parts in enumerate(self.mem):
            for cols in parts:
                self._write(b, cols)
            parts.clear()

    def append_own(self, parts: Sequence[tuple[int, np.ndarray]]) -> int:
        """Append each (bucket, records) of ``parts`` (records of ``rec``, which the caller
        reuses once this returns), called by several threads at once, each with buckets no
        other thread appends to: the accounting and the move to files under the lock, each
        thread's files written outside it. Returns the entries."""
        parts = [(b, recs) for b, recs in parts if recs.size]
        n = sum(recs.size for _, recs in parts)
        with self.lock:
            self.nbytes += n * self.rec.itemsize
            if self.files is None and self.nbytes > SPILL_BYTES:
                self._spill()
            if self.files is None:
                for b, recs in parts:
                    self.mem[b].append({name: recs[name].copy() for name in self.rec.names or ()})
                return n
        for b, recs in parts:
            _write_all(self._file(b), recs)
        with self.lock:
            self.work.wrote(n * self.rec.itemsize)
        return n

    def extend(self, parts: Sequence[tuple[int, Columns]], pool: Pool | None = None) -> None:
        """``append`` each (bucket, columns) of ``parts``, buckets all different; with a
        ``pool`` the files are written by its threads, a bucket each (the accounting stays on
        this thread)."""
        parts = [(b, cols) for b, cols in parts if len(next(iter(cols.values())))]
        if pool is None or len(parts) < 2:
            for b, cols in parts:
                self.append(b, cols)
            return
        self.nbytes += sum(len(next(iter(c.values()))) for _, c in parts) * self.rec.itemsize
        if self.files is None and self.nbytes > SPILL_BYTES:
            self._spill()
        if self.files is None:
            for b, cols in parts:
                self.mem[b].append(cols)
            return
        self.work.wrote(sum(pool.map(self._pack, parts)))

    def _write(self, b: int, cols: Columns) -> None:
        self.work.wrote(self._pack(b, cols))

    def _pack(self, b: int, cols: Columns) -> int:
        """Append ``cols`` to bucket b's file as records; returns the bytes written. Touches
        nothing but that file, so threads may write different buckets at once."""
        n = len(next(iter(cols.values())))
        recs = np.empty(n, self.rec)
        for name, col in cols.items():
            recs[name] = col
        _write_all(self._file(b), recs)
        return int(recs.nbytes)

    def _file(self, b: int) -> BinaryIO:
        """Bucket b's file, open for appending (by one thread at a time: its bucket's)."""
        f = self.writers.get(b)
        if f is None:
            assert self.files is not None  # spilled
            with writing(self.work.path):
                f = self.writers[b] = open(self.files[b], "ab", buffering=0)  # noqa: SIM115  (held open; closed by ``_close``)
        return f

    def _close(self, b: int) -> None:
        """Bucket b's file closed."""
        f = self.writers.pop(b, None)
        if f is not None:
            f.close()

    def flush(self) -> None:
        """Every bucket's file closed (before the files are read whole)."""
        for b in list(self.writers):
            self._close(b)

    def take(self, b: int, keep: bool = False, views: bool = False) -> Columns:
        """Bucket b's columns, end to end (each contiguous, or with ``views`` maybe the
        strided fields of the records read back); the bucket is emptied, or with ``keep``
        left as it is until ``drop``."""
        names = self.rec.names or ()
        if self.files is None:
            parts = self.mem[b]
            if not keep:
                self.mem[b] = []
            if len(parts) == 1:
                return parts[0]
            if not parts:
                return {name: np.empty((0,) + self.rec[name].shape, self.rec[name].base)
                        for name in names}
            return {name: np.concatenate([p[name] for p in parts]) for name in names}
        path = self.files[b]
        self._close(b)
        recs = np.fromfile(path, self.rec) if path.exists() else np.empty(0, self.rec)
        if not keep:
            self.work.remove(path)
        return {name: recs[name] if views else np.ascontiguousarray(recs[name])
                for name in names}

    def release(self, b: int) -> None:
        """Let go of bucket b (taken with ``keep``)."""
        if self.files is None:
            self.mem[b] = []
        else:
            self._close(b)
            self.work.remove(self.files[b])

    def drop(self) -> None:
        self.flush()
        if self.files is not None:
            for path in self.files:
                self.work.remove(path)
        self.mem = [[] for _ in self.mem]


def _write_all(f: BinaryIO, recs: np.ndarray) -> None:
    """Append the records ``recs`` (contiguous) to the unbuffered file ``f`` (a full disk:
    ``NoRoom``, as for the state graph's files)."""
    data = recs.view(np.uint8).data
    with writing(Path(f.name).parent):
        while data:
            data = data[f.write(data):]


def bucket_count(states: int, row_bytes: int, workers: int = 1) -> int:
    """Buckets for a level of about ``states`` states: one while it would stay in memory, else
    about ``BUCKET_BYTES`` a bucket, a power of two, and a multiple of ``workers`` (at least
    one bucket a worker: each worker spills its owner's share into its own buckets)."""
    if states * row_bytes <= SPILL_BYTES:
        return 1
    want = states * row_bytes // BUCKET_BYTES + 1
    nb = min(MAX_BUCKETS, 1 << max(0, int(want - 1).bit_length()))
    return nb if nb % workers == 0 else max(nb // workers, 1) * workers


class NextLevel:
    """The successors of a level as its expansion finds them, in buckets by fingerprint. With
    a ``pool``, the buckets' files are written and the level's end done by its threads."""

    def __init__(self, work: WorkDir, buckets: int, rec: np.dtype,
                 pool: Pool | None = None) -> None:
        self.rec = rec
        self.buckets = _Buckets(work, buckets, "next", rec)
        self.count = 0
        self.pool = pool

    def add(self, rows: np.ndarray, fps: np.ndarray, parents: np.ndarray,
            acts: np.ndarray) -> None:
        n = fps.size
        if not n:
            return
        cols = {"fp": fps, "par": parents, "act": acts, "row": rows}
        nb = len(self.buckets)
        if nb == 1:
            self.buckets.append(0, cols)
        else:
            own = owners(fps, nb).astype(np.uint16)
            if not np.all(own[1:] >= own[:-1]):  # (several workers hand them over in order)
                order = np.argsort(own, kind="stable")  # a radix sort: small keys, stable
                own = own[order]
                cols = {name: col[order] for name, col in cols.items()}
            cuts = np.searchsorted(own, np.arange(nb + 1))
            self.buckets.extend([(b, {name: col[cuts[b]:cuts[b + 1]]
                                      for name, col in cols.items()})
                                 for b in range(nb) if cuts[b + 1] > cuts[b]], self.pool)
        self.count += n

    def owned(self, workers: int) -> bool:
        """Whether ``add_own`` takes this level's successors from ``workers`` owners: each
        owner's fingerprint range is whole buckets (``partition.owners`` at a multiple of the
        owners' count: bucket b is owner ``b // (buckets / workers)``'s), and the level is in
        files or may go there (a level in one bucket takes them on this thread, as cheaply)."""
        nb = len(self.buckets)
        return nb > 1 and nb % workers == 0

    def add_own(self, o: int, workers: int, recs: np.ndarray, cuts: np.ndarray) -> None:
        """``add`` owner o's new states, records of ``rec`` grouped by bucket (owner o's
        bucket ``o * per + j`` at ``cuts[j]:cuts[j + 1]``, ``per = buckets // workers``), which
        the caller reuses once this returns, on its worker's thread, at the same time as the
        other owners' (``owned``)."""
        per = len(self.buckets) // workers
        n = self.buckets.append_own([(o * per + j, recs[cuts[j]:cuts[j + 1]])
                                     for j in range(per) if cuts[j + 1] > cuts[j]])
        with self.buckets.lock:
            self.count += n

    def finish(self, store: LevelStore, check: Check,
               check_rows: Callable[[np.ndarray], object] | None = None
               ) -> tuple[StoredLevel, Frontier]:
        """The level in fingerprint order: its parent records (appended to ``store``) and its
        states as the next frontier. ``check(rows, offset, found)`` sees each bucket's rows,
        sorted, at its offset in the level, in bucket order; with a pool and
        ``check_rows``, the buckets are read back, sorted and written by the pool's threads,
        a bucket each, ``found`` being what ``check_rows(rows)`` gave on that thread (else
        None)."""
        start = store.count
        row = self.rec["row"]
        front = Frontier(store.work, len(self.buckets), row.base, row.shape)
        nb, pool = len(self.buckets), self.pool
        if pool is None or check_rows is None or nb == 1:
            for b in range(nb):
                cols = _sorted(self.buckets.take(b, views=True))
                if cols["fp"].size:
                    check(cols["row"], store.count - start, None)
                store.append(cols)
                front.add(b, cols["row"])
        else:
            # a level in files has its frontier in files: each bucket's rows are written as
            # the frontier's bucket by the thread that sorted them, as soon as it has
            direct = self.buckets.files is not None
            if direct:
                front.buckets.to_files()

            def load(b: int) -> tuple[Columns, object, int]:
                cols = _sorted(self.buckets.take(b, keep=True, views=True))
                if not cols["fp"].size:
                    return cols, None, 0
                found = check_rows(cols["row"])
                return cols, found, front.write(b, cols["row"]) if direct else 0

            # a bucket a thread, as many ahead as there are threads: read back, sorted, checked
            # (and written as the frontier's bucket) there; the checks' findings taken and the
            # parent records appended here, in bucket order, while the threads load the next;
            # a level in memory has its rows added to the frontier by the threads, as many
            # buckets at a time
            ahead: dict[int, Future[tuple[Columns, object, int]]] = {}
            rows: list[tuple[int, np.ndarray]] = []
            try:
                for b in range(min(nb, pool.n)):
                    ahead[b] = pool.submit(load, b)
                for b in range(nb):
                    cols, found, wrote = ahead.pop(b).result()
                    if b + pool.n < nb:
                        ahead[b + pool.n] = pool.submit(load, b + pool.n)
                    self.buckets.release(b)
                    if cols["fp"].size:
                        check(cols["row"], store.count - start, found)
                    store.append(cols)
                    if direct:
                        front.written(b, cols["fp"].size, wrote)
                        continue
                    rows.append((b, cols["row"]))
                    if len(rows) == pool.n or b == nb - 1:
                        front.extend(rows, pool)
                        rows = []
            finally:  # (an error: the loads under way end before the buckets go)
                wait(ahead.values())
        self.buckets.drop()
        store.flush()
        return StoredLevel(store, start, store.count - start), front


Check = Callable[[np.ndarray, int, object], object]


def _sorted(cols: Columns) -> Columns:
    """A bucket's columns (maybe the strided fields of its records) in fingerprint order,
    each contiguous: a radix sort of the fingerprints, then every column gathered in one
    compiled pass (a bucket gathers the parts of every frontier bucket, each in the order
    its entries were found)."""
    fps = cols["fp"]
    if fps.size < 2 or np.all(fps[1:] > fps[:-1]):
        return {name: np.ascontiguousarray(col) for name, col in cols.items()}
    out = {name: np.empty(col.shape, col.dtype) for name, col in cols.items()}
    gather(radix_order(fps), fps, cols["row"], cols["par"], cols["act"], out["fp"],
           out["row"], out["par"], out["act"], 0, 0)
    return out


class Frontier:
    """A level's states, in fingerprint order, bucket after bucket."""

    def __init__(self, work: WorkDir, buckets: int, dtype: DTypeLike,
                 shape: tuple[int, ...]) -> None:
        self.rec = np.dtype([("row", dtype, shape)])
        self.dtype, self.shape = dtype, shape
        self.buckets = _Buckets(work, buckets, "front", self.rec)
        self.sizes = np.zeros(buckets, np.int64)

    @classmethod
    def of(cls, work: WorkDir, rows: np.ndarray) -> Frontier:
        """A frontier of ``rows`` (in fingerprint order), in one bucket."""
        self = cls(work, 1, rows.dtype, rows.shape[1:])
        self.add(0, rows)
        return self

    def add(self, b: int, rows: np.ndarray) -> None:
        self.buckets.append(b, {"row": rows})
        self.sizes[b] += rows.shape[0]

    def write(self, b: int, rows: np.ndarray) -> int:
        """Append ``rows`` to bucket b's file (the frontier in files), on any thread, one
        thread a bucket; the bytes written, which ``written`` counts."""
        return self.buckets._pack(b, {"row": rows})

    def written(self, b: int, n: int, nbytes: int) -> None:
        """``n`` rows, ``nbytes`` of records, written to bucket b's file by ``write``: counted
        here, on the thread that owns the frontier."""
        self.buckets.nbytes += n * self.rec.itemsize
        self.buckets.work.wrote(nbytes)
        self.sizes[b] += n

    def extend(self, parts: Sequence[tuple[int, np.ndarray]], pool: Pool | None = None) -> None:
        """``add`` each (bucket, rows) of ``parts``, buckets all different, written by the
        ``pool``'s threads."""
        self.buckets.extend([(b, {"row": rows}) for b, rows in parts], pool)
        for b, rows in parts:
            self.sizes[b] += rows.shape[0]

    def __len__(self) -> int:
        return int(self.sizes.sum())

    @property
    def nbytes(self) -> int:
        return self.buckets.nbytes

    def take(self, keep: bool = False,
             pool: Pool | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """(offset in the level, rows) of each bucket in turn; each bucket is let go of as the
        next is read, or with ``keep`` (a run that writes a checkpoint if it stops in the
        level) only by ``drop``, so that ``rows`` still reads them. With a ``pool``, the next
        bucket is read by one of its threads while this one is used."""
        off, nb = 0, len(self.buckets)
        if pool is None or nb == 1:
            for b in range(nb):
                rows = self.buckets.take(b, keep)["row"]
                yield off, rows
                off += rows.shape[0]
            return
        nxt = pool.submit(self.buckets.take, 0, True)
        try:
            for b in range(nb):
                rows = nxt.result()["row"]
                if b + 1 < nb:
                    nxt = pool.submit(self.buckets.take, b + 1, True)
                if not keep:
                    self.buckets.release(b)
                yield off, rows
                off += rows.shape[0]
        finally:  # (a run stopped in the level: the read under way ends first)
            wait([nxt])

    def rows(self) -> np.ndarray:
        """Every row, end to end, without taking them (for a checkpoint)."""
        if self.buckets.files is None:
            parts = [c["row"] for bucket in self.buckets.mem for c in bucket]
        else:
            self.buckets.flush()
            parts = [np.fromfile(p, self.rec)["row"] for p in self.buckets.files if p.exists()]
        if not parts:
            return np.empty((0,) + self.shape, self.dtype)
        return np.concatenate(parts)

    def drop(self) -> None:
        self.buckets.drop()


class LevelStore:
    """Every level's parent records, appended level after level to three files of the work
    folder (fingerprints, parent positions, actions), open for the whole run: a run of any
    depth holds three descriptors. A level is read back one entry at a time (a trace) or
    whole (a checkpoint)."""

    def __init__(self, work: WorkDir, rec: np.dtype) -> None:
        self.work = work
        self.dtypes = {name: rec[name] for name in ("fp", "par", "act")}
        self.files = {name: open(work.new_file(f"levels-{name}"), "w+b")
                      for name in self.dtypes}
        self.count = 0  # entries written, every level

    def append(self, cols: Columns) -> None:
        for name, f in self.files.items():
            f.seek(0, os.SEEK_END)
            with writing(self.work.path):  # (``tofile`` would say no more than a short write)
                f.write(np.ascontiguousarray(cols[name]).view(np.uint8).data)
            self.work.wrote(cols[name].nbytes)
        self.count += cols["fp"].size

    def flush(self) -> None:
        with writing(self.work.path):
            for f in self.files.values():
                f.flush()

    def read(self, name: str, start: int, count: int) -> np.ndarray:
        """Entries ``start .. start + count - 1`` of column ``name``. A file shorter than the
        entries written to it (the disk, or something else, cut it) is an error naming it, not
        a short array: the entries a trace walks back through must be the ones written."""
        dt = self.dtypes[name]
        f = self.files[name]
        want = count * dt.itemsize
        data = os.pread(f.fileno(), want, start * dt.itemsize)
        if len(data) != want:
            raise EnvironmentFault(f"the work folder's level file {f.name} was cut short: "
                                   f"{len(data):,} bytes where {want:,} were written at offset "
                                   f"{start * dt.itemsize:,}")
        rows: np.ndarray = np.frombuffer(data, dt, count).copy()
        return rows

    def close(self) -> None:
        for f in self.files.values():
            f.close()


class StoredLevel:
    """A level whose parent records are in a ``LevelStore``, from entry ``start`` on."""

    __slots__ = ("store", "start", "count")

    def __init__(self, store: LevelStore, start: int, count: int) -> None:
        self.store, self.start, self.count = store, start, count

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        return 0  # on disk

    def entry(self, i: int) -> tuple[int, int, int]:
        s = self.store
        return (int(s.read("fp", self.start + i, 1)[0]), int(s.read("par", self.start + i, 1)[0]),
                int(s.read("act", self.start + i, 1)[0]))

    @property
    def fps(self) -> np.ndarray:
        return self.store.read("fp", self.start, self.count)

    @property
    def parents(self) -> np.ndarray:
        return self.store.read("par", self.start, self.count)

    @property
    def actions(self) -> np.ndarray:
        return self.store.read("act", self.start, self.count)
