"""What the parts of the Kafka model share while they build one Spec: ``Model``.

A part (``base.py`` and one module per knob) adds its variables, actions and properties to the
spec and extends the others' actions only through this context, never by reaching into another
part:

- its variables become attributes of the context (``m.log``, ``m.flushed``, ...) when it
  declares them, and a knob that is off declares none;
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
from typing import NamedTuple

from hwcheck.spec.kafka import derived
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import Expr, Spec, SpecError


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


class Model:
    """One configuration's model while it is built: the spec, the parameters, the variables
    the parts declared, and the extensions they registered."""

    def __init__(self, spec: Spec, p: Params) -> None:
        self.spec, self.p = spec, p
        self.R, self.M, self.E = p.R, p.M, p.E
        self.OOR = derived.out_of_range(p.E)
        self.fair: str | None = None  # the fairness of the actions the liveness part makes fair
        self.controller = None  # base.Atomic, or kraft.KRaft (set in the extend phase)
        self.log_start = None  # with --log-start-offset: its variable (truncation reads it)
        self.p_wait = None  # pWait, once a part with a producer awaiting answers declares it
        # A record's cells beyond its epoch, each (cell, its twin in the fetch response)
        self.payload: list = []
        self.response_only: list = []  # response cells without a log twin (respLs)
        self._restated: dict[str, dict] = {}
        self._hooks: dict[str, list[Callable]] = {p: [] for p in POINTS}
        self._writes: dict[str, list[str]] = {}
        self._replaced: dict[str, Callable] = {}
        self._qualified: dict[str, str] = {}

    # -- declarations ----------------------------------------------------------------------------

    def restate(self, name: str, **decl) -> None:
        self._restated[name] = decl

    def array(self, name: str, shape: tuple, lo: int, hi: int, doc: str):
        d = dict(shape=shape, lo=lo, hi=hi, doc=doc) | self._restated.get(name, {})
        return self.spec.array(name, d["shape"], d["lo"], d["hi"], d["doc"])

    def producer_wait(self):
        """pWait, shared by the parts whose producer awaits one answer at a time (retries,
        transactions): declared by the first that asks, where it asks."""
        if self.p_wait is None:
            self.p_wait = self.spec.scalar("pWait", 0, self.E, "the epoch of the leader the "
                                           "producer awaits an answer from; 0 = none awaited")
        return self.p_wait

    @property
    def cells(self) -> list:
        return [c for c, _ in self.payload]

    @property
    def fetch_extra(self) -> list:
        """The fetch response's cells beyond the record and the HW."""
        return [r for _, r in self.payload] + self.response_only

    @property
    def ghosts(self) -> list:
        return [self.committed, self.acked]

    # -- extensions ------------------------------------------------------------------------------

    def extend(self, point: str, fn: Callable) -> None:
        if point not in POINTS:
            raise SpecError(f"the Kafka model has no extension point {point!r}")
        self._hooks[point].append(fn)

    def run(self, point: str, *args) -> None:
        for fn in self._hooks[point]:
            fn(*args)

    def collect(self, point: str, *args) -> list[Expr]:
        return [fn(*args) for fn in self._hooks[point]]

    def wrapped(self, point: str, inner: Callable[[], None], *args) -> Callable[[], None]:
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

    def replace(self, name: str, fn: Callable) -> None:
        if name not in REPLACEABLE:
            raise SpecError(f"the Kafka model has no replaceable step {name!r}")
        self._replaced[name] = fn

    def step(self, name: str, default: Callable) -> Callable:
        return self._replaced.get(name, default)

    def qualify(self, prop: str, words: str) -> None:
        self._qualified[prop] = self._qualified.get(prop, "") + words

    def doc(self, prop: str, doc: str) -> str:
        return doc + self._qualified.get(prop, "")

    # -- facts over this model's variables -------------------------------------------------------

    def leo(self, r) -> Expr:
        return derived.leo(self.spec, r)

    def held(self, r, k, cond) -> Expr:
        """``cond``, where offset k of r's log is still held (always, without a log start)."""
        for h in self.collect("held", r, k):
            cond = h & cond
        return cond
