"""Several levels a job (``inbox.run_levels``): the partitions' tasks, here threads, go from
level to level through the files of the store, and stop where the driver would."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

from helpers import kafka

from hwcheck.checker.engines import inbox
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.kafka.params import Params

PARTS = 2
ALL = inbox.Levels(most=10_000, budget=1e9)


R2_HW = Params(2, 2, 3, "hw", "hw")


def level_task(tmp_path, stop_at_violation: bool, params=R2_HW):
    k = Kernel(kafka(params))
    engine = LevelEngine(k, Options(stop_at_violation=stop_at_violation),
                         InProcessBackend(PARTS))
    task = dataclasses.replace(engine._task(), store=str(tmp_path), level=0)
    engine.backend.close()
    return k, task


def run_all(task, levels=ALL, parts=range(PARTS)):
    with ThreadPoolExecutor(PARTS) as pool:
        futures = {i: pool.submit(inbox.run_levels, task, i, levels) for i in parts}
        return {i: f.result() for i, f in futures.items()}


def test_one_job_explores_every_level(tmp_path):
    k, task = level_task(tmp_path, stop_at_violation=False)
    local = LocalEngine(k, Options(stop_at_violation=False)).run()
    got = run_all(task)
    assert len(got[0]) == len(got[1]) == local.depth + 2  # the last level finds nothing new
    assert sum(s["new"] for v in got.values() for s in v) == local.distinct
    assert sum(s["generated"] for v in got.values() for s in v) == local.generated
    assert [s["new"] for s in got[0][-1:] + got[1][-1:]] == [0, 0]


def test_the_inbox_read_a_few_buckets_at_a_time_finds_the_same_states(tmp_path):
    """Slices of 100 candidates: many slices a level, many pieces from each source, every block
    file read a run of buckets at a time; the same counts and the same level sizes."""
    (tmp_path / "whole").mkdir()
    (tmp_path / "sliced").mkdir()
    k, task = level_task(tmp_path / "whole", stop_at_violation=False)
    whole = run_all(task)
    _, task = level_task(tmp_path / "sliced", stop_at_violation=False)
    sliced = run_all(dataclasses.replace(task, slice=100))
    for i in range(PARTS):
        assert [s["new"] for s in sliced[i]] == [s["new"] for s in whole[i]]
        assert [s["generated"] for s in sliced[i]] == [s["generated"] for s in whole[i]]
        assert [s["sp"] for s in sliced[i]] == [s["sp"] for s in whole[i]]
        assert max(s["slices"] for s in sliced[i]) > 5 * max(s["slices"] for s in whole[i])


def test_a_task_run_again_gives_back_the_levels_it_finished(tmp_path):
    _, task = level_task(tmp_path, stop_at_violation=False)
    first = run_all(task)
    again = inbox.run_levels(task, 1, ALL)
    assert again == first[1]
    later = inbox.run_levels(dataclasses.replace(task, level=3), 0, ALL)
    assert later == first[0][3:]


def test_the_job_stops_where_the_driver_stops(tmp_path):
    k, task = level_task(tmp_path, stop_at_violation=True)
    assert task.rule.first_hit and "invariant" in task.kinds[0]  # the hw model's invariants stop it
    driver = LevelEngine(k, Options(stop_at_violation=True), InProcessBackend(PARTS)).run()
    assert driver.hits and driver.stop_reason == "stopped at the first violation"
    got = run_all(task)
    assert len(got[0]) == len(got[1]) == driver.stats["levels"]


def test_budget_and_most_end_a_job_at_the_same_level_everywhere(tmp_path):
    _, task = level_task(tmp_path, stop_at_violation=False)
    got = run_all(task, inbox.Levels(most=4, budget=1e9))
    assert [len(v) for v in got.values()] == [4, 4]
    got = run_all(dataclasses.replace(task, level=4), inbox.Levels(most=100, budget=0.0))
    assert [len(v) for v in got.values()] == [1, 1]  # a budget spent after one level


def test_a_task_alone_gives_up_waiting(tmp_path):
    _, task = level_task(tmp_path, stop_at_violation=False)
    got = run_all(task, inbox.Levels(most=100, budget=1e9, patience=0.2), parts=[0])
    assert len(got[0]) == 1  # partition 1 never ran: partition 0 returned after its level 0
    rest = run_all(task)  # the next job: partition 0 takes level 0 from its done mark
    assert rest[0][0] == got[0][0]
    assert len(rest[0]) == len(rest[1]) > 1
