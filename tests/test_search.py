"""The one search driver (checker/search): the stop rule alone, the driver over a toy level
source, and the state graph as a level source: a check run on the graph reports what the local
engine reports, and recoverability under symmetry counts stuck orbits."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import kafka

from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.graph import recover
from hwcheck.checker.search.driver import (
    Found,
    LevelResult,
    LevelSource,
    Search,
    search,
)
from hwcheck.checker.search.exploration import Exploration, Hit
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.kernel import Kernel

R2 = dict(replicas=2, max_offset=2, max_epoch=3)


# -- the stop rule -------------------------------------------------------------------------------


def test_the_stop_rule_stops_on_violations_never_on_witnesses():
    rule = StopRule()
    assert rule.stops_on("invariant") and rule.stops_on("action") and rule.stops_on("domain")
    assert not rule.stops_on("reachable")
    assert not StopRule(first_hit=False).stops_on("invariant")
    ex = Exploration("t", hits={"W": Hit("W", "reachable", 3, [])})
    assert rule.before_level(ex) == ""
    ex.hits["I"] = Hit("I", "invariant", 4, [])
    assert rule.before_level(ex) == "stopped at the first violation"
    assert StopRule(first_hit=False).before_level(ex) == ""


def test_the_stop_rule_names_the_limit_reached():
    rule = StopRule(max_states=10, max_seconds=2.5)
    assert rule.limit(9, 1.0) == ""
    assert rule.limit(10, 1.0) == "reached --max-states 10"
    assert rule.limit(3, 2.5) == "reached --max-seconds 2.5"
    assert StopRule(max_memory=1).limit(0, 0.0).startswith("reached --max-memory")


def test_a_task_looking_ahead_goes_on_exactly_while_the_driver_would():
    rule = StopRule()
    assert rule.after_level(0, [])  # nothing new: the search is over
    assert rule.after_level(5, ["invariant"])
    assert not rule.after_level(5, ["reachable"])
    assert not StopRule(first_hit=False).after_level(5, ["invariant", "domain"])


# -- the driver over a toy source ----------------------------------------------------------------


class Counter(LevelSource):
    """States 0..n-1, level d holding state d; ``bad`` violates an invariant; expanding level
    ``interrupt_at`` raises Ctrl-C."""

    name = "counter"

    def __init__(self, n: int, bad: int | None = None, interrupt_at: int | None = None):
        self.n, self.bad, self.interrupt_at = n, bad, interrupt_at
        self.finished = False

    def exploration(self) -> Exploration:
        return Exploration(self.name, checked=[("Bad", "invariant")])

    def start(self, ex, progress) -> LevelResult:
        self.cur = 0
        return LevelResult(new=1)

    def frontier(self) -> int:
        return 0 if self.cur is None else 1

    def expand(self, depth, ex, progress, rule) -> LevelResult:
        if depth == self.interrupt_at:
            raise KeyboardInterrupt
        nxt = self.cur + 1
        if nxt >= self.n:
            self.cur = None
            return LevelResult(generated=1)
        self.cur = nxt
        found = [Found("Bad", "invariant", depth + 1, nxt)] if nxt == self.bad else []
        found += [Found("Dom", "domain", depth + 1, nxt), Found("Dom", "domain", depth + 1, -1)]
        return LevelResult(generated=1, new=1, found=found)

    def paths(self, targets):
        return {name: [(0, s) for s in range(1, t + 1)] for name, t in targets.items()}

    def finish(self, ex) -> None:
        self.finished = True
        ex.stats["finished"] = True


def test_the_first_hits_of_a_level_in_parts_are_those_of_the_level_whole():
    """A level checked in parts, each part's first hits (rows from the part's start) joined in
    part order, has the first hits (and their action instances) of the level checked whole."""
    from hwcheck.checker.engines.hits import earliest

    rng = np.random.default_rng(7)
    for _ in range(50):
        hits = rng.random((300, 4)) < 0.01  # hits[row, property]
        inst = rng.integers(0, 9, (300, 4))

        def first(rows, at, inst=inst):
            f = np.array([int(np.flatnonzero(rows[:, j])[0]) if rows[:, j].any() else -1
                          for j in range(4)])
            i = np.array([inst[at + r, j] if r >= 0 else -1 for j, r in enumerate(f)])
            return f, i

        want = first(hits, 0)
        cuts = sorted({0, 300, *rng.integers(0, 300, 3).tolist()})
        got = (np.full(4, -1), np.full(4, -1))
        for a, b in zip(cuts, cuts[1:]):
            rows, insts = first(hits[a:b], a)
            earliest(got[0], rows, a, got[1], insts)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_the_driver_explores_every_level_and_records_first_hits_once():
    src = Counter(6, bad=3)
    ex = search(src, StopRule(first_hit=False))
    assert (ex.complete, ex.distinct, ex.generated, ex.depth) == (True, 6, 6, 5)
    assert ex.hits["Bad"].length == 3 and ex.hits["Bad"].path == [(0, 1), (0, 2), (0, 3)]
    assert ex.hits["Dom"].length == 1 and ex.checked.count(("Dom", "domain")) == 1
    assert src.finished and ex.stats["finished"]


def test_the_driver_stops_at_the_first_violation_and_at_limits():
    ex = search(Counter(6, bad=3), StopRule())
    assert not ex.complete and ex.depth == 1 and ex.stop_reason == "stopped at the first violation"
    ex = search(Counter(10), StopRule(first_hit=False, max_states=4))
    assert (ex.complete, ex.distinct, ex.stop_reason) == (False, 4, "reached --max-states 4")


def test_an_interrupt_keeps_what_was_found_with_its_paths():
    src = Counter(6, bad=2, interrupt_at=4)
    ex = search(src, StopRule(first_hit=False))
    assert not ex.complete and ex.stop_reason == "interrupted" and ex.distinct == 5
    assert ex.hits["Bad"].path == [(0, 1), (0, 2)] and src.finished


def test_a_search_goes_on_from_where_a_first_rule_stopped_it():
    s = Search(Counter(6, bad=2))
    first = s.run(StopRule())
    assert not first.complete and first.depth == 1
    full = s.run(StopRule(first_hit=False))
    assert full.complete and full.distinct == 6
    assert not first.complete and first.depth == 1  # the first report is left as it was
    s.finish()


# -- the state graph as a level source -----------------------------------------------------------


def _same(a: Exploration, b: Exploration) -> None:
    assert (a.distinct, a.generated, a.depth, a.complete, a.stop_reason) == \
        (b.distinct, b.generated, b.depth, b.complete, b.stop_reason)
    assert {n: (h.kind, h.length, h.path) for n, h in a.hits.items()} == \
        {n: (h.kind, h.length, h.path) for n, h in b.hits.items()}


@pytest.mark.parametrize("trunc,exp", [("hw", "hw"), pytest.param("kip-279", "epoch-start",
                                                                   marks=pytest.mark.slow)])
@pytest.mark.parametrize("keep_going", [False, True])
@pytest.mark.parametrize("symmetry", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_check_on_the_graph_reports_what_the_local_engine_reports(trunc, exp, keep_going,
                                                                    symmetry):
    spec = kafka(**R2, truncation=trunc, isr_expansion=exp)
    kernel = Kernel(spec, symmetry=symmetry)
    opts = Options(stop_at_violation=not keep_going, symmetry=symmetry)
    local = LocalEngine(kernel, opts).run()
    on_graph, res, graph, _ = recover.check_on_graph(kernel, Options(
        stop_at_violation=not keep_going, symmetry=symmetry))
    _same(on_graph, local)
    assert graph.complete and res.verdict in ("stuck", "recoverable")


@pytest.mark.slow  # a symmetric state graph of its own
def test_stuck_orbits_are_the_orbits_of_the_stuck_states():
    """Derived again without symmetry: the canonical forms of the stuck states of the full
    graph, counted, are the stuck orbits of the graph explored under symmetry."""
    spec = kafka(**R2, truncation="hw")
    plain = Kernel(spec)
    sym = Kernel(spec, symmetry=True)
    _, full, g, _ = recover.check_on_graph(plain, Options(stop_at_violation=False))
    _, orbits, gs, _ = recover.check_on_graph(sym, Options(stop_at_violation=False))
    assert (full.stuck, full.at_bound) == (953, 4433)
    stuck, _, _ = recover.classify(g)
    bound = g.flag("at_bound")
    rows = _rows(plain, g)
    canon = {sym.state_fingerprint(rows[i]) for i in np.flatnonzero(stuck & ~bound)}
    canon_bound = {sym.state_fingerprint(rows[i]) for i in np.flatnonzero(stuck & bound)}
    assert (orbits.stuck, orbits.at_bound) == (len(canon), len(canon_bound))
    assert gs.n == len({sym.state_fingerprint(r) for r in rows})
    assert orbits.shortest == full.shortest


def _rows(kernel: Kernel, g) -> np.ndarray:
    """Every state of the graph, rebuilt by replaying its first path through the kernel."""
    rows = np.empty((g.n, kernel.stride), kernel.dtype)
    rows[0] = kernel.initial
    for i in range(1, g.n):
        rows[i] = kernel.step(int(g.pact[i]), rows[int(g.parent[i])])
    return rows


@pytest.mark.slow  # a symmetric state graph of its own
def test_check_recoverable_under_symmetry_writes_a_trace_that_replays(tmp_path):
    run = CliRunner().invoke(main, ["check", "-R", "2", "-M", "2", "-E", "3", "--truncation",
                                    "hw", "--recoverable", "--symmetry", "--continue", "--out",
                                    str(tmp_path), "--json"], catch_exceptions=False)
    assert run.exit_code == 12
    obj = json.loads(run.stdout.strip().splitlines()[-1])
    assert obj["distinct"] == 6639 and obj["symmetry"]
    rec = obj["recoverability"]
    assert (rec["verdict"], rec["stuck"], rec["stuck_at_bound"], rec["shortest"],
            rec["states"]) == ("stuck", 781, 2662, 9, 6639)
    replayed = CliRunner().invoke(main, ["replay", rec["trace"]], catch_exceptions=False)
    assert replayed.exit_code == 0 and "a behaviour of KafkaHW in 9 steps" in replayed.output
