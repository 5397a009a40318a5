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
from typing import TYPE_CHECKING, Any, NoReturn

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

if TYPE_CHECKING:  # the front end is imported when a module is checked, not at start-up
    from hwcheck.checker.tla import interpreted
    from hwcheck.checker.tla.front import Limits

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
             "ends within 2,000 distinct states and 5 s (no kernel compiled), and compiles "
             "the others; compiled and interpreted force one path [default: auto]")(fn)


class _Module:
    """A TLA+ module's check as the command line asks it (``given``: the options of
    ``COMPILED_ONLY`` and ``COMPILED_FOR`` by name, each true when given)."""

    def __init__(self, o: Output, proto: Protocol, params: dict[str, Any],
                 req: interpreted.Request, given: dict[str, bool]) -> None:
        self.o, self.proto, self.params, self.req = o, proto, params, req
        self.name = Path(proto.source).name
        self.refused = [COMPILED_ONLY[k] for k, v in given.items() if v and k in COMPILED_ONLY]
        self.wants = next((f"{flag} is for the compiled path" for k, flag in
                           {**COMPILED_ONLY, **COMPILED_FOR}.items() if given.get(k)), "")

    def line(self, text: str) -> None:
        click.echo(f"hwcheck: {self.name}: {text}", err=True)

    def search(self, budget: tuple[int, float] | None = None,
               spent: float = 0.0) -> interpreted.Explored:
        """The module explored on the interpreter; bad input one line, exit 2."""
        from hwcheck.checker.tla import interpreted
        from hwcheck.checker.traces.output import OutputError

        try:
            return interpreted.search(self.req, budget, spent)
        except (SpecError, OutputError) as err:
            raise InputError(str(err)) from None

    def on_interpreter(self) -> None:
        """What needs the compiled spec, refused on the interpreter: one line, exit 2."""
        if self.refused:
            raise InputError(f"{self.refused[0]} is for the compiled path; the interpreter "
                             "checks this module without it")

    def done(self, run: interpreted.Explored) -> NoReturn:
        """Say what the search found, and exit with its verdict's code."""
        from hwcheck.checker.tla import interpreted
        from hwcheck.checker.traces.output import OutputError

        try:
            outcome = interpreted.report(self.req, run, self.o.say)
        except OutputError as err:
            raise InputError(str(err)) from None
        self.o.result(outcome.result)
        sys.exit(VERDICT_EXIT[outcome.verdict])


def check_module(o: Output, proto: Protocol, params: dict[str, Any], run_name: str | None,
                 engine: str, given: dict[str, bool], invariants: tuple[str, ...],
                 keep_going: bool, max_states: int | None, max_seconds: float | None,
                 max_memory: str | None, out: Path,
                 start: float) -> tuple[Chosen, float | None]:
    """Check the TLA+ module ``proto`` with ``engine`` (``given``: see ``_Module``;
    ``start``: the run's start, ``time.monotonic()``). Exits after a check on the interpreter
    or a stop during the preparation; otherwise returns the compiled spec and what
    --max-seconds leaves of its time for the check."""
    from hwcheck.checker.tla import front, interpreted
    from hwcheck.checker.tla.explore import FIRST

    memory = parse_size(max_memory) if max_memory is not None else None
    req = interpreted.Request(
        Path(proto.source), Path(params["config"]), proto.source, dict(params),
        run_name or proto.name_of(params), invariants, keep_going, max_states, max_seconds,
        memory, out)
    mod = _Module(o, proto, params, req, given)
    sigterm_stops_like_ctrl_c()
    if engine == "interpreted":
        mod.on_interpreter()
        mod.line("--tla-engine interpreted: checking on the interpreter, a state at a time")
        mod.done(mod.search())
    budget = f"{front.DISCOVER:,} states and {front.DISCOVER_SECONDS:g} s"
    states = front.DISCOVER
    if (engine == "compiled" or mod.wants) \
            and front.domains_kept(Path(proto.source), params["config"]):
        # the compiled path is chosen and its domains are kept: no search to find them, only
        # the initial states (what a stop while the spec is prepared reports)
        states = 1
    first = mod.search((states, front.DISCOVER_SECONDS))
    res = first.res
    why = ("--tla-engine compiled" if engine == "compiled" else mod.wants or
           ("the cfg's PROPERTY is for the compiled path" if first.m.properties else ""))
    if first.final and not res.complete and res.stop_reason != FIRST:
        # a limit of the run, Ctrl-C or SIGTERM stopped it: the run is over
        mod.line(f"stopped while the reference search chose the engine ({res.stop_reason})")
        mod.done(first)
    if first.final and not why:
        mod.line(f"the reference search ended within {budget} ({res.distinct:,} distinct "
                 "states): checking on the interpreter, a state at a time (--tla-engine "
                 "compiled compiles it)")
        mod.done(first)
    mod.line("checking on the compiled path ("
             + (why or f"the reference search did not end within {budget}") + ")")
    limits = front.Limits(max_states, max_seconds, memory, start)
    chosen = _compiled(mod, first, limits, run_name, engine == "compiled")
    left = limits.left()
    if max_seconds is not None and left is not None:
        o.say(f"note: {max_seconds - left:.1f} s of --max-seconds {max_seconds:g} went to "
              "choosing the engine and preparing the compiled spec; the search has the rest")
    return chosen, left


def _compiled(mod: _Module, first: interpreted.Explored, limits: Limits, run_name: str | None,
              forced: bool) -> Chosen:
    """The module's compiled spec, prepared under ``limits`` with the values ``first`` saw.
    A stop while it is prepared says what ``first`` found and exits; a module the compiled
    path refuses is checked on the interpreter (``first`` again where it had ended), unless
    ``forced``: then the refusal is one line, exit 2."""
    from hwcheck.checker.search.exploration import interrupt_reason
    from hwcheck.checker.tla import front, interpreted

    source = mod.proto.source
    try:
        front.compiled(Path(source), mod.params["config"], found=first.res, limits=limits)
        chosen = build_chosen(mod.proto, mod.params, run_name)
        limits.check()
        return chosen
    except (front.Stopped, KeyboardInterrupt, MemoryError) as e:
        reason = e.reason if isinstance(e, front.Stopped) else interrupt_reason(e)
        mod.line(f"stopped while the compiled spec was prepared ({reason}): what the "
                 "reference search found")
        if not first.final:
            first.stop(reason)
        mod.done(first)
    except SpecError as e:
        refusal = interpreted.refusal(e, source)
        if refusal is None or forced:
            raise InputError(str(e)) from None
        click.echo(interpreted.note(*refusal), err=True)
        mod.on_interpreter()
        mod.done(first if first.final else
                 mod.search(spent=time.monotonic() - limits.start))
