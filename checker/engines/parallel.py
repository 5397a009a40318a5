"""One BFS level expanded by several workers (``--workers N``): threads that run the compiled
kernel without the GIL, each owning a slice of the visited set.

The visited set is split into N partitions by the high bits of the fingerprint, the split of
``partition.owners`` (monotone: partition o holds a contiguous range of fingerprints). Each
chunk of the frontier (``round_rows``: ``expand.CHUNK`` rows up to two workers, half of that a
worker beyond, so Ctrl-C and the limits are looked at about as often as with one worker) goes
through two phases:

1. generate: worker w expands the w-th slice of the chunk with the kernel's ``expand_split``:
   every successor is fingerprinted and looked up in its owner's table (a lookup only, while
   the owners insert the previous chunk: ``fingerprint.table_split_batch`` says why that is
   safe); those not found go to the slice's buffer for that owner (transition predicates and
   domain errors into the slice's own arrays);
2. insert: worker o takes its buffer of every slice, in slice order, and inserts them into its
   table; the new ones are appended to o's share of the level.

Generation only reads the tables, so the next chunk is generated (into a second set of
buffers) while this one is inserted: a thread that is done with its part of one phase goes on
with the other.

Every occurrence of a fingerprint goes to one owner, which sees them in frontier order (chunks
in order, slices in order, rows in order, actions in instance order): the occurrence it keeps
is the first one, the one a single worker keeps, so each state gets the same canonical parent,
the least (parent fingerprint, action). At the end of an expansion each owner sorts its share
by fingerprint; owners are fingerprint ranges, so their shares laid end to end are the states
in fingerprint order, exactly as one worker would have them. Or, when the next level's buckets
nest in the owners (``Deliver``), each owner groups its share by those buckets and appends it
to its own, on its thread: the level's end sorts each bucket. Predicate hits and domain errors
are merged chunk by chunk, taking the first slice that has one.

A chunk is inserted in full or not at all: Ctrl-C and SIGTERM are held back (blocked, so the
operating system keeps them pending) while a chunk is under way and taken at its end, and
every allocation (buffers, table growth) comes before the first insert of a chunk, so running
out of memory leaves the tables as they were. Either way the search stops consistent at a chunk
boundary: everything up to ``next_row`` is in the tables and in the level; a chunk generated
but not inserted is dropped. (One growth can come during the inserts: when a chunk has more
successors for an owner than ``END_ROOM`` and they do run into the end of its table. Running
out of memory there leaves part of that chunk in the table and the level, each state with its
canonical parent; the run stops as incomplete.)
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import DTypeLike

from hwcheck.checker.engines import expand as _expand
from hwcheck.checker.engines.fpsort import gather, group_owned
from hwcheck.checker.engines.partition import owners
from hwcheck.checker.engines.phases import Phases
from hwcheck.checker.engines.pool import Pool, results
from hwcheck.checker.engines.spill import record_dtype
from hwcheck.checker.engines.visited import VisitedTable
from hwcheck.checker.search.signals import signals_held
from hwcheck.checker.semantics.fingerprint import (
    PREFETCH,
    TAIL,
    table_insert,
    table_prefetch,
    table_refs,
    table_room,
)
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.semantics.signatures import CheckArgs, SplitArgs
from hwcheck.spec.lang import Spec

BUFFER_BYTES = 16 << 20
# Free slots asked for at a table's end before a chunk's inserts: as many as the inserts, up to
# half the table's TAIL (a chunk may have more; the insert then grows the table if a run
# really reaches the end, which needs its inserts to land in the last run)
END_ROOM = TAIL // 2


SMALL_SPACE_BITS = 20  # a spec whose declared domains allow fewer than 2**20 states


def default_workers(spec: Spec | None = None) -> int:
    """The cores this process may run on; one for a spec whose declared domains allow fewer
    than 2**20 states (``space_bits``): its whole run takes milliseconds, and a second worker
    would only add the compile of another expansion on its first run (seconds)."""
    if spec is not None and space_bits(spec) < SMALL_SPACE_BITS:
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def space_bits(spec: Spec) -> float:
    """log2 of the number of states the variables' declared domains allow (an upper bound of
    the reachable states)."""
    return sum(v.size * math.log2(v.hi - v.lo + 1) for v in spec.variables)


@njit(cache=True, nogil=True)
def _insert_owned(fps: np.ndarray, rows: np.ndarray, par: np.ndarray, act: np.ndarray,
                  counts: np.ndarray, o: int, s: int, start: int, table: np.ndarray,
                  filled: int, out_rows: np.ndarray, out_par: np.ndarray, out_act: np.ndarray,
                  out_fps: np.ndarray, w: int) -> tuple[int, int, int, int]:
    """Insert owner o's successors of every slice (``fps[s', o, :counts[s', o]]`` and the
    rest alike, slices in order), from entry ``start`` of slice ``s`` on, into its ``table``;
    append the new ones to ``out_*`` from position ``w``. One call for all the slices: a
    worker takes the GIL once an owner, not once a slice. The caller made room under the fill
    limit and in ``out_*``; the table's end is watched here: it stops before an insert that
    could reach the last slot. Returns (slice, entry) where it stopped (``(slices, 0)`` when
    done), the entries written and the table fill."""
    cap = table.size - TAIL
    stride = rows.shape[3]
    for sl in range(s, fps.shape[0]):
        n = counts[sl, o]
        k0 = start if sl == s else 0
        f = fps[sl, o]
        for k in range(k0, min(n, k0 + PREFETCH)):
            table_prefetch(table, cap, f[k])
        for k in range(k0, n):
            if k + PREFETCH < n:
                table_prefetch(table, cap, f[k + PREFETCH])
            if table[table.size - 2] != np.uint64(0):
                return sl, k, w, filled
            fp = f[k]
            if table_insert(table, cap, fp):
                filled += 1
                for q in range(stride):
                    out_rows[w, q] = rows[sl, o, k, q]
                out_par[w] = par[sl, o, k]
                out_act[w] = act[sl, o, k]
                out_fps[w] = fp
                w += 1
    return fps.shape[0], 0, w, filled


class PartitionedTable:
    """The visited fingerprints split into ``parts`` tables by ``partition.owners``; partition o
    is filled and grown by worker o alone."""

    def __init__(self, parts: int, capacity: int = 1 << 16):
        self.parts = [VisitedTable(max(16, capacity // parts)) for _ in range(parts)]

    @classmethod
    def of(cls, parts: int, fps: np.ndarray) -> PartitionedTable:
        """A table of ``parts`` partitions holding the distinct fingerprints ``fps``."""
        own = owners(fps, parts)
        self = cls.__new__(cls)
        self.parts = [VisitedTable.of(fps[own == o]) for o in range(parts)]
        return self

    def fingerprints(self) -> np.ndarray:
        return np.concatenate([t.fingerprints() for t in self.parts])

    @property
    def filled(self) -> int:
        return sum(t.filled for t in self.parts)

    @property
    def nbytes(self) -> int:
        return sum(t.nbytes for t in self.parts)

    def add(self, fp: int) -> bool:
        return self.parts[int(owners(np.array([fp], np.uint64), len(self.parts))[0])].add(fp)

    def __len__(self) -> int:
        return self.filled


class _Buffers:
    """Rows with their parent position, action and fingerprint; grown by doubling."""

    def __init__(self, cap: int, stride: int, dtype: DTypeLike,
                 act_dtype: DTypeLike) -> None:
        self.rows = np.empty((cap, stride), dtype)
        self.par = np.empty(cap, np.int32)
        self.act = np.empty(cap, act_dtype)
        self.fps = np.empty(cap, np.uint64)
        self.n = 0

    @property
    def cap(self) -> int:
        return self.fps.size

    def reserve(self, more: int) -> None:
        need = self.n + more
        if need <= self.cap:
            return
        cap = max(need, 2 * self.cap)
        for name in ("rows", "par", "act", "fps"):
            old = getattr(self, name)
            new = np.empty((cap,) + old.shape[1:], old.dtype)
            new[:self.n] = old[:self.n]
            setattr(self, name, new)


@dataclass
class Expanded:
    """What a level's expansion found: the new states in fingerprint order."""

    rows: np.ndarray
    fps: np.ndarray
    parents: np.ndarray  # int32: the frontier row of each
    acts: np.ndarray
    generated: int
    next_row: int  # the first frontier row not expanded (the end unless stopped early)
    interrupted: BaseException | None = None


class _RoundBuffers:
    """Every slice's successors for every owner: slice s's for owner o in [s, o] of each array
    (``[s]`` is the shape ``expand_split`` takes for any number of owners): rows [slices,
    owners, cap, stride] with parent position, action and fingerprint. One capacity for all
    (the fingerprint spreads a slice's successors evenly over the owners), doubled by the main
    thread between two generations when a slice is short."""

    def __init__(self, slices: int, owners_: int, cap: int, stride: int, dtype: DTypeLike,
                 act_dtype: DTypeLike) -> None:
        self.rows = np.empty((slices, owners_, cap, stride), dtype)
        self.par = np.empty((slices, owners_, cap), np.int32)
        self.act = np.empty((slices, owners_, cap), act_dtype)
        self.fps = np.empty((slices, owners_, cap), np.uint64)
        self.words = self.rows.view(np.uint64)  # rows as 64-bit words (the kernels' view)

    @property
    def cap(self) -> int:
        return self.fps.shape[2]

    def grow(self, used: np.ndarray) -> None:
        """Double the capacity, keeping each slice's first ``used[s, o]`` entries for owner o."""
        cap = 2 * self.cap
        for name in ("rows", "par", "act", "fps"):
            old = getattr(self, name)
            new = np.empty(old.shape[:2] + (cap,) + old.shape[3:], old.dtype)
            for (sl, o), m in np.ndenumerate(used):
                new[sl, o, :m] = old[sl, o, :m]
            setattr(self, name, new)
        self.words = self.rows.view(np.uint64)


class _Round:
    """The generation of one chunk: its buffers for every slice and owner, the hits, and how
    many entries each owner's buffer of each slice holds."""

    def __init__(self, kernel: Kernel, slices: int, owners_: int, per: int):
        k = kernel
        self.bufs = _RoundBuffers(slices, owners_, per, k.stride, k.dtype, k.act_dtype)
        self.counts = np.zeros((slices, owners_), np.int64)  # [slice, owner]
        self.tables: list[np.ndarray] = []  # the owners' tables the generation reads
        self.refs = np.empty((0, 2), np.int64)  # those tables by address
        # per slice: (tp_row, tp_inst, dom_row, dom_inst, err)
        self.hits: list[tuple[np.ndarray, ...]] = []
        self.covs: list[np.ndarray] = []  # per slice: the states enabling each instance
        self.futures: list[Future[tuple[int, int]]] = []
        self.cuts: list[int] = []  # slice s is rows cuts[s] .. cuts[s + 1] - 1
        self.at: list[int] = []  # per slice: the first row not yet generated
        self.generated = 0
        self.lo = self.hi = 0


class Workers(Pool):
    """N threads that expand levels together (the level sources' ``Pool``, with the
    expansion's buffers); close() when done. Two rounds of buffers: one chunk is inserted from
    one while the next is generated into the other."""

    def __init__(self, kernel: Kernel, workers: int, phases: Phases | None = None):
        super().__init__(workers, "hwcheck-worker")
        self.kernel = kernel
        self.phases = phases or Phases()  # where a level's time goes (off unless asked)
        self.slices = workers  # more slices than workers measured no faster
        k = kernel
        # room for 8 successors a row (Kafka makes 4.7, and fewer are new), at most 16 MiB a
        # slice to start with; a buffer that needs more grows
        row_bytes = k.stride * np.dtype(k.dtype).itemsize + 13
        rows = round_rows(_expand.CHUNK, workers) // self.slices + 1
        per = max(2 * k.mod.ROOM, min(rows * min(k.ninst, 8), BUFFER_BYTES // row_bytes)
                  // workers)
        self.rounds = [_Round(k, self.slices, workers, per) for _ in range(2)]
        # kept from one expansion to the next, so that their pages are touched once a run and
        # not once a frontier bucket (16 threads faulting fresh pages in at once wait for each
        # other): each owner's share of the level, and its sorted records (``deliver``)
        self.rec = record_dtype(k.stride, k.dtype, k.act_dtype)
        self.shares: list[_Buffers] = []
        self.records: list[np.ndarray] = [np.empty(0, self.rec) for _ in range(workers)]
        self._warm()

    def _warm(self) -> None:
        """Compile (or load from numba's cache) the helpers for this kernel's dtypes."""
        r, t = self.rounds[0], VisitedTable(16)
        b = r.bufs
        _insert_owned(b.fps, b.words, b.par, b.act, np.zeros_like(r.counts), 0, 0, 0, t.table,
                      0, b.words[0, 0], b.par[0, 0], b.act[0, 0], b.fps[0, 0], 0)
        s = _Buffers(1, self.kernel.stride, self.kernel.dtype, self.kernel.act_dtype)
        gather(np.argsort(s.fps[:0]), s.fps, s.rows, s.par, s.act, s.fps, s.rows, s.par, s.act,
               0, 0)
        recs = self.records[0]
        group_owned(s.fps, s.rows, s.par, s.act, 0, 1, 0, 0, recs["fp"], recs["row"],
                    recs["par"], recs["act"], np.zeros(2, np.int64))

    def expand(self, front: np.ndarray, table: PartitionedTable, tp_active: np.ndarray,
               tp_row: np.ndarray, tp_inst: np.ndarray, dom_row: np.ndarray,
               dom_inst: np.ndarray, on_chunk: Callable[[int, int], bool] | None = None,
               chunk: int | None = None,
               cov: np.ndarray | None = None, deliver: Deliver | None = None) -> Expanded:
        """Expand every row of ``front`` (or until ``on_chunk(next_row, written)`` returns
        True, Ctrl-C, or out of memory), as ``expand.expand`` does with one worker, and sort
        the new states by fingerprint. ``chunk``: frontier rows per round (``expand.CHUNK``).
        ``deliver``: each owner's new states handed over on its worker's thread, at the same
        time as the others', grouped by the next level's buckets (then the result holds no
        rows)."""
        k, mod, nw, ns, ph = self.kernel, self.kernel.mod, self.n, self.slices, self.phases
        chunk = round_rows(chunk or _expand.CHUNK, nw)
        n = front.shape[0]
        shares = self._shares(max(1024, 2 * n // nw))
        for r in self.rounds:
            r.hits = [(tp_row.copy(), tp_inst.copy(), dom_row.copy(), dom_inst.copy(),
                       np.zeros(1, np.int64)) for _ in range(ns)]
            # per slice: the states enabling each instance (summed into ``cov`` at the end)
            r.covs = [np.zeros(max(k.ninst, 1), np.int64) for _ in range(ns)]
        total, lo, interrupted = 0, 0, None

        def generate(r: _Round, s: int) -> tuple[int, int]:
            """Slice s of round r from its first row not yet generated, until its end or until
            a block may not fit in its buffers (the main thread then grows them, and this
            goes on). Returns (the first row not generated, successors generated)."""
            bufs, (tr, ti, dr, di, err) = r.bufs, r.hits[s]
            at, i, b = r.counts[s], r.at[s], r.cuts[s + 1]
            if bufs.cap - int(at.max()) < mod.ROOM:
                return i, 0
            i, g = mod.expand_split(*SplitArgs(
                front=front, lo=i, hi=b, tables=r.refs, o_rows=bufs.words[s],
                o_par=bufs.par[s], o_act=bufs.act[s], o_fps=bufs.fps[s], o_n=at,
                tp_active=tp_active, tp_row=tr, tp_inst=ti, err=err, dom_row=dr,
                dom_inst=di, cov=r.covs[s]))
            return i, g

        def start(r: _Round, a: int) -> _Round:
            """Start generating the chunk from row a into round r."""
            r.lo, r.hi = a, min(n, a + chunk)
            for tr, ti, dr, di, _ in r.hits:  # what is known: predicates already hit are skipped
                tr[:], ti[:], dr[:], di[:] = tp_row, tp_inst, dom_row, dom_inst
            r.cuts = [r.lo + (r.hi - r.lo) * s // ns for s in range(ns + 1)]
            r.at = r.cuts[:-1]
            r.counts[:] = 0
            r.generated = 0
            # the tables as they are now (an insert that grows one leaves this array alive,
            # and a lookup in it can only miss: ``table_split_batch``), held until it is done
            r.tables = [t.table for t in table.parts]
            r.refs = table_refs(r.tables)
            r.futures = [self.submit(generating, r, s) for s in range(ns)]
            return r

        def generated(r: _Round) -> int:
            """Wait for round r's generation; a slice that stopped short of its end for want
            of room has its buffers grown (all slices', here, while none runs) and goes on."""
            while True:
                done = results(r.futures)
                for s, (i, g) in enumerate(done):
                    r.at[s] = i
                    r.generated += g
                short = [s for s in range(ns) if r.at[s] < r.cuts[s + 1]]
                if not short:
                    return r.generated
                with ph.span("expand: grow"):
                    while r.bufs.cap - int(r.counts.max()) < mod.ROOM:  # a block may not fit
                        r.bufs.grow(r.counts)
                r.futures = [self.submit(generating, r, s) for s in short]

        def reserve(o: int, more: int) -> None:
            table.parts[o].make_room(more, min(more, END_ROOM))
            shares[o].reserve(more)

        def insert(r: _Round, o: int) -> None:
            t, sh, b = table.parts[o], shares[o], r.bufs
            sl, k = 0, 0
            while True:
                sl, k, sh.n, t.filled = _insert_owned(
                    b.fps, b.words, b.par, b.act, r.counts, o, sl, k, t.table, t.filled,
                    sh.rows.view(np.uint64), sh.par, sh.act, sh.fps, sh.n)
                if sl == ns:
                    return
                t.grow()  # the last run reached the table's end (END_ROOM was not enough)

        generating = ph.task("expand: generate", generate)
        inserting_ = ph.task("expand: insert", insert)
        cur = None
        try:
            with signals_held():
                cur = start(self.rounds[0], 0) if n else None
            while cur is not None:
                with signals_held():  # Ctrl-C waits for the end of the chunk
                    with ph.span("expand: wait for generation"):
                        gen_now = generated(cur)
                    more = cur.counts.sum(axis=0)
                    grow = [(o, int(more[o])) for o in range(nw)
                            if table.parts[o].filled + more[o] > table.parts[o].max_fill
                            or not table_room(table.parts[o].table, min(int(more[o]), END_ROOM))
                            or shares[o].n + more[o] > shares[o].cap]
                    if grow:
                        with ph.span("expand: grow"):
                            self.map(ph.task("expand: grow", reserve), grow)
                    inserting = [self.submit(inserting_, cur, o) for o in range(nw)]
                    nxt = None
                    if cur.hi < n:  # the next chunk, while this one is inserted
                        nxt = start(self.rounds[self.rounds[0] is cur], cur.hi)
                    with ph.span("expand: wait for inserts"):
                        results(inserting)  # nothing allocates there
                    lo, total = cur.hi, total + gen_now
                    _first_hits(tp_row, tp_inst, [h[:2] for h in cur.hits])
                    _first_hits(dom_row, dom_inst, [h[2:4] for h in cur.hits])
                    cur = nxt
                if on_chunk is not None and lo < n and on_chunk(lo, sum(s.n for s in shares)):
                    break
        except (KeyboardInterrupt, MemoryError) as e:  # everything up to row lo is consistent
            interrupted = e
        with signals_held():
            if cur is not None:  # a chunk generated but not inserted: dropped
                wait(cur.futures)
            if cov is not None:
                for r in self.rounds:
                    for c in r.covs:
                        cov += c
            with ph.span("expand: sort/gather"):
                return self._sorted(shares, total, lo, interrupted, deliver)

    def check_states(self, rows: np.ndarray, active: np.ndarray, hits: np.ndarray,
                     err: np.ndarray, dom_row: np.ndarray) -> None:
        """The kernel's ``check_states`` over ``rows``, a slice a worker: each predicate's
        first hit and each domain error's first row, as one call over all of them gives."""
        mod, n = self.kernel.mod, rows.shape[0]
        cuts = [n * s // self.n for s in range(self.n + 1)]
        parts = [(hits.copy(), err.copy(), dom_row.copy()) for _ in range(self.n)]
        self.map(self.phases.task("level end: checks", lambda s: mod.check_states(
                      *CheckArgs(rows=rows[cuts[s]:cuts[s + 1]], n=cuts[s + 1] - cuts[s],
                                 active=active, hits=parts[s][0], err=parts[s][1],
                                 dom_row=parts[s][2]))),
                  [(s,) for s in range(self.n)])
        for out, j in ((hits, 0), (dom_row, 2)):
            for c in np.flatnonzero(out < 0):
                for s in range(self.n):
                    if parts[s][j][c] >= 0:
                        out[c] = cuts[s] + parts[s][j][c]
                        break

    def _shares(self, cap: int) -> list[_Buffers]:
        """Each owner's share of the level, emptied, with room for ``cap`` entries."""
        k = self.kernel
        if not self.shares:
            self.shares = [_Buffers(cap, k.stride, k.dtype, k.act_dtype) for _ in range(self.n)]
        for s in self.shares:
            s.n = 0
            s.reserve(cap)
        return self.shares

    def _records(self, o: int, n: int) -> np.ndarray:
        """Owner o's records buffer, with room for ``n``: its first ``n``."""
        if self.records[o].size < n:
            self.records[o] = np.empty(max(n, 2 * self.records[o].size), self.rec)
        return self.records[o][:n]

    def _sorted(self, shares: list[_Buffers], generated: int, lo: int,
                interrupted: BaseException | None, deliver: Deliver | None = None) -> Expanded:
        k = self.kernel
        if deliver is not None:
            per = deliver.buckets // self.n

            def hand_over(o: int) -> None:
                s = shares[o]
                recs = self._records(o, s.n)
                cuts = np.empty(per + 1, np.int64)
                group_owned(s.fps, s.rows, s.par, s.act, s.n, deliver.buckets, o * per,
                            deliver.par_off, recs["fp"], recs["row"], recs["par"], recs["act"],
                            cuts)
                deliver.take(o, recs, cuts)

            self.map(self.phases.task("expand: group/spill", hand_over),
                      [(o,) for o in range(self.n)])
            none = _Buffers(0, k.stride, k.dtype, k.act_dtype)
            return Expanded(none.rows, none.fps, none.par, none.act, generated, lo, interrupted)
        total = sum(s.n for s in shares)
        out = _Buffers(total, k.stride, k.dtype, k.act_dtype)
        offs = np.cumsum([0] + [s.n for s in shares])

        def sort(o: int) -> None:
            s = shares[o]
            order = np.argsort(s.fps[:s.n])  # numpy's sort runs without the GIL; keys are unique
            gather(order, s.fps, s.rows, s.par, s.act, out.fps, out.rows, out.par, out.act,
                    int(offs[o]), 0)

        self.map(self.phases.task("expand: sort/gather", sort), [(o,) for o in range(self.n)])
        return Expanded(out.rows, out.fps, out.par, out.act, generated, lo, interrupted)


@dataclass
class Deliver:
    """Where each owner's new states go, on its worker's thread, at the same time as the
    others': ``take(o, records, cuts)``, the records (``spill.record_dtype``, ``par_off`` added
    to their parents) grouped by the next level's ``buckets`` (a multiple of the workers: owner
    o's are buckets ``o * per`` .. ``(o + 1) * per - 1``, ``per = buckets // workers``; bucket
    ``o * per + j`` is ``records[cuts[j]:cuts[j + 1]]``, in the order the owner found them).
    The records are the owner's buffer, reused by its next expansion: valid until ``take``
    returns."""
    buckets: int
    par_off: int
    take: Callable[[int, np.ndarray, np.ndarray], None]


def round_rows(chunk: int, workers: int) -> int:
    """Frontier rows a round of ``workers`` takes, ``chunk`` being one worker's chunk: the
    chunk itself up to two workers, then half a chunk a worker, so that a slice stays long
    enough (16,384 rows of ``expand.CHUNK``) to outweigh what the main thread does once a round
    whatever its length (2N tasks, two barriers, N tables' room, the first hits' merge)."""
    return max(chunk, chunk * workers // 2)


def _first_hits(row: np.ndarray, inst: np.ndarray,
                per_worker: list[tuple[np.ndarray, ...]]) -> None:
    """Merge the workers' first hits (row, instance) into ``row``/``inst``: where none was
    known, the first worker in slice order that has one."""
    for j in np.flatnonzero(row < 0):
        for wr, wi in per_worker:
            if wr[j] >= 0:
                row[j], inst[j] = wr[j], wi[j]
                break

