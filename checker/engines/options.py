"""What a run checks and when it stops: shared by every engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwcheck.checker.engines.exploration import Exploration, current_rss_bytes
from hwcheck.checker.semantics.kernel import Kernel


@dataclass
class Options:
    """What to check and when to stop; shared by every engine."""

    properties: tuple[str, ...] | None = None  # invariants/action properties; None = all
    reachability: bool = True  # also look for the spec's reachability targets
    stop_at_violation: bool = True  # False: --continue, explore everything
    max_states: int | None = None
    max_seconds: float | None = None  # wall time of the exploration
    max_memory: int | None = None  # resident bytes of this process
    checkpoint: object = None  # a folder to write checkpoints to (local engine)
    checkpoint_every: float = 60.0  # seconds between checkpoints (0: every level)
    resume: object = None  # a checkpoint folder to go on from (and to go on writing to)
    exact: bool = False  # keep every state, not only its fingerprint (local engine)
    workdir: object = None  # where the local engine keeps levels and large frontiers
    # (None: a temporary folder); either way its files are removed at the end of the run
    symmetry: bool = False  # one state per orbit of the protocol's declared symmetry
    report: object = None  # progress callback (a line of text)

    def should_stop(self, ex: Exploration) -> bool:
        """Whether to stop before the next level; sets ``ex.stop_reason`` when so."""
        if self.stop_at_violation and any(h.kind != "reachable" for h in ex.hits.values()):
            ex.stop_reason = "stopped at the first violation"
            return True
        reason = self.limit_reached(ex.distinct, ex.seconds)
        if reason:
            ex.stop_reason = reason
            return True
        return False

    def limit_reached(self, distinct: int, seconds: float) -> str:
        """The limit a run has reached with ``distinct`` states after ``seconds`` ('' if
        none). Cheap enough to ask between kernel calls."""
        if self.max_states is not None and distinct >= self.max_states:
            return f"reached --max-states {self.max_states:,}"
        if self.max_seconds is not None and seconds >= self.max_seconds:
            return f"reached --max-seconds {self.max_seconds:g}"
        if self.max_memory is not None:
            rss = current_rss_bytes()
            if rss >= self.max_memory:
                return (f"reached --max-memory {self.max_memory / 2**20:,.0f} MiB "
                        f"(resident {rss / 2**20:,.0f} MiB)")
        return ""


class PropertySet:
    """The kernel's numbered properties and which of them a run checks."""

    def __init__(self, kernel: Kernel, opts: Options):
        props = kernel.props
        want = None if opts.properties is None else set(opts.properties)

        def on(name: str, kind: str) -> bool:
            if kind == "reachable":
                return opts.reachability
            return want is None or name in want

        self.state = props.state
        self.transition = props.transition
        self.state_active = np.array([on(n, k) for n, _, k in props.state] or [False], np.bool_)
        self.trans_active = np.array([on(n, k) for n, _, k in props.transition] or [False],
                                     np.bool_)
        self.checked = [(n, k) for n, _, k in props.state + props.transition if on(n, k)]
