---------------------------- MODULE ViewCounter ----------------------------
\* ../view_counter.py for TLC: x counts modulo N, y up to M and back, steps counts the steps
\* (up to K). VIEW view leaves steps out; Peek makes IncY's guard read it.
EXTENDS Integers
CONSTANTS N, M, K, Peek
VARIABLES x, y, steps
vars == <<x, y, steps>>
view == <<x, y>>

Count == steps' = IF steps < K THEN steps + 1 ELSE K
Init == x = 0 /\ y = 0 /\ steps = 0
IncX == x' = (x + 1) % N /\ Count /\ UNCHANGED y
IncY == y < M /\ (Peek => steps < K) /\ y' = y + 1 /\ Count /\ UNCHANGED x
ResetY == y > 0 /\ y' = 0 /\ Count /\ UNCHANGED x
Next == IncX \/ IncY \/ ResetY
YBounded == y <= M
=============================================================================
