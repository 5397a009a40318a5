"""Run-time pieces of the compiled kernel: the state fingerprint and the visited-set table.

Both are numba functions over plain numpy arrays, so the local engine, the Spark executors and
the trace tools compute the same 64-bit fingerprint in every process.

Fingerprint: the state row (int8, padded to a multiple of 8 bytes) read as little-endian 64-bit
words, mixed word by word (murmur3's 64-bit block step) and finished with murmur3's fmix64.
0 is reserved for "empty slot", so a digest of 0 becomes 1.

Visited table: open addressing with linear probing over a power-of-two uint64 array of
fingerprints; 0 marks a free slot.
"""

from __future__ import annotations

import numpy as np
from numba import njit

C1 = np.uint64(0x87C37B91114253D5)
C2 = np.uint64(0x4CF5AD432745937F)
C3 = np.uint64(0x52DCE729)
F1 = np.uint64(0xFF51AFD7ED558CCD)
F2 = np.uint64(0xC4CEB9FE1A85EC53)
SEED = np.uint64(0x9E3779B97F4A7C15)
U5 = np.uint64(5)
U31 = np.uint64(31)
U33 = np.uint64(33)
U27 = np.uint64(27)
U37 = np.uint64(37)


@njit(cache=True, inline="always")
def _fmix64(k):
    k ^= k >> U33
    k *= F1
    k ^= k >> U33
    k *= F2
    k ^= k >> U33
    return k


@njit(cache=True)
def fingerprint(row):
    """The 64-bit fingerprint of one state row (int8, length a multiple of 8)."""
    words = row.view(np.uint64)
    h = SEED ^ np.uint64(words.size)
    for i in range(words.size):
        k = words[i] * C1
        k = (k << U31) | (k >> U33)
        k *= C2
        h ^= k
        h = (h << U27) | (h >> U37)
        h = h * U5 + C3
    h = _fmix64(h)
    if h == np.uint64(0):
        h = np.uint64(1)
    return h


@njit(cache=True)
def table_insert(table, mask, fp):
    """Insert ``fp``; True if it was not there yet."""
    i = np.int64(fp & np.uint64(mask))
    while True:
        v = table[i]
        if v == fp:
            return False
        if v == np.uint64(0):
            table[i] = fp
            return True
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def table_rehash(old, new):
    """Insert every fingerprint of ``old`` into the empty table ``new`` (without the GIL: the
    workers of a parallel run grow their tables at the same time)."""
    mask = new.size - 1
    for i in range(old.size):
        v = old[i]
        if v != np.uint64(0):
            table_insert(new, mask, v)


@njit(cache=True)
def table_insert_exact(table, slots, mask, fp, row, store, n):
    """Insert the state ``row`` (fingerprint ``fp``) into an exact table: a slot holds a
    fingerprint and the position of its state in ``store``; a fingerprint already there counts
    as this state only if the stored state is this row, cell for cell. True if it is new (it
    then gets position ``n``; the caller copies the row to ``store[n]``)."""
    i = np.int64(fp & np.uint64(mask))
    while True:
        v = table[i]
        if v == np.uint64(0):
            table[i] = fp
            slots[i] = n
            return True
        if v == fp:
            j = slots[i]
            same = True
            for q in range(row.size):
                if store[j, q] != row[q]:
                    same = False
                    break
            if same:
                return False
        i = (i + 1) & mask


@njit(cache=True)
def table_rehash_exact(old, old_slots, new, new_slots):
    """Move every entry of an exact table into the empty, larger ``new``/``new_slots``."""
    mask = new.size - 1
    for i in range(old.size):
        v = old[i]
        if v != np.uint64(0):
            k = np.int64(v & np.uint64(mask))
            while new[k] != np.uint64(0):
                k = (k + 1) & mask
            new[k] = v
            new_slots[k] = old_slots[i]
