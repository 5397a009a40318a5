"""The ``hwcheck`` command: the group, ``check``, ``replay`` and ``params``, and the console
entry point that turns every input error into one line and a fixed exit code."""

from __future__ import annotations

import atexit
import dataclasses
import gc
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from hwcheck.checker.cli.common import (
    EXIT_FAILED,
    EXIT_HOLDS,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    VERDICT_EXIT,
    Chosen,
    InputError,
    Output,
    build_chosen,
    check_properties,
    choose_protocol,
    json_option,
    output_options,
    params_line,
    parse_size,
    protocol_from,
    say,
    sigterm_stops_like_ctrl_c,
    spec_options,
    workers_option,
)
from hwcheck.checker.cli.tla import tla_engine_option
from hwcheck.checker.environment import EnvironmentFault
from hwcheck.spec.lang import SpecError

if TYPE_CHECKING:
    from hwcheck.checker.plan import CheckPlan
    from hwcheck.checker.run import GraphFigures, Report
    from hwcheck.spec.protocol import Protocol


class Commands(click.Group):
    """The command group; the commands of the other modules (scenarios, Z3) are loaded on first
    use, which keeps start-up light."""

    optional = ("hwcheck.checker.cli.prove", "hwcheck.checker.cli.scenarios",
                "hwcheck.checker.cli.graph", "hwcheck.checker.cli.simulate",
                "hwcheck.checker.cli.mutate")
    _loaded = False

    def _load(self) -> None:
        if Commands._loaded:
            return
        Commands._loaded = True
        import importlib

        for modname in self.optional:
            for cmd in importlib.import_module(modname).COMMANDS:
                self.add_command(cmd)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands:
            self._load()
        return super().get_command(ctx, name)


@click.group(cls=Commands,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hwcheck")
def main() -> None:
    """hwcheck: a model checker for Kafka's partition replication protocol (HW, LEO, ISR,
    truncation, leader election), and for any protocol written in its spec language (--spec).

    `hwcheck check` explores every reachable state breadth-first and prints the shortest
    counterexample of each violated invariant.
    """


@main.command()
@spec_options
@click.option("--invariant", "--property", "invariants", multiple=True, metavar="NAME",
              help="Check only this invariant, action property or liveness property "
                   "(repeatable) [default: all]")
@click.option("--continue", "keep_going", is_flag=True,
              help="Explore everything; report the shortest violation of each invariant")
@click.option("--max-states", type=click.IntRange(min=1), default=None,
              help="Stop after this many distinct states (the verdict is then unknown)")
@click.option("--max-seconds", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop exploring after this many seconds (the verdict is then unknown)")
@click.option("--max-memory", default=None, metavar="SIZE",
              help="Stop once this process holds this much memory, e.g. 300M or 2G (the "
                   "verdict is then unknown)")
@click.option("--checkpoint", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the search's state to this folder at level boundaries, atomically "
                   "(local engine)")
@click.option("--checkpoint-every", type=click.FloatRange(min=0), default=60.0,
              show_default=True, help="Seconds between checkpoints (0: every level)")
@click.option("--resume", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Go on from the checkpoint in this folder (and go on writing checkpoints "
                   "there); the same spec and parameters only")
@click.option("--exact", is_flag=True,
              help="Keep every state, not only its 64-bit fingerprint: no collision can hide a "
                   "state (local engine, one worker; the state's row per state more memory)")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the levels' parent records and large frontiers (the state graph's: "
                   "its large levels and arrays) in a new folder in this one (removed at the "
                   "end) [default: a temporary folder]")
@click.option("--symmetry/--no-symmetry", default=False, show_default=True,
              help="Keep one state per orbit of the protocol's declared symmetry (Kafka: "
                   "renaming the replicas): distinct states then count orbits; verdicts and "
                   "shortest violations are the same")
@workers_option
@output_options(run_name_default="the scenario name, or the parameters")
@click.option("--scenario", default=None, metavar="NAME",
              help="Start from a named scenario's parameters (`hwcheck scenarios` lists them); "
                   "parameters given explicitly override them")
@click.option("--engine", type=click.Choice(["local", "spark"]), default="local",
              show_default=True,
              help="local: the compiled BFS on this machine; spark: PySpark, frontier "
                   "partitioned across executors")
@click.option("--spark-master", default="local[*]", show_default=True,
              help="Spark master URL, with --engine spark")
@click.option("--partitions", type=click.IntRange(min=1), default=None,
              help="Spark partitions of the state space [default: one per executor core]")
@click.option("--spark-slice", type=click.IntRange(min=1), default=None, metavar="N",
              help="Candidates a Spark task merges at a time: bounds a Python worker's memory "
                   "[default: 262,144, or the most --spark-worker-memory allows]")
@click.option("--spark-worker-memory", default=None, metavar="SIZE",
              help="Memory a Spark Python worker may use (e.g. 512M); a slice that needs more "
                   "is refused before the run starts")
@click.option("--recoverable", is_flag=True,
              help="Also decide whether a healthy state stays reachable from every reachable "
                   "state (the protocol's healthy predicate): stuck states, the shortest trace "
                   "to one (<out>/<run-name>/Recoverable.*)")
@tla_engine_option
@json_option
def check(invariants: tuple[str, ...], keep_going: bool, max_states: int | None,
          max_seconds: float | None, max_memory: str | None, checkpoint: Path | None,
          checkpoint_every: float, resume: Path | None, exact: bool, workdir: Path | None,
          symmetry: bool, workers: int | None, out: Path, run_name: str | None,
          scenario: str | None, engine: str, spark_master: str, partitions: int | None,
          spark_slice: int | None, spark_worker_memory: str | None, recoverable: bool,
          tla_engine: str | None, as_json: bool, quiet: bool, **kwargs: Any) -> None:
    """Explore every reachable state breadth-first and check the invariants.

    Ctrl-C, SIGTERM, running out of memory and the --max-* limits stop the run at its next safe
    point; it then reports what it found (verdict violated or unknown, never holds)."""
    start = time.monotonic()
    o = Output(as_json, quiet)
    proto, params, name = choose_protocol(kwargs, scenario)
    if proto.source.endswith(".tla"):  # the interpreter or the compiled path (decision 0019)
        from hwcheck.checker.cli.tla import check_module

        given = dict(symmetry=symmetry, recoverable=recoverable, checkpoint=checkpoint,
                     resume=resume, spark=engine != "local", workers=workers, exact=exact,
                     workdir=workdir)
        chosen, max_seconds = check_module(
            o, proto, params, run_name or name, tla_engine or "auto",
            {k: v is not None and v is not False for k, v in given.items()},
            tuple(invariants), keep_going, max_states, max_seconds, max_memory, out, start)
    elif tla_engine == "interpreted":  # any other spec is compiled: auto and compiled say so
        raise InputError("--tla-engine interpreted checks a TLA+ module on the interpreter: "
                         "give it with --spec FILE.tla")
    else:
        chosen = build_chosen(proto, params, name)
    # the engines are imported once the input is known to be good (a usage error stays fast)
    from hwcheck.checker.engines.options import LocalSettings
    from hwcheck.checker.plan import CheckPlan, CheckRequest, PlanError

    check_properties(chosen.spec, invariants, ("invariant", "action", "liveness"))
    req = CheckRequest(
        properties=tuple(invariants), keep_going=keep_going, max_states=max_states,
        max_seconds=max_seconds,
        max_memory=parse_size(max_memory) if max_memory is not None else None,
        symmetry=symmetry, engine=engine, workers=workers,
        local=LocalSettings(exact=exact, workdir=workdir, checkpoint=checkpoint,
                            checkpoint_every=checkpoint_every, resume=resume),
        spark_master=spark_master, partitions=partitions, spark_slice=spark_slice,
        spark_worker_memory=None if spark_worker_memory is None else
        parse_size(spark_worker_memory, "--spark-worker-memory"),
        recoverable=recoverable, report=o.progress_fn())
    try:
        plan = CheckPlan.of_request(chosen.spec, req)
    except PlanError as e:
        raise InputError(str(e)) from None
    run_check(o, chosen, plan, out, run_name or chosen.run_name)


def run_check(o: Output, chosen: Chosen, plan: CheckPlan, out: Path,
              run_name: str | None) -> NoReturn:
    """Carry out a check's plan, say what it found, and exit with its verdict's code."""
    from hwcheck.checker.run import execute, run_identity

    for note in plan.notes:
        o.say(note)
    o.say(f"hwcheck check: {params_line(chosen.proto, chosen.params)} ({plan.describe()})")
    sigterm_stops_like_ctrl_c()
    report = execute(plan, out=out, run_name=run_name)
    view = view_report(plan, o)
    say_findings(o, report)
    say_notes(o, chosen.proto, plan, report)
    result = report.as_json()
    tlc = say_verdict(o, chosen.proto, report)
    rec = None
    if plan.recoverable:  # after the check's verdict line: its own line, its own trace
        from hwcheck.checker.cli import graph as recover_cli

        rec = recover_cli.recoverability(plan.spec, report.recovery,
                                         Path(out) / report.run_name,
                                         run_identity(plan.spec, "check"), o)
        result["recoverability"] = rec.as_json()
    if view is not None:
        result["view"] = view
    if tlc is not None:
        result["tlc"] = tlc
    o.result(result)
    if rec is None:
        sys.exit(VERDICT_EXIT[report.verdict])
    from hwcheck.checker.cli.graph import exit_code

    sys.exit(exit_code(report.verdict, rec))


def say_findings(o: Output, report: Report) -> None:
    """Each violation with its trace, the liveness properties' decisions, the reachability
    checks not reached, and the actions' coverage."""
    from hwcheck.checker.traces import text

    for v in report.violations():
        o.say("")
        if v.trace is not None:
            o.say(text.text(v.trace))
        else:
            o.say(f"{v.name} violated in {v.length} steps")
        if v.files:
            o.say(f"written: {', '.join(str(p) for p in v.files)}")
        if v.note:
            o.say(f"note: {v.name}: {v.note}")
    if report.stats.graph is not None:
        o.say(liveness_line(report.stats.graph))
    for oc in report.outcomes:
        if oc.kind == "liveness":
            o.say(f"liveness: {oc.name} {oc.status}"
                  + (f" (a lasso of {oc.length} steps)" if oc.length is not None else "")
                  + (f"; {oc.note}" if oc.note and oc.status != "violated" else ""))
        if oc.kind == "reachable" and oc.status != "reached":
            o.say(f"note: {oc.name} was {oc.status} (a check that passes without it may be "
                  "vacuous)")
    cov = report.coverage()
    if cov:
        o.say("coverage (states enabling it / new states it reached first): "
              + ", ".join(f"{a} {c['enabled']:,}/{c['new']:,}" for a, c in cov.items()))
    never = report.never_enabled()
    if never:
        o.say(f"note: coverage: {', '.join(never)} never enabled in any explored state (a "
              "guard that cannot hold, or a model too small: what it should check is vacuous)")


def say_notes(o: Output, proto: Protocol, plan: CheckPlan, report: Report) -> None:
    """What qualifies the counts: an incomplete exploration, symmetry, several initial states,
    fingerprints, memory and disk."""
    ex, st = report.exploration, report.stats
    if not ex.complete:
        o.say(f"note: exploration incomplete: {ex.stop_reason}"
              + (f" (level {ex.partial_level} only in part: the stop came in the middle of "
                 "its expansion)" if ex.partial_level is not None else ""))
    elif ex.stop_reason:  # the exploration was whole; the run stopped while it was analysed
        o.say(f"note: stopped after the exploration: {ex.stop_reason}")
    if plan.options.symmetry:
        o.say(f"note: symmetry: one state kept per orbit of {proto.name}'s symmetry "
              f"(any permutation of its {plan.members} members); distinct states are orbits")
    if st.initial is not None and st.initial.states > 1:
        o.say(f"note: {st.initial.states:,} initial states (Init allows "
              f"{st.initial.choices:,} choices; the generated count is of successors only)")
    if plan.local.exact:
        o.say("note: exact: every state kept, no fingerprint collision can hide one")
    elif ex.distinct > 1:
        o.say(f"note: 64-bit fingerprints: the chance that a collision hid a state is at most "
              f"{ex.collision_probability:.1e}")
    if st.memory is not None:
        o.say(f"memory: peak {st.memory.peak_rss / 2**20:,.0f} MiB, "
              f"{st.memory.explore_bytes_per_state:.1f} bytes a state above the start; disk: "
              f"{st.memory.disk_bytes / 2**20:,.0f} MiB at most in the work folder")


def say_verdict(o: Output, proto: Protocol, report: Report) -> dict[str, int] | None:
    """The verdict line; for a TLA+ module also the counts as TLC states them (returned for
    the --json object)."""
    ex = report.exploration
    parts = [f"{v.name} in {v.length} steps" for v in report.violations()]
    detail = f" ({', '.join(parts)})" if parts else ""
    orbits = " (orbits)" if ex.symmetry else ""
    o.say(f"verdict: {report.verdict}{detail}; {ex.distinct:,} distinct states{orbits}, "
          f"{ex.generated:,} generated, depth {ex.depth}, {ex.seconds:.2f} s")
    if not proto.source.endswith(".tla"):
        return None
    init = report.stats.initial  # a TLA+ module: also the counts as TLC states them
    ways = init.choices if init is not None else 1
    tlc = {"distinct": ex.distinct, "generated": ex.generated + ways, "depth": ex.depth + 1}
    o.say(f"TLC's counts: {tlc['distinct']:,} distinct states, {tlc['generated']:,} "
          f"generated, depth {tlc['depth']} (the initial states counted)")
    return tlc


def liveness_line(g: GraphFigures) -> str:
    """What the state graph decided of the liveness properties, said exactly: all of them, some
    (the run stopped while they were decided: the rest are unknown, each saying why), or none
    (an incomplete graph, or a stop before the first was decided)."""
    n, decided = g.properties, g.decided
    size = (f"the {'whole ' if g.complete else 'incomplete '}state graph of "
            f"{g.states:,} states and {g.transitions:,} transitions")
    what = ("decided" if decided == n else f"{decided} of {n} decided, the rest unknown,"
            if decided else "none decided")
    return (f"liveness: {what} on {size} ({g.explore_seconds:.2f} s exploring, "
            f"{g.liveness_seconds:.2f} s deciding)")


def view_report(plan: CheckPlan, o: Output) -> dict[str, Any] | None:
    """Under a VIEW: its classification, said in one line; an order-dependent one is also
    explored without it (the local engine, no traces) and both counts are said."""
    from hwcheck.checker.engines.options import LocalSettings
    from hwcheck.checker.run import check as check_run
    from hwcheck.checker.semantics.view import classify

    spec = plan.spec
    vc = classify(spec)
    if vc is None:
        return None
    o.say(vc.line())
    out: dict[str, Any] = {"kind": vc.kind, "covers": list(vc.covered),
                           "excluded": list(vc.excluded), "reasons": list(vc.reasons)}
    if not vc.sound:
        full = check_run(dataclasses.replace(spec, view=None),
                         dataclasses.replace(plan.options, report=None), engine="local",
                         local=LocalSettings(workdir=plan.local.workdir)).exploration
        o.say(f"full state (no view): {full.distinct:,} distinct states, {full.generated:,} "
              f"generated, depth {full.depth}" + ("" if full.complete else " (incomplete)"))
        out["full_state"] = {"distinct": full.distinct, "generated": full.generated,
                             "depth": full.depth, "complete": full.complete}
    return out


@main.command()
@click.argument("trace_file", type=click.Path(path_type=Path))
@click.option("--spec", "spec_source", default=None, metavar="SOURCE",
              help="The protocol to replay against [default: the registered protocol the "
                   "trace's #meta names; a trace of a spec file or module needs it]")
@click.option("--param", "param_pairs", multiple=True, metavar="KEY=VALUE",
              help="A parameter of the protocol (repeatable) [default: the trace's #meta params]")
@click.option("--property", "prop", default=None, metavar="NAME",
              help="For a trace that does not name its property (another tool's): the property "
                   "it claims to violate; refused for a trace of another property")
@click.option("--z3", "with_z3", is_flag=True,
              help="Also certify every step with Z3 (guard and effect) and the final violation "
                   "(of a lasso: its steps and that its cycle closes)")
@json_option
def replay(trace_file: Path, spec_source: str | None, param_pairs: tuple[str, ...],
           prop: str | None, with_z3: bool, as_json: bool) -> None:
    """Re-run a trace through the interpreter and confirm what it claims.

    A trace written by hwcheck names its protocol and parameters in #meta: a registered
    protocol is replayed with no other input; a trace of a spec file or module needs --spec
    (a trace never chooses code to run), and a spec file other than the one the trace was
    written from (by its sha256) is said. A trace written by another tool (Apalache, Quint: no
    action names) needs --spec and --param; each step is then matched to the action that
    produces the next state."""
    from hwcheck.checker.traces import text
    from hwcheck.checker.traces.replay import ReplayRequest, load_and_replay
    from hwcheck.checker.traces.trace import TraceError

    o = Output(as_json)
    if spec_source is not None and spec_source.endswith(".tla") and not with_z3:
        from hwcheck.checker.tla import interpreted
        from hwcheck.checker.traces.itf import read

        try:
            data = read(Path(trace_file))
        except TraceError as e:
            raise InputError(str(e)) from None
        if interpreted.is_interpreted(data):  # a trace of a module the interpreter checked
            config = next((p.split("=", 1)[1] for p in param_pairs if p.startswith("config=")),
                          None)
            try:
                name, steps = interpreted.replay(data, Path(spec_source).expanduser().resolve(),
                                                 Path(config) if config else None,
                                                 str(trace_file))
            except SpecError as e:
                o.say(f"replay: does not replay: {e}")
                o.result({"command": "replay", "trace": str(trace_file),
                          "verdict": "rejected", "reason": str(e)})
                sys.exit(EXIT_FAILED)
            o.say(f"replay: confirmed: {name} violated in {steps} steps (interpreter engine)")
            o.result({"command": "replay", "trace": str(trace_file), "verdict": "confirmed",
                      "protocol": spec_source, "property": name, "kind": "invariant",
                      "length": steps, "cti": False})
            sys.exit(EXIT_HOLDS)
    req = ReplayRequest(Path(trace_file), spec_source, tuple(param_pairs), prop)
    try:
        spec, trace, result, check = load_and_replay(req)
    except TraceError as e:
        raise InputError(str(e)) from None
    if check.warning is not None:
        say(f"replay: {check.warning}", err=True)
    obj: dict[str, object] = {"command": "replay", "trace": str(trace_file),
                              "spec_digest": check.digest}
    if result is not None:
        o.say(f"replay: does not replay: {result}")
        o.result({**obj, "verdict": "rejected", "reason": str(result)})
        sys.exit(EXIT_FAILED)
    obj.update({"verdict": "confirmed", "protocol": spec.source or spec.name,
                "params": dict(spec.params), "property": trace.property, "kind": trace.kind,
                "length": trace.length, "cti": trace.is_cti})
    o.say(f"replay: confirmed: {text.headline(trace)}" + (
        " (one induction step from a pre-state that satisfies the hypotheses)"
        if trace.is_cti else ""))
    if with_z3:
        from hwcheck.checker.z3.certify import certify

        res = certify(spec, trace)
        o.say(f"replay --z3: {res.summary()}")
        obj["z3"] = "certified" if res.ok else "not certified"
        if not res.ok:
            obj["verdict"] = "rejected"
            o.result(obj)
            sys.exit(EXIT_FAILED)
    o.result(obj)
    sys.exit(EXIT_HOLDS)


@main.command()
@click.option("--spec", "spec_source", default=None, metavar="SOURCE",
              help="The protocol [default: the default protocol]")
@json_option
def params(spec_source: str | None, as_json: bool) -> None:
    """List a protocol's parameters: name, domain, default, and the option that sets it."""
    o = Output(as_json)
    proto = protocol_from({"spec_source": spec_source})
    o.say(f"{proto.name}: {proto.doc}" if proto.doc else proto.name)
    rows = []
    for p in proto.params:
        flag = p.flags[0] if p.flags and spec_source is None else f"--param {p.name}=VALUE"
        rows.append({"name": p.name, "domain": p.describe(), "default": p.default,
                     "option": flag, "help": p.help})
        shown = str(p.default).lower() if isinstance(p.default, bool) else str(p.default)
        o.say(f"  {p.name:<16} {p.describe():<24} default {shown:<8} {flag}"
              + (f"  {p.help}" if p.help else ""))
    if not proto.params:
        o.say("  (no parameters)")
    o.result({"command": "params", "protocol": proto.source or proto.name, "params": rows})


def run(args: list[str] | None = None) -> None:
    """Console entry point: one-line errors, fixed exit codes, no tracebacks for bad input.
    ``args`` defaults to the process's command line."""
    quick_exit()
    try:
        main.main(args=args, standalone_mode=False)
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
    except Exception as e:
        if not isinstance(e, _one_line_errors()):
            raise
        say(f"hwcheck: error: {e}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        say("hwcheck: interrupted", err=True)
        sys.exit(EXIT_UNKNOWN)


def quick_exit() -> None:
    """Let the interpreter end without collecting what it is about to drop: the loaded
    kernels leave hundreds of thousands of objects, and the collections that run while the
    interpreter shuts down took 0.13 s of every command's 0.2 s after its output. Every other
    exit handler runs first (this one was registered before them); files are closed by their
    ``with`` blocks, not by the collector."""
    global _quick_exit_registered
    if not _quick_exit_registered:
        atexit.register(gc.freeze)
        _quick_exit_registered = True


_quick_exit_registered = False


if __name__ == "__main__":
    run()


# Errors of modules a command may import, reported in one line (exit 2): looked up when one is
# raised, so that start-up (and a usage error) does not import the engines.
_LAZY_ERRORS = (("hwcheck.checker.engines.checkpoint", "CheckpointError"),
                ("hwcheck.checker.traces.output", "OutputError"))


def _one_line_errors() -> tuple[type[Exception], ...]:
    """The errors reported in one line: a module not imported yet cannot have raised its own."""
    lazy = [getattr(sys.modules[m], name) for m, name in _LAZY_ERRORS if m in sys.modules]
    return (SpecError, EnvironmentFault, *lazy)
