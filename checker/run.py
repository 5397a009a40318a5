"""A model-checking run: a spec, explored by an engine, its hits turned into traces on disk."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.search.exploration import Exploration, interrupt_reason
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.traces.output import clear_stale, prepare_run_folder, write_trace
from hwcheck.checker.traces.trace import Trace, from_path
from hwcheck.spec.lang import Spec, SpecError
from hwcheck.spec.protocol import protocol_of
from hwcheck.spec.verdicts import Verdict

if TYPE_CHECKING:
    from hwcheck.checker.engines.partitioned import LevelEngine
    from hwcheck.checker.graph.liveness import LiveOutcome
    from hwcheck.spec.lang import Liveness

ENGINES = ("local", "spark", "partitioned")


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
    recovery: Any = None  # check --recoverable: the Recoverability found in the same exploration

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
        cov = self.exploration.stats.get("coverage")
        if cov is None:
            return None
        out: dict[str, dict[str, int]] = {a.name: {"enabled": 0, "new": 0}
                                          for a in self.spec.actions}
        for inst in self.spec.instances():
            out[inst.action.name]["enabled"] += cov["enabled"][inst.index]
            out[inst.action.name]["new"] += cov["new"][inst.index]
        return out

    def never_enabled(self) -> list[str]:
        cov = self.coverage()
        return [] if cov is None else [a for a, c in cov.items() if c["enabled"] == 0]

    def violations(self) -> list[PropertyOutcome]:
        return [o for o in self.outcomes if o.status == "violated"]

    def as_json(self) -> dict[str, Any]:
        ex = self.exploration
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
            **({"initial_states": ex.stats["initial"]["states"],
                "initial_choices": ex.stats["initial"]["choices"]}
               if "initial" in ex.stats else {}),
            "seconds": round(ex.seconds, 3),
            "violations": [violation_json(o.name, o.kind, o.length, o.files, o.note)
                           for o in self.violations()],
            "collision_probability": ex.collision_probability,
            "reachability": {o.name: o.status for o in self.outcomes if o.kind == "reachable"},
            "complete": ex.complete,
            "stop_reason": ex.stop_reason,
            "partial_level": ex.partial_level,
            "engine": ex.engine,
            "workers": ex.stats.get("workers"),
            "coverage": self.coverage(),
            **({"liveness": {"graph": ex.stats["graph"], **ex.stats.get("liveness", {})}}
               if "graph" in ex.stats else {}),
            **({"spark": {**ex.stats["spark_memory"],
                          "worker_peak_rss": ex.stats.get("worker_peak_rss"),
                          "partitions": ex.stats.get("partitions")}}
               if "spark_memory" in ex.stats else {}),
            **({"memory": {"peak_rss": ex.stats["peak_rss"],
                           "bytes_per_state": round(ex.stats["explore_bytes_per_state"], 2),
                           "disk_bytes": ex.stats["disk_bytes"]}}
               if "disk_bytes" in ex.stats else {}),
        }


def violation_json(name: str, kind: str, length: int | None, files: Sequence[Path],
                   note: str = "") -> dict[str, Any]:
    """One violation in a --json object; the same fields for every command."""
    out: dict[str, Any] = {"property": name, "kind": kind, "length": length,
           "trace": str(files[0]) if files else None}
    if note:
        out["note"] = note
    return out


def make_engine(name: str, kernel: Kernel, opts: Options,
                **engine_opts: Any) -> LocalEngine | LevelEngine:
    if name == "local":
        return LocalEngine(kernel, opts, **engine_opts)
    if name == "spark":
        from hwcheck.checker.spark.engine import SparkEngine

        return SparkEngine(kernel, opts, **engine_opts)
    if name == "partitioned":  # the Spark engine's algorithm, every partition in this process
        from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine

        return LevelEngine(kernel, opts, InProcessBackend(**engine_opts))
    raise ValueError(f"unknown engine {name!r} (known: {', '.join(ENGINES)})")


def run_name_of(spec: Spec) -> str:
    """The default folder name of a run: the protocol's name for the parameter set."""
    return protocol_of(spec).name_of(spec.params)


def check(spec: Spec, opts: Options, engine: str = "local", out: Path | None = None,
          run_name: str | None = None, write_witnesses: bool = False,
          recoverable: bool = False, **engine_opts: Any) -> Report:
    """Explore ``spec``; write a trace per violation under ``out/run_name``.

    ``recoverable``: explore the state graph instead (every transition kept, on the local
    engine's ``workers``) and decide recoverability on it too, in the same exploration
    (``graph.recover``).

    Whatever stops the run (Ctrl-C, SIGTERM, out of memory, a limit), the report says what was
    found: a run is complete only when every level was explored and every hit became a trace.
    An interrupt before the exploration starts (while the kernel compiles) gives an empty,
    incomplete run; one while traces are built keeps the hits whose traces are not yet built,
    without a trace."""
    run_name = run_name or run_name_of(spec)
    if opts.symmetry:  # a protocol without a (sound) declaration is refused before anything
        from hwcheck.checker.semantics.symmetry import declared

        declared(spec)
    folder, identity = None, run_identity(spec, "check")
    if out is not None:  # before exploring: an unusable folder is said at once
        folder = prepare_run_folder(Path(out), run_name, identity)
    if opts.checkpoint is not None and opts.resume is None:  # likewise
        from hwcheck.checker.engines.checkpoint import require_writable

        require_writable(Path(str(opts.checkpoint)), "--checkpoint")
    canon = None  # under symmetry: the representative of a state, to rebuild paths concretely
    recovered = None
    live = liveness_selected(spec, opts.properties)
    if spec.view is not None and (opts.symmetry or opts.exact or live or recoverable):
        raise SpecError("a spec with a VIEW is checked without --symmetry, --exact, "
                        "--recoverable and liveness properties (each reads whole states)")
    if live and opts.symmetry:
        raise SpecError("liveness properties are checked without --symmetry (fairness is per "
                        "action instance, which a renaming of the members changes)")
    try:
        kernel = Kernel(spec, symmetry=opts.symmetry)
        canon = kernel.canonical if kernel.symmetric else None
        if recoverable or live:
            from hwcheck.checker.graph.recover import check_on_graph

            ex, recovered, graph, outs = check_on_graph(
                kernel, opts, recoverable=recoverable, liveness=live,
                workers=engine_opts.get("workers", 1))
            if live:
                ex.stats["graph"] = {"states": graph.n, "transitions": graph.nedges,
                                     "complete": graph.complete,
                                     "explore_seconds": round(graph.seconds, 3),
                                     "liveness_seconds": round(graph.stats["liveness_seconds"],
                                                               3),
                                     "properties": len(outs),
                                     "decided": sum(o.status != Verdict.UNKNOWN for o in outs)}
            add_liveness(ex, outs)
        else:
            ex = make_engine(engine, kernel, opts, **engine_opts).run()
        # the initial states, and Init's choices that give one (TLC counts those as generated)
        ex.stats["initial"] = {"states": len(kernel.initials), "choices": kernel.init_generated}
    except (KeyboardInterrupt, MemoryError) as e:
        ex = Exploration(engine, checked=checked_properties(spec, opts),
                         stop_reason=interrupt_reason(e) + " before the exploration started")
    interp = Interpreter(spec)
    outcomes = []
    try:
        for name, kind in ex.checked:
            o = PropertyOutcome(name, kind, ex.status(name, kind))
            outcomes.append(o)
            hit = ex.hits.get(name)
            if kind == "liveness":
                o.note = liveness_note(ex.stats["liveness"][name])
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
    return Report(spec, ex, outcomes, run_name, recovered)


def liveness_selected(spec: Spec, properties: Iterable[str] | None) -> list[Liveness]:
    """The liveness properties a run checking ``properties`` decides: all of them (None), or
    those named."""
    want = None if properties is None else set(properties)
    return [p for p in spec.liveness if want is None or p.name in want]


def add_liveness(ex: Exploration, outs: list[LiveOutcome]) -> None:
    """The liveness verdicts decided on the state graph, as the exploration's: a violation is a
    hit with its lasso; a lasso that exists only at the model's bounds is a note."""
    from hwcheck.checker.search.exploration import Hit

    for o in outs:
        ex.checked.append((o.name, "liveness"))
        ex.decided[o.name] = o.status
        if o.lasso is not None:
            ex.hits[o.name] = Hit(o.name, "liveness", o.lasso.length, None, o.lasso)
        ex.stats.setdefault("liveness", {})[o.name] = {
            "status": str(o.status), "fair_states": o.fair_states,
            "seconds": round(o.seconds, 3), "note": o.note,
            "at_bound_lasso": o.at_bound.length if o.at_bound is not None else None}


def liveness_note(info: dict[str, Any]) -> str:
    if info["note"]:
        note: str = info["note"]
        return note
    if info["at_bound_lasso"] is not None:
        return (f"a fair lasso of {info['at_bound_lasso']} steps breaks it only at the model's "
                "bounds (its cycle lies in states the protocol marks at_bound); not a finding")
    return ""


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
