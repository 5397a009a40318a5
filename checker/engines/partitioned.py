"""The driver of a partitioned breadth-first search: the level loop over a partition backend.

A backend holds the partitions (their visited stores and frontiers) and runs the pure
per-partition steps of ``checker.engines.partition`` on them; this driver only sees per-level
statistics (counts and each property's best hit per partition), never the state space. The
Spark engine is this driver over the Spark backend; ``InProcessBackend`` runs the same steps in
one process, so the whole algorithm is tested without a JVM.

The loop, its stop rule and the property bookkeeping are the search driver's
(``checker.search``), as for the local engine; a state property's witness is the least hitting
fingerprint on the first level with a hit, and a transition property's is the least (parent
fingerprint, action). One difference: limits are checked between levels only, so a limited run
finishes the level that crosses the limit.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hwcheck.checker.engines import runs
from hwcheck.checker.engines.hits import domain_hits, property_hits
from hwcheck.checker.engines.options import Options, PropertySet
from hwcheck.checker.engines.partition import (
    SLICE,
    Item,
    LevelTask,
    initial_part,
    lookup_part,
    owner,
    step_part,
)
from hwcheck.checker.engines.runs import MERGE_RATIO
from hwcheck.checker.search.driver import Found, LevelResult, LevelSource, search
from hwcheck.checker.search.exploration import (
    Exploration,
    Progress,
    current_rss_bytes,
    peak_rss_bytes,
)
from hwcheck.checker.search.stop import StopRule
from hwcheck.checker.semantics.kernel import Kernel


class Backend:
    """Where the partitions live. ``step`` runs one level on every partition. Each partition's
    visited set is in ``store`` (a folder of ``checker.engines.runs``: local disk, or shared
    storage every executor reaches), removed by ``close``."""

    parts: int
    merge_ratio = MERGE_RATIO
    slice = SLICE  # candidates a task merges at a time (``partition``'s module docstring)

    def open_store(self, store: str | None) -> None:
        self.own_store = store is None
        self.store = store or tempfile.mkdtemp(prefix="hwcheck-visited-")
        os.makedirs(self.store, exist_ok=True)
        self.next_level = 0

    def level_task(self, task: LevelTask) -> LevelTask:
        """``task`` for the backend's next level, with its visited sets' folder."""
        return dataclasses.replace(task, store=self.store, level=self.next_level,
                                   merge_ratio=self.merge_ratio, slice=self.slice)

    def start(self, task: LevelTask) -> None:
        """Every partition's items before the search (``partition.initial_part``)."""
        raise NotImplementedError

    def step(self, task: LevelTask) -> list[dict[str, Any]]:
        """``partition.step_part`` on every partition at the next level, its output delivered
        to the partitions it names; returns each partition's statistics."""
        raise NotImplementedError

    def lookup(self, fps: set[int]) -> dict[int, tuple[int, int]]:
        """fingerprint -> (parent fingerprint, action), from the partitions owning them."""
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        return {}

    def cancel(self) -> None:
        """Stop the work under way (after Ctrl-C)."""

    def close(self) -> None:
        if getattr(self, "own_store", False):
            runs.remove(self.store)


class InProcessBackend(Backend):
    """Every partition in this process: the partition functions without any cluster."""

    def __init__(self, parts: int = 4, merge_ratio: float = MERGE_RATIO,
                 store: str | None = None, slice: int = SLICE) -> None:
        self.parts = parts
        self.merge_ratio = merge_ratio
        self.slice = slice
        self.open_store(store)
        self.data: list[list[Item]] = []
        self.task: LevelTask | None = None

    def start(self, task: LevelTask) -> None:
        self.task = self.level_task(task)
        self.data = [initial_part(self.task, i) for i in range(self.parts)]

    def step(self, task: LevelTask) -> list[dict[str, Any]]:
        self.task = task = self.level_task(task)
        inbox: list[list[Item]] = [[] for _ in range(self.parts)]
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

    def lookup(self, fps: set[int]) -> dict[int, tuple[int, int]]:
        out: dict[int, tuple[int, int]] = {}
        if self.task is None:
            raise RuntimeError("a lookup before the level task is set (start first)")
        for f in fps:
            out.update(lookup_part(self.task, owner(f, self.parts), [f]))
        return out


@dataclass
class _Target:
    """Where a hit's path ends: a state, or a transition out of a state."""

    fp: int  # the state to walk back from
    tail: tuple[int, int | None] | None = None  # (action, successor fp) appended after it


class LevelEngine(LevelSource):
    """Level-synchronous BFS whose partitions live in a ``Backend``: a level source for the
    search driver (``checker.search.driver``). A backend step merges a level and already
    expands it, so the expansion of level d (transitions, transition hits) is reported with
    level d + 1, when the driver has decided to go on from level d, and dropped when it stops
    there."""

    name = "partitioned"

    def __init__(self, kernel: Kernel, opts: Options, backend: Backend) -> None:
        self.kernel = kernel
        self.opts = opts
        self.rule = opts.stop_rule()
        self.props = PropertySet(kernel, opts)
        self.backend = backend
        from hwcheck.checker.protocols import SpecRef

        # what the partitions rebuild their kernel from: a reference when the spec came from a
        # protocol, else the spec itself
        self.spec_id = SpecRef.of(kernel.spec) or kernel.spec

    def _task(self) -> LevelTask:
        props = self.props
        return LevelTask(self.spec_id, self.kernel.key, self.backend.parts,
                         tuple(bool(x) for x in props.state_active),
                         tuple(bool(x) for x in props.trans_active),
                         self.kernel.symmetric, rule=self.rule,
                         kinds=(tuple(k for _, _, k in props.state),
                                tuple(k for _, _, k in props.transition)))

    def run(self) -> Exploration:
        return search(self, self.rule, self.opts.report)

    # -- the level source ------------------------------------------------------------------

    def exploration(self) -> Exploration:
        return Exploration(self.name, checked=self.props.checked, symmetry=self.kernel.symmetric)

    def prepare(self) -> None:
        k = self.kernel
        k.warm("step")
        self.base_rss = current_rss_bytes()
        self.fp0 = {k.fingerprint(row) for row in k.starts}  # the initial states'
        self.level_seconds: list[float] = []
        # (wall s, slowest task s, summed task s, new, cand.)
        self.level_tasks: list[tuple[float, float, float, int, int]] = []
        self.task_stats = {"rss": 0, "merge_seconds": 0.0, "expand_seconds": 0.0,
                           "store_bytes": 0}
        self.coverage: dict[str, np.ndarray] = {}  # cov_enabled, cov_new summed over tasks
        self.pending: list[dict[str, Any]] = []
        self.left = 0
        # the partitions' initial items; their workers build their kernels before the clock starts
        self.backend.start(self._task())

    def start(self, ex: Exploration, progress: Progress) -> LevelResult:
        self.pending = self._step()  # level 0: the initial state, merged and expanded
        new = sum(s["new"] for s in self.pending)
        self.left = new
        return LevelResult(new=new, found=self._state_hits(self.pending, 0))

    def frontier(self) -> int:
        return self.left

    def expand(self, depth: int, ex: Exploration, progress: Progress,
               rule: StopRule) -> LevelResult:
        done = self.pending  # the backend's last step expanded level ``depth``
        out = LevelResult(generated=sum(s["generated"] for s in done),
                          found=self._transition_hits(done, depth))
        self.pending = self._step()
        out.new = self.left = sum(s["new"] for s in self.pending)
        if out.new:
            out.found += self._state_hits(self.pending, depth + 1)
        return out

    def cancel(self) -> None:
        self.backend.cancel()

    def finish(self, ex: Exploration) -> None:
        ts = self.task_stats
        info = self._backend_info(ex)
        try:
            self.backend.close()
        except Exception:  # noqa: BLE001
            if ex.complete:
                raise
            # a stopped run keeps what it found: the backend may be gone with the signal
        ex.stats.update(
            partitions=self.backend.parts, levels=len(self.level_seconds),
            level_seconds=self.level_seconds, level_tasks=self.level_tasks,
            driver_peak_rss=peak_rss_bytes(), base_rss=self.base_rss,
            worker_peak_rss=ts["rss"], store_bytes=ts["store_bytes"],
            shuffled_bytes=ts.get("shuffled_bytes", 0),
            task_merge_seconds=ts["merge_seconds"],
            task_expand_seconds=ts["expand_seconds"], **info)
        cov = self.coverage
        if "cov_enabled" in cov and "cov_new" in cov:
            ex.stats["coverage"] = {"enabled": [int(x) for x in cov["cov_enabled"]],
                                    "new": [int(x) for x in cov["cov_new"]]}

    def _backend_info(self, ex: Exploration) -> dict[str, Any]:
        try:
            return self.backend.info()
        except Exception:  # noqa: BLE001
            if ex.complete:
                raise
            return {}  # stopped, and the backend gone with the signal: its figures with it

    def _step(self) -> list[dict[str, Any]]:
        t0 = time.perf_counter()
        stats = self.backend.step(self._task())
        self.level_seconds.append(time.perf_counter() - t0)
        ts = self.task_stats
        ts["rss"] = max([ts["rss"]] + [s["rss"] for s in stats])
        ts["merge_seconds"] += sum(s["merge_seconds"] for s in stats)
        ts["expand_seconds"] += sum(s["expand_seconds"] for s in stats)
        ts["store_bytes"] = sum(s["disk_bytes"] for s in stats)
        for s in stats:  # action coverage (statistics from another hwcheck may lack it)
            for key in ("cov_enabled", "cov_new"):
                if s.get(key) is not None:
                    add = np.asarray(s[key], np.int64)
                    self.coverage[key] = self.coverage[key] + add if key in self.coverage \
                        else add
        ts["shuffled_bytes"] = ts.get("shuffled_bytes", 0) + sum(s["shuffled_bytes"] for s in stats)
        self.level_tasks.append((
            round(self.level_seconds[-1], 4),
            round(max(s["merge_seconds"] + s["expand_seconds"] for s in stats), 4),
            round(sum(s["merge_seconds"] + s["expand_seconds"] for s in stats), 4),
            sum(s["new"] for s in stats), sum(s["candidates"] for s in stats)))
        return stats

    def _state_hits(self, stats: list[dict[str, Any]], depth: int) -> list[Found]:
        props = self.props
        best: dict[int, int] = {}
        for s in stats:
            for j, fp in s["sp"].items():
                best[j] = min(best.get(j, fp), fp)
        dom: dict[int, int] = {}
        for s in stats:
            for c, fp in s.get("dom_sp", {}).items():
                dom[c] = min(dom.get(c, fp), fp)
        return (property_hits(props.state, props.state_active, sorted(best), depth,
                              lambda j: _Target(best[j]))
                + domain_hits(self.kernel, sorted(dom), depth, lambda c: _Target(dom[c])))

    def _transition_hits(self, xstats: list[dict[str, Any]], depth: int) -> list[Found]:
        props = self.props
        best: dict[int, tuple[int, int, int]] = {}
        for s in xstats:
            for j, hit in s["tp"].items():
                if j not in best or hit[:2] < best[j][:2]:
                    best[j] = hit
        dom: dict[int, tuple[int, int]] = {}
        for s in xstats:
            for c, hit in s.get("dom_tp", {}).items():
                if c not in dom or hit < dom[c]:
                    dom[c] = hit
        # a domain error's step has no successor: its path ends with no fingerprint
        return (property_hits(props.transition, props.trans_active, sorted(best), depth + 1,
                              lambda j: _Target(best[j][0], (best[j][1], best[j][2])))
                + domain_hits(self.kernel, sorted(dom), depth + 1,
                              lambda c: _Target(dom[c][0], (dom[c][1], None))))

    def paths(self, targets: dict[str, _Target]) -> dict[str, list[tuple[int, int | None]]]:
        """Walk every target back to an initial state, one level per round (one lookup in the
        owning partitions per round, all targets together)."""
        steps: dict[str, list[tuple[int, int | None]]] = {name: [] for name in targets}
        cur = {name: t.fp for name, t in targets.items()}
        while True:
            need = {f for f in cur.values() if f not in self.fp0}
            if not need:
                break
            found = self.backend.lookup(need)
            for name, f in cur.items():
                if f in self.fp0:
                    continue
                if f not in found:
                    raise RuntimeError(f"trace of {name}: state {f:#x} is in no partition's "
                                       "store (a lost partition?)")
                parent, act = found[f]
                steps[name].append((act, f))
                cur[name] = parent
        out: dict[str, list[tuple[int, int | None]]] = {}
        for name, t in targets.items():
            path = list(reversed(steps[name]))
            if t.tail is not None:
                path.append(t.tail)
            out[name] = path
        return out
