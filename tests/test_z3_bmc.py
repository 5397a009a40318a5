"""Bounded model checking with Z3 against the breadth-first search: the same shortest violation
lengths on the base model's table, traces that replay through the interpreter, and ``hwcheck
bmc``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from engine_contract import FIXED, MODEL_TABLE
from helpers import kafka as build

from hwcheck.checker.cli.main import main
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.traces.trace import from_path
from hwcheck.checker.z3.checks import bmc, proven_facts, symmetry_of
from hwcheck.spec.kafka.params import Params

# (params, invariant, BFS shortest length) from the base model's table and its two extra rows
ROWS = [(Params(R, M, E, trunc, exp), inv, n)
        for R, M, E, trunc, exp, _, _, _, shortest in MODEL_TABLE for inv, n in shortest.items()]
ROWS += [(Params(2, 2, 3, acks="1", **FIXED), "AckedNotLost", 3),
         (Params(2, 2, 3, unclean=True, **FIXED), "CommittedNotLost", 4)]
FAST = [r for r in ROWS if r[0].R == 2]
SLOW = [r for r in ROWS if r[0].R != 2]


def _ids(r):
    p, inv, n = r
    return f"{p.slug()}-{inv}-{n}"


def _shortest(params: Params, inv: str, depth: int, symmetry: bool = True, assume: bool = True):
    """bmc as ``hwcheck bmc`` runs it: symmetry breaking and proven invariants assumed."""
    spec = build(params)
    prop = spec.invariant_named(inv)
    sym = symmetry_of(spec)
    rep = bmc(spec, [(inv, "invariant", prop.expr)], depth,
              symmetry=sym if symmetry else None,
              assume=proven_facts(spec, None, sym) if assume else ())
    return spec, rep


def _check_row(params, inv, n):
    spec, rep = _shortest(params, inv, n + 1)
    assert rep.status == "violated"
    assert rep.depth == n, f"bmc's shortest {inv} violation has {rep.depth} steps, BFS's {n}"
    (hit,) = rep.hits
    trace = from_path(spec, Interpreter(spec), inv, "invariant", "z3-bmc", hit.path)
    assert trace.length == n


@pytest.mark.slow
@pytest.mark.parametrize("row", FAST, ids=_ids)
def test_shortest_lengths_match_bfs(row):
    _check_row(*row)


@pytest.mark.slow
@pytest.mark.parametrize("row", SLOW, ids=_ids)
def test_shortest_lengths_match_bfs_deep(row):
    _check_row(*row)


@pytest.mark.slow
@pytest.mark.parametrize("params,inv", [
    (Params(3, 2, 3, acks="1", **FIXED), "AckedNotLost"),
    (Params(3, 2, 3, unclean=True, **FIXED), "CommittedNotLost")], ids=["acks1", "unclean"])
def test_symmetry_breaking_keeps_the_shortest_length(params, inv):
    a = _shortest(params, inv, 6, symmetry=True)[1]
    b = _shortest(params, inv, 6, symmetry=False)[1]
    assert a.status == b.status == "violated"
    assert a.depth == b.depth


@pytest.mark.parametrize("row", FAST[:2] + FAST[-2:], ids=_ids)
def test_plain_bmc_gives_the_same_lengths(row):
    """Without symmetry breaking and without assumed invariants: the same shortest length."""
    params, inv, n = row
    rep = _shortest(params, inv, n, symmetry=False, assume=False)[1]
    assert rep.status == "violated" and rep.depth == n


def test_assumed_facts_are_proved_invariants():
    spec = build(Params(2, 2, 3, "hw", "hw"))
    names = [n for n, _ in proven_facts(spec, None, symmetry_of(spec))]
    assert {"HwBelowLeo", "LeaderInIsr", "LogPrefix"} <= set(names)


def test_no_violation_within_the_bound_is_unknown_not_holds():
    spec = build(Params(2, 2, 3, **FIXED))
    props = [(i.name, "invariant", i.expr) for i in spec.invariants]
    rep = bmc(spec, props, 4)
    assert rep.status == "unknown" and rep.depth == 4 and not rep.hits
    assert "not a proof" in rep.reason


def test_action_properties_are_checked_on_the_last_step():
    spec = build(Params(2, 2, 3, "hw", "hw"))
    props = [(p.name, "action", p.expr) for p in spec.action_properties]
    rep = bmc(spec, props, 3)
    assert rep.status == "unknown" and rep.depth == 3  # both hold in every reachable step


def test_cli_bmc_reports_and_writes_the_8_step_violation(tmp_path):
    res = CliRunner().invoke(main, [
        "bmc", "--depth", "9", "--replicas", "2", "--max-offset", "2", "--max-epoch", "3",
        "--truncation", "hw", "--out", str(tmp_path), "--run-name", "r"])
    assert res.exit_code == 12, res.output
    assert "CommittedNotLost in 8 steps" in res.output
    assert "depth 7: no violation" in res.stderr and "depth 8: violated" in res.stderr
    data = json.loads((tmp_path / "r" / "CommittedNotLost.itf.json").read_text())
    assert data["#meta"]["engine"] == "z3-bmc" and len(data["states"]) == 9
    itf_file = tmp_path / "r" / "CommittedNotLost.itf.json"
    replay = CliRunner().invoke(main, ["replay", "--z3", str(itf_file)])
    assert replay.exit_code == 0, replay.output
    assert "certified by Z3" in replay.output


def test_cli_bmc_without_violation_exits_unknown(tmp_path):
    res = CliRunner().invoke(main, [
        "bmc", "--depth", "3", "--truncation", "kip-279", "--isr-expansion", "epoch-start",
        "--out", str(tmp_path)])
    assert res.exit_code == 3, res.output
    assert "no violation within 3 steps (bounded; not a proof)" in res.output


def test_cli_bmc_rejects_unknown_invariant():
    res = CliRunner().invoke(main, ["bmc", "--invariant", "Nope"])
    assert res.exit_code == 2
