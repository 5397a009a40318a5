"""What the state graph's search keeps between kernel calls (``explore.py``): numpy's page
size while it runs, the level's rows on 2 MiB pages or in the work folder (``WorkRows``), the
workers' candidate buffers and the runs of rows they share, and the small compiled loops over
them.

The work folder's files and the growing columns are every level source's
(``engines/workdir.py``); what stays the graph's is the frontier's layout. The local engine
reads a level a bucket at a time, its states bucketed by fingerprint (``spill.py``); the
graph's kernels address the frontier by row (a state's id is its place in its level's
fingerprint order, a transition names an id, the gather writes each new state at its place),
so a level here is one file mapped and written in place, not buckets."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from numba import njit

from hwcheck.checker.engines.workdir import WorkDir, WorkFile
from hwcheck.checker.semantics.fingerprint import _prefetch as prefetch  # LLVM's prefetch
from hwcheck.checker.semantics.kernel import Kernel


@contextmanager
def base_pages() -> Iterator[None]:
    """numpy's new arrays on 4 KiB pages while inside. numpy asks Linux for 2 MiB pages for
    every large array; where the kernel defragments on demand for such arrays (transparent
    huge pages in ``madvise`` mode, the default), each fresh array waits for memory to be
    compacted. The state graph allocates level buffers and the transitions' arrays, each
    touched once and in order: on the 12.5-million-state graph of ``check --recoverable``,
    2.5 s of compaction against nothing gained by larger pages (docs/performance.md). What is
    read at random keeps 2 MiB pages: the id table (a reserved range, as the engines' tables)
    and the rows gathered into fingerprint order (``rows_on_huge_pages``)."""
    with numpy_pages(huge=False):
        yield


@contextmanager
def numpy_pages(huge: bool) -> Iterator[None]:
    """numpy's new arrays on 2 MiB pages (``huge``) or 4 KiB pages while inside."""
    core = getattr(np, "_core", None)
    multiarray = getattr(core, "multiarray", None)
    get = getattr(multiarray, "_get_madvise_hugepage", None)
    set_ = getattr(multiarray, "_set_madvise_hugepage", None)
    if get is None or set_ is None:  # another numpy: its default stays
        yield
        return
    before = get()
    set_(huge)
    try:
        yield
    finally:
        set_(before)


def rows_on_huge_pages(n: int, kernel: Kernel) -> np.ndarray:
    """Room for ``n`` rows on 2 MiB pages: a level's rows are gathered at random into
    fingerprint order (4 KiB pages made that gather 2.7x slower: a page-table walk a row)."""
    with numpy_pages(huge=True):
        return np.empty((n, kernel.stride), kernel.dtype)


class WorkRows(WorkFile):
    """Room for ``n`` rows of a level in the work folder (``WorkFile``), addressed by row."""

    def __init__(self, work: WorkDir, stem: str, n: int, kernel: Kernel):
        self.row_bytes = kernel.stride * np.dtype(kernel.dtype).itemsize
        super().__init__(work, stem, n * self.row_bytes)
        try:
            self.allocate(0, self.nbytes)
        except BaseException:
            self.close()
            raise
        self.rows = self.array(kernel.dtype, n * kernel.stride).reshape(n, kernel.stride)

    def drop_rows(self, lo: int, hi: int) -> None:
        """Let go of the whole pages of rows lo..hi-1 (read again from the file if asked)."""
        self.drop(lo * self.row_bytes, hi * self.row_bytes)


class SharedRuns:
    """A level's runs of rows shared by the threads that expand them: the next run to claim,
    the free candidate buffers, the expanded runs waiting for their ids."""

    def __init__(self, runs: list[tuple[int, int]], batches: list[CandidateBuffer]):
        self.runs = runs
        self.free = list(batches)
        self.next = 0
        self.ready: dict[int, CandidateBuffer] = {}
        self.halted = False
        self.error: BaseException | None = None
        self.chore: Chore | None = None  # work for a thread that would wait for a buffer
        self.cond = threading.Condition()

    def claim(self, wait: bool) -> tuple[int, CandidateBuffer] | None:
        """The next run and a buffer for it; None when none is left (or the level stopped),
        or, without ``wait``, when none can be claimed now."""
        with self.cond:
            while not self.halted and self.next < len(self.runs):
                if self.free:
                    self.next += 1
                    return self.next - 1, self.free.pop()
                if not wait:
                    return None
                chore = self.chore
                if chore is not None and chore.left():
                    self.cond.release()  # the chore's pieces are done outside the lock
                    try:
                        chore.work()
                    finally:
                        self.cond.acquire()
                    continue
                self.cond.wait()
            return None

    def share(self, chore: Chore) -> None:
        """Do ``chore`` here, with the help of every thread that would otherwise wait for a
        free buffer (those expanding a run go on with it), and return once all of it is
        done."""
        with self.cond:
            self.chore = chore
            self.cond.notify_all()
        try:
            chore.work()
            chore.wait()
        finally:
            with self.cond:
                self.chore = None

    def put(self, r: int, b: CandidateBuffer) -> None:
        with self.cond:
            self.ready[r] = b
            self.cond.notify_all()

    def take(self, r: int) -> CandidateBuffer | None:
        with self.cond:
            if self.error is not None:
                raise self.error
            return self.ready.pop(r, None)

    def wait(self, r: int) -> None:
        """Until run ``r`` is ready (a pool thread claimed it) or a thread failed."""
        with self.cond:
            while r not in self.ready and self.error is None:
                self.cond.wait()

    def release(self, b: CandidateBuffer) -> None:
        with self.cond:
            self.free.append(b)
            self.cond.notify_all()

    def fail(self, e: BaseException) -> None:
        with self.cond:
            self.error = e
            self.cond.notify_all()

    def halt(self) -> None:
        with self.cond:
            self.halted = True
            self.cond.notify_all()


class Chore:
    """Work cut into pieces that any thread may take: ``run(lo, hi)`` (without the GIL, so
    threads share it) over the pieces of ``piece`` items of 0..n-1."""

    def __init__(self, run: Callable[[int, int], Any], n: int, piece: int):
        self.run = run
        self.cuts = list(range(0, n, piece)) + [n]
        self.next = 0
        self.done = 0
        self.error: BaseException | None = None
        self.cond = threading.Condition()

    def left(self) -> bool:
        return self.next < len(self.cuts) - 1

    def work(self) -> None:
        """Take pieces until none is left."""
        while True:
            with self.cond:
                if self.next >= len(self.cuts) - 1:
                    return
                i = self.next
                self.next += 1
            try:
                self.run(self.cuts[i], self.cuts[i + 1])
            except BaseException as e:  # noqa: BLE001 - raised by ``wait``
                with self.cond:
                    self.error = self.error or e
            finally:
                with self.cond:
                    self.done += 1
                    self.cond.notify_all()

    def wait(self) -> None:
        """Until every piece is done (raises what a piece raised)."""
        with self.cond:
            while self.done < len(self.cuts) - 1:
                self.cond.wait()
            if self.error is not None:
                raise self.error


@njit(cache=True, nogil=True)
def touch(a: np.ndarray, lo: int, hi: int) -> None:  # pragma: no cover - compiled
    """Write a zero to every 4 KiB page of a[lo:hi] (memory never written: its zeros), so
    that the system backs those pages now."""
    for i in range(lo, hi, 4096 // a.itemsize):
        a[i] = 0


class CandidateBuffer:
    """A worker's candidates: the successors of one run of frontier rows, before their ids
    (``expand_candidates``'s buffers), and the run's own first hits."""

    def __init__(self, k: Kernel, cap: int, want_tp: bool):
        words = k.mod.WORDS
        self.cw = np.empty((cap, words), np.uint64)
        self.cfp = np.empty(cap, np.uint64)
        self.cpar = np.empty(cap, np.int64)
        self.cact = np.empty(cap, k.act_dtype)
        self.eact = np.empty(cap, k.act_dtype)
        self.enabled = np.zeros(max(k.ninst, 1), np.int64)  # the candidates by instance
        self.eflags = np.zeros(cap if want_tp else 1, np.uint64)
        self.err = np.zeros(1, np.int64)
        nt = max(len(k.props.transition), 1)  # as the source's own tp_row
        self.tp_row, self.tp_inst = np.full(nt, -1, np.int64), np.full(nt, -1, np.int64)
        _, self.dom_row, self.dom_inst = k.error_arrays()
        self.lo = self.hi = self.q = self.refused = 0
        self.hits = False  # a first hit of a transition predicate or a domain error


@njit(cache=True, nogil=True)
def count_values(a: np.ndarray, n: int, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """out[v] += how many of a[:n] are v (numpy's bincount widens ``a`` to 64 bits first)."""
    for i in range(n):
        out[a[i]] += 1


@njit(cache=True, nogil=True)
def has_bit(flags: np.ndarray, bit: np.uint64,
             out: np.ndarray) -> None:  # pragma: no cover - compiled
    """out[i]: whether ``flags[i]`` has ``bit``."""
    for i in range(flags.size):
        out[i] = (flags[i] & bit) != 0


@njit(cache=True, nogil=True)
def places(order: np.ndarray, rank: np.ndarray) -> None:  # pragma: no cover - compiled
    """rank[order[j]] = j: where each entry goes."""
    for j in range(order.size):
        rank[order[j]] = j


GATHER_AHEAD = 16  # places ahead whose sources are loaded while one is gathered


@njit(cache=True, nogil=True, inline="always")
def _load_ahead(flat: np.ndarray, w: int, src_fps: np.ndarray, src_par: np.ndarray,
                src_act: np.ndarray, i: int) -> None:  # pragma: no cover - compiled
    """Start loading entry i of the sources: its row (first and last word: a row may span two
    cache lines), fingerprint, parent and action."""
    prefetch(flat, i * w)  # type: ignore[call-arg]  # a numba intrinsic: numba gives its typing context
    prefetch(flat, i * w + w - 1)
    prefetch(src_fps, i)
    prefetch(src_par, i)
    prefetch(src_act, i)


@njit(cache=True, nogil=True)
def gather_level(order: np.ndarray, lo: int, hi: int, src_rows: np.ndarray, src_fps: np.ndarray,
                 src_par: np.ndarray, src_act: np.ndarray, rows: np.ndarray, fps: np.ndarray,
                 par: np.ndarray, act: np.ndarray) -> None:  # pragma: no cover - compiled
    """Places lo..hi-1 of a level in the order ``order``: each new state's row (as 64-bit
    words), fingerprint, first parent and action, from where it was found (at random: the
    sources of the next ``GATHER_AHEAD`` places are loaded while one is gathered, 3.5x
    faster on a level of a million states)."""
    w = src_rows.shape[1]
    flat = src_rows.reshape(-1)  # src_rows is C-contiguous (the new states' buffer)
    for j in range(lo, min(hi, lo + GATHER_AHEAD)):
        _load_ahead(flat, w, src_fps, src_par, src_act, order[j])
    for j in range(lo, hi):
        if j + GATHER_AHEAD < hi:
            _load_ahead(flat, w, src_fps, src_par, src_act, order[j + GATHER_AHEAD])
        i = order[j]
        for c in range(w):
            rows[j, c] = flat[i * w + c]
        fps[j] = src_fps[i]
        par[j] = src_par[i]
        act[j] = src_act[i]


@njit(cache=True, nogil=True)
def bucket_counts(keys: np.ndarray, lo: int, hi: int, shift: np.uint64,
                  counts: np.ndarray) -> None:  # pragma: no cover - compiled
    """counts[b]: how many of keys[lo:hi] have top bits b (``key >> shift``)."""
    counts[:] = 0
    for i in range(lo, hi):
        counts[keys[i] >> shift] += 1


@njit(cache=True, nogil=True)
def bucket_starts(counts: np.ndarray, bounds: np.ndarray,
                  start: np.ndarray) -> None:  # pragma: no cover - compiled
    """From each share's counts (counts[s, b]: share s's keys in bucket b): bounds[b], where
    bucket b begins (bounds[-1]: every key), and start[s, b], where share s's keys of bucket
    b go: after those of the shares before it, so that the order stays stable."""
    at = 0
    for b in range(counts.shape[1]):
        bounds[b] = at
        for s in range(counts.shape[0]):
            start[s, b] = at
            at += counts[s, b]
    bounds[counts.shape[1]] = at


@njit(cache=True, nogil=True)
def bucket_scatter(keys: np.ndarray, lo: int, hi: int, shift: np.uint64, start: np.ndarray,
                   order: np.ndarray, sorted_keys: np.ndarray) -> None:  # pragma: no cover
    """Each i of lo..hi-1, in turn, to order[start[b]] and its key to sorted_keys there (b:
    its key's top bits; start[b] moves on)."""
    for i in range(lo, hi):
        key = keys[i]
        b = key >> shift
        p = start[b]
        start[b] = p + 1
        order[p] = i
        sorted_keys[p] = key


@njit(cache=True, nogil=True)
def bucket_sort(sorted_keys: np.ndarray, order: np.ndarray, bounds: np.ndarray, lo: int,
                hi: int, rank: np.ndarray) -> None:  # pragma: no cover - compiled
    """Buckets lo..hi-1 (bucket b: order[bounds[b]:bounds[b + 1]], with their keys at the
    same places of sorted_keys) each sorted by key, stably (by insertion: a bucket of uniform
    keys holds a few; a large one is merge sorted), and rank[order[j]] = j for their places
    j."""
    for b in range(lo, hi):
        a, z = bounds[b], bounds[b + 1]
        if z - a > 64:
            perm = np.argsort(sorted_keys[a:z], kind="mergesort")
            order[a:z] = order[a:z][perm]
            sorted_keys[a:z] = sorted_keys[a:z][perm]
        else:
            for j in range(a + 1, z):
                i = order[j]
                key = sorted_keys[j]
                p = j
                while p > a and sorted_keys[p - 1] > key:
                    order[p] = order[p - 1]
                    sorted_keys[p] = sorted_keys[p - 1]
                    p -= 1
                order[p] = i
                sorted_keys[p] = key
        for j in range(a, z):
            rank[order[j]] = j
