"""The visited set: fingerprints in an open-addressing table, and per-level parent records.

The table holds only 64-bit fingerprints (8 bytes a slot, at most 75% full). Parent pointers
are not in the table: each BFS level keeps, in fingerprint order, arrays of its states'
fingerprints, parent positions in the previous level and action instances (13 bytes a state), so
a trace is a walk back through the levels. Levels are separate arrays, so growing never copies
what earlier levels stored.
"""

from __future__ import annotations

import numpy as np

from hwcheck.checker.semantics.fingerprint import (table_insert, table_insert_exact, table_rehash,
                                                   table_rehash_exact)

MAX_LOAD = 0.75


class VisitedTable:
    def __init__(self, capacity: int = 1 << 16):
        cap = 1 << max(4, (capacity - 1).bit_length())
        self.table = np.zeros(cap, dtype=np.uint64)
        self.filled = 0

    @property
    def max_fill(self) -> int:
        return int(self.table.size * MAX_LOAD)

    @property
    def nbytes(self) -> int:
        return self.table.nbytes

    def grow(self) -> None:
        new = np.zeros(self.table.size * 2, dtype=np.uint64)
        table_rehash(self.table, new)
        self.table = new

    def add(self, fp: int) -> bool:
        if self.filled + 1 > self.max_fill:
            self.grow()
        new = bool(table_insert(self.table, self.table.size - 1, np.uint64(fp)))
        self.filled += new
        return new

    def __len__(self) -> int:
        return self.filled


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


def path_to(levels: list[Level], level: int, index: int) -> list[tuple[int, int]]:
    """The (action instance, fingerprint) steps from the initial state to state ``index`` of
    ``level``."""
    steps = []
    while level > 0:
        lv = levels[level]
        steps.append((int(lv.actions[index]), int(lv.fps[index])))
        index = int(lv.parents[index])
        level -= 1
    steps.reverse()
    return steps


class ExactTable(VisitedTable):
    """A visited set that keeps every state (``--exact``): the fingerprint table as before, plus
    the position of each slot's state in ``store``, so two states that share a fingerprint are
    both kept. Costs the state's row (the layout's stride) per state, on top of the table."""

    def __init__(self, stride: int, dtype, capacity: int = 1 << 16):
        super().__init__(capacity)
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
