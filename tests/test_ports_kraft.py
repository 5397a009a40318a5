"""The KRaft-era ports of Vanlightly/kafka-tlaplus against TLC's counts: the simplified v3.5
replication spec (``tests/specs/kraft_v35.py``) and the same commit's ELR proposal
(``tests/specs/kraft_elr.py``, KIP-966 without unclean recovery).

The TLC runs that gave the counts are in ``tests/specs/tla/README.md``: full-state
fingerprints (no VIEW), the cfg's invariants, TLC counting the initial state as a generated
state and as a level (its generated and depth are hwcheck's plus one). Each configuration is a
kernel of its own (the limits size the domains), so each takes its compile the first time.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import NEEDS_JAVA

from hwcheck.checker import protocols
from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.view import classify

SPECS = Path(__file__).parent / "specs"


def v35(**params):
    return protocols.build(protocols.load(str(SPECS / "kraft_v35.py")), params)


def elr(**params):
    return protocols.build(protocols.load(str(SPECS / "kraft_elr.py")), params)


def limits(clean=0, unclean=0, fence=0, ap=0, view=False) -> dict:
    return dict(clean_limit=clean, unclean_limit=unclean, fence_limit=fence, ap_limit=ap,
                view=view)


def tlc(distinct: int, generated: int, depth: int) -> tuple[int, int, int]:
    return distinct, generated - 1, depth - 1


# TLC's distinct / generated / depth with the unclean shutdown limit at 1 (the others 0), every
# invariant holding. tests/specs/tla/README.md has ten configurations, hwcheck gives TLC's
# counts on each; a kernel of these ~700-cell rows compiles in 20-60 s, so CI pins one of each
# spec, in the slow tier.
SLOW = pytest.mark.slow
V35 = [pytest.param(limits(unclean=1), tlc(252_254, 820_125, 44), marks=SLOW)]
ELR = [pytest.param(limits(unclean=1), tlc(543_014, 2_143_943, 46), marks=SLOW)]


@pytest.mark.parametrize("params,counts", V35, ids=["unclean"])
def test_kraft_v35_counts_are_tlcs(params, counts):
    ex = check(v35(**params), Options(stop_at_violation=False)).exploration
    assert (ex.distinct, ex.generated, ex.depth) == counts
    assert ex.hits == {}  # every invariant holds, no domain error (no bag or log overflows)
    assert ex.complete


@pytest.mark.parametrize("params,counts", ELR, ids=["unclean"])
def test_kraft_elr_counts_are_tlcs(params, counts):
    ex = check(elr(**params), Options(stop_at_violation=False)).exploration
    assert (ex.distinct, ex.generated, ex.depth) == counts
    assert ex.hits == {}
    assert ex.complete


def test_kraft_v35_view_is_order_dependent():
    """The spec's VIEW leaves out the auxiliary counters, which the limits' guards read, so
    hwcheck calls it order-dependent: a check then gives the full-state counts beside
    (tests/test_view.py), here TLC's 642 / 1,482 / 24 at the limits 0."""
    view = classify(v35(**limits(view=True)))
    assert view.kind == "order-dependent" and view.excluded == ("aux_broker_epoch",) + tuple(
        f"aux_ctrs.{c}" for c in ("incarn_ctr", "clean_shutdown_ctr", "unclean_shutdown_ctr",
                                  "fence_broker_ctr", "alter_part_ctr"))
    assert "the guard of FenceBroker reads aux_ctrs.fence_broker_ctr" in view.reasons
    assert classify(elr(**limits(view=True))).kind == "order-dependent"


@pytest.mark.slow
@NEEDS_JAVA
@pytest.mark.parametrize("port,params,counts", [  # the kernels of the tests above
    (v35, limits(unclean=1), tlc(252_254, 820_125, 44)),
    (elr, limits(unclean=1), tlc(543_014, 2_143_943, 46)),
], ids=["v35", "elr"])
def test_the_ports_on_spark_give_tlcs_counts(port, params, counts):
    pytest.importorskip("pyspark")
    report = check(port(**params), Options(stop_at_violation=False), engine="spark",
                   master="local[2]", partitions=2)
    ex = report.exploration
    assert (ex.distinct, ex.generated, ex.depth) == counts
