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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hwcheck.checker.engines import spill
from hwcheck.checker.engines.checkpoint import Checkpointer
from hwcheck.checker.engines.fpsort import radix_order
from hwcheck.checker.engines.hits import domain_hits, earliest, hit, last_step, property_hits
from hwcheck.checker.engines.options import PropertySet
from hwcheck.checker.engines.pool import Pool
from hwcheck.checker.engines.visited import IdTable
from hwcheck.checker.engines.workdir import Column, WorkDir, grown
from hwcheck.checker.graph import checkpoint as graph_checkpoint
from hwcheck.checker.graph.buffers import (
    CandidateBuffer,
    Chore,
    SharedRuns,
    WorkRows,
    base_pages,
    bucket_counts,
    bucket_scatter,
    bucket_sort,
    bucket_starts,
    count_values,
    gather_level,
    has_bit,
    places,
    rows_on_huge_pages,
    touch,
)
from hwcheck.checker.graph.kernel import GraphKernel
from hwcheck.checker.search.driver import Found, LevelResult, LevelSource, search
from hwcheck.checker.search.exploration import (
    Exploration,
    Progress,
    current_rss_bytes,
    interrupt_reason,
    peak_rss_bytes,
)
from hwcheck.checker.search.signals import signals_held
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.semantics.signatures import CandidatesArgs, CheckArgs
from hwcheck.spec.lang import Expr

CHUNK = 1 << 14  # frontier rows per kernel call: bounds the latency of progress and Ctrl-C
SLICE = 1 << 12  # rows of a new level gathered, flagged and checked at a time (in the cache)
WORKER_ROWS = 1 << 13  # frontier rows a worker expands at a time, with several workers
BATCHES = 4  # candidate buffers a worker: the pool runs ahead while this thread gives ids
TOUCH = 1 << 18  # words of a grown id table's fresh memory a thread backs at a time (2 MiB)


@dataclass
class StateGraph:
    """The reachable states of a spec (or the first ``max_states`` of them) and every
    transition between them."""

    kernel: Kernel
    gk: GraphKernel
    fps: np.ndarray  # uint64 [n]
    parent: np.ndarray  # int32 [n]: the state it was first reached from; -1 for the initial
    pact: np.ndarray  # action instance of that first step
    flags: np.ndarray  # [n]: bit j = state predicate gk.flag_names[j] holds (gk.flag_dtype)
    offsets: np.ndarray  # int64 [n + 1]
    dst: np.ndarray  # int32 [edges]
    act: np.ndarray | None  # action instance of each transition (None: not kept)
    eflags: np.ndarray | None  # uint64 [edges]: bit j = violates gk.edge_flag_names[j]
    levels: list[int]  # levels[d]: the first id of depth d; levels[-1] == n
    rows: np.ndarray | None = None  # the states themselves, when kept
    complete: bool = False  # every reachable state found and expanded
    stop_reason: str = ""
    seconds: float = 0.0
    refused: int = 0  # steps not taken because they leave the declared domains
    flag_errors: int = 0  # predicate evaluations that read outside a variable's shape
    stats: dict[str, Any] = field(default_factory=dict)
    _flag_of: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

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
        """bool [n]: where the named state predicate holds (computed once, read-only)."""
        out = self._flag_of.get(name)
        if out is None:
            out = self._flag_of[name] = np.empty(self.flags.size, np.bool_)
            has_bit(self.flags, self.gk.bit(name), out)
            out.flags.writeable = False
        return out

    def actions(self) -> np.ndarray:
        """The action instance of each transition (kept unless the search was told not to)."""
        if self.act is None:
            raise ValueError("this state graph was explored without its transitions' actions")
        return self.act

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
    ``max_states``: a graph of more states than this stops (it is then incomplete);
    ``edge_actions``: keep each transition's action instance (``StateGraph.act``; what
    recoverability alone reads does without: the workers' levels then never write it);
    ``checkpoint``: a folder to write checkpoints to at level boundaries, every
    ``checkpoint_every`` seconds (0: every level), and once more when a stop comes between
    levels; ``resume``: a folder whose checkpoint the search goes on from (and goes on writing
    to): ``graph/checkpoint.py``, for a check (``props``) that does not keep rows;
    ``workdir``: where the run's work folder goes (``--workdir``; a temporary folder by
    default), which holds a level's rows once they pass the local engine's memory budget for a
    level (``spill.SPILL_BYTES``): the frontier, the next level and the new states as found,
    and each column of the graph (``Column``) past the same budget."""

    name = "graph"

    def __init__(self, kernel: Kernel, predicates: Iterable[tuple[str, Expr]] = (),
                 invariants: bool = True, max_states: int | None = None,
                 keep_rows: bool = False, edge_properties: bool = False,
                 props: PropertySet | None = None, chunk: int | None = None,
                 workers: int = 1, worker_rows: int | None = None, edge_actions: bool = True,
                 checkpoint: Path | None = None, checkpoint_every: float = 60.0,
                 resume: Path | None = None, workdir: Path | None = None):
        if (checkpoint is not None or resume is not None) and (props is None or keep_rows):
            raise ValueError("a state graph checkpoints for a check (props), without its rows")
        self.kernel = kernel
        self.edge_actions = edge_actions
        self.gk = GraphKernel(kernel, list(predicates), invariants)
        self.max_states = max_states
        self.keep_rows = keep_rows
        self.edge_properties = edge_properties
        self.props = props
        self.chunk = chunk or CHUNK
        self.workers = max(1, workers)
        self.worker_rows = max(1, worker_rows or WORKER_ROWS)
        # checkpoints (``graph/checkpoint.py``): where to write them, how often, where from
        self.checkpoint, self.checkpoint_every, self.resume = checkpoint, checkpoint_every, resume
        self.workdir = workdir
        self.ckpt: Checkpointer | None = None
        self.asked = list(props.checked) if props is not None else []  # as the run began
        self.targets: dict[str, Any] = {}  # the target of every hit reported (a checkpoint's)
        # the check's report, once its part of the exploration is over (``check_on_graph``)
        self.check: Exploration | None = None

    def exploration(self) -> Exploration:
        return Exploration(self.name, checked=self.props.checked if self.props else [],
                           symmetry=self.kernel.symmetric)

    def prepare(self) -> None:
        self.gk.warm(workers=self.workers > 1)
        count_values(np.zeros(1, self.kernel.act_dtype), 1, np.zeros(1, np.int64))
        places(radix_order(np.zeros(1, np.uint64)), np.zeros(1, np.int64))
        touch(np.zeros(1, np.uint64), 0, 1)
        if self.workers > 1:  # the level's order shared by the workers
            keys, order = np.zeros(1, np.uint64), np.zeros(1, np.int64)
            bounds, counts = np.array([0, 1], np.int64), np.zeros(1, np.int64)
            bucket_counts(keys, 0, 1, np.uint64(63), counts)
            bucket_starts(np.zeros((1, 1), np.int64), bounds, np.zeros((1, 1), np.int64))
            bucket_scatter(keys, 0, 1, np.uint64(63), counts, order, keys.copy())
            bucket_sort(keys.copy(), order, bounds, 0, 1, np.zeros(1, np.int64))
        one = np.zeros((1, 1), np.uint64)
        acts = np.zeros(1, self.kernel.act_dtype)
        gather_level(np.zeros(1, np.int64), 0, 1, one, one[0], np.zeros(1, np.int32), acts,
                     one, one[0], np.zeros(1, np.int32), acts)
        k = self.kernel
        # a level's rows and the graph's columns past the memory budget: files of the work
        # folder (made when first needed)
        self.work: WorkDir | None = None
        self.files: list[WorkRows] = []
        self.disk = 0  # the most the work folder held, at a level's end
        self.err = np.zeros(1, np.int64)
        self.base_rss = current_rss_bytes()
        self.ids = IdTable()  # fingerprint -> state id (the visited set with ids)
        nt = max(len(k.props.transition), 1)
        self.tp_row = np.full(nt, -1, np.int64)
        self.tp_inst = np.full(nt, -1, np.int64)
        self.tp_active = (self.props.trans_active if self.props is not None
                          else np.zeros(nt, np.bool_))
        # every state's fingerprint, first parent, action and flags, level after level
        # (each in a file of the work folder once it passes the memory budget: ``Column``)
        self.s_fps = self._column(np.uint64, "graph-fps")
        self.s_par = self._column(np.int32, "graph-parents")
        self.s_act = self._column(k.act_dtype, "graph-actions")
        self.s_flags = self._column(self.gk.flag_dtype, "graph-flags")
        # where every state's transitions end (compressed sparse row offsets: state i's are
        # ne[offsets[i]:offsets[i + 1]]); a level's rows write theirs as they are expanded, and
        # ids up to ``off_to`` have them
        self.s_off = self._column(np.int64, "graph-offsets")
        self.s_off.a[0] = 0
        self.off_to = 0
        self.rank = np.empty(0, np.int64)  # scratch: a level's new states' places
        self.order = np.empty(0, np.int64)  # scratch: the level's states in fingerprint order
        self.sorted_keys = np.empty(0, np.uint64)  # scratch: their fingerprints
        # scratch: each worker's keys by bucket, where each bucket and each share of it begins
        self.counts = self.starts = np.empty((self.workers, 0), np.int64)
        self.bounds = np.empty(1, np.int64)
        self.rows_kept: list[np.ndarray] = []
        # every transition, level after level, in buffers grown by doubling: destination,
        # action instance, action-property flags; ne of them so far
        ecap = max(1024, k.ninst * 64)
        self.e_dst = self._column(np.int32, "graph-dst", ecap)
        self.e_act = self._column(k.act_dtype, "graph-eact", ecap)
        self.e_flags = self._column(np.uint64, "graph-eflags",
                                    ecap if self.edge_properties else 1)
        self.edst, self.eact, self.eflags = self.e_dst.a, self.e_act.a, self.e_flags.a
        self.ne = 0
        self.enabled = np.zeros(max(k.ninst, 1), np.int64)  # transitions by action instance
        self.levels = [0]
        self.n = 0
        self.front = np.zeros((0, k.stride), k.dtype)
        self.refused = self.flag_errors = 0
        self.front_file: WorkRows | None = None  # the file the frontier is in, if any
        self.spilled = 0  # levels whose rows went to the work folder
        # the new states' buffers (expand): rows, fingerprints, parents, instances
        self.found: tuple[np.ndarray, ...] = (np.empty((0, k.stride), k.dtype),
                                              np.empty(0, np.uint64), np.empty(0, np.int32),
                                              np.empty(0, k.act_dtype))
        self.fronts: list[np.ndarray | None] = [None, None]  # the frontiers' two buffers
        self.front_in = 1  # the buffer the frontier is in (the initial states are in neither)
        self.row_end = np.zeros(0, np.int64)
        self.nnew = 0
        self.cut: _Cut | None = None  # the level a limit stopped in, until a later run
        self.interrupted = False  # Ctrl-C, SIGTERM or out of memory: no later run
        # several workers: a pool, and candidate buffers (one run of rows each, ``BATCHES`` a
        # worker, so that the pool runs ahead while this thread gives ids)
        self.pool: Pool | None = None
        self.batches: list[CandidateBuffer] = []
        self.runs: SharedRuns | None = None  # the level's runs while the workers expand them
        if self.workers > 1:
            # the other workers (the level sources' pool): this thread is one too
            self.pool = Pool(self.workers - 1, "hwcheck-graph")
            cap = max(8 * self.worker_rows, 2 * k.ninst)  # Kafka: 4.7 transitions a state
            self.batches = [CandidateBuffer(k, cap, self.edge_properties)
                            for _ in range(BATCHES * self.workers)]

    def start(self, ex: Exploration, progress: Progress) -> LevelResult:
        if self.resume is not None:
            self.ckpt, progress.offset = graph_checkpoint.load(self, ex)
            self.ckpt.every = self.checkpoint_every
            return LevelResult()
        if self.checkpoint is not None:
            self.ckpt = Checkpointer(self.checkpoint, self.checkpoint_every,
                                     graph_checkpoint.identity(self))
        k = self.kernel
        first: dict[int, int] = {}  # each initial state's fingerprint, once (canonical rows)
        for i, row in enumerate(k.starts):
            first.setdefault(k.fingerprint(row), i)
        init = k.starts[list(first.values())]
        fps = np.array(list(first), np.uint64)
        n = len(fps)
        self.ids.fill(fps)
        self._state_room(n)
        self.s_fps.a[:n] = fps
        self.s_par.a[:n] = -1
        self.s_act.a[:n] = 0
        return LevelResult(new=n, found=self._noted(self._new_level(init, 0)))

    def _noted(self, found: list[Found]) -> list[Found]:
        """``found``, each hit's target noted (as the driver records them: a domain error's
        first hit, a property's only one) for the checkpoints."""
        for f in found:
            if f.kind != "domain" or f.name not in self.targets:
                self.targets[f.name] = f.target
        return found

    def on_stop(self, ex: Exploration) -> None:
        """A stop with ``--checkpoint`` at a level boundary: a final checkpoint there (a stop
        inside a level leaves the last one, at its start, current)."""
        if self.ckpt is not None and self.cut is None and self.front.shape[0]:
            with signals_held():
                graph_checkpoint.save(self, self.ckpt, ex)

    def restore(self, ids: list[int], nedges: int, levels: Iterable[dict[str, np.ndarray]],
                front: np.ndarray, enabled: np.ndarray, refused: int,
                flag_errors: int) -> None:
        """The graph at a checkpoint's level boundary (``graph/checkpoint.py``): states ``ids[d]``
        and on are those of depth d; ``levels``, one at a time, their states (``fps``,
        ``parents``, ``actions``, ``flags``) and, but for the last (the frontier, ``front``),
        their transitions (``offsets``, ``dst``, and ``eact``, ``eflags`` where the graph keeps
        them) and ``nedges`` of them in all; the fingerprint -> id table laid anew."""
        n = ids[-1]
        self.n = self.ne = 0
        self._state_room(n)
        self.s_off.room(0, ids[-2] + 1)  # the expanded states' transitions' ends
        self.s_off.a[0] = 0
        self._grow_edges(max(nedges, self.edst.size))
        cols = {"fps": self.s_fps, "parents": self.s_par, "actions": self.s_act,
                "flags": self.s_flags}
        try:
            for d, level in enumerate(levels):
                lo, hi = ids[d], ids[d + 1]
                for key, col in cols.items():
                    col.a[lo:hi] = level[key]
                if "offsets" in level:
                    e0, e1 = self.ne, int(level["offsets"][-1]) if hi > lo else self.ne
                    self.s_off.a[lo + 1:hi + 1] = level["offsets"]
                    self.edst[e0:e1] = level["dst"]
                    if self.edge_actions:
                        self.eact[e0:e1] = level["eact"]
                    if self.edge_properties:
                        self.eflags[e0:e1] = level["eflags"]
                    self.ne = e1
        except BaseException:  # a damaged level: the graph stays empty, as it was
            self.ne = 0
            raise
        self.off_to = ids[-2]
        self.n, self.levels = n, list(ids)
        self.ids.fill(self.s_fps.a[:n])
        self.front = self._next_front(front.shape[0])
        self.front[:] = front
        self.enabled[:] = enabled
        self.refused, self.flag_errors = refused, flag_errors

    def frontier(self) -> int:
        left = 0 if self.cut is None else self.cut.rows - self.cut.done
        return int(self.front.shape[0]) + left

    def expand(self, depth: int, ex: Exploration, progress: Progress,
               rule: StopRule) -> LevelResult:
        if self.ckpt is not None and self.cut is None and self.ckpt.due():
            graph_checkpoint.save(self, self.ckpt, ex)  # a level boundary: a consistent point
        out = self._expand(depth, progress, rule)
        self._noted(out.found)
        return out

    def _expand(self, depth: int, progress: Progress, rule: StopRule) -> LevelResult:
        done = LevelResult()
        cut = self.cut
        if cut is not None:  # first the rest of a level an earlier run stopped in
            done = self._level(cut.depth, progress, rule, cut)
            done.depth = cut.depth + 1  # its new states' depth (the search may be past it)
            if done.stopped or depth == cut.depth or not self.front.shape[0]:
                return done
        # (the search counted the stopped level's new states and is at the next depth)
        out = self._level(depth, progress, rule, None)
        if not out.new:  # the new states are those the rest of the stopped level found
            out.depth = depth
        out.generated += done.generated
        out.new += done.new
        out.found[:0] = done.found
        return out

    def _level(self, depth: int, progress: Progress, rule: StopRule,
               cut: _Cut | None) -> LevelResult:
        """Expand the frontier (the states at ``depth``) into the next level, or, with ``cut``,
        the rest of the level a limit stopped in (the next level, already numbered, is
        numbered again with the states the rest adds)."""
        k = self.kernel
        if cut is None:
            m, n, base, first, start = self.front.shape[0], self.n, self.levels[-2], self.ne, 0
            self.s_off.room(base + 1, n + 1)
            self.row_end = self.s_off.a[base + 1:base + 1 + m]  # the frontier's ends
        need = max(1024, 2 * self.front.shape[0])  # the new states as found: buffers kept
        # from level to level (fresh memory is slow to touch), grown while a level needs more
        if self.found[0].shape[0] < need:
            self._release(self.found[0])
            self.found = (self._level_rows(need, "graph-new"), np.empty(need, np.uint64),
                          np.empty(need, np.int32), np.empty(need, k.act_dtype))
        self._to_write(self.found[0])
        self.nnew = 0
        if cut is not None:
            with signals_held():  # the level taken back whole
                self._reopen(cut)
            m, n, base, first, start = cut.rows, self.n, cut.base, cut.first, cut.done
        self.front_file = self._file(self.front)
        before, nnew_before = self.ne, self.nnew
        _, dom_row, dom_inst = k.error_arrays()
        self.tp_row[:] = -1
        expand_rows = self._rows_by_workers if self.pool is not None and m > self.worker_rows \
            else self._rows_alone
        done, stopped = expand_rows(depth, base, start, dom_row, dom_inst, progress, rule)
        out = LevelResult()
        try:
            with signals_held():  # the level numbered whole (a signal is taken after it)
                out = self._number(depth, m, n, base, first, done, before, nnew_before,
                                   dom_row, dom_inst)
        except (KeyboardInterrupt, MemoryError) as e:  # taken after the level was numbered
            self.interrupted = True
            stopped = stopped or interrupt_reason(e)
        if not stopped and self.max_states is not None and self.n > self.max_states:
            stopped = f"more than {self.max_states:,} states"
        out.stopped, out.interrupted = stopped, self.interrupted
        return out

    def _number(self, depth: int, m: int, n: int, base: int, first: int, done: int,
                before: int, nnew_before: int, dom_row: np.ndarray,
                dom_inst: np.ndarray) -> LevelResult:
        """The new states of rows ..done of the frontier: numbered in fingerprint order, their
        transitions renumbered, kept as the next level (flags, first hits); a stopped level's
        rest noted for a later run."""
        k, mod = self.kernel, self.gk.mod
        nnew, ne, front = self.nnew, self.ne, self.front
        new_rows, new_fps, new_par, new_act = self.found
        # the rows expanded so far (all of them unless stopped): number the new level in
        # fingerprint order
        order, rank = self._order(new_fps[:nnew])
        # what the level needs is had first (out of memory, or of room in the work folder,
        # then stops the search before anything is numbered)
        self._state_room(n + nnew)
        # a stopped level keeps its frontier for a later run: the next level goes elsewhere
        rows = (self._next_front(nnew) if done == m else np.empty((nnew, k.stride), k.dtype)) \
            if nnew else new_rows[:0]
        edst, ids = self.edst, self.ids
        self._parts(ne - first, lambda a, b: mod.renumber(edst, first + a, first + b, n, rank))
        fps, par, act = (self.s_fps.a[n:n + nnew], self.s_par.a[n:n + nnew],
                         self.s_act.a[n:n + nnew])
        src, words = new_rows.view(np.uint64), rows.view(np.uint64)
        flags = self.s_flags.a[n:n + nnew]
        checked: dict[int, _Checked] = {}
        into = self._file(rows)  # the next level's file, if it has one

        def gather(a: int, b: int) -> None:
            """Places a..b-1 of the level, a slice at a time while its rows are in the cache:
            in fingerprint order, their ids, their flags and the first hits among them."""
            out = checked[a] = _Checked.none(self.props, k)
            for c in range(a, b, SLICE):
                d = min(b, c + SLICE)
                gather_level(order, c, d, src, new_fps, new_par, new_act, words, fps, par, act)
                ids.number(fps[c:d], n + c)
                out.errors += int(self.gk.mod.eval_flags(rows[c:d], d - c, flags[c:d],
                                                         np.zeros(1, np.int64)))
                out.add(self._check(rows[c:d]), c)
                if into is not None:  # written: the file's now
                    into.drop_rows(c, d)

        self._parts(nnew, gather)
        self.off_to = base + done
        self._settle()  # (the level's rows all there: the most the folder holds)
        if into is not None:
            self.spilled += 1
        found_file = self._file(new_rows)
        if found_file is not None:  # gathered (a stopped level's rest takes them back from rows)
            found_file.discard()
        out = LevelResult(generated=ne - before, new=nnew - nnew_before)
        out.found += self._domain_hits(dom_row, dom_inst, base, depth)
        out.found += self._transition_hits(front, base, depth)
        errors = self.flag_errors
        if nnew:
            whole = _Checked.none(self.props, k)
            for a in sorted(checked):  # the first hit of the earliest part
                whole.add(checked[a], 0)
            self.flag_errors += whole.errors
            out.found += self._new_level(rows, depth + 1, whole)
        else:
            self.front = rows
        if done < m:  # a later run goes on from row ``done`` of this level
            self.cut = _Cut(depth, front, m, done, base, first, nnew,
                            self.flag_errors - errors)
        elif self.front_file is not None:  # the level is expanded: its rows are not needed
            self.front_file.discard()
            self.front_file = None
        return out

    def _order(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(order, rank): the stable permutation that sorts ``keys`` (uint64), as
        ``np.argsort(kind="stable")``, and its inverse (rank[order[j]] = j). With several
        workers and many keys, the workers share it: the keys are dealt into buckets by their
        top bits (fingerprints are uniform, so a bucket holds a few), each worker counting and
        dealing its share of the keys, then sorting its share of the buckets."""
        n = keys.size
        if self.rank.size < n:
            size = max(n, 2 * self.rank.size)
            self.rank, self.order = np.empty(size, np.int64), np.empty(size, np.int64)
            self.sorted_keys = np.empty(size, np.uint64)
        rank = self.rank[:n]
        if self.pool is None or n <= self.worker_rows:
            order = radix_order(keys)  # in linear time
            places(order, rank)
            return order, rank
        order = self.order[:n]
        bits = min(22, max(1, n.bit_length() - 2))  # 2 to 4 keys a bucket
        shift, w, nb = np.uint64(64 - bits), self.workers, 1 << bits
        cuts = [n * i // w for i in range(w + 1)]
        if self.counts.shape[1] < nb:
            self.counts, self.starts = np.empty((w, nb), np.int64), np.empty((w, nb), np.int64)
            self.bounds = np.empty(nb + 1, np.int64)
        counts, start, bounds = self.counts[:, :nb], self.starts[:, :nb], self.bounds[:nb + 1]
        self._parts(w, lambda a, b: [bucket_counts(keys, cuts[i], cuts[i + 1], shift, counts[i])
                                     for i in range(a, b)], whole=False)
        bucket_starts(counts, bounds, start)
        sorted_keys = self.sorted_keys[:n]
        self._parts(w, lambda a, b: [bucket_scatter(keys, cuts[i], cuts[i + 1], shift,
                                                    start[i], order, sorted_keys)
                                     for i in range(a, b)], whole=False)
        self._parts(1 << bits, lambda a, b: bucket_sort(sorted_keys, order, bounds, a, b, rank))
        return order, rank

    def _reopen(self, cut: _Cut) -> None:
        """Take back the level that ``cut`` numbered: its states return to the new states'
        buffers (their ids, in the table and the transitions, are their places there), the
        frontier is the stopped level's again."""
        self.cut = None
        nb = cut.nnew
        if nb:
            new_rows, new_fps, new_par, new_act = self.found
            lo = self.n - nb
            new_rows[:nb] = self.front
            new_fps[:nb] = self.s_fps.a[lo:self.n]
            new_par[:nb] = self.s_par.a[lo:self.n]
            new_act[:nb] = self.s_act.a[lo:self.n]
            if self.keep_rows:
                self.rows_kept.pop()
            self.levels.pop()
            self.n = lo
            self.flag_errors -= cut.flag_errors
        self.nnew = nb
        self.front = cut.front
        self.row_end = self.s_off.a[cut.base + 1:cut.base + 1 + cut.rows]

    def _parts(self, n: int, work: Callable[[int, int], Any], whole: bool = True) -> None:
        """``work(a, b)`` over 0..n-1 in parts: one a worker, the first in this thread (each
        part writes only its own places), or whole here with one worker or, ``whole``, with
        little to do."""
        if self.pool is None or (whole and n <= self.worker_rows):
            work(0, n)
            return
        cuts = [n * w // self.workers for w in range(self.workers + 1)]
        jobs = [self.pool.submit(work, a, b) for a, b in zip(cuts[1:], cuts[2:])]
        try:
            work(0, cuts[1])
        finally:
            for job in jobs:  # no worker is left writing
                job.result()

    def _backed(self, fresh: np.ndarray) -> None:
        """The id table's fresh memory, as it grows inside a level: the workers waiting for
        ids back it with this thread (fresh pages faulted in by one thread are slow)."""
        runs = self.runs
        if runs is not None:
            runs.share(Chore(lambda a, b: touch(fresh, a, b), fresh.size, TOUCH))

    def _room(self, more: int) -> None:
        """Grow what is short for ``more`` successors: the id table, the new states' buffers
        and the transitions' buffers."""
        nnew, ne = self.nnew, self.ne
        self.ids.make_room(self.n + nnew + more, self._backed)
        while nnew + more > self.found[0].shape[0]:
            cap = 2 * self.found[0].shape[0]
            rows = self._level_rows(cap, "graph-new")
            rows[:nnew] = self.found[0][:nnew]
            self._release(self.found[0])
            self.found = (rows, *(grown(a, cap, nnew) for a in self.found[1:]))
        while ne + more > self.edst.size:
            self._grow_edges(2 * self.edst.size)

    def _grow_edges(self, cap: int) -> None:
        """Room for ``cap`` transitions (``Column``: in place once large)."""
        ne = self.ne
        self.e_dst.room(ne, cap)
        self.e_act.room(ne, cap)
        self.edst, self.eact = self.e_dst.a, self.e_act.a
        if self.edge_properties:
            self.e_flags.room(ne, cap)
            self.eflags = self.e_flags.a

    def _stop(self, depth: int, done: int, progress: Progress, rule: StopRule) -> str:
        """After rows ..done of the frontier: progress, and whether a limit stops the level."""
        m, known = self.front.shape[0], self.n + self.nnew
        if self.front_file is not None:  # expanded: the file's, until the level's end
            self.front_file.drop_rows(0, done)
        progress.tick(depth, known, m - done)
        if done >= m:
            return ""
        if self.max_states is not None and known > self.max_states:
            return f"more than {self.max_states:,} states"
        return rule.limit(known, progress.elapsed())

    def _rows_alone(self, depth: int, base: int, lo: int, dom_row: np.ndarray,
                    dom_inst: np.ndarray, progress: Progress, rule: StopRule) -> tuple[int, str]:
        """Expand the frontier from row ``lo`` in this thread, ids given as successors are
        found (the graph kernel's ``expand_edges``). Returns (rows expanded, why the level
        stopped or "")."""
        mod, front = self.gk.mod, self.front
        m = front.shape[0]
        try:
            while lo < m:
                with signals_held():  # Ctrl-C waits for the end of the chunk
                    hi = min(m, lo + self.chunk)
                    new_rows, new_fps, new_par, new_act = self.found
                    ne = self.ne
                    i, self.nnew, self.ne, bad = mod.expand_edges(
                        front, lo, hi, base, self.ids.tab, self.ids.max_fill,
                        self.n, new_rows, new_fps, new_par, new_act, self.nnew, self.edst,
                        self.eact, self.eflags, self.ne, self.row_end, self.edge_properties,
                        self.err, self.tp_active, self.tp_row, self.tp_inst, dom_row, dom_inst)
                    count_values(self.eact[ne:self.ne], self.ne - ne, self.enabled)
                    self.refused += int(bad)
                    if i < hi:  # out of room: grow what is short and go on from row i
                        self._room(mod.ROOM)  # the most successors of a block of rows
                    lo = i
                stopped = self._stop(depth, lo, progress, rule)
                if stopped:
                    return lo, stopped
        except (KeyboardInterrupt, MemoryError) as e:  # what was found up to then is kept
            self.interrupted = True
            return lo, interrupt_reason(e)
        return lo, ""

    def _rows_by_workers(self, depth: int, base: int, start: int, dom_row: np.ndarray,
                         dom_inst: np.ndarray, progress: Progress,
                         rule: StopRule) -> tuple[int, str]:
        """Expand the frontier from row ``start`` with the workers: runs of ``worker_rows``
        rows are expanded into candidates (``expand_candidates``, without the GIL) by the pool's
        threads and by this one, which gives the finished runs their ids in row order
        (``idtable.resolve``) and expands the next unclaimed run itself whenever the run it
        needs is not ready. The ids, the first parents, the transitions and the first hits are
        those of ``_rows_alone``. Returns (rows expanded, why the level stopped or "")."""
        assert self.pool is not None
        m = self.front.shape[0]
        runs = SharedRuns([(lo, min(m, lo + self.worker_rows))
                      for lo in range(start, m, self.worker_rows)], self.batches)
        self.runs = runs  # while its threads run: ``_grow_table`` shares work with them
        loops = [self.pool.submit(self._expand_runs, runs) for _ in range(self.workers - 1)]
        done, stopped = start, ""
        try:
            for r, (_, hi) in enumerate(runs.runs):
                b = self._ready(runs, r)
                with signals_held():  # one run's ids given whole
                    while True:
                        self._resolve(b, base, dom_row, dom_inst)
                        if b.hi >= hi:
                            break
                        self._candidates(b, b.hi, hi)  # the run did not fit: the rest
                    runs.release(b)
                    done = hi
                stopped = self._stop(depth, done, progress, rule)
                if stopped:
                    break
        except (KeyboardInterrupt, MemoryError) as e:  # what was given ids up to then is kept
            self.interrupted = True
            stopped = interrupt_reason(e)
        finally:
            self.runs = None
            runs.halt()
            for loop in loops:  # no worker is left writing
                loop.exception()
        return done, stopped

    def _expand_runs(self, runs: SharedRuns) -> None:
        """A pool thread's part of a level: the next unclaimed run, while there is one."""
        try:
            while (claim := runs.claim(wait=True)) is not None:
                r, b = claim
                runs.put(r, self._candidates(b, *runs.runs[r]))
        except BaseException as e:  # noqa: BLE001 - to the main thread, which raises it
            runs.fail(e)

    def _ready(self, runs: SharedRuns, r: int) -> CandidateBuffer:
        """Run ``r``'s candidates: expanded here if no thread has claimed it, else awaited,
        and meanwhile the next unclaimed run expanded here."""
        while True:
            b = runs.take(r)
            if b is not None:
                return b
            claim = runs.claim(wait=False)
            if claim is not None:
                q, c = claim
                runs.put(q, self._candidates(c, *runs.runs[q]))
            else:
                runs.wait(r)

    def _candidates(self, b: CandidateBuffer, lo: int, hi: int) -> CandidateBuffer:
        """A worker's part: rows lo..hi-1 (or as many as fit) into ``b``'s candidates."""
        b.tp_row[:] = -1
        b.dom_row[:] = -1
        b.lo = lo
        b.hi, b.q, b.refused = self.gk.mod.expand_candidates(*CandidatesArgs(
            front=self.front, lo=lo, hi=hi, cw=b.cw, cfp=b.cfp, cpar=b.cpar, cact=b.cact,
            eact=b.eact, eflags=b.eflags, row_end=self.row_end,
            want_tp=self.edge_properties, err=b.err, tp_active=self.tp_active, tp_row=b.tp_row,
            tp_inst=b.tp_inst, dom_row=b.dom_row, dom_inst=b.dom_inst))
        b.hits = bool(b.tp_row.max() >= 0 or (b.dom_row.size and b.dom_row.max() >= 0))
        b.enabled[:] = 0
        count_values(b.eact, b.q, b.enabled)
        return b

    def _resolve(self, b: CandidateBuffer, base: int, dom_row: np.ndarray,
                 dom_inst: np.ndarray) -> None:
        """Give a worker's candidates their ids (the next run of rows, in order)."""
        q, ne = b.q, self.ne
        self._room(q)
        if self.edge_actions:
            self.eact[ne:ne + q] = b.eact[:q]
        self.enabled += b.enabled
        if self.edge_properties:
            self.eflags[ne:ne + q] = b.eflags[:q]
        new_rows, new_fps, new_par, new_act = self.found
        self.nnew = self.gk.mod.resolve(
            self.ids.tab, self.ids.mask, b.cw, b.cfp, b.cpar, b.cact, q, self.n, self.nnew,
            new_rows.view(np.uint64), new_fps, new_par, new_act, base, self.edst, ne)
        self.row_end[b.lo:b.hi] += ne
        self.ne = ne + q
        self.refused += int(b.refused)
        if not b.hits:
            return
        earliest(self.tp_row, b.tp_row, 0, self.tp_inst, b.tp_inst)  # the earlier runs' stay
        earliest(dom_row, b.dom_row, 0, dom_inst, b.dom_inst)

    def _next_front(self, n: int) -> np.ndarray:
        """Room for the next frontier's ``n`` rows: of two buffers kept from level to level,
        the one the current frontier is not in."""
        i = 1 - self.front_in
        buf = self.fronts[i]
        if buf is None or buf.shape[0] < n:
            if buf is not None:
                self._release(buf)
            buf = self.fronts[i] = self._level_rows(max(n, 1024), "graph-front")
        self._to_write(buf)
        self.front_in = i
        return buf[:n]

    def _level_rows(self, n: int, stem: str) -> np.ndarray:
        """Room for ``n`` rows of a level: on 2 MiB pages while they fit in the memory budget
        the local engine keeps a level's buckets in (``spill.SPILL_BYTES``), else in a file of
        the run's work folder (``WorkRows``)."""
        k = self.kernel
        if n * k.stride * np.dtype(k.dtype).itemsize <= spill.SPILL_BYTES:
            return rows_on_huge_pages(n, k)
        try:
            f = WorkRows(self._folder(), stem, n, k)
        except OSError:  # no file could be made and mapped there: in memory after all
            return rows_on_huge_pages(n, k)
        self.files.append(f)
        return f.rows

    def _folder(self) -> WorkDir:
        """The run's work folder, made when first needed."""
        if self.work is None:
            self.work = WorkDir(self.workdir)
        return self.work

    def _column(self, dtype: Any, stem: str, cap: int = 1024) -> Column:
        """A column of the graph, in the work folder past the memory budget."""
        return Column(dtype, cap, self._folder, stem, lambda: spill.SPILL_BYTES)

    def _columns(self) -> tuple[Column, ...]:
        return (self.s_fps, self.s_par, self.s_act, self.s_flags, self.s_off, self.e_dst,
                self.e_act, self.e_flags)

    def _settle(self) -> None:
        """At a level's end: what the work folder holds now (the most, kept), and the columns'
        entries written so far let go of (those in files stay there)."""
        if self.work is None:
            return
        self.disk = max(self.disk, sum(f.held() for f in self.files)
                        + sum(c.file.held() for c in self._columns() if c.file is not None))
        n = self.n
        for col in (self.s_fps, self.s_par, self.s_act, self.s_flags):
            col.settle(n)
        self.s_off.settle(self.off_to + 1)
        for col in (self.e_dst, self.e_act, self.e_flags):
            col.settle(self.ne)

    def _file(self, rows: np.ndarray) -> WorkRows | None:
        """The work folder's file ``rows`` are in, or None (they are in memory)."""
        return next((f for f in self.files if f.holds(rows)), None)

    def _to_write(self, rows: np.ndarray) -> None:
        """A level buffer about to be written: in the work folder, its blocks taken again if
        they were given back (``NoRoom`` here, before the level changes anything)."""
        f = self._file(rows)
        if f is not None:
            f.ready()

    def _release(self, rows: np.ndarray) -> None:
        """A level buffer given up for a larger one: its file, if any, leaves the folder."""
        f = self._file(rows)
        if f is not None:
            self.files.remove(f)
            f.close()

    def _close_work(self) -> None:
        """The level buffers' files and the work folder go (rows still referenced stay
        readable); the columns keep theirs, which go with them (``WorkFile``)."""
        for f in self.files:
            f.close()
        self.files = []
        if self.work is not None:
            self.work.close()

    def _state_room(self, n: int) -> None:
        """Room for ``n`` states in the states' columns, and for their transitions' ends (so
        that the explored graph takes none after the search, where a full work folder could
        only be an error)."""
        for col in (self.s_fps, self.s_par, self.s_act, self.s_flags):
            col.room(self.n, n)
        self.s_off.room(self.n + 1, n + 1)  # (the frontier's ends are below self.n + 1)

    def _new_level(self, rows: np.ndarray, depth: int,
                   checked: _Checked | None = None) -> list[Found]:
        """Keep a level (rows in fingerprint order; its fingerprints, parents and actions
        already in the columns, and, with ``checked``, its flags and first hits); its first
        hits as findings."""
        n = rows.shape[0]
        if checked is None:  # the initial states
            checked = _Checked.none(self.props, self.kernel)
            checked.errors = int(self.gk.mod.eval_flags(
                rows, n, self.s_flags.a[self.n:self.n + n], self.err))
            checked.add(self._check(rows), 0)
            self.flag_errors += checked.errors
        if self.keep_rows:
            self.rows_kept.append(rows.copy())
        first = self.n
        self.n += n
        self.levels.append(self.n)
        self.front = rows
        return self._state_hits(checked, first, depth)

    def _check(self, rows: np.ndarray) -> _Checked | None:
        """The kernel's own ``check_states`` over rows of a new level, as the engines run it:
        the first row hitting each state property still active, and each domain error's."""
        props, k = self.props, self.kernel
        if props is None or not props.state or not props.state_active.any():
            return None
        out = _Checked.none(props, k)
        assert out.hits is not None and out.dom_row is not None
        k.mod.check_states(*CheckArgs(rows=rows, n=rows.shape[0], active=props.state_active,
                                      hits=out.hits, err=np.zeros(1, np.int64),
                                      dom_row=out.dom_row))
        return out

    def _state_hits(self, checked: _Checked, first: int, depth: int) -> list[Found]:
        props, k = self.props, self.kernel
        hits, dom_row = checked.hits, checked.dom_row
        if props is None or hits is None or dom_row is None:
            return []
        return (property_hits(props.state, props.state_active, hit(hits), depth,
                              lambda j: (first + int(hits[j]), None))
                + domain_hits(k, hit(dom_row), depth, lambda c: (first + int(dom_row[c]), None)))

    def _domain_hits(self, dom_row: np.ndarray, dom_inst: np.ndarray, base: int,
                     depth: int) -> list[Found]:
        if self.props is None:
            return []
        return domain_hits(self.kernel, hit(dom_row), depth + 1, lambda c: (
            base + int(dom_row[c]), (int(dom_inst[c]), None)))

    def _transition_hits(self, front: np.ndarray, base: int, depth: int) -> list[Found]:
        props, k, tp_row, tp_inst = self.props, self.kernel, self.tp_row, self.tp_inst
        if props is None:
            return []
        return property_hits(props.transition, props.trans_active, hit(tp_row), depth + 1,
                             lambda j: (base + int(tp_row[j]), last_step(
                                 k, int(tp_inst[j]), front[int(tp_row[j])])))

    def _joined(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every state's fingerprint, parent and action (views of the columns)."""
        n = self.n
        return self.s_fps.a[:n], self.s_par.a[:n], self.s_act.a[:n]

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
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        ninst = max(self.kernel.ninst, 1)
        enabled = self.enabled  # one transition per (state, enabled instance)
        new = np.zeros(ninst, np.int64)
        later = self.s_act.a[self.levels[1]:self.n] if len(self.levels) > 1 else self.s_act.a[:0]
        count_values(later, later.size, new)  # the states by the instance that first reached them
        ex.stats["coverage"] = {"enabled": enabled.tolist(), "new": new.tolist()}
        disk = self.disk
        self._close_work()
        peak = peak_rss_bytes()
        self._let_go()
        ex.stats.update(peak_rss=peak, base_rss=self.base_rss, disk_bytes=disk,
                        spilled_levels=self.spilled,
                        explore_bytes_per_state=max(peak - self.base_rss, 0) / max(self.n, 1),
                        refused=self.refused)

    def _let_go(self) -> None:
        """After the search: what only the exploration used goes before the graph is analysed
        (the id table's pages given back, the level buffers, the scratch)."""
        self.ids.release()
        k = self.kernel
        self.fronts = [None, None]
        self.front = np.zeros((0, k.stride), k.dtype)
        self.found = (np.empty((0, k.stride), k.dtype), np.empty(0, np.uint64),
                      np.empty(0, np.int32), np.empty(0, k.act_dtype))
        self.rank = self.order = np.empty(0, np.int64)
        self.sorted_keys = np.empty(0, np.uint64)
        self.batches = []

    def graph(self, ex: Exploration) -> StateGraph:
        """The explored graph (after the search)."""
        n = self.n
        # the states never expanded (an incomplete graph) have no transitions: the last
        # expanded one's end (the transitions are in the order of their states)
        self.s_off.room(self.off_to + 1, n + 1)
        offsets = self.s_off.a[:n + 1]
        offsets[self.off_to + 1:] = self.ne
        levels = list(self.levels)  # levels[d]: the first id of depth d; levels[-1] == n
        fps, parent, pact = self._joined()
        graph = StateGraph(
            self.kernel, self.gk, fps, parent, pact, self.s_flags.a[:n], offsets,
            self.edst[:self.ne], self.eact[:self.ne] if self.edge_actions else None,
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
            report: Callable[[str], None] | None = None, chunk: int | None = None,
            workers: int = 1) -> StateGraph:
    """Breadth-first search of ``kernel``'s spec that records every transition.

    ``predicates``: named state predicates (in the spec's language) to flag every state with;
    ``invariants``: also flag the spec's invariants (bit set when the invariant holds);
    ``max_states``: stop once more states than this are known (the graph is then incomplete);
    ``keep_rows``: keep every state's row (for export and display); ``edge_properties``: flag
    each transition with the action properties it violates; ``workers``: threads that expand
    each level (the same graph for any number)."""
    source = GraphSource(kernel, predicates, invariants, max_states, keep_rows,
                         edge_properties, chunk=chunk, workers=workers)
    with base_pages():
        ex = search(source, StopRule(first_hit=False), report)
        return source.graph(ex)


@dataclass
class _Checked:
    """What flagging and checking some rows of a new level found: the flags' domain errors,
    and (with state properties to check) the first row hitting each and each domain error's
    first row, -1 for none."""

    errors: int
    hits: np.ndarray | None
    dom_row: np.ndarray | None

    @staticmethod
    def none(props: PropertySet | None, kernel: Kernel) -> _Checked:
        if props is None or not props.state:
            return _Checked(0, None, None)
        return _Checked(0, np.full(len(props.state), -1, np.int64),
                        np.full(kernel.nerrors, -1, np.int64))

    def add(self, later: _Checked | None, at: int) -> None:
        """Join what later rows found (their rows counted from ``at``): the earlier hit
        stays."""
        if later is None:
            return
        self.errors += later.errors
        for mine, theirs in ((self.hits, later.hits), (self.dom_row, later.dom_row)):
            if mine is not None and theirs is not None:
                earliest(mine, theirs, at)


@dataclass
class _Cut:
    """A level a limit stopped in: rows done..rows-1 of its frontier ``front`` are not
    expanded yet, and the next level holds the ``nnew`` states found before the stop."""

    depth: int
    front: np.ndarray
    rows: int
    done: int
    base: int  # the id of the frontier's first row
    first: int  # the level's first transition
    nnew: int
    flag_errors: int  # those the next level's flags counted


