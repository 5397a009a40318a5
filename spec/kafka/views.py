"""How Kafka traces are drawn: the text table and the HTML page of the replication model.

Both read a trace as data (its states as dicts of variables, action labels, parameters, the
property and its kind) and never import the checker: the checker's generic renderers call them
through the protocol's ``Views`` and fall back to a table of variables for other protocols.
"""

from __future__ import annotations

from html import escape
from typing import Any

from hwcheck.spec.kafka import timeline
from hwcheck.spec.kafka.derived import (
    State,
    first_unstable_of,
    leo_of,
    log_start_of,
    lso_of,
    out_of_range,
    restart_at,
)
from hwcheck.spec.kafka.timeline import Trace


def _fmt_log(records: list[int]) -> str:
    return "[" + " ".join(str(e) if e else "." for e in records) + "]"


def params_line(params: dict[str, Any]) -> str:
    p = params
    s = (f"R={p.get('replicas')} M={p.get('max_offset')} E={p.get('max_epoch')} "
         f"truncation={p.get('truncation')} isr-expansion={p.get('isr_expansion')} "
         f"acks={p.get('acks')} min-isr={p.get('min_isr')}")
    s += " unclean-election" if p.get("unclean") else ""
    return s + _knobs_line(p)


def _knobs_line(p: dict[str, Any]) -> str:
    """The knobs of docs/kafka-model.md that are on (none for the base model's configurations)."""
    s = f" consumers={p['consumers']}" if p.get("consumers") else ""
    s += " producer-retries" if p.get("producer_retries") else ""
    s += " idempotence" if p.get("idempotence") else ""
    s += " log-start-offset" if p.get("log_start_offset") else ""
    s += " transactions" if p.get("transactions") else ""
    iso = p.get("isolation", "read-committed")
    s += f" isolation={iso}" if iso != "read-committed" else ""
    s += f" isr-shrink={p['isr_shrink']}" if p.get("isr_shrink", "any") != "any" else ""
    s += " unflushed-loss" if p.get("unflushed_loss") else ""
    s += f" controller={p['controller']}" if p.get("controller", "atomic") != "atomic" else ""
    s += f" fencing={p['fencing']}" if p.get("fencing", "none") != "none" else ""
    s += " elr" if p.get("elr") else ""
    rec = p.get("unclean_recovery", "none")
    s += f" unclean-recovery={rec}" if rec != "none" else ""
    return s


def _replica_rows(st: State, prev: State | None, E: int) -> list[list[str]]:
    R = len(st["hw"])
    rows = []
    for r in range(R):
        def mark(text: str, *names: str, r: int = r) -> str:
            changed = prev is not None and any(_at(prev, n, r) != _at(st, n, r) for n in names)
            return text + ("*" if changed else "")

        flags = [name for name, on in (("alive", r in st["alive"]), ("isr", r in st["isr"]),
                                       ("synced", r in st["synced"]), *_kraft_flags(st, r))
                 if on]
        if st["leader"] == r:
            flags.insert(0, "LEADER")
        resp = "-"
        if r in st["pending"]:
            rec = st["respRec"][r]
            resp = (f"out-of-range(leo={st['respHw'][r]})" if rec == out_of_range(E)
                    else f"restart-at({st['respHw'][r]})" if rec == restart_at(E)
                    else f"record({rec or '-'}{_resp_tag(st, r)}) hw={st['respHw'][r]}"
                    + (f" start={st['respLs'][r]}" if "respLs" in st else ""))
        log = st["log"][r]
        if not _knobbed(st):
            rows.append([f"r{r}", mark(_fmt_log(log), "log"), mark(str(leo_of(st, r)), "log"),
                         mark(str(st["hw"][r]), "hw"),
                         mark(" ".join(flags) or "down", "alive", "isr", "synced", "leader"),
                         mark(_rleo_text(st, r), "rleo"),
                         mark(resp, "pending", "respRec", "respHw")])
            continue
        row = [f"r{r}", mark(_fmt_replica_log(st, r), "log", *_present(st, "logStart"))]
        if _record_arrays(st):
            row.append(mark(_fmt_tags(st, r), *_record_arrays(st)))
        leo = str(leo_of(st, r))
        row.append(leo + ("*" if prev is not None and leo_of(prev, r) != leo_of(st, r) else ""))
        if "logStart" in st:
            row.append(mark(str(st["logStart"][r]), "logStart"))
        if "flushed" in st:
            row.append(mark(str(st["flushed"][r]), "flushed"))
        row += [mark(str(st["hw"][r]), "hw"),
                mark(" ".join(flags) or "down", "alive", "isr", "synced", "leader",
                     *_present(st, "fenced", "elr", "unclean")),
                mark(_rleo_text(st, r), "rleo")]
        if "bLeader" in st:
            row.append(mark(_view_text(st, r), "bLeader", "bEpoch", "lIsr"))
        row.append(mark(resp, "pending", "respRec", "respHw", *_resp_arrays(st)))
        rows.append(row)
    return rows


# -- the knobs of docs/kafka-model.md: shown only when their variables exist --------------------

_KNOB_VARS = ("logStart", "seq", "txn", "pWait", "cpos", "flushed", "bLeader")
_TXN_STATES = ("idle", "open", "prepare-commit", "prepare-abort")
_OUTCOMES = (".", "commit", "abort")


def _knobbed(st: State) -> bool:
    return any(n in st for n in _KNOB_VARS)


def _kraft_flags(st: State, r: int) -> tuple[tuple[str, bool], ...]:
    """The KRaft controller's marks of a broker: fenced, in the ELR, down after a power loss."""
    return tuple((n, r in st[n]) for n in ("fenced", "elr", "unclean") if n in st)


def _rleo_text(st: State, r: int) -> str:
    """The leader's record of r's LEO; with the KRaft controller, r's own records of its
    followers while it believes it leads ('-' otherwise)."""
    v = st["rleo"][r]
    if not isinstance(v, list):
        return str(v)
    if st["bLeader"][r] != r:
        return "-"
    return "[" + " ".join("." if f == r else str(x) for f, x in enumerate(v)) + "]"


def _view_text(st: State, r: int) -> str:
    """The partition state broker r has applied (KRaft): whom it follows, in which epoch."""
    L, e = st["bLeader"][r], st["bEpoch"][r]
    if e == 0:
        return "-"
    if L == r:
        v = st["lIsr"][r]  # one boolean per replica
        isr = ",".join(f"r{f}" for f, on in enumerate(v) if on)
        return f"leads e{e} isr {{{isr}}}"
    return f"follows r{L} e{e}" if L >= 0 else f"no leader e{e}"


def _record_arrays(st: State) -> tuple[str, ...]:
    return tuple(n for n in ("seq", "txn", "ctl") if n in st)


def _resp_arrays(st: State) -> tuple[str, ...]:
    return tuple(n for n in ("respSeq", "respTxn", "respCtl", "respLs") if n in st)


def _present(st: State, *names: str) -> tuple[str, ...]:
    return tuple(n for n in names if n in st)


def _fmt_replica_log(st: State, r: int) -> str:
    """A replica's log; 'x' marks an offset below its log start offset (deleted)."""
    start = log_start_of(st, r)
    return "[" + " ".join("x" if k < start else (str(e) if e else ".")
                          for k, e in enumerate(st["log"][r])) + "]"


def _tag(seq: int | None, txn: int | None, ctl: int | None) -> str:
    """A record's identity beyond its epoch: s<n> its producer sequence number; d<t> a data
    record of transaction t, C<t> / A<t> its commit / abort marker."""
    if txn is not None:
        assert ctl is not None  # a transaction's record has its control type beside it
        return ("d", "C", "A")[ctl] + str(txn)
    return f"s{seq}"


def _record_tag(st: State, r: int, k: int) -> str:
    if not st["log"][r][k] or not _record_arrays(st):
        return "."
    return _tag(st["seq"][r][k] if "seq" in st else None,
                st["txn"][r][k] if "txn" in st else None,
                st["ctl"][r][k] if "ctl" in st else None)


def _fmt_tags(st: State, r: int) -> str:
    return "[" + " ".join(_record_tag(st, r, k) for k in range(len(st["log"][r]))) + "]"


def _resp_tag(st: State, r: int) -> str:
    if not st["respRec"][r] or not _record_arrays(st):
        return ""
    return " " + _tag(st["respSeq"][r] if "respSeq" in st else None,
                      st["respTxn"][r] if "respTxn" in st else None,
                      st["respCtl"][r] if "respCtl" in st else None)


def _knob_lines(st: State, prev: State | None) -> list[str]:
    """The producer, the transaction and the consumers, one line each."""
    def mark(text: str, *names: str) -> str:
        return text + ("*" if prev is not None and any(prev[n] != st[n] for n in names) else "")

    out = []
    L = st["leader"]
    wait = (f"awaiting the answer of the epoch-{st['pWait']} leader" if st.get("pWait")
            else "nothing awaited")
    if "pSeq" in st:
        out.append("  producer: " + mark(f"last sequence number {st['pSeq']}", "pSeq") + ", "
                   + mark(wait, "pWait"))
    if "txnId" in st:
        txn = "no transaction yet" if not st["txnId"] else \
            f"transaction {st['txnId']} {_TXN_STATES[st['txnState']]}"
        outcomes = " ".join(_OUTCOMES[o] for o in st["outcome"])
        out.append("  producer: " + mark(txn, "txnId", "txnState") + ", " + mark(wait, "pWait")
                   + "; decided " + mark(f"[{outcomes}]", "outcome"))
        if L >= 0:
            out.append(f"  leader's LSO {lso_of(st, L)} (first unstable offset "
                       f"{first_unstable_of(st, L)})")
    if "logStart" in st:
        out.append(f"  low watermark {min(st['logStart'])}")
    if "bLeader" in st:
        def members(name: str) -> str:
            return "{" + ",".join(f"r{r}" for r in sorted(st[name])) + "}"
        line = "  controller: " + mark(f"ISR {members('isr')}", "isr")
        if "elr" in st:
            line += ", " + mark(f"ELR {members('elr')}", "elr")
        if "lastKnownElr" in st:
            line += ", " + mark(f"last known ELR {members('lastKnownElr')}", "lastKnownElr")
        line += ", " + mark(f"fenced {members('fenced')}", "fenced")
        out.append(line)
    if "cpos" in st:
        for c, pos in enumerate(st["cpos"]):
            line = (f"  consumer c{c}: " + mark(f"position {pos}", "cpos") + ", read "
                    + mark(_fmt_log(st["cread"][c]), "cread"))
            if "cret" in st:
                line += ", returned " + mark(
                    "[" + " ".join(f"d{t}" if t else "." for t in st["cret"][c]) + "]", "cret")
            out.append(line)
    return out


def _at(st: State, name: str, r: int) -> object:
    """Replica r's value of ``name`` (of a set: whether r is in it), to compare."""
    v = st[name]
    if name == "leader":
        return v == r
    if name in ("alive", "isr", "synced", "pending", "fenced", "elr", "unclean"):
        return r in v
    return v[r]


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]

    def fmt(row: list[str]) -> str:
        return "    " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()

    return [fmt(header)] + [fmt(r) for r in rows]


def _summary(st: State, prev: State | None) -> str:
    def mark(name: str, text: str) -> str:
        return text + ("*" if prev is not None and prev[name] != st[name] else "")

    leader = "none" if st["leader"] < 0 else f"r{st['leader']}"
    return (f"  leader {mark('leader', leader)}  epoch {mark('epoch', str(st['epoch']))}  "
            f"committed {mark('committed', _fmt_log(st['committed']))}  "
            f"acked {mark('acked', _fmt_log(st['acked']))}")


def _knob_legend(st: State) -> list[str]:
    out = []
    if "flushed" in st:
        out.append("disk: the offset below which the replica's log is flushed (a power loss "
                   "keeps only that).")
    if "bLeader" in st:
        out.append("LEADER: the controller's leader; view: the partition state the broker has "
                   "applied; rleo: its records while it believes it leads.")
    if "logStart" in st:
        out.append("'x' = an offset below the replica's log start offset (start): deleted.")
    if "seq" in st:
        out.append("records: each record's producer sequence number (s1 = the first record).")
    if "txn" in st:
        out.append("records: d<t> a data record of transaction t, C<t> / A<t> its commit / "
                   "abort marker.")
    return out


def _action(trace: Trace, i: int) -> str:
    """The label of step i (from 1): a Kafka trace labels its steps."""
    assert trace.actions is not None
    return trace.actions[i - 1]


def text(trace: Trace) -> str:
    """The trace's body as text (after its headline): numbered steps, each state's replicas as
    a table."""
    E = trace.params.get("max_epoch", 0)
    out = [params_line(trace.params), "",
           "Each replica: its log (the leader epoch of each record, '.' = none), LEO, HW, flags,",
           "the leader's record of its LEO (rleo) and its fetch response in flight.",
           "'*' marks what the step changed.", ""]
    header = ["replica", "log", "LEO", "HW", "flags", "rleo", "in flight"]
    first = trace.states[0] if trace.states else {}
    if _knobbed(first):
        header = ["replica", "log"] + (["records"] if _record_arrays(first) else []) + ["LEO"] \
            + (["start"] if "logStart" in first else []) \
            + (["disk"] if "flushed" in first else []) + header[3:6] \
            + (["view"] if "bLeader" in first else []) + header[6:]
        out[-1:-1] = _knob_legend(first)
    prev = None
    for i, st in enumerate(trace.states):
        title = f"State 0: {trace.start_label}" if i == 0 else f"Step {i}: {_action(trace, i)}"
        if trace.kind == "liveness" and i == trace.meta.get("loop"):
            title += "    <- the cycle starts here"
        out.append(title)
        out.append(_summary(st, prev))
        if _knobbed(st):
            out.extend(_knob_lines(st, prev))
        out.extend(_table(_replica_rows(st, prev, E), header))
        out.append("")
        prev = st
    last = "step" if trace.kind == "action" else "state"
    verb = "satisfies" if trace.kind == "reachable" else "violates"
    if trace.property is not None and trace.kind != "liveness":  # a lasso: the checker says
        out.append(f"The last {last} {verb} {trace.property}.")  # what its cycle is
        why, _ = explain(trace)  # the page's explanation, in the same words
        if why:
            out.append(f"Here {why}.")
    return "\n".join(out) + "\n"




# One colour per leader epoch (1..8); text stays dark on all of them.
EPOCH_COLOURS = ("#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#f4a261", "#80ed99",
                 "#bdb2ff")

# a lasso's page only: its cycle's rows marked, its span shaded in the timeline
LASSO_CSS = """tr.cycle td { box-shadow: inset 3px 0 0 #7048e8; }
.timeline rect.cycle { fill: #f3f0ff; stroke: #7048e8; stroke-dasharray: 4 3; }
.timeline path.cycle-back { fill: none; stroke: #7048e8; stroke-width: 1.5; }
.timeline text.cycle { fill: #7048e8; font-size: 11px; text-anchor: middle; }
"""

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
.chg { background: #ffe066; border-radius: 2px; }
.box.chg:not(.bad) { box-shadow: 0 0 0 3px #ffd60a; }
.flag.chg { box-shadow: 0 0 0 2px #ffd60a; }
.flag.off { text-decoration: line-through; opacity: 0.6; }
.cti { margin: 0 0 12px 0; padding: 8px 12px; border-left: 5px solid #6c757d; background: #f1f3f5;
       font-size: 13px; }
"""


def _colour(e: int) -> str:
    return EPOCH_COLOURS[(e - 1) % len(EPOCH_COLOURS)]


def _log_cell(st: State, prev: State | None, r: int, bad: frozenset[int] = frozenset()) -> str:
    log = st["log"][r]
    old = prev["log"][r] if prev is not None else log
    start = log_start_of(st, r)
    boxes = []
    for k, e in enumerate(log):
        gone = " gone" if old[k] and old[k] != e and k >= start else ""
        gone += " chg" if prev is not None and e and old[k] != e and k >= start else ""
        gone += " bad" if k in bad else ""
        if k < start:  # below the log start offset: deleted (only with --log-start-offset)
            boxes.append(f'<div class="box empty{gone}" style="background:#ddd" '
                         f'title="offset {k}, deleted (below the log start offset)">x</div>')
        elif e:
            tag = _record_tag(st, r, k)
            what = f", {tag}" if tag != "." else ""
            boxes.append(f'<div class="box{gone}" style="background:{_colour(e)}" '
                         f'title="offset {k}, epoch {e}{what}">{e}</div>')
        else:
            boxes.append(f'<div class="box empty{gone}" title="offset {k}, no record">{k}</div>')
    leo, hw = leo_of(st, r), st["hw"][r]
    moved = prev is not None and (hw, leo) != (prev["hw"][r], leo_of(prev, r))
    marks = []
    for k in range(len(log) + 1):
        tags = [t for t, at in (("HW", hw), ("LEO", leo)) if at == k]
        chg = ' class="chg"' if tags and moved else ""
        marks.append(f"<span{chg}>{'&#9650;' + '/'.join(tags) if tags else ''}</span>")
    return f'<div class="log">{"".join(boxes)}</div><div class="marks">{"".join(marks)}</div>'


def _flags(st: State, r: int, prev: State | None = None) -> str:
    p = prev if prev is not None else st
    out = []
    for name, on, was, cls in (("leader", st["leader"] == r, p["leader"] == r, " leader"),
                               ("down", r not in st["alive"], r not in p["alive"], " down"),
                               ("isr", r in st["isr"], r in p["isr"], ""),
                               ("synced", r in st["synced"], r in p["synced"], ""),
                               *((n, r in st[n], r in p[n], "") for n in ("fenced", "elr",
                                                                           "unclean")
                                 if n in st)):
        if on != was:  # set (marked) or cleared (struck through) by the step
            out.append(f'<span class="flag{cls} chg{"" if on else " off"}">{name}</span>')
        elif on:
            out.append(f'<span class="flag{cls}">{name}</span>')
    return f'<div class="flags">{"".join(out)}</div>'


def _meta(st: State, r: int, E: int, prev: State | None = None) -> str:
    parts = [f"hw={st['hw'][r]} leo={leo_of(st, r)} rleo={_rleo_text(st, r)}"]
    if "logStart" in st:
        parts[0] += f" start={st['logStart'][r]}"
    if "flushed" in st:
        parts[0] += f" disk={st['flushed'][r]}"
    if _record_arrays(st):
        parts.append(f"records {_fmt_tags(st, r)}")
    if "bLeader" in st:
        parts.append(f"view: {_view_text(st, r)}")
    if r in st["pending"]:
        rec = st["respRec"][r]
        parts.append(f"in flight: out-of-range (leader leo {st['respHw'][r]})"
                     if rec == out_of_range(E)
                     else f"in flight: start at the leader's log start {st['respHw'][r]}"
                     if rec == restart_at(E)
                     else f"in flight: record {rec or '-'}{_resp_tag(st, r)}, hw {st['respHw'][r]}"
                     + (f", start {st['respLs'][r]}" if "respLs" in st else ""))
    if prev is None:
        return "".join(f'<div class="meta">{escape(p)}</div>' for p in parts)
    return _meta_marked(st, prev, r, parts)


def _meta_marked(st: State, prev: State, r: int, parts: list[str]) -> str:
    """_meta's lines with what the step changed marked: each value of the first line, and
    the records line or the response in flight as a whole."""
    def val(key: str, now: object, was: object) -> str:
        text = escape(f"{key}={now}")
        return f'<span class="chg">{text}</span>' if now != was else text

    first = [val("hw", st["hw"][r], prev["hw"][r]), val("leo", leo_of(st, r), leo_of(prev, r)),
             val("rleo", _rleo_text(st, r), _rleo_text(prev, r))]
    if "logStart" in st:
        first.append(val("start", st["logStart"][r], prev["logStart"][r]))
    if "flushed" in st:
        first.append(val("disk", st["flushed"][r], prev["flushed"][r]))
    resp = ("respRec", "respHw", *_resp_arrays(st))
    flight = (r in st["pending"]) != (r in prev["pending"]) or any(
        st[n][r] != prev[n][r] for n in resp)
    rec = any(st[n][r] != prev[n][r] for n in _record_arrays(st))
    out = [f'<div class="meta">{" ".join(first)}</div>']
    view = "bLeader" in st and _view_text(st, r) != _view_text(prev, r)
    for line in parts[1:]:
        changed = flight if line.startswith("in flight") else view \
            if line.startswith("view") else rec
        text = f'<span class="chg">{escape(line)}</span>' if changed else escape(line)
        out.append(f'<div class="meta">{text}</div>')
    return "".join(out)


def _replica_changed(st: State, prev: State | None, r: int) -> bool:
    if prev is None:
        return False
    for name in ("log", "hw", "rleo", "respRec", "respHw", "logStart", "respLs", "seq", "respSeq",
                 "txn", "respTxn", "ctl", "respCtl", "flushed", "bLeader", "bEpoch", "lIsr"):
        if name in st and prev[name][r] != st[name][r]:
            return True
    for name in ("alive", "isr", "synced", "pending", "fenced", "elr", "unclean"):
        if name in st and (r in prev[name]) != (r in st[name]):
            return True
    changed: bool = (prev["leader"] == r) != (st["leader"] == r)
    return changed


def _cluster(st: State, prev: State | None) -> tuple[str, bool]:
    leader = "none" if st["leader"] < 0 else f"r{st['leader']}"
    lines = [f"leader {leader}", f"epoch {st['epoch']}", f"committed {_fmt_log(st['committed'])}",
             f"acked {_fmt_log(st['acked'])}"]
    names = ["leader", "epoch", "committed", "acked"]
    if _knobbed(st):
        lines += [x.strip() for x in _knob_lines(st, None)]
        names += [n for n in ("pSeq", "pWait", "txnId", "txnState", "outcome", "logStart", "cpos",
                              "cread", "cret", "isr", "elr", "lastKnownElr", "fenced") if n in st
                  and (n not in ("isr",) or "bLeader" in st)]
    changed = prev is not None and any(prev[n] != st[n] for n in names)
    if prev is None or not changed:
        return "<br>".join(escape(x) for x in lines), changed
    knob = any(prev[n] != st[n] for n in names[4:])  # the knob lines: marked together
    marked = [f'<span class="chg">{escape(x)}</span>'
              if (prev[names[j]] != st[names[j]] if j < 4 else knob) else escape(x)
              for j, x in enumerate(lines)]
    return "<br>".join(marked), changed


def _fmt_rec(e: int) -> str:
    return f"a record of epoch {e}" if e else "no record"


def explain(trace: Trace) -> tuple[str, dict[int, frozenset[int]]]:
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
        lost = [k for k in range(M) if ghost[k] and st["log"][L][k] != ghost[k]
                and k >= log_start_of(st, L)]
        if lost:
            k = lost[0]
            return (f"offset {k} was {what} holding {_fmt_rec(ghost[k])}, but the leader r{L} "
                    f"has {_fmt_rec(st['log'][L][k])} there", {L: frozenset(lost)})
    if name == "LogsMatchBelowHw":
        for a in range(R):
            for b in range(a + 1, R):
                below = min(st["hw"][a], st["hw"][b])
                diff = [k for k in range(max(log_start_of(st, a), log_start_of(st, b)), below)
                        if st["log"][a][k] != st["log"][b][k]]
                if diff:
                    k = diff[0]
                    return (f"r{a} (HW {st['hw'][a]}) and r{b} (HW {st['hw'][b]}) disagree at "
                            f"offset {k}: {_fmt_rec(st['log'][a][k])} against "
                            f"{_fmt_rec(st['log'][b][k])}", {a: frozenset(diff),
                                                             b: frozenset(diff)})
    if name == "HwBelowLeo":
        for r in range(R):
            if st["hw"][r] > leo_of(st, r):
                return f"r{r}'s HW is {st['hw'][r]} but its LEO is {leo_of(st, r)}", {}
    if name == "LeaderInIsr" and L >= 0:
        return f"the leader r{L} is not in the ISR", {}
    if name in ("MonotonicReads", "ReadYourWrites", "NoDuplicates", "LogStartBelowHw",
                "LowWatermarkBelowHw", "LsoBelowHw", "MarkersSurvive", "ReadCommittedIsolation",
                "ReadsBelowHw"):
        return _explain_knob(name, st, prev, L, M)
    if name == "LeaderHwMonotonic" and prev is not None and "bLeader" in st:
        for r in range(R):
            if prev["bLeader"][r] == r and st["bLeader"][r] == r and st["hw"][r] < prev["hw"][r]:
                return (f"r{r}, leading in epoch {st['bEpoch'][r]}, saw its HW go from "
                        f"{prev['hw'][r]} to {st['hw'][r]}"), {}
    if name == "LeaderHwMonotonic" and prev is not None and L >= 0:
        return f"the leader r{L}'s HW went from {prev['hw'][L]} to {st['hw'][L]}", {}
    if name == "LeaderEpochFenced" and prev is not None:
        for f in range(R):
            src = prev["bLeader"][f]
            if f in st["pending"] and f not in prev["pending"] and src >= 0 \
                    and prev["bEpoch"][src] != prev["bEpoch"][f]:
                return (f"r{src}, leading in epoch {prev['bEpoch'][src]}, served the fetch of "
                        f"r{f}, which is in epoch {prev['bEpoch'][f]}"), {}
    if name == "ElrMembersComplete":
        for r in sorted(st["elr"]):
            if "unclean" in st and r in st["unclean"]:
                continue
            lost = [k for k in range(M) if st["committed"][k]
                    and st["log"][r][k] != st["committed"][k]]
            if lost:
                k = lost[0]
                return (f"r{r} is in the ELR, but offset {k} was committed holding "
                        f"{_fmt_rec(st['committed'][k])} and r{r} has "
                        f"{_fmt_rec(st['log'][r][k])} there", {r: frozenset(lost)})
    if name == "EpochMonotonic" and prev is not None:
        return f"the epoch went from {prev['epoch']} to {st['epoch']}", {}
    return "", {}


def _explain_knob(name: str, st: State, prev: State | None, L: int,
                  M: int) -> tuple[str, dict[int, frozenset[int]]]:
    """explain() for the properties of docs/kafka-model.md."""
    if name == "MonotonicReads" and L >= 0:
        for c, read in enumerate(st["cread"]):
            bad = [k for k in range(M) if read[k] and k >= log_start_of(st, L)
                   and st["log"][L][k] != read[k]]
            if bad:
                k = bad[0]
                return (f"consumer c{c} read {_fmt_rec(read[k])} at offset {k}, but the leader "
                        f"r{L} has {_fmt_rec(st['log'][L][k])} there", {L: frozenset(bad)})
    if name == "ReadYourWrites" and L >= 0:
        bad = [k for k in range(M)
               if st["acked"][k] and k >= log_start_of(st, L) and k >= st["hw"][L]]
        if bad:
            return (f"offset {bad[0]} was acknowledged, but the leader r{L}'s HW is "
                    f"{st['hw'][L]}: no consumer can read it yet", {L: frozenset(bad)})
    if name == "NoDuplicates" and L >= 0:
        seq, hw = st["seq"][L], st["hw"][L]
        for k in range(hw):
            for j in range(k):
                if seq[j] == seq[k]:
                    return (f"the leader r{L} holds the producer's record s{seq[k]} at offsets "
                            f"{j} and {k}, both below its HW {hw}", {L: frozenset({j, k})})
    if name == "LogStartBelowHw":
        for r, start in enumerate(st["logStart"]):
            if start > st["hw"][r]:
                return f"r{r}'s log start offset is {start} but its HW is {st['hw'][r]}", {}
    if name == "LowWatermarkBelowHw" and L >= 0:
        return (f"the low watermark is {min(st['logStart'])} but the leader r{L}'s HW is "
                f"{st['hw'][L]}", {})
    if name == "LsoBelowHw" and L >= 0:
        return (f"the leader r{L}'s first unstable offset is {first_unstable_of(st, L)}, above its "
                f"HW {st['hw'][L]}", {})
    if name == "MarkersSurvive" and L >= 0:
        for t, o in enumerate(st["outcome"]):
            data = [k for k in range(M) if st["log"][L][k] and st["txn"][L][k] == t + 1
                    and not st["ctl"][L][k]]
            if data and o:
                return (f"transaction {t + 1} was completed ({_OUTCOMES[o]}) but the leader "
                        f"r{L} holds its data without its {_OUTCOMES[o]} marker",
                        {L: frozenset(data)})
    if name == "ReadCommittedIsolation":
        for c, ret in enumerate(st["cret"]):
            for k, t in enumerate(ret):
                if t and st["outcome"][t - 1] != 1:
                    what = "aborted" if st["outcome"][t - 1] == 2 else "still open"
                    return (f"consumer c{c} returned the record at offset {k} of transaction "
                            f"{t}, which is {what}", {})
    if name == "ReadsBelowHw" and prev is not None:
        return "a consumer read at or above the leader's read bound", {}
    return "", {}


def page(trace: Trace, headline: str, description: str = "") -> str:
    """The trace as one HTML document (a string); ``headline`` is its title."""
    R = len(trace.states[0]["hw"])
    E = trace.params.get("max_epoch", 0)
    title = escape(headline)
    css = CSS + timeline.css(trace) + (LASSO_CSS if trace.kind == "liveness" else "")
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{title}</title>", f"<style>{css}</style>", "</head>",
           "<body>", f"<h1>{title}</h1>",
           f'<p class="params">{escape(params_line(trace.params))}</p>']
    if trace.is_cti:  # not a run of the protocol: one induction step from a hypothetical state
        out.append('<p class="cti">This is a <b>counterexample to induction</b>, not a run of '
                   "the protocol: state 0 is a hypothetical pre-state that satisfies every "
                   "hypothesis (the invariant and its lemmas) but need not be reachable, and the "
                   "one step from it breaks the invariant. It shows that the hypotheses are too "
                   "weak to prove the invariant by induction, not that the invariant fails.</p>")
    epochs = sorted({e for st in trace.states for lg in st["log"] for e in lg if e})
    legend = "".join(f'<div class="box" style="background:{_colour(e)}">{e}</div>' for e in epochs)
    out.append(f'<div class="legend">records by leader epoch: {legend}'
               '<span>&#9650; HW / LEO: the offset they point at</span>'
               '<span class="chg" style="padding:2px 4px">changed by the step</span>'
               '<span><span class="box gone" style="display:inline-block;width:14px;'
               'height:10px"></span> record removed or replaced</span></div>')
    out.append(timeline.timeline(trace, _colour))  # brokers as lanes, steps across
    head = "".join(f"<th>r{r}</th>" for r in range(R))
    out.append(f'<table class="trace"><tr><th>step</th>{head}<th>partition</th></tr>')
    why, flagged = explain(trace)
    last_index = len(trace.states) - 1
    prev = None
    for i, st in enumerate(trace.states):
        action = ("pre-state (not necessarily reachable)" if trace.is_cti else "initial state") \
            if i == 0 else _action(trace, i)
        cells = [f'<td class="step"><span class="n">{i}</span><br>{escape(action)}</td>']
        for r in range(R):
            # the fields the step changed are marked inside the cell, not the whole cell
            attr = ' class="down"' if r not in st["alive"] else ""
            attr += ' data-changed="true"' if _replica_changed(st, prev, r) else ""
            bad = flagged.get(r, frozenset()) if i == last_index else frozenset()
            cells.append(f'<td{attr} data-replica="{r}">{_log_cell(st, prev, r, bad)}'
                         f"{_flags(st, r, prev)}{_meta(st, r, E, prev)}</td>")
        cluster, _ = _cluster(st, prev)
        cells.append(f'<td class="cluster">{cluster}</td>')
        loop = trace.meta.get("loop") if trace.kind == "liveness" else None
        cyc = ' class="cycle"' if isinstance(loop, int) and i >= loop else ""
        out.append(f"<tr{cyc}>{''.join(cells)}</tr>")
        prev = st
    out.append("</table>")
    if trace.property is None:  # a behaviour, with no claim (the explorer's path)
        out += ["</body>", "</html>"]
        return "\n".join(out) + "\n"
    reached = trace.kind == "reachable"
    last = "step" if trace.kind == "action" else "state"
    verb = "satisfies" if reached else "violates"
    verdict = f"The last {last} {verb} <b>{escape(trace.property)}</b>"
    if trace.kind == "liveness":
        loop, n = trace.meta.get("loop"), last_index
        assert loop is not None  # a lasso says where its cycle starts
        verdict = (f"A lasso: steps {loop + 1}..{n} repeat forever (state {n} is state {loop} "
                   f"again, rows marked on the left); on this fair behaviour "
                   f"<b>{escape(trace.property)}</b> fails")
        why = ""
    if description:
        verdict += f": {escape(description)}"
    verdict += "."
    if why:
        verdict += f"<br>Here {escape(why)}" + (" (outlined in the last row)." if flagged else ".")
    out.append(f'<div class="verdict{" reached" if reached else ""}">{verdict}</div>')
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


