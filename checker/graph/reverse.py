"""Which states can reach a target set: backward reachability over a state graph's transitions.

Two implementations of one question, chosen by size (``recover.py``): networkx on a DiGraph
while the graph fits in its per-edge Python objects, and arrays beyond that (sweeps over the
transitions in numba, then, if they do not settle, the transitions reversed into compressed
sparse row form and a breadth-first search).
The tests hold them to the same answer.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from hwcheck.checker.engines.pool import Pool
from hwcheck.checker.search.signals import POLL, no_stop, poll

MAX_SWEEPS = 16  # then the backward search (a graph whose answer travels against its ids)


def can_reach_networkx(n: int, src: np.ndarray, dst: np.ndarray,
                       target: np.ndarray) -> np.ndarray:
    """bool [n]: the states from which some state of ``target`` (bool [n]) is reachable (the
    target states themselves included), with networkx: the reversed graph, a source joined to
    every target state, and its descendants."""
    import networkx as nx  # here: a large graph's search (arrays) does without its import

    g = nx.DiGraph()
    g.add_nodes_from(range(n + 1))
    g.add_edges_from(zip(dst.tolist(), src.tolist()))  # reversed
    g.add_edges_from((n, int(t)) for t in np.flatnonzero(target))  # n: the joined source
    out = np.zeros(n, np.bool_)
    reached = nx.descendants(g, n)
    if reached:
        out[np.fromiter(reached, np.int64, len(reached))] = True
    return out


def reverse_csr(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets [n + 1], predecessors): the predecessors of state j are
    ``pred[offsets[j]:offsets[j + 1]]``, in the order of the transitions (a counting sort by
    destination: stable, as ``src[np.argsort(dst, kind="stable")]``)."""
    return _by_destination(n, np.ascontiguousarray(src), np.ascontiguousarray(dst))


@njit(cache=True)
def _by_destination(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(n + 1, np.int64)
    for e in range(dst.size):
        offsets[dst[e] + 1] += 1
    for j in range(n):
        offsets[j + 1] += offsets[j]
    at = offsets[:-1].copy()
    pred = np.empty(dst.size, src.dtype)
    for e in range(dst.size):
        j = dst[e]
        pred[at[j]] = src[e]
        at[j] += 1
    return offsets, pred


@njit(cache=True, nogil=True)
def _reverse_of_csr(offsets: np.ndarray, dst: np.ndarray,
                    stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reversed transitions; given up (the arrays unfinished) once ``stop`` is set."""
    n = offsets.size - 1
    rev = np.zeros(n + 1, np.int64)
    for e in range(dst.size):
        rev[dst[e] + 1] += 1
    for j in range(n):
        rev[j + 1] += rev[j]
    at = rev[:-1].copy()
    pred = np.empty(dst.size, np.int32)
    for i in range(n):
        if (i & POLL) == 0 and stop[0]:
            break
        for e in range(offsets[i], offsets[i + 1]):
            j = dst[e]
            pred[at[j]] = i
            at[j] += 1
    return rev, pred


@njit(cache=True, nogil=True)
def _backward(n: int, offsets: np.ndarray, pred: np.ndarray, target: np.ndarray,
              out: np.ndarray, stop: np.ndarray) -> int:
    """Breadth-first from ``target`` over the reversed transitions; -1 once ``stop`` is set
    (``out`` unfinished)."""
    queue = np.empty(n, np.int64)
    head = tail = 0
    for i in range(n):
        if target[i]:
            out[i] = True
            queue[tail] = i
            tail += 1
    while head < tail:
        if (head & POLL) == 0 and stop[0]:
            return -1
        j = queue[head]
        head += 1
        for e in range(offsets[j], offsets[j + 1]):
            p = pred[e]
            if not out[p]:
                out[p] = True
                queue[tail] = p
                tail += 1
    return tail


def can_reach_arrays(n: int, src: np.ndarray, dst: np.ndarray,
                     target: np.ndarray) -> np.ndarray:
    """The same as ``can_reach_networkx``, over arrays: the transitions reversed into compressed
    sparse row form, then a breadth-first search from every target state at once."""
    offsets, pred = reverse_csr(n, src, dst)
    out = np.zeros(n, np.bool_)
    _backward(n, offsets, pred, np.ascontiguousarray(target, np.bool_), out, no_stop())
    return out


PARTS = 8  # id ranges a sweep with several workers is cut into, dealt out in turn


def can_reach_csr(offsets: np.ndarray, dst: np.ndarray, target: np.ndarray,
                  max_sweeps: int = MAX_SWEEPS, workers: int = 1,
                  stop: np.ndarray | None = None) -> np.ndarray:
    """``can_reach_arrays`` over a graph in compressed sparse row form (state i's transitions
    are ``dst[offsets[i]:offsets[i + 1]]``), without building the array of sources.

    First by sweeps over the transitions as they are: the states in descending id order, each
    marked once a transition leads to a marked state. Breadth-first ids make most transitions
    lead to a later state, which the same sweep has already decided, so a few sweeps settle
    (kafka-7128-fix: 8 sweeps, 1.0 s, where reversing the 58.9 million transitions and
    searching backwards took 2.7 s). A sweep that marks nothing proves the answer; when
    ``max_sweeps`` do not settle, the backward search finishes from what they marked.

    With ``workers`` > 1 each sweep is shared: the ids are cut into ``PARTS`` ranges, dealt
    out to the workers in turn from the top, and each worker sweeps its ranges while the others
    sweep theirs (kafka-7128-fix, two workers: 0.55 s). A worker may read a mark another is
    writing in the same sweep, or not yet see it: marks only ever go from unmarked to marked, a
    mark is only set from a marked successor, and an unseen one is seen by the next sweep. A
    sweep in which no worker marks anything wrote nothing, so every read saw the final array:
    it proves the answer as a sweep on one thread does.

    ``stop`` (``signals.stoppable``'s flag): asked between sweeps and read by the backward
    search; once set, ``StopRequested`` is raised."""
    stop = no_stop() if stop is None else stop
    offsets = np.ascontiguousarray(offsets, np.int64)
    dst = np.ascontiguousarray(dst)
    out = np.array(target, np.bool_)
    n = offsets.size - 1
    workers = max(1, min(workers, PARTS))
    if workers == 1 or n < PARTS:
        for _ in range(max_sweeps):
            poll(stop)
            if not _sweep(offsets, dst, out, 0, n):
                return out
    else:
        bounds = [n * j // PARTS for j in range(PARTS + 1)]
        mine = [[(bounds[j], bounds[j + 1]) for j in range(PARTS - 1 - w, -1, -workers)]
                for w in range(workers)]

        def sweep(w: int) -> int:
            return sum(_sweep(offsets, dst, out, lo, hi) for lo, hi in mine[w])

        with Pool(workers - 1, "hwcheck-sweep") as pool:
            for _ in range(max_sweeps):
                poll(stop)
                others = [pool.submit(sweep, w) for w in range(1, workers)]
                marked = sweep(0) + sum(f.result() for f in others)
                if not marked:
                    return out
    poll(stop)
    rev, pred = _reverse_of_csr(offsets, dst, stop)
    poll(stop)
    _backward(n, rev, pred, out.copy(), out, stop)
    poll(stop)
    return out


@njit(cache=True, nogil=True)
def _sweep(offsets: np.ndarray, dst: np.ndarray, out: np.ndarray, lo: int, hi: int) -> int:
    """One sweep over states lo..hi-1, in descending id order: mark a state with a transition
    to a marked one. Returns how many it marked."""
    marked = 0
    for i in range(hi - 1, lo - 1, -1):
        if not out[i]:
            for e in range(offsets[i], offsets[i + 1]):
                if out[dst[e]]:
                    out[i] = True
                    marked += 1
                    break
    return marked


@njit(cache=True, nogil=True)
def _forward(start: int, offsets: np.ndarray, dst: np.ndarray, seen: np.ndarray,
             stop: np.ndarray) -> int:
    n = offsets.size - 1
    queue = np.empty(n, np.int64)
    queue[0] = start
    seen[start] = True
    head, tail = 0, 1
    while head < tail:
        if (head & POLL) == 0 and stop[0]:
            return -1
        i = queue[head]
        head += 1
        for e in range(offsets[i], offsets[i + 1]):
            j = dst[e]
            if not seen[j]:
                seen[j] = True
                queue[tail] = j
                tail += 1
    return tail


def reachable_from(start: int, offsets: np.ndarray, dst: np.ndarray,
                   stop: np.ndarray | None = None) -> np.ndarray:
    """bool [n]: the states reachable from ``start`` (itself included); ``StopRequested`` once
    ``stop`` is set."""
    stop = no_stop() if stop is None else stop
    seen = np.zeros(offsets.size - 1, np.bool_)
    _forward(start, offsets, dst, seen, stop)
    poll(stop)
    return seen
