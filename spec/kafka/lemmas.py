"""Strengthening lemmas for inductive proofs of the model's invariants, and its replica symmetry.

An invariant such as CommittedNotLost holds in every reachable state but is not inductive by
itself: some unreachable states satisfy it and step to a violation. The lemmas below state what
else is true of reachable states (the shape of logs, what a leader's log holds, what a fetch
response in flight carries, ...) so that the conjunction of the invariant and its lemmas is
inductive. They are stated once, for any R, M and E, in the spec language; a prover checks each
of them too (Init implies it, and every action preserves the whole conjunction), so a wrong
lemma gives a counterexample to induction, never a false proof.

They are written for the fixed protocol (truncation kip-279, isr_expansion epoch-start, acks all,
clean election). Under the buggy settings some of them are false, and the prover reports that.

Nothing here runs on import; ``lemmas(spec)`` builds the expressions for one built spec.
"""

from __future__ import annotations

from collections.abc import Callable

from hwcheck.spec.kafka import derived
from hwcheck.spec.kafka.derived import NONE, PAYLOAD, out_of_range, restart_at
from hwcheck.spec.lang import Bound, Expr, Spec, Value, conj, exists, forall, implies, ite
from hwcheck.spec.protocol import Symmetry


def lemmas(spec: Spec) -> list[tuple[str, Expr]]:
    """Every shipped lemma for ``spec`` (a built model), as (name, expression). For the KRaft
    controller (``--controller kraft``) only the well-definedness lemmas (``_kraft_lemmas``)."""
    R, M, E = spec.params["replicas"], spec.params["max_offset"], spec.params["max_epoch"]
    OOR = out_of_range(E)
    v = spec.var
    names = {x.name for x in spec.variables}
    if "bLeader" in names:
        return _kraft_lemmas(spec)
    log, hw, alive, isr, synced = v("log"), v("hw"), v("alive"), v("isr"), v("synced")
    rleo, pending, resp_rec, resp_hw = v("rleo"), v("pending"), v("respRec"), v("respHw")
    committed, acked = v("committed"), v("acked")
    leader, epoch = v("leader")[()], v("epoch")[()]
    has_leader = leader != NONE

    def leo(r: Value) -> Expr:
        return derived.leo(spec, r)

    def each_r(body: Callable[[Bound], Value], hint: str = "r") -> Expr:
        return forall(R, body, hint)

    def each_k(body: Callable[[Bound], Value], hint: str = "k") -> Expr:
        return forall(M, body, hint)

    def in_flight_record(f: Value) -> Expr:
        return pending[f] & (resp_rec[f] != 0) & (resp_rec[f] != OOR)

    out: list[tuple[str, Expr]] = []

    def lemma(name: str, expr: Expr) -> None:
        out.append((name, expr))

    # -- well-definedness (every setting): appends stay inside the log ---------------------------
    lemma("LeaderNotPending", implies(has_leader, ~pending[leader]))
    lemma("PendingRoom", each_r(lambda f: implies(in_flight_record(f), leo(f) < M)))

    # -- the shape of logs -----------------------------------------------------------------------
    if "logStart" in names:
        # With a log start offset the records form the range [logStart, LEO): nothing below the
        # log start (deleted), no gap above it.
        log_start = v("logStart")
        lemma("LogPrefix", each_r(lambda r: each_k(lambda k: implies(
            k < log_start[r], log[r, k] == 0)) & forall(M - 1, lambda k: implies(
                (k >= log_start[r]) & (log[r, k] == 0), log[r, k + 1] == 0), "k")))
    else:
        lemma("LogPrefix", each_r(lambda r: forall(M - 1, lambda k: implies(
            log[r, k] == 0, log[r, k + 1] == 0), "k")))
    lemma("LogSorted", each_r(lambda r: forall(M - 1, lambda k: implies(
        log[r, k + 1] != 0, log[r, k] <= log[r, k + 1]), "k")))
    lemma("LogBelowEpoch", each_r(lambda r: each_k(lambda k: log[r, k] <= epoch)))
    lemma("CommittedBelowEpoch", each_k(lambda k: committed[k] <= epoch))
    # Log matching: a record (offset, epoch) determines the whole log before it. Stated for
    # neighbouring offsets; by induction over k it covers every earlier offset.
    lemma("LogMatching", each_r(lambda a: each_r(lambda b: implies(a < b, forall(
        M - 1, lambda k: implies((log[a, k + 1] != 0) & (log[a, k + 1] == log[b, k + 1]),
                                 log[a, k] == log[b, k]), "k")), "b"), "a"))
    # Every log that holds records of epoch e holds them from the same first offset (the
    # leader of e wrote them consecutively from its LEO at election).
    lemma("EpochStartsAgree", each_r(lambda a: each_r(lambda b: implies(a != b, each_k(
        lambda k: each_k(lambda j: implies(
            (j < k) & (log[a, k] != 0) & (log[b, j] == log[a, k]), log[a, j] == log[a, k]),
            "j"))), "b"), "a"))

    # -- roles -------------------------------------------------------------------------------
    lemma("LeaderAliveSynced", implies(has_leader, alive[leader] & synced[leader]))
    lemma("SyncedAlive", each_r(lambda r: implies(synced[r], alive[r])))
    lemma("PendingSynced", each_r(lambda r: implies(pending[r], synced[r])))

    # -- the leader's log ----------------------------------------------------------------------
    # A follower that truncated for the current leader holds a prefix of the leader's log.
    lemma("SyncedPrefix", implies(has_leader, each_r(lambda f: implies(synced[f], each_k(
        lambda k: implies(log[f, k] != 0, log[f, k] == log[leader, k]))))))
    # Records of the current epoch come from the current leader.
    lemma("CurrentEpochFromLeader", implies(has_leader, each_r(lambda r: each_k(lambda k: implies(
        log[r, k] == epoch, log[leader, k] == epoch)))))
    # The leader's record of an ISR follower's LEO covers records that follower really holds.
    lemma("IsrRleo", implies(has_leader, each_r(lambda f: implies(
        isr[f] & (f != leader), each_k(lambda k: implies(
            k < rleo[f], (log[f, k] != 0) & (log[f, k] == log[leader, k])))), "f")))

    # -- commitment ----------------------------------------------------------------------------
    lemma("HwCommitted", each_r(lambda r: each_k(lambda k: implies(
        k < hw[r], (committed[k] != 0) & (log[r, k] == committed[k])))))
    lemma("IsrHasCommitted", each_r(lambda r: implies(isr[r], derived.holds_committed(spec, r)),
                                    "r"))
    # What was committed in the current epoch lies below the leader's HW; everything else
    # committed is of an older epoch, hence below the start of the leader's current epoch.
    lemma("CurrentEpochCommittedBelowHw", implies(has_leader, each_k(lambda k: implies(
        committed[k] == epoch, k < hw[leader]))))

    # -- fetch responses in flight -------------------------------------------------------------
    lemma("NoOutOfRange", each_r(lambda f: resp_rec[f] != OOR))
    lemma("PendingFromLeader", implies(has_leader, each_r(lambda f: implies(pending[f], (
        resp_hw[f] <= hw[leader]) & each_k(lambda k: implies(
            (resp_rec[f] != 0) & (k == leo(f)), log[leader, k] == resp_rec[f]))), "f")))
    # Without a leader, the response still carries a record that some log holds after the
    # follower's own log.
    lemma("PendingRecordHeld", each_r(lambda f: implies(in_flight_record(f), exists(
        R, lambda s: each_k(lambda k: implies(k < leo(f), log[s, k] == log[f, k])
                            & implies(k == leo(f), log[s, k] == resp_rec[f])), "s")), "f"))
    lemma("PendingHwCommitted", each_r(lambda f: implies(pending[f], each_k(lambda k: implies(
        k < resp_hw[f], (committed[k] != 0)
        & implies(k < leo(f), log[f, k] == committed[k])
        & implies(k == leo(f), resp_rec[f] == committed[k])))), "f"))

    # -- acknowledgements (acks = all) ---------------------------------------------------------
    lemma("AckedCommitted", each_k(lambda k: implies(acked[k] != 0, acked[k] == committed[k])))
    out.extend(_knob_lemmas(spec, names, leo, in_flight_record))
    return out


def _kraft_lemmas(spec: Spec) -> list[tuple[str, Expr]]:
    """The lemmas stated for the KRaft controller: well-definedness (a broker that believes it
    leads has no fetch in flight; a record in flight fits its follower's log; logs have no
    gaps), enough for HwBelowLeo and LeaderInIsr. CommittedNotLost and the others need lemmas
    relating each broker's view to the controller's state, not stated yet."""
    R, M, E = spec.params["replicas"], spec.params["max_offset"], spec.params["max_epoch"]
    OOR = out_of_range(E)
    v = spec.var
    log, pending, resp_rec, b_leader = v("log"), v("pending"), v("respRec"), v("bLeader")

    def leo(r: Value) -> Expr:
        return derived.leo(spec, r)

    return [
        ("LeaderNotPending", forall(R, lambda r: implies(b_leader[r] == r, ~pending[r]), "r")),
        ("PendingRoom", forall(R, lambda f: implies(
            pending[f] & (resp_rec[f] != 0) & (resp_rec[f] != OOR), leo(f) < M), "f")),
        ("LogPrefix", forall(R, lambda r: forall(M - 1, lambda k: implies(
            log[r, k] == 0, log[r, k + 1] == 0), "k"), "r")),
    ]


def _knob_lemmas(spec: Spec, names: set[str], leo: Callable[[Value], Expr],
                 in_flight_record: Callable[[Value], Expr]) -> list[tuple[str, Expr]]:
    """The lemmas of the knobs of docs/kafka-model.md: stated only when the knob's variables
    exist, so a base-model configuration has exactly the lemmas above."""
    R, M, E = spec.params["replicas"], spec.params["max_offset"], spec.params["max_epoch"]
    OOR, RESTART = out_of_range(E), restart_at(E)
    v = spec.var
    log, pending, resp_rec, resp_hw = v("log"), v("pending"), v("respRec"), v("respHw")
    committed = v("committed")
    out: list[tuple[str, Expr]] = []

    def lemma(name: str, expr: Expr) -> None:
        out.append((name, expr))

    def each_r(body: Callable[[Bound], Value], hint: str = "r") -> Expr:
        return forall(R, body, hint)

    def each_k(body: Callable[[Bound], Value], hint: str = "k") -> Expr:
        return forall(M, body, hint)

    payload = [(v(c), v(r)) for c, r in PAYLOAD if c in names]

    # -- a record's payload: (offset, epoch) still identifies a record -------------------------
    if payload:
        lemma("RecordPayload", each_r(lambda a: each_r(lambda b: implies(a < b, each_k(
            lambda k: implies((log[a, k] != 0) & (log[a, k] == log[b, k]),
                              conj(*[c[a, k] == c[b, k] for c, _ in payload])))), "b"), "a"))
        lemma("EmptyPayload", each_r(lambda r: each_k(lambda k: implies(
            log[r, k] == 0, conj(*[c[r, k] == 0 for c, _ in payload])))))
        lemma("PendingPayload", each_r(lambda f: implies(in_flight_record(f), exists(
            R, lambda s: each_k(lambda k: implies(k == leo(f), (log[s, k] == resp_rec[f]) & conj(
                *[c[s, k] == rc[f] for c, rc in payload]))), "s")), "f"))

    # -- consumers -----------------------------------------------------------------------------
    if "cread" in names:
        cread = v("cread")
        C = v("cpos").shape[0]
        lemma("ReadsCommitted", forall(C, lambda c: each_k(lambda k: implies(
            cread[c, k] != 0, cread[c, k] == committed[k])), "c"))

    # -- producer retries and idempotence --------------------------------------------------------
    if "seq" in names:
        seq, resp_seq, p_seq = v("seq"), v("respSeq"), v("pSeq")[()]
        lemma("SeqBelowProducer", each_r(lambda r: each_k(lambda k: seq[r, k] <= p_seq)
                                         & (resp_seq[r] <= p_seq))
              & implies(v("pWait")[()] != 0, p_seq >= 1))
        lemma("RecordsHaveSeq", each_r(lambda r: each_k(lambda k: implies(
            log[r, k] != 0, seq[r, k] >= 1))))
        lemma("NoDuplicateSeqs", each_r(lambda r: each_k(lambda k: each_k(lambda j: implies(
            (j < k) & (log[r, k] != 0), seq[r, j] != seq[r, k]), "j"))))

    # -- the log start offset ----------------------------------------------------------------
    if "logStart" in names:
        resp_ls = v("respLs")
        lemma("PendingLogStart", each_r(lambda f: implies(
            pending[f] & (resp_rec[f] != OOR) & (resp_rec[f] != RESTART),
            (resp_ls[f] <= resp_hw[f]) & (resp_ls[f] <= leo(f))), "f"))

    # -- transactions ----------------------------------------------------------------------------
    if "txn" in names:
        txn, ctl, resp_txn, resp_ctl = v("txn"), v("ctl"), v("respTxn"), v("respCtl")
        txn_id, txn_state, outcome = v("txnId")[()], v("txnState")[()], v("outcome")
        p_wait, epoch, leader = v("pWait")[()], v("epoch")[()], v("leader")[()]
        T = outcome.shape[0]

        def decided(t_plus_1: Value, kind: Value) -> Expr:
            """Transaction t_plus_1 (1-based, an expression) was decided as marker ``kind``."""
            return forall(T, lambda t: implies(t_plus_1 == t + 1, outcome[t] == kind), "t")

        lemma("RecordsHaveTxn", each_r(lambda r: each_k(lambda k: implies(
            log[r, k] != 0, (txn[r, k] >= 1) & (txn[r, k] <= txn_id)))
            & implies(in_flight_record(r), (resp_txn[r] >= 1) & (resp_txn[r] <= txn_id))))
        lemma("MarkerOutcome", each_r(lambda r: each_k(lambda k: implies(
            (log[r, k] != 0) & (ctl[r, k] != 0), decided(txn[r, k], ctl[r, k])))
            & implies(in_flight_record(r) & (resp_ctl[r] != 0), decided(resp_txn[r],
                                                                         resp_ctl[r]))))
        lemma("ProducerOutcome", implies(txn_state != 0, txn_id >= 1)
              & forall(T, lambda t: implies(t + 1 > txn_id, outcome[t] == 0), "t")
              & implies(txn_state == 1, decided(txn_id, 0))
              & implies(txn_state == 2, decided(txn_id, 1))
              & implies(txn_state == 3, decided(txn_id, 2))
              & forall(T, lambda t: implies(t + 1 < txn_id, outcome[t] != 0), "t")
              & implies(txn_state == 0, forall(T, lambda t: implies(t + 1 == txn_id,
                                                                     outcome[t] != 0), "t")))
        lemma("NoMarkerOfOpen", implies(txn_state == 1, each_r(lambda r: each_k(lambda k: implies(
            (log[r, k] != 0) & (txn[r, k] == txn_id), ctl[r, k] == 0))
            & implies(in_flight_record(r) & (resp_txn[r] == txn_id), resp_ctl[r] == 0))))
        # A transaction is complete once its marker was answered: that marker is committed.
        def kind_of(t: Value) -> Expr:
            return ite(outcome[t] == 1, 1, 2)

        lemma("CompleteMarkerCommitted", forall(T, lambda t: implies(
            (t + 1 < txn_id) | ((t + 1 == txn_id) & (txn_state == 0)),
            exists(M, lambda j: (committed[j] != 0) & each_r(lambda r: implies(
                log[r, j] == committed[j], (txn[r, j] == t + 1) & (ctl[r, j] == kind_of(t)))),
                "j")), "t"))
        lemma("PrepareMarkerWritten", implies(
            (txn_state >= 2) & (p_wait == epoch) & (leader != NONE), exists(
                M, lambda j: (log[leader, j] == epoch) & (txn[leader, j] == txn_id)
                & (ctl[leader, j] == ite(txn_state == 2, 1, 2)), "j")))
        lemma("WaitBelowEpoch", p_wait <= epoch)
        # No log holds a data record of a transaction after a marker of it (the producer sends
        # data only while its transaction is open; markers come once it is decided).
        lemma("DataBeforeMarker", each_r(lambda r: each_k(lambda k: each_k(lambda j: implies(
            (j < k) & (log[r, k] != 0) & (ctl[r, j] != 0) & (txn[r, j] == txn[r, k]),
            ctl[r, k] != 0), "j"))))
    return out


# Which lemmas each invariant is shipped with (by default, ``prove`` uses these). A name may be
# another invariant of the model (LeaderInIsr, HwBelowLeo), used as a lemma.
_WELL_DEFINED = ["LeaderNotPending", "PendingRoom", "LogPrefix"]
_COMMITMENT = [
    "LeaderNotPending", "PendingRoom", "LogPrefix", "LogSorted", "LogBelowEpoch",
    "CommittedBelowEpoch", "LogMatching", "EpochStartsAgree", "LeaderAliveSynced", "LeaderInIsr",
    "SyncedAlive", "PendingSynced", "SyncedPrefix", "CurrentEpochFromLeader", "IsrRleo",
    "HwCommitted", "IsrHasCommitted", "CurrentEpochCommittedBelowHw", "NoOutOfRange",
    "PendingFromLeader", "PendingRecordHeld", "PendingHwCommitted",
]
_PAYLOAD = ["RecordPayload", "EmptyPayload", "PendingPayload"]
_TXN = ["RecordsHaveTxn", "MarkerOutcome", "ProducerOutcome", "NoMarkerOfOpen"]
SHIPPED = {
    "HwBelowLeo": _WELL_DEFINED,
    "LeaderInIsr": _WELL_DEFINED,
    "CommittedNotLost": _COMMITMENT + ["HwBelowLeo"],
    "LogsMatchBelowHw": _COMMITMENT + ["HwBelowLeo"],
    "AckedNotLost": _COMMITMENT + ["HwBelowLeo", "CommittedNotLost", "AckedCommitted"],
    # the knobs of docs/kafka-model.md
    "MonotonicReads": _COMMITMENT + ["HwBelowLeo", "CommittedNotLost", "ReadsCommitted"],
    "NoDuplicates": _COMMITMENT + ["HwBelowLeo"] + _PAYLOAD
    + ["SeqBelowProducer", "RecordsHaveSeq", "NoDuplicateSeqs"],
    "LogStartBelowHw": _WELL_DEFINED + ["LeaderNotPending", "LeaderAliveSynced", "SyncedAlive",
                                        "PendingSynced", "PendingLogStart"],
    "LowWatermarkBelowHw": _WELL_DEFINED + ["LeaderNotPending", "LeaderAliveSynced",
                                            "SyncedAlive", "PendingSynced", "PendingLogStart",
                                            "LogStartBelowHw"],
    "ReadCommittedIsolation": _WELL_DEFINED + _TXN + ["HwBelowLeo", "EmptyPayload"],
    # Holds with one transaction (M <= 3); with two, a new leader's lagging HW can sit below a
    # completed transaction's marker and the first unstable offset above it (see
    # docs/kafka-model.md): the proof then ends in a counterexample to induction.
    "LsoBelowHw": _COMMITMENT + ["HwBelowLeo"] + _PAYLOAD + _TXN + ["DataBeforeMarker"],
    "MarkersSurvive": _COMMITMENT + ["HwBelowLeo", "CommittedNotLost"] + _PAYLOAD + _TXN
    + ["CompleteMarkerCommitted", "PrepareMarkerWritten", "WaitBelowEpoch"],
}


# Invariants that are inductive with the well-definedness lemmas alone under every knob setting
# (proved in seconds at R=5, M=6, E=6). Once ``prove`` confirms them for a configuration, bounded
# model checking may assume them in every state: it only removes unreachable states.
CHEAP = ("HwBelowLeo", "LeaderInIsr")


def shipped_for(invariant: str) -> list[str]:
    """The names of the lemmas ``invariant`` is proved with by default (may name invariants)."""
    return list(SHIPPED.get(invariant, _WELL_DEFINED))


def replica_symmetry(spec: Spec) -> Symmetry | None:
    """The model's replica symmetry: renaming replicas (a permutation of 0..R-1) maps states to
    states, initial-state aside. ``dims``: for each variable, the dimensions indexed by a
    replica; ``ids``: the scalar variables holding a replica id (negative = none); every action
    parameter is a replica. Nothing in the model compares replica ids other than for equality
    (``a < b`` appears only where both orders are covered), so every action, invariant and
    lemma is invariant under such a renaming. ``other``: the variables a renaming leaves alone.
    Every variable must be in exactly one of dims, ids and other, so that a variable added to
    the model later cannot be silently left out (the prover checks this). With consumers
    (``--consumers``) no symmetry is declared: Consume(c)'s parameter is not a replica. With the
    KRaft controller each broker's view names its leader (``bLeader``: in dims and ids both),
    and each leader keeps records over the replicas (``rleo``, ``lIsr``: two replica
    dimensions)."""
    names = {v.name for v in spec.variables}
    if "cpos" in names:  # Consume(c) ranges over the consumers, not the replicas: none declared
        return None
    replica_vars = ("log", "hw", "alive", "isr", "synced", "rleo", "pending", "respRec", "respHw",
                    "logStart", "respLs", "seq", "respSeq", "txn", "ctl", "respTxn", "respCtl",
                    "flushed", "fenced", "bLeader", "bEpoch", "lIsr", "elr", "unclean",
                    "lastKnownElr")
    dims: dict[str, tuple[int, ...]] = {n: (0,) for n in replica_vars if n in names}
    if "bLeader" in names:  # KRaft: each leader's records and ISR view are over the replicas
        dims["rleo"] = dims["lIsr"] = (0, 1)
    return Symmetry(
        size=spec.params["replicas"],
        dims=dims,
        ids=("leader", "bLeader") if "bLeader" in names else ("leader",),
        other=tuple(n for n in ("epoch", "committed", "acked", "pSeq", "pWait", "txnId",
                                "txnState", "outcome") if n in names),
        params="member",
    )
