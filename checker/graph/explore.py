"""The explored state graph: a breadth-first search that records every transition.

States get ids in the order the search finds them (the initial state is 0, each level's states
follow the previous level's), so ids are in order of depth and a state's id says how far it is
from the initial state. Every transition is kept in compressed sparse row form: the transitions
of state i are ``dst[offsets[i]:offsets[i + 1]]`` with their action instances in ``act``. Each
state also keeps its first parent (the state and action the search first reached it by: a
shortest path), its fingerprint (to check a replayed path against) and a bit mask of state
predicates (the protocol's healthy predicate, the invariants).

All of it is numpy arrays written by the graph kernel (``kernel.py``); no per-state Python.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from hwcheck.checker.graph.kernel import GraphKernel
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.lang import Expr

CHUNK = 1 << 14  # frontier rows per kernel call: bounds the latency of progress and Ctrl-C
MAX_LOAD = 0.5  # the id table's fill limit (open addressing, linear probing)


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
    stats: dict = field(default_factory=dict)

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
        while i > 0:
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


def explore(kernel: Kernel, predicates: list[tuple[str, Expr]] = (), invariants: bool = True,
            max_states: int | None = None, keep_rows: bool = False, edge_properties: bool = False,
            report=None, chunk: int = CHUNK) -> StateGraph:
    """Breadth-first search of ``kernel``'s spec that records every transition.

    ``predicates``: named state predicates (in the spec's language) to flag every state with;
    ``invariants``: also flag the spec's invariants (bit set when the invariant holds);
    ``max_states``: stop once this many states are known (the graph is then incomplete);
    ``keep_rows``: keep every state's row (for export and display); ``edge_properties``: flag
    each transition with the action properties it violates."""
    gk = GraphKernel(kernel, predicates, invariants)
    gk.warm()
    mod, stride, dtype = gk.mod, kernel.stride, kernel.dtype
    adt = kernel.act_dtype
    ninst = kernel.ninst
    start = time.perf_counter()
    last_report = start
    err = np.zeros(1, np.int64)

    init = kernel.initial.reshape(1, -1).copy()
    fp0 = np.uint64(kernel.fingerprint(init[0]))
    cap = 1 << 12
    keys = np.zeros(cap, np.uint64)
    vals = np.full(cap, -1, np.int64)
    mod.table_put(keys, vals, cap - 1, fp0, 0)

    fps, parent, pact, flags = [np.array([fp0], np.uint64)], [np.array([-1], np.int32)], \
        [np.zeros(1, adt)], []
    rows_kept = [init.copy()] if keep_rows else None
    dst_parts, act_parts, ef_parts, end_parts = [], [], [], []
    levels = [0, 1]
    n = 1
    front = init
    refused = flag_errors = 0
    complete, stop_reason = False, ""
    ecap = max(1024, ninst * 64)

    def flag_rows(rows: np.ndarray) -> None:
        nonlocal flag_errors
        f = np.zeros(rows.shape[0], np.uint64)
        flag_errors += int(mod.eval_flags(rows, rows.shape[0], f, err))
        flags.append(f)

    flag_rows(init)
    try:
        while front.shape[0]:
            m = front.shape[0]
            row_end = np.zeros(m, np.int64)
            new_cap = max(1024, 2 * m)
            new_rows = np.empty((new_cap, stride), dtype)
            new_fps = np.empty(new_cap, np.uint64)
            new_par = np.empty(new_cap, np.int32)
            new_act = np.empty(new_cap, adt)
            edst = np.empty(ecap, np.int32)
            eact = np.empty(ecap, adt)
            eflags = np.zeros(ecap if edge_properties else 1, np.uint64)
            nnew = ne = 0
            lo = 0
            base = levels[-2]
            stopped = False
            while lo < m:
                hi = min(m, lo + chunk)
                i, nnew, ne, bad = mod.expand_edges(
                    front, lo, hi, base, keys, vals, int(keys.size * MAX_LOAD), n, new_rows,
                    new_fps, new_par, new_act, nnew, edst, eact, eflags, ne, row_end,
                    edge_properties, err)
                refused += int(bad)
                if i < hi:  # out of room: grow what is short and go on from row i
                    if n + nnew + ninst > keys.size * MAX_LOAD:
                        keys, vals = _grown_table(mod, keys, vals)
                    if nnew + ninst > new_rows.shape[0]:
                        new_rows, new_fps, new_par, new_act = (
                            _grown(a, 2 * new_rows.shape[0], nnew)
                            for a in (new_rows, new_fps, new_par, new_act))
                    if ne + ninst > edst.size:
                        edst, eact = _grown(edst, 2 * edst.size, ne), _grown(eact, 2 * eact.size,
                                                                             ne)
                        if edge_properties:
                            eflags = _grown(eflags, 2 * eflags.size, ne)
                lo = i
                if report is not None and time.perf_counter() - last_report >= 2.0:
                    last_report = time.perf_counter()
                    rate = (n + nnew) / max(last_report - start, 1e-9)
                    report(f"graph: level {len(levels) - 1}  states {n + nnew:,}  "
                           f"transitions {sum(p.size for p in dst_parts) + ne:,}  "
                           f"{rate:,.0f} states/s")
                if max_states is not None and n + nnew > max_states and lo < m:
                    stopped = True
                    break
            # the rows expanded so far (all of them unless stopped)
            done = lo
            dst_parts.append(edst[:ne].copy())
            act_parts.append(eact[:ne].copy())
            if edge_properties:
                ef_parts.append(eflags[:ne].copy())
            ends = row_end[:done]
            end_parts.append((ends, m - done))
            new_rows = new_rows[:nnew]
            if nnew:
                fps.append(new_fps[:nnew].copy())
                parent.append(new_par[:nnew].copy())
                pact.append(new_act[:nnew].copy())
                flag_rows(new_rows)
                if keep_rows:
                    rows_kept.append(new_rows.copy())
                n += nnew
                levels.append(n)
            if stopped or (max_states is not None and n > max_states):
                stop_reason = f"more than {max_states:,} states"
                break
            front = new_rows
        else:
            complete = True
    except (KeyboardInterrupt, MemoryError) as e:
        stop_reason = "interrupted" if isinstance(e, KeyboardInterrupt) else "out of memory"
    # transitions per state: the expanded rows of each level in order, then nothing for the
    # states never expanded (an incomplete graph)
    counts = []
    for ends, undone in end_parts:
        if ends.size:
            counts.append(np.diff(ends, prepend=0))
        counts.append(np.zeros(undone, np.int64))
    counts = np.concatenate(counts) if counts else np.zeros(0, np.int64)
    counts = np.concatenate([counts, np.zeros(n - counts.size, np.int64)])[:n]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    if levels[-1] != n:
        levels.append(n)
    graph = StateGraph(
        kernel, gk, np.concatenate(fps), np.concatenate(parent), np.concatenate(pact),
        np.concatenate(flags)[:n], offsets,
        np.concatenate(dst_parts) if dst_parts else np.zeros(0, np.int32),
        np.concatenate(act_parts) if act_parts else np.zeros(0, adt),
        (np.concatenate(ef_parts) if ef_parts else np.zeros(0, np.uint64))
        if edge_properties else None,
        levels, np.concatenate(rows_kept) if keep_rows else None, complete, stop_reason,
        time.perf_counter() - start, refused, flag_errors)
    assert graph.offsets[-1] == graph.nedges
    return graph


def _grown(a: np.ndarray, cap: int, used: int) -> np.ndarray:
    new = np.empty((cap,) + a.shape[1:], a.dtype)
    new[:used] = a[:used]
    return new


def _grown_table(mod, keys: np.ndarray, vals: np.ndarray):
    new_keys = np.zeros(keys.size * 2, np.uint64)
    new_vals = np.full(keys.size * 2, -1, np.int64)
    mod.table_rehash(keys, vals, new_keys, new_vals)
    return new_keys, new_vals
