"""Trusting a trace file and the outputs hwcheck writes.

A trace is data: opening one (``replay``, ``explore --trace``) never runs code it names. Only a
registered protocol may be named alone; a spec file or module is the user's ``--spec``, and the
sha256 the trace records of its spec file says when the file given is another. Named outputs
that are not regular files (a FIFO, a device, ``-``) are written in place, never replaced.
``replay`` honours or refuses each option (``--property``), and ``--z3`` on a lasso certifies
its steps. Hypothesis mutates a real trace of Die Hard: every case is one line with its exit
code, or a confirmation an independent check of the puzzle bears out.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import started
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main, run
from hwcheck.checker.traces import itf
from hwcheck.checker.traces.output import write_atomic
from hwcheck.checker.traces.trace import Trace

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "tests" / "specs"
DIE_HARD = SPECS / "die_hard.py"
TOKEN_RING = SPECS / "token_ring.py"
KAFKA_TRACE = ROOT / "counterexamples" / "hw-truncation" / "CommittedNotLost.itf.json"

# What a trace might name to run code: a module beside it writes MARKER when it is imported.
HELPER = ("import pathlib\n"
          "pathlib.Path(__file__).with_name('MARKER').write_text('ran')\n"
          "from hwcheck.spec.lang import Spec\n"
          "def build():\n"
          "    s = Spec('DieHard', {})\n"
          "    s.scalar('big', 0, 5)\n"
          "    s.scalar('small', 0, 3)\n"
          "    return s\n")


def hwcheck(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def in_process(capsys, *args) -> tuple[int, str, str]:
    """The command line in this process: (exit code, stdout, stderr); any exception other
    than the exit is a traceback a user would see."""
    try:
        run(list(args))
        code = 0
    except SystemExit as e:
        code = e.code or 0
    out, err = capsys.readouterr()
    return code, out, err


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def die_hard_trace(tmp_path_factory) -> dict:
    """A real trace of a small spec file: bmc's 6-step solution of Die Hard (Z3, no kernel)."""
    out = tmp_path_factory.mktemp("dh")
    res = CliRunner().invoke(main, ["bmc", "--spec", str(DIE_HARD), "--depth", "6", "-q",
                                    "--out", str(out), "--run-name", "r"])
    assert res.exit_code == 12, res.output
    return json.loads((out / "r" / "NotSolved.itf.json").read_text())


# -- a trace never chooses code ------------------------------------------------------------------


def test_a_trace_of_a_spec_file_records_the_file_s_sha256(die_hard_trace):
    meta = die_hard_trace["#meta"]
    assert meta["protocol"] == f"{DIE_HARD}:build"
    assert meta["protocol-sha256"] == hashlib.sha256(DIE_HARD.read_bytes()).hexdigest()
    # a registered protocol's trace is identified by its registry entry: no digest
    kafka = json.loads(KAFKA_TRACE.read_text())["#meta"]
    assert protocols.registered_name(kafka["protocol"]) == "kafka"
    assert "protocol-sha256" not in kafka


@pytest.mark.parametrize("named", ["HELPER", "helper.py", "helper", "helper:build", "sys:exit",
                                   "os:getcwd"])
def test_a_trace_that_names_code_runs_none_of_it(die_hard_trace, tmp_path, named):
    """Whatever #meta.protocol names that is not a registered protocol (a file beside the
    trace, a module, a function of the standard library) is not imported: one line asking for
    --spec, exit 2."""
    (tmp_path / "helper.py").write_text(HELPER)
    data = copy.deepcopy(die_hard_trace)
    data["#meta"]["protocol"] = str(tmp_path / "helper.py") if named == "HELPER" else named
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(data))
    res = hwcheck("replay", str(trace), cwd=tmp_path)  # the trace's folder is the working one
    assert not (tmp_path / "MARKER").exists(), "replay ran code the trace named"
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: error: ") and "--spec" in lines[0]
    assert "not a registered protocol" in lines[0]


def test_explore_does_not_run_the_code_a_trace_names(die_hard_trace, tmp_path):
    (tmp_path / "helper.py").write_text(HELPER)
    data = copy.deepcopy(die_hard_trace)
    data["#meta"]["protocol"] = str(tmp_path / "helper.py")
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(data))
    cmd = [sys.executable, "-m", "hwcheck.checker", "explore", "--trace", str(trace), "--port",
           "0"]
    with started(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 text=True) as proc:
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            err = "still serving"
    assert not (tmp_path / "MARKER").exists(), "explore ran code the trace named"
    assert proc.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--spec" in lines[0] and "not a registered protocol" in lines[0]


def test_explore_takes_the_spec_from_the_user_and_the_parameters_from_the_trace(
        die_hard_trace, tmp_path):
    from hwcheck.checker.explorer.session import Session, SessionError
    from hwcheck.checker.traces.replay import ReplayRequest, spec_for

    data = copy.deepcopy(die_hard_trace)
    data["#meta"]["protocol"] = str(tmp_path / "helper.py")
    (tmp_path / "helper.py").write_text(HELPER)
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(data))
    with pytest.raises(SessionError, match="give the spec with --spec"):
        Session.from_trace_file(trace)
    assert not (tmp_path / "MARKER").exists()
    # given the spec, the trace is loaded against it; the digest is the file's: no warning
    session = Session.from_trace_file(trace, str(DIE_HARD))
    assert session.trace is not None and session.trace.length == 6
    assert session.warning is None
    # the parameters are the trace's (goal 3 is not the default), under --param; another
    # version of the file is said (what the session is built from: no kernel compiled here)
    data["#meta"]["params"]["goal"] = 3
    spec, check = spec_for(ReplayRequest(trace, str(DIE_HARD)), data["#meta"])
    assert spec.params == {"big": 5, "small": 3, "goal": 3} and check.digest == "matches"
    spec, _ = spec_for(ReplayRequest(trace, str(DIE_HARD), ("goal=2",)), data["#meta"])
    assert spec.params["goal"] == 2
    edited = tmp_path / "edited.py"
    edited.write_text(DIE_HARD.read_text() + "\n# edited\n")
    _, check = spec_for(ReplayRequest(trace, str(edited)), data["#meta"])
    assert check.digest == "differs" and check.warning is not None
    assert "sha256" in check.warning and str(edited) in check.warning


def test_the_spec_given_is_checked_against_the_trace_s_digest(die_hard_trace, tmp_path, capsys):
    data = copy.deepcopy(die_hard_trace)
    data["#meta"]["params"] = {"big": 5, "small": 3, "goal": 4}
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(data))
    # the file it was written from, and a copy of it elsewhere: the same sha256
    copy_ = tmp_path / "copy.py"
    copy_.write_text(DIE_HARD.read_text())
    for spec in (DIE_HARD, copy_):
        code, out, err = in_process(capsys, "replay", str(trace), "--spec", str(spec), "--json")
        assert code == 0, out + err
        obj = last_json(out)
        assert (obj["verdict"], obj["spec_digest"], obj["length"]) == ("confirmed", "matches", 6)
        assert "warning" not in err
    # another version of the file: said in one line; the replay is still honest about it
    edited = tmp_path / "edited.py"
    edited.write_text(DIE_HARD.read_text() + "\n# edited\n")
    code, out, err = in_process(capsys, "replay", str(trace), "--spec", str(edited), "--json")
    assert code == 0 and last_json(out)["spec_digest"] == "differs"
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "sha256" in warning[0] and str(edited) in warning[0]
    # a trace with no digest (an older one) replays; nothing can be compared
    del data["#meta"]["protocol-sha256"]
    trace.write_text(json.dumps(data))
    code, out, err = in_process(capsys, "replay", str(trace), "--spec", str(DIE_HARD), "--json")
    assert code == 0 and last_json(out)["spec_digest"] == "not recorded"


def test_a_registered_protocol_is_named_alone(capsys, tmp_path):
    """By its registry entry (what its traces record) or its name: no --spec needed."""
    data = json.loads(KAFKA_TRACE.read_text())
    for named in (data["#meta"]["protocol"], "kafka"):
        data["#meta"]["protocol"] = named
        trace = tmp_path / "t.itf.json"
        trace.write_text(json.dumps(data))
        code, out, err = in_process(capsys, "replay", str(trace), "--json")
        assert code == 0, out + err
        assert last_json(out)["spec_digest"] == "registered"


# -- outputs that are not regular files ----------------------------------------------------------


def _graph_to(capsys, target: str) -> tuple[int, str, str]:
    return in_process(capsys, "graph", "--spec", str(DIE_HARD), "--format", "json", "-q",
                      "-o", target)


def test_graph_into_a_fifo_writes_it_and_leaves_the_fifo(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = bytearray()
    done = threading.Event()
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer need not wait

    def read() -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                chunk = None
            if chunk:
                got.extend(chunk)
            elif done.is_set():
                return
            else:
                time.sleep(0.01)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        code, out, err = _graph_to(capsys, str(fifo))
    finally:
        done.set()
        reader.join(30)
        os.close(fd)
    assert code == 0, out + err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    assert len(json.loads(got)["nodes"]) == 16  # the reader got the whole graph
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # nothing else written


@pytest.mark.skipif(os.geteuid() != 0, reason="making a character device (os.mknod) needs root")
def test_graph_into_a_character_device_leaves_the_device(tmp_path, capsys):
    """A null device made for the test (never the machine's /dev/null)."""
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    code, out, err = _graph_to(capsys, str(node))
    assert code == 0, out + err
    st_ = os.lstat(node)
    assert stat.S_ISCHR(st_.st_mode) and st_.st_rdev == os.makedev(1, 3), "the device was replaced"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_graph_to_dash_is_standard_output(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _graph_to(capsys, "-")
    assert code == 0, err
    assert len(json.loads(out)["nodes"]) == 16
    assert list(tmp_path.iterdir()) == []  # no file named "-"


def test_a_symbolic_link_is_written_through_not_replaced(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    # a regular file is still replaced atomically: no temporary file is left
    write_atomic(target, "newer\n")
    assert target.read_text() == "newer\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "real.txt"]


# -- replay options: honoured or refused ---------------------------------------------------------


def test_replay_property_of_another_property_is_refused(capsys):
    """The hw-truncation trace violates CommittedNotLost, not HwBelowLeo."""
    code, out, err = in_process(capsys, "replay", str(KAFKA_TRACE), "--property", "HwBelowLeo")
    assert code == 2, out + err
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "the trace is about 'CommittedNotLost', not 'HwBelowLeo'" in err
    # the property the trace names: honoured (it is the same)
    code, out, err = in_process(capsys, "replay", str(KAFKA_TRACE), "--property",
                                "CommittedNotLost")
    assert code == 0 and out.startswith("replay: confirmed: CommittedNotLost"), out + err


def test_replay_property_is_checked_on_a_trace_that_claims_none(capsys, tmp_path):
    """A trace with "property": null (a behaviour, no claim): --property is the claim, and it is
    checked, with the kind the spec declares it as."""
    data = json.loads(KAFKA_TRACE.read_text())
    data["#meta"].update(property=None)
    del data["#meta"]["kind"]
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(data))
    code, out, err = in_process(capsys, "replay", str(trace), "--property", "HwBelowLeo")
    assert code == 1 and "does not violate HwBelowLeo" in out, out + err
    code, out, err = in_process(capsys, "replay", str(trace), "--property", "CommittedNotLost",
                                "--json")
    assert code == 0, out + err
    assert (last_json(out)["property"], last_json(out)["kind"]) == ("CommittedNotLost",
                                                                    "invariant")
    # an action property is checked as one (the last step), not refused as an invariant
    code, out, err = in_process(capsys, "replay", str(trace), "--property",
                                "LeaderHwMonotonic")
    assert code == 1 and "does not violate LeaderHwMonotonic" in out, out + err


# -- replay --z3 on a lasso ----------------------------------------------------------------------


def _lasso(params: dict, steps: list[tuple[str, dict]], loop: int) -> dict:
    """A lasso of the token ring as hwcheck writes one."""
    spec = protocols.build(protocols.load(str(TOKEN_RING)), params)
    states: list[dict] = [{"token": 0, "want": []}]
    labels = []
    for label, change in steps:
        states.append({**states[-1], **change})
        labels.append(label)
    t = Trace(spec.name, dict(spec.params), "graph", "Served", "liveness", labels, states,
              {"loop": loop})
    return itf.to_itf(spec, t)


WANT0 = {"want": [0]}
LASSOS = {
    # node 0 asks; the token passes round forever (Use is only weakly fair)
    "cycle": ({"use": "weak"}, [("Request(0)", WANT0), ("Pass(0)", {"token": 1}),
                                ("Pass(1)", {"token": 2}), ("Pass(2)", {"token": 0})], 1),
    # nothing is fair: node 0 asks and nothing happens again
    "stutter": ({"use": "none", "passing": "none"}, [("Request(0)", WANT0),
                                                     ("(stutter)", {})], 1),
}


@pytest.mark.parametrize("case", sorted(LASSOS))
def test_replay_z3_on_a_lasso_certifies_its_steps(case, tmp_path, capsys):
    params, steps, loop = LASSOS[case]
    trace = tmp_path / "lasso.itf.json"
    trace.write_text(json.dumps(_lasso(params, steps, loop)))
    code, out, err = in_process(capsys, "replay", str(trace), "--spec", str(TOKEN_RING), "--z3",
                                "--json")
    assert code == 0, out + err
    assert last_json(out)["z3"] == "certified" and last_json(out)["kind"] == "liveness"
    (line,) = [x for x in err.splitlines() if x.startswith("replay --z3: ")]
    assert f"all {len(steps)} step(s)" in line and "cycle closes" in line
    assert "interpreter" in line  # the liveness itself is not Z3's claim


def test_replay_z3_on_a_behaviour_that_claims_nothing_certifies_its_steps(die_hard_trace,
                                                                          tmp_path, capsys):
    data = copy.deepcopy(die_hard_trace)
    data["#meta"]["property"] = None
    trace = tmp_path / "t.itf.json"
    trace.write_text(json.dumps(data))
    code, out, err = in_process(capsys, "replay", str(trace), "--spec", str(DIE_HARD), "--z3")
    assert code == 0, out + err
    assert out.splitlines() == [
        "replay: confirmed: a behaviour of DieHard in 6 steps",
        "replay --z3: certified by Z3: the initial state and all 6 step(s) (guard and effect of "
        "each); the trace claims no property"]


# -- fuzzing trace files -------------------------------------------------------------------------

JUNK = st.recursive(st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
NAMES = st.sampled_from(["NotSolved", "TypeOK", "BothFull", "Nope", ""])
ACTIONS = st.sampled_from(["FillSmall", "FillBig", "EmptySmall", "EmptyBig", "SmallToBig",
                           "BigToSmall", "(stutter)", "Crash(0)"])
SOURCES = st.sampled_from(["HELPER", "helper", "sys:exit", "os:getcwd", "kafka", None, 3,
                           "DIE_HARD"])


@st.composite
def mutated(draw, base: dict) -> dict:
    data = copy.deepcopy(base)
    meta, states = data["#meta"], data["states"]
    for _ in range(draw(st.integers(1, 3))):
        what = draw(st.sampled_from(["value", "action", "states", "protocol", "digest",
                                     "params", "property", "kind", "loop", "length", "meta",
                                     "junk"]))
        if what == "value" and states:
            st_ = states[draw(st.integers(0, len(states) - 1))]
            if isinstance(st_, dict):
                st_[draw(st.sampled_from(["big", "small", "other"]))] = draw(
                    st.integers(-1, 7) | JUNK)
        elif what == "action" and len(states) > 1:
            st_ = states[draw(st.integers(1, len(states) - 1))]
            if isinstance(st_, dict):
                st_["#meta"] = {"index": 0, "action": draw(ACTIONS | JUNK)}
        elif what == "states":
            k = draw(st.integers(0, len(states)))
            data["states"] = states = states[:k] + draw(
                st.sampled_from([[], states[-1:], states[:1], states[k:][::-1]]))
        elif what == "protocol":
            meta["protocol"] = draw(SOURCES)
        elif what == "digest":
            meta["protocol-sha256"] = draw(st.sampled_from(["0" * 64, "", None]) | JUNK)
        elif what == "params":
            meta["params"] = draw(st.fixed_dictionaries(
                {}, optional={"big": st.integers(-1, 7), "small": st.integers(-1, 4),
                              "goal": st.integers(-1, 7) | JUNK, "other": JUNK}) | JUNK)
        elif what == "property":
            meta["property"] = draw(NAMES | JUNK)
        elif what == "kind":
            meta["kind"] = draw(st.sampled_from(["invariant", "reachable", "action", "liveness",
                                                 "domain", "x"]))
        elif what == "loop":
            meta["loop"] = draw(st.integers(-1, 8) | JUNK)
        elif what == "length":
            meta["length"] = draw(st.integers(-1, 8) | JUNK)
        elif what == "meta":
            data["#meta"] = meta = draw(st.dictionaries(st.text(max_size=6), JUNK, max_size=3))
        else:
            return draw(JUNK | st.fixed_dictionaries({"states": JUNK, "#meta": JUNK}))
    return data


def die_hard_moves(big: int, small: int, b: int, s: int) -> dict[str, tuple[int, int]]:
    """DieHard.tla's next states from (b, s), by action, from the puzzle: not through hwcheck."""
    to_big, to_small = min(s, big - b), min(b, small - s)
    return {"FillSmall": (b, small), "FillBig": (big, s), "EmptySmall": (b, 0),
            "EmptyBig": (0, s), "SmallToBig": (b + to_big, s - to_big),
            "BigToSmall": (b - to_small, s + to_small)}


def bears_out(data: dict, obj: dict) -> bool:
    """Whether a confirmed replay (``obj``, its --json) is what the file shows: Die Hard from
    (0, 0), each step the action named, the last state violating (or reaching) the property."""
    p = obj["params"]
    big, small, goal = p["big"], p["small"], p["goal"]
    path = [(st_["big"], st_["small"]) for st_ in data["states"]]
    if path[0] != (0, 0) or obj["length"] != len(path) - 1:
        return False
    for i in range(1, len(path)):
        label = data["states"][i].get("#meta", {}).get("action")
        moves = die_hard_moves(big, small, *path[i - 1])
        if (moves.get(label) if label is not None else None) != path[i] \
                and (label is not None or path[i] not in moves.values()):
            return False
    last = path[-1]
    claim = (obj["property"], obj["kind"])
    return claim[0] is None or (claim == ("NotSolved", "invariant") and last[0] == goal) \
        or (claim == ("BothFull", "reachable") and last == (big, small))


@settings(max_examples=int(os.environ.get("HWCHECK_FUZZ_EXAMPLES") or 100),
          derandomize=not os.environ.get("HWCHECK_FUZZ_EXAMPLES"), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_trace_file_is_one_line_or_a_true_confirmation(die_hard_trace, data,
                                                                 tmp_path_factory, capsys,
                                                                 monkeypatch):
    folder = tmp_path_factory.mktemp("fz")
    (folder / "helper.py").write_text(HELPER)
    trace = data.draw(mutated(die_hard_trace))
    meta = trace.get("#meta") if isinstance(trace, dict) else None
    if isinstance(meta, dict) and data.draw(st.integers(0, 2)) == 0:  # often: what it names
        meta["protocol"] = data.draw(SOURCES)
    if isinstance(meta, dict) and meta.get("protocol") in ("HELPER", "DIE_HARD"):
        meta["protocol"] = str(folder / "helper.py") if meta["protocol"] == "HELPER" \
            else f"{DIE_HARD}:build"
    path = folder / "t.itf.json"
    text = json.dumps(trace)
    path.write_text(text)
    args = ["replay", str(path), "--json"]
    if data.draw(st.booleans()):
        args += ["--spec", str(DIE_HARD)]
    if data.draw(st.integers(0, 3)) == 0:
        args.append("--z3")
    monkeypatch.chdir(folder)  # where a module the trace names would be found
    code, out, err = in_process(capsys, *args)
    assert "Traceback" not in out + err
    assert not (folder / "MARKER").exists(), "replay ran code the trace named"
    assert sorted(p.name for p in folder.iterdir()) == ["helper.py", "t.itf.json"]
    assert path.read_text() == text  # nothing written, the trace left as it was
    said = [line for line in err.splitlines() if not line.startswith("replay: warning: ")]
    if code == 0:
        obj = last_json(out)
        assert obj["verdict"] == "confirmed"
        assert bears_out(trace, obj), f"confirmed what the file does not show: {obj}"
    else:
        assert code in (1, 2), (code, out, err)
        lines = said + [line for line in out.splitlines() if not line.startswith("{")]
        if code == 1 and lines[:1] and lines[0].startswith("replay: confirmed: "):
            # the interpreter confirmed it, then Z3 did not certify it: that line follows
            assert "--z3" in args and len(lines) == 2, lines
            assert lines[1].startswith("replay --z3: NOT certified by Z3: ")
        else:
            assert len(lines) == 1, lines
            assert lines[0].startswith("hwcheck: error: " if code == 2 else
                                       "replay: does not replay: ")
