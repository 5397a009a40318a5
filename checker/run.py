"""A model-checking run: build the spec, explore with an engine, turn hits into traces on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from spec.model import build
from spec.params import Params

from . import html, itf, render
from .bfs import LocalEngine, Options
from .explore import Exploration
from .interp import Interpreter
from .kernel import Kernel
from .trace import Trace, from_path

ENGINES = ("local", "spark")


@dataclass
class PropertyOutcome:
    name: str
    kind: str  # invariant | action | reachable
    status: str  # holds | violated | unknown | reached | unreached
    length: int | None = None
    trace: Trace | None = None
    files: list[Path] = field(default_factory=list)


@dataclass
class Report:
    params: Params
    exploration: Exploration
    outcomes: list[PropertyOutcome]
    run_name: str

    @property
    def verdict(self) -> str:
        return self.exploration.verdict

    def violations(self) -> list[PropertyOutcome]:
        return [o for o in self.outcomes if o.status == "violated"]

    def as_json(self) -> dict:
        ex = self.exploration
        return {
            "verdict": self.verdict,
            "distinct": ex.distinct,
            "generated": ex.generated,
            "depth": ex.depth,
            "seconds": round(ex.seconds, 3),
            "violations": [{"invariant": o.name, "length": o.length,
                            "trace": str(o.files[0]) if o.files else None}
                           for o in self.violations()],
            "reachability": {o.name: o.status for o in self.outcomes if o.kind == "reachable"},
            "complete": ex.complete,
            "stop_reason": ex.stop_reason,
            "engine": ex.engine,
            "params": self.params.as_dict(),
        }


def known_properties(spec) -> list[str]:
    return [p.name for p in spec.invariants] + [p.name for p in spec.action_properties]


def make_engine(name: str, kernel: Kernel, opts: Options, **engine_opts):
    if name == "local":
        return LocalEngine(kernel, opts)
    if name == "spark":
        from .spark.engine import SparkEngine

        return SparkEngine(kernel, opts, **engine_opts)
    raise ValueError(f"unknown engine {name!r} (known: {', '.join(ENGINES)})")


def check(params: Params, opts: Options, engine: str = "local", out: Path | None = None,
          run_name: str | None = None, write_witnesses: bool = False, **engine_opts) -> Report:
    """Explore ``params``'s model; write a trace per violation under ``out/run_name``."""
    spec = build(params)
    kernel = Kernel(spec)
    ex = make_engine(engine, kernel, opts, **engine_opts).run()
    interp = Interpreter(spec, kernel.layout)
    run_name = run_name or params.slug()
    outcomes = []
    for name, kind in ex.checked:
        o = PropertyOutcome(name, kind, ex.status(name, kind))
        hit = ex.hits.get(name)
        if hit is not None:
            o.length = hit.length
            o.trace = from_path(spec, interp, name, kind, ex.engine, hit.path)
            if out is not None and (kind != "reachable" or write_witnesses):
                o.files = write_trace(spec, o.trace, Path(out) / run_name)
        outcomes.append(o)
    return Report(params, ex, outcomes, run_name)


def write_trace(spec, trace: Trace, folder: Path) -> list[Path]:
    """Write ``<folder>/<Property>.itf.json``, ``.txt`` and ``.html``; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    j = itf.write(spec, trace, folder / f"{trace.property}.itf.json")
    t = folder / f"{trace.property}.txt"
    t.write_text(render.text(trace))
    return [j, t, html.write(trace, folder / f"{trace.property}.html", spec)]
