---- MODULE KafkaHWLiveness_TTrace_1795596605 ----
EXTENDS KafkaHWLiveness_TEConstants, Sequences, TLCExt, KafkaHWLiveness, Toolbox, Naturals, TLC

_expression ==
    LET KafkaHWLiveness_TEExpression == INSTANCE KafkaHWLiveness_TEExpression
    IN KafkaHWLiveness_TEExpression!expression
----

_trace ==
    LET KafkaHWLiveness_TETrace == INSTANCE KafkaHWLiveness_TETrace
    IN KafkaHWLiveness_TETrace!trace
----

_prop ==
    ~(([]<>(
            leader = (1)
            /\
            committed = ((0 :> 1 @@ 1 :> 2))
            /\
            synced = ({0, 1})
            /\
            alive = ({0, 1})
            /\
            log = ((0 :> (0 :> 1 @@ 1 :> 2) @@ 1 :> (0 :> 2 @@ 1 :> 2)))
            /\
            pending = ({})
            /\
            respRec = ((0 :> 0 @@ 1 :> 0))
            /\
            isr = ({0, 1})
            /\
            epoch = (2)
            /\
            acked = ((0 :> 1 @@ 1 :> 2))
            /\
            hw = ((0 :> 2 @@ 1 :> 2))
            /\
            rleo = ((0 :> 2 @@ 1 :> 0))
            /\
            respHw = ((0 :> 0 @@ 1 :> 0))
    ))/\([]<>(
            leader = (1)
            /\
            committed = ((0 :> 1 @@ 1 :> 2))
            /\
            synced = ({0, 1})
            /\
            alive = ({0, 1})
            /\
            log = ((0 :> (0 :> 1 @@ 1 :> 2) @@ 1 :> (0 :> 2 @@ 1 :> 2)))
            /\
            pending = ({0})
            /\
            respRec = ((0 :> 0 @@ 1 :> 0))
            /\
            isr = ({0, 1})
            /\
            epoch = (2)
            /\
            acked = ((0 :> 1 @@ 1 :> 2))
            /\
            hw = ((0 :> 2 @@ 1 :> 2))
            /\
            rleo = ((0 :> 2 @@ 1 :> 0))
            /\
            respHw = ((0 :> 2 @@ 1 :> 0))
    )))
----

_init ==
    /\ epoch = _TETrace[1].epoch
    /\ leader = _TETrace[1].leader
    /\ isr = _TETrace[1].isr
    /\ alive = _TETrace[1].alive
    /\ log = _TETrace[1].log
    /\ respHw = _TETrace[1].respHw
    /\ pending = _TETrace[1].pending
    /\ synced = _TETrace[1].synced
    /\ committed = _TETrace[1].committed
    /\ hw = _TETrace[1].hw
    /\ rleo = _TETrace[1].rleo
    /\ acked = _TETrace[1].acked
    /\ respRec = _TETrace[1].respRec
----

_next ==
    /\ \E i,j \in DOMAIN _TETrace:
        /\ \/ /\ j = i + 1
              /\ i = TLCGet("level")
           \/ /\ i = _TTraceLassoEnd
              /\ j = _TTraceLassoStart
        /\ epoch  = _TETrace[i].epoch
        /\ epoch' = _TETrace[j].epoch
        /\ leader  = _TETrace[i].leader
        /\ leader' = _TETrace[j].leader
        /\ isr  = _TETrace[i].isr
        /\ isr' = _TETrace[j].isr
        /\ alive  = _TETrace[i].alive
        /\ alive' = _TETrace[j].alive
        /\ log  = _TETrace[i].log
        /\ log' = _TETrace[j].log
        /\ respHw  = _TETrace[i].respHw
        /\ respHw' = _TETrace[j].respHw
        /\ pending  = _TETrace[i].pending
        /\ pending' = _TETrace[j].pending
        /\ synced  = _TETrace[i].synced
        /\ synced' = _TETrace[j].synced
        /\ committed  = _TETrace[i].committed
        /\ committed' = _TETrace[j].committed
        /\ hw  = _TETrace[i].hw
        /\ hw' = _TETrace[j].hw
        /\ rleo  = _TETrace[i].rleo
        /\ rleo' = _TETrace[j].rleo
        /\ acked  = _TETrace[i].acked
        /\ acked' = _TETrace[j].acked
        /\ respRec  = _TETrace[i].respRec
        /\ respRec' = _TETrace[j].respRec

\* Uncomment the ASSUME below to write the states of the error trace
\* to the given file in Json format. Note that you can pass any tuple
\* to `JsonSerialize`. For example, a sub-sequence of _TETrace.
    \* ASSUME
    \*     LET J == INSTANCE Json
    \*         IN J!JsonSerialize("KafkaHWLiveness_TTrace_1795596605.json", _TETrace)


_view ==
    <<epoch, leader, isr, alive, log, respHw, pending, synced, committed, hw, rleo, acked, respRec, IF TLCGet("level") = _TTraceLassoEnd + 1 THEN _TTraceLassoStart ELSE TLCGet("level")>>
=============================================================================

 Note that you can extract this module `KafkaHWLiveness_TEExpression`
  to a dedicated file to reuse `expression` (the module in the 
  dedicated `KafkaHWLiveness_TEExpression.tla` file takes precedence 
  over the module `KafkaHWLiveness_TEExpression` below).

---- MODULE KafkaHWLiveness_TEExpression ----
EXTENDS KafkaHWLiveness_TEConstants, Sequences, TLCExt, KafkaHWLiveness, Toolbox, Naturals, TLC

expression == 
    [
        \* To hide variables of the `KafkaHWLiveness` spec from the error trace,
        \* remove the variables below.  The trace will be written in the order
        \* of the fields of this record.
        epoch |-> epoch
        ,leader |-> leader
        ,isr |-> isr
        ,alive |-> alive
        ,log |-> log
        ,respHw |-> respHw
        ,pending |-> pending
        ,synced |-> synced
        ,committed |-> committed
        ,hw |-> hw
        ,rleo |-> rleo
        ,acked |-> acked
        ,respRec |-> respRec
        
        \* Put additional constant-, state-, and action-level expressions here:
        \* ,_stateNumber |-> _TEPosition
        \* ,_epochUnchanged |-> epoch = epoch'
        
        \* Format the `epoch` variable as Json value.
        \* ,_epochJson |->
        \*     LET J == INSTANCE Json
        \*     IN J!ToJson(epoch)
        
        \* Lastly, you may build expressions over arbitrary sets of states by
        \* leveraging the _TETrace operator.  For example, this is how to
        \* count the number of times a spec variable changed up to the current
        \* state in the trace.
        \* ,_epochModCount |->
        \*     LET F[s \in DOMAIN _TETrace] ==
        \*         IF s = 1 THEN 0
        \*         ELSE IF _TETrace[s].epoch # _TETrace[s-1].epoch
        \*             THEN 1 + F[s-1] ELSE F[s-1]
        \*     IN F[_TEPosition - 1]
    ]

=============================================================================



Parsing and semantic processing can take forever if the trace below is long.
 In this case, it is advised to uncomment the module below to deserialize the
 trace from a generated binary file.

\*
\*---- MODULE KafkaHWLiveness_TETrace ----
\*EXTENDS KafkaHWLiveness_TEConstants, IOUtils, KafkaHWLiveness, TLC
\*
\*trace == IODeserialize("KafkaHWLiveness_TTrace_1795596605.bin", TRUE)
\*
\*=============================================================================
\*

---- MODULE KafkaHWLiveness_TETrace ----
EXTENDS KafkaHWLiveness_TEConstants, KafkaHWLiveness, TLC

trace == 
    <<
    ([leader |-> 0,committed |-> (0 :> 0 @@ 1 :> 0),synced |-> 0..1,alive |-> 0..1,log |-> (0 :> (0 :> 0 @@ 1 :> 0) @@ 1 :> (0 :> 0 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 0 @@ 1 :> 0),hw |-> (0 :> 0 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 0,committed |-> (0 :> 0 @@ 1 :> 0),synced |-> 0..1,alive |-> 0..1,log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 0 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 0 @@ 1 :> 0),hw |-> (0 :> 0 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 0,committed |-> (0 :> 0 @@ 1 :> 0),synced |-> 0..1,alive |-> 0..1,log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 0 @@ 1 :> 0)),pending |-> {1},respRec |-> (0 :> 0 @@ 1 :> 1),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 0 @@ 1 :> 0),hw |-> (0 :> 0 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 0,committed |-> (0 :> 0 @@ 1 :> 0),synced |-> 0..1,alive |-> 0..1,log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 1 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 0 @@ 1 :> 0),hw |-> (0 :> 0 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 0,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> 0..1,alive |-> 0..1,log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 1 @@ 1 :> 0)),pending |-> {1},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 1),respHw |-> (0 :> 0 @@ 1 :> 1)]),
    ([leader |-> -1,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> {1},alive |-> {1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 1 @@ 1 :> 0)),pending |-> {1},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 1)]),
    ([leader |-> -1,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> {},alive |-> {},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 1 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> -1,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> {},alive |-> {1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 0 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> 0..1,epoch |-> 1,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> {1},alive |-> {1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 0 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> {1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 0 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> {0, 1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 0 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 0),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 0),synced |-> {0, 1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 2 @@ 1 :> 0)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 0),hw |-> (0 :> 1 @@ 1 :> 1),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 2),synced |-> {0, 1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 2 @@ 1 :> 2)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 2),hw |-> (0 :> 1 @@ 1 :> 2),rleo |-> (0 :> 0 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 2),synced |-> {0, 1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 0) @@ 1 :> (0 :> 2 @@ 1 :> 2)),pending |-> {0},respRec |-> (0 :> 2 @@ 1 :> 0),isr |-> {1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 2),hw |-> (0 :> 1 @@ 1 :> 2),rleo |-> (0 :> 1 @@ 1 :> 0),respHw |-> (0 :> 2 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 2),synced |-> {0, 1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 2) @@ 1 :> (0 :> 2 @@ 1 :> 2)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 2),hw |-> (0 :> 2 @@ 1 :> 2),rleo |-> (0 :> 1 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 2),synced |-> {0, 1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 2) @@ 1 :> (0 :> 2 @@ 1 :> 2)),pending |-> {0},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {0, 1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 2),hw |-> (0 :> 2 @@ 1 :> 2),rleo |-> (0 :> 2 @@ 1 :> 0),respHw |-> (0 :> 2 @@ 1 :> 0)]),
    ([leader |-> 1,committed |-> (0 :> 1 @@ 1 :> 2),synced |-> {0, 1},alive |-> {0, 1},log |-> (0 :> (0 :> 1 @@ 1 :> 2) @@ 1 :> (0 :> 2 @@ 1 :> 2)),pending |-> {},respRec |-> (0 :> 0 @@ 1 :> 0),isr |-> {0, 1},epoch |-> 2,acked |-> (0 :> 1 @@ 1 :> 2),hw |-> (0 :> 2 @@ 1 :> 2),rleo |-> (0 :> 2 @@ 1 :> 0),respHw |-> (0 :> 0 @@ 1 :> 0)])
    >>
----


=============================================================================

---- MODULE KafkaHWLiveness_TEConstants ----
EXTENDS KafkaHWLiveness

CONSTANTS _TTraceLassoStart, _TTraceLassoEnd

=============================================================================

---- CONFIG KafkaHWLiveness_TTrace_1795596605 ----
CONSTANTS
    R = 2
    M = 2
    E = 3
    Truncation = "hw"
    Expansion = "hw"
    Acks = "all"
    MinIsr = 1
    Unclean = FALSE
_TTraceLassoStart = 16
_TTraceLassoEnd = 17

PROPERTY
    _prop

CHECK_DEADLOCK
    \* CHECK_DEADLOCK off because of PROPERTY or INVARIANT above.
    FALSE

INIT
    _init

NEXT
    _next

VIEW
    _view

CONSTANT
    _TETrace <- _trace

ALIAS
    _expression
=============================================================================
\* Generated on Wed Nov 25 08:50:09 UTC 2026