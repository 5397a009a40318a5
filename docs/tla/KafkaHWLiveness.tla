--------------------------- MODULE KafkaHWLiveness ---------------------------
(* The liveness properties of `hwcheck check --liveness` (docs/kafka-model.md) *)
(* over the base model, for TLC: the same fairness (fetches, responses,        *)
(* truncation, restarts and elections weakly fair, per replica) and the same   *)
(* properties. hwcheck counts apart the lassos whose cycle lies at the model's  *)
(* bounds (no leader, epoch E: absorbing, since no election can follow); here  *)
(* that is "\/ AtBound" in each goal, which gives the same verdicts because no  *)
(* behaviour leaves AtBound once in it. Quiet: the behaviours whose crashes     *)
(* eventually stop (hwcheck's quiet=["Crash"]).                               *)
EXTENDS KafkaHW

Fairness == \A r \in Replicas :
                /\ WF_vars(FetchRequest(r)) /\ WF_vars(FetchResponse(r))
                /\ WF_vars(BecomeFollower(r)) /\ WF_vars(Restart(r)) /\ WF_vars(Elect(r))
LiveSpec == Spec /\ Fairness

AtBound == leader = NONE /\ epoch = E
Quiet == <>[][\A r \in Replicas : ~Crash(r)]_vars

Replicated == \A k \in Offsets : acked[k] # 0 =>
                  \A r \in alive \cap isr : log[r][k] = acked[k]
Converged == \A a, c \in alive : log[a] = log[c]

ElectionAfterCrash == Quiet => ((leader = NONE /\ epoch < E) ~> (leader # NONE \/ AtBound))
AckedReplicated == Quiet => []<>(Replicated \/ AtBound)
HwCatchesUp == Quiet => []<>((leader # NONE /\ hw[leader] = Leo(log[leader])) \/ AtBound)
LogsConverge == Quiet => <>[](Converged \/ AtBound)
=============================================================================
