"""Vanlightly/kafka-tlaplus's ``kafka_replication_v3_5_simple.tla`` (commit a30c45e), ported.

Kafka's replication protocol with the KRaft controller as of 3.5: broker registration, fencing
and unfencing, the metadata log each broker replays, AlterPartition with the maximal ISR,
fetches with diverging epochs, clean and unclean shutdowns. One action per TLA+ action, the
TLA+ names kept, the invariants of its cfg and of its properties module.

The constants are those of the spec's README: replication factor 3, one value, MinISR 2,
InitIsrSize 2, AvoidLastReplicaStanding and LimitFetchesOnLeaderEpoch TRUE. Parameters: the
four limits (``clean_limit``, ``unclean_limit``, ``fence_limit``, ``ap_limit``) and ``view``
(the spec's VIEW, which leaves out the auxiliary counters; ``False``: full-state
fingerprints, the counts TLC gives without VIEW). ``fetch_cap``: the slots of each fetch bag
(delivered fetches stay in it, as in the spec); past it, a domain error names the bag.

How the TLA+ reads here:

- Brokers 1..3 are the indices 0..2; offsets stay 1-based as in the spec (an empty log has LEO
  and HWM 1); ``Nil`` and ``NoLeader`` are an optional's none.
- ``messages``, one function from messages to delivery counts, is one bag per message type
  (the function restricted to that type); a delivered message stays at count 0. The fields
  every message of a type shares (``type``, ``dest |-> Controller``) are left out, and a
  response's fields that an error response lacks hold their defaults.
- TLC enumerates every way an action's formula is satisfied before all variables are
  assigned: each true disjunct of a disjunction and each witness of an existential. Where
  several can hold at once, the port makes the choice an action parameter, so that
  hwcheck's generated transitions are TLC's: the disjunct of ``__SendFetchMakesProgress``
  (``SendFetchRequest``) and of AvoidLastReplicaStanding (``UncleanShutdown``), the leader
  epoch bump that makes ``ExistMetadataUpdates`` true (``ReceiveMetadataUpdate``), the
  timed-out followers (``SendAlterPartitionRequest``) and the controller's leader candidate
  (every action that fences or unfences).
- TLC's CASE takes the first arm whose guard holds; so do the nested ``ite`` here.
- ``TypeOK`` is the variables' declared domains: a value outside them is a finding.
"""

from hwcheck.spec.lang import Block, Spec, conj, disj, exists, forall, ite, lift
from hwcheck.spec.types import (
    Bag,
    Bool,
    Enum,
    Int,
    Opt,
    OptVal,
    Record,
    Seq,
    SeqVal,
    SetOf,
    SetVal,
    none_of,
    set_of,
    some,
)

R, V, MIN_ISR, INIT_ISR = 3, 1, 2, 2  # ReplicationFactor, |Values|, MinISR, InitIsrSize
AVOID_LRS = LIMIT_FETCHES = True  # AvoidLastReplicaStanding, LimitFetchesOnLeaderEpoch


def build(clean_limit: int = 1, unclean_limit: int = 0, fence_limit: int = 1,
          ap_limit: int = 1, view: bool = True, fetch_cap: int = 12) -> Spec:
    return kraft(clean_limit, unclean_limit, fence_limit, ap_limit, view, fetch_cap, elr=False)


def kraft(clean_limit: int, unclean_limit: int, fence_limit: int, ap_limit: int, view: bool,
          fetch_cap: int, elr: bool) -> Spec:
    """The v3.5 spec, or with ``elr`` the same commit's ELR proposal (``kraft_elr.py``)."""
    for name, x in (("clean_limit", clean_limit), ("unclean_limit", unclean_limit),
                    ("fence_limit", fence_limit), ("ap_limit", ap_limit)):
        if x < 0:
            raise ValueError(f"{name} must be at least 0, got {x}")
    spec = Spec("KafkaReplicationVElrSimple" if elr else "KafkaReplicationV35Simple",
                {"clean_limit": clean_limit, "unclean_limit": unclean_limit,
                 "fence_limit": fence_limit, "ap_limit": ap_limit, "view": view})
    S = clean_limit + unclean_limit  # restarts
    F = fence_limit + S  # fencing events; each may bump the leader epoch, and one unfence after
    U = unclean_limit if elr else 0  # an unclean registration is a partition change too
    LE, PE, ML = 1 + 2 * F + U, 2 + 2 * F + U + ap_limit, 1 + 2 * F + U + ap_limit
    BE, INC = R + S, R + 1 + S  # broker epochs, incarnation ids

    BStatus = Enum("OFFLINE_CLEAN", "OFFLINE_DIRTY", "STARTING", "RUNNING")
    CStatus = Enum("FENCED", "UNFENCED")
    Role = Enum("Nil", "Leader", "Follower")
    Err = Enum("Nil", "NotLeaderOrFollower", "UnknownLeaderEpoch", "FencedLeaderEpoch",
               "IneligibleReplica")
    Broker = Int(0, R - 1)
    LeaderT = Opt(Broker)  # none: NoLeader
    Off = Int(1, V + 1)  # an LEO, HWM or fetch offset
    Epoch = Int(0, LE)
    PRec = Record(epoch=Epoch, offset=Int(0, V), value=Int(0, V - 1))
    with_elr = {"elr": SetOf(R)} if elr else {}
    PCR = Record(leader=LeaderT, isr=SetOf(R), **with_elr, leader_epoch=Epoch,
                 partition_epoch=Int(0, PE))  # PartitionChangeRecord
    ConPM = Record(isr=SetOf(R), **with_elr, leader=LeaderT, leader_epoch=Epoch,
                   partition_epoch=Int(0, PE))
    RepPM = Record(isr=SetOf(R), maximal_isr=SetOf(R), leader=LeaderT, leader_epoch=Epoch,
                   partition_epoch=Int(0, PE))
    PFetch = Record(fetch_offset=Off, last_fetched_epoch=Epoch, delayed=Bool())
    PFetchOpt = Opt(PFetch)
    FetcherT = Record(partition=PFetchOpt, pending_response=Bool())
    APReq = Record(isr=SetOf(R), isr_and_epochs=Record(**{  # a function on isr: none outside
        f"b{i + 1}": Opt(Int(0, BE)) for i in range(R)}), leader=Broker, leader_epoch=Epoch,
        partition_epoch=Int(0, PE), broker_epoch=Int(0, BE), source=Broker)
    APReqOpt = Opt(APReq)
    APResp = Record(error=Err, isr=SetOf(R), leader=Broker, leader_epoch=Epoch,
                    partition_epoch=Int(0, PE), request=APReq, dest=Broker)
    RegReq = Record(broker_id=Broker, **({"broker_epoch": Int(0, BE)} if elr else {}),
                    incarnation_id=Int(0, INC), source=Broker)
    RegResp = Record(broker_epoch=Int(0, BE), metadata_offset=Int(0, ML), dest=Broker)
    FReq = Record(broker_epoch=Int(0, BE), leader_epoch=Epoch, fetch_offset=Off,
                  last_fetched_epoch=Epoch, dest=Broker, source=Broker)
    Diverging = Opt(Record(epoch=Epoch, offset=Int(0, V + 1)))  # offset 0: the spec's Nil
    Records = Seq(PRec, 1)
    FResp = Record(error=Err, leader_epoch=Epoch, fetch_offset=Off, hwm=Off,
                   diverging_epoch=Diverging, records=Records, dest=Broker, source=Broker)

    d = spec.declare
    con_unfenced = d("con_unfenced", SetOf(R))
    creg = d("con_broker_reg", Record(status=CStatus, broker_epoch=Int(0, BE),
                                      incarnation_id=Int(0, INC)), over=(R,))
    con = d("con_partition_metadata", ConPM)
    con_log = d("con_metadata_log", Seq(PCR, ML))
    bst = d("broker_state", Record(status=BStatus, broker_epoch=Int(0, BE),
                                   incarnation_id=Int(0, INC), registered=Bool()), over=(R,))
    fet = d("broker_fetchers", FetcherT, over=(R, R))
    bml = d("broker_metadata_log", Seq(PCR, ML), over=(R,))
    status = d("partition_status", Role, over=(R,))
    pm = d("partition_metadata", RepPM, over=(R,))
    Eso = Opt(Int(0, V + 1))  # the ELR spec's epoch_start_offset: Nil, 0 or an offset
    pd = d("partition_data", Record(log=Seq(PRec, V), hwm=Off, leo=Off, **(
        {"epoch_start_offset": Eso} if elr else {})), over=(R,))
    leso = None if elr else d("partition_leso", Opt(Off), over=(R,))
    rs = d("partition_replica_state", Record(leo=Opt(Off), broker_epoch=Int(0, BE)),
           over=(R, R))
    pap = d("partition_pending_ap", Record(epoch=Int(0, PE + 1), request=Opt(APReq)),
            over=(R,))
    aux_be = d("aux_broker_epoch", Int(R, R + S))
    ctrs = d("aux_ctrs", Record(incarn_ctr=Int(R + 1, INC), clean_shutdown_ctr=Int(0, clean_limit),
                                unclean_shutdown_ctr=Int(0, unclean_limit),
                                fence_broker_ctr=Int(0, fence_limit),
                                alter_part_ctr=Int(0, ap_limit)))
    sent = d("inv_sent", SetOf(V))
    pos_acked = d("inv_pos_acked", SetOf(V))
    neg_acked = d("inv_neg_acked", SetOf(V))
    true_hwm = d("inv_true_hwm", Off)
    consumed = d("inv_consumed", Seq(PRec, V))
    m_rreq = d("messages_RegisterBrokerRequest", Bag(RegReq, max(S, 1), 1))
    m_rresp = d("messages_RegisterBrokerResponse", Bag(RegResp, max(S, 1), 1))
    m_apreq = d("messages_AlterPartitionRequest", Bag(APReq, max(ap_limit, 1), 1))
    m_apresp = d("messages_AlterPartitionResponse", Bag(APResp, max(ap_limit, 1), 1))
    m_freq = d("messages_FetchRequest", Bag(FReq, fetch_cap, 1))
    m_fresp = d("messages_FetchResponse", Bag(FResp, fetch_cap, 1))
    NIL, Off_none = LeaderT.none, Opt(Off).none
    blank_fetcher = FetcherT(partition=none_of(PFetchOpt), pending_response=False)

    def pcr(leader, isr, elr_set, le, pe):  # a PartitionChangeRecord (elr_set: the ELR spec's)
        return PCR(leader=leader, isr=isr, leader_epoch=le, partition_epoch=pe,
                   **({"elr": elr_set} if elr else {}))

    def records_of(has, e):  # <<e>> when has, else <<>>
        return SeqVal(Records, ite(has, 1, 0), lambda k: PRec(
            epoch=ite(has, e.epoch, 0), offset=ite(has, e.offset, 0), value=ite(has, e.value, 0)))

    def member(s: SetVal, x):  # x \in s for an expression x that may be out of 0..R-1
        return disj(False, *((x == k) & s.has(k) for k in range(R)))

    def mkset(fn) -> SetVal:  # the set of i with fn(i), for a constant or an expression i
        return SetVal(R, lambda i: fn(i) if isinstance(i, int) else disj(
            False, *((i == k) & fn(k) for k in range(R))))

    def frozen(b: Block, s: SetVal) -> SetVal:  # s as it is now, in locals
        cells = [b.let("s", s.has(k)) for k in range(R)]
        return SetVal(R, lambda i: cells[i] if isinstance(i, int) else disj(
            False, *((i == k) & cells[k] for k in range(R))))

    def init(b: Block) -> None:  # broker 1 (index 0) leads; ISR {1, 2}; broker 3 outside
        isr = set_of(R, *range(INIT_ISR))
        no_elr = set_of(R)  # the ELR spec's init_elr: {} as InitIsrSize = MinISR
        part_epoch = 1 if INIT_ISR == R else 2
        for r in range(R):
            b.set(con_unfenced.has(r), r < INIT_ISR)
            b.put(creg[r], creg[r].replace(status=CStatus.UNFENCED if r < INIT_ISR
                                           else CStatus.FENCED, broker_epoch=r + 1,
                                           incarnation_id=r + 1))
            b.put(bst[r], bst[r].replace(status=BStatus.RUNNING, broker_epoch=r + 1,
                                         incarnation_id=r + 1, registered=True))
            if r:
                b.put(fet[r, 0].partition, some(PFetchOpt, PFetch(
                    fetch_offset=1, last_fetched_epoch=0, delayed=False)))
            if r < INIT_ISR:
                b.put(bml[r][0], pcr(0, isr, no_elr, 1, part_epoch))
                b.set(bml[r].len, 1)
            b.put(status[r], Role.Leader if r == 0 else Role.Follower)
            b.put(pm[r], RepPM(isr=isr if r < INIT_ISR else set_of(R, *range(R)),
                               maximal_isr=isr if r < INIT_ISR else set_of(R, *range(R)),
                               leader=0, leader_epoch=1,
                               partition_epoch=part_epoch if r < INIT_ISR else 1))
            b.set(pd[r].hwm, 1)
            b.set(pd[r].leo, 1)
            if elr:
                b.set(pd[r].epoch_start_offset, 0)
            elif r == 0:
                b.set(leso[0], 1)
        b.put(con_log[0], pcr(0, isr, no_elr, 1, part_epoch))
        b.set(con_log.len, 1)
        b.put(con, ConPM(**pcr(0, isr, no_elr, 1, part_epoch)._fields))
        b.set(aux_be, R)
        b.set(ctrs.incarn_ctr, R + 1)
        b.set(true_hwm, 1)

    spec.initial(init)

    # -- v3_5_functions ---------------------------------------------------------------------
    def running(r):
        return bst[r].status == BStatus.RUNNING

    def offline(r):
        return (bst[r].status == BStatus.OFFLINE_CLEAN) | (bst[r].status == BStatus.OFFLINE_DIRTY)

    def pending_ap_response(r):  # PendingAlterPartitionResponse
        return pap[r].epoch > pm[r].partition_epoch

    def entry_epoch(r, o):  # LogEntryEpoch(r, o + 1)
        return pd[r].log[o].epoch

    def last_log_epoch(r, n):  # Last(log).epoch for a log of length n (0 when empty)
        out = 0
        for o in range(V):
            out = ite(n == o + 1, entry_epoch(r, o), out)
        return out

    def commit_offset(r, misr: SetVal, leo_lim, rleo):  # GetCommitOffset, HighestCommitted
        out = 0  # v3.5 counts the leader itself; the ELR spec reads its own entry (its LEO)
        for o in range(1, V + 1):
            committed = misr.forall(lambda b1, o=o: ((b1 == r) if not elr else False) | (
                (rleo(b1) != Off_none) & (rleo(b1) > o)))
            out = ite((o <= leo_lim - 1) & committed, o, out)
        return ite(pd[r].leo == 1, 0, out)

    def last_offset_for_epoch(r, req, is_leader):  # LastOffsetForEpoch: (epoch, offset)
        n = pd[r].log.len
        in_log = [n > o for o in range(V)]
        first = (n == 0) | (last_log_epoch(r, n) == req) | (
            (pm[r].leader_epoch == req) if is_leader else False)
        higher = 0  # the first offset of the lowest epoch above req
        for o in reversed(range(V)):
            between = disj(False, *(in_log[o2] & (entry_epoch(r, o2) > req)
                                    & (entry_epoch(r, o2) < entry_epoch(r, o))
                                    for o2 in range(o)))
            higher = ite(in_log[o] & (entry_epoch(r, o) > req) & ~between, o + 1, higher)
        any_higher = disj(False, *(in_log[o] & (entry_epoch(r, o) > req) for o in range(V)))
        higher = ite(any_higher, higher, ite(pm[r].leader_epoch > req, pd[r].leo, 0)
                     if is_leader else 0)
        floor, any_floor = 0, disj(False, *(in_log[o] & (entry_epoch(r, o) <= req)
                                            for o in range(V)))
        for o in range(V):
            floor = ite(in_log[o] & (entry_epoch(r, o) <= req) & (entry_epoch(r, o) > floor),
                        entry_epoch(r, o), floor)
        return (ite(first, req, ite(any_floor, floor, req)), ite(first, pd[r].leo, higher))

    def update_hwm_inv(b: Block, r, old_hwm, new_hwm, pos) -> None:
        """UpdateHwmInvariantVars (``pos`` may be an expression): reads before it writes."""
        hi = b.let("hi", ite(pos, new_hwm - 1, pd[r].leo - 1))
        acks(b, r, old_hwm, hi, pos)
        th = b.let("th", true_hwm)
        for o in range(1, V + 1):  # inv_consumed \o SubSeq(log, inv_true_hwm, new_hwm - 1)
            with b.when((new_hwm > th) & (o >= th) & (o <= new_hwm - 1)):
                b.append(consumed, pd[r].log[o - 1])
        b.set(true_hwm, ite(new_hwm > th, new_hwm, th))

    def acks(b: Block, r, lo, hi, pos) -> None:  # SendAcksFor(r, lo, hi, pos)
        pos = lift(pos)
        for v in range(V):
            newly = b.let("newly", sent.has(v) & ~pos_acked.has(v) & ~neg_acked.has(v)
                          & exists(V, lambda o, v=v: (o + 1 >= lo) & (o + 1 <= hi)
                                   & (pd[r].log.len > o) & (pd[r].log[o].value == v)))
            b.set(pos_acked.has(v), pos_acked.has(v) | (newly & pos))
            b.set(neg_acked.has(v), neg_acked.has(v) | (newly & ~pos))

    def advance_hwm(b: Block, r, new_hwm, pos, isr=None) -> None:  # MaybeAdvanceHighWatermark
        old = b.let("old_hwm", pd[r].hwm)
        new = b.let("new_hwm", new_hwm)
        can = new > old  # the ELR spec's CanAdvanceHwm: only with the ISR at MinISR
        with b.when(can & (isr.size() >= MIN_ISR) if elr else can):
            update_hwm_inv(b, r, old, new, pos)
            b.set(pd[r].hwm, new)

    def can_advance(r):  # the ELR spec's SafeToAdvanceHwm on the leader's own ISR
        return pm[r].isr.size() >= MIN_ISR if elr else lift(True)

    def update_hwm_on_change(b: Block, r, misr: SetVal, isr: SetVal) -> None:
        # MaybeUpdateHwmOnPartitionChange: the commit offset over the new maximal ISR
        advance_hwm(b, r, commit_offset(r, misr, pd[r].leo, lambda b1: rs[r, b1].leo) + 1,
                    misr.size() >= MIN_ISR, isr)

    def fail_pending_writes(b: Block, r) -> None:  # FailPendingWrites
        acks(b, r, pd[r].hwm, pd[r].leo - 1, False)

    def reset_replica_state(b: Block, r, leader=False) -> None:
        # the ELR spec's new leader sets its own entry: HighestCommitted counts it
        for b1 in range(R):
            own = elr and leader
            b.set(rs[r, b1].leo, ite(r == b1, pd[r].leo, Off_none) if own else Off_none)
            b.set(rs[r, b1].broker_epoch, ite(r == b1, bst[r].broker_epoch, 0) if own else 0)

    def reset_pending_ap(b: Block, r) -> None:
        b.set(pap[r].epoch, 0)
        b.put(pap[r].request, none_of(APReqOpt))

    def remove_partition_from_fetchers(b: Block, r) -> None:
        for b1 in range(R):
            b.put(fet[r, b1].partition, none_of(PFetchOpt))

    # MaybeUpdatePartitionMetadata's CASE arms (the ELR spec's MaybeUpdatePartitionState) for
    # a new ISR, ELR (None in v3.5) and unfenced set: a dict of arm -> condition. The
    # candidate parameter's rule: a candidate of the arm that elects (\E candidate), else 0
    # (one transition).
    def arms(isr: SetVal, elr_s, unf: SetVal) -> dict:
        if not elr:
            has = exists(R, lambda i: isr.has(i) & unf.has(i))
            keep = ((con.leader == NIL) & ~has) | (member(isr, con.leader)
                                                   & member(unf, con.leader))
            return {"isr_only": keep & (isr != con.isr), "elect": ~keep & has,
                    "no_leader": ~keep & ~has}
        has = exists(R, lambda i: elr_s.has(i) & unf.has(i))
        some_isr = isr.size() > 0
        keep = ((con.leader == NIL) & ~some_isr & ~has) | member(isr, con.leader)
        same = (isr == con.isr) & (elr_s == con.elr)
        return {"isr_only": keep & ~same, "elect": ~keep & some_isr,
                "elect_elr": ~keep & ~some_isr & has, "no_leader": ~keep & ~some_isr & ~has}

    def candidate_ok(sets, cand, applies=True):
        isr, elr_s, unf = sets
        a = arms(*sets)
        ok = ite(a["elect"] & applies, isr.has(cand) & (lift(True) if elr else unf.has(cand)),
                 cand == 0)
        if elr:
            ok = ite(a["elect_elr"] & applies, elr_s.has(cand) & unf.has(cand), ok)
        return ok

    def apply_change(b: Block, leader, isr: SetVal, elr_s, le, pe) -> None:
        rec = pcr(leader, isr, elr_s, le, pe)  # ApplyPartitionChange
        b.append(con_log, rec)  # reads what the next line writes: first
        b.put(con, ConPM(**rec._fields))

    def update_pm(b: Block, sets, cand, applies=True) -> None:
        isr, elr_s, unf = sets
        a = {k: b.let(k, c & applies) for k, c in arms(*sets).items()}
        le, pe, ld = b.let("le", con.leader_epoch), b.let("pe", con.partition_epoch), b.let(
            "ld", con.leader)
        with b.when(a["isr_only"]):
            apply_change(b, ld, isr, elr_s, le, pe + 1)
        with b.when(a["elect"]):
            apply_change(b, cand, isr, elr_s, le + 1, pe + 1)
        if elr:
            with b.when(a["elect_elr"]):
                apply_change(b, cand, isr.add(cand), elr_s.remove(cand), le + 1, pe + 1)
        with b.when(a["no_leader"]):
            apply_change(b, NIL, isr, elr_s, le + 1, pe + 1)

    def update_elr(prop: SetVal) -> SetVal:
        """UpdateElrOnIsrChange: the ELR without the proposed ISR, then (UpdateElrUntilMinISR)
        emptied at MinISR, else topped up to MinISR with the smallest members of the old ISR
        left out (TLC's CHOOSE takes the smallest) or cut to it from its smallest."""
        e0 = con.elr - prop
        p, need = prop.size(), MIN_ISR - prop.size() - e0.size()

        def cand(i):
            return con.isr.has(i) & ~prop.has(i) & ~e0.has(i)

        def rank(f, i):  # how many j < i satisfy f
            return sum((ite(f(j), 1, 0) for j in range(i)), lift(0))

        return mkset(lambda i: ite(p >= MIN_ISR, False, ite(need == 0, e0.has(i), ite(
            need > 0, e0.has(i) | (cand(i) & (rank(cand, i) < need)),
            e0.has(i) & (rank(e0.has, i) >= 0 - need)))))

    def fenced_sets(r):  # HandleBrokerFenced's new ISR, ELR and unfenced set
        if elr:  # the ISR may empty
            isr = con.isr.remove(r)
            return isr, update_elr(isr), con_unfenced.remove(r)
        return (mkset(lambda i: ite(con.isr.size() == 1, con.isr.has(i),
                                    con.isr.has(i) & (i != r))), None, con_unfenced.remove(r))

    def unfenced_sets(r):  # HandleBrokerUnfenced's
        return con.isr, (con.elr if elr else None), con_unfenced.add(r)

    def unclean_sets(r):  # the ELR spec's ProcessUncleanBroker's
        return con.isr.remove(r), con.elr.remove(r), con_unfenced.add(r)

    def change(b: Block, sets, cand, applies=True) -> None:
        isr, elr_s, unf = (None if x is None else frozen(b, x) for x in sets)
        update_pm(b, (isr, elr_s, unf), cand, applies)
        b.put(con_unfenced, unf)

    def handle_fenced(b: Block, r, cand) -> None:
        change(b, fenced_sets(r), cand)

    def handle_unfenced(b: Block, r, cand) -> None:
        change(b, unfenced_sets(r), cand, applies=b.let("noleader", con.leader == NIL))

    def unfenced_ok(r, cand):
        return candidate_ok(unfenced_sets(r), cand, applies=con.leader == NIL)

    def fenced_ok(r, cand):
        return candidate_ok(fenced_sets(r), cand)

    # -- actions ----------------------------------------------------------------------------
    all_ctl = [con_unfenced, creg, con, con_log]

    @spec.action("BrokerStart", over=[R], modifies=[bst, status, m_rreq, ctrs])
    def broker_start(b: Block, r) -> None:
        b.require(offline(r))
        inc = b.let("inc", ctrs.incarn_ctr)
        # the ELR spec: the broker epoch on file (0 after an unclean shutdown) is kept and sent
        epoch = bst[r].broker_epoch if elr else 0
        b.insert(m_rreq, RegReq(broker_id=r, incarnation_id=inc, source=r, **(
            {"broker_epoch": bst[r].broker_epoch} if elr else {})))
        b.put(bst[r], bst[r].replace(status=BStatus.STARTING, broker_epoch=epoch,
                                     incarnation_id=inc, registered=False))
        b.put(status[r], Role.Nil)
        b.set(ctrs.incarn_ctr, inc + 1)

    @spec.action("ReceiveBrokerRegRequest", over=[R, m_rreq.cap, R],
                 modifies=all_ctl + [m_rreq, m_rresp, aux_be])
    def receive_reg_request(b: Block, r, k, cand) -> None:
        m = m_rreq.item(k)
        unclean = (m.broker_epoch == 0) if elr else lift(False)  # ProcessUncleanBroker
        b.require(m_rreq.present(k), m.source == r,
                  (creg[r].status == CStatus.FENCED)
                  | (creg[r].incarnation_id == m.incarnation_id),
                  ite(unclean, candidate_ok(unclean_sets(r), cand) if elr else True,
                      unfenced_ok(r, cand)))
        be = b.let("be", aux_be + 1)
        b.deliver(m_rreq, k)
        b.insert(m_rresp, RegResp(broker_epoch=be, metadata_offset=con_log.len, dest=r))
        b.put(creg[r], creg[r].replace(status=CStatus.UNFENCED, broker_epoch=be,
                                       incarnation_id=m.incarnation_id))
        if elr:
            with b.when(unclean):
                change(b, unclean_sets(r), cand)
            with b.otherwise():
                handle_unfenced(b, r, cand)
        else:
            handle_unfenced(b, r, cand)
        b.set(aux_be, be)

    @spec.action("ReceiveBrokerRegResponse", over=[R, m_rresp.cap],
                 modifies=[bst, bml, pm, m_rresp])
    def receive_reg_response(b: Block, r, k) -> None:
        m = m_rresp.item(k)
        b.require(m_rresp.present(k), m.dest == r, ~bst[r].registered)
        n = b.let("n", ite(m.metadata_offset <= 1, 0, m.metadata_offset - 1))  # __CatchUpBarOne
        for j in range(ML):
            with b.when(n > j):
                b.put(bml[r][j], con_log[j])
        b.truncate(bml[r], n)
        b.put(pm[r], RepPM(isr=set_of(R), maximal_isr=set_of(R), leader=NIL, leader_epoch=0,
                           partition_epoch=0))
        b.put(bst[r], bst[r].replace(status=BStatus.RUNNING, broker_epoch=m.broker_epoch,
                                     registered=True))
        b.deliver(m_rresp, k)

    @spec.action("UnfenceBroker", over=[R, R], modifies=all_ctl)
    def unfence_broker(b: Block, r, cand) -> None:
        b.require(creg[r].status == CStatus.FENCED, running(r), unfenced_ok(r, cand))
        handle_unfenced(b, r, cand)
        b.put(creg[r].status, CStatus.UNFENCED)

    @spec.action("FenceBroker", over=[R, R], modifies=all_ctl + [ctrs])
    def fence_broker(b: Block, r, cand) -> None:
        b.require(ctrs.fence_broker_ctr < fence_limit, creg[r].status == CStatus.UNFENCED,
                  fenced_ok(r, cand))
        handle_fenced(b, r, cand)
        b.put(creg[r].status, CStatus.FENCED)
        b.set(ctrs.fence_broker_ctr, ctrs.fence_broker_ctr + 1)

    def epoch_bump(r, j):  # IsLeaderEpochBump(r, j + 1)
        return con_log[j].leader_epoch > pm[r].leader_epoch

    part_writes = [status, pm, pd, rs, pap] + ([] if elr else [leso])
    inv_writes = [pos_acked, neg_acked, true_hwm, consumed]

    @spec.action("ReceiveMetadataUpdate", over=[R, ML], modifies=[bml, fet] + part_writes
                 + inv_writes)
    def receive_metadata_update(b: Block, r, k) -> None:
        cur = bml[r].len
        leader_now = status[r] == Role.Leader
        b.require(cur < con_log.len,  # ExistMetadataUpdates: one transition per epoch bump
                  ite(leader_now, k == 0, (k >= cur) & (k < con_log.len) & epoch_bump(r, k)),
                  ~offline(r), bst[r].registered)
        nxt = ML - 1  # NextMetadataRecord: the next record, or a follower's next epoch bump
        for j in reversed(range(ML)):
            nxt = ite((j >= cur) & (j < con_log.len) & epoch_bump(r, j), j, nxt)
        j = b.let("j", ite(leader_now, cur, nxt))
        c = b.let("cur", cur)
        rec = con_log[j]
        upd = b.let("upd", rec.partition_epoch > pm[r].partition_epoch)
        cur_me = b.let("cur_me", pm[r].leader == r)
        rec_me = b.let("rec_me", rec.leader == r)
        same_le = b.let("same_le", pm[r].leader_epoch == rec.leader_epoch)
        is_new_leader = b.let("is_new_leader", ~leader_now & rec_me)
        arm1, arm2 = cur_me & rec_me, ~cur_me & rec_me
        arm3 = ~arm1 & ~arm2 & (rec.leader != NIL)
        remain_leader = b.let("remain_leader", upd & arm1 & same_le)
        become_leader = b.let("become_leader", upd & ((arm1 & ~same_le) | arm2))
        remain_follower = arm3 & same_le & ~cur_me & ~rec_me
        become_follower = b.let("become_follower", upd & arm3 & ~remain_follower)
        wait = b.let("wait", upd & ~arm1 & ~arm2 & ~arm3)
        add_fetch = b.let("add_fetch", (rec.leader_epoch > pm[r].leader_epoch) | ~exists(
            R, lambda i: (rec.leader == i) & fet[r, i].partition.is_some()))
        # the ELR spec's new leader leaves its HWM for the fetches to advance
        with b.when(remain_leader if elr else remain_leader | become_leader):
            update_hwm_on_change(b, r, rec.isr, rec.isr)
        with b.when(remain_leader & (rec.partition_epoch >= pap[r].epoch)):
            reset_pending_ap(b, r)
        with b.when(become_leader):
            b.put(status[r], Role.Leader)
            if elr:
                b.set(pd[r].epoch_start_offset, pd[r].leo)
                reset_replica_state(b, r, leader=True)
            else:
                b.set(leso[r], pd[r].leo)
                with b.when(is_new_leader):
                    reset_replica_state(b, r)
            reset_pending_ap(b, r)
            remove_partition_from_fetchers(b, r)
        with b.when(become_follower | wait):  # EnsureLeadershipRenounced
            with b.when((pd[r].hwm < pd[r].leo)
                        & ((rec.isr.size() < MIN_ISR) | (r != rec.leader))):
                fail_pending_writes(b, r)
            reset_replica_state(b, r)
            reset_pending_ap(b, r)
            if not elr:
                b.set(leso[r], Off_none)
        with b.when(become_follower):
            b.put(status[r], Role.Follower)
            with b.when(add_fetch):  # AddPartitionToFetcher
                n = b.let("n", pd[r].log.len)
                add = PFetch(fetch_offset=pd[r].leo, last_fetched_epoch=last_log_epoch(r, n),
                             delayed=False)
                opt = PFetchOpt
                for i in range(R):
                    with b.when(rec.leader == i):
                        b.put(fet[r, i].partition, some(opt, add))
                    with b.otherwise():
                        b.put(fet[r, i].partition, none_of(opt))
        with b.when(wait):
            b.put(status[r], Role.Nil)
            remove_partition_from_fetchers(b, r)
        with b.when(upd):
            b.put(pm[r], RepPM(isr=rec.isr, maximal_isr=rec.isr, leader=rec.leader,
                               leader_epoch=rec.leader_epoch,
                               partition_epoch=rec.partition_epoch))
        for i in range(ML):  # broker_metadata_log[r] \o SubSeq(con_metadata_log, cur+1, j+1)
            with b.when((i >= c) & (i <= j)):
                b.put(bml[r][i], con_log[i])
        b.set(bml[r].len, j + 1)

    def timed_out(t, i):  # broker i (a constant) in the subset t of brokers
        return (t // (2 ** i)) % 2 == 1 if isinstance(i, int) else disj(
            False, *((i == k) & ((t // (2 ** k)) % 2 == 1) for k in range(R)))

    @spec.action("SendAlterPartitionRequest", over=[R, 2 ** R],
                 modifies=[m_apreq, pm, pap, ctrs])
    def send_ap_request(b: Block, r, t) -> None:
        def caught_up(i):  # FollowerIsCaughtUp
            leo = rs[r, i].leo
            start = pd[r].epoch_start_offset if elr else leso[r]  # the epoch's start offset
            return ((leo != Off_none) & (leo >= pd[r].hwm) & (leo >= start)
                    & ~timed_out(t, i))
        proposed = SetVal(R, lambda i: (i == r) | caught_up(i))
        curr = pm[r].isr
        b.require(ctrs.alter_part_ctr < ap_limit, running(r), ~pending_ap_response(r),
                  status[r] == Role.Leader, ~timed_out(t, r),
                  proposed != curr)
        epochs = {f"b{i + 1}": ite(proposed.has(i), ite(i == r, bst[r].broker_epoch, ite(
            curr.has(i), 0, rs[r, i].broker_epoch)), -1) for i in range(R)}
        req = APReq(isr=proposed, isr_and_epochs=APReq.fields["isr_and_epochs"](**epochs),
                    leader=r, leader_epoch=pm[r].leader_epoch,
                    partition_epoch=pm[r].partition_epoch,
                    broker_epoch=bst[r].broker_epoch, source=r)
        b.insert(m_apreq, req)
        b.put(pap[r], pap[r].replace(epoch=pm[r].partition_epoch + 1,
                                     request=some(APReqOpt, req)))
        b.put(pm[r].maximal_isr, proposed | curr)
        b.set(ctrs.alter_part_ctr, ctrs.alter_part_ctr + 1)

    @spec.action("ReceiveAlterPartitionRequest", over=[R, m_apreq.cap],
                 modifies=[con, con_log, m_apreq, m_apresp])
    def receive_ap_request(b: Block, r, k) -> None:
        m = m_apreq.item(k)
        b.require(m_apreq.present(k), m.source == r)
        iae = m.isr_and_epochs
        eligible = conj(*(  # IsEligibleBroker for every member of DOMAIN isr_and_epochs
            (e == -1) | ((creg[x].status == CStatus.UNFENCED)
                         & ((e == 0) | (creg[x].broker_epoch == e)))
            for x, e in ((x, getattr(iae, f"b{x + 1}")) for x in range(R))))
        valid = ((con.leader == r) & (m.broker_epoch == creg[r].broker_epoch)
                 & (m.partition_epoch == con.partition_epoch)
                 & (m.leader_epoch == con.leader_epoch))
        ok = b.let("ok", valid & eligible)
        err = b.let("err", ite(valid, Err.IneligibleReplica, Err.FencedLeaderEpoch))
        le, pe = b.let("le", con.leader_epoch), b.let("pe", con.partition_epoch + 1)
        new_elr = frozen(b, update_elr(m.isr)) if elr else None
        b.deliver(m_apreq, k)
        with b.when(ok):
            b.insert(m_apresp, APResp(error=Err.Nil, isr=m.isr, leader=m.leader,
                                      leader_epoch=le, partition_epoch=pe, request=m, dest=r))
            apply_change(b, m.leader, m.isr, new_elr, le, pe)
        with b.otherwise():
            b.insert(m_apresp, APResp(error=err, isr=set_of(R), leader=0, leader_epoch=0,
                                      partition_epoch=0, request=m, dest=r))

    @spec.action("ReceiveAlterPartitionResponse", over=[R, m_apresp.cap],
                 modifies=[pm, pap, m_apresp, pd] + inv_writes)
    def receive_ap_response(b: Block, r, k) -> None:
        m = m_apresp.item(k)
        b.require(m_apresp.present(k), m.dest == r, running(r), status[r] == Role.Leader,
                  pending_ap_response(r), pap[r].request.is_some(),
                  pap[r].request.value == m.request,
                  ite(m.error == Err.Nil, m.partition_epoch > pm[r].partition_epoch, True))
        ok = b.let("ok", m.error == Err.Nil)
        # the new (or the rolled back) partition state's ISR, its maximal ISR too
        misr = frozen(b, SetVal(R, lambda i: ite(ok, m.isr.has(i), pm[r].isr.has(i))))
        update_hwm_on_change(b, r, misr, misr)  # CommitPartitionChange
        with b.when(ok):  # CompletePartitionChange
            b.put(pm[r], RepPM(isr=m.isr, maximal_isr=m.isr, leader=m.leader,
                               leader_epoch=m.leader_epoch,
                               partition_epoch=m.partition_epoch))
        with b.otherwise():  # RollbackPartitionChange
            b.put(pm[r].maximal_isr, pm[r].isr)
        reset_pending_ap(b, r)
        b.deliver(m_apresp, k)

    @spec.action("SendFetchRequest", over=[R, R, 4], modifies=[m_freq, fet])
    def send_fetch_request(b: Block, f, ld, dj) -> None:
        fp = fet[f, ld].partition
        matching = pm[f].leader_epoch == pm[ld].leader_epoch
        peer = rs[ld, f].leo
        progress = [pd[f].leo < pd[ld].leo, pd[f].hwm < pd[ld].hwm, peer == Off_none,
                    (peer != Off_none) & (peer < pd[f].leo)]  # one transition per disjunct
        b.require(f != ld, running(f), fp.is_some(), ~fet[f, ld].pending_response,
                  pm[f].leader == ld, ~(fp.value.delayed & ~matching),
                  matching if LIMIT_FETCHES else True,
                  disj(*((dj == i) & p for i, p in enumerate(progress))))
        b.insert(m_freq, FReq(broker_epoch=bst[f].broker_epoch,
                              leader_epoch=pm[f].leader_epoch,
                              fetch_offset=fp.value.fetch_offset,
                              last_fetched_epoch=fp.value.last_fetched_epoch, dest=ld,
                              source=f))
        b.set(fet[f, ld].pending_response, True)
        b.set(fp.value.delayed, False)

    @spec.action("ReceiveFetchRequest", over=[R, R, fetch_cap],
                 modifies=[m_freq, m_fresp, rs, pd] + inv_writes)
    def receive_fetch_request(b: Block, r, src, k) -> None:
        m = m_freq.item(k)
        newer = pm[src].leader_epoch if elr else m.leader_epoch  # __ReceiveFetchMakesProgress
        b.require(m_freq.present(k), m.dest == r, m.source == src,
                  ~(newer > pm[r].leader_epoch) if LIMIT_FETCHES else True, running(r))
        lo_epoch, lo_offset = last_offset_for_epoch(r, m.last_fetched_epoch, True)
        stale = b.let("stale", (status[r] != Role.Leader)
                      | (pm[r].leader_epoch != m.leader_epoch))
        diverging = b.let("diverging", ~stale & ((lo_epoch < m.last_fetched_epoch)
                                                 | (lo_offset < m.fetch_offset)))
        le = pm[r].leader_epoch
        new_hwm = b.let("new_hwm", commit_offset(
            r, pm[r].maximal_isr, pd[r].leo,
            lambda i: ite(i == src, m.fetch_offset, rs[r, i].leo)) + 1)
        ok = b.let("ok", ~stale & ~diverging)
        has_rec = b.let("has_rec", ok & (m.fetch_offset < pd[r].leo))
        b.deliver(m_freq, k)
        b.insert(m_fresp, FResp(  # one response: its fields by the CASE arm that holds
            error=ite(~stale, Err.Nil, ite(le < m.leader_epoch, Err.UnknownLeaderEpoch, ite(
                le > m.leader_epoch, Err.FencedLeaderEpoch, Err.NotLeaderOrFollower))),
            leader_epoch=le, fetch_offset=m.fetch_offset,
            hwm=ite(ok & (new_hwm > pd[r].hwm) & can_advance(r), new_hwm, pd[r].hwm),
            diverging_epoch=OptVal(Diverging, diverging, Diverging.of(
                epoch=ite(diverging, lo_epoch, 0), offset=ite(diverging, lo_offset, 0))),
            records=records_of(has_rec, pd[r].log[ite(has_rec, m.fetch_offset - 1, 0)]),
            dest=src, source=r))
        with b.when(ok):
            fo = b.let("fo", m.fetch_offset)
            b.set(rs[r, src].leo, fo)
            b.set(rs[r, src].broker_epoch, m.broker_epoch)
            advance_hwm(b, r, new_hwm, True, pm[r].isr)

    @spec.action("ReceiveFetchResponse", over=[R, R, fetch_cap],
                 modifies=[m_fresp, fet, pd])
    def receive_fetch_response(b: Block, r, src, k) -> None:
        m = m_fresp.item(k)
        fp = fet[r, src].partition
        noop = ~((status[r] == Role.Follower) & fp.is_some()) | (
            fp.is_some() & (fp.value.fetch_offset != m.fetch_offset))
        err = ~noop & (m.error != Err.Nil)
        div = ~noop & ~err & m.diverging_epoch.is_some()
        b.require(m_fresp.present(k), m.dest == r, m.source == src, running(r),
                  fet[r, src].pending_response,
                  noop | err | div | (pd[r].leo == m.fetch_offset))
        noop, err, div = b.let("noop", noop), b.let("err", err), b.let("div", div)
        b.deliver(m_fresp, k)
        with b.when(noop | err):
            b.set(fet[r, src].pending_response, False)
        with b.when(err):
            b.set(fp.value.delayed, True)
        with b.when(div):  # TruncateToSafePoint
            de = m.diverging_epoch.value
            l_epoch, l_offset = last_offset_for_epoch(r, de.epoch, False)
            to = b.let("truncate_to", ite(l_epoch != de.epoch, l_offset,
                                          ite(l_offset < de.offset, l_offset, de.offset)))
            keep = b.let("keep", ite(to > 1, to - 1, 0))
            lfe = b.let("lfe", last_log_epoch(r, keep))
            b.truncate(pd[r].log, keep)
            b.set(pd[r].leo, keep + 1)
            if elr:
                b.set(pd[r].epoch_start_offset, Eso.none)
            b.put(fet[r, src], FetcherT(partition=some(PFetchOpt, PFetch(
                fetch_offset=keep + 1, last_fetched_epoch=lfe, delayed=False)),
                pending_response=False))
        with b.when(~noop & ~err & ~div):
            nrec = b.let("nrec", m.records.len)
            new_leo = b.let("new_leo", pd[r].log.len + nrec + 1)
            lfe = b.let("lfe", ite(nrec > 0, m.records[0].epoch,
                                   fp.value.last_fetched_epoch))
            hwm = b.let("hwm", ite(m.hwm <= new_leo, m.hwm, pd[r].hwm))
            with b.when(nrec > 0):
                b.append(pd[r].log, m.records[0])
            b.set(pd[r].leo, new_leo)
            b.set(pd[r].hwm, hwm)
            b.put(fet[r, src], FetcherT(partition=some(PFetchOpt, PFetch(
                fetch_offset=new_leo, last_fetched_epoch=lfe, delayed=False)),
                pending_response=False))

    @spec.action("WriteRecordToLeader", over=[R, V], modifies=[pd, sent, rs] + inv_writes)
    def write_record(b: Block, r, v) -> None:
        b.require(~sent.has(v), running(r), status[r] == Role.Leader,
                  pm[r].maximal_isr.size() >= MIN_ISR)
        leo = b.let("leo", pd[r].leo)
        if not elr:  # the ELR spec leaves the HWM to the fetches; the leader's LEO counts
            old = b.let("old_hwm", pd[r].hwm)
            new = b.let("new_hwm", commit_offset(r, pm[r].maximal_isr, leo + 1,
                                                 lambda i: rs[r, i].leo) + 1)
            with b.when(new > old):
                update_hwm_inv(b, r, old, new, True)
            b.set(pd[r].hwm, ite(new > old, new, old))
        else:
            b.set(rs[r, r].leo, leo + 1)
        b.append(pd[r].log, PRec(epoch=pm[r].leader_epoch, offset=leo, value=v))
        b.set(pd[r].leo, leo + 1)
        b.set(sent.has(v), True)

    def drop_fetch_sessions(b: Block, r) -> None:  # DropFetchSessions
        for bag in (m_freq, m_fresp):
            for j in range(fetch_cap):
                it = bag.item(j)
                b.set(bag.count(j), ite((it.dest == r) | (it.source == r), 0, bag.count(j)))
        for b1 in range(R):
            for b2 in range(R):
                f = fet[b1, b2]
                with b.when(r == b1):
                    b.put(f, blank_fetcher)
                with b.otherwise():
                    with b.when((r == b2) & f.pending_response):
                        with b.when(f.partition.is_some()):
                            b.set(f.partition.value.delayed, True)
                        b.set(f.pending_response, False)

    def shutdown(b: Block, r, new_status, epoch=0) -> None:  # what both shutdowns share
        with b.when((status[r] == Role.Leader) & (pd[r].hwm < pd[r].leo)):
            fail_pending_writes(b, r)  # FailPendingWritesIfLeader
        b.put(bst[r], bst[r].replace(status=new_status, broker_epoch=epoch, incarnation_id=0,
                                     registered=False))
        drop_fetch_sessions(b, r)
        b.put(status[r], Role.Nil)
        reset_replica_state(b, r)
        reset_pending_ap(b, r)

    shutdown_writes = all_ctl + [bst, fet, m_freq, m_fresp, status, rs, pap, ctrs,
                                 pos_acked, neg_acked]

    avoid_lrs = AVOID_LRS and not elr  # the ELR spec has no such guard, nor the fence one

    @spec.action("UncleanShutdown", over=[R, 2 if avoid_lrs else 1, R],
                 modifies=shutdown_writes + [pd] + ([] if elr else [leso]))
    def unclean_shutdown(b: Block, r, dj, cand) -> None:
        lrs = [con.leader != r, con.isr.size() > 1]  # one transition per true disjunct
        b.require(ctrs.unclean_shutdown_ctr < unclean_limit, ~offline(r),
                  disj(*((dj == i) & p for i, p in enumerate(lrs))) if avoid_lrs else True,
                  ctrs.fence_broker_ctr == 0 if not elr else True, fenced_ok(r, cand))
        shutdown(b, r, BStatus.OFFLINE_DIRTY)
        b.truncate(pd[r].log, 0)
        b.set(pd[r].hwm, 1)
        b.set(pd[r].leo, 1)
        if elr:
            b.set(pd[r].epoch_start_offset, 0)
        else:
            b.set(leso[r], Off_none)
        b.set(ctrs.unclean_shutdown_ctr, ctrs.unclean_shutdown_ctr + 1)
        handle_fenced(b, r, cand)
        b.put(creg[r].status, CStatus.FENCED)

    @spec.action("CleanShutdown", over=[R, R], modifies=shutdown_writes)
    def clean_shutdown(b: Block, r, cand) -> None:
        b.require(ctrs.clean_shutdown_ctr < clean_limit, ~offline(r), fenced_ok(r, cand))
        # the ELR spec's broker writes its broker epoch to a file on a clean shutdown
        shutdown(b, r, BStatus.OFFLINE_CLEAN, bst[r].broker_epoch if elr else 0)
        b.set(ctrs.clean_shutdown_ctr, ctrs.clean_shutdown_ctr + 1)
        handle_fenced(b, r, cand)
        b.put(creg[r].status, CStatus.FENCED)

    # -- v3_5_properties: the invariants ----------------------------------------------------
    def non_stale_leader(r):  # IsNonStaleLeader
        return (status[r] == Role.Leader) & (pm[r].leader_epoch == con.leader_epoch)

    def has_value(r, v):
        return exists(V, lambda o: (pd[r].log.len > o) & (pd[r].log[o].value == v))

    inv = spec.invariant
    inv("ValidBrokerState", forall(R, lambda r: ~running(r) | bst[r].registered),
        "a running broker is registered")
    inv("ValidReplicaState", forall(R, lambda r: (
        (status[r] != Role.Leader) | (pm[r].leader == r)) & (pd[r].leo == pd[r].log.len + 1)
        & forall(V, lambda o: (pd[r].log.len <= o) | (pd[r].log[o].offset == o + 1))),
        "a leader leads in its metadata; LEO is the log's length plus one")
    inv("ValidFetcherState", forall(R, lambda r: ~exists(R, lambda b1: exists(R, lambda b2: (
        b1 != r) & (b1 != b2) & fet[r, b1].partition.is_some()
        & fet[r, b2].partition.is_some()))
        & ite(status[r] == Role.Leader,
              ~exists(R, lambda b1: (b1 != r) & fet[r, b1].partition.is_some()),
              ite(status[r] == Role.Follower,
                  exists(R, lambda b1: (b1 != r) & fet[r, b1].partition.is_some()), True))),
        "a follower fetches from one broker, a leader from none")
    fenced_in_isr = exists(R, lambda r: (creg[r].status == CStatus.FENCED) & con.isr.has(r))
    inv("ValidControllerState", forall(R, lambda r: ite(creg[r].status == CStatus.FENCED,
                                                        ~con_unfenced.has(r),
                                                        con_unfenced.has(r)))
        & (~fenced_in_isr if elr else (con.isr.size() <= 1) | ~fenced_in_isr)
        & (True if elr else ~con.isr.is_empty()),
        "the unfenced set matches; fenced brokers leave the ISR")
    if elr:
        def inflight(bag, src, dst):
            return bag.exists(lambda m: (m.source == src) & (m.dest == dst))

        inv("ValidFetching", ~exists(R, lambda b1: exists(R, lambda b2: (b1 != b2) & inflight(
            m_freq, b1, b2) & inflight(m_fresp, b2, b1))),
            "one fetch or its response in flight between two brokers")

        def complete(s: SetVal):  # no running member misses a committed record
            return ~exists(R, lambda r: s.has(r) & (pd[r].leo < true_hwm) & running(r))

        inv("ValidControllerIsrAndElr", ~exists(R, lambda r: con.elr.has(r) & con.isr.has(r))
            & ((con.isr.size() >= MIN_ISR) | (con.isr.size() + con.elr.size() <= MIN_ISR))
            & complete(con.isr) & complete(con.elr),
            "the ELR is outside the ISR, tops it up to MinISR at most, and is complete")
    inv("ValidLeaderMaximalISR", forall(R, lambda r: ~non_stale_leader(r) | (
        (pending_ap_response(r) | (pm[r].maximal_isr == pm[r].isr))
        & ((pm[r].isr.size() < MIN_ISR) | (con.isr | con.elr).subset_of(pm[r].maximal_isr)
           if elr else con.isr.subset_of(pm[r].maximal_isr)))),
        "a current leader's maximal ISR holds the controller's ISR (and ELR)")
    inv("ControllerIsrHasUpToTrueHWM", ~exists(R, lambda r: con.isr.has(r)
                                               & (pd[r].leo < true_hwm) & running(r)),
        "no running ISR member misses a committed record")
    inv("LeaderHasCompleteCommittedLog", forall(R, lambda r: (con.leader != r) | forall(
        V, lambda v: ~pos_acked.has(v) | has_value(r, v))),
        "the controller's leader has every acknowledged record")
    inv("NoPartitionLogDivergence", forall(V, lambda o: ~exists(R, lambda b1: exists(
        R, lambda b2: (pd[b1].leo > o + 1) & (pd[b2].leo > o + 1) & (pd[b1].hwm > o + 1)
        & (pd[b2].hwm > o + 1) & (pd[b1].log[o].value != pd[b2].log[o].value)))),
        "replicas agree below their high watermarks")
    inv("NoMetadataLogDivergence", forall(ML, lambda o: (con_log.len <= o) | ~exists(
        R, lambda r: (bml[r].len > o) & (bml[r][o] != con_log[o]))),
        "every broker's metadata log is a prefix of the controller's")
    inv("ConsumedRecordsMatchLeaderLog", forall(R, lambda r: ~non_stale_leader(r) | forall(
        V, lambda o: (consumed.len <= o) | ((pd[r].log.len > o)
                                           & (pd[r].log[o] == consumed[o])))),
        "what consumers read stays in the current leader's log")
    inv("NoCommittedRecordLostGlobally", forall(V, lambda v: ~pos_acked.has(v) | exists(
        R, lambda r: has_value(r, v))), "an acknowledged record survives somewhere")
    if view:
        spec.view_of(*(x.name for x in spec.typed if not x.name.startswith("aux_")))
    return spec
