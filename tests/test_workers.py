"""--workers: the local engine on several threads finds exactly what one finds: the same counts,
the same levels (fingerprints, parents, actions), the same first hits, and trace files equal
byte for byte; an interrupt or running out of memory stops it at a consistent point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from engine_contract import (
    FAST_PROTOCOL,
    FAST_ROW,
    EngineContract,
    model_table_test,
    protocol_max_states_test,
    protocol_spec,
    protocol_table_test,
)
from helpers import kafka, tiered

from hwcheck.checker.engines import expand as expand_mod
from hwcheck.checker.engines import local as local_mod
from hwcheck.checker.engines import parallel
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.engines.partition import owners
from hwcheck.checker.engines.visited import VisitedTable
from hwcheck.checker.run import check
from hwcheck.checker.semantics.fingerprint import owner_of
from hwcheck.checker.semantics.kernel import Kernel

HW = dict(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
FIXED = dict(truncation="kip-279", isr_expansion="epoch-start")


class TestLocalEngineTwoWorkers(EngineContract):
    """The base model's counts and shortest violations with two workers."""

    engine = "local"
    engine_opts = {"workers": 2}
    test_model_table = model_table_test(FAST_ROW)
    test_protocol_table = protocol_table_test(FAST_PROTOCOL)
    test_protocol_max_states_gives_unknown = protocol_max_states_test(fast=False)


def explore(spec, workers: int, **opts):
    opts.setdefault("stop_at_violation", False)
    engine = LocalEngine(Kernel(spec), Options(**opts), workers=workers)
    return engine.run(), engine.levels


def same_search(a, b) -> None:
    (ex1, levels1), (ex2, levels2) = a, b
    assert (ex1.distinct, ex1.generated, ex1.depth, ex1.complete) == \
        (ex2.distinct, ex2.generated, ex2.depth, ex2.complete)
    assert len(levels1) == len(levels2)
    for l1, l2 in zip(levels1, levels2):
        assert np.array_equal(l1.fps, l2.fps)
        assert np.array_equal(l1.parents, l2.parents)
        assert np.array_equal(l1.actions, l2.actions)
    assert {n: (h.kind, h.length, h.path) for n, h in ex1.hits.items()} == \
        {n: (h.kind, h.length, h.path) for n, h in ex2.hits.items()}


@pytest.mark.parametrize("workers", tiered([2, 3], {2}))  # one compiled expansion a count
@pytest.mark.parametrize("chunk", [pytest.param(None, marks=pytest.mark.slow), 7])
@pytest.mark.parametrize("params", [HW, pytest.param(dict(replicas=3, max_offset=1, max_epoch=3,
                                                          truncation="kip-279"),
                                                     marks=pytest.mark.slow)],
                         ids=["R2M2E3-hw", "R3M1E3-kip-279"])
def test_every_level_is_the_same_with_any_number_of_workers(params, chunk, workers,
                                                           monkeypatch):
    """Levels in fingerprint order with the same parents and actions, the same first hits
    (transition reachability included); chunks of 7 rows make many rounds per level, table
    growth inside a level, and workers' buffers that must grow; then every level's state
    predicates are checked by the workers, a slice each, and merged."""
    spec = kafka(**params)
    one = explore(spec, 1)
    if chunk:
        monkeypatch.setattr(expand_mod, "CHUNK", chunk)
        monkeypatch.setattr(local_mod, "PARALLEL_CHECK", 2)
    same_search(one, explore(spec, workers))


def test_buffers_that_must_grow_mid_round_leave_the_search_the_same(monkeypatch):
    """Round buffers that start at the least room a block needs: slices stop short, the main
    thread doubles every slice's buffers between generations (keeping what they hold) and the
    short slices go on; the levels, parents, actions and hits are one worker's."""
    spec = kafka(**HW)
    one = explore(spec, 1)
    init = parallel._Round.__init__

    def least(self, kernel, slices, owners_, per):  # room for one block: the least it takes
        init(self, kernel, slices, owners_, kernel.mod.ROOM)

    monkeypatch.setattr(parallel._Round, "__init__", least)
    grew = []
    real = parallel._RoundBuffers.grow

    def grow(self, used):
        grew.append(self.cap)
        real(self, used)

    monkeypatch.setattr(parallel._RoundBuffers, "grow", grow)
    same_search(one, explore(spec, 2))
    assert grew  # the short-slice path ran


@pytest.mark.slow
def test_inserts_that_reach_the_end_of_a_table_stop_there_and_go_on_after_it_grows():
    """More successors than the free slots at the table's end, all homed near the end, in two
    slices' buffers: the owner's insert stops before an insert could reach the last slot, the
    table grows and the insert goes on from there (in whichever slice it stopped); every
    fingerprint ends up in the table, in order."""
    from hwcheck.checker.semantics.fingerprint import TAIL

    rng = np.random.default_rng(4)
    n = TAIL + 5000
    low = rng.choice(1 << 22, n, replace=False).astype(np.uint64) + np.uint64((1 << 32) - (1 << 22))
    fps = (rng.integers(1, 1 << 31, n).astype(np.uint64) << np.uint64(32)) | low
    par = np.arange(n, dtype=np.int32)
    # two slices' buffers for one owner (the shape the round's buffers have), the second
    # slice holding the last 3,000
    cap, cut = n, n - 3000
    b_fps, b_rows = np.zeros((2, 1, cap), np.uint64), np.zeros((2, 1, cap, 8), np.int8)
    b_par, b_act = np.zeros((2, 1, cap), np.int32), np.zeros((2, 1, cap), np.uint8)
    for sl, (a, b) in enumerate([(0, cut), (cut, n)]):
        b_fps[sl, 0, :b - a], b_par[sl, 0, :b - a] = fps[a:b], par[a:b]
    counts = np.array([[cut], [n - cut]], np.int64)
    out = (np.zeros((n, 8), np.int8), np.zeros(n, np.int32), np.zeros(n, np.uint8),
           np.zeros(n, np.uint64))
    t = VisitedTable(1024)
    sl, k, w, stops = 0, 0, 0, 0
    while True:
        sl, k, w, t.filled = parallel._insert_owned(b_fps, b_rows, b_par, b_act, counts, 0, sl,
                                                    k, t.table, t.filled, *out, w)
        if sl == 2:
            break
        stops += 1
        assert t.table[-1] == 0
        t.grow()
    assert stops > 0 and w == n == t.filled
    assert np.array_equal(out[3], fps) and np.array_equal(out[1], par)  # in order
    assert np.array_equal(np.sort(t.fingerprints()), np.sort(fps))


@pytest.mark.slow
def test_domain_errors_are_found_as_with_one_worker(monkeypatch):
    """A step that leaves the declared domains: the same first (row, instance) from the merge
    of the workers' own records."""
    spec = protocol_spec("domains_overflow.py", {})
    one = explore(spec, 1)
    monkeypatch.setattr(expand_mod, "CHUNK", 3)
    monkeypatch.setattr(local_mod, "PARALLEL_CHECK", 2)  # state predicates' errors too
    assert any(h.kind == "domain" for h in one[0].hits.values())
    for workers in (2, 3):
        same_search(one, explore(spec, workers))


def _reads_outside():
    """States 0..5 of a counter, in one or two steps; its invariant reads slot[i], outside
    slot's shape once i passes 1, and a second one fails at i = 4."""
    from hwcheck.spec.lang import Spec

    spec = Spec("ReadsOutside", {})
    i = spec.scalar("i", 0, 5)
    slot = spec.array("slot", (2,), 0, 1)
    spec.initial(lambda blk: None)
    for step in (1, 2):
        @spec.action(f"Add{step}", modifies=[i])
        def add(blk, step=step) -> None:
            blk.require(i + step <= 5)
            blk.set(i, i + step)
    spec.invariant("SlotClear", slot[i] == 0)
    spec.invariant("Below4", i < 4)
    return spec


@pytest.mark.slow
def test_state_predicates_checked_a_slice_a_worker_keep_the_first_hit(monkeypatch):
    """A state predicate that reads outside a shape, and one that fails, checked by the
    workers a slice each: the same first state for each as one call over the level."""
    spec = _reads_outside()
    one = explore(spec, 1)
    assert {h.kind for h in one[0].hits.values()} >= {"domain", "invariant"}
    monkeypatch.setattr(local_mod, "PARALLEL_CHECK", 1)
    for workers in (2, 3):
        same_search(one, explore(spec, workers))


VIOLATING = [
    ("model-R2M2E3-hw", HW),
    ("model-R2M2E3-leader-epoch", dict(HW, truncation="leader-epoch")),
    ("model-R3M1E3-kip-279", dict(replicas=3, max_offset=1, max_epoch=3, truncation="kip-279")),
    ("unclean-election", dict(replicas=2, max_offset=2, max_epoch=3, unclean=True, **FIXED)),
    ("acks-1", dict(replicas=2, max_offset=2, max_epoch=3, acks="1", **FIXED)),
]


def files(folder) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name, params", tiered(VIOLATING, {"model-R2M2E3-hw"}, key=lambda v: v[0],
                                                unpack=True),
                         ids=[v[0] for v in VIOLATING])
def test_trace_files_are_byte_identical(name, params, tmp_path):
    written = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        report = check(kafka(**params), Options(stop_at_violation=False), out=out,
                       run_name="run", workers=workers)
        assert report.exploration.stats["workers"] == workers
        assert report.violations()
        written.append(files(out))
    assert written[0] == written[1]
    assert any(name.endswith(".itf.json") for name in written[0])


@pytest.mark.slow
def test_a_protocol_that_is_not_kafka_gives_the_same_files(tmp_path):
    written = []
    for workers in (1, 3):
        out = tmp_path / f"w{workers}"
        check(protocol_spec("two_phase.py", {"rms": 2, "tm_commits_early": True}),
              Options(stop_at_violation=False), out=out, run_name="run", workers=workers)
        written.append(files(out))
    assert written[0] == written[1] and written[0]


def test_the_partitions_split_by_the_fingerprints_high_bits():
    """The numba owner of a fingerprint is the partitioned engine's ``owners``."""
    fps = np.array([1, 2**32 - 1, 2**32, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15], np.uint64)
    for parts in (1, 2, 3, 7):
        got = [owner_of(fp, parts) for fp in fps]
        assert got == list(owners(fps, parts))


def test_a_table_split_another_way_holds_the_same_fingerprints():
    """What a checkpoint of one number of workers becomes with another."""
    rng = np.random.default_rng(7)
    fps = np.unique(rng.integers(1, 2**63, 5000, dtype=np.int64).astype(np.uint64))
    two = parallel.PartitionedTable(2)
    for fp in fps:
        two.add(int(fp))
    for parts in (1, 3):
        other = parallel.PartitionedTable.of(parts, two.fingerprints())
        assert other.filled == fps.size
        got = np.sort(other.fingerprints())
        assert np.array_equal(got, fps)
        for fp in fps[:50]:  # each is where its owner looks for it
            assert not other.add(int(fp))


def _tables_of(monkeypatch) -> list:
    made = []
    real = parallel.PartitionedTable.__init__

    def init(self, *a, **kw):
        real(self, *a, **kw)
        made.append(self)

    monkeypatch.setattr(parallel.PartitionedTable, "__init__", init)
    return made


def test_ctrl_c_in_the_middle_of_a_chunk_stops_at_its_end(monkeypatch):
    """A real SIGINT while the workers insert: it is held until the chunk is done, so the
    visited tables hold exactly the states of the levels kept."""
    monkeypatch.setattr(expand_mod, "CHUNK", 50)
    real, calls = parallel._insert_owned, {"n": 0}

    def insert(*a):
        calls["n"] += 1
        if calls["n"] == 40:
            os.kill(os.getpid(), signal.SIGINT)
        return real(*a)

    monkeypatch.setattr(parallel, "_insert_owned", insert)
    tables = _tables_of(monkeypatch)
    # Ctrl-C as an interactive process takes it (a test runner's worker may ignore SIGINT)
    prev = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        ex, levels = explore(kafka(**HW), 2)
    finally:
        signal.signal(signal.SIGINT, prev)
    violated = any(h.kind != "reachable" for h in ex.hits.values())  # found before the stop
    assert (ex.complete, ex.stop_reason) == (False, "interrupted")
    assert ex.verdict == ("violated" if violated else "unknown")
    assert ex.distinct == sum(len(lv) for lv in levels) == tables[0].filled
    assert 1 < ex.distinct < 10487


@pytest.mark.slow
def test_out_of_memory_stops_at_a_chunk_boundary(monkeypatch):
    real, calls = VisitedTable.grow, {"n": 0}

    def failing(self, cap=None):
        calls["n"] += 1
        if calls["n"] > 6:
            raise MemoryError()
        return real(self, cap)

    monkeypatch.setattr(VisitedTable, "grow", failing)
    tables = _tables_of(monkeypatch)
    report = check(kafka(replicas=3, max_offset=2, max_epoch=3, **FIXED),
                   Options(stop_at_violation=False), workers=2)
    ex = report.exploration
    assert (report.verdict, ex.complete, ex.stop_reason) == ("unknown", False, "out of memory")
    assert 1 < ex.distinct == tables[0].filled


@pytest.mark.slow
def test_exact_runs_on_one_worker():
    report = check(kafka(**HW), Options(stop_at_violation=False), workers=2,
                   local=LocalSettings(exact=True))
    assert report.exploration.stats["workers"] == 1
    assert report.exploration.distinct == 10487


def test_the_default_is_every_core_this_process_may_use():
    assert parallel.default_workers() == len(os.sched_getaffinity(0))


def hwcheck(*args):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True)


@pytest.mark.parametrize("value", ["0", "-2"])
def test_workers_below_one_is_one_line_and_exit_2(value):
    res = hwcheck("check", "--workers", value)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: error: ") and "--workers" in lines[0]


@pytest.mark.slow
def test_workers_on_the_command_line(tmp_path):
    objs = []
    for workers in ("1", "2"):
        res = hwcheck("check", "-R", "3", "-M", "1", "-E", "3", "--truncation", "kip-279",
                      "--continue", "--json", "-q", "--workers", workers,
                      "--out", str(tmp_path / workers), "--run-name", "r")
        assert res.returncode == 12, res.stderr
        objs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert [o.pop("workers") for o in objs] == [1, 2]
    for o in objs:
        o.pop("seconds")
        o.pop("memory")
        for v in o["violations"]:
            v.pop("trace")
    assert objs[0] == objs[1]
    assert files(tmp_path / "1") == files(tmp_path / "2")
    res = hwcheck("check", "--engine", "spark", "--workers", "2")
    assert res.returncode == 2 and "--workers is for the local engine" in res.stderr
