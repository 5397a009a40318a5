"""`hwcheck check --spec FILE.tla [--config FILE.cfg]`: a TLA+ module through the compiled path,
with TLC's counts, its violations' traces replayable, and one line with exit 2 for what it does
not take; the domains widened where the reference search that found them stopped early."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.tla.front import build

ROOT = Path(__file__).resolve().parent.parent
TLA = ROOT / "tests" / "specs" / "tla"


def hwcheck(*args: str) -> Any:
    """The command in this process (its exit code, stdout and stderr apart)."""
    res = CliRunner().invoke(main, list(args))
    res.returncode = res.exit_code
    return res


def test_diehard_gives_tlcs_counts_and_its_violation_replays(tmp_path: Path) -> None:
    res = hwcheck("check", "--spec", str(TLA / "DieHard.tla"), "--continue", "--json",
                  "--out", str(tmp_path), "--run-name", "dh")
    assert res.returncode == 12, res.stderr  # violated
    out = json.loads(res.stdout)
    # TLC's figures for the puzzle (the port's, tests/specs/die_hard.py): 16 / 97 / 8
    assert out["tlc"] == {"distinct": 16, "generated": 97, "depth": 8}
    assert (out["distinct"], out["generated"], out["depth"]) == (16, 96, 7)
    assert [(v["property"], v["length"]) for v in out["violations"]] == [("NotSolved", 6)]
    trace = tmp_path / "dh" / "NotSolved.txt"
    text = trace.read_text()
    assert "Step 1: FillBig" in text and "big    5*" in text
    rep = hwcheck("replay", str(tmp_path / "dh" / "NotSolved.itf.json"),
                  "--spec", str(TLA / "DieHard.tla"))
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert "replay: confirmed: NotSolved violated in 6 steps" in rep.stdout


def test_the_config_option_reads_the_cfg_given(tmp_path: Path) -> None:
    cfg = tmp_path / "Copy.cfg"
    cfg.write_text("CONSTANTS Big = 5 Small = 3 Goal = 4 Huge = 9\nINIT Init NEXT Next\n")
    res = hwcheck("check", "--spec", str(TLA / "DieHard.tla"), "--config", str(cfg),
                  "--out", str(tmp_path))
    assert res.returncode == 2
    assert "Copy.cfg:1:" in res.stderr and "Huge" in res.stderr


@pytest.mark.slow
def test_the_config_option_picks_the_cfg(tmp_path: Path) -> None:
    cfg = tmp_path / "Copy.cfg"  # the puzzle's cfg under another name
    cfg.write_text((TLA / "DieHard.cfg").read_text())
    res = hwcheck("check", "--spec", str(TLA / "DieHard.tla"), "--config", str(cfg),
                  "--json", "--out", str(tmp_path))
    assert res.returncode == 12, res.stderr
    assert json.loads(res.stdout)["params"] == {"config": str(cfg)}
    assert (tmp_path / "Copy" / "NotSolved.txt").is_file()


NESTED = """---- MODULE Nested ----
EXTENDS Naturals, Sequences
VARIABLE f
Init == f = <<>>
Next == Len(f) < 2 /\\ f' = Append(f, 1)
====
"""


@pytest.mark.parametrize("case, message", [
    ("unsupported", "Nested.tla:1:1: not compiled yet: variable f holds values this case does "
                    "not store"),
    ("no cfg", "Lonely.cfg: cannot read"),
    ("config without tla", "--config is the TLC configuration of a TLA+ module"),
])
def test_what_check_does_not_take_is_one_line_and_exit_2(tmp_path: Path, case: str,
                                                         message: str) -> None:
    (tmp_path / "Nested.tla").write_text(NESTED)
    (tmp_path / "Nested.cfg").write_text("INIT Init NEXT Next\n")
    (tmp_path / "Lonely.tla").write_text(NESTED.replace("Nested", "Lonely"))
    args = {"unsupported": ["--spec", str(tmp_path / "Nested.tla")],
            "no cfg": ["--spec", str(tmp_path / "Lonely.tla")],
            "config without tla": ["--spec", str(ROOT / "tests" / "specs" / "die_hard.py"),
                                   "--config", str(tmp_path / "Nested.cfg")]}[case]
    res = hwcheck("check", *args, "--out", str(tmp_path))
    assert res.returncode == 2, res.stdout + res.stderr
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and message in lines[0], res.stderr


@pytest.mark.slow
def test_twophase_holds_with_tlcs_counts(tmp_path: Path) -> None:
    res = hwcheck("check", "--spec", str(TLA / "TwoPhase.tla"), "--json", "--out", str(tmp_path))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert (out["verdict"], out["tlc"]) == ("holds", {"distinct": 288, "generated": 1146,
                                                      "depth": 11})


@pytest.mark.slow
def test_domains_found_early_are_widened_until_a_run_leaves_none(tmp_path: Path) -> None:
    said: list[str] = []
    # three states of the reference search: every turns[p] still 0, phase still "idle"
    c = build(TLA / "Relay.tla", say=said.append, discover=3, cache=tmp_path)
    assert any("widened the domains after DomainError(turns" in s for s in said)
    assert c.encodings["turns"].hi >= 2
    ex = check(c.spec, Options(stop_at_violation=False)).exploration
    again = build(TLA / "Relay.tla", say=said.append, discover=10_000, cache=tmp_path / "x")
    full = check(again.spec, Options(stop_at_violation=False)).exploration
    assert (ex.distinct, ex.generated, ex.depth) == (full.distinct, full.generated, full.depth)
    kept = build(TLA / "Relay.tla", say=said.append, discover=3, cache=tmp_path)
    assert [e.hi for e in kept.encodings.values()] == [e.hi for e in c.encodings.values()]
