"""The state graph's fingerprint -> id table: open addressing with linear probing over two
arrays (``keys``: fingerprints, 0 is free; ``vals``: state ids), a power-of-two size.

A static module, so numba compiles it once for every spec (the graph kernels import it)."""

import numpy as np
from numba import njit


@njit(cache=True)
def table_find(keys, vals, mask, fp):
    """The id of ``fp``, or -1 (then ``keys[slot]`` is free at the returned slot)."""
    i = np.int64(fp & np.uint64(mask))
    while True:
        v = keys[i]
        if v == fp:
            return vals[i], i
        if v == np.uint64(0):
            return -1, i
        i = (i + 1) & mask


@njit(cache=True)
def table_put(keys, vals, mask, fp, ident):
    found, slot = table_find(keys, vals, mask, fp)
    if found < 0:
        keys[slot] = fp
        vals[slot] = ident


@njit(cache=True)
def table_rehash(keys, vals, new_keys, new_vals):
    mask = new_keys.size - 1
    for i in range(keys.size):
        if keys[i] != np.uint64(0):
            table_put(new_keys, new_vals, mask, keys[i], vals[i])


@njit(cache=True)
def table_set(keys, vals, mask, fps, ids):
    """Give each of ``fps`` (all in the table) its new id."""
    for q in range(fps.size):
        found, slot = table_find(keys, vals, mask, fps[q])
        vals[slot] = ids[q]
