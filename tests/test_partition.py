"""The pure per-partition functions of the partitioned search, tested without a JVM."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import kafka, tiered
from hypothesis import given, settings
from hypothesis import strategies as st

from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.engines.partition import (
    BUCKETS,
    Batch,
    LevelTask,
    buckets,
    expand,
    expand_items,
    first_occurrences,
    kernel_for,
    owner,
    owners,
    slices,
    split_by_owner,
    step_part,
)
from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine
from hwcheck.checker.engines.runs import Runs
from hwcheck.checker.protocols import SpecRef
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.kafka.params import Params

SMALL = Params(2, 2, 3, "hw", "hw")

u64 = st.integers(min_value=1, max_value=2**64 - 1)


def spec_ref(p: Params = SMALL) -> SpecRef:
    return SpecRef.of(kafka(p))


def kernel(p: Params = SMALL):
    spec = kafka(p)
    return kernel_for(SpecRef.of(spec), Kernel(spec).key)


def batch(fps, parents=None, acts=None, stride=8) -> Batch:
    fps = np.asarray(fps, np.uint64)
    n = fps.size
    rows = np.zeros((n, stride), np.int8)
    rows[:, 0] = np.arange(n) % 100
    parents = np.asarray(parents if parents is not None else np.arange(n), np.uint64)
    acts = np.asarray(acts if acts is not None else np.zeros(n), np.uint8)
    return Batch(rows, fps, parents, acts)


@given(st.lists(u64, max_size=200), st.integers(1, 64))
def test_owners_are_monotone_and_in_range(fps, parts):
    fps = np.sort(np.asarray(fps, np.uint64))
    own = owners(fps, parts)
    assert ((0 <= own) & (own < parts)).all()
    assert (np.diff(own) >= 0).all()
    assert [owner(int(f), parts) for f in fps] == own.tolist()


def test_owners_use_the_high_bits():
    low_only = np.arange(1, 1000, dtype=np.uint64)  # differ only in the low bits
    assert set(owners(low_only, 8).tolist()) == {0}
    high = np.array([(i << 61) | 1 for i in range(8)], np.uint64)
    assert owners(high, 8).tolist() == list(range(8))


def test_first_occurrences_keep_the_first_and_sort_by_fingerprint():
    b = batch([5, 3, 5, 9, 3], parents=[10, 11, 12, 13, 14])
    got = first_occurrences(b)
    assert got.fps.tolist() == [3, 5, 9]
    assert got.parents.tolist() == [11, 10, 13]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(u64, max_size=60), min_size=1, max_size=12),
       st.sampled_from([0.5, 2.0, 1e9]))
def test_runs_on_disk_are_the_union_of_the_levels_below(tmp_path_factory, levels, ratio):
    """Each level's new states written as a run, merged under any policy: a level's visited
    check sees exactly the levels below it, and every state's parent is found again."""
    runs = Runs(tmp_path_factory.mktemp("runs"), 0, np.uint8, merge_ratio=ratio)
    seen: set = set()
    for level, fps in enumerate(levels):
        probe = np.array(sorted(fps | seen), np.uint64)
        got = runs.seen(probe, level)
        assert {int(f) for f, s in zip(probe, got) if s} == seen & set(probe.tolist())
        new = np.array(sorted(fps - seen), np.uint64)
        runs.write_level(level, new, new ^ np.uint64(7), (new % np.uint64(5)).astype(np.uint8))
        seen |= fps
    if seen:
        found = runs.lookup(seen)
        assert found == {f: (f ^ 7, f % 5) for f in seen}
    assert runs.stats()["stored"] == len(seen)
    if ratio == 1e9:  # everything merged at once: one run covers the levels
        assert len(runs.cover(len(levels))) == 1
    # an old level, run again (a recomputation), still sees only the levels below it
    if len(levels) > 1:
        probe = np.array(sorted(seen), np.uint64)
        below = set().union(*levels[:1])
        assert {int(f) for f, s in zip(probe, runs.seen(probe, 1)) if s} == below



@given(st.sets(u64, max_size=300), st.integers(1, 9), st.randoms(use_true_random=False))
def test_split_by_owner_cuts_by_owner_in_bucket_order(fps, parts, rnd):
    fps = list(fps)
    rnd.shuffle(fps)
    b = batch(fps)
    blocks = split_by_owner(b, parts)
    assert [o for o, _ in blocks] == sorted({o for o, _ in blocks})
    assert sorted(f for _, x in blocks for f in x.batch.fps.tolist()) == sorted(fps)
    for o, x in blocks:
        got = x.batch
        assert (owners(got.fps, parts) == o).all()
        assert x.bounds[0] == 0 and x.bounds[-1] == len(got) and x.bounds.size == BUCKETS + 1
        local = buckets(got.fps, parts) - o * BUCKETS
        for k in range(BUCKETS):  # bucket k's entries, in the batch's order
            part = x.read(k, k + 1)
            assert (local[x.bounds[k]:x.bounds[k + 1]] == k).all()
            assert (np.diff(part.parents.astype(np.int64)) > 0).all()
        assert (b.fps[got.parents.astype(np.int64)] == got.fps).all()  # entries stay whole
        assert (got.rows[:, 0] == b.rows[got.parents.astype(np.int64), 0]).all()


@given(st.lists(st.integers(0, 50), min_size=1, max_size=40), st.integers(1, 120))
def test_slices_cover_every_candidate_within_the_limit(counts, most):
    counts = np.asarray(counts, np.int64)
    got = slices(counts, most)
    covered = [b for b0, b1 in got for b in range(b0, b1)]
    assert covered == sorted(set(covered))  # ascending, disjoint
    assert all(counts[b] == 0 for b in range(counts.size) if b not in covered)
    for b0, b1 in got:
        assert counts[b0:b1].sum() <= most or b1 == b0 + 1  # one bucket may exceed it


def brute_expand(k, rows, fps):
    """Every transition of every row, deduplicated by hand to the least (parent fp, action)."""
    best = {}
    gen = 0
    for row, fp in zip(rows, fps):
        for inst in range(k.ninst):
            t = k.step(inst, row)
            if t is None:
                continue
            gen += 1
            f = k.fingerprint(t)
            key = (int(fp), inst)
            if f not in best or key < best[f][0]:
                best[f] = (key, t)
    return best, gen


def reachable_rows(k, levels=6):
    """A few BFS levels of states by plain stepping: rows sorted by fingerprint."""
    seen = {k.fingerprint(k.initial): k.initial}
    front = [k.initial]
    for _ in range(levels):
        nxt = []
        for row in front:
            for inst in range(k.ninst):
                t = k.step(inst, row)
                if t is not None and k.fingerprint(t) not in seen:
                    seen[k.fingerprint(t)] = t
                    nxt.append(t)
        front = nxt
    fps = np.array(sorted(seen), np.uint64)
    return np.stack([seen[int(f)] for f in fps]), fps


@pytest.mark.parametrize("p", tiered([SMALL, Params(3, 1, 3, "kip-279", "hw")], {SMALL}), ids=str)
def test_expand_matches_brute_force(p):
    k = kernel(p)
    rows, fps = reachable_rows(k)
    ex = expand(k, rows, fps, np.zeros(len(k.props.transition), np.bool_))
    best, gen = brute_expand(k, rows, fps)
    assert ex.generated == gen
    assert sorted(ex.succ.fps.tolist()) == sorted(best)
    assert len(set(ex.succ.fps.tolist())) == len(ex.succ)
    for i, f in enumerate(ex.succ.fps.tolist()):
        (pfp, inst), row = best[f]
        assert (int(ex.succ.parents[i]), int(ex.succ.acts[i])) == (pfp, inst)
        assert (ex.succ.rows[i] == row).all()
    keys = list(zip(ex.succ.parents.tolist(), ex.succ.acts.tolist()))
    assert keys == sorted(keys)  # (parent fingerprint, action) order


def test_a_level_does_not_depend_on_the_order_blocks_arrive_in(tmp_path):
    k = kernel()
    rows, fps = reachable_rows(k)
    task = LevelTask(spec_ref(), k.key, 3, (True,) * len(k.props.state),
                     (True,) * len(k.props.transition), store=str(tmp_path), level=0)
    inbox = {}
    for src in range(3):
        sel = owners(fps, 3) == src
        blocks, _ = expand_items(task, src, rows[sel], fps[sel])
        for o, value in blocks:
            inbox.setdefault(o, []).append(value)
    for o, values in inbox.items():
        a, sa = step_part(task, o, values)
        # the same level again (as a retried task does): it rewrites the same run
        b, sb = step_part(task, o, list(reversed(values)))
        for key in ("new", "sp", "generated", "tp", "stored"):
            assert sa[key] == sb[key]
        assert [x[0] for x in a] == [x[0] for x in b]
        for (_, x), (_, y) in zip(a, b):
            for u, v in zip(x[-1].__reduce__()[1], y[-1].__reduce__()[1]):
                assert np.array_equal(u, v)


def summary(ex):
    return ((ex.distinct, ex.generated, ex.depth, ex.complete),
            {n: (h.kind, h.length, h.path) for n, h in ex.hits.items()})


CONFIGS = [SMALL, Params(2, 2, 3, "leader-epoch", "hw"), Params(3, 1, 3, "kip-279", "hw"),
           Params(2, 2, 3, "kip-279", "epoch-start", acks="1"),
           Params(2, 2, 3, "kip-279", "epoch-start", unclean=True)]


@pytest.mark.parametrize("p", tiered(CONFIGS, {SMALL}), ids=lambda p: p.slug())
@pytest.mark.parametrize("parts", tiered([1, 2, 3, 4], {2}))  # one compiled expansion a count
def test_partitioned_search_agrees_with_the_local_engine(p, parts):
    """Counts, verdicts and the canonical paths of every hit (reachability included)."""
    k = kernel(p)
    for opts in (dict(stop_at_violation=False), dict(stop_at_violation=True),
                 dict(stop_at_violation=False, properties=("LogsMatchBelowHw",))):
        local = LocalEngine(k, Options(**opts)).run()
        part = LevelEngine(k, Options(**opts), InProcessBackend(parts)).run()
        assert summary(part) == summary(local), opts
        assert part.verdict == local.verdict


# the fast tier: 64 candidates (some 300 a partition and level here: several slices and pieces
# each level); 5 (scores of slices a level, its tasks' Python the cost) and 1 (buckets alone
# over the slice) in the slow tier
@pytest.mark.parametrize("most", tiered([1, 5, 64], {64}))
def test_slices_and_pieces_do_not_change_results(most, tmp_path):
    """A task merging a few candidates at a time and sending a few successors at a time (many
    slices and pieces a level): the local engine's counts, verdicts and canonical paths."""
    k = kernel(SMALL)
    for opts in (dict(stop_at_violation=False), dict(stop_at_violation=True)):
        local = LocalEngine(k, Options(**opts)).run()
        part = LevelEngine(k, Options(**opts),
                           InProcessBackend(3, store=str(tmp_path / str(opts)), slice=most)).run()
        assert summary(part) == summary(local), opts


def test_max_states_stops_between_levels():
    k = kernel(SMALL)
    ex = LevelEngine(k, Options(max_states=200), InProcessBackend(2)).run()
    assert not ex.complete and ex.verdict == "unknown"  # before the first violation (level 8)
    assert 200 <= ex.distinct < 623
    assert "max-states" in ex.stop_reason


@pytest.mark.parametrize("ratio", [0.0, 1e9])
def test_merge_policy_does_not_change_results(ratio, tmp_path):
    """Runs merged after every level, or never: same counts and paths."""
    p = SMALL
    k = kernel(p)
    local = LocalEngine(k, Options(stop_at_violation=False)).run()
    backend = InProcessBackend(2, merge_ratio=ratio, store=str(tmp_path))
    part = LevelEngine(k, Options(stop_at_violation=False), backend).run()
    assert summary(part) == summary(local)
    merged = list(tmp_path.rglob("R*.fps"))
    assert bool(merged) == (ratio == 1e9)


@pytest.mark.parametrize("na,nb", [(0, 0), (0, 5), (40, 0), (33, 29), (1, 100)])
def test_a_merge_written_in_chunks_is_the_sorted_union(tmp_path, monkeypatch, na, nb):
    from hwcheck.checker.engines import runs as runs_module
    monkeypatch.setattr(runs_module, "MERGE_CHUNK", 7)  # many chunks, a short last one
    keys = np.random.default_rng(na * 1000 + nb).permutation(
        np.arange(1, 10 * (na + nb) + 2, dtype=np.uint64))[:na + nb]
    a, b = np.sort(keys[:na]), np.sort(keys[na:])
    a.tofile(tmp_path / "a.fps")
    b.tofile(tmp_path / "b.fps")
    runs_module.merge_files(tmp_path / "a.fps", tmp_path / "b.fps", tmp_path / "out.fps")
    assert np.fromfile(tmp_path / "out.fps", np.uint64).tolist() == sorted(keys.tolist())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.fps", "b.fps", "out.fps"]

