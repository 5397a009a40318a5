"""The Kafka model composed by feature: the base replication model of docs/model.md
(``base.py``, with its truncation rules in ``truncation.py``) and one part per knob of
docs/kafka-model.md, each adding its variables, actions and properties and extending the
others' actions through the context (``context.py``), as a TLA+ module EXTENDS another.

``build(params)`` returns the validated Spec for one configuration. A part whose knob is off
takes no part: it declares nothing (no variable, action, property or statement), so that the
base model (its layout, instance numbering, fingerprints and counts) is exactly what it was.

Each part is a module with ``on(params)`` (whether it takes part), ``names(params)`` (the
properties it states, in its order) and the phases it takes part in, each a function of the
context: ``extend`` (before anything is declared: restating a base variable, replacing the
controller, fairness), ``declare`` (its variables, and its extensions of the others' actions),
``init`` (which gets the initial state's block too), ``actions``, ``invariants``,
``liveness``, ``action_properties``, ``reachables``.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

from hwcheck.spec.kafka.derived import NONE
from hwcheck.spec.kafka.model import (
    base,
    consumers,
    elr,
    fencing,
    isr_lag,
    kraft,
    liveness,
    log_start,
    power_loss,
    producer,
    transactions,
)
from hwcheck.spec.kafka.model.context import Model
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import ActionProperty, Block, Invariant, Liveness, Spec, SpecError

__all__ = ["BASE_ACTION_PROPERTIES", "BASE_INVARIANTS", "BASE_REACHABLES", "LIVENESS", "NONE",
           "build", "property_names", "reachable_names"]

BASE_INVARIANTS = base.INVARIANTS
BASE_ACTION_PROPERTIES = base.ACTION_PROPERTIES
BASE_REACHABLES = base.REACHABLES
LIVENESS = liveness.NAMES

# The order in which the parts declare their variables and state their actions (the state
# layout and the instance numbering follow it) ...
STATE_ORDER = (base, log_start, producer, transactions, consumers, power_loss, kraft, fencing,
               elr, isr_lag, liveness)
# ... and the order in which they state their properties: the consumers' come right after the
# base model's. (The knobs that are refused together, params.py, need no order between them.)
PROPERTY_ORDER = (base, consumers, log_start, producer, transactions, power_loss, kraft,
                  fencing, elr, isr_lag, liveness)


def _phase(parts: Sequence[ModuleType], name: str, m: Model) -> None:
    for part in parts:
        fn = getattr(part, name, None)
        if fn is not None:
            fn(m)


def build(p: Params) -> Spec:
    spec = Spec("KafkaHW", p.as_dict())
    m = Model(spec, p)
    state = [part for part in STATE_ORDER if part.on(p)]
    props = [part for part in PROPERTY_ORDER if part.on(p)]
    _phase(state, "extend", m)
    _phase(state, "declare", m)

    def init(b: Block) -> None:
        for part in state:
            if hasattr(part, "init"):
                part.init(m, b)

    spec.initial(init)
    _phase(state, "actions", m)
    _phase(props, "invariants", m)
    _phase(props, "liveness", m)
    _phase(props, "action_properties", m)
    _phase(props, "reachables", m)
    _check_names(spec, p)
    return spec.validate()


def _names(p: Params, kind: str) -> tuple[str, ...]:
    return tuple(n for part in PROPERTY_ORDER if part.on(p) for n in getattr(part.names(p), kind))


def property_names(p: Params) -> tuple[str, ...]:
    """Every invariant, action property and liveness property the model of ``p`` declares, in
    its order."""
    return _names(p, "invariants") + _names(p, "action_properties") + _names(p, "liveness")


def reachable_names(p: Params) -> tuple[str, ...]:
    """Every reachability check the model of ``p`` declares."""
    return _names(p, "reachables")


def _check_names(spec: Spec, p: Params) -> None:
    """The names each part says it states (``names``) are those it declared."""
    stated: tuple[Invariant | ActionProperty | Liveness, ...] = (
        *spec.invariants, *spec.action_properties, *spec.liveness)
    declared = tuple(x.name for x in stated)
    reached = tuple(r.name for r in spec.reachables)
    if declared != property_names(p) or reached != reachable_names(p):
        raise SpecError(f"the Kafka model's parts declare {declared + reached}, but name "
                        f"{property_names(p) + reachable_names(p)}")
