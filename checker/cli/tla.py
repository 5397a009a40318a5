"""``check --spec FILE.tla``: which engine checks a TLA+ module, and the preparation of the
compiled spec under the run's limits (decision record 0019, docs/tla.md).

``--tla-engine auto`` (the default) first explores the module on the interpreter as the check
would, within a budget (``front.DISCOVER`` distinct states, ``front.DISCOVER_SECONDS``): a
search that ends within it is the check's answer, and no kernel is compiled. A search that
does not end, an option only the compiled path has (--symmetry, --workers, ...) or a PROPERTY
in the cfg sends the module to the compiled path, with that search's values as its domains;
a module the compiled path refuses goes back to the interpreter, which reuses the search when
it had ended and otherwise starts again with the seconds spent counted against --max-seconds.
``compiled`` and ``interpreted`` force one path. The search, the compilation and the widening
runs obey --max-seconds, --max-memory, Ctrl-C and SIGTERM (between steps: a numba compile in
progress is not interrupted) and the search --max-states; a stop there reports what the
search found, with the verdict of a stopped check (never holds). One line on stderr says the
choice.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from hwcheck.checker.cli.common import (
    VERDICT_EXIT,
    Chosen,
    InputError,
    Output,
    build_chosen,
    parse_size,
    sigterm_stops_like_ctrl_c,
)
from hwcheck.spec.lang import SpecError
from hwcheck.spec.protocol import Protocol

ENGINES = ("auto", "compiled", "interpreted")
# what needs the compiled spec: refused on the interpreter (the option, its flag)
COMPILED_ONLY = {"symmetry": "--symmetry", "recoverable": "--recoverable",
                 "checkpoint": "--checkpoint", "resume": "--resume", "spark": "--engine spark"}
# what only the compiled path uses: auto then compiles (the interpreter ignores them)
COMPILED_FOR = {"workers": "--workers", "exact": "--exact", "workdir": "--workdir"}


def tla_engine_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--tla-engine", type=click.Choice(ENGINES), default=None,
        help="With --spec FILE.tla: auto checks on the interpreter a module whose search "
             "ends within a few thousand states and seconds, otherwise compiles it; compiled "
             "and interpreted force one path [default: auto]")(fn)


def check_module(o: Output, proto: Protocol, params: dict[str, Any], run_name: str | None,
                 engine: str, given: dict[str, Any], invariants: tuple[str, ...],
                 keep_going: bool, max_states: int | None, max_seconds: float | None,
                 max_memory: str | None, out: Path,
                 start: float) -> tuple[Chosen, float | None]:
    """Check the TLA+ module ``proto`` with ``engine`` (``given``: the options of
    ``COMPILED_ONLY`` and ``COMPILED_FOR`` by name, each true when given; ``start``: the
    run's start, ``time.monotonic()``). Exits after a check on the interpreter or a stop
    during the preparation; otherwise returns the compiled spec and what --max-seconds leaves
    of its time for the check."""
    from hwcheck.checker.search.exploration import interrupt_reason
    from hwcheck.checker.tla import front, interpreted
    from hwcheck.checker.tla.explore import FIRST
    from hwcheck.checker.traces.output import OutputError

    source = proto.source
    name = Path(source).name
    memory = parse_size(max_memory) if max_memory is not None else None
    req = interpreted.Request(
        Path(source), Path(params["config"]), source, dict(params),
        run_name or proto.name_of(params), invariants, keep_going, max_states, max_seconds,
        memory, out)
    refused = [COMPILED_ONLY[k] for k, v in given.items() if v and k in COMPILED_ONLY]

    def on_interpreter() -> None:
        if refused:
            raise InputError(f"{refused[0]} is for the compiled path; the interpreter checks "
                             "this module without it")

    def done(run: interpreted.Explored) -> NoReturn:
        try:
            outcome = interpreted.report(req, run, o.say)
        except OutputError as err:
            raise InputError(str(err)) from None
        o.result(outcome.result)
        sys.exit(VERDICT_EXIT[outcome.verdict])

    sigterm_stops_like_ctrl_c()
    if engine == "interpreted":
        on_interpreter()
        click.echo(f"hwcheck: {name}: --tla-engine interpreted: checking on the interpreter, "
                   "a state at a time", err=True)
        try:
            done(interpreted.search(req))
        except (SpecError, OutputError) as err:
            raise InputError(str(err)) from None
    budget = f"{front.DISCOVER:,} states and {front.DISCOVER_SECONDS:g} s"
    try:
        first = interpreted.search(req, budget=(front.DISCOVER, front.DISCOVER_SECONDS))
    except (SpecError, OutputError) as err:
        raise InputError(str(err)) from None
    why = ("--tla-engine compiled" if engine == "compiled" else
           next((f"{flag} is for the compiled path" for k, flag in
                 {**COMPILED_ONLY, **COMPILED_FOR}.items() if given.get(k)), "") or
           ("the cfg's PROPERTY is for the compiled path" if first.m.properties else ""))
    res = first.res
    if first.final and not res.complete and res.stop_reason != FIRST:
        # a limit of the run, Ctrl-C or SIGTERM stopped it: the run is over
        click.echo(f"hwcheck: {name}: stopped while the reference search chose the engine "
                   f"({res.stop_reason})", err=True)
        done(first)
    if first.final and not why:
        click.echo(f"hwcheck: {name}: the reference search ended within {budget} "
                   f"({res.distinct:,} distinct states): checking on the interpreter, a state "
                   "at a time (--tla-engine compiled compiles it)", err=True)
        done(first)
    click.echo(f"hwcheck: {name}: checking on the compiled path ("
               + (why or f"the reference search did not end within {budget}") + ")", err=True)
    limits = front.Limits(max_states, max_seconds, memory, start)
    try:
        front.compiled(Path(source), params["config"], found=res, limits=limits)
        chosen = build_chosen(proto, params, run_name)
        limits.check()
    except (front.Stopped, KeyboardInterrupt, MemoryError) as e:
        reason = e.reason if isinstance(e, front.Stopped) else interrupt_reason(e)
        click.echo(f"hwcheck: {name}: stopped while the compiled spec was prepared ({reason}): "
                   f"what the reference search found", err=True)
        if not first.final:
            first.stop(reason)
        done(first)
    except SpecError as e:
        refusal = interpreted.refusal(e, source)
        if refusal is None or engine == "compiled":
            raise InputError(str(e)) from None
        click.echo(interpreted.note(*refusal), err=True)
        on_interpreter()
        if first.final:
            done(first)
        try:
            done(interpreted.search(req, spent=time.monotonic() - start))
        except (SpecError, OutputError) as err:
            raise InputError(str(err)) from None
    left = limits.left()
    if max_seconds is not None and left is not None and left < max_seconds:
        o.say(f"note: {max_seconds - left:.1f} s of --max-seconds {max_seconds:g} went to "
              "choosing the engine and preparing the compiled spec; the search has the rest")
    return chosen, left

