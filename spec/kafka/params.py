"""The model's parameters (knobs) with their domains, as docs/model.md defines them.

The first eight are the base model's (docs/model.md). The others are knobs of
docs/kafka-model.md (consumers, producer retries and idempotence, the log start offset,
transactions, ISR shrink by lag, liveness, power loss, the KRaft controller, KIP-320 fencing,
KIP-966 eligible leader replicas and unclean recovery); each is off by default, and a knob
that is off is not part of a configuration at all: ``as_dict`` leaves it out, so the base
model's parameter sets, run folders and traces are exactly what they were.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from hwcheck.spec.lang import SpecError

TRUNCATIONS = ("hw", "leader-epoch", "kip-279")
EXPANSIONS = ("hw", "epoch-start")
ACKS = ("0", "1", "all")
ISOLATIONS = ("read-committed", "read-uncommitted")
CONTROLLERS = ("atomic", "kraft")
FENCINGS = ("none", "kip-320")
RECOVERIES = ("none", "balanced")
MAX_CONSUMERS = 2
MAX_LAG = 8

# The knobs of docs/kafka-model.md and the value that turns each off.
KNOBS_OFF = {
    "consumers": 0,
    "producer_retries": False,
    "idempotence": False,
    "log_start_offset": False,
    "transactions": False,
    "isolation": "read-committed",
    "isr_shrink": "any",
    "liveness": False,
    "unflushed_loss": False,
    "controller": "atomic",
    "fencing": "none",
    "elr": False,
    "unclean_recovery": "none",
}


def parse_isr_shrink(text: str) -> int | None:
    """``any`` -> None; ``lag:N`` -> N (replica.lag.max.messages). Raises SpecError otherwise."""
    if text == "any":
        return None
    if isinstance(text, str) and text.startswith("lag:"):
        n = text[4:]
        if n.isdigit() and int(n) <= MAX_LAG:
            return int(n)
    raise SpecError(f"isr-shrink must be 'any' or 'lag:N' with N in 0..{MAX_LAG}, got {text!r}")


@dataclass(frozen=True)
class Params:
    replicas: int = 2
    max_offset: int = 2
    max_epoch: int = 3
    truncation: str = "hw"
    isr_expansion: str = "hw"
    acks: str = "all"
    min_isr: int = 1
    unclean: bool = False
    # -- knobs beyond the base model (docs/kafka-model.md), each off by default --------------------
    consumers: int = 0
    producer_retries: bool = False
    idempotence: bool = False
    log_start_offset: bool = False
    transactions: bool = False
    isolation: str = "read-committed"
    isr_shrink: str = "any"
    liveness: bool = False
    unflushed_loss: bool = False
    controller: str = "atomic"
    fencing: str = "none"
    elr: bool = False
    unclean_recovery: str = "none"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        def need(ok: bool, msg: str) -> None:
            if not ok:
                raise SpecError(msg)

        for name, lo, hi in (("replicas", 1, 5), ("max_offset", 1, 8), ("max_epoch", 1, 8),
                             ("consumers", 0, MAX_CONSUMERS)):
            v = getattr(self, name)
            need(isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi,
                 f"{name.replace('_', '-')} must be an integer in {lo}..{hi}, got {v!r}")
        need(self.truncation in TRUNCATIONS,
             f"truncation must be one of {', '.join(TRUNCATIONS)}, got {self.truncation!r}")
        need(self.isr_expansion in EXPANSIONS,
             f"isr-expansion must be one of {', '.join(EXPANSIONS)}, got {self.isr_expansion!r}")
        need(self.acks in ACKS, f"acks must be one of {', '.join(ACKS)}, got {self.acks!r}")
        need(isinstance(self.min_isr, int) and 1 <= self.min_isr <= self.replicas,
             f"min-isr must be in 1..replicas ({self.replicas}), got {self.min_isr!r}")
        for name in ("unclean", "producer_retries", "idempotence", "log_start_offset",
                     "transactions", "liveness", "unflushed_loss", "elr"):
            need(isinstance(getattr(self, name), bool),
                 f"{name.replace('_', '-')} must be a boolean, got {getattr(self, name)!r}")
        need(self.isolation in ISOLATIONS,
             f"isolation must be one of {', '.join(ISOLATIONS)}, got {self.isolation!r}")
        parse_isr_shrink(self.isr_shrink)
        need(self.controller in CONTROLLERS,
             f"controller must be one of {', '.join(CONTROLLERS)}, got {self.controller!r}")
        need(self.fencing in FENCINGS,
             f"fencing must be one of {', '.join(FENCINGS)}, got {self.fencing!r}")
        # Combinations the model states no semantics for: one line each.
        need(not self.producer_retries or self.acks == "all",
             "--producer-retries needs --acks all (with acks 0 nothing is answered; with acks 1 "
             "the answer comes with the append, so nothing is ever retried)")
        need(not self.idempotence or self.producer_retries,
             "--idempotence needs --producer-retries (without retries no record is sent twice)")
        need(not self.transactions or self.acks == "all",
             "--transactions needs --acks all (a transactional producer is idempotent)")
        need(not (self.transactions and self.producer_retries),
             "--transactions with --producer-retries is not modelled (late retried records "
             "after a marker, KIP-890)")
        need(not (self.log_start_offset and (self.producer_retries or self.transactions)),
             "--log-start-offset with --producer-retries or --transactions is not modelled (the "
             "broker's producer state is truncated from the start with the log)")
        need(self.transactions or self.isolation == "read-committed",
             "--isolation read-uncommitted needs --transactions (without transactions the two "
             "isolation levels read the same records)")
        need(not (self.unflushed_loss and self.log_start_offset),
             "--unflushed-loss with --log-start-offset is not modelled (a power loss below the "
             "log start offset's checkpoint)")
        kraft = self.controller == "kraft"
        need(kraft or self.fencing == "none",
             "--fencing kip-320 needs --controller kraft (with the atomic controller every "
             "broker learns a new leader epoch at once: there is no stale epoch to fence)")
        need(kraft or not self.elr, "--elr needs --controller kraft (the ELR is the KRaft "
                                    "controller's partition state)")
        need(self.unclean_recovery in RECOVERIES,
             f"unclean-recovery must be one of {', '.join(RECOVERIES)}, got "
             f"{self.unclean_recovery!r}")
        need(self.unclean_recovery == "none" or (self.elr and self.unflushed_loss),
             "--unclean-recovery balanced needs --elr and --unflushed-loss (its last known ELR "
             "holds the ELR members back from a power loss)")
        need(self.unclean_recovery == "none" or not self.unclean,
             "--unclean-recovery balanced replaces --unclean-election (unclean.recovery.strategy "
             "over unclean.leader.election.enable): choose one")
        stated = ("consumers", "producer_retries", "transactions", "log_start_offset", "liveness")
        off = [k for k in stated if getattr(self, k) != KNOBS_OFF[k]]
        need(not kraft or not off,
             f"--controller kraft with --{', --'.join(k.replace('_', '-') for k in off)} is not "
             "modelled (the KRaft model states the producer, the fetches, the ISR and the "
             "controller; not consumers, producer state, the log start offset or liveness)")

    @property
    def R(self) -> int:
        return self.replicas

    @property
    def M(self) -> int:
        return self.max_offset

    @property
    def E(self) -> int:
        return self.max_epoch

    @property
    def T(self) -> int:
        """With --transactions: how many transactions the producer runs (one per two offsets of
        log capacity, at least one)."""
        return max(1, self.max_offset // 2) if self.transactions else 0

    @property
    def kraft(self) -> bool:
        """The KRaft controller (``--controller kraft``): the controller and each broker's view
        of the partition state apart."""
        return self.controller == "kraft"

    @property
    def lag(self) -> int | None:
        """With --isr-shrink lag:N, N; None when a follower may leave the ISR at any time."""
        return parse_isr_shrink(self.isr_shrink)

    def knobs_on(self) -> dict[str, Any]:
        """The knobs of docs/kafka-model.md that are not at their off value."""
        return {k: getattr(self, k) for k, off in KNOBS_OFF.items() if getattr(self, k) != off}

    def as_dict(self) -> dict[str, Any]:
        """The configuration: the base model's eight parameters, then every knob that is on."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in KNOBS_OFF}
        out.update(self.knobs_on())
        return out

    def replace(self, **changes: Any) -> Params:
        return replace(self, **changes)

    def slug(self) -> str:
        """A short, file-name-safe name for the configuration."""
        s = (f"R{self.R}-M{self.M}-E{self.E}-{self.truncation}-isr-{self.isr_expansion}"
             f"-acks-{self.acks}-minisr{self.min_isr}")
        s += "-unclean" if self.unclean else ""
        if self.consumers:
            s += f"-consumers{self.consumers}"
        s += "-retries" if self.producer_retries else ""
        s += "-idempotent" if self.idempotence else ""
        s += "-logstart" if self.log_start_offset else ""
        s += "-txn" if self.transactions else ""
        s += "-read-uncommitted" if self.isolation == "read-uncommitted" else ""
        if self.lag is not None:
            s += f"-shrink-lag{self.lag}"
        s += "-liveness" if self.liveness else ""
        s += "-unflushed-loss" if self.unflushed_loss else ""
        s += "-kraft" if self.controller == "kraft" else ""
        s += "-fencing-kip-320" if self.fencing == "kip-320" else ""
        s += "-elr" if self.elr else ""
        s += f"-recovery-{self.unclean_recovery}" if self.unclean_recovery != "none" else ""
        return s

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Params:
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise SpecError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
        return cls(**d)
