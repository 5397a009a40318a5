"""The model's parameters (knobs) with their domains, as MODEL.md defines them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace

from hwcheck.spec.lang import SpecError

TRUNCATIONS = ("hw", "leader-epoch", "kip-279")
EXPANSIONS = ("hw", "epoch-start")
ACKS = ("0", "1", "all")


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

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        def need(ok: bool, msg: str) -> None:
            if not ok:
                raise SpecError(msg)

        for name, lo, hi in (("replicas", 1, 5), ("max_offset", 1, 8), ("max_epoch", 1, 8)):
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
        need(isinstance(self.unclean, bool), f"unclean must be a boolean, got {self.unclean!r}")

    @property
    def R(self) -> int:
        return self.replicas

    @property
    def M(self) -> int:
        return self.max_offset

    @property
    def E(self) -> int:
        return self.max_epoch

    def as_dict(self) -> dict:
        return asdict(self)

    def replace(self, **changes) -> "Params":
        return replace(self, **changes)

    def slug(self) -> str:
        """A short, file-name-safe name for the configuration."""
        s = (f"R{self.R}-M{self.M}-E{self.E}-{self.truncation}-isr-{self.isr_expansion}"
             f"-acks-{self.acks}-minisr{self.min_isr}")
        return s + ("-unclean" if self.unclean else "")

    @classmethod
    def from_dict(cls, d: dict) -> "Params":
        names = {f.name for f in fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise SpecError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
        return cls(**d)
