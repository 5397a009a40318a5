"""Protocols that are not Kafka, end to end: every figure of the engine contract's
PROTOCOL_TABLE derived again by a plain-Python BFS written from the TLA+ originals (not through
hwcheck), and each spec through the command line by --spec: check, replay (hwcheck's traces and
another tool's), bmc, prove, suite, params, from a folder outside the repository."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import deque
from itertools import product
from pathlib import Path

import pytest

from engine_contract import PROTOCOL_TABLE, SPECS
from helpers import NEEDS_JAVA

# -- independent breadth-first search ------------------------------------------------------------


def bfs(init, successors, invariants):
    """(distinct, generated, depth, shortest violation per invariant) of a plain BFS, counted
    as hwcheck and TLC count (generated excludes the initial state; depth in steps)."""
    seen = {init: 0}
    queue = deque([init])
    generated, depth, shortest = 0, 0, {}
    for name, ok in invariants.items():
        if not ok(init):
            shortest[name] = 0
    while queue:
        s = queue.popleft()
        for t in successors(s):
            generated += 1
            if t in seen:
                continue
            seen[t] = seen[s] + 1
            depth = max(depth, seen[t])
            for name, ok in invariants.items():
                if name not in shortest and not ok(t):
                    shortest[name] = seen[t]
            queue.append(t)
    return len(seen), generated, depth, shortest


def two_phase(rms: int, tm_commits_early: bool = False):
    """TwoPhase.tla: (rmState, tmState, tmPrepared, msgs)."""
    RM = range(rms)
    init = (("working",) * rms, "init", frozenset(), frozenset())

    def succ(s):
        rm, tm, prep, msgs = s
        out = []
        for r in RM:  # TMRcvPrepared(r)
            if tm == "init" and ("Prepared", r) in msgs:
                out.append((rm, tm, prep | {r}, msgs))
        ready = bool(prep) if tm_commits_early else prep == frozenset(RM)
        if tm == "init" and ready:  # TMCommit
            out.append((rm, "committed", prep, msgs | {("Commit",)}))
        if tm == "init":  # TMAbort
            out.append((rm, "aborted", prep, msgs | {("Abort",)}))

        def at(r, v):
            return tuple(v if i == r else x for i, x in enumerate(rm))

        for r in RM:  # RMPrepare(r)
            if rm[r] == "working":
                out.append((at(r, "prepared"), tm, prep, msgs | {("Prepared", r)}))
        for r in RM:  # RMChooseToAbort(r)
            if rm[r] == "working":
                out.append((at(r, "aborted"), tm, prep, msgs))
        for r in RM:  # RMRcvCommitMsg(r)
            if ("Commit",) in msgs:
                out.append((at(r, "committed"), tm, prep, msgs))
        for r in RM:  # RMRcvAbortMsg(r)
            if ("Abort",) in msgs:
                out.append((at(r, "aborted"), tm, prep, msgs))
        return out

    invariants = {
        "TCConsistent": lambda s: not ("aborted" in s[0] and "committed" in s[0]),
        "CommitAfterAllPrepared": lambda s: s[1] != "committed"
        or all(("Prepared", r) in s[3] for r in RM),
    }
    return bfs(init, succ, invariants)


def die_hard(big: int = 5, small: int = 3, goal: int = 4):
    def succ(s):
        b, m = s
        pour_sb = min(m, big - b)
        pour_bs = min(b, small - m)
        return [(b, small), (big, m), (b, 0), (0, m), (b + pour_sb, m - pour_sb),
                (b - pour_bs, m + pour_bs)]

    return bfs((0, 0), succ, {"TypeOK": lambda s: 0 <= s[0] <= big and 0 <= s[1] <= small,
                              "NotSolved": lambda s: s[0] != goal})


ORACLES = {"two_phase.py": two_phase, "die_hard.py": die_hard}


@pytest.mark.parametrize("row", PROTOCOL_TABLE, ids=lambda r: f"{r[0]}-{r[1]}")
def test_the_contract_table_matches_an_independent_bfs(row):
    file, params, distinct, generated, depth, shortest = row
    assert ORACLES[file](**params) == (distinct, generated, depth, shortest)


def test_two_phase_with_three_rms_has_the_published_288_states():
    assert two_phase(3)[0] == 288


# -- the command line, by --spec -----------------------------------------------------------------


def hwcheck(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, cwd=cwd)


def last_json(res) -> dict:
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """The spec files copied to a folder outside the repository, run from there."""
    d = tmp_path_factory.mktemp("elsewhere")
    for f in ("two_phase.py", "die_hard.py"):
        shutil.copy(SPECS / f, d / f)
    return d


def test_a_spec_outside_the_repo_through_check_replay_bmc_and_suite(outside):
    spec = str(outside / "two_phase.py")
    res = hwcheck("check", "--spec", spec, "--param", "rms=3", "--json", "-q", cwd=outside)
    obj = last_json(res)
    assert res.returncode == 0 and (obj["distinct"], obj["generated"], obj["depth"]) == (
        288, 1145, 10)
    assert obj["protocol"] == f"{spec}:PROTOCOL"

    res = hwcheck("check", "--spec", spec, "--param", "rms=2", "--param",
                  "tm_commits_early=true", "--continue", "--json", "-q", "--out", "cx",
                  cwd=outside)
    obj = last_json(res)
    assert res.returncode == 12
    lengths = {v["property"]: v["length"] for v in obj["violations"]}
    assert lengths == {"TCConsistent": 5, "CommitAfterAllPrepared": 3}
    for v in obj["violations"]:
        trace = outside / v["trace"]
        rep = hwcheck("replay", str(trace), "--json")  # the trace names its spec and params
        assert rep.returncode == 0, rep.stdout + rep.stderr
        assert last_json(rep)["verdict"] == "confirmed"

    res = hwcheck("bmc", "--spec", spec, "--param", "rms=2", "--param", "tm_commits_early=true",
                  "--depth", "6", "--json", "-q", "--out", "cx", cwd=outside)
    obj = last_json(res)
    assert res.returncode == 12
    assert {(v["property"], v["length"]) for v in obj["violations"]} == {
        ("CommitAfterAllPrepared", 3)}

    res = hwcheck("suite", "--spec", spec, "--json", "-q", "--out", "suite", cwd=outside)
    obj = last_json(res)
    assert res.returncode == 0, res.stdout
    assert [(s["scenario"], s["ok"], s["distinct"]) for s in obj["scenarios"]] == [
        ("two-phase-3", True, 288), ("two-phase-early-commit", True, 76)]
    assert (outside / "suite" / "two-phase-early-commit" / "TCConsistent.html").is_file()


@pytest.mark.slow
@NEEDS_JAVA
def test_a_spec_outside_the_repo_on_the_spark_engine(outside):
    spec = str(outside / "die_hard.py")
    res = hwcheck("check", "--spec", spec, "--engine", "spark", "--spark-master", "local[2]",
                  "--continue", "--json", "-q", "--out", "spark", cwd=outside)
    obj = last_json(res)
    assert res.returncode == 12, res.stderr
    assert (obj["distinct"], obj["generated"], obj["engine"]) == (16, 96, "spark")
    assert hwcheck("replay", str(outside / obj["violations"][0]["trace"])).returncode == 0


def test_a_function_spec_gets_its_keyword_arguments_as_parameters(outside):
    spec = str(outside / "die_hard.py")
    res = hwcheck("params", "--spec", spec, "--json")
    obj = last_json(res)
    assert obj["protocol"] == f"{spec}:build"
    assert [(p["name"], p["domain"], p["default"]) for p in obj["params"]] == [
        ("big", "integer", 5), ("small", "integer", 3), ("goal", "integer", 4)]
    res = hwcheck("check", "--spec", spec, "--param", "goal=3", "--json", "-q", "--out", "g",
                  cwd=outside)
    assert res.returncode == 12
    assert last_json(res)["violations"][0]["length"] == die_hard(goal=3)[3]["NotSolved"] == 2


def test_prove_takes_plain_induction_for_a_protocol_without_lemmas(outside):
    """TypeOK of DieHard is inductive by itself; NotSolved is not (it is not even true)."""
    spec = str(outside / "die_hard.py")
    res = hwcheck("prove", "--spec", spec, "--invariant", "TypeOK", "--json", "-q", "--out", "p",
                  cwd=outside)
    assert res.returncode == 0, res.stdout + res.stderr
    assert last_json(res)["invariants"][0]["lemmas"] == []
    res = hwcheck("prove", "--spec", spec, "--invariant", "NotSolved", "--json", "-q", "--out",
                  "p", cwd=outside)
    assert res.returncode == 12
    (cti,) = [c for inv in last_json(res)["invariants"] for c in inv["ctis"]][:1]
    assert hwcheck("replay", str(outside / cti["trace"])).returncode == 0


def test_a_trace_from_another_tool_replays_against_the_spec(outside, tmp_path):
    """Apalache-style ITF: no hwcheck #meta, no action names: each step is matched to the action
    that produces the next state."""
    states = [(0, 0), (5, 0), (2, 3), (2, 0), (0, 2), (5, 2), (4, 3)]
    itf = {"#meta": {"format": "ITF", "source": "apalache"}, "vars": ["big", "small"],
           "states": [{"#meta": {"index": i}, "big": b, "small": s}
                      for i, (b, s) in enumerate(states)]}
    f = tmp_path / "apalache.itf.json"
    f.write_text(json.dumps(itf))
    spec = str(outside / "die_hard.py")
    res = hwcheck("replay", str(f), "--spec", spec, "--property", "NotSolved", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    obj = last_json(res)
    assert (obj["verdict"], obj["property"], obj["length"]) == ("confirmed", "NotSolved", 6)
    # a step no action takes is named
    itf["states"][3]["small"] = 1
    f.write_text(json.dumps(itf))
    res = hwcheck("replay", str(f), "--spec", spec)
    assert res.returncode == 1
    assert "step 3: no action of DieHard leads from state 2 to state 3" in res.stdout
    # without --spec it cannot know the spec: one line, exit 2
    res = hwcheck("replay", str(f))
    assert res.returncode == 2 and "give --spec and --param" in res.stderr


@pytest.mark.parametrize("content, message", [
    ("import no_such_dependency_here\n", "cannot import 'no_such_dependency_here'"),
    ("def build(:\n", "syntax error at line 1"),
    ("raise RuntimeError('boom')\n", "importing it raised RuntimeError: boom"),
    ("from hwcheck.spec.lang import Spec\n"
     "def build(n: int = 1):\n"
     "    s = Spec('Bad', {})\n"
     "    x = s.scalar('x', 0, 1)\n"
     "    s.invariant('Bad', x + 1)\n"
     "    return s\n", "invariant Bad: expected a bool expression, got int"),
    ("PROTOCOL = 42\n", "PROTOCOL is neither a Protocol nor a function"),
])
def test_a_broken_spec_file_is_one_line_and_exit_2(tmp_path, content, message):
    f = tmp_path / "broken.py"
    f.write_text(content)
    res = hwcheck("check", "--spec", str(f))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: error: ") and message in lines[0]
