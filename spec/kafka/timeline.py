"""A Kafka trace as a timeline: brokers as lanes, the steps across, each action drawn where it
happens (an inline SVG for the trace page; no script, nothing fetched).

Time runs left to right: state j of the trace is the point ``x(j)``, and step i (the action
from state i-1 to state i) happens between ``x(i-1)`` and ``x(i)``. Each replica is a lane: a
solid line while the broker is up, dashed while it is down, a thick band in the epoch's colour
while it leads. Actions:

- Produce: an arrow from above into the leader's lane, labelled with the record's epoch;
- FetchRequest(f): an arrow from f to the leader, labelled with the offset it fetches from
  (``+isr`` when it rejoins the ISR); FetchResponse(f): an arrow from the leader that served
  the request to f, labelled with the record it carries (``oor``: offset out of range) and the
  HW;
- Crash(b): a red cross on b's lane; Restart(b): a green triangle (``->n`` when it truncates);
- Elect(c): a star on c's lane with the new epoch, and a rule across every lane;
- BecomeFollower(f): scissors when f truncates (``->n``: its new LEO), a small ring when not;
- ShrinkIsr(f): a dashed arrow from the leader to f, ``-isr``;
- any other action (the knobs of docs/kafka-model.md): a labelled dot on the leader's lane.

With the KRaft controller (``--controller kraft``) the controller has a lane of its own above
the brokers; a broker's band shows when *it believes* it leads (a deposed leader that has not
learned it yet keeps its band: two bands at once), in the colour of the epoch it knows; Elect
also marks the controller's lane; FenceBroker(b) / UnfenceBroker(b): an arrow from the
controller to b; LearnMetadata(b): a dotted arrow from the controller to b with the epoch it
learns; ShrinkIsr(L, f): an arrow from L to the controller (AlterPartition), ``-f``. With
``--unflushed-loss``: PowerLoss(b) an orange cross (``->n``: what its log keeps), Flush(b) a
small square.

Every step is a ``<g class="step" data-step="i" data-action="Name">`` holding a ``<title>``
with its label, so a reader hovering over it (and a test reading the page) finds it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from html import escape
from typing import Any, Protocol

from hwcheck.spec.kafka.derived import State, leo_of, out_of_range


class Trace(Protocol):
    """What the drawings read of a trace: the checker's ``Trace`` (spec/ does not import the
    checker; the protocol's views get it as it is)."""

    states: list[State]
    actions: list[str] | None  # each step's label
    params: dict[str, Any]
    meta: dict[str, Any]
    kind: str  # invariant | action | reachable | liveness

    @property
    def is_cti(self) -> bool: ...

    @property
    def start_label(self) -> str: ...

    property: str | None  # the property it is about


# an epoch's colour on the page
Colour = Callable[[int], str]

LEFT, RIGHT, TOP, LANE, STEP = 44, 24, 34, 36, 70
LABEL_SPACE = 92  # below the lanes: each step's action, rotated

CSS = """
.timeline { margin: 4px 0 16px 0; overflow-x: auto; }
.timeline svg { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
.timeline .lane { stroke: #888; stroke-width: 2; }
.timeline .lane.down { stroke: #bbb; stroke-dasharray: 4 4; }
.timeline .lead { stroke-width: 8; stroke-linecap: butt; opacity: 0.85; }
.timeline .tick { font-size: 11px; fill: #555; text-anchor: middle; }
.timeline .who { font-size: 12px; font-weight: bold; fill: #333; text-anchor: end;
                 dominant-baseline: middle; }
.timeline .act { font-size: 10px; fill: #333; }
.timeline .lbl { font-size: 9px; fill: #222; text-anchor: middle; }
.timeline .msg { stroke: #264653; stroke-width: 1.5; fill: none; }
.timeline .msg.resp { stroke: #2a9d8f; }
.timeline .msg.shrink { stroke: #9d0208; stroke-dasharray: 3 3; }
.timeline .head { fill: #264653; }
.timeline .head.resp { fill: #2a9d8f; }
.timeline .head.shrink { fill: #9d0208; }
.timeline .crash { stroke: #d00; stroke-width: 3; }
.timeline .restart { fill: #2a9d8f; }
.timeline .elect { fill: #ffb703; stroke: #333; stroke-width: 1; }
.timeline .rule { stroke: #ffb703; stroke-width: 1; stroke-dasharray: 2 3; }
.timeline .dot { fill: #6c757d; }
.timeline .node { stroke: #444; stroke-width: 1; fill: #fff; }
.timeline .node.down { stroke: #bbb; fill: #eee; }
.timeline g.step:hover .act { font-weight: bold; }
"""

# the KRaft controller's lane and messages, and power loss: on their pages only
KNOB_CSS = """.timeline .lane.ctl { stroke: #7048e8; stroke-width: 2; }
.timeline .msg.ctl { stroke: #7048e8; }
.timeline .head.ctl { fill: #7048e8; }
.timeline .msg.meta { stroke: #7048e8; stroke-dasharray: 2 2; }
.timeline .head.meta { fill: #7048e8; }
.timeline .power { stroke: #f77f00; stroke-width: 3; }
.timeline .flush { fill: #495057; }
"""

_ARGS = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<args>[^)]*)\))?$")


def _parse(label: str) -> tuple[str, list[int]]:
    m = _ARGS.match(label or "")
    if not m:
        return label or "?", []
    args = []
    for a in (m["args"] or "").split(","):
        a = a.strip()
        if a.lstrip("-").isdigit():
            args.append(int(a))
    return m["name"], args


def css(trace: Trace) -> str:
    """The timeline's style sheet for ``trace``'s page."""
    first = trace.states[0] if trace.states else {}
    return CSS + (KNOB_CSS if "bLeader" in first or "flushed" in first else "")


def timeline(trace: Trace, colour: Colour) -> str:
    """The trace's timeline as an HTML fragment; ``colour(epoch)`` is the page's colour of an
    epoch (the same as its records')."""
    states, actions = trace.states, list(trace.actions or [])
    if not states or "hw" not in states[0]:
        return ""
    R = len(states[0]["hw"])
    n = len(actions)
    oor = out_of_range(trace.params.get("max_epoch", 0))  # respRec of an out-of-range response
    kraft = "bLeader" in states[0]  # the KRaft controller: a lane of its own, above
    top = TOP + (LANE if kraft else 0)
    width = LEFT + max(n, 1) * STEP + RIGHT
    height = top + R * LANE + LABEL_SPACE

    def x(j: float) -> float:
        return LEFT + j * STEP

    def y(r: int) -> float:  # r = -1: the controller's lane
        return top + r * LANE + LANE / 2

    out = [f'<div class="timeline"><svg width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="timeline of the trace: brokers as lanes, steps across">']
    loop = trace.meta.get("loop") if trace.kind == "liveness" else None
    if isinstance(loop, int) and 0 <= loop < n:  # a lasso: its cycle shaded, an arrow back
        out.append(f'<rect class="cycle" x="{x(loop)}" y="{TOP - 12}" '
                   f'width="{x(n) - x(loop)}" height="{R * LANE + 12}"/>')
        out.append(f'<path class="cycle-back" d="M {x(n)} {TOP - 6} C {x(n)} {TOP - 30}, '
                   f'{x(loop)} {TOP - 30}, {x(loop)} {TOP - 6}"/>')
        out.append(f'<text class="cycle" x="{(x(loop) + x(n)) / 2}" y="{TOP - 26}">'
                   "repeats forever</text>")
    # step numbers (state j at x(j))
    for j in range(n + 1):
        out.append(f'<text class="tick" x="{x(j)}" y="{TOP - 18}">{j}</text>')
    if kraft:
        out.append(f'<text class="who" x="{LEFT - 10}" y="{y(-1)}">ctl</text>')
        out.append(f'<line class="lane ctl" x1="{x(0)}" y1="{y(-1)}" x2="{x(max(n, 1))}" '
                   f'y2="{y(-1)}"><title>the KRaft controller</title></line>')
    # lanes: the state during (j-1, j] is state j-1 before step j
    for r in range(R):
        out.append(f'<text class="who" x="{LEFT - 10}" y="{y(r)}">r{r}</text>')
        for j in range(max(n, 1)):
            st = states[min(j, len(states) - 1)]
            up = r in st["alive"]
            cls = "lane" if up else "lane down"
            out.append(f'<line class="{cls}" x1="{x(j)}" y1="{y(r)}" x2="{x(j + 1)}" '
                       f'y2="{y(r)}"/>')
            leads, e = ((st["bLeader"][r] == r and up, st["bEpoch"][r]) if kraft
                        else (st["leader"] == r, st["epoch"]))
            if leads:
                out.append(f'<line class="lead" x1="{x(j)}" y1="{y(r)}" x2="{x(j + 1)}" '
                           f'y2="{y(r)}" stroke="{colour(e)}">'
                           f'<title>r{r} leads in epoch {e}</title></line>')
        for j, st in enumerate(states):
            down = "" if r in st["alive"] else " down"
            out.append(f'<circle class="node{down}" cx="{x(j)}" cy="{y(r)}" r="3"/>')
    # the steps
    sent_by: dict[int, int] = {}  # follower -> the leader that served its last fetch request
    for i, label in enumerate(actions, start=1):
        before, after = states[i - 1], states[i] if i < len(states) else states[i - 1]
        name, args = _parse(label)
        mid = (x(i - 1) + x(i)) / 2
        L = before["leader"]
        parts = [f'<g class="step" data-step="{i}" data-action="{escape(name)}">',
                 f"<title>step {i}: {escape(label)}</title>"]
        parts += _draw(name, args, before, after, L, mid, x, y, R, colour, sent_by, oor)
        lx, ly = mid, top + R * LANE + 6
        parts.append(f'<text class="act" x="{lx}" y="{ly}" transform="rotate(35 {lx} {ly})">'
                     f"{escape(label)}</text>")
        parts.append("</g>")
        out.append("".join(parts))
    out.append("</svg></div>")
    return "\n".join(out)


def _arrow(x1: float, y1: float, x2: float, y2: float, cls: str, text: str, tx: float,
           ty: float) -> list[str]:
    """A line from (x1, y1) to (x2, y2) with its head drawn as a triangle (no SVG marker: the
    page references nothing, not even within itself)."""
    dx, dy = x2 - x1, y2 - y1
    norm = math.hypot(dx, dy) or 1.0
    ux, uy = dx / norm, dy / norm
    bx, by = x2 - 8 * ux, y2 - 8 * uy  # the base of the head
    head = (f"{x2:.1f},{y2:.1f} {bx - 4 * uy:.1f},{by + 4 * ux:.1f} "
            f"{bx + 4 * uy:.1f},{by - 4 * ux:.1f}")
    line_cls, head_cls = f"msg {cls}".strip(), f"head {cls}".strip()
    out = [f'<line class="{line_cls}" x1="{x1}" y1="{y1}" x2="{bx:.1f}" y2="{by:.1f}"/>',
           f'<polygon class="{head_cls}" points="{head}"/>']
    if text:
        out.append(f'<text class="lbl" x="{tx}" y="{ty}">{escape(text)}</text>')
    return out


def _draw(name: str, args: list[int], before: State, after: State, L: int, mid: float,
          x: Callable[[float], float], y: Callable[[int], float], R: int, colour: Colour,
          sent_by: dict[int, int], oor: int) -> list[str]:
    a = args[0] if args else None
    half = 22
    if "bLeader" in before:
        drawn = _draw_kraft(name, args, before, after, mid, x, y, R, colour, sent_by)
        if drawn is not None:
            return drawn
    if name == "PowerLoss" and a is not None:
        c, d = mid, y(a)
        text = f"power loss ->{leo_of(after, a)}" if leo_of(after, a) < leo_of(before, a) \
            else "power loss"
        return [f'<line class="power" x1="{c - 7}" y1="{d - 7}" x2="{c + 7}" y2="{d + 7}"/>',
                f'<line class="power" x1="{c - 7}" y1="{d + 7}" x2="{c + 7}" y2="{d - 7}"/>',
                f'<text class="lbl" x="{c}" y="{d - 11}">{escape(text)}</text>']
    if name == "Flush" and a is not None:
        return [f'<rect class="flush" x="{mid - 4}" y="{y(a) - 4}" width="8" height="8"/>',
                f'<text class="lbl" x="{mid}" y="{y(a) - 9}">flush @{after["flushed"][a]}</text>']
    if name == "Produce" and L >= 0:
        e = before["epoch"]
        return _arrow(mid, y(0) - LANE / 2 - 8, mid, y(L) - 6, "", "", 0, 0) + [
            f'<circle cx="{mid}" cy="{y(L)}" r="7" fill="{colour(e)}" stroke="#333"/>',
            f'<text class="lbl" x="{mid}" y="{y(L) + 3}">{e}</text>',
            f'<text class="lbl" x="{mid + 14}" y="{y(0) - LANE / 2 - 2}">produce</text>']
    if name == "FetchRequest" and a is not None and L >= 0:
        sent_by[a] = L
        joined = a not in before["isr"] and a in after["isr"]
        text = f"@{leo_of(before, a)}" + (" +isr" if joined else "")
        return _arrow(mid - half, y(a), mid + half, y(L), "", text,
                      mid, (y(a) + y(L)) / 2 - 4 if a != L else y(a) - 8)
    if name == "FetchResponse" and a is not None:
        src = sent_by.pop(a, L if L >= 0 else None)
        rec = before["respRec"][a]
        leo_b, leo_a = leo_of(before, a), leo_of(after, a)
        if rec >= oor:  # out of range (or, with a log start offset, restart at the start)
            text = f"oor ->{leo_a}" if leo_a != leo_b else "oor"
        elif rec:
            text = f"rec e{rec} hw {after['hw'][a]}"
        else:
            text = f"hw {after['hw'][a]}"
        if src is None or src == a:
            return [f'<circle class="dot" cx="{mid}" cy="{y(a)}" r="4"/>',
                    f'<text class="lbl" x="{mid}" y="{y(a) - 8}">{escape(text)}</text>']
        return _arrow(mid - half, y(src), mid + half, y(a), "resp", text,
                      mid, (y(src) + y(a)) / 2 + 11)
    if name == "Crash" and a is not None:
        c, d = mid, y(a)
        return [f'<line class="crash" x1="{c - 7}" y1="{d - 7}" x2="{c + 7}" y2="{d + 7}"/>',
                f'<line class="crash" x1="{c - 7}" y1="{d + 7}" x2="{c + 7}" y2="{d - 7}"/>',
                f'<text class="lbl" x="{c}" y="{d - 11}">crash</text>']
    if name == "Restart" and a is not None:
        c, d = mid, y(a)
        cut = leo_of(after, a) < leo_of(before, a)
        text = f"restart ->{leo_of(after, a)}" if cut else "restart"
        return [f'<path class="restart" d="M {c - 7} {d + 6} L {c + 7} {d + 6} L {c} {d - 7} z"/>',
                f'<text class="lbl" x="{c}" y="{d - 11}">{escape(text)}</text>']
    if name == "Elect" and a is not None:
        c, d = mid, y(a)
        top, bottom = y(0) - LANE / 2 + 4, y(R - 1) + LANE / 2 - 4
        star = " ".join(f"{c + px:.1f},{d + py:.1f}" for px, py in _STAR)
        return [f'<line class="rule" x1="{c}" y1="{top}" x2="{c}" y2="{bottom}"/>',
                f'<polygon class="elect" points="{star}" fill="{colour(after["epoch"])}"/>',
                f'<text class="lbl" x="{c}" y="{d - 12}">elect e{after["epoch"]}</text>']
    if name == "BecomeFollower" and a is not None:
        c, d = mid, y(a)
        lb, la = leo_of(before, a), leo_of(after, a)
        if la < lb:
            return [f'<text class="lbl" x="{c}" y="{d + 4}" style="font-size:14px">&#9986;</text>',
                    f'<text class="lbl" x="{c}" y="{d - 10}">truncate ->{la}</text>']
        return [f'<circle class="node" cx="{c}" cy="{d}" r="5"/>',
                f'<text class="lbl" x="{c}" y="{d - 10}">follow</text>']
    if name == "ShrinkIsr" and a is not None and L >= 0:
        return _arrow(mid - half, y(L), mid + half, y(a), "shrink", "-isr",
                      mid, (y(L) + y(a)) / 2 - 4 if a != L else y(a) - 8)
    # any other action: a labelled dot on the leader's lane (or above the lanes)
    d = y(L) if L >= 0 else y(0) - LANE / 2
    return [f'<circle class="dot" cx="{mid}" cy="{d}" r="4"/>',
            f'<text class="lbl" x="{mid}" y="{d - 8}">{escape(name)}</text>']


def _draw_kraft(name: str, args: list[int], before: State, after: State, mid: float,
                x: Callable[[float], float], y: Callable[[int], float], R: int, colour: Colour,
                sent_by: dict[int, int]) -> list[str] | None:
    """The KRaft controller's steps and the steps whose broker is its own view's; None for the
    others (drawn as without the controller)."""
    a = args[0] if args else None
    half = 22
    ctl = y(-1)
    if name == "Produce" and a is not None:
        e = before["bEpoch"][a]
        return _arrow(mid, ctl + 8, mid, y(a) - 6, "", "", 0, 0) + [
            f'<circle cx="{mid}" cy="{y(a)}" r="7" fill="{colour(e)}" stroke="#333"/>',
            f'<text class="lbl" x="{mid}" y="{y(a) + 3}">{e}</text>']
    if name == "FetchRequest" and a is not None:
        L = before["bLeader"][a]
        sent_by[a] = L
        joined = a not in before["isr"] and a in after["isr"]
        text = f"@{leo_of(before, a)} e{before['bEpoch'][a]}" + (" +isr" if joined else "")
        return _arrow(mid - half, y(a), mid + half, y(L), "", text, mid, (y(a) + y(L)) / 2 - 4)
    if name == "ShrinkIsr" and len(args) == 2:
        L, f = args
        return _arrow(mid - half, y(L), mid + half, ctl, "ctl", f"alter -r{f}",
                      mid, (y(L) + ctl) / 2 - 4)
    if name in ("FenceBroker", "UnfenceBroker") and a is not None:
        text = "fence" if name == "FenceBroker" else "unfence"
        return _arrow(mid - half, ctl, mid + half, y(a), "ctl", text, mid, (ctl + y(a)) / 2 - 4)
    if name == "LearnMetadata" and a is not None:
        L = after["bLeader"][a]
        text = f"e{after['bEpoch'][a]} " + ("lead" if L == a else f"r{L}" if L >= 0 else "none")
        return _arrow(mid - half, ctl, mid + half, y(a), "meta", text, mid, (ctl + y(a)) / 2 - 4)
    if name == "Elect" and a is not None:
        c, d = mid, y(a)
        star = " ".join(f"{c + px:.1f},{d + py:.1f}" for px, py in _STAR)
        return [f'<line class="rule" x1="{c}" y1="{ctl}" x2="{c}" y2="{d}"/>',
                f'<circle class="dot" cx="{c}" cy="{ctl}" r="4"/>',
                f'<polygon class="elect" points="{star}" fill="{colour(after["epoch"])}"/>',
                f'<text class="lbl" x="{c}" y="{ctl - 8}">elect r{a} e{after["epoch"]}</text>']
    return None


# a five-pointed star of radius 8 around the origin
_STAR = [(0.0, -8.0), (1.9, -2.6), (7.6, -2.5), (3.0, 1.0), (4.7, 6.5), (0.0, 3.2), (-4.7, 6.5),
         (-3.0, 1.0), (-7.6, -2.5), (-1.9, -2.6)]
