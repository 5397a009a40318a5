"""The visited set: fingerprints in an open-addressing table, and per-level parent records.

The table holds only 64-bit fingerprints (8 bytes a slot, at most 75% full). Parent pointers
are not in the table: each BFS level keeps, in fingerprint order, arrays of its states'
fingerprints, parent positions in the previous level and action instances (13 bytes a state), so
a trace is a walk back through the levels. Levels are separate arrays, so growing never copies
what earlier levels stored.
"""

from __future__ import annotations

import numpy as np

from hwcheck.checker.semantics.fingerprint import table_insert, table_rehash

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
