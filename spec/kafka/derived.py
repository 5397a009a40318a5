"""The facts of a Kafka state that are derived from its variables, each defined once.

The model's actions and properties (``model/``), the Z3 lemmas (``lemmas.py``), the
recoverability predicates (``health.py``) and the trace views (``views.py``, ``timeline.py``)
all read these. A fact has up to two forms side by side: over a built Spec, as an expression of
the spec language (what the kernel, the interpreter and Z3 read), and over a state as a dict of
variables (what the views read). A knob's variables that a fact depends on are looked up by
name: a knob that is off declares none, and the fact is then the base model's.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from hwcheck.spec.lang import Expr, Spec, Value, Var, count, exists, forall, implies, min_, min_over

NONE = -1  # leader, bLeader: no leader

# A record's cells beyond its leader epoch (with --producer-retries its sequence number, with
# --transactions its transaction and kind), each with its twin in the fetch response in flight.
PAYLOAD = (("seq", "respSeq"), ("txn", "respTxn"), ("ctl", "respCtl"))

# What a record is (ctl) with --transactions: data, or a commit or abort marker.
DATA, COMMIT_MARKER, ABORT_MARKER = 0, 1, 2

# A state as a trace gives it: each variable's value by name (ints, lists of them, sets)
State: TypeAlias = dict[str, Any]


def out_of_range(max_epoch: int) -> int:
    """respRec of a response "offset out of range" (the follower's LEO is above the leader's)."""
    return max_epoch + 1


def restart_at(max_epoch: int) -> int:
    """respRec, with --log-start-offset, of a response "below the leader's log start offset:
    start there"."""
    return max_epoch + 2


def declared(spec: Spec, name: str) -> Var | None:
    """The variable ``name`` of ``spec``; None when no part of the model declared it."""
    return next((v for v in spec.variables if v.name == name), None)


# -- the log end offset (LEO) -------------------------------------------------------------------

def leo(spec: Spec, r: Value) -> Expr:
    """Replica r's LEO: its log start offset (with --log-start-offset; the records below it are
    deleted, their cells 0) plus the records it holds."""
    log, start = spec.var("log"), declared(spec, "logStart")
    n = count(log.shape[1], lambda k: log[r, k] != 0, "k")
    return start[r] + n if start is not None else n


def log_start_of(st: State, r: int) -> int:
    """Replica r's log start offset over a state dict (0 without --log-start-offset)."""
    return st["logStart"][r] if "logStart" in st else 0


def leo_of(st: State, r: int) -> int:
    """``leo`` over a state dict."""
    return log_start_of(st, r) + sum(1 for e in st["log"][r] if e)


# -- what a log holds ---------------------------------------------------------------------------

def holds_committed(spec: Spec, r: Value) -> Expr:
    """Replica r's log holds every committed record at its offset."""
    log, committed = spec.var("log"), spec.var("committed")
    return forall(log.shape[1], lambda k: implies(committed[k] != 0, log[r, k] == committed[k]),
                  "k")


# -- transactions: the last stable offset -------------------------------------------------------

def first_unstable(spec: Spec, L: Value) -> Expr:
    """With --transactions: the first offset of L's log holding a data record of a transaction
    that is open on L (no marker) or whose marker is not below L's HW yet (Kafka's
    ProducerStateManager: ongoing and unreplicated transactions); L's HW if none."""
    log, hw, txn, ctl = spec.var("log"), spec.var("hw"), spec.var("txn"), spec.var("ctl")
    M = log.shape[1]

    def stable(t: Value) -> Expr:
        return exists(M, lambda j: (j < hw[L]) & (log[L, j] != 0) & (ctl[L, j] != DATA)
                      & (txn[L, j] == t), "j")
    return min_over(M, lambda k: k, lambda k: (log[L, k] != 0) & (ctl[L, k] == DATA)
                    & ~stable(txn[L, k]), hw[L], "k")


def first_unstable_of(st: State, L: int) -> int:
    """``first_unstable`` over a state dict."""
    log, txn, ctl, hw = st["log"][L], st["txn"][L], st["ctl"][L], st["hw"][L]
    stable = {txn[j] for j in range(hw) if log[j] and ctl[j]}
    return next((k for k in range(len(log)) if log[k] and not ctl[k] and txn[k] not in stable),
                hw)


def lso(spec: Spec, L: Value) -> Expr:
    """The last stable offset: the first unstable offset, capped by the HW as Kafka does."""
    return min_(first_unstable(spec, L), spec.var("hw")[L])


def lso_of(st: State, L: int) -> int:
    """``lso`` over a state dict."""
    hw: int = st["hw"][L]
    return min(first_unstable_of(st, L), hw)
