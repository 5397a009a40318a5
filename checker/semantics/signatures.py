"""The kernel's calling convention, declared once.

Each entry point of a generated kernel module takes its arguments in the order of one of these
named tuples: the code generator writes the ``def`` line from the tuple's fields
(``templates.py``), and every caller builds the tuple by keyword and passes it unpacked
(``mod.expand_dedup(*DedupArgs(front=..., lo=..., ...))``), so an argument is added, removed
or reordered here and nowhere else. The tuple is built once per kernel call (a chunk of
thousands of rows), never per state.

Array conventions: rows are the layout's cell type, ``[n, stride]``; fingerprints ``uint64``;
parent positions ``int32``; action instances ``uint8`` (``uint16`` from 256 instances);
``err`` is one ``int64`` cell holding the last domain error code; ``dom_row`` / ``dom_inst``
hold, per domain error code, the first row (and action instance) that raised it, -1 if none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from hwcheck.spec.lang import Expr, Spec, reads_next
from hwcheck.spec.verdicts import Kind


@dataclass(frozen=True)
class Properties:
    """The spec's properties in the order the kernel numbers them (the index of each in
    ``tp_active``, ``hits`` and the like): state predicates are the invariants followed by the
    state reachability checks; transition predicates are the action properties followed by the
    transition reachability checks. A "hit" is a violation for an invariant or action property
    and a witness for a reachability check."""

    state: list[tuple[str, Expr, str]]  # (name, expr, kind) kind: "invariant" | "reachable"
    transition: list[tuple[str, Expr, str]]  # (name, expr, kind): "action" | "reachable"

    @classmethod
    def of(cls, spec: Spec) -> Properties:
        state: list[tuple[str, Expr, str]] = [(i.name, i.expr, Kind.INVARIANT)
                                              for i in spec.invariants]
        state += [(r.name, r.expr, Kind.REACHABLE) for r in spec.reachables
                  if not reads_next(r.expr)]
        trans: list[tuple[str, Expr, str]] = [(a.name, a.expr, Kind.ACTION)
                                              for a in spec.action_properties]
        trans += [(r.name, r.expr, Kind.REACHABLE) for r in spec.reachables if reads_next(r.expr)]
        return cls(state, trans)


class DedupArgs(NamedTuple):
    """``expand_dedup``: expand frontier rows lo..hi-1 against a visited table; returns
    (next row, successors written, table fill, transitions generated)."""

    front: Any  # rows [n, stride]
    lo: int
    hi: int
    table: Any  # uint64 [slots]: the visited fingerprints (``fingerprint.py``'s table)
    max_fill: int  # entries the table may hold before it must grow
    filled: int  # entries it holds
    out: Any  # rows [cap, stride]: the new successors
    par: Any  # int32 [cap]: the frontier row of each
    act: Any  # [cap]: the action instance of each
    fps: Any  # uint64 [cap]: the fingerprint of each
    tp_active: Any  # bool [transition predicates]: still checked
    tp_row: Any  # int64: first hitting row of each transition predicate (-1: none yet)
    tp_inst: Any  # int64: its action instance
    err: Any
    dom_row: Any
    dom_inst: Any
    cov: Any  # int64 [instances]: per action instance, the expanded states enabling it (+=)



class ExactArgs(NamedTuple):
    """``expand_exact`` (``--exact``): as ``expand_dedup`` against a table that also keeps every
    state; returns (next row, successors written, table fill, transitions generated, states
    stored)."""

    front: Any
    lo: int
    hi: int
    table: Any
    max_fill: int
    filled: int
    out: Any
    par: Any
    act: Any
    fps: Any
    tp_active: Any
    tp_row: Any
    tp_inst: Any
    err: Any
    dom_row: Any
    dom_inst: Any
    slots: Any  # int64 [slots]: the store row of each table entry
    store: Any  # rows [cap, stride]: every state kept
    nstored: int  # rows of ``store`` in use
    cov: Any  # int64 [instances]: per action instance, the expanded states enabling it (+=)



class SplitArgs(NamedTuple):
    """``expand_split`` (several workers, without the GIL): every successor its owner's table
    does not hold goes to that owner's buffers; returns (next row, transitions generated). The
    owners are rows of these arrays, never a tuple of them, so the compiled function is the same
    for every number of workers."""

    front: Any
    lo: int
    hi: int
    tables: Any  # int64 [owners, 2]: each owner's table as (address, slots): ``table_refs``
    o_rows: Any  # uint64 [owners, cap, words]: rows as 64-bit words
    o_par: Any  # int32 [owners, cap]
    o_act: Any  # [owners, cap]: action instances
    o_fps: Any  # uint64 [owners, cap]
    o_n: Any  # int64 [owners]: entries of each owner's buffers in use (moved on)
    tp_active: Any
    tp_row: Any
    tp_inst: Any
    err: Any
    dom_row: Any
    dom_inst: Any
    cov: Any  # int64 [instances]: per action instance, the expanded states enabling it (+=)



class CandidatesArgs(NamedTuple):
    """``expand_candidates`` (the state graph's, several workers, without the GIL): every
    transition of frontier rows lo..hi-1 and its successor as a candidate, without ids (the
    caller gives them, in row order, with ``idtable.resolve``); returns (next row, candidates
    written, steps refused for leaving the declared domains). It stops before a row whose
    successors might not fit."""

    front: Any
    lo: int
    hi: int
    cw: Any  # uint64 [cap, words]: the candidates' rows as 64-bit words
    cfp: Any  # uint64 [cap]: their fingerprints
    cpar: Any  # int64 [cap]: the frontier row of each
    cact: Any  # [cap]: the action instance of each
    eact: Any  # [cap]: each transition's action instance (transition e is candidate e)
    eflags: Any  # uint64 [cap] with ``want_tp``: the action properties each violates
    row_end: Any  # int64 [frontier rows]: row i's transitions end at row_end[i] (from 0)
    want_tp: bool
    err: Any
    tp_active: Any
    tp_row: Any
    tp_inst: Any
    dom_row: Any
    dom_inst: Any


class CheckArgs(NamedTuple):
    """``check_states``: the first row of ``rows[:n]`` hitting each active state predicate;
    returns 0 once every active predicate has a hit."""

    rows: Any
    n: int
    active: Any  # bool [state predicates]
    hits: Any  # int64: first hitting row of each (-1: none)
    err: Any
    dom_row: Any


class StepArgs(NamedTuple):
    """``step``: apply action instance ``inst`` to ``s`` into ``t``; False when disabled or when
    the step leaves the declared domains (then ``err`` holds the code)."""

    inst: int
    s: Any
    t: Any
    err: Any


def params(sig: type) -> str:
    """The parameter list of a generated ``def`` for the entry point ``sig``."""
    return ", ".join(sig._fields)  # type: ignore[attr-defined]
