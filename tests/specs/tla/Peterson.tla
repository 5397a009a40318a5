------------------------------- MODULE Peterson -------------------------------
(* tests/specs/peterson.py for TLC: the same actions, fairness and liveness   *)
(* properties. pc: 0 non-critical, 1 flag raised, 2 waiting, 3 critical.      *)
EXTENDS Naturals

CONSTANT Naive
VARIABLES pc, flag, turn
vars == <<pc, flag, turn>>

Init == pc = [i \in 0..1 |-> 0] /\ flag = {} /\ turn = 0
Try(i) == pc[i] = 0 /\ flag' = flag \cup {i} /\ pc' = [pc EXCEPT ![i] = 1] /\ UNCHANGED turn
GiveTurn(i) == pc[i] = 1 /\ turn' = (IF Naive THEN turn ELSE 1 - i)
               /\ pc' = [pc EXCEPT ![i] = 2] /\ UNCHANGED flag
Enter(i) == pc[i] = 2 /\ ((1 - i) \notin flag \/ (~Naive /\ turn = i))
            /\ pc' = [pc EXCEPT ![i] = 3] /\ UNCHANGED <<flag, turn>>
Exit(i) == pc[i] = 3 /\ flag' = flag \ {i} /\ pc' = [pc EXCEPT ![i] = 0] /\ UNCHANGED turn
Next == \E i \in 0..1 : Try(i) \/ GiveTurn(i) \/ Enter(i) \/ Exit(i)

WF == \A i \in 0..1 : WF_vars(GiveTurn(i)) /\ WF_vars(Enter(i)) /\ WF_vars(Exit(i))
SF == \A i \in 0..1 : SF_vars(GiveTurn(i)) /\ SF_vars(Enter(i)) /\ SF_vars(Exit(i))
SpecNone == Init /\ [][Next]_vars
SpecWeak == Init /\ [][Next]_vars /\ WF
SpecStrong == Init /\ [][Next]_vars /\ SF

Mutex == ~(pc[0] = 3 /\ pc[1] = 3)
NoStarvation0 == (pc[0] = 1) ~> (pc[0] = 3)
NoStarvation1 == (pc[1] = 1) ~> (pc[1] = 3)
=============================================================================
