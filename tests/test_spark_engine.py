"""The shared engine contract, run against the Spark engine in local mode (local[2], 4 partitions):
MODEL.md's Kafka table in the fast tier, the protocols that are not Kafka in the slow tier.

One SparkContext serves the whole test session (``checker.spark.session`` reuses a running
context with the same master), so the JVM starts once.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark")

from helpers import NEEDS_JAVA  # noqa: E402

pytestmark = NEEDS_JAVA

from engine_contract import KafkaContract, ProtocolContract  # noqa: E402

from hwcheck.checker.engines.options import Options  # noqa: E402
from hwcheck.checker.run import check  # noqa: E402
from hwcheck.spec.kafka.params import Params  # noqa: E402
from helpers import kafka as build  # noqa: E402

SPARK = {"master": "local[2]", "partitions": 4}


@pytest.fixture(scope="module", autouse=True)
def spark_session():
    from hwcheck.checker.spark import session

    sc = session.spark_context(SPARK["master"], SPARK["partitions"])
    yield sc


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
def test_spark_and_local_write_identical_traces(tmp_path, params):
    """Same counterexamples, byte for byte, apart from the engine's name in #meta."""
    runs = {}
    for engine, opts in (("local", {}), ("spark", SPARK)):
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
    for key in ("seconds", "engine", "workers", "memory"):  # how it ran, not what it found
        lj.pop(key, None), sj.pop(key, None)
    assert json.dumps(sj).replace("/spark/", "/local/") == json.dumps(lj)


def test_statistics_stay_per_level(tmp_path):
    """The driver reports per-level figures; the stores stay in the executors."""
    report = check(build(Params(2, 2, 3, "kip-279", "hw")), Options(stop_at_violation=False),
                   engine="spark", **SPARK)
    st = report.exploration.stats
    assert st["partitions"] == 4 and st["exchange"] == "inbox" and st["checkpoint"] == "none"
    assert st["levels"] == report.exploration.depth + 2  # level 0, then one per level and the last
    assert len(st["level_seconds"]) == st["levels"]
    # the visited sets on disk: fingerprints, parents and actions, 17 bytes a state at least
    assert st["store_bytes"] >= 17 * report.exploration.distinct


@pytest.mark.slow
def test_merge_policy_and_exchange_change_nothing():
    """The visited runs on disk merged after every level, or never, and the candidate blocks
    through Spark's shuffle instead of the inbox: same counts and the same canonical paths."""
    from hwcheck.checker.semantics.kernel import Kernel
    from hwcheck.checker.engines.local import LocalEngine
    from hwcheck.checker.spark.engine import SparkEngine

    k = Kernel(build(Params(2, 2, 3, "hw", "hw")))
    local = LocalEngine(k, Options(stop_at_violation=False)).run()
    for opts in ({"merge_ratio": 0.0}, {"merge_ratio": 1e9}, {"exchange": "shuffle"}):
        spark = SparkEngine(k, Options(stop_at_violation=False), **opts, **SPARK).run()
        assert (spark.distinct, spark.generated, spark.depth) == \
            (local.distinct, local.generated, local.depth)
        assert {n: h.path for n, h in spark.hits.items()} == \
            {n: h.path for n, h in local.hits.items()}
