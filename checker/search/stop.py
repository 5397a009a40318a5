"""When a search stops: the one rule every search loop asks.

A breadth-first search stops

- before the next level, once a violation is known and the user did not ask to go on
  (``first_hit``; ``--continue`` turns it off): a reachability witness never stops a run;
- when a limit the user set is reached (``--max-states``, ``--max-seconds``, ``--max-memory``),
  between levels and, where the engine can, between chunks of a level;
- on Ctrl-C, SIGTERM or out of memory, at the next safe point, keeping what it found (the
  reason: ``exploration.interrupt_reason``).

The driver (``driver.py``) asks before every level; an engine asks ``limit`` between chunks;
a Spark task that runs several levels in a row asks ``after_level`` to go on exactly while the
driver would. The reasons are fixed sentences: ``Exploration.limited`` and the reports read
them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hwcheck.checker.search.exploration import Exploration, current_rss_bytes
from hwcheck.spec.verdicts import Kind

REACHABLE = Kind.REACHABLE  # the one kind of hit that never stops a run (a witness)


@dataclass(frozen=True)
class StopRule:
    """When to stop. Picklable: a Spark task carries it."""

    first_hit: bool = True  # stop once a violation is known (False: --continue)
    max_states: int | None = None
    max_seconds: float | None = None  # wall time of the exploration
    max_memory: int | None = None  # resident bytes of this process

    def stops_on(self, kind: str) -> bool:
        """Whether a hit of ``kind`` stops the run (before the next level)."""
        return self.first_hit and kind != REACHABLE

    def limit(self, distinct: int, seconds: float) -> str:
        """The limit reached with ``distinct`` states after ``seconds`` ('' if none). Cheap
        enough to ask between kernel calls."""
        if self.max_states is not None and distinct >= self.max_states:
            return f"reached --max-states {self.max_states:,}"
        if self.max_seconds is not None and seconds >= self.max_seconds:
            return f"reached --max-seconds {self.max_seconds:g}"
        if self.max_memory is not None:
            rss = current_rss_bytes()
            if rss >= self.max_memory:
                return (f"reached --max-memory {self.max_memory / 2**20:,.0f} MiB "
                        f"(resident {rss / 2**20:,.0f} MiB)")
        return ""

    def before_level(self, ex: Exploration) -> str:
        """Why the search stops before expanding its next level ('' to go on)."""
        if any(self.stops_on(h.kind) for h in ex.hits.values()):
            return "stopped at the first violation"
        return self.limit(ex.distinct, ex.seconds)

    def after_level(self, new: int, kinds: Iterable[str]) -> bool:
        """Whether a search stops after a level that found ``new`` states and hits of
        ``kinds``, whatever its limits say (a Spark task's look-ahead: the limits are the
        driver's to judge)."""
        return new == 0 or any(self.stops_on(k) for k in kinds)
