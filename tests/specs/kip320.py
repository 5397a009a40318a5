"""hachikuji/kafka-specification's Kip320 (leader epoch fencing) and Kip320FirstTry, ported: one
action per TLA+ action or disjunct, the TLA+ names kept (``replicaLog`` sequences of records,
``leader`` optional, ``leaderAndIsrRequests`` a set). ``variant``: ``final`` (WeakIsr and StrongIsr
hold; TLC's 737,794 distinct states at three replicas) or ``first-try`` (both violated)."""

from functools import reduce

from hwcheck.spec.lang import Block, Spec, forall, ite, min_
from hwcheck.spec.types import Int, Opt, Record, Seq, SetOf, ValueSet, set_of


def build(replicas: int = 3, log_size: int = 2, max_records: int = 2, max_leader_epoch: int = 2,
          variant: str = "final") -> Spec:
    if variant not in ("final", "first-try"):
        raise ValueError(f"variant must be final or first-try, got {variant!r}")
    R, L, E = replicas, log_size, max_leader_epoch
    spec = Spec("Kip320" if variant == "final" else "Kip320FirstTry", {"replicas": R, "log_size": L,
                "max_records": max_records, "max_leader_epoch": E, "variant": variant})
    Rec = Record(id=Int(0, max_records - 1), epoch=Int(0, E))
    ReplicaOpt = Opt(Int(0, R - 1))
    QState = Record(leaderEpoch=Int(-1, E), leader=ReplicaOpt, isr=SetOf(R))
    log = spec.declare("replicaLog", Seq(Rec, L), over=(R,))
    rs = spec.declare("replicaState", Record(hw=Int(0, L), leaderEpoch=Int(-1, E),
                                             leader=ReplicaOpt, isr=SetOf(R)), over=(R,))
    next_record = spec.declare("nextRecordId", Int(0, max_records))
    next_epoch = spec.declare("nextLeaderEpoch", Int(0, E + 1))
    requests = spec.declare("leaderAndIsrRequests", ValueSet(QState, E + 1))
    qs = spec.declare("quorumState", QState)
    none = ReplicaOpt.none
    def init(b: Block) -> None:  # no leader anywhere, every replica in the quorum's ISR
        for x in [rs[r] for r in range(R)] + [qs]:
            b.put(x, x.replace(leaderEpoch=-1, leader=none))
        b.put(qs.isr, set_of(R, *range(R)))
    spec.initial(init)
    # -- the modules' operators ------------------------------------------------------------------
    def presumes(r):  # ReplicaPresumesLeadership
        return rs[r].leader == r
    def has_entry_equal(r1, r2, o):  # \E record : HasEntry(r1, record, o) /\ HasEntry(r2, ...)
        return (o < log[r1].len) & (o < log[r2].len) & (log[r1][o] == log[r2][o])
    def following_epoch(ld, f):  # IsFollowingLeaderEpoch
        return presumes(ld) & (rs[f].leader == ld) & (rs[f].leaderEpoch == rs[ld].leaderEpoch)
    def true_leader(ld):  # IsTrueLeader
        return (qs.leader == ld) & presumes(ld) & (rs[ld].leaderEpoch == qs.leaderEpoch)
    def caught_up_to_epoch(ld, f, end):  # Kip320FirstTry's IsFollowerCaughtUpToLeaderEpoch
        o = end - 1
        return presumes(ld) & (rs[f].leader == ld) & (
            (end == 0) | ((end > 0) & (o < log[ld].len) & (o < log[f].len)
                          & (log[f][o].epoch == log[ld][o].epoch)))
    def hw_reached_epoch(ld):  # HasHighWatermarkReachedCurrentEpoch
        hw, end = rs[ld].hw, log[ld].len
        return (hw == end) | ((hw < end) & (log[ld][hw].epoch == rs[ld].leaderEpoch))
    def first_non_matching(ld, f):  # FirstNonMatchingOffsetFromTail: last match + 1, or 0
        return reduce(lambda out, o: ite(has_entry_equal(f, ld, o), o + 1, out), range(L), 0)
    def controller_update_isr(b: Block, leader, isr) -> None:  # ControllerUpdateIsr
        b.require(next_epoch <= E)
        new = QState(leaderEpoch=next_epoch, leader=leader, isr=isr)
        b.insert(requests, new)
        b.put(qs, new)
        b.set(next_epoch, next_epoch + 1)
    def quorum_update(b: Block, ld, isr) -> None:  # QuorumUpdateLeaderAndIsr
        b.require(true_leader(ld), qs.leader == ld)
        b.put(qs.isr, isr)
        b.put(rs[ld].isr, isr)
    def request_to_follow(b: Block, ld, r, k):  # a request making r follow ld, newer than r's
        req = requests.item(k)
        b.require(k < requests.used, ld != r, req.leader == ld,
                  req.leaderEpoch > rs[r].leaderEpoch)
        return req
    def become_follower(b: Block, r, req, hw) -> None:  # BecomeFollower (Kip320's LOCAL one)
        b.put(rs[r], rs[r].replace(leaderEpoch=req.leaderEpoch, leader=req.leader, isr=req.isr,
                                   hw=hw))
    ctl = [qs, requests, next_epoch]
    # -- actions: KafkaReplication's, shared by both variants ---------------------------------
    @spec.action("ControllerElectLeader", over=[R], modifies=ctl)
    def elect(b: Block, n) -> None:
        b.require(qs.isr.has(n), qs.leader != n)
        controller_update_isr(b, n, qs.isr)
    @spec.action("ControllerShrinkIsrLast", over=[R], modifies=ctl)
    def shrink_last(b: Block, r) -> None:
        b.require(qs.leader == r, qs.isr == set_of(R, r))
        controller_update_isr(b, none, qs.isr)
    @spec.action("ControllerShrinkIsrLeader", over=[R], modifies=ctl)
    def shrink_leader(b: Block, r) -> None:
        b.require(qs.leader == r, qs.isr != set_of(R, r))
        controller_update_isr(b, none, qs.isr.remove(r))
    @spec.action("ControllerShrinkIsrFollower", over=[R], modifies=ctl)
    def shrink_follower(b: Block, r) -> None:
        b.require(qs.leader != r, qs.isr.has(r))
        controller_update_isr(b, qs.leader, qs.isr.remove(r))
    @spec.action("BecomeLeader", over=[E + 1], modifies=[rs])
    def become_leader(b: Block, k) -> None:
        req = requests.item(k)
        b.require(k < requests.used, req.leader != none,
                  req.leaderEpoch > rs[req.leader].leaderEpoch)
        ld = b.let("ld", req.leader)
        b.put(rs[ld], rs[ld].replace(leaderEpoch=req.leaderEpoch, leader=ld, isr=req.isr))
    @spec.action("LeaderWrite", over=[R], modifies=[log, next_record])
    def leader_write(b: Block, r) -> None:
        b.require(presumes(r), next_record <= max_records - 1, log[r].len < L)
        b.append(log[r], Rec(id=next_record, epoch=rs[r].leaderEpoch))
        b.set(next_record, next_record + 1)
    if variant == "final":  # -- Kip320.tla ------------------------------------------------
        @spec.action("FencedLeaderExpandIsr", over=[R, R], modifies=[qs, rs])
        def expand(b: Block, ld, f) -> None:
            hw = rs[ld].hw
            b.require(~rs[ld].isr.has(f), following_epoch(ld, f),
                      (hw == 0) | (hw <= log[f].len), hw_reached_epoch(ld))
            quorum_update(b, ld, rs[ld].isr.add(f))
        # its two disjuncts, as TLC enumerates them (both may hold: two transitions)
        @spec.action("FencedLeaderShrinkIsrNotFollowing", over=[R, R], modifies=[qs, rs])
        def shrink(b: Block, ld, f) -> None:
            b.require(rs[ld].isr.has(f), f != ld, ~following_epoch(ld, f))
            quorum_update(b, ld, rs[ld].isr.remove(f))
        @spec.action("FencedLeaderShrinkIsrLagging", over=[R, R], modifies=[qs, rs])
        def shrink_lagging(b: Block, ld, f) -> None:
            b.require(rs[ld].isr.has(f), f != ld, log[f].len < log[ld].len)
            quorum_update(b, ld, rs[ld].isr.remove(f))
        @spec.action("FencedLeaderIncHighWatermark", over=[R], modifies=[rs])
        def inc_hw(b: Block, ld) -> None:
            hw = rs[ld].hw
            b.require(hw < log[ld].len, rs[ld].isr.forall(
                lambda f: following_epoch(ld, f) & (hw < log[f].len)))
            b.set(rs[ld].hw, hw + 1)
        @spec.action("FencedBecomeFollowerAndTruncateNoLeader", over=[R, R, E + 1], modifies=[rs])
        def follow_none(b: Block, ld, r, k) -> None:  # leader ranges over Replicas: never
            req = request_to_follow(b, ld, r, k)
            b.require(ld == none)
            become_follower(b, r, req, rs[r].hw)
        @spec.action("FencedBecomeFollowerAndTruncate", over=[R, R, E + 1], modifies=[rs, log])
        def follow(b: Block, ld, r, k) -> None:
            req = request_to_follow(b, ld, r, k)
            b.require(presumes(ld), rs[ld].leaderEpoch == req.leaderEpoch,
                      first_non_matching(ld, r) <= log[r].len)  # TruncateTo's guard
            trunc = b.let("trunc", first_non_matching(ld, r))
            become_follower(b, r, req, min_(trunc, rs[r].hw))
            b.truncate(log[r], trunc)
    else:  # -- Kip320FirstTry.tla ------------------------------------------------------------
        @spec.action("LeaderExpandIsrBetterFencing", over=[R, R], modifies=[qs, rs])
        def expand_ft(b: Block, ld, f) -> None:
            b.require(~rs[ld].isr.has(f), caught_up_to_epoch(ld, f, rs[ld].hw),
                      hw_reached_epoch(ld))
            quorum_update(b, ld, rs[ld].isr.add(f))
        @spec.action("LeaderShrinkIsrBetterFencing", over=[R, R], modifies=[qs, rs])
        def shrink_ft(b: Block, ld, f) -> None:
            b.require(rs[ld].isr.has(f), f != ld, ~caught_up_to_epoch(ld, f, log[ld].len))
            quorum_update(b, ld, rs[ld].isr.remove(f))
        @spec.action("ImprovedLeaderIncHighWatermark", over=[R], modifies=[rs])
        def inc_hw_ft(b: Block, ld) -> None:
            hw = rs[ld].hw
            b.require(presumes(ld), hw < log[ld].len,
                      rs[ld].isr.forall(lambda f: caught_up_to_epoch(ld, f, hw + 1)))
            b.set(rs[ld].hw, hw + 1)
        @spec.action("BecomeFollower", over=[R, R, E + 1], modifies=[rs])
        def follow_ft(b: Block, ld, r, k) -> None:
            become_follower(b, r, request_to_follow(b, ld, r, k), rs[r].hw)
        @spec.action("FollowerTruncate", over=[R, R], modifies=[log, rs])
        def truncate_ft(b: Block, ld, f) -> None:
            last = log[f].len - 1
            b.require(presumes(ld), rs[f].leader == ld, (log[f].len > log[ld].len) | (
                (log[f].len > 0) & (last < log[ld].len)
                & (log[ld][last].epoch != log[f][last].epoch)),
                first_non_matching(ld, f) <= log[f].len)  # TruncateTo's guard
            trunc = b.let("trunc", first_non_matching(ld, f))
            b.set(rs[f].hw, min_(trunc, rs[f].hw))
            b.truncate(log[f], trunc)
    @spec.action("FencedFollowerFetch" if variant == "final" else "FollowerFetch", over=[R, R],
                 modifies=[log, rs])
    def fetch(b: Block, f, ld) -> None:  # the variants differ in who may fetch at offset o
        o = log[f].len
        b.require(following_epoch(ld, f) if variant == "final" else caught_up_to_epoch(ld, f, o),
                  o < log[ld].len, o < L)
        new_hw = b.let("hw", min_(rs[ld].hw, o + 1))
        b.append(log[f], log[ld][o])
        b.set(rs[f].hw, new_hw)
    def complete(isr_of) -> object:  # WeakIsr / StrongIsr over the given ISR
        return forall(R, lambda r1: ~presumes(r1) | (rs[r1].hw == 0) | forall(R, lambda r2: (
            ~isr_of(r1).has(r2)) | forall(L, lambda o: (o >= rs[r1].hw)
                                          | has_entry_equal(r1, r2, o))))
    spec.invariant("WeakIsr", complete(lambda r1: rs[r1].isr), "a leader's ISR holds its HW")
    spec.invariant("StrongIsr", complete(lambda r1: qs.isr), "the quorum's ISR holds it too")
    return spec

