---- MODULE EqRec ----
\* Two \E-bound parameters over a set of records compared with each other, and a variable's
\* record compared with a parameter: for the compiled path, a parameter's values of no one kind
\* (records) equal to another term through the value its index picks.
EXTENDS Naturals
VARIABLES x, n
Recs == {[a |-> 1, b |-> 0], [a |-> 2, b |-> 1], [a |-> 2, b |-> 0]}
Init == x = [a |-> 1, b |-> 0] /\ n = 0
Next == \E r \in Recs : \E s \in Recs :
          /\ r = s
          /\ r # x
          /\ n < 3
          /\ x' = r
          /\ n' = n + 1
Bounded == n <= 3 /\ x \in Recs
====
