"""The explored state graph as a networkx graph, written with networkx's writers.

Nodes are states (id = breadth-first order; attributes: depth, the state as JSON, the
invariants it violates, whether it is healthy, stuck, or at the model's bounds, whether it is on
the shortest counterexample path); edges are transitions (attributes: the action, the action
properties it violates, whether it is on that path). Formats: ``dot`` (Graphviz: violating
states red, stuck ones orange, healthy ones green, the path drawn thick), ``graphml`` and
``json`` (networkx's node-link form).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import networkx as nx
import numpy as np

from hwcheck.checker.graph.explore import StateGraph, explore
from hwcheck.checker.graph.reverse import can_reach_csr
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.lang import Spec
from hwcheck.spec.protocol import protocol_of, recovery_of

FORMATS = ("dot", "graphml", "json")
DEFAULT_MAX_STATES = 10_000

FILL = {"violates": "#f28482", "stuck": "#f4a261", "at_bound": "#d9d9d9", "healthy": "#90be6d",
        "plain": "#ffffff"}


class GraphTooLarge(ValueError):
    """The graph has more states than the export's cap."""


@dataclass
class Marked:
    """An explored graph with what the export marks on it."""

    graph: StateGraph
    violates: list[list[str]]  # per state: the invariants it violates
    stuck: np.ndarray | None  # bool [n]; None: the protocol has no healthy predicate
    path_nodes: set[int]
    path_edges: set[int]  # edge indices
    target: int | None  # the end of the shortest counterexample path
    target_why: str


def explore_marked(spec: Spec, kernel: Kernel | None = None,
                   max_states: int = DEFAULT_MAX_STATES) -> Marked:
    """Explore ``spec`` in full (GraphTooLarge past ``max_states``) and mark violations, stuck
    states and the shortest counterexample path."""
    kernel = kernel or Kernel(spec)
    rec = recovery_of(spec)
    preds = [] if rec is None else [("healthy", rec.healthy)] + (
        [("at_bound", rec.at_bound)] if rec.at_bound is not None else [])
    g = explore(kernel, preds, max_states=max_states, keep_rows=True,
                edge_properties=True)
    if not g.complete:
        raise GraphTooLarge(f"the state graph has more than {max_states:,} states (stopped at "
                            f"depth {g.depth}); give a larger --max-states to export it anyway, "
                            "or smaller parameters")
    invs = [n for n in g.gk.flag_names if n not in ("healthy", "at_bound")]
    violates = [[n for n in invs if not int(f) >> g.gk.flag_names.index(n) & 1] for f in g.flags]
    stuck = None
    if rec is not None:
        stuck = ~can_reach_csr(g.offsets, g.dst, g.flag("healthy"))
    # the shortest counterexample: the nearest violating state, or the nearest state reached by
    # a violating transition, or else the nearest stuck state (ids are in breadth-first order)
    candidates: list[tuple[int, int, int | None, str]] = []
    bad_states = [i for i, v in enumerate(violates) if v]
    if bad_states:
        candidates.append((g.depth_of(bad_states[0]), bad_states[0], None,
                           f"violates {', '.join(violates[bad_states[0]])}"))
    if g.eflags is not None and g.eflags.any():
        e = int(np.flatnonzero(g.eflags)[0])
        src = int(np.searchsorted(g.offsets, e, side="right") - 1)
        candidates.append((g.depth_of(src) + 1, src, e,
                           f"violates {', '.join(g.edge_violations(e))}"))
    if stuck is not None:
        bound = g.flag("at_bound") if "at_bound" in g.gk.flag_names else np.zeros(g.n, bool)
        found = np.flatnonzero(stuck & ~bound)
        if found.size and not candidates:
            candidates.append((g.depth_of(int(found[0])), int(found[0]), None, "stuck"))
    path_nodes: set[int] = set()
    path_edges: set[int] = set()
    target, why = None, ""
    if candidates:
        _, node, edge, why = min(candidates, key=lambda c: (c[0], c[1]))
        target = node if edge is None else int(g.dst[edge])
        path_nodes, path_edges = _path(g, node)
        if edge is not None:
            path_edges.add(edge)
            path_nodes.add(target)
    return Marked(g, violates, stuck, path_nodes, path_edges, target, why)


def _path(g: StateGraph, i: int) -> tuple[set[int], set[int]]:
    nodes, edges = {i}, set()
    while g.parent[i] >= 0:  # up to an initial state
        p, a = int(g.parent[i]), int(g.pact[i])
        lo, hi = int(g.offsets[p]), int(g.offsets[p + 1])
        for e in range(lo, hi):
            if int(g.dst[e]) == i and int(g.actions()[e]) == a:
                edges.add(e)
                break
        nodes.add(p)
        i = p
    return nodes, edges


def to_networkx(spec: Spec, m: Marked) -> nx.MultiDiGraph:
    """The marked graph as a networkx MultiDiGraph (two actions may join the same states)."""
    g = m.graph
    layout = g.kernel.layout
    depths = g.depths()
    G = nx.MultiDiGraph()
    from hwcheck.checker.traces.text import params_line

    views = protocol_of(spec).views
    G.graph.update({"spec": spec.name, "params": params_line(spec.params, views),
                    "states": g.n, "transitions": g.nedges,
                    "counterexample": m.target_why or "none"})
    healthy = g.flag("healthy") if "healthy" in g.gk.flag_names else None
    bound = g.flag("at_bound") if "at_bound" in g.gk.flag_names else None
    rows = g.rows
    if rows is None:
        raise ValueError("the graph was explored without its states (keep_rows)")
    for i in range(g.n):
        state = layout.to_dict(rows[i])
        kind = "plain"
        stuck = bool(m.stuck[i]) if m.stuck is not None else False
        if m.violates[i]:
            kind = "violates"
        elif stuck:
            kind = "at_bound" if bound is not None and bound[i] else "stuck"
        elif healthy is not None and healthy[i]:
            kind = "healthy"
        G.add_node(i, depth=int(depths[i]), state=json.dumps(state, separators=(",", ":")),
                   violates=",".join(m.violates[i]), stuck=stuck,
                   at_bound=bool(bound[i]) if bound is not None else False,
                   healthy=bool(healthy[i]) if healthy is not None else False,
                   initial=bool(depths[i] == 0), on_path=i in m.path_nodes, kind=kind)
    src, act = g.src(), g.actions()
    for e in range(g.nedges):
        G.add_edge(int(src[e]), int(g.dst[e]), action=g.label(int(act[e])),
                   violates=",".join(g.edge_violations(e)), on_path=e in m.path_edges)
    return G


def _dot_graph(G: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """A copy with Graphviz's drawing attributes (label, colours, the path drawn thick)."""
    D = nx.MultiDiGraph()
    title = f"{G.graph['spec']} {G.graph['params']}: {G.graph['states']} states, " \
            f"{G.graph['transitions']} transitions; counterexample: {G.graph['counterexample']}"
    D.graph["graph"] = {"label": title, "labelloc": "t", "rankdir": "TB"}
    D.graph["node"] = {"shape": "box", "style": "rounded,filled", "fontname": "Helvetica",
                       "fontsize": "10"}
    D.graph["edge"] = {"fontname": "Helvetica", "fontsize": "8"}
    for i, a in G.nodes(data=True):
        label = f"{i}" + (f"\\n{a['violates']}" if a["violates"] else "") + \
            ("\\nstuck" if a["kind"] == "stuck" else "")
        attrs = {"label": label, "fillcolor": FILL[a["kind"]], "tooltip": a["state"]}
        if a["initial"]:
            attrs["peripheries"] = "2"
        if a["on_path"]:
            attrs["penwidth"] = "3"
            attrs["color"] = "#d00000"
        D.add_node(i, **attrs)
    for u, v, a in G.edges(data=True):
        attrs = {"label": a["action"]}
        if a["violates"]:
            attrs["fontcolor"] = "#d00000"
            attrs["label"] += f" ({a['violates']})"
        if a["on_path"]:
            attrs.update(color="#d00000", penwidth="3")
        D.add_edge(u, v, **attrs)
    return D


def write(G: nx.MultiDiGraph, fmt: str, out: str | Path | TextIO) -> None:
    """Write ``G`` in ``fmt`` to ``out`` (a path or a text file object), with networkx's
    writers."""
    if fmt == "dot":
        from networkx.drawing.nx_pydot import to_pydot

        text = to_pydot(_dot_graph(G)).to_string()
        _emit(out, text)
    elif fmt == "graphml":
        import io

        buf = io.BytesIO()
        nx.write_graphml(G, buf)
        _emit(out, buf.getvalue().decode("utf-8"))
    elif fmt == "json":
        data = nx.node_link_data(G, edges="edges")
        _emit(out, json.dumps(data, indent=1) + "\n")
    else:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")


def _emit(out: str | Path | TextIO, text: str) -> None:
    if not isinstance(out, (str, Path)):
        out.write(text)
    else:
        from hwcheck.checker.traces.output import write_atomic

        write_atomic(out, text)
