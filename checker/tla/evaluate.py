"""The TLA+ evaluator: expressions on a state, and actions as every way they are satisfied.

`Evaluator.value` evaluates a state (or action) predicate or any expression; `Evaluator.initial`
and `Evaluator.successors` enumerate every way Init or Next is satisfied as TLC does: a
conjunction left to right, each disjunction and each ``\\E`` a branch (even where two branches
give the same state: each counts as a generated state), ``x' = e`` and ``x' \\in S`` assigning a
variable not yet assigned (testing it once assigned), UNCHANGED, IF and CASE choosing a branch,
operators expanded. Each successor carries its `Label`: the Next disjunct's operator with its
arguments and the ``\\E`` bindings on the way to it (the step's name in a trace).

Plain Python, one state at a time: the reference for the compiled path and the explorer that
discovers domains, not the fast path. Operators that read no state are evaluated once per
argument tuple (`Defn.memo`); a constant expression (one that reads no variable, no prime and
no name an enclosing operator or quantifier binds: ``SUBSET Resources``, ``{"a1", "a2"}``) once
per run (`Evaluator._constant`); a name no operator or quantifier binds is resolved once per
scope (`Evaluator._resolve`); a finite set is put in the canonical order once (`finite`). A
random draw (Randomization) is made at each evaluation, except in a definition without
parameters that reads no variable, evaluated once as TLC evaluates a constant definition.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .modules import Defn, InstanceRef, Root, Scope
from .stdlib import Builtin
from .syntax import (
    And,
    At,
    Bool,
    Bound,
    Case,
    Choose,
    Conjunct,
    Dot,
    Enabled,
    Except,
    Expr,
    Fairness,
    FnApp,
    FnDef,
    FnLit,
    FnSet,
    If,
    Instanced,
    Lambda,
    Let,
    LetFn,
    Num,
    OpApp,
    OpDef,
    Or,
    Param,
    Pos,
    Prime,
    Quant,
    RecordLit,
    RecordSet,
    SetEnum,
    SetFilter,
    SetMap,
    StepAction,
    Str,
    Temporal,
    TlaError,
    Tuple,
    Unchanged,
    Unevaluable,
    fail,
)
from .values import (
    INT,
    NAT,
    STRING,
    Fcn,
    FcnSet,
    Infinite,
    LazySet,
    ModelValue,
    ProductSet,
    SubsetSet,
    UnionSet,
    Value,
    as_frozen,
    is_set,
    key,
    kind,
    member,
    show,
    sorted_values,
    tup,
)
from .values import RecordSet as RecordSetValue

Env = dict[str, Any]
State = dict[str, Value]


class Ctx:
    """What an evaluation reads: the state, the next state's assigned variables (None in a
    state predicate) and how many primed reads happened (a memo is valid across next states
    only if none did)."""

    __slots__ = ("state", "nxt", "primes")

    def __init__(self, state: State, nxt: State | None) -> None:
        self.state = state
        self.nxt = nxt
        self.primes = 0


class Thunk:
    """An argument or a LET definition without parameters, evaluated when first read (TLA+'s
    call by name) and kept for the state (and next state, if it read one) it was read in."""

    __slots__ = ("e", "sc", "env", "state", "nxt", "val", "done")

    def __init__(self, e: Expr, sc: Scope, env: Env) -> None:
        self.e, self.sc, self.env = e, sc, env
        self.done = False
        self.state: State | None = None
        self.nxt: State | None = None
        self.val: Value = None

    def get(self, ev: Evaluator, cx: Ctx) -> Value:
        if self.done and self.state is cx.state and (self.nxt is None or self.nxt is cx.nxt):
            return self.val
        before = cx.primes
        v = ev.ev(self.e, self.sc, self.env, cx)
        self.done, self.state, self.val = True, cx.state, v
        self.nxt = cx.nxt if cx.primes != before else None
        return v


@dataclass(frozen=True)
class Closure:
    """A LET operator with parameters, or an operator passed as an argument."""

    d: OpDef
    sc: Scope
    env: Env


@dataclass(frozen=True)
class Label:
    """A step's name: the operator of the Next disjunct taken, with its arguments and the
    ``\\E`` bindings below it."""

    name: str
    args: tuple[Value, ...] = ()

    def __str__(self) -> str:
        if not self.args:
            return self.name
        return f"{self.name}({', '.join(show(a) for a in self.args)})"


class RecFcn:
    """``f[x \\in S] == e`` over an infinite S: applied on demand, never enumerated."""

    __slots__ = ("defn", "domain", "cache", "env")

    def __init__(self, defn: Defn, domain: Value, env: Env | None = None) -> None:
        self.defn = defn
        self.domain = domain
        self.cache: dict[Any, Value] = {}
        self.env = env or {}  # a LET's: the names its body reads besides its own


# what a name stands for in a scope (`Evaluator._resolve`)
_CORE, _DEFN, _BUILTIN, _VAR, _CONSTANT, _OTHER = (
    "core", "definition", "builtin", "variable", "constant", "other")

CORE_NAMES = frozenset({
    "=", "/=", "\\in", "\\notin", "\\cup", "\\cap", "\\", "\\subseteq", "\\subset",
    "\\supseteq", "\\supset", "=>", "<=>", "~", "SUBSET", "UNION", "DOMAIN", "\\X", "BOOLEAN",
    "STRING",
})


def _bool(v: Value, pos: Pos, what: str) -> bool:
    if v is True or v is False:
        return v
    raise fail(pos, f"{what} is {kind(v)} ({show(v)}), not a boolean")


class Evaluator:
    def __init__(self, root: Root) -> None:
        self.root = root
        self.scope = root.scope
        self.variables = root.variables
        # a scope -> a name no operator or quantifier binds -> what it stands for there
        self._names: dict[Scope, dict[str, tuple[str, Any]]] = {}
        # a finite set -> its elements in the canonical order (`finite`)
        self._order: dict[frozenset[Value], tuple[frozenset[Value], list[Value]]] = {}
        self._ev: dict[type, Callable[[Any, Scope, Env, Ctx], Value]] = {
            Num: lambda e, sc, env, cx: e.value,
            Str: lambda e, sc, env, cx: e.value,
            Bool: lambda e, sc, env, cx: e.value,
            OpApp: self.ev_opapp, Instanced: self.ev_instanced, And: self.ev_and,
            Or: self.ev_or, Prime: self.ev_prime, Quant: self.ev_quant, Choose: self.ev_choose,
            SetEnum: self.ev_setenum, SetFilter: self.ev_setfilter, SetMap: self.ev_setmap,
            FnLit: self.ev_fnlit, FnApp: self.ev_fnapp, Except: self.ev_except,
            At: self.ev_at, RecordLit: self.ev_recordlit, RecordSet: self.ev_recordset,
            FnSet: self.ev_fnset, Dot: self.ev_dot, Tuple: self.ev_tuple, If: self.ev_if,
            Case: self.ev_case, Let: self.ev_let, Unchanged: self.ev_unchanged,
            Enabled: self.ev_enabled, Unevaluable: self.ev_unevaluable, LetFn: self.ev_letfn,
            Conjunct: self.ev_conjunct,
        }
        # a node -> [node, scope, the names it reads unbound (None: it reads the state or
        # something else that changes), whether its value is known, its value]: a constant
        # expression is evaluated once (`_constant`)
        self._const: dict[int, list[Any]] = {}
        # the definitions that read a variable even where random draws count as constant
        self._reads_state: set[Defn] = set()
        # an instance's operator constant given as a LAMBDA: its definition, made once
        self._lambdas: dict[int, Defn] = {}
        for t in (SetEnum, SetFilter, SetMap, FnSet, RecordSet, FnLit, Quant, Choose, Tuple,
                  RecordLit, Let, Case, If):
            self._ev[t] = self._once(self._ev[t])

    # -- entry points --------------------------------------------------------------------

    def definition(self, name: str, pos: Pos | None = None) -> Defn:
        entry = self.scope.defs.get(name)
        if not isinstance(entry, Defn) or not isinstance(entry.d, OpDef) or entry.d.params:
            raise fail(pos, f"{name} is not an operator without parameters of "
                            f"{self.scope.module.name}")
        return entry

    def value(self, e: Expr, state: State, nxt: State | None = None,
              sc: Scope | None = None, env: Env | None = None) -> Value:
        with _bounded(e.pos):
            return self.ev(e, sc or self.scope, env or {}, Ctx(state, nxt))

    def predicate(self, defn: Defn, state: State, nxt: State | None = None) -> bool:
        with _bounded(defn.d.pos):
            v = self.ev(defn.d.body, defn.scope, {}, Ctx(state, nxt))
        return _bool(v, defn.d.pos, defn.name)

    def initial(self, init: Expr) -> Iterator[State]:
        """Every way ``init`` is satisfied (the same state as often as it is)."""
        with _bounded(init.pos):
            for asg, _ in self.act(init, self.scope, {}, {}, None, False, True, None):
                self._complete(asg, init.pos, "the initial predicate", prime=False)
                yield asg

    def successors(self, nxt: Expr, state: State) -> Iterator[tuple[Label, State]]:
        """Every way ``nxt`` is satisfied from ``state``, with its step label."""
        with _bounded(nxt.pos):
            for asg, label in self.act(nxt, self.scope, {}, {}, state, False, False, None):
                self._complete(asg, nxt.pos, f"the step {label}", prime=True)
                yield label or Label("Next"), asg

    def _complete(self, asg: State, pos: Pos, what: str, prime: bool) -> None:
        if len(asg) != len(self.variables):
            missing = next(v for v in self.variables if v not in asg)
            raise fail(pos, f"{what} does not determine {missing}{chr(39) if prime else ''}")

    # -- expressions ---------------------------------------------------------------------

    def ev(self, e: Expr, sc: Scope, env: Env, cx: Ctx) -> Value:
        return self._ev[type(e)](e, sc, env, cx)

    def ev_bool(self, e: Expr, sc: Scope, env: Env, cx: Ctx) -> bool:
        v = self.ev(e, sc, env, cx)
        if v is True or v is False:
            return v
        raise fail(e.pos, f"expected a boolean, found {kind(v)} ({show(v)})")

    def finite(self, v: Value, pos: Pos) -> list[Value]:
        """The elements of the finite set ``v`` in the canonical order (a list the caller
        does not change: a set's order is computed once and kept)."""
        if type(v) is frozenset:
            order = self._order
            kept = order.get(v)
            # the same set only: Python's equal sets may differ in TLA+ ({1} and {TRUE})
            if kept is not None and kept[0] is v:
                return kept[1]
            if len(order) > 100_000:
                order.clear()
            out = sorted_values(v)
            order[v] = (v, out)
            return out
        if isinstance(v, LazySet):
            if not v.finite:
                raise fail(pos, f"cannot enumerate the infinite set {show(v)}")
            listed: list[Value] | None = v.__dict__.get("_listed")
            if listed is None:  # a lazy set does not change: listed once
                listed = v.__dict__["_listed"] = list(v.in_order())
            return listed
        raise fail(pos, f"expected a set, found {kind(v)} ({show(v)})")

    def ordered(self, v: Value, pos: Pos) -> Iterable[Value]:
        """The elements of the finite set ``v`` in the canonical order, one at a time where
        ``v`` is lazy (``[S -> T]``, ``SUBSET S``, ...: a CHOOSE or a quantifier that stops at
        its first witness builds no other element)."""
        if isinstance(v, LazySet) and v.finite and "_listed" not in v.__dict__:
            return v.in_order()
        return self.finite(v, pos)

    def elements(self, v: Value, pos: Pos) -> frozenset[Value]:
        """The elements of the finite set ``v`` in no order (where none matters)."""
        if type(v) is frozenset:
            return v
        if isinstance(v, LazySet):
            if not v.finite:
                raise fail(pos, f"cannot enumerate the infinite set {show(v)}")
            return v.elements()
        raise fail(pos, f"expected a set, found {kind(v)} ({show(v)})")

    def bindings(self, bounds: tuple[Bound, ...], sc: Scope, env: Env,
                 cx: Ctx) -> Iterator[tuple[Env, tuple[Value, ...]]]:
        """Each binding of ``x \\in S, <<a, b>> \\in T``: the environment and the values."""
        if len(bounds) == 1 and not bounds[0].tuple and len(bounds[0].names) == 1:
            b = bounds[0]  # x \in S, the most frequent: no product to build
            name = b.names[0]
            for v in self.ordered(self.ev(b.set, sc, env, cx), b.set.pos):
                new = dict(env)
                new[name] = v
                yield new, (v,)
            return
        names: list[tuple[str, ...] | str] = []
        sets: list[list[Value]] = []
        for b in bounds:
            elems = self.finite(self.ev(b.set, sc, env, cx), b.set.pos)
            if b.tuple:
                names.append(b.names)
                sets.append(elems)
            else:
                for n in b.names:
                    names.append(n)
                    sets.append(elems)
        for combo in itertools.product(*sets):
            new = dict(env)
            for nm, v in zip(names, combo):
                if isinstance(nm, tuple):
                    if not (isinstance(v, Fcn) and v.is_seq() and len(v.map) == len(nm)):
                        raise fail(bounds[0].set.pos, f"<<{', '.join(nm)}>> cannot match "
                                                      f"{show(v)}")
                    new.update(zip(nm, v.seq()))
                else:
                    new[nm] = v
            yield new, combo

    def ev_opapp(self, e: OpApp, sc: Scope, env: Env, cx: Ctx) -> Value:
        name = e.name
        if name in env:
            v = env[name]
            if type(v) is Thunk:
                if e.args:
                    raise fail(e.pos, f"{name} takes no arguments")
                return v.get(self, cx)
            if type(v) is Closure:
                return self.call_closure(v, e.args, e.pos, sc, env, cx)
            if e.args:
                if callable(v):
                    return v(*[self.ev(a, sc, env, cx) for a in e.args])
                raise fail(e.pos, f"{name} takes no arguments")
            return v
        try:
            how, what = self._names[sc][name]
        except KeyError:
            how, what = self._resolve(sc, name)
        if how is _VAR:
            st = cx.state
            if name in st:
                return st[name]
            raise fail(e.pos, f"{name} is read before it is assigned")
        if how is _CONSTANT:
            return what
        if e.args and how is not _OTHER:
            info = self._const.get(id(e))
            if info is None:
                info = self._constant(e, sc)
            names = info[2]
            if names is not None and info[1] is sc and env.keys().isdisjoint(names):
                if info[3]:
                    return info[4]
                v = self._opapp_resolved(e, how, what, sc, env, cx)
                info[3], info[4] = True, v
                return v
        if how is _CORE:
            return self.core(e, sc, env, cx)
        if how is _DEFN:
            return self.call_defn(what, e.args, e.pos, sc, env, cx)
        return self._opapp_resolved(e, how, what, sc, env, cx)

    def _opapp_resolved(self, e: OpApp, how: str, what: Any, sc: Scope, env: Env,
                        cx: Ctx) -> Value:
        if how is _DEFN:
            return self.call_defn(what, e.args, e.pos, sc, env, cx)
        if how is _CORE:
            return self.core(e, sc, env, cx)
        if how is _BUILTIN:
            return self.call_builtin(what, e.args, e.pos, sc, env, cx)
        return self._opapp_rest(e, sc, env, cx)

    def _once(self, h: Callable[[Any, Scope, Env, Ctx], Value]
              ) -> Callable[[Any, Scope, Env, Ctx], Value]:
        """The handler ``h``, evaluating a constant expression once (`_constant`)."""
        const = self._const

        def run(e: Expr, sc: Scope, env: Env, cx: Ctx) -> Value:
            info = const.get(id(e))
            if info is None:
                info = self._constant(e, sc)
            names = info[2]
            if names is None or info[1] is not sc or not env.keys().isdisjoint(names):
                return h(e, sc, env, cx)
            if info[3]:
                return info[4]
            v = h(e, sc, env, cx)
            info[3], info[4] = True, v
            return v
        return run

    def _constant(self, e: Expr, sc: Scope) -> list[Any]:
        """Whether ``e`` is constant in ``sc`` (reads no variable, no prime, no ``@``, no
        operator that does): then its value is kept while the names it reads unbound (which
        resolve to definitions, constants and standard operators) are bound by no enclosing
        operator or quantifier, checked at each use. The first scope ``e`` is met in only."""
        names: set[str] | None = set()
        try:
            self._free(e, sc, frozenset(), names)  # type: ignore[arg-type]
        except _Varies:
            names = None
        info = [e, sc, None if names is None else frozenset(names), False, None]
        self._const[id(e)] = info
        return info

    def _free(self, e: Any, sc: Scope, bound: frozenset[str], out: set[str]) -> None:
        """Adds the names ``e`` reads unbound to ``out``; `_Varies` if ``e`` is not
        constant."""
        t = type(e)
        if t is Num or t is Str or t is Bool:
            return
        if t is OpApp:
            for a in e.args:
                self._free(a, sc, bound, out)
            name = e.name
            if name in bound:
                return
            out.add(name)
            if name in CORE_NAMES:
                return
            entry = sc.defs.get(name)
            if type(entry) is Defn:
                if self.state_free_defn(entry):
                    return
                raise _Varies
            if type(entry) is Builtin and not entry.varies:
                return
            if entry is None and name not in sc.subst and name not in sc.state_vars \
                    and name in sc.values:
                return
            if entry is None and not e.args and name in sc.subst:
                # an instance's constant (Values <- Int): constant if what is substituted is,
                # in the instantiating module, reading nothing the instance binds
                sub, osc, oenv = sc.subst[name]
                names: set[str] = set()
                self._free(sub, osc, frozenset(), names)
                if names.isdisjoint(oenv):
                    return
            raise _Varies
        if t is Let:
            inner = bound | {d.name for d in e.defs if d.name is not None}
            for d in e.defs:
                if isinstance(d, OpDef):
                    self._free(d.body, sc, inner | {p.name for p in d.params}, out)
                elif isinstance(d, FnDef):  # f[x \in S] == e: S and e, x (and f) bound
                    for b in d.bounds:
                        self._free(b.set, sc, inner, out)
                    self._free(d.body, sc, inner | {n for b in d.bounds for n in b.names},
                               out)
                else:
                    raise _Varies
            self._free(e.body, sc, inner, out)
            return
        if t in (Quant, SetFilter, SetMap, FnLit, Choose):
            bounds = e.bounds if t in (Quant, SetMap, FnLit) else (e.bound,)
            for b in bounds:
                self._free(b.set, sc, bound, out)
            inner = bound | {n for b in bounds for n in b.names}
            self._free(e.pred if t is SetFilter else e.expr if t is SetMap else e.body, sc,
                       inner, out)
            return
        if t is RecordLit or t is RecordSet:
            for _, x in e.fields:
                self._free(x, sc, bound, out)
            return
        if t is Case:
            for c, v in e.arms:
                self._free(c, sc, bound, out)
                self._free(v, sc, bound, out)
            if e.other is not None:
                self._free(e.other, sc, bound, out)
            return
        if t in (And, Or, SetEnum, Tuple):
            children = e.items
        elif t is FnApp:
            children = (e.fn, *e.args)
        elif t is FnSet:
            children = (e.domain, e.range)
        elif t is Dot:
            children = (e.expr,)
        elif t is If:
            children = (e.cond, e.then, e.other)
        else:  # a prime, @, EXCEPT, an instance's operator, ENABLED, a LAMBDA, ...
            raise _Varies
        for c in children:
            self._free(c, sc, bound, out)

    def _resolve(self, sc: Scope, name: str) -> tuple[str, Any]:
        """What ``name``, bound by no enclosing operator or quantifier, stands for in ``sc``
        (found as `_opapp_rest` finds it; kept: a scope does not change once loaded)."""
        if name in CORE_NAMES:
            how: tuple[str, Any] = (_CORE, None)
        else:
            entry = sc.defs.get(name)
            if type(entry) is Defn:
                how = (_DEFN, entry)
            elif type(entry) is Builtin:
                how = (_BUILTIN, entry)
            elif entry is None and name not in sc.subst and name in sc.state_vars:
                how = (_VAR, None)
            elif entry is None and name not in sc.subst and name in sc.values:
                how = (_CONSTANT, sc.values[name])
            else:
                how = (_OTHER, None)
        self._names.setdefault(sc, {})[name] = how
        return how

    def _opapp_rest(self, e: OpApp, sc: Scope, env: Env, cx: Ctx) -> Value:
        """``e``'s operator name as neither a bound name nor one `_resolve` keeps."""
        name = e.name
        if name in CORE_NAMES:
            return self.core(e, sc, env, cx)
        entry = sc.defs.get(name)
        if entry is not None:
            if type(entry) is Defn:
                return self.call_defn(entry, e.args, e.pos, sc, env, cx)
            if type(entry) is Builtin:
                return self.call_builtin(entry, e.args, e.pos, sc, env, cx)
            raise fail(e.pos, f"{name} is an instance: use {name}!Op")
        if name in sc.subst:
            sub, osc, oenv = sc.subst[name]
            if e.args:
                op = self.substituted_op(name, sc, e.pos)
                return self.ev(op.d.body, op.scope, self.bind_params(
                    op.d, e.args, e.pos, sc, env), cx)  # type: ignore[arg-type]
            return self.ev(sub, osc, oenv, cx)
        if name in sc.state_vars:
            st = cx.state
            if name in st:
                return st[name]
            raise fail(e.pos, f"{name} is read before it is assigned")
        if name in sc.values:
            return sc.values[name]
        raise fail(e.pos, f"unknown operator {name}")

    def substituted_op(self, name: str, sc: Scope, pos: Pos) -> Defn:
        """The operator an instantiated module's operator constant ``name`` stands for (the
        instantiating module's operator of that name, or the one WITH gives)."""
        sub, osc, oenv = sc.subst[name]
        entry = osc.defs.get(sub.name) if isinstance(sub, OpApp) and not sub.args \
            and sub.name not in oenv else None
        if entry is None and isinstance(sub, OpApp) and not sub.args \
                and sub.name not in oenv and sub.name in osc.subst:
            # the instantiating module's own operator constant (an instance of an instance)
            return self.substituted_op(sub.name, osc, pos)
        if isinstance(sub, Lambda) and not oenv:  # WITH Constraint <- LAMBDA s, l : TRUE
            entry = self._lambdas.get(id(sub))
            if entry is None:
                entry = self._lambdas[id(sub)] = Defn(OpDef(sub.pos, name, tuple(
                    Param(p, 0) for p in sub.params), sub.body), osc)
        if not (isinstance(entry, Defn) and isinstance(entry.d, OpDef)):
            raise fail(pos, f"unsupported: the operator constant {name} of an instantiated "
                            "module, given as other than an operator's name")
        return entry

    def call_defn(self, defn: Defn, args: tuple[Expr, ...], pos: Pos, sc: Scope, env: Env,
                  cx: Ctx) -> Value:
        d = defn.d
        if isinstance(d, FnDef):
            if args:
                raise fail(pos, f"{d.name} is a function: apply it with {d.name}[...]")
            return self.fn_value(defn, cx)
        if len(args) != len(d.params):
            raise fail(pos, f"{d.name} takes {len(d.params)} argument(s), given {len(args)}")
        if defn.free is None:
            self.state_free_defn(defn)  # gives the operator its memo where it takes one
        memo = defn.memo
        if memo is not None:
            vals = tuple(self.ev(a, sc, env, cx) for a in args)
            k: Any = tuple(map(_memo_key, vals))
            try:
                return memo[k]
            except KeyError:
                pass
            except TypeError:  # an unhashable argument (a RecFcn): no memo
                k = None
            v = self.ev(d.body, defn.scope, {p.name: x for p, x in zip(d.params, vals)},
                        Ctx({}, None))
            if k is not None:
                if len(memo) > 200_000:
                    memo.clear()
                memo[k] = v
            return v
        return self.ev(d.body, defn.scope, self.bind_params(d, args, pos, sc, env), cx)

    def bind_params(self, d: OpDef, args: tuple[Expr, ...], pos: Pos, sc: Scope,
                    env: Env) -> Env:
        new: Env = {}
        for p, a in zip(d.params, args):
            if p.arity == 0:
                t = type(a)
                if t is OpApp and not a.args and a.name in env:  # type: ignore[attr-defined]
                    # a name bound here: its value (or its own thunk), read as the thunk
                    # of the name would read it
                    v = env[a.name]  # type: ignore[attr-defined]
                    new[p.name] = v if type(v) is not Closure else Thunk(a, sc, env)
                elif t is Num or t is Str or t is Bool:
                    new[p.name] = a.value  # type: ignore[attr-defined]
                else:
                    new[p.name] = Thunk(a, sc, env)
            else:
                new[p.name] = self.operator_arg(a, p.arity, sc, env)
        return new

    def operator_arg(self, a: Expr, arity: int, sc: Scope, env: Env) -> Any:
        """An operator given as an argument: a closure over the caller's scope."""
        if isinstance(a, Lambda):
            return Closure(OpDef(a.pos, "LAMBDA", tuple(Param(p, 0) for p in a.params),
                                 a.body, False), sc, dict(env))
        if not isinstance(a, OpApp) or a.args:
            raise fail(a.pos, "expected an operator name or a LAMBDA as this argument")
        if a.name in env:
            return env[a.name]
        entry = sc.defs.get(a.name)
        if isinstance(entry, Defn) and isinstance(entry.d, OpDef):
            return Closure(entry.d, entry.scope, {})
        if isinstance(entry, Builtin):
            b = entry
            return lambda *vs: b.fn(a.pos, *vs)
        raise fail(a.pos, f"{a.name} is not an operator that can be passed")

    def call_closure(self, c: Closure, args: tuple[Expr, ...], pos: Pos, sc: Scope,
                     env: Env, cx: Ctx) -> Value:
        if len(args) != len(c.d.params):
            raise fail(pos, f"{c.d.name} takes {len(c.d.params)} argument(s), "
                            f"given {len(args)}")
        new = dict(c.env)
        new.update(self.bind_params(c.d, args, pos, sc, env))
        return self.ev(c.d.body, c.sc, new, cx)

    def as_callable(self, op: Any, pos: Pos, cx: Ctx) -> Callable[..., Value]:
        if type(op) is Closure:
            c = op

            def run(*vs: Value) -> Value:
                new = dict(c.env)
                new.update({p.name: v for p, v in zip(c.d.params, vs)})
                return self.ev(c.d.body, c.sc, new, cx)
            return run
        if not callable(op) or type(op) is Thunk:
            raise fail(pos, "expected an operator as this argument, found a value")
        return op  # type: ignore[no-any-return]

    def call_builtin(self, b: Builtin, args: tuple[Expr, ...], pos: Pos, sc: Scope, env: Env,
                     cx: Ctx) -> Value:
        if len(args) != b.arity:
            raise fail(pos, f"{b.name} takes {b.arity} argument(s), given {len(args)}")
        vals = [self.as_callable(self.operator_arg(a, 1, sc, env), pos, cx)
                if i in b.op_args else self.ev(a, sc, env, cx) for i, a in enumerate(args)]
        return b.fn(pos, *vals)

    def fn_value(self, defn: Defn, cx: Ctx) -> Value:
        """The value of ``f[x \\in S] == e``: a function on S (lazy if S is infinite)."""
        d = defn.d
        assert isinstance(d, FnDef)
        if defn.memo is not None and () in defn.memo:
            return defn.memo[()]
        if defn.free is None:
            defn.free = self.state_free_defn(defn)
        dom = self.ev_domain(d.bounds, defn.scope, {}, cx)
        rec = RecFcn(defn, dom)
        if not getattr(dom, "finite", True):
            value: Value = rec
        else:
            value = Fcn({k: self.apply_rec(rec, k, d.pos, cx) for k in self.finite(dom, d.pos)})
        if defn.free:
            defn.memo = {(): value}
        return value

    def ev_domain(self, bounds: tuple[Bound, ...], sc: Scope, env: Env, cx: Ctx) -> Value:
        sets = []
        if len(bounds) == 1 and bounds[0].tuple:  # f[<<x, y>> \in S]: S, its tuples the keys
            return self.ev(bounds[0].set, sc, env, cx)
        for b in bounds:
            if b.tuple:
                raise fail(b.set.pos, "unsupported: a tuple pattern beside other bounds in a "
                                      "function's domain")
            s = self.ev(b.set, sc, env, cx)
            sets += [s] * len(b.names)
        if len(sets) == 1:
            return sets[0]
        if not all(getattr(s, "finite", True) for s in sets):
            return ProductSet(tuple(sets))  # f[n \in Nat, v \in S]: applied on demand
        return frozenset(tup(c) for c in itertools.product(*[self.finite(s, bounds[0].set.pos)
                                                             for s in sets]))

    def apply_rec(self, rec: RecFcn, k: Value, pos: Pos, cx: Ctx) -> Value:
        ck = (True, k) if type(k) is bool else k
        if ck in rec.cache:
            return rec.cache[ck]
        if not member(k, rec.domain):
            raise fail(pos, f"{rec.defn.name}[{show(k)}]: {show(k)} is not in its domain")
        d = rec.defn.d
        assert isinstance(d, FnDef)
        names = [n for b in d.bounds for n in b.names]
        env: Env = {**rec.env, d.name: rec}
        if len(names) == 1 and not d.bounds[0].tuple:
            env[names[0]] = k
        else:  # x \in S, y \in T (k = <<x, y>>), or <<x, y>> \in S (k is S's tuple)
            if not (isinstance(k, Fcn) and k.is_seq() and len(k.map) == len(names)):
                raise fail(pos, f"{rec.defn.name}[{show(k)}]: {show(k)} cannot match "
                                f"<<{', '.join(names)}>>")
            env.update(zip(names, k.seq()))
        v = self.ev(d.body, rec.defn.scope, env, cx)
        rec.cache[ck] = v
        return v

    def ev_instanced(self, e: Instanced, sc: Scope, env: Env, cx: Ctx) -> Value:
        entry = self.instance_scope(e, sc, env, cx).defs[e.name]
        if type(entry) is Defn:
            return self.call_defn(entry, e.args, e.pos, sc, env, cx)
        if type(entry) is Builtin:
            return self.call_builtin(entry, e.args, e.pos, sc, env, cx)
        raise fail(e.pos, f"{e.instance}!{e.name} is an instance: unsupported")

    def instance_scope(self, e: Instanced, sc: Scope, env: Env, cx: Ctx) -> Scope:
        ref = env.get(e.instance) if e.instance in env else sc.defs.get(e.instance)
        if not isinstance(ref, InstanceRef):
            raise fail(e.pos, f"{e.instance} is not a named INSTANCE")
        if len(e.instance_args) != len(ref.d.params):
            raise fail(e.pos, f"{e.instance} takes {len(ref.d.params)} argument(s)")
        args = tuple(self.ev(a, sc, env, cx) for a in e.instance_args)
        inner = ref.instance(args)
        for name, inst_args in e.chain:  # A!B!Op: B is an instance A defines
            ref = inner.defs.get(name)
            if not isinstance(ref, InstanceRef) or len(inst_args) != len(ref.d.params):
                raise fail(e.pos, f"{name} is not a named INSTANCE of {inner.module.name} "
                                  f"with {len(inst_args)} argument(s)")
            inner = ref.instance(tuple(self.ev(a, sc, env, cx) for a in inst_args))
        if e.name not in inner.defs:
            raise fail(e.pos, f"{e.instance}!{e.name}: module {ref.d.module} defines no "
                              f"{e.name}")
        return inner

    def core(self, e: OpApp, sc: Scope, env: Env, cx: Ctx) -> Value:
        name, args, pos = e.name, e.args, e.pos
        if name == "=":  # the most frequent first
            return _equal(self.ev(args[0], sc, env, cx), self.ev(args[1], sc, env, cx), pos)
        if name == "\\in":
            x = self.ev(args[0], sc, env, cx)
            got = self._filter_member(x, args[1], sc, env, cx)
            if got is not None:
                return got
            return self.member(x, self.ev(args[1], sc, env, cx), pos)
        if name == "\\notin":
            x = self.ev(args[0], sc, env, cx)
            got = self._filter_member(x, args[1], sc, env, cx)
            if got is not None:
                return not got
            return not self.member(x, self.ev(args[1], sc, env, cx), pos)
        if name == "=>":
            return (not self.ev_bool(args[0], sc, env, cx)) or self.ev_bool(args[1], sc, env, cx)
        if name == "BOOLEAN":
            return frozenset((False, True))
        if name == "STRING":
            return STRING
        vals = [self.ev(a, sc, env, cx) for a in args]
        if name == "=":
            return _equal(vals[0], vals[1], pos)
        if name == "/=":
            return not _equal(vals[0], vals[1], pos)
        if name == "\\in":
            return self.member(vals[0], vals[1], pos)
        if name == "\\notin":
            return not self.member(vals[0], vals[1], pos)
        if name == "~":
            return not _bool(vals[0], pos, "the operand of ~")
        if name == "<=>":
            return _bool(vals[0], pos, "<=>") == _bool(vals[1], pos, "<=>")
        if name == "SUBSET":
            self.need_set(vals[0], pos)
            return SubsetSet(vals[0])
        if name == "UNION":
            outer = self.elements(vals[0], pos)
            if not all(getattr(s, "finite", True) for s in outer):
                return UnionSet(frozenset(outer))  # membership only (TypeOK's [D -> Int])
            out: set[Value] = set()
            for s in outer:
                out |= self.elements(s, pos)
            return frozenset(out)
        if name == "DOMAIN":
            f = vals[0]
            if isinstance(f, Fcn):
                return frozenset(f.map)
            if isinstance(f, RecFcn):
                return f.domain
            if f == frozenset():
                return frozenset()
            raise fail(pos, f"DOMAIN of {kind(f)} ({show(f)})")
        if name == "\\X":
            return frozenset(tup(c) for c in itertools.product(
                *[self.finite(v, pos) for v in vals]))
        a, b = vals
        if name == "\\subseteq":
            return all(self.member(x, b, pos) for x in self.elements(a, pos))
        if name == "\\supseteq":
            return all(self.member(x, a, pos) for x in self.elements(b, pos))
        if name == "\\subset":
            return all(self.member(x, b, pos) for x in self.elements(a, pos)) and not _equal(
                a, b, pos)
        if name == "\\supset":
            return all(self.member(x, a, pos) for x in self.elements(b, pos)) and not _equal(
                a, b, pos)
        if name == "\\cup":
            if not (getattr(a, "finite", True) and getattr(b, "finite", True)):
                self.need_set(a, pos)
                self.need_set(b, pos)
                return UnionSet(frozenset((a, b)))  # Int \cup {NULL}: membership only
            return self.elements(a, pos) | self.elements(b, pos)
        if name == "\\cap":
            if not getattr(a, "finite", True):
                a, b = b, a
            return frozenset(x for x in self.elements(a, pos) if self.member(x, b, pos))
        if name == "\\":
            if not getattr(a, "finite", True):  # Nat \ {0}: membership only, as TLC
                self.need_set(b, pos)
                return Infinite(f"{show(a)} \\ {show(b)}",
                                lambda x: a.contains(x) and not member(x, b))
            return frozenset(x for x in self.elements(a, pos) if not self.member(x, b, pos))
        raise fail(pos, f"unknown operator {name}")  # pragma: no cover

    def _filter_member(self, x: Value, e: Expr, sc: Scope, env: Env, cx: Ctx) -> bool | None:
        """``x \\in {y \\in S : p}`` (the filter written there, or the body of a definition
        without parameters named there) as TLC decides it: ``x \\in S`` and ``p`` for ``x``,
        without enumerating S (``DP \\in {DP \\in SUBSET SUBSET S : ...}``); None where ``e``
        is no such filter, or one that reads no state over a set already enumerated (then
        the filter is computed once and kept)."""
        while type(e) is OpApp and not e.args and e.name not in env:
            names = self._names.get(sc)
            how, what = names[e.name] if names and e.name in names else self._resolve(
                sc, e.name)
            if how is not _DEFN or not isinstance(what.d, OpDef) or what.d.params:
                return None
            if self.state_free_defn(what):
                return None  # computed once and kept (`call_defn`)
            e, sc, env = what.d.body, what.scope, {}
        if type(e) is not SetFilter or e.bound.tuple or len(e.bound.names) != 1:
            return None
        info = self._const.get(id(e))
        if info is None:
            info = self._constant(e, sc)
        constant = info[2] is not None and info[1] is sc and env.keys().isdisjoint(info[2])
        if constant and info[3]:
            return None  # kept
        base = self.ev(e.bound.set, sc, env, cx)
        if constant and type(base) is frozenset:
            return None  # enumerated once
        if not self.member(x, base, e.bound.set.pos):
            return False
        new = dict(env)
        new[e.bound.names[0]] = x
        return self.ev_bool(e.pred, sc, new, cx)

    def need_set(self, v: Value, pos: Pos) -> None:
        if not is_set(v):
            raise fail(pos, f"expected a set, found {kind(v)} ({show(v)})")

    def member(self, x: Value, s: Value, pos: Pos) -> bool:
        if isinstance(s, frozenset):
            return x in s
        if isinstance(s, LazySet):
            return s.contains(x)
        raise fail(pos, f"\\in applied to {kind(s)} ({show(s)}), not a set")

    def ev_and(self, e: And, sc: Scope, env: Env, cx: Ctx) -> Value:
        handlers = self._ev
        for item in e.items:
            v = handlers[type(item)](item, sc, env, cx)
            if v is False:
                return False
            if v is not True:
                raise fail(item.pos, f"expected a boolean, found {kind(v)} ({show(v)})")
        return True

    def ev_or(self, e: Or, sc: Scope, env: Env, cx: Ctx) -> Value:
        handlers = self._ev
        for item in e.items:
            v = handlers[type(item)](item, sc, env, cx)
            if v is True:
                return True
            if v is not False:
                raise fail(item.pos, f"expected a boolean, found {kind(v)} ({show(v)})")
        return False

    def ev_prime(self, e: Prime, sc: Scope, env: Env, cx: Ctx) -> Value:
        if cx.nxt is None:
            raise fail(e.pos, "a primed expression where no next state is given (a state "
                              "predicate, or a prime inside a prime)")
        cx.primes += 1
        return self.ev(e.expr, sc, env, Ctx(cx.nxt, None))

    def ev_quant(self, e: Quant, sc: Scope, env: Env, cx: Ctx) -> Value:
        want = e.kind == "E"
        for new, _ in self.bindings(e.bounds, sc, env, cx):
            if self.ev_bool(e.body, sc, new, cx) == want:
                return want
        return not want

    def ev_choose(self, e: Choose, sc: Scope, env: Env, cx: Ctx) -> Value:
        for new, combo in self.bindings((e.bound,), sc, env, cx):
            if self.ev_bool(e.body, sc, new, cx):
                return combo[0]
        raise fail(e.pos, "CHOOSE found no value that satisfies it")

    def ev_setenum(self, e: SetEnum, sc: Scope, env: Env, cx: Ctx) -> Value:
        return frozenset(self.ev(x, sc, env, cx) for x in e.items)

    def ev_setfilter(self, e: SetFilter, sc: Scope, env: Env, cx: Ctx) -> Value:
        if len(e.bound.names) != 1 and not e.bound.tuple:
            raise fail(e.pos, "unsupported: several names in {x, y \\in S : p}")
        return frozenset(combo[0] for new, combo in self.bindings((e.bound,), sc, env, cx)
                         if self.ev_bool(e.pred, sc, new, cx))

    def ev_setmap(self, e: SetMap, sc: Scope, env: Env, cx: Ctx) -> Value:
        return frozenset(self.ev(e.expr, sc, new, cx)
                         for new, _ in self.bindings(e.bounds, sc, env, cx))

    def ev_fnlit(self, e: FnLit, sc: Scope, env: Env, cx: Ctx) -> Value:
        out: dict[Value, Value] = {}
        # one argument: x \in S, or <<x, y>> \in S (the key is S's tuple itself)
        single = len(e.bounds) == 1 and (len(e.bounds[0].names) == 1 or e.bounds[0].tuple)
        for new, combo in self.bindings(e.bounds, sc, env, cx):
            k = combo[0] if single else tup(combo)
            out[k] = self.ev(e.body, sc, new, cx)
        return Fcn(out)

    def ev_fnapp(self, e: FnApp, sc: Scope, env: Env, cx: Ctx) -> Value:
        f = self.ev(e.fn, sc, env, cx)
        if len(e.args) == 1:
            k = self.ev(e.args[0], sc, env, cx)
        else:
            k = tup([self.ev(a, sc, env, cx) for a in e.args])
        if type(f) is Fcn:
            try:
                return f.map[k]
            except KeyError:
                pass
            except TypeError:
                raise fail(e.pos, f"{show(k)} cannot be a function's argument") from None
            raise fail(e.pos, f"{show(f)}[{show(k)}]: {show(k)} is not in the function's "
                              "domain")
        if type(f) is RecFcn:
            return self.apply_rec(f, k, e.pos, cx)
        raise fail(e.pos, f"applying {kind(f)} ({show(f)}), not a function, to {show(k)}")

    def ev_except(self, e: Except, sc: Scope, env: Env, cx: Ctx) -> Value:
        f = self.ev(e.fn, sc, env, cx)
        for path, new in e.updates:
            keys = []
            for step, arg in path:
                if step == "field":
                    keys.append(arg)
                else:
                    vs = [self.ev(a, sc, env, cx) for a in arg]  # type: ignore[attr-defined]
                    keys.append(vs[0] if len(vs) == 1 else tup(vs))
            f = self._update(f, keys, new, sc, env, cx, e.pos)
        return f

    def _update(self, f: Value, keys: list[Value], new: Expr, sc: Scope, env: Env, cx: Ctx,
                pos: Pos) -> Value:
        if not isinstance(f, Fcn):
            raise fail(pos, f"EXCEPT applied to {kind(f)} ({show(f)}), not a function")
        k = keys[0]
        if k not in f.map:
            return f  # TLC: a point outside the domain leaves the function as it is
        old = f.map[k]
        if len(keys) == 1:
            v = self.ev(new, sc, {**env, "@": old}, cx)
        else:
            v = self._update(old, keys[1:], new, sc, env, cx, pos)
        m = dict(f.map)
        m[k] = v
        return Fcn(m)

    def ev_at(self, e: At, sc: Scope, env: Env, cx: Ctx) -> Value:
        if "@" not in env:
            raise fail(e.pos, "@ outside an EXCEPT's new value")
        return env["@"]

    def ev_recordlit(self, e: RecordLit, sc: Scope, env: Env, cx: Ctx) -> Value:
        return Fcn({f: self.ev(x, sc, env, cx) for f, x in e.fields})

    def ev_recordset(self, e: RecordSet, sc: Scope, env: Env, cx: Ctx) -> Value:
        return RecordSetValue(tuple((f, self.ev(x, sc, env, cx)) for f, x in e.fields))

    def ev_fnset(self, e: FnSet, sc: Scope, env: Env, cx: Ctx) -> Value:
        d, r = self.ev(e.domain, sc, env, cx), self.ev(e.range, sc, env, cx)
        self.need_set(d, e.domain.pos)
        self.need_set(r, e.range.pos)
        return FcnSet(d, r)

    def ev_dot(self, e: Dot, sc: Scope, env: Env, cx: Ctx) -> Value:
        r = self.ev(e.expr, sc, env, cx)
        if isinstance(r, Fcn) and e.field in r.map:
            return r.map[e.field]
        raise fail(e.pos, f"{show(r)} has no field {e.field}")

    def ev_tuple(self, e: Tuple, sc: Scope, env: Env, cx: Ctx) -> Value:
        return tup([self.ev(x, sc, env, cx) for x in e.items])

    def ev_if(self, e: If, sc: Scope, env: Env, cx: Ctx) -> Value:
        return self.ev(e.then if self.ev_bool(e.cond, sc, env, cx) else e.other, sc, env, cx)

    def ev_case(self, e: Case, sc: Scope, env: Env, cx: Ctx) -> Value:
        for cond, val in e.arms:
            if self.ev_bool(cond, sc, env, cx):
                return self.ev(val, sc, env, cx)
        if e.other is None:
            raise fail(e.pos, "no arm of this CASE applies (and it has no OTHER)")
        return self.ev(e.other, sc, env, cx)

    def let_env(self, e: Let, sc: Scope, env: Env) -> Env:
        new = dict(env)
        for d in e.defs:
            if isinstance(d, OpDef):
                new[d.name] = Thunk(d.body, sc, new) if not d.params else Closure(d, sc, new)
            elif isinstance(d, FnDef):  # f[x \in S] == e: the function, when first read
                new[d.name] = Thunk(LetFn(d.pos, d), sc, new)
        return new

    def ev_letfn(self, e: LetFn, sc: Scope, env: Env, cx: Ctx) -> Value:
        defn = Defn(e.d, sc)
        rec = RecFcn(defn, self.ev_domain(e.d.bounds, sc, env, cx), env)
        if isinstance(rec.domain, LazySet):  # SUBSET S, Nat, ...: applied on demand, as TLC
            return rec
        return Fcn({k: self.apply_rec(rec, k, e.d.pos, cx)
                    for k in self.finite(rec.domain, e.d.pos)})

    def ev_let(self, e: Let, sc: Scope, env: Env, cx: Ctx) -> Value:
        return self.ev(e.body, sc, self.let_env(e, sc, env), cx)

    def ev_unchanged(self, e: Unchanged, sc: Scope, env: Env, cx: Ctx) -> Value:
        return _equal(self.ev(Prime(e.pos, e.expr), sc, env, cx), self.ev(e.expr, sc, env, cx),
                      e.pos)

    def ev_conjunct(self, e: Conjunct, sc: Scope, env: Env, cx: Ctx) -> Value:
        entry = sc.defs.get(e.name)
        if not (isinstance(entry, Defn) and isinstance(entry.d, OpDef)) or entry.d.params:
            raise fail(e.pos, f"{e.name}!{e.index}: {e.name} is not a definition without "
                              "parameters")
        body = entry.d.body
        items = body.items if isinstance(body, (And, Or)) else (body,)
        if not 1 <= e.index <= len(items):
            raise fail(e.pos, f"{e.name}!{e.index}: {e.name} has {len(items)} part(s)")
        return self.ev(items[e.index - 1], entry.scope, {}, cx)

    def ev_unevaluable(self, e: Unevaluable, sc: Scope, env: Env, cx: Ctx) -> Value:
        raise fail(e.pos, f"unsupported construct: {e.what}")

    def ev_enabled(self, e: Enabled, sc: Scope, env: Env, cx: Ctx) -> Value:
        # in an action too: whether some next state satisfies A from this state, whatever
        # the action around it assigns (its primes are ENABLED's own, as TLC reads it)
        for _ in self.act(e.expr, sc, env, {}, cx.state, False, False, None):
            return True
        return False

    # -- static analysis -----------------------------------------------------------------

    def _reads_no_state(self, defn: Defn, draws: frozenset[Defn]) -> bool:
        """Whether ``defn`` reads no variable, a random draw counting as reading nothing
        (``draws``: the definitions being read)."""
        d = defn.d
        if not isinstance(d, OpDef) or defn in self._reads_state:
            return False
        if self.state_free(d.body, defn.scope, {p.name for p in d.params}, draws):
            return True
        self._reads_state.add(defn)  # false whatever is being read around it
        return False

    def state_free_defn(self, defn: Defn) -> bool:
        """Whether ``defn`` reads no variable (its value depends only on its arguments)."""
        if defn.free is not None:
            return defn.free
        defn.free = True  # a recursive reference does not change the answer
        d = defn.d
        bound = {p.name for p in d.params} if isinstance(d, OpDef) else {
            n for b in d.bounds for n in b.names} | {d.name}
        if isinstance(d, FnDef) and not all(self.state_free(b.set, defn.scope, set())
                                            for b in d.bounds):
            defn.free = False
            return False
        defn.free = self.state_free(d.body, defn.scope, bound)
        if defn.free and isinstance(d, OpDef) and all(p.arity == 0 for p in d.params):
            defn.memo = {}  # its values, by argument (`call_defn`)
        elif not defn.free and isinstance(d, OpDef) and not d.params \
                and self._reads_no_state(defn, frozenset({defn})):
            # a constant definition that draws at random (RandomSuccSet ==
            # SuccSet2(5)): TLC evaluates it once when it starts, and so is it here
            defn.memo = {}
        return defn.free

    def state_free(self, e: Any, sc: Scope, bound: set[str],
                   draws: frozenset[Defn] | None = None) -> bool:
        """Whether ``e`` reads no variable. ``draws`` (the definitions being read, given by
        `_reads_no_state`): a random draw counts as reading nothing, as for TLC's constant
        definitions."""
        if isinstance(e, (Num, Str, Bool, At)):
            return True
        if isinstance(e, Instanced):
            # I!Op(args) of an instance without arguments: as Op reads the state in it
            ref = sc.defs.get(e.instance) if e.instance not in bound else None
            if e.instance_args or e.chain or not isinstance(ref, InstanceRef) or ref.d.params \
                    or not all(
                    self.state_free(a, sc, bound, draws) for a in e.args):
                return False
            entry = ref.instance(()).defs.get(e.name)
            if isinstance(entry, Defn):
                return self.state_free_defn(entry)
            return isinstance(entry, Builtin) and not entry.varies
        if isinstance(e, (Prime, Unchanged, Enabled, Fairness, Temporal, StepAction)):
            return False
        if isinstance(e, OpApp):
            if not all(self.state_free(a, sc, bound, draws) for a in e.args):
                return False
            if e.name in bound or e.name in CORE_NAMES:
                return True
            entry = sc.defs.get(e.name)
            if isinstance(entry, Defn):
                if draws is None or self.state_free_defn(entry):
                    return self.state_free_defn(entry)
                return entry in draws or self._reads_no_state(entry, draws | {entry})
            if isinstance(entry, Builtin):  # a random choice is made at each evaluation
                return not entry.varies or draws is not None
            if e.name in sc.subst:
                sub, osc, oenv = sc.subst[e.name]
                return self.state_free(sub, osc, set(oenv), draws)
            return e.name in sc.values
        if isinstance(e, Let):
            inner = bound | {d.name for d in e.defs if d.name is not None}
            for d in e.defs:
                if isinstance(d, OpDef):
                    if not self.state_free(d.body, sc, inner | {p.name for p in d.params},
                                           draws):
                        return False
                elif isinstance(d, FnDef):  # f[x \in S] == e: S and e, x (and f) bound
                    if not (all(self.state_free(b.set, sc, inner, draws) for b in d.bounds)
                            and self.state_free(d.body, sc, inner | {
                                n for b in d.bounds for n in b.names}, draws)):
                        return False
                else:
                    return False
            return self.state_free(e.body, sc, inner, draws)
        if isinstance(e, (Quant, SetFilter, SetMap, FnLit, Choose)):
            bounds = e.bounds if isinstance(e, (Quant, SetMap, FnLit)) else (e.bound,)
            if not all(self.state_free(b.set, sc, bound, draws) for b in bounds):
                return False
            inner = bound | {n for b in bounds for n in b.names}
            body = e.pred if isinstance(e, SetFilter) else (
                e.expr if isinstance(e, SetMap) else e.body)
            return self.state_free(body, sc, inner, draws)
        if isinstance(e, Except):
            return self.state_free(e.fn, sc, bound, draws) and all(
                self.state_free(v, sc, bound, draws) and all(
                    step == "field" or all(self.state_free(a, sc, bound, draws)
                                           for a in arg)  # type: ignore[attr-defined]
                    for step, arg in path) for path, v in e.updates)
        if isinstance(e, (RecordLit, RecordSet)):
            return all(self.state_free(x, sc, bound, draws) for _, x in e.fields)
        if isinstance(e, Case):
            return all(self.state_free(c, sc, bound, draws)
                       and self.state_free(v, sc, bound, draws) for c, v in e.arms) and (
                e.other is None or self.state_free(e.other, sc, bound, draws))
        children: list[Expr] = []
        if isinstance(e, (And, Or, SetEnum, Tuple)):
            children = list(e.items)
        elif isinstance(e, FnApp):
            children = [e.fn, *e.args]
        elif isinstance(e, FnSet):
            children = [e.domain, e.range]
        elif isinstance(e, Dot):
            children = [e.expr]
        elif isinstance(e, If):
            children = [e.cond, e.then, e.other]
        else:
            return False
        return all(self.state_free(c, sc, bound, draws) for c in children)

    # -- actions -------------------------------------------------------------------------

    def act(self, e: Expr, sc: Scope, env: Env, asg: State, state: State | None,
            fixed: bool, init: bool, label: Label | None) -> Iterator[tuple[State, Label | None]]:
        """Every way ``e`` is satisfied, extending the assignment ``asg`` (of the next state,
        or of the initial state when ``init``), each with the step label so far (``fixed``
        once a conjunction is entered)."""
        t = type(e)
        if t is And:
            yield from self._conj(e.items, 0, sc, env, asg, state, init, label)  # type: ignore[attr-defined]
            return
        if t is Or:
            for item in e.items:  # type: ignore[attr-defined]
                yield from self.act(item, sc, env, asg, state, fixed, init, label)
            return
        if t is Quant and e.kind == "E":  # type: ignore[attr-defined]
            cx = self._cx(asg, state, init)
            for new, combo in self.bindings(e.bounds, sc, env, cx):  # type: ignore[attr-defined]
                lab = label if fixed or label is None else Label(label.name, label.args + combo)
                yield from self.act(e.body, sc, new, asg, state, fixed, init,  # type: ignore[attr-defined]
                                    lab)
            return
        if t is Quant:  # \A over actions: the conjunction of its instances
            cx = self._cx(asg, state, init)
            bodies = [(new, e.body) for new, _ in self.bindings(e.bounds, sc, env, cx)]  # type: ignore[attr-defined]
            yield from self._conj_env(bodies, 0, sc, asg, state, init, label)
            return
        if t is If:
            cond = self.ev_bool(e.cond, sc, env, self._cx(asg, state, init))  # type: ignore[attr-defined]
            yield from self.act(e.then if cond else e.other, sc, env, asg, state,  # type: ignore[attr-defined]
                                fixed, init, label)
            return
        if t is Case:
            cx = self._cx(asg, state, init)
            for cond, branch in e.arms:  # type: ignore[attr-defined]
                if self.ev_bool(cond, sc, env, cx):
                    yield from self.act(branch, sc, env, asg, state, fixed, init, label)
                    return
            if e.other is None:  # type: ignore[attr-defined]
                raise fail(e.pos, "no arm of this CASE applies (and it has no OTHER)")
            yield from self.act(e.other, sc, env, asg, state, fixed, init, label)  # type: ignore[attr-defined]
            return
        if t is Let:
            yield from self.act(e.body, sc, self.let_env(e, sc, env), asg, state,  # type: ignore[arg-type, attr-defined]
                                fixed, init, label)
            return
        if t is Unchanged:
            yield from self._unchanged(e.expr, sc, env, asg, state, init, label)  # type: ignore[attr-defined]
            return
        if t is StepAction:
            if e.box:  # type: ignore[attr-defined]
                yield from self.act(e.action, sc, env, asg, state, fixed, init, label)  # type: ignore[attr-defined]
                yield from self._unchanged(e.vars, sc, env, asg, state, init, label)  # type: ignore[attr-defined]
                return
            raise fail(e.pos, "unsupported: <<A>>_v as an action")
        if t is OpApp:
            yield from self._act_opapp(e, sc, env, asg, state, fixed, init, label)  # type: ignore[arg-type]
            return
        if t is Instanced:
            inner = self.instance_scope(e, sc, env, self._cx(asg, state, init))  # type: ignore[arg-type]
            entry = inner.defs[e.name]  # type: ignore[attr-defined]
            if type(entry) is Defn and isinstance(entry.d, OpDef):
                yield from self._act_defn(entry, e.args, e.pos, sc, env, asg, state,  # type: ignore[attr-defined]
                                          fixed, init, label)
                return
        if t in (Fairness, Temporal):
            raise fail(e.pos, "a temporal formula where an action is expected")
        if self.ev_bool(e, sc, env, self._cx(asg, state, init)):
            yield asg, label

    def _cx(self, asg: State, state: State | None, init: bool) -> Ctx:
        return Ctx(asg, None) if init else Ctx(state, asg)  # type: ignore[arg-type]

    def _conj(self, items: tuple[Expr, ...], i: int, sc: Scope, env: Env, asg: State,
              state: State | None, init: bool,
              label: Label | None) -> Iterator[tuple[State, Label | None]]:
        if i == len(items):
            yield asg, label
            return
        for a2, lab in self.act(items[i], sc, env, asg, state, True, init, label):
            yield from self._conj(items, i + 1, sc, env, a2, state, init, lab)

    def _conj_env(self, items: list[tuple[Env, Expr]], i: int, sc: Scope, asg: State,
                  state: State | None, init: bool,
                  label: Label | None) -> Iterator[tuple[State, Label | None]]:
        if i == len(items):
            yield asg, label
            return
        env, e = items[i]
        for a2, lab in self.act(e, sc, env, asg, state, True, init, label):
            yield from self._conj_env(items, i + 1, sc, a2, state, init, lab)

    def _target(self, e: Expr, sc: Scope, env: Env, init: bool) -> str | None:
        """The state variable that ``e`` (``x'``, or ``x`` in Init) names, if it names one
        (through an operator's parameters: ``Send(p, m, x, x')`` with ``Send``'s body
        ``new = <<p, m>>`` assigns ``x'``, as TLC reads it)."""
        while type(e) is OpApp and not e.args and type(env.get(e.name)) is Thunk:
            th = env[e.name]
            e, sc, env = th.e, th.sc, th.env
        if not init:
            if type(e) is not Prime:
                return None
            e = e.expr
        while type(e) is OpApp and not e.args:
            name = e.name
            if name in env:  # Lose(q) == q' = ...: the variable the argument names
                th = env[name]
                if type(th) is not Thunk:
                    return None
                e, sc, env = th.e, th.sc, th.env
                continue
            if name in sc.defs:
                return None
            if name in sc.subst:
                e, sc, env = sc.subst[name]
                continue
            return name if name in sc.state_vars else None
        return None

    def _act_opapp(self, e: OpApp, sc: Scope, env: Env, asg: State, state: State | None,
                   fixed: bool, init: bool,
                   label: Label | None) -> Iterator[tuple[State, Label | None]]:
        name = e.name
        if name == "\\cdot" and not init and state is not None:
            # A \cdot B: A to some state s, then B from s (TLC's action composition); the
            # variables A leaves unassigned keep their values in s
            for mid, lab in self.act(e.args[0], sc, env, {}, state, fixed, False, label):
                s = {**state, **mid}
                for nxt, lab2 in self.act(e.args[1], sc, env, {}, s, True, False, lab):
                    merged = {**mid, **nxt}
                    if all(k not in asg or _equal(asg[k], v, e.pos) for k, v in merged.items()):
                        yield {**asg, **merged}, lab2
            return
        if name == "=" or name == "\\in":
            var = self._target(e.args[0], sc, env, init)
            if var is not None and var not in asg:
                cx = self._cx(asg, state, init)
                v = self.ev(e.args[1], sc, env, cx)
                if name == "=":
                    yield {**asg, var: v}, label
                else:
                    for x in self.finite(v, e.args[1].pos):
                        yield {**asg, var: x}, label
                return
        elif name in env:
            v = env[name]
            if type(v) is Thunk:
                yield from self.act(v.e, v.sc, v.env, asg, state, fixed, init, label)
                return
            if type(v) is Closure:
                new = dict(v.env)
                new.update(self.bind_params(v.d, e.args, e.pos, sc, env))
                yield from self.act(v.d.body, v.sc, new, asg, state, fixed, init, label)
                return
        elif name not in CORE_NAMES:
            entry = sc.defs.get(name)
            if entry is None and e.args and name in sc.subst:  # an operator constant
                entry = self.substituted_op(name, sc, e.pos)
            if type(entry) is Defn and isinstance(entry.d, OpDef):
                yield from self._act_defn(entry, e.args, e.pos, sc, env, asg, state, fixed,
                                          init, label)
                return
        if self.ev_bool(e, sc, env, self._cx(asg, state, init)):
            yield asg, label

    def _act_defn(self, entry: Defn, args: tuple[Expr, ...], pos: Pos, sc: Scope, env: Env,
                  asg: State, state: State | None, fixed: bool, init: bool,
                  label: Label | None) -> Iterator[tuple[State, Label | None]]:
        """A user operator in an action: its body, expanded (the label's operator while no
        conjunction has been entered)."""
        d = entry.d
        assert isinstance(d, OpDef)
        if len(args) != len(d.params):
            raise fail(pos, f"{d.name} takes {len(d.params)} argument(s), given {len(args)}")
        new = self.bind_params(d, args, pos, sc, env)
        if not fixed:
            cx = self._cx(asg, state, init)
            try:
                label = Label(d.name, tuple(_argument(self, v, cx) for v in new.values()))
            except TlaError:  # an argument the step itself assigns (Send(p, x, x'))
                label = Label(d.name)
        yield from self.act(d.body, entry.scope, new, asg, state, fixed, init, label)

    def _unchanged(self, e: Expr, sc: Scope, env: Env, asg: State, state: State | None,
                   init: bool, label: Label | None) -> Iterator[tuple[State, Label | None]]:
        if init:
            raise fail(e.pos, "UNCHANGED in the initial predicate")
        assert state is not None
        parts = self._unchanged_parts(e, sc, env)
        new = asg
        for part in parts:
            if isinstance(part, str):
                if part in new:
                    if not _equal(new[part], state[part], e.pos):
                        return
                else:
                    if new is asg:
                        new = dict(asg)
                    new[part] = state[part]
            else:
                pe, psc, penv = part
                cx = Ctx(state, new)
                if not _equal(self.ev(Prime(pe.pos, pe), psc, penv, cx),
                              self.ev(pe, psc, penv, cx), pe.pos):
                    return
        yield new, label

    def _unchanged_parts(self, e: Expr, sc: Scope, env: Env) -> list[Any]:
        """UNCHANGED's variables (names), and any other expression (with its scope)."""
        if type(e) is Tuple:
            out: list[Any] = []
            for x in e.items:
                out += self._unchanged_parts(x, sc, env)
            return out
        if type(e) is OpApp and not e.args and e.name not in env:
            name = e.name
            entry = sc.defs.get(name)
            if type(entry) is Defn and isinstance(entry.d, OpDef) and not entry.d.params:
                return self._unchanged_parts(entry.d.body, entry.scope, {})
            if name in sc.subst:
                sub, osc, oenv = sc.subst[name]
                return self._unchanged_parts(sub, osc, oenv)
            if name in sc.state_vars:
                return [name]
        return [(e, sc, env)]


_PLAIN = (int, str, ModelValue)


def _memo_key(v: Value) -> Any:
    """``v`` as a key that tells apart what TLA+ tells apart: Python takes ``TRUE`` for
    ``1``, so ``[n |-> FALSE]`` for ``[n |-> 0]`` and ``{TRUE}`` for ``{1}`` (a function's or
    a set's canonical `key` keeps them apart; a function's is kept)."""
    t = type(v)
    if t is bool:
        return (True, v)
    if t in _PLAIN:
        return v
    if t is Fcn or t is frozenset:
        return key(v)
    return v  # a lazy set (its members' kinds do not mix), a RecFcn (by identity)


class _Varies(Exception):
    """An expression is not constant (`Evaluator._free`)."""


def _argument(ev: Evaluator, v: Any, cx: Ctx) -> Value:
    """An operator's argument as a step's label shows it (None for an operator)."""
    if type(v) is Thunk:
        return v.get(ev, cx)
    if type(v) is Closure or callable(v):
        return None
    return v


@contextmanager
def _bounded(pos: Pos) -> Iterator[None]:
    """Python's recursion limit, reached by a definition that never ends (``F == F``, a
    RECURSIVE operator without a base case), as one line at what was being evaluated."""
    try:
        yield
    except RecursionError:
        raise fail(pos, "evaluating this recursed too deeply (a definition that calls itself "
                        "without end?)") from None


def _equal(a: Value, b: Value, pos: Pos) -> bool:
    ta, tb = type(a), type(b)
    if ta is tb and ta is not LazySet:
        return a == b  # type: ignore[no-any-return]
    if (ta is bool) != (tb is bool) and ta in (int, bool) and tb in (int, bool):
        raise fail(pos, f"comparing {kind(a)} ({show(a)}) with {kind(b)} ({show(b)})")
    if isinstance(a, LazySet) or isinstance(b, LazySet):
        if isinstance(a, LazySet) and isinstance(b, LazySet) and not (a.finite and b.finite):
            return a.describe() == b.describe()
        if not getattr(a, "finite", True) or not getattr(b, "finite", True):
            raise fail(pos, f"comparing the infinite set {show(a)} with {show(b)}")
        return as_frozen(a) == as_frozen(b)
    if ta is RecFcn or tb is RecFcn:
        raise fail(pos, "comparing a function over an infinite domain")
    return a == b  # type: ignore[no-any-return]


__all__ = ["Ctx", "Evaluator", "Label", "TlaError", "INT", "NAT"]
