"""Recoverability: can the protocol always get back to a healthy state?

Safety invariants say what must never happen; they say nothing of whether a system that went
wrong (a crash, a divergent log) can heal. A reachable state is *stuck* when no healthy state
(the protocol's ``healthy`` predicate) is reachable from it. Stuck states that satisfy the
protocol's ``at_bound`` predicate are stuck only because the model is bounded (for Kafka: no
leader and no epoch left to elect one with); they are counted apart and are not findings.

The answer is computed on the explored state graph (``explore.py``): the states that can reach
a healthy state are found backwards from the healthy ones, with networkx while the graph has at
most ``NX_MAX_EDGES`` transitions and with arrays beyond (``reverse.py``). The nearest stuck
state (ids are in breadth-first order, so the least id is a nearest one) becomes a trace,
replayed through the interpreter like every counterexample and written beside them as
``Recoverable.itf.json``, ``.txt`` and ``.html``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit

from hwcheck.checker.engines.options import LocalSettings, Options, PropertySet
from hwcheck.checker.graph import liveness as live
from hwcheck.checker.graph.buffers import base_pages
from hwcheck.checker.graph.explore import GraphSource, StateGraph, explore
from hwcheck.checker.graph.reverse import (
    can_reach_csr,
    can_reach_networkx,
    reachable_from,
)
from hwcheck.checker.search import faults
from hwcheck.checker.search.driver import Search
from hwcheck.checker.search.exploration import Exploration, interrupt_reason
from hwcheck.checker.search.signals import (
    Stopped,
    no_stop,
    poll,
    signals_held,
    stoppable,
)
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.lang import Expr, Liveness, Spec, SpecError
from hwcheck.spec.protocol import Recovery, protocol_of, recovery_of
from hwcheck.spec.verdicts import Verdict

if TYPE_CHECKING:
    from hwcheck.checker.traces.trace import Trace

NAME = "Recoverable"  # the claim a stuck trace breaks (its files' name)
NX_MAX_EDGES = 2_000_000  # networkx up to this many transitions, arrays beyond
DEFAULT_MAX_STATES = 20_000_000
METHODS = ("auto", "networkx", "arrays")



@dataclass
class Recoverability:
    """What ``check --recoverable`` found."""

    verdict: str  # recoverable | stuck | unknown
    states: int
    transitions: int
    healthy: int  # healthy states
    stuck: int  # stuck states, not counting those at the model's bounds: the findings
    at_bound: int  # stuck states at the model's bounds (counted apart)
    shortest: int | None  # steps from the initial state to a nearest stuck state
    shortest_at_bound: int | None
    method: str  # networkx | arrays | - (the graph was incomplete)
    seconds: float  # exploring the graph and searching it
    search_seconds: float  # the backward search alone
    stop_reason: str = ""
    witness: int | None = None  # the id of the nearest stuck state
    witness_reach: int = 0  # how many states are reachable from it (none healthy)
    trace: Trace | None = None  # the Trace to the witness (built by ``stuck_trace``)
    files: list[Path] = dataclasses.field(default_factory=list)
    note: str = ""
    late: bool = False  # unknown because the run stopped after the graph was explored

    @classmethod
    def stopped(cls, graph: StateGraph, why: str) -> Recoverability:
        """Unknown: the run stopped (``why``) after ``graph`` was explored, before the
        answer."""
        return cls(Verdict.UNKNOWN, graph.n, graph.nedges,
                   int(np.count_nonzero(graph.flag("healthy"))), 0, 0, None, None, "-",
                   graph.seconds, 0.0, why, late=True)

    def as_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "states": self.states, "transitions": self.transitions,
                "healthy": self.healthy, "stuck": self.stuck, "stuck_at_bound": self.at_bound,
                "shortest": self.shortest, "shortest_at_bound": self.shortest_at_bound,
                "method": self.method, "seconds": round(self.seconds, 3),
                "search_seconds": round(self.search_seconds, 3),
                "trace": str(self.files[0]) if self.files else None,
                "stop_reason": self.stop_reason}

    def line(self) -> str:
        """The one greppable line: ``recoverable: <verdict>; ...``."""
        head = f"recoverable: {self.verdict}"
        if self.verdict == Verdict.UNKNOWN:
            why = self.stop_reason if self.late else \
                f"the graph is incomplete: {self.stop_reason}"
            return (f"{head} ({why}); {self.states:,} states, {self.transitions:,} "
                    "transitions")
        found = (f"{self.stuck:,} stuck state{'s' if self.stuck != 1 else ''}"
                 + (f", the nearest in {self.shortest} steps" if self.shortest is not None
                    else ""))
        return (f"{head}; {found} (and {self.at_bound:,} stuck only at the model's bounds); "
                f"{self.healthy:,} healthy; {self.states:,} states, {self.transitions:,} "
                f"transitions, {self.method}, {self.seconds:.2f} s")


def recovery(spec: Spec) -> Recovery:
    """The protocol's recoverability predicates for ``spec``; a SpecError when it states none."""
    rec = recovery_of(spec)
    if rec is None:
        raise SpecError(f"{protocol_of(spec).name} states no healthy predicate (Checking.healthy); "
                        "recoverability needs one")
    return rec


def predicates(rec: Recovery) -> list[tuple[str, Expr]]:
    out: list[tuple[str, Expr]] = [("healthy", rec.healthy)]
    if rec.at_bound is not None:
        out.append(("at_bound", rec.at_bound))
    return out


def classify(graph: StateGraph, method: str = "auto", workers: int = 1,
             stop: np.ndarray | None = None) -> tuple[np.ndarray, str, float]:
    """(stuck: bool [n], the method used, seconds) on a complete graph with a ``healthy``
    flag; ``workers``: threads that share the arrays' sweeps; ``StopRequested`` once ``stop``
    (``signals.stoppable``'s flag) is set."""
    stop = no_stop() if stop is None else stop
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}")
    if method == "auto":
        method = "networkx" if graph.nedges <= NX_MAX_EDGES else "arrays"
    healthy = graph.flag("healthy")
    t = time.perf_counter()
    faults.at("terminate-reverse", 0, stop)  # tests: a SIGTERM as the backward search starts
    heal = (can_reach_networkx(graph.n, graph.src(), graph.dst, healthy)
            if method == "networkx" else can_reach_csr(graph.offsets, graph.dst, healthy,
                                                       workers=workers, stop=stop))
    poll(stop)
    return ~heal, method, time.perf_counter() - t


def analyse(graph: StateGraph, method: str = "auto", workers: int = 1,
            stop: np.ndarray | None = None) -> Recoverability:
    """Recoverability on an explored graph (flags ``healthy`` and, when the protocol has one,
    ``at_bound``); ``StopRequested`` once ``stop`` is set."""
    healthy = int(np.count_nonzero(graph.flag("healthy")))
    if not graph.complete:
        return Recoverability(Verdict.UNKNOWN, graph.n, graph.nedges, healthy, 0, 0, None, None,
                              "-", graph.seconds, 0.0, graph.stop_reason)
    stuck, used, secs = classify(graph, method, workers, stop)
    bound = graph.gk.bit("at_bound") if "at_bound" in graph.gk.flag_names else np.uint64(0)
    nstuck, first, nbound, first_bound = _stuck_counts(stuck, graph.flags, bound)
    res = Recoverability(
        Verdict.STUCK if nstuck else Verdict.RECOVERABLE, graph.n, graph.nedges, healthy,
        nstuck, nbound, graph.depth_of(first) if nstuck else None,
        graph.depth_of(first_bound) if nbound else None, used, graph.seconds + secs, secs)
    if nstuck:
        res.witness = first
        res.witness_reach = int(reachable_from(res.witness, graph.offsets, graph.dst,
                                               stop).sum())
    if graph.refused:
        res.note = (f"{graph.refused:,} steps leave the declared domains and are not in the "
                    "graph (`hwcheck check` reports them)")
    return res


@njit(cache=True, nogil=True)
def _stuck_counts(stuck: np.ndarray, flags: np.ndarray,
                  bound: np.uint64) -> tuple[int, int, int, int]:  # pragma: no cover - compiled
    """(stuck states not at the model's bounds, the least of them, stuck states at the bounds
    (flag ``bound``), the least of them), -1 for none: the counts in one pass without a
    branch (stuck states come in no order a predictor learns), the least ones looked for only
    when there are any."""
    n_stuck = n_bound = 0
    for i in range(stuck.size):
        s = np.int64(stuck[i])
        b = np.int64((flags[i] & bound) != 0)
        n_bound += s & b
        n_stuck += s & (b ^ 1)
    first = first_bound = -1
    i = 0
    while n_stuck and first < 0:
        if stuck[i] and not flags[i] & bound:
            first = i
        i += 1
    i = 0
    while n_bound and first_bound < 0:
        if stuck[i] and flags[i] & bound:
            first_bound = i
        i += 1
    return n_stuck, first, n_bound, first_bound


def check_on_graph(kernel: Kernel, opts: Options, max_states: int | None = DEFAULT_MAX_STATES,
                   method: str = "auto", recoverable: bool = True,
                   liveness: Sequence[Liveness] = (), workers: int = 1,
                   local: LocalSettings | None = None,
                   ) -> tuple[Exploration, Recoverability | None, StateGraph,
                              list[live.LiveOutcome]]:
    """A check, its recoverability and its liveness properties in one exploration: the search
    runs on the state graph with the check's stop rule (its report is the check's, as any
    engine's), then goes on to the whole graph (the user's time and memory limits still hold)
    and decides recoverability (``recoverable``) and each of ``liveness`` (``liveness.decide``;
    with the protocol's at-bound predicate when it states one) on it. Under ``--symmetry`` the
    graph is of orbits (the healthy predicate is symmetric, so a state is stuck exactly when
    its orbit is). ``workers``: threads that expand each level (the same graph for any
    number). ``local.checkpoint``: the exploration checkpoints there at level boundaries
    (``graph/checkpoint.py``); ``local.resume``: it goes on from such a checkpoint, to the
    counts, graph and verdicts of a run never stopped."""
    spec = kernel.spec
    local = local or LocalSettings()
    rec = recovery(spec) if recoverable else recovery_of(spec) if liveness else None
    preds = predicates(rec) if rec is not None else []
    for p in liveness or []:
        preds += p.predicates
    # the check's invariants are checked as the engines check them (``props``), not flagged;
    # recoverability reads no transition's action, liveness (fairness, lassos) does
    source = GraphSource(kernel, preds, invariants=False, max_states=max_states,
                         props=PropertySet(kernel, opts), workers=workers,
                         edge_actions=bool(liveness), checkpoint=_path(local.checkpoint),
                         checkpoint_every=local.checkpoint_every, resume=_path(local.resume),
                         workdir=local.workdir)
    s = Search(source, opts.report)
    ex: Exploration | None = None
    graph: StateGraph | None = None
    late = ""  # why the run stopped after the exploration (a signal, a limit)
    with base_pages():
        try:
            ex = s.run(opts.stop_rule())
            if source.check is not None:  # resumed after the check's part: its report then
                ex = source.check
            source.check = ex  # (the checkpoints of the rest carry it)
            s.run(StopRule(first_hit=False, max_seconds=opts.max_seconds,
                           max_memory=opts.max_memory))
        finally:
            try:
                with signals_held():  # the figures and the graph taken whole
                    full = s.finish()
                    graph = source.graph(full)
            except KeyboardInterrupt as e:  # noted while they were taken: they are whole
                late = f"{interrupt_reason(e)} before the graph was analysed"
    assert ex is not None and graph is not None
    ex.stats = full.stats
    res: Recoverability | None = None
    outcomes: list[live.LiveOutcome] = []
    phase = "before the graph was analysed"
    t = time.perf_counter()
    # the user's time and memory limits hold to the end: asked while the graph is analysed
    rule = StopRule(first_hit=False, max_seconds=opts.max_seconds, max_memory=opts.max_memory)
    limit = None if rule.max_seconds is None and rule.max_memory is None else \
        (lambda: rule.limit(0, s.progress.elapsed()))
    if not late and graph.complete:
        try:
            with stoppable(limit) as stop:
                faults.at("terminate-graph", 0, stop)  # tests: a SIGTERM once it is explored
                poll(stop)
                if recoverable:
                    phase = "while recoverability was decided"
                    res = analyse(graph, method, workers, stop)
                    if res.witness is not None:
                        phase = "while the stuck trace was built"
                        faults.at("terminate-stuck", 0, stop)  # tests: a SIGTERM before it
                        poll(stop)
                        res.trace = stuck_trace(spec, graph, res)
                        poll(stop)
                if liveness:
                    phase = "while liveness was decided"
                    t = time.perf_counter()
                    outcomes = live.decide(spec, graph, list(liveness), stop=stop, workers=workers)
                    poll(stop)  # those it stopped are unknown; the signal is said below
                phase = "after the graph was analysed"
        except (KeyboardInterrupt, MemoryError) as e:
            late = f"{interrupt_reason(e)} {phase}"
        except Stopped as e:
            late = f"{e.reason} {phase}"
    elif not late:  # an incomplete graph: every answer is unknown, said by each
        if recoverable:
            res = analyse(graph, method, workers)
        outcomes = live.decide(spec, graph, list(liveness), workers=workers) if liveness else []
    graph.stats["liveness_seconds"] = time.perf_counter() - t
    if late:
        ex.stop_reason = ex.stop_reason or late
        if recoverable and (res is None or res.verdict == Verdict.UNKNOWN):
            res = Recoverability.stopped(graph, late)
        elif res is not None and res.witness is not None and res.trace is None:
            # decided: the stuck states are counted; only their trace is missing
            res.stop_reason = late
            res.note = "; ".join(filter(None, [res.note, "the stuck trace was not built (the "
                                               f"run was {late})"]))
        decided = {o.name: o for o in outcomes if o.status != Verdict.UNKNOWN}
        outcomes = [decided.get(p.name) or live.LiveOutcome(p.name, Verdict.UNKNOWN,
                                                            note=late) for p in liveness]
    return ex, res, graph, outcomes


def _path(folder: object) -> Path | None:
    return None if folder is None else Path(str(folder))


def check(spec: Spec, kernel: Kernel | None = None, max_states: int | None = DEFAULT_MAX_STATES,
          method: str = "auto", report: Callable[[str], None] | None = None,
          ) -> tuple[Recoverability, StateGraph]:
    """Explore ``spec``'s state graph and decide recoverability."""
    rec = recovery(spec)
    kernel = kernel or Kernel(spec)
    graph = explore(kernel, predicates(rec), max_states=max_states, report=report)
    res = analyse(graph, method)
    if res.witness is not None:
        res.trace = stuck_trace(spec, graph, res)
    return res, graph


def stuck_trace(spec: Spec, graph: StateGraph, res: Recoverability) -> Trace:
    """The search's shortest path to the nearest stuck state, replayed through the interpreter
    (which checks every step against the graph's fingerprints) and confirmed stuck by the
    interpreter's own evaluation of the healthy predicate on the last state."""
    from hwcheck.checker.traces.trace import TraceError, from_path

    if res.witness is None:
        raise ValueError("no stuck state to trace: every state can recover")
    interp = Interpreter(spec)
    k = graph.kernel
    trace = from_path(spec, interp, None, "invariant", "graph", graph.path_to(res.witness),
                      k.canonical if k.symmetric else None)
    last = interp.layout.from_dict(trace.states[-1])
    if interp.holds(recovery(spec).healthy, last):
        raise TraceError("the graph's nearest stuck state is healthy on replay: the graph "
                         "kernel and the interpreter disagree on the healthy predicate")
    trace.meta["recoverability"] = {
        "claim": "no healthy state is reachable from the last state",
        "reachable_from_last": res.witness_reach, "stuck_states": res.stuck,
        "stuck_at_bound": res.at_bound, "method": res.method}
    return trace


def describe(res: Recoverability) -> str:
    """The claim a stuck trace breaks, with what the graph says of its last state (the page's
    description of ``Recoverable``)."""
    return (f"a healthy state stays reachable from every reachable state; from this one "
            f"{_reach(res)}")


def _reach(res: Recoverability) -> str:
    n = res.witness_reach
    return f"{n:,} state{'s are' if n != 1 else ' is'} reachable, none of them healthy"


def shown(res: Recoverability) -> Trace:
    """The stuck trace as the text and the page show it: a counterexample to ``Recoverable``."""
    assert res.trace is not None
    return dataclasses.replace(res.trace, property=NAME)


def stuck_text(res: Recoverability) -> str:
    """The stuck trace as text, like any counterexample's, with the claim it breaks."""
    from hwcheck.checker.traces import text

    body = text.text(shown(res)).rstrip("\n")
    return body + f"\nHere no healthy state is reachable: from the last state {_reach(res)}.\n"


def write_stuck_trace(spec: Spec, res: Recoverability, folder: Path,
                      identity: dict[str, Any] | None = None) -> list[Path]:
    """``<folder>/Recoverable.itf.json``, ``.txt`` and ``.html``. The ITF file is a behaviour
    (no property: `hwcheck replay` confirms every step, and ``#meta.recoverability`` states the
    claim); the text and the page name the claim ``Recoverable`` like any counterexample."""
    from hwcheck.checker.traces import html, itf
    from hwcheck.checker.traces.output import write_atomic, write_trace_marker

    if res.trace is None:
        raise ValueError("no stuck state's trace to write: every state can recover")
    folder = Path(folder)
    if identity is not None:
        write_trace_marker(folder, identity)
    files = [write_atomic(folder / f"{NAME}.itf.json", itf.dumps(spec, res.trace)),
             write_atomic(folder / f"{NAME}.txt", stuck_text(res)),
             write_atomic(folder / f"{NAME}.html", html.page(shown(res), describe(res)))]
    res.files = files
    return files


def clear_stuck_trace(folder: Path) -> None:
    """Remove an earlier run's stuck trace from ``folder`` (this run found none)."""
    for suffix in (".itf.json", ".txt", ".html"):
        f = Path(folder) / f"{NAME}{suffix}"
        if f.exists():
            f.unlink()
