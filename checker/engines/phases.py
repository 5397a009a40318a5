"""Where a level's time goes: the local engine's phases timed (``HWCHECK_PHASES=1``).

Off (the default) it costs nothing: ``span`` hands back one shared context manager that does
nothing and ``task`` hands back the function itself. On, every phase is timed twice over:

- a *span* is time the main thread spends in a phase (the level, its expansion, the new
  states put into buckets, the level's end, the state checks, and inside the expansion of
  several workers what the main thread waits for): its wall time and the main thread's CPU
  time (``time.thread_time``);
- a *task* is a piece of a phase a worker thread runs (generating a slice, inserting an
  owner's share, growing a table, sorting and gathering an owner's share, checking a slice):
  its wall time and that thread's CPU time, summed over the tasks.

A phase's tasks' CPU time against the wall time of the span around them says how many cores
it kept busy; the main thread's spans that run no task are the serial part of a level.
At the end of a run the figures go into ``Exploration.stats["phases"]`` and, as a table, to
stderr. Times are summed per phase, so the cost of a measurement is one clock read per chunk
of thousands of rows, never one per state.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

VARIABLE = "HWCHECK_PHASES"

F = TypeVar("F", bound=Callable[..., Any])

_OFF: AbstractContextManager[None] = nullcontext()


class _Span:
    __slots__ = ("phases", "name", "wall", "cpu")

    def __init__(self, phases: Phases, name: str) -> None:
        self.phases, self.name = phases, name

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def __exit__(self, *exc: object) -> None:
        self.phases.add(self.name, "main", time.perf_counter() - self.wall,
                        time.thread_time() - self.cpu)


class Phases:
    """The times of a run's phases; ``on`` False: nothing is measured."""

    def __init__(self, on: bool = False) -> None:
        self.on = on
        self.figures: dict[str, dict[str, list[float]]] = {}  # phase -> where -> [wall, cpu, n]
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls) -> Phases:
        """On when ``HWCHECK_PHASES`` is set to anything but "" or "0"."""
        return cls(os.environ.get(VARIABLE, "") not in ("", "0"))

    def span(self, name: str) -> AbstractContextManager[None]:
        """The main thread's time in phase ``name``, as a ``with`` block."""
        return _Span(self, name) if self.on else _OFF

    def task(self, name: str, fn: F) -> F:
        """``fn`` as a worker thread runs it, its time counted to phase ``name``."""
        if not self.on:
            return fn

        def timed(*args: Any) -> Any:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return fn(*args)
            finally:
                self.add(name, "workers", time.perf_counter() - wall, time.thread_time() - cpu)

        return timed  # type: ignore[return-value]

    def add(self, name: str, where: str, wall: float, cpu: float) -> None:
        with self._lock:
            f = self.figures.setdefault(name, {}).setdefault(where, [0.0, 0.0, 0])
            f[0] += wall
            f[1] += cpu
            f[2] += 1

    def stats(self) -> dict[str, dict[str, dict[str, float]]]:
        """phase -> "main" or "workers" -> {"wall", "cpu" (seconds), "count"}."""
        return {name: {where: {"wall": round(f[0], 4), "cpu": round(f[1], 4), "count": int(f[2])}
                       for where, f in per.items()}
                for name, per in sorted(self.figures.items())}

    def table(self) -> str:
        """The figures as a table: one phase a line, the main thread's and the workers'."""
        lines = ["phases (HWCHECK_PHASES): seconds      main wall  main cpu | tasks  "
                 "task wall  task cpu"]
        for name, per in sorted(self.figures.items()):  # "a: b" is a part of "a"
            m = per.get("main", [0.0, 0.0, 0])
            w = per.get("workers", [0.0, 0.0, 0])
            lines.append(f"  {name:<34}{m[0]:>9.3f} {m[1]:>9.3f} | {int(w[2]):>5} "
                         f"{w[0]:>10.3f} {w[1]:>9.3f}")
        return "\n".join(lines)
