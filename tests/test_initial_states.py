"""Several initial states: Init with choices (``Block.choose``) and conditions (``require``).

``tests/specs/any_start.py`` chooses every node's value and two nodes that differ; its TLA+ twin
``tests/specs/tla/AnyStart.tla`` gives TLC's counts (``TLC_COUNTS``). TLC counts every way Init
is satisfied before all variables are assigned as a generated state: hwcheck's successors plus
Init's allowed choices (``Kernel.init_generated``). Every engine, the traces, simulation, Z3 and
the explorer start from all of them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import NEEDS_JAVA, tiered

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.explorer.session import Session, SessionError
from hwcheck.checker.graph.explore import explore
from hwcheck.checker.run import InitialStates, check
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.sim.simulate import SimOptions, simulate
from hwcheck.checker.traces import itf
from hwcheck.checker.traces.trace import from_path, replay
from hwcheck.checker.z3.certify import certify
from hwcheck.checker.z3.checks import bmc, check_init
from hwcheck.spec.lang import Block, Spec, SpecError

SPECS = Path(__file__).resolve().parent / "specs"


def any_start(**params) -> Spec:
    return protocols.build(protocols.load(str(SPECS / "any_start.py")), params)


# TLC (workers 1, -deadlock, INVARIANT BudgetKept) on AnyStart.tla: (N, M, Incs, Spare) ->
# distinct, generated (Init's 108 x Spare with the defaults), depth. hwcheck's generated and
# depth are TLC's less Init's choices and one level.
TLC_COUNTS = {
    (3, 3, 2, 2): (81, 648, 5),
    (3, 3, 2, 1): (81, 540, 5),
    (3, 3, 2, 3): (81, 756, 5),
    (3, 4, 2, 2): (192, 1728, 4),
    (4, 3, 3, 1): (324, 3888, 6),
    (2, 4, 1, 3): (32, 144, 3),
}


# the fast tier: the defaults and the engines' configuration (each other one a kernel of its own)
@pytest.mark.parametrize("cfg", tiered(sorted(TLC_COUNTS), [(3, 3, 2, 2), (3, 4, 2, 2)]))
def test_counts_are_tlcs(cfg):
    n, m, incs, spare = cfg
    spec = any_start(nodes=n, values=m, incs=incs, spare=spare)
    kernel = Kernel(spec)
    report = check(spec, Options(stop_at_violation=False))
    ex = report.exploration
    distinct, generated, depth = TLC_COUNTS[cfg]
    assert (ex.distinct, ex.generated + kernel.init_generated, ex.depth + 1) == \
        (distinct, generated, depth)
    assert report.stats.initial == InitialStates(len(kernel.initials), kernel.init_generated)


def independent(spec: Spec) -> tuple[set, int, int]:
    """The reachable rows, transitions and depth by a plain breadth-first search over the
    interpreter from every initial state, written without the engines."""
    interp = Interpreter(spec)
    key = lambda row: tuple(int(x) for x in row)  # noqa: E731
    # the initial states by brute force over Init's choices: each allowed choice's state
    init = spec.init_action
    starts = {}
    for args in itertools.product(*(range(p.size) for p in init.params)):
        env = dict(zip(init.params, args))
        t = interp.bottom()
        if not interp._eval(init.guard, t, None, env, "Init"):
            continue
        interp._run(init.body, t, env, "Init")
        if interp._eval(spec.init_post, t, None, env, "Init"):
            starts.setdefault(key(t), np.array(t, interp.layout.dtype))
    seen, front, generated, depth = set(starts), list(starts.values()), 0, 0
    while front:
        nxt = []
        for row in front:
            for inst in interp.instances:
                try:
                    succ = interp.step(inst, row)
                except ModelError:
                    continue
                if succ is not None:
                    generated += 1
                    if key(succ) not in seen:
                        seen.add(key(succ))
                        nxt.append(succ)
        if nxt:
            depth += 1
        front = nxt
    return seen, generated, depth


def test_the_interpreter_and_the_kernel_give_the_same_initial_states():
    spec = any_start()
    interp, kernel = Interpreter(spec), Kernel(spec)
    rows = interp.initials()
    assert len(rows) == 24  # 27 value vectors less the 3 with every value equal
    assert np.array_equal(np.stack(rows), kernel.initials)
    assert kernel.init_generated == 216  # each state once per differing pair and spare value
    # the spare choice only repeats states: the same initial states, more choices
    again = Kernel(any_start(spare=3))
    assert np.array_equal(again.initials, kernel.initials) and again.init_generated == 324


# the fast tier: the kernel parts other fast tests compile for this spec (one worker, step);
# two workers, exact and the graph each compile a part of their own
@pytest.mark.parametrize("how", ["one worker", "partitioned",
                                 *(pytest.param(h, marks=pytest.mark.slow)
                                   for h in ("two workers", "exact", "graph")),
                                 pytest.param("spark", marks=[pytest.mark.slow, NEEDS_JAVA])])
def test_every_engine_starts_from_every_initial_state(how):
    spec = any_start(nodes=3, values=4)
    seen, generated, depth = independent(spec)
    kernel = Kernel(spec)
    opts = Options(stop_at_violation=False)
    if how == "graph":
        g = explore(kernel)
        assert (g.n, g.nedges, len(g.levels) - 2) == (len(seen), generated, depth)
        assert int((g.depths() == 0).sum()) == 4 ** 3 - 4  # values 0..3, not all equal
        return
    engine = how if how in ("partitioned", "spark") else "local"
    extra: dict = {"one worker": {}, "two workers": {"workers": 2},
                   "exact": {"local": LocalSettings(exact=True)},
                   "partitioned": {"parts": 3},
                   "spark": {"master": "local[2]", "partitions": 3}}[how]
    ex = check(spec, opts, engine=engine, **extra).exploration
    assert (ex.distinct, ex.generated, ex.depth) == (len(seen), generated, depth)


@pytest.mark.slow  # a symmetric kernel of its own
def test_symmetry_counts_the_orbits_of_every_initial_state():
    spec = any_start(nodes=3, values=4)
    seen, _, _ = independent(spec)
    orbits = {min(tuple(row[i] for i in p) + row[3:] for p in itertools.permutations(range(3)))
              for row in seen}
    ex = check(spec, Options(stop_at_violation=False, symmetry=True)).exploration
    assert ex.distinct == len(orbits)


def test_traces_start_from_the_initial_state_that_leads_to_the_violation(tmp_path):
    res = CliRunner().invoke(main, ["check", "--spec", str(SPECS / "any_start.py"), "--continue",
                                    "--out", str(tmp_path), "--json", "-q"])
    assert res.exit_code == 12, res.output
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    assert (obj["initial_states"], obj["initial_choices"]) == (24, 216)
    lengths = {v["property"]: v["length"] for v in obj["violations"]}
    assert lengths == {"NotAllEqual": 1, "NoMax": 0}
    spec = any_start()
    interp = Interpreter(spec)
    starts = [interp.layout.to_dict(r) for r in interp.initials()]
    firsts = {}
    for v in obj["violations"]:
        trace = itf.from_itf(spec, json.loads(Path(v["trace"]).read_text()))
        assert trace.states[0] in starts
        firsts[v["property"]] = trace.states[0]
        ok = CliRunner().invoke(main, ["replay", v["trace"], "--spec",
                                       str(SPECS / "any_start.py")])
        assert ok.exit_code == 0 and "confirmed" in ok.output, ok.output
    # NoMax breaks in an initial state, not the first one (v = 0 0 1): the first that breaks it
    assert firsts["NoMax"] == starts[1] and firsts["NoMax"]["v"] == [0, 0, 2]


def test_a_trace_whose_first_state_is_not_initial_is_refused(tmp_path):
    out = tmp_path / "o"
    CliRunner().invoke(main, ["check", "--spec", str(SPECS / "any_start.py"), "--out", str(out),
                              "--invariant", "NotAllEqual", "-q"])
    [trace] = out.rglob("NotAllEqual.itf.json")
    data = json.loads(trace.read_text())
    data["states"][0]["budget"] = {"#bigint": "1"}
    bad = tmp_path / "bad.itf.json"
    bad.write_text(json.dumps(data))
    res = CliRunner().invoke(main, ["replay", str(bad), "--spec", str(SPECS / "any_start.py")])
    assert res.exit_code == 1 and "none of the 24 initial states" in res.output, res.output


@pytest.mark.slow  # a kernel and a state graph of their own
def test_liveness_lassos_start_from_an_initial_state(tmp_path):
    # TLC: BudgetSpent (Spec with WF on each Inc(i)) is violated, as here
    spec = any_start(live=True)
    report = check(spec, Options(stop_at_violation=False), out=tmp_path)
    o = next(o for o in report.outcomes if o.name == "BudgetSpent")
    assert o.status == "violated" and o.trace is not None
    replay(spec, o.trace)
    assert o.trace.states[0] in [Interpreter(spec).layout.to_dict(r)
                                 for r in Interpreter(spec).initials()]


@pytest.mark.slow  # a kernel and a simulation kernel of their own
def test_simulation_walks_from_every_initial_state():
    spec = any_start(nodes=3, values=4, incs=0)
    res = simulate(spec, SimOptions(seed=1, walks=200, depth=1, workers=1, max_seconds=None,
                                    properties=["BudgetKept"]))
    assert res.found is None
    # one Copy from the initial states reaches every one of the 40 value vectors with two equal
    # values; from one initial state, at most its 6 Copy successors
    assert res.distinct == 40
    hit = simulate(spec, SimOptions(seed=1, walks=10, depth=5, workers=1, max_seconds=None,
                                    properties=["NoMax"]))
    assert hit.found is not None and hit.found.path == [] and hit.found.name == "NoMax"


def test_z3_bmc_starts_from_every_initial_state():
    spec = any_start()
    props = [(i.name, "invariant", i.expr) for i in spec.invariants]
    rep = bmc(spec, props, 2)
    assert [(h.prop, h.depth) for h in rep.hits] == [("NoMax", 0)]  # the first depth's hits
    rep = bmc(spec, props[:1], 2)
    assert [(h.prop, h.depth) for h in rep.hits] == [("NotAllEqual", 1)]
    trace = from_path(spec, Interpreter(spec), "NotAllEqual", "invariant", "z3-bmc",
                      rep.hits[0].path)
    replay(spec, trace)
    assert certify(spec, trace).ok
    # the induction's base case: every initial state, not only the first (which has no max)
    base = dict(check_init(spec, [(i.name, i.expr) for i in spec.invariants]))
    assert base["NoMax"].status == "violated" and base["BudgetKept"].status == "holds"
    trace.states[0] = {**trace.states[0], "budget": 1}  # no initial state has budget 1
    assert not certify(spec, trace).ok


def test_the_explorer_resets_to_any_initial_state():
    s = Session(any_start())
    assert s.state()["initials"] == 24 and s.state()["initial"] == 0
    s.reset(5)
    assert s.state()["initial"] == 5
    assert s.state()["state"] == s.layout.to_dict(Interpreter(s.spec).initials()[5])
    with pytest.raises(SessionError, match="initial states 0..23"):
        s.reset(24)


def test_an_init_that_allows_no_choice_is_an_error():
    spec = Spec("Empty", {})
    x = spec.scalar("x", 0, 3)

    def init(b: Block) -> None:
        c = b.choose(2)
        b.set(x, c)
        b.require(x > 5)

    spec.initial(init)
    spec.validate()
    with pytest.raises(SpecError, match="no initial state"):
        Interpreter(spec).initials()
    with pytest.raises(SpecError, match="no initial state"):
        _ = Kernel(spec).initials
