"""The local engine: breadth-first search over the compiled kernel, one level at a time.

Per level: the frontier (rows sorted by fingerprint) is expanded in chunks by the kernel, which
fingerprints every successor and inserts it into the visited table; the new states are sorted
by fingerprint, checked against the state predicates, and become the next frontier. Processing
parents in fingerprint order and actions in instance order makes the first parent found for a
state the least (parent fingerprint, action) pair: the canonical parent every engine reports.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

import numpy as np

from .explore import Exploration, Hit, Progress
from .kernel import Kernel
from .visited import Level, VisitedTable, path_to

CHUNK = 1 << 15  # frontier rows per kernel call: bounds the latency of progress and Ctrl-C


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:
        return 0


@dataclass
class Options:
    """What to check and when to stop; shared by every engine."""

    properties: tuple[str, ...] | None = None  # invariants/action properties; None = all
    reachability: bool = True  # also look for the spec's reachability targets
    stop_at_violation: bool = True  # False: --continue, explore everything
    max_states: int | None = None
    report: object = None  # progress callback (a line of text)

    def should_stop(self, ex: Exploration) -> bool:
        """Whether to stop before the next level; sets ``ex.stop_reason`` when so."""
        if self.stop_at_violation and any(h.kind != "reachable" for h in ex.hits.values()):
            ex.stop_reason = "stopped at the first violation"
            return True
        if self.max_states is not None and ex.distinct >= self.max_states:
            ex.stop_reason = f"reached --max-states {self.max_states:,}"
            return True
        return False


class PropertySet:
    """The kernel's numbered properties and which of them a run checks."""

    def __init__(self, kernel: Kernel, opts: Options):
        props = kernel.props
        want = None if opts.properties is None else set(opts.properties)

        def on(name: str, kind: str) -> bool:
            if kind == "reachable":
                return opts.reachability
            return want is None or name in want

        self.state = props.state
        self.transition = props.transition
        self.state_active = np.array([on(n, k) for n, _, k in props.state] or [False], np.bool_)
        self.trans_active = np.array([on(n, k) for n, _, k in props.transition] or [False],
                                     np.bool_)
        self.checked = [(n, k) for n, _, k in props.state + props.transition if on(n, k)]


class LocalEngine:
    name = "local"

    def __init__(self, kernel: Kernel, opts: Options):
        self.kernel = kernel
        self.opts = opts
        self.props = PropertySet(kernel, opts)
        self.act_dtype = kernel.act_dtype

    def run(self) -> Exploration:
        k, mod, opts, props = self.kernel, self.kernel.mod, self.opts, self.props
        k.warm("local")
        progress = Progress(opts.report)
        ex = Exploration(self.name, checked=props.checked)
        base_rss = current_rss_bytes()

        init = k.initial.reshape(1, -1).copy()
        table = VisitedTable()
        fp0 = k.fingerprint(init[0])
        table.add(fp0)
        levels = [Level(np.array([fp0], np.uint64), np.array([-1], np.int32),
                        np.zeros(1, self.act_dtype))]
        ex.distinct = 1
        self._check_states(init, 0, levels, ex)
        front = init
        nt = max(len(props.transition), 1)
        tp_row = np.full(nt, -1, np.int64)
        tp_inst = np.full(nt, -1, np.int64)
        try:
            while front.shape[0]:
                if opts.should_stop(ex):
                    break
                depth = len(levels) - 1
                rows, level, stopped = self._expand(front, table, tp_row, tp_inst, ex, progress,
                                                    depth)
                self._transition_hits(front, depth, levels, tp_row, tp_inst, ex)
                if len(level):
                    levels.append(level)
                    ex.distinct += len(level)
                    ex.depth = depth + 1
                    self._check_states(rows, depth + 1, levels, ex)
                progress.tick(depth + 1, ex.distinct, len(level))
                front = rows
                if stopped:
                    ex.stop_reason = stopped
                    break
            else:
                ex.complete = True
        except KeyboardInterrupt:
            ex.stop_reason = "interrupted"
        ex.seconds = progress.elapsed()
        peak = peak_rss_bytes()
        ex.stats.update(
            peak_rss=peak, base_rss=base_rss, table_bytes=table.nbytes,
            level_bytes=sum(lv.nbytes for lv in levels),
            bytes_per_state=peak / max(ex.distinct, 1),
            explore_bytes_per_state=max(peak - base_rss, 0) / max(ex.distinct, 1))
        self.levels = levels
        return ex

    def _expand(self, front, table: VisitedTable, tp_row, tp_inst, ex: Exploration,
                progress: Progress, depth: int):
        """Expand one level; returns (new rows sorted by fingerprint, their Level, stop reason)."""
        k, mod = self.kernel, self.kernel.mod
        n = front.shape[0]
        cap = max(1024, 2 * n)
        out = np.empty((cap, k.stride), np.int8)
        par = np.empty(cap, np.int32)
        act = np.empty(cap, self.act_dtype)
        fps = np.empty(cap, np.uint64)
        w, lo, stopped = 0, 0, ""
        limit = self.opts.max_states
        try:
            while lo < n:
                hi = min(n, lo + CHUNK)
                i, wrote, filled, gen = mod.expand_dedup(
                    front, lo, hi, table.table, table.max_fill, table.filled, out[w:], par[w:],
                    act[w:], fps[w:], self.props.trans_active, tp_row, tp_inst)
                w += wrote
                table.filled = filled
                ex.generated += gen
                if i < hi:  # the kernel stopped for room: make some and go on from row i
                    if filled + k.ninst > table.max_fill:
                        table.grow()
                    if w + k.ninst > cap:
                        cap *= 2
                        out, par, act, fps = (_grown(a, cap, w) for a in (out, par, act, fps))
                lo = i
                progress.tick(depth, ex.distinct + w, n - lo)
                if limit is not None and ex.distinct + w >= limit and lo < n:
                    stopped = f"reached --max-states {limit:,}"
                    break
        except KeyboardInterrupt:
            stopped = "interrupted"
        order = np.argsort(fps[:w], kind="stable")
        level = Level(fps[:w][order], par[:w][order], act[:w][order])
        return out[:w][order], level, stopped

    def _check_states(self, rows, depth: int, levels: list[Level], ex: Exploration) -> None:
        props = self.props
        if not props.state or not props.state_active.any():
            return
        hits = np.full(len(props.state), -1, np.int64)
        self.kernel.mod.check_states(rows, rows.shape[0], props.state_active, hits)
        for j in np.flatnonzero(hits >= 0):
            name, _, kind = props.state[j]
            ex.hits[name] = Hit(name, kind, depth, path_to(levels, depth, int(hits[j])))
            props.state_active[j] = False

    def _transition_hits(self, front, depth: int, levels, tp_row, tp_inst, ex) -> None:
        props = self.props
        for j in np.flatnonzero(tp_row >= 0):
            if not props.trans_active[j]:
                continue
            name, _, kind = props.transition[j]
            inst, row = int(tp_inst[j]), int(tp_row[j])
            succ = self.kernel.step(inst, front[row])
            path = path_to(levels, depth, row) + [(inst, self.kernel.fingerprint(succ))]
            ex.hits[name] = Hit(name, kind, depth + 1, path)
            props.trans_active[j] = False


def _grown(a: np.ndarray, cap: int, used: int) -> np.ndarray:
    new = np.empty((cap,) + a.shape[1:], a.dtype)
    new[:used] = a[:used]
    return new
