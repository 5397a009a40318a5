"""``--fencing kip-320``: fetches (and leader epoch requests) carry the fetcher's leader epoch;
a leader in another epoch refuses them (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) and the
fetcher waits for metadata. With the KRaft controller (docs/kafka-model.md)."""

from __future__ import annotations

from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import Block, Value


def on(p: Params) -> bool:
    return p.fencing == "kip-320"


def names(p: Params) -> Names:
    return Names()


def declare(m: Model) -> None:
    def same_epoch(b: Block, f: Value) -> None:
        b.require(m.b_epoch[m.b_leader[f]] == m.b_epoch[f])

    m.extend("kraft.asks", same_epoch)
