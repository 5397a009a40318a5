"""The explored state graph (every transition, as arrays), recoverability on it, its export with
networkx, the suite report, and the trace pages' timeline and explanations."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import deque
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner
from engine_contract import FAST_ROW, MODEL_TABLE, PROTOCOL_TABLE, protocol_spec
from helpers import kafka, tiered
from hypothesis import given, settings
from hypothesis import strategies as st

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main
from hwcheck.checker.graph import export, recover
from hwcheck.checker.graph.explore import explore
from hwcheck.checker.graph.reverse import can_reach_arrays, can_reach_csr, can_reach_networkx
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.traces import html, itf, report, text
from hwcheck.checker.traces.trace import Trace, from_path
from hwcheck.spec.kafka import views
from hwcheck.spec.lang import Spec, SpecError, prime
from hwcheck.spec.protocol import Checking, Param, Protocol, recovery_of

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "counterexamples"
R2 = dict(replicas=2, max_offset=2, max_epoch=3)

# Recoverability of the base model's R=2 M=2 E=3 configurations (docs/findings.md): per
# truncation and
# ISR expansion, (stuck states, stuck only at the model's bounds, healthy states, steps to the
# nearest stuck state).
RECOVERABILITY = [
    ("hw", "hw", 953, 4433, 374, 9),
    ("leader-epoch", "hw", 184, 2110, 133, 7),
    ("kip-279", "hw", 0, 1870, 133, None),
    ("kip-279", "epoch-start", 0, 1870, 133, None),
]


def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _graph(spec, **kw):
    rec = recovery_of(spec)
    preds = [] if rec is None else recover.predicates(rec)
    return explore(Kernel(spec), preds, **kw)


# -- the graph -----------------------------------------------------------------------------------


@pytest.mark.parametrize("row", tiered([r for r in MODEL_TABLE if r[0] == 2], FAST_ROW,
                                       key=lambda r: r[:5]),
                         ids=lambda r: f"R{r[0]}M{r[1]}E{r[2]}-{r[3]}-{r[4]}")
def test_the_graph_has_model_md_counts(row):
    """Every reachable state once, every transition (the base model's 'generated'), the depth."""
    R, M, E, trunc, exp, distinct, generated, depth, _ = row
    g = _graph(kafka(replicas=R, max_offset=M, max_epoch=E, truncation=trunc, isr_expansion=exp))
    assert (g.n, g.nedges, g.depth, g.complete) == (distinct, generated, depth, True)
    assert len(np.unique(g.fps)) == g.n
    assert g.offsets[0] == 0 and g.offsets[-1] == g.nedges and np.all(np.diff(g.offsets) >= 0)
    assert np.all(g.depths()[g.dst] <= g.depths()[g.src()] + 1)  # breadth-first ids


@pytest.mark.parametrize("row", tiered(PROTOCOL_TABLE, {("die_hard.py", "{}")},
                                       key=lambda r: (r[0], str(r[1]))),
                         ids=lambda r: f"{r[0]}-{r[1]}")
def test_the_graph_of_other_protocols(row):
    file, params, distinct, generated, depth, _ = row
    g = _graph(protocol_spec(file, params))
    assert (g.n, g.nedges, g.depth) == (distinct, generated, depth)


# no copy: the spec's own invariants, one byte (the graph kernel other tests compile); 9
# copies: two bytes (a graph module of its own: the slow tier)
@pytest.mark.parametrize("copies", [0, pytest.param(9, marks=pytest.mark.slow)])
def test_state_flags_take_the_narrowest_width_that_holds_them(copies):
    """A state's flags are one byte for up to 8 predicates and two for 9 to 16, and a flag
    reads the same at every bit: each copy of an invariant is flagged where it holds."""
    spec = protocol_spec("die_hard.py", {})
    inv = spec.invariant_named("NotSolved")  # false in some states
    preds = [(f"copy{j}", inv.expr) for j in range(copies)]
    g = explore(Kernel(spec), preds)
    want = np.uint8 if len(g.gk.flag_names) <= 8 else np.uint16
    assert g.flags.dtype == want and len(g.gk.flag_names) == copies + len(spec.invariants)
    interp = Interpreter(spec)
    g_rows = explore(Kernel(spec), preds, keep_rows=True).rows
    holds = np.array([interp.holds(inv.expr, row) for row in g_rows])
    assert 0 < holds.sum() < g.n
    for name in [f"copy{j}" for j in range(copies)] + [inv.name]:
        assert np.array_equal(g.flag(name), holds)


@pytest.mark.parametrize("spec", [
    lambda: protocol_spec("die_hard.py", {}),
    lambda: protocol_spec("two_phase.py", {"rms": 2, "tm_commits_early": True}),
    lambda: kafka(replicas=2, max_offset=1, max_epoch=2, truncation="leader-epoch"),
], ids=["die_hard", "two_phase", "kafka-R2M1E2"])
@pytest.mark.slow
def test_every_transition_is_a_step_of_the_interpreter(spec):
    """The graph kernel's transitions of each state are exactly the interpreter's successors."""
    spec = spec()
    g = _graph(spec, keep_rows=True)
    interp = Interpreter(spec)
    index = {int(fp): i for i, fp in enumerate(g.fps)}
    for i in range(g.n):
        want = sorted((inst.index, index[_fp(nxt)]) for inst, nxt in interp.successors(g.rows[i]))
        lo, hi = g.offsets[i], g.offsets[i + 1]
        assert sorted(zip(g.act[lo:hi].tolist(), g.dst[lo:hi].tolist())) == want
        for name in g.gk.flag_names:  # invariants flagged as the interpreter evaluates them
            if name in {p.name for p in spec.invariants}:
                holds = interp.holds(spec.invariant_named(name).expr, g.rows[i])
                assert bool(g.flag(name)[i]) == holds


def _fp(row) -> int:
    from hwcheck.checker.semantics.fingerprint import fingerprint

    return int(fingerprint(np.ascontiguousarray(row)))


def test_a_path_of_the_graph_replays_through_the_interpreter():
    spec = kafka(**R2, truncation="hw")
    g = _graph(spec)
    last = g.n - 1  # a deepest state
    trace = from_path(spec, Interpreter(spec), None, "invariant", "graph", g.path_to(last))
    assert len(trace.actions) == g.depth == g.depth_of(last)


def test_a_state_cap_leaves_the_graph_incomplete_and_recoverability_unknown():
    spec = kafka(**R2, truncation="hw")
    res, g = recover.check(spec, max_states=500)
    assert not g.complete and g.n > 500 and "more than 500 states" in g.stop_reason
    assert g.offsets[-1] == g.nedges and g.offsets.size == g.n + 1
    assert res.verdict == "unknown" and res.line().startswith("recoverable: unknown (the graph")


# -- recoverability ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["networkx", "arrays"])
@pytest.mark.parametrize("row", tiered(RECOVERABILITY, {("hw", "hw")}, key=lambda r: r[:2]),
                         ids=lambda r: f"{r[0]}-{r[1]}")
def test_recoverability_of_model_md_configurations(row, method):
    trunc, exp, stuck, bound, healthy, nearest = row
    res, g = recover.check(kafka(**R2, truncation=trunc, isr_expansion=exp), method=method)
    assert (res.stuck, res.at_bound, res.healthy, res.shortest) == (stuck, bound, healthy, nearest)
    assert res.verdict == ("stuck" if stuck else "recoverable")
    assert res.method == method
    if stuck:
        assert res.trace is not None and res.trace.length == nearest
    else:
        assert res.trace is None


def test_the_nearest_stuck_state_is_stuck_by_the_interpreter_alone():
    """From the last state of the stuck trace, the interpreter's own search reaches no healthy
    state (and as many states as the graph says)."""
    spec = kafka(**R2, truncation="hw")
    res, _ = recover.check(spec)
    interp = Interpreter(spec)
    healthy = recovery_of(spec).healthy
    start = interp.layout.from_dict(res.trace.states[-1])
    seen, queue = {start.tobytes()}, deque([start])
    while queue:
        row = queue.popleft()
        assert not interp.holds(healthy, row)
        for _, nxt in interp.successors(row):
            if nxt.tobytes() not in seen:
                seen.add(nxt.tobytes())
                queue.append(nxt)
    assert len(seen) == res.witness_reach


def _healthy_by_hand(st: dict) -> bool:
    """The healthy predicate's definition, on the readable state: a leader; every replica
    alive, in the ISR, with exactly the leader's log; HW = LEO on every replica."""
    L, R = st["leader"], len(st["hw"])
    return L >= 0 and all(
        r in st["alive"] and r in st["isr"] and st["log"][r] == st["log"][L]
        and st["hw"][r] == sum(1 for e in st["log"][r] if e) for r in range(R))


def test_the_healthy_predicate_is_its_definition_in_kernel_and_interpreter():
    spec = kafka(**R2, truncation="hw")
    g = _graph(spec, keep_rows=True)
    interp = Interpreter(spec)
    rec = recovery_of(spec)
    flags, bound = g.flag("healthy"), g.flag("at_bound")
    for i in range(g.n):
        st = interp.layout.to_dict(g.rows[i])
        assert bool(flags[i]) == interp.holds(rec.healthy, g.rows[i]) == _healthy_by_hand(st)
        assert bool(bound[i]) == (st["leader"] < 0 and st["epoch"] == 3)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3)), max_size=80), st.integers(0, 2))
def test_stuck_states_are_counted_apart_from_those_at_the_bounds(cells, bit):
    """The stuck counts and the least stuck states, with and without the at-bound flag, equal
    a plain count (bit 2: a flag no state has)."""
    stuck = np.array([s for s, _ in cells], np.bool_)
    flags = np.array([f for _, f in cells], np.uint8)
    bound = np.uint8(1 << bit)
    at = [bool(f & bound) for f in flags]
    mine = [i for i, s in enumerate(stuck) if s and not at[i]]
    theirs = [i for i, s in enumerate(stuck) if s and at[i]]
    assert recover._stuck_counts(stuck, flags, bound) == (
        len(mine), mine[0] if mine else -1, len(theirs), theirs[0] if theirs else -1)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(1, 25).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60),
    st.lists(st.booleans(), min_size=n, max_size=n))))
def test_networkx_and_arrays_agree_with_a_plain_search(case):
    n, edges, target = case
    src = np.array([a for a, _ in edges], np.int32)
    dst = np.array([b for _, b in edges], np.int32)
    tgt = np.array(target, np.bool_)
    want = np.zeros(n, np.bool_)
    for i in range(n):  # forward search from each state: does it reach a target?
        seen, todo = {i}, [i]
        while todo:
            j = todo.pop()
            if tgt[j]:
                want[i] = True
                break
            for a, b in edges:
                if a == j and b not in seen:
                    seen.add(b)
                    todo.append(b)
    assert np.array_equal(can_reach_networkx(n, src, dst, tgt), want)
    assert np.array_equal(can_reach_arrays(n, src, dst, tgt), want)
    by_src = np.argsort(src, kind="stable")  # the same graph in compressed sparse row form
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    for sweeps in (0, 1, 16):  # the backward search alone, after one sweep, sweeps alone
        for workers in (1, 2, 3):  # sweeps shared by threads (from 8 states on)
            assert np.array_equal(
                can_reach_csr(offsets, dst[by_src], tgt, sweeps, workers=workers), want)


def test_reachability_against_the_ids_takes_the_backward_search():
    """A chain whose target is its first state: each sweep (descending ids) carries the
    answer one state further, so sweeps alone would take as many as the chain is long; past
    ``max_sweeps`` the backward search finishes it."""
    n = 1000
    offsets = np.concatenate([[0], np.arange(n, dtype=np.int64)])  # one transition a state
    dst = np.arange(n - 1, dtype=np.int32)  # but the first: state i + 1 -> state i
    target = np.zeros(n, np.bool_)
    target[0] = True
    for workers in (1, 2):
        assert can_reach_csr(offsets, dst, target, max_sweeps=3, workers=workers).all()
        assert can_reach_csr(offsets, dst, target, max_sweeps=n, workers=workers).all()


@pytest.mark.parametrize("workers", [2, 3, 8])
def test_shared_sweeps_give_the_answer_of_one_thread_on_a_large_random_graph(workers):
    """Sweeps shared by threads, on a graph large enough that the threads run at the same
    time (200,000 states, transitions forwards and backwards): the same states as one thread,
    and as the backward search alone."""
    rng = np.random.default_rng(7)
    n = 200_000
    deg = rng.integers(0, 4, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(deg, out=offsets[1:])
    dst = rng.integers(0, n, int(offsets[-1])).astype(np.int32)
    target = rng.random(n) < 0.0005
    alone = can_reach_csr(offsets, dst, target, max_sweeps=0)
    assert 0 < alone.sum() < n
    assert np.array_equal(can_reach_csr(offsets, dst, target), alone)
    assert np.array_equal(can_reach_csr(offsets, dst, target, max_sweeps=10**6,
                                        workers=workers), alone)


def _trap_protocol() -> Protocol:
    """A counter 0..3 that can go up, reset to 0 from 1 or 2, and fall into a trap from 2 (the
    trap leads only to itself): healthy = 0. Stuck: the trap; 3 is stuck only at the bound."""
    def build(**_):
        s = Spec("Trap", {})
        c = s.scalar("c", 0, 3)
        trap = s.scalar("trap", 0, 1)

        @s.action("Up", modifies=[c])
        def up(b):
            b.require(trap == 0, c < 3)
            b.set(c, c + 1)

        @s.action("Reset", modifies=[c])
        def reset(b):
            b.require(trap == 0, (c == 1) | (c == 2))
            b.set(c, 0)

        @s.action("Fall", modifies=[trap])
        def fall(b):
            b.require(trap == 0, c == 2)
            b.set(trap, 1)

        s.invariant("Small", c <= 3)
        return s.validate()

    return Protocol("trap", (Param("unused", 0, int),), build, checking=Checking(
        healthy=lambda s: (s.var("c")[()] == 0) & (s.var("trap")[()] == 0),
        at_bound=lambda s: s.var("c")[()] == 3))


@pytest.mark.slow  # a kernel and a graph module no other fast test compiles
def test_a_protocol_states_its_own_healthy_predicate():
    spec = _trap_protocol().build()
    for method in ("networkx", "arrays"):
        res, g = recover.check(spec, method=method)
        assert (g.n, res.healthy, res.stuck, res.at_bound, res.shortest) == (5, 1, 1, 1, 3)
        assert res.trace.actions == ["Up", "Up", "Fall"]


def test_a_protocol_without_a_healthy_predicate_is_a_one_line_error():
    res = subprocess.run([sys.executable, "-m", "hwcheck.checker", "check", "--spec",
                          str(ROOT / "tests" / "specs" / "die_hard.py"), "--recoverable"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2
    assert res.stderr.strip() == ("hwcheck: error: --recoverable: die_hard states no healthy "
                                  "predicate (Checking.healthy); recoverability needs one")


def test_a_malformed_healthy_predicate_is_named():
    proto = _trap_protocol()
    import dataclasses

    bad = dataclasses.replace(proto, checking=dataclasses.replace(
        proto.checking, healthy=lambda s: prime(s.var("c")[()]) == 0))
    with pytest.raises(SpecError, match="trap healthy predicate: reads the next state of c"):
        recovery_of(bad.build())


@pytest.mark.slow
def test_check_recoverable_on_the_command_line_when_it_holds(tmp_path):
    res = cli("check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "kip-279",
              "--isr-expansion", "epoch-start", "--recoverable", "--out", str(tmp_path), "-q")
    assert res.exit_code == 0, res.output
    line = res.output.rstrip().splitlines()[-1]
    assert line.startswith("recoverable: recoverable; 0 stuck states (and 1,870 stuck only at "
                           "the model's bounds); 133 healthy; 4,978 states, 14,722 transitions, "
                           "networkx")


@pytest.mark.slow  # the fast tier's recoverable run on the command line: test_graph_checkpoint.py
def test_check_recoverable_on_the_command_line(tmp_path):
    res = cli("check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--recoverable",
              "--out", str(tmp_path), "-q", "--json")
    assert res.exit_code == 12
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    rec = obj["recoverability"]
    assert (rec["verdict"], rec["stuck"], rec["stuck_at_bound"], rec["shortest"]) == \
        ("stuck", 953, 4433, 9)
    folder = Path(rec["trace"]).parent
    assert sorted(p.name for p in folder.glob("Recoverable.*")) == [
        "Recoverable.html", "Recoverable.itf.json", "Recoverable.txt"]
    txt = (folder / "Recoverable.txt").read_text()
    assert txt.startswith("Recoverable violated in 9 steps (graph engine)\n")
    assert "The last state violates Recoverable.\nHere no healthy state is reachable: from the " \
           "last state 805 states are reachable, none of them healthy.\n" in txt
    assert "violates <b>Recoverable</b>: a healthy state stays reachable" in \
        (folder / "Recoverable.html").read_text()
    replayed = cli("replay", str(folder / "Recoverable.itf.json"))
    assert replayed.exit_code == 0 and "a behaviour of KafkaHW in 9 steps" in replayed.output
    meta = itf.read(folder / "Recoverable.itf.json")["#meta"]
    assert meta["recoverability"]["claim"] == "no healthy state is reachable from the last state"


# -- export --------------------------------------------------------------------------------------


# The fast tier's configuration (its kernels are compiled once for every test): 10,487 states,
# past the default cap of an export
SMALL = ["-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--max-states", "20000"]


@pytest.fixture(scope="module")
def small_graph():
    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
    marked = export.explore_marked(spec, max_states=20_000)
    return spec, marked, export.to_networkx(spec, marked)


def test_export_marks_violations_stuck_states_and_the_shortest_counterexample(small_graph):
    spec, m, G = small_graph
    assert (G.number_of_nodes(), G.number_of_edges()) == (m.graph.n, m.graph.nedges)
    kinds = {a["kind"] for _, a in G.nodes(data=True)}
    assert {"violates", "healthy", "at_bound", "plain"} <= kinds  # a violation shows first
    res, _ = recover.check(spec)
    stuck = [n for n, a in G.nodes(data=True) if a["stuck"] and not a["at_bound"]]
    assert len(stuck) == res.stuck > 0
    assert sum(1 for _, a in G.nodes(data=True) if a["at_bound"]) == res.at_bound
    path = [n for n, a in G.nodes(data=True) if a["on_path"]]
    on = [(u, v) for u, v, a in G.edges(data=True) if a["on_path"]]
    assert len(on) == len(path) - 1 == m.graph.depth_of(m.target)
    assert G.nodes[m.target]["violates"] == "CommittedNotLost,AckedNotLost"
    assert {a["action"] for _, _, a in G.edges(data=True)} >= {"Produce", "Elect(1)", "Crash(0)"}
    # the shortest counterexample is as short as the check's
    from hwcheck.checker.engines.options import Options
    from hwcheck.checker.run import check

    found = check(spec, Options(stop_at_violation=False)).violations()
    assert m.graph.depth_of(m.target) == min(v.length for v in found)


@pytest.mark.parametrize("fmt", tiered(list(export.FORMATS), {"dot", "json"}))  # graphml: slow
def test_graph_command_writes_each_format(fmt, tmp_path, small_graph):
    _, m, _ = small_graph
    out = tmp_path / f"g.{fmt}"
    res = cli("graph", *SMALL, "--format", fmt, "--out", str(out))
    assert res.exit_code == 0, res.output
    assert f"{m.graph.n:,} states, {m.graph.nedges:,} transitions" in res.output
    if fmt == "graphml":
        G = nx.read_graphml(out)
        assert (G.number_of_nodes(), G.number_of_edges()) == (m.graph.n, m.graph.nedges)
    elif fmt == "json":
        G = nx.node_link_graph(json.loads(out.read_text()), edges="edges")
        assert (G.number_of_nodes(), G.number_of_edges()) == (m.graph.n, m.graph.nedges)
    else:
        assert out.read_text().startswith("digraph {")


NEEDS_DOT = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed (apt-get install graphviz)")


def _render(tmp_path, args) -> str:
    out = tmp_path / "g.dot"
    assert cli("graph", *args, "--out", str(out), "-q").exit_code == 0
    res = subprocess.run(["dot", "-Tsvg", str(out), "-o", str(tmp_path / "g.svg")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return (tmp_path / "g.svg").read_text()


@NEEDS_DOT
@pytest.mark.slow
def test_the_dot_file_renders_with_graphviz(tmp_path):
    """126 states: Graphviz lays them out in a fraction of a second."""
    svg = _render(tmp_path, ["-R", "2", "-M", "1", "-E", "1"])
    assert svg.count('class="node"') == 126 and "FetchRequest(1)" in svg


@pytest.mark.slow
def test_the_dot_file_of_r2_m1_e2_draws_the_counterexample(tmp_path):
    """738 states and 2,092 transitions, the counterexample's path in red (what Graphviz draws
    of it is checked on a smaller graph above: this one takes it a minute)."""
    out = tmp_path / "g.dot"
    assert cli("graph", "-R", "2", "-M", "1", "-E", "2", "--out", str(out), "-q").exit_code == 0
    G = nx.nx_pydot.read_dot(str(out))
    assert (G.number_of_nodes(), G.number_of_edges()) == (738, 2092)
    red = [(u, v) for u, v, a in G.edges(data=True) if "#d00000" in str(a.get("color", ""))]
    assert red, "the shortest counterexample's path is drawn"


def test_a_graph_past_the_cap_is_a_clear_error():
    res = subprocess.run([sys.executable, "-m", "hwcheck.checker", "graph", *SMALL[:-2],
                          "--max-states", "100"], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith("hwcheck: error: the state graph has more than 100 states")
    assert len(res.stderr.strip().splitlines()) == 1


# -- trace pages ---------------------------------------------------------------------------------


def _committed(scenario: str, prop: str):
    data = itf.read(COMMITTED / scenario / f"{prop}.itf.json")
    spec = kafka(data["#meta"]["params"])
    trace = itf.from_itf(spec, data)
    trace.views = spec.protocol.views
    return spec, trace


def test_the_page_has_a_timeline_and_marks_fields_not_cells():
    spec, trace = _committed("hw-truncation", "CommittedNotLost")
    page = html.page(trace, html.describe(spec, "CommittedNotLost"))
    assert page.count('<g class="step"') == len(trace.actions)
    for name in ("Produce", "FetchRequest", "FetchResponse", "Crash", "Restart", "Elect"):
        assert f'data-action="{name}"' in page
    assert page.count('<td class="step">') == len(trace.states)
    assert 'class="changed"' not in page and "chg" in page  # fields, not whole cells
    for external in ("http://", "https://", "<script", "<link", "src=", "url("):
        assert external not in page


def test_the_text_has_the_pages_explanation():
    spec, trace = _committed("kip-101", "LogsMatchBelowHw")
    why, _ = views.explain(trace)
    assert text.text(trace).endswith(f"The last state violates LogsMatchBelowHw.\nHere {why}.\n")
    assert f"Here {why}" in html.page(trace)


def test_a_cti_page_says_it_is_a_counterexample_to_induction():
    spec, trace = _committed("hw-truncation", "CommittedNotLost")
    cti = Trace(trace.spec, trace.params, "z3-induction", "CommittedNotLost", "invariant",
                trace.actions[-1:], trace.states[-2:], {"cti": True}, views=trace.views)
    page = html.page(cti)
    assert "counterexample to induction" in page and "pre-state" in page
    assert "counterexample to induction" not in html.page(trace)
    generic = html.generic_page(cti)  # a protocol without views says it too
    assert "counterexample to induction" in generic


# -- the suite report ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_suite_writes_a_self_contained_report_and_merges_runs(tmp_path):
    assert cli("suite", "--scenario", "acks-1", "--out", str(tmp_path), "-q").exit_code == 0
    res = cli("suite", "--scenario", "unclean-election", "--out", str(tmp_path), "-q")
    assert res.exit_code == 0 and f"report {tmp_path / 'index.html'}" in res.output
    page = (tmp_path / report.INDEX).read_text()
    for external in ("http://", "https://", "<script", "<link", "src="):
        assert external not in page
    proto = protocols.load("kafka")
    assert page.count('<section class="scenario') == len(proto.scenarios)
    for name in ("acks-1", "unclean-election"):  # both runs, merged
        assert f'data-scenario="{name}" data-ok="true"' in page
    assert 'notrun" id="sc-hw-truncation"' in page
    links = [line.split('href="')[1].split('"')[0] for line in page.split("<a ")[1:]
             if 'class="trace"' in line]
    assert "acks-1/AckedNotLost.html" in links and "unclean-election/CommittedNotLost.txt" in links
    assert all((tmp_path / link).is_file() for link in links)
    assert "R=2 M=2 E=3 truncation=kip-279 isr-expansion=epoch-start acks=1" in page
    assert "12,294 states (as pinned)" in page


def test_graph_of_a_protocol_without_a_healthy_predicate(tmp_path):
    out = tmp_path / "g.json"
    res = cli("graph", "--spec", str(ROOT / "tests" / "specs" / "die_hard.py"), "--format", "json",
              "--out", str(out))
    assert res.exit_code == 0, res.output
    assert "16 states, 96 transitions" in res.output
    assert "shortest counterexample: violates NotSolved in 6 steps" in res.output
    G = nx.node_link_graph(json.loads(out.read_text()), edges="edges")
    assert not any(a["stuck"] for _, a in G.nodes(data=True))


def test_base_pages_is_scoped():
    """The graph search asks for 4 KiB pages while it runs and gives numpy its setting back,
    also when the search fails."""
    from hwcheck.checker.graph.explore import base_pages

    multiarray = np._core.multiarray
    before = multiarray._get_madvise_hugepage()
    with base_pages():
        assert multiarray._get_madvise_hugepage() is False
    assert multiarray._get_madvise_hugepage() == before
    with pytest.raises(RuntimeError), base_pages():
        raise RuntimeError("a failed search")
    assert multiarray._get_madvise_hugepage() == before


# -- several workers, and a search that a limit stopped inside a level ----------------------------

GRAPH_ARRAYS = ("fps", "parent", "pact", "flags", "offsets", "dst", "act", "eflags")


def _same_graph(a, b):
    for name in GRAPH_ARRAYS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.levels == b.levels and (a.refused, a.flag_errors) == (b.refused, b.flag_errors)


def _source(kernel, spec, **kw):
    from hwcheck.checker.graph.explore import GraphSource

    return GraphSource(kernel, recover.predicates(recovery_of(spec)), edge_properties=True, **kw)


@pytest.mark.parametrize("symmetry", tiered([False, True], {False}))  # symmetric: slow tier
def test_workers_build_the_graph_one_worker_builds(symmetry):
    """Ids, first parents, transitions, flags and first hits do not depend on the workers
    nor on how many rows each expands at a time (a run that does not fit its buffers goes on
    in the next)."""
    from hwcheck.checker.engines.options import Options, PropertySet
    from hwcheck.checker.search.driver import search
    from hwcheck.checker.search.stop import StopRule

    spec = kafka(**R2, truncation="hw")
    k = Kernel(spec, symmetry=symmetry)
    graphs, reports = [], []
    for workers, rows in ((1, 1), (2, 1), (2, 7), (3, 50)):
        source = _source(k, spec, workers=workers, worker_rows=rows, chunk=9,
                         props=PropertySet(k, Options(stop_at_violation=False)))
        ex = search(source, StopRule(first_hit=False))
        graphs.append(source.graph(ex))
        reports.append((ex.distinct, ex.generated, ex.depth,
                        sorted((n, h.length, tuple(h.path)) for n, h in ex.hits.items())))
    for g in graphs[1:]:
        _same_graph(graphs[0], g)
    assert reports[0][3] and all(r == reports[0] for r in reports)


def test_workers_grow_the_id_table_in_place_together(monkeypatch):
    """An id table grown in place inside a level (its address range reserved from the first
    growth here) is grown while the workers wait for ids: they back its fresh half with the
    thread that grows it. The graph is the one a single worker builds."""
    from hwcheck.checker.engines import visited
    from hwcheck.checker.graph import buffers
    from hwcheck.checker.graph import explore as ex_mod
    from hwcheck.checker.search.driver import search
    from hwcheck.checker.search.stop import StopRule

    spec = kafka(**R2, truncation="hw")
    k = Kernel(spec)
    one = _source(k, spec)
    whole = one.graph(search(one, StopRule(first_hit=False)))
    monkeypatch.setattr(visited, "RESERVE_FROM", 1 << 4)
    monkeypatch.setattr(ex_mod, "TOUCH", 1 << 6)
    shared = []
    share = buffers.SharedRuns.share
    monkeypatch.setattr(buffers.SharedRuns, "share",
                        lambda self, chore: (shared.append(len(chore.cuts) - 1),
                                             share(self, chore))[1])
    for workers in (2, 3):
        source = _source(k, spec, workers=workers, worker_rows=2)
        _same_graph(whole, source.graph(search(source, StopRule(first_hit=False))))
        assert source.ids.mem is not None and source.ids.slots >= 2 * whole.n
    assert shared and max(shared) > 1  # in pieces, with the workers


def test_a_chore_is_done_whole_by_the_threads_that_share_it():
    """Every piece of a chore is done once, by the thread that shares it or by one that would
    wait for a buffer; what a piece raises is raised by the one that shares it."""
    import threading

    from hwcheck.checker.graph.buffers import Chore, SharedRuns

    done = np.zeros(1000, np.int64)
    helpers: set[str] = set()

    def piece(a, b):
        helpers.add(threading.current_thread().name)
        done[a:b] += 1

    runs = SharedRuns([(0, 1), (1, 2)], [])  # no free buffer: a thread that claims waits
    waiting = threading.Thread(target=runs.claim, args=(True,), name="waiter")
    waiting.start()
    try:
        runs.share(Chore(piece, done.size, 7))
        assert (done == 1).all()

        def bad(a, b):
            if a >= 500:
                raise MemoryError("piece")
            piece(a, b)

        with pytest.raises(MemoryError):
            runs.share(Chore(bad, done.size, 7))
    finally:
        runs.halt()
        waiting.join()
    assert runs.chore is None and helpers <= {"waiter", threading.current_thread().name}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3000), st.sampled_from(["uniform", "equal", "low", "crowded"]),
       st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_a_level_is_ordered_by_the_workers_as_numpy_orders_it(n, kind, workers, seed):
    """The level's order shared by the workers (fingerprints dealt into buckets by their top
    bits, each bucket sorted) is numpy's stable argsort and its inverse: for uniform keys,
    repeated keys, keys that all fall in one bucket and keys crowded into a few (large
    buckets are merge sorted)."""
    rng = np.random.default_rng(seed)
    keys = {"uniform": lambda: rng.integers(0, 2**64, n, dtype=np.uint64),
            "equal": lambda: rng.integers(0, 3, n, dtype=np.uint64) << np.uint64(62),
            "low": lambda: rng.integers(0, 2**20, n, dtype=np.uint64),
            "crowded": lambda: rng.integers(0, 2**58, n, dtype=np.uint64)
            | (rng.integers(0, 4, n, dtype=np.uint64) << np.uint64(62))}[kind]()
    spec = kafka(**R2, truncation="hw")
    source = _source(Kernel(spec), spec, workers=workers, worker_rows=8)
    source.prepare()
    try:
        order, rank = source._order(keys)
        want = np.argsort(keys, kind="stable")
        assert np.array_equal(order, want)
        assert np.array_equal(rank[want], np.arange(n))
    finally:
        if source.pool is not None:
            source.pool.close()


def test_a_graph_for_recoverability_alone_keeps_no_actions():
    """Without the transitions' actions (what recoverability reads does without them) the
    graph is the same in every other array, with the same coverage, with one worker or
    several; asking for the actions says why there are none."""
    from hwcheck.checker.search.driver import search
    from hwcheck.checker.search.stop import StopRule

    spec = kafka(**R2, truncation="hw")
    k = Kernel(spec)
    for workers in (1, 2):
        graphs, coverage = [], []
        for actions in (True, False):
            source = _source(k, spec, workers=workers, worker_rows=4, edge_actions=actions)
            ex = search(source, StopRule(first_hit=False))
            graphs.append(source.graph(ex))
            coverage.append(ex.stats["coverage"])
        kept, bare = graphs
        assert bare.act is None and kept.act is not None
        for name in GRAPH_ARRAYS:
            if name != "act":
                assert np.array_equal(getattr(kept, name), getattr(bare, name)), name
        assert coverage[0] == coverage[1]
        assert coverage[0]["enabled"] == np.bincount(kept.act, minlength=k.ninst).tolist()
        with pytest.raises(ValueError, match="without its transitions' actions"):
            bare.actions()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_search_stopped_inside_a_level_goes_on_where_it_stopped(workers):
    """A limit stops the search inside a level; a later run expands the rest of that level
    first: the graph is the whole one, the counts and depth those of one run, and every hit's
    path (made in the run that found it, before its level was numbered again) replays through
    the interpreter to a state that violates the property."""
    from hwcheck.checker.engines.options import Options, PropertySet
    from hwcheck.checker.search.driver import Search, search
    from hwcheck.checker.search.stop import StopRule

    spec = kafka(**R2, truncation="hw")
    k = Kernel(spec)
    interp = Interpreter(spec)
    whole_source = _source(k, spec)
    whole = whole_source.graph(search(whole_source, StopRule(first_hit=False)))
    for limits in ([40], [300, 301, 2000], [620, 700], [whole.n - 3]):
        source = _source(k, spec, workers=workers, worker_rows=3, chunk=5,
                         props=PropertySet(k, Options(stop_at_violation=False)))
        s = Search(source)
        try:
            stops = [s.run(StopRule(first_hit=False, max_states=n)) for n in limits]
            ex = s.run(StopRule(first_hit=False))
        finally:
            s.finish()
        assert all(not e.complete and e.distinct >= n for e, n in zip(stops, limits))
        assert ex.complete and (ex.distinct, ex.generated, ex.depth) == \
            (whole.n, whole.nedges, whole.depth)
        _same_graph(whole, source.graph(ex))
        violated = {n: h for n, h in ex.hits.items() if h.kind == "invariant"}
        assert set(violated) == {"CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw"}
        for name, hit in violated.items():
            trace = from_path(spec, interp, name, "invariant", "graph", hit.path)
            last = interp.layout.from_dict(trace.states[-1])
            expr = next(i.expr for i in spec.invariants if i.name == name)
            assert not interp.holds(expr, last), name


def test_a_graph_past_the_memory_budget_keeps_its_levels_in_the_work_folder(monkeypatch,
                                                                           tmp_path):
    """With the local engine's memory budget for a level (``spill.SPILL_BYTES``) at nothing,
    every level's rows (the frontier, the next level, the new states as found) are in files
    of the work folder (``--workdir``) while the search runs, on one worker and two, through
    stops inside a level: the graph, counts and hits (paths included) are those of a search
    in memory, and the folder is gone at the end."""
    from hwcheck.checker.engines import spill
    from hwcheck.checker.engines.options import Options, PropertySet
    from hwcheck.checker.graph import explore as ex_mod
    from hwcheck.checker.search.driver import Search
    from hwcheck.checker.search.stop import StopRule

    spec = kafka(**R2, truncation="hw")
    k = Kernel(spec)

    def run(source, limits=()):
        s = Search(source)
        try:
            for n in limits:
                s.run(StopRule(first_hit=False, max_states=n))
            ex = s.run(StopRule(first_hit=False))
        finally:
            whole = s.finish()
        ex.stats = whole.stats
        return ex, source.graph(ex)

    def report(ex):
        return (ex.distinct, ex.generated, ex.depth,
                sorted((n, h.length, tuple(h.path)) for n, h in ex.hits.items()))

    props = lambda: PropertySet(k, Options(stop_at_violation=False))  # noqa: E731
    want_ex, want = run(_source(k, spec, props=props()))
    assert want_ex.stats["spilled_levels"] == 0 and want_ex.stats["disk_bytes"] == 0
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    seen: list[str] = []
    stop = ex_mod.GraphSource._stop

    wanted = ("graph-front-", "graph-new-", "graph-fps", "graph-parents", "graph-offsets",
              "graph-dst")

    def looking(self, *a):  # the work folder's files mapped while a level is expanded (their
        # names leave the folder once mapped: /proc/self/maps says "(deleted)"), until each
        # kind has been seen once (reading the maps at every chunk took most of the test)
        if not all(any(name.startswith(w) for name in seen) for w in wanted):
            with open("/proc/self/maps") as maps:
                seen.extend(line.split(str(self.work.path) + "/")[1].split()[0] for line in maps
                            if str(self.work.path) + "/" in line)
        return stop(self, *a)

    monkeypatch.setattr(ex_mod.GraphSource, "_stop", looking)
    for workers, limits in ((1, ()), (1, (300, 2000)), (2, (620,))):
        source = _source(k, spec, workers=workers, worker_rows=3, chunk=5, props=props(),
                         workdir=tmp_path)
        ex, graph = run(source, limits)
        _same_graph(want, graph)
        assert report(ex) == report(want_ex)
        assert ex.stats["spilled_levels"] >= want.depth and ex.stats["disk_bytes"] > 0
        assert list(tmp_path.iterdir()) == []  # the work folder went with the run
    assert any(name.startswith("graph-front-") for name in seen)
    assert any(name.startswith("graph-new-") for name in seen)
    assert {"graph-fps", "graph-parents", "graph-offsets", "graph-dst"} <= \
        {name.rsplit("-", 1)[0] for name in seen}  # the columns too
    # checkpointed with its frontier in a file, stopped, resumed into files: the same graph
    ckpt = tmp_path.parent / (tmp_path.name + "-ckpt")
    first = _source(k, spec, props=props(), checkpoint=ckpt, checkpoint_every=0,
                    workdir=tmp_path)
    s = Search(first)
    try:
        assert not s.run(StopRule(first_hit=False, max_states=3000)).complete
    finally:
        s.finish()
    resumed = _source(k, spec, props=props(), resume=ckpt, workdir=tmp_path)
    ex, graph = run(resumed)
    _same_graph(want, graph)
    assert ex.distinct == want.n and ex.stats["spilled_levels"] > 0


def test_a_full_work_folder_stops_the_graph_keeping_what_it_found(monkeypatch, tmp_path):
    """A disk with no room for the levels past the memory budget stops the search as out of
    memory does, saying so (the blocks are taken before the pages are written: never a
    SIGBUS), with what was found kept and the folder gone."""
    import errno
    import os

    from hwcheck.checker.engines import spill
    from hwcheck.checker.search.driver import search
    from hwcheck.checker.search.stop import StopRule

    spec = kafka(**R2, truncation="hw")
    k = Kernel(spec)
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    calls = []
    real = os.posix_fallocate

    def fallocate(fd, lo, n):
        calls.append(n)
        if len(calls) > 40:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, lo, n)

    monkeypatch.setattr(os, "posix_fallocate", fallocate)
    source = _source(k, spec, workdir=tmp_path)
    ex = search(source, StopRule(first_hit=False))
    graph = source.graph(ex)  # what was explored, its columns in the folder's files
    assert graph.n == ex.distinct and graph.nedges == ex.generated and not graph.complete
    assert len(calls) == 41  # (the graph took no more blocks)
    assert ex.stop_reason.startswith(f"no room left in the work folder ({tmp_path}/hwcheck-work-")
    assert ex.stop_reason.endswith(": No space left on device)")
    assert not ex.complete and 0 < ex.distinct < 10487
    assert list(tmp_path.iterdir()) == []


def test_a_column_whose_file_cannot_be_mapped_stays_in_memory(monkeypatch, tmp_path):
    """Where the work folder's file cannot be mapped (an address space limit), a column past
    the budget stays in memory with its entries, and leaves no file behind; one that can moves
    there with them."""  # (the folder holds no names either way: a mapped file's goes at once)
    from hwcheck.checker.engines import workdir
    from hwcheck.checker.engines.workdir import WorkDir

    work = WorkDir(tmp_path)
    try:
        kept = workdir.Column(np.int64, 4, lambda: work, "kept", lambda: 0)
        kept.room(0, 10)
        kept.a[:10] = np.arange(10)
        kept.room(10, 100)
        assert kept.file is not None and kept.file.holds(kept.a)
        assert np.array_equal(kept.a[:10], np.arange(10))

        def refused(*a, **kw):
            raise OSError(12, "Cannot allocate memory")

        monkeypatch.setattr(workdir.mmap, "mmap", refused)
        col = workdir.Column(np.int64, 4, lambda: work, "refused", lambda: 0)
        col.a[:4] = np.arange(4)
        col.room(4, 100)
        assert col.file is None and col.folder is None and col.a.size >= 100
        assert np.array_equal(col.a[:4], np.arange(4))
        assert list(work.path.iterdir()) == []
        kept.close()
    finally:
        work.close()


@pytest.mark.slow  # the liveness kernel and its graph module; the fast tier's levels in the work
# folder: test_a_graph_past_the_memory_budget_keeps_its_levels_in_the_work_folder
def test_check_recoverable_and_liveness_past_the_memory_budget(monkeypatch):
    """``check --recoverable`` with the liveness properties, its levels in the work folder:
    the check's report, recoverability and every liveness verdict of a run in memory."""
    from hwcheck.checker.engines import spill
    from hwcheck.checker.engines.options import Options

    spec = kafka(**R2, truncation="hw", liveness=True)
    k = Kernel(spec)

    def run():
        ex, rec, graph, outs = recover.check_on_graph(k, Options(), liveness=spec.liveness,
                                                      workers=2)
        assert rec is not None
        return ((ex.distinct, ex.generated, ex.depth, ex.complete,
                 sorted((n, h.length, tuple(h.path)) for n, h in ex.hits.items())),
                (rec.verdict, rec.stuck, rec.at_bound, rec.shortest, rec.witness),
                [(o.name, str(o.status), o.lasso) for o in outs],
                (graph.n, graph.nedges), ex.stats)

    *want, stats = run()
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    *got, spilled = run()
    assert got == want and want[0][4]  # (the check stops at its first violations)
    assert spilled["spilled_levels"] > 0 and stats["spilled_levels"] == 0


def test_check_recoverable_decides_on_the_whole_graph_past_max_states(tmp_path):
    """--max-states bounds the check's report, not the graph recoverability is decided on."""
    res = cli("check", "-R", "2", "-M", "2", "-E", "3", "--truncation", "hw", "--recoverable",
              "--max-states", "3000", "--out", str(tmp_path), "-q", "--json")
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    rec = obj["recoverability"]
    assert (rec["verdict"], rec["stuck"], rec["stuck_at_bound"], rec["states"]) == \
        ("stuck", 953, 4433, 10487)


@pytest.mark.slow
def test_a_symmetric_graph_with_members_compared_slice_by_slice():
    """The canonical form that sorts members by comparing their slices (its own scratch) in
    the graph kernel: the engine's orbits and transitions."""
    from hwcheck.checker.engines.local import LocalEngine
    from hwcheck.checker.engines.options import Options

    spec = kafka(replicas=3, max_offset=1, max_epoch=3, truncation="kip-279",
                 isr_expansion="epoch-start")
    k = Kernel(spec, symmetry=True, canon_method="compare")
    g = explore(k, invariants=False)
    ex = LocalEngine(k, Options(stop_at_violation=False)).run()
    assert (g.n, g.nedges, g.depth) == (ex.distinct, ex.generated, ex.depth)
    assert (g.n, g.nedges) == (11880, 56480)


def test_a_generated_module_is_keyed_by_the_run_time_modules_it_calls(monkeypatch):
    """numba's cache keeps a caller compiled with its callees: a generated module's key
    covers the hwcheck modules it imports, and theirs (a changed id table is a new graph
    module, never the old machine code)."""
    from hwcheck.checker.semantics import codegen

    spec = kafka(**R2, truncation="hw")
    graph_source = _source(Kernel(spec), spec).gk.source
    assert codegen._imported(graph_source) == ["hwcheck.checker.engines.idtable",
                                               "hwcheck.checker.semantics.fingerprint"]
    assert codegen._imported(Kernel(spec).source) == ["hwcheck.checker.semantics.fingerprint"]
    before = codegen.source_key(graph_source)
    text = codegen._module_text
    for changed in ("hwcheck.checker.engines.idtable", "hwcheck.checker.semantics.fingerprint"):
        monkeypatch.setattr(codegen, "_module_text",
                            lambda name, c=changed: text(name) + b"#" if name == c else text(name))
        assert codegen.source_key(graph_source) != before
    monkeypatch.setattr(codegen, "_module_text", text)
    assert codegen.source_key(graph_source) == before


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 7), st.floats(0.05, 0.95), st.integers(0, 2**32 - 1))
def test_the_id_table_doubles_in_place(bits, load, seed):
    """Every (fingerprint, id) of a table is found in it after doubling in place, at any load,
    with fingerprints whose homes crowd the table's end (runs that wrap around it)."""
    from hwcheck.checker.engines import idtable

    slots = 1 << bits
    rng = np.random.default_rng(seed)
    n = max(1, int(slots * load))
    fps = np.unique(rng.integers(1, 2**64 - 1, n, dtype=np.uint64, endpoint=True))
    if seed % 2:  # homes in the table's last eighth: runs wrap to its start
        fps = np.unique(fps | np.uint64(0b111 << 61))
    tab = idtable.new_table(2 * slots)
    idtable.table_fill(tab[:2 * slots], slots - 1, fps, 0)
    idtable.table_double(tab, slots)
    shift = idtable.home_shift(2 * slots - 1)
    for i, fp in enumerate(fps):
        assert idtable.table_find(tab, 2 * slots - 1, shift, fp)[0] == i
    assert int((tab[0::2] != 0).sum()) == fps.size


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupt_inside_a_level_ends_the_search(workers, monkeypatch):
    """Ctrl-C inside a level (here: as the level asks its stop rule) ends the search: a later
    run goes no further, and the graph says it is incomplete, consistently."""
    from hwcheck.checker.graph.explore import GraphSource
    from hwcheck.checker.search.driver import Search
    from hwcheck.checker.search.stop import StopRule

    spec = kafka(**R2, truncation="hw")
    k = Kernel(spec)
    asked = iter(range(10**6))
    stop = GraphSource._stop

    def interrupted_at_the_40th(self, *args):
        if next(asked) == 40:
            raise KeyboardInterrupt
        return stop(self, *args)

    monkeypatch.setattr(GraphSource, "_stop", interrupted_at_the_40th)
    source = _source(k, spec, workers=workers, worker_rows=3, chunk=5)
    s = Search(source)
    try:
        first = s.run(StopRule(first_hit=False))
        again = s.run(StopRule(first_hit=False))
    finally:
        s.finish()
    assert first.stop_reason == "interrupted" and not first.complete
    assert not again.complete and (again.distinct, again.depth) == (first.distinct, first.depth)
    g = source.graph(again)
    assert not g.complete and g.n == first.distinct and g.offsets[-1] == g.nedges


def test_a_signal_inside_a_held_block_is_taken_as_it_ends():
    """A signal that arrives while the main thread holds signals (whichever thread the system
    gives it to) is taken by the usual handler as the block ends, not inside it."""
    import signal

    from hwcheck.checker.search.signals import signals_held

    # Python's own handler, also where the test runner was started with SIGINT ignored (a
    # shell's background job): the block hands the signal to the handler it found
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    after = []
    try:
        with pytest.raises(KeyboardInterrupt), signals_held():
            signal.raise_signal(signal.SIGINT)
            after.append("the rest of the block")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
    assert after == ["the rest of the block"]
