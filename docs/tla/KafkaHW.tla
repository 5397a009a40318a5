------------------------------- MODULE KafkaHW -------------------------------
(* hwcheck's base Kafka model (docs/model.md), written for TLC so that its state  *)
(* counts can be compared with hwcheck's engines: see docs/tla/README.md.         *)
EXTENDS Integers, FiniteSets

CONSTANTS R, M, E, Truncation, Expansion, Acks, MinIsr, Unclean

Replicas == 0..(R - 1)
Offsets == 0..(M - 1)
NONE == -1
OOR == E + 1

VARIABLES log, hw, alive, leader, epoch, isr, synced, rleo, pending,
          respRec, respHw, committed, acked
vars == <<log, hw, alive, leader, epoch, isr, synced, rleo, pending,
          respRec, respHw, committed, acked>>

Min2(a, b) == IF a < b THEN a ELSE b
Max2(a, b) == IF a > b THEN a ELSE b
MinS(S) == CHOOSE x \in S : \A y \in S : x <= y
MaxS(S) == CHOOSE x \in S : \A y \in S : x >= y

Leo(l) == Cardinality({k \in Offsets : l[k] # 0})
Truncate(l, n) == [k \in Offsets |-> IF k < n THEN l[k] ELSE 0]

(* End offset of epoch e in log l: the first offset holding a larger epoch, else its LEO. *)
EndOffset(l, e) ==
    LET n == Leo(l)
        later == {k \in Offsets : k < n /\ l[k] > e}
    IN IF later = {} THEN n ELSE MinS(later)

EpochStart(L) ==
    LET n == Leo(log[L])
        cur == {k \in Offsets : k < n /\ log[L][k] = epoch}
    IN IF cur = {} THEN n ELSE MinS(cur)

HwAfter(L, lg, is, rl, h) ==
    LET m == MinS({Leo(lg[L])} \cup {rl[f] : f \in is \ {L}})
    IN Max2(h[L], m)

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

Init ==
    /\ log = [r \in Replicas |-> [k \in Offsets |-> 0]]
    /\ hw = [r \in Replicas |-> 0]
    /\ alive = Replicas
    /\ leader = 0
    /\ epoch = 1
    /\ isr = Replicas
    /\ synced = Replicas
    /\ rleo = [r \in Replicas |-> 0]
    /\ pending = {}
    /\ respRec = [r \in Replicas |-> 0]
    /\ respHw = [r \in Replicas |-> 0]
    /\ committed = [k \in Offsets |-> 0]
    /\ acked = [k \in Offsets |-> 0]

Produce ==
    /\ leader # NONE
    /\ Leo(log[leader]) < M
    /\ Acks # "all" \/ Cardinality(isr) >= MinIsr
    /\ LET L == leader
           n == Leo(log[L])
           lg == [log EXCEPT ![L][n] = epoch]
           ack1 == IF Acks = "1" /\ acked[n] = 0 THEN [acked EXCEPT ![n] = epoch] ELSE acked
           nh == HwAfter(L, lg, isr, rleo, hw)
       IN /\ log' = lg
          /\ hw' = [hw EXCEPT ![L] = nh]
          /\ committed' = CommittedAfter(L, lg, hw[L], nh)
          /\ acked' = AckedAfter(ack1, L, lg, isr, hw[L], nh)
          /\ UNCHANGED <<alive, leader, epoch, isr, synced, rleo, pending, respRec, respHw>>

FetchRequest(f) ==
    /\ leader # NONE /\ f # leader /\ f \in alive /\ f \in synced /\ f \notin pending
    /\ LET L == leader
           lf == Leo(log[f])
           ll == Leo(log[L])
       IN IF lf > ll
          THEN /\ respRec' = [respRec EXCEPT ![f] = OOR]
               /\ respHw' = [respHw EXCEPT ![f] = ll]
               /\ pending' = pending \cup {f}
               /\ UNCHANGED <<log, hw, alive, leader, epoch, isr, synced, rleo, committed, acked>>
          ELSE LET rl == [rleo EXCEPT ![f] = lf]
                   is == IF f \notin isr /\ lf >= hw[L] /\ (Expansion = "hw" \/ lf >= EpochStart(L))
                         THEN isr \cup {f} ELSE isr
                   nh == HwAfter(L, log, is, rl, hw)
               IN /\ rleo' = rl
                  /\ isr' = is
                  /\ hw' = [hw EXCEPT ![L] = nh]
                  /\ committed' = CommittedAfter(L, log, hw[L], nh)
                  /\ acked' = AckedAfter(acked, L, log, is, hw[L], nh)
                  /\ respRec' = [respRec EXCEPT ![f] = IF lf < ll THEN log[L][lf] ELSE 0]
                  /\ respHw' = [respHw EXCEPT ![f] = nh]
                  /\ pending' = pending \cup {f}
                  /\ UNCHANGED <<log, alive, leader, epoch, synced>>

FetchResponse(f) ==
    /\ f \in pending
    /\ LET rec == respRec[f]
           rh == respHw[f]
           lf == Leo(log[f])
       IN IF rec = OOR
          THEN LET n == Min2(lf, rh)
               IN /\ log' = [log EXCEPT ![f] = Truncate(log[f], n)]
                  /\ hw' = [hw EXCEPT ![f] = Min2(hw[f], n)]
          ELSE LET lg == IF rec # 0 THEN [log EXCEPT ![f][lf] = rec] ELSE log
               IN /\ log' = lg
                  /\ hw' = [hw EXCEPT ![f] = Min2(Leo(lg[f]), rh)]
    /\ pending' = pending \ {f}
    /\ respRec' = [respRec EXCEPT ![f] = 0]
    /\ respHw' = [respHw EXCEPT ![f] = 0]
    /\ UNCHANGED <<alive, leader, epoch, isr, synced, rleo, committed, acked>>

BecomeFollower(f) ==
    /\ leader # NONE /\ f # leader /\ f \in alive /\ f \notin synced
    /\ LET n == TruncPoint(f, leader)
       IN /\ log' = [log EXCEPT ![f] = Truncate(log[f], n)]
          /\ hw' = [hw EXCEPT ![f] = Min2(hw[f], n)]
    /\ synced' = synced \cup {f}
    /\ UNCHANGED <<alive, leader, epoch, isr, rleo, pending, respRec, respHw, committed, acked>>

ShrinkIsr(f) ==
    /\ leader # NONE /\ f # leader /\ f \in isr
    /\ LET is == isr \ {f}
           nh == HwAfter(leader, log, is, rleo, hw)
       IN /\ isr' = is
          /\ hw' = [hw EXCEPT ![leader] = nh]
          /\ committed' = CommittedAfter(leader, log, hw[leader], nh)
          /\ acked' = AckedAfter(acked, leader, log, is, hw[leader], nh)
    /\ UNCHANGED <<log, alive, leader, epoch, synced, rleo, pending, respRec, respHw>>

Crash(b) ==
    /\ b \in alive
    /\ alive' = alive \ {b}
    /\ synced' = synced \ {b}
    /\ pending' = pending \ {b}
    /\ respRec' = [respRec EXCEPT ![b] = 0]
    /\ respHw' = [respHw EXCEPT ![b] = 0]
    /\ IF b = leader
       THEN leader' = NONE /\ rleo' = [r \in Replicas |-> 0]
       ELSE UNCHANGED <<leader, rleo>>
    /\ UNCHANGED <<log, hw, epoch, isr, committed, acked>>

Restart(b) ==
    /\ b \notin alive
    /\ alive' = alive \cup {b}
    /\ synced' = synced \ {b}
    /\ IF Truncation = "hw"
       THEN LET n == Min2(Leo(log[b]), hw[b])
            IN /\ log' = [log EXCEPT ![b] = Truncate(log[b], n)]
               /\ hw' = [hw EXCEPT ![b] = Min2(hw[b], n)]
       ELSE UNCHANGED <<log, hw>>
    /\ UNCHANGED <<leader, epoch, isr, rleo, pending, respRec, respHw, committed, acked>>

Elect(c) ==
    /\ leader = NONE /\ epoch < E /\ c \in alive
    /\ LET liveIsr == isr \cap alive
           clean == c \in isr
       IN /\ clean \/ (Unclean /\ liveIsr = {})
          /\ LET is == IF clean THEN liveIsr ELSE {c}
                 rl == [r \in Replicas |-> 0]
                 nh == HwAfter(c, log, is, rl, hw)
             IN /\ isr' = is
                /\ leader' = c
                /\ epoch' = epoch + 1
                /\ rleo' = rl
                /\ synced' = {c}
                /\ pending' = {}
                /\ respRec' = [r \in Replicas |-> 0]
                /\ respHw' = [r \in Replicas |-> 0]
                /\ hw' = [hw EXCEPT ![c] = nh]
                /\ committed' = CommittedAfter(c, log, hw[c], nh)
                /\ acked' = AckedAfter(acked, c, log, is, hw[c], nh)
                /\ UNCHANGED <<log, alive>>

Next ==
    \/ Produce
    \/ \E f \in Replicas :
        \/ FetchRequest(f) \/ FetchResponse(f) \/ BecomeFollower(f)
        \/ ShrinkIsr(f) \/ Crash(f) \/ Restart(f) \/ Elect(f)

Spec == Init /\ [][Next]_vars

HwBelowLeo == \A r \in Replicas : hw[r] <= Leo(log[r])
LeaderInIsr == leader # NONE => leader \in isr
CommittedNotLost == leader # NONE => \A k \in Offsets : committed[k] # 0 => log[leader][k] = committed[k]
AckedNotLost == leader # NONE => \A k \in Offsets : acked[k] # 0 => log[leader][k] = acked[k]
LogsMatchBelowHw == \A a, b \in Replicas : \A k \in Offsets :
                        k < Min2(hw[a], hw[b]) => log[a][k] = log[b][k]
=============================================================================
