"""``--transactions`` (and ``--isolation``): a transactional producer writes data records, then
the coordinator writes a commit or abort marker; the leader's last stable offset (LSO), and what
consumers return of transactions (docs/kafka-model.md)."""

from __future__ import annotations

from hwcheck.spec.kafka.derived import (
    ABORT_MARKER,
    COMMIT_MARKER,
    DATA,
    NONE,
    first_unstable,
    lso,
)
from hwcheck.spec.kafka.model.base import advance_hw, append, isr_size
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    Block,
    Expr,
    Value,
    exists,
    forall,
    implies,
    ite,
)

# The transactional producer's state (txnState).
IDLE, OPEN, PREPARE_COMMIT, PREPARE_ABORT = 0, 1, 2, 3
# The coordinator's decision for a transaction (the ghost outcome).
UNDECIDED, COMMITTED, ABORTED = 0, 1, 2


def on(p: Params) -> bool:
    return p.transactions


def names(p: Params) -> Names:
    read = (("AbortedRecordSkipped",) if p.isolation == "read-committed"
            else ("AbortedRecordReturned",))
    return Names(invariants=("LsoBelowHw", "MarkersSurvive")
                 + (("ReadCommittedIsolation",) if p.consumers else ()),
                 reachables=("TxnCommitted", "TxnAborted", "LsoBehindHw")
                 + (read if p.consumers else ()))


def declare(m: Model) -> None:
    R, M, T, spec = m.R, m.M, m.p.T, m.spec
    m.txn = m.array("txn", (R, M), 0, T, "transaction of the record at each offset")
    m.ctl = m.array("ctl", (R, M), 0, 2, "record kind: 0 data, 1 commit marker, 2 abort marker")
    m.resp_txn = m.array("respTxn", (R,), 0, T, "transaction of the record in flight")
    m.resp_ctl = m.array("respCtl", (R,), 0, 2, "kind of the record in flight")
    m.payload += [(m.txn, m.resp_txn), (m.ctl, m.resp_ctl)]
    m.txn_id = spec.scalar("txnId", 0, T, "the producer's current transaction; 0 = none yet")
    m.txn_state = spec.scalar("txnState", 0, 3, "0 idle, 1 open, 2 prepare-commit, "
                                                "3 prepare-abort (markers being written)")
    m.outcome = m.array("outcome", (T,), 0, 2,
                        "ghost: the coordinator's decision: 0 none, 1 commit, 2 abort")
    p_wait = m.producer_wait()
    m.writes("Produce", "txnId", "txnState", "outcome", "pWait")
    m.writes("hw", "pWait", "txnState")
    m.writes("Consume", "cret")
    txn, ctl, txn_id, txn_state = m.txn, m.ctl, m.txn_id, m.txn_state

    def produce_guard(b: Block) -> None:
        b.require(p_wait == 0, (txn_state == OPEN) | ((txn_state == IDLE) & (txn_id < T)))

    def produce_append(b: Block, L: Value, n: Value) -> None:
        with b.when(txn_state == IDLE):
            b.set(txn_id, txn_id + 1)
            b.set(txn_state, OPEN)
        b.set(txn[L, n], txn_id)
        b.set(ctl[L, n], DATA)
        b.set(p_wait, m.epoch)

    def answered(b: Block, L: Value, new: Value, ack_all: Value) -> None:
        # the answer to a data send or to a marker written in this epoch
        covered = ~exists(M, lambda k: (new <= k) & (m.log[L, k] == m.epoch)
                          & (txn[L, k] == txn_id), "k")
        with b.when((p_wait == m.epoch) & ack_all & covered):
            b.set(p_wait, 0)
            with b.when(txn_state >= PREPARE_COMMIT):
                b.set(txn_state, IDLE)

    def declare_returned() -> None:
        m.cret = spec.array("cret", (m.p.consumers, M), 0, T,
                            "ghost: the transaction of the data record each consumer returned "
                            "at each offset")

    def consumer_returned(b: Block, c: Value, L: Value, pos: Value) -> None:
        # markers are never returned; read_committed drops aborted transactions' records
        returned: Expr = ctl[L, pos] == DATA
        if read_committed(m):
            returned = returned & ~aborted(m, L, txn[L, pos])
        with b.when(returned):
            b.set(m.cret[c, pos], txn[L, pos])

    m.extend("produce.guard", produce_guard)
    m.extend("produce.append", produce_append)
    m.extend("hw.advanced", answered)
    m.extend("consumers.declared", declare_returned)
    m.extend("consume.returned", consumer_returned)


def read_committed(m: Model) -> bool:
    return m.p.isolation == "read-committed"


def aborted(m: Model, L: Value, t: Value) -> Expr:
    """L's log holds an abort marker of transaction t (Kafka's aborted-transaction index)."""
    return exists(m.M, lambda j: (m.log[L, j] != 0) & (m.ctl[L, j] == ABORT_MARKER)
                  & (m.txn[L, j] == t), "j")


def actions(m: Model) -> None:
    txn_id, txn_state, outcome, p_wait = m.txn_id, m.txn_state, m.outcome, m.producer_wait()
    leader, epoch = m.leader, m.epoch

    @m.spec.action("TxnCommit", modifies=[txn_state, outcome])
    def txn_commit(b: Block) -> None:
        """The producer commits its open transaction once every record it sent is answered
        (EndTxn): the coordinator decides commit and starts writing the markers."""
        b.require(txn_state == OPEN, txn_id >= 1, p_wait == 0)
        b.set(txn_state, PREPARE_COMMIT)
        b.set(outcome[txn_id - 1], COMMITTED)

    @m.spec.action("TxnAbort", modifies=[txn_state, outcome, p_wait])
    def txn_abort(b: Block) -> None:
        """The producer (or the coordinator, on a timeout or a failed send) aborts the open
        transaction: the coordinator decides abort and starts writing the markers."""
        b.require(txn_state == OPEN, txn_id >= 1)
        b.set(txn_state, PREPARE_ABORT)
        b.set(outcome[txn_id - 1], ABORTED)
        b.set(p_wait, 0)

    @m.spec.action("WriteMarker", modifies=[m.log, m.hw, m.txn, m.ctl, p_wait, txn_state,
                                            *m.ghosts])
    def write_marker(b: Block) -> None:
        """The coordinator writes the decided marker to the leader (acks=all); if the leader
        it wrote to is gone before answering, it writes the marker again to the new one."""
        b.require(leader != NONE, txn_state >= PREPARE_COMMIT,
                  (p_wait == 0) | (p_wait < epoch), m.leo(leader) < m.M,
                  isr_size(m) >= m.p.min_isr)
        L = b.let("L", leader)
        n = b.let("n", m.leo(L))
        append(m, b, L, n, [epoch, txn_id,
                            ite(txn_state == PREPARE_COMMIT, COMMIT_MARKER, ABORT_MARKER)])
        b.set(p_wait, epoch)
        advance_hw(m, b, L)


def invariants(m: Model) -> None:
    spec, M, T = m.spec, m.M, m.p.T
    log, txn, ctl, leader, hw = m.log, m.txn, m.ctl, m.leader, m.hw
    txn_id, txn_state, outcome = m.txn_id, m.txn_state, m.outcome
    spec.invariant("LsoBelowHw",
                   implies(leader != NONE, first_unstable(spec, leader) <= hw[leader]),
                   "the leader's first unstable offset (its LSO before Kafka's cap by the HW) "
                   "is at most its HW")

    def complete(t: Value) -> Expr:
        return (t + 1 < txn_id) | ((t + 1 == txn_id) & (txn_state == IDLE))

    def marker_of(L: Value, t: Value, kind: Value) -> Expr:
        return exists(M, lambda j: (log[L, j] != 0) & (txn[L, j] == t + 1)
                      & (ctl[L, j] == kind), "j")

    spec.invariant("MarkersSurvive", implies(leader != NONE, forall(T, lambda t: implies(
        complete(t) & exists(M, lambda k: (log[leader, k] != 0) & (txn[leader, k] == t + 1)
                             & (ctl[leader, k] == DATA), "k"),
        ite(outcome[t] == COMMITTED, marker_of(leader, t, COMMIT_MARKER),
            marker_of(leader, t, ABORT_MARKER))), "t")),
        "the leader's log holds the marker of every completed transaction it has records of")
    if m.p.consumers:
        cret = m.cret
        spec.invariant("ReadCommittedIsolation", forall(m.p.consumers, lambda c: forall(
            M, lambda k: forall(T, lambda t: implies(cret[c, k] == t + 1,
                                                     outcome[t] == COMMITTED), "t"), "k"),
            "c"), "a consumer never returns a record of an aborted or open transaction")


def reachables(m: Model) -> None:
    spec, M, C = m.spec, m.M, m.p.consumers
    log, ctl, txn, leader, hw = m.log, m.ctl, m.txn, m.leader, m.hw

    def marker_below_hw(kind: Value) -> Expr:
        return (leader != NONE) & exists(M, lambda k: (k < hw[leader]) & (log[leader, k] != 0)
                                         & (ctl[leader, k] == kind), "k")

    spec.reachable("TxnCommitted", marker_below_hw(COMMIT_MARKER),
                   "a commit marker is below the leader's HW")
    spec.reachable("TxnAborted", marker_below_hw(ABORT_MARKER),
                   "an abort marker is below the leader's HW")
    spec.reachable("LsoBehindHw", (leader != NONE) & (lso(spec, leader) < hw[leader]),
                   "an unstable transaction holds the LSO below the HW")
    if not C:
        return
    cread, cret = m.cread, m.cret

    def aborted_read(c: Value, k: Value) -> Expr:
        return (cread[c, k] != 0) & (ctl[leader, k] == DATA) \
            & (log[leader, k] == cread[c, k]) & aborted(m, leader, txn[leader, k])
    if read_committed(m):
        spec.reachable("AbortedRecordSkipped", (leader != NONE) & exists(
            C, lambda c: exists(M, lambda k: aborted_read(c, k) & (cret[c, k] == 0),
                                "k"), "c"),
            "a read_committed consumer passed over a record of an aborted transaction")
    else:
        spec.reachable("AbortedRecordReturned", (leader != NONE) & exists(
            C, lambda c: exists(M, lambda k: aborted_read(c, k) & (cret[c, k] != 0),
                                "k"), "c"),
            "a read_uncommitted consumer returned a record of an aborted transaction")
