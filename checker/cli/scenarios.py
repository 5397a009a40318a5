"""``hwcheck scenarios`` (list a protocol's named scenarios) and ``hwcheck suite`` (run them)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hwcheck.checker.cli.common import (
    EXIT_FAILED,
    EXIT_HOLDS,
    InputError,
    Output,
    json_option,
    local_workers,
    params_line,
    protocol_from,
    workers_option,
)
from hwcheck.spec.lang import SpecError

if TYPE_CHECKING:
    from hwcheck.checker.suite import ScenarioResult
    from hwcheck.spec.protocol import Protocol, Scenario

SPEC_OPTION = click.option("--spec", "spec_source", default=None, metavar="SOURCE",
                           help="The protocol whose scenarios to use [default: the default "
                                "protocol]")


def _selected(proto: Protocol, names: tuple[str, ...]) -> list[Scenario]:
    if not names:
        return list(proto.scenarios)
    try:
        return [proto.scenario(n) for n in names]
    except SpecError as e:
        raise InputError(str(e)) from None


@click.command()
@SPEC_OPTION
@click.option("--verbose", "-v", is_flag=True, help="Also show parameters and expectations")
def scenarios(spec_source: str | None, verbose: bool) -> None:
    """List the named scenarios (run one with `hwcheck check --scenario NAME`)."""
    o = Output()
    proto = protocol_from({"spec_source": spec_source})
    if not proto.scenarios:
        o.say(f"{proto.name} has no named scenarios")
        return
    width = max(len(s.name) for s in proto.scenarios)
    for s in proto.scenarios:
        o.say(f"{s.name.ljust(width)}  {s.story}")
        if verbose:
            if s.bug != "-":
                o.say(f"{'':{width}}  about: {s.bug}")
            o.say(f"{'':{width}}  parameters: {params_line(proto, proto.resolve(s.params))}")
            violated = ", ".join(f"{k} {v}" for k, v in s.violated().items()) or "none"
            o.say(f"{'':{width}}  expected violations (shortest, steps): {violated}")
            o.say(f"{'':{width}}  expected reached: {', '.join(s.reached) or 'none'}")
            if s.states is not None:
                o.say(f"{'':{width}}  expected distinct states: {s.states:,}")


@click.command()
@SPEC_OPTION
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("hwcheck-out"), show_default=True,
              help="Where counterexamples are written (<out>/<scenario>/<Property>.itf.json); "
                   "`make check` writes the committed ones with --out counterexamples")
@click.option("--scenario", "names", multiple=True, metavar="NAME",
              help="Run only this scenario (repeatable) [default: all]")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
              show_default=True, help="The engine that explores each scenario")
@click.option("--spark-master", default="local[*]", show_default=True,
              help="Spark master URL, with --engine spark")
@workers_option
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr")
@json_option
def suite(spec_source: str | None, out: Path, names: tuple[str, ...], engine: str,
          spark_master: str, workers: int | None, quiet: bool, as_json: bool) -> None:
    """Run the named scenarios in full and compare every verdict with its expectation.

    Prints one row per scenario and property, writes every counterexample under
    <out>/<scenario>/, and exits 1 naming each mismatch (0 when everything matches).
    """
    from hwcheck.checker import suite as runner

    o = Output(as_json, quiet)
    proto = protocol_from({"spec_source": spec_source})
    chosen = _selected(proto, names)
    if not chosen:
        raise InputError(f"{proto.name} has no named scenarios to run")
    engine_opts = {"master": spark_master} if engine == "spark" else local_workers(engine,
                                                                                   workers)
    o.say(runner.header())
    results = []
    for sc in chosen:
        o.progress(f"{sc.name}: {params_line(proto, proto.resolve(sc.params))}")
        res = runner.run_scenario(proto, sc, out=out, report=o.progress_fn(), engine=engine,
                                  **engine_opts)
        results.append(res)
        for line in runner.lines(res):
            o.say(line)
    bad = [row for res in results for row in res.mismatches]
    checks = sum(len(res.rows) for res in results)
    o.say("")
    for row in bad:
        o.say(runner.mismatch_line(row))
    states = sum(res.states for res in results)
    seconds = sum(res.seconds for res in results)
    verdict = "ok" if not bad else f"{len(bad)} mismatch{'es' if len(bad) != 1 else ''}"
    n = len(results)
    index = _write_report(o, proto, out, results)  # <out>/index.html (checker/traces/report.py)
    o.say(f"suite: {verdict}; {n} scenario{'s' if n != 1 else ''}, {checks} checks, "
          f"{states:,} states, {seconds:.1f} s; counterexamples in {out}"
          + (f", report {index}" if index is not None else ""))
    o.result({"command": "suite", "verdict": "ok" if not bad else "mismatch",
              "protocol": proto.source or proto.name,
              "report": str(index) if index is not None else None,
              "scenarios": [runner.as_json(res) for res in results],
              "mismatches": [runner.mismatch_line(row) for row in bad]})
    sys.exit(EXIT_FAILED if bad else EXIT_HOLDS)


def _write_report(o: Output, proto: Protocol, out: Path,
                  results: list[ScenarioResult]) -> Path | None:
    """The suite report, merged with the earlier runs into the same folder; None (and a note)
    if it cannot be written."""
    from hwcheck.checker.traces import report

    try:
        entries = [report.entry(res, params_line(proto, proto.resolve(res.scenario.params)))
                   for res in results]
        return report.write(out, proto.source or proto.name, [s.name for s in proto.scenarios],
                            entries, proto.name)
    except OSError as e:
        o.say(f"note: the suite report could not be written: {e.strerror or e}")
        return None


COMMANDS = [scenarios, suite]
