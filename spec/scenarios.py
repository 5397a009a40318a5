"""Named scenarios: Kafka's replication history as parameter sets with their expected verdicts.

Each scenario is one configuration of the model (``Params``) and what a full exploration of it
must find: for every invariant and action property, either ``HOLDS`` or the length in steps of
its shortest violation; and the reachability checks that must be reached, so that a property
that holds is not holding only because nothing ever happens (no record committed, no leader
change, no truncation). The number of distinct states is pinned too: a model change that
shrinks the state space is caught even when every verdict stays the same.

The figures are those of a full breadth-first exploration; where MODEL.md publishes a figure for
the same configuration, the two agree. ``checker/suite.py`` runs the table and names every
difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .lang import SpecError
from .params import Params

HOLDS = "holds"

# Every reachability check of the model: a scenario expects all of them reached unless it says
# otherwise.
ALL_REACHED = ("RecordCommitted", "LeaderChanged", "FollowerTruncated")

# The fixed protocol: KIP-279 truncation and ISR expansion that also waits for the follower to
# reach the start of the leader's epoch (the KAFKA-7128 fix).
FIXED = dict(truncation="kip-279", isr_expansion="epoch-start")


@dataclass(frozen=True)
class Scenario:
    name: str
    story: str  # one line: what the configuration is and what happens to it
    bug: str  # the issue or proposal the scenario is about ("-" when none)
    params: Params
    # invariant or action property -> HOLDS, or the shortest violation's length in steps
    expect: dict[str, str | int] = field(default_factory=dict)
    reached: tuple[str, ...] = ALL_REACHED
    states: int | None = None  # distinct reachable states of a full exploration, when pinned

    def expected(self, prop: str) -> str | int | None:
        return self.expect.get(prop)

    def violated(self) -> dict[str, int]:
        """The properties expected violated, with their shortest lengths."""
        return {k: v for k, v in self.expect.items() if v != HOLDS}


def verdicts(**violated: int) -> dict[str, str | int]:
    """Every invariant and action property of the model: HOLDS unless given a length."""
    names = ("HwBelowLeo", "LeaderInIsr", "CommittedNotLost", "AckedNotLost", "LogsMatchBelowHw",
             "LeaderHwMonotonic", "EpochMonotonic")
    unknown = set(violated) - set(names)
    if unknown:
        raise SpecError(f"scenario expectation for unknown property: {', '.join(sorted(unknown))}")
    return {n: violated.get(n, HOLDS) for n in names}


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "hw-truncation",
        "Followers truncate to their HW on restart, as the classic write-ups describe: a committed "
        "record is lost and the logs diverge below the HW.",
        "KIP-101",
        Params(2, 2, 3, truncation="hw", isr_expansion="hw"),
        verdicts(CommittedNotLost=8, AckedNotLost=8, LogsMatchBelowHw=9),
        states=10_487,
    ),
    Scenario(
        "kip-101",
        "Truncation by leader epoch keeps committed records, but two replicas can still hold "
        "different records below both their HWs.",
        "KIP-279",
        Params(2, 2, 3, truncation="leader-epoch", isr_expansion="hw"),
        verdicts(LogsMatchBelowHw=11),
        states=5_368,
    ),
    Scenario(
        "kip-279",
        "Truncation walks back epoch by epoch, but a follower rejoins the ISR on LEO >= HW alone: "
        "with 3 replicas a committed record is lost.",
        "KAFKA-7128",
        Params(3, 1, 3, truncation="kip-279", isr_expansion="hw"),
        verdicts(CommittedNotLost=12, AckedNotLost=12, LogsMatchBelowHw=14),
        states=69_689,
    ),
    Scenario(
        "kip-279-r2",
        "The same protocol with 2 replicas: every invariant holds; losing the record of "
        "KAFKA-7128 takes a third replica.",
        "KAFKA-7128",
        Params(2, 2, 3, truncation="kip-279", isr_expansion="hw"),
        verdicts(),
        states=4_978,
    ),
    Scenario(
        "kafka-7128-fix",
        "KIP-279 truncation, and a follower rejoins the ISR only once it reaches the start of the "
        "leader's epoch: every invariant holds with 3 replicas.",
        "KAFKA-7128",
        Params(3, 3, 4, **FIXED),
        verdicts(),
        states=12_457_245,
    ),
    Scenario(
        "kafka-7128-fix-r2",
        "The fixed protocol with 2 replicas, longer logs and more elections: every invariant "
        "holds.",
        "KAFKA-7128",
        Params(2, 6, 6, **FIXED),
        verdicts(),
        states=6_221_711,
    ),
    Scenario(
        "acks-1",
        "The producer is answered once the leader has the record: the leader fails before a "
        "follower fetches it and the acknowledged write is gone.",
        "-",
        Params(2, 2, 3, acks="1", **FIXED),
        verdicts(AckedNotLost=3),
        states=12_294,
    ),
    Scenario(
        "unclean-election",
        "An out-of-sync replica may be elected when no ISR member is alive: it lacks a committed "
        "record and becomes the leader.",
        "-",
        Params(2, 2, 3, unclean=True, **FIXED),
        verdicts(CommittedNotLost=4, AckedNotLost=4, LogsMatchBelowHw=5),
        states=12_291,
    ),
    Scenario(
        "min-isr-2",
        "acks=all with min.insync.replicas=2 and clean election: every acknowledged write "
        "survives any sequence of crashes.",
        "-",
        Params(3, 1, 3, acks="all", min_isr=2, **FIXED),
        verdicts(),
        states=92_414,
    ),
    Scenario(
        "min-isr-2-unclean",
        "min-isr-2 with unclean election: a replica outside the ISR is elected and "
        "acknowledged writes are lost.",
        "-",
        Params(3, 1, 3, acks="all", min_isr=2, unclean=True, **FIXED),
        verdicts(CommittedNotLost=5, AckedNotLost=8, LogsMatchBelowHw=8),
        states=229_098,
    ),
)


def names(table: tuple[Scenario, ...] | None = None) -> list[str]:
    return [s.name for s in (SCENARIOS if table is None else table)]


def get(name: str, table: tuple[Scenario, ...] | None = None) -> Scenario:
    """The scenario called ``name`` (in ``table``, by default SCENARIOS); a SpecError naming the
    known ones otherwise."""
    table = SCENARIOS if table is None else table
    for s in table:
        if s.name == name:
            return s
    raise SpecError(f"unknown scenario {name!r} (known: {', '.join(names(table))})")
