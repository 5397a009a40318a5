---- MODULE Slots ----
\* Records, values-or-markers and a named INSTANCE with a variable substituted, for the
\* compiled path (SlotLog.tla): each node's log holds entries (records) or Nil; a leader writes,
\* a follower copies the leader's entries it lacks and truncates where they differ.
EXTENDS Integers
CONSTANTS Nodes, Size, MaxEpoch
Nil == -1
None == "none"
VARIABLES log, leader, epoch, seen

Entries == [epoch : 0 .. MaxEpoch, id : 0 .. 1]
L == INSTANCE SlotLog WITH logs <- log, Entries <- Entries

Init == /\ L!Init
        /\ leader = None
        /\ epoch = 0
        /\ seen = {}

Elect == \E n \in Nodes :
    /\ leader # n
    /\ epoch < MaxEpoch
    /\ leader' = n
    /\ epoch' = epoch + 1
    /\ UNCHANGED <<log, seen>>

Write == \E i \in 0 .. 1 :
    /\ leader \in Nodes
    /\ L!Append(leader, [epoch |-> epoch, id |-> i])
    /\ UNCHANGED <<leader, epoch, seen>>

Copy == \E n \in Nodes :
    /\ leader \in Nodes
    /\ n # leader
    /\ LET ahead == {w \in L!Written(leader) : ~L!Has(n, w.entry, w.offset)}
       IN \E w \in ahead :
          /\ w.offset = log[n].len
          /\ ~L!Has(n, w.entry, w.offset)
          /\ L!Append(n, w.entry)
    /\ seen' = seen \cup {L!Last(leader)}
    /\ UNCHANGED <<leader, epoch>>

Truncate == \E n \in Nodes, k \in 0 .. Size :
    /\ leader \in Nodes \ {n}
    /\ \A o \in {x \in L!Offsets : x < k} : log[n].slots[o] = log[leader].slots[o]
    /\ \/ k = 0
       \/ k > 0 /\ \E e \in Entries : L!Has(n, e, k - 1)
    /\ L!TruncateTo(n, k)
    /\ UNCHANGED <<leader, epoch, seen>>

Next == Elect \/ Write \/ Copy \/ Truncate

NilBeyondLength == \A n \in Nodes : \A o \in L!Offsets : o >= log[n].len => log[n].slots[o] = Nil
LastIsWritten == \A n \in Nodes : L!Last(n) = Nil \/ L!Last(n).epoch <= epoch
====
