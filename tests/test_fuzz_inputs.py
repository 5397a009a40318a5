"""No tracebacks from input, and no altered trace confirmed: Hypothesis mutates real traces
(keys, values, types, nesting, sizes, kinds, names, parameters) and the command line's options;
every case ends in a one-line error with exit 1 or 2, or in a correct verdict."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import run
from hwcheck.checker.traces import itf
from hwcheck.checker.traces.trace import TraceError

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "counterexamples" / "hw-truncation" / "CommittedNotLost.itf.json"
ORIGINAL = json.loads(TRACE.read_text())
# The default tier replays the same 120 examples every run (a red CI is never luck);
# HWCHECK_FUZZ_EXAMPLES=N explores N fresh random ones.
_LONG = os.environ.get("HWCHECK_FUZZ_EXAMPLES")
FUZZ = settings(max_examples=int(_LONG or 120), derandomize=not _LONG, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def hwcheck(capsys, *args) -> tuple[int, str, str]:
    """The command line in this process: (exit code, stdout, stderr). Any exception other than
    the exit is a bug (a traceback a user would see)."""
    try:
        run(list(args))
        code = 0
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def meaning(data: dict):
    """What a trace file says, as the spec reads it (None when it is not a trace of it)."""
    try:
        meta = data.get("#meta") or {}
        source = meta.get("protocol")
        if source is None and meta.get("source") == "hwcheck":  # as README says of old traces
            source = protocols.DEFAULT
        spec = protocols.build(protocols.load(source), meta["params"])
        t = itf.from_itf(spec, data)
        return (t.property, t.kind, t.actions, t.states, dict(spec.params))
    except (TraceError, Exception):  # noqa: BLE001 - anything unreadable has no meaning
        return None


def claim_holds(meaning_) -> bool:
    """Whether the path is a behaviour of the spec with these parameters whose last state
    violates the claimed invariant: the interpreter stepped directly, none of the replay or
    trace-file code."""
    from hwcheck.checker.semantics.interp import Interpreter

    prop, kind, actions, states, params = meaning_
    spec = protocols.build(protocols.load("kafka"), params)
    interp = Interpreter(spec)
    rows = [interp.layout.from_dict(s) for s in states]
    if not (rows[0] == interp.initial()).all():
        return False
    for label, a, b in zip(actions, rows, rows[1:]):
        nxt = interp.step(interp.instance(label), a)
        if nxt is None or not (nxt == b).all():
            return False
    invariants = {p.name: p.expr for p in spec.invariants}
    return kind == "invariant" and prop in invariants and not interp.holds(invariants[prop],
                                                                          rows[-1])


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text(max_size=8)
                    | st.floats(allow_nan=False), lambda c: st.lists(c, max_size=3)
                    | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=8)


@st.composite
def mutation(draw):
    data = copy.deepcopy(ORIGINAL)
    states = data["states"]
    what = draw(st.sampled_from(["map-key", "value", "drop-var", "add-var", "kind", "property",
                                 "param", "action", "states", "set", "meta", "bigint",
                                 "reorder"]))
    i = draw(st.integers(0, len(states) - 1))
    st_ = states[i]
    if what == "map-key":
        var = draw(st.sampled_from(["log", "hw", "rleo", "committed", "respRec"]))
        pairs = st_[var]["#map"]
        j = draw(st.integers(0, len(pairs) - 1))
        pairs[j][0] = draw(st.sampled_from([-1, 256, 2**64, 1, 0, "0", None, 1.0, True]))
    elif what == "value":
        var = draw(st.sampled_from(sorted(k for k in st_ if k != "#meta")))
        st_[var] = draw(JSON)
    elif what == "drop-var":
        st_.pop(draw(st.sampled_from(sorted(k for k in st_ if k != "#meta"))))
    elif what == "add-var":
        st_[draw(st.text(min_size=1, max_size=5))] = draw(JSON)
    elif what == "kind":
        data["#meta"]["kind"] = draw(st.sampled_from(["reachable", "action", "domain", "x", 3,
                                                      None, "invariant"]))
    elif what == "property":
        data["#meta"]["property"] = draw(st.sampled_from([
            "FollowerTruncated", "AckedNotLost", "LogsMatchBelowHw", "EpochMonotonic",
            "NoSuch", 7, "", "CommittedNotLost"]))
    elif what == "param":
        key = draw(st.sampled_from(["replicas", "max_offset", "truncation", "acks", "nope",
                                    "unclean"]))
        data["#meta"]["params"][key] = draw(JSON)
    elif what == "action":
        if i == 0:
            i = 1
        states[i]["#meta"]["action"] = draw(st.sampled_from([
            "Produce", "Crash(0)", "Crash(7)", "Elect(1)", "FetchRequest(-1)", "", 3, None]))
    elif what == "states":
        k = draw(st.integers(0, len(states)))
        data["states"] = states[:k] + draw(st.sampled_from([[], [states[-1]], [states[0]]]))
    elif what == "set":
        var = draw(st.sampled_from(["alive", "isr", "synced", "pending"]))
        st_[var]["#set"] = draw(st.lists(st.integers(-3, 300), max_size=4))
    elif what == "meta":
        key = draw(st.sampled_from(["length", "spec", "protocol", "engine", "#meta"]))
        if key == "#meta":
            data["#meta"] = draw(JSON)
        else:
            data["#meta"][key] = draw(JSON)
    elif what == "bigint":
        var = draw(st.sampled_from(["leader", "epoch"]))
        st_[var] = {"#bigint": draw(st.sampled_from(["1", "-1", "9" * 5000, "x", "", "0"]))}
    else:  # reorder map entries: the same trace
        var = draw(st.sampled_from(["log", "hw", "rleo"]))
        st_[var]["#map"].reverse()
    return data


@FUZZ
@given(data=mutation())
def test_an_altered_trace_is_confirmed_only_if_it_means_the_same(data, tmp_path_factory,
                                                                 capsys):
    path = tmp_path_factory.mktemp("fz") / "t.itf.json"
    path.write_text(json.dumps(data))
    code, out, err = hwcheck(capsys, "replay", str(path))
    assert "Traceback" not in out + err
    if code == 0:  # confirmed: the trace must show what it now claims
        got, want = meaning(data), meaning(ORIGINAL)
        assert got is not None, "a trace that is not one was confirmed"
        assert (got[1], got[2], got[3]) == (want[1], want[2], want[3]), \
            "an altered path was confirmed"
        assert claim_holds(got), f"confirmed a claim the trace does not show: {got[0]}, {got[4]}"
    else:
        assert code in (1, 2)
        lines = (out + err).strip().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith(("hwcheck: error: ", "replay: does not replay: "))


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"states": [], "#meta": 1}',
                                  '{"states": 5}', "\udcff", "", "null", "1e999"])
def test_malformed_files_are_one_line(text, tmp_path, capsys):
    path = tmp_path / "t.itf.json"
    path.write_text(text, errors="surrogateescape")
    code, out, err = hwcheck(capsys, "replay", str(path))
    assert code == 2, out + err
    assert len(err.strip().splitlines()) == 1 and err.startswith("hwcheck: error: ")


def test_the_listed_regressions(tmp_path, capsys):
    """The cases a careful user found: keys used only for ordering, a property relabelled as a
    reachability check, an unknown kind, a 5,000-digit #bigint, deep nesting."""
    cases = []
    d = copy.deepcopy(ORIGINAL)
    d["states"][2]["hw"]["#map"][0][0] = -1
    cases.append(d)
    d = copy.deepcopy(ORIGINAL)
    d["states"][2]["hw"]["#map"][1][0] = 2**64
    cases.append(d)
    d = copy.deepcopy(ORIGINAL)
    d["#meta"].update(property="FollowerTruncated", kind="invariant")
    cases.append(d)
    d = copy.deepcopy(ORIGINAL)
    d["#meta"].update(property="CommittedNotLost", kind="reachable")
    cases.append(d)
    d = copy.deepcopy(ORIGINAL)
    d["#meta"]["kind"] = "sometimes"
    cases.append(d)
    d = copy.deepcopy(ORIGINAL)
    d["states"][1]["epoch"] = {"#bigint": "9" * 5000}
    cases.append(d)
    for data in cases:
        path = tmp_path / "t.itf.json"
        path.write_text(json.dumps(data))
        for extra in ([], ["--z3"]):
            code, out, err = hwcheck(capsys, "replay", str(path), *extra)
            assert code in (1, 2), (data["#meta"], out, err)
            assert len((out + err).strip().splitlines()) == 1


OPTION = st.sampled_from(["-R", "-M", "-E", "--truncation", "--acks", "--min-isr", "--param",
                          "--spec", "--invariant", "--max-states", "--max-seconds",
                          "--max-memory", "--run-name", "--scenario", "--engine", "--out"])


@settings(max_examples=int(_LONG or 60), derandomize=not _LONG, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(opts=st.lists(st.tuples(OPTION, st.sampled_from(
    ["0", "-1", "99", "x", "", "hw", "a=b", "replicas=9", "=", "kafka", "1e3", "../x", "3M",
     "/dev/null", "nope.py", "json:dumps", "Crash"])), min_size=1, max_size=3))
def test_bad_options_are_one_line(opts, capsys, tmp_path):
    args = ["check", "--max-states", "50", "-q", "--out", str(tmp_path)]
    for flag, value in opts:
        args += [flag, value]
    code, out, err = hwcheck(capsys, *args)
    assert "Traceback" not in out + err
    assert code in (0, 2, 3, 12), (args, out, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("hwcheck: error: ")
