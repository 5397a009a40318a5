"""Readable renderings of a trace: a text table per step, changes marked with ``*``."""

from __future__ import annotations

from .trace import Trace

def _fmt_log(records: list[int]) -> str:
    return "[" + " ".join(str(e) if e else "." for e in records) + "]"


def _leo(records: list[int]) -> int:
    return sum(1 for e in records if e)


def _param_line(params: dict) -> str:
    p = params
    s = (f"R={p.get('replicas')} M={p.get('max_offset')} E={p.get('max_epoch')} "
         f"truncation={p.get('truncation')} isr-expansion={p.get('isr_expansion')} "
         f"acks={p.get('acks')} min-isr={p.get('min_isr')}")
    return s + (" unclean-election" if p.get("unclean") else "")


def headline(trace: Trace) -> str:
    what = {"invariant": "violated", "action": "violated", "reachable": "reached"}[trace.kind]
    return f"{trace.property} {what} in {trace.length} steps ({trace.engine} engine)"


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


def text(trace: Trace) -> str:
    """The trace as text: numbered steps, each state's replicas as a table."""
    if not {"log", "hw", "leader"} <= set(trace.states[0]):
        return _generic(trace)
    E = trace.params.get("max_epoch", 0)
    out = [headline(trace), _param_line(trace.params), "",
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


def _generic(trace: Trace) -> str:
    out = [headline(trace), ""]
    prev = None
    for i, st in enumerate(trace.states):
        out.append(f"State 0: {trace.start_label}" if i == 0 else f"Step {i}: {trace.actions[i - 1]}")
        for k, v in st.items():
            star = "*" if prev is not None and prev.get(k) != v else ""
            out.append(f"    {k} = {v}{star}")
        prev = st
    return "\n".join(out) + "\n"
