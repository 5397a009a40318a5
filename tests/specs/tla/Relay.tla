------------------------------- MODULE Relay -------------------------------
\* A token relayed between processes (model values in the cfg): the holder takes a turn
\* (counted per process, up to Max) and hands the token to another. The compiled path's
\* first case: model values, strings, integers and a function over the model values.
EXTENDS Naturals
CONSTANTS Procs, Max
VARIABLES holder, turns, phase

Init == /\ holder \in Procs
        /\ turns = [p \in Procs |-> 0]
        /\ phase = "idle"

Take(p) == /\ phase = "idle" /\ holder = p /\ turns[p] < Max
           /\ turns' = [turns EXCEPT ![p] = @ + 1]
           /\ phase' = "busy"
           /\ UNCHANGED holder

Give(p, q) == /\ phase = "busy" /\ holder = p /\ p # q
              /\ holder' = q
              /\ phase' = "idle"
              /\ UNCHANGED turns

Reset == /\ \A p \in Procs : turns[p] = Max
         /\ turns' = [p \in Procs |-> 0]
         /\ UNCHANGED <<holder, phase>>

Next == \/ \E p \in Procs : Take(p) \/ \E q \in Procs : Give(p, q)
        \/ Reset

TurnsBounded == \A p \in Procs : turns[p] <= Max
NotAllDone == ~ \A p \in Procs : turns[p] = Max
=============================================================================
