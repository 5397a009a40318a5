"""The run plan (``checker/plan.py``): the level source a check needs, the one place that refuses
combinations of options (the command line and ``run.check`` alike), the workers and the line
that says how a run explores; and the typed figures a run reports. Building a plan compiles
nothing: only the last test runs a check (two-phase commit, a kernel the fast tier shares)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from engine_contract import protocol_spec
from helpers import kafka

from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.plan import CheckPlan, CheckRequest, PlanError, Source
from hwcheck.checker.run import CheckStats, InitialStates, check
from hwcheck.spec.lang import SpecError

ROOT = Path(__file__).resolve().parent.parent
KAFKA = {"replicas": 2, "max_offset": 2, "max_epoch": 3, "truncation": "hw"}


def _kafka(**kw):
    return kafka(**KAFKA, **kw)


def test_the_source_is_what_the_run_needs():
    two_phase = protocol_spec("two_phase.py", {"rms": 2})
    assert CheckPlan.build(two_phase, Options()).source is Source.LOCAL
    assert CheckPlan.build(two_phase, Options(), "partitioned", parts=3).source is \
        Source.PARTITIONED
    assert CheckPlan.build(two_phase, Options(), "spark").source is Source.SPARK
    # every transition kept: recoverability, or a liveness property among those checked
    assert CheckPlan.build(_kafka(), Options(), recoverable=True).source is Source.GRAPH
    # the state graph checkpoints and resumes as the local engine does
    kept = LocalSettings(checkpoint=Path("ck"), resume=Path("ck"))
    assert CheckPlan.build(_kafka(), Options(), recoverable=True, local=kept).local == kept
    ring = protocol_spec("token_ring.py", {"nodes": 2})
    plan = CheckPlan.build(ring, Options(), workers=2)
    assert plan.source is Source.GRAPH and plan.workers == 2
    assert [p.name for p in plan.liveness] == [p.name for p in ring.liveness]
    live = _kafka(liveness=True)
    assert CheckPlan.build(live, Options()).source is Source.GRAPH
    assert CheckPlan.build(live, Options(properties=("HwBelowLeo",))).source is Source.LOCAL
    with pytest.raises(ValueError, match="unknown engine 'nope'"):
        CheckPlan.build(two_phase, Options(), "nope")


# (what the run is given, the one line that refuses it): every refusal names the options
REFUSED = [
    (dict(live=True, opts=Options(symmetry=True)), "liveness properties are checked without "
     "--symmetry (fairness is per action instance, which renaming the members changes); leave "
     "out --symmetry, or check the others with --property"),
    (dict(live=True, engine="spark"), "liveness properties are decided on the state graph on "
     "one local worker: without --engine spark or --exact"),
    (dict(live=True, local=LocalSettings(exact=True)), "liveness properties are decided on "
     "the state graph on one local worker: without --engine spark or --exact"),
    (dict(recoverable=True, engine="spark"), "--recoverable explores the state graph on one "
     "local worker: without --engine spark or --exact"),
    (dict(engine="spark", local=LocalSettings(exact=True)),
     "--exact is for the local engine, without --checkpoint or --resume"),
    (dict(local=LocalSettings(exact=True, checkpoint=Path("ck"))),
     "--exact is for the local engine, without --checkpoint or --resume"),
    (dict(engine="spark", local=LocalSettings(checkpoint=Path("ck"))), "--checkpoint and "
     "--resume are for the local engine (the Spark engine keeps its own checkpoints of its "
     "partitions)"),
    (dict(local=LocalSettings(checkpoint=Path("a"), resume=Path("b"))), "--resume goes on "
     "writing checkpoints to its own folder; give --checkpoint the same folder, or leave it "
     "out"),
]


@pytest.mark.parametrize(("given", "line"), REFUSED)
def test_each_refusal_is_one_line_naming_the_options(given, line):
    spec = _kafka(liveness=given.pop("live", False))
    with pytest.raises(PlanError) as e:
        CheckPlan.build(spec, given.pop("opts", Options()), **given)
    assert str(e.value) == line
    assert isinstance(e.value, SpecError)  # run.check's callers catch what they always caught


def test_what_a_protocol_lacks_is_refused_by_the_plan():
    two_phase = protocol_spec("two_phase.py", {"rms": 2})
    with pytest.raises(PlanError, match=r"^--symmetry: two-phase declares no symmetry$"):
        CheckPlan.build(two_phase, Options(symmetry=True))
    with pytest.raises(PlanError, match=r"^--recoverable: two-phase states no healthy"):
        CheckPlan.build(two_phase, Options(), recoverable=True)
    assert CheckPlan.build(_kafka(), Options(symmetry=True)).members == 2


def test_run_check_refuses_as_the_command_line_does(tmp_path):
    """The library's run is planned by the same code: a VIEW with --exact is refused before
    anything is compiled or written, in the command line's words."""
    spec = protocol_spec("view_counter.py", {})
    with pytest.raises(PlanError) as e:
        check(spec, Options(), out=tmp_path, local=LocalSettings(exact=True))
    res = CliRunner().invoke(main, ["check", "--spec", str(ROOT / "tests/specs/view_counter.py"),
                                    "--exact", "--out", str(tmp_path)])
    assert res.exit_code == 2 and res.output.strip().splitlines()[-1] == f"Error: {e.value}"
    assert not any(tmp_path.iterdir())


def test_the_request_of_the_command_line():
    two_phase = protocol_spec("two_phase.py", {"rms": 2})
    plan = CheckPlan.of_request(two_phase, CheckRequest(workers=3, symmetry=False))
    assert (plan.source, plan.workers, plan.describe()) == (Source.LOCAL, 3,
                                                            "engine local, 3 workers")
    assert plan.options.properties is None and plan.options.stop_at_violation
    exact = CheckPlan.of_request(two_phase, CheckRequest(
        workers=2, keep_going=True, local=LocalSettings(exact=True)))
    assert (exact.workers, exact.notes, exact.describe()) == (
        1, ("note: --exact runs on one worker",), "engine local, 1 worker")
    assert not exact.options.stop_at_violation and exact.local.exact
    spark = CheckPlan.of_request(two_phase, CheckRequest(engine="spark", partitions=4,
                                                         spark_worker_memory=2**29))
    assert spark.describe() == "engine spark"
    assert spark.engine_opts == {"master": "local[*]", "partitions": 4, "slice": None,
                                 "worker_memory": 2**29}
    graph = CheckPlan.of_request(_kafka(), CheckRequest(recoverable=True, symmetry=True,
                                                        workers=2))
    assert graph.describe() == "state graph, 2 workers, symmetry"
    with pytest.raises(PlanError, match=r"^--workers is for the local engine \(the Spark "
                                        r"engine has --partitions\)$"):
        CheckPlan.of_request(two_phase, CheckRequest(engine="spark", workers=2))
    with pytest.raises(PlanError, match=r"^--spark-slice and --spark-worker-memory are for "
                                        r"--engine spark$"):
        CheckPlan.of_request(two_phase, CheckRequest(spark_slice=1000))


def test_no_function_of_the_command_line_is_over_80_lines():
    long = []
    for path in sorted((ROOT / "checker" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno >= 80:
                long.append(f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1})")
    assert long == []


def test_the_figures_are_typed_and_are_what_json_says(tmp_path):
    # the fast tier's two-phase configuration (its kernel compiled once for every test)
    spec = protocol_spec("two_phase.py", {"rms": 2, "tm_commits_early": True})
    report = check(spec, Options(stop_at_violation=False), workers=1)
    st = report.stats
    assert isinstance(st, CheckStats) and st.workers == 1
    assert st.initial == InitialStates(1, 1)
    assert st.graph is None and st.liveness == {} and st.spark is None
    assert st.memory is not None and st.memory.disk_bytes >= 0
    assert st.coverage is not None and sum(st.coverage.new) == report.exploration.distinct - 1
    res = CliRunner().invoke(main, ["check", "--spec", str(ROOT / "tests/specs/two_phase.py"),
                                    "--param", "rms=2", "--param", "tm_commits_early=true",
                                    "--workers", "1", "--continue",
                                    "--json", "--quiet", "--out", str(tmp_path)])
    obj = json.loads(res.stdout.splitlines()[-1])
    assert (obj["initial_states"], obj["initial_choices"], obj["workers"]) == (1, 1, 1)
    assert obj["coverage"] == report.coverage()
    assert set(obj["memory"]) == {"peak_rss", "bytes_per_state", "disk_bytes"}
