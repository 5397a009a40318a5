"""`bench/bench_tla.py` (`make bench-tla`): its cfgs, its reading of TLC, the counts it insists on
and its table, without TLC or a kernel (hwcheck's and TLC's runs replaced by recorded results);
the whole script without TLC is in the slow tier."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from hwcheck.checker.tla.cfg import parse_cfg

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("bench_tla", ROOT / "bench" / "bench_tla.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_tla"] = bench  # dataclasses look their module up
_spec.loader.exec_module(bench)

TLC_OUT = """Model checking completed. No error has been found.
2744706 states generated, 296448 distinct states found, 0 states left on queue.
The depth of the complete state graph search is 23.
"""


@pytest.mark.parametrize("row", bench.ROWS, ids=lambda r: r.name)
def test_each_row_names_a_module_and_a_cfg_tlc_reads(row, tmp_path):
    assert row.module.is_file()
    cfg = bench.cfg_path(row, tmp_path)
    parsed = parse_cfg(cfg.read_text(), cfg.name)
    # TLC and hwcheck agree on deadlock only when the cfg turns it off (TLC runs with -deadlock)
    assert parsed.check_deadlock is False or row.cfg.startswith("@")
    assert parsed.invariants
    if row.port is not None and not row.cfg.startswith("@"):
        assert tuple(n for n, _ in parsed.invariants) == row.invariants


def test_two_phase_cfg_has_the_rms_as_model_values(tmp_path):
    row = next(r for r in bench.ROWS if r.name == "TwoPhase-RM8")
    parsed = parse_cfg(bench.cfg_path(row, tmp_path).read_text())
    rms, _ = parsed.constants["RM"]
    assert len(rms) == 8


def test_tlc_counts_are_read_with_and_without_thousands_separators():
    assert bench.parse_tlc(TLC_OUT) == {"generated": 2_744_706, "distinct": 296_448}
    assert bench.parse_tlc(TLC_OUT.replace("2744706", "2,744,706")
                           .replace("296448", "296,448"))["distinct"] == 296_448
    with pytest.raises(SystemExit, match="TLC gave no counts"):
        bench.parse_tlc("Error: TLC threw an unexpected exception.")


def _fake_hwcheck(results):
    """hwcheck's runs in the order asked: each call the next recorded result."""
    it = iter(results)

    def run(args, out):
        return dict(next(it))
    return run


def _run(distinct, generated, seconds, whole):
    return {"distinct": distinct, "generated": generated, "seconds": seconds, "whole": whole,
            "tlc": {"distinct": distinct, "generated": generated + 1, "depth": 9}}


def test_a_row_shows_medians_and_the_ratio_to_the_port(monkeypatch, tmp_path):
    row = next(r for r in bench.ROWS if r.name == "DieHard")
    # warm-up module, warm-up port, then module/port alternating
    runs = [_run(16, 30, 9.0, 9.0), _run(16, 30, 9.0, 9.0),
            _run(16, 30, 0.2, 1.0), _run(16, 30, 0.1, 1.0),
            _run(16, 30, 0.4, 3.0), _run(16, 30, 0.1, 2.0),
            _run(16, 30, 0.3, 2.0), _run(16, 30, 0.2, 2.0)]
    monkeypatch.setattr(bench, "hwcheck", _fake_hwcheck(runs))
    line = bench.bench_row(row, tmp_path, str(tmp_path / "out"), 3, None, 1)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[:8] == ["DieHard", "DieHard.cfg", "16", "0.30 s", "53", "2.00 s",
                         "0.10 s / 2.00 s", "3.00x / 1.00x"]
    assert cells[8:] == ["", "", "", ""]  # no TLC given


def test_tlc_is_compared_on_its_own_counts(monkeypatch, tmp_path):
    row = next(r for r in bench.ROWS if r.name == "TwoPhase-RM7")
    monkeypatch.setattr(bench, "hwcheck", _fake_hwcheck([_run(160, 500, 1.0, 2.0)] * 2))
    monkeypatch.setattr(bench, "tlc", lambda jar, module, cfg, workers: {
        "distinct": 160, "generated": 501, "whole": 8.0 / workers})
    line = bench.bench_row(row, tmp_path, str(tmp_path / "out"), 1, "tla2tools.jar", 1)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[6:] == ["no port", "", "8.00 s (20/s)", "4.0x", "4.00 s (40/s)", "2.0x"]


@pytest.mark.parametrize("who", ["port", "tlc"])
def test_different_counts_fail_the_run(monkeypatch, tmp_path, who):
    row = next(r for r in bench.ROWS if r.name == "DieHard")
    port = _run(16, 31 if who == "port" else 30, 0.1, 1.0)
    monkeypatch.setattr(bench, "hwcheck", _fake_hwcheck([_run(16, 30, 0.1, 1.0), port] * 2))
    monkeypatch.setattr(bench, "tlc", lambda jar, module, cfg, workers: {
        "distinct": 15, "generated": 31, "whole": 1.0})
    with pytest.raises(SystemExit, match="DieHard: (the hand port|TLC \\(1 worker\\)) found"):
        bench.bench_row(row, tmp_path, str(tmp_path / "out"), 1, "tla2tools.jar", 1)


def test_a_module_the_compiled_path_does_not_take_is_skipped_with_its_reason(monkeypatch,
                                                                              tmp_path):
    row = next(r for r in bench.ROWS if r.optional)

    def refuse(args, out):
        raise bench.Skip("hwcheck: error: KafkaHW.tla:1:1: not compiled yet")
    monkeypatch.setattr(bench, "hwcheck", refuse)
    line = bench.bench_row(row, tmp_path, str(tmp_path / "out"), 1, None, 1)
    assert "skipped: hwcheck: error: KafkaHW.tla:1:1: not compiled yet" in line


def test_an_unknown_row_is_one_line_and_exit_2():
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_tla.py"), "--only",
                          "Nope"], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"bench_tla.py: error: unknown row(s) Nope: choose from "
        f"{', '.join(r.name for r in bench.ROWS)}"]


@pytest.mark.slow
def test_without_tlc_the_hwcheck_half_runs():
    res = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_tla.py"), "--only",
                          "DieHard", "--runs", "1"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert out[0].startswith("TLC not given")
    row = next(line for line in out if line.startswith("| DieHard |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "16" and cells[8:] == ["", "", "", ""]
