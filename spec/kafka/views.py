"""How Kafka traces are drawn: the text table and the HTML page of the replication model.

Both read a trace as data (its states as dicts of variables, action labels, parameters, the
property and its kind) and never import the checker: the checker's generic renderers call them
through the protocol's ``Views`` and fall back to a table of variables for other protocols.
"""

from __future__ import annotations

from html import escape

def _fmt_log(records: list[int]) -> str:
    return "[" + " ".join(str(e) if e else "." for e in records) + "]"


def _leo(records: list[int]) -> int:
    return sum(1 for e in records if e)


def params_line(params: dict) -> str:
    p = params
    s = (f"R={p.get('replicas')} M={p.get('max_offset')} E={p.get('max_epoch')} "
         f"truncation={p.get('truncation')} isr-expansion={p.get('isr_expansion')} "
         f"acks={p.get('acks')} min-isr={p.get('min_isr')}")
    return s + (" unclean-election" if p.get("unclean") else "")


def _replica_rows(st: dict, prev: dict | None, oor: int) -> list[list[str]]:
    R = len(st["hw"])
    rows = []
    for r in range(R):
        def mark(text: str, *names: str) -> str:
            changed = prev is not None and any(_at(prev, n, r) != _at(st, n, r) for n in names)
            return text + ("*" if changed else "")

        flags = [name for name, on in (("alive", r in st["alive"]), ("isr", r in st["isr"]),
                                       ("synced", r in st["synced"])) if on]
        if st["leader"] == r:
            flags.insert(0, "LEADER")
        resp = "-"
        if r in st["pending"]:
            rec = st["respRec"][r]
            resp = (f"out-of-range(leo={st['respHw'][r]})" if rec == oor
                    else f"record({rec or '-'}) hw={st['respHw'][r]}")
        log = st["log"][r]
        rows.append([f"r{r}", mark(_fmt_log(log), "log"), mark(str(_leo(log)), "log"),
                     mark(str(st["hw"][r]), "hw"),
                     mark(" ".join(flags) or "down", "alive", "isr", "synced", "leader"),
                     mark(str(st["rleo"][r]), "rleo"),
                     mark(resp, "pending", "respRec", "respHw")])
    return rows


def _at(st: dict, name: str, r: int):
    v = st[name]
    if name == "leader":
        return v == r
    if name in ("alive", "isr", "synced", "pending"):
        return r in v
    return v[r]


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    fmt = lambda row: "    " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
    return [fmt(header)] + [fmt(r) for r in rows]


def _summary(st: dict, prev: dict | None) -> str:
    def mark(name: str, text: str) -> str:
        return text + ("*" if prev is not None and prev[name] != st[name] else "")

    leader = "none" if st["leader"] < 0 else f"r{st['leader']}"
    return (f"  leader {mark('leader', leader)}  epoch {mark('epoch', str(st['epoch']))}  "
            f"committed {mark('committed', _fmt_log(st['committed']))}  "
            f"acked {mark('acked', _fmt_log(st['acked']))}")


def text(trace) -> str:
    """The trace's body as text (after its headline): numbered steps, each state's replicas as
    a table."""
    E = trace.params.get("max_epoch", 0)
    out = [params_line(trace.params), "",
           "Each replica: its log (the leader epoch of each record, '.' = none), LEO, HW, flags,",
           "the leader's record of its LEO (rleo) and its fetch response in flight.",
           "'*' marks what the step changed.", ""]
    header = ["replica", "log", "LEO", "HW", "flags", "rleo", "in flight"]
    prev = None
    for i, st in enumerate(trace.states):
        title = f"State 0: {trace.start_label}" if i == 0 else f"Step {i}: {trace.actions[i - 1]}"
        out.append(title)
        out.append(_summary(st, prev))
        out.extend(_table(_replica_rows(st, prev, E + 1), header))
        out.append("")
        prev = st
    last = "step" if trace.kind == "action" else "state"
    verb = "satisfies" if trace.kind == "reachable" else "violates"
    out.append(f"The last {last} {verb} {trace.property}.")
    return "\n".join(out) + "\n"




# One colour per leader epoch (1..8); text stays dark on all of them.
EPOCH_COLOURS = ("#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#f4a261", "#80ed99",
                 "#bdb2ff")

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px;
       color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
p.params { font-family: monospace; color: #555; margin: 0 0 12px 0; }
table.trace { border-collapse: collapse; }
table.trace th, table.trace td { border: 1px solid #ccc; padding: 6px 8px; vertical-align: top; }
table.trace th { background: #f4f4f4; font-size: 13px; }
td.step { font-family: monospace; white-space: nowrap; }
td.step .n { font-weight: bold; }
td.changed { background: #fff6bf; }
td.down { background: #eee; color: #888; }
.log { display: flex; gap: 2px; margin: 2px 0; }
.box { width: 26px; height: 22px; line-height: 22px; text-align: center; font-family: monospace;
       font-size: 12px; border: 1px solid #888; border-radius: 3px; }
.box.empty { background: #fff; border-style: dashed; color: #bbb; }
.box.gone { outline: 2px solid #d00; }
.box.bad { box-shadow: 0 0 0 3px #d00; }
.marks { display: flex; gap: 2px; font-family: monospace; font-size: 10px; color: #444; }
.marks span { width: 28px; text-align: center; }
.flags { font-size: 12px; margin-top: 3px; }
.flag { display: inline-block; padding: 0 4px; margin-right: 3px; border-radius: 3px;
        background: #e9ecef; }
.flag.leader { background: #264653; color: #fff; font-weight: bold; }
.flag.down { background: #6c757d; color: #fff; }
.meta { font-family: monospace; font-size: 11px; color: #555; margin-top: 3px; }
td.cluster { font-family: monospace; font-size: 12px; white-space: nowrap; }
.verdict { margin-top: 16px; padding: 10px 12px; border-left: 5px solid #d00; background: #fdecea; }
.verdict.reached { border-left-color: #2a9d8f; background: #e8f6f3; }
.legend { margin: 8px 0 14px 0; font-size: 12px; display: flex; gap: 10px; align-items: center; }
"""


def _colour(e: int) -> str:
    return EPOCH_COLOURS[(e - 1) % len(EPOCH_COLOURS)]


def _log_cell(st: dict, prev: dict | None, r: int, bad: frozenset = frozenset()) -> str:
    log = st["log"][r]
    old = prev["log"][r] if prev is not None else log
    boxes = []
    for k, e in enumerate(log):
        gone = " gone" if old[k] and old[k] != e else ""
        gone += " bad" if k in bad else ""
        if e:
            boxes.append(f'<div class="box{gone}" style="background:{_colour(e)}" '
                         f'title="offset {k}, epoch {e}">{e}</div>')
        else:
            boxes.append(f'<div class="box empty{gone}" title="offset {k}, no record">{k}</div>')
    leo, hw = _leo(log), st["hw"][r]
    marks = []
    for k in range(len(log) + 1):
        tags = [t for t, at in (("HW", hw), ("LEO", leo)) if at == k]
        marks.append(f"<span>{'&#9650;' + '/'.join(tags) if tags else ''}</span>")
    return f'<div class="log">{"".join(boxes)}</div><div class="marks">{"".join(marks)}</div>'


def _flags(st: dict, r: int) -> str:
    out = []
    if st["leader"] == r:
        out.append('<span class="flag leader">leader</span>')
    if r not in st["alive"]:
        out.append('<span class="flag down">down</span>')
    for name in ("isr", "synced"):
        if r in st[name]:
            out.append(f'<span class="flag">{name}</span>')
    return f'<div class="flags">{"".join(out)}</div>'


def _meta(st: dict, r: int, oor: int) -> str:
    parts = [f"hw={st['hw'][r]} leo={_leo(st['log'][r])} rleo={st['rleo'][r]}"]
    if r in st["pending"]:
        rec = st["respRec"][r]
        parts.append(f"in flight: out-of-range (leader leo {st['respHw'][r]})" if rec == oor
                     else f"in flight: record {rec or '-'}, hw {st['respHw'][r]}")
    return "".join(f'<div class="meta">{escape(p)}</div>' for p in parts)


def _replica_changed(st: dict, prev: dict | None, r: int) -> bool:
    if prev is None:
        return False
    for name in ("log", "hw", "rleo", "respRec", "respHw"):
        if prev[name][r] != st[name][r]:
            return True
    for name in ("alive", "isr", "synced", "pending"):
        if (r in prev[name]) != (r in st[name]):
            return True
    return (prev["leader"] == r) != (st["leader"] == r)


def _cluster(st: dict, prev: dict | None) -> tuple[str, bool]:
    leader = "none" if st["leader"] < 0 else f"r{st['leader']}"
    lines = [f"leader {leader}", f"epoch {st['epoch']}", f"committed {_fmt_log(st['committed'])}",
             f"acked {_fmt_log(st['acked'])}"]
    changed = prev is not None and any(prev[n] != st[n]
                                       for n in ("leader", "epoch", "committed", "acked"))
    return "<br>".join(escape(x) for x in lines), changed


def _fmt_rec(e: int) -> str:
    return f"a record of epoch {e}" if e else "no record"


def explain(trace) -> tuple[str, dict[int, frozenset]]:
    """What the last state (or step) does wrong, in words, and the offsets to flag per replica.

    Knows the model's own properties; for any other it returns ('', {})."""
    st = trace.states[-1]
    prev = trace.states[-2] if len(trace.states) > 1 else None
    name, L = trace.property, st["leader"]
    R, M = len(st["hw"]), len(st["log"][0]) if st["log"] else 0
    if trace.kind == "reachable":
        return "", {}
    if name in ("CommittedNotLost", "AckedNotLost") and L >= 0:
        ghost = st["committed" if name == "CommittedNotLost" else "acked"]
        what = "committed" if name == "CommittedNotLost" else "acknowledged"
        lost = [k for k in range(M) if ghost[k] and st["log"][L][k] != ghost[k]]
        if lost:
            k = lost[0]
            return (f"offset {k} was {what} holding {_fmt_rec(ghost[k])}, but the leader r{L} "
                    f"has {_fmt_rec(st['log'][L][k])} there", {L: frozenset(lost)})
    if name == "LogsMatchBelowHw":
        for a in range(R):
            for b in range(a + 1, R):
                below = min(st["hw"][a], st["hw"][b])
                diff = [k for k in range(below) if st["log"][a][k] != st["log"][b][k]]
                if diff:
                    k = diff[0]
                    return (f"r{a} (HW {st['hw'][a]}) and r{b} (HW {st['hw'][b]}) disagree at "
                            f"offset {k}: {_fmt_rec(st['log'][a][k])} against "
                            f"{_fmt_rec(st['log'][b][k])}", {a: frozenset(diff),
                                                             b: frozenset(diff)})
    if name == "HwBelowLeo":
        for r in range(R):
            if st["hw"][r] > _leo(st["log"][r]):
                return f"r{r}'s HW is {st['hw'][r]} but its LEO is {_leo(st['log'][r])}", {}
    if name == "LeaderInIsr" and L >= 0:
        return f"the leader r{L} is not in the ISR", {}
    if name == "LeaderHwMonotonic" and prev is not None and L >= 0:
        return f"the leader r{L}'s HW went from {prev['hw'][L]} to {st['hw'][L]}", {}
    if name == "EpochMonotonic" and prev is not None:
        return f"the epoch went from {prev['epoch']} to {st['epoch']}", {}
    return "", {}


def page(trace, headline: str, description: str = "") -> str:
    """The trace as one HTML document (a string); ``headline`` is its title."""
    R = len(trace.states[0]["hw"])
    oor = trace.params.get("max_epoch", 0) + 1
    title = escape(headline)
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{title}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
           f"<h1>{title}</h1>", f'<p class="params">{escape(params_line(trace.params))}</p>']
    epochs = sorted({e for st in trace.states for lg in st["log"] for e in lg if e})
    legend = "".join(f'<div class="box" style="background:{_colour(e)}">{e}</div>' for e in epochs)
    out.append(f'<div class="legend">records by leader epoch: {legend}'
               '<span>&#9650; HW / LEO: the offset they point at</span>'
               '<span style="background:#fff6bf;padding:2px 4px">changed by the step</span>'
               '<span><span class="box gone" style="display:inline-block;width:14px;'
               'height:10px"></span> record removed or replaced</span></div>')
    head = "".join(f"<th>r{r}</th>" for r in range(R))
    out.append(f'<table class="trace"><tr><th>step</th>{head}<th>partition</th></tr>')
    why, flagged = explain(trace)
    last_index = len(trace.states) - 1
    prev = None
    for i, st in enumerate(trace.states):
        action = ("pre-state (not necessarily reachable)" if trace.is_cti else "initial state") \
            if i == 0 else trace.actions[i - 1]
        cells = [f'<td class="step"><span class="n">{i}</span><br>{escape(action)}</td>']
        for r in range(R):
            cls = ["changed"] if _replica_changed(st, prev, r) else []
            if r not in st["alive"]:
                cls.append("down")
            attr = f' class="{" ".join(cls)}"' if cls else ""
            bad = flagged.get(r, frozenset()) if i == last_index else frozenset()
            cells.append(f"<td{attr}>{_log_cell(st, prev, r, bad)}{_flags(st, r)}"
                         f"{_meta(st, r, oor)}</td>")
        cluster, changed = _cluster(st, prev)
        cells.append(f'<td class="cluster{" changed" if changed else ""}">{cluster}</td>')
        out.append(f"<tr>{''.join(cells)}</tr>")
        prev = st
    out.append("</table>")
    reached = trace.kind == "reachable"
    last = "step" if trace.kind == "action" else "state"
    verb = "satisfies" if reached else "violates"
    verdict = f"The last {last} {verb} <b>{escape(trace.property)}</b>"
    if description:
        verdict += f": {escape(description)}"
    verdict += "."
    if why:
        verdict += f"<br>Here {escape(why)}" + (" (outlined in the last row)." if flagged else ".")
    out.append(f'<div class="verdict{" reached" if reached else ""}">{verdict}</div>')
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


