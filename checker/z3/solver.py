"""A small wrapper around a Z3 solver: timeouts and three-valued results.

A query asks whether some formula can be true under what the solver holds. ``holds`` means
unsat (the property cannot fail), ``violated`` means sat (with the model), ``unknown`` means the
solver timed out or gave up; unknown is never turned into holds.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import z3

from hwcheck.spec.verdicts import Verdict


@dataclass
class Result:
    status: str  # holds | violated | unknown
    model: z3.ModelRef | None = None
    reason: str = ""
    seconds: float = 0.0

    @property
    def holds(self) -> bool:
        return self.status == Verdict.HOLDS

    @property
    def witness(self) -> z3.ModelRef:
        """The model of a violated result: the solver's counterexample."""
        if self.model is None:
            raise ValueError(f"a result that is {self.status} has no model")
        return self.model


def worst(statuses: Iterable[str]) -> Verdict:
    """violated beats unknown beats holds."""
    s = set(statuses)
    for v in (Verdict.VIOLATED, Verdict.UNKNOWN):
        if v in s:
            return v
    return Verdict.HOLDS


class Solver:
    """A Z3 solver with a per-query timeout (seconds; None = none).

    The default logic is QF_FD (finite domains): every integer the translator creates is bounded
    by its variable's domain, and Z3 then bit-blasts to its incremental SAT solver, which is one
    to two orders of magnitude faster here than the general arithmetic solver."""

    def __init__(self, timeout: float | None = None, logic: str | None = "QF_FD") -> None:
        self.z3 = z3.SolverFor(logic) if logic else z3.Solver()
        self.timeout = timeout

    def add(self, *facts: bool | z3.BoolRef) -> None:
        for f in facts:
            if f is True:
                continue
            self.z3.add(z3.BoolVal(False) if f is False else f)

    def push(self) -> None:
        self.z3.push()

    def pop(self) -> None:
        self.z3.pop()

    def can_fail(self, goal: bool | z3.BoolRef, timeout: float | None = None) -> Result:
        """Can ``goal`` be false under the facts? holds (no), violated (yes, model), unknown."""
        if goal is True:
            return Result(Verdict.HOLDS)
        self.push()
        try:
            self.add(z3.Not(goal) if goal is not False else True)
            return self.check(timeout)
        finally:
            self.pop()

    def check(self, timeout: float | None = None) -> Result:
        """Satisfiability of the facts: violated = sat (a witness exists)."""
        t = timeout if timeout is not None else self.timeout
        self.z3.set("timeout", int(t * 1000) if t else 4294967295)  # Z3's "no limit"
        t0 = time.perf_counter()
        r = self.z3.check()
        dt = time.perf_counter() - t0
        if r == z3.unsat:
            return Result(Verdict.HOLDS, seconds=dt)
        if r == z3.sat:
            return Result(Verdict.VIOLATED, self.z3.model(), seconds=dt)
        return Result(Verdict.UNKNOWN, reason=self.z3.reason_unknown() or "unknown", seconds=dt)
