"""A TLA+ module's fairness and temporal properties on the compiled path: WF/SF as fairness
conditions over the compiled actions' instances (several instances one condition where the
action has several ways), PROPERTY formulas as liveness properties, and TLC's verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_liveness import TLC_PETERSON, TLC_TOKEN_RING, graph_verdicts, independent_verdicts

from hwcheck.checker.tla.front import build
from hwcheck.checker.tla.syntax import TlaError

ROOT = Path(__file__).resolve().parent.parent
TLA = ROOT / "tests" / "specs" / "tla"
KAFKA = ROOT / "docs" / "tla"

TOKEN_SPECS = {("none", "weak"): "SpecUseNone_PassWeak", ("weak", "weak"): "SpecUseWeak_PassWeak",
               ("strong", "weak"): "SpecUseStrong_PassWeak",
               ("strong", "none"): "SpecUseStrong_PassNone"}
PETERSON_SPECS = {"none": "SpecNone", "weak": "SpecWeak", "strong": "SpecStrong"}


def compiled(tla: Path, cfg: str, tmp_path: Path, name: str = "m.cfg"):
    path = tmp_path / name
    path.write_text(cfg)
    return build(tla, path, say=lambda _: None, cache=tmp_path / "domains")


def token_ring(tmp_path: Path, spec: str):
    return compiled(TLA / "TokenRing.tla", f"CONSTANTS N = 3\nSPECIFICATION {spec}\n"
                    "PROPERTY Served TokenVisits Settles SettlesOnceQuiet\n"
                    "CHECK_DEADLOCK FALSE\n", tmp_path, f"{spec}.cfg").spec


def peterson(tmp_path: Path, spec: str, naive: bool):
    return compiled(TLA / "Peterson.tla", f"CONSTANTS Naive = {str(naive).upper()}\n"
                    f"SPECIFICATION {spec}\nPROPERTY NoStarvation0 NoStarvation1\n"
                    "CHECK_DEADLOCK FALSE\n", tmp_path, f"{spec}-{naive}.cfg").spec


def test_fairness_of_an_operator_with_several_ways_is_one_condition(tmp_path):
    spec = peterson(tmp_path, "SpecWeak", False)
    groups = {g.name: (g.kind, set(g.members)) for g in spec.fair_groups}
    # Enter(i)'s disjunction makes two actions, Enter and Enter_2: WF_vars(Enter(0)) is the
    # weak fairness of both together, not of each
    assert groups["WF_vars(Enter(0))"] == ("weak", {("Enter", (0,)), ("Enter_2", (0,))})
    assert groups["WF_vars(GiveTurn(1))"] == ("weak", {("GiveTurn", (1,))})
    assert len(groups) == 6
    assert all(a.fairness is None for a in spec.actions)  # only the groups
    assert [(p.name, p.form) for p in spec.liveness] == [("NoStarvation0", "leads_to"),
                                                         ("NoStarvation1", "leads_to")]


def test_token_ring_properties_and_the_quiet_assumption(tmp_path):
    spec = token_ring(tmp_path, "SpecUseStrong_PassWeak")
    assert {g.name: g.kind for g in spec.fair_groups} == {
        "SF_vars(Use(0))": "strong", "SF_vars(Use(1))": "strong", "SF_vars(Use(2))": "strong",
        "WF_vars(Pass(0))": "weak", "WF_vars(Pass(1))": "weak", "WF_vars(Pass(2))": "weak"}
    assert [(p.name, p.form, p.quiet) for p in spec.liveness] == [
        ("Served", "leads_to", ()), ("TokenVisits", "always_eventually", ()),
        ("Settles", "eventually_always", ()),
        ("SettlesOnceQuiet", "eventually_always", ("Request",))]


MODULE = """---- MODULE M ----
EXTENDS Naturals
VARIABLES x, on
vars == <<x, on>>
Init == x = 0 /\\ on = TRUE
Inc(i) == x < 2 /\\ x' = x + i /\\ UNCHANGED on
Flip == on' = ~on /\\ UNCHANGED x
Next == (\\E i \\in {1} : Inc(i)) \\/ IF on THEN Flip ELSE UNCHANGED vars
%s
Spec == Init /\\ [][Next]_vars /\\ %s
Up == <>(x = 2)
Settles == <>[](x = 2)
Each == \\A v \\in {0, 1} : (x = v) ~> (x = v + 1)
Both == []<>(x = 2) /\\ (x = 0 ~> x = 1)
Safe == [](x <= 2)
Ticks == []<><<Inc(1)>>_vars
====
"""


def _module(tmp_path: Path, fairness: str, prop: str, extra: str = "") -> Path:
    (tmp_path / "M.tla").write_text(MODULE % (extra, fairness))
    (tmp_path / "M.cfg").write_text(f"SPECIFICATION Spec\nPROPERTY {prop}\n"
                                    "CHECK_DEADLOCK FALSE\n")
    return tmp_path / "M.tla"


def test_quantified_and_conjoined_properties_each_instance_a_property(tmp_path):
    tla = _module(tmp_path, "WF_vars(Inc(1))", "Each Both Safe Ticks")
    spec = build(tla, say=lambda _: None, cache=tmp_path / "d").spec
    assert [(p.name, p.form, p.quiet) for p in spec.liveness] == [
        ("Each(0)", "leads_to", ()), ("Each(1)", "leads_to", ()),
        ("Both!1", "always_eventually", ()), ("Both!2", "leads_to", ()),
        # infinitely many Inc steps: no fair cycle without them (Inc quiet, p false)
        ("Ticks", "always_eventually", ("Inc",))]
    assert "Safe" in [i.name for i in spec.invariants]  # []P is an invariant


@pytest.mark.parametrize("fairness,prop,why", [
    ("WF_vars(x' = x + 1)", "Settles", "fairness of an action that is not an operator of "
                                       "Next's"),
    ("WF_vars(Flip)", "Settles", "fairness of Flip, which Next takes under a condition of its own"),
    ("WF_x(Inc(1))", "Settles", "fairness whose subscript is not every variable"),
    ("WF_vars(Inc(1))", "Up", "PROPERTY Up: a temporal formula other than"),
])
def test_what_the_compiled_path_does_not_decide_is_refused_with_its_place(tmp_path, fairness,
                                                                         prop, why):
    tla = _module(tmp_path, fairness, prop)
    with pytest.raises(TlaError, match="not compiled yet: " + why.replace("(", r"\(")):
        build(tla, say=lambda _: None, cache=tmp_path / "d")


@pytest.mark.slow
@pytest.mark.parametrize("use,passing", list(TLC_TOKEN_RING))
def test_token_ring_tla_gives_tlcs_verdicts(tmp_path, use, passing):
    spec = token_ring(tmp_path, TOKEN_SPECS[(use, passing)])
    got = graph_verdicts(spec)
    assert got == TLC_TOKEN_RING[(use, passing)]
    assert got == independent_verdicts(spec)


@pytest.mark.slow
@pytest.mark.parametrize("fairness,naive", list(TLC_PETERSON))
def test_peterson_tla_gives_tlcs_verdicts(tmp_path, fairness, naive):
    spec = peterson(tmp_path, PETERSON_SPECS[fairness], naive)
    got = graph_verdicts(spec)
    want = TLC_PETERSON[(fairness, naive)]
    assert got == {"NoStarvation0": want, "NoStarvation1": want}
    assert got == independent_verdicts(spec)


# docs/tla/README.md, "Liveness": TLC's verdicts, one property a run
TLC_KAFKA = {
    "R2-M2-E3-hw-liveness": ("holds", "violated", "holds", "violated"),
    "R2-M2-E3-leader-epoch-liveness": ("holds", "violated", "holds", "violated"),
    "R2-M2-E3-kip-279-liveness": ("holds", "holds", "holds", "holds"),
}


@pytest.mark.slow
@pytest.mark.parametrize("cfg", sorted(TLC_KAFKA))
def test_kafka_hw_liveness_tla_gives_tlcs_verdicts(tmp_path, cfg):
    spec = build(KAFKA / "KafkaHWLiveness.tla", KAFKA / f"{cfg}.cfg", say=lambda _: None,
                 cache=tmp_path).spec
    got = graph_verdicts(spec)
    names = ("ElectionAfterCrash", "AckedReplicated", "HwCatchesUp", "LogsConverge")
    assert got == dict(zip(names, TLC_KAFKA[cfg]))


@pytest.mark.slow
def test_lassos_of_a_module_replay_and_an_unfair_cycle_is_rejected(tmp_path):
    import json

    from click.testing import CliRunner

    from hwcheck.checker.cli.main import main

    weak, strong = tmp_path / "weak.cfg", tmp_path / "strong.cfg"
    for path, spec in ((weak, "SpecUseWeak_PassWeak"), (strong, "SpecUseStrong_PassWeak")):
        path.write_text(f"CONSTANTS N = 3\nSPECIFICATION {spec}\nPROPERTY Served\n"
                        "CHECK_DEADLOCK FALSE\n")
    tla = str(TLA / "TokenRing.tla")
    runner = CliRunner()
    res = runner.invoke(main, ["check", "--spec", tla, "--config", str(weak), "--out",
                               str(tmp_path / "out"), "--json", "-q"])
    assert res.exit_code == 12, res.output
    served = json.loads(res.stdout.strip().splitlines()[-1])["violations"][0]
    assert served["property"] == "Served" and served["kind"] == "liveness"
    text = Path(served["trace"]).with_suffix("").with_suffix(".txt").read_text()
    assert text.count("A lasso:") == 1 and "Use(0)" not in text.split("cycle starts")[1]
    ok = runner.invoke(main, ["replay", served["trace"], "--spec", tla])
    assert ok.exit_code == 0 and "confirmed" in ok.output, ok.output
    # the same lasso under strong fairness on Use: its cycle passes the token by node 0's open
    # request forever, which SF_vars(Use(0)) forbids
    data = json.loads(Path(served["trace"]).read_text())
    data["#meta"]["params"]["config"] = str(strong)
    unfair = tmp_path / "unfair.itf.json"
    unfair.write_text(json.dumps(data))
    bad = runner.invoke(main, ["replay", str(unfair), "--spec", tla])
    assert bad.exit_code == 1 and "not fair" in bad.output, bad.output
    assert "SF_vars(Use(0))" in bad.output
