"""``--elr`` and ``--unclean-recovery``: KIP-966's eligible leader replicas on the KRaft
controller. The HW advances only with min ISR in the ISR; replicas that leave the ISR below min
ISR stay eligible to lead; a registration after an unclean shutdown (power loss) removes a
broker from the ELR; balanced unclean recovery elects the best log of the last known ELR once
the ISR and the ELR are empty (docs/kafka-model.md)."""

from __future__ import annotations

from collections.abc import Callable

from hwcheck.spec.kafka.derived import holds_committed
from hwcheck.spec.kafka.model.base import isr_size, isr_size_of
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    Block,
    Expr,
    Value,
    exists,
    forall,
    implies,
    ite,
    max_,
    prime,
)


def on(p: Params) -> bool:
    return p.elr


def names(p: Params) -> Names:
    return Names(invariants=("ElrMembersComplete",),
                 reachables=(("RecoveredUnclean",) if p.unclean_recovery == "balanced" else ())
                 + ("ElectedFromElr",))


def declare(m: Model) -> None:
    spec, R, p = m.spec, m.R, m.p
    m.elr = spec.set_of("elr", R, "controller: the eligible leader replicas (KIP-966)")
    if p.unflushed_loss:
        m.unclean = spec.set_of("unclean", R, "brokers down after an unclean shutdown "
                                              "(power loss): their registration says so")
    recovery = p.unclean_recovery == "balanced"
    if recovery:
        m.last_elr = spec.set_of("lastKnownElr", R,
                                 "controller: ELR members that left it by an unclean "
                                 "shutdown (KIP-966's LastKnownELR)")
    m.writes("isr", "elr", *(["lastKnownElr"] if recovery else []))
    elr = m.elr

    def update_elr(b: Block, joined: Callable[[Value], Value]) -> None:
        """After an ISR change (Kafka's PartitionChangeBuilder): with the ISR at min ISR or
        more the ELR is empty; below, the ELR keeps its members, gains ``joined(r)`` (the
        replicas that just left the ISR) and never holds an ISR member."""
        size = b.let("isrSize", isr_size(m))
        with b.each(R, "r") as r:
            b.set(elr[r], ite(size >= p.min_isr, False, (elr[r] | joined(r)) & ~m.isr[r]))
            if recovery:  # the HW may move again: no last known ELR member can be the best log
                b.set(m.last_elr[r], ite(size >= p.min_isr, False, m.last_elr[r]))

    def elected(b: Block, clean: Value) -> None:
        with b.when(clean):
            update_elr(b, lambda r: False)
        with b.otherwise():  # an unclean election or recovery leaves no replica eligible
            with b.each(R, "r") as r:
                b.set(elr[r], False)
                if recovery:
                    b.set(m.last_elr[r], False)

    def fence_isr(b: Block, r: Value) -> None:
        # KIP-966: a fenced broker always leaves the ISR, joining the ELR below min ISR
        was = b.let("was", m.isr[r])
        b.set(m.isr[r], False)
        update_elr(b, lambda s: (s == r) & was)

    # KIP-966: the HW advances only while the ISR has min ISR members
    m.extend("hw.gate", lambda L: isr_size_of(m, L) >= p.min_isr)
    m.extend("kraft.isr_changed", update_elr)
    m.extend("kraft.eligible", lambda c: elr[c])
    m.extend("kraft.elected", elected)
    m.replace("fence.isr", fence_isr)
    if recovery:
        m.extend("kraft.recovery", lambda c: best_of_last_elr(m, c))
    if p.unflushed_loss:
        m.writes("restart", "elr", "unclean", *(["lastKnownElr"] if recovery else []))
        m.writes("PowerLoss", "unclean")
        m.extend("restart", registered_after_power_loss(m))
        m.extend("power_loss", lambda b, r: b.set(m.unclean[r], True))


def registered_after_power_loss(m: Model) -> Callable[[Block, Value], None]:
    def restart(b: Block, r: Value) -> None:
        with b.when(m.unclean[r]):
            if m.p.unclean_recovery == "balanced":
                b.set(m.last_elr[r], m.last_elr[r] | m.elr[r])
            b.set(m.elr[r], False)
            b.set(m.unclean[r], False)
    return restart


def best_of_last_elr(m: Model, c: Value) -> Expr:
    """Balanced unclean recovery may elect c: the ISR and the ELR are empty, c is in the last
    known ELR, and every member of it is unfenced with a log no better than c's."""
    R, log, isr, elr, last_elr, fenced = m.R, m.log, m.isr, m.elr, m.last_elr, m.fenced

    def last_epoch(r: Value) -> Expr:
        n = m.leo(r)
        return ite(n > 0, log[r, max_(n - 1, 0)], 0)

    def at_least(a: Value, r: Value) -> Expr:  # a's log is at least r's: (last epoch, LEO) ordered
        return (last_epoch(a) > last_epoch(r)) | (
            (last_epoch(a) == last_epoch(r)) & (m.leo(a) >= m.leo(r)))

    return ~exists(R, lambda r: isr[r] | elr[r], "r") & last_elr[c] & forall(
        R, lambda r: implies(last_elr[r], ~fenced[r] & at_least(c, r)), "r")


def invariants(m: Model) -> None:
    elr, UL = m.elr, m.p.unflushed_loss
    m.spec.invariant("ElrMembersComplete", forall(m.R, lambda r: implies(
        elr[r] & ~m.unclean[r] if UL else elr[r], holds_committed(m.spec, r)), "r"),
        "every ELR member holds every committed record" + (" (but one down after a power "
                                                           "loss, not registered again)"
                                                           if UL else ""))


def reachables(m: Model) -> None:
    elr, leader = m.elr, m.leader
    if m.p.unclean_recovery == "balanced":
        m.spec.reachable("RecoveredUnclean", (prime(leader) != leader) & exists(
            m.R, lambda r: m.last_elr[r] & (prime(leader) == r), "r"),
            "the controller elected the best log of the last known ELR (unclean recovery)")
    m.spec.reachable("ElectedFromElr", (prime(leader) != leader) & exists(
        m.R, lambda r: elr[r] & (prime(leader) == r), "r"),
        "the controller elected an ELR member")
