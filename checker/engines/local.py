"""The local engine: breadth-first search over the compiled kernel, one level at a time.

Per level: the frontier (rows sorted by fingerprint) is expanded in chunks by the kernel, which
fingerprints every successor and inserts it into the visited table; the new states are sorted
by fingerprint, checked against the state predicates, and become the next frontier. Processing
parents in fingerprint order and actions in instance order makes the first parent found for a
state the least (parent fingerprint, action) pair: the canonical parent every engine reports.
With several workers (``parallel.py``) each chunk is expanded by all of them and the visited
table is split between them by fingerprint; the first occurrence of each state, hence every
count, level and trace, is the same as with one.
"""

from __future__ import annotations

import numpy as np

from hwcheck.checker.engines.exploration import (Exploration, Hit, Progress, current_rss_bytes,
                                                 interrupt_reason, peak_rss_bytes)
from hwcheck.checker.engines import checkpoint
from hwcheck.checker.engines.expand import expand
from hwcheck.checker.engines.options import Options, PropertySet
from hwcheck.checker.engines.parallel import PartitionedTable, Workers
from hwcheck.checker.engines.visited import ExactTable, Level, VisitedTable, path_to
from hwcheck.checker.semantics.kernel import Kernel


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
        part = "exact" if self.opts.exact else "local" if self.workers == 1 else "parallel"
        self.kernel.warm(part, say=self.opts.report)  # before the clock starts
        if self.workers > 1:
            self.pool = Workers(self.kernel, self.workers)
        try:
            return self._run()
        finally:
            if self.pool is not None:
                self.pool.close()
                self.pool = None

    def _new_table(self, tables: list[np.ndarray] | None = None, filled: int = 0):
        """The visited set: one table, or one per worker; from a checkpoint's ``tables``
        (``filled`` fingerprints), which may have been written with another number of
        workers."""
        if tables is None:
            return PartitionedTable(self.workers) if self.workers > 1 else VisitedTable()
        if self.workers == 1 and len(tables) == 1:  # as one worker wrote it
            table = VisitedTable(16)
            table.table, table.filled = tables[0], filled
            return table
        table = PartitionedTable.of(self.workers, tables)
        return table if self.workers > 1 else table.parts[0]

    def _run(self) -> Exploration:
        k, opts, props = self.kernel, self.opts, self.props
        progress = Progress(opts.report)
        ex = Exploration(self.name, checked=props.checked, exact=opts.exact,
                         symmetry=k.symmetric)
        base_rss = current_rss_bytes()

        ckpt, ident = None, checkpoint.identity(k)
        if opts.resume is not None:
            snap, ckpt = checkpoint.load(opts.resume, ident, self.act_dtype)
            ckpt.every = opts.checkpoint_every
            table = self._new_table(snap.tables, snap.filled)
            levels, front = snap.levels, snap.front
            ex.distinct, ex.generated, ex.depth = snap.distinct, snap.generated, snap.depth
            ex.hits, ex.checked = snap.hits, snap.checked
            props.state_active[:], props.trans_active[:] = snap.state_active, snap.trans_active
            progress.offset = snap.seconds
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
            self._check_states(init, 0, levels, ex)
            front = init
        nt = max(len(props.transition), 1)
        tp_row = np.full(nt, -1, np.int64)
        tp_inst = np.full(nt, -1, np.int64)
        try:
            while front.shape[0]:
                ex.seconds = progress.elapsed()
                if opts.should_stop(ex):
                    break
                if ckpt is not None and ckpt.due():  # a level boundary: a consistent point
                    ckpt.write(checkpoint.Snapshot(
                        _tables(table), table.filled, levels, front, ex.distinct, ex.generated,
                        ex.depth, ex.hits, ex.checked, props.state_active, props.trans_active,
                        ex.seconds))
                depth = len(levels) - 1
                rows, level, stopped = self._expand(front, table, tp_row, tp_inst, ex, progress,
                                                    depth, levels)
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
        except (KeyboardInterrupt, MemoryError) as e:
            ex.complete = False
            ex.stop_reason = interrupt_reason(e)
        front = rows = None  # free the frontier before traces are built (out of memory)
        ex.seconds = progress.elapsed()
        peak = peak_rss_bytes()
        ex.stats.update(
            workers=self.workers, peak_rss=peak, base_rss=base_rss, table_bytes=table.nbytes,
            level_bytes=sum(lv.nbytes for lv in levels),
            bytes_per_state=peak / max(ex.distinct, 1),
            explore_bytes_per_state=max(peak - base_rss, 0) / max(ex.distinct, 1))
        self.levels = levels
        return ex

    def _expand(self, front, table: VisitedTable, tp_row, tp_inst, ex: Exploration,
                progress: Progress, depth: int, levels: list[Level]):
        """Expand one level; returns (new rows sorted by fingerprint, their Level, stop reason)."""
        stopped = ""

        def on_chunk(next_row: int, written: int) -> bool:
            nonlocal stopped
            progress.tick(depth, ex.distinct + written, front.shape[0] - next_row)
            stopped = self.opts.limit_reached(ex.distinct + written, progress.elapsed())
            return bool(stopped)

        _, dom_row, dom_inst = self.kernel.error_arrays()
        if self.pool is not None:  # several workers: the new states come sorted
            new = self.pool.expand(front, table, self.props.trans_active, tp_row, tp_inst,
                                   dom_row, dom_inst, on_chunk)
            rows, level = new.rows, Level(new.fps, new.parents, new.acts)
        else:
            new = expand(self.kernel, front, table, self.props.trans_active, tp_row, tp_inst,
                         dom_row, dom_inst, on_chunk)
            order = np.argsort(new.fps, kind="stable")
            rows, level = new.rows[order], Level(new.fps[order], new.parents[order],
                                                 new.acts[order])
        self._domain_hits(dom_row, dom_inst, depth, levels, ex)
        if new.interrupted is not None:
            stopped = interrupt_reason(new.interrupted)
        ex.generated += new.generated
        return rows, level, stopped

    def _check_states(self, rows, depth: int, levels: list[Level], ex: Exploration) -> None:
        props = self.props
        if not props.state or not props.state_active.any():
            return
        hits = np.full(len(props.state), -1, np.int64)
        err, dom_row, _ = self.kernel.error_arrays()
        self.kernel.mod.check_states(rows, rows.shape[0], props.state_active, hits, err, dom_row)
        for c in np.flatnonzero(dom_row >= 0):  # a property read outside a variable's shape
            name = self.kernel.domain_errors.name(int(c))
            if name not in ex.hits:
                ex.hits[name] = Hit(name, "domain", depth, path_to(levels, depth,
                                                                   int(dom_row[c])))
                ex.checked.append((name, "domain"))
        for j in np.flatnonzero(hits >= 0):
            name, _, kind = props.state[j]
            ex.hits[name] = Hit(name, kind, depth, path_to(levels, depth, int(hits[j])))
            props.state_active[j] = False

    def _domain_hits(self, dom_row, dom_inst, depth: int, levels, ex: Exploration) -> None:
        """Steps that left the declared domains: a hit each, whose path ends with the step
        (it has no successor, hence no fingerprint)."""
        for c in np.flatnonzero(dom_row >= 0):
            name = self.kernel.domain_errors.name(int(c))
            if name not in ex.hits:
                path = path_to(levels, depth, int(dom_row[c])) + [(int(dom_inst[c]), None)]
                ex.hits[name] = Hit(name, "domain", depth + 1, path)
                ex.checked.append((name, "domain"))

    def _transition_hits(self, front, depth: int, levels, tp_row, tp_inst, ex) -> None:
        props = self.props
        for j in np.flatnonzero(tp_row >= 0):
            if not props.trans_active[j]:
                continue
            name, _, kind = props.transition[j]
            inst, row = int(tp_inst[j]), int(tp_row[j])
            succ = self.kernel.step(inst, front[row])
            path = path_to(levels, depth, row) + [(inst, self.kernel.state_fingerprint(succ))]
            ex.hits[name] = Hit(name, kind, depth + 1, path)
            props.trans_active[j] = False


def _tables(table) -> list[np.ndarray]:
    """The arrays of a visited set, for a checkpoint."""
    return table.tables if isinstance(table, PartitionedTable) else [table.table]
