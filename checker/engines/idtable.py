"""The compiled half of the visited set with ids (``visited.IdTable``, the state graph's
fingerprint -> id table): open addressing with linear probing over one array of (fingerprint,
id) pairs (``tab[2 * slot]``: the fingerprint, 0 when the slot is free; ``tab[2 * slot + 1]``:
the state's id), a power-of-two number of slots. A lookup touches one cache line, not one in a
keys array and another in a values array.

A fingerprint's home slot is its top bits, so the table keeps fingerprints nearly in order:
giving a level's states (in fingerprint order) their ids and doubling the table both walk it
from front to back instead of jumping about it. (The plain set's table, ``fingerprint.py``,
orders its keys by their low half, which the owners' split leaves uniform, and shifts a run to
insert in order: decision record 0012 says why the two layouts stay apart.)

A static module, so numba compiles it once for every spec (the graph kernels import it)."""

import numpy as np
from numba import njit

from hwcheck.checker.semantics.fingerprint import _prefetch as prefetch  # LLVM's prefetch

# candidates ahead whose home slot is loaded while one is looked up: more than the engines'
# inserts ahead, since a lookup here does less besides (32 against 16: 12% less time)
AHEAD = 32


def new_table(slots: int) -> np.ndarray:
    """An empty table of ``slots`` slots (a power of two)."""
    return np.zeros(2 * slots, np.uint64)


@njit(cache=True, nogil=True)
def home_shift(mask: int) -> np.uint64:
    """How far a fingerprint is shifted right to give its home slot among ``mask + 1``."""
    bits = 0
    while (np.int64(1) << bits) <= mask:
        bits += 1
    return np.uint64(64 - bits)  # type: ignore[no-any-return]  # numpy types np.uint64(int) as Any


@njit(cache=True, nogil=True)
def table_find(tab: np.ndarray, mask: int, shift: np.uint64,
               fp: np.uint64) -> tuple[int, int]:
    """The id of ``fp``, or -1 (then the returned slot is free); ``shift``: ``home_shift(mask)``."""
    i = np.int64(fp >> shift) if shift < np.uint64(64) else np.int64(0)
    while True:
        v = tab[2 * i]
        if v == fp:
            return np.int64(tab[2 * i + 1]), i
        if v == np.uint64(0):
            return np.int64(-1), i
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def table_double(tab: np.ndarray, slots: int) -> None:
    """Double a table of ``slots`` slots in place: ``tab`` holds 2 * ``slots`` slots, the upper
    half free. Entries move down to up: one whose new home lies at or above its old slot goes to
    the first free slot from there (every slot from its old one up is already in the new
    layout, and none of them is freed later); the few others (displaced far, or probing past
    the end) are put in afterwards, by the usual insert."""
    mask = 2 * slots - 1
    shift = home_shift(mask)
    side = np.empty(64, np.uint64)  # (fingerprint, id) pairs put in afterwards
    nside = 0
    for i in range(slots - 1, -1, -1):
        fp = tab[2 * i]
        if fp == np.uint64(0):
            continue
        ident = tab[2 * i + 1]
        tab[2 * i] = np.uint64(0)
        tab[2 * i + 1] = np.uint64(0)
        j = np.int64(fp >> shift)
        if j >= i:
            while j <= mask and tab[2 * j] != np.uint64(0):
                j += 1
            if j <= mask:
                tab[2 * j] = fp
                tab[2 * j + 1] = ident
                continue
        if 2 * nside + 2 > side.size:
            more = np.empty(2 * side.size, np.uint64)
            more[:side.size] = side
            side = more
        side[2 * nside] = fp
        side[2 * nside + 1] = ident
        nside += 1
    for q in range(nside):
        found, slot = table_find(tab, mask, shift, side[2 * q])
        tab[2 * slot] = side[2 * q]
        tab[2 * slot + 1] = side[2 * q + 1]


@njit(cache=True, nogil=True)
def table_number(tab: np.ndarray, mask: int, fps: np.ndarray, first: int) -> None:
    """Give ``fps`` (all in the table, in fingerprint order) the ids first, first + 1, ..."""
    shift = home_shift(mask)
    for q in range(fps.size):
        found, slot = table_find(tab, mask, shift, fps[q])
        tab[2 * slot + 1] = np.uint64(first + q)


@njit(cache=True, nogil=True)
def table_fill(tab: np.ndarray, mask: int, fps: np.ndarray, first: int) -> None:
    """Put ``fps`` (none in the table yet) into it with the ids first, first + 1, ...: a
    resumed graph's states back under their ids."""
    shift = home_shift(mask)
    for q in range(fps.size):
        found, slot = table_find(tab, mask, shift, fps[q])
        if found < 0:
            tab[2 * slot] = fps[q]
            tab[2 * slot + 1] = np.uint64(first + q)


@njit(cache=True, nogil=True)
def renumber(edst: np.ndarray, lo: int, hi: int, n: int, rank: np.ndarray) -> None:
    """Transitions lo..hi-1: a destination id n + j (the j-th new state, as found) becomes
    n + rank[j] (its place in the level's fingerprint order); older ids stay."""
    for e in range(lo, hi):
        d = edst[e]
        if d >= n:
            edst[e] = n + rank[d - n]


@njit(cache=True, nogil=True)
def resolve(tab: np.ndarray, mask: int, cw: np.ndarray, cfp: np.ndarray, cpar: np.ndarray,
            cact: np.ndarray, q: int, nstates: int, nnew: int, nw: np.ndarray,
            new_fps: np.ndarray, new_par: np.ndarray, new_act: np.ndarray, base: int,
            edst: np.ndarray, eb: int) -> int:
    """The ids of a block's candidate successors 0..q-1 (rows ``cw`` as words, fingerprints
    ``cfp``, parent rows ``cpar``, instances ``cact``), in order: a fingerprint not in the
    table gets the id nstates + nnew and its row, fingerprint, parent (base + row) and instance
    go to nw/new_fps/new_par/new_act at nnew. Candidate k is transition eb + k, whose
    destination is its id. The home slots of the next ``AHEAD`` candidates are loaded while
    one is looked up. Returns nnew."""
    shift = home_shift(mask)
    for k in range(min(q, AHEAD)):
        prefetch(tab, 2 * np.int64(cfp[k] >> shift))  # type: ignore[call-arg]  # a numba intrinsic: numba gives its typing context
    for k in range(q):
        if k + AHEAD < q:
            prefetch(tab, 2 * np.int64(cfp[k + AHEAD] >> shift))  # type: ignore[call-arg]  # a numba intrinsic: numba gives its typing context
        fp = cfp[k]
        ident, slot = table_find(tab, mask, shift, fp)
        if ident < 0:
            ident = nstates + nnew
            tab[2 * slot] = fp
            tab[2 * slot + 1] = np.uint64(ident)
            for c in range(cw.shape[1]):
                nw[nnew, c] = cw[k, c]
            new_fps[nnew] = fp
            new_par[nnew] = base + cpar[k]
            new_act[nnew] = cact[k]
            nnew += 1
        edst[eb + k] = ident
    return nnew
