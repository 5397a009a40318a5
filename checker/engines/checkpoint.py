"""Checkpoints of the local engine: written atomically at level boundaries, resumed exactly.

A checkpoint folder holds:

- ``levels/level-<d>.npz``: the parent records of BFS level d (fingerprints, parent positions,
  actions). A level never changes once found, so each is written once, to a temporary name and
  renamed.
- ``state-<n>/``: what changes between levels: ``meta.json`` (format version, the spec's
  identity, counters, hits with their paths, which properties are still checked, elapsed
  time), ``visited.npy`` (the visited fingerprints, in no particular order: a run resumes
  with any number of workers and lays them into its own tables) and ``front.npy``
  (the frontier's rows). It is written as ``state-<n>.tmp/``, flushed, and renamed.
- ``CURRENT``: the name of the last complete ``state-<n>``, replaced atomically after the rename.

A run killed at any moment, in the middle of a write included, leaves ``CURRENT`` naming a
complete state whose levels are all on disk; resuming continues from that level boundary with
the same visited set, frontier and canonical order, so it ends with the same counts and
byte-identical traces as a run never stopped. A checkpoint of another spec, other parameters,
another kernel or another format version is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hwcheck.checker.engines.visited import Level
from hwcheck.checker.search.exploration import Hit

FORMAT = 2  # 2: the visited set as a fingerprint array (1: the tables as they were)
# Fault injection for tests: HWCHECK_FAULT="checkpoint-write:D" kills the process (SIGKILL) in
# the middle of writing the checkpoint at depth D, "after-checkpoint:D" right after it.
FAULT = "HWCHECK_FAULT"


def _fault(point: str, depth: int) -> None:
    if os.environ.get(FAULT) == f"{point}:{depth}":
        os.kill(os.getpid(), signal.SIGKILL)


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: one line."""


def identity(kernel) -> dict:
    spec = kernel.spec
    return {"format": FORMAT, "protocol": spec.source or spec.name,
            "params": dict(spec.params), "symmetry": kernel.symmetric, "kernel": kernel.key}


@dataclass
class Snapshot:
    """The local engine at a level boundary."""

    fingerprints: np.ndarray  # the visited set
    levels: list
    front: np.ndarray
    distinct: int
    generated: int
    depth: int
    hits: dict
    checked: list
    state_active: np.ndarray
    trans_active: np.ndarray
    seconds: float


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as f:
        np.save(f, array)
        f.flush()
        os.fsync(f.fileno())


class Checkpointer:
    """Writes checkpoints to ``folder`` every ``every`` seconds (0: at every level)."""

    def __init__(self, folder: Path, every: float, ident: dict, levels_on_disk: int = 0,
                 seq: int = 0):
        self.folder = Path(folder)
        self.every = every
        self.ident = ident
        self.levels_on_disk = levels_on_disk
        self.seq = seq
        self.last = time.monotonic()
        try:
            (self.folder / "levels").mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CheckpointError(f"--checkpoint {folder} cannot be written: "
                                  f"{e.strerror or e}") from None

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.every

    def write(self, snap: Snapshot) -> None:
        levels_dir = self.folder / "levels"
        for d in range(self.levels_on_disk, len(snap.levels)):
            lv = snap.levels[d]
            tmp = levels_dir / f"level-{d}.tmp.npz"
            with open(tmp, "wb") as f:
                np.savez(f, fps=lv.fps, parents=lv.parents, actions=lv.actions)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, levels_dir / f"level-{d}.npz")
        self.levels_on_disk = len(snap.levels)
        self.seq += 1
        name = f"state-{self.seq}"
        tmp = self.folder / f"{name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        _save_npy(tmp / "visited.npy", snap.fingerprints)
        _fault("checkpoint-write", snap.depth)  # as if killed halfway through the write
        _save_npy(tmp / "front.npy", snap.front)
        meta = {**self.ident, "levels": len(snap.levels), "filled": int(snap.fingerprints.size),
                "distinct": snap.distinct, "generated": snap.generated, "depth": snap.depth,
                "seconds": snap.seconds, "checked": snap.checked,
                "state_active": snap.state_active.tolist(),
                "trans_active": snap.trans_active.tolist(),
                "hits": [[h.name, h.kind, h.length, h.path] for h in snap.hits.values()]}
        with open(tmp / "meta.json", "w") as f:
            json.dump(meta, f)
            f.flush()
            os.fsync(f.fileno())
        _fsync_dir(tmp)
        os.replace(tmp, self.folder / name)
        cur = self.folder / "CURRENT.tmp"
        cur.write_text(name + "\n")
        os.replace(cur, self.folder / "CURRENT")
        _fsync_dir(self.folder)
        for old in self.folder.glob("state-*"):
            if old.name != name:
                shutil.rmtree(old, ignore_errors=True)
        self.last = time.monotonic()
        _fault("after-checkpoint", snap.depth)


def load(folder: Path, ident: dict, act_dtype) -> tuple[Snapshot, Checkpointer]:
    """The snapshot in ``folder`` (refused unless it is of the same spec, parameters, kernel
    and format) and a checkpointer that goes on writing there."""
    folder = Path(folder)
    try:
        name = (folder / "CURRENT").read_text().strip()
        meta = json.loads((folder / name / "meta.json").read_text())
    except (OSError, ValueError):
        raise CheckpointError(f"--resume {folder}: no complete checkpoint there") from None
    for key, what in (("format", "format version"), ("protocol", "spec"),
                      ("params", "parameters"), ("symmetry", "symmetry setting (--symmetry)"),
                      ("kernel", "kernel")):
        if meta.get(key, False if key == "symmetry" else None) != ident[key]:
            raise CheckpointError(f"--resume {folder}: the checkpoint is of another {what} "
                                  f"({meta.get(key)!r}, this run: {ident[key]!r})")
    try:
        levels = []
        for d in range(meta["levels"]):
            with np.load(folder / "levels" / f"level-{d}.npz") as z:
                levels.append(Level(z["fps"], z["parents"], z["actions"].astype(act_dtype)))
        fps = np.load(folder / name / "visited.npy")
        if fps.dtype != np.uint64 or fps.ndim != 1 or fps.size != meta["filled"]:
            raise ValueError("visited.npy is not the visited set meta.json counts")
        front = np.load(folder / name / "front.npy")
    except (OSError, ValueError, KeyError) as e:
        raise CheckpointError(f"--resume {folder}: the checkpoint is damaged ({e})") from None
    hits = {n: Hit(n, k, length, [tuple(step) for step in path] if path is not None else None)
            for n, k, length, path in meta["hits"]}
    snap = Snapshot(fps, levels, front, meta["distinct"], meta["generated"],
                    meta["depth"], hits, [tuple(c) for c in meta["checked"]],
                    np.array(meta["state_active"], np.bool_),
                    np.array(meta["trans_active"], np.bool_), meta["seconds"])
    seq = int(name.split("-")[1])
    return snap, Checkpointer(folder, 0.0, ident, len(levels), seq)
