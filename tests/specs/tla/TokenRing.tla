------------------------------ MODULE TokenRing ------------------------------
(* tests/specs/token_ring.py for TLC: the same actions, fairness and liveness *)
(* properties, so that TLC's verdicts can be compared with hwcheck's.        *)
EXTENDS Naturals

CONSTANT N
VARIABLES token, want
vars == <<token, want>>
Nodes == 0..(N - 1)

Init == token = 0 /\ want = {}
Request(i) == i \notin want /\ want' = want \cup {i} /\ UNCHANGED token
Use(i) == token = i /\ i \in want /\ want' = want \ {i} /\ UNCHANGED token
Pass(i) == token = i /\ token' = (IF token = N - 1 THEN 0 ELSE token + 1) /\ UNCHANGED want
Next == \E i \in Nodes : Request(i) \/ Use(i) \/ Pass(i)

UseWF == \A i \in Nodes : WF_vars(Use(i))
UseSF == \A i \in Nodes : SF_vars(Use(i))
PassWF == \A i \in Nodes : WF_vars(Pass(i))

\* SpecUseX_PassY: the configurations of the tests (use=X, passing=Y)
SpecUseNone_PassWeak == Init /\ [][Next]_vars /\ PassWF
SpecUseWeak_PassWeak == Init /\ [][Next]_vars /\ UseWF /\ PassWF
SpecUseStrong_PassWeak == Init /\ [][Next]_vars /\ UseSF /\ PassWF
SpecUseStrong_PassNone == Init /\ [][Next]_vars /\ UseSF

TokenInRing == token \in Nodes
Served == (0 \in want) ~> (0 \notin want)
TokenVisits == []<>(token = 0)
Settles == <>[](want = {})
SettlesOnceQuiet == <>[][\A i \in Nodes : ~Request(i)]_vars => <>[](want = {})
=============================================================================
