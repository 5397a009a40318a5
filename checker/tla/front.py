"""A TLA+ module and its cfg as a `Spec`: the domains found, the module compiled, widened.

`build(tla, cfg)` is what ``hwcheck check --spec FILE.tla`` runs (decision record 0019). Each
variable's values come from, in order:

1. the cfg's invariants (TypeOK), where a conjunct states a finite set for the variable
   (``x \\in S``, ``f \\in [D -> T]``, ``s \\subseteq S``), evaluated with the cfg's constants;
2. the reference search (`explore.py`), up to ``DISCOVER`` distinct states and
   ``DISCOVER_SECONDS`` seconds (or the search the caller ran already: ``found``);
3. *widening*: when that search did not finish, the compiled spec is run on the kernel with
   every write range-checked; a step that leaves a variable's domain gives, through the
   evaluator, every successor of the state it left from, whose values are added (an integer
   range doubled past the new value), and the run starts again. The spec returned is the
   first with which a whole run left no domain: a guessed domain costs runs, never a count.

The domains found are kept (``~/.cache/hwcheck/tla``, keyed by the module's folder and the
cfg), so that a worker process or a later command rebuilds the same spec without searching.

A caller that bounds the run (``Limits``: ``check``'s --max-seconds, --max-states,
--max-memory) has the preparation stop between its steps with ``Stopped``; Ctrl-C and SIGTERM
reach it as KeyboardInterrupt. A numba compile in progress is not interrupted: the limits are
asked before and after it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .cfg import parse_cfg_file
from .compile import Compiled, Shape, compile_model
from .evaluate import Ctx
from .explore import Model, Result, explore, model
from .modules import Defn
from .syntax import And, Expr, FnSet, OpApp, OpDef, fail
from .values import Fcn, ModelValue, Value, key, show, sorted_values

# the reference search that discovers domains (and for check, chooses the engine): its
# distinct states and seconds at most, as --tla-engine's help and docs/tla.md state them
DISCOVER = 2_000
DISCOVER_SECONDS = 5.0
WIDEN_RUNS = 30  # kernel runs before the widening gives up
TYPED_MAX = 4_096  # the largest finite set a TypeOK conjunct may state for a variable

Say = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


class Stopped(Exception):
    """The preparation of the compiled spec stopped between two of its steps at a limit of
    the run (``reason``: the limit's sentence, ``reached --max-seconds 40``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    """The run's limits the preparation obeys, its clock started at ``start``
    (``time.monotonic()``): the seconds spent preparing count against ``max_seconds``."""

    max_states: int | None = None
    max_seconds: float | None = None
    max_memory: int | None = None
    start: float = 0.0

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def left(self) -> float | None:
        """The seconds ``max_seconds`` leaves (None: no bound)."""
        return None if self.max_seconds is None else max(self.max_seconds - self.elapsed(), 0.0)

    def reached(self, distinct: int = 0) -> str:
        """The limit reached ('' if none), in the search's words."""
        from hwcheck.checker.search.stop import StopRule

        return StopRule(max_states=self.max_states, max_seconds=self.max_seconds,
                        max_memory=self.max_memory).limit(distinct, self.elapsed())

    def check(self) -> None:
        """Between two steps: ``Stopped`` once a time or memory limit is reached."""
        why = self.reached()
        if why:
            raise Stopped(why)


def default_cfg(tla: str | Path) -> Path:
    """TLC's default: the module's name with .cfg."""
    return Path(tla).with_suffix(".cfg")


# -- domains ---------------------------------------------------------------------------------


def typed(m: Model) -> dict[str, list[Value]]:
    """The values the cfg's invariants state for each variable (``x \\in S``, ``f \\in
    [D -> T]``, ``s \\subseteq S`` among their conjuncts), where they are finite sets."""
    out: dict[str, list[Value]] = {}
    for inv in m.invariants:
        for e, sc in _conjuncts(inv.d.body, inv.scope, 0):
            if not (isinstance(e, OpApp) and e.name in ("\\in", "\\subseteq")
                    and len(e.args) == 2):
                continue
            var = e.args[0]
            if not (isinstance(var, OpApp) and not var.args and var.name in sc.state_vars
                    and sc is m.root.scope):
                continue
            values = _typed_values(m, e.name, e.args[1], sc)
            if values is not None and var.name not in out:
                out[var.name] = values
    return out


def _conjuncts(e: Expr, sc: Any, depth: int) -> list[tuple[Expr, Any]]:
    if isinstance(e, And):
        return [x for item in e.items for x in _conjuncts(item, sc, depth)]
    if isinstance(e, OpApp) and not e.args and depth < 20:
        entry = sc.defs.get(e.name)
        if isinstance(entry, Defn) and isinstance(entry.d, OpDef) and not entry.d.params:
            return _conjuncts(entry.d.body, entry.scope, depth + 1)
    return [(e, sc)]


def _constant(m: Model, e: Expr, sc: Any) -> Value | None:
    if not m.ev.state_free(e, sc, set()):
        return None
    try:
        v = m.ev.ev(e, sc, {}, Ctx({}, None))
    except Exception:  # noqa: BLE001 - an infinite set or anything else: not a type here
        return None
    return v if isinstance(v, frozenset) and len(v) <= TYPED_MAX else None


def _typed_values(m: Model, op: str, s: Expr, sc: Any) -> list[Value] | None:
    if op == "\\in" and isinstance(s, FnSet):
        dom, rng = _constant(m, s.domain, sc), _constant(m, s.range, sc)
        if dom is None or rng is None or not dom:
            return None
        return [Fcn({d: r for d in dom}) for r in sorted_values(rng)]
    v = _constant(m, s, sc)
    if v is None:
        return None
    if op == "\\subseteq":
        return [frozenset(), v]
    return sorted_values(v)


def _merge(into: dict[str, list[Value]], more: dict[str, list[Value]]) -> bool:
    """Add ``more``'s values; whether any was new."""
    grew = False
    for var, values in more.items():
        have = {key(v) for v in into.setdefault(var, [])}
        for v in values:
            if key(v) not in have:
                have.add(key(v))
                into[var].append(v)
                grew = True
    return grew


def _doubled(old: list[Value], new: list[Value]) -> list[Value]:
    """Integer values past the old range: the range up to the new value, doubled (of
    integers and of functions to integers; in a value holding records, each record field's
    integers apart: a copy of the new value with the field at the doubled end)."""
    if any(isinstance(v, Fcn) and not all(type(x) is int for x in v.map.values())
           for v in [*old, *new]):
        return _doubled_fields(old, new)
    ints = [x for v in old for x in (v.map.values() if isinstance(v, Fcn) else [v])
            if type(x) is int]
    fresh = [x for v in new for x in (v.map.values() if isinstance(v, Fcn) else [v])
             if type(x) is int]
    if not ints or not fresh:
        return []
    lo, hi = min(ints), max(ints)
    out: list[int] = []
    if max(fresh) > hi:
        out.append(max(fresh) + (max(fresh) - lo + 1))
    if min(fresh) < lo:
        out.append(min(fresh) - (hi - min(fresh) + 1))
    sample = next(iter(new))
    if isinstance(sample, Fcn):
        return [Fcn({k: x for k in sample.map}) for x in out]
    return list(out)


def _leaves(v: Value, path: tuple[Any, ...] = ()) -> Any:
    """Each leaf of ``v`` under its functions and records: its path and value."""
    if isinstance(v, Fcn):
        for k, x in v.map.items():
            yield from _leaves(x, (*path, k))
    else:
        yield path, v


def _place(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """A leaf's place in a shape: a record's fields by name, a function's arguments as one."""
    return tuple(k if isinstance(k, str) else None for k in path)


def _replaced(v: Value, path: tuple[Any, ...], x: Value) -> Value:
    if not path:
        return x
    return Fcn({**v.map, path[0]: _replaced(v.map[path[0]], path[1:], x)})


def _doubled_fields(old: list[Value], new: list[Value]) -> list[Value]:
    """`_doubled` for values holding records: per place of integers (a field, a function's
    elements), a new value past the old range copied with that integer at the doubled end."""
    ranges: dict[tuple[Any, ...], list[int]] = {}
    mixed: set[tuple[Any, ...]] = set()  # a place holding other values (a marker's place)
    stack: list[tuple[tuple[Any, ...], Value]] = [((), v) for v in [*old, *new]]
    while stack:  # a place that holds a function or record in some value
        path, x = stack.pop()
        if isinstance(x, Fcn):
            mixed.add(_place(path))
            stack.extend(((*path, k), y) for k, y in x.map.items())
    for v in old:
        for path, x in _leaves(v):
            if type(x) is int:
                ranges.setdefault(_place(path), []).append(x)
            else:
                mixed.add(_place(path))
    out: list[Value] = []
    for v in new:
        for path, x in _leaves(v):
            place = _place(path)
            if type(x) is not int or place in mixed or place not in ranges:
                continue
            lo, hi = min(ranges[place]), max(ranges[place])
            if x > hi:
                end = x + (x - lo + 1)
            elif x < lo:
                end = x - (hi - x + 1)
            else:
                continue
            out.append(_replaced(v, path, end))
            ranges[place] += [x, end]
    return out


# -- the cache -------------------------------------------------------------------------------


def _cache_file(tla: Path, cfg: Path, root: Path | None) -> Path:
    h = hashlib.sha256()
    for p in [tla, cfg, *sorted(tla.parent.glob("*.tla"))]:
        h.update(str(p).encode())
        try:
            h.update(p.read_bytes())
        except OSError:
            pass
    h.update(Path(__file__).with_name("compile.py").read_bytes())
    if root is None:
        root = Path(os.environ.get("HWCHECK_CACHE") or Path.home() / ".cache" / "hwcheck") / "tla"
    return root / f"{h.hexdigest()[:24]}.json"


def _encode(v: Value) -> Any:
    if isinstance(v, bool):
        return {"b": v}
    if isinstance(v, int):
        return {"i": v}
    if isinstance(v, str):
        return {"s": v}
    if isinstance(v, ModelValue):
        return {"m": v.name}
    if isinstance(v, frozenset):
        return {"set": [_encode(x) for x in sorted_values(v)]}
    if isinstance(v, Fcn):
        return {"fn": [[_encode(k), _encode(x)] for k, x in v.map.items()]}
    raise TypeError(show(v))


def _decode(d: Any) -> Value:
    (tag, x), = d.items()
    if tag == "b" or tag == "i" or tag == "s":
        return x
    if tag == "m":
        return ModelValue(x)
    if tag == "set":
        return frozenset(_decode(y) for y in x)
    return Fcn({_decode(k): _decode(y) for k, y in x})


def _load_cached(path: Path) -> dict[str, list[Value]] | None:
    try:
        raw = json.loads(path.read_text())
        return {var: [_decode(v) for v in vals] for var, vals in raw.items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _store(path: Path, domains: dict[str, list[Value]]) -> None:
    try:
        text = json.dumps({var: [_encode(v) for v in vals] for var, vals in domains.items()})
    except TypeError:
        return  # a value the cache does not write: found again next time
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError:
        pass


# -- building --------------------------------------------------------------------------------


def describe(c: Compiled) -> list[str]:
    """Each variable's stored type, in words."""
    out = []
    for name, enc in c.encodings.items():
        if enc.shape is not None:
            out.append(f"{name} \\in {_shape_words(c, enc.shape)}")
            continue
        if enc.kind == "set":
            what = "a subset of {" + ", ".join(show(m) for m in enc.members) + "}"
            for dom in reversed(enc.dims):
                what = "[{" + ", ".join(show(d) for d in dom) + "} -> " + what + "]"
        else:
            if enc.kind == "atom":
                elem = "{" + ", ".join(show(a) for a in c.atoms) + "}"
            elif enc.kind == "bool":
                elem = "BOOLEAN"
            else:
                elem = f"{enc.lo}..{enc.hi}"
            what = elem
            for dom in reversed(enc.dims):
                what = "[{" + ", ".join(show(d) for d in dom) + "} -> " + what + "]"
        out.append(f"{name} \\in {what}")
    return out


def _shape_words(c: Compiled, sh: Shape) -> str:
    """A stored value's shape as a TLA+ set."""
    if sh.kind == "fn":
        return "[{" + ", ".join(show(d) for d in sh.domain) + "} -> " + \
            _shape_words(c, sh.parts[0]) + "]"
    if sh.kind == "rec" and all(isinstance(d, str) for d in sh.domain):
        return "[" + ", ".join(f"{d} : {_shape_words(c, p)}"
                               for d, p in zip(sh.domain, sh.parts)) + "]"
    if sh.kind == "rec":
        return " \\X ".join(_shape_words(c, p) for p in sh.parts)
    if sh.kind == "opt":
        return "{" + ", ".join(show(m) for m in sh.members) + "} \\cup " + \
            _shape_words(c, sh.parts[0])
    if sh.kind == "set":
        return "SUBSET {" + ", ".join(show(m) for m in sh.members) + "}"
    if sh.kind == "atom":
        return "{" + ", ".join(show(a) for a in c.atoms) + "}"
    return "BOOLEAN" if sh.kind == "bool" else f"{sh.lo}..{sh.hi}"


def build(tla: str | Path, cfg: str | Path | None = None, *, say: Say = _stderr,
          discover: int = DISCOVER, discover_seconds: float = DISCOVER_SECONDS,
          cache: Path | None = None, found: Result | None = None,
          limits: Limits | None = None) -> Compiled:
    """The module at ``tla`` with ``cfg`` (default: its name with .cfg) compiled, over the
    domains found (see the module's docstring; ``cache``: the folder of the domains kept,
    default ``$HWCHECK_CACHE/tla``); a TlaError in one line for what the compiled path does
    not take. ``found``: a reference search of the module the caller ran already (any
    settings: only the values it saw are read, and whether it was complete), used instead of
    searching again. ``limits``: ``Stopped`` between steps once one is reached (see the
    module's docstring)."""
    tla = Path(tla).resolve()
    cfg_path = Path(cfg).resolve() if cfg is not None else default_cfg(tla)
    # the spec's parameters, as the protocol gives them: the same kernel for every run
    params = {"config": str(cfg) if cfg is not None else str(cfg_path)}
    if not tla.is_file():
        raise fail(None, f"{tla}: no such module")
    m = model(tla, parse_cfg_file(cfg_path))
    if not m.behaviour:  # checked on the interpreter (its ASSUMEs; no state)
        raise fail(m.root.scope.module.pos, "not compiled yet: a cfg without SPECIFICATION "
                                            "or INIT and NEXT")
    step = limits.check if limits is not None else (lambda: None)
    kept = _cache_file(tla, cfg_path, cache)
    cached = _load_cached(kept)
    if cached is not None and set(cached) == set(m.root.variables):
        step()
        c = compile_model(m, cached)
        c.spec.params = params
        return c
    domains: dict[str, list[Value]] = {}
    types = typed(m)
    _merge(domains, types)
    res = found if found is not None else discovered(m, discover, discover_seconds, limits)
    _merge(domains, {v: res.values(v) for v in m.root.variables})
    step()
    how = (f"the invariants' types of {', '.join(types)} and " if types else "") + (
        "the reference search" if res.complete else
        f"the reference search's first {res.distinct} states")
    c = compile_model(m, domains)
    c.spec.params = params
    whole = True
    if not res.complete:
        c, runs, whole = _widen(m, c, domains, say, limits)
        how += f", checked on the kernel ({runs - 1} widening{'s' * (runs != 2)}" + (
            ")" if whole else ", the last one stopped before its end: not kept)")
    say(f"hwcheck: {tla.name}: domains from {how}: " + "; ".join(describe(c)))
    if whole:  # kept only where a whole run confirmed them
        _store(kept, domains)
    return c


def domains_kept(tla: str | Path, cfg: str | Path | None = None,
                 cache: Path | None = None) -> bool:
    """Whether the domains of the module at ``tla`` with ``cfg`` are kept from an earlier
    build (keyed by the modules' and the cfg's text and the compiler's): `build` then needs no
    reference search."""
    tla = Path(tla).resolve()
    cfg_path = Path(cfg).resolve() if cfg is not None else default_cfg(tla)
    return _load_cached(_cache_file(tla, cfg_path, cache)) is not None


def discovered(m: Model, states: int = DISCOVER, seconds: float = DISCOVER_SECONDS,
               limits: Limits | None = None) -> Result:
    """The reference search that discovers domains: up to ``states`` distinct states and
    ``seconds`` (incomplete past them); ``Stopped`` at a time or memory limit of ``limits``."""
    start = time.monotonic()

    def limit(n: int) -> str:
        if limits is not None:
            limits.check()
        return "its budget" if time.monotonic() - start >= seconds else ""

    return explore(m, check_deadlock=False, max_states=states, limit=limit)


def _widen(m: Model, c: Compiled, domains: dict[str, list[Value]], say: Say,
           limits: Limits | None = None) -> tuple[Compiled, int, bool]:
    """The first compiled spec whose whole run leaves no domain, the runs it took, and whether
    the last run was whole. Under ``limits`` each run is bounded by them: one that
    --max-states stopped without leaving a domain is taken, not whole (the check explores the
    same levels, its writes range-checked as ever); one that time, memory, Ctrl-C or SIGTERM
    stopped is ``Stopped``."""
    from hwcheck.checker.engines.options import Options
    from hwcheck.checker.run import check

    for run in range(1, WIDEN_RUNS + 1):
        opts = Options(stop_at_violation=False)
        if limits is not None:
            limits.check()
            opts = Options(stop_at_violation=False, max_states=limits.max_states,
                           max_seconds=limits.left(), max_memory=limits.max_memory)
        # the states alone: the plain kernel, not the state graph its liveness would ask for
        report = check(replace(c.spec, liveness=[], fair_groups=[]), opts)
        errors = [o for o in report.outcomes if o.kind == "domain"]
        ex = report.exploration
        if not errors and not ex.complete and limits is not None \
                and not ex.stop_reason.startswith("reached --max-states"):
            raise Stopped(limits.reached() or ex.stop_reason)
        if not errors:
            return c, run, ex.complete
        grew = False
        for o in errors:
            new: dict[str, list[Value]] = {}
            trace = o.trace
            if trace is not None and not trace.states:
                states = list(m.ev.initial(m.init))
            elif trace is not None:
                state = c.decode(trace.states[-1])
                states = [t for _, t in m.ev.successors(m.next, state)]
            else:
                states = []
            for s in states:
                for var, v in s.items():
                    new.setdefault(var, []).append(v)
            for var, vals in new.items():
                fresh = [v for v in vals if key(v) not in {key(x) for x in domains[var]}]
                vals += _doubled(domains[var], fresh)
            grew |= _merge(domains, new)
        if not grew:
            raise fail(m.root.scope.module.pos,
                       f"the compiled model left its domains ({errors[0].name}) where the "
                       "evaluator finds no new value")
        say(f"hwcheck: widened the domains after {errors[0].name}; checking again")
        params = c.spec.params
        c = compile_model(m, domains)
        c.spec.params = params
    raise fail(m.root.scope.module.pos, f"the domains still grow after {WIDEN_RUNS} runs")


def text_view(compiled: Callable[[], Compiled]) -> Callable[[Any], str]:
    """A trace as text in TLA+'s terms: each step named as TLC names it, each state's
    variables as TLA+ values (``compiled``: the spec the trace is of)."""

    def render(trace: Any) -> str:
        c = compiled()
        out = [f"(module {c.spec.name})", ""]
        prev: dict[str, Value] | None = None
        width = max((len(n) for n in c.encodings), default=0)
        for i, row in enumerate(trace.states):
            st = c.decode(row)
            out.append("State 0: Init" if i == 0 else
                       f"Step {i}: {c.step_label(trace.actions[i - 1])}")
            if trace.kind == "liveness" and i == trace.meta.get("loop"):
                out[-1] += "    <- the cycle starts here"
            for name, v in st.items():
                star = "*" if prev is not None and key(prev[name]) != key(v) else ""
                out.append(f"    {name.ljust(width)}  {show(v)}{star}")
            out.append("")
            prev = st
        from hwcheck.checker.traces.text import ending

        if trace.kind != "liveness":  # (a lasso's sentence: `text` adds it to every view)
            out.append(ending(trace))
        return "\n".join(out) + "\n"

    return render


_built: dict[tuple[str, str, str], Compiled] = {}  # by the module, the cfg, the files' text


def _key(tla: Path, config: str) -> tuple[str, str, str]:
    texts = []
    for p in [tla, Path(config)]:
        try:
            texts.append(p.read_text())
        except OSError:
            texts.append("")
    return str(tla), config, "\0".join(texts)


def compiled(tla: Path, config: str, **how: Any) -> Compiled:
    """The module at ``tla`` compiled with the cfg ``config``, built once in this process for
    the files' text (``how``: `build`'s keywords, for that first build): the spec a command
    prepared is the one its protocol's builder gives."""
    k = _key(tla, config)
    if k not in _built:
        _built[k] = build(tla, config, **how)
    return _built[k]


def protocol(tla: Path, cfg: str) -> Any:
    """The module at ``tla`` as a `Protocol`: its parameter ``config`` (the cfg, ``cfg`` by
    default), its traces in TLA+'s terms."""
    from hwcheck.spec.protocol import Param, Protocol, Views

    def builder(config: str = cfg) -> Any:
        spec = compiled(tla, config).spec
        spec.params = {"config": config}
        return spec

    def last() -> Compiled:
        mine = [c for k, c in _built.items() if k[0] == str(tla)]
        return mine[-1] if mine else compiled(tla, cfg)

    return Protocol(tla.stem, (Param("config", cfg, str, "the TLC configuration file"),),
                    builder, doc=f"the TLA+ module {tla.name}", source=str(tla),
                    views=Views(text=text_view(last),
                                params_line=lambda p: f"config {Path(p['config']).name}",
                                slug=lambda p: Path(p["config"]).stem))
