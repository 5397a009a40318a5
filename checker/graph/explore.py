"""The explored state graph: a breadth-first search that records every transition.

States get ids level by level (the initial states first, in Init's order, from 0; each later level's
states follow the previous level's, in fingerprint order), so ids are in order of depth and a
state's id says how far it is from an initial state. The search is the one driver's
(``checker.search``) over ``GraphSource``. Every transition is kept in compressed sparse row form:
the transitions of state i are ``dst[offsets[i]:offsets[i + 1]]`` with their action instances in
``act``. Each state also keeps its first parent (the state and action the search first reached it
by: a shortest path), its fingerprint (to check a replayed path against) and a bit mask of state
predicates (the protocol's healthy predicate, the invariants).

All of it is numpy arrays written by the graph kernel (``kernel.py``); no per-state Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hwcheck.checker.engines.fpsort import radix_order
from hwcheck.checker.engines.options import PropertySet
from hwcheck.checker.graph.idtable import new_table
from hwcheck.checker.graph.kernel import GraphKernel
from hwcheck.checker.search.driver import Found, LevelResult, LevelSource, search
from hwcheck.checker.search.exploration import (
    Exploration,
    Progress,
    current_rss_bytes,
    interrupt_reason,
    peak_rss_bytes,
)
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.semantics.signatures import CheckArgs
from hwcheck.spec.lang import Expr

CHUNK = 1 << 14  # frontier rows per kernel call: bounds the latency of progress and Ctrl-C
MAX_LOAD = 0.5  # the id table's fill limit (open addressing, linear probing)


@contextmanager
def base_pages() -> Iterator[None]:
    """numpy's new arrays on 4 KiB pages while inside. numpy asks Linux for 2 MiB pages for
    every large array; where the kernel defragments on demand for such arrays (transparent
    huge pages in ``madvise`` mode, the default), each fresh array waits for memory to be
    compacted. The state graph allocates an id table twice the size at each growth, level
    buffers and the transitions' arrays, each touched once: on the 12.5-million-state graph of
    ``check --recoverable``, 2.5 s of compaction against nothing gained by larger pages
    (docs/performance.md). The engines' tables keep their huge pages (reserved once, grown in
    place)."""
    core = getattr(np, "_core", None)
    multiarray = getattr(core, "multiarray", None)
    get = getattr(multiarray, "_get_madvise_hugepage", None)
    set_ = getattr(multiarray, "_set_madvise_hugepage", None)
    if get is None or set_ is None:  # another numpy: its default stays
        yield
        return
    before = get()
    set_(False)
    try:
        yield
    finally:
        set_(before)


@dataclass
class StateGraph:
    """The reachable states of a spec (or the first ``max_states`` of them) and every
    transition between them."""

    kernel: Kernel
    gk: GraphKernel
    fps: np.ndarray  # uint64 [n]
    parent: np.ndarray  # int32 [n]: the state it was first reached from; -1 for the initial
    pact: np.ndarray  # action instance of that first step
    flags: np.ndarray  # uint64 [n]: bit j = state predicate gk.flag_names[j] holds
    offsets: np.ndarray  # int64 [n + 1]
    dst: np.ndarray  # int32 [edges]
    act: np.ndarray  # action instance of each transition
    eflags: np.ndarray | None  # uint64 [edges]: bit j = violates gk.edge_flag_names[j]
    levels: list[int]  # levels[d]: the first id of depth d; levels[-1] == n
    rows: np.ndarray | None = None  # the states themselves, when kept
    complete: bool = False  # every reachable state found and expanded
    stop_reason: str = ""
    seconds: float = 0.0
    refused: int = 0  # steps not taken because they leave the declared domains
    flag_errors: int = 0  # predicate evaluations that read outside a variable's shape
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.fps.size)

    @property
    def nedges(self) -> int:
        return int(self.dst.size)

    @property
    def depth(self) -> int:
        """The longest shortest path, in steps."""
        return len(self.levels) - 2

    def depth_of(self, i: int) -> int:
        return int(np.searchsorted(self.levels, i, side="right")) - 1

    def depths(self) -> np.ndarray:
        """The depth of every state (int32 [n])."""
        out = np.empty(self.n, np.int32)
        for d in range(len(self.levels) - 1):
            out[self.levels[d]:self.levels[d + 1]] = d
        return out

    def flag(self, name: str) -> np.ndarray:
        """bool [n]: where the named state predicate holds."""
        return (self.flags & self.gk.bit(name)) != 0

    def src(self) -> np.ndarray:
        """int32 [edges]: the source state of each transition."""
        return np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.offsets))

    def path_to(self, i: int) -> list[tuple[int, int]]:
        """The (action instance, fingerprint) steps of the search's first path to state i: a
        shortest one."""
        steps = []
        while self.parent[i] >= 0:  # up to an initial state
            steps.append((int(self.pact[i]), int(self.fps[i])))
            i = int(self.parent[i])
        steps.reverse()
        return steps

    def label(self, inst: int) -> str:
        return self.kernel.instances[inst].label

    def edge_violations(self, e: int) -> list[str]:
        if self.eflags is None:
            return []
        m = int(self.eflags[e])
        return [n for j, n in enumerate(self.gk.edge_flag_names) if m >> j & 1]

    def state_flags(self, i: int) -> list[str]:
        m = int(self.flags[i])
        return [n for j, n in enumerate(self.gk.flag_names) if m >> j & 1]


class GraphSource(LevelSource):
    """The state graph as a level source of the search driver (``checker.search.driver``):
    the graph kernel keeps every transition. Each new level is renumbered in fingerprint order
    before it is expanded, so a state's first parent is the least (parent fingerprint, action)
    and ids, parents and first hits are the engines' canonical ones (a check run on the graph
    reports the same traces as the local engine).

    ``props``: the spec's properties a check asks for (``PropertySet``): their first hits
    are reported as the engines report them, so one exploration serves a check and the graph;
    ``max_states``: a graph of more states than this stops (it is then incomplete)."""

    name = "graph"

    def __init__(self, kernel: Kernel, predicates: Iterable[tuple[str, Expr]] = (),
                 invariants: bool = True, max_states: int | None = None,
                 keep_rows: bool = False, edge_properties: bool = False,
                 props: PropertySet | None = None, chunk: int = CHUNK):
        self.kernel = kernel
        self.gk = GraphKernel(kernel, list(predicates), invariants)
        self.max_states = max_states
        self.keep_rows = keep_rows
        self.edge_properties = edge_properties
        self.props = props
        self.chunk = chunk

    def exploration(self) -> Exploration:
        return Exploration(self.name, checked=self.props.checked if self.props else [],
                           symmetry=self.kernel.symmetric)

    def prepare(self) -> None:
        self.gk.warm()
        k = self.kernel
        self.err = np.zeros(1, np.int64)
        self.base_rss = current_rss_bytes()
        self.tab = new_table(1 << 12)  # fingerprint -> state id
        nt = max(len(k.props.transition), 1)
        self.tp_row = np.full(nt, -1, np.int64)
        self.tp_inst = np.full(nt, -1, np.int64)
        self.tp_active = (self.props.trans_active if self.props is not None
                          else np.zeros(nt, np.bool_))
        self.fps: list[np.ndarray] = []
        self.parent: list[np.ndarray] = []
        self.pact: list[np.ndarray] = []
        self.flags: list[np.ndarray] = []
        self.rows_kept: list[np.ndarray] = []
        # every transition, level after level, in buffers grown by doubling: destination,
        # action instance, action-property flags; ne of them so far
        ecap = max(1024, k.ninst * 64)
        self.edst = np.empty(ecap, np.int32)
        self.eact = np.empty(ecap, k.act_dtype)
        self.eflags = np.zeros(ecap if self.edge_properties else 1, np.uint64)
        self.ne = 0
        # per level: the expanded rows' transition ends, the rows not expanded, the first edge
        self.end_parts: list[tuple[np.ndarray, int, int]] = []
        self.levels = [0]
        self.n = 0
        self.front = np.zeros((0, k.stride), k.dtype)
        self.refused = self.flag_errors = 0
        self.found: tuple[np.ndarray, ...] | None = None  # the new states' buffers (expand)
        self.fronts: list[np.ndarray | None] = [None, None]  # the frontiers' two buffers
        self.front_in = 1  # the buffer the frontier is in (the initial states are in neither)
        self._cat: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def start(self, ex: Exploration, progress: Progress) -> LevelResult:
        k = self.kernel
        first: dict[int, int] = {}  # each initial state's fingerprint, once (canonical rows)
        for i, row in enumerate(k.starts):
            first.setdefault(k.fingerprint(row), i)
        init = k.starts[list(first.values())]
        fps = np.array(list(first), np.uint64)
        n = len(fps)
        while n > self.slots * MAX_LOAD:
            self.tab = _grown_table(self.gk.mod, self.tab)
        for i in range(n):
            self.gk.mod.table_put(self.tab, self.slots - 1, fps[i], i)
        return LevelResult(new=n, found=self._new_level(
            init, fps, np.full(n, -1, np.int32), np.zeros(n, k.act_dtype), 0))

    @property
    def slots(self) -> int:
        """The fingerprint -> id table's slots."""
        return self.tab.size // 2

    def frontier(self) -> int:
        return int(self.front.shape[0])

    def expand(self, depth: int, ex: Exploration, progress: Progress,
               rule: StopRule) -> LevelResult:
        k, mod, front = self.kernel, self.gk.mod, self.front
        stride, dtype, adt = k.stride, k.dtype, k.act_dtype
        m, n, base = front.shape[0], self.n, self.levels[-2]
        row_end = np.zeros(m, np.int64)
        # the new states as found: buffers kept from level to level (fresh memory is slow to
        # touch), grown while a level needs more
        need = max(1024, 2 * m)
        if self.found is None or self.found[0].shape[0] < need:
            self.found = (np.empty((need, stride), dtype), np.empty(need, np.uint64),
                          np.empty(need, np.int32), np.empty(need, adt))
        new_rows, new_fps, new_par, new_act = self.found
        _, dom_row, dom_inst = k.error_arrays()
        self.tp_row[:] = -1
        first = ne = self.ne
        nnew = lo = 0
        stopped = ""
        try:
            while lo < m:
                hi = min(m, lo + self.chunk)
                i, nnew, ne, bad = mod.expand_edges(
                    front, lo, hi, base, self.tab, int(self.slots * MAX_LOAD),
                    n, new_rows, new_fps, new_par, new_act, nnew, self.edst, self.eact,
                    self.eflags, ne,
                    row_end, self.edge_properties, self.err, self.tp_active, self.tp_row,
                    self.tp_inst, dom_row, dom_inst)
                self.refused += int(bad)
                if i < hi:  # out of room: grow what is short and go on from row i
                    room = mod.ROOM  # the most successors of a block of rows
                    while n + nnew + room > self.slots * MAX_LOAD:
                        self.tab = _grown_table(mod, self.tab)
                    while nnew + room > new_rows.shape[0]:
                        new_rows, new_fps, new_par, new_act = self.found = tuple(
                            _grown(a, 2 * new_rows.shape[0], nnew)
                            for a in (new_rows, new_fps, new_par, new_act))
                    while ne + room > self.edst.size:
                        self.edst = _grown(self.edst, 2 * self.edst.size, ne)
                        self.eact = _grown(self.eact, 2 * self.eact.size, ne)
                        if self.edge_properties:
                            self.eflags = _grown(self.eflags, 2 * self.eflags.size, ne)
                lo = i
                progress.tick(depth, n + nnew, m - lo)
                if lo < m:
                    if self.max_states is not None and n + nnew > self.max_states:
                        stopped = f"more than {self.max_states:,} states"
                    else:
                        stopped = rule.limit(n + nnew, progress.elapsed())
                    if stopped:
                        break
        except (KeyboardInterrupt, MemoryError) as e:  # what was found up to then is kept
            stopped = interrupt_reason(e)
        # the rows expanded so far (all of them unless stopped): renumber the new level in
        # fingerprint order
        done = lo
        order = radix_order(new_fps[:nnew])  # np.argsort(kind="stable"), in linear time
        rank = np.empty(nnew, np.int64)
        rank[order] = np.arange(nnew)
        mod.renumber(self.edst, first, ne, n, rank)
        fps = new_fps[:nnew][order]
        mod.table_set(self.tab, self.slots - 1, fps, np.arange(n, n + nnew, dtype=np.int64))
        self.ne = ne
        self.end_parts.append((row_end[:done], m - done, first))
        out = LevelResult(generated=ne - first)
        out.found += self._domain_hits(dom_row, dom_inst, base, depth)
        out.found += self._transition_hits(front, base, depth)
        if nnew:
            out.new = nnew
            rows = self._next_front(nnew)
            np.take(new_rows[:nnew], order, axis=0, out=rows)
            out.found += self._new_level(rows, fps, new_par[:nnew][order],
                                         new_act[:nnew][order], depth + 1)
        else:
            self.front = new_rows[:0]
        if not stopped and self.max_states is not None and self.n > self.max_states:
            stopped = f"more than {self.max_states:,} states"
        out.stopped = stopped
        return out

    def _next_front(self, n: int) -> np.ndarray:
        """Room for the next frontier's ``n`` rows: of two buffers kept from level to level,
        the one the current frontier is not in."""
        i = 1 - self.front_in
        buf = self.fronts[i]
        if buf is None or buf.shape[0] < n:
            k = self.kernel
            buf = self.fronts[i] = np.empty((max(n, 1024), k.stride), k.dtype)
        self.front_in = i
        return buf[:n]

    def _new_level(self, rows: np.ndarray, fps: np.ndarray, par: np.ndarray, act: np.ndarray,
                   depth: int) -> list[Found]:
        """Keep a level (rows in fingerprint order); its state flags and first hits."""
        self.fps.append(fps)
        self.parent.append(par)
        self.pact.append(act)
        self._cat = None
        f = np.zeros(rows.shape[0], np.uint64)
        self.flag_errors += int(self.gk.mod.eval_flags(rows, rows.shape[0], f, self.err))
        self.flags.append(f)
        if self.keep_rows:
            self.rows_kept.append(rows.copy())
        first = self.n
        self.n += rows.shape[0]
        self.levels.append(self.n)
        self.front = rows
        return self._state_hits(rows, first, depth)

    def _state_hits(self, rows: np.ndarray, first: int, depth: int) -> list[Found]:
        """The kernel's own ``check_states`` over a new level, as the engines run it."""
        props, out = self.props, list[Found]()
        if props is None or not props.state or not props.state_active.any():
            return out
        k = self.kernel
        hits = np.full(len(props.state), -1, np.int64)
        err, dom_row, _ = k.error_arrays()
        k.mod.check_states(*CheckArgs(rows=rows, n=rows.shape[0], active=props.state_active,
                                      hits=hits, err=err, dom_row=dom_row))
        for j in np.flatnonzero(hits >= 0):
            name, _, kind = props.state[j]
            out.append(Found(name, kind, depth, (first + int(hits[j]), None)))
            props.state_active[j] = False
        for c in np.flatnonzero(dom_row >= 0):
            out.append(Found(k.domain_errors.name(int(c)), "domain", depth,
                             (first + int(dom_row[c]), None)))
        return out

    def _domain_hits(self, dom_row: np.ndarray, dom_inst: np.ndarray, base: int,
                     depth: int) -> list[Found]:
        if self.props is None:
            return []
        return [Found(self.kernel.domain_errors.name(int(c)), "domain", depth + 1,
                      (base + int(dom_row[c]), (int(dom_inst[c]), None)))
                for c in np.flatnonzero(dom_row >= 0)]

    def _transition_hits(self, front: np.ndarray, base: int, depth: int) -> list[Found]:
        props, out, k = self.props, list[Found](), self.kernel
        if props is None:
            return out
        for j in np.flatnonzero(self.tp_row >= 0):
            if not props.trans_active[j]:
                continue
            name, _, kind = props.transition[j]
            inst, row = int(self.tp_inst[j]), int(self.tp_row[j])
            succ = k.step(inst, front[row])
            out.append(Found(name, kind, depth + 1,
                             (base + row, (inst, k.state_fingerprint(succ)))))
            props.trans_active[j] = False
        return out

    def _joined(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every state's fingerprint, parent and action, joined over the levels (kept until
        the next level)."""
        if self._cat is None:
            self._cat = (np.concatenate(self.fps), np.concatenate(self.parent),
                         np.concatenate(self.pact))
        return self._cat

    def paths(self, targets: dict[str, Any]) -> dict[str, list[tuple[int, int | None]]]:
        if not targets:
            return {}
        fps, parent, pact = self._joined()
        out = {}
        for name, (i, tail) in targets.items():
            path = _path_to(fps, parent, pact, i)
            if tail is not None:
                path.append(tail)
            out[name] = path
        return out

    def finish(self, ex: Exploration) -> None:
        ninst = max(self.kernel.ninst, 1)
        enabled = np.zeros(ninst, np.int64)  # one transition per (state, enabled instance)
        for lo in range(0, self.ne, 1 << 22):  # in slices: bincount widens what it counts
            enabled += np.bincount(self.eact[lo:min(self.ne, lo + (1 << 22))], minlength=ninst)
        new = np.zeros(ninst, np.int64)
        for a in self.pact[1:]:  # each level's states by the instance that first reached them
            new += np.bincount(a, minlength=ninst)
        ex.stats["coverage"] = {"enabled": enabled.tolist(), "new": new.tolist()}
        peak = peak_rss_bytes()
        ex.stats.update(peak_rss=peak, base_rss=self.base_rss, disk_bytes=0,
                        explore_bytes_per_state=max(peak - self.base_rss, 0) / max(self.n, 1),
                        refused=self.refused)

    def graph(self, ex: Exploration) -> StateGraph:
        """The explored graph (after the search)."""
        n = self.n
        # transitions per state: the expanded rows of each level in order, then nothing for
        # the states never expanded (an incomplete graph)
        counts = []
        for ends, undone, first in self.end_parts:
            if ends.size:
                counts.append(np.diff(ends, prepend=first))
            counts.append(np.zeros(undone, np.int64))
        cnt = np.concatenate(counts) if counts else np.zeros(0, np.int64)
        cnt = np.concatenate([cnt, np.zeros(max(n - cnt.size, 0), np.int64)])[:n]
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(cnt, out=offsets[1:])
        levels = list(self.levels)  # levels[d]: the first id of depth d; levels[-1] == n
        fps, parent, pact = self._joined()
        graph = StateGraph(
            self.kernel, self.gk, fps, parent, pact, np.concatenate(self.flags)[:n], offsets,
            self.edst[:self.ne], self.eact[:self.ne],
            self.eflags[:self.ne] if self.edge_properties else None,
            levels, np.concatenate(self.rows_kept) if self.keep_rows else None, ex.complete,
            ex.stop_reason, ex.seconds, self.refused, self.flag_errors)
        assert graph.offsets[-1] == graph.nedges
        return graph


def _path_to(fps: np.ndarray, parent: np.ndarray, pact: np.ndarray,
             i: int) -> list[tuple[int, int | None]]:
    steps: list[tuple[int, int | None]] = []
    while parent[i] >= 0:  # up to an initial state
        steps.append((int(pact[i]), int(fps[i])))
        i = int(parent[i])
    steps.reverse()
    return steps


def explore(kernel: Kernel, predicates: Iterable[tuple[str, Expr]] = (), invariants: bool = True,
            max_states: int | None = None, keep_rows: bool = False, edge_properties: bool = False,
            report: Callable[[str], None] | None = None, chunk: int = CHUNK) -> StateGraph:
    """Breadth-first search of ``kernel``'s spec that records every transition.

    ``predicates``: named state predicates (in the spec's language) to flag every state with;
    ``invariants``: also flag the spec's invariants (bit set when the invariant holds);
    ``max_states``: stop once more states than this are known (the graph is then incomplete);
    ``keep_rows``: keep every state's row (for export and display); ``edge_properties``: flag
    each transition with the action properties it violates."""
    source = GraphSource(kernel, predicates, invariants, max_states, keep_rows,
                         edge_properties, chunk=chunk)
    with base_pages():
        ex = search(source, StopRule(first_hit=False), report)
        return source.graph(ex)


def _grown(a: np.ndarray, cap: int, used: int) -> np.ndarray:
    new = np.empty((cap,) + a.shape[1:], a.dtype)
    new[:used] = a[:used]
    return new


def _grown_table(mod: Any, tab: np.ndarray) -> np.ndarray:
    new = new_table(tab.size)  # twice the slots
    mod.table_rehash(tab, new)
    return new
