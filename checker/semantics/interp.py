"""The scalar interpreter: evaluates the spec's objects on one state at a time.

This is the slow path, used to replay and certify traces and as the reference the compiled
kernel and the Z3 translation are tested against. It checks what the kernel does not: every
index is inside its variable's shape and every written value inside its domain.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from hwcheck.checker.semantics.exprgen import ARITH
from hwcheck.checker.semantics.layout import Layout
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

# A state as the interpreter reads it: a layout row, or its cells as a list of ints
Cells = Sequence[int] | np.ndarray
# Bound / ActionParam -> value; a local's name -> value
Env = dict[Any, int]


class ModelError(SpecError):
    """The model did something its own declarations forbid (an index or a value out of range).
    ``variable`` names the variable, ``where`` the action or property."""

    def __init__(self, msg: str, variable: str = "", where: str = "") -> None:
        super().__init__(msg)
        self.variable = variable
        self.where = where


def _at(var: Var, idx: tuple[int, ...]) -> str:
    """``x`` for a scalar, ``x[1, 2]`` for an array element."""
    return var.name + (f"[{', '.join(map(str, idx))}]" if idx else "")


class Interpreter:
    def __init__(self, spec: Spec, layout: Layout | None = None) -> None:
        self.spec = spec
        self.layout = layout or Layout.of(spec)
        self.instances = spec.instances()

    # -- expressions -----------------------------------------------------------------------------

    def eval(self, e: Expr, cur: Cells, nxt: Cells | None = None, env: Env | None = None) -> int:
        return self._eval(e, cur, nxt, env if env is not None else {}, "expression")

    def _eval(self, e: Expr, cur: Cells, nxt: Cells | None, env: Env, where: str) -> int:
        """The value of ``e``: an int, or a bool (a BOOL read, a comparison, a connective)."""
        ev = self._eval
        match e:
            case Const():
                return e.value
            case Read():
                idx = tuple(ev(i, cur, nxt, env, where) for i in e.index)
                try:
                    pos = self.layout.cell(e.var, idx)
                except IndexError:
                    raise ModelError(f"{where}: reads {_at(e.var, idx)}, outside its shape "
                                     f"{list(e.var.shape)}", e.var.name, where) from None
                src = nxt if e.primed else cur
                if src is None:  # a primed read given no next state: the translator's error
                    raise SpecError(f"{where}: reads the next state without one")
                v = int(src[pos])
                return bool(v) if e.var.sort == BOOL else v
            case Bound() | ActionParam():
                return env[e]
            case Local():
                return env[e.name]
            case Arith():
                a, b = ev(e.a, cur, nxt, env, where), ev(e.b, cur, nxt, env, where)
                return ARITH[e.op](a, b)
            case Cmp():
                a, b = ev(e.a, cur, nxt, env, where), ev(e.b, cur, nxt, env, where)
                return a == b if e.op == "==" else a != b if e.op == "!=" else a < b \
                    if e.op == "<" else a <= b
            case And():
                return all(ev(x, cur, nxt, env, where) for x in e.args)
            case Or():
                return any(ev(x, cur, nxt, env, where) for x in e.args)
            case Not():
                return not ev(e.a, cur, nxt, env, where)
            case Ite():
                return ev(e.then if ev(e.cond, cur, nxt, env, where) else e.other, cur, nxt,
                          env, where)
            case Quant():
                return self._quant(e, cur, nxt, env, where)
            case _:
                raise unknown_node(e, f"{where}: unknown expression node")

    def _quant(self, e: Quant, cur: Cells, nxt: Cells | None, env: Env, where: str) -> int:
        ev = self._eval
        inner = dict(env)
        if e.kind in ("forall", "exists", "count"):
            hits = 0
            for i in range(e.n):
                inner[e.var] = i
                if ev(e.body, cur, nxt, inner, where):
                    hits += 1
                    if e.kind == "exists":
                        return True
                elif e.kind == "forall":
                    return False
            return hits if e.kind == "count" else e.kind == "forall"
        cond, default = e.reduction  # min / max
        vals = []
        for i in range(e.n):
            inner[e.var] = i
            if ev(cond, cur, nxt, inner, where):
                vals.append(ev(e.body, cur, nxt, inner, where))
        if not vals:
            return ev(default, cur, nxt, env, where)
        return min(vals) if e.kind == "min" else max(vals)

    # -- statements ------------------------------------------------------------------------------

    def _run(self, stmts: Iterable[Stmt], t: list[int], env: Env, where: str) -> None:
        for s in stmts:
            match s:
                case Assign():
                    idx = tuple(self._eval(i, t, None, env, where) for i in s.target.index)
                    var = s.target.var
                    try:
                        pos = self.layout.cell(var, idx)
                    except IndexError:
                        raise ModelError(f"{where}: writes {_at(var, idx)}, outside its shape "
                                         f"{list(var.shape)}", var.name, where) from None
                    val = int(self._eval(s.value, t, None, env, where))
                    if not var.lo <= val <= var.hi:
                        raise ModelError(f"{where}: writes {val} to {_at(var, idx)}, outside "
                                         f"its domain {var.lo}..{var.hi}", var.name, where)
                    t[pos] = val
                case SetLocal():
                    env[s.local.name] = self._eval(s.value, t, None, env, where)
                case If():
                    branch = s.then if self._eval(s.cond, t, None, env, where) else s.other
                    self._run(branch, t, env, where)
                case For():
                    for i in range(s.n):
                        env[s.var] = i
                        self._run(s.body, t, env, where)
                case _:
                    raise unknown_node(s, f"{where}: unknown statement")

    # -- states and transitions ------------------------------------------------------------------

    def bottom(self) -> list[int]:
        """Every variable at the bottom of its domain (its start value): what Init writes on."""
        t = [0] * self.layout.stride
        for v in self.spec.variables:
            off = self.layout.offsets[v.name]
            for i in range(v.size):
                t[off + i] = v.initial
        return t

    def initials(self) -> list[np.ndarray]:
        """The initial states: Init run on the bottom state once per choice its guard and its
        conditions on the state built allow (one run without choices), in the order of the
        choices, each state once."""
        out, seen = [], set()
        init = self.spec.init_action
        for args in init.instances():
            env = dict(zip(init.params, args))
            t = self.bottom()
            if not self._eval(init.guard, t, None, env, "Init"):
                continue
            self._run(init.body, t, env, "Init")
            if not self._eval(self.spec.init_post, t, None, env, "Init"):
                continue
            row: np.ndarray = np.array(t, dtype=self.layout.dtype)
            if row.tobytes() not in seen:
                seen.add(row.tobytes())
                out.append(row)
        if not out:
            raise SpecError("Init: no choice satisfies its guard and its conditions, so there is "
                            "no initial state")
        return out

    def initial(self) -> np.ndarray:
        """The first initial state (the only one unless Init chooses)."""
        return self.initials()[0]

    def _env(self, inst: Instance) -> Env:
        return dict(zip(inst.action.params, inst.args))

    def step(self, inst: Instance, row: Cells) -> np.ndarray | None:
        """The successor of ``row`` by ``inst``, or None when its guard is false."""
        cur = [int(x) for x in row]
        env = self._env(inst)
        if not self._eval(inst.action.guard, cur, None, env, inst.label):
            return None
        t = list(cur)
        self._run(inst.action.body, t, env, inst.label)
        return np.array(t, dtype=self.layout.dtype)

    def successors(self, row: Cells) -> list[tuple[Instance, np.ndarray]]:
        out = []
        for inst in self.instances:
            nxt = self.step(inst, row)
            if nxt is not None:
                out.append((inst, nxt))
        return out

    def holds(self, expr: Expr, row: Cells, nxt: Cells | None = None) -> bool:
        cur = [int(x) for x in row]
        nx = None if nxt is None else [int(x) for x in nxt]
        return bool(self._eval(expr, cur, nx, {}, "property"))

    def instance(self, label_or_index: int | str) -> Instance:
        if isinstance(label_or_index, int):
            return self.instances[label_or_index]
        for inst in self.instances:
            if inst.label == label_or_index:
                return inst
        raise SpecError(f"unknown action {label_or_index!r}")
