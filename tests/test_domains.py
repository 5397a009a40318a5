"""Declared domains are enforced by every engine: a write outside a variable's domain or an
index outside its shape is a finding, DomainError(variable, action), with the shortest trace to
the state before it, confirmed by replay; cells widen past int8 when a domain needs it."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from engine_contract import SPECS, protocol_spec
from helpers import NEEDS_JAVA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_kernel_agreement import compare

from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.semantics.layout import Layout
from hwcheck.spec.lang import Spec, SpecError

OVERFLOW = "domains_overflow.py"
WIDE = "domains_wide.py"


def hwcheck(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, cwd=cwd)


def last_json(res) -> dict:
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("engine, opts", [("local", {}), ("partitioned", {"parts": 2})])
def test_an_unguarded_increment_is_a_finding_not_a_wrap(engine, opts, tmp_path):
    spec = protocol_spec(OVERFLOW, {"top": 3})
    report = check(spec, Options(stop_at_violation=False), engine=engine, out=tmp_path,
                   run_name="r", **opts)
    ex = report.exploration
    # the spec allows 4 x 4 values of (a, b): never more states than that
    assert (ex.distinct, ex.complete) == (16, True)
    (v,) = report.violations()
    assert (v.name, v.kind, v.length) == ("DomainError(a, IncA)", "domain", 4)
    assert v.trace.actions == ["IncA", "IncA", "IncA"]
    assert [s["a"] for s in v.trace.states] == [0, 1, 2, 3]  # ends in the state before
    assert v.trace.meta["domain_error"] == {
        "variable": "a", "where": "IncA", "step": "IncA",
        "message": "IncA: writes 4 to a, outside its domain 0..3"}
    res = hwcheck("replay", str(tmp_path / "r" / "DomainError-a-IncA.itf.json"), "--spec",
                  str(SPECS / OVERFLOW), "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    assert last_json(res)["length"] == 4


def test_every_engine_writes_the_same_trace(tmp_path):
    spec = protocol_spec(OVERFLOW, {"top": 3})
    files = {}
    for engine, opts in (("local", {}), ("partitioned", {"parts": 2})):
        check(spec, Options(stop_at_violation=False), engine=engine, out=tmp_path / engine,
              run_name="r", **opts)
        data = json.loads((tmp_path / engine / "r" / "DomainError-a-IncA.itf.json").read_text())
        data["#meta"].pop("engine")
        files[engine] = data
    assert files["local"] == files["partitioned"]


def test_an_index_outside_the_shape_is_a_finding(tmp_path):
    spec = protocol_spec(OVERFLOW, {"top": 3, "index_error": True})
    report = check(spec, Options(stop_at_violation=False), out=tmp_path, run_name="r")
    (v,) = report.violations()
    assert (v.name, v.length) == ("DomainError(slot, Pick)", 3)
    assert "Pick: writes slot[2], outside its shape [2]" == v.trace.meta["domain_error"]["message"]
    res = hwcheck("replay", str(tmp_path / "r" / "DomainError-slot-Pick.itf.json"), "--spec",
                  str(SPECS / OVERFLOW))
    assert res.returncode == 0, res.stdout


def test_the_command_line_names_the_variable_and_action(tmp_path):
    res = hwcheck("check", "--spec", str(SPECS / OVERFLOW), "--json", "-q", "--out", "o",
                  cwd=tmp_path)
    assert res.returncode == 12
    obj = last_json(res)
    assert [(v["property"], v["kind"], v["length"]) for v in obj["violations"]] == [
        ("DomainError(a, IncA)", "domain", 4)]
    assert "leaves the declared domains" in res.stderr


@pytest.mark.slow
@NEEDS_JAVA
def test_the_spark_engine_reports_it_too(tmp_path):
    res = hwcheck("check", "--spec", str(SPECS / OVERFLOW), "--engine", "spark",
                  "--spark-master", "local[2]", "--json", "-q", "--out", "o", cwd=tmp_path)
    assert res.returncode == 12, res.stderr
    (v,) = last_json(res)["violations"]
    assert (v["property"], v["length"]) == ("DomainError(a, IncA)", 4)
    assert hwcheck("replay", str(tmp_path / v["trace"]), "--spec",
                   str(SPECS / OVERFLOW)).returncode == 0


def test_a_tampered_domain_trace_is_rejected(tmp_path):
    check(protocol_spec(OVERFLOW, {"top": 3}), Options(), out=tmp_path, run_name="r")
    path = tmp_path / "r" / "DomainError-a-IncA.itf.json"
    data = json.loads(path.read_text())
    data["#meta"]["domain_error"]["step"] = "IncB"  # IncB is guarded: it stays inside
    bad = tmp_path / "bad.itf.json"
    bad.write_text(json.dumps(data))
    res = hwcheck("replay", str(bad), "--spec", str(SPECS / OVERFLOW))
    assert res.returncode == 1 and "is not an instance of IncA" in res.stdout


@pytest.mark.parametrize("top, dtype, states", [
    (1000, np.int16, 2002), pytest.param(32_768, np.int32, 65_538, marks=pytest.mark.slow)])
def test_cells_widen_past_int8(top, dtype, states):
    spec = protocol_spec(WIDE, {"top": top})
    assert Layout.of(spec).dtype is dtype
    report = check(spec, Options(stop_at_violation=False))
    ex = report.exploration
    assert (ex.distinct, ex.generated, ex.depth) == (states, 2 * states - 2, top + 1)
    assert report.verdict == "holds"


def test_the_kafka_model_keeps_its_int8_rows():
    from helpers import kafka

    assert Layout.of(kafka(replicas=3)).dtype is np.int8


def test_a_domain_past_int32_is_refused():
    spec = Spec("Huge", {})
    spec.scalar("x", 0, 2**31)
    with pytest.raises(SpecError, match="does not fit in int32"):
        Layout.of(spec)


@pytest.fixture(scope="module")
def overflow_pair():
    spec = protocol_spec(OVERFLOW, {"top": 3, "index_error": True})
    return spec, Kernel(spec), Interpreter(spec)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kernel_and_interpreter_agree_where_effects_leave_the_domain(overflow_pair, data):
    """On every state of the declared domains (including those where IncA overflows and Pick
    indexes past slot), the kernel reports exactly the domain error the interpreter raises."""
    spec, kernel, interp = overflow_pair
    row = np.zeros(kernel.stride, kernel.dtype)
    for v in spec.variables:
        off = kernel.layout.offsets[v.name]
        for i in range(v.size):
            row[off + i] = data.draw(st.integers(v.lo, v.hi))
    compare(spec, kernel, interp, row, arbitrary=True)
