"""Published TLA+ specifications ported to the spec language, against TLC's counts.

The ports live in ``tests/specs/``; the TLC runs that gave the counts (the cfgs, the commands,
the conventions) are in ``tests/specs/tla/README.md``. TLC counts the initial state as a
generated state and as a level: its "generated" and "depth" are hwcheck's plus one. A port
must give TLC's distinct states, generated transitions and depth on every configuration, and
TLC's verdicts with the same shortest violations.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import NEEDS_JAVA

from hwcheck.checker import protocols
from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check

SPECS = Path(__file__).parent / "specs"


def port(file: str, **params):
    return protocols.build(protocols.load(str(SPECS / file)), params)


def tlc(distinct: int, generated: int, depth: int) -> tuple[int, int, int]:
    """hwcheck's counts for TLC's: the same distinct states, one generated state and one
    level fewer (TLC counts the initial state in both)."""
    return distinct, generated - 1, depth - 1


# (parameters, TLC's distinct / generated / depth, the invariants TLC finds violated with
# hwcheck's lengths for its shortest violations)
KIP320 = [
    (dict(replicas=2), tlc(5_973, 11_839, 18), {}),
    (dict(replicas=2, variant="first-try"), tlc(8_429, 19_387, 18), {}),
    pytest.param(dict(replicas=3), tlc(737_794, 1_967_560, 26), {},
                 marks=pytest.mark.slow),
    # TLC without invariants (it stops at the first violation otherwise)
    pytest.param(dict(replicas=3, variant="first-try"), tlc(1_437_076, 4_966_921, 28),
                 {"WeakIsr": 11, "StrongIsr": 12}, marks=pytest.mark.slow),
]


@pytest.mark.slow  # one kernel a configuration
@pytest.mark.parametrize("params,counts,violated", KIP320,
                         ids=["R2", "R2-first-try", "R3", "R3-first-try"])
def test_kip320_counts_are_tlcs(params, counts, violated):
    ex = check(port("kip320.py", **params), Options(stop_at_violation=False)).exploration
    assert (ex.distinct, ex.generated, ex.depth) == counts
    assert {n: h.length for n, h in ex.hits.items() if h.kind == "invariant"} == violated
    assert ex.complete


@pytest.mark.slow
@NEEDS_JAVA
def test_kip320_on_spark_gives_tlcs_counts():
    pytest.importorskip("pyspark")
    report = check(port("kip320.py", replicas=2), Options(stop_at_violation=False),
                   engine="spark", master="local[2]", partitions=2)
    ex = report.exploration
    assert (ex.distinct, ex.generated, ex.depth) == tlc(5_973, 11_839, 18)
