"""``hwcheck mutate``: the kill matrix of the spec's mutants (``checker/mutate/``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hwcheck.checker.cli.common import (
    EXIT_HOLDS,
    Chosen,
    InputError,
    Output,
    choose_spec,
    json_option,
    output_options,
    params_line,
    sigterm_stops_like_ctrl_c,
    spec_options,
)
from hwcheck.spec.lang import SpecError

if TYPE_CHECKING:
    from hwcheck.checker.mutate.run import MutationReport


@click.command()
@spec_options
@click.option("--mutant", "only", multiple=True, type=click.IntRange(min=1), metavar="K",
              help="Check only mutant K (repeatable) [default: every mutant]")
@click.option("--list", "list_only", is_flag=True, help="List the mutants and stop")
@click.option("--escalate", default=None, metavar="PARAM",
              help="Check the surviving mutants again with the integer parameter PARAM one "
                   "larger (for Kafka: replicas, max_offset or max_epoch)")
@click.option("--max-states", type=click.IntRange(min=1), default=None,
              help="Give up on a mutant after this many states (it is then unknown) "
                   "[default: ten times the original's]")
@output_options(what="Where the report is written (<out>/<run-name>/mutants.html, "
                     "mutants.json)", run_name_default="the parameters, with -mutate")
@json_option
def mutate(only: tuple[int, ...], list_only: bool, escalate: str | None,
           max_states: int | None, out: Path, run_name: str | None, as_json: bool, quiet: bool,
           **kwargs: Any) -> None:
    """Mutate the spec's actions (drop a guard conjunct, flip a comparison, a constant or an
    index off by one, drop a statement, swap branches), check every mutant exhaustively on one
    compiled kernel, and report which properties kill which mutant: how much the property set
    would catch. Surviving mutants are listed with their change."""
    o = Output(as_json, quiet)
    chosen = choose_spec(kwargs)
    proto, params, spec = chosen.proto, chosen.params, chosen.spec
    if escalate is not None and not isinstance(params.get(escalate), int):
        raise InputError(f"--escalate {escalate}: not an integer parameter of {proto.name} "
                         f"(its parameters: {', '.join(params)})")
    from hwcheck.checker.mutate.mutants import mutants
    from hwcheck.checker.mutate.report import page
    from hwcheck.checker.mutate.run import EQUIVALENT, SURVIVED
    from hwcheck.checker.mutate.run import mutate as run_mutate
    from hwcheck.checker.run import run_name_of
    from hwcheck.checker.traces.output import write_atomic

    found = mutants(spec)
    unknown = [k for k in only if k > len(found)]
    if unknown:
        raise InputError(f"--mutant {unknown[0]}: {spec.name} has mutants 1..{len(found)}")
    if list_only:
        for m in found:
            o.say(f"{m.id:>4}  {m.operator:<16} {m.diff}")
        o.result({"command": "mutate", "mutants": [
            {"id": m.id, "action": m.action, "operator": m.operator, "before": m.before,
             "after": m.after} for m in found]})
        sys.exit(EXIT_HOLDS)
    o.say(f"hwcheck mutate: {params_line(proto, params)} ({len(only) or len(found)} of "
          f"{len(found)} mutants, one schema kernel)")
    sigterm_stops_like_ctrl_c()
    rep = run_mutate(spec, list(only) or None, max_states, report=o.progress_fn())
    if escalate is not None:
        _escalate(chosen, escalate, rep)
    original = rep.original
    broken = sorted(n for n, h in original.hits.items() if h.kind != "reachable")
    if broken:
        o.say(f"note: the original already violates {', '.join(broken)}: a mutant counts as "
              "killed only by a violation the original does not have (or has at another "
              "length)")
    o.say(f"mutants: {len(rep.results)}; killed {rep.count('killed')}, survived "
          f"{rep.count('survived')}, equivalent at this size {rep.count('equivalent')}, "
          f"unknown {rep.count('unknown')}; kill rate {rep.kill_rate:.1%} (killed / (killed + "
          f"survived)); {rep.seconds:.1f} s")
    for op, (k, n) in sorted(rep.by_operator().items()):
        o.say(f"  {op:<16} {k:>4} of {n:<4} killed")
    survived = [r for r in rep.results if r.status in (SURVIVED, EQUIVALENT)]
    if survived:
        o.say("surviving mutants (no property tells them from the original at this size):")
        for r in survived:
            eq = " (equivalent at this size)" if r.status == EQUIVALENT else ""
            o.say(f"  {r.mutant.id:>4}  {r.mutant.operator:<16} {r.mutant.diff}{eq}"
                  + (f"  [{r.escalated}]" if r.escalated else ""))
        if escalate is None:
            o.say("note: --escalate PARAM checks them at the next size up; a survivor there too "
                  "asks for a property")
    folder = Path(out) / (run_name or f"{run_name_of(spec)}-mutate")
    folder.mkdir(parents=True, exist_ok=True)
    obj = rep.as_json()
    files = [write_atomic(folder / "mutants.json", json.dumps(obj, indent=1) + "\n"),
             write_atomic(folder / "mutants.html", page(rep, params_line(proto, params)))]
    o.say(f"written: {', '.join(str(f) for f in files)}")
    o.result(obj)
    sys.exit(EXIT_HOLDS)


def _escalate(chosen: Chosen, param: str, rep: MutationReport) -> None:
    """``--escalate PARAM``: the surviving mutants checked again with ``param`` one larger;
    each notes what it came to there (``escalated``)."""
    from hwcheck.checker import protocols
    from hwcheck.checker.mutate.run import EQUIVALENT, KILLED, SURVIVED
    from hwcheck.checker.mutate.run import mutate as run_mutate

    survivors = [r for r in rep.results if r.status in (SURVIVED, EQUIVALENT)]
    if not survivors:
        return
    bigger = dict(chosen.params, **{param: chosen.params[param] + 1})
    try:
        spec2 = protocols.build(chosen.proto, bigger)
    except SpecError as e:
        raise InputError(f"--escalate {param}: {e}") from None
    again = run_mutate(spec2, [r.mutant.id for r in survivors], None)
    by_id = {r.mutant.id: r for r in again.results}
    for r in survivors:
        r2 = by_id.get(r.mutant.id)
        if r2 is not None and (r2.mutant.action, r2.mutant.operator) == \
                (r.mutant.action, r.mutant.operator):  # the same place, another size
            r.escalated = (f"killed at {param}={bigger[param]} ("
                           + ", ".join(f"{n} {ln}" for n, ln in r2.hits.items()) + ")"
                           if r2.status == KILLED else
                           f"{r2.status} at {param}={bigger[param]}")


COMMANDS = [mutate]
