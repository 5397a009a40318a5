"""Compiles a spec into the Python source of a numba kernel module.

The expressions and statements are compiled by ``exprgen.py``; the functions around them come from
the kernel templates (``templates.py``); the argument order of every entry point is declared once in
``signatures.py``. The module defines, per action, a guard ``g_<a>(s, p...)`` and an effect
``e_<a>(t, p...)`` that updates ``t`` in place (``t`` starts as a copy of the state); the same for
Init as an action from the bottom state (``g_init``, ``e_init``, and ``c_init``, its conditions on
the state built) with ``initial(k, err)`` for its k-th choice; per property a predicate (``sp_<j>``,
``tp_<j>``, numbered as ``signatures.Properties``), ``step``, ``check_states`` and the level kernels
the engines call (``expand_dedup``, ``expand_exact``, ``expand_split``); under symmetry every level
kernel applies the symmetry pass (``templates.SYMMETRY``) and the module also defines ``canon`` and
``canonical``."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import itertools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from hwcheck.checker.semantics.exprgen import BodyGen, CodeEnv, DomainErrors, ExprGen, shared, src
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.semantics.signatures import Properties
from hwcheck.checker.semantics.templates import (
    HEADER,
    SYMMETRY,
    Pass,
    block_rows,
    check_states_fn,
    expand_dedup_fn,
    expand_exact_fn,
    expand_split_fn,
    guard_filters,
    initial_fn,
    step_fn,
    view_source,
)
from hwcheck.spec.lang import Action, And, Const, Expr, Spec

if TYPE_CHECKING:
    from hwcheck.checker.semantics.symmetry import Plan

T = TypeVar("T")


def generate(spec: Spec, layout: Layout | None = None,
             errors: DomainErrors | None = None, canon: Plan | None = None,
             fails: dict[str, bool] | None = None) -> str:
    """The kernel module's source for ``spec``; ``errors`` collects the numbered domain errors the
    generated checks report, ``fails`` which generated functions have a run-time check (by name:
    ``g_0``, ``e_0``, ``tp_0``, ...; other kernels built on this one read it). With ``canon`` (a
    ``symmetry.Plan``) the expansion turns every successor into its canonical form before
    fingerprinting it, and the module also defines ``canon`` and ``canonical``; without it the
    source is what it always was."""
    layout = layout or Layout.of(spec)
    errors = errors if errors is not None else DomainErrors()
    props = Properties.of(spec)
    instances = spec.instances()
    lines = [HEADER.format(name=spec.name, params=spec.params, stride=layout.stride,
                           ninst=len(instances), dtype=np.dtype(layout.dtype).name,
                           block=block_rows(len(instances)))]
    body = BodyGen(layout, errors)
    guards = ExprGen(layout, "s", errors=errors)
    fails = fails if fails is not None else {}  # generated function -> a run-time check?

    def counted(name: str, gen: ExprGen, make: Callable[..., T], *args: object) -> T:
        """``make(*args)``, noting whether it added a run-time check to ``gen``."""
        before = gen.checks
        out = make(*args)
        fails[name] = gen.checks > before
        return out

    def action_fns(tag: str, a: Action) -> None:
        """The guard ``g_<tag>`` and the effect ``e_<tag>`` of ``a``."""
        args = [f"p{i}" for i in range(len(a.params))]
        env: CodeEnv = dict(zip(a.params, args))
        for gen in (guards, body.ex):
            gen.code_ranges.update({f"p{i}": (0, p.size - 1) for i, p in enumerate(a.params)})
        guards.where = a.name
        guards.local_ranges = {}
        guards.tally.clear()
        guard = counted(f"g_{tag}", guards, guards, a.guard, env)
        lines.append(f"\n@njit(cache=True)\ndef g_{tag}({', '.join(['s', *args, 'err'])}):"
                     f"  # {a.name} guard\n{returning(guards, guard)}\n")
        # the guard holds when the effect runs: what it says of a variable the effect does not
        # write holds throughout the effect
        body.ex.facts = {k: r for k, r in guards.facts_of(a.guard).items()
                         if k[0] not in a.modifies}
        body.begin(a.name, a.body, env)
        stmts = counted(f"e_{tag}", body.ex, body, a.body, env, 1) or ["    pass"]
        body.ex.facts = {}
        lines.append(f"\n@njit(cache=True)\ndef e_{tag}({', '.join(['t', *args, 'err'])}):"
                     f"  # {a.name} effect\n" + "\n".join(stmts) + "\n")

    for ai, a in enumerate(spec.actions):
        action_fns(str(ai), a)
    init = spec.init_action
    action_fns("init", init)
    args = [f"p{i}" for i in range(len(init.params))]
    guards.where = "Init"
    guards.local_ranges = {}
    guards.tally.clear()
    post = counted("c_init", guards, guards, spec.init_post, dict(zip(init.params, args)))
    lines.append(f"\n@njit(cache=True)\ndef c_init({', '.join(['s', *args, 'err'])}):"
                 f"  # Init's conditions on the state it built\n{returning(guards, post)}\n")

    for j, (name, expr, _) in enumerate(props.state):
        gen = ExprGen(layout, "s", errors=errors)
        gen.where = name
        code = counted(f"sp_{j}", gen, gen, expr, {})
        lines.append(f"\n@njit(cache=True)\ndef sp_{j}(s, err):  # {name}\n"
                     f"{returning(gen, code)}\n")
    for j, (name, expr, _) in enumerate(props.transition):
        gen = ExprGen(layout, "s", "n", errors=errors)
        gen.where = name
        code = counted(f"tp_{j}", gen, gen, expr, {})
        lines.append(f"\n@njit(cache=True)\ndef tp_{j}(s, n, err):  # {name}\n"
                     f"{returning(gen, code)}\n")

    # each action's guard filters: the leading conjuncts that cannot fail (each compiled on
    # its own to know), by the level of loops they need (templates.guard_filters); compiled
    # after every other function so that the domain error codes stay what they were
    for ai, a in enumerate(spec.actions):
        plan = guard_filters(a)
        if plan is None:
            continue
        order, conj = plan
        ranges = {f"p{i}": (0, p.size - 1) for i, p in enumerate(a.params)}
        by_level: dict[int, list[Expr]] = {}
        for level, expr in conj:
            probe = ExprGen(layout, "s", errors=DomainErrors())
            probe.code_ranges.update(ranges)
            probe.where = a.name
            probe(expr, dict(zip(a.params, (f"p{i}" for i in range(len(a.params))))))
            if probe.checks:
                break
            if not (isinstance(expr, Const) and expr.value is True):  # (rules nothing out)
                by_level.setdefault(level, []).append(expr)
        for level, exprs in sorted(by_level.items()):
            args = [f"p{d}" for d in order[:level]]
            guards.code_ranges.update(ranges)
            guards.where = a.name
            guards.local_ranges = {}
            guards.tally.clear()
            code = counted(f"g_first_{ai}_{level}", guards, guards,
                           exprs[0] if len(exprs) == 1 else And(tuple(exprs)),
                           {a.params[d]: f"p{d}" for d in order[:level]})
            lines.append(f"\n@njit(cache=True)\ndef g_first_{ai}_{level}("
                         f"{', '.join(['s', *args, 'err'])}):  # {a.name} guard's filter over "
                         f"{level} loop{'s' * (level != 1)}\n{returning(guards, code)}\n")

    if spec.view is not None:
        lines.append(view_source(spec, layout))
    lines.append(initial_fn(spec, layout))
    lines.append(check_states_fn(props, fails))
    lines.append(step_fn(spec))
    passes: tuple[Pass, ...] = ()
    if canon is not None:
        from hwcheck.checker.semantics.symmetry import canon_source

        lines.append(canon_source(canon))
        passes = (SYMMETRY,)
    lines.append(expand_dedup_fn(spec, props, fails, passes))
    lines.append(expand_exact_fn(spec, props, fails, passes))
    lines.append(expand_split_fn(spec, props, fails, passes))
    lines.append(f"\nNERRORS = {len(errors.entries)}  # domain error codes 1..NERRORS-1\n")
    return "\n".join(lines)


def returning(gen: ExprGen, code: int | bool | str) -> str:
    """The body of a function that returns ``code``: its common subexpressions first."""
    names = (f"_c{i}" for i in itertools.count())
    pre, [out] = shared(gen, [src(code)], lambda: next(names))
    return "".join(f"    {p}\n" for p in pre) + f"    return {out}"


def source_key(src: str) -> str:
    """The cache key of a generated module: its text and the text of every hwcheck module it
    imports, and of theirs (numba's disk cache keeps the machine code of a compiled caller
    with its callees inlined, and checks only the caller's own file: a changed run-time
    module must change the key)."""
    h = hashlib.sha1(src.encode())
    for name in _imported(src):
        h.update(_module_text(name))
    return h.hexdigest()[:16]


_IMPORT = re.compile(r"^from (hwcheck(?:\.\w+)+) import", re.MULTILINE)


def _imported(src: str) -> list[str]:
    """The hwcheck modules ``src`` imports, directly or through them, in a fixed order."""
    seen: dict[str, None] = {}
    todo = _IMPORT.findall(src)
    while todo:
        name = todo.pop(0)
        if name not in seen:
            seen[name] = None
            todo += _IMPORT.findall(_module_text(name).decode())
    return sorted(seen)


@functools.cache
def _module_text(name: str) -> bytes:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:  # a package's attribute, not a module
        return b""
    with open(spec.origin, "rb") as f:
        return f.read()
