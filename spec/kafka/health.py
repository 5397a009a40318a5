"""When a Kafka partition has healed, and when the model's bounds alone keep it from healing.

Safety invariants say nothing of whether a partition can heal. ``hwcheck check --recoverable``
asks it of every reachable state: can the partition still get back to a *healthy* state? A
state from which no healthy state is reachable is *stuck*: with HW truncation, logs that
diverged below the HW never converge again, which is as bad as a lost record.

- ``healthy(spec)``: there is a leader; every replica is alive, in the ISR and holds exactly
  the leader's log (each record's epoch and, with the knobs of docs/kafka-model.md, its
  producer sequence number, transaction and kind; with a log start offset, at every offset both
  still hold, and the same LEO); and every replica's HW equals its LEO.
- ``at_bound(spec)``: no leader and the epoch at its maximum E, so no election can ever happen
  again. Such a state is stuck because the model stops electing, not because of the protocol;
  the checker counts these apart and does not report them as findings.

Both are expressions of the spec language over the spec's own variables, so the compiled
kernel, the interpreter and Z3 read them alike.
"""

from __future__ import annotations

from hwcheck.spec.kafka.derived import NONE, PAYLOAD, declared, leo
from hwcheck.spec.lang import Expr, Spec, Value, forall, ite, max_


def healthy(spec: Spec) -> Expr:
    """The partition has healed: a leader, every replica alive and in the ISR with exactly the
    leader's log, and HW = LEO everywhere."""
    log, hw = spec.var("log"), spec.var("hw")
    alive, isr = spec.var("alive"), spec.var("isr")
    leader = spec.var("leader")[()]
    R, M = log.shape
    cells = [log] + [c for c in (declared(spec, n) for n, _ in PAYLOAD) if c is not None]
    start = declared(spec, "logStart")

    def same_records(r: Value) -> Expr:
        def at(k: Value) -> Expr:
            eq: Expr = cells[0][r, k] == cells[0][leader, k]
            for c in cells[1:]:
                eq = eq & (c[r, k] == c[leader, k])
            if start is None:
                return eq
            return ~((k >= start[r]) & (k >= start[leader])) | eq

        return forall(M, at, "k")

    def replica_ok(r: Value) -> Expr:
        ok: Expr = alive[r] & isr[r] & same_records(r) & (hw[r] == leo(spec, r))
        if start is not None:
            ok = ok & (leo(spec, r) == leo(spec, leader))
        return ok

    return (leader != NONE) & forall(R, replica_ok, "r")


def at_bound(spec: Spec) -> Expr:
    """No leader, and the epoch at its maximum: the model elects no leader again. With the KRaft
    controller (its leader may be down, unknown to it) also a leader that is down at the
    maximum epoch: it runs again only after the controller fences it, which leaves no leader."""
    epoch = spec.var("epoch")
    leader = spec.var("leader")[()]
    last = epoch[()] == epoch.hi
    if declared(spec, "bLeader") is not None:
        alive = spec.var("alive")
        return last & ite(leader == NONE, True, ~alive[max_(leader, 0)])
    return (leader == NONE) & last
