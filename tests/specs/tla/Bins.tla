-------------------------------- MODULE Bins --------------------------------
\* Sets in the state, for the compiled path: subsets of a constant set and a set of records,
\* \E over a set read from the state (a parameter over its possible members, guarded),
\* \A over one, \cup, \cap, \, =, \subseteq and Cardinality.
EXTENDS Naturals, FiniteSets
CONSTANT Items
VARIABLES pool, taken, log

Init == pool = Items /\ taken = {} /\ log = {}

Take == \E i \in pool : /\ pool' = pool \ {i}
                        /\ taken' = taken \cup {i}
                        /\ log' = log \cup {[item |-> i, by |-> "take"]}

Return == \E i \in taken : /\ Cardinality(taken) > 1 \/ pool = {}
                           /\ taken' = taken \ {i}
                           /\ pool' = pool \cup {i}
                           /\ UNCHANGED log

Swap == /\ \A i \in taken : i \in Items
        /\ pool \cap taken = {}
        /\ pool' = taken
        /\ taken' = pool
        /\ UNCHANGED log

Next == Take \/ Return \/ Swap

Conserved == pool \cup taken = Items /\ taken \subseteq Items
Logged == \A i \in taken : [item |-> i, by |-> "take"] \in log
=============================================================================
