"""What a run checks and when it stops (``Options``, shared by every engine), and the settings
only the local engine reads (``LocalSettings``)."""

from __future__ import annotations

from collections.abc import Callable
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
    symmetry: bool = False  # one state per orbit of the protocol's declared symmetry
    report: Callable[[str], None] | None = None  # progress callback (a line of text)

    def stop_rule(self) -> StopRule:
        """When the search stops (``checker.search.stop``)."""
        return StopRule(self.stop_at_violation, self.max_states, self.max_seconds,
                        self.max_memory)


@dataclass(frozen=True)
class LocalSettings:
    """What the local engine reads beside ``Options``: its visited set, its work folder, its
    checkpoints (the state graph reads the work folder and the checkpoints too)."""

    exact: bool = False  # keep every state, not only its fingerprint (one worker)
    workdir: Path | None = None  # where levels and large frontiers go (the state graph's
    # large levels and arrays too; None: a temporary folder); its files go at the run's end
    checkpoint: Path | None = None  # a folder to write checkpoints to
    checkpoint_every: float = 60.0  # seconds between checkpoints (0: every level)
    resume: Path | None = None  # a checkpoint folder to go on from (and to go on writing to)


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
