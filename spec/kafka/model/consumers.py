"""``--consumers N``: consumers that read the leader's log below its HW (the LSO for
read_committed with transactions), each from its own position (docs/kafka-model.md)."""

from __future__ import annotations

from hwcheck.spec.kafka.derived import NONE, lso
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    ActionParam,
    Block,
    Expr,
    Value,
    disj,
    exists,
    forall,
    implies,
    prime,
)


def on(p: Params) -> bool:
    return p.consumers > 0


def names(p: Params) -> Names:
    return Names(invariants=("MonotonicReads", "ReadYourWrites"),
                 action_properties=("ReadsBelowHw",), reachables=("ConsumerRead",))


def read_committed(m: Model) -> bool:
    """The consumers read only what is stable (isolation.level=read_committed, with
    transactions)."""
    return m.p.transactions and m.p.isolation == "read-committed"


def read_bound(m: Model, L: Value) -> Expr:
    """Where a consumer's reads stop: the LSO for read_committed, else the HW."""
    return lso(m.spec, L) if read_committed(m) else m.hw[L]


def declare(m: Model) -> None:
    C, M, E = m.p.consumers, m.M, m.E
    m.cpos = m.array("cpos", (C,), 0, M, "each consumer's fetch position")
    m.cread = m.array("cread", (C, M), 0, E,
                      "ghost: the record (its epoch) each consumer fetched at each offset")
    m.run("consumers.declared")


def actions(m: Model) -> None:
    cpos, cread, log, leader = m.cpos, m.cread, m.log, m.leader

    @m.spec.action("Consume", over=[m.p.consumers], modifies=[cpos, cread,
                                                              *m.written("Consume")])
    def consume(b: Block, c: ActionParam) -> None:
        """Consumer c fetches the record at its position from the leader, below the HW (the
        LSO for read_committed), and moves past it. With transactions, markers are never
        returned, and a read_committed consumer drops the data records of aborted
        transactions. With a log start offset, a position below it is out of range and the
        consumer restarts at the log start (auto.offset.reset=earliest)."""
        b.require(leader != NONE)
        b.require(disj(*m.collect("consume.out_of_range", c, leader),
                       cpos[c] < read_bound(m, leader)))
        L = b.let("L", leader)
        pos = b.let("pos", cpos[c])

        def read() -> None:
            b.set(cread[c, pos], log[L, pos])
            m.run("consume.returned", b, c, L, pos)
            b.set(cpos[c], pos + 1)

        m.wrapped("consume.read", read, b, c, L, pos)()


def invariants(m: Model) -> None:
    C, M, spec = m.p.consumers, m.M, m.spec
    log, leader, cread, acked, hw = m.log, m.leader, m.cread, m.acked, m.hw
    spec.invariant("MonotonicReads", implies(leader != NONE, forall(C, lambda c: forall(
        M, lambda k: implies(m.held(leader, k, cread[c, k] != 0),
                             log[leader, k] == cread[c, k]), "k"), "c")),
        m.doc("MonotonicReads",
              "every record a consumer has read is still at its offset in the leader's log"))
    spec.invariant("ReadYourWrites", implies(leader != NONE, forall(
        M, lambda k: implies(m.held(leader, k, acked[k] != 0), k < hw[leader]), "k")),
        "every acknowledged record is below the leader's HW (readable by a consumer)")


def action_properties(m: Model) -> None:
    cread, leader = m.cread, m.leader
    m.spec.action_property("ReadsBelowHw", forall(m.p.consumers, lambda c: forall(
        m.M, lambda k: implies(prime(cread[c, k]) != cread[c, k],
                               (leader != NONE) & (k < read_bound(m, leader))), "k"), "c"),
        "a consumer reads only below the leader's HW" + (" (its LSO: read_committed)"
                                                         if read_committed(m) else ""))


def reachables(m: Model) -> None:
    cread = m.cread
    m.spec.reachable("ConsumerRead", exists(m.p.consumers, lambda c: exists(
        m.M, lambda k: cread[c, k] != 0, "k"), "c"), "a consumer read a record")
