"""The reference explicit-state search over the evaluator, with TLC's conventions.

Plain Python and slow (a state at a time, every value a Python object), for small models: the
oracle the compiled path is tested against, as `checker/semantics/interp.py` is for the kernel,
and the explorer that discovers the values each variable takes (`Result.domains`). It counts as
TLC does: every way Init and Next are satisfied is a generated state (the initial ones
included), the depth counts the initial states' level, a successor outside a CONSTRAINT or
ACTION_CONSTRAINT is generated but neither kept nor checked, a state is deadlocked when no way
of Next is satisfied in it (CHECK_DEADLOCK, on unless the cfg or the caller turns it off), VIEW
tells states apart by the view's value and SYMMETRY by the orbit under the permutations.
Temporal properties (PROPERTY) are not checked here: a run that has them reports them unchecked
and its verdict is unknown, never holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cfg import Config, parse_cfg_file
from .evaluate import Evaluator, Label
from .modules import Defn, Root, load
from .syntax import (
    And,
    Bool,
    Expr,
    Fairness,
    OpApp,
    OpDef,
    Pos,
    Quant,
    StepAction,
    Temporal,
    fail,
)
from .values import Fcn, ModelValue, Value, key, show

State = dict[str, Value]
FIRST = "stopped at the first violation"  # the stop reason of ``stop_at_first``


@dataclass(frozen=True)
class Step:
    """One state of a trace and the step that reached it (None for the initial state)."""

    label: Label | None
    state: State


@dataclass
class Result:
    distinct: int = 0
    generated: int = 0  # TLC's: every way Init and Next are satisfied
    depth: int = 0  # TLC's: the levels, the initial states' counted
    violations: dict[str, list[Step]] = field(default_factory=dict)  # invariant: trace
    deadlock: list[Step] | None = None
    unchecked: tuple[str, ...] = ()  # temporal properties this search does not decide
    complete: bool = True  # False when a limit stopped it
    stop_reason: str = ""  # why it stopped before the end ('' when it did not)
    init_generated: int = 0  # the ways Init is satisfied (part of ``generated``)
    init_states: int = 0  # the distinct initial states
    # variable: the values seen (a boolean b as the pair (True, b), so that TRUE and 1 stay
    # apart in one Python set; `values` gives them back as TLA+ values)
    domains: dict[str, set[Any]] = field(default_factory=dict)

    def values(self, variable: str) -> list[Value]:
        """The values ``variable`` took, in canonical order."""
        return sorted((v[1] if type(v) is tuple else v for v in self.domains[variable]),
                      key=key)

    @property
    def verdict(self) -> str:
        if self.violations or self.deadlock:
            return "violated"
        if self.unchecked or not self.complete:
            return "unknown"
        return "holds"


@dataclass
class Model:
    """What the cfg asks of a module: its behaviours and what to check on them."""

    root: Root
    ev: Evaluator
    init: Expr
    next: Expr
    invariants: list[Defn]
    properties: list[str]
    constraints: list[Defn]
    action_constraints: list[Defn]
    view: Defn | None
    symmetry: list[dict[Value, Value]]
    check_deadlock: bool
    behaviour: bool = True  # False: the cfg names no SPECIFICATION or INIT/NEXT (no state)
    specification: Defn | None = None  # the cfg's SPECIFICATION (its fairness), if it names one


def model(tla: str | Path, cfg: str | Path | Config | None = None) -> Model:
    """The module at ``tla`` with its cfg (by default the .tla's name with .cfg, as TLC's)."""
    path = Path(tla)
    if cfg is None:
        cfg = path.with_suffix(".cfg")
    conf = cfg if isinstance(cfg, Config) else parse_cfg_file(cfg)
    root = load(path, conf)
    ev = Evaluator(root)
    for a in root.scope.module.assumptions:
        if ev.value(a, {}) is not True:
            raise fail(a.pos, "this ASSUME is false with the cfg's constants")

    def named(item: tuple[str, Pos], what: str) -> Defn:
        name, pos = item
        entry = root.scope.defs.get(name)
        if not isinstance(entry, Defn) or not isinstance(entry.d, OpDef) or entry.d.params:
            raise fail(pos, f"{what} {name}: the module defines no {name} without parameters")
        return entry

    behaviour = True
    spec: Defn | None = None
    if conf.specification is not None:
        spec = named(conf.specification, "SPECIFICATION")
        init, nxt = _split_spec(spec, ev)
    elif conf.init is not None and conf.next is not None:
        i, n = named(conf.init, "INIT"), named(conf.next, "NEXT")
        init, nxt = OpApp(i.d.pos, i.name), OpApp(n.d.pos, n.name)
    else:  # no behaviour: TLC checks the ASSUMEs and finds no state (Init is FALSE)
        init = nxt = Bool(Pos(conf.file, 1, 1), False)
        behaviour = False
    symmetry: list[dict[Value, Value]] = []
    if conf.symmetry is not None:
        perms = ev.value(named(conf.symmetry, "SYMMETRY").d.body, {})
        if not isinstance(perms, frozenset) or not all(isinstance(p, Fcn) for p in perms):
            raise fail(conf.symmetry[1], "SYMMETRY must name a set of permutations "
                                         "(Permutations(S))")
        symmetry = [p.map for p in perms]
    return Model(
        root, ev, init, nxt,
        [named(i, "INVARIANT") for i in conf.invariants],
        [named(p, "PROPERTY").name for p in conf.properties],
        [named(c, "CONSTRAINT") for c in conf.constraints],
        [named(c, "ACTION_CONSTRAINT") for c in conf.action_constraints],
        named(conf.view, "VIEW") if conf.view else None, symmetry, conf.check_deadlock,
        behaviour, spec)


def _split_spec(spec: Defn, ev: Evaluator) -> tuple[Expr, Expr]:
    """Init and Next of ``Init /\\ [][Next]_vars /\\ fairness`` (operators unfolded)."""
    init: list[Expr] = []
    nxt: list[Expr] = []

    def walk(e: Expr, depth: int) -> None:
        if isinstance(e, And):
            for x in e.items:
                walk(x, depth)
        elif isinstance(e, Temporal) and e.op == "[]" and isinstance(e.args[0], StepAction) \
                and e.args[0].box:
            nxt.append(e.args[0].action)
        elif isinstance(e, (Fairness, Temporal, Quant)) and _fair(e):
            pass  # fairness and other liveness conditions: the liveness checks' business
        elif isinstance(e, OpApp) and not e.args and depth < 8:
            entry = spec.scope.defs.get(e.name)
            if isinstance(entry, Defn) and isinstance(entry.d, OpDef) and not entry.d.params \
                    and _temporal(entry.d.body, spec, depth):
                walk(entry.d.body, depth + 1)
            else:
                init.append(e)
        elif isinstance(e, Temporal):
            raise fail(e.pos, "unsupported in a SPECIFICATION: a temporal formula other than "
                              "[][Next]_vars and fairness")
        else:
            init.append(e)

    walk(spec.d.body, 0)
    if len(nxt) != 1 or not init:
        raise fail(spec.d.pos, f"SPECIFICATION {spec.name}: expected Init /\\ [][Next]_vars "
                               "(with fairness conjuncts)")
    return (init[0] if len(init) == 1 else And(init[0].pos, tuple(init))), nxt[0]


def _fair(e: Expr) -> bool:
    """A liveness condition of the specification (fairness, ``<>[][A]_v``, ...): it does not
    change the reachable states, which is all this search reads."""
    while isinstance(e, Quant):
        e = e.body
    if isinstance(e, And):
        return all(_fair(x) for x in e.items)
    if isinstance(e, Temporal):
        return e.op != "[]" or not (isinstance(e.args[0], StepAction) and e.args[0].box)
    return isinstance(e, Fairness)


def _temporal(e: Expr, spec: Defn, depth: int) -> bool:
    """Whether a definition's body is part of the specification's temporal structure."""
    if isinstance(e, (Temporal, Fairness)):
        return True
    if isinstance(e, Quant):
        return _fair(e)
    if isinstance(e, And):
        return any(_temporal(x, spec, depth) for x in e.items)
    if isinstance(e, OpApp) and not e.args and depth < 8:
        entry = spec.scope.defs.get(e.name)
        return isinstance(entry, Defn) and isinstance(entry.d, OpDef) and \
            _temporal(entry.d.body, spec, depth + 1)
    return False


def _permute(v: Value, p: dict[Value, Value]) -> Value:
    if isinstance(v, ModelValue):
        return p.get(v, v)
    if isinstance(v, frozenset):
        return frozenset(_permute(x, p) for x in v)
    if isinstance(v, Fcn):
        return Fcn({_permute(k, p): _permute(x, p) for k, x in v.map.items()})
    return v


def explore(m: Model, *, check_deadlock: bool | None = None, stop_at_first: bool = False,
            max_states: int | None = None, limit: Callable[[int], str] | None = None,
            interrupted: Callable[[BaseException], str] | None = None) -> Result:
    """Breadth-first search of every reachable state (``check_deadlock`` None: the cfg's).
    ``stop_at_first``: stop at the first violation, as TLC without -continue. ``limit``,
    asked with the distinct states found before each state is expanded, says why to stop
    ('' to go on); ``interrupted``: Ctrl-C, SIGTERM (a KeyboardInterrupt) and MemoryError
    stop the search with what it found, the reason this gives (without it they propagate).
    A stopped search is incomplete, with its ``stop_reason``."""
    res = Result(unchecked=tuple(m.properties), domains={v: set() for v in m.root.variables})
    if interrupted is None:
        _search(m, res, check_deadlock, stop_at_first, max_states, limit)
        return res
    try:
        _search(m, res, check_deadlock, stop_at_first, max_states, limit)
    except (KeyboardInterrupt, MemoryError) as e:
        res.complete = False
        res.stop_reason = interrupted(e)
    return res


def _search(m: Model, res: Result, check_deadlock: bool | None, stop_at_first: bool,
            max_states: int | None, limit: Callable[[int], str] | None) -> None:
    ev = m.ev
    variables = m.root.variables
    deadlock_check = m.check_deadlock if check_deadlock is None else check_deadlock
    parents: dict[Any, tuple[Any, Label | None]] = {}
    states: dict[Any, State] = {}

    def fingerprint(s: State) -> Any:
        if m.view is not None:
            base: Any = ev.value(m.view.d.body, s)
            if m.symmetry:
                return min((_permute(base, p) for p in m.symmetry), key=key)
            return (True, base) if type(base) is bool else base
        row = tuple((True, s[v]) if type(s[v]) is bool else s[v] for v in variables)
        if m.symmetry:  # the least renaming in the canonical order (a function of the orbit)
            return min((tuple(_permute(x, p) for x in row) for p in m.symmetry),
                       key=lambda r: tuple(map(key, r)))
        return row

    def in_model(s: State) -> bool:
        return all(ev.predicate(c, s) for c in m.constraints)

    def trace(fp: Any) -> list[Step]:
        steps: list[Step] = []
        while fp is not None:
            parent, label = parents[fp]
            steps.append(Step(label, states[fp]))
            fp = parent
        return steps[::-1]

    def check(fp: Any, s: State) -> bool:
        """The invariants on a new state; False when the search must stop."""
        for inv in m.invariants:
            if inv.name not in res.violations and not ev.predicate(inv, s):
                res.violations[inv.name] = trace(fp)
                if stop_at_first:
                    res.complete = False
                    res.stop_reason = FIRST
                    return False
        return True

    def add(s: State, parent: Any, label: Label | None, level: list[State]) -> bool:
        fp = fingerprint(s)
        if fp in parents:
            return True
        parents[fp] = (parent, label)
        states[fp] = s
        level.append(s)
        res.distinct += 1
        for v in variables:
            res.domains[v].add((True, s[v]) if type(s[v]) is bool else s[v])
        return check(fp, s)

    level: list[State] = []
    for s in ev.initial(m.init):
        res.generated += 1
        res.init_generated += 1
        if in_model(s) and not add(s, None, None, level):
            res.depth = 1
            res.init_states = len(level)
            return
    res.init_states = len(level)
    while level:
        res.depth += 1
        if max_states is not None and res.distinct >= max_states:
            res.complete = False
            res.stop_reason = f"reached {max_states:,} states"
            return
        nxt_level: list[State] = []
        for s in level:
            why = limit(res.distinct) if limit is not None else ""
            if why:
                res.complete = False
                res.stop_reason = why
                return
            fp = fingerprint(s)
            any_successor = False
            for label, t in ev.successors(m.next, s):
                any_successor = True
                res.generated += 1
                if not all(ev.predicate(c, s, t) for c in m.action_constraints):
                    continue
                if in_model(t) and not add(t, fp, label, nxt_level):
                    return
            if deadlock_check and not any_successor and res.deadlock is None:
                res.deadlock = trace(fp)
                if stop_at_first:
                    res.complete = False
                    res.stop_reason = FIRST
                    return
        level = nxt_level


def describe(trace: list[Step], variables: tuple[str, ...]) -> str:
    """A trace as text: each step's label, then the state's variables in declaration order."""
    lines = []
    for i, step in enumerate(trace):
        lines.append(f"{i}: {step.label if step.label else 'Init'}")
        lines += [f"  {v} = {show(step.state[v])}" for v in variables]
    return "\n".join(lines)
