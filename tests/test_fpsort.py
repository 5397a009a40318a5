"""The linear-time sorts and joins of the partitioned search against numpy's own."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hwcheck.checker.engines import fpsort

u64 = st.integers(min_value=0, max_value=2**64 - 1)


def keys_with_repeats(rng, n: int, distinct: int, high_bits_only: bool = False) -> np.ndarray:
    pool = rng.integers(0, 2**63, distinct, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    if high_bits_only:  # every key shares its low digits: the radix skips those passes
        pool &= np.uint64(0xFFFF_0000_0000_0000)
    return pool[rng.integers(0, distinct, n)]


@pytest.mark.parametrize("n,distinct,high", [(5_000, 1_000, False), (70_000, 70_000, False),
                                             (20_000, 300, True), (fpsort.SMALL, 2, False)])
def test_radix_order_is_numpys_stable_argsort(n, distinct, high):
    keys = keys_with_repeats(np.random.default_rng(n), n, distinct, high)
    assert keys.size >= fpsort.SMALL  # the numba path
    assert (fpsort.radix_order(keys) == np.argsort(keys, kind="stable")).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(u64, max_size=300))
def test_first_index_keeps_the_first_of_each_key_in_key_order(keys):
    keys = np.asarray(keys, np.uint64)
    got = fpsort.first_index(keys)
    want = [min(i for i in range(keys.size) if keys[i] == k) for k in sorted(set(keys.tolist()))]
    assert got.tolist() == want


def test_first_index_on_the_numba_path():
    keys = keys_with_repeats(np.random.default_rng(1), 50_000, 9_000)
    _, want = np.unique(keys, return_index=True)  # np.unique's index is the first occurrence
    assert (fpsort.first_index(keys) == want).all()


@given(st.lists(st.integers(0, 6), max_size=200))
def test_owner_order_groups_stably(own):
    own = np.asarray(own, np.int64)
    order, bounds = fpsort.owner_order(own, 7)
    assert (order == np.argsort(own, kind="stable")).all()
    assert bounds.tolist() == [0] + np.cumsum(np.bincount(own, minlength=7)).tolist()


@settings(max_examples=80, deadline=None)
@given(st.sets(u64, max_size=300), st.sets(u64, max_size=100))
def test_mark_members_is_isin(run, keys):
    run = np.array(sorted(run), np.uint64)
    keys = np.array(sorted(keys | set(run.tolist()[::3])), np.uint64)
    seen = np.zeros(keys.size, np.bool_)
    fpsort.mark_members(run, keys, seen)
    assert (seen == np.isin(keys, run)).all()


def test_mark_members_only_sets():
    seen = np.array([True, False, False])
    fpsort.mark_members(np.array([5], np.uint64), np.array([1, 5, 9], np.uint64), seen)
    assert seen.tolist() == [True, True, False]


@given(st.integers(0, 40), st.integers(0, 9), st.sampled_from([np.int8, np.int16, np.int64]))
def test_take_rows_is_fancy_indexing(n, width, dtype):
    rng = np.random.default_rng(n * 10 + width)
    rows = rng.integers(-100, 100, (n, width)).astype(dtype)
    idx = rng.integers(0, n, 2 * n) if n else np.empty(0, np.int64)
    got = fpsort.take_rows(rows, idx)
    assert got.dtype == rows.dtype and got.shape == (idx.size, width)
    assert (got == rows[idx]).all()
