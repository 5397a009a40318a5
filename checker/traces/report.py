"""The suite report: ``<out>/index.html``, one self-contained page over every scenario of a suite.

For each scenario: its story, its parameters, the verdict of the run against the scenario's
expectations, its counts and time, and per property the expected and found verdicts with links
to the trace pages the run wrote (``<scenario>/<Property>.html``, ``.txt``, ``.itf.json``).

A suite run often covers a few scenarios (``hwcheck suite --scenario NAME``): each run's results
are merged into ``<out>/.hwcheck-suite.json``, keyed by scenario, and the page is drawn from
that file, so regenerating one scenario's traces updates its section and keeps the others. A
scenario the protocol no longer has is dropped; one never run is listed as such. The page has
inline CSS, no script and nothing fetched: it opens from the file system.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hwcheck.checker.traces.output import write_atomic

if TYPE_CHECKING:
    from hwcheck.checker.suite import ScenarioResult

INDEX = "index.html"
STATE = ".hwcheck-suite.json"
SUFFIXES = (".html", ".txt", ".itf.json")

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px;
       color: #222; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 6px 0; }
h2 { font-size: 16px; margin: 0; }
p.summary { font-size: 14px; margin: 0 0 14px 0; }
nav ul { columns: 3; font-size: 13px; padding-left: 18px; }
section.scenario { border: 1px solid #ddd; border-left: 6px solid #2a9d8f; border-radius: 4px;
                   padding: 10px 14px; margin: 14px 0; }
section.scenario.mismatch { border-left-color: #d00; }
section.scenario.notrun { border-left-color: #bbb; color: #777; }
.story { font-size: 13px; margin: 4px 0; }
.params { font-family: monospace; font-size: 12px; color: #555; margin: 2px 0 6px 0; }
.figures { font-size: 13px; margin: 4px 0 8px 0; }
.badge { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 12px;
         font-weight: bold; color: #fff; background: #2a9d8f; margin-left: 6px; }
.badge.violated { background: #e76f51; }
.badge.mismatch { background: #d00; }
.badge.notrun { background: #aaa; }
table.props { border-collapse: collapse; font-size: 13px; }
table.props th, table.props td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
table.props th { background: #f4f4f4; }
tr.bad td { background: #fdecea; }
td.found.violated { color: #b00; font-weight: bold; }
td.links a { margin-right: 6px; }
details.coverage { font-size: 13px; margin-top: 8px; }
"""


def merge(out: Path, protocol: str, order: list[str], entries: list[dict[str, Any]],
          name: str = "") -> dict[str, Any]:
    """Fold this run's ``entries`` into ``<out>/.hwcheck-suite.json`` (a file of another
    protocol, or one that cannot be read, is started afresh); returns the merged record."""
    path = Path(out) / STATE
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(old, dict) or old.get("protocol") != protocol \
                or not isinstance(old.get("scenarios"), dict):
            old = None
    except (OSError, ValueError):
        old = None
    scenarios = dict(old["scenarios"]) if old else {}
    for e in entries:
        scenarios[e["scenario"]] = e
    merged = {"protocol": protocol, "name": name or protocol, "order": list(order),
              "scenarios": {k: v for k, v in scenarios.items() if k in order}}
    write_atomic(path, json.dumps(merged, indent=1, sort_keys=True) + "\n")
    return merged


def entry(result: ScenarioResult, params_line: str) -> dict[str, Any]:
    """One scenario's result (a ``suite.ScenarioResult``) as the report records it."""
    sc, rep = result.scenario, result.report
    ex = rep.exploration if rep is not None else None
    files = {}
    if rep is not None:
        for o in rep.outcomes:
            if o.files:
                files[o.name] = [Path(f).name for f in o.files]
    return {
        "scenario": sc.name, "story": sc.story, "bug": sc.bug, "params": dict(sc.params),
        "params_line": params_line, "ok": not result.mismatches,
        "verdict": rep.verdict if rep is not None else "unknown",
        "distinct": result.states, "expected_states": sc.states,
        "generated": ex.generated if ex else 0, "depth": ex.depth if ex else 0,
        "seconds": round(result.seconds, 3), "complete": bool(ex and ex.complete),
        "rows": [{"property": r.prop, "kind": r.kind, "expected": r.expected, "found": r.found,
                  "length": r.length, "ok": r.ok, "why": r.why} for r in result.rows],
        "files": files,
        "coverage": rep.coverage() if rep is not None else None,
    }


def write(out: Path, protocol: str, order: list[str], entries: list[dict[str, Any]],
          name: str = "") -> Path:
    """Merge this run's entries and write ``<out>/index.html``; returns its path.
    ``protocol``: where the protocol comes from (a file of another one is started afresh);
    ``name``: how the page names it."""
    merged = merge(out, protocol, order, entries, name)
    return write_atomic(Path(out) / INDEX, page(merged))


def page(merged: dict[str, Any]) -> str:
    order, scenarios = merged["order"], merged["scenarios"]
    ran = [scenarios[n] for n in order if n in scenarios]
    bad = [r for e in ran for r in e["rows"] if not r["ok"]]
    states = sum(e["distinct"] for e in ran)
    seconds = sum(e["seconds"] for e in ran)
    checks = sum(len(e["rows"]) for e in ran)
    title = f"hwcheck suite: {merged.get('name') or merged['protocol']}"
    verdict = "ok" if not bad else f"{len(bad)} mismatch{'es' if len(bad) != 1 else ''}"
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{escape(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
           f"<h1>{escape(title)}</h1>",
           f'<p class="summary" id="summary" data-verdict="{"ok" if not bad else "mismatch"}">'
           f"<b>{escape(verdict)}</b>; {len(ran)} of {len(order)} scenarios run, {checks} "
           f"checks, {states:,} states, {seconds:.1f} s of exploration.</p>",
           "<nav><ul>"]
    for name in order:
        e = scenarios.get(name)
        mark = "" if e is None else (" &#10003;" if e["ok"] else " &#10007;")
        out.append(f'<li><a href="#sc-{escape(name)}">{escape(name)}</a>{mark}</li>')
    out.append("</ul></nav>")
    for name in order:
        e = scenarios.get(name)
        out.append(_section(name, e))
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def _section(name: str, e: dict[str, Any] | None) -> str:
    if e is None:
        return (f'<section class="scenario notrun" id="sc-{escape(name)}" '
                f'data-scenario="{escape(name)}"><h2>{escape(name)}'
                '<span class="badge notrun">not run</span></h2>'
                "<p class=\"story\">Not run into this folder yet (`hwcheck suite --scenario "
                f"{escape(name)}`).</p></section>")
    cls = "" if e["ok"] else " mismatch"
    badge = ('<span class="badge mismatch">mismatch</span>' if not e["ok"] else
             f'<span class="badge{" violated" if e["verdict"] == "violated" else ""}">'
             f'{escape(e["verdict"])} as expected</span>')
    states = f"{e['distinct']:,} states"
    if e.get("expected_states") is not None:
        states += (" (as pinned)" if e["expected_states"] == e["distinct"]
                   else f" (pinned: {e['expected_states']:,})")
    parts = [f'<section class="scenario{cls}" id="sc-{escape(name)}" '
             f'data-scenario="{escape(name)}" data-ok="{str(e["ok"]).lower()}">',
             f"<h2>{escape(name)}{badge}</h2>",
             f'<p class="story">{escape(e["story"])}'
             + (f" <i>About: {escape(e['bug'])}.</i>" if e.get("bug", "-") != "-" else "")
             + "</p>",
             f'<p class="params">{escape(e["params_line"])}</p>',
             f'<p class="figures">{states}, {e["generated"]:,} transitions, depth {e["depth"]}, '
             f'{e["seconds"]:.2f} s{"" if e["complete"] else "; exploration incomplete"}</p>',
             '<table class="props"><tr><th>property</th><th>kind</th><th>expected</th>'
             "<th>found</th><th>trace</th></tr>"]
    for r in e["rows"]:
        found = r["found"] + (f" in {r['length']}" if r["found"] == "violated" else "")
        files = e["files"].get(r["property"], [])
        links = " ".join(
            f'<a class="trace" href="{escape(name)}/{escape(f)}">{escape(_kind_of(f))}</a>'
            for f in sorted(files, key=_rank))
        row_cls = "" if r["ok"] else ' class="bad"'
        why = f' title="{escape(r["why"])}"' if r.get("why") else ""
        parts.append(f"<tr{row_cls}{why} data-property=\"{escape(r['property'])}\">"
                     f"<td>{escape(r['property'])}</td><td>{escape(r['kind'])}</td>"
                     f"<td>{escape(r['expected'])}</td>"
                     f'<td class="found {escape(r["found"])}">{escape(found)}</td>'
                     f'<td class="links">{links}</td></tr>')
    parts.append("</table>")
    if e.get("coverage"):
        parts.append(_coverage(e["coverage"]))
    parts.append("</section>")
    return "\n".join(parts)


def _coverage(cov: dict[str, Any]) -> str:
    """The scenario's action coverage: per action, the states that enable it and the new states
    it was the first to reach; an action never enabled is marked (what it should exercise is
    vacuous)."""
    cells = []
    for a, c in cov.items():
        cls = ' class="bad"' if c["enabled"] == 0 else ""
        cells.append(f"<tr{cls} data-action=\"{escape(a)}\"><td>{escape(a)}</td>"
                     f"<td>{c['enabled']:,}</td><td>{c['new']:,}</td></tr>")
    return ('<details class="coverage"><summary>action coverage</summary>'
            '<table class="props"><tr><th>action</th><th>states enabling it</th>'
            "<th>new states it reached first</th></tr>" + "".join(cells) + "</table></details>")


def _kind_of(f: str) -> str:
    for s in SUFFIXES:
        if f.endswith(s):
            return {".html": "page", ".txt": "text", ".itf.json": "ITF"}[s]
    return f


def _rank(f: str) -> int:
    return next((i for i, s in enumerate(SUFFIXES) if f.endswith(s)), len(SUFFIXES))
