"""The visited set: fingerprints in an open-addressing table, and per-level parent records.

The plain set (``VisitedTable``) holds only 64-bit fingerprints (8 bytes a slot, 70% to 87.5%
full). Parent pointers are not in the table: each BFS level keeps, in fingerprint order, arrays
of its states' fingerprints, parent positions in the previous level and action instances (13
bytes a state), so a trace is a walk back through the levels. Levels are separate arrays, so
growing never copies what earlier levels stored.

The set with ids (``IdTable``, the state graph's) gives each fingerprint the id of its state
(16 bytes a slot, at most half full): a transition names its destination by id. Both grow in
place inside an address range reserved for the machine's memory once large (``grow_words``), and
give its pages back when done (``free_pages``); their compiled halves differ in layout
(``fingerprint.py``'s ordered table, ``idtable.py``'s pairs; decision record 0012).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from hwcheck.checker.engines import idtable
from hwcheck.checker.semantics.fingerprint import (
    TAIL,
    table_fill,
    table_fingerprints,
    table_grow,
    table_insert,
    table_insert_exact,
    table_rehash_exact,
    table_room,
)
from hwcheck.checker.semantics.signatures import DedupArgs, ExactArgs

MAX_LOAD = 0.875  # fingerprints per slot at most; after growing, at least MAX_LOAD / GROWTH
GROWTH = 1.25
SMALL = 1 << 22  # slots (32 MiB): a smaller table doubles instead (fewer grows, little memory)
RESERVE_FROM = 1 << 20  # slots: a table this large grows inside a reserved address range
Fresh = Callable[[np.ndarray], None]  # told of a reserved range's words about to be written
MAP_NORESERVE = 0x4000  # Linux: address space only, no memory committed until pages are used


def reserve(slots: int, huge: bool = True) -> np.ndarray | None:
    """A zeroed uint64 array of ``slots`` slots over address space reserved but not committed:
    only the pages written count against memory, on 2 MiB pages (``huge``) where the system
    gives them. None where that is not possible. (The state graph's id table and transitions
    grow in one too.)"""
    try:
        mem = mmap.mmap(-1, slots * 8, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                        | MAP_NORESERVE)
    except (OSError, ValueError, OverflowError):
        return None
    if huge and hasattr(mmap, "MADV_HUGEPAGE"):  # 2 MiB pages: a probe's page lookup hits the TLB
        try:
            mem.madvise(mmap.MADV_HUGEPAGE)
        except OSError:
            pass
    return np.frombuffer(mem, np.uint64)


def free_pages(a: np.ndarray) -> None:
    """Give back every page of the anonymous mapping under ``a`` (a ``reserve``d range): its
    contents read as zeros after."""
    base: Any = a
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    if isinstance(base, mmap.mmap):
        base.madvise(mmap.MADV_DONTNEED)


def grow_words(table: np.ndarray, mem: np.ndarray | None, words: int, reserve_from: int,
               fresh: Fresh | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """A table's words (uint64 ``table``, the start of the reserved range ``mem`` or not) in
    an array of ``words`` words, zeros after them, and the reserved range that array starts:
    in place in ``mem`` while it has room (nothing copied, only the pages written count); else,
    from ``reserve_from`` words on, at the start of a range reserved for the machine's memory
    (the words copied once); else in a fresh zeroed array (copied). ``fresh``: given the words
    of a reserved range never written yet before the caller writes them (the state graph's
    workers back them together). The caller re-lays its keys in the larger array."""
    if mem is None or words > mem.size:
        mem = reserve(max(words, physical_words())) if words >= reserve_from else None
        if mem is None:
            out = np.zeros(words, np.uint64)
            out[:table.size] = table
            return out, None
        mem[:table.size] = table
    if fresh is not None:
        fresh(mem[table.size:words])
    return mem[:words], mem


def physical_words() -> int:
    """The machine's memory in 8-byte words (the size of a reserved range)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 8
    except (ValueError, OSError, AttributeError):
        return 1 << 32


class Visited(Protocol):
    """What every visited set gives the level sources: the fingerprint table
    (``VisitedTable``), the exact table (``ExactTable``), the tables split between workers
    (``parallel.PartitionedTable``), the table with ids (``IdTable``, the state graph's). (A
    partition's visited set on disk, ``runs.Runs``, lives in its own process and is merged a
    level at a time: it is no table.)"""

    def fingerprints(self) -> np.ndarray: ...
    def __len__(self) -> int: ...
    @property
    def nbytes(self) -> int: ...


class Expandable(Visited, Protocol):
    """A visited set the kernel expands against directly (one worker)."""

    def room(self, mod: Any) -> int: ...
    def expand(self, mod: Any, args: dict[str, Any]) -> tuple[int, int, int]: ...
    def make_room(self, more: int) -> None: ...


class VisitedTable:
    """The visited fingerprints: ordered linear probing (``fingerprint.table_insert``) in an
    array of ``cap + TAIL`` slots of 8 bytes, at most ``MAX_LOAD`` full. It grows by ``GROWTH``
    in place: a large table lives at the start of an address range reserved for the machine's
    whole memory, so growing writes the new slots and moves keys up, and never holds two
    copies (the memory a run needs is the final table's, not 1.5 to 3 times it)."""

    def __init__(self, capacity: int = 1 << 16):
        self.cap = max(16, int(capacity))
        self.mem: np.ndarray | None = None  # the reserved range, once the table is large
        self.table = np.zeros(self.cap + TAIL, dtype=np.uint64)
        self.filled = 0

    @property
    def max_fill(self) -> int:
        return int(self.cap * MAX_LOAD)

    @property
    def nbytes(self) -> int:
        return self.table.nbytes

    def grow(self, cap: int | None = None) -> None:
        factor = 2 if self.cap < SMALL else GROWTH
        new_cap = max(int(cap or 0), int(self.cap * factor) + 1)
        while True:
            table, self.mem = grow_words(self.table, self.mem, new_cap + TAIL, RESERVE_FROM)
            if table_grow(table, self.cap, new_cap):
                self.table, self.cap = table, new_cap
                return
            new_cap = int(new_cap * GROWTH) + 1  # a run reached the end: more room

    def make_room(self, more: int, end: int | None = None) -> None:
        """Grow until ``more`` inserts fit under the fill limit, with ``end`` (default
        ``more``) free slots at the table's end, so that ``end`` inserts cannot reach its
        last slot."""
        end = more if end is None else end
        while self.filled + more > self.max_fill or not table_room(self.table, end):
            self.grow(int((self.filled + more) / MAX_LOAD) + 1)

    def room(self, mod: Any) -> int:
        """The most successors one call of the kernel's expansion may add."""
        return int(mod.ROOM)

    def expand(self, mod: Any, args: dict[str, Any]) -> tuple[int, int, int]:
        """One call of the kernel's ``expand_dedup`` against this table (``args``: the rest of
        ``DedupArgs``): (next row, successors written, transitions generated)."""
        i, wrote, self.filled, gen = mod.expand_dedup(*DedupArgs(
            table=self.table, max_fill=self.max_fill, filled=self.filled, **args))
        return i, wrote, gen

    def add(self, fp: int) -> bool:
        self.make_room(1)
        new = bool(table_insert(self.table, self.cap, np.uint64(fp)))
        self.filled += new
        return new

    def fingerprints(self) -> np.ndarray:
        """Every fingerprint in the table (in table order)."""
        fps: np.ndarray = table_fingerprints(self.table, self.filled)
        return fps

    @classmethod
    def of(cls, fps: np.ndarray) -> VisitedTable:
        """A table holding the distinct fingerprints ``fps``."""
        t = cls(max(16, int(fps.size / MAX_LOAD * (1 + GROWTH) / 2) + 1))
        while not table_fill(t.table, t.cap, fps):  # (never, short of a broken hash)
            t = cls(int(t.cap * GROWTH) + 1)
        t.filled = int(fps.size)
        return t

    def __len__(self) -> int:
        return self.filled


ID_LOAD = 0.5  # the set with ids: fingerprints per slot at most (linear probing, pairs)


class IdTable:
    """The visited fingerprints with an id each (the state graph's fingerprint -> id table):
    ``tab`` holds (fingerprint, id) pairs in a power-of-two number of slots, at most
    ``ID_LOAD`` full (``idtable.py``: the graph kernel gives ids there, a block of successors at
    a time). It doubles in place: once large, at the start of an address range reserved for
    the machine's memory (``grow_words``, as ``VisitedTable``), so the fresh half is the only new
    memory."""

    def __init__(self, slots: int = 1 << 12):
        self.tab = idtable.new_table(slots)
        self.mem: np.ndarray | None = None  # the reserved range, once the table is large

    @property
    def slots(self) -> int:
        return self.tab.size // 2

    @property
    def mask(self) -> int:
        return self.slots - 1

    @property
    def max_fill(self) -> int:
        return int(self.slots * ID_LOAD)

    @property
    def nbytes(self) -> int:
        return self.tab.nbytes

    def grow(self, fresh: Fresh | None = None) -> None:
        """Twice the slots (``fresh``: as ``grow_words``'s)."""
        slots = self.slots
        self.tab, self.mem = grow_words(self.tab, self.mem, 4 * slots, 2 * RESERVE_FROM, fresh)
        idtable.table_double(self.tab, slots)

    def make_room(self, n: int, fresh: Fresh | None = None) -> None:
        """Grow until ``n`` fingerprints fit under the fill limit."""
        while n > self.max_fill:
            self.grow(fresh)

    def fill(self, fps: np.ndarray, first: int = 0) -> None:
        """Put the distinct ``fps`` (none in the table yet) into it with the ids first,
        first + 1, ... (the initial states; a resumed graph's states back under their ids)."""
        self.make_room(len(self) + fps.size)
        idtable.table_fill(self.tab, self.mask, fps, first)

    def number(self, fps: np.ndarray, first: int) -> None:
        """Give ``fps`` (all in the table) the ids first, first + 1, ..."""
        idtable.table_number(self.tab, self.mask, fps, first)

    def fingerprints(self) -> np.ndarray:
        """Every fingerprint in the table (in table order)."""
        keys = self.tab[0::2]
        kept: np.ndarray = keys[keys != 0]
        return kept

    def __len__(self) -> int:
        return int(np.count_nonzero(self.tab[0::2]))

    def release(self) -> None:
        """Its pages given back (a large table's; it reads as empty after)."""
        if self.mem is not None:
            free_pages(self.mem)


class Level:
    """The states of one BFS level, in fingerprint order."""

    __slots__ = ("fps", "parents", "actions")

    def __init__(self, fps: np.ndarray, parents: np.ndarray, actions: np.ndarray):
        self.fps = fps
        self.parents = parents
        self.actions = actions

    def __len__(self) -> int:
        return self.fps.size

    @property
    def nbytes(self) -> int:
        return self.fps.nbytes + self.parents.nbytes + self.actions.nbytes

    def entry(self, i: int) -> tuple[int, int, int]:
        """(fingerprint, parent position, action) of state i."""
        return int(self.fps[i]), int(self.parents[i]), int(self.actions[i])


def path_to(levels: list[Any], level: int, index: int) -> list[tuple[int, int | None]]:
    """The (action instance, fingerprint) steps from the initial state to state ``index`` of
    ``level``."""
    steps = []
    while level > 0:
        fp, parent, action = levels[level].entry(index)
        steps.append((action, fp))
        index = parent
        level -= 1
    steps.reverse()
    return steps


class ExactTable:
    """A visited set that keeps every state (``--exact``): the fingerprint table as before, plus
    the position of each slot's state in ``store``, so two states that share a fingerprint are
    both kept. Costs the state's row (the layout's stride) per state, on top of the table."""

    def __init__(self, stride: int, dtype: Any, capacity: int = 1 << 16):
        cap = 1 << max(4, (capacity - 1).bit_length())
        self.table = np.zeros(cap, dtype=np.uint64)
        self.filled = 0
        self.slots = np.zeros(self.table.size, np.int64)
        self.store = np.empty((max(1024, capacity), stride), dtype)
        self.nstored = 0

    @property
    def nbytes(self) -> int:
        return self.table.nbytes + self.slots.nbytes + self.store[:self.nstored].nbytes

    def grow(self) -> None:
        new = np.zeros(self.table.size * 2, dtype=np.uint64)
        new_slots = np.zeros(new.size, np.int64)
        table_rehash_exact(self.table, self.slots, new, new_slots)
        self.table, self.slots = new, new_slots

    @property
    def max_fill(self) -> int:
        return int(self.table.size * 0.75)

    def __len__(self) -> int:
        return self.filled

    def fingerprints(self) -> np.ndarray:
        kept: np.ndarray = self.table[self.table != 0]
        return kept

    def room(self, mod: Any) -> int:
        return int(mod.NINST)  # one row at a time

    def expand(self, mod: Any, args: dict[str, Any]) -> tuple[int, int, int]:
        """One call of the kernel's ``expand_exact`` against this table and its store."""
        i, wrote, self.filled, gen, self.nstored = mod.expand_exact(*ExactArgs(
            table=self.table, max_fill=self.max_fill, filled=self.filled, **args,
            slots=self.slots, store=self.store, nstored=self.nstored))
        return i, wrote, gen

    def make_room(self, more: int) -> None:
        """Grow the table and the store until ``more`` new states fit."""
        if self.filled + more > self.max_fill:
            self.grow()
        if self.nstored + more > self.store.shape[0]:
            self.grow_store()

    def grow_store(self) -> None:
        bigger = np.empty((self.store.shape[0] * 2, self.store.shape[1]), self.store.dtype)
        bigger[:self.nstored] = self.store[:self.nstored]
        self.store = bigger

    def add_row(self, fp: int, row: np.ndarray) -> bool:
        if self.filled + 1 > self.max_fill:
            self.grow()
        if self.nstored + 1 > self.store.shape[0]:
            self.grow_store()
        new = bool(table_insert_exact(self.table, self.slots, self.table.size - 1,
                                      np.uint64(fp), row, self.store, self.nstored))
        if new:
            self.store[self.nstored] = row
            self.nstored += 1
            self.filled += 1
        return new
