"""The shared engine contract, run against the Spark engine in local mode (local[2], 2 partitions):
The base model's Kafka table in the fast tier, the protocols that are not Kafka in the slow tier.

One SparkContext serves the whole test session (``checker.spark.session`` reuses a running
context with the same master), so the JVM starts once.
"""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("pyspark")

from helpers import NEEDS_JAVA, started  # noqa: E402

pytestmark = NEEDS_JAVA

from engine_contract import KafkaContract, ProtocolContract  # noqa: E402
from helpers import kafka as build  # noqa: E402

from hwcheck.checker.engines.options import Options  # noqa: E402
from hwcheck.checker.run import check  # noqa: E402
from hwcheck.spec.kafka.params import Params  # noqa: E402

# two partitions on two slots: a job runs many levels (``inbox.run_levels``); FOUR: more
# partitions than slots, one level a job
SPARK = {"master": "local[2]", "partitions": 2}
FOUR = {"master": "local[2]", "partitions": 4}


@pytest.fixture(scope="module", autouse=True)
def spark_session():
    from hwcheck.checker.spark import session

    sc = session.spark_context(SPARK["master"], SPARK["partitions"])
    yield sc


@pytest.mark.slow  # Spark runs in the slow tier only: a JVM and its session start per file
class TestSparkEngine(KafkaContract):
    engine = "spark"
    engine_opts = SPARK


@pytest.mark.slow
class TestSparkProtocols(ProtocolContract):
    """The protocols that are not Kafka (tests/specs), rebuilt in the executors from their spec
    files: the slow tier (about 3 s a run, for the Spark job's fixed cost per level)."""

    engine = "spark"
    engine_opts = SPARK


def _itf_files(folder):
    return sorted(p for p in folder.rglob("*.itf.json"))


@pytest.mark.parametrize("params", [
    Params(2, 2, 3, "hw", "hw"),
    pytest.param(Params(2, 2, 3, "kip-279", "epoch-start", acks="1"), marks=pytest.mark.slow)],
                         ids=lambda p: p.slug())
@pytest.mark.parametrize("spark_opts", [pytest.param(SPARK, marks=pytest.mark.slow),
                                        pytest.param(FOUR, marks=pytest.mark.slow)],
                         ids=["2-partitions", "4-partitions"])
def test_spark_and_local_write_identical_traces(tmp_path, params, spark_opts):
    """Same counterexamples, byte for byte, apart from the engine's name in #meta."""
    runs = {}
    for engine, opts in (("local", {}), ("spark", spark_opts)):
        out = tmp_path / engine
        report = check(build(params), Options(stop_at_violation=False), engine=engine, out=out,
                       run_name="run", **opts)
        runs[engine] = (report, out)
    (local, lout), (spark, sout) = runs["local"], runs["spark"]
    assert spark.as_json()["violations"] != []
    lfiles, sfiles = _itf_files(lout), _itf_files(sout)
    assert [p.name for p in lfiles] == [p.name for p in sfiles] != []
    for lf, sf in zip(lfiles, sfiles):
        lb, sb = lf.read_bytes(), sf.read_bytes()
        assert json.loads(sb)["#meta"]["engine"] == "spark"
        assert sb.replace(b'"spark"', b'"local"') == lb, sf.name
        assert sf.with_suffix("").with_suffix(".txt").read_text().replace("spark", "local") == \
            lf.with_suffix("").with_suffix(".txt").read_text()
    lj, sj = local.as_json(), spark.as_json()
    for key in ("seconds", "engine", "workers", "memory", "spark"):  # how it ran, not what
        lj.pop(key, None), sj.pop(key, None)
    assert json.dumps(sj).replace("/spark/", "/local/") == json.dumps(lj)


@pytest.mark.slow
def test_statistics_stay_per_level(tmp_path):
    """The driver reports per-level figures; the stores stay in the executors."""
    report = check(build(Params(2, 2, 3, "kip-279", "hw")), Options(stop_at_violation=False),
                   engine="spark", **SPARK)
    st = report.exploration.stats
    assert st["partitions"] == 2 and st["exchange"] == "inbox" and st["checkpoint"] == "none"
    assert st["levels"] == report.exploration.depth + 2  # level 0, then one per level and the last
    assert len(st["level_seconds"]) == st["levels"]
    # the visited sets on disk: fingerprints, parents and actions, 17 bytes a state at least
    assert st["store_bytes"] >= 17 * report.exploration.distinct


@pytest.mark.slow
def test_merge_policy_and_exchange_change_nothing():
    """The visited runs on disk merged after every level, or never, the candidate blocks
    through Spark's shuffle instead of the inbox, a slice of 7 candidates: same counts and the
    same canonical paths."""
    from hwcheck.checker.engines.local import LocalEngine
    from hwcheck.checker.semantics.kernel import Kernel
    from hwcheck.checker.spark.engine import SparkEngine

    k = Kernel(build(Params(2, 2, 3, "hw", "hw")))
    local = LocalEngine(k, Options(stop_at_violation=False)).run()
    for opts in ({"merge_ratio": 0.0}, {"merge_ratio": 1e9}, {"exchange": "shuffle"},
                 {"levels_per_job": 1}, {"job_seconds": 0.0}, FOUR, {"slice": 7}):
        spark = SparkEngine(k, Options(stop_at_violation=False), **dict(SPARK, **opts)).run()
        assert (spark.distinct, spark.generated, spark.depth) == \
            (local.distinct, local.generated, local.depth)
        assert {n: h.path for n, h in spark.hits.items()} == \
            {n: h.path for n, h in local.hits.items()}


@pytest.mark.slow
def test_sigterm_keeps_the_violations_with_their_traces(tmp_path):
    """SIGTERM to `hwcheck check --engine spark` past the first violations: exit 12, violated,
    incomplete, and each violation's trace rebuilt from the levels the partitions stored in
    full: the local engine's trace, byte for byte apart from the engine's name."""
    import signal
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "hwcheck.checker", "check", "-R", "3", "-M", "2", "-E", "3",
           "--continue", "--json", "--run-name", "run"]
    with started(cmd + ["--engine", "spark", "--spark-master", "local[2]",
                        "--out", str(tmp_path / "spark")],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                 env=dict(os.environ, HWCHECK_SPARK_JOB_SECONDS="0.3")) as proc:  # jobs of
        # several levels each, the signal in the middle of one
        for line in proc.stderr:  # under way past the first violations (depth 10)
            if line.strip().startswith("level ") and int(line.split()[1]) > 12:
                break
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate()
    assert proc.returncode == 12, err[-2000:]
    obj = json.loads(out.strip().splitlines()[-1])
    assert (obj["verdict"], obj["complete"], obj["stop_reason"]) == (
        "violated", False, "terminated (SIGTERM)")
    assert {v["property"]: v["length"] for v in obj["violations"]} == {
        "CommittedNotLost": 9, "AckedNotLost": 9, "LogsMatchBelowHw": 10}
    local = subprocess.run(cmd + ["-q", "--out", str(tmp_path / "local")], capture_output=True,
                           text=True)
    assert local.returncode == 12, local.stderr
    sfiles, lfiles = _itf_files(tmp_path / "spark"), _itf_files(tmp_path / "local")
    assert [p.name for p in sfiles] == [p.name for p in lfiles] != []
    for sf, lf in zip(sfiles, lfiles):
        assert sf.read_bytes().replace(b'"spark"', b'"local"') == lf.read_bytes(), sf.name
