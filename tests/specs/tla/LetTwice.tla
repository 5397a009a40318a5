------------------------------- MODULE LetTwice -------------------------------
\* A LET definition read through two operators' arguments and through another definition:
\* the compiled effect computes it once (one local), as the evaluator evaluates it once.
EXTENDS Naturals
VARIABLES x, y
Init == x = [i \in 0..2 |-> 0] /\ y = 0
Set(p, v) == x' = [x EXCEPT ![p] = v]
Put(v) == y' = v
Next == \E p \in 0..2 :
    LET a == IF x[p] < 2 THEN x[p] + 1 ELSE 0
        b == IF a < y THEN a ELSE y + 1
    IN /\ a > 0
       /\ Set(p, a)
       /\ Put(b)
Small == y <= 2
=============================================================================
