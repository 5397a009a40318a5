"""``--unflushed-loss``: a broker's log reaches the disk only when it is flushed, and a power
loss loses the records past the last flush (Kafka acknowledges without fsync); a crash keeps them
in the page cache (docs/kafka-model.md)."""

from __future__ import annotations

from hwcheck.spec.kafka.model.base import down, go_down, truncate, truncated
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import ActionParam, Block, exists, min_, prime


def on(p: Params) -> bool:
    return p.unflushed_loss


def names(p: Params) -> Names:
    return Names(reachables=("PowerLossLostRecords",))


def declare(m: Model) -> None:
    m.flushed = flushed = m.array(
        "flushed", (m.R,), 0, m.M, "each replica's log is on disk below this offset (its last "
        "flush); the records from there on are in the page cache only")
    m.writes("truncate", "flushed")
    m.extend("truncate", lambda b, r, n: b.set(flushed[r], min_(flushed[r], n)))


def actions(m: Model) -> None:
    flushed, alive = m.flushed, m.alive

    @m.spec.action("Flush", over=[m.R], modifies=[flushed])
    def flush(b: Block, r: ActionParam) -> None:
        """Broker r's log reaches the disk (a flush: log.flush.interval, a segment roll, the
        operating system's writeback; a clean shutdown flushes before it stops)."""
        b.require(alive[r], flushed[r] < m.leo(r))
        b.set(flushed[r], m.leo(r))

    @m.spec.action("PowerLoss", over=[m.R],
                   modifies=[*down(m), *truncated(m), *m.written("PowerLoss")])
    def power_loss(b: Block, r: ActionParam) -> None:
        """Broker r's machine loses power: it stops as in a crash, and its log loses the
        records past its last flush (Kafka acknowledges without fsync)."""
        b.require(alive[r])
        go_down(m, b, r)
        truncate(m, b, r, b.let("n", flushed[r]))
        m.run("power_loss", b, r)


def reachables(m: Model) -> None:
    alive = m.alive
    m.spec.reachable("PowerLossLostRecords", exists(m.R, lambda r: alive[r] & ~prime(alive[r])
                                                    & (prime(m.leo(r)) < m.leo(r)), "r"),
                     "a power loss that dropped records")
