"""``hwcheck simulate``: random walks on the compiled kernel (``checker/sim/``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from hwcheck.checker.cli.common import (
    VERDICT_EXIT,
    Output,
    check_properties,
    choose_spec,
    json_option,
    output_options,
    params_line,
    sigterm_stops_like_ctrl_c,
    spec_options,
)


@click.command()
@spec_options
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="The seed: walk w of seed s is always the same walk")
@click.option("--walks", type=click.IntRange(min=1), default=None,
              help="Run this many walks (numbered from --first-walk) [default: until "
                   "--max-seconds]")
@click.option("--first-walk", type=click.IntRange(min=0), default=0, show_default=True,
              help="The number of the first walk (to run a reported walk again alone)")
@click.option("--depth", type=click.IntRange(min=1), default=100, show_default=True,
              help="Steps a walk takes at most")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop after this many seconds [default: 60 without --walks]")
@click.option("--swarm", is_flag=True,
              help="Swarm mode: each walk draws its own action weights (from its seed), some "
                   "actions off")
@click.option("--invariant", "--property", "invariants", multiple=True, metavar="NAME",
              help="Check only this invariant or action property (repeatable) [default: all]")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Threads running walks [default: the cores this process may use]")
@output_options(run_name_default="the parameters, with -simulate")
@json_option
def simulate(seed: int, walks: int | None, first_walk: int, depth: int,
             max_seconds: float | None, swarm: bool, invariants: tuple[str, ...],
             workers: int | None, out: Path, run_name: str | None, as_json: bool, quiet: bool,
             **kwargs: Any) -> None:
    """Random walks from the initial state, checking every invariant and action property on
    every step: for sizes beyond exhaustive search. Reproducible: a violation names its seed
    and walk. A violation is minimised and written as a trace that `replay` confirms; finding
    none proves nothing (the verdict is then unknown)."""
    o = Output(as_json, quiet)
    chosen = choose_spec(kwargs)
    proto, params, spec = chosen.proto, chosen.params, chosen.spec
    check_properties(spec, invariants)
    from hwcheck.checker.engines.parallel import default_workers
    from hwcheck.checker.run import run_identity, run_name_of
    from hwcheck.checker.sim.simulate import SimOptions, trace_of
    from hwcheck.checker.sim.simulate import simulate as run_sim
    from hwcheck.checker.traces import text
    from hwcheck.checker.traces.output import prepare_run_folder, write_trace

    if max_seconds is None and walks is None:
        max_seconds = 60.0
    opts = SimOptions(seed=seed, walks=walks, depth=depth, max_seconds=max_seconds,
                      workers=workers or default_workers(), swarm=swarm, first_walk=first_walk,
                      properties=tuple(invariants) or None)
    name = run_name or f"{run_name_of(spec)}-simulate"
    identity = run_identity(spec, "simulate")
    folder = prepare_run_folder(Path(out), name, identity)
    o.say(f"hwcheck simulate: {params_line(proto, params)} (seed {seed}, depth {depth}, "
          f"{opts.workers} worker{'s' * (opts.workers > 1)}{', swarm' if swarm else ''})")
    sigterm_stops_like_ctrl_c()
    res = run_sim(spec, opts, report=o.progress_fn())
    obj = res.as_json()
    if res.found is not None:
        f = res.found
        f.trace = trace_of(spec, f)
        o.say("")
        o.say(text.text(f.trace))
        files = write_trace(spec, f.trace, folder, identity=identity)
        o.say(f"written: {', '.join(str(p) for p in files)}")
        o.say(f"found by walk {f.walk} of seed {seed} in {f.steps} steps, minimised to "
              f"{len(f.path)} (run it alone: --seed {seed} --first-walk {f.walk} --walks 1)")
        obj["violations"][0]["trace"] = str(files[0])
    o.say(f"walks: {res.walks:,}, steps {res.steps:,} ({res.steps / max(res.seconds, 1e-9):,.0f}"
          f" a second), depth mean {res.depth_mean:.1f} sd {res.depth_sd:.1f}, "
          f"{res.deadlocks:,} ended in a state without successors")
    o.say(f"states: {res.distinct:,} distinct seen{' (tables full: at least)' * res.saturated}"
          f", about {res.estimate:,.0f} reachable (Chao1 estimate, a lower bound)")
    width = max((len(a) for a in res.taken), default=0)
    for a in res.taken:
        o.say(f"  {a.ljust(width)}  taken {res.taken[a]:>12,}  enabled {res.enabled[a]:>12,}")
    if res.never_taken:
        o.say(f"note: never taken: {', '.join(res.never_taken)} (check the guards, or walk "
              "deeper)")
    detail = f" ({res.found.name} in {len(res.found.path)} steps)" if res.found else \
        " (no violation found; a simulation proves nothing)"
    o.say(f"verdict: {res.verdict}{detail}; {res.stop_reason}, {res.seconds:.2f} s")
    o.result(obj)
    sys.exit(VERDICT_EXIT[res.verdict])


COMMANDS = [simulate]
