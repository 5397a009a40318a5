"""The base replication model of docs/model.md: its variables, initial state, actions and
properties, with the atomic controller (every broker sees the controller's decisions at once).

Its own knobs (truncation, ISR expansion, acks, min.insync.replicas, unclean election) choose
statements here; the knobs of docs/kafka-model.md extend it through the context's points
(``context.py``) and declare nothing when they are off. The shared steps (``advance_hw``,
``truncate``, ``append``, ``go_down``) are here: the other parts call them.
"""

from __future__ import annotations

from collections.abc import Sequence

from hwcheck.spec.kafka.derived import NONE
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.model.truncation import truncation_point
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import (
    ActionParam,
    Block,
    Expr,
    Local,
    Read,
    Value,
    Var,
    count,
    exists,
    forall,
    implies,
    ite,
    max_,
    min_,
    min_over,
    prime,
)

# The properties of the base model, in declaration order: one home for the names that scenarios
# expect verdicts for.
INVARIANTS = ("HwBelowLeo", "LeaderInIsr", "CommittedNotLost", "AckedNotLost",
              "LogsMatchBelowHw")
ACTION_PROPERTIES = ("LeaderHwMonotonic", "EpochMonotonic")
REACHABLES = ("RecordCommitted", "LeaderChanged", "FollowerTruncated")


def on(p: Params) -> bool:
    return True


def names(p: Params) -> Names:
    return Names(INVARIANTS, ACTION_PROPERTIES, REACHABLES)


def extend(m: Model) -> None:
    m.controller = Atomic(m)


def declare(m: Model) -> None:
    R, M, E, spec = m.R, m.M, m.E, m.spec
    m.log = m.array("log", (R, M), 0, E, "leader epoch of the record at each offset; 0 = none")
    m.hw = m.array("hw", (R,), 0, M, "high watermark (persisted)")
    m.alive = spec.set_of("alive", R, "brokers that are up")
    m.leader = spec.scalar("leader", NONE, R - 1, "the partition leader; -1 = none")
    m.epoch = spec.scalar("epoch", 1, E, "the current leader epoch")
    m.isr = spec.set_of("isr", R, "the in-sync replica set")
    m.synced = spec.set_of("synced", R, "replicas that truncated for the current leader")
    m.rleo = m.array("rleo", (R,), 0, M, "the leader's record of each follower's LEO")
    m.pending = spec.set_of("pending", R, "followers with a fetch response in flight")
    m.resp_rec = m.array("respRec", (R,), 0, m.OOR, f"record in flight; {m.OOR} = out of range")
    m.resp_hw = m.array("respHw", (R,), 0, M, "leader HW carried by the response in flight")
    m.committed = m.array("committed", (M,), 0, E, "ghost: record at k when k was committed")
    m.acked = m.array("acked", (M,), 0, E,
                      "ghost: record at k the producer was told is written")


def init(m: Model, b: Block) -> None:
    with b.each(m.R, "r") as r:
        b.set(m.alive[r], True)
        b.set(m.isr[r], True)
        b.set(m.synced[r], True)
    b.set(m.leader, 0)
    b.set(m.epoch, 1)


# -- the shared steps ------------------------------------------------------------------------


def isr_size(m: Model) -> Expr:
    return count(m.R, lambda r: m.isr[r], "r")


def isr_size_of(m: Model, L: Value) -> Expr:
    """The size of the ISR leader L works with (with the KRaft controller, its own view)."""
    return count(m.R, lambda r: m.controller.in_isr(L, r), "r")


def advance_hw(m: Model, b: Block, L: Value) -> None:
    """Raise the leader's HW to the least LEO over the ISR; record what becomes committed."""
    p, hw, log, committed, acked = m.p, m.hw, m.log, m.committed, m.acked
    leo_l = b.let("leoL", m.leo(L))
    low = min_over(m.R, lambda f: m.controller.rl(L, f),
                   lambda f: m.controller.in_isr(L, f) & (f != L), leo_l, "f")
    raised = max_(hw[L], min_(leo_l, low))
    for gate in m.collect("hw.gate", L):
        raised = ite(gate, raised, hw[L])
    new = b.let("newHw", raised)
    old = b.let("oldHw", hw[L])
    ack_all = b.let("ackAll", isr_size_of(m, L) >= p.min_isr) if p.acks == "all" else None
    with b.each(m.M, "k") as k:
        with b.when((old <= k) & (k < new)):
            with b.when(committed[k] == 0):
                b.set(committed[k], log[L, k])
            if ack_all is not None:
                with b.when(ack_all & (acked[k] == 0)):
                    b.set(acked[k], log[L, k])
    b.set(hw[L], new)
    m.run("hw.advanced", b, L, new, ack_all)


def truncate(m: Model, b: Block, r: Value, n: Value) -> None:
    """Cut replica r's log to its first n offsets."""
    with b.each(m.M, "k") as k:
        b.set(m.log[r, k], ite(k < n, m.log[r, k], 0))
        for cell in m.cells:
            b.set(cell[r, k], ite(k < n, cell[r, k], 0))
    b.set(m.hw[r], min_(m.hw[r], n))
    m.run("truncate", b, r, n)


def truncated(m: Model) -> list[Var | str]:
    """What a truncation writes (variables, and the names other parts add)."""
    return [m.log, m.hw, *m.cells, *m.written("truncate")]


def append(m: Model, b: Block, L: Value, n: Value, values: Sequence[Value]) -> None:
    """Write a record at offset n of L's log: its epoch, then its payload cells in order."""
    b.set(m.log[L, n], values[0])
    for cell, v in zip(m.cells, values[1:]):
        b.set(cell[L, n], v)


def go_down(m: Model, b: Block, r: Value) -> None:
    """Broker r stops and loses its in-memory state. With the atomic controller a leader that
    stops leaves the partition without one; the KRaft controller learns of it only by fencing
    r."""
    b.set(m.alive[r], False)
    b.set(m.synced[r], False)
    b.set(m.pending[r], False)
    b.set(m.resp_rec[r], 0)
    b.set(m.resp_hw[r], 0)
    for resp in m.fetch_extra:
        b.set(resp[r], 0)
    m.controller.forget(b, r)


def down(m: Model) -> list[Read | Var]:
    """What ``go_down`` writes."""
    return [m.alive, m.synced, m.pending, m.resp_rec, m.resp_hw, *m.fetch_extra,
            *m.controller.forgets()]


# -- the atomic controller ---------------------------------------------------------------------


class Atomic:
    """The atomic controller of docs/model.md: every broker sees the controller's decisions at
    once, so the partition state (leader, epoch, ISR) is one for all."""

    def __init__(self, m: Model) -> None:
        self.m = m

    def rl(self, L: Value, f: Value) -> Read:
        """Leader L's record of follower f's LEO."""
        return self.m.rleo[f]

    def in_isr(self, L: Value, f: Value) -> Read:
        """f is in the ISR leader L works with."""
        return self.m.isr[f]

    def follow(self, b: Block, f: Value) -> Local:
        """BecomeFollower's guard: the leader f truncates for; returns it."""
        m = self.m
        b.require(m.leader != NONE, f != m.leader, m.alive[f], ~m.synced[f])
        return b.let("L", m.leader)

    def forget(self, b: Block, r: Value) -> None:
        """What the partition forgets of broker r when it stops."""
        m = self.m
        with b.when(m.leader == r):
            b.set(m.leader, NONE)
            with b.each(m.R, "f") as f:
                b.set(m.rleo[f], 0)

    def forgets(self) -> list[Read | Var]:
        return [self.m.leader, self.m.rleo]

    def serving(self) -> Expr:
        """A leader serves: what is lost is what it does not hold."""
        return self.m.leader != NONE

    def leader_hw_monotonic(self) -> None:
        m = self.m
        same_leader = (m.leader != NONE) & (prime(m.leader) == m.leader) \
            & (prime(m.epoch) == m.epoch)
        m.spec.action_property("LeaderHwMonotonic",
                               implies(same_leader, prime(m.hw[m.leader]) >= m.hw[m.leader]),
                               "while the same leader leads, its HW never decreases")

    def produce(self) -> None:
        m, p = self.m, self.m.p
        log, acked, leader, epoch = m.log, m.acked, m.leader, m.epoch

        @m.spec.action("Produce", modifies=[log, m.hw, *m.ghosts, *m.cells,
                                            *m.written("Produce")])
        def produce(b: Block) -> None:
            """The leader appends a producer record in its epoch. With retries or transactions the
            one producer sends its next record once the previous one is answered (one request in
            flight); with transactions the record belongs to the open transaction, or begins the
            next one."""
            b.require(leader != NONE, m.leo(leader) < m.M)
            if p.acks == "all":
                b.require(isr_size(m) >= p.min_isr)
            m.run("produce.guard", b)
            L = b.let("L", leader)
            n = b.let("n", m.leo(L))
            b.set(log[L, n], epoch)
            m.run("produce.append", b, L, n)
            if p.acks == "1":
                with b.when(acked[n] == 0):
                    b.set(acked[n], epoch)
            advance_hw(m, b, L)

    def fetch_request(self) -> None:
        m = self.m
        log, hw, isr, leader, epoch = m.log, m.hw, m.isr, m.leader, m.epoch
        resp_rec, resp_hw, pending = m.resp_rec, m.resp_hw, m.pending

        @m.spec.action("FetchRequest", over=[m.R],
                       modifies=[resp_rec, resp_hw, pending, m.rleo, isr, hw, *m.ghosts,
                                 *m.fetch_extra, *m.written("hw")],
                       fairness=m.fair)
        def fetch_request(b: Block, f: ActionParam) -> None:
            """The leader serves follower f's fetch at offset leo(f)."""
            b.require(leader != NONE, f != leader, m.alive[f], m.synced[f], ~pending[f])
            L = b.let("L", leader)
            lf = b.let("lf", m.leo(f))
            ll = b.let("ll", m.leo(L))

            def serve() -> None:
                with b.when(lf > ll):
                    b.set(resp_rec[f], m.OOR)
                    b.set(resp_hw[f], ll)
                    b.set(pending[f], True)
                with b.otherwise():
                    b.set(m.rleo[f], lf)
                    join = ~isr[f] & (lf >= hw[L])
                    if m.p.isr_expansion == "epoch-start":
                        start = min_over(m.M, lambda k: k,
                                         lambda k: (k < ll) & (log[L, k] == epoch), ll, "k")
                        join = join & (lf >= start)
                    with b.when(join):
                        b.set(isr[f], True)
                    advance_hw(m, b, L)
                    b.set(resp_rec[f], ite(lf < ll, log[L, lf], 0))
                    for cell, resp in m.payload:
                        b.set(resp[f], ite(lf < ll, cell[L, lf], 0))
                    b.set(resp_hw[f], hw[L])
                    m.run("fetch.respond", b, f, L)
                    b.set(pending[f], True)

            m.wrapped("fetch.serve", serve, b, f, L, lf)()

    def shrink_isr(self) -> None:
        m = self.m
        leader, isr = m.leader, m.isr

        @m.spec.action("ShrinkIsr", over=[m.R],
                       modifies=[isr, m.hw, *m.ghosts, *m.written("hw")])
        def shrink_isr(b: Block, f: ActionParam) -> None:
            """The leader drops follower f from the ISR (the lag timer is abstracted; with
            --isr-shrink lag:N only a follower more than N records behind)."""
            b.require(leader != NONE, f != leader, isr[f])
            m.run("shrink.guard", b, leader, f)
            L = b.let("L", leader)
            b.set(isr[f], False)
            advance_hw(m, b, L)

    def elect(self) -> None:
        m, p = self.m, self.m.p
        isr, alive, leader, epoch = m.isr, m.alive, m.leader, m.epoch

        @m.spec.action("Elect", over=[m.R],
                       modifies=[isr, leader, epoch, m.rleo, m.synced, m.pending, m.resp_rec,
                                 m.resp_hw, m.hw, *m.ghosts, *m.fetch_extra, *m.written("hw")],
                       fairness=m.fair)
        def elect(b: Block, c: ActionParam) -> None:
            """The controller elects c from the live ISR (or, unclean, any live replica) and bumps
            the epoch."""
            b.require(leader == NONE, epoch < m.E, alive[c])
            if p.unclean:
                b.require(isr[c] | ~exists(m.R, lambda r: isr[r] & alive[r], "r"))
            else:
                b.require(isr[c])
            clean = b.let("clean", isr[c])
            with b.each(m.R, "r") as r:
                b.set(isr[r], ite(clean, isr[r] & alive[r], r == c))
                b.set(m.rleo[r], 0)
                b.set(m.synced[r], r == c)
                b.set(m.pending[r], False)
                b.set(m.resp_rec[r], 0)
                b.set(m.resp_hw[r], 0)
                for resp in m.fetch_extra:
                    b.set(resp[r], 0)
            b.set(leader, c)
            b.set(epoch, epoch + 1)
            advance_hw(m, b, c)


# -- the actions ---------------------------------------------------------------------------------


def actions(m: Model) -> None:
    """The base model's actions in their order; the controller states those that read its
    decisions."""
    c = m.controller
    c.produce()
    c.fetch_request()
    fetch_response(m)
    become_follower(m)
    c.shrink_isr()
    crash(m)
    restart(m)
    c.elect()


def fetch_response(m: Model) -> None:
    log, hw, pending, resp_rec, resp_hw = m.log, m.hw, m.pending, m.resp_rec, m.resp_hw

    @m.spec.action("FetchResponse", over=[m.R],
                   modifies=[log, hw, pending, resp_rec, resp_hw, *m.cells, *m.fetch_extra,
                             *m.written("truncate")],
                   fairness=m.fair)
    def fetch_response(b: Block, f: ActionParam) -> None:
        """Follower f applies its fetch response."""
        b.require(pending[f])
        rec = b.let("rec", resp_rec[f])
        rh = b.let("rh", resp_hw[f])
        lf = b.let("lf", m.leo(f))

        def apply() -> None:
            with b.when(rec != 0):
                b.set(log[f, lf], rec)
                for cell, resp in m.payload:
                    b.set(cell[f, lf], resp[f])
            m.step("response.hw", take_hw)(b, f, rh)

        def take_hw(b: Block, f: Value, rh: Value) -> None:
            b.set(hw[f], min_(m.leo(f), rh))

        with b.when(rec == m.OOR):
            truncate(m, b, f, min_(lf, rh))
        with b.otherwise():
            m.wrapped("response.apply", apply, b, f, rec, rh)()
        b.set(pending[f], False)
        b.set(resp_rec[f], 0)
        b.set(resp_hw[f], 0)
        for resp in m.fetch_extra:
            b.set(resp[f], 0)


def become_follower(m: Model) -> None:
    @m.spec.action("BecomeFollower", over=[m.R], modifies=[*truncated(m), m.synced],
                   fairness=m.fair)
    def become_follower(b: Block, f: ActionParam) -> None:
        """Follower f truncates its log for the current leader before fetching (KRaft: the
        leader it knows; by leader epoch or KIP-279 it asks that leader, which answers if it
        believes it leads, with KIP-320 fencing in f's leader epoch)."""
        L = m.controller.follow(b, f)
        n = b.let("cut", truncation_point(m, b, f, L))
        truncate(m, b, f, n)
        b.set(m.synced[f], True)


def crash(m: Model) -> None:
    @m.spec.action("Crash", over=[m.R], modifies=down(m))
    def crash(b: Block, r: ActionParam) -> None:
        """Broker r fails and loses its in-memory state; its log and HW survive (with
        --unflushed-loss: the operating system's page cache keeps what is not flushed yet)."""
        b.require(m.alive[r])
        go_down(m, b, r)


def restart(m: Model) -> None:
    @m.spec.action("Restart", over=[m.R],
                   modifies=[m.alive, m.synced, *truncated(m), *m.written("restart")],
                   fairness=m.fair)
    def restart(b: Block, r: ActionParam) -> None:
        """Broker r comes back; with HW truncation it truncates its log to its HW. With the
        KRaft controller it registers again, once the controller has fenced its old
        registration; with the ELR, a registration after an unclean shutdown removes it from
        the ELR."""
        b.require(~m.alive[r])
        m.run("restart", b, r)
        b.set(m.alive[r], True)
        b.set(m.synced[r], False)
        if m.p.truncation == "hw":
            truncate(m, b, r, b.let("n", min_(m.leo(r), m.hw[r])))


# -- the properties ------------------------------------------------------------------------------


def invariants(m: Model) -> None:
    R, M, spec = m.R, m.M, m.spec
    log, hw, leader, committed, acked = m.log, m.hw, m.leader, m.committed, m.acked
    spec.invariant("HwBelowLeo", forall(R, lambda r: hw[r] <= m.leo(r), "r"),
                   "every replica's HW is at most its LEO")
    spec.invariant("LeaderInIsr", implies(leader != NONE, m.isr[leader]),
                   "the leader is in the ISR")
    serving = m.controller.serving()
    spec.invariant("CommittedNotLost", implies(serving, forall(
        M, lambda k: implies(m.held(leader, k, committed[k] != 0),
                             log[leader, k] == committed[k]), "k")),
        m.doc("CommittedNotLost", "the leader's log holds every committed record"))
    spec.invariant("AckedNotLost", implies(serving, forall(
        M, lambda k: implies(m.held(leader, k, acked[k] != 0),
                             log[leader, k] == acked[k]), "k")),
        m.doc("AckedNotLost", "the leader's log holds every acknowledged record"))

    def both_hold(a: Value, c: Value, k: Value) -> Expr:
        cond = (k < hw[a]) & (k < hw[c])
        for held in m.collect("held", a, k):
            cond = cond & held
        for held in m.collect("held", c, k):
            cond = cond & held
        return cond

    matching = forall(R, lambda a: forall(R, lambda c: implies(
        a < c, forall(M, lambda k: implies(both_hold(a, c, k), log[a, k] == log[c, k]), "k")),
        "b"), "a")
    spec.invariant("LogsMatchBelowHw", matching,
                   m.doc("LogsMatchBelowHw",
                         "any two replicas agree on every offset below both their HWs"))


def action_properties(m: Model) -> None:
    m.controller.leader_hw_monotonic()
    m.spec.action_property("EpochMonotonic", prime(m.epoch) >= m.epoch,
                           "the leader epoch never decreases")


def reachables(m: Model) -> None:
    spec = m.spec
    spec.reachable("RecordCommitted", exists(m.M, lambda k: m.committed[k] != 0, "k"),
                   "a record is committed")
    spec.reachable("LeaderChanged", m.epoch > 1, "a new leader was elected")
    spec.reachable("FollowerTruncated",
                   exists(m.R, lambda r: prime(m.leo(r)) < m.leo(r), "r"),
                   "a transition where a replica's log gets shorter (records truncated)")
