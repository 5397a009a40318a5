"""Inductive proofs with Z3: the shipped lemmas prove the fixed protocol's invariants, buggy
settings never get a proof (they get a counterexample to induction that the translation and
the interpreter agree on), and unknown is never reported as holds."""

from __future__ import annotations

import json

import pytest
import z3
from click.testing import CliRunner
from helpers import kafka as build

from hwcheck.checker.cli.main import main
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.z3 import checks as C
from hwcheck.checker.z3.checks import symmetry_of
from hwcheck.checker.z3.solver import Solver
from hwcheck.spec.kafka.params import Params

FIXED = dict(truncation="kip-279", isr_expansion="epoch-start")


def prove(params: Params, inv: str, names=None, symmetry=True):
    spec = build(params)
    conj = C.conjuncts(spec, inv, names)
    return spec, C.prove(spec, conj, 120, symmetry_of(spec) if symmetry else None)


@pytest.mark.parametrize("size", [(2, 2, 3), (3, 2, 3)], ids=lambda s: "R{}M{}E{}".format(*s))
@pytest.mark.parametrize("inv", ["CommittedNotLost", "LogsMatchBelowHw"])
def test_fixed_protocol_is_proved(size, inv):
    _, rep = prove(Params(*size, **FIXED), inv)
    assert rep.init_status == "holds"
    assert [a.status for a in rep.actions] == ["holds"] * 8
    assert rep.status == "holds"


@pytest.mark.slow
def test_symmetry_reduction_agrees_with_every_instance():
    """Without the reduction every instance and leader value is checked; same verdicts."""
    for params, inv in ((Params(3, 2, 3, **FIXED), "CommittedNotLost"),
                        (Params(3, 2, 3, "hw", "hw"), "CommittedNotLost")):
        _, a = prove(params, inv)
        _, b = prove(params, inv, symmetry=False)
        assert [v.status for v in a.actions] == [v.status for v in b.actions]
        assert sum(v.queries for v in b.actions) > sum(v.queries for v in a.actions)


BUGGY = [
    Params(3, 2, 3, "hw", "epoch-start"),
    Params(3, 2, 3, "leader-epoch", "epoch-start"),
    Params(3, 2, 3, "kip-279", "hw"),
    Params(3, 2, 3, acks="1", **FIXED),
    Params(3, 2, 3, unclean=True, **FIXED),
]


@pytest.mark.parametrize("params", BUGGY, ids=lambda p: p.slug())
def test_buggy_settings_get_a_cti_never_a_proof(params):
    spec, rep = prove(params, "AckedNotLost" if params.acks == "1" else "CommittedNotLost")
    assert rep.status == "violated"
    interp = Interpreter(spec)
    for v in rep.actions:
        if v.status != "violated":
            continue
        # the counterexample to induction is a real step of the model per the interpreter
        cti = v.cti
        assert interp.step(cti.inst, cti.pre) is not None
        assert (interp.step(cti.inst, cti.pre) == cti.post).all()


@pytest.mark.parametrize("params", [
    Params(3, 3, 3, t, e, a, m, u)
    for t, e, a, m, u in [("hw", "hw", "0", 1, True),
                          ("leader-epoch", "epoch-start", "1", 2, False),
                          ("kip-279", "hw", "all", 3, True),
                          ("kip-279", "epoch-start", "all", 1, False)]],
    ids=lambda p: p.slug())
def test_hw_below_leo_and_leader_in_isr_under_any_knobs(params):
    for inv in ("HwBelowLeo", "LeaderInIsr"):
        assert prove(params, inv)[1].status == "holds", inv


@pytest.mark.slow
@pytest.mark.parametrize("inv", ["CommittedNotLost", "LogsMatchBelowHw", "AckedNotLost"])
def test_fixed_protocol_is_proved_at_r5_m6_e6(inv):
    assert prove(Params(5, 6, 6, **FIXED), inv)[1].status == "holds"


@pytest.mark.slow
@pytest.mark.parametrize("t", ["hw", "leader-epoch", "kip-279"])
@pytest.mark.parametrize("e", ["hw", "epoch-start"])
@pytest.mark.parametrize("a", ["0", "1", "all"])
@pytest.mark.parametrize("u", [False, True])
def test_hw_below_leo_and_leader_in_isr_at_r5_m6_e6(t, e, a, u):
    for m in (1, 5):
        for inv in ("HwBelowLeo", "LeaderInIsr"):
            assert prove(Params(5, 6, 6, t, e, a, m, u), inv)[1].status == "holds", (m, inv)


def test_symmetry_description_must_cover_every_variable():
    from hwcheck.spec.lang import SpecError

    spec = build(Params(2, 2, 3))
    sym = symmetry_of(spec)
    C.check_symmetry(spec, sym)
    broken = dict(sym, other=("epoch", "committed"))  # acked left out
    with pytest.raises(SpecError, match="acked"):
        C.check_symmetry(spec, broken)


def test_a_wrong_lemma_is_caught_not_trusted():
    """A lemma that is false in reachable states cannot help: Init or a step refutes it."""
    spec = build(Params(2, 2, 3, **FIXED))
    conj = C.conjuncts(spec, "CommittedNotLost")
    log = spec.var("log")
    conj.append(("NoRecordEver", log[0, 0] == 0))  # false after the first Produce
    rep = C.prove(spec, conj, 60, symmetry_of(spec))
    assert rep.status == "violated"
    assert any(v.cti and v.cti.goal == "NoRecordEver" for v in rep.actions)


def test_unknown_is_never_holds():
    # pigeonhole: 9 pigeons, 8 holes; far beyond a 10 ms budget
    s = Solver(timeout=0.01)
    n = 9
    p = [[z3.Bool(f"p{i}_{j}") for j in range(n - 1)] for i in range(n)]
    for i in range(n):
        s.add(z3.Or(*p[i]))
    for j in range(n - 1):
        for i in range(n):
            for k in range(i + 1, n):
                s.add(z3.Or(z3.Not(p[i][j]), z3.Not(p[k][j])))
    res = s.check()
    assert res.status == "unknown" and not res.holds


@pytest.mark.slow
def test_cli_prove_timeout_is_unknown_never_proved(tmp_path):
    res = CliRunner().invoke(main, ["prove", "-R", "5", "-M", "6", "-E", "6", "--truncation",
                                    "kip-279", "--isr-expansion", "epoch-start", "--invariant",
                                    "CommittedNotLost", "--timeout", "0.1", "--out", str(tmp_path),
                                    "-q"])
    assert res.exit_code == 3, res.output
    assert "verdict: unknown" in res.output and "proved" not in res.output


def test_cli_prove_exit_codes_and_cti_files(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["prove", "-R", "2", "-M", "2", "-E", "3", "--truncation", "kip-279",
                              "--isr-expansion", "epoch-start", "--invariant", "CommittedNotLost",
                              "--out", str(tmp_path), "-q"])
    assert ok.exit_code == 0, ok.output
    assert "verdict: proved CommittedNotLost inductive" in ok.output
    bad = runner.invoke(main, ["prove", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw",
                               "--isr-expansion", "epoch-start", "--invariant", "CommittedNotLost",
                               "--out", str(tmp_path), "--run-name", "hw", "-q"])
    assert bad.exit_code == 3, bad.output  # a counterexample to induction is not a violation
    assert "counterexample to induction" in bad.output and "NOT inductive" in bad.output
    assert "verdict: unknown: CommittedNotLost not inductive" in bad.output
    files = sorted((tmp_path / "hw").rglob("*.itf.json"))
    assert files
    meta = json.loads(files[0].read_text())["#meta"]
    assert meta["cti"] is True and meta["engine"] == "z3-induction"
    assert runner.invoke(main, ["prove", "--invariant", "Nope"]).exit_code == 2
    bad_lemma = ["prove", "--lemma", "Nope", "--invariant", "HwBelowLeo"]
    assert runner.invoke(main, bad_lemma).exit_code == 2
    listed = runner.invoke(main, ["prove", "--list-lemmas"])
    assert listed.exit_code == 0 and "LogMatching: used for CommittedNotLost" in listed.output
    only = runner.invoke(main, ["prove", "--invariant", "CommittedNotLost", "--no-lemmas",
                                "--truncation", "kip-279", "--isr-expansion", "epoch-start",
                                "--out", str(tmp_path), "-q"])
    assert only.exit_code == 3 and "with 0 lemma(s)" in only.output
