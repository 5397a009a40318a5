"""`hwcheck simulate`: random walks beyond exhaustive sizes, reproducible, on every core.

Walks are numbered from 0. Walk ``w`` of seed ``s`` is always the same walk (the simulation
kernel seeds its generator with both), whichever thread runs it and however many run, so a
violation is named by its seed and walk and can be run again alone (``--first-walk w --walks
1``). Walks run in batches, a batch spread over the worker threads (the kernel releases the
GIL); between batches the run asks its limits (``--walks``, ``--max-seconds``) and stops at the
first batch with a violation, which is then the violation of least walk number among all walks
up to it: the same answer on any number of workers.

A violating walk is minimised before it is shown: steps are dropped, one at a time, as long as
the rest still replays and still violates the same property (the violation may then come
earlier, and the walk is cut there), until no step can go. The result is replayed through the
interpreter like every trace (``traces/trace.py``), so a simulation's trace is confirmed the
same way as an exhaustive search's; it is short, not necessarily shortest.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hwcheck.checker.engines.pool import Pool
from hwcheck.checker.search.exploration import interrupt_reason
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.semantics.signatures import CheckArgs
from hwcheck.checker.sim.kernel import SimKernel
from hwcheck.checker.traces.trace import Trace, from_path
from hwcheck.spec.lang import Spec
from hwcheck.spec.verdicts import Verdict

BATCH = 64  # walks per worker per batch: bounds the latency of limits and Ctrl-C
SEEN_BITS = 22  # the visit-counting table of each worker: 4M fingerprints (48 MiB)


@dataclass
class SimOptions:
    seed: int = 0
    walks: int | None = None  # None: until --max-seconds
    depth: int = 100
    max_seconds: float | None = 60.0
    workers: int = 1
    swarm: bool = False
    first_walk: int = 0
    properties: tuple[str, ...] | None = None  # invariants / action properties; None: all
    minimise: bool = True


@dataclass
class Found:
    """A violation: the walk that found it and the (minimised) path."""

    name: str
    kind: str  # invariant | action | domain
    walk: int
    steps: int  # of the walk, before minimising
    path: list[int]  # instances, minimised
    trace: Trace | None = None
    start: int = 0  # the walk's initial state (its index in Init's order)


@dataclass
class SimResult:
    spec: Spec
    opts: SimOptions
    walks: int = 0
    steps: int = 0
    seconds: float = 0.0
    depth_mean: float = 0.0
    depth_sd: float = 0.0
    deadlocks: int = 0  # walks that ended in a state without successors before the depth
    distinct: int = 0  # distinct states seen (fingerprints)
    estimate: float = 0.0  # Chao1 estimate of the reachable states (a lower bound)
    saturated: bool = False  # the visit tables filled up: distinct is then a lower bound
    taken: dict[str, int] = field(default_factory=dict)  # per action
    enabled: dict[str, int] = field(default_factory=dict)
    found: Found | None = None
    stop_reason: str = ""

    @property
    def verdict(self) -> str:
        """``violated`` when a walk found one; never ``holds``: simulation proves nothing."""
        return Verdict.VIOLATED if self.found is not None else Verdict.UNKNOWN

    @property
    def never_taken(self) -> list[str]:
        return [a for a, n in self.taken.items() if n == 0]

    def as_json(self) -> dict[str, Any]:
        f = self.found
        return {
            "command": "simulate", "verdict": self.verdict,
            "protocol": self.spec.source or self.spec.name, "params": dict(self.spec.params),
            "seed": self.opts.seed, "swarm": self.opts.swarm, "depth": self.opts.depth,
            "walks": self.walks, "steps": self.steps, "seconds": round(self.seconds, 3),
            "depth_mean": round(self.depth_mean, 2), "depth_sd": round(self.depth_sd, 2),
            "deadlocks": self.deadlocks, "distinct_seen": self.distinct,
            "distinct_estimate": round(self.estimate), "saturated": self.saturated,
            "actions": {a: {"taken": self.taken[a], "enabled": self.enabled[a]}
                        for a in self.taken},
            "never_taken": self.never_taken, "stop_reason": self.stop_reason,
            "violations": [] if f is None else [{
                "property": f.name, "kind": f.kind, "walk": f.walk, "walk_steps": f.steps,
                "length": len(f.path), "trace": None}],
        }


def simulate(spec: Spec, opts: SimOptions,
             report: Callable[[str], None] | None = None) -> SimResult:
    """Random walks of ``spec`` (see the module's doc); Ctrl-C and SIGTERM stop after the
    batch under way, keeping what was found."""
    kernel = Kernel(spec)
    sk = SimKernel(kernel)
    mod = sk.mod
    props = kernel.props
    want = None if opts.properties is None else set(opts.properties)
    sp_active = np.array([k == "invariant" and (want is None or n in want)
                          for n, _, k in props.state] or [False], np.bool_)
    tp_active = np.array([k == "action" and (want is None or n in want)
                          for n, _, k in props.transition] or [False], np.bool_)
    insts = kernel.instances
    actions = [a.name for a in spec.actions]
    action_of = np.array([actions.index(i.action.name) for i in insts] or [0], np.int64)
    weights = np.ones(max(len(insts), 1), np.float64)
    starts = np.ascontiguousarray(kernel.initials)
    W = max(1, opts.workers)
    depth = opts.depth
    tables = [(np.zeros(1 << SEEN_BITS, np.uint64), np.zeros(1 << SEEN_BITS, np.uint32))
              for _ in range(W)]
    fill_max = int((1 << SEEN_BITS) * 0.7)
    fills = [0] * W
    taken = np.zeros((W, max(len(insts), 1)), np.int64)
    enabled = np.zeros((W, max(len(insts), 1)), np.int64)
    res = SimResult(spec, opts)
    lens_sum = lens_sq = 0.0

    def batch(w0: int, count: int, tid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        path = np.zeros((count, depth), np.int64)
        out = np.zeros(7, np.int64)
        lengths = np.zeros(count, np.int64)
        keys, counts = tables[tid]
        fills[tid] = mod.walks(starts, w0 + tid, count, W, opts.seed, depth, weights, opts.swarm,
                               action_of, len(actions), sp_active, tp_active, taken[tid],
                               enabled[tid], keys, counts, fill_max - fills[tid], path, out,
                               lengths) + fills[tid]
        return out, path, lengths

    kernel.warm("step")
    batch(opts.first_walk, 0, 0)  # compile (or load) the walks before the clock starts
    t0 = time.perf_counter()
    next_walk = opts.first_walk
    last_report = t0
    hit = _initial_hit(kernel, starts, sp_active, opts.first_walk)
    if hit is not None:
        res.stop_reason = "an initial state violates an invariant"
    pool = Pool(W, "hwcheck-sim") if W > 1 else None
    try:
        while hit is None:
            n_this = BATCH * W
            if opts.walks is not None:
                left = opts.first_walk + opts.walks - next_walk
                if left <= 0:
                    res.stop_reason = f"{opts.walks:,} walks done"
                    break
                n_this = min(n_this, left)
            # walks next_walk .. next_walk + n_this - 1; thread tid takes every W-th from tid
            jobs = [(next_walk, -(-(n_this - tid) // W), tid) for tid in range(min(W, n_this))]
            outs = pool.map(batch, jobs) if pool else [batch(*jobs[0])]
            done = n_this
            for (out, path, lengths), (_, cnt, tid) in zip(outs, jobs, strict=True):
                ln = lengths[:cnt] if out[0] < 0 else lengths[:(out[0] - next_walk - tid) // W + 1]
                res.steps += int(out[4])
                res.walks += int(ln.size)
                lens_sum += float(ln.sum())
                lens_sq += float((ln.astype(np.float64) ** 2).sum())
                res.deadlocks += int((ln < depth).sum()) - (1 if out[0] >= 0 else 0)
                if out[0] >= 0 and (hit is None or out[0] < hit[0]):
                    c = (int(out[0]) - next_walk - tid) // W
                    hit = (int(out[0]), int(out[1]), int(out[2]), int(out[3]),
                           [int(x) for x in path[c, :out[1]]], int(out[6]))
            next_walk += done
            if hit is not None:
                res.stop_reason = "a violation was found"
                break
            elapsed = time.perf_counter() - t0
            if opts.max_seconds is not None and elapsed >= opts.max_seconds:
                res.stop_reason = f"reached --max-seconds {opts.max_seconds:g}"
                break
            if report is not None and time.perf_counter() - last_report >= 2.0:
                last_report = time.perf_counter()
                report(f"walks {res.walks:,}  steps {res.steps:,}  "
                       f"{res.steps / max(elapsed, 1e-9):,.0f} steps/s")
    except (KeyboardInterrupt, MemoryError) as e:
        res.stop_reason = interrupt_reason(e)
    finally:
        if pool is not None:
            pool.close()
    res.seconds = time.perf_counter() - t0
    if res.walks:
        res.depth_mean = lens_sum / res.walks
        res.depth_sd = math.sqrt(max(lens_sq / res.walks - res.depth_mean ** 2, 0.0))
    _seen(res, tables, fills, fill_max)
    t_all, e_all = taken.sum(axis=0), enabled.sum(axis=0)
    for a in actions:
        sel = [i.index for i in insts if i.action.name == a]
        res.taken[a] = int(t_all[sel].sum())
        res.enabled[a] = int(e_all[sel].sum())
    if hit is not None:
        res.found = _found(spec, kernel, sk, hit, sp_active, tp_active, opts.minimise)
    return res


def _seen(res: SimResult, tables: list[tuple[np.ndarray, np.ndarray]], fills: list[int],
          fill_max: int) -> None:
    """Distinct states over every worker's table, and the Chao1 estimate of the total from the
    states seen exactly once and exactly twice."""
    keys = np.concatenate([k[k != 0] for k, _ in tables])
    counts = np.concatenate([c[k != 0] for k, c in tables]).astype(np.int64)
    if keys.size == 0:
        return
    uniq, inv = np.unique(keys, return_inverse=True)
    total = np.bincount(inv, weights=counts).astype(np.int64)
    res.distinct = int(uniq.size)
    f1, f2 = int((total == 1).sum()), int((total == 2).sum())
    res.estimate = res.distinct + (f1 * f1 / (2 * f2) if f2 else f1 * (f1 - 1) / 2)
    res.saturated = any(f >= fill_max for f in fills)


def _initial_hit(kernel: Kernel, starts: np.ndarray, sp_active: np.ndarray,
                 walk: int) -> tuple[int, int, int, int, list[int], int] | None:
    """The first active invariant an initial state violates, as a hit of no steps (walks check
    the states they reach; the initial states are checked here, once)."""
    props = kernel.props
    if not props.state:
        return None
    hits = np.full(len(props.state), -1, np.int64)
    err, dom_row, _ = kernel.error_arrays()
    kernel.mod.check_states(*CheckArgs(rows=starts, n=starts.shape[0],
                                       active=sp_active.copy(), hits=hits, err=err,
                                       dom_row=dom_row))
    found = [(int(hits[j]), int(j)) for j in np.flatnonzero(hits >= 0)]
    if not found:
        return None
    row, j = min(found)
    return walk, 0, 0, j, [], row


def _found(spec: Spec, kernel: Kernel, sk: SimKernel,
           hit: tuple[int, int, int, int, list[int], int], sp_active: np.ndarray,
           tp_active: np.ndarray, minimise: bool) -> Found:
    walk, steps, kind, j, path, start = hit
    props = kernel.props
    if kind == 2:
        name, what = kernel.domain_errors.name(j), "domain"
    elif kind == 0:
        name, what = props.state[j][0], "invariant"
    else:
        name, what = props.transition[j][0], "action"
    if minimise and what != "domain":
        sp = np.zeros_like(sp_active)
        tp = np.zeros_like(tp_active)
        (sp if kind == 0 else tp)[j] = True
        path = _minimised(sk, kernel.initials[start], path, sp, tp)
    return Found(name, what, walk, steps, path, start=start)


def _minimised(sk: SimKernel, start: np.ndarray, path: list[int], sp: np.ndarray,
               tp: np.ndarray) -> list[int]:
    """Drop steps while the rest replays and still violates (cut at its first violation):
    one step at a time, then two at once (a crash and its restart, say), until neither helps."""
    def violates(cand: np.ndarray) -> int:
        return sk.mod.first_violation(start, cand, cand.size, sp, tp) if cand.size else -1

    arr = np.array(path, np.int64)
    first = violates(arr)
    arr = arr[:first] if first > 0 else arr
    changed = True
    while changed:
        changed = False
        i = 0
        while i < arr.size:
            at = violates(np.delete(arr, i))
            if at > 0:
                arr, changed = np.delete(arr, i)[:at], True
            else:
                i += 1
        for i in range(arr.size):
            for j in range(i + 1, arr.size):
                cand = np.delete(arr, [i, j])
                at = violates(cand)
                if at > 0:
                    arr, changed = cand[:at], True
                    break
            if changed:
                break
    return [int(x) for x in arr]


def trace_of(spec: Spec, found: Found) -> Trace:
    """The violating walk as a trace, replayed and confirmed by the interpreter."""
    interp = Interpreter(spec)
    steps: list[tuple[int, int | None]] = [(i, None) for i in found.path]
    return from_path(spec, interp, found.name, found.kind, "simulate", steps, first=found.start)
