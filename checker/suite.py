"""The scenario suite: run named scenarios and compare what they find with what they expect.

Every scenario is explored in full (the shortest violation of each property, as with
``--continue``). Its counterexamples are written under ``<out>/<scenario>/`` (ITF JSON, text and
HTML), and every way the run differs from the scenario's expectations becomes a mismatch that
names the scenario, the property, what was expected and what was found.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hwcheck.checker.engines.options import Options
from hwcheck.checker.protocols import build
from hwcheck.checker.run import Report, check
from hwcheck.checker.traces.output import MARKER, TRACE_SUFFIXES  # noqa: E402,F401
from hwcheck.spec.protocol import HOLDS, Protocol, Scenario


@dataclass
class Row:
    """One property of one scenario: expected against found."""

    scenario: str
    prop: str
    kind: str  # invariant | action | reachable
    expected: str  # "holds", "violated in 8", "reached", "-" (no expectation)
    found: str  # "holds", "violated", "unknown", "reached", "unreached", "-" (not checked)
    length: int | None
    ok: bool
    why: str = ""  # the mismatch, in words


@dataclass
class ScenarioResult:
    scenario: Scenario
    report: Report | None
    rows: list[Row] = field(default_factory=list)

    @property
    def mismatches(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]

    @property
    def states(self) -> int:
        return self.report.exploration.distinct if self.report else 0

    @property
    def seconds(self) -> float:
        return self.report.exploration.seconds if self.report else 0.0


def _expected_text(want: Any) -> str:
    return HOLDS if want == HOLDS else f"violated in {want}"


def compare(scenario: Scenario, report: Report) -> list[Row]:
    """The rows of one scenario's run, each marked ok or with the reason it is not."""
    spec = report.spec
    outcomes = {o.name: o for o in report.outcomes}
    rows = []
    checked = [(p.name, "invariant") for p in spec.invariants]
    checked += [(p.name, "action") for p in spec.action_properties]
    checked += [(p.name, "liveness") for p in spec.liveness]
    for name, kind in checked:
        want = scenario.expected(name)
        o = outcomes.get(name)
        found = o.status if o else "-"
        length = o.length if o else None
        if want is None:
            rows.append(Row(scenario.name, name, kind, "-", found, length, False,
                            "the scenario has no expectation for it"))
            continue
        ok = (found == HOLDS) if want == HOLDS else (found == "violated" and length == want)
        why = ""
        if not ok:
            got = found if found != "violated" else f"violated in {length}"
            why = f"expected {_expected_text(want)}, found {got}"
        rows.append(Row(scenario.name, name, kind, _expected_text(want), found, length, ok, why))
    known = {n for n, _ in checked}
    for name in sorted(set(scenario.expect) - known):
        rows.append(Row(scenario.name, name, "?", _expected_text(scenario.expect[name]), "-",
                        None, False, "the model has no such property"))
    reachables = [r.name for r in spec.reachables]
    for name in reachables:
        o = outcomes.get(name)
        found = o.status if o else "-"
        want = name in scenario.reached
        ok = found == "reached" or not want
        why = "" if ok else (f"expected reached, found {found} (the properties that hold may "
                             "hold vacuously)")
        rows.append(Row(scenario.name, name, "reachable", "reached" if want else "-", found,
                        o.length if o else None, ok, why))
    for name in sorted(set(scenario.reached) - set(reachables)):
        rows.append(Row(scenario.name, name, "reachable", "reached", "-", None, False,
                        "the model has no such reachability check"))
    ex = report.exploration
    if scenario.states is not None and ex.complete and ex.distinct != scenario.states:
        rows.append(Row(scenario.name, "(states)", "-", f"{scenario.states:,}", f"{ex.distinct:,}",
                        None, False, f"expected {scenario.states:,} distinct states, found "
                                     f"{ex.distinct:,}"))
    return rows


def run_scenario(protocol: Protocol, scenario: Scenario, out: Path | None = None,
                 report: Callable[[str], None] | None = None, engine: str = "local",
                 **engine_opts: Any) -> ScenarioResult:
    """Explore ``scenario`` of ``protocol`` in full; write its counterexamples under
    ``out/<name>``."""
    opts = Options(properties=None, reachability=True, stop_at_violation=False, report=report)
    spec = build(protocol, scenario.params)
    rep = check(spec, opts, engine=engine, out=out, run_name=scenario.name, **engine_opts)
    rows = compare(scenario, rep)
    if not rep.exploration.complete:
        rows.append(Row(scenario.name, "(exploration)", "-", "complete", "incomplete", None,
                        False, f"exploration incomplete: {rep.exploration.stop_reason}"))
    return ScenarioResult(scenario, rep, rows)


# -- the table -----------------------------------------------------------------------------------

COLUMNS = (("scenario", 20), ("property", 18), ("expected", 15), ("found", 10), ("length", 6),
           ("states", 11), ("seconds", 7))


def header() -> str:
    return "  ".join(n.ljust(w) for n, w in COLUMNS).rstrip()


def lines(result: ScenarioResult) -> list[str]:
    """The table rows of one scenario; a mismatch is flagged at the end of its row."""
    out = []
    for row in result.rows:
        cells = [row.scenario, row.prop, row.expected, row.found,
                 "-" if row.length is None else str(row.length), f"{result.states:,}",
                 f"{result.seconds:.1f}"]
        text = "  ".join(c.ljust(w) for c, (_, w) in zip(cells, COLUMNS)).rstrip()
        out.append(text + ("" if row.ok else "  MISMATCH"))
    return out


def mismatch_line(row: Row) -> str:
    return f"mismatch: {row.scenario}: {row.prop}: {row.why}"


def as_json(result: ScenarioResult) -> dict[str, Any]:
    """One scenario's result in ``suite --json``."""
    rep = result.report
    return {"scenario": result.scenario.name, "ok": not result.mismatches,
            "distinct": result.states, "seconds": round(result.seconds, 3),
            "verdict": rep.verdict if rep is not None else "unknown",
            "rows": [{"property": r.prop, "kind": r.kind, "expected": r.expected,
                      "found": r.found, "length": r.length, "ok": r.ok} for r in result.rows]}
