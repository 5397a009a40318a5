"""The kill matrix as a self-contained HTML page (``<out>/<run>/mutants.html``)."""

from __future__ import annotations

from html import escape

from hwcheck.checker.mutate.run import KILLED, MutationReport

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px;
       color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
p.params { font-family: monospace; color: #555; margin: 0 0 12px 0; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0 16px 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
th.prop { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; }
td.k { background: #e8f6f3; text-align: center; }
tr.survived td { background: #fdecea; }
tr.equivalent td, tr.unknown td { color: #777; }
td.diff { font-family: monospace; }
"""


def page(rep: MutationReport, params_line: str) -> str:
    title = f"Mutants of {rep.spec.name}: kill rate {rep.kill_rate:.1%}"
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{escape(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
           f"<h1>{escape(title)}</h1>", f'<p class="params">{escape(params_line)}</p>',
           f"<p>{len(rep.results)} mutants: {rep.count('killed')} killed, "
           f"{rep.count('survived')} survived, {rep.count('equivalent')} equivalent at this size "
           f"(the original's state and transition counts), {rep.count('unknown')} unknown. The "
           f"original has {rep.original.distinct:,} states.</p>",
           "<table><tr><th>operator</th><th>killed</th><th>of</th></tr>"]
    for op, (k, n) in sorted(rep.by_operator().items()):
        out.append(f"<tr><td>{escape(op)}</td><td>{k}</td><td>{n}</td></tr>")
    out.append("</table>")
    head = "".join(f'<th class="prop">{escape(p)}</th>' for p in rep.properties)
    out.append(f"<table><tr><th>#</th><th>action</th><th>operator</th><th>change</th>"
               f"<th>status</th>{head}<th>states</th></tr>")
    for r in rep.results:
        m = r.mutant
        cells = "".join(f'<td class="k">{r.hits[p]}</td>' if p in r.hits else
                        '<td class="k">unreached</td>' if p in r.unreached else "<td></td>"
                        for p in rep.properties)
        status = r.status + (f" ({r.escalated})" if r.escalated else "")
        out.append(f'<tr class="{r.status}" data-mutant="{m.id}"><td>{m.id}</td>'
                   f"<td>{escape(m.action)}</td><td>{escape(m.operator)}</td>"
                   f'<td class="diff">{escape(m.before)} &rarr; {escape(m.after)}</td>'
                   f"<td>{escape(status)}</td>{cells}<td>{r.distinct:,}</td></tr>")
    out += ["</table>", "<p>A number is the length of the shortest violation of that property "
            f"in the mutant (each {KILLED} mutant's shortest one replayed through the "
            "interpreter); <i>unreached</i>: a reachability check the original reaches and the "
            "mutant does not.</p>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
