"""``--log-start-offset``: the leader advances its log start offset up to its HW (retention,
DeleteRecords); followers learn it from fetch responses, a fetch or a consumer below it is out of
range and starts there (docs/kafka-model.md)."""

from __future__ import annotations

from collections.abc import Callable

from hwcheck.spec.kafka.derived import NONE, restart_at
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    Block,
    Value,
    Var,
    exists,
    forall,
    implies,
    ite,
    max_,
    min_,
    min_over,
)


def on(p: Params) -> bool:
    return p.log_start_offset


def names(p: Params) -> Names:
    return Names(invariants=("LogStartBelowHw", "LowWatermarkBelowHw"),
                 reachables=("LogStartMoved", "FollowerRestartedAtLogStart"))


def extend(m: Model) -> None:
    m.RESTART = restart_at(m.E)
    m.restate("respRec", hi=m.RESTART,
              doc=f"record in flight; {m.OOR} = out of range (above the leader's LEO), "
                  f"{m.RESTART} = below the leader's log start offset")


def declare(m: Model) -> None:
    R, M = m.R, m.M
    m.log_start = log_start = m.array(
        "logStart", (R,), 0, M, "log start offset: the records below it are deleted (persisted)")
    m.resp_ls = resp_ls = m.array("respLs", (R,), 0, M,
                                  "leader log start offset carried by the response in flight")
    m.response_only.append(resp_ls)
    m.writes("truncate", "logStart")

    def truncate(b: Block, r: Value, n: Value) -> None:
        # a truncation below the log start offset starts the log there (Kafka truncateTo)
        b.set(log_start[r], min_(log_start[r], n))

    def fetch_below_start(b: Block, f: Value, L: Value, lf: Value,
                          serve: Callable[[], None]) -> None:
        with b.when(lf < log_start[L]):  # OFFSET_OUT_OF_RANGE: below the leader's log start
            b.set(m.resp_rec[f], m.RESTART)
            b.set(m.resp_hw[f], log_start[L])
            b.set(m.pending[f], True)
        with b.otherwise():
            serve()

    def restart_at_start(b: Block, f: Value, rec: Value, rh: Value,
                         apply: Callable[[], None]) -> None:
        with b.when(rec == m.RESTART):  # truncateFullyAndStartAt(the leader's log start)
            with b.each(M, "k") as k:
                b.set(m.log[f, k], 0)
                for cell in m.cells:
                    b.set(cell[f, k], 0)
            b.set(log_start[f], rh)
            b.set(m.hw[f], rh)
        with b.otherwise():
            apply()

    def take_hw(b: Block, f: Value, rh: Value) -> None:
        # Kafka's updateHighWatermark keeps the HW at or above the log start offset; then the
        # follower takes the leader's log start offset (maybeIncrementLogStartOffset), deleting
        # the records below it.
        b.set(m.hw[f], max_(log_start[f], min_(m.leo(f), rh)))
        start = b.let("start", max_(log_start[f], resp_ls[f]))
        with b.each(M, "k") as k:
            b.set(m.log[f, k], ite(k < start, 0, m.log[f, k]))
            for cell in m.cells:
                b.set(cell[f, k], ite(k < start, 0, cell[f, k]))
        b.set(log_start[f], start)

    def consume_below_start(b: Block, c: Value, L: Value, pos: Value,
                            read: Callable[[], None]) -> None:
        with b.when(pos < log_start[L]):
            b.set(m.cpos[c], log_start[L])
        with b.otherwise():
            read()

    m.extend("truncate", truncate)
    m.extend("fetch.serve", fetch_below_start)
    m.extend("fetch.respond", lambda b, f, L: b.set(resp_ls[f], log_start[L]))
    m.extend("response.apply", restart_at_start)
    m.replace("response.hw", take_hw)
    m.extend("held", lambda r, k: k >= log_start[r])
    m.extend("consume.out_of_range", lambda c, L: m.cpos[c] < log_start[L])
    m.extend("consume.read", consume_below_start)
    m.qualify("CommittedNotLost", " above its log start offset")
    m.qualify("AckedNotLost", " above its log start offset")
    m.qualify("LogsMatchBelowHw", " that both still hold")
    m.qualify("MonotonicReads", " (above its log start offset)")


def _start(m: Model) -> Var:
    """logStart, which this part declared (``m.log_start`` is None without the knob)."""
    assert m.log_start is not None
    return m.log_start


def actions(m: Model) -> None:
    log, log_start, leader, hw = m.log, _start(m), m.leader, m.hw

    @m.spec.action("DeleteRecords", modifies=[log, log_start])
    def delete_records(b: Block) -> None:
        """The leader advances its log start offset by one record, never past its HW
        (retention or DeleteRecords; a larger jump is several steps)."""
        b.require(leader != NONE, log_start[leader] < hw[leader])
        L = b.let("L", leader)
        s = b.let("s", log_start[L])
        b.set(log[L, s], 0)
        b.set(log_start[L], s + 1)


def invariants(m: Model) -> None:
    log_start, hw, leader, R = _start(m), m.hw, m.leader, m.R
    m.spec.invariant("LogStartBelowHw", forall(R, lambda r: log_start[r] <= hw[r], "r"),
                     "every replica's log start offset is at most its HW")
    m.spec.invariant("LowWatermarkBelowHw", implies(leader != NONE, min_over(
        R, lambda r: log_start[r], lambda r: r >= 0, 0, "r") <= hw[leader]),
        "the low watermark (least log start offset over the replicas) is at most the "
        "leader's HW")


def reachables(m: Model) -> None:
    log_start, leader = _start(m), m.leader
    m.spec.reachable("LogStartMoved", exists(m.R, lambda r: (log_start[r] > 0) & (r != leader),
                                             "r"),
                     "a follower's log start offset moved (it learned the leader's)")
    m.spec.reachable("FollowerRestartedAtLogStart", exists(
        m.R, lambda f: m.pending[f] & (m.resp_rec[f] == m.RESTART), "f"),
        "a follower below the leader's log start offset is told to start there")
