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

from hwcheck.spec.lang import Expr, Spec, count, exists, forall, implies
from hwcheck.spec.protocol import Symmetry

NONE = -1


def lemmas(spec: Spec) -> list[tuple[str, Expr]]:
    """Every shipped lemma for ``spec`` (a built model), as (name, expression)."""
    R, M, E = spec.params["replicas"], spec.params["max_offset"], spec.params["max_epoch"]
    OOR = E + 1
    v = spec.var
    log, hw, alive, isr, synced = v("log"), v("hw"), v("alive"), v("isr"), v("synced")
    rleo, pending, resp_rec, resp_hw = v("rleo"), v("pending"), v("respRec"), v("respHw")
    committed, acked = v("committed"), v("acked")
    leader, epoch = v("leader")[()], v("epoch")[()]
    has_leader = leader != NONE

    def leo(r):
        return count(M, lambda k: log[r, k] != 0, "k")

    def each_r(body, hint="r"):
        return forall(R, body, hint)

    def each_k(body, hint="k"):
        return forall(M, body, hint)

    def in_flight_record(f):
        return pending[f] & (resp_rec[f] != 0) & (resp_rec[f] != OOR)

    out: list[tuple[str, Expr]] = []

    def lemma(name: str, expr) -> None:
        out.append((name, expr))

    # -- well-definedness (every setting): appends stay inside the log ---------------------------
    lemma("LeaderNotPending", implies(has_leader, ~pending[leader]))
    lemma("PendingRoom", each_r(lambda f: implies(in_flight_record(f), leo(f) < M)))

    # -- the shape of logs -----------------------------------------------------------------------
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
    lemma("IsrHasCommitted", each_r(lambda r: implies(isr[r], each_k(lambda k: implies(
        committed[k] != 0, log[r, k] == committed[k]))), "r"))
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
SHIPPED = {
    "HwBelowLeo": _WELL_DEFINED,
    "LeaderInIsr": _WELL_DEFINED,
    "CommittedNotLost": _COMMITMENT + ["HwBelowLeo"],
    "LogsMatchBelowHw": _COMMITMENT + ["HwBelowLeo"],
    "AckedNotLost": _COMMITMENT + ["HwBelowLeo", "CommittedNotLost", "AckedCommitted"],
}


# Invariants that are inductive with the well-definedness lemmas alone under every knob setting
# (proved in seconds at R=5, M=6, E=6). Once ``prove`` confirms them for a configuration, bounded
# model checking may assume them in every state: it only removes unreachable states.
CHEAP = ("HwBelowLeo", "LeaderInIsr")


def shipped_for(invariant: str) -> list[str]:
    """The names of the lemmas ``invariant`` is proved with by default (may name invariants)."""
    return list(SHIPPED.get(invariant, _WELL_DEFINED))


def replica_symmetry(spec: Spec) -> Symmetry:
    """The model's replica symmetry: renaming replicas (a permutation of 0..R-1) maps states to
    states, initial-state aside. ``dims``: for each variable, the dimensions indexed by a
    replica; ``ids``: the scalar variables holding a replica id (negative = none); every action
    parameter is a replica. Nothing in the model compares replica ids other than for equality
    (``a < b`` appears only where both orders are covered), so every action, invariant and
    lemma is invariant under such a renaming. ``other``: the variables a renaming leaves alone.
    Every variable must be in exactly one of dims, ids and other, so that a variable added to
    the model later cannot be silently left out (the prover checks this)."""
    return Symmetry(
        size=spec.params["replicas"],
        dims={"log": (0,), "hw": (0,), "alive": (0,), "isr": (0,), "synced": (0,),
              "rleo": (0,), "pending": (0,), "respRec": (0,), "respHw": (0,)},
        ids=("leader",),
        other=("epoch", "committed", "acked"),
        params="member",
    )
