------------------------------ MODULE KafkaKRaft ------------------------------
(* hwcheck's Kafka model with the KRaft controller (docs/kafka-model.md:          *)
(* Guards are IF-THEN-ELSE, not disjunctions: TLC takes both branches of a true   *)
(* disjunction and counts the same successor twice.                              *)
(* --controller kraft, and --unflushed-loss, --fencing kip-320, --elr), written   *)
(* for TLC from that document so that its state counts can be compared with       *)
(* hwcheck's engines: see docs/tla/README.md. Balanced unclean recovery is not    *)
(* stated here.                                                                    *)
EXTENDS Integers, FiniteSets

CONSTANTS R, M, E, Truncation, Expansion, Acks, MinIsr, Unclean, Loss, Fencing, Elr

Replicas == 0..(R - 1)
Offsets == 0..(M - 1)
NONE == -1
OOR == E + 1

VARIABLES log, hw, alive, leader, epoch, isr, synced, rleo, pending, respRec, respHw,
          committed, acked, flushed, fenced, bLeader, bEpoch, lIsr, elr, unclean
vars == <<log, hw, alive, leader, epoch, isr, synced, rleo, pending, respRec, respHw,
          committed, acked, flushed, fenced, bLeader, bEpoch, lIsr, elr, unclean>>

Min2(a, b) == IF a < b THEN a ELSE b
Max2(a, b) == IF a > b THEN a ELSE b
MinS(S) == CHOOSE x \in S : \A y \in S : x <= y
MaxS(S) == CHOOSE x \in S : \A y \in S : x >= y
Zeros == [f \in Replicas |-> 0]

Leo(l) == Cardinality({k \in Offsets : l[k] # 0})
Truncate(l, n) == [k \in Offsets |-> IF k < n THEN l[k] ELSE 0]

EndOffset(l, e) ==
    LET n == Leo(l)
        later == {k \in Offsets : k < n /\ l[k] > e}
    IN IF later = {} THEN n ELSE MinS(later)

(* The start of the epoch leader L knows, in its log. *)
EpochStart(L) ==
    LET n == Leo(log[L])
        cur == {k \in Offsets : k < n /\ log[L][k] = bEpoch[L]}
    IN IF cur = {} THEN n ELSE MinS(cur)

(* Leader L's new HW from its own ISR view "is" and records "rl"; with the ELR it waits for  *)
(* min ISR.                                                                                  *)
NewHw(L, lg, is, rl, h) ==
    IF Elr /\ Cardinality(is) < MinIsr THEN h[L]
    ELSE Max2(h[L], MinS({Leo(lg[L])} \cup {rl[f] : f \in is \ {L}}))

CommittedAfter(L, lg, old, new) ==
    [k \in Offsets |-> IF committed[k] = 0 /\ old <= k /\ k < new THEN lg[L][k] ELSE committed[k]]

AckedAfter(base, L, lg, is, old, new) ==
    IF Acks = "all" /\ Cardinality(is) >= MinIsr
    THEN [k \in Offsets |-> IF base[k] = 0 /\ old <= k /\ k < new THEN lg[L][k] ELSE base[k]]
    ELSE base

RECURSIVE Kip279(_, _, _)
Kip279(lf, ll, n) ==
    IF n = 0 THEN 0
    ELSE LET last == lf[n - 1]
             cands == {ll[k] : k \in {j \in Offsets : j < Leo(ll)}} \cap 1..last
             common == IF cands = {} THEN 0 ELSE MaxS(cands)
         IN IF common = 0 THEN 0
            ELSE LET endL == EndOffset(ll, common)
                 IN IF common = last THEN Min2(n, endL)
                    ELSE LET later == {k \in Offsets : k < n /\ lf[k] > common}
                             endF == IF later = {} THEN n ELSE MinS(later)
                         IN Kip279(lf, ll, Min2(endL, endF))

TruncPoint(f, L) ==
    LET lf == Leo(log[f])
        last == IF lf > 0 THEN log[f][lf - 1] ELSE 0
    IN CASE Truncation = "hw" -> Min2(lf, hw[f])
         [] Truncation = "epoch" -> IF last = 0 THEN 0 ELSE Min2(lf, EndOffset(log[L], last))
         [] Truncation = "epoch279" -> Kip279(log[f], log[L], lf)

(* Broker L believes it leads; the controller accepts its AlterPartition. *)
Leads(L) == L \in alive /\ bLeader[L] = L
Current(L) == leader = L /\ epoch = bEpoch[L] /\ isr = lIsr[L]
(* KIP-966 after an ISR change to "is", the replicas in "left" having left it. *)
ElrAfter(is, left) == IF Cardinality(is) >= MinIsr THEN {} ELSE (elr \cup left) \ is

Init ==
    /\ log = [r \in Replicas |-> [k \in Offsets |-> 0]]
    /\ hw = Zeros
    /\ alive = Replicas
    /\ leader = 0
    /\ epoch = 1
    /\ isr = Replicas
    /\ synced = Replicas
    /\ rleo = [r \in Replicas |-> Zeros]
    /\ pending = {}
    /\ respRec = Zeros
    /\ respHw = Zeros
    /\ committed = [k \in Offsets |-> 0]
    /\ acked = [k \in Offsets |-> 0]
    /\ flushed = Zeros
    /\ fenced = {}
    /\ bLeader = Zeros
    /\ bEpoch = [r \in Replicas |-> 1]
    /\ lIsr = [r \in Replicas |-> IF r = 0 THEN Replicas ELSE {}]
    /\ elr = {}
    /\ unclean = {}

Produce(L) ==
    /\ Leads(L) /\ Leo(log[L]) < M
    /\ IF Acks = "all" THEN Cardinality(lIsr[L]) >= MinIsr ELSE TRUE
    /\ LET n == Leo(log[L])
           lg == [log EXCEPT ![L][n] = bEpoch[L]]
           ack1 == IF Acks = "1" /\ acked[n] = 0 THEN [acked EXCEPT ![n] = bEpoch[L]] ELSE acked
           nh == NewHw(L, lg, lIsr[L], rleo[L], hw)
       IN /\ log' = lg
          /\ hw' = [hw EXCEPT ![L] = nh]
          /\ committed' = CommittedAfter(L, lg, hw[L], nh)
          /\ acked' = AckedAfter(ack1, L, lg, lIsr[L], hw[L], nh)
    /\ UNCHANGED <<alive, leader, epoch, isr, synced, rleo, pending, respRec, respHw, flushed,
                   fenced, bLeader, bEpoch, lIsr, elr, unclean>>

FetchRequest(f) ==
    /\ f \in alive /\ bLeader[f] # NONE /\ bLeader[f] # f /\ f \in synced /\ f \notin pending
    /\ Leads(bLeader[f])
    /\ IF Fencing THEN bEpoch[bLeader[f]] = bEpoch[f] ELSE TRUE
    /\ LET L == bLeader[f]
           lf == Leo(log[f])
           ll == Leo(log[L])
       IN IF lf > ll
          THEN /\ respRec' = [respRec EXCEPT ![f] = OOR]
               /\ respHw' = [respHw EXCEPT ![f] = ll]
               /\ pending' = pending \cup {f}
               /\ UNCHANGED <<log, hw, alive, leader, epoch, isr, synced, rleo, committed, acked,
                              flushed, fenced, bLeader, bEpoch, lIsr, elr, unclean>>
          ELSE LET rl == [rleo EXCEPT ![L][f] = lf]
                   join == f \notin lIsr[L] /\ lf >= hw[L]
                           /\ IF Expansion = "hw" THEN TRUE ELSE lf >= EpochStart(L)
                   acc == join /\ Current(L) /\ f \notin fenced
                   is == IF acc THEN isr \cup {f} ELSE isr
                   lis == IF acc THEN [lIsr EXCEPT ![L] = @ \cup {f}] ELSE lIsr
                   nh == NewHw(L, log, lis[L], rl[L], hw)
               IN /\ rleo' = rl
                  /\ isr' = is
                  /\ lIsr' = lis
                  /\ elr' = IF acc /\ Elr THEN ElrAfter(is, {}) ELSE elr
                  /\ hw' = [hw EXCEPT ![L] = nh]
                  /\ committed' = CommittedAfter(L, log, hw[L], nh)
                  /\ acked' = AckedAfter(acked, L, log, lis[L], hw[L], nh)
                  /\ respRec' = [respRec EXCEPT ![f] = IF lf < ll THEN log[L][lf] ELSE 0]
                  /\ respHw' = [respHw EXCEPT ![f] = nh]
                  /\ pending' = pending \cup {f}
                  /\ UNCHANGED <<log, alive, leader, epoch, synced, flushed, fenced, bLeader,
                                 bEpoch, unclean>>

FetchResponse(f) ==
    /\ f \in pending
    /\ LET rec == respRec[f]
           rh == respHw[f]
           lf == Leo(log[f])
       IN IF rec = OOR
          THEN LET n == Min2(lf, rh)
               IN /\ log' = [log EXCEPT ![f] = Truncate(log[f], n)]
                  /\ hw' = [hw EXCEPT ![f] = Min2(hw[f], n)]
                  /\ flushed' = [flushed EXCEPT ![f] = Min2(flushed[f], n)]
          ELSE LET lg == IF rec # 0 THEN [log EXCEPT ![f][lf] = rec] ELSE log
               IN /\ log' = lg
                  /\ hw' = [hw EXCEPT ![f] = Min2(Leo(lg[f]), rh)]
                  /\ UNCHANGED flushed
    /\ pending' = pending \ {f}
    /\ respRec' = [respRec EXCEPT ![f] = 0]
    /\ respHw' = [respHw EXCEPT ![f] = 0]
    /\ UNCHANGED <<alive, leader, epoch, isr, synced, rleo, committed, acked, fenced, bLeader,
                   bEpoch, lIsr, elr, unclean>>

BecomeFollower(f) ==
    /\ f \in alive /\ bLeader[f] # NONE /\ bLeader[f] # f /\ f \notin synced
    /\ IF Truncation = "hw" THEN TRUE
       ELSE Leads(bLeader[f]) /\ IF Fencing THEN bEpoch[bLeader[f]] = bEpoch[f] ELSE TRUE
    /\ LET n == TruncPoint(f, bLeader[f])
       IN /\ log' = [log EXCEPT ![f] = Truncate(log[f], n)]
          /\ hw' = [hw EXCEPT ![f] = Min2(hw[f], n)]
          /\ flushed' = [flushed EXCEPT ![f] = Min2(flushed[f], n)]
    /\ synced' = synced \cup {f}
    /\ UNCHANGED <<alive, leader, epoch, isr, rleo, pending, respRec, respHw, committed, acked,
                   fenced, bLeader, bEpoch, lIsr, elr, unclean>>

ShrinkIsr(L, f) ==
    /\ Leads(L) /\ f # L /\ f \in lIsr[L] /\ Current(L)
    /\ LET is == isr \ {f}
           lis == [lIsr EXCEPT ![L] = @ \ {f}]
           nh == NewHw(L, log, lis[L], rleo[L], hw)
       IN /\ isr' = is
          /\ lIsr' = lis
          /\ elr' = IF Elr THEN ElrAfter(is, {f}) ELSE elr
          /\ hw' = [hw EXCEPT ![L] = nh]
          /\ committed' = CommittedAfter(L, log, hw[L], nh)
          /\ acked' = AckedAfter(acked, L, log, lis[L], hw[L], nh)
    /\ UNCHANGED <<log, alive, leader, epoch, synced, rleo, pending, respRec, respHw, flushed,
                   fenced, bLeader, bEpoch, unclean>>

(* Broker r stops; its view and its records as a leader are lost. *)
GoDown(r) ==
    /\ alive' = alive \ {r}
    /\ synced' = synced \ {r}
    /\ pending' = pending \ {r}
    /\ respRec' = [respRec EXCEPT ![r] = 0]
    /\ respHw' = [respHw EXCEPT ![r] = 0]
    /\ bLeader' = [bLeader EXCEPT ![r] = NONE]
    /\ bEpoch' = [bEpoch EXCEPT ![r] = 0]
    /\ lIsr' = [lIsr EXCEPT ![r] = {}]
    /\ rleo' = [rleo EXCEPT ![r] = Zeros]

Crash(r) ==
    /\ r \in alive
    /\ GoDown(r)
    /\ UNCHANGED <<log, hw, leader, epoch, isr, committed, acked, flushed, fenced, elr, unclean>>

PowerLoss(r) ==
    /\ Loss /\ r \in alive
    /\ GoDown(r)
    /\ log' = [log EXCEPT ![r] = Truncate(log[r], flushed[r])]
    /\ hw' = [hw EXCEPT ![r] = Min2(hw[r], flushed[r])]
    /\ unclean' = IF Elr THEN unclean \cup {r} ELSE unclean
    /\ UNCHANGED <<leader, epoch, isr, committed, acked, flushed, fenced, elr>>

Flush(r) ==
    /\ Loss /\ r \in alive /\ flushed[r] < Leo(log[r])
    /\ flushed' = [flushed EXCEPT ![r] = Leo(log[r])]
    /\ UNCHANGED <<log, hw, alive, leader, epoch, isr, synced, rleo, pending, respRec, respHw,
                   committed, acked, fenced, bLeader, bEpoch, lIsr, elr, unclean>>

Restart(r) ==
    /\ r \notin alive /\ r \in fenced
    /\ alive' = alive \cup {r}
    /\ synced' = synced \ {r}
    /\ IF Truncation = "hw"
       THEN LET n == Min2(Leo(log[r]), hw[r])
            IN /\ log' = [log EXCEPT ![r] = Truncate(log[r], n)]
               /\ hw' = [hw EXCEPT ![r] = Min2(hw[r], n)]
               /\ flushed' = [flushed EXCEPT ![r] = Min2(flushed[r], n)]
       ELSE UNCHANGED <<log, hw, flushed>>
    /\ IF r \in unclean
       THEN elr' = elr \ {r} /\ unclean' = unclean \ {r}
       ELSE UNCHANGED <<elr, unclean>>
    /\ UNCHANGED <<leader, epoch, isr, rleo, pending, respRec, respHw, committed, acked, fenced,
                   bLeader, bEpoch, lIsr>>

Elect(c) ==
    /\ leader = NONE /\ epoch < E /\ c \notin fenced
    /\ LET eligible == c \in isr \/ c \in elr
           none == ~\E r \in Replicas : (r \in isr \/ r \in elr) /\ r \notin fenced
           is == IF eligible THEN isr \cup {c} ELSE {c}
       IN /\ IF eligible THEN TRUE ELSE Unclean /\ none
          /\ isr' = is
          /\ elr' = IF eligible THEN ElrAfter(is, {}) ELSE {}
    /\ leader' = c
    /\ epoch' = epoch + 1
    /\ UNCHANGED <<log, hw, alive, synced, rleo, pending, respRec, respHw, committed, acked,
                   flushed, fenced, bLeader, bEpoch, lIsr, unclean>>

FenceBroker(r) ==
    /\ r \notin fenced
    /\ fenced' = fenced \cup {r}
    /\ IF Elr
       THEN /\ isr' = isr \ {r}
            /\ elr' = ElrAfter(isr \ {r}, IF r \in isr THEN {r} ELSE {})
       ELSE /\ isr' = IF \E s \in isr : s # r THEN isr \ {r} ELSE isr
            /\ UNCHANGED elr
    /\ leader' = IF leader = r THEN NONE ELSE leader
    /\ UNCHANGED <<log, hw, alive, epoch, synced, rleo, pending, respRec, respHw, committed,
                   acked, flushed, bLeader, bEpoch, lIsr, unclean>>

UnfenceBroker(r) ==
    /\ r \in alive /\ r \in fenced /\ bLeader[r] = leader /\ bEpoch[r] = epoch
    /\ fenced' = fenced \ {r}
    /\ UNCHANGED <<log, hw, alive, leader, epoch, isr, synced, rleo, pending, respRec, respHw,
                   committed, acked, flushed, bLeader, bEpoch, lIsr, elr, unclean>>

LearnMetadata(r) ==
    /\ r \in alive
    /\ LET moved == bLeader[r] # leader \/ bEpoch[r] # epoch
           lis == [lIsr EXCEPT ![r] = IF leader = r THEN isr ELSE {}]
           rl == [rleo EXCEPT ![r] = IF moved \/ leader # r THEN Zeros ELSE rleo[r]]
           nh == NewHw(r, log, lis[r], rl[r], hw)
       IN /\ IF moved THEN TRUE ELSE leader = r /\ lIsr[r] # isr
          /\ bLeader' = [bLeader EXCEPT ![r] = leader]
          /\ bEpoch' = [bEpoch EXCEPT ![r] = epoch]
          /\ lIsr' = lis
          /\ rleo' = rl
          /\ IF moved
             THEN /\ synced' = IF leader = r THEN synced \cup {r} ELSE synced \ {r}
                  /\ pending' = pending \ {r}
                  /\ respRec' = [respRec EXCEPT ![r] = 0]
                  /\ respHw' = [respHw EXCEPT ![r] = 0]
             ELSE UNCHANGED <<synced, pending, respRec, respHw>>
          /\ IF leader = r
             THEN /\ hw' = [hw EXCEPT ![r] = nh]
                  /\ committed' = CommittedAfter(r, log, hw[r], nh)
                  /\ acked' = AckedAfter(acked, r, log, lis[r], hw[r], nh)
             ELSE UNCHANGED <<hw, committed, acked>>
    /\ UNCHANGED <<log, alive, leader, epoch, isr, flushed, fenced, elr, unclean>>

Next ==
    \/ \E f \in Replicas :
        \/ Produce(f) \/ FetchRequest(f) \/ FetchResponse(f) \/ BecomeFollower(f)
        \/ Crash(f) \/ Restart(f) \/ Elect(f) \/ Flush(f) \/ PowerLoss(f)
        \/ FenceBroker(f) \/ UnfenceBroker(f) \/ LearnMetadata(f)
    \/ \E L, f \in Replicas : ShrinkIsr(L, f)

Spec == Init /\ [][Next]_vars

Serving == leader # NONE /\ leader \in alive
HwBelowLeo == \A r \in Replicas : hw[r] <= Leo(log[r])
LeaderInIsr == leader # NONE => leader \in isr
CommittedNotLost == Serving => \A k \in Offsets : committed[k] # 0 => log[leader][k] = committed[k]
AckedNotLost == Serving => \A k \in Offsets : acked[k] # 0 => log[leader][k] = acked[k]
LogsMatchBelowHw == \A a, b \in Replicas : \A k \in Offsets :
                        k < Min2(hw[a], hw[b]) => log[a][k] = log[b][k]
ElrMembersComplete == \A r \in elr \ unclean : \A k \in Offsets :
                        committed[k] # 0 => log[r][k] = committed[k]
=============================================================================
