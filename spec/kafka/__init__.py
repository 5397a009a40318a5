"""Kafka's partition replication protocol (MODEL.md) as a hwcheck protocol.

Every Kafka fact lives in this package: the model (``model.py``), its parameters and their
domains (``params.py``), the named scenarios of its history (``scenarios.py``), the lemmas and
replica symmetry for Z3 (``lemmas.py``) and the drawings of its traces (``views.py``).
"""

from __future__ import annotations

from hwcheck.spec.kafka import lemmas, model, scenarios, views
from hwcheck.spec.kafka.params import ACKS, EXPANSIONS, TRUNCATIONS, Params
from hwcheck.spec.protocol import Param, Protocol, Views

_D = Params()

PARAMS = (
    Param("replicas", _D.replicas, range(1, 6), "Replicas (brokers)", ("--replicas", "-R")),
    Param("max_offset", _D.max_offset, range(1, 9),
          "Log capacity in records (the leader stops accepting records at LEO = M)",
          ("--max-offset", "-M")),
    Param("max_epoch", _D.max_epoch, range(1, 9), "Highest leader epoch (elections stop there)",
          ("--max-epoch", "-E")),
    Param("truncation", _D.truncation, TRUNCATIONS,
          "Follower truncation before fetching: to the HW, by leader epoch (KIP-101), KIP-279",
          ("--truncation",)),
    Param("isr_expansion", _D.isr_expansion, EXPANSIONS,
          "When a follower rejoins the ISR: LEO >= leader HW, or also >= the start of the "
          "leader's epoch (the KAFKA-7128 fix)", ("--isr-expansion",)),
    Param("acks", _D.acks, ACKS, "Producer acks", ("--acks",)),
    Param("min_isr", _D.min_isr, range(1, 6), "min.insync.replicas (at most R)", ("--min-isr",)),
    Param("unclean", _D.unclean, bool, "unclean.leader.election.enable",
          ("--unclean-election/--no-unclean-election",)),
)


def _build(**params):
    return model.build(Params(**params))


def _check(params: dict) -> None:
    Params(**params)  # raises a SpecError naming the parameter (min-isr > replicas, ...)


PROTOCOL = Protocol(
    name="kafka",
    params=PARAMS,
    builder=_build,
    doc="One partition of a Kafka topic replicated on R brokers: produce, fetch, HW, ISR "
        "changes, crashes, truncation and leader election (MODEL.md).",
    scenarios=scenarios.SCENARIOS,
    lemmas=lemmas.lemmas,
    shipped_lemmas=lemmas.shipped_for,
    cheap=lemmas.CHEAP,
    symmetry=lemmas.replica_symmetry,
    views=Views(text=views.text, html=views.page, params_line=views.params_line),
    slug=lambda p: Params(**p).slug(),
    check_params=_check,
)
