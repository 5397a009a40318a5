"""Protocols that are not Kafka, end to end.

Every figure of the engine contract's PROTOCOL_TABLE is derived again here by a plain-Python BFS
over tuples, written from the TLA+ originals (TwoPhase.tla, DieHard.tla) and not through
hwcheck; Z3's bounded checker finds the same shortest violations. Then each spec goes through the
command line by --spec: check, replay (hwcheck's traces and another tool's), bmc, prove, suite
and params, from a folder outside the repository (the acceptance test), and a broken spec file is
one line and exit 2 for every command.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest
from engine_contract import PROTOCOL_TABLE, SPECS, protocol_spec, row_id
from helpers import NEEDS_JAVA

REPO = Path(__file__).resolve().parent.parent

# -- independent breadth-first search ------------------------------------------------------------


def bfs(init, successors, invariants):
    """(distinct, generated, depth, shortest violation per invariant, reachable states) of a
    plain BFS, counted as hwcheck and TLC count: generated is every (state, enabled action
    instance) pair, duplicates included, the initial state not counted; depth in steps."""
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
    return len(seen), generated, depth, shortest, set(seen)


RM_STATES = ("working", "prepared", "committed", "aborted")  # TwoPhase.tla's strings
TM_STATES = ("init", "committed", "aborted")


def two_phase_system(rms: int, tm_commits_early: bool = False):
    """TwoPhase.tla as (init, successors, invariants) over (rmState, tmState, tmPrepared, msgs),
    msgs a set of records: ("Prepared", rm), ("Commit",), ("Abort",). One successor per
    enabled instance of each action, as TLC counts them."""
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
        "TPTypeOK": lambda s: set(s[0]) <= set(RM_STATES) and s[1] in TM_STATES
        and s[2] <= frozenset(RM),
        "TCConsistent": lambda s: not ("aborted" in s[0] and "committed" in s[0]),
        "CommitAfterAllPrepared": lambda s: s[1] != "committed"
        or all(("Prepared", r) in s[3] for r in RM),
    }
    return init, succ, invariants


def two_phase(rms: int, tm_commits_early: bool = False):
    return bfs(*two_phase_system(rms, tm_commits_early))


def die_hard(big: int = 5, small: int = 3, goal: int = 4):
    """DieHard.tla over (big, small): six actions, each always enabled."""
    def succ(s):
        b, m = s
        pour_sb = min(m, big - b)
        pour_bs = min(b, small - m)
        return [(b, small), (big, m), (b, 0), (0, m), (b + pour_sb, m - pour_sb),
                (b - pour_bs, m + pour_bs)]

    return bfs((0, 0), succ, {"TypeOK": lambda s: 0 <= s[0] <= big and 0 <= s[1] <= small,
                              "NotSolved": lambda s: s[0] != goal})


ORACLES = {"two_phase.py": two_phase, "die_hard.py": die_hard}


@pytest.mark.parametrize("row", PROTOCOL_TABLE, ids=row_id)
def test_the_contract_table_matches_an_independent_bfs(row):
    file, params, distinct, generated, depth, shortest = row
    assert ORACLES[file](**params)[:4] == (distinct, generated, depth, shortest)


def test_two_phase_has_the_published_state_counts():
    """288 for 3 RMs (TLC, Stateright), 8,832 for 5 (Stateright's test suite)."""
    assert two_phase(3)[0] == 288
    assert two_phase(5)[0] == 8832


def test_die_hard_has_the_puzzles_shortest_solution():
    assert die_hard()[3] == {"NotSolved": 6}  # fill 5, pour, empty 3, pour, fill 5, pour


@pytest.mark.parametrize("row", [r for r in PROTOCOL_TABLE if r[5]], ids=row_id)
def test_bmc_finds_the_same_shortest_violations(row):
    """Z3's bounded checker (no symmetry, nothing assumed): each violated invariant first fails
    at the BFS's shortest length, and the path it returns replays through the interpreter."""
    from hwcheck.checker.semantics.interp import Interpreter
    from hwcheck.checker.traces.trace import from_path
    from hwcheck.checker.z3.checks import bmc

    file, params, *_, shortest = row
    spec = protocol_spec(file, params)
    for name, n in shortest.items():
        rep = bmc(spec, [(name, "invariant", spec.invariant_named(name).expr)], n + 2)
        assert (rep.status, rep.depth) == ("violated", n), name
        (hit,) = rep.hits
        trace = from_path(spec, Interpreter(spec), name, "invariant", "z3-bmc", hit.path)
        assert trace.length == n


# -- the command line, by --spec -----------------------------------------------------------------


def hwcheck(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, cwd=cwd)


def last_json(res) -> dict:
    assert res.stdout.strip(), res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def row(file: str, **params):
    (r,) = [r for r in PROTOCOL_TABLE if r[0] == file and r[1] == params]
    return r


def counts(obj: dict) -> tuple:
    return obj["distinct"], obj["generated"], obj["depth"]


BROKEN_TM = ("--param", "rms=2", "--param", "tm_commits_early=true")


def test_check_by_a_path_in_the_repository(tmp_path):
    res = hwcheck("check", "--spec", "tests/specs/two_phase.py", "--param", "rms=3", "--json",
                  "-q", "--out", str(tmp_path), cwd=REPO)
    assert res.returncode == 0, res.stderr
    obj = last_json(res)
    assert counts(obj) == row("two_phase.py", rms=3)[2:5]  # 288 distinct: the published figure
    assert (obj["verdict"], obj["complete"], obj["violations"]) == ("holds", True, [])
    assert obj["protocol"] == f"{SPECS / 'two_phase.py'}:PROTOCOL"  # absolute: replayable
    assert obj["params"] == {"rms": 3, "tm_commits_early": False}
    assert obj["reachability"] == {"Committed": "reached", "Aborted": "reached"}


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """The spec files copied to a folder outside the repository, where every command runs."""
    d = tmp_path_factory.mktemp("elsewhere")
    assert REPO not in d.resolve().parents
    for f in ("two_phase.py", "die_hard.py"):
        shutil.copy(SPECS / f, d / f)
    return d


@pytest.fixture(scope="module")
def broken_tm_run(outside):
    """``check --continue`` of the broken TM from outside the repository: (result, JSON)."""
    res = hwcheck("check", "--spec", str(outside / "two_phase.py"), *BROKEN_TM, "--continue",
                  "--json", "-q", "--out", "cx", cwd=outside)
    return res, last_json(res)


def test_outside_the_repo_check_holds_with_the_published_count(outside):
    spec = str(outside / "two_phase.py")
    res = hwcheck("check", "--spec", spec, "--param", "rms=3", "--json", "-q", "--out", "ok",
                  cwd=outside)
    obj = last_json(res)
    assert res.returncode == 0 and obj["verdict"] == "holds"
    assert counts(obj) == row("two_phase.py", rms=3)[2:5]
    assert obj["protocol"] == f"{spec}:PROTOCOL"  # the copy, not the repository's file


def test_outside_the_repo_a_violation_is_exit_12_and_its_traces_replay_given_the_spec(
        outside, broken_tm_run):
    res, obj = broken_tm_run
    _, _, distinct, generated, depth, shortest = row("two_phase.py", rms=2,
                                                     tm_commits_early=True)
    assert res.returncode == 12 and obj["verdict"] == "violated"
    assert counts(obj) == (distinct, generated, depth)
    assert {v["property"]: v["length"] for v in obj["violations"]} == shortest
    for v in obj["violations"]:
        trace = outside / v["trace"]
        meta = json.loads(trace.read_text())["#meta"]
        assert meta["protocol"] == f"{outside / 'two_phase.py'}:PROTOCOL"
        assert meta["params"] == {"rms": 2, "tm_commits_early": True}
        # the spec file is the user's to give (a trace never chooses code); the parameters
        # come from the trace
        rep = hwcheck("replay", str(trace), "--spec", str(outside / "two_phase.py"), "--json")
        assert rep.returncode == 0, rep.stdout + rep.stderr
        got = last_json(rep)
        assert (got["verdict"], got["property"], got["length"]) == (
            "confirmed", v["property"], v["length"])


@pytest.mark.slow
def test_outside_the_repo_bmc_finds_the_shortest_lengths(outside):
    spec = str(outside / "two_phase.py")
    shortest = row("two_phase.py", rms=2, tm_commits_early=True)[5]
    # every invariant: bmc stops at the first depth where one fails
    res = hwcheck("bmc", "--spec", spec, *BROKEN_TM, "--depth", "8", "--json", "-q", "--out",
                  "bmc", cwd=outside)
    assert res.returncode == 12, res.stderr
    obj = last_json(res)
    first = min(shortest.values())
    assert obj["depth"] == first
    assert {(v["property"], v["length"]) for v in obj["violations"]} == {
        (p, n) for p, n in shortest.items() if n == first}
    # one invariant at a time: each at its BFS length; the trace replays
    res = hwcheck("bmc", "--spec", spec, *BROKEN_TM, "--depth", "8", "--invariant",
                  "TCConsistent", "--json", "-q", "--out", "bmc", cwd=outside)
    assert res.returncode == 12, res.stderr
    (v,) = last_json(res)["violations"]
    assert (v["property"], v["length"]) == ("TCConsistent", shortest["TCConsistent"])
    assert hwcheck("replay", str(outside / v["trace"]), "--spec", spec).returncode == 0
    # below the shortest length: no violation, and bounded is not a proof (unknown, exit 3)
    res = hwcheck("bmc", "--spec", spec, *BROKEN_TM, "--depth", str(first - 1), "--json", "-q",
                  "--out", "bmc", cwd=outside)
    assert res.returncode == 3, res.stderr
    obj = last_json(res)
    assert (obj["verdict"], obj["violations"]) == ("unknown", [])


@pytest.mark.slow
def test_outside_the_repo_suite_runs_the_scenarios(outside):
    from hwcheck.checker import protocols

    proto = protocols.load(str(outside / "two_phase.py"))
    res = hwcheck("suite", "--spec", str(outside / "two_phase.py"), "--json", "-q", "--out",
                  "suite", cwd=outside)
    assert res.returncode == 0, res.stdout + res.stderr
    obj = last_json(res)
    assert obj["verdict"] == "ok" and obj["mismatches"] == []
    assert [(s["scenario"], s["ok"], s["distinct"]) for s in obj["scenarios"]] == [
        (s.name, True, s.states) for s in proto.scenarios]
    assert [s.states for s in proto.scenarios] == [
        row("two_phase.py", rms=3)[2], row("two_phase.py", rms=5)[2],
        row("two_phase.py", rms=2, tm_commits_early=True)[2]]
    assert (outside / "suite" / "two-phase-early-commit" / "TCConsistent.itf.json").is_file()
    assert (outside / "suite" / "index.html").is_file()


def test_outside_the_repo_params_lists_the_parameters(outside):
    spec = str(outside / "two_phase.py")
    res = hwcheck("params", "--spec", spec, "--json")
    assert res.returncode == 0
    obj = last_json(res)
    assert obj["protocol"] == f"{spec}:PROTOCOL"
    assert [(p["name"], p["domain"], p["default"], p["option"]) for p in obj["params"]] == [
        ("rms", "1..6", 3, "--param rms=VALUE"),
        ("tm_commits_early", "true|false", False, "--param tm_commits_early=VALUE")]


def _pre_state(itf_state: dict, rms: int):
    """An ITF state of TwoPhase (hwcheck's encoding) as the oracle's tuple."""
    rm = dict(itf_state["rmState"]["#map"])
    msgs = {("Prepared", r) for r in itf_state["msgPrepared"]["#set"]}
    msgs |= {("Commit",)} if itf_state["msgCommit"] else set()
    msgs |= {("Abort",)} if itf_state["msgAbort"] else set()
    return (tuple(RM_STATES[rm[r]] for r in range(rms)), TM_STATES[itf_state["tmState"]],
            frozenset(itf_state["tmPrepared"]["#set"]), frozenset(msgs))


@pytest.mark.slow
def test_outside_the_repo_prove_is_plain_induction(outside):
    """No lemmas: TPTypeOK is inductive (exit 0). TCConsistent holds in every reachable state
    (the BFS) but is not inductive by itself (unknown, exit 3: a counterexample to induction
    is not a violation): each counterexample to induction
    replays, starts from a state that satisfies TCConsistent, ends in one that violates it, and
    starts from a state the independent BFS never reaches."""
    spec = str(outside / "two_phase.py")
    res = hwcheck("prove", "--spec", spec, "--invariant", "TPTypeOK", "--json", "-q", "--out",
                  "p", cwd=outside)
    assert res.returncode == 0, res.stdout + res.stderr
    (inv,) = last_json(res)["invariants"]
    assert (inv["property"], inv["status"], inv["lemmas"]) == ("TPTypeOK", "holds", [])

    res = hwcheck("prove", "--spec", spec, "--invariant", "TCConsistent", "--json", "-q",
                  "--out", "p", cwd=outside)
    assert res.returncode == 3, res.stdout + res.stderr
    (inv,) = last_json(res)["invariants"]
    assert inv["status"] == "unknown" and "not inductive" in inv["reason"]
    assert inv["lemmas"] == [] and inv["ctis"]
    _, _, _, shortest, reachable = two_phase(3)
    assert "TCConsistent" not in shortest  # it does hold
    _, succ, invariants = two_phase_system(3)
    ok = invariants["TCConsistent"]
    for cti in inv["ctis"]:
        path = outside / cti["trace"]
        assert hwcheck("replay", str(path), "--spec", spec).returncode == 0
        pre, post = (_pre_state(s, 3) for s in json.loads(path.read_text())["states"])
        assert ok(pre) and not ok(post) and post in succ(pre)
        assert pre not in reachable


@pytest.mark.slow
@NEEDS_JAVA
def test_outside_the_repo_on_the_spark_engine(outside, broken_tm_run):
    """The executors rebuild the spec from the copied file; the figures, the traces and their
    replay are the local engine's."""
    _, local = broken_tm_run
    res = hwcheck("check", "--spec", str(outside / "two_phase.py"), *BROKEN_TM, "--engine",
                  "spark", "--spark-master", "local[2]", "--continue", "--json", "-q", "--out",
                  "spark", cwd=outside)
    assert res.returncode == 12, res.stderr
    obj = last_json(res)
    assert obj["engine"] == "spark" and counts(obj) == counts(local)
    assert {v["property"]: v["length"] for v in obj["violations"]} == {
        v["property"]: v["length"] for v in local["violations"]}
    for v in obj["violations"]:
        spark_states = json.loads((outside / v["trace"]).read_text())["states"]
        (lv,) = [x for x in local["violations"] if x["property"] == v["property"]]
        assert spark_states == json.loads((outside / lv["trace"]).read_text())["states"]
        assert hwcheck("replay", str(outside / v["trace"]), "--spec",
                       str(outside / "two_phase.py")).returncode == 0


def test_a_function_spec_gets_its_keyword_arguments_as_parameters(outside):
    spec = str(outside / "die_hard.py")
    res = hwcheck("params", "--spec", spec, "--json")
    obj = last_json(res)
    assert obj["protocol"] == f"{spec}:build"
    assert [(p["name"], p["domain"], p["default"]) for p in obj["params"]] == [
        ("big", "integer", 5), ("small", "integer", 3), ("goal", "integer", 4)]
    # the parameter reaches the builder (bmc: no kernel to compile for one more configuration)
    res = hwcheck("bmc", "--spec", spec, "--param", "goal=3", "--depth", "4", "--json", "-q",
                  "--out", "g", cwd=outside)
    assert res.returncode == 12
    assert last_json(res)["params"] == {"big": 5, "small": 3, "goal": 3}
    assert last_json(res)["violations"][0]["length"] == die_hard(goal=3)[3]["NotSolved"] == 2


def test_a_spec_may_import_a_module_beside_it(tmp_path):
    """As when Python runs a script: the spec file's folder is searched for its imports."""
    (tmp_path / "jug_sizes.py").write_text("BIG, SMALL = 5, 3\n")
    text = (SPECS / "die_hard.py").read_text()
    text = text.replace("def build(big: int = 5, small: int = 3,",
                        "from jug_sizes import BIG, SMALL\n\n\n"
                        "def build(big: int = BIG, small: int = SMALL,")
    assert "from jug_sizes" in text
    (tmp_path / "jugs.py").write_text(text)
    res = hwcheck("check", "--spec", str(tmp_path / "jugs.py"), "--json", "-q", "--continue",
                  "--out", str(tmp_path / "out"), cwd="/")
    assert res.returncode == 12, res.stderr
    assert counts(last_json(res)) == row("die_hard.py")[2:5]


def test_a_relative_spec_path_is_the_file_in_the_working_folder(tmp_path, monkeypatch):
    """The loader caches protocols by absolute path: the same relative path from another
    folder is another file."""
    from hwcheck.checker import protocols

    for name, rms in (("a", 2), ("b", 4)):
        (tmp_path / name).mkdir()
        text = (SPECS / "two_phase.py").read_text().replace(
            'Param("rms", 3,', f'Param("rms", {rms},')
        (tmp_path / name / "tp.py").write_text(text)
    got = []
    for name in ("a", "b"):
        monkeypatch.chdir(tmp_path / name)
        proto = protocols.load("tp.py")
        got.append((proto.source, proto.defaults()["rms"]))
    assert got == [(f"{tmp_path / 'a' / 'tp.py'}:PROTOCOL", 2),
                   (f"{tmp_path / 'b' / 'tp.py'}:PROTOCOL", 4)]


# -- traces written by another tool --------------------------------------------------------------


def foreign(vars_: list[str], states: list[dict]) -> dict:
    """An ITF trace as Apalache writes one: no hwcheck #meta, no action names."""
    return {"#meta": {"format": "ITF", "source": "apalache"}, "vars": vars_,
            "states": [{"#meta": {"index": i}, **s} for i, s in enumerate(states)]}


def test_a_die_hard_trace_from_another_tool_replays(outside, tmp_path):
    states = [(0, 0), (5, 0), (2, 3), (2, 0), (0, 2), (5, 2), (4, 3)]
    itf = foreign(["big", "small"], [{"big": b, "small": s} for b, s in states])
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


def tp_state(rm: list[int], tm: int, prepared: list[int], sent: list[int], commit: int,
             abort: int) -> dict:
    return {"rmState": {"#map": [[r, v] for r, v in enumerate(rm)]}, "tmState": tm,
            "tmPrepared": {"#set": prepared}, "msgPrepared": {"#set": sent},
            "msgCommit": commit, "msgAbort": abort}


# RMPrepare(0), TMRcvPrepared(0), TMCommit (the broken TM: RM 1 has not prepared),
# RMChooseToAbort(1), RMRcvCommitMsg(0)
EARLY_COMMIT = [tp_state([0, 0], 0, [], [], 0, 0), tp_state([1, 0], 0, [], [0], 0, 0),
                tp_state([1, 0], 0, [0], [0], 0, 0), tp_state([1, 0], 1, [0], [0], 1, 0),
                tp_state([1, 3], 1, [0], [0], 1, 0), tp_state([2, 3], 1, [0], [0], 1, 0)]


@pytest.mark.slow
def test_a_two_phase_trace_from_another_tool_replays_with_its_parameters(outside, tmp_path):
    """Sets as #set, functions as #map; the parameters come from --param."""
    f = tmp_path / "early.itf.json"
    names = ["rmState", "tmState", "tmPrepared", "msgPrepared", "msgCommit", "msgAbort"]
    f.write_text(json.dumps(foreign(names, EARLY_COMMIT)))
    spec = str(outside / "two_phase.py")
    res = hwcheck("replay", str(f), "--spec", spec, *BROKEN_TM, "--property", "TCConsistent",
                  "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    obj = last_json(res)
    assert (obj["verdict"], obj["property"], obj["length"], obj["params"]) == (
        "confirmed", "TCConsistent", 5, {"rms": 2, "tm_commits_early": True})
    # without --property it is a behaviour to replay, with no claim
    res = hwcheck("replay", str(f), "--spec", spec, *BROKEN_TM, "--json")
    assert res.returncode == 0 and last_json(res)["property"] is None
    # the correct TM does not commit before RM 1 prepared: step 3 is no action's
    res = hwcheck("replay", str(f), "--spec", spec, "--param", "rms=2", "--property",
                  "TCConsistent")
    assert res.returncode == 1
    assert "step 3: no action of TwoPhase leads from state 2 to state 3" in res.stdout
    # a claim the last state does not bear out is rejected
    res = hwcheck("replay", str(f), "--spec", spec, *BROKEN_TM, "--property", "TPTypeOK")
    assert res.returncode == 1 and "does not violate TPTypeOK" in res.stdout
    # the wrong number of RMs: the trace's maps do not fit the spec's variables
    res = hwcheck("replay", str(f), "--spec", spec, "--param", "rms=3", "--param",
                  "tm_commits_early=true")
    assert res.returncode == 2 and "rmState lacks key 2" in res.stderr


def test_a_foreign_trace_past_an_action_that_would_overflow_replays(tmp_path):
    """In Overflow (a 0..3, IncA unguarded), from a = 3 IncA leaves the domain but IncB is the
    step the trace takes: the step is IncB's, not an error."""
    m = {"#map": [[0, 0], [1, 0]]}
    states = [dict(a=a, b=b, i=0, slot=m) for a, b in ((0, 0), (1, 0), (2, 0), (3, 0), (3, 1))]
    f = tmp_path / "overflow.itf.json"
    f.write_text(json.dumps(foreign(["a", "b", "i", "slot"], states)))
    res = hwcheck("replay", str(f), "--spec", str(SPECS / "domains_overflow.py"), "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    assert last_json(res)["length"] == 4


# -- broken spec files ---------------------------------------------------------------------------

VALIDATION = ("from hwcheck.spec.lang import Spec\n"
              "def build(n: int = 1):\n"
              "    s = Spec('Bad', {})\n"
              "    x = s.scalar('x', 0, 1)\n"
              "    s.invariant('Bad', x + 1)\n"
              "    return s\n")


@pytest.mark.parametrize("content, message", [
    ("import no_such_dependency_here\n", "cannot import 'no_such_dependency_here'"),
    ("def build(:\n", "syntax error at line 1"),
    ("raise RuntimeError('boom')\n", "importing it raised RuntimeError: boom"),
    (VALIDATION, "invariant Bad: expected a bool expression, got int"),
    ("from hwcheck.spec.lang import Spec\n"
     "def build(n: int = 1):\n"
     "    s = Spec('Bad', {})\n"
     "    x = s.scalar('x', 0, 1)\n"
     "    y = s.scalar('y', 0, 1)\n"
     "    @s.action('Step', modifies=[x])\n"
     "    def step(b):\n"
     "        b.set(y, 1)\n"
     "    return s\n", "Step: writes y, which is not in its modifies list"),
    ("def build(n: int = 1):\n    return 1 / 0\n",
     "building the spec raised ZeroDivisionError: division by zero"),
    ("PROTOCOL = 42\n", "PROTOCOL is neither a Protocol nor a function"),
], ids=["import", "syntax", "raises", "validation", "modifies", "builder-raises", "not-a-protocol"])
def test_a_broken_spec_file_is_one_line_and_exit_2(tmp_path, content, message):
    f = tmp_path / "broken.py"
    f.write_text(content)
    res = hwcheck("check", "--spec", str(f))
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: error: ") and message in lines[0]


@pytest.mark.parametrize("command", [["bmc"], ["prove", "--invariant", "Bad"], ["suite"],
                                     ["params"], ["scenarios"], ["replay", "trace.itf.json"]])
def test_every_command_says_a_broken_spec_in_one_line(tmp_path, command):
    f = tmp_path / "broken.py"
    f.write_text(VALIDATION if command[0] in ("bmc", "prove", "replay") else "def build(:\n")
    (tmp_path / "trace.itf.json").write_text(json.dumps(foreign(["x"], [{"x": 0}])))
    res = hwcheck(*command, "--spec", str(f), cwd=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: error: "), res.stderr
