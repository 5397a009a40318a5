"""What a Spark run needs in memory, checked before the run starts.

An executor is a JVM (``spark.executor.memory``; with the inbox exchange it holds no state of
the search: the blocks travel as files) and one Python worker per task slot. A worker handles
one partition's level a slice of candidates at a time (``checker.engines.partition``), so its
memory is bounded by the slice, not by the level:

    worker  <= 288 MiB + slice * (4 * row + 160) bytes      (``partition.memory_bound``)
    executor = spark.executor.memory + cores * worker

with ``row`` the bytes of one state (the layout's cells). The number of partitions does not
enter it: more partitions mean fewer candidates a task, never more a slice. In local mode the
driver JVM hosts the executor: ``spark.driver.memory + N * worker`` for ``local[N]``.

``plan`` picks the slice (the default, or the largest that fits ``--spark-worker-memory``)
and refuses, in one line before any JVM starts, a configuration that cannot fit: a slice
that needs more than the worker memory given, or (local mode) workers and JVM that need more
than this machine has.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from hwcheck.checker.engines.partition import (
    SLICE,
    WORKER_BASE,
    bytes_a_candidate,
    largest_slice,
    memory_bound,
)
from hwcheck.checker.environment import EnvironmentFault
from hwcheck.checker.spark import session

_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)


class SparkMemory(EnvironmentFault):
    """The run cannot fit in the memory it is given: one line, before it starts."""


def jvm_size(text: str) -> int:
    """Bytes of a JVM/Spark memory size (``512m``, ``2g``; a bare number is bytes)."""
    m = _SIZE.match(text)
    if not m:
        raise SparkMemory(f"memory size {text!r}: expected a number with k, m, g or t")
    return int(m[1]) << {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[m[2].lower()]


def mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def local_slots(master: str) -> int | None:
    """Task slots of a local master (``local``, ``local[N]``, ``local[*]``); None otherwise."""
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", master.strip())
    if not m:
        return None
    if m[1] is None:
        return 1
    return os.cpu_count() or 1 if m[1] == "*" else int(m[1])


def physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


@dataclass(frozen=True)
class Plan:
    """A run's slice and the memory it needs."""

    slice: int  # candidates a task merges at a time
    worker: int  # bytes a Python worker needs at most
    slots: int | None  # task slots (local mode), None on a cluster
    jvm: int  # bytes of the JVM hosting the executor (local mode) or of an executor

    @property
    def total(self) -> int | None:
        """Bytes the JVM and the workers need together (local mode)."""
        return None if self.slots is None else self.jvm + self.slots * self.worker

    def as_json(self) -> dict[str, int | None]:
        return {"slice": self.slice, "worker_memory_bound": self.worker, "slots": self.slots,
                "jvm_memory": self.jvm, "total_memory_bound": self.total}


def plan(row_bytes: int, master: str, slice: int | None = None,
         worker_memory: int | None = None) -> Plan:
    """The slice and the memory bound of a Spark run whose states are ``row_bytes`` bytes, or
    a ``SparkMemory`` fault naming what does not fit."""
    if worker_memory is not None:
        fits = largest_slice(row_bytes, worker_memory)
        if fits < 1:
            raise SparkMemory(f"--spark-worker-memory {mib(worker_memory)} is less than a "
                              f"Python worker needs before its first slice "
                              f"({mib(WORKER_BASE + bytes_a_candidate(row_bytes))})")
        if slice is None:
            slice = min(SLICE, fits)
        elif slice > fits:
            raise SparkMemory(
                f"--spark-slice {slice:,} needs up to {mib(memory_bound(row_bytes, slice))} a "
                f"Python worker ({mib(WORKER_BASE)} + {bytes_a_candidate(row_bytes)} bytes a "
                f"candidate), more than --spark-worker-memory {mib(worker_memory)}: use "
                f"--spark-slice {fits:,} or less")
    slice = SLICE if slice is None else slice
    if slice < 1:
        raise SparkMemory(f"--spark-slice {slice}: a slice holds at least one candidate")
    conf = session.conf_pairs(master, None)
    slots = local_slots(master)
    jvm = jvm_size(conf["spark.driver.memory" if slots is not None else
                        "spark.executor.memory"])
    p = Plan(slice, memory_bound(row_bytes, slice), slots, jvm)
    have = physical_memory()
    if p.total is not None and p.total > have:
        raise SparkMemory(
            f"{master}: {slots} Python workers of up to {mib(p.worker)} (slice {slice:,}) and "
            f"a {mib(jvm)} JVM need {mib(p.total)}, more than this machine's {mib(have)}: "
            f"lower --spark-slice or the task slots")
    return p
