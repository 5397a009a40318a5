"""The plan of one check run: what was asked (``CheckRequest``, the command line's options as
parsed), the combinations of options refused, each in one line naming them (``PlanError``:
every refusal is here and nowhere else), and what the run will do (``CheckPlan``): the spec,
what every engine reads (``Options``), the level source (the local engine, the partitioned
engine in this process, Spark, or the state graph when the run needs every transition:
recoverability, liveness), its workers and its own settings. ``run.execute`` carries a plan
out."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hwcheck.checker.engines.options import LocalSettings, Options
from hwcheck.spec.lang import Liveness, Spec, SpecError


class PlanError(SpecError):
    """A combination of options refused before anything runs: one line naming the options
    (the command line exits 2)."""


class Source(enum.Enum):
    """Where a run's levels come from (``search/driver.py``'s level source)."""

    LOCAL = "local"  # the local engine: N worker threads
    PARTITIONED = "partitioned"  # the Spark engine's algorithm, every partition in this process
    SPARK = "spark"  # the partitioned engine over Spark
    GRAPH = "state graph"  # every transition kept: recoverability, liveness


ENGINES = ("local", "spark", "partitioned")


@dataclass(frozen=True)
class CheckRequest:
    """What ``hwcheck check`` was asked, as its options were parsed (sizes in bytes, nothing
    judged yet)."""

    properties: tuple[str, ...] = ()  # --property (empty: all)
    keep_going: bool = False  # --continue
    max_states: int | None = None
    max_seconds: float | None = None
    max_memory: int | None = None
    symmetry: bool = False
    engine: str = "local"
    workers: int | None = None  # --workers (None: the default for the spec)
    local: LocalSettings = field(default_factory=LocalSettings)  # --exact, --checkpoint ...
    spark_master: str = "local[*]"
    partitions: int | None = None
    spark_slice: int | None = None
    spark_worker_memory: int | None = None
    recoverable: bool = False
    report: Callable[[str], None] | None = None  # progress lines (None: --quiet)

    def options(self) -> Options:
        return Options(properties=self.properties or None, stop_at_violation=not self.keep_going,
                       max_states=self.max_states, max_seconds=self.max_seconds,
                       max_memory=self.max_memory, symmetry=self.symmetry, report=self.report)


@dataclass(frozen=True)
class CheckPlan:
    """One check run, judged: what it checks, on which level source, with what."""

    spec: Spec
    options: Options
    engine: str  # the engine asked for: local, spark or partitioned
    source: Source
    workers: int  # the threads of the local engine or of the state graph
    local: LocalSettings
    engine_opts: dict[str, Any]  # the partitioned or Spark engine's own keyword arguments
    recoverable: bool = False
    liveness: tuple[Liveness, ...] = ()  # the liveness properties decided on the state graph
    members: int = 0  # under --symmetry: the members the protocol's symmetry permutes
    notes: tuple[str, ...] = ()  # what the run says before it starts

    @classmethod
    def build(cls, spec: Spec, opts: Options, engine: str = "local", recoverable: bool = False,
              local: LocalSettings | None = None, **engine_opts: Any) -> CheckPlan:
        """The plan of a run of ``spec`` with ``opts`` on ``engine`` (``engine_opts``: its own
        keyword arguments; the local engine's and the state graph's ``workers``); a refused
        combination raises ``PlanError``."""
        if engine not in ENGINES:
            raise ValueError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
        local = local if local is not None else LocalSettings()
        live = tuple(liveness_selected(spec, opts))
        members = _refusals(spec, opts, engine, recoverable, bool(live), local)
        workers = int(engine_opts.pop("workers", 1)) if engine == "local" else 1
        source = Source.GRAPH if recoverable or live else Source(engine)
        return cls(spec, opts, engine, source, 1 if local.exact else workers, local,
                   engine_opts, recoverable, live, members)

    @classmethod
    def of_request(cls, spec: Spec, req: CheckRequest) -> CheckPlan:
        """The plan of ``hwcheck check``: the refusals of ``build``, then the options that
        belong to one engine given with another; the local engine's workers default to the
        cores this process may use (one for a small spec)."""
        plan = cls.build(spec, req.options(), req.engine, req.recoverable, req.local)
        workers = engine_workers(req.engine, 1 if req.local.exact else req.workers, spec)
        engine_opts: dict[str, Any] = {}
        if req.engine == "spark":
            engine_opts = {"master": req.spark_master, "partitions": req.partitions,
                           "slice": req.spark_slice, "worker_memory": req.spark_worker_memory}
        elif req.spark_slice is not None or req.spark_worker_memory is not None:
            raise PlanError("--spark-slice and --spark-worker-memory are for --engine spark")
        notes = ("note: --exact runs on one worker",) \
            if req.local.exact and (req.workers or 1) > 1 else ()
        return cls(spec, plan.options, plan.engine, plan.source, workers.get("workers", 1),
                   plan.local, engine_opts, plan.recoverable, plan.liveness, plan.members, notes)

    @property
    def on_graph(self) -> bool:
        return self.source is Source.GRAPH

    def describe(self) -> str:
        """How the run explores, as its first line says: ``engine local, 2 workers``, ``state
        graph, 1 worker, symmetry``."""
        how = ["state graph" if self.on_graph else f"engine {self.engine}"]
        if self.engine == "local":
            how.append(f"{self.workers} worker{'s' * (self.workers > 1)}")
        if self.options.symmetry:
            how.append("symmetry")
        return ", ".join(how)


def engine_workers(engine: str, workers: int | None, spec: Spec | None = None) -> dict[str, int]:
    """The engine options that --workers gives: the local engine's thread count (default: the
    cores this process may use, one for a small ``spec``: ``parallel.default_workers``);
    refused with another engine."""
    if engine != "local":
        if workers is not None:
            raise PlanError("--workers is for the local engine (the Spark engine has "
                            "--partitions)")
        return {}
    from hwcheck.checker.engines.parallel import default_workers

    return {"workers": workers or default_workers(spec)}


def liveness_selected(spec: Spec, opts: Options) -> list[Liveness]:
    """The liveness properties a run with ``opts`` decides: all of them, or those named."""
    want = None if opts.properties is None else set(opts.properties)
    return [p for p in spec.liveness if want is None or p.name in want]


# -- the refusals ---------------------------------------------------------------------------------


def _refusals(spec: Spec, opts: Options, engine: str, recoverable: bool, live: bool,
              local: LocalSettings) -> int:
    """Every combination of options a check refuses, in the order they are said; returns the
    members of the declared symmetry (0 without --symmetry)."""
    checkpoints = local.checkpoint is not None or local.resume is not None
    if recoverable:
        _recovery_stated(spec)
    if live and opts.symmetry:
        raise PlanError("liveness properties are checked without --symmetry (fairness is per "
                        "action instance, which renaming the members changes); leave out "
                        "--symmetry, or check the others with --property")
    if live and (engine != "local" or local.exact):
        raise PlanError("liveness properties are decided on the state graph on one local "
                        "worker: without --engine spark or --exact")
    members = _symmetry_members(spec) if opts.symmetry else 0
    if recoverable and (engine != "local" or local.exact):
        raise PlanError("--recoverable explores the state graph on one local worker: without "
                        "--engine spark or --exact")
    if local.exact and (engine != "local" or checkpoints):
        raise PlanError("--exact is for the local engine, without --checkpoint or --resume")
    if spec.view is not None and (opts.symmetry or local.exact or recoverable or live):
        raise PlanError(f"{spec.name} has a VIEW: check it without --symmetry, --exact, "
                        "--recoverable and liveness properties (each reads whole states)")
    if engine != "local" and checkpoints:
        raise PlanError("--checkpoint and --resume are for the local engine (the Spark engine "
                        "keeps its own checkpoints of its partitions)")
    if local.checkpoint is not None and local.resume is not None and \
            Path(local.checkpoint) != Path(local.resume):
        raise PlanError("--resume goes on writing checkpoints to its own folder; give "
                        "--checkpoint the same folder, or leave it out")
    return members


def _recovery_stated(spec: Spec) -> None:
    """--recoverable: the protocol must state a healthy predicate."""
    from hwcheck.checker.graph.recover import recovery

    try:
        recovery(spec)
    except SpecError as e:
        raise PlanError(f"--recoverable: {e}") from None


def _symmetry_members(spec: Spec) -> int:
    """--symmetry: a protocol without a symmetry, or with one that misses a variable, is
    refused; the members its symmetry permutes."""
    from hwcheck.checker.semantics.symmetry import declared

    try:
        return int(declared(spec)["size"])
    except SpecError as e:
        raise PlanError(str(e)) from None
