"""Runs that stop early keep what they found and never claim `holds`: Ctrl-C and SIGTERM at
every phase, out of memory, --max-seconds and --max-memory, the fingerprint-collision estimate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import kafka, started, tiered

from hwcheck.checker import run as run_mod
from hwcheck.checker.engines.options import Options
from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine
from hwcheck.checker.engines.visited import VisitedTable
from hwcheck.checker.run import check
from hwcheck.checker.search.exploration import collision_probability
from hwcheck.checker.semantics.kernel import Kernel

HW = dict(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
FIXED = dict(truncation="kip-279", isr_expansion="epoch-start")


def hwcheck(*args, **kw):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True, **kw)


def last_json(text: str) -> dict:
    return json.loads(text.strip().splitlines()[-1])


@pytest.mark.slow
def test_sigterm_reports_the_violations_found_so_far(tmp_path):
    """The SIGTERM is the process's own, sent before level 13 (HWCHECK_FAULT), past the first
    violations (depth 10)."""
    cmd = [sys.executable, "-m", "hwcheck.checker", "check", "-R", "3", "-M", "2", "-E", "3",
           "--continue", "--json", "--out", str(tmp_path)]
    with started(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                 env=dict(os.environ, HWCHECK_FAULT="terminate:13")) as proc:
        out, err = proc.communicate()
    obj = last_json(out)
    assert proc.returncode == 12, err
    assert (obj["verdict"], obj["complete"], obj["stop_reason"], obj["depth"]) == (
        "violated", False, "terminated (SIGTERM)", 13)
    assert {v["property"]: v["length"] for v in obj["violations"]} == {
        "CommittedNotLost": 9, "AckedNotLost": 9, "LogsMatchBelowHw": 10}
    for v in obj["violations"]:
        assert hwcheck("replay", v["trace"]).returncode == 0


@pytest.mark.slow  # R3 M3 E4: a kernel of its own
@pytest.mark.parametrize("limit, reason", [(["--max-seconds", "0.3"], "reached --max-seconds"),
                                           (["--max-memory", "200M"], "reached --max-memory")])
def test_limits_give_unknown_with_the_partial_figures(limit, reason, tmp_path):
    res = hwcheck("check", "-R", "3", "-M", "3", "-E", "4", "--truncation", "kip-279",
                  "--isr-expansion", "epoch-start", "--json", "-q", "--out", str(tmp_path), *limit)
    assert res.returncode == 3, res.stderr
    obj = last_json(res.stdout)
    assert obj["verdict"] == "unknown" and obj["complete"] is False
    assert obj["stop_reason"].startswith(reason)
    assert 0 < obj["distinct"] < 12_457_245
    assert "Traceback" not in res.stderr


@pytest.mark.parametrize("workers", [1, 2])
def test_a_time_limit_keeps_back_what_the_level_under_way_will_take_to_end(monkeypatch,
                                                                           workers):
    """With --max-seconds, a level's expansion stops once the time spent and what its end
    will take (the states found in it so far, at what the last level's end cost a state)
    reach the limit: here a level's end is made to cost a state 1,000 s, so a limit of
    10,000 s stops inside the first level that finds more than 10 states, where a run with
    the end's cost at nothing explores the whole space (R2 M2 E3: 10,487 states in a
    fraction of a second; chunks of 64 rows, so that its levels have chunks to stop
    between)."""
    from hwcheck.checker.engines import expand as expand_mod
    from hwcheck.checker.engines import local as local_mod
    from hwcheck.checker.engines.local import LocalEngine

    monkeypatch.setattr(expand_mod, "CHUNK", 64)
    monkeypatch.setattr(local_mod, "CHUNK", 64)
    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
    opts = Options(stop_at_violation=False, max_seconds=10_000.0)
    monkeypatch.setattr(LocalEngine, "_end_per_state", staticmethod(lambda s, n: 0.0))
    assert check(spec, opts, workers=workers).exploration.distinct == 10_487
    monkeypatch.setattr(LocalEngine, "_end_per_state", staticmethod(lambda s, n: 1_000.0))
    ex = check(spec, opts, workers=workers).exploration
    assert (ex.complete, ex.stop_reason) == (False, "reached --max-seconds 10000")
    assert 10 < ex.distinct < 10_487


def test_a_bad_size_is_one_line():
    res = hwcheck("check", "--max-memory", "lots")
    assert res.returncode == 2
    assert res.stderr.strip() == ("hwcheck: error: --max-memory takes a size such as 300M or 2G, "
                                  "got 'lots'")


@pytest.mark.slow
def test_out_of_memory_while_expanding_stops_cleanly(monkeypatch):
    """The visited table cannot grow: the run stops with what it has, verdict unknown."""
    real = VisitedTable.grow
    calls = {"n": 0}

    def failing(self, cap=None):
        calls["n"] += 1
        if calls["n"] > 3:
            raise MemoryError()
        return real(self, cap)

    monkeypatch.setattr(VisitedTable, "grow", failing)
    report = check(kafka(replicas=3, max_offset=2, max_epoch=3, **FIXED),
                   Options(stop_at_violation=False))
    ex = report.exploration
    assert (report.verdict, ex.complete, ex.stop_reason) == ("unknown", False, "out of memory")
    assert ex.distinct > 1


def test_an_interrupt_while_traces_are_built_is_never_holds(monkeypatch):
    real = run_mod.from_path
    calls = {"n": 0}

    def interrupted(*a, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt()
        return real(*a, **kw)

    monkeypatch.setattr(run_mod, "from_path", interrupted)
    report = check(kafka(**HW), Options(stop_at_violation=False))
    ex = report.exploration
    assert not ex.complete and ex.stop_reason == "interrupted while traces were built"
    assert report.verdict == "violated"
    lengths = {o.name: o.length for o in report.violations()}
    assert lengths == {"CommittedNotLost": 8, "AckedNotLost": 8, "LogsMatchBelowHw": 9}
    assert sum(o.trace is None for o in report.violations()) == 2


def test_an_interrupt_before_the_search_starts_is_unknown(monkeypatch):
    def compiling(*a, **kw):
        raise KeyboardInterrupt()

    monkeypatch.setattr(run_mod, "Kernel", compiling)
    report = check(kafka(**HW), Options())
    assert report.verdict == "unknown" and report.exploration.distinct == 0
    assert report.exploration.stop_reason == "interrupted before the exploration started"
    assert {o.status for o in report.outcomes} == {"unknown"}


class _Interrupting(InProcessBackend):
    """Ctrl-C at a chosen phase of the partitioned engine."""

    def __init__(self, at: str, level: int = 0):
        super().__init__(parts=2)
        self.at, self.level, self.steps = at, level, 0

    def step(self, task):
        self.steps += 1
        if self.at == "step" and self.steps == self.level:
            raise KeyboardInterrupt()
        return super().step(task)

    def lookup(self, fps):
        if self.at == "lookup":
            raise KeyboardInterrupt()
        return super().lookup(fps)


@pytest.mark.parametrize("at, level", [("step", 2), ("step", 12), ("step", 30), ("lookup", 0)])
def test_the_partitioned_engine_interrupted_at_any_phase_is_never_holds(at, level):
    """Every phase: early levels, the level of the first violations, the end, and the trace
    lookups after the last level (where a run used to be marked complete too soon). What a
    stop during the levels found keeps its path, the one a whole run gives (rebuilt from the
    levels stored in full); a stop while the paths are looked up leaves them without."""
    spec = kafka(**HW)
    ex = LevelEngine(Kernel(spec), Options(stop_at_violation=False),
                     _Interrupting(at, level)).run()
    assert not ex.complete and ex.stop_reason == "interrupted"
    assert ex.verdict in ("violated", "unknown")
    if at == "lookup":
        assert ex.verdict == "violated"
        assert all(h.path is None for h in ex.hits.values())
    elif level > 10:
        whole = LevelEngine(Kernel(spec), Options(stop_at_violation=False),
                            InProcessBackend(parts=2)).run()
        assert ex.verdict == "violated" and ex.hits
        for name, hit in ex.hits.items():
            assert hit.path is not None and hit.path == whole.hits[name].path


class _Gone(_Interrupting):
    """Ctrl-C during a level, then a backend that no longer answers (gone with the signal)."""

    def lookup(self, fps):
        raise ConnectionError("the cluster went away")


def test_a_backend_gone_after_the_stop_leaves_the_hits_without_paths():
    ex = LevelEngine(Kernel(kafka(**HW)), Options(stop_at_violation=False), _Gone("step", 12)).run()
    assert not ex.complete and ex.verdict == "violated"
    assert ex.stop_reason == ("interrupted; traces not rebuilt: ConnectionError: the cluster "
                              "went away")
    assert ex.hits and all(h.path is None for h in ex.hits.values())


def test_collision_estimate():
    assert collision_probability(1) == 0
    assert collision_probability(10**9) == pytest.approx(0.0271, rel=1e-2)
    report = check(kafka(**HW), Options(stop_at_violation=False))
    assert report.as_json()["collision_probability"] == pytest.approx(10487 * 10486 / 2**65)


@pytest.mark.slow
def test_a_limit_is_unknown_even_with_violations_found(tmp_path):
    """--max-memory on the R3 M3 E3 run: the violations found before the limit are reported
    with their traces, each violated, and the verdict is unknown (exit 3): the run did not do
    what was asked. A run stopped by Ctrl-C or SIGTERM that found violations is violated."""
    res = hwcheck("check", "-R", "3", "-M", "3", "-E", "3", "--continue", "--json", "-q",
                  "--max-memory", "300M", "--out", str(tmp_path))
    assert res.returncode == 3, res.stderr
    obj = last_json(res.stdout)
    assert obj["verdict"] == "unknown" and obj["stop_reason"].startswith("reached --max-memory")
    assert {v["property"]: v["length"] for v in obj["violations"]} == {
        "CommittedNotLost": 9, "AckedNotLost": 9, "LogsMatchBelowHw": 10}
    assert all(v["trace"] for v in obj["violations"])
    assert "Traceback" not in res.stderr


def test_a_signal_during_a_spark_call_cancels_the_job_and_is_raised_after_it():
    """While the driver waits on Spark, SIGTERM only records itself: a watcher cancels the
    jobs at once, and the signal's own handler raises as the call returns, never inside it
    (where it would cut a py4j call in half)."""
    import os
    import threading

    from hwcheck.checker.spark.stops import Stops

    class Stopped(Exception):
        pass

    class FakeContext:
        def __init__(self):
            self.cancelled = threading.Event()

        def cancelAllJobs(self):
            self.cancelled.set()

    def handler(signum, frame):
        raise Stopped(signum)

    prev = signal.signal(signal.SIGTERM, handler)
    sc = FakeContext()
    stops = Stops(sc)
    try:
        reached_end = False
        with pytest.raises(Stopped):
            with stops.held():
                os.kill(os.getpid(), signal.SIGTERM)
                assert sc.cancelled.wait(5)  # the job is cancelled while the call still runs
                reached_end = True
        assert reached_end
        with stops.held():  # the handler is back: nothing pending
            pass
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        stops.close()
        signal.signal(signal.SIGTERM, prev)


# -- a stop after the state graph is explored ----------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the fast tier's configuration with --recoverable (the graph kernel compiled once)
RECOVERABLE = ["check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "kip-279",
               "--isr-expansion", "epoch-start", "--recoverable", "--json", "-q"]
# a protocol with liveness properties, small (24 states): its properties' searches in flight
LIVENESS = ["check", "--spec", os.path.join(ROOT, "tests", "specs", "token_ring.py"), "--param",
            "use=weak", "--json", "-q"]


def faulted(point: str, *args: str) -> subprocess.CompletedProcess:
    return hwcheck(*args, env=dict(os.environ, HWCHECK_FAULT=point))


class WholeRuns(dict):
    """The uninterrupted runs, each made when a test first asks for it (--recoverable compiles
    a kernel of its own, which only the slow tier's tests need): "recoverable", "liveness"."""

    RUNS = {"recoverable": (RECOVERABLE, 0), "liveness": (LIVENESS, 12)}

    def __init__(self, out) -> None:
        super().__init__()
        self.out = out

    def __missing__(self, name: str) -> dict:
        args, code = self.RUNS[name]
        res = hwcheck(*args, "--out", str(self.out))
        assert res.returncode == code, res.stderr
        self[name] = last_json(res.stdout)
        return self[name]


@pytest.fixture(scope="module")
def whole_graphs(tmp_path_factory):
    """The uninterrupted runs: --recoverable, and liveness."""
    return WholeRuns(tmp_path_factory.mktemp("whole"))


def explored(obj: dict) -> tuple:
    return obj["distinct"], obj["generated"], obj["depth"]


@pytest.mark.parametrize("point, phase", tiered([
    ("terminate-graph:0", "before the graph was analysed"),
    ("terminate-reverse:0", "while recoverability was decided")], set(),
    key=lambda v: v[0], unpack=True))
def test_a_sigterm_after_the_graph_is_explored_reports_it_recoverability_unknown(
        point, phase, whole_graphs, tmp_path):
    """The SIGTERM comes once every state is explored: the report has them all, the check's
    own verdict (the invariants were checked on every state), and recoverability unknown with
    the phase it was stopped in: exit 3, the code of unknown."""
    want = whole_graphs["recoverable"]
    res = faulted(point, *RECOVERABLE, "--out", str(tmp_path))
    assert res.returncode == 3, res.stderr
    assert "Traceback" not in res.stderr
    obj = last_json(res.stdout)
    assert explored(obj) == explored(want) and obj["distinct"] > 1000
    assert (obj["verdict"], obj["complete"]) == (want["verdict"], True)
    assert obj["stop_reason"] == f"terminated (SIGTERM) {phase}"
    rec = obj["recoverability"]
    assert rec["verdict"] == "unknown" and want["recoverability"]["verdict"] == "recoverable"
    assert (rec["states"], rec["transitions"]) == (want["recoverability"]["states"],
                                                   want["recoverability"]["transitions"])
    assert rec["stop_reason"] == f"terminated (SIGTERM) {phase}"


@pytest.mark.parametrize("point, phase", tiered([
    ("terminate-graph:0", "before the graph was analysed"),
    ("terminate-liveness:0", "while liveness was decided")], set(),
    key=lambda v: v[0], unpack=True))
def test_a_sigterm_while_liveness_is_decided_reports_the_explored_graph(point, phase,
                                                                        whole_graphs, tmp_path):
    """Every property whose search the SIGTERM stopped is unknown (one decided before it keeps
    its verdict); the explored states are reported; exit 3."""
    want = whole_graphs["liveness"]
    res = faulted(point, *LIVENESS, "--out", str(tmp_path))
    assert res.returncode == 3, res.stderr
    assert "Traceback" not in res.stderr
    obj = last_json(res.stdout)
    assert explored(obj) == explored(want)
    assert obj["liveness"]["graph"]["states"] == want["liveness"]["graph"]["states"]
    assert (obj["verdict"], obj["stop_reason"]) == ("unknown", f"terminated (SIGTERM) {phase}")
    names = [n for n in want["liveness"] if n != "graph"]
    got = {n: obj["liveness"][n]["status"] for n in names}
    assert "unknown" in got.values()
    for n in names:
        assert got[n] in ("unknown", want["liveness"][n]["status"]), n
        if got[n] == "unknown":
            assert obj["liveness"][n]["note"] == f"terminated (SIGTERM) {phase}"
    assert not obj["violations"]  # the liveness violations were not decided


def test_a_limit_sets_the_stop_flag_and_ends_the_block_with_its_reason():
    """The limit is asked by the thread that watches for signals: the work inside polls the
    flag and the block ends with the limit's reason."""
    from hwcheck.checker.search.signals import Stopped, poll, stoppable

    asked = []

    def limit() -> str:
        asked.append(1)
        return "reached --max-seconds 5" if len(asked) > 1 else ""

    with pytest.raises(Stopped, match=r"^reached --max-seconds 5$"):
        with stoppable(limit) as stop:
            while True:
                poll(stop)
                time.sleep(0.01)
    assert len(asked) == 2


def test_the_compiled_searches_return_early_once_the_flag_is_set():
    """Tarjan's search, the judging of its components, the search for a cycle's next
    obligation and the backward search give up at their first look at a set flag."""
    import numpy as np

    from hwcheck.checker.graph import liveness
    from hwcheck.checker.graph.reverse import can_reach_csr
    from hwcheck.checker.search.signals import StopRequested

    n = 1000  # a cycle through every state
    offsets = np.arange(n + 1, dtype=np.int64)
    dst = ((np.arange(n) + 1) % n).astype(np.int32)
    act = np.zeros(n, np.uint8)
    stop = np.ones(1, np.int64)
    comp = np.full(n, -1, np.int32)
    assert liveness._tarjan(offsets, dst, act, np.ones(n, np.bool_), np.ones(1, np.bool_), comp,
                            stop) == -1
    assert liveness._tarjan(offsets, dst, act, np.ones(n, np.bool_), np.ones(1, np.bool_), comp,
                            np.zeros(1, np.int64)) == 1
    comp[:] = 0  # one component: fair (no fairness asked of it), so every state gets id 0
    judged = (np.zeros((n, 1), np.uint64), np.full(1, -1, np.int64), np.zeros(1, np.uint64),
              np.zeros(1, np.uint64), np.ones(n, np.bool_), np.ones(1, np.bool_))
    fcomp, keep = np.full(n, -1, np.int64), np.zeros(n, np.bool_)
    assert liveness._judge(offsets, dst, act, comp, 1, *judged, fcomp, keep, 0, stop) == -1
    assert liveness._judge(offsets, dst, act, comp, 1, *judged, fcomp, keep, 0,
                           np.zeros(1, np.int64)) == 1
    assert (fcomp == 0).all()
    path = np.empty(n + 1, np.int64)
    to_last = (offsets, dst, act, np.ones(n, np.bool_), np.ones(1, np.bool_), 0, 3, n - 1,
               np.full(1, -1, np.int64), np.zeros((n, 1), np.uint64), np.ones(n, np.bool_),
               path)
    assert liveness._bfs_to(*to_last, stop) == -2
    assert liveness._bfs_to(*to_last, np.zeros(1, np.int64)) == n - 1
    assert path[:n - 1].tolist() == list(range(n - 1))
    target = np.zeros(n, np.bool_)
    target[0] = True
    with pytest.raises(StopRequested):
        can_reach_csr(offsets, dst, target, stop=stop)
    assert can_reach_csr(offsets, dst, target).all()


@pytest.mark.parametrize("point", ["terminate-judge:0", "terminate-cycle:0"])
def test_a_sigterm_while_components_are_judged_or_a_cycle_is_built_stops_there(
        point, whole_graphs, tmp_path):
    """The SIGTERM comes as liveness judges the fair components it found, or as it builds a
    lasso's cycle through one: the searches under way stop at their next look at the flag. Each
    property is unknown (saying why) or has its verdict of the whole run, at least one is
    unknown, the verdict is violated exactly when a violation was decided (12), else unknown
    (3), never holds; the text says how many were decided."""
    want = whole_graphs["liveness"]
    res = faulted(point, *LIVENESS, "--out", str(tmp_path))
    assert "Traceback" not in res.stderr
    obj = last_json(res.stdout)
    assert explored(obj) == explored(want)
    assert obj["stop_reason"] == "terminated (SIGTERM) while liveness was decided"
    names = [n for n in want["liveness"] if n != "graph"]
    got = {n: obj["liveness"][n]["status"] for n in names}
    for n in names:
        assert got[n] in ("unknown", want["liveness"][n]["status"]), n
        if got[n] == "unknown":
            assert obj["liveness"][n]["note"] == "terminated (SIGTERM) while liveness was decided"
    unknown = sum(s == "unknown" for s in got.values())
    assert unknown >= 1
    violated = "violated" in got.values()
    assert (res.returncode, obj["verdict"]) == ((12, "violated") if violated else (3, "unknown"))
    assert {v["property"] for v in obj["violations"]} == {n for n in names
                                                          if got[n] == "violated"}
    decided = len(names) - unknown
    g = obj["liveness"]["graph"]
    assert (g["properties"], g["decided"]) == (len(names), decided)
    line = next(x for x in res.stderr.splitlines() if x.startswith("liveness: ")
                and "state graph" in x)
    what = (f"{decided} of {len(names)} decided, the rest unknown," if decided
            else "none decided")
    assert line.startswith(f"liveness: {what} on the whole state graph of {g['states']} states")


def test_the_whole_liveness_run_says_every_property_decided(whole_graphs):
    g = whole_graphs["liveness"]["liveness"]["graph"]
    assert g["decided"] == g["properties"] == len(whole_graphs["liveness"]["liveness"]) - 1


# the fast tier's configuration with a stuck state (its stuck trace built once it is decided)
STUCK = ["check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--recoverable",
         "--continue", "--json", "-q"]


def test_a_sigterm_while_the_stuck_trace_is_built_keeps_the_verdict_without_the_trace(tmp_path):
    """Recoverability is decided (stuck states counted) when the SIGTERM comes: the verdict
    and its figures stay, exit 12; only the trace is missing, and the report says why."""
    whole = hwcheck(*STUCK, "--out", str(tmp_path / "whole"))
    assert whole.returncode == 12, whole.stderr
    want = last_json(whole.stdout)
    res = faulted("terminate-stuck:0", *STUCK, "--out", str(tmp_path / "stopped"))
    assert res.returncode == 12, res.stderr
    assert "Traceback" not in res.stderr
    obj = last_json(res.stdout)
    why = "terminated (SIGTERM) while the stuck trace was built"
    assert obj["stop_reason"] == why and explored(obj) == explored(want)
    rec, full = obj["recoverability"], want["recoverability"]
    assert full["verdict"] == "stuck" and full["trace"]
    for key in ("verdict", "states", "transitions", "healthy", "stuck", "stuck_at_bound",
                "shortest", "shortest_at_bound"):
        assert rec[key] == full[key], key
    assert rec["trace"] is None and rec["stop_reason"] == why
    assert f"note: the stuck trace was not built (the run was {why})" in res.stderr
    assert not list((tmp_path / "stopped").rglob("Recoverable.*"))
