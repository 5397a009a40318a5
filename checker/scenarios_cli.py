"""``hwcheck scenarios`` (list the named scenarios) and ``hwcheck suite`` (run them)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from spec import scenarios as table
from spec.lang import SpecError

from .cli import EXIT_FAILED, EXIT_HOLDS, InputError, progress_line, say
from .render import _param_line


def _selected(names: tuple[str, ...]) -> list:
    if not names:
        return list(table.SCENARIOS)
    try:
        return [table.get(n) for n in names]
    except SpecError as e:
        raise InputError(str(e)) from None


@click.command()
@click.option("--verbose", "-v", is_flag=True, help="Also show parameters and expectations")
def scenarios(verbose: bool) -> None:
    """List the named scenarios (run one with `hwcheck check --scenario NAME`)."""
    width = max(len(s.name) for s in table.SCENARIOS)
    for s in table.SCENARIOS:
        say(f"{s.name.ljust(width)}  {s.story}")
        if verbose:
            if s.bug != "-":
                say(f"{'':{width}}  about: {s.bug}")
            say(f"{'':{width}}  parameters: {_param_line(s.params.as_dict())}")
            violated = ", ".join(f"{k} {v}" for k, v in s.violated().items()) or "none"
            say(f"{'':{width}}  expected violations (shortest, steps): {violated}")
            say(f"{'':{width}}  expected reached: {', '.join(s.reached) or 'none'}")
            if s.states is not None:
                say(f"{'':{width}}  expected distinct states: {s.states:,}")


@click.command()
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("counterexamples"), show_default=True,
              help="Where counterexamples are written (<out>/<scenario>/<Invariant>.itf.json)")
@click.option("--scenario", "names", multiple=True, metavar="NAME",
              help="Run only this scenario (repeatable) [default: all]")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr")
def suite(out: Path, names: tuple[str, ...], quiet: bool) -> None:
    """Run the named scenarios in full and compare every verdict with its expectation.

    Prints one row per scenario and property, writes every counterexample under
    <out>/<scenario>/, and exits 1 naming each mismatch (0 when everything matches).
    """
    from . import suite as runner

    chosen = _selected(names)
    say(runner.header())
    results = []
    for sc in chosen:
        if not quiet:
            progress_line(f"{sc.name}: {_param_line(sc.params.as_dict())}")
        res = runner.run_scenario(sc, out=out, report=None if quiet else progress_line)
        results.append(res)
        for line in runner.lines(res):
            say(line)
    bad = [row for res in results for row in res.mismatches]
    checks = sum(len(res.rows) for res in results)
    say("")
    for row in bad:
        say(runner.mismatch_line(row))
    states = sum(res.states for res in results)
    seconds = sum(res.seconds for res in results)
    verdict = "ok" if not bad else f"{len(bad)} mismatch{'es' if len(bad) != 1 else ''}"
    n = len(results)
    say(f"suite: {verdict}; {n} scenario{'s' if n != 1 else ''}, {checks} checks, {states:,} states, "
        f"{seconds:.1f} s; counterexamples in {out}")
    sys.exit(EXIT_FAILED if bad else EXIT_HOLDS)


COMMANDS = [scenarios, suite]
