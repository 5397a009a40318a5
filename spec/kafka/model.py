"""The base replication model of MODEL.md, stated in the spec language.

``build(params)`` returns the validated Spec for one configuration. The knobs (truncation, ISR
expansion, acks, min.insync.replicas, unclean election) select which statements an action has;
every backend then reads the same objects.
"""

from __future__ import annotations

from hwcheck.spec.lang import (Block, Spec, count, exists, forall, implies, ite, max_, max_over, min_,
                   min_over, prime)
from hwcheck.spec.kafka.params import Params

NONE = -1


def build(p: Params) -> Spec:
    R, M, E = p.R, p.M, p.E
    OOR = E + 1  # respRec value for an "offset out of range" response
    spec = Spec("KafkaHW", p.as_dict())

    log = spec.array("log", (R, M), 0, E, "leader epoch of the record at each offset; 0 = none")
    hw = spec.array("hw", (R,), 0, M, "high watermark (persisted)")
    alive = spec.set_of("alive", R, "brokers that are up")
    leader = spec.scalar("leader", NONE, R - 1, "the partition leader; -1 = none")
    epoch = spec.scalar("epoch", 1, E, "the current leader epoch")
    isr = spec.set_of("isr", R, "the in-sync replica set")
    synced = spec.set_of("synced", R, "replicas that truncated for the current leader")
    rleo = spec.array("rleo", (R,), 0, M, "the leader's record of each follower's LEO")
    pending = spec.set_of("pending", R, "followers with a fetch response in flight")
    resp_rec = spec.array("respRec", (R,), 0, OOR, f"record in flight; {OOR} = out of range")
    resp_hw = spec.array("respHw", (R,), 0, M, "leader HW carried by the response in flight")
    committed = spec.array("committed", (M,), 0, E, "ghost: record at k when k was committed")
    acked = spec.array("acked", (M,), 0, E, "ghost: record at k the producer was told is written")

    # -- helpers (macros: they build expressions and statements) -------------------------------

    def leo(r) -> object:
        return count(M, lambda k: log[r, k] != 0, "k")

    def isr_size():
        return count(R, lambda r: isr[r], "r")

    def end_offset(l, leo_l, e):
        """The first offset of log l holding an epoch > e; its LEO if none."""
        return min_over(M, lambda k: k, lambda k: (k < leo_l) & (log[l, k] > e), leo_l, "k")

    def truncate(b: Block, r, n) -> None:
        with b.each(M, "k") as k:
            b.set(log[r, k], ite(k < n, log[r, k], 0))
        b.set(hw[r], min_(hw[r], n))

    def advance_hw(b: Block, L) -> None:
        """Raise the leader's HW to the least LEO over the ISR; record what becomes committed."""
        leo_l = b.let("leoL", leo(L))
        low = min_over(R, lambda f: rleo[f], lambda f: isr[f] & (f != L), leo_l, "f")
        new = b.let("newHw", max_(hw[L], min_(leo_l, low)))
        old = b.let("oldHw", hw[L])
        ack_all = b.let("ackAll", isr_size() >= p.min_isr) if p.acks == "all" else None
        with b.each(M, "k") as k:
            with b.when((old <= k) & (k < new)):
                with b.when(committed[k] == 0):
                    b.set(committed[k], log[L, k])
                if ack_all is not None:
                    with b.when(ack_all & (acked[k] == 0)):
                        b.set(acked[k], log[L, k])
        b.set(hw[L], new)

    def truncation_point(b: Block, f, L):
        lf = b.let("lf", leo(f))
        if p.truncation == "hw":
            return min_(lf, hw[f])
        leo_l = b.let("leoL", leo(L))
        if p.truncation == "leader-epoch":
            last = b.let("last", ite(lf > 0, log[f, lf - 1], 0))
            return ite(last == 0, 0, min_(lf, end_offset(L, leo_l, last)))
        # kip-279: walk back epoch by epoch to the largest common one. Each round that does not
        # stop lowers n, so M + 1 rounds always reach the fixed point.
        n = b.let("n", lf)
        done = b.let("done", False)
        with b.each(M + 1, "round"):
            with b.when(~done):
                with b.when(n == 0):
                    b.assign(done, True)
                with b.otherwise():
                    last = b.let("last", log[f, n - 1])
                    common = b.let("common", max_over(
                        M, lambda k: log[L, k],
                        lambda k: (k < leo_l) & (log[L, k] >= 1) & (log[L, k] <= last), 0, "k"))
                    with b.when(common == 0):
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

    spec.initial(init)

    # -- actions ---------------------------------------------------------------------------------

    ghosts = [committed, acked]

    @spec.action("Produce", modifies=[log, hw, *ghosts])
    def produce(b: Block) -> None:
        """The leader appends a producer record in its epoch."""
        b.require(leader != NONE, leo(leader) < M)
        if p.acks == "all":
            b.require(isr_size() >= p.min_isr)
        L = b.let("L", leader)
        n = b.let("n", leo(L))
        b.set(log[L, n], epoch)
        if p.acks == "1":
            with b.when(acked[n] == 0):
                b.set(acked[n], epoch)
        advance_hw(b, L)

    @spec.action("FetchRequest", over=[R],
                 modifies=[resp_rec, resp_hw, pending, rleo, isr, hw, *ghosts])
    def fetch_request(b: Block, f) -> None:
        """The leader serves follower f's fetch at offset leo(f)."""
        b.require(leader != NONE, f != leader, alive[f], synced[f], ~pending[f])
        L = b.let("L", leader)
        lf = b.let("lf", leo(f))
        ll = b.let("ll", leo(L))
        with b.when(lf > ll):
            b.set(resp_rec[f], OOR)
            b.set(resp_hw[f], ll)
            b.set(pending[f], True)
        with b.otherwise():
            b.set(rleo[f], lf)
            join = ~isr[f] & (lf >= hw[L])
            if p.isr_expansion == "epoch-start":
                start = min_over(M, lambda k: k, lambda k: (k < ll) & (log[L, k] == epoch), ll, "k")
                join = join & (lf >= start)
            with b.when(join):
                b.set(isr[f], True)
            advance_hw(b, L)
            b.set(resp_rec[f], ite(lf < ll, log[L, lf], 0))
            b.set(resp_hw[f], hw[L])
            b.set(pending[f], True)

    @spec.action("FetchResponse", over=[R], modifies=[log, hw, pending, resp_rec, resp_hw])
    def fetch_response(b: Block, f) -> None:
        """Follower f applies its fetch response."""
        b.require(pending[f])
        rec = b.let("rec", resp_rec[f])
        rh = b.let("rh", resp_hw[f])
        lf = b.let("lf", leo(f))
        with b.when(rec == OOR):
            truncate(b, f, min_(lf, rh))
        with b.otherwise():
            with b.when(rec != 0):
                b.set(log[f, lf], rec)
            b.set(hw[f], min_(leo(f), rh))
        b.set(pending[f], False)
        b.set(resp_rec[f], 0)
        b.set(resp_hw[f], 0)

    @spec.action("BecomeFollower", over=[R], modifies=[log, hw, synced])
    def become_follower(b: Block, f) -> None:
        """Follower f truncates its log for the current leader before fetching."""
        b.require(leader != NONE, f != leader, alive[f], ~synced[f])
        L = b.let("L", leader)
        n = b.let("cut", truncation_point(b, f, L))
        truncate(b, f, n)
        b.set(synced[f], True)

    @spec.action("ShrinkIsr", over=[R], modifies=[isr, hw, *ghosts])
    def shrink_isr(b: Block, f) -> None:
        """The leader drops follower f from the ISR (the lag timer is abstracted)."""
        b.require(leader != NONE, f != leader, isr[f])
        L = b.let("L", leader)
        b.set(isr[f], False)
        advance_hw(b, L)

    @spec.action("Crash", over=[R],
                 modifies=[alive, synced, pending, resp_rec, resp_hw, leader, rleo])
    def crash(b: Block, r) -> None:
        """Broker r fails and loses its in-memory state; its log and HW survive."""
        b.require(alive[r])
        b.set(alive[r], False)
        b.set(synced[r], False)
        b.set(pending[r], False)
        b.set(resp_rec[r], 0)
        b.set(resp_hw[r], 0)
        with b.when(leader == r):
            b.set(leader, NONE)
            with b.each(R, "f") as f:
                b.set(rleo[f], 0)

    @spec.action("Restart", over=[R], modifies=[alive, synced, log, hw])
    def restart(b: Block, r) -> None:
        """Broker r comes back; with HW truncation it truncates its log to its HW."""
        b.require(~alive[r])
        b.set(alive[r], True)
        b.set(synced[r], False)
        if p.truncation == "hw":
            truncate(b, r, b.let("n", min_(leo(r), hw[r])))

    @spec.action("Elect", over=[R],
                 modifies=[isr, leader, epoch, rleo, synced, pending, resp_rec, resp_hw, hw, *ghosts])
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
        b.set(leader, c)
        b.set(epoch, epoch + 1)
        advance_hw(b, c)

    # -- properties ------------------------------------------------------------------------------

    spec.invariant("HwBelowLeo", forall(R, lambda r: hw[r] <= leo(r), "r"),
                   "every replica's HW is at most its LEO")
    spec.invariant("LeaderInIsr", implies(leader != NONE, isr[leader]),
                   "the leader is in the ISR")
    spec.invariant("CommittedNotLost", implies(leader != NONE, forall(
        M, lambda k: implies(committed[k] != 0, log[leader, k] == committed[k]), "k")),
        "the leader's log holds every committed record")
    spec.invariant("AckedNotLost", implies(leader != NONE, forall(
        M, lambda k: implies(acked[k] != 0, log[leader, k] == acked[k]), "k")),
        "the leader's log holds every acknowledged record")
    spec.invariant("LogsMatchBelowHw", forall(R, lambda a: forall(R, lambda c: implies(
        a < c, forall(M, lambda k: implies((k < hw[a]) & (k < hw[c]), log[a, k] == log[c, k]),
                      "k")), "b"), "a"),
        "any two replicas agree on every offset below both their HWs")

    same_leader = (leader != NONE) & (prime(leader) == leader) & (prime(epoch) == epoch)
    spec.action_property("LeaderHwMonotonic",
                         implies(same_leader, prime(hw[leader]) >= hw[leader]),
                         "while the same leader leads, its HW never decreases")
    spec.action_property("EpochMonotonic", prime(epoch) >= epoch,
                         "the leader epoch never decreases")

    spec.reachable("RecordCommitted", exists(M, lambda k: committed[k] != 0, "k"),
                   "a record is committed")
    spec.reachable("LeaderChanged", epoch > 1, "a new leader was elected")
    spec.reachable("FollowerTruncated", exists(R, lambda r: prime(leo(r)) < leo(r), "r"),
                   "a transition where a replica's log gets shorter (records truncated)")
    return spec.validate()

