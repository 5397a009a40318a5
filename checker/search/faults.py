"""Fault injection for tests: ``HWCHECK_FAULT=POINT:DEPTH`` makes the process send itself a
signal at a named point of a run, so that a test's kill or interrupt lands where the test means
it to on any machine and under any load (no test waits for a moment to come).

- ``interrupt:D``: SIGINT (as Ctrl-C) before the search expands level D;
- ``terminate:D``: SIGTERM, likewise;
- ``checkpoint-write:D``: SIGKILL halfway through writing the checkpoint of depth D;
- ``after-checkpoint:D``: SIGKILL right after that checkpoint is written.

The signal is real: the process handles it exactly as one sent from outside.
"""

from __future__ import annotations

import os
import signal

VARIABLE = "HWCHECK_FAULT"
SIGNALS = {"interrupt": signal.SIGINT, "terminate": signal.SIGTERM,
           "checkpoint-write": signal.SIGKILL, "after-checkpoint": signal.SIGKILL}


def at(point: str, depth: int) -> None:
    """Send this process the point's signal if ``HWCHECK_FAULT`` names this point and depth."""
    if os.environ.get(VARIABLE) == f"{point}:{depth}":
        os.kill(os.getpid(), SIGNALS[point])
