------------------------------ MODULE Branches ------------------------------
\* Next's shapes the compiled path lifts into actions, each counted as TLC counts it: a
\* disjunction and an \E inside a conjunction (two ways that give one state are two
\* generated), IF and CASE around assignments, x' \in S, LET with and without parameters,
\* \A over a disjunction, and operators over state inlined.
EXTENDS Naturals
CONSTANTS N, Max
VARIABLES x, y, v
Ids == 1..N

Init == x = 0 /\ y = 0 /\ v = [i \in Ids |-> 0]

Low(a) == a < Max
Busy == \E i \in Ids : v[i] > 0

\* both disjuncts may hold: two ways, one state
Bump == /\ (x = 0 \/ y = 0)
        /\ Low(x)
        /\ x' = x + 1
        /\ UNCHANGED <<y, v>>

\* every witness of the \E is a way
Mark(i) == /\ v[i] = 0
           /\ \E j \in Ids : v[j] = 0 /\ j # i \/ x = 0
           /\ v' = [v EXCEPT ![i] = 1]
           /\ UNCHANGED <<x, y>>

Flip == /\ UNCHANGED v
        /\ IF x >= y
           THEN y' = y + 1 /\ x' = x
           ELSE /\ y' = 0
                /\ x' \in {0, 1}

Choose == LET top == Max - 1
              Twice(a) == a + a
          IN /\ Busy
             /\ CASE x = top -> y' = 0 /\ x' = 0
                  [] Twice(x) < Max -> x' = x + 1 /\ UNCHANGED y
                  [] OTHER -> UNCHANGED <<x, y>>
             /\ UNCHANGED v

\* \A over a disjunction: its instances' ways multiply
Clear == /\ \A i \in Ids : v[i] = 1 \/ x > 0
         /\ v' = [i \in Ids |-> 0]
         /\ UNCHANGED <<x, y>>

\* an \E over a set that reads an earlier binding: a parameter over every value, guarded
Spread(i) == /\ v[i] = 1
             /\ \E j \in Ids \ {i} : v[j] = 0 /\ v' = [v EXCEPT ![j] = 1]
             /\ UNCHANGED <<x, y>>

Next == \/ Bump
        \/ \E i \in Ids : Spread(i)
        \/ \E i \in Ids : Mark(i)
        \/ y < Max /\ Flip
        \/ Choose
        \/ Clear

Bounded == x <= Max /\ y <= Max
=============================================================================
