"""``hwcheck graph`` (export the explored state graph), ``hwcheck explore`` (an interactive
explorer in the browser), and what ``hwcheck check --recoverable`` prints."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hwcheck.checker.cli.common import (
    EXIT_UNKNOWN,
    EXIT_VIOLATED,
    VERDICT_EXIT,
    InputError,
    Output,
    choose_spec,
    params_line,
    spec_options,
)
from hwcheck.spec.lang import Spec
from hwcheck.spec.verdicts import Verdict

if TYPE_CHECKING:
    from hwcheck.checker.graph.recover import Recoverability


SCENARIO_OPTION = click.option(
    "--scenario", default=None, metavar="NAME",
    help="Start from a named scenario's parameters; parameters given explicitly override them")


# -- check --recoverable -------------------------------------------------------------------------


def recoverability(spec: Spec, res: Recoverability | None, folder: Path | None,
                   identity: dict[str, Any] | None, o: Output) -> Recoverability:
    """Print what ``check --recoverable`` found (``res``, a ``Recoverability``: the stuck
    trace, then the one greppable ``recoverable:`` line) and write the stuck trace under
    ``folder``."""
    from hwcheck.checker.graph import recover

    if res is None:  # stopped before the graph was explored
        res = recover.Recoverability(Verdict.UNKNOWN, 0, 0, 0, 0, 0, None, None, "-", 0.0, 0.0,
                                     "stopped before the graph was explored")
    if res.trace is not None:
        o.say("")
        o.say(recover.stuck_text(res))
        if folder is not None:
            try:
                files = recover.write_stuck_trace(spec, res, folder, identity)
                o.say(f"written: {', '.join(str(p) for p in files)}")
            except OSError as e:
                o.say(f"note: {recover.NAME}: its trace could not be written: {e.strerror or e}")
    elif folder is not None and res.verdict == Verdict.RECOVERABLE:
        recover.clear_stuck_trace(folder)
    if res.note:
        o.say(f"note: {res.note}")
    o.say(res.line())
    return res


def exit_code(verdict: str, rec: Recoverability | None) -> int:
    """The exit code of ``check`` with ``--recoverable``: a violation or a stuck state is 12,
    else unknown (3) if either is unknown, else 0."""
    if rec is None:
        return VERDICT_EXIT[verdict]
    if verdict == "violated" or rec.verdict == "stuck":
        return EXIT_VIOLATED
    if verdict == "unknown" or rec.verdict == "unknown":
        return EXIT_UNKNOWN
    return VERDICT_EXIT[verdict]


# -- hwcheck graph -------------------------------------------------------------------------------


@click.command()
@spec_options
@SCENARIO_OPTION
@click.option("--format", "fmt", type=click.Choice(["dot", "graphml", "json"]), default="dot",
              show_default=True, help="dot: Graphviz; graphml; json: networkx's node-link form")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The file to write [default: stdout]")
@click.option("--max-states", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Refuse a graph with more states than this (Graphviz draws a few thousand)")
@click.option("--quiet", "-q", is_flag=True, help="No summary on stderr")
def graph(scenario: str | None, fmt: str, out: Path | None, max_states: int, quiet: bool,
          **kwargs: Any) -> None:
    """Export the explored state graph: every reachable state and transition, with action labels;
    violating states and stuck ones (no healthy state reachable) marked, and the shortest
    counterexample path highlighted.

    `hwcheck graph -R 2 -M 1 -E 2 -o g.dot && dot -Tsvg g.dot -o g.svg` draws it."""
    from hwcheck.checker.graph import export

    chosen = choose_spec(kwargs, scenario)
    proto, spec = chosen.proto, chosen.spec
    try:
        marked = export.explore_marked(spec, max_states=max_states)
    except export.GraphTooLarge as e:
        raise InputError(str(e)) from None
    G = export.to_networkx(spec, marked)
    try:
        export.write(G, fmt, out if out is not None else sys.stdout)
    except OSError as e:
        raise InputError(f"--out {out}: {e.strerror or e}") from None
    if not quiet:
        g = marked.graph
        stuck = "" if marked.stuck is None else \
            f", {sum(1 for _, a in G.nodes(data=True) if a['stuck'] and not a['at_bound']):,} " \
            "stuck"
        cx = f"{marked.target_why} in {g.depth_of(marked.target)} steps" \
            if marked.target is not None else "none"
        where = f"; written to {out}" if out is not None else ""
        click.echo(f"graph: {params_line(proto, spec.params)}: {g.n:,} states, {g.nedges:,} "
                   f"transitions, depth {g.depth}{stuck}; shortest counterexample: {cx}{where}",
                   err=True)


# -- hwcheck explore -----------------------------------------------------------------------------


@click.command()
@spec_options
@SCENARIO_OPTION
@click.option("--trace", "trace_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="A trace file (.itf.json) to step through: its spec is the "
                                 "registered protocol its #meta names, or --spec; its "
                                 "parameters are its #meta's, under --param")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on (keep the default: the explorer has no "
                   "authentication)")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="The port (0: any free one)")
def explore(scenario: str | None, trace_file: Path | None, host: str, port: int,
            **kwargs: Any) -> None:
    """An interactive explorer in the browser: the current state drawn with the protocol's view,
    the enabled actions (click one to take it), back, the states of a loaded trace, and the
    properties the current state violates. Successors come from the compiled kernel, the rest
    from the interpreter: what you see is what the checker explores. Ctrl-C stops it."""
    from hwcheck.checker.explorer.server import serve
    from hwcheck.checker.explorer.session import Session, SessionError

    # the protocol's own options or a scenario choose the spec; otherwise a trace's spec is
    # the registered protocol it names or the --spec given, with the trace's parameters
    given = any(v for k, v in kwargs.items() if k not in ("spec_source", "param_pairs")
                and v is not None) or scenario is not None
    try:
        if trace_file is not None and not given:
            session = Session.from_trace_file(trace_file, kwargs.get("spec_source"),
                                              tuple(kwargs.get("param_pairs") or ()))
            if session.warning is not None:
                click.echo(f"explore: {session.warning}", err=True)
        else:
            session = Session(choose_spec(kwargs, scenario).spec)
            if trace_file is not None:
                session.load_trace_file(trace_file)
    except SessionError as e:
        raise InputError(str(e)) from None
    try:
        server = serve(session, host, port)
    except OSError as e:
        raise InputError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    url = server.url
    if not server.loopback_only:
        click.echo(f"explore: warning: listening on {host}, not a loopback address: anyone who "
                   "can reach it can drive the explorer", err=True)
    click.echo(f"explore: {session.title()}: serving {url} (Ctrl-C stops)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    click.echo("explore: stopped", err=True)


COMMANDS = [graph, explore]
