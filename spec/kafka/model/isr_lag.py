"""``--isr-shrink lag:N``: the leader drops a follower from the ISR only when it is more than N
records behind (replica.lag.max.messages), with either controller (docs/kafka-model.md)."""

from __future__ import annotations

from hwcheck.spec.kafka.derived import NONE
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import Block, Value, exists, prime


def on(p: Params) -> bool:
    return p.lag is not None


def names(p: Params) -> Names:
    return Names(reachables=("IsrShrunk",))


def declare(m: Model) -> None:
    lag = m.p.lag
    assert lag is not None  # on(p)

    def behind(b: Block, L: Value, f: Value) -> None:
        b.require(m.leo(L) - m.controller.rl(L, f) > lag)

    m.extend("shrink.guard", behind)


def reachables(m: Model) -> None:
    leader, isr = m.leader, m.isr
    m.spec.reachable("IsrShrunk", (leader != NONE) & (prime(leader) == leader) & exists(
        m.R, lambda f: isr[f] & ~prime(isr[f]), "f"),
        f"the leader dropped a follower more than {m.p.lag} records behind from the ISR")
