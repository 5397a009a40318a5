"""The local engine: breadth-first search over the compiled kernel, one level at a time.

Per level: the frontier (rows in fingerprint order, in buckets: ``spill.py``) is expanded
bucket by bucket, in chunks, by the kernel, which fingerprints every successor and inserts it
into the visited table; the new states go to the next level's buckets, which are then sorted
by fingerprint and checked against the state predicates, and become the next frontier. The
level's parent records go to a file in the run's work folder. Processing parents in
fingerprint order and actions in instance order makes the first parent found for a state the
least (parent fingerprint, action) pair: the canonical parent every engine reports. With
several workers (``parallel.py``) each chunk is expanded by all of them and the visited table
is split between them by fingerprint; the first occurrence of each state, hence every count,
level and trace, is the same as with one.

What stays in memory is the visited table (8 bytes a slot, 70% to 87.5% full) and one bucket
of the frontier and of the next level at a time (once a level outgrows ``spill.SPILL_BYTES``)."""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from hwcheck.checker.engines import checkpoint
from hwcheck.checker.engines.expand import CHUNK, Successors, expand
from hwcheck.checker.engines.hits import domain_hits, hit, last_step, property_hits
from hwcheck.checker.engines.options import LocalSettings, Options, PropertySet
from hwcheck.checker.engines.parallel import Deliver, Expanded, PartitionedTable, Workers
from hwcheck.checker.engines.phases import Phases
from hwcheck.checker.engines.spill import (
    Frontier,
    LevelStore,
    NextLevel,
    StoredLevel,
    bucket_count,
    record_dtype,
)
from hwcheck.checker.engines.visited import ExactTable, Level, VisitedTable, path_to
from hwcheck.checker.engines.workdir import WorkDir
from hwcheck.checker.search import faults
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
from hwcheck.checker.semantics.signatures import CheckArgs
from hwcheck.spec.verdicts import Kind

PARALLEL_CHECK = 1 << 14  # rows: a level this large is checked by every worker


@dataclass
class _Checked:
    """A bucket's state checks done on a worker: the properties active then, each one's first
    hit (-1: none) and each domain error's first row."""

    active: np.ndarray
    hits: np.ndarray
    dom_row: np.ndarray


@dataclass
class _Boundary:
    """The search at the start of the level being expanded, kept while a checkpoint is
    written (``--checkpoint``): what a level stopped in the middle goes back to. The visited
    set then is every stored level's fingerprints; the frontier is read back from its buckets
    (kept until the level's end)."""

    levels: int
    front: Frontier | None  # None once the frontier is let go of
    distinct: int
    generated: int
    depth: int
    hits: dict[str, Any]
    checked: list[tuple[str, str]]
    state_active: np.ndarray
    trans_active: np.ndarray
    seconds: float


class LocalEngine(LevelSource):
    """The local engine: a level source for the search driver (``checker.search.driver``)."""

    name = "local"
    paths_at_once = True  # a hit's path is walked back through the levels when it is found

    def __init__(self, kernel: Kernel, opts: Options, workers: int = 1,
                 local: LocalSettings | None = None) -> None:
        self.kernel = kernel
        self.opts = opts
        self.local = local if local is not None else LocalSettings()
        self.props = PropertySet(kernel, opts)
        self.act_dtype = kernel.act_dtype
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = 1 if self.local.exact else workers  # --exact runs on one worker
        self.pool: Workers | None = None
        self.phases = Phases.from_environment()  # where a level's time goes (off unless asked)
        self.ckpt: checkpoint.Checkpointer | None = None
        self.boundary: _Boundary | None = None  # while a level is expanded, with --checkpoint
        self.cut = False  # the last level was stopped in the middle: no consistent point now
        self.final = False  # the checkpoint of a stop is written

    def run(self) -> Exploration:
        return search(self, self.opts.stop_rule(), self.opts.report)

    # -- the level source ------------------------------------------------------------------

    def exploration(self) -> Exploration:
        return Exploration(self.name, checked=self.props.checked, exact=self.local.exact,
                           symmetry=self.kernel.symmetric)

    def prepare(self) -> None:
        part = "exact" if self.local.exact else "local" if self.workers == 1 else "parallel"
        self.kernel.warm(part, say=self.opts.report)  # before the clock starts
        if self.workers > 1:
            self.pool = Workers(self.kernel, self.workers, self.phases)
        self.base_rss = current_rss_bytes()
        self.work = WorkDir(self.local.workdir)
        self.rec = record_dtype(self.kernel.stride, self.kernel.dtype, self.act_dtype)
        self.store = LevelStore(self.work, self.rec)
        self.front_peak = 0
        # seconds a new state cost the last level's end (read back, sorted, checked, written
        # as the frontier): a time limit keeps that much back for the level under way
        self.end_per_state = 0.0
        self.front: Frontier | None = None
        self.table: Any = None  # the visited set (engines/visited.py), made by ``start``
        self.levels: list[Level | StoredLevel] = []
        # action coverage: per instance, the expanded states that enable it and the new states
        # it was the first to reach (None after a resume: the counts would be partial)
        ninst = max(self.kernel.ninst, 1)
        self.cov_enabled: np.ndarray | None = np.zeros(ninst, np.int64)
        self.cov_new: np.ndarray | None = np.zeros(ninst, np.int64)

    def _new_table(self, fps: np.ndarray | None = None) -> PartitionedTable | VisitedTable:
        """The visited set: one table, or one per worker; holding ``fps`` (a checkpoint's)."""
        if fps is None:
            return PartitionedTable(self.workers) if self.workers > 1 else VisitedTable()
        return PartitionedTable.of(self.workers, fps) if self.workers > 1 else \
            VisitedTable.of(fps)

    def start(self, ex: Exploration, progress: Progress) -> LevelResult:
        k, local, props = self.kernel, self.local, self.props
        self.ckpt, ident = None, checkpoint.identity(k)
        nt = max(len(props.transition), 1)
        self.tp_row = np.full(nt, -1, np.int64)
        self.tp_inst = np.full(nt, -1, np.int64)
        if local.resume is not None:
            snap, self.ckpt = checkpoint.load(local.resume, ident, self.act_dtype)
            self.ckpt.every = local.checkpoint_every
            self.table = self._new_table(snap.fingerprints)
            self.levels, self.front = snap.levels, Frontier.of(self.work, snap.front)
            ex.distinct, ex.generated, ex.depth = snap.distinct, snap.generated, snap.depth
            ex.hits, ex.checked = snap.hits, snap.checked
            props.state_active[:], props.trans_active[:] = snap.state_active, snap.trans_active
            self._select(ex)
            progress.offset = snap.seconds
            self.cov_enabled = self.cov_new = None
            return LevelResult()
        if local.checkpoint is not None:
            self.ckpt = checkpoint.Checkpointer(local.checkpoint, local.checkpoint_every, ident)
        init = k.starts  # canonical under symmetry
        fps = np.array([k.fingerprint(r) for r in init], np.uint64)
        if local.exact:  # each state once
            exact = self.table = ExactTable(k.stride, k.dtype)
            keep = [i for i, (fp, row) in enumerate(zip(fps, init)) if exact.add_row(int(fp), row)]
        else:
            table = self.table = self._new_table()
            keep = [i for i, fp in enumerate(fps) if table.add(int(fp))]
        init, fps = init[keep], fps[keep]
        n = len(init)
        self.levels = [Level(fps, np.full(n, -1, np.int32), np.zeros(n, self.act_dtype))]
        self.front = Frontier.of(self.work, init)
        return LevelResult(new=n, found=self._found(
            self._state_hits(init, 0, phase="initial states: checks"), 0))

    def _select(self, ex: Exploration) -> None:
        """``--property`` given to a resumed run: it checks those of the checkpoint's
        properties it names, and no others; one the checkpoint's run did not check is refused
        (the levels explored without it cannot be judged again)."""
        if self.opts.properties is None:
            return  # what the checkpoint's run checked
        want = set(self.opts.properties)
        had = [n for n, k in ex.checked if k not in (Kind.REACHABLE, Kind.DOMAIN)]
        missing = [n for n in self.opts.properties if n not in had]
        if missing:
            raise checkpoint.CheckpointError(
                f"--resume {self.local.resume}: the checkpoint's run did not check "
                f"{', '.join(missing)} (it checked {', '.join(had) or 'no property'}); resume "
                "with some of those, or without --property, or start a new run")

        def kept(name: str, kind: str) -> bool:
            return kind in (Kind.REACHABLE, Kind.DOMAIN) or name in want

        props = self.props
        ex.checked = [(n, k) for n, k in ex.checked if kept(n, k)]
        ex.hits = {n: h for n, h in ex.hits.items() if kept(n, h.kind)}
        for j, (n, _, k) in enumerate(props.state):
            props.state_active[j] &= kept(n, k)
        for j, (n, _, k) in enumerate(props.transition):
            props.trans_active[j] &= kept(n, k)

    def frontier(self) -> int:
        return len(self.front) if self.front is not None else 0

    def _snapshot(self, ex: Exploration) -> checkpoint.Snapshot:
        """The search now, at a level boundary."""
        props, front = self.props, self.front
        assert front is not None
        return checkpoint.Snapshot(
            self.table.fingerprints(), self.levels, front.rows(), ex.distinct, ex.generated,
            ex.depth, ex.hits, ex.checked, props.state_active, props.trans_active, ex.seconds)

    def _boundary_snapshot(self) -> checkpoint.Snapshot | None:
        """The search at the start of the level under way (None once its frontier is gone):
        the visited set is every earlier level's fingerprints, whatever the level's expansion
        had added to the table when it stopped."""
        b = self.boundary
        if b is None or b.front is None:
            return None
        levels = self.levels[:b.levels]
        fps = np.concatenate([np.asarray(lv.fps, np.uint64) for lv in levels])
        return checkpoint.Snapshot(fps, levels, b.front.rows(), b.distinct, b.generated,
                                   b.depth, b.hits, b.checked, b.state_active, b.trans_active,
                                   b.seconds)

    def _write_final(self, snap: checkpoint.Snapshot | None) -> None:
        """The checkpoint of a stop, written whole (a second Ctrl-C or SIGTERM is taken after
        it)."""
        if self.ckpt is None or snap is None or self.final:
            return
        with signals_held():
            self.ckpt.write(snap)
            self.final = True

    def on_stop(self, ex: Exploration) -> None:
        """A stop with ``--checkpoint``: a final checkpoint at the last consistent point (the
        start of a level stopped in the middle, else where the search is), so that ``--resume``
        goes on from there to the counts and verdicts of a run never stopped."""
        if self.ckpt is None or self.final:
            return
        if self.boundary is not None:  # stopped inside a level
            self._write_final(self._boundary_snapshot())
        elif not self.cut and self.front is not None:
            self._write_final(self._snapshot(ex))

    def expand(self, depth: int, ex: Exploration, progress: Progress,
               rule: StopRule) -> LevelResult:
        with self.phases.span("level"):
            return self._level(depth, ex, progress, rule)

    def _level(self, depth: int, ex: Exploration, progress: Progress,
               rule: StopRule) -> LevelResult:
        props, front = self.props, self.front
        assert front is not None  # the driver expands only a source with a frontier
        if self.ckpt is not None and self.ckpt.due():  # a level boundary: a consistent point
            self.ckpt.write(self._snapshot(ex))
        if self.ckpt is not None:
            self.boundary = _Boundary(
                len(self.levels), front, ex.distinct, ex.generated, ex.depth, dict(ex.hits),
                list(ex.checked), props.state_active.copy(), props.trans_active.copy(),
                ex.seconds)
        nxt = NextLevel(self.work, bucket_count(2 * len(front), self.rec.itemsize, self.workers),
                        self.rec, self.pool)
        out = LevelResult()
        with self.phases.span("expand"):
            out.stopped = self._expand(front, nxt, out, ex, progress, rule, depth)
        self.cut = bool(out.stopped)
        try:
            with signals_held():  # the level ends whole; a signal is taken after it
                if self.cut:  # the level's start is the last consistent point
                    self._write_final(self._boundary_snapshot())
                front.drop()
                if self.boundary is not None:
                    self.boundary.front = None
                hits: list[Found] = []
                started = time.perf_counter()
                with self.phases.span("level end"):
                    level, self.front = nxt.finish(
                        self.store,
                        lambda rows, off, found: hits.extend(self._state_hits(rows, off, found)),
                        None if self.pool is None
                        else self.phases.task("level end: checks", self._check_rows))
                self.front_peak = max(self.front_peak, nxt.buckets.nbytes)
                if len(level):
                    if not self.cut:  # (a level cut short ends sooner than a whole one)
                        self.end_per_state = self._end_per_state(time.perf_counter() - started,
                                                                 len(level))
                    self.levels.append(level)
                    out.new = len(level)
                    out.found += self._found(hits, depth + 1)
                self.boundary = None
        except KeyboardInterrupt as e:  # noted while the level ended: it ended whole
            out.stopped = out.stopped or interrupt_reason(e)
            out.interrupted = True
        return out

    @staticmethod
    def _end_per_state(seconds: float, states: int) -> float:
        """What a level's end cost a new state: ``seconds`` for ``states``."""
        return seconds / states

    def paths(self, targets: dict[str, list[tuple[int, int | None]]]
              ) -> dict[str, list[tuple[int, int | None]]]:
        return dict(targets)  # the local engine's targets are paths already

    def finish(self, ex: Exploration) -> None:
        # the level files stay readable through the store's open files (traces read them); the
        # disk they take is given back when the levels are let go of
        self.work.close()
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self.front = None  # free the frontier before traces are built (out of memory)
        peak, rec, table = peak_rss_bytes(), self.rec, self.table
        ex.stats.update(
            workers=self.workers, peak_rss=peak, base_rss=self.base_rss,
            table_bytes=table.nbytes if table is not None else 0,
            level_bytes=self.store.count * (rec["fp"].itemsize + rec["par"].itemsize
                                            + rec["act"].itemsize),
            disk_bytes=self.work.peak_bytes,
            frontier_bytes=self.front_peak,
            bytes_per_state=peak / max(ex.distinct, 1),
            explore_bytes_per_state=max(peak - self.base_rss, 0) / max(ex.distinct, 1))
        if self.phases.on:
            ex.stats["phases"] = self.phases.stats()
            print(self.phases.table(), file=sys.stderr)
        if self.cov_enabled is not None and self.cov_new is not None:
            ex.stats["coverage"] = {"enabled": self.cov_enabled.tolist(),
                                    "new": self.cov_new.tolist()}

    # -- one level ---------------------------------------------------------------------------

    def _expand(self, front: Frontier, nxt: NextLevel, out: LevelResult, ex: Exploration,
                progress: Progress, rule: StopRule, depth: int) -> str:
        """Expand one level, bucket by bucket, into ``nxt``; returns why it stopped early
        ('' if it did not)."""
        stopped = ""
        total = len(front)
        tp_row, tp_inst, table = self.tp_row, self.tp_inst, self.table
        _, dom_row, dom_inst = self.kernel.error_arrays()
        chunk = faults.chunk(CHUNK)
        for off, rows in front.take(keep=self.ckpt is not None, pool=self.pool):
            if not rows.shape[0]:
                continue

            def on_chunk(next_row: int, written: int, off: int = off) -> bool:
                nonlocal stopped
                faults.at("terminate-mid", depth)  # tests: a SIGTERM in the middle of a level
                found = ex.distinct + nxt.count + written
                progress.tick(depth, found, total - off - next_row)
                # the time limit asked with the level's end counted in: the states found so
                # far in this level cost it what the last level's cost a state
                ending = self.end_per_state * (nxt.count + written)
                stopped = rule.limit(found, progress.elapsed() + ending)
                return bool(stopped)

            new: Expanded | Successors
            if self.pool is not None:
                new = self.pool.expand(rows, table, self.props.trans_active, tp_row, tp_inst,
                                       dom_row, dom_inst, on_chunk, chunk=chunk,
                                       cov=self.cov_enabled,
                                       deliver=self._deliver(nxt, off) if nxt.owned(self.workers)
                                       else None)
            else:
                new = expand(self.kernel, rows, table, self.props.trans_active, tp_row, tp_inst,
                             dom_row, dom_inst, on_chunk, chunk=chunk, cov=self.cov_enabled)
            with self.phases.span("expand: spill into buckets"):
                nxt.add(new.rows, new.fps, new.parents + np.int32(off), new.acts)
            if self.cov_new is not None and new.acts.size:
                self.cov_new += np.bincount(new.acts, minlength=self.cov_new.size)
            out.generated += new.generated
            out.found += self._domain_hits(dom_row, dom_inst, depth, off)
            out.found += self._transition_hits(rows, off, depth, tp_row, tp_inst)
            if new.interrupted is not None:
                stopped = interrupt_reason(new.interrupted)
                out.interrupted = True
            if stopped:
                break
        return stopped

    def _deliver(self, nxt: NextLevel, off: int) -> Deliver:
        """What takes each owner's new states of the frontier bucket at ``off`` on its
        worker's thread: into its own buckets of ``nxt``, its actions into the coverage."""
        lock, cov, nw = threading.Lock(), self.cov_new, self.workers

        def take(o: int, recs: np.ndarray, cuts: np.ndarray) -> None:
            nxt.add_own(o, nw, recs, cuts)
            if cov is not None and recs.size:
                counts = np.bincount(recs["act"], minlength=cov.size)
                with lock:
                    np.add(cov, counts, out=cov)

        return Deliver(len(nxt.buckets), off, take)

    def _state_hits(self, rows: np.ndarray, off: int, found: object = None,
                    phase: str = "level end: checks") -> list[Found]:
        """The state properties ``rows`` (at ``off`` in their level) are the first to hit,
        their targets positions in the level (``_found`` makes them paths); each is then no
        longer checked. A property that reads outside a variable's shape is a domain hit.
        ``found``: what ``_check_rows(rows)`` gave on a worker, used if no property it
        checked has been hit since (else the rows are checked again, here)."""
        props = self.props
        if not props.state or not props.state_active.any():
            return []
        if isinstance(found, _Checked) and np.array_equal(found.active, props.state_active):
            hits, dom_row = found.hits, found.dom_row
        else:
            hits = np.full(len(props.state), -1, np.int64)
            err, dom_row, _ = self.kernel.error_arrays()
            dom_row[:] = -1
            with self.phases.span(phase):  # the initial states' own: they end no level
                if self.pool is not None and rows.shape[0] >= PARALLEL_CHECK:
                    self.pool.check_states(rows, props.state_active, hits, err, dom_row)
                else:
                    self.kernel.mod.check_states(*CheckArgs(rows=rows, n=rows.shape[0],
                                                            active=props.state_active,
                                                            hits=hits, err=err, dom_row=dom_row))
        return (domain_hits(self.kernel, hit(dom_row), 0, lambda c: off + int(dom_row[c]))
                + property_hits(props.state, props.state_active, hit(hits), 0,
                                lambda j: off + int(hits[j])))

    def _check_rows(self, rows: np.ndarray) -> _Checked | None:
        """The kernel's state checks over ``rows`` with the properties active now, on the
        calling thread (a worker's, at a level's end): ``_state_hits`` takes them."""
        props = self.props
        if not props.state or not props.state_active.any():
            return None
        active = props.state_active.copy()
        hits = np.full(len(props.state), -1, np.int64)
        err, dom_row, _ = self.kernel.error_arrays()
        dom_row[:] = -1
        self.kernel.mod.check_states(*CheckArgs(rows=rows, n=rows.shape[0], active=active,
                                                hits=hits, err=err, dom_row=dom_row))
        return _Checked(active, hits, dom_row)

    def _found(self, hits: list[Found], depth: int) -> list[Found]:
        """The state hits of level ``depth`` (their targets positions) with their paths."""
        return [dataclasses.replace(f, length=depth, target=path_to(self.levels, depth, f.target))
                for f in hits]

    def _domain_hits(self, dom_row: np.ndarray, dom_inst: np.ndarray, depth: int,
                     off: int) -> list[Found]:
        """Steps that left the declared domains: a hit each, whose path ends with the step
        (it has no successor, hence no fingerprint)."""
        out = domain_hits(self.kernel, hit(dom_row), depth + 1, lambda c: path_to(
            self.levels, depth, off + int(dom_row[c])) + [(int(dom_inst[c]), None)])
        dom_row[:] = -1  # reported: the next bucket's rows are at another offset
        return out

    def _transition_hits(self, rows: np.ndarray, off: int, depth: int, tp_row: np.ndarray,
                         tp_inst: np.ndarray) -> list[Found]:
        """Transition properties first hit in ``rows`` (at ``off`` in the level)."""
        return property_hits(self.props.transition, self.props.trans_active, hit(tp_row),
                             depth + 1, lambda j: path_to(self.levels, depth, off + int(tp_row[j]))
                             + [last_step(self.kernel, int(tp_inst[j]), rows[int(tp_row[j])])])
