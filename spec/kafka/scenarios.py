"""Named scenarios: Kafka's replication history as parameter sets with their expected verdicts.

Each scenario is one configuration of the model (``Params``) and what a full exploration of it
must find: for every invariant and action property, either ``HOLDS`` or the length in steps of
its shortest violation; and the reachability checks that must be reached, so that a property
that holds is not holding only because nothing ever happens (no record committed, no leader
change, no truncation). The number of distinct states is pinned too: a model change that
shrinks the state space is caught even when every verdict stays the same.

The figures are those of a full breadth-first exploration; where MODEL.md publishes a figure for
the same configuration, the two agree. hwcheck's suite runs the table and names every
difference.
"""

from __future__ import annotations

from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import SpecError
from hwcheck.spec.protocol import HOLDS, Scenario

# Every reachability check of the model: a scenario expects all of them reached unless it says
# otherwise.
ALL_REACHED = ("RecordCommitted", "LeaderChanged", "FollowerTruncated")

# The fixed protocol: KIP-279 truncation and ISR expansion that also waits for the follower to
# reach the start of the leader's epoch (the KAFKA-7128 fix).
FIXED = dict(truncation="kip-279", isr_expansion="epoch-start")


def scenario(name: str, story: str, bug: str, params: Params, expect: dict,
             states: int | None = None, reached: tuple[str, ...] = ALL_REACHED) -> Scenario:
    return Scenario(name, story, bug, params.as_dict(), expect, reached, states)


def verdicts(**violated: int) -> dict[str, str | int]:
    """Every invariant and action property of the model: HOLDS unless given a length."""
    names = ("HwBelowLeo", "LeaderInIsr", "CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw",
             "LeaderHwMonotonic", "EpochMonotonic")
    unknown = set(violated) - set(names)
    if unknown:
        raise SpecError(f"scenario expectation for unknown property: {', '.join(sorted(unknown))}")
    return {n: violated.get(n, HOLDS) for n in names}


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
)
