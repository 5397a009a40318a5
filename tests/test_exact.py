"""--exact keeps every state: the same counts and traces as fingerprints on the base model's
configurations and on other protocols, and two different states that share a fingerprint are
both kept."""

from __future__ import annotations

import numpy as np
import pytest
from engine_contract import MODEL_TABLE, PROTOCOL_TABLE, protocol_spec, row_id
from helpers import kafka, tiered

from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.fingerprint import table_insert_exact


@pytest.mark.parametrize("row", tiered(MODEL_TABLE, set(), key=lambda r: r[:5]),  # slow: a kernel's
                         ids=lambda r: f"R{r[0]}M{r[1]}E{r[2]}-{r[3]}-{r[4]}")  # exact expansion
def test_exact_and_fingerprints_agree_on_model_md(row):
    R, M, E, trunc, exp, distinct, generated, depth, shortest = row
    spec = kafka(replicas=R, max_offset=M, max_epoch=E, truncation=trunc, isr_expansion=exp)
    _agree(spec, distinct, generated, depth, shortest)


@pytest.mark.parametrize("row", tiered(PROTOCOL_TABLE, {"two_phase-rms2-tm_commits_earlyTrue"},
                                       key=row_id), ids=row_id)
def test_exact_and_fingerprints_agree_on_other_protocols(row):
    file, params, distinct, generated, depth, shortest = row
    _agree(protocol_spec(file, params), distinct, generated, depth, shortest)


def _agree(spec, distinct, generated, depth, shortest) -> None:
    runs = [check(spec, Options(stop_at_violation=False), local=LocalSettings(exact=exact))
            for exact in (False, True)]
    for report in runs:
        ex = report.exploration
        assert (ex.distinct, ex.generated, ex.depth) == (distinct, generated, depth)
        assert {o.name: o.length for o in report.violations()} == shortest
    fp, exact = runs
    assert [o.trace.states for o in fp.violations()] == [o.trace.states for o in exact.violations()]
    assert exact.as_json()["collision_probability"] == 0.0
    assert fp.as_json()["collision_probability"] > 0.0


def test_a_shared_fingerprint_does_not_hide_a_state():
    table = np.zeros(16, np.uint64)
    slots = np.zeros(16, np.int64)
    store = np.zeros((4, 8), np.int8)
    a, b = np.arange(8, dtype=np.int8), np.arange(8, dtype=np.int8)[::-1].copy()
    fp = np.uint64(12345)  # the same fingerprint for two different states
    assert table_insert_exact(table, slots, 15, fp, a, store, 0)
    store[0] = a
    assert table_insert_exact(table, slots, 15, fp, b, store, 1)  # a collision: still new
    store[1] = b
    assert not table_insert_exact(table, slots, 15, fp, a, store, 2)  # the same state: seen
    assert not table_insert_exact(table, slots, 15, fp, b, store, 2)
    assert sorted(slots[table != 0].tolist()) == [0, 1]
