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

import numpy as np

from hwcheck.checker.engines.exploration import (Exploration, Hit, Progress, current_rss_bytes,
                                                 interrupt_reason, peak_rss_bytes)
from hwcheck.checker.engines import checkpoint
from hwcheck.checker.engines.expand import expand
from hwcheck.checker.engines.options import Options, PropertySet
from hwcheck.checker.engines.parallel import PartitionedTable, Workers
from hwcheck.checker.engines.spill import (Frontier, LevelStore, NextLevel, WorkDir,
                                           bucket_count, record_dtype)
from hwcheck.checker.engines.visited import ExactTable, Level, VisitedTable, path_to
from hwcheck.checker.semantics.kernel import Kernel


PARALLEL_CHECK = 1 << 14  # rows: a level this large is checked by every worker


class LocalEngine:
    name = "local"

    def __init__(self, kernel: Kernel, opts: Options, workers: int = 1):
        self.kernel = kernel
        self.opts = opts
        self.props = PropertySet(kernel, opts)
        self.act_dtype = kernel.act_dtype
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = 1 if opts.exact else workers  # --exact runs on one worker
        self.pool: Workers | None = None

    def run(self) -> Exploration:
        part = ("exact" if self.opts.exact else "local" if self.workers == 1
                else f"parallel-{self.workers}")
        self.kernel.warm(part, say=self.opts.report)  # before the clock starts
        if self.workers > 1:
            self.pool = Workers(self.kernel, self.workers)
        try:
            return self._run()
        finally:
            if self.pool is not None:
                self.pool.close()
                self.pool = None

    def _new_table(self, fps: np.ndarray | None = None):
        """The visited set: one table, or one per worker; holding ``fps`` (a checkpoint's)."""
        if fps is None:
            return PartitionedTable(self.workers) if self.workers > 1 else VisitedTable()
        return PartitionedTable.of(self.workers, fps) if self.workers > 1 else \
            VisitedTable.of(fps)

    def _run(self) -> Exploration:
        k, opts, props = self.kernel, self.opts, self.props
        progress = Progress(opts.report)
        ex = Exploration(self.name, checked=props.checked, exact=opts.exact,
                         symmetry=k.symmetric)
        base_rss = current_rss_bytes()
        work = WorkDir(opts.workdir)
        rec = record_dtype(k.stride, k.dtype, self.act_dtype)
        store = LevelStore(work, rec)

        ckpt, ident = None, checkpoint.identity(k)
        if opts.resume is not None:
            snap, ckpt = checkpoint.load(opts.resume, ident, self.act_dtype)
            ckpt.every = opts.checkpoint_every
            table = self._new_table(snap.fingerprints)
            levels, front = snap.levels, Frontier.of(work, snap.front)
            ex.distinct, ex.generated, ex.depth = snap.distinct, snap.generated, snap.depth
            ex.hits, ex.checked = snap.hits, snap.checked
            props.state_active[:], props.trans_active[:] = snap.state_active, snap.trans_active
            progress.offset = snap.seconds
            snap = None
        else:
            if opts.checkpoint is not None:
                ckpt = checkpoint.Checkpointer(opts.checkpoint, opts.checkpoint_every, ident)
            init = k.start.reshape(1, -1).copy()  # canonical under symmetry
            fp0 = k.fingerprint(init[0])
            if opts.exact:
                table = ExactTable(k.stride, k.dtype)
                table.add_row(fp0, init[0])
            else:
                table = self._new_table()
                table.add(fp0)
            levels = [Level(np.array([fp0], np.uint64), np.array([-1], np.int32),
                            np.zeros(1, self.act_dtype))]
            ex.distinct = 1
            self._record_state_hits(self._state_hits(init, 0), 0, levels, ex)
            front = Frontier.of(work, init)
        nt = max(len(props.transition), 1)
        tp_row = np.full(nt, -1, np.int64)
        tp_inst = np.full(nt, -1, np.int64)
        front_peak = 0
        try:
            while len(front):
                ex.seconds = progress.elapsed()
                if opts.should_stop(ex):
                    break
                if ckpt is not None and ckpt.due():  # a level boundary: a consistent point
                    ckpt.write(checkpoint.Snapshot(
                        table.fingerprints(), levels, front.rows(), ex.distinct, ex.generated,
                        ex.depth, ex.hits, ex.checked, props.state_active, props.trans_active,
                        ex.seconds))
                depth = len(levels) - 1
                nxt = NextLevel(work, bucket_count(2 * len(front), rec.itemsize), rec)
                stopped = self._expand(front, nxt, table, tp_row, tp_inst, ex, progress,
                                       depth, levels)
                front.drop()
                hits: list = []
                level, front = nxt.finish(
                    store, lambda rows, off: hits.extend(self._state_hits(rows, off)))
                front_peak = max(front_peak, nxt.buckets.nbytes)
                if len(level):
                    levels.append(level)
                    ex.distinct += len(level)
                    ex.depth = depth + 1
                    self._record_state_hits(hits, depth + 1, levels, ex)
                progress.tick(depth + 1, ex.distinct, len(level))
                if stopped:
                    ex.stop_reason = stopped
                    break
            else:
                ex.complete = True
        except (KeyboardInterrupt, MemoryError) as e:
            ex.complete = False
            ex.stop_reason = interrupt_reason(e)
        finally:
            # the level files stay readable through the store's open files (traces read
            # them); the disk they take is given back when the levels are let go of
            work.close()
        front = None  # free the frontier before traces are built (out of memory)
        ex.seconds = progress.elapsed()
        peak = peak_rss_bytes()
        ex.stats.update(
            workers=self.workers, peak_rss=peak, base_rss=base_rss, table_bytes=table.nbytes,
            level_bytes=store.count * (rec["fp"].itemsize + rec["par"].itemsize
                                       + rec["act"].itemsize),
            disk_bytes=work.peak_bytes,
            frontier_bytes=front_peak,
            bytes_per_state=peak / max(ex.distinct, 1),
            explore_bytes_per_state=max(peak - base_rss, 0) / max(ex.distinct, 1))
        self.levels = levels
        return ex

    def _expand(self, front: Frontier, nxt: NextLevel, table, tp_row, tp_inst,
                ex: Exploration, progress: Progress, depth: int, levels: list[Level]) -> str:
        """Expand one level, bucket by bucket, into ``nxt``; returns why it stopped early
        ('' if it did not)."""
        stopped = ""
        total = len(front)
        _, dom_row, dom_inst = self.kernel.error_arrays()
        for off, rows in front.take():
            if not rows.shape[0]:
                continue

            def on_chunk(next_row: int, written: int) -> bool:
                nonlocal stopped
                found = ex.distinct + nxt.count + written
                progress.tick(depth, found, total - off - next_row)
                stopped = self.opts.limit_reached(found, progress.elapsed())
                return bool(stopped)

            if self.pool is not None:
                new = self.pool.expand(rows, table, self.props.trans_active, tp_row, tp_inst,
                                       dom_row, dom_inst, on_chunk)
                nxt.add(new.rows, new.fps, new.parents + np.int32(off), new.acts)
            else:
                new = expand(self.kernel, rows, table, self.props.trans_active, tp_row, tp_inst,
                             dom_row, dom_inst, on_chunk)
                nxt.add(new.rows, new.fps, new.parents + np.int32(off), new.acts)
            ex.generated += new.generated
            self._domain_hits(dom_row, dom_inst, depth, levels, ex, off)
            self._transition_hits(rows, off, depth, levels, tp_row, tp_inst, ex)
            if new.interrupted is not None:
                stopped = interrupt_reason(new.interrupted)
            if stopped:
                break
        return stopped

    def _state_hits(self, rows, off: int) -> list[tuple[str, str, int]]:
        """The state properties ``rows`` (at ``off`` in their level) are the first to hit:
        (name, kind, position in the level); each is then no longer checked. A property that
        reads outside a variable's shape is a domain hit."""
        props, found = self.props, []
        if not props.state or not props.state_active.any():
            return found
        hits = np.full(len(props.state), -1, np.int64)
        err, dom_row, _ = self.kernel.error_arrays()
        dom_row[:] = -1
        if self.pool is not None and rows.shape[0] >= PARALLEL_CHECK:
            self.pool.check_states(rows, props.state_active, hits, err, dom_row)
        else:
            self.kernel.mod.check_states(rows, rows.shape[0], props.state_active, hits, err,
                                         dom_row)
        for c in np.flatnonzero(dom_row >= 0):
            found.append((self.kernel.domain_errors.name(int(c)), "domain",
                          off + int(dom_row[c])))
        for j in np.flatnonzero(hits >= 0):
            name, _, kind = props.state[j]
            found.append((name, kind, off + int(hits[j])))
            props.state_active[j] = False
        return found

    def _record_state_hits(self, found, depth: int, levels: list[Level],
                           ex: Exploration) -> None:
        for name, kind, index in found:
            if kind == "domain":
                if name in ex.hits:
                    continue
                ex.checked.append((name, "domain"))
            ex.hits[name] = Hit(name, kind, depth, path_to(levels, depth, index))

    def _domain_hits(self, dom_row, dom_inst, depth: int, levels, ex: Exploration,
                     off: int) -> None:
        """Steps that left the declared domains: a hit each, whose path ends with the step
        (it has no successor, hence no fingerprint)."""
        for c in np.flatnonzero(dom_row >= 0):
            name = self.kernel.domain_errors.name(int(c))
            if name not in ex.hits:
                path = path_to(levels, depth, off + int(dom_row[c])) + [(int(dom_inst[c]), None)]
                ex.hits[name] = Hit(name, "domain", depth + 1, path)
                ex.checked.append((name, "domain"))

    def _transition_hits(self, rows, off: int, depth: int, levels, tp_row, tp_inst, ex) -> None:
        """Transition properties first hit in ``rows`` (at ``off`` in the level)."""
        props = self.props
        for j in np.flatnonzero(tp_row >= 0):
            if not props.trans_active[j]:
                continue
            name, _, kind = props.transition[j]
            inst, row = int(tp_inst[j]), int(tp_row[j])
            succ = self.kernel.step(inst, rows[row])
            path = path_to(levels, depth, off + row) + [(inst, self.kernel.state_fingerprint(succ))]
            ex.hits[name] = Hit(name, kind, depth + 1, path)
            props.trans_active[j] = False

