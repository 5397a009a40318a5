---- MODULE Peterson_TTrace_1795596587 ----
EXTENDS Sequences, TLCExt, Toolbox, Naturals, TLC, Peterson

_expression ==
    LET Peterson_TEExpression == INSTANCE Peterson_TEExpression
    IN Peterson_TEExpression!expression
----

_trace ==
    LET Peterson_TETrace == INSTANCE Peterson_TETrace
    IN Peterson_TETrace!trace
----

_prop ==
    ~<>[](
        flag = ({0, 1})
        /\
        pc = ((0 :> 2 @@ 1 :> 2))
        /\
        turn = (0)
    )
----

_init ==
    /\ flag = _TETrace[1].flag
    /\ pc = _TETrace[1].pc
    /\ turn = _TETrace[1].turn
----

_next ==
    /\ \E i,j \in DOMAIN _TETrace:
        /\ \/ /\ j = i + 1
              /\ i = TLCGet("level")
        /\ flag  = _TETrace[i].flag
        /\ flag' = _TETrace[j].flag
        /\ pc  = _TETrace[i].pc
        /\ pc' = _TETrace[j].pc
        /\ turn  = _TETrace[i].turn
        /\ turn' = _TETrace[j].turn

\* Uncomment the ASSUME below to write the states of the error trace
\* to the given file in Json format. Note that you can pass any tuple
\* to `JsonSerialize`. For example, a sub-sequence of _TETrace.
    \* ASSUME
    \*     LET J == INSTANCE Json
    \*         IN J!JsonSerialize("Peterson_TTrace_1795596587.json", _TETrace)

=============================================================================

 Note that you can extract this module `Peterson_TEExpression`
  to a dedicated file to reuse `expression` (the module in the 
  dedicated `Peterson_TEExpression.tla` file takes precedence 
  over the module `Peterson_TEExpression` below).

---- MODULE Peterson_TEExpression ----
EXTENDS Sequences, TLCExt, Toolbox, Naturals, TLC, Peterson

expression == 
    [
        \* To hide variables of the `Peterson` spec from the error trace,
        \* remove the variables below.  The trace will be written in the order
        \* of the fields of this record.
        flag |-> flag
        ,pc |-> pc
        ,turn |-> turn
        
        \* Put additional constant-, state-, and action-level expressions here:
        \* ,_stateNumber |-> _TEPosition
        \* ,_flagUnchanged |-> flag = flag'
        
        \* Format the `flag` variable as Json value.
        \* ,_flagJson |->
        \*     LET J == INSTANCE Json
        \*     IN J!ToJson(flag)
        
        \* Lastly, you may build expressions over arbitrary sets of states by
        \* leveraging the _TETrace operator.  For example, this is how to
        \* count the number of times a spec variable changed up to the current
        \* state in the trace.
        \* ,_flagModCount |->
        \*     LET F[s \in DOMAIN _TETrace] ==
        \*         IF s = 1 THEN 0
        \*         ELSE IF _TETrace[s].flag # _TETrace[s-1].flag
        \*             THEN 1 + F[s-1] ELSE F[s-1]
        \*     IN F[_TEPosition - 1]
    ]

=============================================================================



Parsing and semantic processing can take forever if the trace below is long.
 In this case, it is advised to uncomment the module below to deserialize the
 trace from a generated binary file.

\*
\*---- MODULE Peterson_TETrace ----
\*EXTENDS IOUtils, TLC, Peterson
\*
\*trace == IODeserialize("Peterson_TTrace_1795596587.bin", TRUE)
\*
\*=============================================================================
\*

---- MODULE Peterson_TETrace ----
EXTENDS TLC, Peterson

trace == 
    <<
    ([flag |-> {},pc |-> (0 :> 0 @@ 1 :> 0),turn |-> 0]),
    ([flag |-> {1},pc |-> (0 :> 0 @@ 1 :> 1),turn |-> 0]),
    ([flag |-> {1},pc |-> (0 :> 0 @@ 1 :> 2),turn |-> 0]),
    ([flag |-> {0, 1},pc |-> (0 :> 1 @@ 1 :> 2),turn |-> 0]),
    ([flag |-> {0, 1},pc |-> (0 :> 2 @@ 1 :> 2),turn |-> 0])
    >>
----


=============================================================================

---- CONFIG Peterson_TTrace_1795596587 ----
CONSTANTS
    Naive = TRUE

PROPERTY
    _prop

CHECK_DEADLOCK
    \* CHECK_DEADLOCK off because of PROPERTY or INVARIANT above.
    FALSE

INIT
    _init

NEXT
    _next

CONSTANT
    _TETrace <- _trace

ALIAS
    _expression
=============================================================================
\* Generated on Wed Nov 25 08:49:48 UTC 2026