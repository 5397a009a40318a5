---- MODULE Records ----
\* Records and tuples of several kinds as variables' values, for the compiled path: a record,
\* a function to records, a record holding a record and a function, a set of records, a tuple
\* of an integer and a string; built, read by field, changed by EXCEPT on fields, compared.
EXTENDS Naturals
CONSTANTS Procs, Max

None == "none"

VARIABLES quorum, state, log, sent, pair

Init ==
    /\ quorum = [leader |-> None, epoch |-> 0, isr |-> Procs]
    /\ state = [p \in Procs |-> [hw |-> 0, leader |-> None, isr |-> {}]]
    /\ log = [len |-> 0, last |-> [epoch |-> 0, id |-> 0], ids |-> [p \in Procs |-> 0]]
    /\ sent = {}
    /\ pair = <<0, "idle">>

Elect(p) ==
    /\ p \in quorum.isr
    /\ quorum.leader # p
    /\ quorum.epoch < Max
    /\ LET new == [leader |-> p, epoch |-> quorum.epoch + 1, isr |-> quorum.isr]
       IN /\ quorum' = new
          /\ sent' = sent \cup {new}
    /\ pair' = <<pair[1] + 1, "elect">>
    /\ UNCHANGED <<state, log>>

Become == \E m \in sent :
    /\ m.epoch > state[m.leader].hw
    /\ state' = [state EXCEPT ![m.leader] = [hw |-> m.epoch, leader |-> m.leader,
                                             isr |-> m.isr]]
    /\ pair' = <<pair[1], "become">>
    /\ UNCHANGED <<quorum, log, sent>>

Shrink(p) ==
    /\ state[p].leader = p
    /\ state[p].isr # {p}
    /\ \E q \in state[p].isr \ {p} :
        /\ state' = [state EXCEPT ![p].isr = @ \ {q}, ![p].hw = 0]
        /\ quorum' = [quorum EXCEPT !.isr = @ \ {q}]
    /\ UNCHANGED <<log, sent, pair>>

Write(p) ==
    /\ state[p].leader = p
    /\ log.len < Max
    /\ log' = [log EXCEPT !.len = @ + 1,
                          !.last = [epoch |-> quorum.epoch, id |-> log.len],
                          !.ids[p] = @ + 1]
    /\ pair' = IF pair = <<1, "elect">> THEN <<0, "write">> ELSE pair
    /\ UNCHANGED <<quorum, state, sent>>

Next == (\E p \in Procs : Elect(p) \/ Shrink(p) \/ Write(p)) \/ Become

LeaderKnown == \A p \in Procs : state[p].leader \in Procs \cup {None}
SameLast == log.last = [id |-> 0, epoch |-> 0] => log.len <= 1
====
