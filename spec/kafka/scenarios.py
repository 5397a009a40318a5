"""Named scenarios: Kafka's replication history as parameter sets with their expected verdicts.

Each scenario is one configuration of the model (``Params``) and what a full exploration of it
must find: for every invariant and action property, either ``HOLDS`` or the length in steps of
its shortest violation; and the reachability checks that must be reached, so that a property
that holds is not holding only because nothing ever happens (no record committed, no leader
change, no truncation). The number of distinct states is pinned too: a model change that
shrinks the state space is caught even when every verdict stays the same.

The figures are those of a full breadth-first exploration; where the base model
(docs/model.md) publishes a figure for
the same configuration, the two agree. hwcheck's suite runs the table and names every
difference.
"""

from __future__ import annotations

from typing import Any

from hwcheck.spec.kafka.model import (
    BASE_ACTION_PROPERTIES,
    BASE_INVARIANTS,
    property_names,
    reachable_names,
)
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import SpecError
from hwcheck.spec.protocol import HOLDS, Scenario

# The fixed protocol: KIP-279 truncation and ISR expansion that also waits for the follower to
# reach the start of the leader's epoch (the KAFKA-7128 fix).
FIXED: dict[str, Any] = dict(truncation="kip-279", isr_expansion="epoch-start")


def scenario(name: str, story: str, bug: str, params: Params, expect: dict[str, str | int],
             states: int | None = None, reached: tuple[str, ...] | None = None) -> Scenario:
    """A scenario; by default it expects every reachability check of its model reached."""
    if reached is None:
        reached = reachable_names(params)
    return Scenario(name, story, bug, params.as_dict(), expect, reached, states)


def _verdicts(names: tuple[str, ...], violated: dict[str, int]) -> dict[str, str | int]:
    unknown = set(violated) - set(names)
    if unknown:
        raise SpecError(f"scenario expectation for unknown property: {', '.join(sorted(unknown))}")
    return {n: violated.get(n, HOLDS) for n in names}


def verdicts(**violated: int) -> dict[str, str | int]:
    """Every invariant and action property of the base model: HOLDS unless given a length."""
    return _verdicts(BASE_INVARIANTS + BASE_ACTION_PROPERTIES, violated)


def knob_verdicts(params: Params, **violated: int) -> dict[str, str | int]:
    """Every invariant and action property of the model of ``params`` (its knobs' included):
    HOLDS unless given a length."""
    return _verdicts(property_names(params), violated)


# -- the knobs of docs/kafka-model.md ------------------------------------------------------------


def _knob(name: str, story: str, bug: str, params: Params, states: int,
          **violated: int) -> Scenario:
    return scenario(name, story, bug, params, knob_verdicts(params, **violated), states=states)


_CONSUMERS_HW = Params(2, 2, 3, truncation="hw", isr_expansion="hw", consumers=1)
_CONSUMERS_FIXED = Params(2, 2, 3, consumers=1, **FIXED)
_CONSUMERS_7128 = Params(3, 1, 3, truncation="kip-279", isr_expansion="hw", consumers=1)
_RETRIES = Params(2, 2, 3, producer_retries=True, **FIXED)
_IDEMPOTENT = Params(2, 2, 3, producer_retries=True, idempotence=True, **FIXED)
_LOG_START = Params(2, 2, 3, log_start_offset=True, consumers=1, **FIXED)
_LOG_START_R3 = Params(3, 2, 2, log_start_offset=True, **FIXED)
_TXN = Params(2, 2, 3, transactions=True, consumers=1, **FIXED)
_TXN_UNCOMMITTED = Params(2, 2, 3, transactions=True, consumers=1, isolation="read-uncommitted",
                          **FIXED)
_TXN_TWO = Params(2, 4, 3, transactions=True, **FIXED)
_TXN_HW = Params(2, 2, 3, truncation="hw", isr_expansion="hw", transactions=True)
_LAG_7128 = Params(3, 1, 3, truncation="kip-279", isr_expansion="hw", isr_shrink="lag:0")
_LAG_FIXED = Params(3, 1, 3, isr_shrink="lag:0", **FIXED)
_KRAFT_LOSS = Params(3, 1, 2, min_isr=2, unflushed_loss=True, controller="kraft",
                     fencing="kip-320", **FIXED)
_KRAFT_ELR = _KRAFT_LOSS.replace(elr=True)
_RECOVERY = Params(2, 1, 2, min_isr=2, unflushed_loss=True, controller="kraft",
                   fencing="kip-320", elr=True, unclean_recovery="balanced", **FIXED)
_ZOMBIE = Params(3, 1, 3, controller="kraft", **FIXED)
_ZOMBIE_FENCED = _ZOMBIE.replace(fencing="kip-320")
_LIVE_HW = Params(2, 2, 3, truncation="hw", isr_expansion="hw", liveness=True)
_LIVE_279 = Params(2, 2, 3, truncation="kip-279", isr_expansion="hw", liveness=True)

KNOB_SCENARIOS: tuple[Scenario, ...] = (
    _knob("consumers-hw",
          "A consumer reads a committed record; HW truncation loses it and the consumer's read "
          "is no longer in the leader's log.", "KIP-101", _CONSUMERS_HW, 35_262,
          CommittedNotLost=8, AckedNotLost=8, LogsMatchBelowHw=9, MonotonicReads=9,
          ReadYourWrites=7),
    _knob("consumers-fixed",
          "The fixed protocol keeps every record a consumer read; an acknowledged record is "
          "transiently unreadable after an election, until the new leader's HW catches up.",
          "-", _CONSUMERS_FIXED, 11_248, ReadYourWrites=7),
    _knob("consumers-7128",
          "KIP-279 truncation without the KAFKA-7128 fix: a consumer read a committed record "
          "that the third replica then replaces.", "KAFKA-7128", _CONSUMERS_7128, 127_937,
          CommittedNotLost=12, AckedNotLost=12, LogsMatchBelowHw=14, MonotonicReads=13,
          ReadYourWrites=8),
    _knob("retries-duplicate",
          "The leader crashes before answering; the producer retries to the new leader, which "
          "already has the record: it is appended twice and both copies are committed.",
          "KIP-98", _RETRIES, 7_299, NoDuplicates=6),
    _knob("idempotent-producer",
          "The same retries with enable.idempotence: the new leader recognises the sequence "
          "number and answers without appending it again.", "KIP-98", _IDEMPOTENT, 6_500),
    _knob("log-start-epoch",
          "The leader deletes every record of its epoch; a follower asking for an epoch older "
          "than the leader's epoch cache keeps a divergent record below the leader's log start, "
          "joins the ISR and is elected before it learns the log start.", "-", _LOG_START, 102_903,
          CommittedNotLost=10, AckedNotLost=10, MonotonicReads=11, ReadYourWrites=7),
    _knob("log-start-r3",
          "The log start offset with one election and three replicas: followers learn it, "
          "lagging ones restart there, and every committed record above it survives.", "-",
          _LOG_START_R3, 1_178_244),
    _knob("transactions",
          "A transactional producer commits or aborts; the LSO holds read_committed consumers "
          "back, markers survive elections, and no aborted record is returned.", "KIP-98",
          _TXN, 33_515, ReadYourWrites=7),
    _knob("read-uncommitted",
          "The same transactions read with isolation.level=read_uncommitted: a consumer returns "
          "a record of a transaction that is still open.", "KIP-98", _TXN_UNCOMMITTED, 53_239,
          ReadCommittedIsolation=3, ReadYourWrites=7),
    _knob("lso-two-txns",
          "Two transactions: a new leader's HW lags below the marker of the completed first "
          "one, and the second one's first record lies above that HW. The uncapped first "
          "unstable offset exceeds the HW; Kafka caps the LSO by the HW.", "-", _TXN_TWO, 353_720,
          LsoBelowHw=14),
    _knob("transactions-hw",
          "Transactions on HW truncation: a completed transaction's marker is lost while its "
          "data stays in the leader's log.", "KIP-101", _TXN_HW, 51_321,
          CommittedNotLost=8, AckedNotLost=8, LogsMatchBelowHw=9, MarkersSurvive=12),
    _knob("isr-lag-7128",
          "Followers leave the ISR only when more than 0 records behind "
          "(replica.lag.max.messages): KAFKA-7128 still loses a committed record.",
          "KAFKA-7128", _LAG_7128, 49_831,
          CommittedNotLost=12, AckedNotLost=12, LogsMatchBelowHw=14),
    _knob("isr-lag-fixed",
          "The fixed protocol with lag-based ISR shrink: every invariant holds.", "KAFKA-7128",
          _LAG_FIXED, 40_933),
    _knob("last-replica-standing",
          "KRaft without eligible leader replicas, min.insync.replicas=2: the ISR shrinks to the "
          "leader, whose HW then commits a record only it holds; a power loss takes the record "
          "(never flushed), and the broker, still the last ISR member, is elected again.",
          "KIP-966", _KRAFT_LOSS, 14_914_208,
          CommittedNotLost=9, AckedNotLost=12, LogsMatchBelowHw=17),
    _knob("kip-966",
          "The same with eligible leader replicas: the HW waits for min ISR, replicas leaving "
          "the ISR below it stay eligible, and a broker back from an unclean shutdown is no "
          "longer eligible: every invariant holds.", "KIP-966", _KRAFT_ELR, 15_441_389),
    _knob("unclean-recovery",
          "KIP-966 with balanced unclean recovery: both replicas (min ISR of them) lose the "
          "committed record in power losses, the ISR and the ELR empty, and the controller "
          "elects the best log of the last known ELR, which lacks it.", "KIP-966", _RECOVERY,
          78_706, CommittedNotLost=15, AckedNotLost=15, ElrMembersComplete=16),
    _knob("zombie-leader",
          "KRaft without KIP-320 fencing: a follower that missed two leader changes keeps "
          "fetching from its old leader, now leading again in a later epoch, and its divergent "
          "record counts toward the HW.", "KIP-320", _ZOMBIE, 3_623_791,
          LogsMatchBelowHw=16, LeaderEpochFenced=8),
    _knob("kip-320",
          "The same with KIP-320: a leader answers a fetch only in the fetcher's leader epoch; "
          "the stale follower learns the new epoch and truncates first: every invariant "
          "holds.", "KIP-320", _ZOMBIE_FENCED, 2_847_811),
    _knob("liveness-hw",
          "Liveness under fairness with HW truncation: once crashes stop, an acknowledged "
          "record lost by truncation never reaches the ISR again and the logs never converge "
          "(each a lasso).", "KIP-101", _LIVE_HW, 10_487,
          CommittedNotLost=8, AckedNotLost=8, LogsMatchBelowHw=9, AckedReplicated=14,
          LogsConverge=14),
    _knob("liveness-kip-279",
          "KIP-279 truncation: every liveness property holds (a partition gets a leader, "
          "acknowledged records reach every alive ISR member, the HW catches up, the logs "
          "converge).", "KIP-279", _LIVE_279, 4_978),
)


SCENARIOS: tuple[Scenario, ...] = (
    scenario(
        "hw-truncation",
        "Followers truncate to their HW on restart, as the classic write-ups describe: a committed "
        "record is lost and the logs diverge below the HW.",
        "KIP-101",
        Params(2, 2, 3, truncation="hw", isr_expansion="hw"),
        verdicts(CommittedNotLost=8, AckedNotLost=8, LogsMatchBelowHw=9),
        states=10_487,
    ),
    scenario(
        "kip-101",
        "Truncation by leader epoch keeps committed records, but two replicas can still hold "
        "different records below both their HWs.",
        "KIP-279",
        Params(2, 2, 3, truncation="leader-epoch", isr_expansion="hw"),
        verdicts(LogsMatchBelowHw=11),
        states=5_368,
    ),
    scenario(
        "kip-279",
        "Truncation walks back epoch by epoch, but a follower rejoins the ISR on LEO >= HW alone: "
        "with 3 replicas a committed record is lost.",
        "KAFKA-7128",
        Params(3, 1, 3, truncation="kip-279", isr_expansion="hw"),
        verdicts(CommittedNotLost=12, AckedNotLost=12, LogsMatchBelowHw=14),
        states=69_689,
    ),
    scenario(
        "kip-279-r2",
        "The same protocol with 2 replicas: every invariant holds; losing the record of "
        "KAFKA-7128 takes a third replica.",
        "KAFKA-7128",
        Params(2, 2, 3, truncation="kip-279", isr_expansion="hw"),
        verdicts(),
        states=4_978,
    ),
    scenario(
        "kafka-7128-fix",
        "KIP-279 truncation, and a follower rejoins the ISR only once it reaches the start of the "
        "leader's epoch: every invariant holds with 3 replicas.",
        "KAFKA-7128",
        Params(3, 3, 4, **FIXED),
        verdicts(),
        states=12_457_245,
    ),
    scenario(
        "kafka-7128-fix-r2",
        "The fixed protocol with 2 replicas, longer logs and more elections: every invariant "
        "holds.",
        "KAFKA-7128",
        Params(2, 6, 6, **FIXED),
        verdicts(),
        states=6_221_711,
    ),
    scenario(
        "acks-1",
        "The producer is answered once the leader has the record: the leader fails before a "
        "follower fetches it and the acknowledged write is gone.",
        "-",
        Params(2, 2, 3, acks="1", **FIXED),
        verdicts(AckedNotLost=3),
        states=12_294,
    ),
    scenario(
        "unclean-election",
        "An out-of-sync replica may be elected when no ISR member is alive: it lacks a committed "
        "record and becomes the leader.",
        "-",
        Params(2, 2, 3, unclean=True, **FIXED),
        verdicts(CommittedNotLost=4, AckedNotLost=4, LogsMatchBelowHw=5),
        states=12_291,
    ),
    scenario(
        "min-isr-2",
        "acks=all with min.insync.replicas=2 and clean election: every acknowledged write "
        "survives any sequence of crashes.",
        "-",
        Params(3, 1, 3, acks="all", min_isr=2, **FIXED),
        verdicts(),
        states=92_414,
    ),
    scenario(
        "min-isr-2-unclean",
        "min-isr-2 with unclean election: a replica outside the ISR is elected and "
        "acknowledged writes are lost.",
        "-",
        Params(3, 1, 3, acks="all", min_isr=2, unclean=True, **FIXED),
        verdicts(CommittedNotLost=5, AckedNotLost=8, LogsMatchBelowHw=8),
        states=229_098,
    ),
    *KNOB_SCENARIOS,
)
