---------------------------- MODULE AnyStart ----------------------------
\* ../any_start.py for TLC: nodes start with any values not all equal. Init also chooses a
\* spare value that no variable keeps; TLC counts each way Init is satisfied before every
\* variable is assigned as a generated state (budget is assigned last for that).
EXTENDS Integers
CONSTANTS N, M, Incs, Spare
VARIABLES v, budget
Nodes == 0..N-1

Init == /\ v \in [Nodes -> 0..M-1]
        /\ \E i, j \in Nodes : v[i] # v[j]
        /\ \E z \in 0..Spare-1 : TRUE
        /\ budget = 0
Copy(i, j) == i # j /\ v[i] # v[j] /\ v' = [v EXCEPT ![j] = v[i]] /\ UNCHANGED budget
Inc(i) == budget < Incs /\ v[i] < M - 1 /\ v' = [v EXCEPT ![i] = v[i] + 1] /\ budget' = budget + 1
Next == (\E i, j \in Nodes : Copy(i, j)) \/ (\E i \in Nodes : Inc(i))
vars == <<v, budget>>
Spec == Init /\ [][Next]_vars /\ \A i \in Nodes : WF_vars(Inc(i))

NotAllEqual == ~(\A i \in Nodes : v[i] = v[0])
NoMax == \A i \in Nodes : v[i] # M - 1
BudgetKept == budget <= Incs
BudgetSpent == []<>(budget = Incs)
=============================================================================
