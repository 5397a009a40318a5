"""``--liveness``: the liveness properties and the fairness they assume (docs/kafka-model.md,
"Liveness"). Each is stated on the behaviours whose crashes eventually stop (``quiet``: a broker
that crashes forever keeps any partition from progressing), under weak fairness of fetches,
responses, truncation, restarts and elections (produce, crash and ISR shrink are not fair: a
producer need not produce, a broker need not fail). Lassos that exist only because the model ran
out of epochs are counted apart (``health.at_bound``)."""

from __future__ import annotations

from hwcheck.spec.kafka.derived import NONE
from hwcheck.spec.kafka.model.context import Model, Names
from hwcheck.spec.kafka.params import Params
from hwcheck.spec.lang import forall, implies

NAMES = ("ElectionAfterCrash", "AckedReplicated", "HwCatchesUp", "LogsConverge")


def on(p: Params) -> bool:
    return p.liveness


def names(p: Params) -> Names:
    return Names(liveness=NAMES)


def extend(m: Model) -> None:
    m.fair = "weak"  # the actions the other parts state with fairness=m.fair


def liveness(m: Model) -> None:
    spec, R, M, E = m.spec, m.R, m.M, m.E
    log, hw, acked, alive, isr = m.log, m.hw, m.acked, m.alive, m.isr
    leader, epoch = m.leader, m.epoch
    quiet = ["Crash"]
    spec.leads_to("ElectionAfterCrash", (leader == NONE) & (epoch < E), leader != NONE,
                  "a partition without a leader gets one (below the epoch bound)", quiet=quiet)
    spec.always_eventually("AckedReplicated", forall(M, lambda k: implies(
        acked[k] != 0, forall(R, lambda r: implies(alive[r] & isr[r], log[r, k] == acked[k]),
                              "r")), "k"),
        "again and again, every acknowledged record is on every alive ISR member",
        quiet=quiet)
    spec.always_eventually("HwCatchesUp", (leader != NONE) & (hw[leader] == m.leo(leader)),
                           "again and again, the leader's HW reaches its LEO", quiet=quiet)
    spec.eventually_always("LogsConverge", forall(R, lambda a: forall(R, lambda c: implies(
        alive[a] & alive[c], forall(M, lambda k: log[a, k] == log[c, k], "k")), "c"), "a"),
        "from some point on, the alive replicas' logs are equal", quiet=quiet)
