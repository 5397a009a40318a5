"""What an exploration found, in a form shared by every engine.

An engine explores level by level and reports, per property, its first hit: the level (the
length of the shortest path, in steps) and a path to it given as the action instances taken from
the initial state with the fingerprint expected after each. ``trace.py`` turns a path into a
trace by replaying it through the interpreter.

Canonical choice (so that every engine reports the same trace): each state's parent is the
least (parent fingerprint, action instance) among the states of the previous level that reach
it, and a property's witness is the state of least fingerprint on the first level that has one.
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hwcheck.spec.verdicts import Verdict


@dataclass
class Hit:
    """The first hit of one property: a violation, or a witness of a reachability check."""

    name: str
    kind: str  # invariant | action | reachable
    length: int  # steps from the initial state
    # (action instance, fingerprint after it), in order; None when the run was interrupted
    # before the path was rebuilt (the hit is known, its trace is not)
    path: list[tuple[int, int | None]] | None
    lasso: Any = None  # a liveness property's: the Lasso (prefix and cycle) on the state graph


@dataclass
class Exploration:
    engine: str
    distinct: int = 0
    generated: int = 0
    depth: int = 0
    seconds: float = 0.0
    complete: bool = False
    stop_reason: str = ""  # why an incomplete run stopped
    hits: dict[str, Hit] = field(default_factory=dict)
    checked: list[tuple[str, str]] = field(default_factory=list)  # (name, kind) of each property
    # the engine's figures: peak memory, per-level times ...
    stats: dict[str, Any] = field(default_factory=dict)
    # verdicts decided after the search, on the whole state graph (liveness properties), which
    # the search's own completeness does not decide
    decided: dict[str, str] = field(default_factory=dict)
    # the depth of the deepest level when a stop cut its expansion short: the states counted
    # there are some of that level's (None: every level counted is whole)
    partial_level: int | None = None

    def status(self, name: str, kind: str) -> str:
        if name in self.decided:
            return self.decided[name]
        if kind == "reachable":
            if name in self.hits:
                return Verdict.REACHED
            return Verdict.UNREACHED if self.complete else Verdict.UNKNOWN
        if name in self.hits:
            return Verdict.VIOLATED
        return Verdict.HOLDS if self.complete else Verdict.UNKNOWN

    exact: bool = False  # every state kept (--exact): no collision can hide one
    symmetry: bool = False  # one state per orbit kept: distinct counts orbits

    @property
    def collision_probability(self) -> float:
        return 0.0 if self.exact else collision_probability(self.distinct)

    @property
    def limited(self) -> bool:
        """Stopped by a limit the user set (--max-states, --max-seconds, --max-memory)."""
        return self.stop_reason.startswith("reached --max-")

    @property
    def verdict(self) -> str:
        """``violated`` once a violation is found, ``holds`` only for a complete run, else
        ``unknown``. A run stopped by a limit the user set is ``unknown`` even with violations
        found (they are reported, each ``violated``): it did not do what was asked of it."""
        if any(h.kind != "reachable" for h in self.hits.values()):
            return Verdict.UNKNOWN if self.limited else Verdict.VIOLATED
        if any(v == Verdict.UNKNOWN for v in self.decided.values()):
            return Verdict.UNKNOWN
        return Verdict.HOLDS if self.complete else Verdict.UNKNOWN


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception in the main thread: the run stops at the next safe
    point and reports what it found, as with Ctrl-C."""


class NoRoom(MemoryError):
    """The work folder's disk has no room for what the run would put there (the state graph's
    levels and arrays past the memory budget): out of memory, said as such."""


def interrupt_reason(e: BaseException) -> str:
    """The stop reason of an interrupted run."""
    if isinstance(e, Terminated):
        return "terminated (SIGTERM)"
    if isinstance(e, NoRoom):
        return f"no room left in the work folder ({e})"
    if isinstance(e, MemoryError):
        return "out of memory"
    return "interrupted"


def collision_probability(distinct: int) -> float:
    """An estimate of the chance that two of ``distinct`` states share a 64-bit fingerprint (so
    that one of them, and what only it leads to, was never explored): n(n-1)/2^65, the birthday
    bound for a uniform hash. About 2.7% at 10^9 states, 2.7e-8 at 10^6."""
    return distinct * (distinct - 1) / 2.0 ** 65


class Progress:
    """Reports exploration progress to a callback at most every ``interval`` seconds."""

    def __init__(self, report: Callable[[str], None] | None = None, interval: float = 2.0):
        import time

        self._time = time.perf_counter
        self.report = report
        self.interval = interval
        self.start = self._time()
        self.last = self.start
        self.offset = 0.0  # seconds of earlier runs this one resumes

    def elapsed(self) -> float:
        return self._time() - self.start + self.offset

    def tick(self, level: int, distinct: int, frontier: int, force: bool = False) -> None:
        now = self._time()
        if self.report is None or (not force and now - self.last < self.interval):
            return
        self.last = now
        rate = distinct / max(now - self.start, 1e-9)
        self.report(f"level {level}  distinct {distinct:,}  frontier {frontier:,}  "
                    f"{rate:,.0f} states/s")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except OSError:
        return 0
