"""Fingerprint arrays of the partitioned search, sorted, grouped and joined in linear time.

A partition's level is a few sorts and joins of uint64 fingerprints: the candidates it received
deduplicated in fingerprint order, checked against its sorted runs on disk, its successors
grouped by owner. numpy's stable argsort, fancy row indexing and searchsorted did them in
O(n log n) and were more than half of a partition's time; these do them in linear time, in
numba, without the GIL:

- ``radix_order``: the stable sorting permutation of uint64 keys (LSD radix, 16-bit digits, a
  digit every key shares skipped), what ``np.argsort(kind="stable")`` returns;
- ``first_index``: the position of the first occurrence of each distinct key, in key order;
- ``owner_order``: the stable permutation that groups entries by owner, and each owner's
  bounds in it (a counting sort); ``bucket_group``: the same grouping done to the entries
  themselves, in one pass;
- ``mark_members``: which of some sorted keys a sorted run holds (a galloping merge join: the
  run is read forward, each page at most once);
- ``take_rows``: rows gathered whole, in a compiled loop; ``gather``: entries (row,
  fingerprint, parent, action) gathered in a given order, the next ones' loads started ahead;
- ``group_owned``: a worker's new states grouped by the next level's buckets (a counting sort
  into the fields of records), what it appends to its own buckets' files.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hwcheck.checker.semantics.fingerprint import PREFETCH
from hwcheck.checker.semantics.fingerprint import _prefetch as prefetch  # LLVM's prefetch

# fewer keys than this: numpy's argsort (the radix's fixed cost is 4 x 64K counters)
SMALL = 1 << 12
_BITS = 16


@njit(cache=True, nogil=True)
def _radix_order(keys: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    n = keys.size
    nb = 1 << _BITS
    mask = np.uint64(nb - 1)
    idx = np.arange(n).astype(np.int32)
    tmp = np.empty(n, np.int32)
    k1 = keys.copy()
    k2 = np.empty(n, np.uint64)
    cnt = np.empty(nb + 1, np.int64)
    for shift in range(0, 64, _BITS):
        sh = np.uint64(shift)
        cnt[:] = 0
        for i in range(n):
            cnt[((k1[i] >> sh) & mask) + 1] += 1
        if cnt[((k1[0] >> sh) & mask) + 1] == n:  # every key has this digit: order unchanged
            continue
        for d in range(nb):
            cnt[d + 1] += cnt[d]
        for i in range(n):
            d = (k1[i] >> sh) & mask
            p = cnt[d]
            cnt[d] = p + 1
            k2[p] = k1[i]
            tmp[p] = idx[i]
        k1, k2 = k2, k1
        idx, tmp = tmp, idx
    return idx


def radix_order(keys: np.ndarray) -> np.ndarray:
    """The stable permutation that sorts ``keys`` (uint64): ``np.argsort(keys, kind="stable")``."""
    keys = np.ascontiguousarray(keys, np.uint64)
    if keys.size < SMALL or keys.size >= 1 << 31:
        return np.argsort(keys, kind="stable")
    return _radix_order(keys).astype(np.int64)


@njit(cache=True, nogil=True)
def _firsts(keys: np.ndarray, order: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    out = np.empty(order.size, np.int64)
    m = 0
    for j in range(order.size):
        i = order[j]
        if j == 0 or keys[i] != keys[order[j - 1]]:
            out[m] = i
            m += 1
    return out[:m]


def first_index(keys: np.ndarray) -> np.ndarray:
    """The position of the first occurrence of each distinct key, in key order."""
    keys = np.ascontiguousarray(keys, np.uint64)
    if keys.size == 0:
        return np.empty(0, np.int64)
    return _firsts(keys, radix_order(keys))


@njit(cache=True, nogil=True)
def _owner_order(own: np.ndarray,
                 parts: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    bounds = np.zeros(parts + 1, np.int64)
    for i in range(own.size):
        bounds[own[i] + 1] += 1
    for o in range(parts):
        bounds[o + 1] += bounds[o]
    at = bounds[:-1].copy()
    order = np.empty(own.size, np.int64)
    for i in range(own.size):
        o = own[i]
        order[at[o]] = i
        at[o] += 1
    return order, bounds


def owner_order(own: np.ndarray, parts: int) -> tuple[np.ndarray, np.ndarray]:
    """(the stable permutation grouping entries by owner, owner o's entries at
    ``order[bounds[o]:bounds[o + 1]]``) for owners ``own`` in 0..parts-1."""
    return _owner_order(np.ascontiguousarray(own, np.int64), parts)


@njit(cache=True, nogil=True)
def _bucket_group(rows: np.ndarray, fps: np.ndarray, parents: np.ndarray, acts: np.ndarray,
                  scale: np.uint64, out_rows: np.ndarray, out_fps: np.ndarray,
                  out_par: np.ndarray, out_act: np.ndarray,
                  bounds: np.ndarray) -> None:  # pragma: no cover - compiled
    n, w = rows.shape
    sh = np.uint64(32)
    for i in range(n):
        bounds[np.int64(((fps[i] >> sh) * scale) >> sh) + 1] += 1
    for g in range(bounds.size - 1):
        bounds[g + 1] += bounds[g]
    at = bounds[:-1].copy()
    for i in range(n):
        g = np.int64(((fps[i] >> sh) * scale) >> sh)
        p = at[g]
        at[g] = p + 1
        for c in range(w):
            out_rows[p, c] = rows[i, c]
        out_fps[p] = fps[i]
        out_par[p] = parents[i]
        out_act[p] = acts[i]


def bucket_group(rows: np.ndarray, fps: np.ndarray, parents: np.ndarray, acts: np.ndarray,
                 nbuckets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                         np.ndarray]:
    """Entries grouped by bucket (the top 32 bits of the fingerprint scaled to
    0..nbuckets-1), each bucket in the entries' order: (rows, fps, parents, acts, bounds),
    bucket g at ``bounds[g]:bounds[g + 1]``. One counting sort, no index array."""
    n = fps.size
    out = (np.empty((n, rows.shape[1]), rows.dtype), np.empty(n, np.uint64),
           np.empty(n, parents.dtype), np.empty(n, acts.dtype))
    bounds = np.zeros(nbuckets + 1, np.int64)
    _bucket_group(np.ascontiguousarray(rows), np.ascontiguousarray(fps, np.uint64),
                  np.ascontiguousarray(parents), np.ascontiguousarray(acts),
                  np.uint64(nbuckets), *out, bounds)
    return (*out, bounds)


@njit(cache=True, nogil=True)
def _mark_members(run: np.ndarray, keys: np.ndarray,
                  seen: np.ndarray) -> None:  # pragma: no cover - compiled
    n = run.size
    j = 0
    for i in range(keys.size):
        q = keys[i]
        if j >= n:
            return
        if run[j] < q:  # gallop forward from j, then bisect the last step
            step = 1
            lo = j
            while j + step < n and run[j + step] < q:
                lo = j + step
                step *= 2
            hi = min(j + step, n)  # run[lo] < q <= run[hi] (or hi == n)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if run[mid] < q:
                    lo = mid
                else:
                    hi = mid
            j = hi
        if j < n and run[j] == q:
            seen[i] = True


def mark_members(run: np.ndarray, keys: np.ndarray, seen: np.ndarray) -> None:
    """``seen[i] = True`` where sorted ``run`` holds ``keys[i]`` (``keys`` sorted ascending)."""
    if run.size and keys.size:
        _mark_members(np.asarray(run), keys, seen)


@njit(cache=True, nogil=True)
def _take_rows(rows: np.ndarray, idx: np.ndarray,
               out: np.ndarray) -> None:  # pragma: no cover - compiled
    w = rows.shape[1]
    for j in range(idx.size):
        i = idx[j]
        for c in range(w):
            out[j, c] = rows[i, c]


def take_rows(rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``rows[idx]`` for a 2-D array, each row copied whole (a compiled loop: a third faster
    than numpy's fancy indexing of row records)."""
    n, width = rows.shape
    idx = np.asarray(idx)
    if width == 0 or n == 0 or idx.size == 0 or idx.dtype.kind not in "iu":
        picked: np.ndarray = rows[idx]
        return picked
    out = np.empty((idx.size, width), rows.dtype)
    _take_rows(np.ascontiguousarray(rows), idx, out)
    return out


@njit(cache=True, nogil=True, inline="always")
def _load_entry(j: int, fps: np.ndarray, rows: np.ndarray, par: np.ndarray,
                act: np.ndarray) -> None:
    """Start loading entry j: its row (first and last word: a row may span two cache lines),
    fingerprint, parent and action."""
    prefetch(rows[j], 0)  # type: ignore[call-arg]  # a numba intrinsic: numba gives its typing context
    prefetch(rows[j], rows.shape[1] - 1)
    prefetch(fps, j)
    prefetch(par, j)
    prefetch(act, j)


@njit(cache=True, nogil=True)
def gather(order: np.ndarray, fps: np.ndarray, rows: np.ndarray, par: np.ndarray,
            act: np.ndarray, out_fps: np.ndarray, out_rows: np.ndarray, out_par: np.ndarray,
            out_act: np.ndarray, off: int, par_off: int) -> None:
    """Entries ``order`` written to ``out_*`` from position ``off``, ``par_off`` added to their
    parents (``out_*`` may be the fields of records: strided). They are read at random: those
    of the entry ``PREFETCH`` ahead are loaded while one is written."""
    stride = rows.shape[1]
    for k in range(min(order.size, PREFETCH)):
        _load_entry(order[k], fps, rows, par, act)
    for k in range(order.size):
        if k + PREFETCH < order.size:
            _load_entry(order[k + PREFETCH], fps, rows, par, act)
        j = order[k]
        out_fps[off + k] = fps[j]
        out_par[off + k] = par[j] + par_off
        out_act[off + k] = act[j]
        for q in range(stride):
            out_rows[off + k, q] = rows[j, q]


@njit(cache=True, nogil=True)
def group_owned(fps: np.ndarray, rows: np.ndarray, par: np.ndarray, act: np.ndarray, n: int,
                buckets: int, lo: int, par_off: int, out_fps: np.ndarray, out_rows: np.ndarray,
                out_par: np.ndarray, out_act: np.ndarray,
                cuts: np.ndarray) -> None:  # pragma: no cover - compiled
    """The first ``n`` entries grouped by their bucket among ``buckets`` (``partition.owners``
    at ``buckets``), every one of them in buckets ``lo`` .. ``lo + cuts.size - 2``, each
    bucket's in the entries' order, written to ``out_*`` (which may be the fields of records:
    strided), ``par_off`` added to their parents: bucket lo + j at ``cuts[j]:cuts[j + 1]``. A
    counting sort: one pass to count, one to write, ``cuts.size - 1`` streams written at once."""
    sh, scale = np.uint64(32), np.uint64(buckets)
    stride = rows.shape[1]
    cuts[:] = 0
    for i in range(n):
        cuts[np.int64(((fps[i] >> sh) * scale) >> sh) - lo + 1] += 1
    for j in range(cuts.size - 1):
        cuts[j + 1] += cuts[j]
    at = cuts[:-1].copy()
    for i in range(n):
        j = np.int64(((fps[i] >> sh) * scale) >> sh) - lo
        p = at[j]
        at[j] = p + 1
        out_fps[p] = fps[i]
        out_par[p] = par[i] + par_off
        out_act[p] = act[i]
        for q in range(stride):
            out_rows[p, q] = rows[i, q]
