"""A level's candidate blocks exchanged as raw arrays in files, instead of through a shuffle.

The Spark engine's default exchange: level L's task for partition i writes each successor block
it sends to partition o as ``<store>/x<L+1>/<o>-<i>.blk`` (a header, then the rows, fingerprints,
parents and actions as they are in memory: no pickling, no JVM), and level L+1's task for o reads
the blocks addressed to it, in any order (the merge takes them in source order). Level L+1's
task also removes the inbox of level L, which no task reads again once level L+1 runs.

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

import os
import pickle
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from hwcheck.checker.engines.partition import Batch, Item, LevelTask, initial_part, step_part
from hwcheck.checker.search.stop import StopRule

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
            f.write(np.ascontiguousarray(a).data.cast("B"))
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


def read_inbox(store: str, level: int, to: int) -> list[Item]:
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


def step_via_inbox(task: LevelTask, index: int) -> dict[str, Any]:
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
            return pickle.load(f)
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
