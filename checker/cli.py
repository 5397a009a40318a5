"""The ``hwcheck`` command line.

Exit codes a script can rely on: 0 holds (or a trace replayed as claimed), 12 a violation,
2 bad usage or bad input, 3 unknown (a limit was reached before a verdict), 1 an internal error
or a trace that does not replay.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from spec.lang import SpecError
from spec.params import ACKS, EXPANSIONS, TRUNCATIONS, Params

EXIT_HOLDS = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNKNOWN = 3
EXIT_VIOLATED = 12

VERDICT_EXIT = {"holds": EXIT_HOLDS, "violated": EXIT_VIOLATED, "unknown": EXIT_UNKNOWN}


class InputError(click.ClickException):
    """Bad input: reported as one line, exit code 2."""

    exit_code = EXIT_USAGE


def say(msg: str = "", err: bool = False) -> None:
    click.echo(msg, err=err)


def progress_line(msg: str) -> None:
    click.echo(f"  {msg}", err=True)


# -- shared options ----------------------------------------------------------------------------

DEFAULTS = Params()


def model_options(fn):
    """The model's parameters, shared by every command that builds the model."""
    opts = [
        click.option("--replicas", "-R", type=int, default=None,
                     help=f"Replicas (brokers), 1..5 [default: {DEFAULTS.replicas}]"),
        click.option("--max-offset", "-M", type=int, default=None,
                     help=f"Log capacity in records, 1..8 [default: {DEFAULTS.max_offset}]"),
        click.option("--max-epoch", "-E", type=int, default=None,
                     help=f"Highest leader epoch, 1..8 [default: {DEFAULTS.max_epoch}]"),
        click.option("--truncation", type=click.Choice(TRUNCATIONS), default=None,
                     help=f"Follower truncation before fetching [default: {DEFAULTS.truncation}]"),
        click.option("--isr-expansion", type=click.Choice(EXPANSIONS), default=None,
                     help=f"When a follower rejoins the ISR [default: {DEFAULTS.isr_expansion}]"),
        click.option("--acks", type=click.Choice(ACKS), default=None,
                     help=f"Producer acks [default: {DEFAULTS.acks}]"),
        click.option("--min-isr", type=int, default=None,
                     help=f"min.insync.replicas, 1..R [default: {DEFAULTS.min_isr}]"),
        click.option("--unclean-election/--no-unclean-election", "unclean", default=None,
                     help="unclean.leader.election.enable [default: off]"),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


def output_options(what: str = "Where counterexamples are written "
                                  "(<out>/<run-name>/<Invariant>.itf.json)",
                   run_name_default: str = "the parameters"):
    """--out, --run-name and --quiet, shared by the commands that write traces."""

    def deco(fn):
        for o in reversed([
            click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                         default=Path("counterexamples"), show_default=True, help=what),
            click.option("--run-name", default=None,
                         help=f"Folder name under --out [default: {run_name_default}]"),
            click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr"),
        ]):
            fn = o(fn)
        return fn

    return deco


PARAM_KEYS = ("replicas", "max_offset", "max_epoch", "truncation", "isr_expansion", "acks",
              "min_isr", "unclean")


def params_from(kwargs: dict, base: Params | None = None) -> Params:
    """The Params of the given options over ``base`` (defaults, or a scenario's)."""
    given = {k: kwargs.pop(k) for k in PARAM_KEYS if k in kwargs}
    given = {k: v for k, v in given.items() if v is not None}
    try:
        return (base or DEFAULTS).replace(**given)
    except SpecError as e:
        raise InputError(str(e)) from None


# -- the group ---------------------------------------------------------------------------------


class Commands(click.Group):
    """The command group; commands that live beside their subsystems (Z3, scenarios) are loaded
    on first use, which keeps start-up light and avoids import cycles."""

    optional = ("checker.z3.commands", "checker.scenarios_cli")
    _loaded = False

    def _load(self) -> None:
        if Commands._loaded:
            return
        Commands._loaded = True
        import importlib

        for modname in self.optional:
            try:
                mod = importlib.import_module(modname)
            except ModuleNotFoundError as e:
                if not modname.startswith(e.name or "?"):
                    raise
                continue
            for cmd in mod.COMMANDS:
                self.add_command(cmd)

    def list_commands(self, ctx):
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx, name):
        if name not in self.commands:
            self._load()
        return super().get_command(ctx, name)


@click.group(cls=Commands,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hwcheck")
def main() -> None:
    """hwcheck: a model checker for Kafka's partition replication protocol (HW, LEO, ISR,
    truncation, leader election).

    `hwcheck check` explores every reachable state breadth-first and prints the shortest
    counterexample of each violated invariant.
    """


@main.command()
@model_options
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Check only this invariant or action property (repeatable) [default: all]")
@click.option("--continue", "keep_going", is_flag=True,
              help="Explore everything; report the shortest violation of each invariant")
@click.option("--max-states", type=click.IntRange(min=1), default=None,
              help="Stop after this many distinct states (the verdict is then unknown)")
@output_options(run_name_default="the scenario name, or the parameters")
@click.option("--scenario", default=None, metavar="NAME",
              help="Start from a named scenario's parameters (`hwcheck scenarios` lists them); "
                   "model options given explicitly override them")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local", show_default=True,
              help="local: the compiled BFS on this machine; spark: PySpark, frontier "
                   "partitioned across executors")
@click.option("--spark-master", default="local[*]", show_default=True,
              help="Spark master URL, with --engine spark")
@click.option("--partitions", type=click.IntRange(min=1), default=None,
              help="Spark partitions of the state space [default: one per executor core]")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object as the last line of stdout")
def check(invariants, keep_going, max_states, out, run_name, scenario, engine, spark_master,
          partitions, as_json, quiet, **kwargs) -> None:
    """Explore every reachable state breadth-first and check the invariants."""
    from spec import scenarios
    from spec.model import build

    from . import render
    from .bfs import Options
    from .run import check as run_check, known_properties

    base = None
    if scenario is not None:
        try:
            base = scenarios.get(scenario).params
        except SpecError as e:
            raise InputError(str(e)) from None
    params = params_from(kwargs, base)
    if scenario is not None and run_name is None:
        # Overridden parameters get their own folder: the scenario's own traces stay canonical.
        run_name = scenario if params == base else f"{scenario}+{params.slug()}"
    known = known_properties(build(params))
    for name in invariants:
        if name not in known:
            raise InputError(f"unknown invariant {name!r} (known: {', '.join(known)})")
    opts = Options(properties=tuple(invariants) or None, stop_at_violation=not keep_going,
                   max_states=max_states, report=None if quiet else progress_line)
    engine_opts = {}
    if engine == "spark":
        engine_opts = {"master": spark_master, "partitions": partitions}
    text_out = as_json  # with --json, human text goes to stderr and stdout stays parseable
    say(f"hwcheck check: {render._param_line(params.as_dict())} (engine {engine})", err=text_out)
    report = run_check(params, opts, engine=engine, out=out, run_name=run_name, **engine_opts)
    ex = report.exploration
    for o in report.violations():
        say("", err=text_out)
        say(render.text(o.trace), err=text_out)
        say(f"written: {', '.join(str(p) for p in o.files)}", err=text_out)
    for o in report.outcomes:
        if o.kind == "reachable" and o.status != "reached":
            say(f"note: {o.name} was {o.status} (a check that passes without it may be vacuous)",
                err=text_out)
    if not ex.complete:
        say(f"note: exploration incomplete: {ex.stop_reason}", err=text_out)
    parts = [f"{o.name} in {o.length} steps" for o in report.violations()]
    detail = f" ({', '.join(parts)})" if parts else ""
    say(f"verdict: {report.verdict}{detail}; {ex.distinct:,} distinct states, "
        f"{ex.generated:,} generated, depth {ex.depth}, {ex.seconds:.2f} s", err=text_out)
    if as_json:
        say(json.dumps(report.as_json()))
    sys.exit(VERDICT_EXIT[report.verdict])


@main.command()
@click.argument("trace_file", type=click.Path(path_type=Path))
@click.option("--z3", "with_z3", is_flag=True,
              help="Also certify every step with Z3 (guard and effect) and the final violation")
def replay(trace_file: Path, with_z3: bool) -> None:
    """Re-run a trace through the interpreter and confirm what it claims."""
    from spec.model import build

    from . import itf, render
    from .trace import TraceError, replay as run_replay

    try:
        data = itf.read_meta(trace_file)
        try:
            params = Params.from_dict(data["#meta"]["params"])
        except (SpecError, TypeError) as e:
            raise InputError(f"{trace_file}: bad parameters in #meta: {e}") from None
        spec = build(params)
        trace = itf.from_itf(spec, data, str(trace_file))
    except TraceError as e:
        raise InputError(str(e)) from None
    try:
        run_replay(spec, trace)
    except TraceError as e:
        say(f"replay: does not replay: {e}")
        sys.exit(EXIT_FAILED)
    say(f"replay: confirmed: {render.headline(trace)}")
    if with_z3:
        from .z3.certify import certify

        res = certify(spec, trace)
        say(f"replay --z3: {res.summary()}")
        if not res.ok:
            sys.exit(EXIT_FAILED)
    sys.exit(EXIT_HOLDS)


def run() -> None:
    """Console entry point: one-line errors, fixed exit codes, no tracebacks for bad input."""
    try:
        main.main(standalone_mode=False)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        say("hwcheck: aborted", err=True)
        sys.exit(EXIT_UNKNOWN)
    except click.UsageError as e:
        say(f"hwcheck: error: {e.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except click.ClickException as e:
        say(f"hwcheck: error: {e.format_message()}", err=True)
        sys.exit(e.exit_code)
    except SpecError as e:
        say(f"hwcheck: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        say("hwcheck: interrupted", err=True)
        sys.exit(EXIT_UNKNOWN)


if __name__ == "__main__":
    run()
