"""Checkpoints of a level source: written atomically at level boundaries, resumed exactly.

One implementation serves every source that checkpoints: the local engine (its ``Snapshot``,
``Checkpointer.write`` and ``load``, here) and the state graph (``graph/checkpoint.py``, over
``Checkpointer.save`` and ``read``). A checkpoint folder holds:

- ``levels/level-<d>.npz``: the arrays of BFS level d (the local engine: its parent records,
  fingerprints, parent positions and actions; the state graph: its states' fingerprints, first
  parents, actions and flags, and their transitions). A level never changes once found, so
  each is written once, to a temporary name and renamed.
- ``state-<n>/``: what changes between levels: ``meta.json`` (format version, the run's
  identity, counters, hits with their paths, which properties are still checked, elapsed
  time) and the source's arrays, one ``.npy`` each (the local engine: ``visited.npy``, the
  visited fingerprints in no particular order, so that a run resumes with any number of
  workers and lays them into its own tables, and ``front.npy``, the frontier's rows). It is
  written as ``state-<n>.tmp/``, flushed, and renamed.
- ``CURRENT``: the name of the last complete ``state-<n>``, replaced atomically after the rename.

What is on disk is checked before it is used: ``meta.json`` carries a BLAKE2b digest of every
file the checkpoint uses (each level file, each array) and one of its own content, and every
file is verified before a byte of it is read. A truncated or altered file, an edited counter,
a missing file: each is refused in one line naming it (exit 2), never resumed into a wrong
count. Hashing runs at about a gigabyte a second; a checkpoint hashes what it writes (each
level once), a resume what it reads.

A run killed at any moment, in the middle of a write included, leaves ``CURRENT`` naming a
complete state whose levels are all on disk; resuming continues from that level boundary with
the same visited set, frontier and canonical order, so it ends with the same counts and
byte-identical traces as a run never stopped. A checkpoint of another spec, other parameters,
another kernel, another search (the local engine's, the state graph's) or another format
version is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
from numpy.typing import DTypeLike

from hwcheck.checker.engines.visited import Level
from hwcheck.checker.search import faults
from hwcheck.checker.search.exploration import Hit

if TYPE_CHECKING:
    from hwcheck.checker.engines.spill import StoredLevel
    from hwcheck.checker.semantics.kernel import Kernel

FORMAT = 4  # 4: fingerprints as sums of word terms (3: digests of every file; 2: none; 1: the
# tables as they were)
# why a checkpoint of an earlier format cannot be resumed, beyond its number
BEFORE: dict[object, str] = {
    3: "its fingerprints are of the fingerprint function before decision 0021, not this run's"}


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: one line."""


def identity(kernel: Kernel) -> dict[str, Any]:
    spec = kernel.spec
    return {"format": FORMAT, "protocol": spec.source or spec.name,
            "params": dict(spec.params), "symmetry": kernel.symmetric, "kernel": kernel.key}


@dataclass
class Snapshot:
    """The local engine at a level boundary."""

    fingerprints: np.ndarray  # the visited set
    levels: list[Level | StoredLevel]  # the parent records of each level, in memory or on disk
    front: np.ndarray
    distinct: int
    generated: int
    depth: int
    hits: dict[str, Hit]
    checked: list[tuple[str, str]]
    state_active: np.ndarray
    trans_active: np.ndarray
    seconds: float


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _digest(data: bytes | memoryview) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _file_digest(path: Path) -> str:
    """The digest of a file, read 8 MiB at a time (just written: from the page cache)."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 23):
            h.update(chunk)
    return h.hexdigest()


def _write_file(path: Path, write: Callable[[BinaryIO], object]) -> str:
    """``write(f)`` into ``path``, flushed to disk; the file's digest."""
    with open(path, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    return _file_digest(path)


def _save_npy(path: Path, array: np.ndarray) -> str:
    return _write_file(path, lambda f: np.save(f, array))


def _meta_digest(meta: dict[str, Any]) -> str:
    """The digest of ``meta.json``'s content, its own ``digest`` field left out."""
    body = {k: v for k, v in meta.items() if k != "digest"}
    return _digest(json.dumps(body, sort_keys=True).encode())


def require_writable(folder: Path, option: str, levels: bool = True) -> None:
    """``folder`` (made if it is not there) and, with ``levels``, its ``levels`` folder take new
    files: each is tried with a file made and removed, so that a folder that cannot be written
    (read-only, not a folder, another user's) is one line before the exploration starts, not an
    error at the first checkpoint (or, for a work folder, the first file it takes)."""
    folder = Path(folder)
    try:
        for d in (folder, folder / "levels") if levels else (folder,):
            d.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=".probe-", dir=d)
            os.close(fd)
            os.unlink(probe)
    except OSError as e:
        raise CheckpointError(f"{option} {folder} cannot be written: "
                              f"{e.strerror or e}") from None


class Checkpointer:
    """Writes checkpoints to ``folder`` every ``every`` seconds (0: at every level): the files
    of any level source (``save``), the local engine's snapshots (``write``)."""

    def __init__(self, folder: Path, every: float, ident: dict[str, Any],
                 levels_on_disk: int = 0, seq: int = 0,
                 level_digests: list[str] | None = None, option: str = "--checkpoint") -> None:
        self.folder = Path(folder)
        self.level_digests = list(level_digests or [])  # of levels/level-<d>.npz, by d
        self.every = every
        self.ident = ident
        self.levels_on_disk = levels_on_disk
        self.seq = seq
        self.last = time.monotonic()
        require_writable(self.folder, option)

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.every

    def write(self, snap: Snapshot) -> None:
        """The local engine at a level boundary."""
        self.save(len(snap.levels), lambda d: {"fps": snap.levels[d].fps,
                                               "parents": snap.levels[d].parents,
                                               "actions": snap.levels[d].actions},
                  {"visited": snap.fingerprints, "front": snap.front},
                  {"filled": int(snap.fingerprints.size), "distinct": snap.distinct,
                   "generated": snap.generated, "depth": snap.depth, "seconds": snap.seconds,
                   "checked": snap.checked, "state_active": snap.state_active.tolist(),
                   "trans_active": snap.trans_active.tolist(), "hits": hits_json(snap.hits)},
                  snap.depth)

    def save(self, nlevels: int, level: Callable[[int], Mapping[str, np.ndarray]],
             arrays: Mapping[str, np.ndarray], fields: dict[str, Any], depth: int) -> None:
        """A checkpoint of a level source: its levels 0..nlevels-1 (``level(d)``: the arrays of
        level d, which never change once found: only those not yet on disk are asked for and
        written, each once), the arrays that change between levels (``<name>.npy`` in the new
        ``state-<n>/``) and ``fields`` (into its ``meta.json``, beside the run's identity).
        ``depth``: the search's, for the fault points."""
        levels_dir = self.folder / "levels"
        for d in range(self.levels_on_disk, nlevels):
            tmp = levels_dir / f"level-{d}.tmp.npz"
            arrs: dict[str, Any] = dict(level(d))
            digest = _write_file(tmp, lambda f: np.savez(f, **arrs))  # noqa: B023 - used here
            os.replace(tmp, levels_dir / f"level-{d}.npz")
            del self.level_digests[d:]
            self.level_digests.append(digest)
        self.levels_on_disk = nlevels
        self.seq += 1
        name = f"state-{self.seq}"
        tmp = self.folder / f"{name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        digests: dict[str, Any] = {"levels": self.level_digests[:nlevels]}
        for i, (key, array) in enumerate(arrays.items()):
            if i == 1:
                faults.at("checkpoint-write", depth)  # as if killed halfway through the write
            digests[f"{key}.npy"] = _save_npy(tmp / f"{key}.npy", array)
        meta = {**self.ident, "levels": nlevels, **fields, "digests": digests}
        meta["digest"] = _meta_digest(meta)
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
        faults.at("after-checkpoint", depth)
        faults.at("pause-after-checkpoint", depth)


def hits_json(hits: Mapping[str, Hit]) -> list[list[Any]]:
    """The hits found so far, with their paths, as ``meta.json`` holds them."""
    return [[h.name, h.kind, h.length, h.path] for h in hits.values()]


def hits_of(rows: list[list[Any]]) -> dict[str, Hit]:
    """``hits_json``'s hits back."""
    return {n: Hit(n, k, length, [tuple(step) for step in path] if path is not None else None)
            for n, k, length, path in rows}


# the parts of a run's identity a checkpoint must share, with the words that name them
IDENTITY = (("format", "format version"), ("protocol", "spec"), ("params", "parameters"),
            ("symmetry", "symmetry setting (--symmetry)"), ("kernel", "kernel"),
            ("search", "search"), ("graph", "state graph (its predicates and what it keeps)"))
DEFAULTS = {"symmetry": False, "search": "local engine"}  # of checkpoints written before them


@dataclass
class Stored:
    """A checkpoint found in ``folder``: its ``meta.json`` (checked against its digest and the
    run's identity); every file it names is checked against its digest as it is read."""

    folder: Path
    name: str  # of the current ``state-<n>``
    meta: dict[str, Any]

    def _checked(self, rel: str, digest: str) -> Path:
        """``folder/rel``, once its digest is the one meta.json records."""
        try:
            got = _file_digest(self.folder / rel)
        except OSError as e:
            raise CheckpointError(f"--resume {self.folder}: {rel} cannot be read "
                                  f"({e.strerror or e})") from None
        if got != digest:
            raise CheckpointError(f"--resume {self.folder}: {rel} is damaged (its content "
                                  "does not match the digest meta.json records)")
        return self.folder / rel

    def level(self, d: int) -> dict[str, np.ndarray]:
        """The arrays of level ``d``."""
        digests = self.meta["digests"]["levels"]
        if len(digests) != self.meta["levels"]:
            raise ValueError("meta.json lists a digest for another number of levels")
        with np.load(self._checked(f"levels/level-{d}.npz", digests[d])) as z:
            return {key: z[key] for key in z.files}

    def array(self, key: str) -> np.ndarray:
        """The array ``key`` of the current state."""
        a: np.ndarray = np.load(self._checked(f"{self.name}/{key}.npy",
                                              self.meta["digests"][f"{key}.npy"]))
        return a

    def reader(self, read: Callable[[Stored], Any]) -> Any:
        """``read(self)``, with what is missing or malformed in the checkpoint one line."""
        try:
            return read(self)
        except CheckpointError:
            raise
        except (OSError, ValueError, KeyError, TypeError, IndexError,
                zipfile.BadZipFile) as e:
            raise CheckpointError(f"--resume {self.folder}: the checkpoint is damaged "
                                  f"({e})") from None

    def checkpointer(self, ident: dict[str, Any]) -> Checkpointer:
        """A checkpointer that goes on writing here (for the run of ``ident``)."""
        return Checkpointer(self.folder, 0.0, ident, self.meta["levels"],
                            int(self.name.split("-")[1]),
                            self.meta["digests"]["levels"], option="--resume")


def read(folder: Path, ident: dict[str, Any]) -> Stored:
    """The checkpoint in ``folder``, refused in one line unless it is of the same spec,
    parameters, kernel, symmetry setting, search and format as ``ident``."""
    folder = Path(folder)
    try:
        name = (folder / "CURRENT").read_text().strip()
        meta = json.loads((folder / name / "meta.json").read_text())
    except (OSError, ValueError):
        raise CheckpointError(f"--resume {folder}: no complete checkpoint there") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"--resume {folder}: {name}/meta.json is damaged")
    if meta.get("format") == FORMAT and meta.get("digest") != _meta_digest(meta):
        raise CheckpointError(f"--resume {folder}: {name}/meta.json is damaged (its content "
                              "does not match its digest)")
    for key, what in IDENTITY:
        if meta.get(key, DEFAULTS.get(key)) != ident.get(key, DEFAULTS.get(key)):
            why = BEFORE.get(meta.get("format"), "") if key == "format" else ""
            raise CheckpointError(f"--resume {folder}: the checkpoint is of another {what} "
                                  f"({meta.get(key, DEFAULTS.get(key))!r}, this run: "
                                  f"{ident.get(key, DEFAULTS.get(key))!r})"
                                  + (f": {why}" if why else ""))
    return Stored(folder, name, meta)


def load(folder: Path, ident: dict[str, Any],
         act_dtype: DTypeLike) -> tuple[Snapshot, Checkpointer]:
    """The local engine's snapshot in ``folder`` (refused unless it is of the same spec,
    parameters, kernel and format) and a checkpointer that goes on writing there."""
    stored = read(folder, ident)
    meta = stored.meta

    def snapshot(st: Stored) -> Snapshot:
        levels: list[Level | StoredLevel] = []
        for d in range(meta["levels"]):
            z = st.level(d)
            levels.append(Level(z["fps"], z["parents"], z["actions"].astype(act_dtype)))
        fps = st.array("visited")
        if fps.dtype != np.uint64 or fps.ndim != 1 or fps.size != meta["filled"]:
            raise ValueError("visited.npy is not the visited set meta.json counts")
        front = st.array("front")
        return Snapshot(fps, levels, front, meta["distinct"], meta["generated"],
                        meta["depth"], hits_of(meta["hits"]),
                        [tuple(c) for c in meta["checked"]],
                        np.array(meta["state_active"], np.bool_),
                        np.array(meta["trans_active"], np.bool_), meta["seconds"])

    loaded: tuple[Snapshot, Checkpointer] = stored.reader(
        lambda st: (snapshot(st), st.checkpointer(ident)))
    return loaded
