"""What a run checks and when it stops: shared by every engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwcheck.checker.engines.exploration import Exploration
from hwcheck.checker.semantics.kernel import Kernel


@dataclass
class Options:
    """What to check and when to stop; shared by every engine."""

    properties: tuple[str, ...] | None = None  # invariants/action properties; None = all
    reachability: bool = True  # also look for the spec's reachability targets
    stop_at_violation: bool = True  # False: --continue, explore everything
    max_states: int | None = None
    report: object = None  # progress callback (a line of text)

    def should_stop(self, ex: Exploration) -> bool:
        """Whether to stop before the next level; sets ``ex.stop_reason`` when so."""
        if self.stop_at_violation and any(h.kind != "reachable" for h in ex.hits.values()):
            ex.stop_reason = "stopped at the first violation"
            return True
        if self.max_states is not None and ex.distinct >= self.max_states:
            ex.stop_reason = f"reached --max-states {self.max_states:,}"
            return True
        return False


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
