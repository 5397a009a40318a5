"""The driver of a partitioned breadth-first search: the level loop over a partition backend.

A backend holds the partitions (their visited stores and frontiers) and runs the pure
per-partition steps of ``checker.engines.partition`` on them; this driver only sees per-level
statistics (counts and each property's best hit per partition), never the state space. The
Spark engine is this driver over the Spark backend; ``InProcessBackend`` runs the same steps in
one process, so the whole algorithm is tested without a JVM.

Stopping rules, property selection and the canonical choices are the local engine's
(``checker.engines.local``): a run stops before expanding a level once a violation is known
(``stop_at_violation``) or ``max_states`` distinct states are reached; a state property's
witness is the least hitting fingerprint on the first level with a hit, and a transition
property's is the least (parent fingerprint, action). One difference: ``max_states`` is checked
between levels, so a limited run finishes the level that crosses the limit.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from dataclasses import dataclass

from hwcheck.checker.engines.exploration import (Exploration, Hit, Progress, current_rss_bytes,
                                                 interrupt_reason, peak_rss_bytes)
from hwcheck.checker.engines.options import Options, PropertySet
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.engines import runs
from hwcheck.checker.engines.partition import (LevelTask, initial_part, lookup_part, owner,
                                               step_part)
from hwcheck.checker.engines.runs import MERGE_RATIO


class Backend:
    """Where the partitions live. ``step`` runs one level on every partition. Each partition's
    visited set is in ``store`` (a folder of ``checker.engines.runs``: local disk, or shared
    storage every executor reaches), removed by ``close``."""

    parts: int
    merge_ratio = MERGE_RATIO

    def open_store(self, store: str | None) -> None:
        self.own_store = store is None
        self.store = store or tempfile.mkdtemp(prefix="hwcheck-visited-")
        os.makedirs(self.store, exist_ok=True)
        self.next_level = 0

    def level_task(self, task: LevelTask) -> LevelTask:
        """``task`` for the backend's next level, with its visited sets' folder."""
        return dataclasses.replace(task, store=self.store, level=self.next_level,
                                   merge_ratio=self.merge_ratio)

    def start(self, task: LevelTask) -> None:
        """Every partition's items before the search (``partition.initial_part``)."""
        raise NotImplementedError

    def step(self, task: LevelTask) -> list[dict]:
        """``partition.step_part`` on every partition at the next level, its output delivered
        to the partitions it names; returns each partition's statistics."""
        raise NotImplementedError

    def lookup(self, fps: set[int]) -> dict:
        """fingerprint -> (parent fingerprint, action), from the partitions owning them."""
        raise NotImplementedError

    def info(self) -> dict:
        return {}

    def cancel(self) -> None:
        """Stop the work under way (after Ctrl-C)."""

    def close(self) -> None:
        if getattr(self, "own_store", False):
            runs.remove(self.store)


class InProcessBackend(Backend):
    """Every partition in this process: the partition functions without any cluster."""

    def __init__(self, parts: int = 4, merge_ratio: float = MERGE_RATIO,
                 store: str | None = None):
        self.parts = parts
        self.merge_ratio = merge_ratio
        self.open_store(store)
        self.data: list[list] = []
        self.task: LevelTask | None = None

    def start(self, task: LevelTask) -> None:
        self.task = self.level_task(task)
        self.data = [initial_part(self.task, i) for i in range(self.parts)]

    def step(self, task: LevelTask) -> list[dict]:
        self.task = task = self.level_task(task)
        inbox: list[list] = [[] for _ in range(self.parts)]
        stats = []
        for i, items in enumerate(self.data):
            out, st = step_part(task, i, items)
            stats.append(st)
            for o, item in out:
                inbox[o].append(item)
        # a shuffle delivers blocks in any order: the merge must not depend on it
        self.data = [list(reversed(x)) for x in inbox]
        self.next_level += 1
        return stats

    def lookup(self, fps):
        out = {}
        for f in fps:
            out.update(lookup_part(self.task, owner(f, self.parts), [f]))
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
        from hwcheck.checker.protocols import SpecRef

        # what the partitions rebuild their kernel from: a reference when the spec came from a
        # protocol, else the spec itself
        self.spec_id = SpecRef.of(kernel.spec) or kernel.spec

    def _task(self) -> LevelTask:
        props = self.props
        stops = () if not self.opts.stop_at_violation else (
            tuple(j for j, (_, _, kind) in enumerate(props.state) if kind != "reachable"),
            tuple(j for j, (_, _, kind) in enumerate(props.transition) if kind != "reachable"))
        return LevelTask(self.spec_id, self.kernel.key, self.backend.parts,
                         tuple(bool(x) for x in props.state_active),
                         tuple(bool(x) for x in props.trans_active),
                         self.kernel.symmetric, stops=stops)

    def run(self) -> Exploration:
        ex = None
        try:
            ex = self._run()
            return ex
        finally:
            try:
                self.backend.close()
            except Exception:  # noqa: BLE001
                if ex is not None and ex.complete:
                    raise
                # a stopped run keeps what it found: the backend may be gone with the signal

    def _run(self) -> Exploration:
        """The local engine's level loop. A backend step merges a level and already expands it,
        so the expansion of level d is accounted (transitions, transition hits) when the loop
        decides to go on from level d, and dropped when it stops there."""
        k, opts, props = self.kernel, self.opts, self.props
        k.warm("step")
        base_rss = current_rss_bytes()
        self.fp0 = k.fingerprint(k.start)
        # the partitions' initial items; their workers build their kernels before the clock starts
        self.backend.start(self._task())
        progress = Progress(opts.report)
        ex = Exploration(self.name, checked=props.checked, symmetry=k.symmetric)
        targets: dict[str, _Target] = {}
        traced = tracing = False
        level_seconds: list[float] = []
        self.level_tasks: list[tuple] = []  # (wall s, slowest task s, summed task s, new, cand.)
        self.task_stats = {"rss": 0, "merge_seconds": 0.0, "expand_seconds": 0.0,
                           "store_bytes": 0}
        try:
            stats = self._step(level_seconds)  # level 0: the initial state
            ex.distinct = sum(s["new"] for s in stats)
            self._state_hits(stats, 0, ex, targets)
            frontier = ex.distinct
            finished = traced = tracing = False
            while frontier:
                ex.seconds = progress.elapsed()
                if self.opts.should_stop(ex):
                    break
                depth = ex.depth
                ex.generated += sum(s["generated"] for s in stats)
                self._transition_hits(stats, depth, ex, targets)
                stats = self._step(level_seconds)
                new = sum(s["new"] for s in stats)
                if new:
                    ex.distinct += new
                    ex.depth = depth + 1
                    self._state_hits(stats, depth + 1, ex, targets)
                progress.tick(depth + 1, ex.distinct, new)
                frontier = new
            else:
                finished = True
            tracing = True
            paths = self._paths(targets)
            for name, path in paths.items():
                ex.hits[name].path = path
            traced = True
            # complete only now: every level explored and every hit has its path
            ex.complete = finished
        except (KeyboardInterrupt, MemoryError) as e:
            ex.complete = False
            ex.stop_reason = interrupt_reason(e)
            try:
                self.backend.cancel()
            except Exception:  # noqa: BLE001 - gone with the signal: nothing left to stop
                pass
            if not traced:
                self._paths_after_stop(targets, ex, retry=not tracing)
        ex.seconds = progress.elapsed()
        ex.stats.update(
            partitions=self.backend.parts, levels=len(level_seconds),
            level_seconds=level_seconds, level_tasks=self.level_tasks, driver_peak_rss=peak_rss_bytes(), base_rss=base_rss,
            worker_peak_rss=self.task_stats["rss"], store_bytes=self.task_stats["store_bytes"],
            shuffled_bytes=self.task_stats.get("shuffled_bytes", 0),
            task_merge_seconds=self.task_stats["merge_seconds"],
            task_expand_seconds=self.task_stats["expand_seconds"], **self._backend_info(ex))
        return ex

    def _backend_info(self, ex: Exploration) -> dict:
        try:
            return self.backend.info()
        except Exception:  # noqa: BLE001
            if ex.complete:
                raise
            return {}  # stopped, and the backend gone with the signal: its figures with it

    def _paths_after_stop(self, targets: dict, ex: Exploration, retry: bool) -> None:
        """A stop during the levels: what was found lies in levels every partition stored in
        full (a state is in one level only, so the records of a level cut short are never read
        for it), so its paths are rebuilt as after the last level. Not when the stop came while
        they were being rebuilt, nor when the rebuild is stopped or fails (the backend gone with
        the signal): those hits keep no path."""
        paths: dict = {}
        if retry and targets:
            try:
                paths = self._paths(targets)
            except (KeyboardInterrupt, MemoryError) as e:
                ex.stop_reason += f"; {interrupt_reason(e)} while traces were rebuilt"
            except Exception as e:  # noqa: BLE001 - the backend may be gone with the signal
                ex.stop_reason += f"; traces not rebuilt: {type(e).__name__}: {e}"
        for name in targets:
            ex.hits[name].path = paths.get(name)

    def _step(self, level_seconds: list) -> list[dict]:
        t0 = time.perf_counter()
        stats = self.backend.step(self._task())
        level_seconds.append(time.perf_counter() - t0)
        ts = self.task_stats
        ts["rss"] = max([ts["rss"]] + [s["rss"] for s in stats])
        ts["merge_seconds"] += sum(s["merge_seconds"] for s in stats)
        ts["expand_seconds"] += sum(s["expand_seconds"] for s in stats)
        ts["store_bytes"] = sum(s["disk_bytes"] for s in stats)
        ts["shuffled_bytes"] = ts.get("shuffled_bytes", 0) + sum(s["shuffled_bytes"] for s in stats)
        self.level_tasks.append((
            round(level_seconds[-1], 4),
            round(max(s["merge_seconds"] + s["expand_seconds"] for s in stats), 4),
            round(sum(s["merge_seconds"] + s["expand_seconds"] for s in stats), 4),
            sum(s["new"] for s in stats), sum(s["candidates"] for s in stats)))
        return stats

    def _state_hits(self, stats: list[dict], depth: int, ex: Exploration, targets: dict) -> None:
        props = self.props
        best: dict[int, int] = {}
        for s in stats:
            for j, fp in s["sp"].items():
                best[j] = min(best.get(j, fp), fp)
        for j in sorted(best):
            if not props.state_active[j]:
                continue
            name, _, kind = props.state[j]
            ex.hits[name] = Hit(name, kind, depth, [])
            targets[name] = _Target(best[j])
            props.state_active[j] = False
        dom: dict[int, int] = {}
        for s in stats:
            for c, fp in s.get("dom_sp", {}).items():
                dom[c] = min(dom.get(c, fp), fp)
        for c in sorted(dom):
            self._domain_hit(c, depth, _Target(dom[c]), ex, targets)

    def _domain_hit(self, code: int, length: int, target: "_Target", ex: Exploration,
                    targets: dict) -> None:
        name = self.kernel.domain_errors.name(code)
        if name not in ex.hits:
            ex.hits[name] = Hit(name, "domain", length, [])
            ex.checked.append((name, "domain"))
            targets[name] = target

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
        dom: dict[int, tuple] = {}
        for s in xstats:
            for c, hit in s.get("dom_tp", {}).items():
                if c not in dom or hit < dom[c]:
                    dom[c] = hit
        for c in sorted(dom):  # the step has no successor: its path ends with no fingerprint
            parent, inst = dom[c]
            self._domain_hit(c, depth + 1, _Target(parent, (inst, None)), ex, targets)

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
