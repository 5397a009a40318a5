"""A level's candidate blocks exchanged as raw arrays in files, instead of through a shuffle.

The Spark engine's default exchange: level L's task for partition i writes each successor block
it sends to partition o as ``<store>/x<L+1>/<o>-<i>-<piece>.blk`` (a header, the block's bucket
bounds, then the rows, fingerprints, parents and actions as they are in memory: no pickling,
no JVM), and level L+1's task for o reads the blocks addressed to it a slice of buckets at a
time (``BlockFile.read``: plain reads, no memory map, so what a slice read is freed with it)
and takes them in origin order. Level L+1's task also removes the inbox of level L, which no
task reads again once level L+1 runs.

One job can run many levels (``run_levels``): a task that finished level L writes its statistics
(``<store>/d<L>/<i>.stats``, the level's done mark), waits until every partition's are there,
and goes on to L+1 unless they say the run ends there (no new state, or a hit that stops it, as
the driver would decide) or the job's budget is spent (``Levels``). Every task reads the same
files, so all take the same decision. A task that runs again (a retry) finds its done marks and
takes those levels' statistics from them; a task that waits longer than ``Levels.patience`` for
the others (their executor lost, and no slot free to run them again) ends its job there, and
the next job starts from the least level every partition finished.

Every file is written under a temporary name and renamed into place, and its content depends
only on the levels below, so a task that runs twice (a retry after a lost executor) writes the
same files; a level's inputs stay until the next level, so a retried task finds them. The
folder must be one every executor reaches: local disk for a single machine (local[N], or a
standalone cluster on one machine), a shared filesystem across machines.
"""

from __future__ import annotations

import io
import os
import pickle
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from hwcheck.checker.engines.partition import (
    Batch,
    Block,
    Item,
    LevelTask,
    Origin,
    initial_part,
    step_part,
)
from hwcheck.checker.search.stop import StopRule

_HEADER = 5  # int64s: states, row width, row item size, action item size, buckets


def _folder(store: str, level: int) -> Path:
    return Path(store) / f"x{level:06d}"


def write_block(store: str, level: int, to: int, origin: Origin, block: Block) -> None:
    """``block`` into partition ``to``'s inbox of ``level``."""
    folder = _folder(store, level)
    folder.mkdir(exist_ok=True)  # not the store: a task outliving its run fails here
    source, piece = origin
    path = folder / f"{to:05d}-{source:05d}-{piece:06d}.blk"
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    b = block.batch
    head = np.array([len(b), b.rows.shape[1], b.rows.itemsize, b.acts.itemsize,
                     block.bounds.size - 1], np.int64)
    with open(tmp, "wb") as f:
        for a in (head, block.bounds.astype(np.int64), b.rows, b.fps, b.parents, b.acts):
            f.write(np.ascontiguousarray(a).data.cast("B"))
    os.replace(tmp, path)


class BlockFile:
    """A block of the inbox, read a run of buckets at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as f:
            head = np.fromfile(f, np.int64, _HEADER)
            n, width, row_size, act_size, nb = (int(x) for x in head)
            self.bounds = np.fromfile(f, np.int64, nb + 1)
        self.n, self.width = n, width
        self.rdt, self.adt = np.dtype(f"i{row_size}"), np.dtype(f"u{act_size}")
        self.at = 8 * (_HEADER + nb + 1)  # the rows' offset
        self.size = n * (width * row_size + 16 + act_size)
        self.file: io.FileIO | None = None  # open while a level reads it (``close``)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def __len__(self) -> int:
        return self.n

    @property
    def nbytes(self) -> int:
        return self.size

    def read(self, b0: int, b1: int) -> Batch:
        """Buckets b0..b1-1."""
        m = int(self.bounds[b1] - self.bounds[b0])
        out = Batch(np.empty((m, self.width), self.rdt), np.empty(m, np.uint64),
                    np.empty(m, np.uint64), np.empty(m, self.adt))
        self.read_into(b0, b1, out)
        return out

    def read_into(self, b0: int, b1: int, out: Batch) -> None:
        """Buckets b0..b1-1 read straight into ``out`` (as many entries, contiguous)."""
        lo = int(self.bounds[b0])
        if int(self.bounds[b1]) == lo:
            return
        n, w = self.n, self.width
        rsz, asz = self.rdt.itemsize, self.adt.itemsize
        at = self.at + n * w * rsz  # the fingerprints' offset
        if self.file is None:
            self.file = io.FileIO(self.path, "r")  # closed by close()
        f = self.file
        for offset, a in ((self.at + lo * w * rsz, out.rows), (at + 8 * lo, out.fps),
                          (at + 8 * n + 8 * lo, out.parents), (at + 16 * n + asz * lo, out.acts)):
            f.seek(offset)
            view = a.data.cast("B")  # the array's buffer, as bytes
            if f.readinto(view) != view.nbytes:
                raise OSError(f"{self.path}: shorter than its header says")


def read_inbox(store: str, level: int, to: int) -> list[Item]:
    """The ``("cand", origin, BlockFile)`` items addressed to partition ``to`` at ``level``."""
    folder = _folder(store, level)
    if not folder.is_dir():
        return []
    prefix = f"{to:05d}-"
    out: list[Item] = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith(prefix) and p.suffix == ".blk":
            source, piece = p.stem[len(prefix):].split("-")
            out.append(("cand", (int(source), int(piece)), BlockFile(p)))
    return out


def drop_inbox(store: str, level: int, to: int) -> None:
    folder = _folder(store, level)
    if folder.is_dir():
        for p in folder.glob(f"{to:05d}-*.blk"):
            p.unlink(missing_ok=True)


def step_via_inbox(task: LevelTask, index: int) -> dict[str, Any]:
    """Level ``task.level`` of partition ``index``: its inbox (at level 0, the initial state)
    merged and expanded by ``partition.step_part``, the successors written to their owners'
    inboxes of the next level. Returns the partition's statistics."""
    if task.level == 0:
        items = initial_part(task, index)
    else:
        items = read_inbox(task.store, task.level, index)
        drop_inbox(task.store, task.level - 1, index)
    def send(o: int, item: Item) -> None:
        block = item[2]
        assert isinstance(block, Block)
        write_block(task.store, task.level + 1, o, item[1], block)

    _, stats = step_part(task, index, items, send)
    return stats


@dataclass(frozen=True)
class Levels:
    """How far one job goes."""

    most: int = 1  # levels a job runs at most (1: one job a level)
    budget: float = 3.0  # seconds of work a job runs at most (the slowest partition's, summed)
    patience: float = 30.0  # seconds a task waits for the others, beyond twice its own level


def _done(store: str, level: int, index: int) -> Path:
    return Path(store) / f"d{level:06d}" / f"{index:05d}.stats"


def _write_done(store: str, level: int, index: int, stats: dict[str, Any]) -> None:
    path = _done(store, level, index)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(stats, f)
    os.replace(tmp, path)


def _read_done(store: str, level: int, index: int) -> dict[str, Any] | None:
    try:
        with open(_done(store, level, index), "rb") as f:
            loaded: dict[str, Any] | None = pickle.load(f)
            return loaded
    except FileNotFoundError:
        return None


def level_stats(store: str, level: int, parts: int,
                timeout: float) -> list[dict[str, Any]] | None:
    """Every partition's statistics of ``level``, once all are written; None after
    ``timeout`` seconds without them."""
    folder = _done(store, level, 0).parent
    pause, end = 0.0005, time.monotonic() + timeout
    while True:
        try:
            n = sum(1 for name in os.listdir(folder) if name.endswith(".stats"))
        except FileNotFoundError:
            n = 0
        if n >= parts:
            found = [_read_done(store, level, i) for i in range(parts)]
            done = [s for s in found if s is not None]
            if len(done) == parts:
                return done
        if time.monotonic() > end:
            return None
        time.sleep(pause)
        pause = min(2 * pause, 0.005)


def _stopping_hits(task: LevelTask, state: list[dict[str, Any]],
                   trans: list[dict[str, Any]] | None) -> bool:
    """Whether the driver stops the run once it has read the state predicates' hits of one
    level (``state``) and the transition predicates' hits of the level before (``trans``):
    the run's stop rule, asked with the kinds of those hits."""
    rule = task.rule or StopRule(first_hit=False)
    sk, tk = task.kinds
    kinds = ([sk[j] for s in state for j in s["sp"]] + ["domain" for s in state if s["dom_sp"]]
             + [tk[j] for s in trans or () for j in s["tp"]]
             + ["domain" for s in trans or () if s["dom_tp"]])
    return rule.after_level(sum(s["new"] for s in state), kinds)


def step_level(task: LevelTask, index: int) -> dict[str, Any]:
    """``step_via_inbox`` once per level: a level this partition finished before (a task run
    again) gives back its statistics."""
    done = _read_done(task.store, task.level, index)
    if done is not None:
        return done
    stats = step_via_inbox(task, index)
    _write_done(task.store, task.level, index, stats)
    return stats


def run_levels(task: LevelTask, index: int, levels: Levels) -> list[dict[str, Any]]:
    """Partition ``index``'s levels from ``task.level`` on, while every partition's statistics
    say the driver would go on (see the module's docstring): their statistics, one a level."""
    out: list[dict[str, Any]] = []
    before = None if task.level == 0 else \
        level_stats(task.store, task.level - 1, task.parts, levels.patience)
    work = 0.0
    while True:
        started = time.monotonic()
        out.append(step_level(task, index))
        if len(out) >= levels.most:
            return out
        wait = levels.patience + 2 * (time.monotonic() - started)
        now = level_stats(task.store, task.level, task.parts, wait)
        if now is None:
            return out
        work += max(s["merge_seconds"] + s["expand_seconds"] for s in now)
        if work >= levels.budget or _stopping_hits(task, now, before):
            return out
        before = now
        task = replace(task, level=task.level + 1)


def remove_inboxes(store: str) -> None:
    for pattern in ("x*", "d*"):
        for p in Path(store).glob(pattern):
            shutil.rmtree(p, ignore_errors=True)
