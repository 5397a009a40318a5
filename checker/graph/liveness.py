"""Liveness under fairness, decided exactly on the explored state graph.

A liveness property is violated exactly when some fair behaviour breaks it, and on a finite
graph such a behaviour can be taken to be a *lasso*: a path from the initial state and a cycle
repeated forever. Every state may stutter (TLA+'s ``[Next]_vars``), so a single state is a cycle
too, and a state without successors stutters forever.

The search, for each property (``decide``):

- the *region* the cycle must stay in: the states where the goal has not happened (``~q`` for
  ``p ~> q``, ``~p`` for ``[]<>p``; every state for ``<>[]p``, whose cycle must instead *visit* a
  state where ``p`` fails), without the states at the model's bounds (the protocol's
  ``at_bound`` predicate: lassos there are counted apart), and only the transitions of actions
  the property does not ask to stop (``quiet``);
- its strongly connected components (an iterative Tarjan search in numba: no recursion limit);
- per component, fairness read from the transition labels: an action instance is *enabled* in
  a state that has a transition of it to another state (a step that changes nothing is a
  stutter, as in TLA+'s ``<<A>>_vars``), *taken* in a component when a transition of it joins
  two of its states. A component is fair when every weakly fair instance enabled in all of its
  states is taken in it, and every strongly fair instance enabled in some state is taken in it.
  A component that fails only strong fairness is refined (the states enabling the instance
  dropped, the rest decomposed again: the Streett emptiness check); one that fails weak
  fairness, or has no state the cycle must visit, holds no fair cycle at all;
- the fair states that a start of the property (``p & ~q`` for leads-to) reaches inside the
  region, found backwards from the fair components; the lasso is the shortest such: the
  search's shortest path to a start, then the region's shortest path to a fair component, then
  a cycle in it that meets every fairness condition (``_cycle``).

Memory beyond the graph: per state the enabled-instance bits (8 bytes per 64 fair instances),
the component ids and Tarjan's indices (12 bytes), and the reversed transitions (4 bytes a
transition), shared by every property.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from hwcheck.checker.engines.pool import Pool
from hwcheck.checker.graph.explore import StateGraph
from hwcheck.checker.search import faults
from hwcheck.checker.search.signals import POLL, StopRequested, no_stop, poll
from hwcheck.checker.semantics.fingerprint import _prefetch as prefetch  # LLVM's prefetch
from hwcheck.spec.lang import Liveness, Spec
from hwcheck.spec.verdicts import Verdict


@dataclass
class Lasso:
    """A fair behaviour that breaks a property: ``prefix`` steps from the initial state, then
    ``cycle`` steps repeated forever; each step is (action instance, fingerprint after it), an
    empty cycle meaning the last state stutters."""

    prefix: list[tuple[int, int]]
    cycle: list[tuple[int, int]]

    @property
    def length(self) -> int:
        """Steps written: the prefix and one turn of the cycle (a stutter counts one)."""
        return len(self.prefix) + max(len(self.cycle), 1)


@dataclass
class LiveOutcome:
    """What the graph says of one liveness property."""

    name: str
    status: str  # holds | violated | unknown
    lasso: Lasso | None = None
    at_bound: Lasso | None = None  # a lasso whose cycle lies at the model's bounds (apart)
    fair_states: int = 0  # states on some fair cycle of the property's region
    seconds: float = 0.0
    note: str = ""


@dataclass
class Fairness:
    """The spec's fairness over the graph's action instances."""

    index: np.ndarray  # int64 [instances]: the instance's bit among the fair ones, or -1
    weak: np.ndarray  # uint64 [words]: bits of the weakly fair instances
    strong: np.ndarray  # uint64 [words]: bits of the strongly fair instances
    words: int

    @classmethod
    def of(cls, spec: Spec) -> Fairness:
        """A bit for each fairness condition (`Spec.fairness_conditions`), shared by its
        instances: a condition of several is enabled where one of them is, and taken by any."""
        conds = spec.fairness_conditions()
        words = max(1, (len(conds) + 63) // 64)
        index = np.full(max(len(spec.instances()), 1), -1, np.int64)
        weak = np.zeros(words, np.uint64)
        strong = np.zeros(words, np.uint64)
        for b, cond in enumerate(conds):
            index[list(cond.instances)] = b
            into = weak if cond.kind == "weak" else strong
            into[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
        return cls(index, weak, strong, words)


@dataclass
class GraphArrays:
    """What every property's search shares: the enabled bits and the reversed transitions."""

    act: np.ndarray  # [transitions]: each transition's action instance (the graph's own type)
    enabled: np.ndarray  # uint64 [n, words]
    rev_offsets: np.ndarray  # int64 [n + 1]
    rev_edges: np.ndarray  # [transitions]: transition ids by destination (int32 while they fit)
    pred: np.ndarray  # int32 [transitions]: the source of each of ``rev_edges``
    depth: np.ndarray  # int32 [n]


STOPPED = "stopped before it was decided"  # the note of a property whose search was stopped


def prepare(graph: StateGraph, fair: Fairness, stop: np.ndarray | None = None) -> GraphArrays:
    """The shared arrays in two compiled passes over the transitions: the enabled bits and the
    count of transitions into each state, then the transitions and their sources dealt out by
    destination (a counting sort, stable: the order of ``np.argsort(dst, kind="stable")``),
    each pass loading the places it will write a few transitions ahead."""
    n, m = graph.n, graph.nedges
    act = graph.actions()
    enabled = np.zeros((n, fair.words), np.uint64)
    pred = np.empty(m, np.int32)
    rev_offsets = np.zeros(n + 1, np.int64)
    rev_edges = np.empty(m, np.int32 if m < 2**31 else np.int64)
    stop = no_stop() if stop is None else stop
    _prepare(graph.offsets, graph.dst, act, fair.index, enabled, rev_offsets, rev_edges, pred,
             stop)
    poll(stop)
    return GraphArrays(act, enabled, rev_offsets, rev_edges, pred, graph.depths())


def decide(spec: Spec, graph: StateGraph, props: list[Liveness],
           fair: Fairness | None = None, stop: np.ndarray | None = None,
           workers: int = 1) -> list[LiveOutcome]:
    """Each property's verdict on ``graph`` (flagged with every property's predicates), with
    the shortest lasso of each violation; ``workers`` threads decide properties side by side.
    ``stop`` (``signals.stoppable``'s flag): once set, the searches under way end and their
    properties are unknown (note ``STOPPED``); those decided keep their verdicts."""
    if not graph.complete:
        return [LiveOutcome(p.name, Verdict.UNKNOWN,
                            note=f"the state graph is incomplete: {graph.stop_reason}")
                for p in props]
    stop = no_stop() if stop is None else stop
    fair = fair or Fairness.of(spec)
    try:
        poll(stop)
        arrays = prepare(graph, fair, stop)
    except StopRequested:
        return [LiveOutcome(p.name, Verdict.UNKNOWN, note=STOPPED) for p in props]
    bound = graph.flag("at_bound") if "at_bound" in graph.gk.flag_names else None
    insts = spec.instances()

    def one(p: Liveness) -> LiveOutcome:
        try:
            return decide_one(p)
        except StopRequested:
            return LiveOutcome(p.name, Verdict.UNKNOWN, note=STOPPED)

    def decide_one(p: Liveness) -> LiveOutcome:
        poll(stop)
        t = time.perf_counter()
        quiet = np.zeros(max(len(insts), 1), np.bool_)
        for i in insts:
            quiet[i.index] = i.action.name in p.quiet
        ok_edge = ~quiet
        pv = graph.flag(f"{p.name}.p")
        if p.form == "leads_to":
            region, accept, start = ~graph.flag(f"{p.name}.q"), None, pv
        elif p.form == "always_eventually":
            region, accept, start = ~pv, None, None
        else:
            region, accept, start = np.ones(graph.n, np.bool_), ~pv, None
        res = LiveOutcome(p.name, Verdict.HOLDS)
        cyc = region if bound is None else region & ~bound
        fcomp = fair_components(graph, arrays, fair, cyc, accept, ok_edge, stop)
        res.fair_states = int((fcomp >= 0).sum())
        lasso = _lasso(graph, arrays, fair, region, start, fcomp, accept, ok_edge, stop)
        if lasso is not None:
            res.status, res.lasso = Verdict.VIOLATED, lasso
        elif bound is not None:  # lassos whose cycles lie at the bounds: counted apart
            fb = fair_components(graph, arrays, fair, region & bound, accept, ok_edge, stop)
            res.at_bound = _lasso(graph, arrays, fair, region, start, fb, accept, ok_edge, stop)
        res.seconds = time.perf_counter() - t
        return res

    # the properties apart on the run's workers (the numba searches release the GIL)
    workers = min(len(props), workers)
    if workers <= 1:
        return [one(p) for p in props]
    with Pool(workers, "hwcheck-liveness") as pool:
        return pool.map(one, [(p,) for p in props])


def fair_components(graph: StateGraph, arrays: GraphArrays, fair: Fairness, region: np.ndarray,
                    accept: np.ndarray | None, ok_edge: np.ndarray,
                    stop: np.ndarray | None = None) -> np.ndarray:
    """int64 [n]: for each state on a fair cycle inside ``region`` (using only transitions
    whose instance ``ok_edge`` allows) that visits ``accept`` (None: any state), the id of its
    fair component (states with one id are strongly connected and a fair cycle runs through
    all of them); -1 elsewhere. Strong fairness refines a component until it holds or
    vanishes. ``StopRequested`` once ``stop`` is set."""
    stop = no_stop() if stop is None else stop
    n = graph.n
    act = arrays.act
    acc = np.ones(n, np.bool_) if accept is None else np.ascontiguousarray(accept, np.bool_)
    mask = np.ascontiguousarray(region, np.bool_).copy()
    fcomp = np.full(n, -1, np.int64)
    next_id = 0
    while mask.any():
        comp = np.full(n, -1, np.int32)
        faults.at("terminate-liveness", 0, stop)  # tests: a SIGTERM as the search starts
        ncomp = _tarjan(graph.offsets, graph.dst, act, mask, ok_edge, comp, stop)
        poll(stop)
        keep = np.zeros(n, np.bool_)
        faults.at("terminate-judge", 0, stop)  # tests: a SIGTERM as the components are judged
        next_id = _judge(graph.offsets, graph.dst, act, comp, ncomp, arrays.enabled, fair.index,
                         fair.weak, fair.strong, acc, ok_edge, fcomp, keep, next_id, stop)
        poll(stop)
        mask = keep
    return fcomp


def _lasso(graph: StateGraph, arrays: GraphArrays, fair: Fairness, region: np.ndarray,
           start: np.ndarray | None, fcomp: np.ndarray,
           accept: np.ndarray | None, ok_edge: np.ndarray,
           stop: np.ndarray | None = None) -> Lasso | None:
    """The shortest lasso: a start state (``start`` & region; None: every region state) whose
    region path reaches a fair component soonest after the search's shortest path to it."""
    target = fcomp >= 0
    if not target.any():
        return None
    n = graph.n
    dist = np.full(n, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    stop = no_stop() if stop is None else stop
    _backward_bfs(arrays.rev_offsets, arrays.rev_edges, arrays.pred,
                  np.ascontiguousarray(region, np.bool_), target, dist, nxt, stop)
    poll(stop)
    cand = dist >= 0
    if start is not None:
        cand &= start
    if not cand.any():
        return None
    cost = np.where(cand, arrays.depth.astype(np.int64) + dist, np.iinfo(np.int64).max)
    s = int(np.argmin(cost))  # least cost, then least id (breadth-first order)
    prefix = [(a, f) for a, f in graph.path_to(s)]
    while nxt[s] >= 0:
        e = int(nxt[s])
        prefix.append((int(graph.actions()[e]), int(graph.fps[graph.dst[e]])))
        s = int(graph.dst[e])
    cycle = _cycle(graph, arrays, fair, fcomp, s, accept, ok_edge, stop)
    return Lasso(prefix, cycle)


def _cycle(graph: StateGraph, arrays: GraphArrays, fair: Fairness, fcomp: np.ndarray, f: int,
           accept: np.ndarray | None, ok_edge: np.ndarray,
           stop: np.ndarray | None = None) -> list[tuple[int, int]]:
    """A cycle from state ``f`` through its fair component that meets every fairness condition:
    each obligation (visit an accepting state; take each instance the component's fairness
    requires; for a weakly fair instance enabled somewhere but not everywhere, visit a state
    where it is disabled or take it) reached by the component's shortest path from where the
    cycle is, then back to ``f``. Empty when ``f`` alone, stuttering, is fair.
    ``StopRequested`` once ``stop`` is set (read by each search for an obligation)."""
    stop = no_stop() if stop is None else stop
    c = fcomp[f]
    member = fcomp == c
    act = arrays.act
    en = arrays.enabled
    words = fair.words
    allen = np.full(words, ~np.uint64(0), np.uint64)
    anyen = np.zeros(words, np.uint64)
    for w in range(words):
        col = en[member, w]
        allen[w] = np.bitwise_and.reduce(col) if col.size else np.uint64(0)
        anyen[w] = np.bitwise_or.reduce(col) if col.size else np.uint64(0)
    obligations: list[tuple[int, int]] = []  # (kind, fair bit): 0 visit accept, 1 take, 2 wf
    if accept is not None and not accept[f]:
        obligations.append((0, -1))
    nfair = int(fair.index.max()) + 1  # the fairness conditions' bits (-1: none)
    for b in range(nfair):
        w, bit = b >> 6, np.uint64(1) << np.uint64(b & 63)
        if fair.strong[w] & bit and anyen[w] & bit:
            obligations.append((1, b))
        elif fair.weak[w] & bit and anyen[w] & bit:
            obligations.append((1 if allen[w] & bit else 2, b))
    steps: list[int] = []  # transition ids
    cur = f
    visited_bits = en[f].copy()
    visited_all = en[f].copy()  # AND of the enabled bits of the states visited
    taken = np.zeros(words, np.uint64)
    seen_accept = accept is None or bool(accept[f])
    acc = np.zeros(graph.n, np.bool_) if accept is None else np.ascontiguousarray(accept,
                                                                                   np.bool_)
    for kind, b in obligations:
        w, bit = (b >> 6, np.uint64(1) << np.uint64(b & 63)) if b >= 0 else (0, np.uint64(0))
        if kind == 0 and seen_accept:
            continue
        if kind == 1 and taken[w] & bit:
            continue
        if kind == 2 and (taken[w] & bit or not visited_all[w] & bit):
            continue
        path = np.empty(graph.n + 1, np.int64)
        faults.at("terminate-cycle", 0, stop)  # tests: a SIGTERM as a lasso's cycle is built
        k = _bfs_to(graph.offsets, graph.dst, act, member, ok_edge, cur, kind, b,
                    fair.index, en, acc, path, stop)
        poll(stop)
        if k < 0:
            raise AssertionError("a fair component without the transition its fairness needs")
        for e in path[:k]:  # consecutive transitions from ``cur``
            e = int(e)
            steps.append(e)
            t = int(graph.dst[e])
            fb = fair.index[act[e]]
            if fb >= 0 and t != cur:
                taken[fb >> 6] |= np.uint64(1) << np.uint64(fb & 63)
            visited_bits |= en[t]
            visited_all &= en[t]
            seen_accept = seen_accept or bool(acc[t])
            cur = t
    if cur != f:
        path = np.empty(graph.n + 1, np.int64)
        faults.at("terminate-cycle", 0, stop)
        k = _bfs_to(graph.offsets, graph.dst, act, member, ok_edge, cur, 3, f, fair.index, en,
                    acc, path, stop)
        poll(stop)
        steps.extend(int(e) for e in path[:k])
    act = graph.actions()
    return [(int(act[e]), int(graph.fps[graph.dst[e]])) for e in steps]


# -- numba ---------------------------------------------------------------------------------------


AHEAD = 16  # transitions ahead whose places ``_prepare`` loads: 1.5 s -> 1.0 s on 59 million


@njit(cache=True, nogil=True)
def _prepare(offsets: np.ndarray, dst: np.ndarray, act: np.ndarray, index: np.ndarray,
             enabled: np.ndarray, rev_offsets: np.ndarray, rev_edges: np.ndarray,
             pred: np.ndarray, stop: np.ndarray) -> None:  # pragma: no cover - compiled
    n = offsets.size - 1
    m = dst.size
    for s in range(n):
        if (s & POLL) == 0 and stop[0]:
            return
        for e in range(offsets[s], offsets[s + 1]):
            if e + AHEAD < m:
                prefetch(rev_offsets, dst[e + AHEAD] + 1)  # type: ignore[call-arg]  # a numba intrinsic: numba gives its typing context
            rev_offsets[dst[e] + 1] += 1
            b = index[act[e]]
            if b >= 0 and dst[e] != s:
                enabled[s, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    for j in range(n):
        rev_offsets[j + 1] += rev_offsets[j]
    at = rev_offsets[:-1].copy()
    for s in range(n):
        if (s & POLL) == 0 and stop[0]:
            return
        for e in range(offsets[s], offsets[s + 1]):
            if e + 2 * AHEAD < m:
                prefetch(at, dst[e + 2 * AHEAD])  # type: ignore[call-arg]  # a numba intrinsic: numba gives its typing context
            if e + AHEAD < m:
                q = at[dst[e + AHEAD]]  # where that transition will go, nearly
                prefetch(rev_edges, q)  # type: ignore[call-arg]  # a numba intrinsic: numba gives its typing context
                prefetch(pred, q)
            j = dst[e]
            q = at[j]
            rev_edges[q] = e
            pred[q] = s
            at[j] = q + 1


@njit(cache=True, nogil=True)
def _tarjan(offsets: np.ndarray, dst: np.ndarray, act: np.ndarray, mask: np.ndarray,
            ok_edge: np.ndarray, comp: np.ndarray,
            stop: np.ndarray) -> int:  # pragma: no cover - compiled
    """Strongly connected components of the states in ``mask`` over the transitions between
    them that ``ok_edge`` allows; iterative (an explicit call stack). Returns how many.

    One array answers what a transition's target is: ``OUTSIDE`` (not in ``mask``), ``FRESH``
    (not visited yet), its visit index while it is on the stack, or ``DONE`` once its component
    is complete (larger than any index, so it never lowers a low link: the textbook's on-stack
    test). A transition costs one read at random where it cost three. Once ``stop`` is set
    (read as each ``POLL + 1``-th state is visited) it returns -1, ``comp`` unfinished."""
    n = offsets.size - 1
    OUTSIDE = np.int32(-2)
    FRESH = np.int32(-1)
    DONE = np.int32(2147483647)
    idx = np.empty(n, np.int32)
    for i in range(n):
        idx[i] = FRESH if mask[i] else OUTSIDE
    low = np.empty(n, np.int32)
    stack = np.empty(n, np.int32)
    cs_node = np.empty(n, np.int32)
    cs_edge = np.empty(n, np.int64)
    sp = 0
    counter = 0
    ncomp = 0
    for root in range(n):
        if (root & POLL) == 0 and stop[0]:
            return -1
        if idx[root] != FRESH:
            continue
        idx[root] = counter
        low[root] = counter
        counter += 1
        stack[sp] = root
        sp += 1
        cs_node[0] = root
        cs_edge[0] = offsets[root]
        csp = 1
        while csp > 0:
            v = cs_node[csp - 1]
            e = cs_edge[csp - 1]
            if e < offsets[v + 1]:
                cs_edge[csp - 1] = e + 1
                if not ok_edge[act[e]]:
                    continue
                w = dst[e]
                iw = idx[w]
                if iw == OUTSIDE:
                    continue
                if iw == FRESH:
                    if (counter & POLL) == 0 and stop[0]:
                        return -1
                    idx[w] = counter
                    low[w] = counter
                    counter += 1
                    stack[sp] = w
                    sp += 1
                    cs_node[csp] = w
                    cs_edge[csp] = offsets[w]
                    csp += 1
                elif iw < low[v]:
                    low[v] = iw
            else:
                if low[v] == idx[v]:
                    while True:
                        sp -= 1
                        x = stack[sp]
                        idx[x] = DONE
                        comp[x] = ncomp
                        if x == v:
                            break
                    ncomp += 1
                csp -= 1
                if csp > 0:
                    u = cs_node[csp - 1]
                    if low[v] < low[u]:
                        low[u] = low[v]
    return ncomp


@njit(cache=True, nogil=True)
def _judge(offsets: np.ndarray, dst: np.ndarray, act: np.ndarray, comp: np.ndarray, ncomp: int,
           enabled: np.ndarray, index: np.ndarray, weak: np.ndarray, strong: np.ndarray,
           accept: np.ndarray, ok_edge: np.ndarray, fcomp: np.ndarray, keep: np.ndarray,
           next_id: int, stop: np.ndarray) -> int:  # pragma: no cover - compiled
    """Each component: fair (its states get a new id in ``fcomp``), refined (its states that
    enable a strongly fair instance it never takes are dropped, the others go to ``keep`` for
    the next decomposition) or without a fair cycle. Returns the next free id, or -1 once
    ``stop`` is set (read every ``POLL + 1`` states of each pass; ``fcomp`` and ``keep``
    unfinished)."""
    n = offsets.size - 1
    words = enabled.shape[1]
    allen = np.empty((ncomp, words), np.uint64)
    allen[:] = ~np.uint64(0)
    anyen = np.zeros((ncomp, words), np.uint64)
    taken = np.zeros((ncomp, words), np.uint64)
    hasacc = np.zeros(ncomp, np.bool_)
    for s in range(n):
        if (s & POLL) == 0 and stop[0]:
            return -1
        c = comp[s]
        if c < 0:
            continue
        for w in range(words):
            allen[c, w] &= enabled[s, w]
            anyen[c, w] |= enabled[s, w]
        if accept[s]:
            hasacc[c] = True
        for e in range(offsets[s], offsets[s + 1]):
            t = dst[e]
            if t != s and comp[t] == c and ok_edge[act[e]]:
                b = index[act[e]]
                if b >= 0:
                    taken[c, b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    status = np.zeros(ncomp, np.int8)  # 0 no fair cycle, 1 fair, 2 refine
    bad_sf = np.zeros((ncomp, words), np.uint64)
    ids = np.full(ncomp, -1, np.int64)
    for c in range(ncomp):
        if (c & POLL) == 0 and stop[0]:
            return -1
        if not hasacc[c]:
            continue
        wf_bad = False
        sf_bad = False
        for w in range(words):
            if weak[w] & allen[c, w] & ~taken[c, w]:
                wf_bad = True
            bad_sf[c, w] = strong[w] & anyen[c, w] & ~taken[c, w]
            if bad_sf[c, w]:
                sf_bad = True
        if wf_bad:
            continue
        if sf_bad:
            status[c] = 2
        else:
            status[c] = 1
            ids[c] = next_id
            next_id += 1
    for s in range(n):
        if (s & POLL) == 0 and stop[0]:
            return -1
        c = comp[s]
        if c < 0:
            continue
        if status[c] == 1:
            fcomp[s] = ids[c]
        elif status[c] == 2:
            drop = False
            for w in range(words):
                if enabled[s, w] & bad_sf[c, w]:
                    drop = True
            if not drop:
                keep[s] = True
    return next_id


@njit(cache=True, nogil=True)
def _backward_bfs(rev_offsets: np.ndarray, rev_edges: np.ndarray, pred: np.ndarray,
                  region: np.ndarray, target: np.ndarray, dist: np.ndarray,
                  nxt: np.ndarray, stop: np.ndarray) -> None:  # pragma: no cover - compiled
    """Distances inside ``region`` to ``target`` (its states at 0), and for every other state
    the transition that starts a shortest path (``nxt``); given up once ``stop`` is set."""
    n = rev_offsets.size - 1
    queue = np.empty(n, np.int64)
    head = tail = 0
    for i in range(n):
        if target[i]:
            dist[i] = 0
            queue[tail] = i
            tail += 1
    while head < tail:
        if (head & POLL) == 0 and stop[0]:
            return
        j = queue[head]
        head += 1
        for q in range(rev_offsets[j], rev_offsets[j + 1]):
            p = pred[q]
            if dist[p] < 0 and region[p]:
                dist[p] = dist[j] + 1
                nxt[p] = rev_edges[q]
                queue[tail] = p
                tail += 1


@njit(cache=True, nogil=True)
def _bfs_to(offsets: np.ndarray, dst: np.ndarray, act: np.ndarray, member: np.ndarray,
            ok_edge: np.ndarray, start: int, kind: int, b: int, index: np.ndarray,
            enabled: np.ndarray, accept: np.ndarray, path: np.ndarray,
            stop: np.ndarray) -> int:  # pragma: no cover - compiled
    """A shortest path inside ``member`` (over transitions ``ok_edge`` allows) from ``start``
    to: kind 0, an accepting state; 1, a transition of fair instance ``b`` to another state
    (taken last); 2, a state where ``b`` is disabled, or such a transition; 3, the state ``b``.
    Writes the transition ids to ``path``; returns how many, -1 if there is none, or -2 once
    ``stop`` is set (read as each ``POLL + 1``-th state is visited)."""
    n = offsets.size - 1
    pe = np.full(n, -1, np.int64)
    seen = np.zeros(n, np.bool_)
    queue = np.empty(n, np.int64)
    w = b >> 6 if b >= 0 else 0
    bit = np.uint64(1) << np.uint64(b & 63) if b >= 0 else np.uint64(0)
    head = 0
    tail = 1
    queue[0] = start
    seen[start] = True
    last_edge = -1
    end = -1
    while head < tail and end < 0:
        if (head & POLL) == 0 and stop[0]:
            return -2
        s = queue[head]
        head += 1
        if kind == 0 and accept[s] and s != start:
            end = s
            break
        if kind == 2 and not (enabled[s, w] & bit):
            end = s
            break
        if kind == 3 and s == b and s != start:
            end = s
            break
        for e in range(offsets[s], offsets[s + 1]):
            t = dst[e]
            if not member[t] or not ok_edge[act[e]]:
                continue
            if (kind == 1 or kind == 2) and index[act[e]] == b and t != s:
                end = s
                last_edge = e
                break
            if not seen[t]:
                seen[t] = True
                pe[t] = e
                queue[tail] = t
                tail += 1
    if end < 0:
        return -1
    k = 0
    x = end
    while x != start:
        e = pe[x]
        path[k] = e
        k += 1
        # the source of transition e: walk back by the BFS tree
        x = _source(offsets, e)
    path[:k] = path[:k][::-1].copy()
    if last_edge >= 0:
        path[k] = last_edge
        k += 1
    return k


@njit(cache=True, nogil=True)
def _source(offsets: np.ndarray, e: int) -> int:  # pragma: no cover - compiled
    lo = 0
    hi = offsets.size - 1
    while hi - lo > 1:  # the state s with offsets[s] <= e < offsets[s + 1]
        mid = (lo + hi) // 2
        if offsets[mid] <= e:
            lo = mid
        else:
            hi = mid
    return lo
