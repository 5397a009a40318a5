"""A small protocol over the structured types: a replicated log of records, a leader with an
optional assignment, sets inside records, an enum, a choice inside an action, arithmetic by
constants.

Every node holds a record ``{role: Role, epoch, isr: set of nodes, log: Seq of entries}``
where an entry is ``{value, epoch}``; a controller holds an optional record
``{leader, epoch}``. The actions: the controller elects a node (``Elect``: it chooses which
value of the term to write, ``epoch * 2 % 5`` and ``// 2`` of it), the leader appends,
followers copy the leader's log entry by entry, a node truncates its log to any shorter
prefix, the controller resigns (its optional record becomes absent).

It is also the subject of the canonical-form tests: a sequence truncated and re-appended, an
absent optional, nested records and sets built in two orders each give one row.
"""

from hwcheck.spec.lang import Block, Spec, ite
from hwcheck.spec.types import Enum, Int, Opt, Record, Seq, SetOf, none_of, set_of, some


def build(nodes: int = 2, values: int = 2, cap: int = 2, max_epoch: int = 2) -> Spec:
    spec = Spec("Structured", {"nodes": nodes, "values": values, "cap": cap,
                               "max_epoch": max_epoch})
    Role = Enum("Follower", "Leader")
    Entry = Record(value=Int(0, values - 1), epoch=Int(0, max_epoch))
    Node = Record(role=Role, epoch=Int(0, max_epoch), isr=SetOf(nodes), log=Seq(Entry, cap))
    Assignment = Opt(Record(leader=Int(0, nodes - 1), epoch=Int(0, max_epoch)))
    node = spec.declare("node", Node, over=(nodes,), doc="each node's state")
    ctrl = spec.declare("ctrl", Assignment, doc="the controller's assignment, if any")
    tag = spec.declare("tag", Int(0, 4), doc="a value computed with * // %")
    spec.initial(lambda b: None)

    @spec.action("Elect", over=[nodes], modifies=[node, ctrl, tag])
    def elect(b: Block, n) -> None:
        """The controller makes ``n`` the leader of the next epoch."""
        b.require(ctrl.is_none() | (ctrl.value.leader != n))
        next_epoch = ite(ctrl.is_some(), ctrl.value.epoch, 0) + 1
        b.require(next_epoch <= max_epoch)
        half = b.choose(2)  # one successor per choice
        e = b.let("e", next_epoch)  # read before ctrl is written
        b.put(ctrl, some(Assignment, ctrl.value.replace(leader=n, epoch=e)))
        b.set(tag, ite(half == 1, (e * 2) % 5 // 2, e * 2 % 5))
        b.put(node[n].role, Role.Leader)
        b.set(node[n].epoch, e)
        b.put(node[n].isr, set_of(nodes, n))

    @spec.action("Append", over=[nodes, values], modifies=[node])
    def append(b: Block, n, v) -> None:
        """The leader appends ``v`` in its epoch."""
        b.require(node[n].role == Role.Leader, node[n].log.len < cap)
        b.append(node[n].log, Entry(value=v, epoch=node[n].epoch))

    @spec.action("Copy", over=[nodes, nodes], modifies=[node])
    def copy(b: Block, f, ld) -> None:
        """Follower ``f`` copies the next entry of leader ``ld``'s log and joins its ISR."""
        b.require(f != ld, node[ld].role == Role.Leader, node[f].log.len < node[ld].log.len)
        b.append(node[f].log, node[ld].log[node[f].log.len])
        b.put(node[ld].isr, node[ld].isr.add(f))

    @spec.action("Truncate", over=[nodes], modifies=[node])
    def truncate(b: Block, n) -> None:
        """Node ``n`` drops the tail of its log past a shorter prefix it chooses."""
        k = b.choose(cap)
        b.require(k < node[n].log.len)
        b.truncate(node[n].log, k)

    @spec.action("Resign", modifies=[node, ctrl])
    def resign(b: Block) -> None:
        """The controller withdraws the assignment; the leader steps down."""
        b.require(ctrl.is_some())
        ld = b.let("ld", ctrl.value.leader)
        b.put(ctrl, none_of(Assignment))
        b.put(node[ld].role, Role.Follower)
        b.put(node[ld].isr, set_of(nodes))

    spec.invariant("LeaderInIsr", ctrl.is_none() | node[ctrl.value.leader].isr.has(
        ctrl.value.leader) | (node[ctrl.value.leader].role == Role.Follower),
        "the assigned leader is in its own ISR")
    spec.invariant("TagInRange", tag <= 4)
    spec.invariant("LogsBounded", node[0].log.len <= cap)
    spec.reachable("FullLog", node[0].log.len == cap)
    return spec

