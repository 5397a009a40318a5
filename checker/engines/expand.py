"""The chunked expansion driver every engine runs: frontier rows through the kernel's
``expand_dedup``, against a visited table, into growing successor buffers.

The kernel stops before a row whose successors might overflow the buffers or push the table
past its load limit; the driver then makes room (grows the table or the buffers) and goes on
from that row. Rows go in order and actions in instance order, so the first occurrence of a
successor (the one the table lets through) carries the least (parent row, action).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hwcheck.checker.engines.visited import Expandable
from hwcheck.checker.semantics.kernel import Kernel

CHUNK = 1 << 15  # frontier rows per kernel call: bounds the latency of progress and Ctrl-C


@dataclass
class Successors:
    """The successors an expansion let through, in the order found."""

    rows: np.ndarray  # [n, stride] of the layout's cell type
    parents: np.ndarray  # int32: the frontier row of each
    acts: np.ndarray  # the action instance of each
    fps: np.ndarray  # uint64
    generated: int  # transitions evaluated, duplicates included
    next_row: int  # the first frontier row not expanded (the end unless stopped early)
    interrupted: BaseException | None = None  # Ctrl-C, SIGTERM, out of memory: what was found
    # up to then is kept


def expand(kernel: Kernel, front: np.ndarray, table: Expandable, tp_active: np.ndarray,
           tp_row: np.ndarray, tp_inst: np.ndarray, dom_row: np.ndarray,
           dom_inst: np.ndarray, on_chunk: Callable[[int, int], bool] | None = None,
           chunk: int = CHUNK,
           expect: float = 2.0, cov: np.ndarray | None = None) -> Successors:
    """Expand every row of ``front`` (or until ``on_chunk(next_row, written)`` returns True, or
    Ctrl-C). Successors already in ``table`` are dropped, the others inserted. Transition
    predicates set ``tp_row``/``tp_inst`` at their first hit; a step that leaves the declared
    domains sets ``dom_row``/``dom_inst`` of its error code at its first occurrence.
    ``expect``: the successors a row is expected to let through (the buffers start there and
    double when short). ``cov`` (int64 [instances]): each instance's count of expanded states
    that enable it is added to it."""
    mod, stride = kernel.mod, kernel.stride
    if cov is None:
        cov = np.zeros(max(kernel.ninst, 1), np.int64)
    n = front.shape[0]
    cap = max(1024, int(expect * n), 2 * mod.ROOM)
    out = np.empty((cap, stride), kernel.dtype)
    err = np.zeros(1, np.int64)
    par = np.empty(cap, np.int32)
    act = np.empty(cap, kernel.act_dtype)
    fps = np.empty(cap, np.uint64)
    w, lo, generated, interrupted = 0, 0, 0, None
    room = table.room(mod)  # the most successors one kernel call may add
    try:
        while lo < n:
            hi = min(n, lo + chunk)
            i, wrote, gen = table.expand(mod, dict(
                front=front, lo=lo, hi=hi, out=out[w:], par=par[w:], act=act[w:], fps=fps[w:],
                tp_active=tp_active, tp_row=tp_row, tp_inst=tp_inst, err=err, dom_row=dom_row,
                dom_inst=dom_inst, cov=cov))
            w += wrote
            generated += gen
            if i < hi:  # the kernel stopped for room: make some and go on from row i
                table.make_room(room)
                if w + room > cap:
                    cap *= 2
                    out, par, act, fps = (_grown(a, cap, w) for a in (out, par, act, fps))
            lo = i
            if on_chunk is not None and lo < n and on_chunk(lo, w):
                break
    except (KeyboardInterrupt, MemoryError) as e:  # between kernel calls: everything up to row
        interrupted = e  # lo is consistent
    return Successors(out[:w], par[:w], act[:w], fps[:w], generated, lo, interrupted)


def _grown(a: np.ndarray, cap: int, used: int) -> np.ndarray:
    new = np.empty((cap,) + a.shape[1:], a.dtype)
    new[:used] = a[:used]
    return new
