"""A level's first hits as the driver's findings, one implementation for every level source.

The kernels report, per property, the first row of a block that hits it (``check_states``:
state properties and the domain errors of their evaluation; the expansions: transition
properties, with the action instance, and the steps that leave a variable's domain); a source
turns those rows into ``Found`` entries whose target is its own (a path, a fingerprint, a
state id: ``target``), in the property's number order, and stops checking each property it
reports (a domain error stays checked: the driver keeps its first hit). Where a level is
checked or expanded in parts (the state graph's runs and slices), each part's first hits are
joined into the earlier parts' (``earliest``): the first row of the level stays first."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from hwcheck.checker.search.driver import DOMAIN, Found
from hwcheck.checker.semantics.kernel import Kernel


def hit(first: np.ndarray) -> Iterable[int]:
    """The numbers of the properties (or domain errors) ``first`` has a hit for (>= 0)."""
    return (int(j) for j in np.flatnonzero(first >= 0))


def earliest(first: np.ndarray, later: np.ndarray, at: int = 0,
             first_inst: np.ndarray | None = None, later_inst: np.ndarray | None = None) -> None:
    """Join the first hits of later rows (``later``, their rows counted from ``at``; with
    ``later_inst``, the action instance of each) into those of the rows before them
    (``first``, ``first_inst``): where the earlier rows have none, the later rows' first."""
    new = (first < 0) & (later >= 0)
    first[new] = later[new] + at
    if first_inst is not None and later_inst is not None:
        first_inst[new] = later_inst[new]


def property_hits(props: list[tuple[str, Any, str]], active: np.ndarray, numbers: Iterable[int],
                  depth: int, target: Callable[[int], Any]) -> list[Found]:
    """The hits of the properties ``numbers`` (of ``props``: a ``PropertySet``'s ``state`` or
    ``transition``) that are still ``active``, at ``depth``, each with ``target(j)``; each is
    then no longer active."""
    out = []
    for j in numbers:
        if not active[j]:
            continue
        name, _, kind = props[j]
        out.append(Found(name, kind, depth, target(j)))
        active[j] = False
    return out


def domain_hits(kernel: Kernel, codes: Iterable[int], depth: int,
                target: Callable[[int], Any]) -> list[Found]:
    """The hits of the domain errors ``codes`` at ``depth``, each with ``target(code)``."""
    return [Found(kernel.domain_errors.name(c), DOMAIN, depth, target(c)) for c in codes]


def last_step(kernel: Kernel, inst: int, row: np.ndarray) -> tuple[int, int]:
    """The last step of a transition property's path: the action instance taken from ``row``
    and the fingerprint of the state it reaches (as the engines record a concrete state)."""
    return inst, kernel.state_fingerprint(kernel.taken(inst, row))
