"""The knobs of docs/kafka-model.md: consumers, producer retries and idempotence, the log start
offset, transactions and the LSO, ISR shrink by lag.

With every knob off the model is the base model, declaration for declaration (the pinned counts
and
committed traces of test_engine_local.py and test_scenarios.py check the rest); with a knob on it
declares its own variables, actions and properties, and the runs that show what each knob finds
hold.
"""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import kafka as build
from helpers import tiered

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.traces import itf
from hwcheck.checker.z3 import checks as C
from hwcheck.spec.kafka import model, views
from hwcheck.spec.kafka.derived import first_unstable_of
from hwcheck.spec.kafka.lemmas import replica_symmetry
from hwcheck.spec.kafka.params import KNOBS_OFF, Params
from hwcheck.spec.kafka.scenarios import FIXED, KNOB_SCENARIOS
from hwcheck.spec.lang import SpecError

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = protocols.load("kafka")
BASE_VARS = ["log", "hw", "alive", "leader", "epoch", "isr", "synced", "rleo", "pending",
             "respRec", "respHw", "committed", "acked"]
BASE_ACTIONS = ["Produce", "FetchRequest", "FetchResponse", "BecomeFollower", "ShrinkIsr", "Crash",
                "Restart", "Elect"]
BASE_KEYS = ["replicas", "max_offset", "max_epoch", "truncation", "isr_expansion", "acks",
             "min_isr", "unclean"]


def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def names(spec):
    return ([v.name for v in spec.variables], [a.name for a in spec.actions],
            [p.name for p in spec.invariants + spec.action_properties],
            [r.name for r in spec.reachables])


# -- every knob off: the base model ----------------------------------------------------------


def test_with_every_knob_off_the_model_declares_only_model_md():
    spec = build(Params(2, 2, 3))
    variables, actions, props, reach = names(spec)
    assert variables == BASE_VARS
    assert actions == BASE_ACTIONS
    assert props == list(model.BASE_INVARIANTS + model.BASE_ACTION_PROPERTIES)
    assert reach == list(model.BASE_REACHABLES)
    assert spec.var("respRec").hi == 4  # E + 1: no "start at the log start" marker


def test_a_knob_that_is_off_is_not_part_of_a_parameter_set():
    assert list(Params().as_dict()) == BASE_KEYS
    given = dict(Params().as_dict(), **KNOBS_OFF)
    assert list(PROTOCOL.resolve(given)) == BASE_KEYS
    assert build(given).params == Params().as_dict()
    assert Params(2, 2, 3, "kip-279", "epoch-start").slug() == \
        "R2-M2-E3-kip-279-isr-epoch-start-acks-all-minisr1"
    on = PROTOCOL.resolve({"consumers": 1, "isr_shrink": "lag:2"})
    assert on["consumers"] == 1 and on["isr_shrink"] == "lag:2"
    assert Params(consumers=1, isr_shrink="lag:2").slug().endswith("-consumers1-shrink-lag2")


# -- each knob declares its own parts ------------------------------------------------------------

KNOB_PARTS = [
    (dict(consumers=2), ["cpos", "cread"], ["Consume"]),
    (dict(producer_retries=True), ["seq", "respSeq", "pSeq", "pWait"], ["Retry"]),
    (dict(producer_retries=True, idempotence=True), ["seq", "respSeq", "pSeq", "pWait"], ["Retry"]),
    (dict(log_start_offset=True), ["logStart", "respLs"], ["DeleteRecords"]),
    (dict(transactions=True), ["txn", "ctl", "respTxn", "respCtl", "txnId", "txnState", "outcome",
                               "pWait"], ["TxnCommit", "TxnAbort", "WriteMarker"]),
    (dict(transactions=True, consumers=1), ["txn", "ctl", "respTxn", "respCtl", "txnId",
                                            "txnState", "outcome", "pWait", "cpos", "cread",
                                            "cret"],
     ["TxnCommit", "TxnAbort", "WriteMarker", "Consume"]),
    (dict(isr_shrink="lag:1"), [], []),
]


@pytest.mark.parametrize("knobs, extra_vars, extra_actions", KNOB_PARTS,
                         ids=lambda x: "-".join(map(str, x)) if isinstance(x, dict) else None)
def test_a_knob_adds_its_variables_actions_and_properties_after_the_base_ones(knobs, extra_vars,
                                                                              extra_actions):
    p = Params(2, 2, 3, **knobs)
    spec = build(p)
    variables, actions, props, reach = names(spec)
    assert variables[:len(BASE_VARS)] == BASE_VARS
    assert sorted(variables[len(BASE_VARS):]) == sorted(extra_vars)
    assert actions == BASE_ACTIONS + extra_actions
    assert props == list(model.property_names(p))
    assert reach == list(model.reachable_names(p))
    assert props[:5] == list(model.BASE_INVARIANTS)


def test_every_knob_scenario_is_a_configuration_with_a_knob_on():
    for sc in KNOB_SCENARIOS:
        assert Params(**sc.params).knobs_on(), sc.name


# -- parameters ----------------------------------------------------------------------------------


@pytest.mark.parametrize("params, message", [
    (dict(producer_retries=True, acks="1"), "--producer-retries needs --acks all"),
    (dict(idempotence=True), "--idempotence needs --producer-retries"),
    (dict(transactions=True, acks="0"), "--transactions needs --acks all"),
    (dict(transactions=True, producer_retries=True), "is not modelled"),
    (dict(log_start_offset=True, producer_retries=True), "--log-start-offset with"),
    (dict(log_start_offset=True, transactions=True), "--log-start-offset with"),
    (dict(isolation="read-uncommitted"), "--isolation read-uncommitted needs --transactions"),
    (dict(isr_shrink="lag:x"), "isr-shrink must be 'any' or 'lag:N'"),
    (dict(isr_shrink="lag:9"), "isr-shrink must be 'any' or 'lag:N'"),
    (dict(isr_shrink="sometimes"), "isr-shrink must be 'any' or 'lag:N'"),
    (dict(consumers=3), "consumers must be an integer in 0..2"),
])
def test_a_combination_the_model_does_not_state_is_refused_in_one_line(params, message):
    with pytest.raises(SpecError, match=message):
        PROTOCOL.resolve(params)


def test_the_cli_refuses_an_unmodelled_combination_in_one_line(tmp_path):
    res = cli("check", "--transactions", "--producer-retries", "--out", str(tmp_path))
    assert res.exit_code == 2
    assert "is not modelled" in res.output and len(res.output.strip().splitlines()) == 1


def test_isr_shrink_reads_lag():
    assert Params(isr_shrink="any").lag is None
    assert Params(isr_shrink="lag:0").lag == 0 and Params(isr_shrink="lag:8").lag == 8


# -- the runs that show what each knob finds ------------------------------------------------------


@pytest.mark.slow
def test_retries_duplicate_a_record_and_idempotence_prevents_it(tmp_path):
    base = ["check", "--producer-retries", "--truncation", "kip-279", "--isr-expansion",
            "epoch-start", "--invariant", "NoDuplicates", "--out", str(tmp_path), "-q"]
    dup = cli(*base)
    assert dup.exit_code == 12, dup.output
    assert "verdict: violated (NoDuplicates in 6 steps)" in dup.output
    steps = [line for line in dup.output.splitlines() if line.startswith("Step ")]
    assert steps[-1] == "Step 6: Retry"
    assert "Crash(0)" in dup.output and "Elect(1)" in dup.output
    ok = cli(*base, "--idempotence")
    assert ok.exit_code == 0, ok.output
    assert "verdict: holds; 6,500 distinct states" in ok.output


@pytest.mark.slow
def test_a_consumer_reads_a_lost_record_only_with_hw_truncation(tmp_path):
    bad = cli("check", "--consumers", "1", "--truncation", "hw", "--invariant", "MonotonicReads",
              "--out", str(tmp_path), "-q")
    assert bad.exit_code == 12 and "MonotonicReads in 9 steps" in bad.output
    good = cli("check", "--consumers", "1", "--truncation", "kip-279", "--isr-expansion",
               "epoch-start", "--invariant", "MonotonicReads", "--out", str(tmp_path), "-q")
    assert good.exit_code == 0, good.output
    assert "verdict: holds; 11,248 distinct states" in good.output


# -- views ---------------------------------------------------------------------------------------


def _trace(scenario: str, prop: str):
    data = itf.read(ROOT / "counterexamples" / scenario / f"{prop}.itf.json")
    spec = build(Params.from_dict(data["#meta"]["params"]))
    return spec, itf.from_itf(spec, data)


@pytest.mark.parametrize("scenario, prop", [("lso-two-txns", "LsoBelowHw"),
                                            ("transactions-hw", "MarkersSurvive"),
                                            ("read-uncommitted", "ReadCommittedIsolation")])
def test_the_views_lso_agrees_with_the_model(scenario, prop):
    """The first unstable offset over a state dict (derived.first_unstable_of, what the views
    show) agrees with the model's on every state of the committed traces: with LsoBelowHw and
    LsoBehindHw, which read it over the spec (derived.first_unstable)."""
    spec, trace = _trace(scenario, prop)
    layout, interp = Layout.of(spec), Interpreter(spec)
    below = spec.invariant_named("LsoBelowHw").expr
    behind = next(r.expr for r in spec.reachables if r.name == "LsoBehindHw")
    seen = set()
    for st in trace.states:
        L = st["leader"]
        if L < 0:
            continue
        row = layout.from_dict(st)
        fu = first_unstable_of(st, L)
        assert interp.eval(below, row) == (fu <= st["hw"][L])
        assert interp.eval(behind, row) == (min(fu, st["hw"][L]) < st["hw"][L])
        seen.add(fu <= st["hw"][L])
    assert seen  # the traces have states with a leader


def test_the_text_shows_the_knobs_state():
    _, trace = _trace("retries-duplicate", "NoDuplicates")
    trace.views = PROTOCOL.views
    body = views.text(trace)
    assert "producer-retries" in body.splitlines()[0]
    assert "records" in body and "[s1 s1]" in body
    # unanswered when its leader crashed; the retry to the new leader (ISR {r1}) is answered
    assert "producer: last sequence number 1, awaiting the answer of the epoch-1 leader" in body
    retry = body[body.index("Step 6: Retry"):].splitlines()
    assert retry[2] == "  producer: last sequence number 1, nothing awaited*"
    _, trace = _trace("log-start-epoch", "MonotonicReads")
    body = views.text(trace)
    assert "[x .]" in body and "low watermark" in body and "consumer c0: position 1" in body
    assert views.explain(trace)[0] == ("consumer c0 read a record of epoch 2 at offset 0, but "
                                       "the leader r0 has a record of epoch 1 there")


# -- Z3: the knobs' invariants are inductive with their lemmas ---------------------------------

PROOFS = [
    (dict(producer_retries=True, idempotence=True, **FIXED), "NoDuplicates"),
    (dict(log_start_offset=True, **FIXED), "LogStartBelowHw"),
    (dict(log_start_offset=True, truncation="hw"), "LowWatermarkBelowHw"),
    (dict(transactions=True, **FIXED), "MarkersSurvive"),
    (dict(transactions=True, **FIXED), "LsoBelowHw"),
    (dict(consumers=1, **FIXED), "MonotonicReads"),
    (dict(consumers=1, transactions=True, truncation="hw"), "ReadCommittedIsolation"),
    (dict(isr_shrink="lag:1", **FIXED), "CommittedNotLost"),
]


@pytest.mark.parametrize("knobs, invariant", tiered(PROOFS, {"NoDuplicates"}, key=lambda p: p[1],
                                                        unpack=True),
                         ids=[p[1] for p in PROOFS])
def test_a_knob_invariant_is_proved_inductive_with_its_lemmas(knobs, invariant):
    spec = build(Params(2, 2, 3, **knobs))
    sym = None if knobs.get("consumers") else C.symmetry_of(spec)
    rep = C.prove(spec, C.conjuncts(spec, invariant), 120, sym)
    assert rep.status == "holds", [(a.action, a.status) for a in rep.actions]


@pytest.mark.slow
def test_lso_below_hw_is_not_inductive_with_two_transactions():
    """With two transactions (M=4) LsoBelowHw is violated (the lso-two-txns scenario); its
    proof ends in a counterexample to induction, never in a proof."""
    spec = build(Params(2, 4, 3, transactions=True, **FIXED))
    rep = C.prove(spec, C.conjuncts(spec, "LsoBelowHw"), 120, C.symmetry_of(spec))
    assert rep.status == "violated"


def test_replica_symmetry_names_every_knob_variable_and_is_not_declared_with_consumers():
    for knobs in (dict(producer_retries=True), dict(log_start_offset=True),
                  dict(transactions=True)):
        spec = build(Params(2, 2, 3, **knobs))
        C.check_symmetry(spec, replica_symmetry(spec).as_dict())
    with_consumers = build(Params(2, 2, 3, consumers=1))
    assert replica_symmetry(with_consumers) is None
    assert C.symmetry_of(with_consumers) is None


@pytest.mark.slow
def test_prove_and_bmc_with_consumers_run_without_symmetry(tmp_path):
    fixed = ["--truncation", "kip-279", "--isr-expansion", "epoch-start", "--consumers", "1"]
    res = cli("prove", *fixed, "--invariant", "MonotonicReads", "--out", str(tmp_path), "-q")
    assert res.exit_code == 0, res.output
    res = cli("bmc", *fixed, "--depth", "3", "--invariant", "MonotonicReads",
              "--out", str(tmp_path), "-q")
    assert res.exit_code == 3, res.output  # no violation within 3 steps: unknown, not holds


def test_the_knob_lemmas_are_stated_only_with_their_knob():
    from hwcheck.spec.protocol import lemmas_of

    base = [n for n, _ in lemmas_of(build(Params(2, 2, 3)))]
    assert "ReadsCommitted" not in base and "RecordPayload" not in base and len(base) == 22
    for knobs in itertools.chain([dict(consumers=1)], [dict(transactions=True)]):
        assert len(lemmas_of(build(Params(2, 2, 3, **knobs)))) > len(base)


# -- the model's composition ---------------------------------------------------------------------

KAFKA = ROOT / "spec" / "kafka"
DERIVED = ("leo", "leo_of", "first_unstable", "first_unstable_of", "lso", "lso_of")


def _functions():
    for path in sorted(KAFKA.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef):
                yield path.relative_to(ROOT), node


def test_no_function_of_the_kafka_model_is_over_150_lines():
    long = [f"{path}:{f.lineno} {f.name} ({f.end_lineno - f.lineno + 1} lines)"
            for path, f in _functions() if f.end_lineno - f.lineno + 1 > 150]
    assert not long


def _delegates(f: ast.FunctionDef) -> bool:
    """f's body is ``return derived.<f's name>(...)`` (after its docstring, if any)."""
    body = [s for s in f.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return (len(body) == 1 and isinstance(body[0], ast.Return)
            and isinstance(body[0].value, ast.Call)
            and isinstance(body[0].value.func, ast.Attribute)
            and isinstance(body[0].value.func.value, ast.Name)
            and body[0].value.func.value.id == "derived" and body[0].value.func.attr == f.name)


def test_the_leo_and_the_lso_are_defined_once_in_derived():
    """A replica's LEO, the first unstable offset and the LSO are stated in derived.py alone:
    anywhere else in spec/kafka a function of that name only hands over to it."""
    defined = [f"{path}:{f.lineno} {f.name}" for path, f in _functions()
               if f.name.lstrip("_") in DERIVED and path.name != "derived.py"
               and not _delegates(f)]
    assert not defined


def test_the_leo_over_a_state_dict_is_the_models():
    """derived.leo_of (the views) and derived.leo (the model) agree on every state of a
    committed trace with a log start offset."""
    from hwcheck.spec.kafka import derived

    spec, trace = _trace("log-start-epoch", "CommittedNotLost")
    layout, interp = Layout.of(spec), Interpreter(spec)
    R = spec.params["replicas"]
    seen = set()
    for st in trace.states:
        row = layout.from_dict(st)
        for r in range(R):
            assert interp.eval(derived.leo(spec, r), row) == derived.leo_of(st, r)
            seen.add(derived.log_start_of(st, r))
    assert len(seen) > 1  # some state has a log start offset above 0
