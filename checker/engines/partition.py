"""The per-partition work of a partitioned breadth-first search, as pure numpy/numba functions.

The state space is split into ``parts`` partitions by the high bits of the fingerprint
(``owners``); the split is monotone, so partition i holds a contiguous range of fingerprints
and "partition order" is "fingerprint order". The local hash table uses the low bits, so the
two never correlate. A partition does two things per level:

1. merge (``merge_items``): it has received one block of candidates from every source
   partition, each holding its source's least (parent fingerprint, action) per fingerprint;
   taken in source order, the first occurrence of each fingerprint carries its canonical
   parent (sources are fingerprint ranges of the parents). Candidates the partition visited
   at an earlier level are dropped; the rest are the partition's new states. They are
   written to disk as the level's run, with their parents, and checked against the state
   predicates.
2. expand (``expand_items``): the new states (rows sorted by fingerprint) go through the
   compiled kernel; their successors are deduplicated locally (the first occurrence wins,
   and since parents go in fingerprint order and actions in instance order it carries the
   least (parent fingerprint, action)), then grouped into one block per owning partition
   (a counting sort: the owner's merge sorts). Each block is unique; a fingerprint found by
   several source partitions is kept from the least source, whose parents all precede the
   others'. Transition predicates are checked on every transition.

The sorts, joins and gathers are linear-time numba functions (``checker.engines.fpsort``).

``step_part`` does both, so one task per partition and level does all the per-state work, a
*slice* at a time: the candidates are grouped by ``BUCKETS`` fine fingerprint ranges of their
owner (``Block``: a block's entries are in bucket order, each bucket's in the source's order),
so a partition reads, merges and expands its inbox one run of consecutive buckets at a time,
about ``LevelTask.slice`` candidates, writing each slice's new states to the level's run and
sending its successors on before it reads the next. Buckets are disjoint fingerprint ranges in
ascending order, so slices are too: the level's run is written in fingerprint order, each
fingerprint is merged in exactly one slice, and a hit in an earlier slice is a lesser
fingerprint. Successors are sent in pieces of at most ``slice`` entries (one scratch table
deduplicates them across the pieces of a slice); a piece's origin (source partition, piece)
orders it for the merge, pieces of one source in the order of their parents. What a task holds
is bounded by the slice, not by the level (``memory_bound``).
A partition's visited set is on disk (``checker.engines.runs``: sorted runs of fingerprints,
one a level, merged log-structured, with each level's parents beside it), in a folder every
task of the partition can reach (``LevelTask.store``). So the only data a level moves between
tasks are the ``("cand", source, Batch)`` blocks: the successors, once each per source, sent
to their owners. Nothing here imports pyspark: the Spark engine
ships these functions to its executors, the in-process backend
(``checker.engines.partitioned``) runs them in one process, and the tests run them without a JVM.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import DTypeLike

from hwcheck.checker.engines.expand import expand as expand_rows
from hwcheck.checker.engines.fpsort import bucket_group, first_index, take_rows
from hwcheck.checker.engines.runs import MERGE_RATIO, Runs
from hwcheck.checker.engines.visited import VisitedTable
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.signatures import CheckArgs

if TYPE_CHECKING:
    from hwcheck.checker.protocols import SpecRef
    from hwcheck.checker.semantics.kernel import Kernel
    from hwcheck.spec.lang import Spec

NO_PARENT = 0  # the parent fingerprint of the initial state (0 is never a fingerprint)
BUCKETS = 1024  # fine fingerprint ranges a partition's candidates are grouped by
SLICE = 1 << 18  # candidates a partition merges at a time, successors it sends at a time
# a task's process before its first slice: Python, numpy, numba, the compiled kernel and the
# partition functions, a PySpark worker (measured: 238 MiB on Kafka R3 M3 E3; the kernel of a
# larger spec adds to it)
WORKER_BASE = 288 << 20


def bytes_a_candidate(row_bytes: int) -> int:
    """What a task holds for each candidate of a slice, at most, in bytes: the merge's read,
    the sort's buffers and the new states (about 2 rows and 90 bytes); or the new states, the
    expansion's scratch table (about 80 bytes a state at 7 successors a state), its successor
    buffers (grown once: 2 rows) and their grouping by bucket (a row): about 4 rows and 160
    bytes. (Measured peaks: 275-309 MiB on R3 M3 E3, 48-byte rows, and 329 MiB on R4 M1 E7,
    40-byte rows, at the default slice.)"""
    return 4 * row_bytes + 160


def memory_bound(row_bytes: int, slice: int) -> int:
    """A task's process memory at most, in bytes, for states of ``row_bytes`` and a slice of
    ``slice`` candidates (while no single bucket holds more than ``slice``: up to
    ``BUCKETS * slice`` candidates a partition and level)."""
    return WORKER_BASE + slice * bytes_a_candidate(row_bytes)


def largest_slice(row_bytes: int, memory: int) -> int:
    """The largest slice whose ``memory_bound`` fits in ``memory`` bytes (0: none does)."""
    return max(0, (memory - WORKER_BASE) // bytes_a_candidate(row_bytes))


def act_dtype(ninst: int) -> type[np.unsignedinteger[Any]]:
    return np.uint8 if ninst < 256 else np.uint16


def owners(fps: np.ndarray, parts: int) -> np.ndarray:
    """The partition of each fingerprint: the top 32 bits scaled to 0..parts-1 (monotone)."""
    hi = np.asarray(fps, np.uint64) >> np.uint64(32)
    owners: np.ndarray = ((hi * np.uint64(parts)) >> np.uint64(32)).astype(np.int64)
    return owners


def owner(fp: int, parts: int) -> int:
    return ((int(fp) >> 32) * parts) >> 32


def buckets(fps: np.ndarray, parts: int) -> np.ndarray:
    """The global bucket of each fingerprint: ``owners`` at ``parts * BUCKETS``, so bucket g
    belongs to partition ``g // BUCKETS`` (floor of a floor) and buckets are ascending
    fingerprint ranges."""
    return owners(fps, parts * BUCKETS)


# -- data ------------------------------------------------------------------------------------


@dataclass
class Batch:
    """States with their canonical parent: rows, fingerprints, parent fingerprints, actions."""

    rows: np.ndarray  # int8 [n, stride]
    fps: np.ndarray  # uint64 [n]
    parents: np.ndarray  # uint64 [n]
    acts: np.ndarray  # uint8/uint16 [n]

    def __len__(self) -> int:
        return self.fps.size

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + self.fps.nbytes + self.parents.nbytes + self.acts.nbytes

    def take(self, idx: np.ndarray) -> Batch:
        return Batch(take_rows(self.rows, idx), self.fps[idx], self.parents[idx], self.acts[idx])

    def part(self, lo: int, hi: int) -> Batch:
        """Entries lo..hi-1 (views)."""
        return Batch(self.rows[lo:hi], self.fps[lo:hi], self.parents[lo:hi], self.acts[lo:hi])

    @classmethod
    def empty(cls, stride: int, adt: DTypeLike, dtype: DTypeLike = np.int8) -> Batch:
        return cls(np.empty((0, stride), dtype), np.empty(0, np.uint64),
                   np.empty(0, np.uint64), np.empty(0, adt))

    # plain tuple pickling: small and version-independent
    def __reduce__(self) -> tuple[type[Batch], tuple[np.ndarray, ...]]:
        return (Batch, (self.rows, self.fps, self.parents, self.acts))


@dataclass
class Expanded:
    """One partition's expansion: its unique successors and what the transitions hit."""

    succ: Batch  # unique by fingerprint, in (parent fingerprint, action) order
    generated: int  # transitions evaluated, duplicates included
    # prop index -> (parent fp, action, successor fp)
    tp_hits: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    # error code -> (parent fp, action)
    dom_hits: dict[int, tuple[int, int]] = field(default_factory=dict)
    cov: np.ndarray | None = None  # int64 [instances]: the expanded rows that enable each


class Candidates(Protocol):
    """A block of candidates for one partition, in bucket order: in memory (``Block``) or in
    a file of the inbox (``inbox.BlockFile``)."""

    bounds: np.ndarray  # int64 [BUCKETS + 1]: bucket b is entries bounds[b]:bounds[b + 1]

    def read(self, b0: int, b1: int) -> Batch: ...

    def read_into(self, b0: int, b1: int, out: Batch) -> None: ...

    def close(self) -> None: ...

    @property
    def nbytes(self) -> int: ...


@dataclass
class Block:
    """Candidates for one partition in memory, in bucket order."""

    batch: Batch
    bounds: np.ndarray  # int64 [BUCKETS + 1]

    def __len__(self) -> int:
        return len(self.batch)

    @property
    def nbytes(self) -> int:
        return self.batch.nbytes + self.bounds.nbytes

    def read(self, b0: int, b1: int) -> Batch:
        """Buckets b0..b1-1 (views)."""
        return self.batch.part(int(self.bounds[b0]), int(self.bounds[b1]))

    def close(self) -> None:
        pass

    def read_into(self, b0: int, b1: int, out: Batch) -> None:
        """Buckets b0..b1-1 copied into ``out`` (as many entries)."""
        got = self.read(b0, b1)
        for f in ("rows", "fps", "parents", "acts"):
            getattr(out, f)[...] = getattr(got, f)

    @classmethod
    def of(cls, rows: np.ndarray, fps: np.ndarray, parents: np.ndarray, acts: np.ndarray,
           bounds: np.ndarray) -> Block:
        return cls(Batch(rows, fps, parents, acts), bounds)

    # plain tuple pickling: small and version-independent
    def __reduce__(self) -> tuple[Callable[..., Block], tuple[np.ndarray, ...]]:
        b = self.batch
        return (Block.of, (b.rows, b.fps, b.parents, b.acts, self.bounds))


# a candidate block as a partition receives it: ("cand", (source partition (-1: none), piece),
# the block); the merge takes blocks in origin order
Origin = tuple[int, int]
Item = tuple[str, Origin, Candidates]


# -- kernels, built once per process ------------------------------------------------------------

_kernels: dict[str, Kernel] = {}


class KernelMismatch(RuntimeError):
    """An executor rebuilt a different kernel than the driver's: it would explore another model."""


def kernel_for(spec: SpecRef | Spec, key: str, symmetry: bool = False) -> Kernel:
    """The compiled kernel of ``spec`` (a ``SpecRef``, rebuilt here, or a pickled ``Spec``),
    built (or loaded from the disk cache) once per process, so executors need no shared
    filesystem; with ``symmetry``, the kernel that keeps one state per orbit. ``key`` is the
    driver's kernel hash: a kernel that hashes otherwise (another hwcheck version, an edited
    spec file, the other symmetry setting) stops the run rather than explore another model."""
    k = _kernels.get(key)
    if k is None:
        from hwcheck.checker.protocols import SpecRef
        from hwcheck.checker.semantics.kernel import Kernel

        k = Kernel(spec.build() if isinstance(spec, SpecRef) else spec, symmetry=symmetry)
        if k.key != key:
            what = spec.source if isinstance(spec, SpecRef) else spec.name
            raise KernelMismatch(f"this process built kernel {k.key} for {what}, but the driver "
                                 f"runs {key}: the spec or hwcheck differs here")
        k.warm("local", "step")
        _kernels[key] = k
    return k


# -- step 1: expand ------------------------------------------------------------------------------

CHUNK = 1 << 14  # frontier rows per kernel call
EXPECT = 4.0  # unique successors a frontier row is expected to have (R3 M3 E3 hw: 3.5)


def expand(kernel: Kernel, rows: np.ndarray, fps: np.ndarray, tp_active: np.ndarray) -> Expanded:
    """Expand ``rows`` (sorted by their fingerprints ``fps``) into their unique successors, in
    one piece (``expand_pieces``)."""
    pieces = list(expand_pieces(kernel, rows, fps, tp_active, most=None))
    if len(pieces) == 1:
        return pieces[0]
    adt = act_dtype(kernel.ninst)
    return Expanded(Batch.empty(kernel.stride, adt, kernel.dtype), 0,
                    cov=np.zeros(max(kernel.ninst, 1), np.int64))


def expand_pieces(kernel: Kernel, rows: np.ndarray, fps: np.ndarray, tp_active: np.ndarray,
                  most: int | None = SLICE) -> Iterator[Expanded]:
    """Expand ``rows`` (sorted by their fingerprints ``fps``) into their unique successors, in
    pieces of at most ``most`` successors (None: one piece).

    The shared expansion driver runs against one scratch table for every piece, so only the
    first occurrence of each successor is kept: the one with the least (parent fingerprint,
    action), since rows go in fingerprint order and actions in instance order. Transition
    properties are checked on every transition, duplicates included; for each, the first hit is
    the least (parent fingerprint, action): a later piece reports only what earlier ones did
    not."""
    n = rows.shape[0]
    if n == 0:
        return
    rows = np.ascontiguousarray(rows, kernel.dtype)
    ninst = max(kernel.ninst, 1)
    nt = tp_active.size
    tp_found = np.zeros(nt, np.bool_)
    dom_found: set[int] = set()
    # every successor of a row is new to this scratch table unless another row found it: up
    # to ninst a row; buffers for EXPECT a row cover the models measured without growing
    table = VisitedTable(4 * n * 2)
    if most is None:
        chunk, enough = CHUNK, None
    else:  # a kernel call writes at most chunk * ninst: a piece stops below ``most``
        chunk = max(1, min(CHUNK, most // (2 * ninst)))
        enough = max(1, most - chunk * ninst)
    lo = 0
    while lo < n:
        tp_row = np.full(nt, -1, np.int64)
        tp_inst = np.full(nt, -1, np.int64)
        cov = np.zeros(ninst, np.int64)
        _, dom_row, dom_inst = kernel.error_arrays()
        part = rows[lo:]
        succ = expand_rows(
            kernel, part, table, tp_active, tp_row, tp_inst, dom_row, dom_inst, chunk=chunk,
            expect=min(EXPECT, kernel.ninst) if most is None else most / max(n - lo, 1),
            cov=cov, on_chunk=None if enough is None else (lambda _i, w: w >= enough))
        if succ.interrupted is not None:
            raise succ.interrupted
        pfps = fps[lo:]
        dom = {}
        for c in np.flatnonzero(dom_row >= 0):
            if int(c) not in dom_found:
                dom_found.add(int(c))
                dom[int(c)] = (int(pfps[dom_row[c]]), int(dom_inst[c]))
        hits = {}
        for j in np.flatnonzero((tp_row >= 0) & ~tp_found):
            tp_found[j] = True
            nxt = kernel.taken(int(tp_inst[j]), part[tp_row[j]])
            hits[int(j)] = (int(pfps[tp_row[j]]), int(tp_inst[j]),
                            kernel.state_fingerprint(nxt))
        yield Expanded(Batch(succ.rows, succ.fps, pfps[succ.parents], succ.acts),
                       succ.generated, hits, dom, cov)
        lo += succ.next_row


def split_by_owner(batch: Batch, parts: int) -> list[tuple[int, Block]]:
    """``batch`` cut into one block per owning partition (only non-empty ones, in owner
    order), each in bucket order and within a bucket in ``batch``'s order: a counting sort by
    bucket and one gather; the owner's merge sorts a slice of buckets at a time."""
    if len(batch) == 0:
        return []
    rows, fps, parents, acts, bounds = bucket_group(batch.rows, batch.fps, batch.parents,
                                                    batch.acts, parts * BUCKETS)
    grouped = Batch(rows, fps, parents, acts)
    out = []
    for o in range(parts):
        lo, hi = int(bounds[o * BUCKETS]), int(bounds[(o + 1) * BUCKETS])
        if hi > lo:
            g = grouped
            out.append((o, Block(Batch(g.rows[lo:hi], g.fps[lo:hi], g.parents[lo:hi],
                                       g.acts[lo:hi]),
                                 bounds[o * BUCKETS:(o + 1) * BUCKETS + 1] - lo)))
    return out


def slices(counts: np.ndarray, most: int) -> list[tuple[int, int]]:
    """Runs of consecutive buckets ``(b0, b1)`` covering every bucket with candidates, each
    with at most ``most`` candidates (``counts``: per bucket) unless one bucket alone has
    more."""
    out: list[tuple[int, int]] = []
    nb = counts.size
    cum = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])
    b0 = 0
    while b0 < nb:
        if cum[b0] == cum[-1]:  # nothing from here on
            break
        # the furthest b1 > b0 with cum[b1] - cum[b0] <= most, at least b0 + 1
        b1 = max(b0 + 1, int(np.searchsorted(cum, cum[b0] + most, side="right")) - 1)
        out.append((b0, min(b1, nb)))
        b0 = b1
    return out


# -- step 2: merge ------------------------------------------------------------------------------


def first_occurrences(batch: Batch) -> Batch:
    """One entry per fingerprint, the first in ``batch``'s order; the result sorted by
    fingerprint."""
    return batch.take(first_index(batch.fps)) if len(batch) else batch



def state_hits(kernel: Kernel, rows: np.ndarray, fps: np.ndarray,
               sp_active: np.ndarray) -> tuple[dict[int, int], dict[int, int]]:
    """For each active state predicate hit by some row: the least hitting fingerprint (rows are
    sorted by fingerprint, so the kernel's first hit is the least); and for each domain error
    a predicate made (a read outside a variable's shape), the least fingerprint."""
    ns = len(kernel.props.state)
    if not ns or not sp_active.any() or rows.shape[0] == 0:
        return {}, {}
    hits = np.full(ns, -1, np.int64)
    err, dom_row, _ = kernel.error_arrays()
    kernel.mod.check_states(*CheckArgs(rows=np.ascontiguousarray(rows), n=rows.shape[0],
                                       active=sp_active, hits=hits, err=err, dom_row=dom_row))
    return ({int(j): int(fps[hits[j]]) for j in np.flatnonzero(hits >= 0)},
            {int(c): int(fps[dom_row[c]]) for c in np.flatnonzero(dom_row >= 0)})



# -- the partition tasks ---------------------------------------------------------------------


@dataclass(frozen=True)
class LevelTask:
    """What a level's tasks need: everything is small and picklable (no kernel, no states)."""

    spec: SpecRef | Spec  # a SpecRef (source + parameters) or, for a spec built by hand, the Spec
    kernel_key: str  # the driver's kernel hash: every process must build the same kernel
    parts: int
    sp_active: tuple[bool, ...]  # state predicates still checked
    tp_active: tuple[bool, ...]  # transition predicates still checked
    symmetry: bool = False  # one state per orbit of the protocol's symmetry (--symmetry)
    store: str = ""  # the folder of the partitions' visited sets (``runs_of``)
    level: int = 0  # the BFS level whose candidates the tasks merge
    merge_ratio: float = MERGE_RATIO  # the runs' merge policy (``checker.engines.runs``)
    rule: StopRule | None = None  # the run's stop rule (a task running several levels asks it)
    # the kinds of the (state, transition) predicates, by index
    kinds: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    slice: int = SLICE  # candidates merged at a time, successors sent at a time

    def kernel(self) -> Kernel:
        return kernel_for(self.spec, self.kernel_key, self.symmetry)


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024



def initial_part(task: LevelTask, index: int) -> list[Item]:
    """Partition ``index``'s items before the search: the initial states it owns as candidates
    (from no source; the merge keeps each fingerprint once); nothing elsewhere."""
    k = task.kernel()
    init = k.starts  # canonical under symmetry
    fps = np.array([k.fingerprint(row) for row in init], np.uint64)
    n = fps.size
    blocks = split_by_owner(Batch(init, fps, np.full(n, NO_PARENT, np.uint64),
                                  np.zeros(n, act_dtype(k.ninst))), task.parts)
    return [("cand", (-1, 0), b) for o, b in blocks if o == index]


def runs_of(task: LevelTask, index: int) -> Runs:
    """Partition ``index``'s visited set (``checker.engines.runs``)."""
    return Runs(task.store, index, act_dtype(task.kernel().ninst), task.merge_ratio)


def read_slice(blocks: Sequence[Candidates], b0: int, b1: int, stride: int,
               dtype: DTypeLike, adt: DTypeLike) -> Batch:
    """Buckets b0..b1-1 of every block, in the blocks' order, read straight into one batch."""
    sizes = [int(blk.bounds[b1] - blk.bounds[b0]) for blk in blocks]
    n = sum(sizes)
    out = Batch(np.empty((n, stride), dtype), np.empty(n, np.uint64), np.empty(n, np.uint64),
                np.empty(n, adt))
    at = 0
    for blk, m in zip(blocks, sizes):
        if m:
            blk.read_into(b0, b1, out.part(at, at + m))
            at += m
    return out


def merge_slice(task: LevelTask, runs: Runs, cand: Batch) -> tuple[Batch, int]:
    """A slice's candidates (``cand``, in origin order) merged against the visited set: (its
    new states sorted by fingerprint, each with its canonical parent; the distinct
    candidates)."""
    k = task.kernel()
    if not len(cand):
        return Batch.empty(k.stride, act_dtype(k.ninst), k.dtype), 0
    # one gather of the rows: first occurrences not visited, in fingerprint order
    first = first_index(cand.fps)
    pick = first[~runs.seen(cand.fps[first], task.level)]
    return cand.take(pick), int(first.size)


def expand_items(task: LevelTask, index: int, rows: np.ndarray, fps: np.ndarray,
                 piece: int = 0) -> tuple[list[tuple[int, Item]], dict[str, Any]]:
    """Expand states of a partition in one piece: ([(owner, ("cand", (index, piece), Block))],
    statistics with the transitions generated and the transition predicates' hits)."""
    tp_active = np.array(task.tp_active or (False,), np.bool_)
    ex = expand(task.kernel(), rows, fps, tp_active)
    blocks: list[tuple[int, Item]] = [(o, ("cand", (index, piece), b))
                                      for o, b in split_by_owner(ex.succ, task.parts)]
    return blocks, {"generated": ex.generated, "tp": ex.tp_hits, "dom_tp": ex.dom_hits,
                    "expanded": int(fps.size),
                    "cov_enabled": ex.cov.tolist() if ex.cov is not None else None}


Emit = Callable[[int, Item], None]  # (owning partition, item): a block sent on


def step_part(task: LevelTask, index: int, items: Iterable[Item],
              emit: Emit | None = None) -> tuple[list[tuple[int, Item]], dict[str, Any]]:
    """Level ``task.level`` of partition ``index``: merge the candidates it received into its
    visited set, then expand the states that were new, a slice at a time (see the module's
    docstring). Each block of successors goes to ``emit`` as soon as it is made (then none is
    returned) or, without ``emit``, is returned as (owning partition, item) pairs; with the
    statistics. Nothing else travels: the visited set and the parents stay on disk
    (``runs_of``)."""
    k = task.kernel()
    ninst = max(k.ninst, 1)
    adt = act_dtype(k.ninst)
    out: list[tuple[int, Item]] = []
    send: Emit = emit if emit is not None else (lambda o, item: out.append((o, item)))
    blocks = sorted(((it[1], it[2]) for it in items if it[0] == "cand"), key=lambda b: b[0])
    counts = np.zeros(BUCKETS, np.int64)
    for _, blk in blocks:
        counts += np.diff(blk.bounds)
    runs = runs_of(task, index)
    sp_active = np.array(task.sp_active or (False,), np.bool_)
    tp_active = np.array(task.tp_active or (False,), np.bool_)
    sp: dict[int, int] = {}
    dom_sp: dict[int, int] = {}
    tp: dict[int, tuple[int, int, int]] = {}
    dom_tp: dict[int, tuple[int, int]] = {}
    cov_new = np.zeros(ninst, np.int64)
    cov_enabled = np.zeros(ninst, np.int64)
    new_total = ncand = generated = expanded = 0
    merge_s = expand_s = 0.0
    piece = 0
    most = max(1, task.slice)
    cut = slices(counts, most)
    nslices = len(cut)
    level = runs.level_writer(task.level)
    try:
        for b0, b1 in cut:
            t0 = time.perf_counter()
            new, c = merge_slice(task, runs, read_slice([blk for _, blk in blocks], b0, b1,
                                                        k.stride, k.dtype, adt))
            ncand += c
            new_total += len(new)
            level.write(new.fps, new.parents, new.acts)
            # slices ascend: a hit of an earlier slice is a lesser fingerprint and stays
            s_hits, d_hits = state_hits(k, new.rows, new.fps, sp_active)
            for hits, into in ((s_hits, sp), (d_hits, dom_sp)):
                for key, fp in hits.items():
                    into.setdefault(key, fp)
            if task.level and len(new):  # the new states each instance reached first
                cov_new += np.bincount(new.acts, minlength=ninst)
            t1 = time.perf_counter()
            merge_s += t1 - t0
            for ex in expand_pieces(k, new.rows, new.fps, tp_active, most):
                generated += ex.generated
                for j, hit in ex.tp_hits.items():
                    tp.setdefault(j, hit)
                for c2, dhit in ex.dom_hits.items():
                    dom_tp.setdefault(c2, dhit)
                if ex.cov is not None:
                    cov_enabled += ex.cov
                for o, b in split_by_owner(ex.succ, task.parts):
                    send(o, ("cand", (index, piece), b))
                piece += 1
            expanded += len(new)
            expand_s += time.perf_counter() - t1
    except BaseException:
        level.abandon()
        raise
    finally:
        runs.close()
        for _, blk in blocks:
            blk.close()
    t0 = time.perf_counter()
    level.close()  # the level's marker, then the runs' merges
    merge_s += time.perf_counter() - t0
    stats = {"new": new_total, "sp": sp, "dom_sp": dom_sp, "candidates": ncand,
             "cov_new": cov_new.tolist(),
             "shuffled_bytes": sum(blk.nbytes for _, blk in blocks), **runs.stats(),
             "generated": generated, "tp": tp, "dom_tp": dom_tp, "expanded": expanded,
             "cov_enabled": cov_enabled.tolist(), "slices": nslices, "pieces": piece,
             "merge_seconds": merge_s, "expand_seconds": expand_s, "rss": peak_rss(),
             "pid": os.getpid()}
    return out, stats


def lookup_part(task: LevelTask, index: int, fps: Iterable[int]) -> dict[int, tuple[int, int]]:
    """fingerprint -> (parent fingerprint, action) for those of ``fps`` partition ``index``
    found."""
    return runs_of(task, index).lookup(fps)
