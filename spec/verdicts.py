"""Verdicts and property kinds: the one definition every part of hwcheck uses.

Both are strings underneath (``Verdict.HOLDS == "holds"``), so JSON output, trace files and
file names carry the plain word, and ``str`` and ``format`` give it too.
"""

from __future__ import annotations

from enum import Enum


class _Word(str, Enum):
    """An enum whose members are their words wherever text is made of them."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Verdict(_Word):
    """What a check found: of a property, of a run, of a proof or of recoverability."""

    HOLDS = "holds"
    VIOLATED = "violated"
    UNKNOWN = "unknown"  # a limit, a timeout or a stop came first: never reported as holds
    REACHED = "reached"  # a reachability check's target was reached
    UNREACHED = "unreached"
    RECOVERABLE = "recoverable"  # a healthy state stays reachable from every reachable state
    STUCK = "stuck"


class Kind(_Word):
    """What a property is."""

    INVARIANT = "invariant"  # a state predicate that must hold in every reachable state
    ACTION = "action"  # a transition predicate that must hold on every step
    REACHABLE = "reachable"  # a target some reachable state (or step) must reach
    DOMAIN = "domain"  # a step or predicate that leaves a variable's declared domain
