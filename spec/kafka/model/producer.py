"""``--producer-retries`` and ``--idempotence``: one producer with one request in flight, whose
records carry sequence numbers; an unanswered record is sent again to the new leader, which
with idempotence does not append a sequence number its log holds (docs/kafka-model.md)."""

from __future__ import annotations

from hwcheck.spec.kafka.derived import NONE
from hwcheck.spec.kafka.model.base import advance_hw, append, isr_size
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    Block,
    Value,
    exists,
    forall,
    implies,
    prime,
)


def on(p: Params) -> bool:
    return p.producer_retries


def names(p: Params) -> Names:
    return Names(invariants=("NoDuplicates",),
                 reachables=("ProducerRetried",) + (("DuplicateRefused",) if p.idempotence
                                                    else ()))


def declare(m: Model) -> None:
    R, M = m.R, m.M
    m.seq = m.array("seq", (R, M), 0, M,
                    "producer sequence number of the record at each offset; 0 = none")
    m.resp_seq = m.array("respSeq", (R,), 0, M, "sequence number of the record in flight")
    m.payload.append((m.seq, m.resp_seq))
    m.p_seq = m.spec.scalar("pSeq", 0, M, "the sequence number of the producer's last record")
    p_wait = m.producer_wait()
    m.writes("Produce", "pSeq", "pWait")
    m.writes("hw", "pWait")

    def produce_guard(b: Block) -> None:
        b.require(p_wait == 0, m.p_seq < M)

    def produce_append(b: Block, L: Value, n: Value) -> None:
        b.set(m.p_seq, m.p_seq + 1)
        b.set(m.seq[L, n], m.p_seq)
        b.set(p_wait, m.epoch)

    def answered(b: Block, L: Value, new: Value, ack_all: Value) -> None:
        # the producer's answer: every copy of its record in L's log is below the HW
        covered = ~exists(M, lambda k: (new <= k) & (m.log[L, k] != 0)
                          & (m.seq[L, k] == m.p_seq), "k")
        with b.when((p_wait == m.epoch) & ack_all & covered):
            b.set(p_wait, 0)

    m.extend("produce.guard", produce_guard)
    m.extend("produce.append", produce_append)
    m.extend("hw.advanced", answered)


def actions(m: Model) -> None:
    log, seq, leader, epoch, p_seq, p_wait = m.log, m.seq, m.leader, m.epoch, m.p_seq, \
        m.producer_wait()
    M, IDEM = m.M, m.p.idempotence

    @m.spec.action("Retry", modifies=[log, seq, m.hw, p_wait, *m.ghosts])
    def retry(b: Block) -> None:
        """The producer's record was never answered and its leader is gone (crashed or
        replaced): it sends the record again, with the same sequence number, to the new
        leader. With idempotence a leader whose log holds that sequence number already does
        not append it again: it answers once its HW covers the record it has."""
        b.require(leader != NONE, p_wait != 0, p_wait < epoch, isr_size(m) >= m.p.min_isr)
        if IDEM:
            b.require(exists(M, lambda k: (log[leader, k] != 0) & (seq[leader, k] == p_seq),
                             "k") | (m.leo(leader) < M))
        else:
            b.require(m.leo(leader) < M)
        L = b.let("L", leader)
        n = b.let("n", m.leo(L))
        b.set(p_wait, epoch)
        if IDEM:
            dup = b.let("dup", exists(M, lambda k: (log[L, k] != 0) & (seq[L, k] == p_seq),
                                      "k"))
            with b.when(~dup):
                append(m, b, L, n, [epoch, p_seq])
        else:
            append(m, b, L, n, [epoch, p_seq])
        advance_hw(m, b, L)


def invariants(m: Model) -> None:
    seq, hw, leader, M = m.seq, m.hw, m.leader, m.M
    m.spec.invariant("NoDuplicates", implies(leader != NONE, forall(M, lambda j: forall(
        M, lambda k: implies((j < k) & (k < hw[leader]), seq[leader, j] != seq[leader, k]),
        "k"), "j")),
        "no producer record is at two offsets of the leader's log below its HW")


def reachables(m: Model) -> None:
    p_wait, epoch, leader = m.producer_wait(), m.epoch, m.leader
    # Only Retry changes pWait while it names an older epoch (it may be answered at once).
    retried = (p_wait != 0) & (p_wait < epoch) & (prime(p_wait) != p_wait)
    m.spec.reachable("ProducerRetried", retried,
                     "a transition where the producer sends its record again")
    if m.p.idempotence:
        m.spec.reachable("DuplicateRefused", retried & (leader != NONE)
                         & (prime(m.leo(leader)) == m.leo(leader)),
                         "a retry that the leader recognises and does not append")
