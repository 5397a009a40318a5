"""Mutants of a spec's actions, made on its syntax tree, and the mutant schema that holds them
all in one compiled kernel.

Operators (each mutant changes one place of one action's guard or effect):

- ``drop-conjunct``: one argument of a conjunction (a guard's ``require``, a ``when`` condition,
  any ``&``) becomes true;
- ``flip-comparison``: ``<`` and ``<=`` trade places, as do ``==`` and ``!=``;
- ``constant+1``, ``constant-1``: an integer constant compared with or added to something;
- ``index+1``: one index of a variable read;
- ``drop-statement``: one assignment is not done;
- ``swap-branches``: a ``when``/``otherwise``'s condition is negated (its branches swap).

A compile costs seconds, so the mutants are not compiled one by one: the *schema* is the spec
with one more variable, ``mutant`` (constant along every behaviour), and every place written as
"the mutated form when ``mutant = k``, the original otherwise" (``ite(mutant == k, ...)``,
statements under ``when(mutant != k)``). One kernel runs every mutant: the engine starts from
the initial state with ``mutant = k``. Mutant 0 is the original. Traces of mutant ``k`` replay
through the interpreter on the schema whose initial state sets ``mutant = k``
(``schema_for``), so they are confirmed like any other.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, replace

from hwcheck.spec.lang import (
    INT,
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
    Ite,
    Local,
    Not,
    Or,
    Quant,
    Read,
    SetLocal,
    Spec,
    Stmt,
    Var,
    unknown_node,
)

VAR = "mutant"
FLIP = {"<": "<=", "<=": "<", "==": "!=", "!=": "=="}


@dataclass(frozen=True)
class Mutant:
    id: int  # >= 1; 0 is the original
    action: str
    operator: str
    before: str  # the place, as text
    after: str  # the mutated place, as text

    @property
    def diff(self) -> str:
        return f"{self.action}: {self.before}  ->  {self.after}"


class _Builder:
    """Walks the actions once, numbering mutants; with ``var`` set, builds the schema too."""

    def __init__(self, var: Var | None, keep: frozenset[int] | None = None):
        self.var = var
        self.keep = keep  # the mutants the schema holds (None: all); the others stay numbered
        self.mutants: list[Mutant] = []
        self.action = ""

    def _live(self, k: int) -> bool:
        """Whether the schema holds mutant ``k``."""
        return self.var is not None and (self.keep is None or k in self.keep)

    def _new(self, operator: str, before: str, after: str) -> int:
        k = len(self.mutants) + 1
        self.mutants.append(Mutant(k, self.action, operator, before, after))
        return k

    def _is(self, k: int) -> Expr:
        assert self.var is not None
        return Cmp("==", Read(self.var, ()), Const(k))

    def choose(self, k: int, mutated: Expr, original: Expr) -> Expr:
        return Ite(self._is(k), mutated, original) if self._live(k) else original

    # -- expressions ---------------------------------------------------------------------------

    def expr(self, e: Expr) -> Expr:
        match e:
            case Const() | Bound() | ActionParam() | Local():
                return e
            case Read():
                idx = tuple(self.expr(i) for i in e.index)
                out: Expr = Read(e.var, idx, e.primed)
                for j in range(len(idx)):
                    moved = idx[:j] + (Arith("+", idx[j], Const(1)),) + idx[j + 1:]
                    k = self._new("index+1", show(e), show(Read(e.var, moved, e.primed)))
                    out = self.choose(k, Read(e.var, moved, e.primed), out)
                return out
            case Arith():
                a = self._operand(e.a)  # a product's or quotient's constant stays one
                b = e.b if e.op in ("*", "//", "%") else self._operand(e.b)
                return Arith(e.op, a, b)
            case Cmp():
                a, b = self._operand(e.a), self._operand(e.b)
                orig = Cmp(e.op, a, b)
                if e.op not in FLIP:
                    return orig
                k = self._new("flip-comparison", show(e), show(Cmp(FLIP[e.op], e.a, e.b)))
                return self.choose(k, Cmp(FLIP[e.op], a, b), orig)
            case And():
                args = [self.expr(a) for a in e.args]
                if len(args) >= 2:
                    for i, a in enumerate(e.args):
                        k = self._new("drop-conjunct", show(a), "True")
                        if self._live(k):
                            args[i] = Or((self._is(k), args[i]))
                return And(tuple(args))
            case Or():
                return Or(tuple(self.expr(a) for a in e.args))
            case Not():
                return Not(self.expr(e.a))
            case Ite():
                return Ite(self.expr(e.cond), self.expr(e.then), self.expr(e.other))
            case Quant():
                return Quant(e.kind, e.var, e.n, self.expr(e.body),
                             None if e.cond is None else self.expr(e.cond),
                             None if e.default is None else self.expr(e.default))
            case _:
                raise unknown_node(e, "unknown expression node")

    def _operand(self, e: Expr) -> Expr:
        """An operand of a comparison or arithmetic: an integer constant gets +1 and -1."""
        if isinstance(e, Const) and e.sort == INT and not isinstance(e.value, bool):
            c = int(e.value)
            up = self._new("constant+1", str(c), str(c + 1))
            down = self._new("constant-1", str(c), str(c - 1))
            return self.choose(up, Const(c + 1), self.choose(down, Const(c - 1), e))
        return self.expr(e)

    # -- statements ----------------------------------------------------------------------------

    def stmts(self, body: Sequence[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in body:
            match s:
                case Assign():
                    value = self.expr(s.value)
                    target = Read(s.target.var, tuple(self.expr(i) for i in s.target.index))
                    k = self._new("drop-statement", f"{show(s.target)} := {show(s.value)}",
                                  "(not done)")
                    stmt = Assign(target, value)
                    out.append(If(Not(self._is(k)), [stmt], []) if self._live(k) else stmt)
                case SetLocal():
                    out.append(SetLocal(s.local, self.expr(s.value)))
                case If():
                    cond = self.expr(s.cond)
                    k = self._new("swap-branches", f"when {show(s.cond)}",
                                  f"when {show(Not(s.cond))}")
                    out.append(If(self.choose(k, Not(cond), cond), self.stmts(s.then),
                                  self.stmts(s.other)))
                case For():
                    out.append(For(s.var, s.n, self.stmts(s.body)))
                case _:
                    raise unknown_node(s, "unknown statement")
        return out


def mutants(spec: Spec) -> list[Mutant]:
    """Every mutant of ``spec``'s actions, numbered from 1 in action and tree order."""
    b = _Builder(None)
    for a in spec.actions:
        b.action = a.name
        b.expr(a.guard)
        b.stmts(list(a.body))
    return b.mutants


def schema(spec: Spec, only: list[int] | None = None) -> tuple[Spec, list[Mutant]]:
    """The mutant schema of ``spec`` (its initial state has ``mutant = 0``: the original) and
    its mutants. Properties, the initial state and the protocol stay the spec's. ``only``: the
    schema holds just these mutants (a smaller kernel to compile); every mutant keeps its
    number."""
    found = mutants(spec)
    if any(v.name == VAR for v in spec.variables):
        raise ValueError(f"the spec already has a variable named {VAR!r}")
    var = Var(VAR, (), 0, max(len(found), 1), INT, "scalar",
              "which mutant runs (0: the original); constant along a behaviour")
    b = _Builder(var, None if only is None else frozenset(only))
    actions = []
    for a in spec.actions:
        b.action = a.name
        guard = b.expr(a.guard)
        body = tuple(b.stmts(list(a.body)))
        actions.append(replace(a, guard=guard, body=body))
    assert [m.id for m in b.mutants] == [m.id for m in found]
    out = copy.copy(spec)
    out.variables = list(spec.variables) + [var]
    out.actions = actions
    out.params = dict(spec.params)
    out.init = list(spec.init)
    out.protocol = spec.protocol
    return out, found


def schema_for(schema_spec: Spec, k: int) -> Spec:
    """The schema whose initial state runs mutant ``k`` (for the interpreter: traces)."""
    var = schema_spec.var(VAR)
    out = copy.copy(schema_spec)
    out.init = list(schema_spec.init) + [Assign(Read(var, ()), Const(k))]
    return out


# -- expressions as text -------------------------------------------------------------------------

_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "+": 5, "-": 5}


def show(e: Expr) -> str:
    """An expression in the spec language's Python spelling (for diffs)."""
    return _show(e, 0)


def _show(e: Expr, outer: int) -> str:
    def wrap(text: str, prec: int) -> str:
        return f"({text})" if prec < outer else text

    match e:
        case Const():
            v = e.value
            return ("True" if v else "False") if isinstance(v, bool) else str(v)
        case Bound() | Local():
            return e.name
        case ActionParam():
            return f"p{e.name.rsplit('.p', 1)[-1]}"
        case Read():
            name = e.var.name + ("'" if e.primed else "")
            return name if not e.index else f"{name}[{', '.join(_show(i, 0) for i in e.index)}]"
        case Arith():
            if e.op in ("min", "max"):
                return f"{e.op}_({_show(e.a, 0)}, {_show(e.b, 0)})"
            return wrap(f"{_show(e.a, 5)} {e.op} {_show(e.b, 6)}", 5)
        case Cmp():
            return wrap(f"{_show(e.a, 5)} {e.op} {_show(e.b, 5)}", 4)
        case And():
            return wrap(" & ".join(_show(a, 3) for a in e.args), 2)
        case Or():
            return wrap(" | ".join(_show(a, 2) for a in e.args), 1)
        case Not():
            return wrap(f"~{_show(e.a, 5)}", 3)
        case Ite():
            return f"ite({_show(e.cond, 0)}, {_show(e.then, 0)}, {_show(e.other, 0)})"
        case Quant():
            q = e.var.name
            if e.kind in ("forall", "exists", "count"):
                return f"{e.kind}({q} < {e.n}: {_show(e.body, 0)})"
            cond, default = e.reduction
            return (f"{e.kind}_over({q} < {e.n}: {_show(e.body, 0)} where {_show(cond, 0)}, "
                    f"else {_show(default, 0)})")
        case _:
            raise unknown_node(e, "unknown expression node")


