"""``hwcheck prove`` and ``hwcheck bmc``: the Z3 commands."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from hwcheck.checker.cli.common import (
    EXIT_FAILED,
    EXIT_HOLDS,
    EXIT_UNKNOWN,
    EXIT_VIOLATED,
    InputError,
    Output,
    check_properties,
    choose_spec,
    json_option,
    output_options,
    params_line,
    spec_options,
)
from hwcheck.spec.verdicts import Verdict

if TYPE_CHECKING:
    from hwcheck.checker.semantics.layout import Layout
    from hwcheck.checker.traces.trace import Trace
    from hwcheck.checker.z3.checks import ActionVerdict, InductionReport, Obligation
    from hwcheck.spec.lang import Expr, Spec
    from hwcheck.spec.protocol import Protocol


def _cti_trace(spec: Spec, layout: Layout, inv: str, ob: Obligation,
               hypotheses: list[str]) -> Trace:
    from hwcheck.checker.traces.trace import Trace, domain_cti, views_of

    if ob.inst is None or ob.pre is None:  # a CTI has its step and its pre-state
        raise ValueError(f"{ob.action}: a counterexample to induction without its step")
    if ob.post is None:  # the step leaves the declared domains: no post-state
        return domain_cti(spec, ob.goal, ob.inst.label, ob.pre,
                          {"invariant": inv, "case": ob.case, "broken": ob.goal,
                           "hypotheses": hypotheses})
    return Trace(spec.name, dict(spec.params), "z3-induction", ob.goal, "invariant",
                 [ob.inst.label], [layout.to_dict(ob.pre), layout.to_dict(ob.post)],
                 {"cti": True, "invariant": inv, "case": ob.case, "broken": ob.goal,
                  "hypotheses": hypotheses}, views=views_of(spec))


def cti_text(trace: Trace) -> str:
    """A counterexample to induction rendered like a trace step."""
    from hwcheck.checker.traces import text as render

    txt = render.text(trace)
    alone = len(trace.meta.get("hypotheses") or []) <= 1  # the invariant, no lemma
    head = (f"counterexample to induction: {trace.meta.get('invariant')} "
            f"{'alone (plain induction)' if alone else 'with its lemmas'}; "
            f"{(trace.actions or [trace.meta['domain_error']['step']])[0]} breaks "
            f"{trace.property}")
    lines = txt.splitlines()
    lines[0] = head
    return "\n".join(lines) + "\n"


def _conjuncts(spec: Spec, inv: str, lemma_names: Iterable[str],
               no_lemmas: bool) -> list[tuple[str, Expr]]:
    from hwcheck.checker.z3.checks import LemmasNotStated, conjuncts
    from hwcheck.spec.lang import SpecError

    try:
        return conjuncts(spec, inv, [] if no_lemmas else (list(lemma_names) or None))
    except LemmasNotStated:
        raise
    except SpecError as e:
        raise InputError(str(e)) from None


@click.command()
@spec_options
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Prove this invariant (repeatable) [default: every invariant]")
@click.option("--lemma", "lemma_names", multiple=True, metavar="NAME",
              help="Strengthen with this lemma (repeatable) [default: the lemmas the protocol "
                   "ships for each invariant; none: plain induction]")
@click.option("--no-lemmas", is_flag=True, help="Try the invariant alone")
@click.option("--list-lemmas", is_flag=True,
              help="List the protocol's lemmas and the invariants that use them, then exit")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds per solver query; a query that runs out is unknown")
@click.option("--no-symmetry", is_flag=True,
              help="Check every action instance instead of one per symmetry class (when the "
                   "protocol declares a symmetry)")
@click.option("--infer", is_flag=True,
              help="Find the strengthening lemmas: candidates true in every explored state, "
                   "kept while inductive (Houdini); saved as <out>/<run-name>/lemmas/<Inv>.py")
@click.option("--infer-states", type=click.IntRange(min=1), default=2_000_000,
              show_default=True, metavar="N",
              help="With --infer: explore at most this many states for the candidates")
@click.option("--infer-shrink", type=click.FloatRange(min=0), default=300.0, show_default=True,
              metavar="SECONDS",
              help="With --infer: once Houdini's fixpoint proves the invariant, shrink the "
                   "lemmas printed for at most this long (0: print every candidate kept)")
@click.option("--lemmas-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Strengthen with the lemmas of FILE too (a Python file with lemmas(spec), "
                   "as --infer writes)")
@output_options("Where counterexamples to induction are written "
                "(<out>/<run-name>/cti/<Invariant>-<Action>/)",
                run_name_default="the parameters, with -prove")
@json_option
def prove(invariants: tuple[str, ...], lemma_names: tuple[str, ...], no_lemmas: bool,
          list_lemmas: bool, timeout: float, no_symmetry: bool, infer: bool, infer_states: int,
          infer_shrink: float, lemmas_file: str | None, out: Path, run_name: str | None,
          quiet: bool, as_json: bool,
          **kwargs: Any) -> None:
    """Prove invariants inductive with Z3: Init implies them, and each action preserves the
    invariant together with its strengthening lemmas."""
    from hwcheck.checker.run import run_identity, run_name_of
    from hwcheck.checker.semantics.layout import Layout
    from hwcheck.checker.traces.output import prepare_run_folder
    from hwcheck.checker.z3.checks import symmetry_of
    from hwcheck.checker.z3.solver import worst

    o = Output(as_json, quiet)
    chosen = choose_spec(kwargs)
    proto, spec = chosen.proto, chosen.spec
    layout = Layout.of(spec)
    if list_lemmas:
        _list_lemmas(o, proto, spec)
    names = list(invariants) or [i.name for i in spec.invariants]
    check_properties(spec, names, kinds=("invariant",))
    sym = None if no_symmetry else symmetry_of(spec)
    identity = run_identity(spec, "prove")
    folder = prepare_run_folder(Path(out), run_name or f"{run_name_of(spec)}-prove", identity)
    from_file = _file_lemmas(lemmas_file, spec)
    o.say(f"hwcheck prove: {params_line(proto, spec.params)}")
    statuses, results = [], []
    carried: list[Any] = []  # --infer: what the invariants proved so far were proved with
    for inv in names:
        if infer:
            st, res = _prove_inferred(o, spec, inv, lemma_names, no_lemmas, from_file, timeout,
                                      sym, infer_states, folder, identity, carried,
                                      infer_shrink)
        else:
            st, res = _prove_one(o, spec, layout, inv, lemma_names, no_lemmas, from_file,
                                 timeout, sym, folder, identity)
        statuses.append(st)
        results.append(res)
    total = worst(statuses)
    o.result({"command": "prove", "verdict": total, "protocol": spec.source or spec.name,
              "params": dict(spec.params), "invariants": results})
    sys.exit({Verdict.HOLDS: EXIT_HOLDS, Verdict.VIOLATED: EXIT_VIOLATED,
              Verdict.UNKNOWN: EXIT_UNKNOWN}[total])


def _list_lemmas(o: Output, proto: Protocol, spec: Spec) -> NoReturn:
    """``prove --list-lemmas``: the protocol's lemmas and the invariants that use them."""
    from hwcheck.checker.z3.checks import shipped_lemmas
    from hwcheck.spec.protocol import lemmas_of

    rows = []
    for name, _ in lemmas_of(spec):
        users = [i.name for i in spec.invariants if name in shipped_lemmas(spec, i.name)]
        rows.append({"lemma": name, "used_for": users})
        o.say(f"{name}: used for {', '.join(users) or 'none by default'}")
    if not rows:
        o.say(f"{proto.name} ships no lemmas: prove uses plain induction")
    o.result({"command": "prove", "lemmas": rows})
    sys.exit(EXIT_HOLDS)


def _prove_one(o: Output, spec: Spec, layout: Layout, inv: str, lemma_names: Iterable[str],
               no_lemmas: bool, from_file: list[tuple[str, Expr]], timeout: float, sym: Any,
               folder: Path, identity: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``prove`` of one invariant with the lemmas given: its verdict and its --json entry."""
    from hwcheck.checker.z3.checks import LemmasNotStated
    from hwcheck.checker.z3.checks import prove as run_prove

    try:
        conj = _conjuncts(spec, inv, lemma_names, no_lemmas) + from_file
    except LemmasNotStated as e:  # unknown for this invariant; the others go on
        o.say(f"verdict: unknown: {e}")
        return Verdict.UNKNOWN, {"property": inv, "status": Verdict.UNKNOWN, "lemmas": [],
                                 "seconds": 0.0, "ctis": [], "reason": str(e)}
    lem = [n for n, _ in conj[1:]]
    o.say(f"{inv}: with {len(lem)} lemma(s){': ' + ', '.join(lem) if lem else ''}")

    def progress(v: ActionVerdict) -> None:
        o.progress(f"{inv}: {v.action}: {_word(v.status)} ({v.queries} queries, "
                   f"{v.seconds:.1f} s)")

    rep = run_prove(spec, conj, timeout, sym, progress)
    _say_steps(o, inv, rep)
    hypotheses = [n for n, _ in conj]
    ctis = [_write_cti(o, spec, layout, inv, v.counterexample, hypotheses, folder, identity)
            for v in rep.actions if v.status == Verdict.VIOLATED]
    st, extra = _verdict(o, spec, inv, rep, lem, folder, identity)
    return st, {"property": inv, "status": st, "lemmas": lem, "seconds": round(rep.seconds, 3),
                "ctis": ctis, **extra}


def _say_steps(o: Output, inv: str, rep: InductionReport) -> None:
    """What Init and each action's induction step came to."""
    for name, r in rep.init:
        if r.status != Verdict.HOLDS:
            what = ("does not satisfy" if r.status == Verdict.VIOLATED
                    else "unknown whether it satisfies")
            o.say(f"  Init {what} {name}" + (f" ({r.reason})" if r.reason else ""))
    if rep.init_status == Verdict.HOLDS:
        o.say(f"  Init: implies {inv} and every lemma")
    for v in rep.actions:
        if v.status == Verdict.HOLDS:
            o.say(f"  {v.action}: inductive ({v.seconds:.1f} s)")
        elif v.status == Verdict.VIOLATED:
            ob = v.counterexample
            o.say(f"  {v.action}: NOT inductive: {ob.case} breaks {ob.goal}")
        else:
            ob = v.unknown[0]
            o.say(f"  {v.action}: unknown ({len(v.unknown)} queries undecided, e.g. "
                  f"{ob.case} / {ob.goal}: {ob.result.reason})")


def _write_cti(o: Output, spec: Spec, layout: Layout, inv: str, ob: Obligation,
               hypotheses: list[str], folder: Path, identity: dict[str, Any]) -> dict[str, Any]:
    """A counterexample to induction, said and written under ``folder/cti``; its --json
    entry."""
    from hwcheck.checker.run import violation_json
    from hwcheck.checker.traces.output import write_trace, write_trace_marker

    trace = _cti_trace(spec, layout, inv, ob, hypotheses)
    txt = cti_text(trace)
    o.say("")
    o.say(txt)
    files = write_trace(spec, trace, folder / "cti" / f"{inv}-{ob.action}", text_body=txt)
    write_trace_marker(folder, identity)
    o.say(f"written: {', '.join(str(p) for p in files)}")
    return {"action": ob.action, "case": ob.case,
            **violation_json(ob.goal, trace.kind, 1, files)}


def _file_lemmas(path: str | None, spec: Spec) -> list[tuple[str, Expr]]:
    """The lemmas of ``--lemmas-file`` (bad input: one line, exit 2)."""
    if path is None:
        return []
    from hwcheck.checker.z3.infer import read_lemmas_file
    from hwcheck.spec.lang import SpecError

    try:
        return read_lemmas_file(path, spec)
    except SpecError as e:
        raise InputError(str(e)) from None


def _verdict(o: Output, spec: Spec, inv: str, rep: Any, lem: list[str], folder: Path,
             identity: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The verdict of one invariant's proof. A counterexample to induction alone is not a
    violation (its first state may be unreachable): unknown. Only an initial state that breaks
    the invariant is a violation, written as a trace that replay confirms."""
    from hwcheck.checker.z3.checks import InductionReport

    assert isinstance(rep, InductionReport)
    if rep.status == Verdict.HOLDS:
        o.say(f"verdict: proved {inv} inductive (with {len(lem)} lemma(s)); {rep.seconds:.1f} s")
        return Verdict.HOLDS, {}
    init_broken = any(n == inv and r.status == Verdict.VIOLATED for n, r in rep.init)
    if init_broken:
        files = _write_violation(o, spec, inv, [], "z3-init", folder, identity)
        if files is not None:
            o.say(f"verdict: violated: an initial state breaks {inv}; {rep.seconds:.1f} s")
            return Verdict.VIOLATED, {"trace": str(files[0])}
    if rep.status == Verdict.VIOLATED:
        reason = (f"not inductive {'with its lemmas' if lem else 'alone (plain induction)'}: a "
                  "counterexample to induction is not a violation (its first state may be "
                  "unreachable); try --infer")
    else:
        reason = "a query timed out or Z3 gave up; not a proof"
    o.say(f"verdict: unknown: {inv} {reason}; {rep.seconds:.1f} s")
    return Verdict.UNKNOWN, {"reason": reason}


def _write_violation(o: Output, spec: Spec, inv: str, path: list[tuple[int, int]], engine: str,
                     folder: Path, identity: dict[str, Any]) -> list[Path] | None:
    """A real violation of ``inv`` (``path`` from an initial state) replayed by the interpreter
    and written as a trace; None (said) when it does not replay."""
    from hwcheck.checker.semantics.interp import Interpreter
    from hwcheck.checker.traces import text as render
    from hwcheck.checker.traces.output import write_trace
    from hwcheck.checker.traces.trace import TraceError, from_path

    try:
        trace = from_path(spec, Interpreter(spec), inv, "invariant", engine,
                          [(a, f) for a, f in path])
    except TraceError as e:
        o.say(f"internal error: the violation of {inv} does not replay: {e}")
        return None
    files = write_trace(spec, trace, folder, identity=identity)
    o.say("")
    o.say(render.text(trace))
    o.say(f"written: {', '.join(str(p) for p in files)}")
    return files


PRINTED = 100  # the most inferred lemmas printed as text (every one is in the file and the JSON)


def _prove_inferred(o: Output, spec: Spec, inv: str, lemma_names: Iterable[str],
                    no_lemmas: bool, from_file: list[tuple[str, Expr]], timeout: float,
                    sym: Any, max_states: int, folder: Path, identity: dict[str, Any],
                    carried: list[Any], shrink: float = 300.0) -> tuple[str, dict[str, Any]]:
    """``prove --infer`` of one invariant: proved with the lemmas found (saved beside the run
    and printed as spec code), violated with a trace from an initial state, or unknown with the
    last counterexample to induction. ``carried``: the invariants proved before in this run
    with their inferred lemmas (inductive together), given to this one and, once it is proved,
    joined by it and its own."""
    from hwcheck.checker.run import violation_json
    from hwcheck.checker.semantics.layout import Layout
    from hwcheck.checker.traces.output import write_atomic
    from hwcheck.checker.z3.checks import LemmasNotStated
    from hwcheck.checker.z3.infer import Lemma, infer, lemmas_file

    try:  # the given lemmas (the protocol's, --lemma, --lemmas-file) are kept as they are
        given = _conjuncts(spec, inv, lemma_names, no_lemmas)[1:] + from_file
    except LemmasNotStated:
        given = list(from_file)
    given += [(lm.name, lm.expr) for lm in carried if all(lm.name != n for n, _ in given)]
    o.say(f"{inv}: inferring lemmas ({len(given)} given)")
    rep = infer(spec, inv, given, timeout=timeout, symmetry=sym, max_states=max_states,
                shrink_budget=shrink, note=lambda s: o.progress(f"{inv}: {s}"))
    tiers = [{"literals": t.width, "bound_variables": t.bounds, "existential": t.exists,
              "conjunction": t.conj, "candidates": t.generated,
              "tried": t.tried, "kept": t.kept, "implied": t.implied,
              "houdini_queries": t.queries,
              "seconds": round(t.seconds, 3), "outcome": t.outcome} for t in rep.tiers]
    res: dict[str, Any] = {"property": inv, "lemmas": [n for n, _ in given],
                           "seconds": round(rep.seconds, 3), "ctis": [],
                           "inferred": {"states": rep.states, "complete": rep.complete,
                                        "tiers": tiers, "lemmas": []}}
    o.say(f"  explored {rep.states:,} states"
          f"{'' if rep.complete else ' (not every reachable one: a limit stopped it)'}; "
          f"{sum(t.generated for t in rep.tiers):,} candidate(s), "
          f"{sum(t.queries for t in rep.tiers):,} Houdini queries")
    if rep.status == Verdict.VIOLATED:
        assert rep.path is not None
        files = _write_violation(o, spec, inv, rep.path, "explorer", folder, identity)
        if files is None:
            return Verdict.UNKNOWN, {**res, "status": Verdict.UNKNOWN,
                                     "reason": "the violation found does not replay"}
        o.say(f"verdict: violated: {inv} in {len(rep.path)} steps from an initial state; "
              f"{rep.seconds:.1f} s")
        return Verdict.VIOLATED, {**res, "status": Verdict.VIOLATED,
                                  **violation_json(inv, "invariant", len(rep.path), files)}
    if rep.status == Verdict.HOLDS:
        text = lemmas_file(spec, inv, carried + rep.lemmas)  # the file proves it alone
        carried += [Lemma(inv, spec.invariant_named(inv).expr,
                          f"spec.invariant_named({inv!r}).expr")]
        carried += [Lemma(f"{inv}_{lm.name}", lm.expr, lm.source) for lm in rep.lemmas]
        saved = write_atomic(folder / "lemmas" / f"{inv}.py", text)
        sh = rep.shrink
        why = f" ({sh.reason})" if sh and sh.reason else ""
        o.say(f"  Houdini's fixpoint kept {rep.fixpoint:,} candidate(s), the proof; "
              f"{len(rep.lemmas):,} of them printed{why}")
        o.say(f"  inferred {len(rep.lemmas)} lemma(s), saved in {saved} "
              f"(use them with --lemmas-file):")
        for lm in rep.lemmas[:PRINTED]:
            o.say(f"    ({lm.name!r}, {lm.source}),")
        if len(rep.lemmas) > PRINTED:
            o.say(f"    ... and {len(rep.lemmas) - PRINTED:,} more (in the file)")
        res["inferred"]["lemmas"] = [{"name": lm.name, "source": lm.source} for lm in rep.lemmas]
        res["inferred"]["file"] = str(saved)
        res["inferred"]["fixpoint"] = rep.fixpoint
        res["inferred"]["shrink"] = {"lemmas": len(rep.lemmas), "complete": not (sh and sh.reason),
                                     "reason": sh.reason if sh else ""}
        o.say(f"verdict: proved {inv} inductive (with {len(given)} given and "
              f"{len(rep.lemmas)} inferred lemma(s)); {rep.seconds:.1f} s")
        return Verdict.HOLDS, {**res, "status": Verdict.HOLDS}
    reason = rep.reason or "unknown"
    if rep.cti is not None:
        ob = rep.cti
        res["ctis"].append(_write_cti(o, spec, Layout.of(spec), inv, ob,
                                      [inv] + [n for n, _ in given], folder, identity))
        reason += f"; the last counterexample to induction: {ob.case} breaks {ob.goal}"
    o.say(f"verdict: unknown: {inv} not proved with inferred lemmas ({reason}); "
          f"{rep.seconds:.1f} s")
    return Verdict.UNKNOWN, {**res, "status": Verdict.UNKNOWN, "reason": reason}


def _word(status: str) -> str:
    return {"holds": "inductive", "violated": "NOT inductive", "unknown": "unknown"}[status]


@click.command()
@spec_options
@click.option("--depth", "-k", type=click.IntRange(min=0), default=10, show_default=True,
              help="Check every path of up to this many steps")
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Check only this invariant or action property (repeatable) [default: all]")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds per solver query [default: none]")
@click.option("--no-symmetry", is_flag=True,
              help="Do not break the symmetry between members the initial state cannot tell "
                   "apart (when the protocol declares a symmetry)")
@click.option("--no-assume", is_flag=True,
              help="Do not first prove the protocol's cheap invariants (Kafka: HwBelowLeo, "
                   "LeaderInIsr and their lemmas) and assume them in every state")
@output_options(run_name_default="the parameters, with -bmc")
@json_option
def bmc(depth: int, invariants: tuple[str, ...], timeout: float | None, no_symmetry: bool,
        no_assume: bool, out: Path, run_name: str | None, quiet: bool, as_json: bool,
        **kwargs: Any) -> None:
    """Bounded model checking with Z3: the shortest violation within --depth steps."""
    from hwcheck.checker.run import run_identity, run_name_of, violation_json
    from hwcheck.checker.semantics.interp import Interpreter
    from hwcheck.checker.traces import text as render
    from hwcheck.checker.traces.output import prepare_run_folder, write_trace
    from hwcheck.checker.traces.trace import TraceError, from_path
    from hwcheck.checker.z3.checks import bmc as run_bmc
    from hwcheck.checker.z3.checks import proven_facts, symmetry_of

    o = Output(as_json, quiet)
    chosen = choose_spec(kwargs)
    proto, spec = chosen.proto, chosen.spec
    check_properties(spec, invariants)
    props = [(p.name, "invariant", p.expr) for p in spec.invariants] + \
            [(p.name, "action", p.expr) for p in spec.action_properties]
    if invariants:
        props = [p for p in props if p[0] in invariants]
    o.say(f"hwcheck bmc: {params_line(proto, spec.params)} (depth {depth})")
    t0 = time.perf_counter()

    def progress(d: int, status: str, secs: float) -> None:
        o.progress(f"depth {d}: {'no violation' if status == 'holds' else status} "
                   f"({secs:.2f} s solve, {time.perf_counter() - t0:.1f} s total)")

    identity = run_identity(spec, "bmc")
    folder = prepare_run_folder(Path(out), run_name or f"{run_name_of(spec)}-bmc", identity)
    sym = None if no_symmetry else symmetry_of(spec)
    facts = []
    if not no_assume:
        facts = proven_facts(spec, timeout, sym)
        if facts:
            o.say(f"assuming in every state (proved inductive first): "
                  f"{', '.join(n for n, _ in facts)}")
    rep = run_bmc(spec, props, depth, timeout, progress, sym, facts)
    violations: list[dict[str, Any]] = []
    obj = {"command": "bmc", "protocol": spec.source or spec.name, "params": dict(spec.params),
           "depth": rep.depth, "seconds": round(rep.seconds, 3), "violations": violations}
    if rep.status == "violated":
        interp = Interpreter(spec)
        parts = []
        for h in rep.hits:
            try:
                trace = from_path(spec, interp, h.prop, h.kind, "z3-bmc", h.path)
            except TraceError as e:
                o.say(f"internal error: the Z3 trace for {h.prop} does not replay: {e}")
                o.result({**obj, "verdict": "error", "reason": str(e)})
                sys.exit(EXIT_FAILED)
            files = write_trace(spec, trace, folder, identity=identity)
            o.say("")
            o.say(render.text(trace))
            o.say(f"written: {', '.join(str(p) for p in files)}")
            parts.append(f"{h.prop} in {h.depth} steps")
            violations.append(violation_json(h.prop, h.kind, h.depth, files))
        o.say(f"verdict: violated ({', '.join(parts)}); bmc depth {rep.depth}, "
              f"{rep.seconds:.2f} s")
        o.result({**obj, "verdict": "violated"})
        sys.exit(EXIT_VIOLATED)
    if rep.depth == depth:
        reason = f"no violation within {depth} steps (bounded; not a proof)"
    else:
        reason = f"{rep.reason}; checked through depth {rep.depth}"
    o.say(f"verdict: unknown: {reason}; {rep.seconds:.2f} s")
    o.result({**obj, "verdict": "unknown", "reason": reason})
    sys.exit(EXIT_UNKNOWN)


COMMANDS = [prove, bmc]
