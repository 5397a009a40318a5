"""The translator: spec expressions and statements to Z3 terms.

A state is a dict from variable name to a flat, row-major list of cells (the same order as
checker/layout.py). A cell is either a Z3 ``Int`` term or a plain Python int: the translator
partially evaluates, so a cell fixed to a constant (the initial state, a case split on a scalar,
a state read from a trace) makes every index that depends on it concrete and the terms small.
BOOL cells are Ints restricted to 0/1; reading one gives a Z3 Bool.

Expressions: quantifiers, reductions and loops have static sizes and are unrolled; a read or a
write at a symbolic index becomes an If-chain over the candidate cells.

Statements run with the interpreter's sequential semantics on a copy of the pre-state: each
statement sees what the earlier ones wrote; an ``If`` runs both branches on copies and merges
every cell and local that differs with ``z3.If``.

Well-definedness: the interpreter raises ModelError when a read or write index leaves its
variable's shape or a written value leaves its domain. The translator records, for every such
access, the condition under which it is in range, guarded by the path condition under which the
interpreter would evaluate it (short-circuit And/Or/forall/exists, Ite branches, the cells a
min/max reduction looks at). ``Effect.ok`` is their conjunction: it is true exactly when the
interpreter would run the action without a ModelError. Each condition names its variable and
they are recorded in the interpreter's order of evaluation, so ``first_errors`` tells which
variable the interpreter's ModelError (and the kernel's domain error) names.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import z3

from hwcheck.checker.semantics.exprgen import ARITH, domain_error_name
from hwcheck.spec.lang import (
    BOOL,
    ActionParam,
    And,
    Arith,
    Assign,
    Bound,
    Cmp,
    Const,
    Expr,
    For,
    If,
    Instance,
    Ite,
    Local,
    Not,
    Or,
    Quant,
    Read,
    SetLocal,
    Spec,
    SpecError,
    Stmt,
    Var,
    unknown_node,
)

if TYPE_CHECKING:
    import numpy as np

    from hwcheck.checker.semantics.layout import Layout

# -- constant-folding helpers --------------------------------------------------------------------

# A value the translator computes: a Python bool or int (a constant) or a Z3 term. z3 ships no
# type information, so to mypy a Z3 term is Any, and so is a value that may be one.
Term: TypeAlias = Any


def is_const(x: Term) -> bool:
    return isinstance(x, (bool, int))


def to_bool(x: Term) -> Term:
    return x if isinstance(x, (bool, z3.BoolRef)) else (x != 0)


def int_const(name: str) -> Term:
    return z3.Int(name)


def to_int(x: Term) -> Term:
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, z3.BoolRef):
        return z3.If(x, z3.IntVal(1), z3.IntVal(0))
    return x


def mk_and(xs: Iterable[Term]) -> Term:
    out = []
    for x in xs:
        if x is True:
            continue
        if x is False:
            return False
        out.append(x)
    if not out:
        return True
    return out[0] if len(out) == 1 else z3.And(*out)


def mk_or(xs: Iterable[Term]) -> Term:
    out = []
    for x in xs:
        if x is False:
            continue
        if x is True:
            return True
        out.append(x)
    if not out:
        return False
    return out[0] if len(out) == 1 else z3.Or(*out)


def mk_not(x: Term) -> Term:
    return (not x) if isinstance(x, bool) else z3.Not(x)


def mk_implies(a: Term, b: Term) -> Term:
    if a is False or b is True:
        return True
    if a is True:
        return b
    if b is False:
        return z3.Not(a)
    return z3.Implies(a, b)


def mk_ite(c: Term, a: Term, b: Term) -> Term:
    if c is True:
        return a
    if c is False:
        return b
    if is_const(a) and is_const(b) and a == b and type(a) is type(b):
        return a
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef) and a.eq(b):
        return a
    if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, z3.BoolRef) \
            or isinstance(b, z3.BoolRef):
        if isinstance(a, bool) and isinstance(b, bool):
            return c if a else z3.Not(c)
        return z3.If(c, _zb(a), _zb(b))
    return z3.If(c, a, b)


def _zb(x: Term) -> Term:
    return z3.BoolVal(x) if isinstance(x, bool) else x


def same(a: Term, b: Term) -> bool:
    if is_const(a) and is_const(b):
        return a == b and isinstance(a, bool) == isinstance(b, bool)
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef):
        return bool(a.eq(b))
    return False


def mk_eq(a: Term, b: Term) -> Term:
    if is_const(a) and is_const(b):
        return a == b
    if isinstance(a, (bool, z3.BoolRef)) or isinstance(b, (bool, z3.BoolRef)):
        return _zb(a) == _zb(b)
    return a == b


def mk_cmp(op: str, a: Term, b: Term) -> Term:
    if op == "==":
        return mk_eq(a, b)
    if op == "!=":
        return mk_not(mk_eq(a, b))
    if is_const(a) and is_const(b):
        return a < b if op == "<" else a <= b
    return a < b if op == "<" else a <= b


def mk_arith(op: str, a: Term, b: Term) -> Term:
    if is_const(a) and is_const(b):
        return ARITH[op](a, b)
    if op == "*":  # b is a constant (and // and % divide by a positive one: SMT-LIB's
        return a * b  # div and mod are then Python's // and %, as in the kernel)
    if op == "//":
        return a / b
    if op == "%":
        return a % b
    if op == "+":
        return a if is_const(b) and b == 0 else a + b
    if op == "-":
        return a if is_const(b) and b == 0 else a - b
    if same(a, b):
        return a
    if op == "min":
        return z3.If(a <= b, a, b)
    return z3.If(a >= b, a, b)


# -- states --------------------------------------------------------------------------------------


State = dict[str, list[Term]]  # variable name -> list of cells (Python int or z3 Int term)


def fresh_state(spec: Spec, tag: str, fixed: dict[str, Any] | None = None) -> State:
    """A state of fresh Z3 Int constants named ``var[i,j]@tag``; ``fixed`` maps a variable name to
    a list of cell values (None = symbolic) to pin some cells to constants."""
    st: State = {}
    for v in spec.variables:
        cells: list[Term] = []
        pins = (fixed or {}).get(v.name)
        for n, idx in enumerate(v.cells()):
            if pins is not None and pins[n] is not None:
                cells.append(int(pins[n]))
            else:
                cells.append(int_const(f"{v.name}{list(idx) if idx else ''}@{tag}"))
        st[v.name] = cells
    return st


def const_state(spec: Spec, layout: Layout, row: np.ndarray) -> State:
    """A state of Python ints from a layout row."""
    st: State = {}
    for v in spec.variables:
        off = layout.offsets[v.name]
        st[v.name] = [int(row[off + i]) for i in range(v.size)]
    return st


def domain(spec: Spec, st: State) -> list[Term]:
    """Every symbolic cell within its variable's domain."""
    out: list[Term] = []
    for v in spec.variables:
        for c in st[v.name]:
            if not is_const(c):
                out.append(z3.And(c >= v.lo, c <= v.hi))
            elif not v.lo <= c <= v.hi:
                return [False]
    return out


def eq_states(a: State, b: State, names: Iterable[str] | None = None) -> Term:
    out = []
    for name in (names or a):
        for x, y in zip(a[name], b[name]):
            e = mk_eq(x, y)
            if e is not True:
                out.append(e)
    return mk_and(out)


def decode(spec: Spec, layout: Layout, st: State, model: z3.ModelRef) -> np.ndarray:
    """The layout row of a state under a model."""
    row = layout.empty()
    for v in spec.variables:
        off = layout.offsets[v.name]
        for i, c in enumerate(st[v.name]):
            if is_const(c):
                row[off + i] = int(c)
            else:
                row[off + i] = model.eval(c, model_completion=True).as_long()
    return row


def _concrete(x: Term, what: str) -> bool:
    """A condition of Init, which is concrete once its choices are."""
    if isinstance(x, (bool, int)):
        return bool(x)
    x = z3.simplify(_zb(x))
    if z3.is_true(x) or z3.is_false(x):
        return bool(z3.is_true(x))
    raise SpecError(f"{what} is not concrete: {x}")


def _init_in_domains(ctx: _Ctx) -> None:
    """Init's accesses so far, concrete once its choices are: the first one outside its
    variable's shape or domain is the error ``check`` reports (the kernel's and the
    interpreter's: ``Init leaves the declared domains: DomainError(variable, Init)``)."""
    for var, ok in ctx.obl:
        if not _concrete(ok, "Init's access to " + var):
            raise SpecError(f"Init leaves the declared domains: {domain_error_name(var, 'Init')}")


# -- the translator -------------------------------------------------------------------------------


@dataclass
class Effect:
    """One action instance over a pre-state: its guard, the post-state, and well-definedness."""

    guard: object
    post: State
    ok: object  # no ModelError: every index in range and every written value in its domain
    # (variable, condition) per access, in the interpreter's order of evaluation
    checks: list[tuple[str, Term]] = field(default_factory=list)


def first_errors(checks: list[tuple[str, Term]]) -> dict[str, Term]:
    """variable -> the condition under which the first access that leaves its range (in the
    interpreter's order) is one of that variable's: the variable its ModelError names."""
    out: dict[str, Term] = {}
    before: Term = True  # every earlier access in range
    for var, ok in checks:
        if ok is True:
            continue
        out[var] = mk_or([out.get(var, False), mk_and([before, mk_not(ok)])])
        before = mk_and([before, ok])
        if before is False:
            break
    return {v: c for v, c in out.items() if c is not False}


@dataclass
class _Ctx:
    cur: State
    nxt: State | None
    env: dict[Any, Term]  # Bound / ActionParam -> value; local name -> value
    # (variable, pc => in range), in order
    obl: list[tuple[str, Term]] = field(default_factory=list)
    where: str = "expression"


class Translator:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.vars = {v.name: v for v in spec.variables}

    # -- expressions -----------------------------------------------------------------------------

    def expr(self, e: Expr, cur: State, nxt: State | None = None,
             env: dict[Any, Term] | None = None) -> Term:
        """The value of ``e`` (a Python constant or a Z3 term)."""
        ctx = _Ctx(cur, nxt, dict(env or {}))
        return self._e(e, ctx, True)

    def expr_ok(self, e: Expr, cur: State, nxt: State | None = None,
                env: dict[Any, Term] | None = None) -> tuple[Term, Term]:
        """(value, well-defined) of ``e``."""
        v, checks = self.expr_checks(e, cur, nxt, env)
        return v, mk_and([c for _, c in checks])

    def expr_checks(self, e: Expr, cur: State, nxt: State | None = None,
                    env: dict[Any, Term] | None = None) -> tuple[Term, list[tuple[str, Term]]]:
        """(value, [(variable, in range)]) of ``e``: the conditions of its reads, in order."""
        ctx = _Ctx(cur, nxt, dict(env or {}))
        v = self._e(e, ctx, True)
        return v, ctx.obl

    def _cell_index(self, var: Var, idx: list[Term], ctx: _Ctx,
                    pc: Term) -> list[tuple[int, Term]]:
        """The candidate (flat position, condition) pairs of ``var[idx]``; records the range
        obligation. A concrete index gives one candidate with condition True."""
        conds: list[Term] = []
        flat: list[tuple[int, Term]] = [(0, True)]
        for i, d in zip(idx, var.shape):
            if is_const(i):
                if not 0 <= i < d:
                    conds.append(False)
                    i = min(max(i, 0), d - 1)
                flat = [(p * d + i, c) for p, c in flat]
            else:
                conds.append(z3.And(i >= 0, i < d))
                flat = [(p * d + j, mk_and([c, i == j])) for p, c in flat for j in range(d)]
        if conds:
            ctx.obl.append((var.name, mk_implies(pc, mk_and(conds))))
        return flat

    def _read(self, e: Read, ctx: _Ctx, pc: Term) -> Term:
        idx = [self._e(i, ctx, pc) for i in e.index]
        src = ctx.nxt if e.primed else ctx.cur
        if src is None:
            raise SpecError(f"{ctx.where}: reads the next state without one")
        cells = src[e.var.name]
        cands = self._cell_index(e.var, idx, ctx, pc)
        v = cells[cands[-1][0]]
        for p, c in reversed(cands[:-1]):
            v = mk_ite(c, cells[p], v)
        if e.var.sort == BOOL:
            return (v != 0) if is_const(v) else (v == 1)
        return v

    def _e(self, e: Expr, ctx: _Ctx, pc: Term) -> Term:
        match e:
            case Const():
                return e.value
            case Read():
                return self._read(e, ctx, pc)
            case Bound() | ActionParam():
                return ctx.env[e]
            case Local():
                return ctx.env[e.name]
            case Arith():
                return mk_arith(e.op, self._e(e.a, ctx, pc), self._e(e.b, ctx, pc))
            case Cmp():
                return mk_cmp(e.op, self._e(e.a, ctx, pc), self._e(e.b, ctx, pc))
            case And():
                vals: list[Any] = []
                for a in e.args:  # short-circuit: later arguments only if earlier ones hold
                    v = self._e(a, ctx, mk_and([pc] + vals))
                    vals.append(v)
                    if v is False:
                        break
                return mk_and(vals)
            case Or():
                vals = []
                for a in e.args:
                    v = self._e(a, ctx, mk_and([pc] + [mk_not(x) for x in vals]))
                    vals.append(v)
                    if v is True:
                        break
                return mk_or(vals)
            case Not():
                return mk_not(self._e(e.a, ctx, pc))
            case Ite():
                c = self._e(e.cond, ctx, pc)
                if c is True:
                    return self._e(e.then, ctx, pc)
                if c is False:
                    return self._e(e.other, ctx, pc)
                return mk_ite(c, self._e(e.then, ctx, mk_and([pc, c])),
                              self._e(e.other, ctx, mk_and([pc, mk_not(c)])))
            case Quant():
                return self._quant(e, ctx, pc)
            case _:
                raise unknown_node(e, f"{ctx.where}: unknown expression node")

    def _quant(self, e: Quant, ctx: _Ctx, pc: Term) -> Term:
        env = ctx.env
        saved = env.get(e.var, None)
        try:
            if e.kind in ("forall", "exists", "count"):
                vals: list[Any] = []
                for i in range(e.n):
                    env[e.var] = i
                    if e.kind == "forall":
                        inner = mk_and([pc] + vals)
                    elif e.kind == "exists":
                        inner = mk_and([pc] + [mk_not(x) for x in vals])
                    else:
                        inner = pc
                    v = self._e(e.body, ctx, inner)
                    vals.append(v)
                    if e.kind == "forall" and v is False:
                        return False
                    if e.kind == "exists" and v is True:
                        return True
                if e.kind == "forall":
                    return mk_and(vals)
                if e.kind == "exists":
                    return mk_or(vals)
                consts = sum(1 for v in vals if v is True)
                terms = [to_int(v) for v in vals if not is_const(v)]
                if not terms:
                    return consts
                return z3.Sum(terms) + consts if consts else z3.Sum(terms)
            # min / max: the best body over the i where cond holds; default if none
            items: list[tuple[Term, Term]] = []
            cond, default_expr = e.reduction
            for i in range(e.n):
                env[e.var] = i
                c = self._e(cond, ctx, pc)
                if c is False:
                    continue
                items.append((c, self._e(e.body, ctx, mk_and([pc, c]))))
            found = mk_or([c for c, _ in items])
            env.pop(e.var, None)
            default = self._e(default_expr, ctx, mk_and([pc, mk_not(found)])) \
                if found is not True else 0
            better: Callable[[Term, Term], Term] = \
                (lambda a, b: a < b) if e.kind == "min" else (lambda a, b: a > b)
            if all(is_const(v) for _, v in items):
                # constant bodies: the best matching candidate wins; an If-chain in order
                items.sort(key=lambda cv: cv[1], reverse=(e.kind == "max"))
                r = default
                for c, v in reversed(items):
                    r = mk_ite(c, v, r)
                return r
            best: Term = default
            seen: Term = False
            for c, v in items:
                pick = mk_or([mk_not(seen), better(v, best)])
                best = mk_ite(mk_and([c, pick]), v, best)
                seen = mk_or([seen, c])
            return best
        finally:
            if saved is None:
                env.pop(e.var, None)
            else:
                env[e.var] = saved

    # -- statements ------------------------------------------------------------------------------

    def _run(self, stmts: Iterable[Stmt], st: State, ctx: _Ctx, pc: Term,
             modifies: Collection[str] | None) -> None:
        for s in stmts:
            if pc is False:
                return
            match s:
                case Assign():
                    var = s.target.var
                    if modifies is not None and var.name not in modifies:
                        raise SpecError(f"{ctx.where}: writes {var.name}, which is not in its "
                                        "modifies list")
                    ctx.cur = st
                    # the interpreter's order: the indices, their range, the value, its domain
                    idx = [self._e(i, ctx, pc) for i in s.target.index]
                    cands = self._cell_index(var, idx, ctx, pc)
                    val = self._e(s.value, ctx, pc)
                    if var.sort == BOOL:
                        val = to_int(val)
                    else:
                        rng = mk_and([val >= var.lo, val <= var.hi]) if not is_const(val) \
                            else var.lo <= val <= var.hi
                        ctx.obl.append((var.name, mk_implies(pc, rng)))
                    cells = st[var.name]
                    for p, c in cands:
                        cells[p] = mk_ite(c, val, cells[p]) if c is not True else val
                case SetLocal():
                    ctx.cur = st
                    ctx.env[s.local.name] = self._e(s.value, ctx, pc)
                case If():
                    ctx.cur = st
                    c = self._e(s.cond, ctx, pc)
                    if is_const(c):
                        self._run(s.then if c else s.other, st, ctx, pc, modifies)
                        continue
                    st2 = {k: list(v) for k, v in st.items()}
                    env2 = dict(ctx.env)
                    self._run(s.then, st, ctx, mk_and([pc, c]), modifies)
                    env1, ctx.env = ctx.env, env2
                    self._run(s.other, st2, ctx, mk_and([pc, mk_not(c)]), modifies)
                    env2 = ctx.env  # a nested If may have replaced the dict
                    for name, cells in st.items():
                        other = st2[name]
                        for i, (a, b) in enumerate(zip(cells, other)):
                            if not same(a, b):
                                cells[i] = mk_ite(c, a, b)
                    merged: dict[Any, Term] = {}
                    for k, b in env2.items():  # locals set before the If (or in both branches)
                        if k in env1:
                            a = env1[k]
                            merged[k] = a if same(a, b) else mk_ite(c, a, b)
                    ctx.env = merged
                case For():
                    for i in range(s.n):
                        ctx.env[s.var] = i
                        self._run(s.body, st, ctx, pc, modifies)
                    ctx.env.pop(s.var, None)
                case _:
                    raise unknown_node(s, f"{ctx.where}: unknown statement")

    def effect(self, inst: Instance, pre: State) -> Effect:
        """Guard, post-state and well-definedness of ``inst`` over ``pre``. Variables outside the
        action's modifies list are copied unchanged (the frame condition)."""
        env = dict(zip(inst.action.params, inst.args))
        ctx = _Ctx(pre, None, env, where=inst.label)
        guard = self._e(inst.action.guard, ctx, True)
        post = {k: list(v) for k, v in pre.items()}
        if guard is not False:
            self._run(inst.action.body, post, ctx, to_bool(guard), inst.action.modifies)
        for name in pre:  # frame: everything the action may not modify is unchanged
            if name not in inst.action.modifies:
                post[name] = pre[name]
        return Effect(guard, post, mk_and([c for _, c in ctx.obl]), ctx.obl)

    def initials(self) -> list[State]:
        """Each initial state, concrete: Init run by the translator (as the interpreter runs
        it) once per choice its guard and its conditions on the state built allow, each state
        once, in the order of the choices."""
        init = self.spec.init_action
        out: list[State] = []
        seen: set[tuple[Term, ...]] = set()
        for args in init.instances():
            env = dict(zip(init.params, args))
            st = {v.name: [v.initial] * v.size for v in self.spec.variables}
            ctx = _Ctx(st, None, env, where="Init")
            guard = self._e(init.guard, ctx, True)
            _init_in_domains(ctx)
            if not _concrete(guard, "Init's guard"):
                continue
            self._run(init.body, st, ctx, True, None)
            _init_in_domains(ctx)
            post_ctx = _Ctx(st, None, env, where="Init")
            post = self._e(self.spec.init_post, post_ctx, True)
            _init_in_domains(post_ctx)
            if not _concrete(post, "Init's conditions"):
                continue
            key = tuple(c for v in self.spec.variables for c in st[v.name])
            if key not in seen:
                seen.add(key)
                out.append(st)
        if not out:
            raise SpecError("Init: no choice satisfies its guard and its conditions, so there is "
                            "no initial state")
        return out

    def initial(self) -> tuple[State, list[Term]]:
        """The initial state and the facts that define it: one initial state is concrete (no
        facts); with several, each cell on which they differ is a fresh Int ``var[i]@init`` in
        its domain and the fact says the cells are those of one of the initial states (plain
        equalities of bounded constants, which the finite-domain solver bit-blasts)."""
        sts = self.initials()
        if len(sts) == 1:
            return sts[0], []
        out: State = {}
        free: list[tuple[str, int, Any]] = []
        facts: list[Term] = []
        for v in self.spec.variables:
            cells: list[Term] = []
            for c, idx in enumerate(v.cells()):
                if len({st[v.name][c] for st in sts}) == 1:
                    cells.append(sts[0][v.name][c])
                    continue
                x = int_const(f"{v.name}{list(idx) if idx else ''}@init")
                facts += [x >= v.lo, x <= v.hi]
                free.append((v.name, c, x))
                cells.append(x)
            out[v.name] = cells
        facts.append(mk_or([mk_and([x == st[name][c] for name, c, x in free]) for st in sts]))
        return out, facts
