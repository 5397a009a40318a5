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

``step_part`` does both, so one task per partition and level does all the per-state work.
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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import DTypeLike

from hwcheck.checker.engines.expand import expand as expand_rows
from hwcheck.checker.engines.fpsort import first_index, owner_order, take_rows
from hwcheck.checker.engines.runs import MERGE_RATIO, Runs
from hwcheck.checker.engines.visited import VisitedTable
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.signatures import CheckArgs

if TYPE_CHECKING:
    from hwcheck.checker.protocols import SpecRef
    from hwcheck.checker.semantics.kernel import Kernel
    from hwcheck.spec.lang import Spec

NO_PARENT = 0  # the parent fingerprint of the initial state (0 is never a fingerprint)


def act_dtype(ninst: int) -> type[np.unsignedinteger[Any]]:
    return np.uint8 if ninst < 256 else np.uint16


def owners(fps: np.ndarray, parts: int) -> np.ndarray:
    """The partition of each fingerprint: the top 32 bits scaled to 0..parts-1 (monotone)."""
    hi = np.asarray(fps, np.uint64) >> np.uint64(32)
    return ((hi * np.uint64(parts)) >> np.uint64(32)).astype(np.int64)


def owner(fp: int, parts: int) -> int:
    return ((int(fp) >> 32) * parts) >> 32


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

    @classmethod
    def empty(cls, stride: int, adt: DTypeLike, dtype: DTypeLike = np.int8) -> Batch:
        return cls(np.empty((0, stride), dtype), np.empty(0, np.uint64),
                   np.empty(0, np.uint64), np.empty(0, adt))

    @classmethod
    def concat(cls, batches: list[Batch]) -> Batch:
        return cls(*(np.concatenate([getattr(b, f) for b in batches])
                     for f in ("rows", "fps", "parents", "acts")))

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


# a candidate block as a partition receives it: ("cand", source partition (-1: none), Batch)
Item = tuple[str, int, Batch]


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
    """Expand ``rows`` (sorted by their fingerprints ``fps``) into their unique successors.

    The shared expansion driver runs against a scratch table private to this call, so only the
    first occurrence of each successor is kept: the one with the least (parent fingerprint,
    action), since rows go in fingerprint order and actions in instance order. Transition
    properties are checked on every transition, duplicates included; for each, the first hit is
    the least (parent fingerprint, action)."""
    adt = act_dtype(kernel.ninst)
    n = rows.shape[0]
    nt = tp_active.size
    tp_row = np.full(nt, -1, np.int64)
    tp_inst = np.full(nt, -1, np.int64)
    cov = np.zeros(max(kernel.ninst, 1), np.int64)
    if n == 0:
        return Expanded(Batch.empty(kernel.stride, adt, kernel.dtype), 0, cov=cov)
    rows = np.ascontiguousarray(rows, kernel.dtype)
    _, dom_row, dom_inst = kernel.error_arrays()
    # every successor of a row is new to this scratch table unless another row found it: up
    # to ninst a row; buffers for EXPECT a row cover the models measured without growing
    succ = expand_rows(kernel, rows, VisitedTable(4 * n * 2), tp_active, tp_row, tp_inst,
                       dom_row, dom_inst, chunk=CHUNK, expect=min(EXPECT, kernel.ninst),
                       cov=cov)
    dom = {int(c): (int(fps[dom_row[c]]), int(dom_inst[c])) for c in np.flatnonzero(dom_row >= 0)}
    hits = {}
    for j in np.flatnonzero(tp_row >= 0):
        parent = rows[tp_row[j]]
        nxt = kernel.step(int(tp_inst[j]), parent)
        hits[int(j)] = (int(fps[tp_row[j]]), int(tp_inst[j]), kernel.state_fingerprint(nxt))
    batch = Batch(succ.rows, succ.fps, fps[succ.parents], succ.acts)  # split_by_owner gathers
    return Expanded(batch, succ.generated, hits, dom, cov)


def split_by_owner(batch: Batch, parts: int) -> list[tuple[int, Batch]]:
    """``batch`` (unique fingerprints) cut into one block per owning partition (only non-empty
    ones, in owner order), each in ``batch``'s order: a counting sort by owner and one gather;
    the owner's merge sorts what it receives."""
    if len(batch) == 0:
        return []
    order, bounds = owner_order(owners(batch.fps, parts), parts)
    grouped = batch.take(order)
    return [(o, Batch(grouped.rows[bounds[o]:bounds[o + 1]], grouped.fps[bounds[o]:bounds[o + 1]],
                      grouped.parents[bounds[o]:bounds[o + 1]],
                      grouped.acts[bounds[o]:bounds[o + 1]]))
            for o in range(parts) if bounds[o + 1] > bounds[o]]


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
    mine = np.flatnonzero(owners(fps, task.parts) == index)
    if not mine.size:
        return []
    n = mine.size
    return [("cand", -1, Batch(init[mine], fps[mine], np.full(n, NO_PARENT, np.uint64),
                               np.zeros(n, act_dtype(k.ninst))))]


def runs_of(task: LevelTask, index: int) -> Runs:
    """Partition ``index``'s visited set (``checker.engines.runs``)."""
    return Runs(task.store, index, act_dtype(task.kernel().ninst), task.merge_ratio)


def merge_items(task: LevelTask, index: int, items: Iterable[Item]) -> tuple[Batch, dict[str, Any]]:
    """Merge the candidate blocks partition ``index`` received at ``task.level`` (``("cand",
    source, Batch)``, in any order) into its visited set: (its new states sorted by fingerprint,
    statistics with the state predicates' hits among them). The new states are written as the
    level's run, with their canonical parents."""
    k = task.kernel()
    adt = act_dtype(k.ninst)
    runs = runs_of(task, index)
    blocks = [(it[1], it[2]) for it in items if it[0] == "cand"]
    blocks.sort(key=lambda b: b[0])  # source order: see the module's docstring
    if blocks:
        # one gather of the rows: first occurrences not visited, in fingerprint order
        fps = np.concatenate([b.fps for _, b in blocks])
        first = first_index(fps)
        pick = first[~runs.seen(fps[first], task.level)]
        new = Batch(take_rows(np.concatenate([b.rows for _, b in blocks]), pick), fps[pick],
                    np.concatenate([b.parents for _, b in blocks])[pick],
                    np.concatenate([b.acts for _, b in blocks])[pick])
        ncand = int(first.size)
    else:
        new, ncand = Batch.empty(k.stride, adt, k.dtype), 0
    runs.write_level(task.level, new.fps, new.parents, new.acts)
    sp_active = np.array(task.sp_active or (False,), np.bool_)
    sp, dom_sp = state_hits(k, new.rows, new.fps, sp_active)
    # the new states each instance reached first (the initial state, level 0, by none)
    cov_new = np.bincount(new.acts, minlength=max(k.ninst, 1)) if task.level and len(new) \
        else np.zeros(max(k.ninst, 1), np.int64)
    stats = {"new": len(new), "sp": sp, "dom_sp": dom_sp, "candidates": ncand,
             "cov_new": cov_new.tolist(),
             "shuffled_bytes": sum(b.nbytes for _, b in blocks), **runs.stats()}
    return new, stats


def expand_items(task: LevelTask, index: int, rows: np.ndarray,
                 fps: np.ndarray) -> tuple[list[tuple[int, Item]], dict[str, Any]]:
    """Expand a partition's frontier: ([(owner, ("cand", index, Batch))], statistics with the
    transitions generated and the transition predicates' hits)."""
    tp_active = np.array(task.tp_active or (False,), np.bool_)
    ex = expand(task.kernel(), rows, fps, tp_active)
    blocks = [(o, ("cand", index, b)) for o, b in split_by_owner(ex.succ, task.parts)]
    return blocks, {"generated": ex.generated, "tp": ex.tp_hits, "dom_tp": ex.dom_hits,
                    "expanded": int(fps.size),
                    "cov_enabled": ex.cov.tolist() if ex.cov is not None else None}


def step_part(task: LevelTask, index: int,
              items: Iterable[Item]) -> tuple[list[tuple[int, Item]], dict[str, Any]]:
    """Level ``task.level`` of partition ``index``: merge the candidates it received into its
    visited set, then expand the states that were new. Returns the candidate blocks to send, as
    (owning partition, item) pairs, and the statistics. Nothing else travels: the visited set
    and the parents stay on disk (``runs_of``)."""
    t0 = time.perf_counter()
    new, stats = merge_items(task, index, items)
    t1 = time.perf_counter()
    blocks, xstats = expand_items(task, index, new.rows, new.fps)
    stats.update(xstats)
    stats.update(merge_seconds=t1 - t0, expand_seconds=time.perf_counter() - t1,
                 rss=peak_rss(), pid=os.getpid())
    return blocks, stats


def lookup_part(task: LevelTask, index: int, fps: Iterable[int]) -> dict[int, tuple[int, int]]:
    """fingerprint -> (parent fingerprint, action) for those of ``fps`` partition ``index``
    found."""
    return runs_of(task, index).lookup(fps)
