---- MODULE TokenRing_TTrace_1795596574 ----
EXTENDS Sequences, TLCExt, Toolbox, TokenRing, Naturals, TLC

_expression ==
    LET TokenRing_TEExpression == INSTANCE TokenRing_TEExpression
    IN TokenRing_TEExpression!expression
----

_trace ==
    LET TokenRing_TETrace == INSTANCE TokenRing_TETrace
    IN TokenRing_TETrace!trace
----

_prop ==
    ~<>[](
        want = ({0, 2})
        /\
        token = (1)
    )
----

_init ==
    /\ token = _TETrace[1].token
    /\ want = _TETrace[1].want
----

_next ==
    /\ \E i,j \in DOMAIN _TETrace:
        /\ \/ /\ j = i + 1
              /\ i = TLCGet("level")
        /\ token  = _TETrace[i].token
        /\ token' = _TETrace[j].token
        /\ want  = _TETrace[i].want
        /\ want' = _TETrace[j].want

\* Uncomment the ASSUME below to write the states of the error trace
\* to the given file in Json format. Note that you can pass any tuple
\* to `JsonSerialize`. For example, a sub-sequence of _TETrace.
    \* ASSUME
    \*     LET J == INSTANCE Json
    \*         IN J!JsonSerialize("TokenRing_TTrace_1795596574.json", _TETrace)

=============================================================================

 Note that you can extract this module `TokenRing_TEExpression`
  to a dedicated file to reuse `expression` (the module in the 
  dedicated `TokenRing_TEExpression.tla` file takes precedence 
  over the module `TokenRing_TEExpression` below).

---- MODULE TokenRing_TEExpression ----
EXTENDS Sequences, TLCExt, Toolbox, TokenRing, Naturals, TLC

expression == 
    [
        \* To hide variables of the `TokenRing` spec from the error trace,
        \* remove the variables below.  The trace will be written in the order
        \* of the fields of this record.
        token |-> token
        ,want |-> want
        
        \* Put additional constant-, state-, and action-level expressions here:
        \* ,_stateNumber |-> _TEPosition
        \* ,_tokenUnchanged |-> token = token'
        
        \* Format the `token` variable as Json value.
        \* ,_tokenJson |->
        \*     LET J == INSTANCE Json
        \*     IN J!ToJson(token)
        
        \* Lastly, you may build expressions over arbitrary sets of states by
        \* leveraging the _TETrace operator.  For example, this is how to
        \* count the number of times a spec variable changed up to the current
        \* state in the trace.
        \* ,_tokenModCount |->
        \*     LET F[s \in DOMAIN _TETrace] ==
        \*         IF s = 1 THEN 0
        \*         ELSE IF _TETrace[s].token # _TETrace[s-1].token
        \*             THEN 1 + F[s-1] ELSE F[s-1]
        \*     IN F[_TEPosition - 1]
    ]

=============================================================================



Parsing and semantic processing can take forever if the trace below is long.
 In this case, it is advised to uncomment the module below to deserialize the
 trace from a generated binary file.

\*
\*---- MODULE TokenRing_TETrace ----
\*EXTENDS IOUtils, TokenRing, TLC
\*
\*trace == IODeserialize("TokenRing_TTrace_1795596574.bin", TRUE)
\*
\*=============================================================================
\*

---- MODULE TokenRing_TETrace ----
EXTENDS TokenRing, TLC

trace == 
    <<
    ([want |-> {},token |-> 0]),
    ([want |-> {},token |-> 1]),
    ([want |-> {2},token |-> 1]),
    ([want |-> {0, 2},token |-> 1])
    >>
----


=============================================================================

---- CONFIG TokenRing_TTrace_1795596574 ----
CONSTANTS
    N = 3

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
\* Generated on Wed Nov 25 08:49:35 UTC 2026