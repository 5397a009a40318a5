"""A model-checking run: a plan (``plan.py``) carried out: the spec explored by its level source,
its hits turned into traces on disk, and the report with its figures typed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.checker.plan import CheckPlan, Source
from hwcheck.checker.search.exploration import Exploration, interrupt_reason
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.traces.output import clear_stale, prepare_run_folder, write_trace
from hwcheck.checker.traces.trace import Trace, from_path
from hwcheck.spec.lang import Spec
from hwcheck.spec.protocol import protocol_of
from hwcheck.spec.verdicts import Verdict

if TYPE_CHECKING:
    from hwcheck.checker.engines.partitioned import LevelEngine
    from hwcheck.checker.graph.liveness import LiveOutcome
    from hwcheck.checker.graph.recover import Recoverability

# -- the figures of a run ---------------------------------------------------------------------


@dataclass(frozen=True)
class InitialStates:
    """The initial states, and Init's choices that give one (TLC counts those as generated)."""

    states: int
    choices: int


@dataclass(frozen=True)
class GraphFigures:
    """The state graph the liveness properties were decided on."""

    states: int
    transitions: int
    complete: bool
    explore_seconds: float
    liveness_seconds: float
    properties: int  # the liveness properties asked
    decided: int  # those decided (the rest unknown: a stop came first)

    def as_json(self) -> dict[str, Any]:
        return {"states": self.states, "transitions": self.transitions,
                "complete": self.complete, "explore_seconds": self.explore_seconds,
                "liveness_seconds": self.liveness_seconds, "properties": self.properties,
                "decided": self.decided}


@dataclass(frozen=True)
class LivenessFigures:
    """One liveness property's decision on the state graph."""

    status: str
    fair_states: int
    seconds: float
    note: str
    at_bound_lasso: int | None  # the length of a fair lasso only at the model's bounds

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "fair_states": self.fair_states, "seconds": self.seconds,
                "note": self.note, "at_bound_lasso": self.at_bound_lasso}

    def note_line(self) -> str:
        """What a property's outcome notes of its decision."""
        if self.note:
            return self.note
        if self.at_bound_lasso is not None:
            return (f"a fair lasso of {self.at_bound_lasso} steps breaks it only at the model's "
                    "bounds (its cycle lies in states the protocol marks at_bound); not a "
                    "finding")
        return ""


@dataclass(frozen=True)
class MemoryFigures:
    """The local engine's and the state graph's memory and disk."""

    peak_rss: int
    explore_bytes_per_state: float  # above the memory held when the exploration started
    disk_bytes: int  # the most the work folder held

    def as_json(self) -> dict[str, Any]:
        return {"peak_rss": self.peak_rss,
                "bytes_per_state": round(self.explore_bytes_per_state, 2),
                "disk_bytes": self.disk_bytes}


@dataclass(frozen=True)
class SparkFigures:
    """The Spark engine's memory plan (``spark/memory.py``) and what its workers used."""

    memory: dict[str, Any]  # the plan's own figures, as it states them
    worker_peak_rss: int | None
    partitions: int | None

    def as_json(self) -> dict[str, Any]:
        return {**self.memory, "worker_peak_rss": self.worker_peak_rss,
                "partitions": self.partitions}


@dataclass(frozen=True)
class Coverage:
    """Per action instance: the explored states that enable it, the new states it reached
    first."""

    enabled: list[int]
    new: list[int]


@dataclass(frozen=True)
class CheckStats:
    """What a check run reports beside its counts: read once from its level source's figures
    (``Exploration.stats``) and from what the run decided after the search."""

    workers: int | None = None
    initial: InitialStates | None = None  # None: stopped before the exploration started
    coverage: Coverage | None = None  # None: the engine does not count it (Spark, a resume)
    graph: GraphFigures | None = None  # liveness properties decided on the state graph
    liveness: dict[str, LivenessFigures] = field(default_factory=dict)
    memory: MemoryFigures | None = None
    spark: SparkFigures | None = None

    @classmethod
    def of(cls, ex: Exploration, initial: InitialStates | None = None,
           graph: GraphFigures | None = None,
           liveness: dict[str, LivenessFigures] | None = None) -> CheckStats:
        st = ex.stats
        cov = st.get("coverage")
        return cls(
            workers=st.get("workers"), initial=initial,
            coverage=None if cov is None else Coverage(list(cov["enabled"]), list(cov["new"])),
            graph=graph, liveness=dict(liveness or {}),
            memory=MemoryFigures(st["peak_rss"], st["explore_bytes_per_state"],
                                 st["disk_bytes"]) if "disk_bytes" in st else None,
            spark=SparkFigures(dict(st["spark_memory"]), st.get("worker_peak_rss"),
                               st.get("partitions")) if "spark_memory" in st else None)


@dataclass
class PropertyOutcome:
    name: str
    kind: str  # invariant | action | reachable
    status: str  # holds | violated | unknown | reached | unreached
    length: int | None = None
    trace: Trace | None = None
    files: list[Path] = field(default_factory=list)
    note: str = ""  # why a found hit has no trace (or no file)


@dataclass
class Report:
    spec: Spec
    exploration: Exploration
    outcomes: list[PropertyOutcome]
    run_name: str
    recovery: Recoverability | None = None  # check --recoverable: found in the same exploration
    stats: CheckStats = field(default_factory=CheckStats)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.spec.params)

    @property
    def verdict(self) -> str:
        return self.exploration.verdict

    def coverage(self) -> dict[str, dict[str, int]] | None:
        """Per action (in declaration order): the explored states that enable it (any of its
        instances) and the new states it was the first to reach; None when the engine does not
        count them (Spark, a resumed run)."""
        cov = self.stats.coverage
        if cov is None:
            return None
        out: dict[str, dict[str, int]] = {a.name: {"enabled": 0, "new": 0}
                                          for a in self.spec.actions}
        for inst in self.spec.instances():
            out[inst.action.name]["enabled"] += cov.enabled[inst.index]
            out[inst.action.name]["new"] += cov.new[inst.index]
        return out

    def never_enabled(self) -> list[str]:
        cov = self.coverage()
        return [] if cov is None else [a for a, c in cov.items() if c["enabled"] == 0]

    def violations(self) -> list[PropertyOutcome]:
        return [o for o in self.outcomes if o.status == "violated"]

    def as_json(self) -> dict[str, Any]:
        ex, st = self.exploration, self.stats
        return {
            "command": "check",
            "verdict": self.verdict,
            "protocol": self.spec.source or self.spec.name,
            "params": self.params,
            "distinct": ex.distinct,
            "symmetry": ex.symmetry,
            "counts": "orbits" if ex.symmetry else "states",
            "generated": ex.generated,
            "depth": ex.depth,
            **({"initial_states": st.initial.states, "initial_choices": st.initial.choices}
               if st.initial is not None else {}),
            "seconds": round(ex.seconds, 3),
            "violations": [violation_json(o.name, o.kind, o.length, o.files, o.note)
                           for o in self.violations()],
            "collision_probability": ex.collision_probability,
            "reachability": {o.name: o.status for o in self.outcomes if o.kind == "reachable"},
            "complete": ex.complete,
            "stop_reason": ex.stop_reason,
            "partial_level": ex.partial_level,
            "engine": ex.engine,
            "workers": st.workers,
            "coverage": self.coverage(),
            **({"liveness": {"graph": st.graph.as_json(),
                             **{n: f.as_json() for n, f in st.liveness.items()}}}
               if st.graph is not None else {}),
            **({"spark": st.spark.as_json()} if st.spark is not None else {}),
            **({"memory": st.memory.as_json()} if st.memory is not None else {}),
        }


def violation_json(name: str, kind: str, length: int | None, files: Sequence[Path],
                   note: str = "") -> dict[str, Any]:
    """One violation in a --json object; the same fields for every command."""
    out: dict[str, Any] = {"property": name, "kind": kind, "length": length,
           "trace": str(files[0]) if files else None}
    if note:
        out["note"] = note
    return out


def make_engine(plan: CheckPlan, kernel: Kernel) -> LocalEngine | LevelEngine:
    """The engine a plan's level source names (the state graph is ``check_on_graph``'s)."""
    if plan.source is Source.LOCAL:
        return LocalEngine(kernel, plan.options, plan.workers, plan.local)
    if plan.source is Source.SPARK:
        from hwcheck.checker.spark.engine import SparkEngine

        return SparkEngine(kernel, plan.options, **plan.engine_opts)
    if plan.source is Source.PARTITIONED:  # the Spark engine's algorithm, in this process
        from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine

        return LevelEngine(kernel, plan.options, InProcessBackend(**plan.engine_opts))
    raise ValueError(f"no engine explores the {plan.source.value}")


def run_name_of(spec: Spec) -> str:
    """The default folder name of a run: the protocol's name for the parameter set."""
    return protocol_of(spec).name_of(spec.params)


def check(spec: Spec, opts: Options, engine: str = "local", out: Path | None = None,
          run_name: str | None = None, write_witnesses: bool = False,
          recoverable: bool = False, local: LocalSettings | None = None,
          **engine_opts: Any) -> Report:
    """Explore ``spec``; write a trace per violation under ``out/run_name``: ``execute`` of
    the plan ``CheckPlan.build`` makes of the arguments (a refused combination raises
    ``PlanError``, a ``SpecError``).

    ``recoverable``: explore the state graph instead (every transition kept, on the local
    engine's ``workers``) and decide recoverability on it too, in the same exploration
    (``graph.recover``); so do the spec's liveness properties that ``opts`` selects."""
    plan = CheckPlan.build(spec, opts, engine, recoverable, local, **engine_opts)
    return execute(plan, out, run_name, write_witnesses)


def execute(plan: CheckPlan, out: Path | None = None, run_name: str | None = None,
            write_witnesses: bool = False) -> Report:
    """Carry out ``plan``; write a trace per violation under ``out/run_name``.

    Whatever stops the run (Ctrl-C, SIGTERM, out of memory, a limit), the report says what was
    found: a run is complete only when every level was explored and every hit became a trace.
    An interrupt before the exploration starts (while the kernel compiles) gives an empty,
    incomplete run; one while traces are built keeps the hits whose traces are not yet built,
    without a trace."""
    spec, opts = plan.spec, plan.options
    run_name = run_name or run_name_of(spec)
    folder, identity = None, run_identity(spec, "check")
    if out is not None:  # before exploring: an unusable folder is said at once
        folder = prepare_run_folder(Path(out), run_name, identity)
    from hwcheck.checker.engines.checkpoint import require_writable

    if plan.local.checkpoint is not None and plan.local.resume is None:  # likewise
        require_writable(plan.local.checkpoint, "--checkpoint")
    if plan.local.workdir is not None:  # likewise (the state graph makes it when first needed)
        require_writable(plan.local.workdir, "--workdir", levels=False)
    canon = None  # under symmetry: the representative of a state, to rebuild paths concretely
    recovered: Recoverability | None = None
    initial, graph_figures = None, None
    live: dict[str, LivenessFigures] = {}
    try:
        kernel = Kernel(spec, symmetry=opts.symmetry)
        canon = kernel.canonical if kernel.symmetric else None
        if plan.on_graph:
            ex, recovered, graph_figures, live = _on_graph(plan, kernel)
        else:
            ex = make_engine(plan, kernel).run()
        initial = InitialStates(len(kernel.initials), kernel.init_generated)
    except (KeyboardInterrupt, MemoryError) as e:
        ex = Exploration(plan.engine, checked=checked_properties(spec, opts),
                         stop_reason=interrupt_reason(e) + " before the exploration started")
    stats = CheckStats.of(ex, initial, graph_figures, live)
    outcomes = _outcomes(spec, ex, stats, canon, write_witnesses, folder, identity)
    return Report(spec, ex, outcomes, run_name, recovered, stats)


def _on_graph(plan: CheckPlan, kernel: Kernel) -> tuple[
        Exploration, Recoverability | None, GraphFigures | None, dict[str, LivenessFigures]]:
    """The check on the state graph, with recoverability and the liveness properties decided
    in the same exploration."""
    from hwcheck.checker.graph.recover import check_on_graph

    ex, recovered, graph, outs = check_on_graph(
        kernel, plan.options, recoverable=plan.recoverable, liveness=plan.liveness,
        workers=plan.workers, local=plan.local)
    figures = None
    if plan.liveness:
        figures = GraphFigures(graph.n, graph.nedges, graph.complete, round(graph.seconds, 3),
                               round(graph.stats["liveness_seconds"], 3), len(outs),
                               sum(o.status != Verdict.UNKNOWN for o in outs))
    return ex, recovered, figures, add_liveness(ex, outs)


def _outcomes(spec: Spec, ex: Exploration, stats: CheckStats, canon: Any,
              write_witnesses: bool, folder: Path | None,
              identity: dict[str, Any]) -> list[PropertyOutcome]:
    """Each checked property's outcome, its hit's trace rebuilt and written under
    ``folder``."""
    interp = Interpreter(spec)
    outcomes: list[PropertyOutcome] = []
    try:
        for name, kind in ex.checked:
            o = PropertyOutcome(name, kind, ex.status(name, kind))
            outcomes.append(o)
            hit = ex.hits.get(name)
            if kind == "liveness":
                o.note = stats.liveness[name].note_line()
            if hit is None:
                continue
            o.length = hit.length
            if hit.lasso is not None:
                from hwcheck.checker.traces.lasso import from_lasso

                o.trace = from_lasso(spec, interp, name, "graph", hit.lasso.prefix,
                                     hit.lasso.cycle)
            elif hit.path is None:
                o.note = "its trace was not rebuilt (the run was stopped first)"
                continue
            else:
                o.trace = from_path(spec, interp, name, kind, ex.engine, hit.path, canon)
            if folder is not None and (kind != "reachable" or write_witnesses):
                try:
                    o.files = write_trace(spec, o.trace, folder, identity=identity)
                except OSError as e:
                    o.note = f"its trace could not be written: {e.strerror or e}"
        if folder is not None and ex.complete:  # exactly this run's traces in the folder
            clear_stale(folder, [n for n, _ in ex.checked], [f for o in outcomes for f in o.files])
    except (KeyboardInterrupt, MemoryError) as e:
        ex.complete = False
        ex.stop_reason = interrupt_reason(e) + " while traces were built"
        done = {o.name for o in outcomes}
        for name, kind in ex.checked:  # the rest, with what is known of them
            if name not in done:
                hit = ex.hits.get(name)
                outcomes.append(PropertyOutcome(
                    name, kind, ex.status(name, kind), hit.length if hit else None,
                    note="its trace was not rebuilt (the run was stopped first)" if hit else ""))
    return outcomes


def add_liveness(ex: Exploration, outs: list[LiveOutcome]) -> dict[str, LivenessFigures]:
    """The liveness verdicts decided on the state graph, as the exploration's: a violation is a
    hit with its lasso; a lasso that exists only at the model's bounds is a note. Returns each
    property's figures."""
    from hwcheck.checker.search.exploration import Hit

    figures: dict[str, LivenessFigures] = {}
    for o in outs:
        ex.checked.append((o.name, "liveness"))
        ex.decided[o.name] = o.status
        if o.lasso is not None:
            ex.hits[o.name] = Hit(o.name, "liveness", o.lasso.length, None, o.lasso)
        figures[o.name] = LivenessFigures(
            str(o.status), o.fair_states, round(o.seconds, 3), o.note,
            o.at_bound.length if o.at_bound is not None else None)
    return figures


def run_identity(spec: Spec, command: str) -> dict[str, Any]:
    """What a run folder's traces are of: the command, the protocol and its parameters."""
    return {"command": command, "protocol": spec.source or spec.name,
            "params": dict(spec.params)}


def checked_properties(spec: Spec, opts: Options) -> list[tuple[str, str]]:
    """(name, kind) of every property a run with ``opts`` checks, in the kernel's order."""
    from hwcheck.checker.semantics.signatures import Properties

    props = Properties.of(spec)
    want = None if opts.properties is None else set(opts.properties)
    return [(n, k) for n, _, k in props.state + props.transition
            if (opts.reachability if k == "reachable" else want is None or n in want)]
