"""Text rendering of a trace: the protocol's own view where it has one, else a generic table of
variables per step, with what each step changed marked ``*``."""

from __future__ import annotations

from typing import Any

from hwcheck.checker.traces.trace import Trace
from hwcheck.checker.traces.values import show
from hwcheck.spec.protocol import NO_VIEWS, Views


def headline(trace: Trace) -> str:
    if trace.property is None:
        return f"a behaviour of {trace.spec} in {trace.length} steps"
    what = {"invariant": "violated", "action": "violated", "reachable": "reached",
            "domain": "violated", "liveness": "violated"}.get(trace.kind, "claimed")
    return f"{trace.property} {what} in {trace.length} steps ({trace.engine} engine)"


def params_line(params: dict[str, Any], views: Views = NO_VIEWS) -> str:
    """One line naming the parameters: the protocol's wording, or ``name=value`` pairs."""
    if views.params_line is not None:
        return views.params_line(params)
    return " ".join(f"{k}={_value(v)}" for k, v in params.items()) or "(no parameters)"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def ending(trace: Trace) -> str:
    """The closing sentence: which property the last state (or step) violates or satisfies."""
    if trace.property is None:
        return "Every step is an action of the spec."
    if trace.kind == "domain":
        d = trace.meta.get("domain_error") or {}
        if d.get("step"):
            return (f"Step {trace.length}: {d['step']} leaves the declared domains: "
                    f"{d.get('message', '')}")
        return f"Evaluating {d.get('where')} on the last state leaves the declared domains: " \
               f"{d.get('message', '')}"
    if trace.kind == "liveness":
        k, n = int(trace.meta["loop"]), len(trace.states) - 1
        cycle = ("state {k} stutters forever" if n - k == 1 and trace.actions
                 and trace.actions[-1] == "(stutter)"
                 else f"steps {k + 1}..{n} repeat forever (state {n} is state {k} again)")
        return (f"A lasso: {cycle.format(k=k)}; on this fair behaviour {trace.property} "
                "fails.")
    last = "step" if trace.kind == "action" else "state"
    verb = "satisfies" if trace.kind == "reachable" else "violates"
    return f"The last {last} {verb} {trace.property}."


def text(trace: Trace) -> str:
    """The whole trace as text: the headline, then the protocol's view or the generic table."""
    views = trace.views
    if views.text is not None and trace.kind != "domain":
        body = views.text(trace)
        if trace.kind == "liveness":
            body = body.rstrip("\n") + "\n" + ending(trace) + "\n"
        return headline(trace) + "\n" + body
    return headline(trace) + "\n" + generic(trace)


def generic(trace: Trace) -> str:
    """Every variable of every state, one line each; ``*`` marks what the step changed."""
    out = [params_line(trace.params), ""]
    states = trace.shown()
    names = list(states[0]) if states else []
    width = max((len(n) for n in names), default=0)
    fmt = show if trace.present is not None else _show  # typed values in TLA+'s notation
    prev = None
    for i, st in enumerate(states):
        out.append(f"State 0: {trace.start_label}" if i == 0
                   else f"Step {i}: {trace.labels[i - 1]}")
        if trace.kind == "liveness" and i == trace.meta.get("loop"):
            out[-1] += "    <- the cycle starts here"
        for name in names:
            star = "*" if prev is not None and prev.get(name) != st.get(name) else ""
            out.append(f"    {name.ljust(width)}  {fmt(st.get(name))}{star}")
        out.append("")
        prev = st
    out.append(ending(trace))
    return "\n".join(out) + "\n"


def _show(v: Any) -> str:
    if isinstance(v, list):
        return "[" + " ".join(_show(x) for x in v) + "]"
    return _value(v)
