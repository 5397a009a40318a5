"""``--controller kraft``: the KRaft controller as its own actor (docs/kafka-model.md). Its
partition state (leader, epoch, ISR) is the base model's; each broker acts on the partition state
it has applied (``bLeader``, ``bEpoch``, a leader's own ISR view ``lIsr`` and records ``rleo``)
and learns the controller's later (LearnMetadata); the controller fences brokers whose
heartbeats stop and accepts a leader's AlterPartition only when it is current.

It replaces the base model's atomic controller (``KRaft``), and states its own actions.
"""

from __future__ import annotations

from hwcheck.spec.kafka.derived import NONE
from hwcheck.spec.kafka.model.base import advance_hw, isr_size_of
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    ActionParam,
    Block,
    Expr,
    Local,
    Read,
    Value,
    Var,
    exists,
    forall,
    implies,
    ite,
    max_,
    min_over,
    prime,
)
from hwcheck.spec.types import SetOf


def on(p: Params) -> bool:
    return p.kraft


def names(p: Params) -> Names:
    return Names(action_properties=("LeaderEpochFenced",), reachables=("ZombieLeader",))


def extend(m: Model) -> None:
    # a deposed leader that has not learned it yet keeps its own records
    m.restate("rleo", shape=(m.R, m.R), doc="rleo[L][f]: broker L's record of follower f's "
                                            "LEO while L believes it leads")
    m.controller = KRaft(m)


def declare(m: Model) -> None:
    R, E, spec = m.R, m.E, m.spec
    m.fenced = spec.set_of("fenced", R, "controller: brokers whose registration is fenced")
    m.b_leader = m.array("bLeader", (R,), NONE, R - 1,
                         "the leader in the partition state each broker has applied; -1 = none")
    m.b_epoch = m.array("bEpoch", (R,), 0, E, "the leader epoch each broker has applied; "
                                              "0 = none yet (restarted)")
    spec.declare("lIsr", SetOf(R), over=(R,),
                 doc="the ISR of a broker that believes it leads (its view); empty for the "
                     "others")
    m.l_isr = spec.var("lIsr")
    # a broker registers again only once the controller has fenced its old registration
    m.extend("restart", lambda b, r: b.require(m.fenced[r]))


def init(m: Model, b: Block) -> None:
    with b.each(m.R, "r") as r:
        b.set(m.b_leader[r], 0)
        b.set(m.b_epoch[r], 1)
        b.set(m.l_isr[0, r], True)


def current(m: Model, L: Value) -> Expr:
    """The controller accepts L's AlterPartition: L leads in the controller's current leader
    epoch and proposes from the ISR the controller has (the partition epoch; see
    docs/kafka-model.md)."""
    return (m.leader == L) & (m.epoch == m.b_epoch[L]) & forall(
        m.R, lambda s: m.isr[s] == m.l_isr[L, s], "s")


def asks(m: Model, b: Block, f: Value) -> None:
    """Broker f's request reaches the broker it believes leads, which answers it if it believes
    it leads too (and as the extensions of ``kraft.asks`` say)."""
    b_leader = m.b_leader
    b.require(m.alive[b_leader[f]], b_leader[b_leader[f]] == b_leader[f])
    m.run("kraft.asks", b, f)


class KRaft:
    """The KRaft controller: what leader L works with is its own view and records."""

    def __init__(self, m: Model) -> None:
        self.m = m

    def rl(self, L: Value, f: Value) -> Read:
        return self.m.rleo[L, f]

    def in_isr(self, L: Value, f: Value) -> Read:
        return self.m.l_isr[L, f]

    def follow(self, b: Block, f: Value) -> Local:
        m = self.m
        b.require(m.alive[f], m.b_leader[f] != NONE, m.b_leader[f] != f, ~m.synced[f])
        if m.p.truncation != "hw":  # by leader epoch or KIP-279 it asks the leader it knows
            asks(m, b, f)
        return b.let("L", m.b_leader[f])

    def forget(self, b: Block, r: Value) -> None:
        m = self.m
        b.set(m.b_leader[r], NONE)
        b.set(m.b_epoch[r], 0)
        with b.each(m.R, "f") as f:
            b.set(m.l_isr[r, f], False)
            b.set(m.rleo[r, f], 0)

    def forgets(self) -> list[Read | Var]:
        m = self.m
        return [m.b_leader, m.b_epoch, m.l_isr, m.rleo]

    def serving(self) -> Expr:
        # The leader of record may be down (the controller has not fenced it yet): what is lost
        # is what a leader that runs does not hold.
        m = self.m
        return (m.leader != NONE) & m.alive[m.leader]

    def leader_hw_monotonic(self) -> None:
        # a leader is a broker that runs and believes it leads, in the epoch it knows
        m = self.m
        alive, b_leader, b_epoch, hw = m.alive, m.b_leader, m.b_epoch, m.hw

        def still_leads(r: Value) -> Expr:
            return alive[r] & (b_leader[r] == r) & prime(alive[r]) \
                & (prime(b_leader[r]) == r) & (prime(b_epoch[r]) == b_epoch[r])
        m.spec.action_property("LeaderHwMonotonic", forall(m.R, lambda r: implies(
            still_leads(r), prime(hw[r]) >= hw[r]), "r"),
            "while a broker leads in one epoch, its HW never decreases")

    def produce(self) -> None:
        m, p = self.m, self.m.p
        log, acked, b_leader, b_epoch = m.log, m.acked, m.b_leader, m.b_epoch

        @m.spec.action("Produce", over=[m.R], modifies=[log, m.hw, *m.ghosts])
        def produce_kraft(b: Block, L: ActionParam) -> None:
            """A producer's record reaches broker L, which believes it leads (a leader deposed
            by the controller that has not learned it yet too), and L appends it in the epoch
            it knows."""
            b.require(m.alive[L], b_leader[L] == L, m.leo(L) < m.M)
            if p.acks == "all":
                b.require(isr_size_of(m, L) >= p.min_isr)
            n = b.let("n", m.leo(L))
            b.set(log[L, n], b_epoch[L])
            if p.acks == "1":
                with b.when(acked[n] == 0):
                    b.set(acked[n], b_epoch[L])
            advance_hw(m, b, L)

    def fetch_request(self) -> None:
        m = self.m
        log, hw, isr, l_isr, b_leader, b_epoch = m.log, m.hw, m.isr, m.l_isr, m.b_leader, \
            m.b_epoch
        resp_rec, resp_hw, pending = m.resp_rec, m.resp_hw, m.pending

        @m.spec.action("FetchRequest", over=[m.R],
                       modifies=[resp_rec, resp_hw, pending, m.rleo, isr, l_isr, hw, *m.ghosts,
                                 *m.written("isr")])
        def fetch_request_kraft(b: Block, f: ActionParam) -> None:
            """Follower f fetches at offset leo(f) from the broker it believes leads, which
            serves it if it believes it leads too (with KIP-320 fencing, only in f's leader
            epoch: else FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH, and f waits for
            metadata). A follower that has caught up joins the ISR by an AlterPartition that
            the controller accepts: L is its current leader, proposes from the current ISR,
            and f is not fenced."""
            b.require(m.alive[f], b_leader[f] != NONE, b_leader[f] != f, m.synced[f],
                      ~pending[f])
            asks(m, b, f)
            L = b.let("L", b_leader[f])
            lf = b.let("lf", m.leo(f))
            ll = b.let("ll", m.leo(L))
            with b.when(lf > ll):
                b.set(resp_rec[f], m.OOR)
                b.set(resp_hw[f], ll)
                b.set(pending[f], True)
            with b.otherwise():
                b.set(m.rleo[L, f], lf)
                join = ~l_isr[L, f] & (lf >= hw[L])
                if m.p.isr_expansion == "epoch-start":
                    start = min_over(m.M, lambda k: k,
                                     lambda k: (k < ll) & (log[L, k] == b_epoch[L]), ll, "k")
                    join = join & (lf >= start)
                with b.when(join & current(m, L) & ~m.fenced[f]):
                    b.set(isr[f], True)
                    b.set(l_isr[L, f], True)
                    m.run("kraft.isr_changed", b, lambda r: False)
                advance_hw(m, b, L)
                b.set(resp_rec[f], ite(lf < ll, log[L, lf], 0))
                b.set(resp_hw[f], hw[L])
                b.set(pending[f], True)

    def shrink_isr(self) -> None:
        m = self.m
        isr, l_isr = m.isr, m.l_isr

        @m.spec.action("ShrinkIsr", over=[m.R, m.R],
                       modifies=[isr, l_isr, m.hw, *m.ghosts, *m.written("isr")])
        def shrink_isr_kraft(b: Block, L: ActionParam, f: ActionParam) -> None:
            """Broker L, which believes it leads, drops follower f from the ISR by an
            AlterPartition that the controller accepts (L is its current leader and proposes
            from the current ISR; a stale one is rejected and changes nothing). With the ELR,
            f joins it if the ISR falls below min ISR."""
            b.require(m.alive[L], m.b_leader[L] == L, f != L, l_isr[L, f])
            m.run("shrink.guard", b, L, f)
            b.require(current(m, L))
            b.set(isr[f], False)
            b.set(l_isr[L, f], False)
            m.run("kraft.isr_changed", b, lambda r: r == f)
            advance_hw(m, b, L)

    def elect(self) -> None:
        m, p = self.m, self.m.p
        isr, fenced, leader, epoch = m.isr, m.fenced, m.leader, m.epoch

        def clean(c: Value) -> Expr:  # the controller may elect c without losing committed records
            eligible: Expr = isr[c]
            for also in m.collect("kraft.eligible", c):
                eligible = eligible | also
            return eligible

        @m.spec.action("Elect", over=[m.R], modifies=[isr, leader, epoch, *m.written("isr")])
        def elect_kraft(b: Block, c: ActionParam) -> None:
            """The controller elects c, unfenced, from the ISR (with the ELR: or from the ELR;
            unclean: any unfenced replica when no member of either is; balanced unclean
            recovery: when the ISR and the ELR are empty and every last known ELR member is
            unfenced, the one with the best log) and bumps the epoch. An ELR member elected
            joins the ISR; the brokers learn it from the metadata."""
            b.require(leader == NONE, epoch < m.E, ~fenced[c])
            eligible = clean(c)
            for recovery in m.collect("kraft.recovery", c):
                eligible = eligible | recovery
            if p.unclean:
                b.require(eligible | ~exists(m.R, lambda r: clean(r) & ~fenced[r], "r"))
            else:
                b.require(eligible)
            was_clean = b.let("clean", clean(c))
            with b.each(m.R, "r") as r:
                b.set(isr[r], ite(was_clean, isr[r] | (r == c), r == c))
            m.run("kraft.elected", b, was_clean)
            b.set(leader, c)
            b.set(epoch, epoch + 1)


def actions(m: Model) -> None:
    fence_broker(m)
    unfence_broker(m)
    learn_metadata(m)


def fence_broker(m: Model) -> None:
    isr, leader = m.isr, m.leader

    def keep_last(b: Block, r: Value) -> None:
        with b.when(exists(m.R, lambda s: isr[s] & (s != r), "s")):
            b.set(isr[r], False)

    @m.spec.action("FenceBroker", over=[m.R], modifies=[m.fenced, isr, leader,
                                                        *m.written("isr")])
    def fence_broker(b: Block, r: ActionParam) -> None:
        """The controller fences broker r: its heartbeats stopped (it is down, or cut off
        from the controller while it runs on). r leaves the ISR, unless it is the last
        member (with the ELR always, joining the ELR if the ISR falls below min ISR); if r
        leads, the partition has no leader until the controller elects one."""
        b.require(~m.fenced[r])
        b.set(m.fenced[r], True)
        m.step("fence.isr", keep_last)(b, r)
        with b.when(leader == r):
            b.set(leader, NONE)


def unfence_broker(m: Model) -> None:
    @m.spec.action("UnfenceBroker", over=[m.R], modifies=[m.fenced], fairness=m.fair)
    def unfence_broker(b: Block, r: ActionParam) -> None:
        """The controller unfences broker r: it runs, heartbeats, and has caught up with
        the partition state."""
        b.require(m.alive[r], m.fenced[r], m.b_leader[r] == m.leader, m.b_epoch[r] == m.epoch)
        b.set(m.fenced[r], False)


def learn_metadata(m: Model) -> None:
    b_leader, b_epoch, l_isr, rleo, leader, epoch, isr = m.b_leader, m.b_epoch, m.l_isr, \
        m.rleo, m.leader, m.epoch, m.isr

    @m.spec.action("LearnMetadata", over=[m.R],
                   modifies=[b_leader, b_epoch, l_isr, rleo, m.synced, m.pending, m.resp_rec,
                             m.resp_hw, m.hw, *m.ghosts],
                   fairness=m.fair)
    def learn_metadata(b: Block, r: ActionParam) -> None:
        """Broker r applies the controller's latest partition state (metadata propagation:
        until then it acts on the state it has). On a new leader or epoch it drops its
        fetch in flight and, as a follower, truncates again before it fetches; as the
        leader it starts afresh with the ISR and computes its HW."""
        moved = (b_leader[r] != leader) | (b_epoch[r] != epoch)
        b.require(m.alive[r], moved | ((leader == r) & exists(
            m.R, lambda s: isr[s] != l_isr[r, s], "s")))
        new = b.let("moved", moved)
        b.set(b_leader[r], leader)
        b.set(b_epoch[r], epoch)
        with b.each(m.R, "s") as s_:
            b.set(l_isr[r, s_], (leader == r) & isr[s_])
            b.set(rleo[r, s_], ite(new | (leader != r), 0, rleo[r, s_]))
        with b.when(new):
            b.set(m.synced[r], leader == r)
            b.set(m.pending[r], False)
            b.set(m.resp_rec[r], 0)
            b.set(m.resp_hw[r], 0)
        with b.when(leader == r):
            advance_hw(m, b, r)


def action_properties(m: Model) -> None:
    pending, b_epoch, b_leader = m.pending, m.b_epoch, m.b_leader

    def served(f: Value) -> Expr:  # a fetch of f was served: a response is now in flight
        return ~pending[f] & prime(pending[f])

    m.spec.action_property("LeaderEpochFenced", forall(m.R, lambda f: implies(
        served(f), b_epoch[max_(b_leader[f], 0)] == b_epoch[f]), "f"),
        "a leader serves a fetch only in the fetcher's leader epoch")


def reachables(m: Model) -> None:
    alive, b_leader, b_epoch, leader, epoch = m.alive, m.b_leader, m.b_epoch, m.leader, m.epoch
    m.spec.reachable("ZombieLeader", exists(m.R, lambda r: alive[r] & (b_leader[r] == r) & (
        (leader != r) | (epoch != b_epoch[r])), "r"),
        "a broker believes it leads after the controller moved on")
