------------------------------ MODULE DieHard ------------------------------
\* The jugs puzzle of TLA+'s examples, with the jugs' sizes and the goal as constants: the
\* TLA+ twin of ../die_hard.py (the same actions, so the same counts).
EXTENDS Naturals

CONSTANTS Big, Small, Goal
VARIABLES big, small

Min(m, n) == IF m < n THEN m ELSE n

TypeOK == big \in 0..Big /\ small \in 0..Small

Init == big = 0 /\ small = 0

FillSmall == small' = Small /\ big' = big
FillBig == big' = Big /\ small' = small
EmptySmall == small' = 0 /\ big' = big
EmptyBig == big' = 0 /\ small' = small
SmallToBig == LET poured == Min(small, Big - big)
              IN big' = big + poured /\ small' = small - poured
BigToSmall == LET poured == Min(big, Small - small)
              IN big' = big - poured /\ small' = small + poured

Next == \/ FillSmall \/ FillBig \/ EmptySmall \/ EmptyBig
        \/ SmallToBig \/ BigToSmall

NotSolved == big # Goal
=============================================================================
