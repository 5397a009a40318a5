-------------------------------- MODULE Bins --------------------------------
\* Sets in the state, for the compiled path: subsets of a constant set and a set of records,
\* \E over a set read from the state (a parameter over its possible members, guarded),
\* x' \in S over one (a choice, guarded), \A over one, \cup, \cap, \, =, \subseteq and
\* Cardinality.
EXTENDS Naturals, FiniteSets
CONSTANT Items
VARIABLES pool, taken, log, last

Init == pool = Items /\ taken = {} /\ log = {} /\ last = 0

Take == \E i \in pool : /\ pool' = pool \ {i}
                        /\ taken' = taken \cup {i}
                        /\ log' = log \cup {[item |-> i, by |-> "take"]}
                        /\ UNCHANGED last

Return == \E i \in taken : /\ Cardinality(taken) > 1 \/ pool = {}
                           /\ taken' = taken \ {i}
                           /\ pool' = pool \cup {i}
                           /\ UNCHANGED <<log, last>>

Swap == /\ \A i \in taken : i \in Items
        /\ pool \cap taken = {}
        /\ pool' = taken
        /\ taken' = pool
        /\ UNCHANGED <<log, last>>

\* x' \in S over a set read from the state, and over one computed from a binding
Note == /\ last' \in taken
        /\ UNCHANGED <<pool, taken, log>>

Other == \E i \in Items : /\ i \in pool
                          /\ last' \in Items \ {i}
                          /\ UNCHANGED <<pool, taken, log>>

Next == Take \/ Return \/ Swap \/ Note \/ Other

Conserved == pool \cup taken = Items /\ taken \subseteq Items
Logged == \A i \in taken : [item |-> i, by |-> "take"] \in log
=============================================================================
