"""Fault injection for tests: ``HWCHECK_FAULT=POINT:DEPTH`` makes the process send itself a
signal at a named point of a run, so that a test's kill or interrupt lands where the test means
it to on any machine and under any load (no test waits for a moment to come).

- ``interrupt:D``: SIGINT (as Ctrl-C) before the search expands level D;
- ``terminate:D``: SIGTERM, likewise;
- ``terminate-mid:D``: SIGTERM in the middle of level D, after its first chunk (the local
  engine: a run with this point set expands ``MID_CHUNK`` rows a kernel call, so that a small
  configuration's level has a middle);
- ``terminate-graph:0``: SIGTERM once the state graph is explored, before it is analysed;
- ``terminate-reverse:0``: SIGTERM in recoverability's backward search;
- ``terminate-liveness:0``: SIGTERM in liveness's search of the fair components;
- ``terminate-judge:0``: SIGTERM as liveness judges the components found (fair, refined or
  without a fair cycle);
- ``terminate-cycle:0``: SIGTERM as liveness builds a lasso's cycle through a fair component;
- ``terminate-stuck:0``: SIGTERM as recoverability's stuck trace is built;
- ``checkpoint-write:D``: SIGKILL halfway through writing the checkpoint of depth D;
- ``after-checkpoint:D``: SIGKILL right after that checkpoint is written;
- ``pause-after-checkpoint:D``: SIGSTOP right after it (a test that sees the run stopped kills
  it itself).

The signal is real: the process handles it exactly as one sent from outside.
"""

from __future__ import annotations

import os
import signal

import numpy as np

VARIABLE = "HWCHECK_FAULT"
SIGNALS = {"interrupt": signal.SIGINT, "terminate": signal.SIGTERM,
           "terminate-mid": signal.SIGTERM, "terminate-graph": signal.SIGTERM,
           "terminate-reverse": signal.SIGTERM, "terminate-liveness": signal.SIGTERM,
           "terminate-judge": signal.SIGTERM, "terminate-cycle": signal.SIGTERM,
           "terminate-stuck": signal.SIGTERM,
           "checkpoint-write": signal.SIGKILL, "after-checkpoint": signal.SIGKILL,
           "pause-after-checkpoint": signal.SIGSTOP}
MID_CHUNK = 64  # rows a kernel call while ``terminate-mid`` is set


def at(point: str, depth: int, flag: np.ndarray | None = None) -> None:
    """Send this process the point's signal if ``HWCHECK_FAULT`` names this point and depth.
    ``flag``: the stop flag the work at this point polls (``signals.stoppable``), set as the
    signal sets it, so that the work sees it at its next poll whatever thread the signal's
    handler runs in."""
    if os.environ.get(VARIABLE) == f"{point}:{depth}":
        os.kill(os.getpid(), SIGNALS[point])
        if flag is not None:
            flag[0] = 1


def chunk(default: int) -> int:
    """The rows a kernel call expands: ``default``, or ``MID_CHUNK`` while a ``terminate-mid``
    point is set (a level of a small configuration then has a middle for it to land in)."""
    return MID_CHUNK if os.environ.get(VARIABLE, "").startswith("terminate-mid:") else default
