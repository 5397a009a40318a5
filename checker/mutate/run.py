"""`hwcheck mutate`: how good is the property set? Every mutant of the spec's actions checked
exhaustively on one compiled schema kernel, and the kill matrix.

A mutant is *killed* when some invariant or action property is violated (or a step leaves the
declared domains), with the shortest violation's length per property, or when a reachability
check the original reaches is no longer reached (the spec's guard against vacuity notices);
*survived* when every property holds on its whole state space; *equivalent at this size* when
it also has exactly the original's state and transition counts (most likely it behaves the
same: no property can tell); *unknown* when its exploration hit the state limit first. Each
kill's shortest violation is replayed through the interpreter (on the schema running that
mutant) before it counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.mutate.mutants import VAR, Mutant, schema, schema_for
from hwcheck.checker.search.exploration import Exploration
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.traces.trace import Trace, from_path
from hwcheck.spec.lang import Spec

KILLED, SURVIVED, EQUIVALENT, UNKNOWN = "killed", "survived", "equivalent", "unknown"


@dataclass
class MutantResult:
    mutant: Mutant
    status: str
    distinct: int
    generated: int
    hits: dict[str, int] = field(default_factory=dict)  # property -> shortest violation
    unreached: list[str] = field(default_factory=list)  # reachability checks no longer reached
    trace: Trace | None = None  # the shortest kill, replayed
    seconds: float = 0.0
    escalated: str = ""  # with --escalate: what the next size found

    def as_json(self) -> dict[str, Any]:
        m = self.mutant
        return {"id": m.id, "action": m.action, "operator": m.operator, "before": m.before,
                "after": m.after, "status": self.status, "distinct": self.distinct,
                "generated": self.generated, "violations": self.hits,
                "unreached": self.unreached,
                "escalated": self.escalated or None}


@dataclass
class MutationReport:
    spec: Spec
    properties: list[str]  # the matrix's columns: invariants, action properties
    original: Exploration
    results: list[MutantResult]
    seconds: float
    compile_seconds: float

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def kill_rate(self) -> float:
        """Killed over the mutants that are not (probably) equivalent, nor unknown."""
        denom = self.count(KILLED) + self.count(SURVIVED)
        return self.count(KILLED) / denom if denom else 1.0

    def by_operator(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for r in self.results:
            k, n = out.get(r.mutant.operator, (0, 0))
            out[r.mutant.operator] = (k + (r.status == KILLED), n + (r.status != EQUIVALENT))
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "command": "mutate", "protocol": self.spec.source or self.spec.name,
            "params": dict(self.spec.params), "mutants": len(self.results),
            "killed": self.count(KILLED), "survived": self.count(SURVIVED),
            "equivalent": self.count(EQUIVALENT), "unknown": self.count(UNKNOWN),
            "kill_rate": round(self.kill_rate, 4), "original_distinct": self.original.distinct,
            "properties": self.properties, "seconds": round(self.seconds, 3),
            "results": [r.as_json() for r in self.results],
            "verdict": "holds" if self.original.verdict == "holds" else "violated",
        }


def _running(kernel: Kernel, k: int) -> Kernel:
    """The schema's kernel starting from the initial states with ``mutant = k`` (a shallow copy
    whose cached initial states are replaced: the compiled module is shared)."""
    rows = kernel.initials.copy()
    rows[:, kernel.layout.offsets[VAR]] = k
    m = object.__new__(Kernel)
    m.__dict__.update(kernel.__dict__)
    m.__dict__["initials"] = rows
    m.__dict__.pop("starts", None)  # made again from the new initial states
    return m


def mutate(spec: Spec, only: list[int] | None = None, max_states: int | None = None,
           report: Callable[[str], None] | None = None) -> MutationReport:
    """Check every mutant of ``spec`` (or those numbered in ``only``) exhaustively."""
    t0 = time.perf_counter()
    sch, found = schema(spec, only)  # only those mutants compiled in
    kernel = Kernel(sch)
    kernel.warm("local")
    compiled = time.perf_counter() - t0
    props = [n for n, _, k in kernel.props.state + kernel.props.transition]
    opts = Options(stop_at_violation=False)
    original = LocalEngine(_running(kernel, 0), opts, workers=1).run()
    limit = max_states or max(10 * original.distinct, 100_000)
    results = []
    todo = [m for m in found if only is None or m.id in only]
    for i, m in enumerate(todo):
        t = time.perf_counter()
        ex = LocalEngine(_running(kernel, m.id),
                         Options(stop_at_violation=False, max_states=limit), workers=1).run()
        hits = {name: h.length for name, h in ex.hits.items() if h.kind != "reachable"}
        bad = {n: h for n, h in original.hits.items() if h.kind != "reachable"}
        new = {n: ln for n, ln in hits.items() if n not in bad or bad[n].length != ln}
        unreached = [n for n, h in original.hits.items() if h.kind == "reachable"
                     and n not in ex.hits] if ex.complete else []
        if new or unreached:
            status = KILLED
        elif not ex.complete:
            status = UNKNOWN
        elif (ex.distinct, ex.generated) == (original.distinct, original.generated):
            status = EQUIVALENT
        else:
            status = SURVIVED
        res = MutantResult(m, status, ex.distinct, ex.generated, new, unreached,
                           seconds=time.perf_counter() - t)
        if new:
            res.trace = _kill_trace(sch, m.id, ex, new)
        results.append(res)
        if report is not None and (i % 20 == 0 or i == len(todo) - 1):
            report(f"mutant {i + 1}/{len(todo)}: {sum(r.status == KILLED for r in results)} "
                   "killed so far")
    return MutationReport(spec, props, original, results, time.perf_counter() - t0, compiled)


def _kill_trace(sch: Spec, k: int, ex: Exploration, which: dict[str, int]) -> Trace:
    """The shortest of the kills, replayed through the interpreter on the schema running
    mutant ``k`` (a kill that does not replay is an error, never a kill)."""
    name = min(which, key=lambda n: (which[n], n))
    hit = ex.hits[name]
    assert hit.path is not None  # a complete run rebuilds every path
    spec_k = schema_for(sch, k)
    return from_path(spec_k, Interpreter(spec_k), name, hit.kind, "mutate", hit.path)
