"""Symmetry reduction (``check --symmetry``): orbit counts against an independent oracle, the
same verdicts and shortest violations as without it, traces that replay, every engine.

The oracle is a slow breadth-first search in plain Python over the interpreter
(``checker/semantics/interp.py``), not the kernel: it renames members with its own code, on the
readable form of a state (``Layout.to_dict``), from roles written down here for each protocol
(not read from the protocol's declaration), and keys each state by the least rendering over
every permutation. It shares nothing with the engines' canonical form but the interpreter.
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from engine_contract import MODEL_TABLE
from helpers import NEEDS_JAVA, kafka, tiered

from hwcheck.checker import protocols
from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.semantics.symmetry import declared
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import SpecError, reads_next

SPECS = Path(__file__).parent / "specs"
HANDOFF = str(SPECS / "sym_handoff.py")

# Each protocol's member roles, written from its model (docs/model.md for Kafka), not from its
# declaration: variable -> the member dimensions of a map or set, or "id" for a member id.
KAFKA_ROLES = {"log": (0,), "hw": (0,), "alive": (0,), "isr": (0,), "synced": (0,),
               "rleo": (0,), "pending": (0,), "respRec": (0,), "respHw": (0,), "leader": "id"}
HANDOFF_ROLES = {"val": (0,), "link": (0, 1), "leader": "id"}
# The knobs of docs/kafka-model.md add per-replica cells (a record's payload, the log start);
# the producer's and the transaction's variables are not indexed by a replica.
KNOB_ROLES = {**KAFKA_ROLES, **{n: (0,) for n in ("logStart", "respLs", "seq", "respSeq", "txn",
                                                  "ctl", "respTxn", "respCtl")}}
# The KRaft controller: each broker's view names its leader (a replica dimension holding
# replica ids: ("id", dims)), and each leader keeps records over the replicas (two dimensions).
KRAFT_ROLES = {**KAFKA_ROLES, "rleo": (0, 1), "lIsr": (0, 1), "bLeader": ("id", 0),
               **{n: (0,) for n in ("bEpoch", "fenced", "elr", "unclean", "flushed")}}


# -- the oracle ----------------------------------------------------------------------------------


def _rename(value, dims, perm, depth=0):
    """A nested list with every member dimension in ``dims`` renamed by ``perm``."""
    if not isinstance(value, list):
        return value
    inner = [_rename(x, dims, perm, depth + 1) for x in value]
    if depth not in dims:
        return inner
    out = [None] * len(inner)
    for i, x in enumerate(inner):
        out[perm[i]] = x
    return out


def renamed(state: dict, perm, roles: dict, kinds: dict) -> dict:
    """``state`` (a readable dict) with member i renamed to perm[i]."""
    out = {}
    for name, value in state.items():
        role = roles.get(name)
        if role is None:
            out[name] = value
        elif role == "id":
            out[name] = perm[value] if value >= 0 else value
        elif role[0] == "id":  # replica ids over a replica dimension
            out[name] = [perm[x] if x >= 0 else x for x in _rename(value, role[1:], perm)]
        elif kinds[name] == "set":
            out[name] = sorted(perm[i] for i in value)
        else:
            out[name] = _rename(value, role, perm)
    return out


class Oracle:
    """Breadth-first search over the interpreter, one state kept per orbit (the first found).

    A state's key is the least byte string of its renamings under every permutation; each
    renaming is a gather of the row's cells (member dimensions) plus a renaming of the id
    cells, derived here from the roles (and checked against ``renamed`` on readable states in
    ``test_the_canonical_form_is_exact``)."""

    def __init__(self, spec, members: int, roles: dict):
        self.spec = spec
        self.interp = Interpreter(spec)
        self.layout = self.interp.layout
        self.perms = list(itertools.permutations(range(members)))
        self.roles = roles
        self.kinds = {v.name: v.kind for v in spec.variables}
        lay = self.layout
        def holds_ids(role) -> bool:
            return role == "id" or (isinstance(role, tuple) and role[0] == "id")

        self.ids = np.array([lay.offsets[v.name] + i for v in spec.variables
                             if holds_ids(roles.get(v.name)) for i in range(v.size)], np.int64)
        self.gathers = []
        for perm in self.perms:
            src = np.arange(lay.stride)
            for v in spec.variables:
                dims = roles.get(v.name)
                if dims is not None and dims != "id" and dims[0] == "id":
                    dims = dims[1:]
                if dims is None or dims == "id":
                    continue
                for idx in itertools.product(*(range(d) for d in v.shape)):
                    new = tuple(perm[i] if d in dims else i for d, i in enumerate(idx))
                    src[lay.cell(v, new)] = lay.cell(v, idx)
            self.gathers.append((src, np.array(perm, np.int64)))

    def permute(self, row, k: int) -> np.ndarray:
        """``row`` renamed by the k-th permutation."""
        src, perm = self.gathers[k]
        out = row[src]
        x = out[self.ids].astype(np.int64)  # the ids' cells after the dimensions' renaming
        out[self.ids] = np.where(x >= 0, perm[np.maximum(x, 0)], x)
        return out

    def key(self, row) -> bytes:
        return min(self.permute(row, k).tobytes() for k in range(len(self.perms)))

    def explore(self) -> dict:
        """Orbits, transitions from the kept states, depth, and the first level at which each
        invariant, action property and reachability check is hit."""
        it, spec = self.interp, self.spec
        state_props = [(i.name, i.expr, False) for i in spec.invariants]
        state_props += [(r.name, r.expr, True) for r in spec.reachables if not reads_next(r.expr)]
        trans_props = [(a.name, a.expr, False) for a in spec.action_properties]
        trans_props += [(r.name, r.expr, True) for r in spec.reachables if reads_next(r.expr)]
        first: dict[str, int] = {}

        def look(row, depth):
            for name, expr, reach in state_props:
                if name not in first and it.holds(expr, row) == reach:
                    first[name] = depth

        init = it.initial()
        seen = {self.key(init)}
        look(init, 0)
        front, depth, generated = [init], 0, 0
        while front:
            nxt = []
            for row in front:
                for inst in it.instances:
                    try:
                        succ = it.step(inst, row)
                    except ModelError:  # leaves the declared domains: counted, no successor
                        generated += 1
                        continue
                    if succ is None:
                        continue
                    generated += 1
                    for name, expr, reach in trans_props:
                        if name not in first and it.holds(expr, row, succ) == reach:
                            first[name] = depth + 1
                    k = self.key(succ)
                    if k not in seen:
                        seen.add(k)
                        nxt.append(succ)
                        look(succ, depth + 1)
            if nxt:
                depth += 1
            front = nxt
        return {"orbits": len(seen), "generated": generated, "depth": depth, "first": first}

    def reachable(self) -> tuple[int, int]:
        """(states, orbits) of the whole reachable state space: a plain BFS, then the orbits
        its states fall into."""
        it = self.interp
        init = it.initial()
        seen = {init.tobytes(): init}
        front = [init]
        while front:
            nxt = []
            for row in front:
                for _, succ in it.successors(row):
                    b = succ.tobytes()
                    if b not in seen:
                        seen[b] = succ
                        nxt.append(succ)
            front = nxt
        return len(seen), len({self.key(r) for r in seen.values()})


def engine_figures(report) -> dict:
    ex = report.exploration
    first = {name: h.length for name, h in ex.hits.items()}
    return {"orbits": ex.distinct, "generated": ex.generated, "depth": ex.depth, "first": first}


def run(spec, engine="local", out=None, **opts):
    opts.setdefault("stop_at_violation", False)
    engine_opts: dict = {"parts": 3} if engine == "partitioned" else {}
    local = {k: opts.pop(k) for k in ("exact", "checkpoint", "checkpoint_every", "resume")
             if k in opts}
    if local:
        engine_opts["local"] = LocalSettings(**local)
    return check(spec, Options(**opts), engine=engine, out=out, run_name="run", **engine_opts)


# -- orbit counts ----------------------------------------------------------------------------------

# Kafka configurations the oracle explores (R=2 and R=3, each truncation, both ISR expansions,
# acks=1, unclean election, min.insync.replicas=2)
ORACLE_KAFKA = [
    Params(2, 2, 3, "hw", "hw"),
    pytest.param(Params(2, 2, 3, "leader-epoch", "hw"), marks=pytest.mark.slow),
    pytest.param(Params(2, 2, 3, "kip-279", "epoch-start", acks="1"), marks=pytest.mark.slow),
    pytest.param(Params(2, 2, 3, "kip-279", "epoch-start", unclean=True), marks=pytest.mark.slow),
    pytest.param(Params(3, 1, 2, "hw", "hw"), marks=pytest.mark.slow),
    pytest.param(Params(3, 1, 2, "kip-279", "epoch-start", min_isr=2, unclean=True),
                 marks=pytest.mark.slow),
    pytest.param(Params(3, 1, 3, "kip-279", "hw"), marks=pytest.mark.slow),
]


@pytest.mark.parametrize("params", ORACLE_KAFKA, ids=lambda p: p.slug())
def test_kafka_orbits_match_the_oracle(params):
    spec = kafka(params)
    want = Oracle(spec, params.R, KAFKA_ROLES).explore()
    got = engine_figures(run(spec, symmetry=True))
    assert got == want


SLOW = pytest.mark.slow
ORACLE_KNOBS = [  # the oracle takes ~20 s a configuration (R3 with transactions, 100 s: the R2
    # case covers transactions, the R3 one with lag:0 three members' renamings of a knob)
    Params(2, 2, 2, "kip-279", "epoch-start", transactions=True),
    pytest.param(Params(2, 2, 2, "kip-279", "epoch-start", producer_retries=True), marks=SLOW),
    pytest.param(Params(2, 2, 2, "kip-279", "epoch-start", producer_retries=True,
                        idempotence=True), marks=SLOW),
    pytest.param(Params(2, 2, 2, "hw", "hw", log_start_offset=True), marks=SLOW),
    pytest.param(Params(3, 1, 2, "kip-279", "hw", isr_shrink="lag:0"), marks=SLOW),
]


@pytest.mark.slow
@pytest.mark.parametrize("params", ORACLE_KNOBS, ids=lambda p: p.slug())
def test_kafka_knob_orbits_match_the_oracle(params):
    spec = kafka(params)
    want = Oracle(spec, params.R, KNOB_ROLES).explore()
    got = engine_figures(run(spec, symmetry=True))
    assert got == want


ORACLE_KRAFT = [  # an array of replica ids over the replicas, two replica dimensions
    pytest.param(Params(2, 1, 2, "kip-279", "epoch-start", controller="kraft"), marks=SLOW),
    pytest.param(Params(2, 1, 2, "kip-279", "epoch-start", min_isr=2, controller="kraft",
                        fencing="kip-320", elr=True), marks=SLOW),
    pytest.param(Params(3, 1, 1, "kip-279", "epoch-start", controller="kraft"), marks=SLOW),
]


@pytest.mark.parametrize("params", ORACLE_KRAFT, ids=lambda p: p.slug())
def test_kraft_orbits_match_the_oracle(params):
    spec = kafka(params)
    want = Oracle(spec, params.R, KRAFT_ROLES).explore()
    got = engine_figures(run(spec, symmetry=True))
    assert got == want


def test_r2_m2_e3_hw_has_6639_orbits_of_10487_states():
    """The orbit count of R=2 M=2 E=3 hw, derived by the oracle from the whole state space."""
    spec = kafka(Params(2, 2, 3, "hw", "hw"))
    assert Oracle(spec, 2, KAFKA_ROLES).reachable() == (10487, 6639)
    assert run(spec, symmetry=True).exploration.distinct == 6639
    assert run(spec).exploration.distinct == 10487


@pytest.mark.slow  # symmetric kernels no other test compiles
@pytest.mark.parametrize("params", [{}, {"members": 3}, {"overflow": True},
                                    {"members": 3, "links": True}],
                         ids=lambda p: "-".join(f"{k}{v}" for k, v in p.items()) or "default")
def test_handoff_orbits_match_the_oracle(params):
    """A protocol that is not Kafka: ids, a domain error, two member dimensions (the canonical
    form over every permutation)."""
    spec = protocols.build(protocols.load(HANDOFF), params)
    oracle = Oracle(spec, spec.params["members"], HANDOFF_ROLES)
    want = oracle.explore()
    report = run(spec, symmetry=True)
    got = engine_figures(report)
    domain = {k: v for k, v in got["first"].items() if k.startswith("DomainError")}
    got["first"] = {k: v for k, v in got["first"].items() if k not in domain}
    assert got == want
    if params.get("overflow"):  # the oracle's interpreter refuses the step the engine reports
        assert domain == {"DomainError(val, Bump)": 1}
    else:
        states, orbits = oracle.reachable()
        assert orbits == got["orbits"] and states == run(spec).exploration.distinct


@pytest.mark.slow
def test_sort_and_every_permutation_give_the_same_orbits():
    """The exact canonical forms (sorting by packed keys, sorting by comparing slices, the
    least renaming over every permutation) pick different representatives, but count the
    same orbits, transitions and depth."""
    from hwcheck.checker.engines.local import LocalEngine

    spec = kafka(Params(3, 1, 3, "kip-279", "epoch-start"))
    figures = []
    for method in ("sort", "compare", "perms"):
        ex = LocalEngine(Kernel(spec, symmetry=True, canon_method=method),
                         Options(stop_at_violation=False)).run()
        figures.append((ex.distinct, ex.generated, ex.depth,
                        sorted((n, h.length) for n, h in ex.hits.items())))
    assert figures[0] == figures[1] == figures[2]


@pytest.mark.parametrize("case", tiered(["kafka-sort", "kafka-compare", "kafka-perms",
                                          "handoff-links"], {"handoff-links"}))
def test_the_canonical_form_is_exact(case):
    """Every renaming of a state has the same representative, and it is a renaming of the
    state: on reachable states of a small configuration, under every permutation."""
    if case.startswith("kafka"):
        spec, roles, n = kafka(Params(3, 1, 2, "kip-279", "hw")), KAFKA_ROLES, 3
        k = Kernel(spec, symmetry=True, canon_method=case.split("-")[1])
    else:
        spec = protocols.build(protocols.load(HANDOFF), {"members": 3, "links": True})
        roles, n = HANDOFF_ROLES, 3
        k = Kernel(spec, symmetry=True)
        assert k.canon_plan.method == "perms"
    oracle = Oracle(spec, n, roles)
    layout, kinds = oracle.layout, oracle.kinds
    it = oracle.interp
    front, seen = [it.initial()], {}
    while front and len(seen) < 6000:  # the first 6,000 reachable states, breadth-first
        nxt = []
        for row in front:
            for _, succ in it.successors(row):
                if succ.tobytes() not in seen:
                    seen[succ.tobytes()] = succ
                    nxt.append(succ)
        front = nxt
    perms = oracle.perms
    for row in list(seen.values())[::5]:
        d = layout.to_dict(row)
        rep = k.canonical(row)
        assert any(layout.to_dict(rep) == renamed(d, p, roles, kinds) for p in perms)
        for i, p in enumerate(perms):
            other = layout.from_dict(renamed(d, p, roles, kinds))
            assert np.array_equal(oracle.permute(row, i), other)  # the oracle's own renaming
            assert np.array_equal(k.canonical(other), rep)


# -- verdicts and shortest violations --------------------------------------------------------------


@pytest.mark.parametrize("row", tiered(MODEL_TABLE, {(2, 2, 3, "hw", "hw")}, key=lambda r: r[:5]),
                         ids=lambda r: f"R{r[0]}M{r[1]}E{r[2]}-{r[3]}-{r[4]}")
def test_model_md_verdicts_and_lengths_are_unchanged(row):
    R, M, E, trunc, exp, distinct, _, _, shortest = row
    report = run(kafka(Params(R, M, E, trunc, exp)), symmetry=True)
    ex = report.exploration
    assert ex.complete and ex.symmetry and ex.distinct < distinct
    assert {o.name: o.length for o in report.violations()} == shortest
    assert report.verdict == ("violated" if shortest else "holds")
    assert all(o.status in ("holds", "violated", "reached") for o in report.outcomes)
    assert report.as_json()["counts"] == "orbits"


@pytest.mark.parametrize("params,violated", [
    (Params(2, 2, 3, "kip-279", "epoch-start", acks="1"), {"AckedNotLost": 3}),
    (Params(2, 2, 3, "kip-279", "epoch-start", unclean=True),
     {"CommittedNotLost": 4, "AckedNotLost": 4, "LogsMatchBelowHw": 5}),
], ids=["acks-1", "unclean"])
@pytest.mark.slow
def test_with_and_without_symmetry_the_same_findings(params, violated):
    plain, reduced = run(kafka(params)), run(kafka(params), symmetry=True)
    for report in (plain, reduced):
        assert {o.name: o.length for o in report.violations()} == violated
    assert [(o.name, o.status, o.length) for o in plain.outcomes] == \
        [(o.name, o.status, o.length) for o in reduced.outcomes]


def test_stops_at_the_same_first_violating_level():
    report = run(kafka(Params(2, 2, 3, "hw", "hw")), symmetry=True, stop_at_violation=True)
    assert report.exploration.depth == 8
    assert {o.name: o.length for o in report.violations()} == {
        "CommittedNotLost": 8, "AckedNotLost": 8}


# -- traces ----------------------------------------------------------------------------------------


def hwcheck(*args):
    return subprocess.run([sys.executable, "-m", "hwcheck.checker", *args], capture_output=True,
                          text=True)


@pytest.mark.parametrize("args", [
    ["-R", "3", "-M", "1", "-E", "3", "--truncation", "kip-279"],
    ["-R", "2", "-M", "2", "-E", "3", "--truncation", "leader-epoch"],
    ["--spec", HANDOFF, "--param", "overflow=true"],
    ["--spec", HANDOFF, "--param", "members=3", "--param", "links=true"],
    ["--spec", HANDOFF, "--param", "members=3", "--param", "oob=true"],
], ids=["kip-279-r3", "kip-101", "handoff-overflow", "handoff-links", "handoff-oob"])
@pytest.mark.slow
def test_every_trace_found_with_symmetry_replays(args, tmp_path):
    res = hwcheck("check", *args, "--symmetry", "--continue", "--out", str(tmp_path),
                  "--run-name", "sym", "--quiet")
    assert res.returncode == 12, res.stderr
    assert "(orbits)" in res.stdout and "note: symmetry:" in res.stdout
    traces = sorted((tmp_path / "sym").glob("*.itf.json"))
    assert traces
    given = args[:2] if args[0] == "--spec" else []  # a spec file is the user's to give
    for t in traces:
        rep = hwcheck("replay", str(t), *given)
        assert rep.returncode == 0, (t.name, rep.stdout + rep.stderr)
        assert rep.stdout.startswith("replay: confirmed: ")


def test_a_transition_trace_ends_with_the_step_that_breaks_it():
    """With two members, Drop(1) and Handoff(1) from the initial state reach the same orbit;
    only Handoff breaks LeaderKeepsValue, and the engine stepped a renamed state (leader 0)."""
    spec = protocols.build(protocols.load(HANDOFF), {})
    report = run(spec, symmetry=True)
    (v,) = [o for o in report.violations() if o.name == "LeaderKeepsValue"]
    assert v.trace.actions == ["Handoff(1)"]
    assert v.trace.states[0]["leader"] == 1


@pytest.mark.slow
def test_traces_start_at_the_real_initial_state_and_keep_their_length():
    report = run(kafka(Params(3, 1, 3, "kip-279", "hw")), symmetry=True)
    interp = Interpreter(report.spec)
    init = interp.layout.to_dict(interp.initial())
    for o in report.violations():
        assert o.trace.states[0] == init
        assert o.trace.length == o.length == {"CommittedNotLost": 12, "AckedNotLost": 12,
                                              "LogsMatchBelowHw": 14}[o.name]


# -- engines ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("params", [Params(2, 2, 3, "hw", "hw"),
                                    pytest.param(Params(3, 1, 3, "kip-279", "hw"),
                                                 marks=pytest.mark.slow)],
                         ids=lambda p: p.slug())
def test_partitioned_engine_agrees(params, tmp_path):
    """The same orbits, transitions, depth and traces (byte for byte but the engine's name)."""
    local = run(kafka(params), out=tmp_path / "local", symmetry=True)
    parts = run(kafka(params), "partitioned", out=tmp_path / "parts", symmetry=True)
    assert engine_figures(local) == engine_figures(parts)
    assert parts.exploration.symmetry
    lfiles = sorted((tmp_path / "local" / "run").glob("*.itf.json"))
    assert lfiles
    for f in lfiles:
        other = tmp_path / "parts" / "run" / f.name
        assert f.read_text().replace('"local"', '"partitioned"') == other.read_text()


@pytest.mark.parametrize("params, orbits", [
    (Params(2, 2, 3, "hw", "hw"), 6639),
    (Params(2, 2, 3, "kip-279", "epoch-start", unclean=True), None),
], ids=["R2M2E3-hw", "unclean"])
@pytest.mark.slow
def test_workers_with_symmetry_agree_with_one_worker(params, orbits, tmp_path):
    """--symmetry --workers 2: expand_split canonicalises every successor as expand_dedup does,
    so the orbits, levels, findings and trace files (byte for byte) are one worker's."""
    reports, written = [], []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        report = check(kafka(params), Options(stop_at_violation=False, symmetry=True), out=out,
                       run_name="run", workers=workers)
        assert report.exploration.stats["workers"] == workers
        assert report.exploration.symmetry
        assert report.violations()
        reports.append(report)
        written.append({p.relative_to(out).as_posix(): p.read_bytes()
                        for p in sorted(out.rglob("*")) if p.is_file()})
    one, two = reports
    assert engine_figures(one) == engine_figures(two)
    if orbits is not None:
        assert one.exploration.distinct == two.exploration.distinct == orbits
    assert any(name.endswith(".itf.json") for name in written[0])
    assert written[0] == written[1]


def test_expand_split_canonicalises_only_in_a_symmetric_kernel():
    spec = kafka(Params(2, 2, 3, "hw", "hw"))
    plain, sym = Kernel(spec).source, Kernel(spec, symmetry=True).source
    assert "canon(" not in plain
    body = sym[sym.index("def expand_split("):]
    assert "sym_work = np.empty(SYM_WORK, np.int64)" in body
    assert "canon(t, sym_row, sym_work)" in body


@pytest.mark.slow
def test_exact_and_symmetry_together():
    spec = kafka(Params(2, 2, 3, "hw", "hw"))
    assert run(spec, symmetry=True, exact=True).exploration.distinct == 6639


@NEEDS_JAVA
@pytest.mark.slow
def test_spark_engine_with_symmetry(tmp_path):
    """The executors rebuild the symmetric kernel (LevelTask.symmetry) and agree with the local
    engine, traces included."""
    pytest.importorskip("pyspark")
    from hwcheck.checker.spark import session

    spark = {"master": "local[2]", "partitions": 4}
    session.spark_context(spark["master"], spark["partitions"])
    spec = kafka(Params(3, 1, 3, "kip-279", "hw"))
    local = run(spec, out=tmp_path / "local", symmetry=True)
    report = check(kafka(Params(3, 1, 3, "kip-279", "hw")), Options(stop_at_violation=False,
                                                                    symmetry=True),
                   engine="spark", out=tmp_path / "spark", run_name="run", **spark)
    assert engine_figures(report) == engine_figures(local)
    assert report.exploration.distinct == 15310
    for f in sorted((tmp_path / "local" / "run").glob("*.itf.json")):
        other = tmp_path / "spark" / "run" / f.name
        assert f.read_text().replace('"local"', '"spark"') == other.read_text()


# -- the declaration, the kernel key, refusals ---------------------------------------------


def test_kafka_declares_every_variable_under_every_knob():
    for R in (1, 2, 3):
        for t, e, a, u in itertools.product(("hw", "leader-epoch", "kip-279"),
                                            ("hw", "epoch-start"), ("0", "1", "all"),
                                            (False, True)):
            spec = kafka(Params(R, 2, 3, t, e, a, 1, u))
            sym = declared(spec)  # raises if a variable is missing or listed twice
            listed = set(sym["dims"]) | set(sym["ids"]) | set(sym["other"])
            assert listed == {v.name for v in spec.variables}
            assert {n for n, r in KAFKA_ROLES.items() if r == "id"} == set(sym["ids"])
            assert {n: r for n, r in KAFKA_ROLES.items() if r != "id"} == sym["dims"]


def test_the_kernel_key_includes_symmetry():
    from hwcheck.checker.engines.partition import KernelMismatch, LevelTask
    from hwcheck.checker.protocols import SpecRef
    from hwcheck.checker.semantics.codegen import generate, source_key

    spec = kafka(Params(2, 2, 3, "hw", "hw"))
    plain, reduced = Kernel(spec), Kernel(spec, symmetry=True)
    assert plain.key != reduced.key
    assert plain.key == source_key(generate(spec))  # symmetry off: the source it always was
    assert "canon(" not in plain.source and "canon(t, sym_row, sym_work)" in reduced.source
    task = LevelTask(SpecRef.of(spec), reduced.key, 2, (True,), (True,), True)
    assert task.kernel().key == reduced.key
    wrong = dataclasses.replace(task, symmetry=False)
    from hwcheck.checker.engines import partition

    partition._kernels.pop(reduced.key, None)
    with pytest.raises(KernelMismatch):
        wrong.kernel()


def test_symmetry_without_a_declaration_is_one_line():
    res = hwcheck("check", "--spec", str(SPECS / "two_phase.py"), "--symmetry")
    assert res.returncode == 2
    assert res.stderr.strip() == "hwcheck: error: --symmetry: two-phase declares no symmetry"
    with pytest.raises(SpecError, match="declares no symmetry"):
        Kernel(protocols.build(protocols.load(str(SPECS / "two_phase.py")), {}), symmetry=True)


@pytest.mark.slow
def test_a_declaration_that_misses_a_variable_is_refused(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text(
        "import dataclasses\n"
        "from hwcheck.spec.kafka import PROTOCOL as K\n"
        "from hwcheck.spec.protocol import Symmetry\n"
        "def sym(spec):\n"
        "    s = K.checking.symmetry(spec)\n"
        "    dims = {k: v for k, v in s.dims.items() if k != 'respHw'}\n"
        "    return Symmetry(s.size, dims, s.ids, s.other)\n"
        "PROTOCOL = dataclasses.replace(K, checking=dataclasses.replace(K.checking, "
        "symmetry=sym))\n")
    res = hwcheck("check", "--spec", str(broken), "--symmetry", "--out", str(tmp_path / "o"))
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "respHw" in lines[0] and lines[0].startswith("hwcheck: error:")
    assert not (tmp_path / "o").exists()
    res = hwcheck("check", "--spec", str(broken), "--no-symmetry", "--max-states", "10",
                  "--out", str(tmp_path / "o"))
    assert res.returncode == 3  # without --symmetry the declaration is not used


def test_a_checkpoint_remembers_the_symmetry_setting(tmp_path):
    from hwcheck.checker.engines.checkpoint import CheckpointError

    spec = kafka(Params(2, 2, 3, "hw", "hw"))
    ck = tmp_path / "ck"
    first = run(spec, symmetry=True, checkpoint=ck, checkpoint_every=0, max_states=1000)
    assert first.verdict == "unknown"
    with pytest.raises(CheckpointError, match="symmetry"):
        run(spec, resume=ck)
    resumed = run(spec, symmetry=True, resume=ck)
    assert resumed.exploration.complete and resumed.exploration.distinct == 6639
