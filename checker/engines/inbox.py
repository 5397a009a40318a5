"""A level's candidate blocks exchanged as raw arrays in files, instead of through a shuffle.

The Spark engine's default exchange: level L's task for partition i writes each successor block
it sends to partition o as ``<store>/x<L+1>/<o>-<i>.blk`` (a header, then the rows, fingerprints,
parents and actions as they are in memory: no pickling, no JVM), and level L+1's task for o reads
the blocks addressed to it, in any order (the merge takes them in source order). Level L+1's
task also removes the inbox of level L, which no task reads again once level L+1 runs.

Every file is written under a temporary name and renamed into place, and its content depends
only on the levels below, so a task that runs twice (a retry after a lost executor) writes the
same files; a level's inputs stay until the next level, so a retried task finds them. The
folder must be one every executor reaches: local disk for a single machine (local[N], or a
standalone cluster on one machine), a shared filesystem across machines.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from hwcheck.checker.engines.partition import Batch, LevelTask, initial_part, step_part

_HEADER = 4  # int64s: states, row width, row item size, action item size


def _folder(store: str, level: int) -> Path:
    return Path(store) / f"x{level:06d}"


def write_block(store: str, level: int, to: int, source: int, batch: Batch) -> None:
    """``batch`` into partition ``to``'s inbox of ``level``."""
    folder = _folder(store, level)
    folder.mkdir(exist_ok=True)  # not the store: a task outliving its run fails here
    path = folder / f"{to:05d}-{source:05d}.blk"
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    head = np.array([len(batch), batch.rows.shape[1], batch.rows.itemsize, batch.acts.itemsize],
                    np.int64)
    with open(tmp, "wb") as f:
        for a in (head, batch.rows, batch.fps, batch.parents, batch.acts):
            f.write(memoryview(np.ascontiguousarray(a)).cast("B"))
    os.replace(tmp, path)


def read_block(path: Path) -> Batch:
    """A block, mapped (no copy: the merge gathers from it)."""
    raw = np.memmap(path, np.uint8, mode="r")
    n, width, row_size, act_size = (int(x) for x in raw[:8 * _HEADER].view(np.int64))
    at = 8 * _HEADER
    rows = raw[at:at + n * width * row_size].view(np.dtype(f"i{row_size}")).reshape(n, width)
    at += n * width * row_size
    fps = raw[at:at + 8 * n].view(np.uint64)
    parents = raw[at + 8 * n:at + 16 * n].view(np.uint64)
    acts = raw[at + 16 * n:at + 16 * n + act_size * n].view(np.dtype(f"u{act_size}"))
    return Batch(rows, fps, parents, acts)


def read_inbox(store: str, level: int, to: int) -> list:
    """The ``("cand", source, Batch)`` items addressed to partition ``to`` at ``level``."""
    folder = _folder(store, level)
    if not folder.is_dir():
        return []
    prefix = f"{to:05d}-"
    return [("cand", int(p.stem[len(prefix):]), read_block(p))
            for p in sorted(folder.iterdir()) if p.name.startswith(prefix)
            and p.suffix == ".blk"]


def drop_inbox(store: str, level: int, to: int) -> None:
    folder = _folder(store, level)
    if folder.is_dir():
        for p in folder.glob(f"{to:05d}-*.blk"):
            p.unlink(missing_ok=True)


def step_via_inbox(task: LevelTask, index: int) -> dict:
    """Level ``task.level`` of partition ``index``: its inbox (at level 0, the initial state)
    merged and expanded by ``partition.step_part``, the successors written to their owners'
    inboxes of the next level. Returns the partition's statistics."""
    if task.level == 0:
        items = initial_part(task, index)
    else:
        items = read_inbox(task.store, task.level, index)
        drop_inbox(task.store, task.level - 1, index)
    out, stats = step_part(task, index, items)
    for o, item in out:
        write_block(task.store, task.level + 1, o, index, item[2])
    return stats


def remove_inboxes(store: str) -> None:
    for p in Path(store).glob("x*"):
        shutil.rmtree(p, ignore_errors=True)
