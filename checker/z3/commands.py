"""``hwcheck prove`` and ``hwcheck bmc``: the Z3 commands (registered by checker/cli.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ..cli import (EXIT_HOLDS, EXIT_UNKNOWN, EXIT_VIOLATED, InputError, model_options,
                   output_options, params_from, progress_line, say)


def _cti_trace(spec, layout, inv: str, ob):
    from ..trace import Trace

    return Trace(spec.name, dict(spec.params), "z3-induction", ob.goal, "invariant",
                 [ob.inst.label], [layout.to_dict(ob.pre), layout.to_dict(ob.post)],
                 {"cti": True, "invariant": inv, "case": ob.case, "broken": ob.goal})


def cti_text(trace) -> str:
    """A counterexample to induction rendered like a trace step."""
    from .. import render

    txt = render.text(trace)
    head = (f"counterexample to induction: {trace.meta.get('invariant')} with its lemmas; "
            f"{trace.actions[0]} breaks {trace.property}")
    lines = txt.splitlines()
    lines[0] = head
    return "\n".join(lines) + "\n"


def _conjuncts(spec, inv: str, lemma_names, no_lemmas: bool):
    from spec.lang import SpecError

    from .checks import conjuncts

    try:
        return conjuncts(spec, inv, [] if no_lemmas else (list(lemma_names) or None))
    except SpecError as e:
        raise InputError(str(e)) from None


@click.command()
@model_options
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Prove this invariant (repeatable) [default: every invariant]")
@click.option("--lemma", "lemma_names", multiple=True, metavar="NAME",
              help="Strengthen with this lemma (repeatable) [default: the lemmas shipped for "
                   "each invariant in spec/lemmas.py]")
@click.option("--no-lemmas", is_flag=True, help="Try the invariant alone")
@click.option("--list-lemmas", is_flag=True,
              help="List the shipped lemmas and the invariants that use them, then exit")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds per solver query; a query that runs out is unknown")
@click.option("--no-symmetry", is_flag=True,
              help="Check every action instance instead of one per replica-symmetry class")
@output_options("Where counterexamples to induction are written")
def prove(invariants, lemma_names, no_lemmas, list_lemmas, timeout, no_symmetry, out, run_name,
          quiet, **kwargs) -> None:
    """Prove invariants inductive with Z3: Init implies them, and each action preserves the
    invariant together with its strengthening lemmas."""
    from spec.lemmas import replica_symmetry
    from spec.model import build

    from .. import render
    from ..layout import Layout
    from ..run import write_trace
    from .checks import prove as run_prove
    from .solver import HOLDS, UNKNOWN, VIOLATED, worst

    params = params_from(kwargs)
    spec = build(params)
    layout = Layout.of(spec)
    if list_lemmas:
        from spec.lemmas import lemmas, shipped_for

        for name, _ in lemmas(spec):
            users = [i.name for i in spec.invariants if name in shipped_for(i.name)]
            say(f"{name}: used for {', '.join(users) or 'none by default'}")
        sys.exit(EXIT_HOLDS)
    names = list(invariants) or [i.name for i in spec.invariants]
    for n in names:
        if n not in {i.name for i in spec.invariants}:
            raise InputError(f"unknown invariant {n!r} (known: "
                             f"{', '.join(i.name for i in spec.invariants)})")
    sym = None if no_symmetry else replica_symmetry(spec)
    folder = Path(out) / (run_name or params.slug())
    say(f"hwcheck prove: {render._param_line(params.as_dict())}")
    statuses = []
    for inv in names:
        conj = _conjuncts(spec, inv, lemma_names, no_lemmas)
        lem = [n for n, _ in conj[1:]]
        say(f"{inv}: with {len(lem)} lemma(s){': ' + ', '.join(lem) if lem else ''}")

        def progress(v):
            if not quiet:
                progress_line(f"{inv}: {v.action}: {_word(v.status)} ({v.queries} queries, "
                              f"{v.seconds:.1f} s)")

        rep = run_prove(spec, conj, timeout, sym, progress)
        for name, r in rep.init:
            if r.status != HOLDS:
                what = ("does not satisfy" if r.status == VIOLATED
                        else "unknown whether it satisfies")
                say(f"  Init {what} {name}" + (f" ({r.reason})" if r.reason else ""))
        if rep.init_status == HOLDS:
            say(f"  Init: implies {inv} and every lemma")
        for v in rep.actions:
            if v.status == HOLDS:
                say(f"  {v.action}: inductive ({v.seconds:.1f} s)")
            elif v.status == VIOLATED:
                ob = v.cti
                say(f"  {v.action}: NOT inductive: {ob.case} breaks {ob.goal}")
            else:
                ob = v.unknown[0]
                say(f"  {v.action}: unknown ({len(v.unknown)} queries undecided, e.g. {ob.case} / "
                    f"{ob.goal}: {ob.result.reason})")
        for v in rep.actions:
            if v.status == VIOLATED:
                trace = _cti_trace(spec, layout, inv, v.cti)
                txt = cti_text(trace)
                say("")
                say(txt)
                files = write_trace(spec, trace, folder / f"cti-{inv}-{v.action}")
                for f in files:  # the text file carries the CTI's own headline
                    if f.suffix == ".txt":
                        f.write_text(txt)
                say(f"written: {', '.join(str(p) for p in files)}")
        st = rep.status
        statuses.append(st)
        if st == HOLDS:
            say(f"verdict: proved {inv} inductive (with {len(lem)} lemma(s)); {rep.seconds:.1f} s")
        elif st == VIOLATED:
            say(f"verdict: not inductive: {inv} with its lemmas; {rep.seconds:.1f} s")
        else:
            say(f"verdict: unknown: {inv} (a query timed out or Z3 gave up; not a proof); "
                f"{rep.seconds:.1f} s")
    total = worst(statuses)
    sys.exit({HOLDS: EXIT_HOLDS, VIOLATED: EXIT_VIOLATED, UNKNOWN: EXIT_UNKNOWN}[total])


def _word(status: str) -> str:
    return {"holds": "inductive", "violated": "NOT inductive", "unknown": "unknown"}[status]


@click.command()
@model_options
@click.option("--depth", "-k", type=click.IntRange(min=0), default=10, show_default=True,
              help="Check every path of up to this many steps")
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Check only this invariant or action property (repeatable) [default: all]")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds per solver query [default: none]")
@click.option("--no-symmetry", is_flag=True,
              help="Do not break the symmetry between replicas the initial state cannot tell "
                   "apart")
@click.option("--no-assume", is_flag=True,
              help="Do not first prove the cheap invariants (HwBelowLeo, LeaderInIsr and their "
                   "lemmas) and assume them in every state")
@output_options()
def bmc(depth, invariants, timeout, no_symmetry, no_assume, out, run_name, quiet,
        **kwargs) -> None:
    """Bounded model checking with Z3: the shortest violation within --depth steps."""
    from spec.lemmas import replica_symmetry
    from spec.model import build

    from .. import render
    from ..interp import Interpreter
    from ..run import known_properties, write_trace
    from ..trace import TraceError, from_path
    from .checks import bmc as run_bmc, proven_facts

    params = params_from(kwargs)
    spec = build(params)
    known = known_properties(spec)
    for n in invariants:
        if n not in known:
            raise InputError(f"unknown invariant {n!r} (known: {', '.join(known)})")
    props = [(p.name, "invariant", p.expr) for p in spec.invariants] + \
            [(p.name, "action", p.expr) for p in spec.action_properties]
    if invariants:
        props = [p for p in props if p[0] in invariants]
    say(f"hwcheck bmc: {render._param_line(params.as_dict())} (depth {depth})")
    t0 = time.perf_counter()

    def progress(d, status, secs):
        if not quiet:
            progress_line(f"depth {d}: {'no violation' if status == 'holds' else status} "
                          f"({secs:.2f} s solve, {time.perf_counter() - t0:.1f} s total)")

    sym = None if no_symmetry else replica_symmetry(spec)
    facts = []
    if not no_assume:
        facts = proven_facts(spec, timeout, replica_symmetry(spec))
        if facts:
            say(f"assuming in every state (proved inductive first): "
                f"{', '.join(n for n, _ in facts)}")
    rep = run_bmc(spec, props, depth, timeout, progress, sym, facts)
    if rep.status == "violated":
        interp = Interpreter(spec)
        parts = []
        for h in rep.hits:
            try:
                trace = from_path(spec, interp, h.prop, h.kind, "z3-bmc", h.path)
            except TraceError as e:
                say(f"internal error: the Z3 trace for {h.prop} does not replay: {e}")
                sys.exit(1)
            files = write_trace(spec, trace, Path(out) / (run_name or params.slug()))
            say("")
            say(render.text(trace))
            say(f"written: {', '.join(str(p) for p in files)}")
            parts.append(f"{h.prop} in {h.depth} steps")
        say(f"verdict: violated ({', '.join(parts)}); bmc depth {rep.depth}, "
            f"{rep.seconds:.2f} s")
        sys.exit(EXIT_VIOLATED)
    if rep.depth == depth:
        say(f"verdict: unknown: no violation within {depth} steps (bounded; not a proof); "
            f"{rep.seconds:.2f} s")
    else:
        say(f"verdict: unknown: {rep.reason}; checked through depth {rep.depth}; "
            f"{rep.seconds:.2f} s")
    sys.exit(EXIT_UNKNOWN)


COMMANDS = [prove, bmc]
