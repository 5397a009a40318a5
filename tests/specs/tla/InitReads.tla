------------------------------ MODULE InitReads ------------------------------
\* Init's conjuncts read the variables the ones before assigned (TLC reads them so): a
\* value, a function, a set, a set to choose from and a LET read x and y as chosen; a
\* condition rules out a choice before the assignments after it are made (g[1] is outside
\* g's domain, and z is never 0); x \in S once x is assigned is a condition.
EXTENDS Naturals
CONSTANT N
VARIABLES x, y, f, s, z, w

g == [i \in {0, N} |-> i + 1]

Init == /\ x \in 0..N
        /\ x # 1
        /\ x \in {0, N}
        /\ y = g[x]
        /\ f = [i \in 1..2 |-> i * y]
        /\ s = {x, y}
        /\ z \in {v \in 0..N + 1 : v >= y}
        /\ LET d == z - x IN w = d

Next == /\ w > 1
        /\ w' = w - 1
        /\ z' = z - 1
        /\ UNCHANGED <<x, y, f, s>>

Consistent == z - x = w /\ x \in s /\ f[2] = 2 * f[1]
=============================================================================
