"""What the state graph's search keeps between kernel calls (``explore.py``): numpy's page
size while it runs, growing columns (in place in reserved address ranges once large), the
level's rows on 2 MiB pages, the workers' candidate buffers and the runs of rows they share,
and the small compiled loops over them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from numba import njit

from hwcheck.checker.engines.visited import RESERVE_FROM, physical_words, reserve
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


def grown(a: np.ndarray, cap: int, used: int) -> np.ndarray:
    new = np.empty((cap,) + a.shape[1:], a.dtype)
    new[:used] = a[:used]
    return new




class Column:
    """A growing array of one kind (``a``, of which the search uses a prefix): doubled by
    copying while small; past ``RESERVE_FROM`` entries, grown in place in an address range
    reserved for the machine's memory, its pages written once and never copied."""

    def __init__(self, dtype: Any, cap: int = 1024):
        self.a = np.empty(cap, dtype)
        self.mem: np.ndarray | None = None

    def room(self, used: int, need: int) -> None:
        """At least ``need`` entries, the first ``used`` kept."""
        if need <= self.a.size:
            return
        cap = max(need, 2 * self.a.size)
        if self.mem is None and cap >= RESERVE_FROM:
            mem = reserve(physical_words(), huge=False)  # written in order
            if mem is not None:
                self.mem = mem.view(self.a.dtype)
                self.mem[:used] = self.a[:used]
        if self.mem is not None and cap <= self.mem.size:
            self.a = self.mem[:cap]
        else:
            self.a = grown(self.a, cap, used)


class Runs:
    """A level's runs of rows shared by the threads that expand them: the next run to claim,
    the free candidate buffers, the expanded runs waiting for their ids."""

    def __init__(self, runs: list[tuple[int, int]], batches: list[Batch]):
        self.runs = runs
        self.free = list(batches)
        self.next = 0
        self.ready: dict[int, Batch] = {}
        self.halted = False
        self.error: BaseException | None = None
        self.cond = threading.Condition()

    def claim(self, wait: bool) -> tuple[int, Batch] | None:
        """The next run and a buffer for it; None when none is left (or the level stopped),
        or, without ``wait``, when none can be claimed now."""
        with self.cond:
            while not self.halted and self.next < len(self.runs):
                if self.free:
                    self.next += 1
                    return self.next - 1, self.free.pop()
                if not wait:
                    return None
                self.cond.wait()
            return None

    def put(self, r: int, b: Batch) -> None:
        with self.cond:
            self.ready[r] = b
            self.cond.notify_all()

    def take(self, r: int) -> Batch | None:
        with self.cond:
            if self.error is not None:
                raise self.error
            return self.ready.pop(r, None)

    def wait(self, r: int) -> None:
        """Until run ``r`` is ready (a pool thread claimed it) or a thread failed."""
        with self.cond:
            while r not in self.ready and self.error is None:
                self.cond.wait()

    def release(self, b: Batch) -> None:
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


class Batch:
    """A worker's candidates: the successors of one run of frontier rows, before their ids
    (``expand_candidates``'s buffers), and the run's own first hits."""

    def __init__(self, k: Kernel, cap: int, want_tp: bool):
        words = k.mod.WORDS
        self.cw = np.empty((cap, words), np.uint64)
        self.cfp = np.empty(cap, np.uint64)
        self.cpar = np.empty(cap, np.int64)
        self.cact = np.empty(cap, k.act_dtype)
        self.eact = np.empty(cap, k.act_dtype)
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


@njit(cache=True, nogil=True)
def gather_level(order: np.ndarray, lo: int, hi: int, src_rows: np.ndarray, src_fps: np.ndarray,
                 src_par: np.ndarray, src_act: np.ndarray, rows: np.ndarray, fps: np.ndarray,
                 par: np.ndarray, act: np.ndarray) -> None:  # pragma: no cover - compiled
    """Places lo..hi-1 of a level in the order ``order``: each new state's row (as 64-bit
    words), fingerprint, first parent and action, from where it was found."""
    w = src_rows.shape[1]
    for j in range(lo, hi):
        i = order[j]
        for c in range(w):
            rows[j, c] = src_rows[i, c]
        fps[j] = src_fps[i]
        par[j] = src_par[i]
        act[j] = src_act[i]
