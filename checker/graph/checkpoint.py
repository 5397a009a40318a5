"""Checkpoints of the state graph (``check --recoverable`` or liveness with ``--checkpoint``),
over the one checkpoint store of every level source (``engines/checkpoint.py``).

At a level boundary the graph is: every state numbered so far (ids are breadth-first, so the
states of a level are one range of ids), the transitions of every state expanded (all the
levels before the frontier), the frontier's rows, and the search's counters. A level's file,
written once when the level is expanded, holds its states' fingerprints, first parents,
actions and flags, and their transitions (where each state's end in the transitions, their
destinations, and, when the graph keeps them, their actions and action-property flags): what
the analyses after the exploration read, so that a resumed run's graph is the whole graph. The
state of a checkpoint holds the frontier (its rows, and its states' fingerprints, parents,
actions and flags), the per-instance transition counts (coverage) and, once the check's own
part of the exploration is over (``check_on_graph``: the check, then on to the whole graph),
the check's report as it ended, so that a run resumed after it reports the same.

Resuming lays the ids back into a fresh fingerprint -> id table (``idtable.table_fill``): the
same ids, hence the same graph, first parents, traces and verdicts as a run never stopped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from hwcheck.checker.engines import checkpoint
from hwcheck.checker.search.exploration import Exploration, Hit

if TYPE_CHECKING:
    from hwcheck.checker.graph.explore import GraphSource

SEARCH = "state graph"
COLUMNS = ("fps", "parents", "actions", "flags")  # a state's, in the order of ``_columns``


def identity(source: GraphSource) -> dict[str, Any]:
    """What a checkpoint of ``source`` must share with the run that resumes it: the kernel's
    identity, and the graph's own (its state predicates, what it keeps of each transition, the
    properties the check asked for)."""
    return {**checkpoint.identity(source.kernel), "search": SEARCH,
            "graph": {"flags": list(source.gk.flag_names),
                      "edge_actions": source.edge_actions,
                      "edge_properties": source.edge_properties,
                      "properties": [list(c) for c in source.asked]}}


def _columns(source: GraphSource, lo: int, hi: int) -> dict[str, np.ndarray]:
    """States lo..hi-1's fingerprints, first parents, actions and flags."""
    return {"fps": source.s_fps.a[lo:hi], "parents": source.s_par.a[lo:hi],
            "actions": source.s_act.a[lo:hi], "flags": source.s_flags.a[lo:hi]}


def _level(source: GraphSource, d: int) -> dict[str, np.ndarray]:
    """Level ``d`` (expanded): its states and their transitions."""
    lo, hi = source.levels[d], source.levels[d + 1]
    off = source.s_off.a
    e0, e1 = int(off[lo]), int(off[hi])
    out = {**_columns(source, lo, hi), "offsets": off[lo + 1:hi + 1],
           "dst": source.edst[e0:e1]}
    if source.edge_actions:
        out["eact"] = source.eact[e0:e1]
    if source.edge_properties:
        out["eflags"] = source.eflags[e0:e1]
    return out


def _exploration_json(ex: Exploration) -> dict[str, Any]:
    return {"distinct": ex.distinct, "generated": ex.generated, "depth": ex.depth,
            "seconds": ex.seconds, "complete": ex.complete, "stop_reason": ex.stop_reason,
            "partial_level": ex.partial_level, "checked": ex.checked,
            "hits": checkpoint.hits_json(ex.hits)}


def _exploration_of(source: GraphSource, d: dict[str, Any]) -> Exploration:
    return Exploration(source.name, d["distinct"], d["generated"], d["depth"], d["seconds"],
                       d["complete"], d["stop_reason"], checkpoint.hits_of(d["hits"]),
                       [tuple(c) for c in d["checked"]], partial_level=d["partial_level"],
                       symmetry=source.kernel.symmetric)


def save(source: GraphSource, ckpt: checkpoint.Checkpointer, ex: Exploration) -> None:
    """A checkpoint of ``source`` at a level boundary (its frontier not expanded yet); the hits
    found so far with their paths (walked back now: ids never change after a boundary)."""
    assert source.cut is None and source.props is not None
    levels = source.levels
    depth = len(levels) - 2  # the frontier's
    assert source.off_to == levels[depth]
    hits = {}
    for name, hit in ex.hits.items():
        if hit.path is None and name in source.targets:
            hit = Hit(hit.name, hit.kind, hit.length,
                                 source.paths({name: source.targets[name]})[name])
        hits[name] = hit
    props = source.props
    arrays = {"front": source.front, **_columns(source, levels[depth], source.n),
              "enabled": source.enabled}
    fields = {"ids": list(levels), "transitions": source.ne, "refused": source.refused,
              "flag_errors": source.flag_errors, "distinct": ex.distinct,
              "generated": ex.generated, "depth": ex.depth, "seconds": ex.seconds,
              "checked": ex.checked, "state_active": props.state_active.tolist(),
              "trans_active": props.trans_active.tolist(),
              "hits": checkpoint.hits_json(hits),
              "check": _exploration_json(source.check) if source.check is not None else None}
    ckpt.save(depth, lambda d: _level(source, d), arrays, fields, ex.depth)


def load(source: GraphSource, ex: Exploration) -> tuple[checkpoint.Checkpointer, float]:
    """Restore ``source`` and ``ex`` from the checkpoint in ``source.resume``; the checkpointer
    that goes on writing there, and the seconds the earlier runs took."""
    ident = identity(source)
    assert source.resume is not None, "a graph resumed without a checkpoint folder"
    stored = checkpoint.read(source.resume, ident)
    loaded: tuple[checkpoint.Checkpointer, float] = stored.reader(
        lambda st: _restore(source, ex, st, ident))
    return loaded


def _restore(source: GraphSource, ex: Exploration, st: checkpoint.Stored,
             ident: dict[str, Any]) -> tuple[checkpoint.Checkpointer, float]:
    meta, k = st.meta, source.kernel
    ids = [int(i) for i in meta["ids"]]
    depth = meta["levels"]
    n, ne = ids[-1], int(meta["transitions"])
    if len(ids) != depth + 2 or any(b < a for a, b in zip(ids, ids[1:])) or ids[0] != 0:
        raise ValueError("meta.json's level ids are not those of its levels")
    front, enabled = st.array("front"), st.array("enabled")
    if front.dtype != k.dtype or front.shape != (n - ids[-2], k.stride):
        raise ValueError("front.npy is not the frontier meta.json counts")
    if enabled.shape != source.enabled.shape:
        raise ValueError("enabled.npy is not a count for each action instance")
    dtypes = {"fps": np.uint64, "parents": np.int32, "actions": k.act_dtype,
              "flags": source.gk.flag_dtype, "offsets": np.int64, "dst": np.int32,
              "eact": k.act_dtype, "eflags": np.uint64}
    edges = ["offsets", "dst"] + ["eact"] * source.edge_actions \
        + ["eflags"] * source.edge_properties

    def levels() -> Iterator[dict[str, np.ndarray]]:
        """Each level's arrays, read and checked one at a time: states, and transitions but
        for the frontier's."""
        end = 0  # the transitions so far
        for d in range(depth + 1):
            level = st.level(d) if d < depth else {c: st.array(c) for c in COLUMNS}
            size = ids[d + 1] - ids[d]
            for key in COLUMNS + tuple(edges if d < depth else ()):
                a = level[key]
                if a.dtype != dtypes[key] or a.ndim != 1:
                    raise ValueError(f"level {d}'s {key} are not of their kind")
            if any(level[c].size != size for c in COLUMNS):
                raise ValueError(f"level {d} does not hold the states meta.json counts")
            if d < depth:
                off = level["offsets"]
                last = int(off[-1]) if size else end
                if off.size != size or np.any(np.diff(off) < 0) or (size and off[0] < end) \
                        or any(level[e].size != last - end for e in edges[1:]):
                    raise ValueError(f"level {d}'s transitions are not those its states end at")
                dst = level["dst"]
                if dst.size and (dst.min() < 0 or dst.max() >= n):
                    raise ValueError(f"level {d}'s transitions go to states that are not there")
                end = last
            yield level
        if end != ne:
            raise ValueError("the levels' transitions are not those meta.json counts")

    source.restore(ids, ne, levels(), front, enabled, int(meta["refused"]),
                   int(meta["flag_errors"]))
    ex.distinct, ex.generated, ex.depth = meta["distinct"], meta["generated"], meta["depth"]
    ex.hits = checkpoint.hits_of(meta["hits"])
    ex.checked[:] = [tuple(c) for c in meta["checked"]]
    props = source.props
    assert props is not None
    props.state_active[:] = np.array(meta["state_active"], np.bool_)
    props.trans_active[:] = np.array(meta["trans_active"], np.bool_)
    source.check = _exploration_of(source, meta["check"]) if meta["check"] is not None \
        else None
    return st.checkpointer(ident), float(meta["seconds"])
