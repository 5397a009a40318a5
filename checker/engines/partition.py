"""The per-partition work of a partitioned breadth-first search, as pure numpy/numba functions.

The state space is split into ``parts`` partitions by the high bits of the fingerprint
(``owners``); the split is monotone, so partition i holds a contiguous range of fingerprints
and "partition order" is "fingerprint order". The local hash table uses the low bits, so the
two never correlate. A partition does two things per level:

1. merge (``merge_items``): it has received one block of candidates from every source
   partition, each holding its source's least (parent fingerprint, action) per fingerprint;
   taken in source order, the first occurrence of each fingerprint carries its canonical
   parent (sources are fingerprint ranges of the parents). Candidates already in
   the partition's ``Store`` (sorted fingerprints with parent fingerprint and action) are
   dropped; the rest are the partition's new states. They join the store and are checked
   against the state predicates.
2. expand (``expand_items``): the new states (rows sorted by fingerprint) go through the
   compiled kernel; their successors are deduplicated locally (the first occurrence wins,
   and since parents go in fingerprint order and actions in instance order it carries the
   least (parent fingerprint, action)), then sorted and cut into one block per owning
   partition. Each block is unique and sorted; a fingerprint found by several source
   partitions is kept from the least source, whose parents all precede the others'.
   Transition predicates are checked on every transition.

``step_part`` does both, so one task per partition and level does all the per-state work.
A partition's visited states are two stores: a large base of fingerprints only
(``("keys", generation, fps)``), read by every level for the visited check and rewritten only
when ``compact_part`` folds the pending store into it, and a small pending store
(``("pending", generation, Store)``, with parents and actions) of the states found since, which
travels with the ``("cand", source, Batch)`` blocks sent to the partition. So a level moves the
new states and the candidates, and reads 8 bytes per visited state. A backend keeps each pending
store that a compaction folds into the base (``links_of``): those hold the parents that
``lookup_part`` finds when a trace is rebuilt. Nothing here imports pyspark: the Spark engine
ships these functions to its executors, the in-process backend (``checker.levels``) runs them
in one process, and the tests run them without a JVM.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass, field

import numpy as np

from hwcheck.checker.engines.expand import expand as expand_rows
from hwcheck.checker.engines.visited import VisitedTable

NO_PARENT = 0  # the parent fingerprint of the initial state (0 is never a fingerprint)


def act_dtype(ninst: int):
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

    def take(self, idx) -> "Batch":
        return Batch(self.rows[idx], self.fps[idx], self.parents[idx], self.acts[idx])

    @classmethod
    def empty(cls, stride: int, adt, dtype=np.int8) -> "Batch":
        return cls(np.empty((0, stride), dtype), np.empty(0, np.uint64),
                   np.empty(0, np.uint64), np.empty(0, adt))

    @classmethod
    def concat(cls, batches: list["Batch"]) -> "Batch":
        return cls(*(np.concatenate([getattr(b, f) for b in batches])
                     for f in ("rows", "fps", "parents", "acts")))

    def __reduce__(self):  # plain tuple pickling: small and version-independent
        return (Batch, (self.rows, self.fps, self.parents, self.acts))


@dataclass
class Store:
    """A partition's visited states, sorted by fingerprint, with their canonical parents."""

    fps: np.ndarray  # uint64, sorted
    parents: np.ndarray  # uint64
    acts: np.ndarray

    def __len__(self) -> int:
        return self.fps.size

    @property
    def nbytes(self) -> int:
        return self.fps.nbytes + self.parents.nbytes + self.acts.nbytes

    @classmethod
    def empty(cls, adt) -> "Store":
        return cls(np.empty(0, np.uint64), np.empty(0, np.uint64), np.empty(0, adt))

    def __reduce__(self):
        return (Store, (self.fps, self.parents, self.acts))


@dataclass
class Expanded:
    """One partition's expansion: its unique successors and what the transitions hit."""

    succ: Batch  # unique by fingerprint, in (parent fingerprint, action) order
    generated: int  # transitions evaluated, duplicates included
    tp_hits: dict = field(default_factory=dict)  # prop index -> (parent fp, action, successor fp)
    dom_hits: dict = field(default_factory=dict)  # error code -> (parent fp, action)


# -- kernels, built once per process ------------------------------------------------------------

_kernels: dict = {}


class KernelMismatch(RuntimeError):
    """An executor rebuilt a different kernel than the driver's: it would explore another model."""


def kernel_for(spec, key: str, symmetry: bool = False):
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


def expand(kernel, rows: np.ndarray, fps: np.ndarray, tp_active: np.ndarray) -> Expanded:
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
    if n == 0:
        return Expanded(Batch.empty(kernel.stride, adt, kernel.dtype), 0)
    rows = np.ascontiguousarray(rows, kernel.dtype)
    _, dom_row, dom_inst = kernel.error_arrays()
    succ = expand_rows(kernel, rows, VisitedTable(4 * n * 2), tp_active, tp_row, tp_inst,
                       dom_row, dom_inst, chunk=CHUNK)
    dom = {int(c): (int(fps[dom_row[c]]), int(dom_inst[c])) for c in np.flatnonzero(dom_row >= 0)}
    hits = {}
    for j in np.flatnonzero(tp_row >= 0):
        parent = rows[tp_row[j]]
        nxt = kernel.step(int(tp_inst[j]), parent)
        hits[int(j)] = (int(fps[tp_row[j]]), int(tp_inst[j]), kernel.state_fingerprint(nxt))
    batch = Batch(succ.rows, succ.fps, fps[succ.parents], succ.acts)  # split_by_owner gathers
    return Expanded(batch, succ.generated, hits, dom)


def split_by_owner(batch: Batch, parts: int) -> list[tuple[int, Batch]]:
    """``batch`` (unique fingerprints) sorted by fingerprint and cut into one block per owning
    partition (only non-empty ones). Owners are monotone in the fingerprint, so one sort does
    both, and each block reaches its owner already sorted."""
    if len(batch) == 0:
        return []
    order = np.argsort(batch.fps)
    fps = batch.fps[order]
    own = owners(fps, parts)
    cuts = np.flatnonzero(own[1:] != own[:-1]) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [fps.size]])
    return [(int(own[s]), batch.take(order[s:e])) for s, e in zip(starts, ends)]


# -- step 2: merge ------------------------------------------------------------------------------


def first_index(fps: np.ndarray) -> np.ndarray:
    """The position of the first occurrence of each distinct fingerprint, in fingerprint
    order. (A stable sort: on blocks that are each sorted already, a merge of runs.)"""
    order = np.argsort(fps, kind="stable")
    keep = np.ones(fps.size, np.bool_)
    keep[1:] = fps[order[1:]] != fps[order[:-1]]
    return order[keep]


def first_occurrences(batch: Batch) -> Batch:
    """One entry per fingerprint, the first in ``batch``'s order; the result sorted by
    fingerprint."""
    return batch.take(first_index(batch.fps)) if len(batch) else batch


def unseen(store, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted unique ``fps``: which are not in ``store`` (a ``Store`` or its sorted
    fingerprints alone, a mask), and where each would go."""
    keys = store.fps if isinstance(store, Store) else store
    pos = np.searchsorted(keys, fps)
    seen = np.zeros(fps.size, np.bool_)
    inside = pos < keys.size
    seen[inside] = keys[pos[inside]] == fps[inside]
    return ~seen, pos


def added(store: Store, new: Batch, at: np.ndarray) -> Store:
    """``store`` with ``new`` inserted at positions ``at`` (from ``unseen``)."""
    return Store(np.insert(store.fps, at, new.fps), np.insert(store.parents, at, new.parents),
                 np.insert(store.acts, at, new.acts))


def anti_join(store: Store, cand: Batch) -> tuple[Batch, Store]:
    """The candidates (unique, sorted by fingerprint) not in ``store``, and the store with them
    added."""
    if len(cand) == 0:
        return cand, store
    fresh, pos = unseen(store, cand.fps)
    new = cand.take(fresh)
    return new, added(store, new, pos[fresh])


def state_hits(kernel, rows: np.ndarray, fps: np.ndarray,
               sp_active: np.ndarray) -> tuple[dict, dict]:
    """For each active state predicate hit by some row: the least hitting fingerprint (rows are
    sorted by fingerprint, so the kernel's first hit is the least); and for each domain error
    a predicate made (a read outside a variable's shape), the least fingerprint."""
    ns = len(kernel.props.state)
    if not ns or not sp_active.any() or rows.shape[0] == 0:
        return {}, {}
    hits = np.full(ns, -1, np.int64)
    err, dom_row, _ = kernel.error_arrays()
    kernel.mod.check_states(np.ascontiguousarray(rows), rows.shape[0], sp_active, hits, err,
                            dom_row)
    return ({int(j): int(fps[hits[j]]) for j in np.flatnonzero(hits >= 0)},
            {int(c): int(fps[dom_row[c]]) for c in np.flatnonzero(dom_row >= 0)})


def lookup(store: Store, fps) -> dict:
    """fingerprint -> (parent fingerprint, action) for each of ``fps`` the store holds."""
    want = np.asarray(sorted(set(int(f) for f in fps)), np.uint64)
    pos = np.searchsorted(store.fps, want)
    out = {}
    for f, p in zip(want, pos):
        if p < store.fps.size and store.fps[p] == f:
            out[int(f)] = (int(store.parents[p]), int(store.acts[p]))
    return out


# -- the partition tasks ---------------------------------------------------------------------


@dataclass(frozen=True)
class LevelTask:
    """What a level's tasks need: everything is small and picklable (no kernel, no states)."""

    spec: object  # a SpecRef (source + parameters) or, for a spec built by hand, the Spec
    kernel_key: str  # the driver's kernel hash: every process must build the same kernel
    parts: int
    sp_active: tuple  # state predicates still checked
    tp_active: tuple  # transition predicates still checked
    symmetry: bool = False  # one state per orbit of the protocol's symmetry (--symmetry)

    def kernel(self):
        return kernel_for(self.spec, self.kernel_key, self.symmetry)


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def initial_part(task: LevelTask, index: int) -> tuple[list, list]:
    """Partition ``index`` before the search: (its items, its base items). The items hold an
    empty pending store and, in the partition that owns it, the initial state as a candidate
    (from no source); the base is an empty store of generation 0."""
    k = task.kernel()
    adt = act_dtype(k.ninst)
    items = [("pending", 0, Store.empty(adt))]
    init = k.start.reshape(1, -1).copy()  # canonical under symmetry
    fp0 = np.array([k.fingerprint(init[0])], np.uint64)
    if owner(int(fp0[0]), task.parts) == index:
        items.append(("cand", -1, Batch(init, fp0, np.array([NO_PARENT], np.uint64),
                                        np.zeros(1, adt))))
    return items, [("keys", 0, np.empty(0, np.uint64))]


def _stores(items, adt) -> tuple[int, np.ndarray, Store]:
    """(base generation, base keys, pending store) among a partition's items. A pending store
    of an older generation than the base was merged into it already, and counts as empty."""
    gen, base, pgen, pending = 0, np.empty(0, np.uint64), 0, Store.empty(adt)
    for it in items:
        if it[0] == "keys":
            gen, base = it[1], it[2]
        elif it[0] == "pending":
            pgen, pending = it[1], it[2]
    if pgen != gen:
        pending = Store.empty(adt)
    return gen, base, pending


def merge_items(task: LevelTask, items) -> tuple[Batch, int, Store, dict]:
    """Merge a partition's candidate blocks into its stores: (new states sorted by fingerprint,
    the base generation, the updated pending store, statistics with the state predicates' hits
    among the new states).

    A partition's visited states are a large base store, rewritten only by ``compact_part``,
    and a small pending store of the states found since; ``items`` holds both and the
    ``("cand", source, Batch)`` blocks sent to the partition, in any order."""
    k = task.kernel()
    adt = act_dtype(k.ninst)
    gen, base, pending = _stores(items, adt)
    blocks = [(it[1], it[2]) for it in items if it[0] == "cand"]
    blocks.sort(key=lambda b: b[0])  # source order: see the module's docstring
    if blocks:
        # one gather of the rows: first occurrences in neither store, in fingerprint order
        fps = np.concatenate([b.fps for _, b in blocks])
        first = first_index(fps)
        fresh, _ = unseen(base, fps[first])
        first = first[fresh]
        fresh, pos = unseen(pending, fps[first])
        pick = first[fresh]
        new = Batch(np.concatenate([b.rows for _, b in blocks])[pick], fps[pick],
                    np.concatenate([b.parents for _, b in blocks])[pick],
                    np.concatenate([b.acts for _, b in blocks])[pick])
        pending = added(pending, new, pos[fresh])
        ncand = int(fresh.size)
    else:
        new, ncand = Batch.empty(k.stride, adt, k.dtype), 0
    sp_active = np.array(task.sp_active or (False,), np.bool_)
    sp, dom_sp = state_hits(k, new.rows, new.fps, sp_active)
    stats = {"new": len(new), "sp": sp, "dom_sp": dom_sp,
             "candidates": ncand, "stored": base.size + len(pending),
             "store_bytes": base.nbytes + pending.nbytes, "base_bytes": base.nbytes,
             "pending_bytes": pending.nbytes}
    return new, gen, pending, stats


def expand_items(task: LevelTask, index: int, rows, fps) -> tuple[list, dict]:
    """Expand a partition's frontier: ([(owner, ("cand", index, Batch))], statistics with the
    transitions generated and the transition predicates' hits)."""
    tp_active = np.array(task.tp_active or (False,), np.bool_)
    ex = expand(task.kernel(), rows, fps, tp_active)
    blocks = [(o, ("cand", index, b)) for o, b in split_by_owner(ex.succ, task.parts)]
    return blocks, {"generated": ex.generated, "tp": ex.tp_hits, "dom_tp": ex.dom_hits,
                    "expanded": int(fps.size)}


def step_part(task: LevelTask, index: int, items) -> tuple[list, dict]:
    """One level of partition ``index``: merge the candidates it received into its stores, then
    expand the states that were new. Returns the items to send, as (partition, item) pairs (its
    pending store to itself, a candidate block to each owner of some successor), and the
    statistics. The base store is not sent: it stays where it is until the next compaction."""
    t0 = time.perf_counter()
    new, gen, pending, stats = merge_items(task, items)
    t1 = time.perf_counter()
    blocks, xstats = expand_items(task, index, new.rows, new.fps)
    stats.update(xstats)
    stats.update(merge_seconds=t1 - t0, expand_seconds=time.perf_counter() - t1,
                 rss=peak_rss(), pid=os.getpid())
    return [(index, ("pending", gen, pending))] + blocks, stats


def compact_part(index: int, items) -> list:
    """A partition's new base: the fingerprints of its base and pending stores merged, one
    generation on. The pending store (still among the partition's items) is then older than
    the base and counts as empty; its parents stay where it is (``links_of``)."""
    gen, base, pending = _stores(items, np.uint8)
    if len(pending):
        fresh, pos = unseen(base, pending.fps)
        base = np.insert(base, pos[fresh], pending.fps[fresh])
    return [(index, ("keys", gen + 1, base))]


def links_of(items) -> list:
    """The pending stores among a partition's items: what a backend keeps of them when
    ``compact_part`` folds their fingerprints into the base, so that traces can still find
    the parents."""
    return [it for it in items if it[0] == "pending"]


def lookup_part(items, fps) -> dict:
    """fingerprint -> (parent fingerprint, action) from the pending stores among ``items``
    (the base holds fingerprints only)."""
    out = {}
    for it in items:
        if it[0] == "pending":
            out.update(lookup(it[2], fps))
    return out
