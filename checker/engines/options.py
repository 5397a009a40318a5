"""What a run checks and when it stops: shared by every engine."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hwcheck.checker.search.stop import StopRule
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
    checkpoint: Path | None = None  # a folder to write checkpoints to (local engine)
    checkpoint_every: float = 60.0  # seconds between checkpoints (0: every level)
    resume: Path | None = None  # a checkpoint folder to go on from (and to go on writing to)
    exact: bool = False  # keep every state, not only its fingerprint (local engine)
    workdir: str | os.PathLike[str] | None = None  # where the local engine keeps levels and
    # large frontiers
    # (None: a temporary folder); either way its files are removed at the end of the run
    symmetry: bool = False  # one state per orbit of the protocol's declared symmetry
    report: object = None  # progress callback (a line of text)

    def stop_rule(self) -> StopRule:
        """When the search stops (``checker.search.stop``)."""
        return StopRule(self.stop_at_violation, self.max_states, self.max_seconds,
                        self.max_memory)


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
