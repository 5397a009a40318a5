"""The driver of a partitioned breadth-first search: the level loop over a partition backend.

A backend holds the partitions (their visited stores and frontiers) and runs the pure
per-partition steps of ``checker.partition`` on them; this driver only sees per-level
statistics (counts and each property's best hit per partition), never the state space. The
Spark engine is this driver over the Spark backend; ``InProcessBackend`` runs the same steps in
one process, so the whole algorithm is tested without a JVM.

Stopping rules, property selection and the canonical choices are the local engine's
(``checker.bfs``): a run stops before expanding a level once a violation is known
(``stop_at_violation``) or ``max_states`` distinct states are reached; a state property's
witness is the least hitting fingerprint on the first level with a hit, and a transition
property's is the least (parent fingerprint, action). One difference: ``max_states`` is checked
between levels, so a limited run finishes the level that crosses the limit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .bfs import Options, PropertySet, current_rss_bytes, peak_rss_bytes
from .explore import Exploration, Hit, Progress
from .kernel import Kernel
from .partition import (LevelTask, expand_part, initial_part, lookup_part, merge_part, owner)


class Backend:
    """Where the partitions live. ``level`` replaces every partition by its next level."""

    parts: int

    def start(self, task: LevelTask) -> None:
        raise NotImplementedError

    def level(self, task: LevelTask) -> tuple[list[dict], list[dict]]:
        """Run one level; returns the expand statistics and the merge statistics of every
        partition."""
        raise NotImplementedError

    def lookup(self, fps: set[int]) -> dict:
        """fingerprint -> (parent fingerprint, action), from the partitions owning them."""
        raise NotImplementedError

    def info(self) -> dict:
        return {}

    def close(self) -> None:
        pass


class InProcessBackend(Backend):
    """Every partition in this process: the partition functions without any cluster."""

    def __init__(self, parts: int = 4):
        self.parts = parts
        self.data: list[list] = []

    def start(self, task: LevelTask) -> None:
        self.data = [initial_part(task, i) for i in range(self.parts)]

    def level(self, task: LevelTask):
        inbox: list[list] = [[] for _ in range(self.parts)]
        xstats, mstats = [], []
        for i, records in enumerate(self.data):
            blocks, st = expand_part(task, i, records)
            xstats.append(st)
            for o, value in blocks:
                inbox[o].append(value)
        nxt = []
        for i, records in enumerate(self.data):
            # a shuffle delivers blocks in any order: the merge must not depend on it
            recs, st = merge_part(task, i, list(reversed(inbox[i])) + records)
            nxt.append(recs)
            mstats.append(st)
        self.data = nxt
        return xstats, mstats

    def lookup(self, fps):
        out = {}
        for f in fps:
            out.update(lookup_part(self.data[owner(f, self.parts)], [f]))
        return out


@dataclass
class _Target:
    """Where a hit's path ends: a state, or a transition out of a state."""

    fp: int  # the state to walk back from
    tail: tuple | None = None  # (action, successor fp) appended after it


class LevelEngine:
    """Level-synchronous BFS whose partitions live in a ``Backend``."""

    name = "partitioned"

    def __init__(self, kernel: Kernel, opts: Options, backend: Backend):
        self.kernel = kernel
        self.opts = opts
        self.props = PropertySet(kernel, opts)
        self.backend = backend
        self.params = tuple(sorted(kernel.spec.params.items()))

    def _task(self) -> LevelTask:
        return LevelTask(self.params, self.backend.parts,
                         tuple(bool(x) for x in self.props.state_active),
                         tuple(bool(x) for x in self.props.trans_active))

    def run(self) -> Exploration:
        k, opts, props = self.kernel, self.opts, self.props
        progress = Progress(opts.report)
        ex = Exploration(self.name, checked=props.checked)
        base_rss = current_rss_bytes()
        init = k.initial.reshape(1, -1).copy()
        self.fp0 = k.fingerprint(init[0])
        targets: dict[str, _Target] = {}
        level_seconds: list[float] = []
        xrss, mrss, store_bytes = 0, 0, 0
        try:
            self.backend.start(self._task())
            ex.distinct = 1
            self._state_hits({j: self.fp0 for j in self._init_hits(init)}, 0, ex, targets)
            frontier = 1
            while frontier:
                if self._should_stop(ex):
                    break
                depth = ex.depth
                t0 = time.perf_counter()
                xstats, mstats = self.backend.level(self._task())
                level_seconds.append(time.perf_counter() - t0)
                ex.generated += sum(s["generated"] for s in xstats)
                xrss = max([xrss] + [s["rss"] for s in xstats])
                mrss = max([mrss] + [s["rss"] for s in mstats])
                store_bytes = sum(s["store_bytes"] for s in mstats)
                self._transition_hits(xstats, depth, ex, targets)
                new = sum(s["new"] for s in mstats)
                if new:
                    ex.distinct += new
                    ex.depth = depth + 1
                    best: dict[int, int] = {}
                    for s in mstats:
                        for j, fp in s["sp"].items():
                            best[j] = min(best.get(j, fp), fp)
                    self._state_hits(best, depth + 1, ex, targets)
                progress.tick(depth + 1, ex.distinct, new)
                frontier = new
            else:
                ex.complete = True
        except KeyboardInterrupt:
            ex.stop_reason = "interrupted"
        for name, path in self._paths(targets).items():
            ex.hits[name].path = path
        ex.seconds = progress.elapsed()
        ex.stats.update(
            partitions=self.backend.parts, levels=len(level_seconds),
            level_seconds=level_seconds, driver_peak_rss=peak_rss_bytes(), base_rss=base_rss,
            worker_peak_rss=max(xrss, mrss), store_bytes=store_bytes, **self.backend.info())
        return ex

    def _init_hits(self, init: np.ndarray) -> list[int]:
        props = self.props
        if not props.state or not props.state_active.any():
            return []
        hits = np.full(len(props.state), -1, np.int64)
        self.kernel.mod.check_states(init, 1, props.state_active, hits)
        return [int(j) for j in np.flatnonzero(hits >= 0)]

    def _should_stop(self, ex: Exploration) -> bool:
        if self.opts.stop_at_violation and any(h.kind != "reachable" for h in ex.hits.values()):
            ex.stop_reason = "stopped at the first violation"
            return True
        if self.opts.max_states is not None and ex.distinct >= self.opts.max_states:
            ex.stop_reason = f"reached --max-states {self.opts.max_states:,}"
            return True
        return False

    def _state_hits(self, best: dict, depth: int, ex: Exploration, targets: dict) -> None:
        props = self.props
        for j in sorted(best):
            if not props.state_active[j]:
                continue
            name, _, kind = props.state[j]
            ex.hits[name] = Hit(name, kind, depth, [])
            targets[name] = _Target(best[j])
            props.state_active[j] = False

    def _transition_hits(self, xstats: list[dict], depth: int, ex: Exploration,
                         targets: dict) -> None:
        props = self.props
        best: dict[int, tuple] = {}
        for s in xstats:
            for j, hit in s["tp"].items():
                if j not in best or hit[:2] < best[j][:2]:
                    best[j] = hit
        for j in sorted(best):
            if not props.trans_active[j]:
                continue
            name, _, kind = props.transition[j]
            parent, inst, succ = best[j]
            ex.hits[name] = Hit(name, kind, depth + 1, [])
            targets[name] = _Target(parent, (inst, succ))
            props.trans_active[j] = False

    def _paths(self, targets: dict[str, _Target]) -> dict[str, list]:
        """Walk every target back to the initial state, one level per round (one lookup in the
        owning partitions per round, all targets together)."""
        steps = {name: [] for name in targets}
        cur = {name: t.fp for name, t in targets.items()}
        while True:
            need = {f for f in cur.values() if f != self.fp0}
            if not need:
                break
            found = self.backend.lookup(need)
            for name, f in cur.items():
                if f == self.fp0:
                    continue
                if f not in found:
                    raise RuntimeError(f"trace of {name}: state {f:#x} is in no partition's "
                                       "store (a lost partition?)")
                parent, act = found[f]
                steps[name].append((act, f))
                cur[name] = parent
        out = {}
        for name, t in targets.items():
            path = list(reversed(steps[name]))
            if t.tail is not None:
                path.append(t.tail)
            out[name] = path
        return out
