"""What the parts of the Kafka model share while they build one Spec: ``Model``.

A part (``base.py`` and one module per knob) adds its variables, actions and properties to the
spec and extends the others' actions only through this context, never by reaching into another
part:

- its variables become attributes of the context (``m.log``, ``m.flushed``, ...) when it
  declares them, and a knob that is off declares none: ``Model`` declares every such attribute
  with its type, and one a part that is off would set stays unset (reading it is an error);
- ``restate`` changes a base variable's declaration (its shape, domain or doc) before the base
  declares it, keeping its place in the layout;
- ``extend(point, fn)`` adds ``fn`` at one of the named ``POINTS`` where an action of another
  part asks for extensions ("an extra guard of Produce", "what else a truncation lowers", ...);
  they run in the order the parts registered them;
- ``writes(what, *names)`` adds variables to the ``modifies`` of the actions ``WRITES`` names;
- ``replace(name, fn)`` states one of the ``REPLACEABLE`` steps anew;
- ``controller``: the partition's controller, the one alternative of the model (``base.Atomic``
  or ``kraft.KRaft``), which states the actions that read the controller's decisions;
- ``qualify(prop, words)`` adds words to the doc of a property another part states.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from hwcheck.spec.kafka import derived
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import Block, Expr, Local, Read, Spec, SpecError, Value, Var


class Names(NamedTuple):
    """The names of the properties a part states, in its order (scenarios expect verdicts for
    them; ``build`` checks them against what the part declares)."""

    invariants: tuple[str, ...] = ()
    action_properties: tuple[str, ...] = ()
    reachables: tuple[str, ...] = ()
    liveness: tuple[str, ...] = ()


# The extension points: where an action (or a shared step) of one part runs what other parts
# add, with the arguments each extension gets.
POINTS = {
    "produce.guard": "(b): Produce's guard after the base's (the atomic controller)",
    "produce.append": "(b, L, n): Produce, after the leader wrote the record's epoch at n",
    "hw.gate": "(L) -> Expr: the leader's HW advances only while every gate holds",
    "hw.advanced": "(b, L, new, ack_all): after the leader's HW became new (ack_all: acks=all "
                   "and enough ISR members, or None)",
    "truncate": "(b, r, n): after replica r's log was cut to its first n offsets",
    "fetch.serve": "(b, f, L, lf, serve): wraps the leader's serving of f's fetch at lf",
    "fetch.respond": "(b, f, L): the response's cells beyond the record and the HW",
    "response.apply": "(b, f, rec, rh, apply): wraps follower f's applying of a record",
    "restart": "(b, r): Restart, before broker r is up again",
    "shrink.guard": "(b, L, f): ShrinkIsr's guard, before L drops f (either controller)",
    "held": "(r, k) -> Expr: offset k of replica r's log is still held (not deleted)",
    "consume.out_of_range": "(c, L) -> Expr: consumer c's position is out of L's range",
    "consume.read": "(b, c, L, pos, read): wraps consumer c's read at pos",
    "consume.returned": "(b, c, L, pos): after consumer c fetched the record at pos",
    "consumers.declared": "(): after the consumers' variables",
    "kraft.asks": "(b, f): broker f's leader answers its request (KRaft)",
    "kraft.eligible": "(c) -> Expr: the controller may elect c cleanly besides the ISR (KRaft)",
    "kraft.recovery": "(c) -> Expr: the controller may elect c when nothing is eligible",
    "kraft.isr_changed": "(b, joined): after the controller changed the ISR; joined(r): r just "
                         "left it",
    "kraft.elected": "(b, clean): after the controller elected a leader",
    "power_loss": "(b, r): after broker r lost its unflushed records",
}

# Steps a part may state anew, with the part that states them otherwise.
REPLACEABLE = {
    "response.hw": "(b, f, rh): follower f takes the leader's HW rh (base)",
    "fence.isr": "(b, r): the ISR when the controller fences r (kraft)",
}

# The modifies a part may add to: what the actions that run an extension write beyond their own.
WRITES = {
    "Produce": "the atomic controller's Produce (produce.guard, produce.append)",
    "hw": "the atomic controller's FetchRequest, ShrinkIsr and Elect, which raise the leader's "
          "HW (hw.advanced)",
    "truncate": "every action that truncates a log (truncate)",
    "restart": "Restart (restart)",
    "isr": "the KRaft controller's ISR changes (kraft.isr_changed, kraft.elected, fence.isr)",
    "Consume": "Consume (consume.read, consume.returned)",
    "PowerLoss": "PowerLoss (power_loss)",
}


# An extension (at one of ``POINTS``) or a step stated anew (one of ``REPLACEABLE``): each point
# gives its own arguments (the Block, replicas, offsets, a wrapped step) and some return an Expr,
# as ``POINTS`` says, so the registry holds them as callables of any arguments.
Hook = Callable[..., Any]


class Controller(Protocol):
    """The partition's controller (``base.Atomic`` or ``kraft.KRaft``): how a leader's view of
    its followers reads, and the actions that read the controller's decisions."""

    def rl(self, L: Value, f: Value) -> Read:
        """Leader L's record of follower f's LEO."""
        ...

    def in_isr(self, L: Value, f: Value) -> Read:
        """f is in the ISR leader L works with."""
        ...

    def follow(self, b: Block, f: Value) -> Local:
        """BecomeFollower's guard: the leader f truncates for; returns it."""
        ...

    def forget(self, b: Block, r: Value) -> None:
        """What the partition forgets of broker r when it stops."""
        ...

    def forgets(self) -> list[Read | Var]:
        """The variables ``forget`` writes."""
        ...

    def serving(self) -> Expr:
        """A leader serves: what is lost is what it does not hold."""
        ...

    def leader_hw_monotonic(self) -> None: ...

    def produce(self) -> None: ...

    def fetch_request(self) -> None: ...

    def shrink_isr(self) -> None: ...

    def elect(self) -> None: ...


class Model:
    """One configuration's model while it is built: the spec, the parameters, the variables
    the parts declared, and the extensions they registered."""

    # The parts' variables, each set by the part that declares it (a part that is off sets
    # none of its own: reading one is an AttributeError). The base model (base.py):
    log: Var
    hw: Var
    alive: Var
    leader: Read
    epoch: Read
    isr: Var
    synced: Var
    rleo: Var
    pending: Var
    resp_rec: Var
    resp_hw: Var
    committed: Var
    acked: Var
    controller: Controller  # base.Atomic, or kraft.KRaft (set in the extend phase)
    # --log-start-offset (log_start.py)
    RESTART: int  # respRec's value: below the leader's log start offset
    resp_ls: Var
    # --flush (power_loss.py)
    flushed: Var
    # --producer retries (producer.py)
    seq: Var
    resp_seq: Var
    p_seq: Read
    # --transactions (transactions.py)
    txn: Var
    ctl: Var
    resp_txn: Var
    resp_ctl: Var
    txn_id: Read
    txn_state: Read
    outcome: Var
    cret: Var
    # --consumers (consumers.py)
    cpos: Var
    cread: Var
    # --controller kraft (kraft.py)
    fenced: Var
    b_leader: Var
    b_epoch: Var
    l_isr: Var
    # --elr (elr.py)
    elr: Var
    unclean: Var
    last_elr: Var

    def __init__(self, spec: Spec, p: Params) -> None:
        self.spec, self.p = spec, p
        self.R, self.M, self.E = p.R, p.M, p.E
        self.OOR = derived.out_of_range(p.E)
        self.fair: str | None = None  # the fairness of the actions the liveness part makes fair
        # with --log-start-offset: its variable (truncation reads it)
        self.log_start: Var | None = None
        # pWait, once a part with a producer awaiting answers declares it (``producer_wait``)
        self.p_wait: Read | None = None
        # A record's cells beyond its epoch, each (cell, its twin in the fetch response)
        self.payload: list[tuple[Var, Var]] = []
        self.response_only: list[Var] = []  # response cells without a log twin (respLs)
        self._restated: dict[str, dict[str, Any]] = {}
        self._hooks: dict[str, list[Hook]] = {p: [] for p in POINTS}
        self._writes: dict[str, list[str]] = {}
        self._replaced: dict[str, Hook] = {}
        self._qualified: dict[str, str] = {}

    # -- declarations ----------------------------------------------------------------------------

    def restate(self, name: str, **decl: Any) -> None:
        self._restated[name] = decl

    def array(self, name: str, shape: tuple[int, ...], lo: int, hi: int, doc: str) -> Var:
        d: dict[str, Any] = dict(shape=shape, lo=lo, hi=hi, doc=doc) | self._restated.get(name, {})
        return self.spec.array(name, d["shape"], d["lo"], d["hi"], d["doc"])

    def producer_wait(self) -> Read:
        """pWait, shared by the parts whose producer awaits one answer at a time (retries,
        transactions): declared by the first that asks, where it asks."""
        if self.p_wait is None:
            self.p_wait = self.spec.scalar("pWait", 0, self.E, "the epoch of the leader the "
                                           "producer awaits an answer from; 0 = none awaited")
        return self.p_wait

    @property
    def cells(self) -> list[Var]:
        return [c for c, _ in self.payload]

    @property
    def fetch_extra(self) -> list[Var]:
        """The fetch response's cells beyond the record and the HW."""
        return [r for _, r in self.payload] + self.response_only

    @property
    def ghosts(self) -> list[Var]:
        return [self.committed, self.acked]

    # -- extensions ------------------------------------------------------------------------------

    def extend(self, point: str, fn: Hook) -> None:
        if point not in POINTS:
            raise SpecError(f"the Kafka model has no extension point {point!r}")
        self._hooks[point].append(fn)

    def run(self, point: str, *args: Any) -> None:
        for fn in self._hooks[point]:
            fn(*args)

    def collect(self, point: str, *args: Any) -> list[Expr]:
        out: list[Expr] = [fn(*args) for fn in self._hooks[point]]
        return out

    def wrapped(self, point: str, inner: Callable[[], None], *args: Any) -> Callable[[], None]:
        """``inner`` inside every wrapper registered at ``point`` (the first registered
        innermost); each wrapper gets ``*args`` and the step it wraps."""
        for wrapper in self._hooks[point]:
            inner = functools.partial(wrapper, *args, inner)
        return inner

    def writes(self, what: str, *names: str) -> None:
        if what not in WRITES:
            raise SpecError(f"the Kafka model has no modifies list {what!r} to add to")
        self._writes.setdefault(what, []).extend(names)

    def written(self, what: str) -> list[str]:
        return list(self._writes.get(what, []))

    def replace(self, name: str, fn: Hook) -> None:
        if name not in REPLACEABLE:
            raise SpecError(f"the Kafka model has no replaceable step {name!r}")
        self._replaced[name] = fn

    def step(self, name: str, default: Hook) -> Hook:
        return self._replaced.get(name, default)

    def qualify(self, prop: str, words: str) -> None:
        self._qualified[prop] = self._qualified.get(prop, "") + words

    def doc(self, prop: str, doc: str) -> str:
        return doc + self._qualified.get(prop, "")

    # -- facts over this model's variables -------------------------------------------------------

    def leo(self, r: Value) -> Expr:
        return derived.leo(self.spec, r)

    def held(self, r: Value, k: Value, cond: Expr) -> Expr:
        """``cond``, where offset k of r's log is still held (always, without a log start)."""
        for h in self.collect("held", r, k):
            cond = h & cond
        return cond
