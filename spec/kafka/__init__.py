"""Kafka's partition replication protocol (docs/model.md) as a hwcheck protocol.

Every Kafka fact lives in this package: the model (``model/``: the base model and one part per
knob), the facts derived from a state (``derived.py``), its parameters and their domains
(``params.py``), the named scenarios of its history (``scenarios.py``), the lemmas and replica
symmetry for Z3 (``lemmas.py``) and the drawings of its traces (``views.py``). The knobs
beyond the base model (consumers, producer retries and idempotence, the log start offset,
transactions, ISR shrink by lag, power loss, the KRaft controller, KIP-320 fencing and KIP-966
eligible leader replicas) are documented in docs/kafka-model.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hwcheck.spec.kafka import (
    health,  # recoverability: healthy and at-bound states
    lemmas,
    model,
    scenarios,
    views,
)
from hwcheck.spec.kafka.params import (
    ACKS,
    CONTROLLERS,
    EXPANSIONS,
    FENCINGS,
    ISOLATIONS,
    KNOBS_OFF,
    MAX_CONSUMERS,
    RECOVERIES,
    TRUNCATIONS,
    Params,
)
from hwcheck.spec.lang import Spec
from hwcheck.spec.protocol import Checking, Param, Protocol, Views

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
    # -- knobs beyond the base model (docs/kafka-model.md); each off by default ------------
    Param("consumers", _D.consumers, range(0, MAX_CONSUMERS + 1),
          "Consumers reading from the leader below its HW (the LSO for read_committed)",
          ("--consumers",)),
    Param("producer_retries", _D.producer_retries, bool,
          "One producer (one request in flight, sequence numbers) that retries an unanswered "
          "record to the new leader", ("--producer-retries/--no-producer-retries",)),
    Param("idempotence", _D.idempotence, bool,
          "enable.idempotence: a leader does not append a sequence number its log holds",
          ("--idempotence/--no-idempotence",)),
    Param("log_start_offset", _D.log_start_offset, bool,
          "The leader advances its log start offset up to its HW (retention, DeleteRecords)",
          ("--log-start-offset/--no-log-start-offset",)),
    Param("transactions", _D.transactions, bool,
          "A transactional producer: data records, then a commit or abort marker; the LSO",
          ("--transactions/--no-transactions",)),
    Param("isolation", _D.isolation, ISOLATIONS,
          "The consumers' isolation.level with --transactions", ("--isolation",)),
    Param("isr_shrink", _D.isr_shrink, str,
          "When the leader may drop a follower from the ISR: any (any time), or lag:N (only "
          "when it is more than N records behind, replica.lag.max.messages)",
          ("--isr-shrink",)),
    Param("liveness", _D.liveness, bool,
          "Declare the liveness properties (ElectionAfterCrash, AckedReplicated, HwCatchesUp, "
          "LogsConverge) and the fairness they assume: fetches, responses, truncation, "
          "restarts and elections weakly fair",
          ("--liveness/--no-liveness",)),
    Param("unflushed_loss", _D.unflushed_loss, bool,
          "A power loss (PowerLoss) loses each broker's records past its last flush (Flush); "
          "a crash keeps them (the page cache)", ("--unflushed-loss/--no-unflushed-loss",)),
    Param("controller", _D.controller, CONTROLLERS,
          "atomic: every broker sees the controller's decisions at once; kraft: the KRaft "
          "controller (broker registrations and fencing, AlterPartition, metadata propagation)",
          ("--controller",)),
    Param("fencing", _D.fencing, FENCINGS,
          "kip-320: fetches carry the fetcher's leader epoch; a leader in another epoch refuses "
          "them (with --controller kraft)", ("--fencing",)),
    Param("elr", _D.elr, bool,
          "KIP-966 eligible leader replicas: the HW advances only with min ISR in the ISR, "
          "replicas leaving it below min ISR stay eligible (with --controller kraft)",
          ("--elr/--no-elr",)),
    Param("unclean_recovery", _D.unclean_recovery, RECOVERIES,
          "KIP-966 unclean recovery (with --elr and --unflushed-loss): balanced elects the best "
          "log of the last known ELR once the ISR and the ELR are empty",
          ("--unclean-recovery",)),
)


def _build(**params: Any) -> Spec:
    return model.build(Params(**params))


def _check(params: dict[str, Any]) -> None:
    Params(**params)  # raises a SpecError naming the parameter (min-isr > replicas, ...)


@dataclass(frozen=True)
class KafkaProtocol(Protocol):
    """The Kafka protocol: a knob of docs/kafka-model.md that is off is not part of a
    parameter set, so the base model's configurations (their run folders, trace files and kernels)
    are exactly what they were before the knobs existed."""

    def resolve(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        out = super().resolve(given)
        return {k: v for k, v in out.items() if not (k in KNOBS_OFF and v == KNOBS_OFF[k])}


PROTOCOL = KafkaProtocol(
    name="kafka",
    params=PARAMS,
    builder=_build,
    doc="One partition of a Kafka topic replicated on R brokers: produce, fetch, HW, ISR "
        "changes, crashes, truncation and leader election (docs/model.md); optionally consumers, "
        "producer retries and idempotence, the log start offset, transactions and ISR shrink "
        "by lag (docs/kafka-model.md).",
    scenarios=scenarios.SCENARIOS,
    check_params=_check,
    checking=Checking(
        lemmas=lemmas.lemmas,
        shipped_lemmas=lemmas.shipped_for,
        cheap=lemmas.CHEAP,
        symmetry=lemmas.replica_symmetry,
        healthy=health.healthy,  # check --recoverable (health.py)
        at_bound=health.at_bound,
    ),
    views=Views(text=views.text, html=views.page, params_line=views.params_line,
                slug=lambda p: Params(**p).slug()),
)
