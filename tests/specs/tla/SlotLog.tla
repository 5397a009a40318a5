---- MODULE SlotLog ----
\* A log of fixed slots, each a record or Nil (a value or a marker), instanced by Slots.tla
\* with its variable substituted, as hachikuji's FiniteReplicatedLog.
EXTENDS Integers
CONSTANTS Nodes, Entries, Nil, Size
VARIABLE logs

Offsets == 0 .. Size - 1
Empty == [len |-> 0, slots |-> [o \in Offsets |-> Nil]]

Init == logs = [n \in Nodes |-> Empty]
Has(n, e, o) == o < logs[n].len /\ logs[n].slots[o] = e
Last(n) == IF logs[n].len = 0 THEN Nil ELSE logs[n].slots[logs[n].len - 1]
Written(n) == IF logs[n].len = 0 THEN {}
              ELSE {[offset |-> o, entry |-> logs[n].slots[o]] : o \in 0 .. logs[n].len - 1}
Append(n, e) == /\ logs[n].len < Size
                /\ logs' = [logs EXCEPT ![n].slots[logs[n].len] = e, ![n].len = @ + 1]
TruncateTo(n, k) == /\ k <= logs[n].len
                    /\ logs' = [logs EXCEPT ![n].slots = [o \in Offsets |->
                                    IF o < k THEN @[o] ELSE Nil], ![n].len = k]
====
