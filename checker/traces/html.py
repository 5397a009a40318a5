"""A trace as a self-contained HTML page: the protocol's own drawing where it has one, else a
generic table (one row per step, one column per variable, changed elements highlighted).

Pages have no external assets (inline CSS, no scripts) and no timestamps, so the same trace
always gives the same bytes.
"""

from __future__ import annotations

from html import escape
from typing import Any

from hwcheck.checker.traces.text import ending, headline, params_line
from hwcheck.checker.traces.trace import Trace
from hwcheck.checker.traces.values import show
from hwcheck.spec.lang import Spec

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px;
       color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
p.params { font-family: monospace; color: #555; margin: 0 0 12px 0; }
table.trace { border-collapse: collapse; }
table.trace th, table.trace td { border: 1px solid #ccc; padding: 6px 8px; vertical-align: top;
                                 font-family: monospace; font-size: 13px; }
table.trace th { background: #f4f4f4; }
td.step { white-space: nowrap; }
td.step .n { font-weight: bold; }
td.changed { background: #fffbe0; }
span.changed { background: #ffe066; border-radius: 2px; padding: 0 2px; }
.verdict { margin-top: 16px; padding: 10px 12px; border-left: 5px solid #d00; background: #fdecea; }
.verdict.reached { border-left-color: #2a9d8f; background: #e8f6f3; }
p.cti { padding: 8px 12px; border-left: 5px solid #6c757d; background: #f1f3f5; }
"""


LASSO_CSS = """tr.cycle td { border-left: 3px solid #7048e8; }
p.lasso { padding: 8px 12px; border-left: 5px solid #7048e8; background: #f3f0ff; }
"""  # a lasso's page only

CTI_NOTE = ('<p class="cti">This is a <b>counterexample to induction</b>, not a run of the '
            "protocol: state 0 is a hypothetical pre-state that satisfies every hypothesis but "
            "need not be reachable, and the one step from it breaks the invariant.</p>")


def _cell(value: Any, old: Any) -> str:
    """A value as HTML; the elements that differ from ``old`` are highlighted."""
    if isinstance(value, list):
        olds = old if isinstance(old, list) and len(old) == len(value) else [None] * len(value)
        return "[" + " ".join(_cell(v, o) for v, o in zip(value, olds)) + "]"
    text = escape("true" if value is True else "false" if value is False else str(value))
    if old is not None and old != value:
        return f'<span class="changed">{text}</span>'
    return text


def generic_page(trace: Trace, description: str = "") -> str:
    title = escape(headline(trace))
    states = trace.shown()
    names = list(states[0]) if states else []
    css = CSS + (LASSO_CSS if trace.kind == "liveness" else "")
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{title}</title>", f"<style>{css}</style>", "</head>", "<body>",
           f"<h1>{title}</h1>",
           f'<p class="params">{escape(params_line(trace.params, trace.views))}</p>',
           *([CTI_NOTE] if trace.is_cti else []),
           *([lasso_note(trace)] if trace.kind == "liveness" else []),
           '<table class="trace"><tr><th>step</th>'
           + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>"]
    prev = None
    typed = trace.present is not None
    for i, st in enumerate(states):
        action = trace.start_label if i == 0 else trace.labels[i - 1]
        cells = [f'<td class="step"><span class="n">{i}</span><br>{escape(action)}</td>']
        for n in names:
            old = prev.get(n) if prev is not None else None
            changed = prev is not None and old != st.get(n)
            cls = ' class="changed"' if changed else ""
            cell = (escape(show(st.get(n))) if typed  # a typed value: TLA+'s notation
                    else _cell(st.get(n), old if changed else None))
            cells.append(f"<td{cls}>{cell}</td>")
        loop = trace.meta.get("loop") if trace.kind == "liveness" else None
        row_cls = ' class="cycle"' if loop is not None and i >= loop else ""
        out.append(f"<tr{row_cls}>{''.join(cells)}</tr>")
        prev = st
    out.append("</table>")
    verdict = escape(ending(trace)[:-1])
    if trace.property is not None:
        verdict = verdict.replace(escape(trace.property), f"<b>{escape(trace.property)}</b>",
                                  1)
    if description:
        verdict += f": {escape(description)}"
    reached = " reached" if trace.kind == "reachable" else ""
    out.append(f'<div class="verdict{reached}">{verdict}.</div>')
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def lasso_note(trace: Trace) -> str:
    """The paragraph that says a page shows a lasso, and where its cycle is."""
    return (f'<p class="lasso">A <b>lasso</b>: {escape(ending(trace))} The rows marked on the '
            "left are the cycle.</p>")


def page(trace: Trace, description: str = "") -> str:
    """The trace as one HTML document: the protocol's view, or the generic table."""
    views = trace.views
    if views.html is not None and trace.kind != "domain":
        return views.html(trace, headline(trace), description)
    return generic_page(trace, description)


def describe(spec: Spec, name: str) -> str:
    """The doc line of ``spec``'s property ``name`` ('' if none)."""
    for group in (spec.invariants, spec.action_properties, spec.reachables, spec.liveness):
        for p in group:
            if p.name == name:
                return p.doc
    return ""
