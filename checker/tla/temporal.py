"""A module's fairness and temporal properties, compiled: the state graph decides them.

The SPECIFICATION's fairness conjuncts (``WF_vars(A)``, ``SF_vars(A)``, under ``\\A x \\in S``
and inside definitions, ``vars`` every variable) become fairness conditions over the compiled
actions' instances (`hwcheck.spec.lang.FairGroup`): ``A`` is unfolded into its ways as Next is
(`Compiler._ways`), and a way matches the instances of Next's actions with its step name (the
operator of the Next disjunct) whose operator arguments have the values ``A`` gives them (an
``\\E`` inside ``A`` matches every value). A fairness condition is one group however many
instances it matches (``WF_vars(Enter(i))`` of an ``Enter`` with a disjunction inside is the
weak fairness of both ways together, not of each), as TLA+ means it: enabled where one of them
is, taken by any. The graph reads enabledness from Next's transitions, so an instance reached
after a condition of its own (an ``\\E`` over a set read from the state, an IF around the
operator) is refused: ``ENABLED A`` does not read that condition.

A cfg PROPERTY is compiled when it is (a conjunction of, under ``\\A x \\in S``) ``P ~> Q``,
``[]<>P``, ``<>[]P`` or ``[]P`` over state predicates, or ``[]<><<A>>_vars`` (A's steps taken
infinitely often: broken by a fair cycle without them, so A's actions quiet and P false),
optionally after ``Q =>`` where ``Q`` is ``<>[][N]_vars`` and ``N`` says that some actions are
not taken (``~A``, ``\\A i \\in S : ~A(i)``): the liveness forms of hwcheck's language
(``quiet``: only the behaviours that take those actions finitely often). ``[]P`` is an
invariant. Each instance of a quantified property is a property of its own, named with its
values (``Served(0)``). Anything else is refused with its position, and the module is checked
on the interpreter, which does not decide it.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from hwcheck.spec import lang as L

from .modules import Defn, Scope
from .syntax import And, Expr, Fairness, OpApp, OpDef, Quant, StepAction, Temporal, TlaError, fail
from .values import Value, key, show

if TYPE_CHECKING:
    from .compile import Compiler

_FALSE = L.Const(False)

Env = dict[str, Any]  # a name -> the compiler's term


def _refuse(pos: Any, what: str) -> TlaError:
    return fail(pos, f"not compiled yet: {what}")


def _definition(e: Expr, sc: Scope, env: Env) -> Defn | None:
    """The definition without parameters ``e`` names, if it does."""
    if isinstance(e, OpApp) and not e.args and e.name not in env:
        entry = sc.defs.get(e.name)
        if isinstance(entry, Defn) and isinstance(entry.d, OpDef) and not entry.d.params:
            return entry
    return None


# -- fairness ----------------------------------------------------------------------------------


def fairness(c: Compiler) -> None:
    """Declares the SPECIFICATION's fairness conditions on ``c.spec``."""
    spec = c.m.specification
    if spec is None:
        return
    found: list[tuple[Fairness, Scope, Env]] = []
    _walk(c, spec.d.body, spec.scope, {}, found, 0)
    for n, (f, sc, env) in enumerate(found, 1):
        vars_ = set(c._unchanged_vars(f.vars, sc, env))
        if vars_ != set(c.sc.state_vars):
            raise _refuse(f.pos, "fairness whose subscript is not every variable")
        members = list(dict.fromkeys(_matches(c, f.action, sc, env, f.pos)))
        c.spec.fair(_name(c, f, sc, env, n), "weak" if f.kind == "WF" else "strong", members)


def _name(c: Compiler, f: Fairness, sc: Scope, env: Env, n: int) -> str:
    """``WF_vars(Use(0))``: the operator and its arguments' values where they are constants,
    else the condition's number (``WF_3``)."""
    a = f.action
    if isinstance(a, OpApp) and a.name not in env:
        vals = [c.tr(x, sc, env) for x in a.args]
        if all(v[0] == "static" for v in vals):
            shown = f"({', '.join(show(v[1]) for v in vals)})" if vals else ""
            return f"{f.kind}_vars({a.name}{shown})"
    return f"{f.kind}_{n}"


def _walk(c: Compiler, e: Expr, sc: Scope, env: Env, out: list[tuple[Fairness, Scope, Env]],
          depth: int) -> None:
    if isinstance(e, And):
        for x in e.items:
            _walk(c, x, sc, env, out, depth)
    elif isinstance(e, Fairness):
        out.append((e, sc, env))
    elif isinstance(e, Quant) and e.kind == "A" and _has_fairness(e.body, sc, depth):
        for en, _ in c.every_binding(e, sc, env):
            _walk(c, e.body, sc, en, out, depth)
    elif isinstance(e, Temporal):
        if not (e.op == "[]" and isinstance(e.args[0], StepAction) and e.args[0].box):
            raise _refuse(e.pos, "a temporal formula in the SPECIFICATION other than "
                                 "[][Next]_vars and WF/SF")
    elif (d := _definition(e, sc, env)) is not None and depth < 16 and \
            _has_fairness(d.d.body, d.scope, depth):
        _walk(c, d.d.body, d.scope, {}, out, depth + 1)


def _has_fairness(e: Expr, sc: Scope, depth: int) -> bool:
    if isinstance(e, (Fairness, Temporal)):
        return True
    if isinstance(e, Quant):
        return _has_fairness(e.body, sc, depth)
    if isinstance(e, And):
        return any(_has_fairness(x, sc, depth) for x in e.items)
    d = _definition(e, sc, {})
    return d is not None and depth < 16 and _has_fairness(d.d.body, d.scope, depth + 1)


def _call_values(call: tuple[Any, ...], args: tuple[int, ...] | None) -> list[Value | None]:
    """The values of a way's operator arguments: a constant's, an ``\\E`` parameter's for the
    instance ``args`` (None: any, for the fairness formula's own ``\\E``)."""
    out: list[Value | None] = []
    for t in call:
        if t[0] == "static":
            out.append(t[1])
        elif t[0] == "param" and args is not None:
            out.append(t[2][args[int(t[1])]])
        elif t[0] == "param":
            out.append(None)
        else:
            raise ValueError(t[0])
    return out


def _matches(c: Compiler, action: Expr, sc: Scope, env: Env,
             pos: Any) -> list[tuple[str, tuple[int, ...]]]:
    """The instances of Next's actions that are ``action``'s ways (see the module's
    docstring)."""
    from .compile import _Way

    members: list[tuple[str, tuple[int, ...]]] = []
    for way in c._ways(action, sc, env, _Way("", False, (), ())):
        if not way.label:
            raise _refuse(pos, "fairness of an action that is not an operator of Next's")
        try:
            want = _call_values(way.call, None)
        except ValueError:
            raise _refuse(pos, "fairness of an operator given an argument that is not a "
                               "constant") from None
        hit = False
        for name, nway in c.ways.items():
            if nway.label != way.label or len(nway.call) != len(want):
                continue
            for args in itertools.product(*(range(len(v)) for _, v in nway.params)):
                try:
                    got = _call_values(nway.call, args)
                except ValueError:
                    raise _refuse(pos, f"fairness of {way.label}, which Next applies to an "
                                       "argument that is not a constant or an \\E's "
                                       "value") from None
                if all(w is None or key(w) == key(g) for w, g in zip(want, got)):
                    if nway.before:
                        raise _refuse(pos, f"fairness of {way.label}, which Next takes under "
                                           "a condition of its own (an \\E over a set read "
                                           "from the state, an IF)")
                    members.append((name, args))
                    hit = True
        if not hit:
            raise _refuse(pos, f"fairness of {way.label}: no step of Next takes it")
    return members


# -- properties --------------------------------------------------------------------------------


def prop(c: Compiler, name: str) -> None:
    """Declares the cfg's PROPERTY ``name`` on ``c.spec`` (see the module's docstring)."""
    d = c.sc.defs.get(name)
    assert isinstance(d, Defn) and isinstance(d.d, OpDef)  # the model checked it
    forms: list[tuple[str, Expr, Scope, Env]] = []
    _props(c, name, d.d.body, d.scope, {}, [], forms, 0)
    for label, e, sc, env in forms:
        _declare(c, label, e, sc, env)


def _props(c: Compiler, name: str, e: Expr, sc: Scope, env: Env, values: list[Value],
           out: list[tuple[str, Expr, Scope, Env]], depth: int) -> None:
    label = f"{name}({', '.join(show(v) for v in values)})" if values else name
    if isinstance(e, And):
        for k, x in enumerate(e.items, 1):
            _props(c, f"{label}!{k}", x, sc, env, [], out, depth)
    elif isinstance(e, Quant) and e.kind == "A":
        for en, vs in c.every_binding(e, sc, env):
            _props(c, name, e.body, sc, en, [*values, *vs], out, depth)
    elif (dd := _definition(e, sc, env)) is not None and depth < 16 and \
            _temporal(dd.d.body, dd.scope, depth):
        _props(c, name, dd.d.body, dd.scope, {}, values, out, depth + 1)
    else:
        out.append((label, e, sc, env))


def _temporal(e: Expr, sc: Scope, depth: int) -> bool:
    if isinstance(e, (Temporal, Fairness)):
        return True
    if isinstance(e, (Quant, And)) or (isinstance(e, OpApp) and e.name == "=>"):
        parts = (e.body,) if isinstance(e, Quant) else e.items if isinstance(e, And) else e.args
        return any(_temporal(x, sc, depth) for x in parts)
    d = _definition(e, sc, {})
    return d is not None and depth < 16 and _temporal(d.d.body, d.scope, depth + 1)


def _unfold(e: Expr, sc: Scope, env: Env, depth: int = 0) -> tuple[Expr, Scope, Env]:
    """``e`` with the definitions it names (without parameters) unfolded, while temporal."""
    while (d := _definition(e, sc, env)) is not None and depth < 16 and \
            _temporal(d.d.body, d.scope, depth):
        e, sc, env, depth = d.d.body, d.scope, {}, depth + 1
    return e, sc, env


def _declare(c: Compiler, name: str, e: Expr, sc: Scope, env: Env) -> None:
    quiet: list[str] = []
    e, sc, env = _unfold(e, sc, env)
    if isinstance(e, OpApp) and e.name == "=>" and len(e.args) == 2:
        q, qsc, qenv = _unfold(e.args[0], sc, env)
        quiet = _quiet(c, q, qsc, qenv)
        e, sc, env = _unfold(e.args[1], sc, env)
    if not isinstance(e, Temporal):
        raise _refuse(e.pos, f"PROPERTY {name}: not a temporal formula")

    def state(x: Expr) -> Any:
        if _temporal(x, sc, 0):
            raise _refuse(x.pos, f"PROPERTY {name}: a nested temporal formula")
        return c.as_kind(c.tr(x, sc, env), "bool", x.pos)

    inner = e.args[0] if e.op in ("[]", "<>") else None
    if e.op == "[]" and isinstance(inner, Temporal) and inner.op == "<>" and \
            isinstance(inner.args[0], StepAction) and not inner.args[0].box:
        # []<><<A>>_vars: broken exactly by a fair behaviour that takes A finitely often, a
        # fair cycle without A's steps: A's actions quiet, and nothing else asked of the cycle
        step = inner.args[0]
        c.spec.always_eventually(name, _FALSE, quiet=sorted(
            {*quiet, *_whole_actions(c, step.action, step.vars, sc, env, "[]<><<A>>_v")}))
    elif e.op == "~>":
        c.spec.leads_to(name, state(e.args[0]), state(e.args[1]), quiet=quiet)
    elif e.op == "[]" and isinstance(inner, Temporal) and inner.op == "<>":
        c.spec.always_eventually(name, state(inner.args[0]), quiet=quiet)
    elif e.op == "<>" and isinstance(inner, Temporal) and inner.op == "[]":
        c.spec.eventually_always(name, state(inner.args[0]), quiet=quiet)
    elif e.op == "[]" and inner is not None and not isinstance(inner, (Temporal, StepAction)) \
            and not quiet:
        c.spec.invariant(name, state(inner))
    else:
        raise _refuse(e.pos, f"PROPERTY {name}: a temporal formula other than P ~> Q, []<>P, "
                             "[]<><<A>>_vars, <>[]P, []P and <>[][~A]_vars => one of them")


def _quiet(c: Compiler, q: Expr, sc: Scope, env: Env) -> list[str]:
    """The actions ``<>[][N]_vars`` says are eventually not taken, where N says that no step of
    some operators of Next's is taken, and those operators' steps are whole actions."""
    if not (isinstance(q, Temporal) and q.op == "<>" and isinstance(q.args[0], Temporal)
            and q.args[0].op == "[]" and isinstance(q.args[0].args[0], StepAction)
            and q.args[0].args[0].box):
        raise _refuse(q.pos, "an assumption other than <>[][~A]_vars before =>")
    step = q.args[0].args[0]
    if set(c._unchanged_vars(step.vars, sc, env)) != set(c.sc.state_vars):
        raise _refuse(step.vars.pos, "<>[][N]_v whose subscript is not every variable")
    members: set[tuple[str, tuple[int, ...]]] = set()
    _negated(c, step.action, sc, env, members)
    return _whole(c, members, step.action.pos, "<>[][N]_vars where N leaves some steps of")


def _whole_actions(c: Compiler, action: Expr, vars_: Expr, sc: Scope, env: Env,
                   what: str) -> list[str]:
    """The actions whose every instance is a step of ``action`` (and no other instance is)."""
    if set(c._unchanged_vars(vars_, sc, env)) != set(c.sc.state_vars):
        raise _refuse(vars_.pos, f"{what} whose subscript is not every variable")
    return _whole(c, set(_matches(c, action, sc, env, action.pos)), action.pos,
                  f"{what} where A takes only some steps of")


def _whole(c: Compiler, members: set[tuple[str, tuple[int, ...]]], pos: Any,
           what: str) -> list[str]:
    names = sorted({a for a, _ in members})
    for a in names:
        whole = {(a, args) for args in itertools.product(
            *(range(len(v)) for _, v in c.ways[a].params))}
        if not whole <= members:
            raise _refuse(pos, f"{what} {a}")
    return names


def _negated(c: Compiler, n: Expr, sc: Scope, env: Env,
             out: set[tuple[str, tuple[int, ...]]]) -> None:
    n, sc, env = _unfold_any(n, sc, env)
    if isinstance(n, And):
        for x in n.items:
            _negated(c, x, sc, env, out)
    elif isinstance(n, Quant) and n.kind == "A":
        for en, _ in c.every_binding(n, sc, env):
            _negated(c, n.body, sc, en, out)
    elif isinstance(n, OpApp) and n.name == "~" and len(n.args) == 1:
        out.update(_matches(c, n.args[0], sc, env, n.pos))
    else:
        raise _refuse(n.pos, "<>[][N]_vars where N is not a conjunction of ~A")


def _unfold_any(e: Expr, sc: Scope, env: Env) -> tuple[Expr, Scope, Env]:
    for _ in range(16):
        d = _definition(e, sc, env)
        if d is None:
            break
        e, sc, env = d.d.body, d.scope, {}
    return e, sc, env
