"""Where a level's time goes (``HWCHECK_PHASES``): off, nothing is measured and nothing is
wrapped; on, every phase of the local engine with several workers is accounted for, the parts
inside the whole, and the exploration is the same."""

from __future__ import annotations

import pytest
from helpers import kafka

from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.engines.phases import VARIABLE, Phases
from hwcheck.checker.semantics.kernel import Kernel

HW = dict(replicas=2, max_offset=2, max_epoch=3, truncation="hw")


def nested(phases: dict, parts: list[str], whole: str) -> bool:
    """Phases timed inside another one's interval, by the same clock, add up to no more than
    it: an accounting identity of the phase table (1 ms for the float sums), not a speed."""
    return sum(phases[p]["wall"] for p in parts) <= phases[whole]["wall"] + 1e-3


def test_off_it_wraps_nothing():
    phases = Phases()
    assert phases.span("level") is phases.span("expand")  # one shared do-nothing block
    work = lambda: 1  # noqa: E731
    assert phases.task("expand: generate", work) is work
    with phases.span("level"):
        pass
    assert phases.figures == {} and phases.stats() == {}


@pytest.mark.parametrize("value, on", [("", False), ("0", False), ("1", True)])
def test_the_variable_turns_it_on(monkeypatch, value, on):
    monkeypatch.setenv(VARIABLE, value)
    assert Phases.from_environment().on is on


def run(workers: int):
    return LocalEngine(Kernel(kafka(**HW)), Options(stop_at_violation=False),
                       workers=workers).run()


def test_every_phase_of_two_workers_is_timed_and_the_parts_fit_the_whole(monkeypatch, capsys):
    monkeypatch.delenv(VARIABLE, raising=False)
    off = run(2)
    assert "phases" not in off.stats
    monkeypatch.setenv(VARIABLE, "1")
    on = run(2)
    assert (on.distinct, on.generated, on.depth) == (off.distinct, off.generated, off.depth)
    ph = on.stats["phases"]
    main = {name: f["main"] for name, f in ph.items() if "main" in f}
    tasks = {name: f["workers"] for name, f in ph.items() if "workers" in f}
    assert {"level", "expand", "expand: spill into buckets", "expand: wait for generation",
            "expand: wait for inserts", "expand: sort/gather", "level end",
            "level end: checks"} <= set(main)
    assert {"expand: generate", "expand: insert", "expand: sort/gather"} <= set(tasks)
    levels = main["level"]["count"]
    assert levels >= on.depth and main["expand"]["count"] == levels
    assert main["level end"]["count"] == levels
    # two slices generate every chunk, two owners insert it, two sort their share a level
    assert tasks["expand: generate"]["count"] == tasks["expand: insert"]["count"] >= 2 * levels
    assert tasks["expand: sort/gather"]["count"] == 2 * levels
    assert nested(main, ["expand", "level end"], "level")
    assert nested(main, ["expand: wait for generation", "expand: wait for inserts",
                         "expand: sort/gather", "expand: spill into buckets"], "expand")
    assert nested(main, ["level end: checks"], "level end")
    for per in ph.values():
        for f in per.values():
            assert min(f["wall"], f["cpu"]) >= 0  # sums of clock differences, none negative
    err = capsys.readouterr().err
    assert err.startswith("phases (HWCHECK_PHASES)")
    assert all(f"  {name} " in err for name in ph)


def test_one_worker_times_the_level_around_its_fused_expansion(monkeypatch):
    monkeypatch.setenv(VARIABLE, "1")
    ph = run(1).stats["phases"]
    assert {"initial states: checks", "level", "expand", "expand: spill into buckets",
            "level end", "level end: checks"} == set(ph)
    assert all(set(per) == {"main"} for per in ph.values())
