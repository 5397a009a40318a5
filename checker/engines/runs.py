"""A partition's visited set on disk: sorted runs of fingerprints, merged level by level.

As TLC's disk-based fingerprint set, a partition keeps nothing of its visited set in memory.
Its folder (``<store>/p<index>``) holds:

- per BFS level L, the states the partition found at L, sorted by fingerprint, in three flat
  files: ``L<L>.fps`` (uint64), ``L<L>.par`` (their canonical parents' fingerprints, uint64) and
  ``L<L>.act`` (action instances): 17 (or 18) bytes a state, written once, read only to rebuild
  a trace;
- merged runs ``R<lo>-<hi>.fps``: the fingerprints of levels lo..hi in one sorted file.

The visited check of level L reads the *cover* of levels 0..L-1: the fewest runs (merged runs
or level files) that hold exactly those levels. After a level is written, the last runs of the
cover are merged while the one before is at most ``MERGE_RATIO`` times the size of the last
(a log-structured merge: each fingerprint is rewritten O(log n) times, and the cover holds
O(log n) runs). Runs are read a chunk at a time (8 MiB: the visited check reads only the
range of fingerprints it asks about) and merged by a streaming numba merge, so the process's
memory does not grow with the visited set; only the page cache does. A level is written as it
is found, a slice at a time (``level_writer``).

Every write is a temporary file renamed into place, and a level file's content depends only on
the levels below it: a task that runs again (a retry, a recomputation after a lost executor)
rewrites identical files, and a level's cover never includes the level itself or later ones,
so re-running an old level sees the visited set as it was then. Level files are never removed
while the run lasts; a merged run is removed once a larger one holds it (a reader that loses
the race lists the folder again).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numba import njit
from numpy.typing import DTypeLike

from hwcheck.checker.engines.fpsort import mark_members

# merge the last two runs while the one before is at most this many times the last
MERGE_RATIO = 2.0
_LEVEL = re.compile(r"L(\d+)\.fps$")
_RUN = re.compile(r"R(\d+)-(\d+)\.fps$")


MERGE_CHUNK = 1 << 20  # fingerprints a merge writes at a time (8 MiB)


class _Chunks:
    """A sorted run read forward a chunk at a time (no memory map: what was read is freed),
    from its path or an open file (left open)."""

    def __init__(self, path: Path | BinaryIO, start: int = 0, stop: int | None = None) -> None:
        self.own = isinstance(path, Path)
        self.f = open(path, "rb") if isinstance(path, Path) else path  # noqa: SIM115
        size = os.fstat(self.f.fileno()).st_size // 8
        self.pos, self.stop = start, size if stop is None else min(stop, size)
        self.buf = np.empty(0, np.uint64)
        self.i = 0
        self.next()

    def next(self) -> None:
        """The next chunk into ``buf`` (empty at the end)."""
        n = min(MERGE_CHUNK, self.stop - self.pos)
        if n <= 0:
            self.buf = np.empty(0, np.uint64)
        else:
            self.f.seek(8 * self.pos)
            self.buf = np.fromfile(self.f, np.uint64, n)
            self.pos += n
        self.i = 0

    @property
    def last(self) -> bool:
        return self.pos >= self.stop

    def close(self) -> None:
        if self.own:
            self.f.close()


@njit(cache=True, nogil=True)
def _merge_chunks(a: np.ndarray, b: np.ndarray, i: int, j: int, a_last: bool, b_last: bool,
                  out: np.ndarray) -> tuple[int, int, int]:  # pragma: no cover - compiled
    """The next ``out.size`` (at most) of two sorted, disjoint uint64 runs merged, from chunks
    ``a[i:]`` and ``b[j:]``: (the new i, the new j, how many were written). Stops when a chunk
    runs out that is not its run's last (``a_last``, ``b_last``): the caller reads the next."""
    k, m = 0, out.size
    na, nb = a.size, b.size
    while k < m:
        if i < na and j < nb:
            if a[i] < b[j]:
                out[k] = a[i]
                i += 1
            else:
                out[k] = b[j]
                j += 1
        elif i < na and b_last:
            out[k] = a[i]
            i += 1
        elif j < nb and a_last:
            out[k] = b[j]
            j += 1
        else:
            break
        k += 1
    return i, j, k


def merge_files(a: Path, b: Path, out: Path) -> None:
    """Two sorted runs merged into ``out``, a chunk at a time (the memory used does not grow
    with the runs), written under a temporary name and renamed into place."""
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    ra, rb = _Chunks(a), _Chunks(b)
    buf = np.empty(MERGE_CHUNK, np.uint64)
    try:
        with open(tmp, "wb") as f:
            while ra.buf.size or rb.buf.size:
                ra.i, rb.i, k = _merge_chunks(ra.buf, rb.buf, ra.i, rb.i,
                                              ra.last, rb.last, buf)
                f.write(buf[:k].data.cast("B"))
                if ra.i == ra.buf.size and ra.buf.size:
                    ra.next()
                if rb.i == rb.buf.size and rb.buf.size:
                    rb.next()
    finally:
        ra.close()
        rb.close()
    os.replace(tmp, out)


def _bisect(fd: int, n: int, key: int, right: bool) -> int:
    """The first position of a sorted run of ``n`` fingerprints (file ``fd``) whose key is
    ``>= key`` (``> key`` when ``right``): a binary search of 8-byte reads. (Not a memory map:
    every page a map's search faults in, with its neighbours, would count in the process's
    resident memory until the map is dropped.)"""
    a, b = 0, n
    while a < b:
        mid = (a + b) // 2
        v = int.from_bytes(os.pread(fd, 8, 8 * mid), "little")
        if v < key or (right and v == key):
            a = mid + 1
        else:
            b = mid
    return a


def _range(f: BinaryIO, lo: int, hi: int) -> tuple[int, int]:
    """The positions of a sorted run's fingerprints in ``[lo, hi]``."""
    fd = f.fileno()
    n = os.fstat(fd).st_size // 8
    return _bisect(fd, n, lo, False), _bisect(fd, n, hi, True)


class LevelWriter:
    """A level's files written as its slices are found (in fingerprint order), renamed into
    place on ``close``: the parents and actions, then the fingerprints (the marker)."""

    def __init__(self, runs: Runs, level: int) -> None:
        self.runs, self.level = runs, level
        self.stem = runs.dir / f"L{level:06d}"
        self.parts = [(self.stem.with_suffix(suffix), dt) for suffix, dt in
                      ((".par", np.uint64), (".act", runs.adt), (".fps", np.uint64))]
        self.tmp = [p.with_name(f".{p.name}.{os.getpid()}.tmp") for p, _ in self.parts]
        self.files = [open(t, "wb") for t in self.tmp]  # noqa: SIM115 - closed by close()

    def write(self, fps: np.ndarray, parents: np.ndarray, acts: np.ndarray) -> None:
        for f, (_, dt), a in zip(self.files, self.parts, (parents, acts, fps)):
            np.ascontiguousarray(a, dt).tofile(f)

    def close(self) -> None:
        for f in self.files:
            f.close()
        for t, (p, _) in zip(self.tmp, self.parts):
            os.replace(t, p)
        self.runs._merge_tail(self.level + 1)

    def abandon(self) -> None:
        for f, t in zip(self.files, self.tmp):
            f.close()
            t.unlink(missing_ok=True)

    def __enter__(self) -> LevelWriter:
        return self

    def __exit__(self, kind: object, *rest: object) -> None:
        if kind is None:
            self.close()
        else:
            self.abandon()


def _read(path: Path, dtype: DTypeLike) -> np.ndarray:
    if path.stat().st_size == 0:
        return np.empty(0, dtype)
    return np.memmap(path, dtype=dtype, mode="r")


class Runs:
    """Partition ``index``'s visited set in ``root`` (a folder every task of the partition can
    reach: local disk on one machine, shared storage on a cluster)."""

    def __init__(self, root: str | os.PathLike[str], index: int, act_dtype: DTypeLike = np.uint8,
                 merge_ratio: float = MERGE_RATIO) -> None:
        self.dir = Path(root) / f"p{index:05d}"
        self.dir.mkdir(exist_ok=True)  # not the store: a task outliving its run fails here
        self.adt = np.dtype(act_dtype)
        self.merge_ratio = merge_ratio
        # what the visited checks of one level read, kept open until ``close``: the cover of
        # each level asked, each run's file
        self._covers: dict[int, list[tuple[tuple[int, int], Path]]] = {}
        self._files: dict[Path, BinaryIO] = {}

    def close(self) -> None:
        """Close the runs the visited checks opened (a run removed since stays readable until
        then)."""
        for f in self._files.values():
            f.close()
        self._files.clear()
        self._covers.clear()

    def _open(self, path: Path) -> BinaryIO:
        f = self._files.get(path)
        if f is None:
            f = self._files[path] = open(path, "rb")  # noqa: SIM115 - closed by close()
        return f

    # -- the folder's runs --------------------------------------------------------------------

    def _ranges(self) -> dict[tuple[int, int], Path]:
        out = {}
        for p in self.dir.iterdir():
            m = _LEVEL.match(p.name)
            if m:
                out[(int(m[1]), int(m[1]))] = p
                continue
            m = _RUN.match(p.name)
            if m:
                out[(int(m[1]), int(m[2]))] = p
        return out

    def cover(self, level: int) -> list[tuple[tuple[int, int], Path]]:
        """The fewest runs holding exactly levels 0..level-1, lowest levels first."""
        ranges = self._ranges()
        best: dict[int, int] = {}  # lo -> the highest hi below ``level``
        for lo, hi in ranges:
            if hi < level and hi > best.get(lo, -1):
                best[lo] = hi
        out, lo = [], 0
        while lo < level:
            if lo not in best:
                raise FileNotFoundError(f"{self.dir}: no run holds level {lo} (a lost store?)")
            hi = best[lo]
            out.append(((lo, hi), ranges[(lo, hi)]))
            lo = hi + 1
        return out

    def seen(self, fps: np.ndarray, level: int) -> np.ndarray:
        """For sorted ``fps``: which were found at a level below ``level``."""
        for attempt in range(3):
            try:
                return self._seen(fps, level)
            except FileNotFoundError:  # a merged run removed while listed: list again
                self._covers.pop(level, None)
                if attempt == 2:
                    raise
        raise AssertionError

    def _seen(self, fps: np.ndarray, level: int) -> np.ndarray:
        seen = np.zeros(fps.size, np.bool_)
        if fps.size == 0:
            return seen
        lo, hi = int(fps[0]), int(fps[-1])
        cover = self._covers.get(level)
        if cover is None:
            cover = self._covers[level] = self.cover(level)
        for _, path in cover:
            f = self._open(path)
            a, b = _range(f, lo, hi)
            if a == b:
                continue
            run = _Chunks(f, a, b)
            try:
                while run.buf.size:  # the keys inside this chunk's range
                    k0 = int(np.searchsorted(fps, run.buf[0], side="left"))
                    k1 = int(np.searchsorted(fps, run.buf[-1], side="right"))
                    if k1 > k0:
                        mark_members(run.buf, fps[k0:k1], seen[k0:k1])
                    run.next()
            finally:
                run.close()
        return seen

    # -- writing ------------------------------------------------------------------------------

    def write_level(self, level: int, fps: np.ndarray, parents: np.ndarray,
                    acts: np.ndarray) -> None:
        """The states found at ``level`` (sorted by fingerprint, none seen before), then the
        merges that keep the cover short."""
        with self.level_writer(level) as w:
            w.write(fps, parents, acts)

    def level_writer(self, level: int) -> LevelWriter:
        """A writer of ``level``'s states, slice after slice in fingerprint order (none seen
        before); closing it writes the level's marker and merges."""
        return LevelWriter(self, level)

    def _merge_tail(self, level: int) -> None:
        while self.merge_ratio > 0:  # 0: never merge (every level its own run)
            cover = self.cover(level)
            if len(cover) < 2:
                return
            (lo, _), a = cover[-2]
            (_, hi), b = cover[-1]
            na, nb = a.stat().st_size, b.stat().st_size
            if na > self.merge_ratio * max(nb, 8):
                return
            out = self.dir / f"R{lo:06d}-{hi:06d}.fps"
            merge_files(a, b, out)
            for (l2, h2), p in self._ranges().items():  # merged runs inside the new one
                if p.name.startswith("R") and lo <= l2 and h2 <= hi and (l2, h2) != (lo, hi):
                    p.unlink(missing_ok=True)

    # -- reading ------------------------------------------------------------------------------

    def lookup(self, fps: Iterable[int]) -> dict[int, tuple[int, int]]:
        """fingerprint -> (parent fingerprint, action) for each of ``fps`` found at some level."""
        want = np.asarray(sorted(set(int(f) for f in fps)), np.uint64)
        out: dict[int, tuple[int, int]] = {}
        for (lo, hi), path in sorted(self._ranges().items()):
            if lo != hi or not path.name.startswith("L") or len(out) == want.size:
                continue
            keys = _read(path, np.uint64)
            if keys.size == 0:
                continue
            pos = np.searchsorted(keys, want)
            hit = np.flatnonzero((pos < keys.size)
                                 & (np.asarray(keys[np.minimum(pos, keys.size - 1)]) == want))
            if hit.size:
                par = _read(path.with_suffix(".par"), np.uint64)
                act = _read(path.with_suffix(".act"), self.adt)
                for h in hit:
                    out[int(want[h])] = (int(par[pos[h]]), int(act[pos[h]]))
        return out

    def stats(self) -> dict[str, int]:
        """States held, bytes on disk, runs in the folder."""
        states = disk = runs = 0
        for p in self.dir.iterdir():
            if p.name.startswith("."):
                continue
            size = p.stat().st_size
            disk += size
            if _LEVEL.match(p.name):
                states += size // 8
            elif _RUN.match(p.name):
                runs += 1
        return {"stored": states, "disk_bytes": disk, "merged_runs": runs}


def remove(root: str | os.PathLike[str]) -> None:
    shutil.rmtree(root, ignore_errors=True)
