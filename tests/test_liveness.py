"""Liveness under fairness: the language, the check on the state graph against an independent
plain-Python check and against TLC's verdicts, lasso traces (written, replayed, rejected when
the cycle is not fair), and the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest
from click.testing import CliRunner
from helpers import kafka, tiered
from hypothesis import given, settings
from hypothesis import strategies as st

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.options import Options
from hwcheck.checker.graph import liveness
from hwcheck.checker.graph.recover import check_on_graph
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.traces import itf
from hwcheck.checker.traces.trace import TraceError, replay
from hwcheck.spec.lang import Block, Spec, SpecError

SPECS = Path(__file__).resolve().parent / "specs"


def spec_of(file: str, **params) -> Spec:
    return protocols.build(protocols.load(str(SPECS / file)), params)


def graph_verdicts(spec: Spec) -> dict[str, str]:
    _, _, _, outs = check_on_graph(Kernel(spec), Options(stop_at_violation=False),
                                   recoverable=False, liveness=spec.liveness)
    return {o.name: str(o.status) for o in outs}


# -- an independent check: the interpreter's state graph in networkx, fair cycles by recursive
# decomposition, written without the checker's arrays or its order of work ---------------------


def independent_verdicts(spec: Spec) -> dict[str, str]:
    interp = Interpreter(spec)
    insts = interp.instances
    key = lambda row: tuple(int(x) for x in row)  # noqa: E731
    start = interp.initial()
    rows, edges = {key(start): start}, []
    todo = [start]
    while todo:
        row = todo.pop()
        for inst in insts:
            try:
                nxt = interp.step(inst, row)
            except ModelError:
                continue
            if nxt is None:
                continue
            if key(nxt) not in rows:
                rows[key(nxt)] = nxt
                todo.append(nxt)
            edges.append((key(row), key(nxt), inst))
    # each fairness condition by its name: an instance's own, or a group's (any member)
    conds = spec.fairness_conditions()
    member = {i: c.name for c in conds for i in c.instances}
    enabled = {s: {member[e[2].index] for e in edges
                   if e[0] == s and e[1] != s and e[2].index in member} for s in rows}
    fair = {c.name: c.kind for c in conds}
    out = {}
    for p in spec.liveness:
        quiet = set(p.quiet)

        def holds(e, s):
            return bool(interp.holds(e, rows[s]))

        if p.form == "eventually_always":
            region = set(rows)
            accept = {s for s in rows if not holds(p.p, s)}
            starts = set(rows)
        else:
            goal = p.q if p.form == "leads_to" else p.p
            region = {s for s in rows if not holds(goal, s)}
            accept = set(region)
            starts = {s for s in region if p.form != "leads_to" or holds(p.p, s)}
        fair_states = _fair_states(region, edges, enabled, fair, member, accept, quiet)
        g = nx.DiGraph()
        g.add_nodes_from(region)
        g.add_edges_from((a, b) for a, b, _ in edges if a in region and b in region)
        bad = any(nx.has_path(g, s, f) for s in starts for f in fair_states) \
            if fair_states else False
        out[p.name] = "violated" if bad else "holds"
    return out


def _fair_states(region, edges, enabled, fair, member, accept, quiet) -> set:
    """The states on a fair cycle inside ``region`` that visits ``accept``."""
    g = nx.DiGraph()
    g.add_nodes_from(region)
    for a, b, inst in edges:
        if a in region and b in region and inst.action.name not in quiet:
            g.add_edge(a, b)
    found = set()
    work = [set(c) for c in nx.strongly_connected_components(g)]
    while work:
        comp = work.pop()
        if not comp & accept:
            continue
        taken = {member[inst.index] for a, b, inst in edges
                 if a in comp and b in comp and a != b and inst.action.name not in quiet
                 and inst.index in member}
        en_all = set.intersection(*(enabled[s] for s in comp))
        en_any = set.union(*(enabled[s] for s in comp))
        if any(f == "weak" and lab in en_all and lab not in taken for lab, f in fair.items()):
            continue
        bad = {lab for lab, f in fair.items() if f == "strong" and lab in en_any
               and lab not in taken}
        if not bad:
            found |= comp
            continue
        rest = {s for s in comp if not enabled[s] & bad}
        sub = g.subgraph(rest)
        work += [set(c) for c in nx.strongly_connected_components(sub)]
    return found


# -- TLC's verdicts on the same definitions (tests/specs/tla/: TokenRing.tla, Peterson.tla) -----

TLC_TOKEN_RING = {  # (use, passing) -> property -> TLC's verdict, nodes = 3
    ("none", "weak"): {"Served": "violated", "TokenVisits": "holds", "Settles": "violated",
                       "SettlesOnceQuiet": "violated"},
    ("weak", "weak"): {"Served": "violated", "TokenVisits": "holds", "Settles": "violated",
                       "SettlesOnceQuiet": "violated"},
    ("strong", "weak"): {"Served": "holds", "TokenVisits": "holds", "Settles": "violated",
                         "SettlesOnceQuiet": "holds"},
    ("strong", "none"): {"Served": "violated", "TokenVisits": "violated", "Settles": "violated",
                         "SettlesOnceQuiet": "violated"},
}
TLC_PETERSON = {  # (fairness, naive) -> TLC's verdict of NoStarvation0 and NoStarvation1
    ("none", False): "violated",
    ("weak", False): "holds",
    ("strong", False): "holds",
    ("weak", True): "violated",
    ("strong", True): "violated",
}


@pytest.mark.parametrize("use,passing", tiered(list(TLC_TOKEN_RING), {("weak", "weak")},
                                               unpack=True))
def test_token_ring_verdicts_match_tlc_and_the_independent_check(use, passing):
    spec = spec_of("token_ring.py", nodes=3, use=use, passing=passing)
    got = graph_verdicts(spec)
    assert got == TLC_TOKEN_RING[(use, passing)]
    assert got == independent_verdicts(spec)


def test_the_properties_are_decided_on_the_runs_workers(monkeypatch):
    """Liveness properties are decided side by side on as many threads as the run has workers
    (at most one a property): one worker starts no thread; the verdicts do not depend on it."""
    made: list[int] = []
    pool = liveness.Pool
    monkeypatch.setattr(liveness, "Pool", lambda n, name: made.append(n) or pool(n, name))
    spec = spec_of("token_ring.py", nodes=3, use="weak", passing="weak")
    assert len(spec.liveness) >= 2
    verdicts = {}
    for workers in (1, 2, 8):
        *_, outs = check_on_graph(Kernel(spec), Options(stop_at_violation=False),
                                  recoverable=False, liveness=spec.liveness, workers=workers)
        verdicts[workers] = {o.name: str(o.status) for o in outs}
    assert made == [2, min(8, len(spec.liveness))]
    assert verdicts[1] == verdicts[2] == verdicts[8] == TLC_TOKEN_RING[("weak", "weak")]


@pytest.mark.slow
@pytest.mark.parametrize("fairness,naive", list(TLC_PETERSON))
def test_peterson_verdicts_match_tlc_and_the_independent_check(fairness, naive):
    spec = spec_of("peterson.py", fairness=fairness, naive=naive)
    got = graph_verdicts(spec)
    want = TLC_PETERSON[(fairness, naive)]
    assert got == {"NoStarvation0": want, "NoStarvation1": want}
    assert got == independent_verdicts(spec)


@pytest.mark.slow
@pytest.mark.parametrize("nodes", [1, 2, 4])
@pytest.mark.parametrize("use", ["none", "weak", "strong"])
def test_token_ring_sizes_agree_with_the_independent_check(nodes, use):
    spec = spec_of("token_ring.py", nodes=nodes, use=use)
    assert graph_verdicts(spec) == independent_verdicts(spec)


@pytest.mark.slow
def test_without_fairness_every_progress_property_fails_by_stuttering():
    spec = spec_of("token_ring.py", nodes=3, use="none", passing="none")
    _, _, _, outs = check_on_graph(Kernel(spec), Options(stop_at_violation=False),
                                   recoverable=False, liveness=spec.liveness)
    for o in outs:
        assert o.status == "violated", o.name
        if o.name in ("Served", "TokenVisits"):  # progress: the last state stutters
            assert o.lasso is not None and o.lasso.cycle == [], o.name


# -- lasso traces ------------------------------------------------------------------------------


def test_check_writes_lassos_that_replay_and_an_unfair_cycle_is_rejected(tmp_path):
    runner = CliRunner()
    res = runner.invoke(main, ["check", "--spec", str(SPECS / "token_ring.py"), "--param",
                               "use=weak", "--out", str(tmp_path), "--json", "-q"])
    assert res.exit_code == 12, res.output
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    assert obj["verdict"] == "violated"
    served = next(v for v in obj["violations"] if v["property"] == "Served")
    assert served["kind"] == "liveness"
    data = json.loads(Path(served["trace"]).read_text())
    assert data["#meta"]["kind"] == "liveness"
    loop = data["#meta"]["loop"]
    assert data["states"][loop] == {**data["states"][-1], "#meta": data["states"][loop]["#meta"]}
    for v in obj["violations"]:
        ok = runner.invoke(main, ["replay", v["trace"], "--spec", str(SPECS / "token_ring.py")])
        assert ok.exit_code == 0 and "confirmed" in ok.output, ok.output
    # the same lasso under strong fairness on Use: its cycle passes the token by node 0's open
    # request forever, which strong fairness forbids
    data["#meta"]["params"]["use"] = "strong"
    unfair = tmp_path / "unfair.itf.json"
    unfair.write_text(json.dumps(data))
    bad = runner.invoke(main, ["replay", str(unfair), "--spec", str(SPECS / "token_ring.py")])
    assert bad.exit_code == 1 and "not fair" in bad.output and "Use(0)" in bad.output


def test_a_lasso_is_confirmed_by_the_interpreter_alone():
    spec = spec_of("token_ring.py", nodes=3, use="weak")
    _, _, _, outs = check_on_graph(Kernel(spec), Options(stop_at_violation=False),
                                   recoverable=False, liveness=spec.liveness)
    from hwcheck.checker.traces.lasso import from_lasso

    o = next(o for o in outs if o.name == "Served")
    trace = from_lasso(spec, Interpreter(spec), "Served", "graph", o.lasso.prefix,
                       o.lasso.cycle)
    back = itf.from_itf(spec, itf.to_itf(spec, trace))
    assert back.meta["loop"] == trace.meta["loop"]
    replay(spec, back)
    back.meta["loop"] = len(back.states) - 1  # a cycle must have a step
    with pytest.raises(TraceError, match="cycle must start"):
        replay(spec, back)
    back.meta["loop"] = 0  # state 0 is not the last state: the cycle does not close
    with pytest.raises(TraceError, match="does not close"):
        replay(spec, back)
    quiet = itf.from_itf(spec, itf.to_itf(spec, trace))
    quiet.property = "TokenVisits"  # holds on this behaviour: the token comes back
    with pytest.raises(TraceError, match="holds on this behaviour"):
        replay(spec, quiet)


# -- the language ------------------------------------------------------------------------------


def _flip() -> tuple[Spec, Any]:
    """One bit flipped by a weakly fair action."""
    s = Spec("T", {})
    x = s.scalar("x", 0, 1)
    s.initial(lambda b: None)

    @s.action("Flip", modifies=[x], fairness="weak")
    def flip(b: Block) -> None:
        b.set(x, 1 - x)

    return s, x


def test_the_language_refuses_malformed_liveness_properties():
    with pytest.raises(SpecError, match="fairness must be"):
        s, x = _flip()
        s.action("A", fairness="fair")
    s, x = _flip()
    s.leads_to("P", x == 0, x == 1, quiet=["Nope"])
    with pytest.raises(SpecError, match="not an action"):
        s.validate()
    s, x = _flip()
    s.invariant("P", x >= 0)
    s.always_eventually("P", x == 1)
    with pytest.raises(SpecError, match="another property has its name"):
        s.validate()
    s, x = _flip()
    s.always_eventually("Flips", x == 1)
    s.validate()


@pytest.mark.slow  # a kernel and a graph module of its own
def test_a_well_formed_property_of_the_smallest_spec_is_decided():
    s, x = _flip()
    s.always_eventually("Flips", x == 1)
    assert graph_verdicts(s) == {"Flips": "holds"}  # weak fairness keeps it flipping


def test_liveness_with_symmetry_is_one_line_exit_2():
    res = CliRunner().invoke(main, ["check", "--liveness", "--symmetry", "-R", "2", "-M", "1",
                                    "-E", "2"])
    assert res.exit_code == 2 and "without --symmetry" in res.output


# -- Kafka -------------------------------------------------------------------------------------


def test_the_kafka_liveness_knob_off_declares_nothing():
    assert kafka(replicas=2, max_offset=1, max_epoch=2).liveness == []
    assert all(a.fairness is None for a in kafka(replicas=2, max_offset=1, max_epoch=2).actions)


# TLC's verdicts on docs/tla/KafkaHWLiveness.tla (LiveSpec, R=2 M=2 E=3, acks all, min ISR 1),
# the same as the stuck states of --recoverable say: HW truncation and leader-epoch truncation
# have stuck states (logs that never converge), KIP-279 has none.
TLC_KAFKA = {
    "hw": {"ElectionAfterCrash": "holds", "AckedReplicated": "violated",
           "HwCatchesUp": "holds", "LogsConverge": "violated"},
    "leader-epoch": {"ElectionAfterCrash": "holds", "AckedReplicated": "violated",
                     "HwCatchesUp": "holds", "LogsConverge": "violated"},
    "kip-279": {"ElectionAfterCrash": "holds", "AckedReplicated": "holds",
                "HwCatchesUp": "holds", "LogsConverge": "holds"},
}


@pytest.mark.slow
@pytest.mark.parametrize("truncation", list(TLC_KAFKA))
def test_kafka_liveness_matches_tlc_and_recoverability(truncation, tmp_path):
    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation=truncation, liveness=True)
    _, rec, _, outs = check_on_graph(Kernel(spec), Options(stop_at_violation=False),
                                     liveness=spec.liveness)
    got = {o.name: str(o.status) for o in outs}
    assert got == TLC_KAFKA[truncation]
    assert (rec.stuck > 0) == (got["LogsConverge"] == "violated")
    # HwCatchesUp fails only where the model has no epoch left to elect a leader with
    hw = next(o for o in outs if o.name == "HwCatchesUp")
    assert hw.at_bound is not None
    from hwcheck.checker.traces import html, text
    from hwcheck.checker.traces.lasso import from_lasso

    for o in outs:  # every lasso replays through the interpreter, fairness checked
        if o.lasso is not None:
            t = from_lasso(spec, Interpreter(spec), o.name, "graph", o.lasso.prefix,
                           o.lasso.cycle)
            replay(spec, itf.from_itf(spec, itf.to_itf(spec, t)))
            # the page marks the cycle's rows and shades it in the timeline; the text says it
            page = html.page(t, "")
            loop, n = t.meta["loop"], len(t.states) - 1
            assert page.count('<tr class="cycle">') == n - loop + 1
            assert '<rect class="cycle"' in page and "repeats forever" in page
            assert f"steps {loop + 1}..{n} repeat forever" in text.text(t)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(1, 20).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(0, 5)), max_size=60))),
       st.lists(st.integers(-1, 70), min_size=6, max_size=6))
def test_the_shared_arrays_are_the_plain_ones(graph, index):
    """The enabled fairness bits (a transition to another state), the transitions by
    destination and their sources equal numpy's plain answers: bit sets, the stable argsort
    and the cumulative count."""
    n, edges = graph
    edges = sorted(edges, key=lambda t: t[0])  # compressed sparse row form: by source
    src = np.array([a for a, _, _ in edges], np.int32)
    dst = np.array([b for _, b, _ in edges], np.int32)
    act = np.array([c for _, _, c in edges], np.uint8)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    index = np.array(index, np.int64)
    words = 2
    enabled = np.zeros((n, words), np.uint64)
    rev_offsets = np.zeros(n + 1, np.int64)
    rev_edges = np.empty(len(edges), np.int32)  # as the graph's, while they fit
    pred = np.empty(len(edges), np.int32)
    liveness._prepare(offsets, dst, act, index, enabled, rev_offsets, rev_edges, pred,
                      np.zeros(1, np.int64))
    assert (rev_edges == np.argsort(dst, kind="stable")).all()
    assert (pred == src[rev_edges]).all()
    assert (rev_offsets[1:] == np.cumsum(np.bincount(dst, minlength=n))).all()
    want = np.zeros((n, words), np.uint64)
    for a, b, c in edges:
        if index[c] >= 0 and a != b:
            want[a, index[c] >> 6] |= np.uint64(1) << np.uint64(index[c] & 63)
    assert (enabled == want).all()


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(1, 16).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(0, 2)), max_size=50),
    st.lists(st.booleans(), min_size=n, max_size=n))),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_tarjan_finds_networkx_components(graph, ok):
    """The components of the states in the mask, over the transitions whose action is allowed,
    are networkx's strongly connected components of that subgraph, numbered in the order
    Tarjan completes them (a component before any that reaches it)."""
    n, edges, mask = graph
    edges = sorted(edges, key=lambda t: t[0])
    dst = np.array([b for _, b, _ in edges], np.int32)
    act = np.array([c for _, _, c in edges], np.uint8)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(np.array([a for a, _, _ in edges], np.int64), minlength=n),
              out=offsets[1:])
    comp = np.full(n, -1, np.int32)
    ncomp = liveness._tarjan(offsets, dst, act, np.array(mask, np.bool_), np.array(ok, np.bool_),
                             comp, np.zeros(1, np.int64))
    g = nx.DiGraph()
    g.add_nodes_from(i for i in range(n) if mask[i])
    g.add_edges_from((a, b) for a, b, c in edges if mask[a] and mask[b] and ok[c])
    want = {frozenset(c) for c in nx.strongly_connected_components(g)}
    got: dict[int, set[int]] = {}
    for i in range(n):
        assert (comp[i] >= 0) == mask[i]
        if mask[i]:
            got.setdefault(int(comp[i]), set()).add(i)
    assert ncomp == len(got) and set(got) == set(range(ncomp))
    assert {frozenset(c) for c in got.values()} == want
    for a, b, c in edges:  # a transition never leads to a component completed later
        if mask[a] and mask[b] and ok[c]:
            assert comp[b] <= comp[a]


def _each_served(use: str) -> Spec:
    """The token ring with ``\\A i \\in Nodes : want[i] ~> ~want[i]`` as ServedEach."""
    from hwcheck.spec.lang import Read, lift

    spec = spec_of("token_ring.py", nodes=3, use=use)
    flags = next(v for v in spec.variables if v.name == "want")
    spec.leads_to("ServedEach", lambda i: Read(flags, (lift(i),)),
                  lambda i: ~Read(flags, (lift(i),)), over=[3])
    return spec.validate()


def test_a_quantified_property_is_a_property_for_each_index():
    spec = _each_served("strong")
    each = [p for p in spec.liveness if p.name.startswith("ServedEach")]
    assert [p.name for p in each] == ["ServedEach(0)", "ServedEach(1)", "ServedEach(2)"]
    assert all(p.form == "leads_to" and p.q is not None for p in each)
    assert len({repr(p.p) for p in each}) == 3  # each reads its own node
    with pytest.raises(SpecError, match="functions of one index per size"):
        spec.leads_to("Bad", lambda: True, lambda: False, over=[3])


@pytest.mark.slow
@pytest.mark.parametrize("use,want", [("strong", "holds"), ("none", "violated")])
def test_each_index_of_a_quantified_property_has_its_verdict(use, want):
    got = graph_verdicts(_each_served(use))
    assert {got[f"ServedEach({i})"] for i in range(3)} == {want} == {got["Served"]}
