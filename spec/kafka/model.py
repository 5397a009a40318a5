"""The base replication model of docs/model.md, stated in the spec language, and the knobs of
docs/kafka-model.md (consumers, producer retries and idempotence, the log start offset,
transactions and the LSO, ISR shrink by lag; power loss, the KRaft controller, KIP-320 fencing,
KIP-966 eligible leader replicas and unclean recovery).

``build(params)`` returns the validated Spec for one configuration. The knobs (truncation, ISR
expansion, acks, min.insync.replicas, unclean election, and those of docs/kafka-model.md) select
which statements an action has; every backend then reads the same objects. A knob that is off
declares nothing: no variable, action, property or statement, so that the base model (its
layout, instance numbering, fingerprints and counts) is exactly what it was.
"""

from __future__ import annotations

from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    Block,
    Spec,
    count,
    exists,
    forall,
    implies,
    ite,
    max_,
    max_over,
    min_,
    min_over,
    prime,
)
from hwcheck.spec.types import SetOf

NONE = -1

# The transactional producer's state (txnState) with --transactions.
IDLE, OPEN, PREPARE_COMMIT, PREPARE_ABORT = 0, 1, 2, 3
# What a record is (ctl) with --transactions: data, or a commit or abort marker.
DATA, COMMIT_MARKER, ABORT_MARKER = 0, 1, 2
# The coordinator's decision for a transaction (the ghost outcome).
UNDECIDED, COMMITTED, ABORTED = 0, 1, 2

# The properties of each part of the model, in declaration order: one home for the names that
# scenarios expect verdicts for.
BASE_INVARIANTS = ("HwBelowLeo", "LeaderInIsr", "CommittedNotLost", "AckedNotLost",
                   "LogsMatchBelowHw")
BASE_ACTION_PROPERTIES = ("LeaderHwMonotonic", "EpochMonotonic")
BASE_REACHABLES = ("RecordCommitted", "LeaderChanged", "FollowerTruncated")
LIVENESS = ("ElectionAfterCrash", "AckedReplicated", "HwCatchesUp", "LogsConverge")


def property_names(p: Params) -> tuple[str, ...]:
    """Every invariant and action property the model of ``p`` declares."""
    names = list(BASE_INVARIANTS)
    if p.consumers:
        names += ["MonotonicReads", "ReadYourWrites"]
    if p.producer_retries:
        names += ["NoDuplicates"]
    if p.log_start_offset:
        names += ["LogStartBelowHw", "LowWatermarkBelowHw"]
    if p.transactions:
        names += ["LsoBelowHw", "MarkersSurvive"]
        if p.consumers:
            names += ["ReadCommittedIsolation"]
    if p.elr:
        names += ["ElrMembersComplete"]
    names += list(BASE_ACTION_PROPERTIES)
    if p.kraft:
        names += ["LeaderEpochFenced"]
    if p.consumers:
        names += ["ReadsBelowHw"]
    if p.liveness:
        names += list(LIVENESS)
    return tuple(names)


def reachable_names(p: Params) -> tuple[str, ...]:
    """Every reachability check the model of ``p`` declares."""
    names = list(BASE_REACHABLES)
    if p.consumers:
        names += ["ConsumerRead"]
    if p.producer_retries:
        names += ["ProducerRetried"]
        if p.idempotence:
            names += ["DuplicateRefused"]
    if p.log_start_offset:
        names += ["LogStartMoved", "FollowerRestartedAtLogStart"]
    if p.transactions:
        names += ["TxnCommitted", "TxnAborted", "LsoBehindHw"]
        if p.consumers:
            names += ["AbortedRecordSkipped" if p.isolation == "read-committed"
                      else "AbortedRecordReturned"]
    if p.unflushed_loss:
        names += ["PowerLossLostRecords"]
    if p.kraft:
        names += ["ZombieLeader"]
    if p.unclean_recovery != "none":
        names += ["RecoveredUnclean"]
    if p.elr:
        names += ["ElectedFromElr"]
    if p.lag is not None:
        names += ["IsrShrunk"]
    return tuple(names)


def build(p: Params) -> Spec:
    R, M, E = p.R, p.M, p.E
    OOR = E + 1  # respRec value for an "offset out of range" response
    LS = p.log_start_offset
    RETRY, IDEM = p.producer_retries, p.idempotence
    TX, T = p.transactions, p.T
    C = p.consumers
    FAIR = "weak" if p.liveness else None  # the fairness the liveness properties assume
    READ_COMMITTED = TX and p.isolation == "read-committed"
    RESTART = E + 2  # with LS: respRec of "below the leader's log start offset: start there"
    UL, K, ELR = p.unflushed_loss, p.kraft, p.elr
    REC = p.unclean_recovery == "balanced"
    FENCE = p.fencing == "kip-320"
    spec = Spec("KafkaHW", p.as_dict())

    log = spec.array("log", (R, M), 0, E, "leader epoch of the record at each offset; 0 = none")
    hw = spec.array("hw", (R,), 0, M, "high watermark (persisted)")
    alive = spec.set_of("alive", R, "brokers that are up")
    leader = spec.scalar("leader", NONE, R - 1, "the partition leader; -1 = none")
    epoch = spec.scalar("epoch", 1, E, "the current leader epoch")
    isr = spec.set_of("isr", R, "the in-sync replica set")
    synced = spec.set_of("synced", R, "replicas that truncated for the current leader")
    if K:  # a deposed leader that has not learned it yet keeps its own records
        rleo = spec.array("rleo", (R, R), 0, M, "rleo[L][f]: broker L's record of follower f's "
                                                "LEO while L believes it leads")
    else:
        rleo = spec.array("rleo", (R,), 0, M, "the leader's record of each follower's LEO")
    pending = spec.set_of("pending", R, "followers with a fetch response in flight")
    if LS:
        resp_rec = spec.array("respRec", (R,), 0, RESTART,
                              f"record in flight; {OOR} = out of range (above the leader's LEO), "
                              f"{RESTART} = below the leader's log start offset")
    else:
        resp_rec = spec.array("respRec", (R,), 0, OOR, f"record in flight; {OOR} = out of range")
    resp_hw = spec.array("respHw", (R,), 0, M, "leader HW carried by the response in flight")
    committed = spec.array("committed", (M,), 0, E, "ghost: record at k when k was committed")
    acked = spec.array("acked", (M,), 0, E, "ghost: record at k the producer was told is written")

    # -- the knobs' variables (declared only when the knob is on) --------------------------------
    # A record is (offset, epoch) in the base model; with retries it also carries the producer's
    # sequence number, with transactions its transaction and kind. Each such cell has its twin
    # in the fetch response in flight: ``payload`` pairs them.
    payload: list = []
    if LS:
        log_start = spec.array("logStart", (R,), 0, M,
                               "log start offset: the records below it are deleted (persisted)")
        resp_ls = spec.array("respLs", (R,), 0, M,
                             "leader log start offset carried by the response in flight")
    if RETRY:
        seq = spec.array("seq", (R, M), 0, M,
                         "producer sequence number of the record at each offset; 0 = none")
        resp_seq = spec.array("respSeq", (R,), 0, M, "sequence number of the record in flight")
        payload.append((seq, resp_seq))
        p_seq = spec.scalar("pSeq", 0, M, "the sequence number of the producer's last record")
    if TX:
        txn = spec.array("txn", (R, M), 0, T, "transaction of the record at each offset")
        ctl = spec.array("ctl", (R, M), 0, 2,
                         "record kind: 0 data, 1 commit marker, 2 abort marker")
        resp_txn = spec.array("respTxn", (R,), 0, T, "transaction of the record in flight")
        resp_ctl = spec.array("respCtl", (R,), 0, 2, "kind of the record in flight")
        payload += [(txn, resp_txn), (ctl, resp_ctl)]
        txn_id = spec.scalar("txnId", 0, T, "the producer's current transaction; 0 = none yet")
        txn_state = spec.scalar("txnState", 0, 3, "0 idle, 1 open, 2 prepare-commit, "
                                                  "3 prepare-abort (markers being written)")
        outcome = spec.array("outcome", (T,), 0, 2,
                             "ghost: the coordinator's decision: 0 none, 1 commit, 2 abort")
    if RETRY or TX:
        p_wait = spec.scalar("pWait", 0, E, "the epoch of the leader the producer awaits an "
                                            "answer from; 0 = none awaited")
    if C:
        cpos = spec.array("cpos", (C,), 0, M, "each consumer's fetch position")
        cread = spec.array("cread", (C, M), 0, E,
                           "ghost: the record (its epoch) each consumer fetched at each offset")
        if TX:
            cret = spec.array("cret", (C, M), 0, T, "ghost: the transaction of the data record "
                                                    "each consumer returned at each offset")

    # Power loss (docs/kafka-model.md): what a crash of the machine keeps.
    if UL:
        flushed = spec.array("flushed", (R,), 0, M,
                             "each replica's log is on disk below this offset (its last flush); "
                             "the records from there on are in the page cache only")
    # The KRaft controller: its partition state (leader, epoch, isr above), its broker
    # registrations, and each broker's view of the partition state apart.
    if K:
        fenced = spec.set_of("fenced", R, "controller: brokers whose registration is fenced")
        b_leader = spec.array("bLeader", (R,), NONE, R - 1,
                              "the leader in the partition state each broker has applied; "
                              "-1 = none")
        b_epoch = spec.array("bEpoch", (R,), 0, E, "the leader epoch each broker has applied; "
                                                  "0 = none yet (restarted)")
        spec.declare("lIsr", SetOf(R), over=(R,),
                     doc="the ISR of a broker that believes it leads (its view); empty for "
                         "the others")
        l_isr = spec.var("lIsr")
        if ELR:
            elr = spec.set_of("elr", R, "controller: the eligible leader replicas (KIP-966)")
            if UL:
                unclean = spec.set_of("unclean", R, "brokers down after an unclean shutdown "
                                                    "(power loss): their registration says so")
            if REC:
                last_elr = spec.set_of("lastKnownElr", R,
                                       "controller: ELR members that left it by an unclean "
                                       "shutdown (KIP-966's LastKnownELR)")
    elr_vars = ([elr] if ELR else []) + ([last_elr] if REC else [])

    # -- helpers (macros: they build expressions and statements) -------------------------------

    def leo(r) -> object:
        if LS:  # the records below the log start offset are deleted (their cells are 0)
            return log_start[r] + count(M, lambda k: log[r, k] != 0, "k")
        return count(M, lambda k: log[r, k] != 0, "k")

    def isr_size():
        return count(R, lambda r: isr[r], "r")

    # What leader L works with: with the KRaft controller, its own view and records.
    def rl(L, f):
        return rleo[L, f] if K else rleo[f]

    def in_isr(L, f):
        return l_isr[L, f] if K else isr[f]

    def isr_size_of(L):
        return count(R, lambda r: in_isr(L, r), "r")

    def current(L):
        """KRaft: the controller accepts L's AlterPartition: L leads in the controller's current
        leader epoch and proposes from the ISR the controller has (the partition epoch; see
        docs/kafka-model.md)."""
        return (leader == L) & (epoch == b_epoch[L]) & forall(
            R, lambda s: isr[s] == l_isr[L, s], "s")

    def update_elr(b: Block, joined) -> None:
        """KIP-966 after an ISR change (Kafka's PartitionChangeBuilder): with the ISR at min ISR
        or more the ELR is empty; below, the ELR keeps its members, gains ``joined(r)`` (the
        replicas that just left the ISR) and never holds an ISR member."""
        size = b.let("isrSize", isr_size())
        with b.each(R, "r") as r:
            b.set(elr[r], ite(size >= p.min_isr, False, (elr[r] | joined(r)) & ~isr[r]))
            if REC:  # the HW may move again: no last known ELR member can be the best log
                b.set(last_elr[r], ite(size >= p.min_isr, False, last_elr[r]))

    def end_offset(lg, leo_l, e):
        """The first offset of log lg holding an epoch > e; its LEO if none."""
        return min_over(M, lambda k: k, lambda k: (k < leo_l) & (log[lg, k] > e), leo_l, "k")

    def truncate(b: Block, r, n) -> None:
        with b.each(M, "k") as k:
            b.set(log[r, k], ite(k < n, log[r, k], 0))
            for cell, _ in payload:
                b.set(cell[r, k], ite(k < n, cell[r, k], 0))
        b.set(hw[r], min_(hw[r], n))
        if UL:
            b.set(flushed[r], min_(flushed[r], n))
        if LS:  # a truncation below the log start offset starts the log there (Kafka truncateTo)
            b.set(log_start[r], min_(log_start[r], n))

    def append(b: Block, L, n, values) -> None:
        """Write a record at offset n of L's log: its epoch, then its payload cells in order."""
        b.set(log[L, n], values[0])
        for (cell, _), v in zip(payload, values[1:]):
            b.set(cell[L, n], v)

    def first_unstable(L):
        """With transactions: the first offset of L's log holding a data record of a transaction
        that is open on L (no marker) or whose marker is not below L's HW yet (Kafka's
        ProducerStateManager: ongoing and unreplicated transactions); L's HW if none."""
        def stable(t):
            return exists(M, lambda j: (j < hw[L]) & (log[L, j] != 0) & (ctl[L, j] != DATA)
                          & (txn[L, j] == t), "j")
        return min_over(M, lambda k: k, lambda k: (log[L, k] != 0) & (ctl[L, k] == DATA)
                        & ~stable(txn[L, k]), hw[L], "k")

    def lso(L):
        """The last stable offset: the first unstable offset, capped by the HW as Kafka does."""
        return min_(first_unstable(L), hw[L])

    def read_bound(L):
        """Where a consumer's reads stop: the LSO for read_committed, else the HW."""
        return lso(L) if READ_COMMITTED else hw[L]

    def aborted(L, t):
        """L's log holds an abort marker of transaction t (Kafka's aborted-transaction index)."""
        return exists(M, lambda j: (log[L, j] != 0) & (ctl[L, j] == ABORT_MARKER)
                      & (txn[L, j] == t), "j")

    def advance_hw(b: Block, L) -> None:
        """Raise the leader's HW to the least LEO over the ISR; record what becomes committed."""
        leo_l = b.let("leoL", leo(L))
        low = min_over(R, lambda f: rl(L, f), lambda f: in_isr(L, f) & (f != L), leo_l, "f")
        if ELR:  # KIP-966: the HW advances only while the ISR has min ISR members
            new = b.let("newHw", ite(isr_size_of(L) >= p.min_isr,
                                     max_(hw[L], min_(leo_l, low)), hw[L]))
        else:
            new = b.let("newHw", max_(hw[L], min_(leo_l, low)))
        old = b.let("oldHw", hw[L])
        ack_all = b.let("ackAll", isr_size_of(L) >= p.min_isr) if p.acks == "all" else None
        with b.each(M, "k") as k:
            with b.when((old <= k) & (k < new)):
                with b.when(committed[k] == 0):
                    b.set(committed[k], log[L, k])
                if ack_all is not None:
                    with b.when(ack_all & (acked[k] == 0)):
                        b.set(acked[k], log[L, k])
        b.set(hw[L], new)
        if RETRY:  # the producer's answer: every copy of its record in L's log is below the HW
            covered = ~exists(M, lambda k: (new <= k) & (log[L, k] != 0) & (seq[L, k] == p_seq),
                              "k")
            with b.when((p_wait == epoch) & ack_all & covered):
                b.set(p_wait, 0)
        if TX:  # the answer to a data send or to a marker written in this epoch
            covered = ~exists(M, lambda k: (new <= k) & (log[L, k] == epoch)
                              & (txn[L, k] == txn_id), "k")
            with b.when((p_wait == epoch) & ack_all & covered):
                b.set(p_wait, 0)
                with b.when(txn_state >= PREPARE_COMMIT):
                    b.set(txn_state, IDLE)

    def truncation_point(b: Block, f, L):
        lf = b.let("lf", leo(f))
        if p.truncation == "hw":
            return min_(lf, hw[f])
        leo_l = b.let("leoL", leo(L))
        if p.truncation == "leader-epoch":
            if LS:  # no record left above the log start offset: nothing to truncate
                last = b.let("last", ite(lf > log_start[f], log[f, lf - 1], 0))
                return ite(last == 0, lf, min_(lf, end_offset(L, leo_l, last)))
            last = b.let("last", ite(lf > 0, log[f, lf - 1], 0))
            return ite(last == 0, 0, min_(lf, end_offset(L, leo_l, last)))
        # kip-279: walk back epoch by epoch to the largest common one. Each round that does not
        # stop lowers n, so M + 1 rounds always reach the fixed point.
        n = b.let("n", lf)
        done = b.let("done", False)
        with b.each(M + 1, "round"):
            with b.when(~done):
                with b.when((n <= log_start[f]) if LS else (n == 0)):
                    b.assign(done, True)
                with b.otherwise():
                    last = b.let("last", log[f, n - 1])
                    common = b.let("common", max_over(
                        M, lambda k: log[L, k],
                        lambda k: (k < leo_l) & (log[L, k] >= 1) & (log[L, k] <= last), 0, "k"))
                    with b.when(common == 0):
                        if LS:
                            # The leader's epoch cache has no epoch <= last (they were deleted
                            # with the log's start): it answers with the start of the first
                            # later epoch (LeaderEpochFileCache.endOffsetFor). Without a log
                            # start offset this is 0, as below.
                            b.assign(n, min_(n, end_offset(L, leo_l, last)))
                        else:
                            b.assign(n, 0)
                        b.assign(done, True)
                    with b.otherwise():
                        end_l = b.let("endL", end_offset(L, leo_l, common))
                        with b.when(common == last):
                            b.assign(n, min_(n, end_l))
                            b.assign(done, True)
                        with b.otherwise():
                            end_f = min_over(M, lambda k: k,
                                             lambda k: (k < n) & (log[f, k] > common), n, "k")
                            b.assign(n, min_(end_l, end_f))
        return n

    # -- initial state ---------------------------------------------------------------------------

    def init(b: Block) -> None:
        with b.each(R, "r") as r:
            b.set(alive[r], True)
            b.set(isr[r], True)
            b.set(synced[r], True)
        b.set(leader, 0)
        b.set(epoch, 1)
        if K:
            with b.each(R, "r") as r:
                b.set(b_leader[r], 0)
                b.set(b_epoch[r], 1)
                b.set(l_isr[0, r], True)

    spec.initial(init)

    # -- actions ---------------------------------------------------------------------------------

    ghosts = [committed, acked]
    cells = [c for c, _ in payload]
    resp_cells = [c for _, c in payload]
    producer = ([p_seq] if RETRY else []) + ([txn_id, txn_state, outcome] if TX else []) + \
        ([p_wait] if RETRY or TX else [])

    if K:
        @spec.action("Produce", over=[R], modifies=[log, hw, *ghosts])
        def produce_kraft(b: Block, L) -> None:
            """A producer's record reaches broker L, which believes it leads (a leader deposed
            by the controller that has not learned it yet too), and L appends it in the epoch
            it knows."""
            b.require(alive[L], b_leader[L] == L, leo(L) < M)
            if p.acks == "all":
                b.require(isr_size_of(L) >= p.min_isr)
            n = b.let("n", leo(L))
            b.set(log[L, n], b_epoch[L])
            if p.acks == "1":
                with b.when(acked[n] == 0):
                    b.set(acked[n], b_epoch[L])
            advance_hw(b, L)
    else:
        @spec.action("Produce", modifies=[log, hw, *ghosts, *cells, *producer])
        def produce(b: Block) -> None:
            """The leader appends a producer record in its epoch. With retries or transactions the
            one producer sends its next record once the previous one is answered (one request in
            flight); with transactions the record belongs to the open transaction, or begins the
            next one."""
            b.require(leader != NONE, leo(leader) < M)
            if p.acks == "all":
                b.require(isr_size() >= p.min_isr)
            if RETRY:
                b.require(p_wait == 0, p_seq < M)
            if TX:
                b.require(p_wait == 0, (txn_state == OPEN) | ((txn_state == IDLE) & (txn_id < T)))
            L = b.let("L", leader)
            n = b.let("n", leo(L))
            b.set(log[L, n], epoch)
            if RETRY:
                b.set(p_seq, p_seq + 1)
                b.set(seq[L, n], p_seq)
                b.set(p_wait, epoch)
            if TX:
                with b.when(txn_state == IDLE):
                    b.set(txn_id, txn_id + 1)
                    b.set(txn_state, OPEN)
                b.set(txn[L, n], txn_id)
                b.set(ctl[L, n], DATA)
                b.set(p_wait, epoch)
            if p.acks == "1":
                with b.when(acked[n] == 0):
                    b.set(acked[n], epoch)
            advance_hw(b, L)

    fetch_extra = resp_cells + ([resp_ls] if LS else [])
    durable = [flushed] if UL else []  # what a truncation lowers with the log

    if K:
        @spec.action("FetchRequest", over=[R],
                     modifies=[resp_rec, resp_hw, pending, rleo, isr, l_isr, hw, *ghosts,
                               *elr_vars])
        def fetch_request_kraft(b: Block, f) -> None:
            """Follower f fetches at offset leo(f) from the broker it believes leads, which
            serves it if it believes it leads too (with KIP-320 fencing, only in f's leader
            epoch: else FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH, and f waits for
            metadata). A follower that has caught up joins the ISR by an AlterPartition that
            the controller accepts: L is its current leader, proposes from the current ISR,
            and f is not fenced."""
            b.require(alive[f], b_leader[f] != NONE, b_leader[f] != f, synced[f], ~pending[f])
            b.require(alive[b_leader[f]], b_leader[b_leader[f]] == b_leader[f])
            if FENCE:
                b.require(b_epoch[b_leader[f]] == b_epoch[f])
            L = b.let("L", b_leader[f])
            lf = b.let("lf", leo(f))
            ll = b.let("ll", leo(L))
            with b.when(lf > ll):
                b.set(resp_rec[f], OOR)
                b.set(resp_hw[f], ll)
                b.set(pending[f], True)
            with b.otherwise():
                b.set(rleo[L, f], lf)
                join = ~l_isr[L, f] & (lf >= hw[L])
                if p.isr_expansion == "epoch-start":
                    start = min_over(M, lambda k: k,
                                     lambda k: (k < ll) & (log[L, k] == b_epoch[L]), ll, "k")
                    join = join & (lf >= start)
                with b.when(join & current(L) & ~fenced[f]):
                    b.set(isr[f], True)
                    b.set(l_isr[L, f], True)
                    if ELR:
                        update_elr(b, lambda r: False)
                advance_hw(b, L)
                b.set(resp_rec[f], ite(lf < ll, log[L, lf], 0))
                b.set(resp_hw[f], hw[L])
                b.set(pending[f], True)
    else:
        @spec.action("FetchRequest", over=[R],
                     modifies=[resp_rec, resp_hw, pending, rleo, isr, hw, *ghosts, *fetch_extra,
                               *([p_wait, txn_state] if TX else [p_wait] if RETRY else [])],
                     fairness=FAIR)
        def fetch_request(b: Block, f) -> None:
            """The leader serves follower f's fetch at offset leo(f)."""
            b.require(leader != NONE, f != leader, alive[f], synced[f], ~pending[f])
            L = b.let("L", leader)
            lf = b.let("lf", leo(f))
            ll = b.let("ll", leo(L))

            def serve() -> None:
                with b.when(lf > ll):
                    b.set(resp_rec[f], OOR)
                    b.set(resp_hw[f], ll)
                    b.set(pending[f], True)
                with b.otherwise():
                    b.set(rleo[f], lf)
                    join = ~isr[f] & (lf >= hw[L])
                    if p.isr_expansion == "epoch-start":
                        start = min_over(M, lambda k: k, lambda k: (k < ll) & (log[L, k] == epoch),
                                         ll, "k")
                        join = join & (lf >= start)
                    with b.when(join):
                        b.set(isr[f], True)
                    advance_hw(b, L)
                    b.set(resp_rec[f], ite(lf < ll, log[L, lf], 0))
                    for cell, resp in payload:
                        b.set(resp[f], ite(lf < ll, cell[L, lf], 0))
                    b.set(resp_hw[f], hw[L])
                    if LS:
                        b.set(resp_ls[f], log_start[L])
                    b.set(pending[f], True)

            if LS:
                with b.when(lf < log_start[L]):  # OFFSET_OUT_OF_RANGE: below the leader's log start
                    b.set(resp_rec[f], RESTART)
                    b.set(resp_hw[f], log_start[L])
                    b.set(pending[f], True)
                with b.otherwise():
                    serve()
            else:
                serve()

    @spec.action("FetchResponse", over=[R],
                 modifies=[log, hw, pending, resp_rec, resp_hw, *cells, *fetch_extra, *durable,
                           *([log_start] if LS else [])],
                 fairness=FAIR)
    def fetch_response(b: Block, f) -> None:
        """Follower f applies its fetch response."""
        b.require(pending[f])
        rec = b.let("rec", resp_rec[f])
        rh = b.let("rh", resp_hw[f])
        lf = b.let("lf", leo(f))

        def apply() -> None:
            with b.when(rec != 0):
                b.set(log[f, lf], rec)
                for cell, resp in payload:
                    b.set(cell[f, lf], resp[f])
            if not LS:
                b.set(hw[f], min_(leo(f), rh))
                return
            # Kafka's updateHighWatermark keeps the HW at or above the log start offset; then
            # the follower takes the leader's log start offset (maybeIncrementLogStartOffset),
            # deleting the records below it.
            b.set(hw[f], max_(log_start[f], min_(leo(f), rh)))
            start = b.let("start", max_(log_start[f], resp_ls[f]))
            with b.each(M, "k") as k:
                b.set(log[f, k], ite(k < start, 0, log[f, k]))
                for cell, _ in payload:
                    b.set(cell[f, k], ite(k < start, 0, cell[f, k]))
            b.set(log_start[f], start)

        with b.when(rec == OOR):
            truncate(b, f, min_(lf, rh))
        with b.otherwise():
            if LS:
                with b.when(rec == RESTART):  # truncateFullyAndStartAt(the leader's log start)
                    with b.each(M, "k") as k:
                        b.set(log[f, k], 0)
                        for cell, _ in payload:
                            b.set(cell[f, k], 0)
                    b.set(log_start[f], rh)
                    b.set(hw[f], rh)
                with b.otherwise():
                    apply()
            else:
                apply()
        b.set(pending[f], False)
        b.set(resp_rec[f], 0)
        b.set(resp_hw[f], 0)
        for resp in fetch_extra:
            b.set(resp[f], 0)

    @spec.action("BecomeFollower", over=[R],
                 modifies=[log, hw, synced, *cells, *durable, *([log_start] if LS else [])],
                 fairness=FAIR)
    def become_follower(b: Block, f) -> None:
        """Follower f truncates its log for the current leader before fetching (KRaft: the
        leader it knows; by leader epoch or KIP-279 it asks that leader, which answers if it
        believes it leads, with KIP-320 fencing in f's leader epoch)."""
        if K:
            b.require(alive[f], b_leader[f] != NONE, b_leader[f] != f, ~synced[f])
            if p.truncation != "hw":
                b.require(alive[b_leader[f]], b_leader[b_leader[f]] == b_leader[f])
                if FENCE:
                    b.require(b_epoch[b_leader[f]] == b_epoch[f])
            L = b.let("L", b_leader[f])
        else:
            b.require(leader != NONE, f != leader, alive[f], ~synced[f])
            L = b.let("L", leader)
        n = b.let("cut", truncation_point(b, f, L))
        truncate(b, f, n)
        b.set(synced[f], True)

    if K:
        @spec.action("ShrinkIsr", over=[R, R],
                     modifies=[isr, l_isr, hw, *ghosts, *elr_vars])
        def shrink_isr_kraft(b: Block, L, f) -> None:
            """Broker L, which believes it leads, drops follower f from the ISR by an
            AlterPartition that the controller accepts (L is its current leader and proposes
            from the current ISR; a stale one is rejected and changes nothing). With the ELR,
            f joins it if the ISR falls below min ISR."""
            b.require(alive[L], b_leader[L] == L, f != L, l_isr[L, f])
            if p.lag is not None:
                b.require(leo(L) - rleo[L, f] > p.lag)
            b.require(current(L))
            b.set(isr[f], False)
            b.set(l_isr[L, f], False)
            if ELR:
                update_elr(b, lambda r: r == f)
            advance_hw(b, L)
    else:
        @spec.action("ShrinkIsr", over=[R],
                     modifies=[isr, hw, *ghosts, *([p_wait, txn_state] if TX else
                                                   [p_wait] if RETRY else [])])
        def shrink_isr(b: Block, f) -> None:
            """The leader drops follower f from the ISR (the lag timer is abstracted; with
            --isr-shrink lag:N only a follower more than N records behind)."""
            b.require(leader != NONE, f != leader, isr[f])
            if p.lag is not None:
                b.require(leo(leader) - rleo[f] > p.lag)
            L = b.let("L", leader)
            b.set(isr[f], False)
            advance_hw(b, L)

    def go_down(b: Block, r) -> None:
        """Broker r stops and loses its in-memory state. With the atomic controller a leader
        that stops leaves the partition without one; the KRaft controller learns of it only by
        fencing r."""
        b.set(alive[r], False)
        b.set(synced[r], False)
        b.set(pending[r], False)
        b.set(resp_rec[r], 0)
        b.set(resp_hw[r], 0)
        for resp in fetch_extra:
            b.set(resp[r], 0)
        if K:
            b.set(b_leader[r], NONE)
            b.set(b_epoch[r], 0)
            with b.each(R, "f") as f:
                b.set(l_isr[r, f], False)
                b.set(rleo[r, f], 0)
        else:
            with b.when(leader == r):
                b.set(leader, NONE)
                with b.each(R, "f") as f:
                    b.set(rleo[f], 0)

    down = [alive, synced, pending, resp_rec, resp_hw, *fetch_extra,
            *([b_leader, b_epoch, l_isr, rleo] if K else [leader, rleo])]

    @spec.action("Crash", over=[R], modifies=down)
    def crash(b: Block, r) -> None:
        """Broker r fails and loses its in-memory state; its log and HW survive (with
        --unflushed-loss: the operating system's page cache keeps what is not flushed yet)."""
        b.require(alive[r])
        go_down(b, r)

    @spec.action("Restart", over=[R],
                 modifies=[alive, synced, log, hw, *cells, *durable, *([log_start] if LS else []),
                           *([*elr_vars, unclean] if ELR and UL else [])],
                 fairness=FAIR)
    def restart(b: Block, r) -> None:
        """Broker r comes back; with HW truncation it truncates its log to its HW. With the
        KRaft controller it registers again, once the controller has fenced its old
        registration; with the ELR, a registration after an unclean shutdown removes it from
        the ELR."""
        b.require(~alive[r])
        if K:
            b.require(fenced[r])
            if ELR and UL:
                with b.when(unclean[r]):
                    if REC:
                        b.set(last_elr[r], last_elr[r] | elr[r])
                    b.set(elr[r], False)
                    b.set(unclean[r], False)
        b.set(alive[r], True)
        b.set(synced[r], False)
        if p.truncation == "hw":
            truncate(b, r, b.let("n", min_(leo(r), hw[r])))

    if K:
        @spec.action("Elect", over=[R], modifies=[isr, leader, epoch, *elr_vars])
        def elect_kraft(b: Block, c) -> None:
            """The controller elects c, unfenced, from the ISR (with the ELR: or from the ELR;
            unclean: any unfenced replica when no member of either is; balanced unclean
            recovery: when the ISR and the ELR are empty and every last known ELR member is
            unfenced, the one with the best log) and bumps the epoch. An ELR member elected
            joins the ISR; the brokers learn it from the metadata."""
            b.require(leader == NONE, epoch < E, ~fenced[c])
            eligible = (isr[c] | elr[c]) if ELR else isr[c]
            if REC:  # balanced unclean recovery: the best log of the last known ELR
                def last_epoch(r):
                    n = leo(r)
                    return ite(n > 0, log[r, max_(n - 1, 0)], 0)

                def at_least(a, r):  # a's log is at least r's: (last epoch, LEO) ordered
                    return (last_epoch(a) > last_epoch(r)) | (
                        (last_epoch(a) == last_epoch(r)) & (leo(a) >= leo(r)))

                recovery = ~exists(R, lambda r: isr[r] | elr[r], "r") & last_elr[c] & forall(
                    R, lambda r: implies(last_elr[r], ~fenced[r] & at_least(c, r)), "r")
                eligible = eligible | recovery
                b.require(eligible)
            elif p.unclean:
                b.require(eligible | ~exists(R, lambda r: (isr[r] | elr[r] if ELR else isr[r])
                                             & ~fenced[r], "r"))
            else:
                b.require(eligible)
            clean = b.let("clean", (isr[c] | elr[c]) if ELR else isr[c])
            with b.each(R, "r") as r:
                b.set(isr[r], ite(clean, isr[r] | (r == c), r == c))
            if ELR:
                with b.when(clean):
                    update_elr(b, lambda r: False)
                with b.otherwise():  # an unclean election or recovery leaves no replica eligible
                    with b.each(R, "r") as r:
                        b.set(elr[r], False)
                        if REC:
                            b.set(last_elr[r], False)
            b.set(leader, c)
            b.set(epoch, epoch + 1)
    else:
        @spec.action("Elect", over=[R],
                     modifies=[isr, leader, epoch, rleo, synced, pending, resp_rec, resp_hw, hw,
                               *ghosts, *fetch_extra,
                               *([p_wait, txn_state] if TX else [p_wait] if RETRY else [])],
                     fairness=FAIR)
        def elect(b: Block, c) -> None:
            """The controller elects c from the live ISR (or, unclean, any live replica) and bumps
            the epoch."""
            b.require(leader == NONE, epoch < E, alive[c])
            if p.unclean:
                b.require(isr[c] | ~exists(R, lambda r: isr[r] & alive[r], "r"))
            else:
                b.require(isr[c])
            clean = b.let("clean", isr[c])
            with b.each(R, "r") as r:
                b.set(isr[r], ite(clean, isr[r] & alive[r], r == c))
                b.set(rleo[r], 0)
                b.set(synced[r], r == c)
                b.set(pending[r], False)
                b.set(resp_rec[r], 0)
                b.set(resp_hw[r], 0)
                for resp in fetch_extra:
                    b.set(resp[r], 0)
            b.set(leader, c)
            b.set(epoch, epoch + 1)
            advance_hw(b, c)

    # -- producer retries and idempotence --------------------------------------------------------

    if RETRY:
        @spec.action("Retry", modifies=[log, seq, hw, p_wait, *ghosts])
        def retry(b: Block) -> None:
            """The producer's record was never answered and its leader is gone (crashed or
            replaced): it sends the record again, with the same sequence number, to the new
            leader. With idempotence a leader whose log holds that sequence number already does
            not append it again: it answers once its HW covers the record it has."""
            b.require(leader != NONE, p_wait != 0, p_wait < epoch, isr_size() >= p.min_isr)
            if IDEM:
                b.require(exists(M, lambda k: (log[leader, k] != 0) & (seq[leader, k] == p_seq),
                                 "k") | (leo(leader) < M))
            else:
                b.require(leo(leader) < M)
            L = b.let("L", leader)
            n = b.let("n", leo(L))
            b.set(p_wait, epoch)
            if IDEM:
                dup = b.let("dup", exists(M, lambda k: (log[L, k] != 0) & (seq[L, k] == p_seq),
                                          "k"))
                with b.when(~dup):
                    append(b, L, n, [epoch, p_seq])
            else:
                append(b, L, n, [epoch, p_seq])
            advance_hw(b, L)

    # -- the log start offset ----------------------------------------------------------------

    if LS:
        @spec.action("DeleteRecords", modifies=[log, log_start])
        def delete_records(b: Block) -> None:
            """The leader advances its log start offset by one record, never past its HW
            (retention or DeleteRecords; a larger jump is several steps)."""
            b.require(leader != NONE, log_start[leader] < hw[leader])
            L = b.let("L", leader)
            s = b.let("s", log_start[L])
            b.set(log[L, s], 0)
            b.set(log_start[L], s + 1)

    # -- transactions ------------------------------------------------------------------------

    if TX:
        @spec.action("TxnCommit", modifies=[txn_state, outcome])
        def txn_commit(b: Block) -> None:
            """The producer commits its open transaction once every record it sent is answered
            (EndTxn): the coordinator decides commit and starts writing the markers."""
            b.require(txn_state == OPEN, txn_id >= 1, p_wait == 0)
            b.set(txn_state, PREPARE_COMMIT)
            b.set(outcome[txn_id - 1], COMMITTED)

        @spec.action("TxnAbort", modifies=[txn_state, outcome, p_wait])
        def txn_abort(b: Block) -> None:
            """The producer (or the coordinator, on a timeout or a failed send) aborts the open
            transaction: the coordinator decides abort and starts writing the markers."""
            b.require(txn_state == OPEN, txn_id >= 1)
            b.set(txn_state, PREPARE_ABORT)
            b.set(outcome[txn_id - 1], ABORTED)
            b.set(p_wait, 0)

        @spec.action("WriteMarker", modifies=[log, hw, txn, ctl, p_wait, txn_state, *ghosts])
        def write_marker(b: Block) -> None:
            """The coordinator writes the decided marker to the leader (acks=all); if the leader
            it wrote to is gone before answering, it writes the marker again to the new one."""
            b.require(leader != NONE, txn_state >= PREPARE_COMMIT,
                      (p_wait == 0) | (p_wait < epoch), leo(leader) < M,
                      isr_size() >= p.min_isr)
            L = b.let("L", leader)
            n = b.let("n", leo(L))
            append(b, L, n, [epoch, txn_id,
                             ite(txn_state == PREPARE_COMMIT, COMMIT_MARKER, ABORT_MARKER)])
            b.set(p_wait, epoch)
            advance_hw(b, L)

    # -- consumers -----------------------------------------------------------------------------

    if C:
        @spec.action("Consume", over=[C], modifies=[cpos, cread, *([cret] if TX else [])])
        def consume(b: Block, c) -> None:
            """Consumer c fetches the record at its position from the leader, below the HW (the
            LSO for read_committed), and moves past it. With transactions, markers are never
            returned, and a read_committed consumer drops the data records of aborted
            transactions. With a log start offset, a position below it is out of range and the
            consumer restarts at the log start (auto.offset.reset=earliest)."""
            b.require(leader != NONE)
            if LS:
                b.require((cpos[c] < log_start[leader]) | (cpos[c] < read_bound(leader)))
            else:
                b.require(cpos[c] < read_bound(leader))
            L = b.let("L", leader)
            pos = b.let("pos", cpos[c])

            def read() -> None:
                b.set(cread[c, pos], log[L, pos])
                if TX:
                    returned = ctl[L, pos] == DATA
                    if READ_COMMITTED:
                        returned = returned & ~aborted(L, txn[L, pos])
                    with b.when(returned):
                        b.set(cret[c, pos], txn[L, pos])
                b.set(cpos[c], pos + 1)

            if LS:
                with b.when(pos < log_start[L]):
                    b.set(cpos[c], log_start[L])
                with b.otherwise():
                    read()
            else:
                read()

    # -- power loss ----------------------------------------------------------------------------

    if UL:
        @spec.action("Flush", over=[R], modifies=[flushed])
        def flush(b: Block, r) -> None:
            """Broker r's log reaches the disk (a flush: log.flush.interval, a segment roll, the
            operating system's writeback; a clean shutdown flushes before it stops)."""
            b.require(alive[r], flushed[r] < leo(r))
            b.set(flushed[r], leo(r))

        @spec.action("PowerLoss", over=[R],
                     modifies=[*down, log, hw, *cells, *durable,
                               *([unclean] if K and ELR else [])])
        def power_loss(b: Block, r) -> None:
            """Broker r's machine loses power: it stops as in a crash, and its log loses the
            records past its last flush (Kafka acknowledges without fsync)."""
            b.require(alive[r])
            go_down(b, r)
            truncate(b, r, b.let("n", flushed[r]))
            if K and ELR:
                b.set(unclean[r], True)

    # -- the KRaft controller: registrations and metadata propagation -------------------------

    if K:
        @spec.action("FenceBroker", over=[R], modifies=[fenced, isr, leader,
                                                        *elr_vars])
        def fence_broker(b: Block, r) -> None:
            """The controller fences broker r: its heartbeats stopped (it is down, or cut off
            from the controller while it runs on). r leaves the ISR, unless it is the last
            member (with the ELR always, joining the ELR if the ISR falls below min ISR); if r
            leads, the partition has no leader until the controller elects one."""
            b.require(~fenced[r])
            b.set(fenced[r], True)
            if ELR:
                was = b.let("was", isr[r])
                b.set(isr[r], False)
                update_elr(b, lambda s: (s == r) & was)
            else:
                with b.when(exists(R, lambda s: isr[s] & (s != r), "s")):
                    b.set(isr[r], False)
            with b.when(leader == r):
                b.set(leader, NONE)

        @spec.action("UnfenceBroker", over=[R], modifies=[fenced], fairness=FAIR)
        def unfence_broker(b: Block, r) -> None:
            """The controller unfences broker r: it runs, heartbeats, and has caught up with
            the partition state."""
            b.require(alive[r], fenced[r], b_leader[r] == leader, b_epoch[r] == epoch)
            b.set(fenced[r], False)

        @spec.action("LearnMetadata", over=[R],
                     modifies=[b_leader, b_epoch, l_isr, rleo, synced, pending, resp_rec,
                               resp_hw, hw, *ghosts],
                     fairness=FAIR)
        def learn_metadata(b: Block, r) -> None:
            """Broker r applies the controller's latest partition state (metadata propagation:
            until then it acts on the state it has). On a new leader or epoch it drops its
            fetch in flight and, as a follower, truncates again before it fetches; as the
            leader it starts afresh with the ISR and computes its HW."""
            moved = (b_leader[r] != leader) | (b_epoch[r] != epoch)
            b.require(alive[r], moved | ((leader == r) & exists(
                R, lambda s: isr[s] != l_isr[r, s], "s")))
            new = b.let("moved", moved)
            b.set(b_leader[r], leader)
            b.set(b_epoch[r], epoch)
            with b.each(R, "s") as s_:
                b.set(l_isr[r, s_], (leader == r) & isr[s_])
                b.set(rleo[r, s_], ite(new | (leader != r), 0, rleo[r, s_]))
            with b.when(new):
                b.set(synced[r], leader == r)
                b.set(pending[r], False)
                b.set(resp_rec[r], 0)
                b.set(resp_hw[r], 0)
            with b.when(leader == r):
                advance_hw(b, r)

    # -- properties ------------------------------------------------------------------------------

    def above_start(r, k):
        """Offset k of replica r's log is not deleted (always, without a log start offset)."""
        return (k >= log_start[r]) if LS else None

    def only_above(r, k, cond):
        s = above_start(r, k)
        return cond if s is None else s & cond

    spec.invariant("HwBelowLeo", forall(R, lambda r: hw[r] <= leo(r), "r"),
                   "every replica's HW is at most its LEO")
    spec.invariant("LeaderInIsr", implies(leader != NONE, isr[leader]),
                   "the leader is in the ISR")
    # With the KRaft controller the leader of record may be down (the controller has not fenced
    # it yet): what is lost is what a leader that runs does not hold.
    serving = ((leader != NONE) & alive[leader]) if K else (leader != NONE)
    spec.invariant("CommittedNotLost", implies(serving, forall(
        M, lambda k: implies(only_above(leader, k, committed[k] != 0),
                             log[leader, k] == committed[k]), "k")),
        "the leader's log holds every committed record" + (" above its log start offset"
                                                           if LS else ""))
    spec.invariant("AckedNotLost", implies(serving, forall(
        M, lambda k: implies(only_above(leader, k, acked[k] != 0),
                             log[leader, k] == acked[k]), "k")),
        "the leader's log holds every acknowledged record" + (" above its log start offset"
                                                              if LS else ""))
    if LS:
        matching = forall(R, lambda a: forall(R, lambda c: implies(
            a < c, forall(M, lambda k: implies(
                (k < hw[a]) & (k < hw[c]) & (k >= log_start[a]) & (k >= log_start[c]),
                log[a, k] == log[c, k]), "k")), "b"), "a")
    else:
        matching = forall(R, lambda a: forall(R, lambda c: implies(
            a < c, forall(M, lambda k: implies((k < hw[a]) & (k < hw[c]),
                                               log[a, k] == log[c, k]), "k")), "b"), "a")
    spec.invariant("LogsMatchBelowHw", matching,
                   "any two replicas agree on every offset below both their HWs"
                   + (" that both still hold" if LS else ""))

    if C:
        spec.invariant("MonotonicReads", implies(leader != NONE, forall(C, lambda c: forall(
            M, lambda k: implies(only_above(leader, k, cread[c, k] != 0),
                                 log[leader, k] == cread[c, k]), "k"), "c")),
            "every record a consumer has read is still at its offset in the leader's log"
            + (" (above its log start offset)" if LS else ""))
        spec.invariant("ReadYourWrites", implies(leader != NONE, forall(
            M, lambda k: implies(only_above(leader, k, acked[k] != 0), k < hw[leader]), "k")),
            "every acknowledged record is below the leader's HW (readable by a consumer)")
    if RETRY:
        spec.invariant("NoDuplicates", implies(leader != NONE, forall(M, lambda j: forall(
            M, lambda k: implies((j < k) & (k < hw[leader]), seq[leader, j] != seq[leader, k]),
            "k"), "j")),
            "no producer record is at two offsets of the leader's log below its HW")
    if LS:
        spec.invariant("LogStartBelowHw", forall(R, lambda r: log_start[r] <= hw[r], "r"),
                       "every replica's log start offset is at most its HW")
        spec.invariant("LowWatermarkBelowHw", implies(leader != NONE, min_over(
            R, lambda r: log_start[r], lambda r: r >= 0, 0, "r") <= hw[leader]),
            "the low watermark (least log start offset over the replicas) is at most the "
            "leader's HW")
    if TX:
        spec.invariant("LsoBelowHw",
                       implies(leader != NONE, first_unstable(leader) <= hw[leader]),
                       "the leader's first unstable offset (its LSO before Kafka's cap by the HW) "
                       "is at most its HW")

        def complete(t):
            return (t + 1 < txn_id) | ((t + 1 == txn_id) & (txn_state == IDLE))

        def marker_of(L, t, kind):
            return exists(M, lambda j: (log[L, j] != 0) & (txn[L, j] == t + 1)
                          & (ctl[L, j] == kind), "j")

        spec.invariant("MarkersSurvive", implies(leader != NONE, forall(T, lambda t: implies(
            complete(t) & exists(M, lambda k: (log[leader, k] != 0) & (txn[leader, k] == t + 1)
                                 & (ctl[leader, k] == DATA), "k"),
            ite(outcome[t] == COMMITTED, marker_of(leader, t, COMMIT_MARKER),
                marker_of(leader, t, ABORT_MARKER))), "t")),
            "the leader's log holds the marker of every completed transaction it has records of")
        if C:
            spec.invariant("ReadCommittedIsolation", forall(C, lambda c: forall(M, lambda k: forall(
                T, lambda t: implies(cret[c, k] == t + 1, outcome[t] == COMMITTED), "t"), "k"),
                "c"), "a consumer never returns a record of an aborted or open transaction")

    if ELR:
        def complete(r):
            return forall(M, lambda k: implies(committed[k] != 0, log[r, k] == committed[k]),
                          "k")
        spec.invariant("ElrMembersComplete", forall(R, lambda r: implies(
            elr[r] & ~unclean[r] if UL else elr[r], complete(r)), "r"),
            "every ELR member holds every committed record" + (" (but one down after a power "
                                                               "loss, not registered again)"
                                                               if UL else ""))
    if p.liveness:
        declare_liveness(spec, p)

    if K:  # a leader is a broker that runs and believes it leads, in the epoch it knows
        def still_leads(r):
            return alive[r] & (b_leader[r] == r) & prime(alive[r]) & (prime(b_leader[r]) == r) \
                & (prime(b_epoch[r]) == b_epoch[r])
        spec.action_property("LeaderHwMonotonic", forall(R, lambda r: implies(
            still_leads(r), prime(hw[r]) >= hw[r]), "r"),
            "while a broker leads in one epoch, its HW never decreases")
    else:
        same_leader = (leader != NONE) & (prime(leader) == leader) & (prime(epoch) == epoch)
        spec.action_property("LeaderHwMonotonic",
                             implies(same_leader, prime(hw[leader]) >= hw[leader]),
                             "while the same leader leads, its HW never decreases")
    spec.action_property("EpochMonotonic", prime(epoch) >= epoch,
                         "the leader epoch never decreases")
    if K:
        def served(f):  # a fetch of f was served: a response is now in flight
            return ~pending[f] & prime(pending[f])

        spec.action_property("LeaderEpochFenced", forall(R, lambda f: implies(
            served(f), b_epoch[max_(b_leader[f], 0)] == b_epoch[f]), "f"),
            "a leader serves a fetch only in the fetcher's leader epoch")
    if C:
        spec.action_property("ReadsBelowHw", forall(C, lambda c: forall(M, lambda k: implies(
            prime(cread[c, k]) != cread[c, k],
            (leader != NONE) & (k < read_bound(leader))), "k"), "c"),
            "a consumer reads only below the leader's HW" + (" (its LSO: read_committed)"
                                                             if READ_COMMITTED else ""))

    spec.reachable("RecordCommitted", exists(M, lambda k: committed[k] != 0, "k"),
                   "a record is committed")
    spec.reachable("LeaderChanged", epoch > 1, "a new leader was elected")
    spec.reachable("FollowerTruncated", exists(R, lambda r: prime(leo(r)) < leo(r), "r"),
                   "a transition where a replica's log gets shorter (records truncated)")
    if C:
        spec.reachable("ConsumerRead", exists(C, lambda c: exists(
            M, lambda k: cread[c, k] != 0, "k"), "c"), "a consumer read a record")
    if RETRY:
        # Only Retry changes pWait while it names an older epoch (it may be answered at once).
        retried = (p_wait != 0) & (p_wait < epoch) & (prime(p_wait) != p_wait)
        spec.reachable("ProducerRetried", retried,
                       "a transition where the producer sends its record again")
        if IDEM:
            spec.reachable("DuplicateRefused", retried & (leader != NONE)
                           & (prime(leo(leader)) == leo(leader)),
                           "a retry that the leader recognises and does not append")
    if LS:
        spec.reachable("LogStartMoved", exists(R, lambda r: (log_start[r] > 0) & (r != leader),
                                               "r"),
                       "a follower's log start offset moved (it learned the leader's)")
        spec.reachable("FollowerRestartedAtLogStart", exists(
            R, lambda f: pending[f] & (resp_rec[f] == RESTART), "f"),
            "a follower below the leader's log start offset is told to start there")
    if TX:
        def marker_below_hw(kind):
            return (leader != NONE) & exists(M, lambda k: (k < hw[leader]) & (log[leader, k] != 0)
                                             & (ctl[leader, k] == kind), "k")

        spec.reachable("TxnCommitted", marker_below_hw(COMMIT_MARKER),
                       "a commit marker is below the leader's HW")
        spec.reachable("TxnAborted", marker_below_hw(ABORT_MARKER),
                       "an abort marker is below the leader's HW")
        spec.reachable("LsoBehindHw", (leader != NONE) & (lso(leader) < hw[leader]),
                       "an unstable transaction holds the LSO below the HW")
        if C:
            def aborted_read(c, k):
                return (cread[c, k] != 0) & (ctl[leader, k] == DATA) \
                    & (log[leader, k] == cread[c, k]) & aborted(leader, txn[leader, k])
            if READ_COMMITTED:
                spec.reachable("AbortedRecordSkipped", (leader != NONE) & exists(
                    C, lambda c: exists(M, lambda k: aborted_read(c, k) & (cret[c, k] == 0),
                                        "k"), "c"),
                    "a read_committed consumer passed over a record of an aborted transaction")
            else:
                spec.reachable("AbortedRecordReturned", (leader != NONE) & exists(
                    C, lambda c: exists(M, lambda k: aborted_read(c, k) & (cret[c, k] != 0),
                                        "k"), "c"),
                    "a read_uncommitted consumer returned a record of an aborted transaction")
    if UL:
        spec.reachable("PowerLossLostRecords", exists(R, lambda r: alive[r] & ~prime(alive[r])
                                                      & (prime(leo(r)) < leo(r)), "r"),
                       "a power loss that dropped records")
    if K:
        spec.reachable("ZombieLeader", exists(R, lambda r: alive[r] & (b_leader[r] == r) & (
            (leader != r) | (epoch != b_epoch[r])), "r"),
            "a broker believes it leads after the controller moved on")
    if REC:
        spec.reachable("RecoveredUnclean", (prime(leader) != leader) & exists(
            R, lambda r: last_elr[r] & (prime(leader) == r), "r"),
            "the controller elected the best log of the last known ELR (unclean recovery)")
    if ELR:
        spec.reachable("ElectedFromElr", (prime(leader) != leader) & exists(
            R, lambda r: elr[r] & (prime(leader) == r), "r"),
            "the controller elected an ELR member")
    if p.lag is not None:
        spec.reachable("IsrShrunk", (leader != NONE) & (prime(leader) == leader) & exists(
            R, lambda f: isr[f] & ~prime(isr[f]), "f"),
            f"the leader dropped a follower more than {p.lag} records behind from the ISR")
    return spec.validate()


def declare_liveness(spec: Spec, p: Params) -> None:
    """The liveness properties (``--liveness``), each on the behaviours whose crashes eventually
    stop (``quiet``: a broker that crashes forever keeps any partition from progressing), under
    weak fairness of fetches, responses, truncation, restarts and elections (produce, crash and
    ISR shrink are not fair: a producer need not produce, a broker need not fail). Lassos that
    exist only because the model ran out of epochs are counted apart (``health.at_bound``)."""
    R, M, E = p.R, p.M, p.E
    log, hw, acked = spec.var("log"), spec.var("hw"), spec.var("acked")
    alive, isr = spec.var("alive"), spec.var("isr")
    leader, epoch = spec.var("leader")[()], spec.var("epoch")[()]
    start = spec.var("logStart") if p.log_start_offset else None

    def leo(r):
        n = count(M, lambda k: log[r, k] != 0, "k")
        return start[r] + n if start is not None else n

    quiet = ["Crash"]
    spec.leads_to("ElectionAfterCrash", (leader == NONE) & (epoch < E), leader != NONE,
                  "a partition without a leader gets one (below the epoch bound)", quiet=quiet)
    spec.always_eventually("AckedReplicated", forall(M, lambda k: implies(
        acked[k] != 0, forall(R, lambda r: implies(alive[r] & isr[r], log[r, k] == acked[k]),
                              "r")), "k"),
        "again and again, every acknowledged record is on every alive ISR member",
        quiet=quiet)
    spec.always_eventually("HwCatchesUp", (leader != NONE) & (hw[leader] == leo(leader)),
                           "again and again, the leader's HW reaches its LEO", quiet=quiet)
    spec.eventually_always("LogsConverge", forall(R, lambda a: forall(R, lambda c: implies(
        alive[a] & alive[c], forall(M, lambda k: log[a, k] == log[c, k], "k")), "c"), "a"),
        "from some point on, the alive replicas' logs are equal", quiet=quiet)
