"""A TLA+ model to a `Spec` of hwcheck's language: the compiled path's first case.

`compile_model(model, domains)` translates what decision record 0019 calls the simplest case:
variables holding integers, booleans, strings or model values, or functions from a finite set
of such values to them; Next unfolded into every way the evaluator takes it (a disjunction,
an ``\\E`` witness over a constant set, an action-level IF's or CASE's branch, wherever they
stand in a conjunction), each way one action, its ``\\E`` bindings the action's parameters and
its IF/CASE conditions guards, so that a compiled model's generated count is TLC's; a way's
conjuncts a guard, ``x' = e``, ``x' \\in S``, ``f' = [f EXCEPT ![i] = e]``,
``f' = [x \\in D |-> e]`` and UNCHANGED; Init's ``x = e`` and ``x \\in S``; invariants. Every
other construct is refused with its position ("not compiled yet: ..."), never approximated.

A variable holding records (or tuples of several kinds, or a record or a marker such as
``Nil == -1``) is stored by its `Shape`: a core variable per leaf, named by its path
(``replicaState.hw``, ``replicaLog.records.tag``), and read as function terms (a record is
the function on its fields, as the evaluator's). A named INSTANCE is inlined in its scope,
its WITH substitutions translated where they are read.

The domains are the values each variable takes (the reference search's `Result.domains`);
a value outside them is the kernel's domain error, never a wrong count. Strings and model
values are numbered in one table (`Compiled.atoms`); a function is an array over its domain's
members in value order.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from hwcheck.spec import lang as L
from hwcheck.spec.lang import Block, Spec
from hwcheck.spec.types import leaf_name

from . import temporal
from .evaluate import CORE_NAMES, Ctx
from .explore import Model
from .modules import Defn, Scope
from .stdlib import Builtin
from .syntax import (
    And,
    At,
    Bool,
    Case,
    Choose,
    Dot,
    Except,
    Expr,
    FnApp,
    FnLit,
    FnSet,
    If,
    Instanced,
    Let,
    Num,
    OpApp,
    OpDef,
    Or,
    Pos,
    Prime,
    Quant,
    RecordLit,
    SetEnum,
    SetFilter,
    SetMap,
    Str,
    Tuple,
    Unchanged,
    fail,
)
from .syntax import TlaError as _TlaError
from .values import Fcn, LazySet, ModelValue, Value, key, show, sorted_values


class _Pending(int):
    """An \\E-bound parameter of an action not made yet (its number): only passed along."""


# One conjunct of a way: (None: a conjunct as written | False: a condition | True: a
# condition's negation, expression, its scope, its environment)
_Part = tuple[bool | None, Expr, Scope, dict[str, Any]]


@dataclass(frozen=True)
class _Way:
    """One way an action is taken: its step name (``fixed`` once a conjunction is entered,
    as the evaluator's labels), its \\E bindings so far and its conjuncts."""

    label: str
    fixed: bool
    params: tuple[tuple[str, tuple[Value, ...]], ...]
    parts: tuple[_Part, ...]
    # the label's operator's arguments (terms) and how many conjuncts came before it (an \E
    # over a set read from the state, an IF's condition): what a fairness condition matches
    call: tuple[Any, ...] = ()
    before: int = 0

    def fix(self) -> _Way:
        return self if self.fixed else replace(self, fixed=True)

    def add(self, part: _Part) -> _Way:
        return replace(self, parts=(*self.parts, part))


def not_compiled(pos: Pos, what: str) -> Exception:
    return fail(pos, f"not compiled yet: {what}")


_TRUE, _FALSE = L.Const(True), L.Const(False)
_ERR: tuple[Any, ...] = ("err",)
RANGE_MAX = 4_096  # the most values an integer expression's range may hold as a set's members
UNROLL_MAX = 64  # the deepest a recursive operator is unrolled


def _ite(c: Any, a: Any, b: Any) -> Any:
    """``L.ite``, constants folded (a set's "outside" must stay a constant FALSE)."""
    if isinstance(c, L.Const):
        return a if c.value else b
    if isinstance(a, L.Const) and isinstance(b, L.Const) and a.value is b.value:
        return a
    return L.ite(c, a, b)


def _false(x: Any) -> bool:
    return isinstance(x, L.Const) and x.value is False


def _or(*xs: Any) -> Any:
    """A disjunction, constants folded (the set translations test the result for FALSE)."""
    out = []
    for x in xs:
        if isinstance(x, L.Const):
            if x.value:
                return _TRUE
            continue
        out.append(x)
    return L.disj(*out) if out else _FALSE


def _and(*xs: Any) -> Any:
    out = []
    for x in xs:
        if isinstance(x, L.Const):
            if not x.value:
                return _FALSE
            continue
        out.append(x)
    return L.conj(*out) if out else _TRUE


def _not(x: Any) -> Any:
    return L.Const(not x.value) if isinstance(x, L.Const) else ~x


def _implies(a: Any, b: Any) -> Any:
    return _or(_not(a), b)


def _enumerated(t: Term) -> Term:
    """A constant finite set TLC keeps lazy (``[a : S]``, ``[S -> T]``, ``S \\X T``) as its
    members, where a quantifier enumerates it."""
    if t[0] == "static" and isinstance(t[1], LazySet) and t[1].finite:
        return ("static", t[1].elements())
    return t


MEMBERS_AT_MOST = 1024  # a constant set TLC keeps lazy, enumerated for a membership test


def _static_members(values: Any, pos: Pos) -> tuple[Value, ...]:
    """The members of a constant set, in the evaluator's order, for ``x \\in S``: a set TLC
    keeps lazy (``[a : S]``, ``[S -> T]``) enumerated where it is finite and small, refused
    otherwise (the module then goes to the interpreter, which tests membership lazily)."""
    if isinstance(values, frozenset):
        return tuple(sorted_values(values))
    if isinstance(values, LazySet) and values.finite:
        members = tuple(itertools.islice(values.in_order(), MEMBERS_AT_MOST + 1))
        if len(members) <= MEMBERS_AT_MOST:
            return tuple(sorted_values(frozenset(members)))
    raise not_compiled(pos, f"membership in a constant set of more than {MEMBERS_AT_MOST:,} "
                            "values, or one that cannot be enumerated")


def _exact(outside: Any, pos: Pos) -> None:
    """Refuse a set operation whose operand may hold values outside the members known."""
    if not (isinstance(outside, L.Const) and outside.value is False):
        raise not_compiled(pos, "a set operation on a set that may hold values outside its "
                                "variable's domain")


@dataclass(frozen=True)
class Enc:
    """How one TLA+ variable is stored: a scalar of ``kind`` ("int", "bool", "atom"), or an
    array (``domain``: the function's domain, in value order) of them; or, of kind "set", a
    subset of ``members`` (a finite set of any values), one bit each."""

    name: str
    kind: str
    lo: int
    hi: int
    domain: tuple[Value, ...] | None = None
    members: tuple[Value, ...] = ()  # kind "set": the values it may hold, a bit each
    # a function of functions: the domains of the further dimensions (``log[r][k]``: the
    # replicas are ``domain``, the offsets ``inner``), an array over all of them
    inner: tuple[tuple[Value, ...], ...] = ()
    # kind "tree": a value holding records or tuples of several kinds (`Shape`), each leaf
    # stored in a variable of its own (``name.field``, an array over the functions' domains
    # on the way to it)
    shape: Shape | None = None

    @property
    def dims(self) -> tuple[tuple[Value, ...], ...]:
        return () if self.domain is None else (self.domain, *self.inner)


@dataclass(frozen=True)
class Shape:
    """How a value holding records is stored: a leaf of ``kind`` "int", "bool", "atom" (a
    scalar in ``lo..hi``) or "set" (a bit per one of ``members``); "fn", a function on
    ``domain`` whose elements have the one shape ``parts[0]`` (a dimension of the leaves'
    arrays); "rec", a function on ``domain`` (a record's fields, a tuple's indices) whose
    element at each has its own shape (``parts``: one each, stored apart); "opt", a value
    of the shape ``parts[0]`` (a function or record) or one of the scalars ``members`` (a
    marker: ``Nil == -1``, a model value), stored as a ``tag`` leaf (0: the value, k: the
    k-th marker) and the value's leaves under ``value`` (their bottoms beside a marker).
    """

    kind: str
    lo: int = 0
    hi: int = 0
    members: tuple[Value, ...] = ()
    domain: tuple[Value, ...] = ()
    parts: tuple[Shape, ...] = ()

    def leaves(self, path: tuple[str, ...] = (), dims: tuple[tuple[Value, ...], ...] = ()
               ) -> Iterator[tuple[tuple[str, ...], tuple[tuple[Value, ...], ...], Shape]]:
        """Each leaf: its path of fields, the functions' domains on the way, its shape."""
        if self.kind == "fn":
            yield from self.parts[0].leaves(path, (*dims, self.domain))
        elif self.kind == "rec":
            for d, part in zip(self.domain, self.parts):
                yield from part.leaves((*path, str(d)), dims)
        elif self.kind == "opt":
            yield (*path, "tag"), dims, Shape("int", 0, len(self.members))
            yield from self.parts[0].leaves((*path, "value"), dims)
        else:
            yield path, dims, self

    def has_record(self) -> bool:
        return self.kind in ("rec", "opt") or any(p.has_record() for p in self.parts)


def _shape(values: list[Value], atoms: int) -> Shape:
    """The shape storing each of ``values`` (ValueError: one it cannot store)."""
    if all(isinstance(v, frozenset) for v in values):
        members = tuple(sorted_values(frozenset().union(*values))) or (False,)
        return Shape("set", 0, 1, members)
    if all(isinstance(v, Fcn) for v in values):
        doms = {frozenset(v.map) for v in values}
        if len(doms) != 1 or not next(iter(doms)):
            raise ValueError  # functions on several domains (sequences): not stored yet
        dom = tuple(sorted_values(next(iter(doms))))
        if not all(isinstance(d, str) for d in dom):
            try:
                return Shape("fn", domain=dom, parts=(
                    _shape([x for v in values for x in v.map.values()], atoms),))
            except ValueError:
                if list(dom) != list(range(1, len(dom) + 1)):
                    raise
        return Shape("rec", domain=dom, parts=tuple(_shape([v.map[d] for v in values], atoms)
                                                    for d in dom))
    fns = [v for v in values if isinstance(v, Fcn)]
    if fns and all(isinstance(v, Fcn) or type(v) in (int, str, ModelValue) for v in values):
        # a function or record, or a marker (Nil == -1, NONE): a tag and the value
        markers = tuple(sorted_values({v for v in values if not isinstance(v, Fcn)}))
        return Shape("opt", members=markers, parts=(_shape(fns, atoms),))
    kind, lo, hi = _scalar_kind(values)
    if kind == "atom":
        lo, hi = 0, max(atoms - 1, 0)
    return Shape(kind, lo, hi)


# A translated expression: ("int" | "bool" | "atom", lang expression); ("static", TLA+ value);
# ("param", lang expression indexing ``values``, values); ("fn", domain, elements): a function
# on a finite domain known when translating (in value order), each element a term (a
# function variable, `[x \in D |-> e]`, an EXCEPT); ("err",): a value the evaluator fails on
# (a CHOOSE without a witness, an argument outside a function's domain), the kernel's domain
# error wherever it is computed; ("bits", members,
# [a lang boolean per member]): a set within ``members``; ("elems", [terms]): the set of a few
# values computed from the state; ("lazy", Expr, Scope, env) and ("op", OpDef, Scope, env): an
# operator's argument and a LET operator, translated where read.
Term = tuple[Any, ...]


@dataclass
class Compiled:
    spec: Spec
    encodings: dict[str, Enc]
    atoms: tuple[Value, ...]
    reads: dict[str, Any] = field(default_factory=dict)  # variable: its Read or Var
    # each action's TLA+ step name: the operator of its Next disjunct (an operator taken in
    # several ways, by a disjunction, an IF or a CASE inside it, is several actions
    # ``Op``, ``Op_2``, ...)
    steps: dict[str, str] = field(default_factory=dict)
    # each action's \E bindings: (name, the values its parameter indexes), in order
    bindings: dict[str, tuple[tuple[str, tuple[Value, ...]], ...]] = field(default_factory=dict)

    def step_label(self, label: str) -> str:
        """An instance's label (``Give_2(0, 1)``: the action, its parameters' indices) as
        TLC's step name: the operator and the values of its \\E bindings (``Give(p1, p2)``)."""
        name, _, rest = label.partition("(")
        if name not in self.steps:
            return label
        binds = self.bindings.get(name, ())
        args = [int(a) for a in rest.rstrip(")").split(",") if a.strip()] if rest else []
        shown = [show(values[a]) for (_, values), a in zip(binds, args)]
        return self.steps[name] + (f"({', '.join(shown)})" if shown else "")

    def decode(self, row: dict[str, Any]) -> dict[str, Value]:
        """A state of the compiled spec (``Layout.to_dict``'s: a variable's int, its list of
        ints, or a set's list of members' positions) as TLA+ values."""
        out: dict[str, Value] = {}
        for name, enc in self.encodings.items():
            if enc.shape is not None:
                out[name] = self._tree(name, enc.shape, (), (), row)
                continue
            raw = row[name]
            if enc.kind == "set" and enc.domain is None:
                out[name] = frozenset(enc.members[k] for k in raw)
            elif enc.domain is None:
                out[name] = self._atom(enc, raw)
            else:
                out[name] = self._nested(enc, enc.dims, raw)
        return out

    def _nested(self, enc: Enc, dims: tuple[tuple[Value, ...], ...], raw: Any) -> Value:
        if not dims:
            if enc.kind == "set":
                return frozenset(m for m, x in zip(enc.members, raw) if x)
            return self._atom(enc, raw)
        return Fcn({k: self._nested(enc, dims[1:], x) for k, x in zip(dims[0], raw)})

    def _tree(self, name: str, shape: Shape, path: tuple[str, ...], idx: tuple[int, ...],
              row: dict[str, Any]) -> Value:
        if shape.kind == "fn":
            return Fcn({d: self._tree(name, shape.parts[0], path, (*idx, k), row)
                        for k, d in enumerate(shape.domain)})
        if shape.kind == "rec":
            return Fcn({d: self._tree(name, p, (*path, str(d)), idx, row)
                        for d, p in zip(shape.domain, shape.parts)})
        if shape.kind == "opt":
            tag = row[leaf_name(name, (*path, "tag"))]
            for k in idx:
                tag = tag[k]
            if tag:
                return shape.members[int(tag) - 1]
            return self._tree(name, shape.parts[0], (*path, "value"), idx, row)
        raw = row[leaf_name(name, path)]
        for k in idx:
            raw = raw[k]
        if shape.kind == "set":
            return frozenset(m for m, x in zip(shape.members, raw) if x)
        return self._scalar(shape.kind, raw)

    def _atom(self, enc: Enc, x: int) -> Value:
        return self._scalar(enc.kind, x)

    def _scalar(self, kind: str, x: int) -> Value:
        if kind == "bool":
            return bool(x)
        if kind == "atom":
            return self.atoms[x]
        return int(x)


def _strings(sc: Scope) -> set[str]:
    """Every string literal in the definitions ``sc`` sees."""
    out: set[str] = set()
    stack: list[Any] = [entry.d for entry in sc.defs.values() if isinstance(entry, Defn)]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, Str):
            out.add(x.value)
        elif isinstance(x, tuple):
            stack.extend(x)
        elif hasattr(x, "__dataclass_fields__"):
            stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
    return out


def _scalar_kind(vals: list[Any]) -> tuple[str, int, int]:
    if all(type(v) is bool for v in vals):
        return "bool", 0, 1
    if all(type(v) is int for v in vals):
        return "int", min(vals), max(vals)
    if all(isinstance(v, (str, ModelValue)) for v in vals):
        return "atom", 0, 0
    raise ValueError


class Compiler:
    def __init__(self, m: Model, domains: dict[str, list[Value]],
                 deadlock: bool | None = None) -> None:
        self.m = m
        self.deadlock = m.check_deadlock if deadlock is None else deadlock
        self.enabled: list[Any] = []
        self.ways: dict[str, _Way] = {}  # each action's way of Next
        self.for_enabled = False  # building an action's guard for the deadlock check
        self.ev = m.ev
        self.sc = m.root.scope
        self.spec = Spec(m.root.scope.module.name, {})
        self.encodings: dict[str, Enc] = {}
        self.reads: dict[str, Any] = {}
        self._var_terms: dict[str, Term] = {}
        self._leaf: dict[tuple[str, tuple[str, ...]], Any] = {}  # a tree's leaves' variables
        self._errors: list[Any] = []  # the reads `error` made, and their ids
        self._error_ids: set[int] = set()
        self._sizes: dict[Any, int] = {}  # a quantifier's bound variable: its range's size
        self._local_ranges: dict[str, tuple[int, int]] = {}
        self._ranges: dict[int, tuple[Any, tuple[int, int] | None]] = {}
        self._calls: list[tuple[str, list[Term]]] = []  # the recursive operators inlined
        self._rec: dict[int, bool] = {}
        # an action's effects being built: its block, the conditions the expression being
        # translated is under (an IF's branch, a conjunction's later part), the values of
        # LET definitions and operator arguments computed once as locals, and how deep in
        # quantifiers over a bound variable (no local there: it would read the variable)
        self._in_init = False  # unfolding Init
        self.block: Block | None = None
        self.path: list[Any] = []
        self._hoisted: dict[int, list[tuple[tuple[Any, ...], Term, Term]]] = {}
        self._qdepth = 0
        atoms: set[Value] = set()
        for vals in domains.values():
            stack = list(vals)
            while stack:  # the strings and model values of functions (of functions) too
                v = stack.pop()
                if isinstance(v, Fcn):
                    stack.extend(v.map.values())
                    atoms.update(k for k in v.map if isinstance(k, (str, ModelValue)))
                elif isinstance(v, (str, ModelValue)):
                    atoms.add(v)
        for v in self.sc.values.values():
            for x in (v if isinstance(v, frozenset) else [v]):
                if isinstance(x, (str, ModelValue)):
                    atoms.add(x)
        atoms.update(_strings(self.sc))  # those an action may write before any search saw it
        self.atoms = tuple(sorted_values(atoms))
        self.code = {a: i for i, a in enumerate(self.atoms)}
        for name in m.root.variables:
            self._declare(name, domains[name])

    def _declare(self, name: str, values: list[Value]) -> None:
        pos = self.sc.module.pos
        if not values:
            raise not_compiled(pos, f"variable {name} takes no value")
        if all(isinstance(v, frozenset) for v in values):
            # a set always empty: one bit, for a value it never holds (a value written
            # outside its members is the kernel's domain error, then widened)
            members = tuple(sorted_values(frozenset().union(*values))) or (False,)
            self.encodings[name] = Enc(name, "set", 0, 1, None, members)
            self.reads[name] = self.spec.set_of(name, len(members))
            return
        try:
            dims: list[tuple[Value, ...]] = []
            leaves = list(values)
            while leaves and all(isinstance(v, Fcn) for v in leaves):
                doms = {frozenset(v.map) for v in leaves}
                if len(doms) != 1 or not next(iter(doms)):
                    raise ValueError
                dims.append(tuple(sorted_values(next(iter(doms)))))
                leaves = [x for v in leaves for x in v.map.values()]
            if dims and all(isinstance(v, frozenset) for v in leaves):
                # a function to sets: an array over its dimensions and the sets' members
                members = tuple(sorted_values(frozenset().union(*leaves))) or (False,)
                self.encodings[name] = Enc(name, "set", 0, 1, dims[0], members,
                                           tuple(dims[1:]))
                self.reads[name] = self.spec.array(
                    name, (*(len(d) for d in dims), len(members)), 0, 1)
                return
            kind, lo, hi = _scalar_kind(leaves)
        except ValueError:
            try:
                shape = _shape(values, len(self.atoms))
            except ValueError:
                shape = None
            if shape is not None and shape.has_record():
                self._declare_tree(name, shape)
                return
            raise not_compiled(pos, f"variable {name} holds values this case does not store "
                                    f"(e.g. {show(values[-1])})") from None
        if kind == "atom":
            lo, hi = 0, max(len(self.atoms) - 1, 0)
        enc = Enc(name, kind, lo, hi, dims[0] if dims else None, (), tuple(dims[1:]))
        self.encodings[name] = enc
        if not dims:
            self.reads[name] = self.spec.scalar(name, lo, hi)
        else:
            self.reads[name] = self.spec.array(name, tuple(len(d) for d in dims), lo, hi)

    def _declare_tree(self, name: str, shape: Shape) -> None:
        """A variable holding records: a core variable per leaf of its shape."""
        self.encodings[name] = Enc(name, "tree", 0, 0, shape=shape)
        stored: list[Any] = []
        for path, dims, leaf in shape.leaves():
            sizes = tuple(len(d) for d in dims)
            var: Any
            if leaf.kind == "set":
                var = self.spec.array(leaf_name(name, path), (*sizes, len(leaf.members)), 0, 1)
            elif sizes:
                var = self.spec.array(leaf_name(name, path), sizes, leaf.lo, leaf.hi)
            else:
                var = self.spec.scalar(leaf_name(name, path), leaf.lo, leaf.hi)
            self._leaf[(name, path)] = var
            stored.append(var)
        self.reads[name] = stored

    def stored(self, name: str) -> list[Any]:
        """The core variables (or reads) a TLA+ variable is stored in."""
        r = self.reads[name]
        return list(r) if isinstance(r, list) else [r]

    def tree_term(self, name: str) -> Term:
        """A variable holding records as a term: functions and records as ``fn`` terms."""
        if name not in self._var_terms:
            shape = self.encodings[name].shape
            assert shape is not None

            def build(sh: Shape, path: tuple[str, ...], idx: tuple[int, ...]) -> Term:
                if sh.kind == "fn":
                    return ("fn", sh.domain, tuple(build(sh.parts[0], path, (*idx, k))
                                                   for k in range(len(sh.domain))))
                if sh.kind == "rec":
                    return ("fn", sh.domain, tuple(build(p, (*path, str(d)), idx)
                                                   for d, p in zip(sh.domain, sh.parts)))
                if sh.kind == "opt":
                    tag = self._leaf[(name, (*path, "tag"))]
                    return ("opt", tag[idx] if idx else tag, sh.members,
                            build(sh.parts[0], (*path, "value"), idx))
                var = self._leaf[(name, path)]
                if sh.kind == "set":
                    return ("bits", sh.members, [var[idx + (k,)] == 1
                                                 for k in range(len(sh.members))], _FALSE)
                read = var[idx] if idx else var
                return ("bool", read == 1) if sh.kind == "bool" else (sh.kind, read)
            self._var_terms[name] = build(shape, (), ())
        return self._var_terms[name]

    def _tree_cells(self, name: str, sh: Shape, path: tuple[str, ...], idx: tuple[int, ...],
                    t: Term, out: list[tuple[Any, Any]], pos: Pos) -> None:
        """The cells of ``name``'s part ``sh`` (at ``path``, ``idx``) written with ``t``."""
        if t[0] == "err":  # the evaluator fails on it: the kernel's domain error
            first, at = sh, idx
            while first.kind in ("fn", "rec", "opt"):
                if first.kind == "fn":
                    at = (*at, 0)
                elif first.kind == "opt":
                    path, first = (*path, "tag"), Shape("int")
                    break
                else:
                    path = (*path, str(first.domain[0]))
                first = first.parts[0]
            var = self._leaf[(name, path)]
            cell = var[at + (0,)] if first.kind == "set" else var[at] if at else var
            out.append((cell, self.error("int", pos)))
            return
        if sh.kind == "opt":
            tag, payload = self.as_opt(t, sh.members, pos)
            var = self._leaf[(name, (*path, "tag"))]
            out.append((var[idx] if idx else var, tag))
            some = tag == 0
            inner: list[tuple[Any, Any]] = []
            if payload is None:  # a marker always: the value's bottoms
                payload = self.bottom(sh.parts[0])
            self._tree_cells(name, sh.parts[0], (*path, "value"), idx, payload, inner, pos)
            out += [(cell, v if isinstance(tag, L.Const) and tag.value == 0 else
                     _ite(some, v, L.Const(cell.var.lo if hasattr(cell, "var") else 0)))
                    for cell, v in inner]
            return
        if sh.kind in ("fn", "rec"):
            f = self.fn_of(t, pos)
            if [key(d) for d in f[1]] != [key(d) for d in sh.domain]:
                raise not_compiled(pos, f"a value of another shape than {name}'s (fields or "
                                        "domain)")
            for k, (d, x) in enumerate(zip(f[1], f[2])):
                if sh.kind == "fn":
                    self._tree_cells(name, sh.parts[0], path, (*idx, k), x, out, pos)
                else:
                    self._tree_cells(name, sh.parts[k], (*path, str(d)), idx, x, out, pos)
            return
        var = self._leaf[(name, path)]
        if sh.kind == "set":
            out += self._bit_cells(t, sh.members, var, idx, pos)
            return
        value = L.ite(self.as_kind(t, "bool", pos), 1, 0) if sh.kind == "bool" else \
            self.as_kind(t, sh.kind, pos)
        out.append((var[idx] if idx else var, value))

    def bottom(self, sh: Shape) -> Term:
        """The value a stored ``sh`` holds at its bottoms (beside a marker)."""
        def value(x: Shape) -> Value:
            if x.kind == "fn":
                return Fcn({d: value(x.parts[0]) for d in x.domain})
            if x.kind == "rec":
                return Fcn({d: value(p) for d, p in zip(x.domain, x.parts)})
            if x.kind == "opt":
                return x.members[0] if x.members else value(x.parts[0])
            if x.kind == "set":
                return frozenset()
            if x.kind == "atom":
                return self.atoms[0]
            return False if x.kind == "bool" else x.lo
        return ("static", value(sh))

    @staticmethod
    def _fn_like(t: Term) -> bool:
        return t[0] == "fn" or (t[0] in ("static", "param") and bool(
            [t[1]] if t[0] == "static" else t[2]) and all(
            isinstance(v, Fcn) for v in ([t[1]] if t[0] == "static" else t[2])))

    def as_opt(self, t: Term, markers: tuple[Value, ...], pos: Pos) -> tuple[Any, Term | None]:
        """The value ``t`` as a value-or-marker over ``markers``: its tag (0: a value, k:
        the k-th marker; another marker is the kernel's domain error) and its value (None:
        a marker always)."""
        where = {key(m): k + 1 for k, m in enumerate(markers)}
        if t[0] == "err":
            return self.error("int", pos), None
        if t[0] == "opt":
            if [key(m) for m in t[2]] == [key(m) for m in markers]:
                return t[1], t[3]
            tag: Any = L.Const(0)
            for k, m in reversed(list(enumerate(t[2]))):
                tag = _ite(t[1] == k + 1, L.Const(where[key(m)]) if key(m) in where else
                           self.error("int", pos), tag)
            return tag, t[3]
        if self._fn_like(t):
            return L.Const(0), t
        if t[0] == "param" and not isinstance(t[1], _Pending) and any(
                isinstance(v, Fcn) for v in t[2]):
            # a parameter over values and markers: a tag per value, the values beside
            some = next(v for v in t[2] if isinstance(v, Fcn))
            tag = self.error("int", pos)
            for k in range(len(t[2]) - 1, -1, -1):
                v = t[2][k]
                tag = _ite(t[1] == k, L.Const(0) if isinstance(v, Fcn) else L.Const(
                    where[key(v)]) if key(v) in where else self.error("int", pos), tag)
            return tag, ("param", t[1], tuple(v if isinstance(v, Fcn) else some
                                              for v in t[2]))
        vals = self.values_of(t)
        if vals is None:
            raise not_compiled(pos, "a value or marker whose values are not known")
        tag = self.error("int", pos)
        for m in reversed(markers):
            if key(m) in {key(v) for v in vals}:
                tag = _ite(self.eq_value(t, m, pos), L.Const(where[key(m)]), tag)
        return tag, None

    def _opt_is(self, t: Term, m: Value | None, pos: Pos) -> Any:
        """Whether ``t`` is the marker ``m`` (None: whether it is a value, not a marker)."""
        if t[0] == "opt":
            if m is None:
                return t[1] == 0
            hits = [k + 1 for k, x in enumerate(t[2]) if key(x) == key(m)]
            return t[1] == hits[0] if hits else _FALSE
        if self._fn_like(t):
            return _TRUE if m is None else _FALSE
        if m is None and t[0] == "param":
            return _or(*[t[1] == k for k, v in enumerate(t[2]) if isinstance(v, Fcn)])
        return _FALSE if m is None else self.eq_value(t, m, pos)

    def _opt_equal(self, a: Term, b: Term, pos: Pos) -> Any:
        if a[0] != "opt":
            a, b = b, a
        value = _and(self._opt_is(a, None, pos), self._opt_is(b, None, pos))
        if not _false(value):
            va = a[3]
            vb = b[3] if b[0] == "opt" else b
            if vb[0] == "param" and not self._fn_like(vb):  # values and markers
                some = next(v for v in vb[2] if isinstance(v, Fcn))
                vb = ("param", vb[1], tuple(v if isinstance(v, Fcn) else some
                                            for v in vb[2]))
            value = _and(value, self.equal(va, vb, pos))
        return _or(value, *[_and(self._opt_is(a, m, pos), self._opt_is(b, m, pos))
                            for m in a[2]])

    def _opt_merge(self, kept: list[tuple[Any, Term]], default: Term, pos: Pos) -> Term:
        """IF/CASE between values-or-markers (or a value and a marker): the tags chosen as
        the terms, the values likewise (a marker's branch takes another's value: it is not
        read)."""
        terms = [t for _, t in kept] + [default]
        markers: dict[Any, Value] = {}
        for t in terms:
            if t[0] == "opt":
                markers.update((key(m), m) for m in t[2])
            elif t[0] != "err" and not self._fn_like(t):
                vals = self.values_of(t)
                if vals is None:
                    raise not_compiled(pos, "a value or marker whose values are not known")
                markers.update((key(m), m) for m in vals)
        ms = tuple(sorted_values(markers.values()))
        split = [self.as_opt(t, ms, pos) for t in terms]
        some = next(v for _, v in split if v is not None)
        tag = split[-1][0]
        for (c, _), (tg, _) in zip(reversed(kept), reversed(split[:-1])):
            tag = _ite(c, tg, tag)
        value = self.merge([(c, v if v is not None else some)
                            for (c, _), (_, v) in zip(kept, split[:-1])],
                           split[-1][1] if split[-1][1] is not None else some, pos)
        return ("opt", tag, ms, value)

    # -- values --------------------------------------------------------------------------

    def static_expr(self, kind: str, v: Value, pos: Pos) -> Any:
        if kind == "bool" and type(v) is bool:
            return L.Const(v)
        if kind == "int" and type(v) is int:
            return L.Const(v)
        if kind == "atom" and v in self.code:
            return L.Const(self.code[v])
        raise not_compiled(pos, f"the value {show(v)} where {kind} is expected")

    def as_kind(self, t: Term, kind: str, pos: Pos) -> Any:
        """``t`` as a lang expression of ``kind``."""
        if t[0] == kind:
            return t[1]
        if t[0] == "err":
            return self.error(kind, pos)
        if t[0] == "static":
            return self.static_expr(kind, t[1], pos)
        if t[0] == "param":
            _, p, values = t
            if isinstance(p, _Pending):
                raise not_compiled(pos, "an expression of an \\E-bound parameter as an "
                                        "operator's argument in Next")
            consts = [self.static_expr(kind, v, pos) for v in values]
            line = self._gather(p, consts)  # values (or codes) a fixed step apart: arithmetic
            if line is not None:
                return line
            out = consts[-1]
            for i in range(len(values) - 2, -1, -1):
                out = L.ite(p == i, consts[i], out)
            return out
        raise not_compiled(pos, f"a {t[0]} where {kind} is expected")

    def kind_of(self, t: Term) -> str | None:
        if t[0] in ("int", "bool", "atom"):
            return t[0]  # type: ignore[no-any-return]
        vals = [t[1]] if t[0] == "static" else list(t[2]) if t[0] == "param" else []
        if vals and all(type(v) is bool for v in vals):
            return "bool"
        if vals and all(type(v) is int for v in vals):
            return "int"
        if vals and all(isinstance(v, (str, ModelValue)) for v in vals):
            return "atom"
        return None

    # -- expressions ---------------------------------------------------------------------

    def tr(self, e: Expr, sc: Scope, env: dict[str, Term]) -> Term:
        """``e`` (a state-level expression) translated under ``env``."""
        static = {k: v[1] for k, v in env.items() if v[0] == "static"}
        if self._closed(e, sc, env) and self.ev.state_free(e, sc, set(static)):
            try:
                return ("static", self.ev.ev(e, sc, dict(static), Ctx({}, None)))
            except _TlaError:
                return _ERR  # the evaluator fails on it: so does the kernel, where computed
        if isinstance(e, (Num, Str, Bool)):
            return ("static", e.value)
        if isinstance(e, At) and "@" in env:
            return env["@"]
        if isinstance(e, OpApp):
            return self.tr_opapp(e, sc, env)
        if isinstance(e, Instanced):  # I!Op(args): Op in the instance's scope
            entry = self._instance_entry(e, sc, env)
            if not (isinstance(entry, Defn) and isinstance(entry.d, OpDef)):
                raise not_compiled(e.pos, f"{e.instance}!{e.name}")
            return self._apply_defn(entry, e, sc, env)
        if isinstance(e, And) or isinstance(e, Or):
            parts: list[Any] = []
            for x in e.items:  # each part read where the ones before let it be
                with self._under(_and(*parts) if isinstance(e, And) else
                                 _and(*[_not(p) for p in parts])):
                    parts.append(self.as_kind(self.tr(x, sc, env), "bool", x.pos))
            return ("bool", L.conj(*parts) if isinstance(e, And) else L.disj(*parts))
        if isinstance(e, If):
            c = self.as_kind(self.tr(e.cond, sc, env), "bool", e.cond.pos)
            if isinstance(c, L.Const):
                return self.tr(e.then if c.value else e.other, sc, env)
            with self._under(c):
                a = self.tr(e.then, sc, env)
            with self._under(_not(c)):
                b = self.tr(e.other, sc, env)
            return self.merge([(c, a)], b, e.pos)
        if isinstance(e, Case):
            pairs: list[tuple[Any, Term]] = []
            before: list[Any] = []
            for cond, arm in e.arms:
                with self._under(_and(*[_not(x) for x in before])):
                    c = self.as_kind(self.tr(cond, sc, env), "bool", cond.pos)
                if isinstance(c, L.Const) and not c.value:
                    continue
                with self._under(_and(*[_not(x) for x in before], c)):
                    pairs.append((c, self.tr(arm, sc, env)))
                before.append(c)
                if isinstance(c, L.Const):
                    break
            other: Term = _ERR
            with self._under(_and(*[_not(x) for x in before])):
                if e.other is not None:
                    other = self.tr(e.other, sc, env)
            return self.merge(pairs, other, e.pos)
        if isinstance(e, Let):
            return self.tr(e.body, sc, self._let(e, sc, env))
        if isinstance(e, FnApp):
            if len(e.args) != 1:
                raise not_compiled(e.pos, "a function of several arguments")
            return self.apply(self.tr(e.fn, sc, env), self.tr(e.args[0], sc, env), e.pos)
        if isinstance(e, FnLit):
            if len(e.bounds) != 1 or len(e.bounds[0].names) != 1 or e.bounds[0].tuple:
                raise not_compiled(e.pos, "a function of several arguments")
            dom = self.tr(e.bounds[0].set, sc, env)
            if dom[0] != "static" or not isinstance(dom[1], frozenset):
                raise not_compiled(e.pos, "a function whose domain is read from the state")
            name = e.bounds[0].names[0]
            values = tuple(sorted_values(dom[1]))
            return ("fn", values, tuple(self.tr(e.body, sc, {**env, name: ("static", x)})
                                        for x in values))
        if isinstance(e, Except):
            f = self.fn_of(self.tr(e.fn, sc, env), e.pos)
            for path, new in e.updates:
                keys: list[Term] = []
                for step, arg in path:
                    if step == "field":  # ![i].a: the record's field a
                        keys.append(("static", arg))
                        continue
                    if step != "app" or len(arg) != 1:  # type: ignore[arg-type]
                        raise not_compiled(e.pos, "an EXCEPT path other than ![i]...[j]")
                    keys.append(self.tr(arg[0], sc, env))  # type: ignore[index]
                f = self._update(f, keys, new, sc, env, e.pos)
            return f
        if isinstance(e, Choose):
            return self.tr_choose(e, sc, env)
        if isinstance(e, SetFilter):
            bd = e.bound
            if len(bd.names) != 1 or bd.tuple:
                raise not_compiled(e.pos, "several names in a set filter")
            members, bs, out = self.as_bits(self.tr(bd.set, sc, env), bd.set.pos)
            _exact(out, bd.set.pos)
            kept = []
            for m, bit in zip(members, bs):
                with self._under(bit):
                    kept.append(_FALSE if _false(bit) else _and(bit, self.as_kind(self.tr(
                        e.pred, sc, {**env, bd.names[0]: ("static", m)}), "bool", e.pred.pos)))
            return ("bits", members, kept, _FALSE)
        if isinstance(e, SetMap):
            if len(e.bounds) != 1 or len(e.bounds[0].names) != 1 or e.bounds[0].tuple:
                raise not_compiled(e.pos, "several names in {e : x \\in S}")
            bd = e.bounds[0]
            members, bs, out = self.as_bits(self.tr(bd.set, sc, env), bd.set.pos)
            _exact(out, bd.set.pos)
            images = []
            for m, bit in zip(members, bs):
                if not _false(bit):
                    with self._under(bit):
                        images.append((bit, self.tr(e.expr, sc, {**env, bd.names[0]: (
                            "static", m)})))
            universe: dict[Any, Value] = {}
            for _, t in images:
                vals = self.values_of(t)
                if vals is None:
                    raise not_compiled(e.expr.pos, "a set of values whose range is not known")
                universe.update((key(v), v) for v in vals)
            us = tuple(sorted_values(universe.values()))
            return ("bits", us, [_or(*[_and(bit, self.eq_value(t, u, e.pos))
                                       for bit, t in images]) for u in us], _FALSE)
        if isinstance(e, Quant):
            return ("bool", self.tr_quant(e, sc, env))
        if isinstance(e, SetEnum):
            return ("elems", [self.tr(x, sc, env) for x in e.items])
        tab = self._by_params(e, sc, env)
        if tab is not None:
            return tab
        if isinstance(e, RecordLit):  # a record: the function on its fields
            fields = dict(e.fields)
            names = tuple(sorted_values(fields))
            return ("fn", names, tuple(self.tr(fields[f], sc, env) for f in names))
        if isinstance(e, Tuple):  # a tuple: the function on 1..n
            return ("fn", tuple(range(1, len(e.items) + 1)),
                    tuple(self.tr(x, sc, env) for x in e.items))
        if isinstance(e, Dot):  # r.a: r applied to "a"
            r = self.tr(e.expr, sc, env)
            if r[0] == "param" and not all(isinstance(v, Fcn) and e.field in v.map
                                           for v in r[2]):
                # some value without the field (a guard before may exclude it): not
                # tabulated, as `_by_params`
                raise not_compiled(e.pos, f"the field {e.field} of values some lack")
            return self.apply(r, ("static", e.field), e.pos)
        raise not_compiled(e.pos, f"the expression {type(e).__name__}")

    def _closed(self, e: Any, sc: Scope, env: dict[str, Term]) -> bool:
        """Whether ``e`` reads no name bound to a non-static term."""
        dynamic = {k for k, v in env.items() if v[0] != "static"}
        if not dynamic:
            return True
        stack = [e]
        while stack:
            x = stack.pop()
            if (isinstance(x, OpApp) and x.name in dynamic) or (isinstance(x, At) and
                                                                 "@" in dynamic):
                return False
            if isinstance(x, Expr):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
            elif isinstance(x, tuple):
                stack.extend(x)
            elif hasattr(x, "__dataclass_fields__"):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
        return True

    def tr_quant(self, e: Quant, sc: Scope, env: dict[str, Term]) -> Any:
        if len(e.bounds) != 1 or len(e.bounds[0].names) != 1 or e.bounds[0].tuple:
            if len(e.bounds) > 1 or len(e.bounds[0].names) > 1:
                first, *rest = [(n, b) for b in e.bounds for n in b.names]
                if any(b.tuple for _, b in [first, *rest]):
                    raise not_compiled(e.pos, "a tuple pattern in a quantifier")
                return self._nest(e, [(n, b.set) for n, b in [first, *rest]], sc, env)
        return self._nest(e, [(e.bounds[0].names[0], e.bounds[0].set)], sc, env)

    def _nest(self, e: Quant, names: list[tuple[str, Expr]], sc: Scope,
              env: dict[str, Term]) -> Any:
        name, set_e = names[0]
        s = _enumerated(self.tr(set_e, sc, env))
        if s[0] == "elems":
            s = ("bits", *self.as_bits(s, set_e.pos))
        if s[0] == "bits":  # over a set read from the state: each possible member, if in it
            _exact(s[3], set_e.pos)
            parts = []
            for m, bit in zip(s[1], s[2]):
                new = {**env, name: ("static", m)}
                with self._under(bit):
                    holds = self._nest(e, names[1:], sc, new) if len(names) > 1 else \
                        self.as_kind(self.tr(e.body, sc, new), "bool", e.body.pos)
                parts.append(_implies(bit, holds) if e.kind == "A" else _and(bit, holds))
            return _and(*parts) if e.kind == "A" else _or(*parts)
        if s[0] != "static" or not isinstance(s[1], frozenset):
            raise not_compiled(set_e.pos, "a quantifier over a set that is not constant")
        values = tuple(sorted_values(s[1]))
        if not values:
            return L.Const(e.kind == "A")
        quant: Callable[..., Any] = L.forall if e.kind == "A" else L.exists

        def body(i: Any) -> Any:
            self._sizes[i] = len(values)
            new = {**env, name: ("param", i, values)}
            self._qdepth += 1
            try:
                if len(names) > 1:
                    return self._nest(e, names[1:], sc, new)
                return self.as_kind(self.tr(e.body, sc, new), "bool", e.body.pos)
            finally:
                self._qdepth -= 1
        return quant(len(values), body)

    def tr_opapp(self, e: OpApp, sc: Scope, env: dict[str, Term]) -> Term:
        name = e.name
        if name in env:
            t = env[name]
            if t[0] == "lazy" and not e.args:
                return self._lazy(t)
            if t[0] == "op" and len(e.args) == len(t[1].params):
                new = {**t[3], **{p.name: self.bind(a, sc, env)
                                  for p, a in zip(t[1].params, e.args)}}
                return self.tr(t[1].body, t[2], new)
            if not e.args:
                return t
            raise not_compiled(e.pos, f"applying {name}")
        if name in CORE_NAMES or isinstance(sc.defs.get(name), Builtin):
            return self.tr_builtin(e, sc, env)
        entry = sc.defs.get(name)
        if isinstance(entry, Defn) and isinstance(entry.d, OpDef):
            return self._apply_defn(entry, e, sc, env)
        if entry is None and name in sc.subst and not e.args:
            # an instance's constant or variable: what the INSTANCE substitutes for it
            sub, osc, oenv = sc.subst[name]
            return self.tr(sub, osc, {k: ("static", v) for k, v in oenv.items()})
        if name in sc.state_vars and sc is self.sc:
            enc = self.encodings[name]
            if enc.shape is not None:
                return self.tree_term(name)
            if enc.kind == "set" and enc.domain is None:
                arr = self.reads[name]
                return ("bits", enc.members, [arr[k] for k in range(len(enc.members))], _FALSE)
            if enc.domain is not None:
                return self.var_term(enc)
            read = self.reads[name]
            return ("bool", read == 1) if enc.kind == "bool" else (enc.kind, read)
        raise not_compiled(e.pos, f"the operator {name}")

    def _apply_defn(self, entry: Defn, e: OpApp | Instanced, sc: Scope,
                    env: dict[str, Term]) -> Term:
        """The operator ``entry`` applied to ``e``'s arguments, inlined."""
        d, name = entry.d, entry.d.name
        assert isinstance(d, OpDef)
        if any(p.arity for p in d.params) or len(d.params) != len(e.args):
            raise not_compiled(e.pos, f"applying {name}")
        args = [self.bind(a, sc, env) for a in e.args]
        if not self._recursive(entry):
            return self.tr(d.body, entry.scope, {p.name: a for p, a in zip(d.params, args)})
        if self._recursion(name, args, e.pos):
            return _ERR
        self._calls.append((name, args))
        try:
            return self.tr(d.body, entry.scope, {p.name: a for p, a in zip(d.params, args)})
        finally:
            self._calls.pop()

    def _instance_entry(self, e: Instanced, sc: Scope, env: dict[str, Term]) -> Any:
        """What ``I!Op`` names: Op's entry in the instance's scope (the instance's arguments
        constant)."""
        static = {k: v[1] for k, v in env.items() if v[0] == "static"}
        if not all(self._closed(a, sc, env) and self.ev.state_free(a, sc, set(static))
                   for a in e.instance_args):
            raise not_compiled(e.pos, "an instance whose arguments read the state")
        try:
            inner = self.ev.instance_scope(e, sc, static, Ctx({}, None))
        except _TlaError:
            raise not_compiled(e.pos, f"{e.instance}!{e.name}") from None
        return inner.defs.get(e.name)

    def _root_var(self, lhs: Expr, sc: Scope, env: dict[str, Term]) -> str | None:
        """The root module's variable ``lhs`` names (through an instance's substitution,
        ``nextId <- nextLeaderEpoch``), or None."""
        for _ in range(20):
            if not (isinstance(lhs, OpApp) and not lhs.args and lhs.name not in env):
                return None
            if sc is self.sc:
                return lhs.name if lhs.name in sc.state_vars else None
            if lhs.name in sc.defs or lhs.name not in sc.subst:
                return None
            lhs, sc, oenv = sc.subst[lhs.name]
            env = {k: ("static", v) for k, v in oenv.items()}
        return None

    ARITH = {"+": "+", "-": "-", "*": "*", "\\div": "//", "%": "%"}
    CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">="}

    def tr_builtin(self, e: OpApp, sc: Scope, env: dict[str, Term]) -> Term:
        name, pos = e.name, e.pos
        if name in ("\\in", "\\notin") and len(e.args) == 2 and isinstance(e.args[1], FnSet):
            f = self.tr(e.args[0], sc, env)
            dom = self.tr(e.args[1].domain, sc, env)
            if f[0] == "fn" and dom[0] == "static" and isinstance(dom[1], frozenset):
                if {key(v) for v in dom[1]} != {key(v) for v in f[1]}:
                    inside: Any = _FALSE
                else:
                    rng = self.tr(e.args[1].range, sc, env)
                    inside = _and(*[self.member(x, rng, pos) for x in f[2]])
                return ("bool", inside if name == "\\in" else _not(inside))
        if name == "=>" and len(e.args) == 2:
            a = self.as_kind(self.tr(e.args[0], sc, env), "bool", pos)
            with self._under(a):
                b = self.as_kind(self.tr(e.args[1], sc, env), "bool", pos)
            return ("bool", _implies(a, b))
        args = [self.tr(a, sc, env) for a in e.args]
        if name in ("\\cup", "\\cap", "\\", "\\subseteq") and len(args) == 2:
            return self.set_op(name, args[0], args[1], pos)
        if name == ".." and len(args) == 2:
            return self.interval(args[0], args[1], pos)
        if name in ("Max", "Min") and len(args) == 1 and args[0][0] in ("bits", "elems"):
            members, bs, out = self.as_bits(args[0], pos)
            _exact(out, pos)
            pairs = [(b, ("static", m)) for m, b in zip(members, bs) if not _false(b)]
            return self.merge(pairs[::-1] if name == "Max" else pairs, _ERR, pos)
        if name == "Cardinality" and len(args) == 1 and args[0][0] in ("bits", "static",
                                                                        "elems"):
            members = tuple(self.universe(args[0]))
            bs, out = self.bits(args[0], members, pos)
            _exact(out, pos)
            total: Any = L.Const(0)
            for b in bs:
                total = total + L.ite(b, 1, 0)
            return ("int", total)
        if name in self.ARITH and len(args) == 2:
            a, b = (self.as_kind(x, "int", pos) for x in args)
            op = self.ARITH[name]
            if op == "+":
                return ("int", a + b)
            if op == "-":
                return ("int", a - b)
            if not isinstance(b, L.Const) and not (op == "*" and isinstance(a, L.Const)):
                raise not_compiled(pos, f"{name} of two values read from the state (the "
                                        "language multiplies and divides by constants)")
            if op == "*":
                return ("int", b * a if isinstance(a, L.Const) else a * b)
            if b.value <= 0:
                raise not_compiled(pos, f"{name} by {b.value}")
            return ("int", a // b if op == "//" else a % b)
        if name == "-." and len(args) == 1:
            return ("int", 0 - self.as_kind(args[0], "int", pos))
        if name in self.CMP:
            a, b = (self.as_kind(x, "int", pos) for x in args)
            return ("bool", {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[name])
        if name in ("=", "/="):
            eq = self.equal(args[0], args[1], pos)
            return ("bool", eq if name == "=" else _not(eq))
        if name in ("\\in", "\\notin") and self.is_set(args[1]):
            inside = self.member(args[0], args[1], pos)
            return ("bool", inside if name == "\\in" else _not(inside))
        if name == "~":
            return ("bool", ~self.as_kind(args[0], "bool", pos))
        if name == "=>":
            return ("bool", L.implies(self.as_kind(args[0], "bool", pos),
                                      self.as_kind(args[1], "bool", pos)))
        if name == "<=>":
            a, b = (self.as_kind(x, "bool", pos) for x in args)
            return ("bool", L.conj(L.implies(a, b), L.implies(b, a)))
        t = self._by_params(e, sc, env)
        if t is not None:
            return t
        raise not_compiled(pos, f"the operator {name} on state")

    # -- sets ----------------------------------------------------------------------------

    def _element(self, enc: Enc, read: Any) -> Term:
        return ("bool", read == 1) if enc.kind == "bool" else (enc.kind, read)

    def is_set(self, t: Term) -> bool:
        return t[0] in ("bits", "elems") or (t[0] == "static" and isinstance(t[1], frozenset)) \
            or (t[0] == "param" and bool(t[2]) and all(isinstance(v, frozenset) for v in t[2]))

    def eq_value(self, t: Term, u: Value, pos: Pos) -> Any:
        """Whether the value ``t`` is the value ``u`` (a lang boolean)."""
        if t[0] == "static":
            return L.Const(key(t[1]) == key(u))
        if t[0] == "err":
            return self.error("bool", pos)
        if t[0] == "fn":
            if not isinstance(u, Fcn) or [key(d) for d in t[1]] != \
                    [key(d) for d in sorted_values(u.map)]:
                return _FALSE
            return _and(*[self.eq_value(x, u.map[d], pos) for d, x in zip(t[1], t[2])])
        if t[0] == "opt":
            if isinstance(u, Fcn):
                return _and(t[1] == 0, self.eq_value(t[3], u, pos))
            hits = [k + 1 for k, m in enumerate(t[2]) if key(m) == key(u)]
            return t[1] == hits[0] if hits else _FALSE
        if self.is_set(t):  # a set (a record's field): member by member
            if not isinstance(u, frozenset):
                return _FALSE
            return self.set_op("=", t, ("static", u), pos)[1]
        if t[0] == "param":
            if isinstance(t[1], _Pending):
                raise not_compiled(pos, "comparing an \\E-bound parameter here")
            hits = [k for k, v in enumerate(t[2]) if key(v) == key(u)]
            return _or(*[t[1] == k for k in hits]) if hits else _FALSE
        kind = self.kind_of(t)
        if kind is None:
            raise not_compiled(pos, "comparing this value")
        if (kind == "bool") != (type(u) is bool) or (kind == "int") != (type(u) is int) or \
                (kind == "atom" and u not in self.code):
            return _FALSE
        x, c = self.as_kind(t, kind, pos), self.static_expr(kind, u, pos)
        return _and(_implies(x, c), _implies(c, x)) if kind == "bool" else x == c

    def universe(self, t: Term) -> list[Value]:
        """The values a set term may hold that are known when translating."""
        if t[0] == "bits":
            return list(t[1])
        if t[0] == "static":
            return list(t[1])
        if t[0] == "param":  # a parameter over sets: every member of one
            return [x for v in t[2] for x in v]
        out: list[Value] = []
        for x in t[1]:
            out += self.values_of(x) or []
        return out

    def bits(self, t: Term, members: tuple[Value, ...], pos: Pos) -> tuple[list[Any], Any]:
        """The set ``t`` as one boolean per value of ``members``, and whether it holds a
        value outside them."""
        where = {key(m): i for i, m in enumerate(members)}
        if t[0] == "bits":
            mine = {key(m): b for m, b in zip(t[1], t[2])}
            return ([mine.get(key(m), _FALSE) for m in members],
                    _or(t[3], *[b for m, b in zip(t[1], t[2]) if key(m) not in where]))
        if t[0] == "static":
            ks = {key(v) for v in t[1]}
            return ([L.Const(key(m) in ks) for m in members],
                    L.Const(any(k not in where for k in ks)))
        if t[0] == "param" and self.is_set(t):  # a parameter over sets: a table per member
            if isinstance(t[1], _Pending):
                raise not_compiled(pos, "a set of an \\E-bound parameter here")
            return ([_or(*[t[1] == k for k, v in enumerate(t[2]) if key(m) in
                           {key(x) for x in v}]) for m in members],
                    _or(*[t[1] == k for k, v in enumerate(t[2])
                          if any(key(x) not in where for x in v)]))
        if t[0] == "elems":
            hits = [[self.eq_value(x, m, pos) for m in members] for x in t[1]]
            within = [vals is not None and all(key(v) in where for v in vals)
                      for vals in map(self.values_of, t[1])]
            return ([_or(*[h[i] for h in hits]) for i in range(len(members))],
                    _or(*[_not(_or(*h)) for h, w in zip(hits, within) if not w]))
        raise not_compiled(pos, f"a {t[0]} where a set is expected")

    def set_op(self, name: str, a: Term, b: Term, pos: Pos) -> Term:
        members = tuple(sorted_values({key(v): v for v in self.universe(a) +
                                       self.universe(b)}.values()))
        (xa, oa), (xb, ob) = self.bits(a, members, pos), self.bits(b, members, pos)
        if name == "\\cup":
            return ("bits", members, [_or(p, q) for p, q in zip(xa, xb)], _or(oa, ob))
        if name == "\\cap":
            return ("bits", members, [_and(p, q) for p, q in zip(xa, xb)], _and(oa, ob))
        if name == "\\":
            return ("bits", members, [_and(p, _not(q)) for p, q in zip(xa, xb)], oa)
        _exact(oa, pos)
        if name == "\\subseteq":
            return ("bool", _and(*[_implies(p, q) for p, q in zip(xa, xb)], _not(ob)))
        _exact(ob, pos)
        eq = _and(*[_and(_implies(p, q), _implies(q, p)) for p, q in zip(xa, xb)])
        return ("bool", eq if name == "=" else _not(eq))

    def _chosen(self, values: tuple[Any, ...], s: Term, pos: Pos, c: L.Bound) -> Any:
        """The choice ``c`` among ``values`` is in the set term ``s`` (bound in a guard)."""
        return self.member(("param", c, values), s, pos)

    def member(self, x: Term, s: Term, pos: Pos) -> Any:
        """``x \\in s`` for a set term ``s`` (a parameter in a set's bits: the bit its value
        indexes, where the bits line up, `_gathered`)."""
        if s[0] == "elems":
            return _or(*[self.equal(x, y, pos) for y in s[1]])
        if s[0] == "static":
            return _or(*[self.eq_value(x, v, pos) for v in _static_members(s[1], pos)])
        _exact(s[3], pos)
        if x[0] == "param" and not isinstance(x[1], _Pending):
            at = {key(m): b for m, b in zip(s[1], s[2])}
            g = self._gather(x[1], [at.get(key(v), _FALSE) for v in x[2]])
            if g is not None:
                return g
        return _or(*[_and(self.eq_value(x, m, pos), b) for m, b in zip(s[1], s[2])])

    def _gathered(self, p: Any, terms: list[Term]) -> Term | None:
        """One term that is ``terms[p]`` for the parameter ``p`` (an expression over
        ``0..len(terms)-1``) when they have one form: scalars, functions, sets and markers
        part by part (`_gather`), constants a table over ``p``; None otherwise."""
        t0 = terms[0]
        if any(t[0] != t0[0] for t in terms):
            return None
        if t0[0] == "static":
            if all(key(t[1]) == key(t0[1]) for t in terms):
                return t0
            return ("param", p, tuple(t[1] for t in terms))
        if t0[0] in ("int", "bool", "atom"):
            e = self._gather(p, [t[1] for t in terms])
            return None if e is None else (t0[0], e)
        if t0[0] == "fn":
            if any([key(d) for d in t[1]] != [key(d) for d in t0[1]] for t in terms):
                return None
            parts = [self._gathered(p, [t[2][k] for t in terms]) for k in range(len(t0[1]))]
            return None if any(x is None for x in parts) else ("fn", t0[1], tuple(parts))
        if t0[0] == "bits":
            if any([key(m) for m in t[1]] != [key(m) for m in t0[1]] for t in terms):
                return None
            bs = [self._gather(p, [t[2][k] for t in terms]) for k in range(len(t0[1]))]
            out = self._gather(p, [t[3] for t in terms])
            return None if out is None or any(b is None for b in bs) else \
                ("bits", t0[1], bs, out)
        if t0[0] == "opt":
            if any([key(m) for m in t[2]] != [key(m) for m in t0[2]] for t in terms):
                return None
            tag = self._gather(p, [t[1] for t in terms])
            value = self._gathered(p, [t[3] for t in terms])
            return None if tag is None or value is None else ("opt", tag, t0[2], value)
        return None

    def _gather(self, p: Any, xs: list[Any]) -> Any:
        """One lang expression that is ``xs[p]`` for the parameter ``p``, or None: the same
        node at every value of ``p`` but for reads whose indices, and constants, go up by a
        fixed step with it (``log[0], log[1], log[2]``: ``log[p]``), so that the kernel
        reads one cell where it would choose among them. An error read (`error`) is never
        gathered: it stays where the evaluator fails."""
        x0 = xs[0]
        if all(x is x0 for x in xs):
            return x0
        if any(type(x) is not type(x0) for x in xs) or any(
                id(x) in self._error_ids for x in xs):
            return None
        if isinstance(x0, L.Const):
            vs = [x.value for x in xs]
            if all(v == vs[0] and type(v) is type(vs[0]) for v in vs):
                return x0
            if any(type(v) is bool for v in vs):
                return None
            step = int(vs[1]) - int(vs[0])
            if any(int(v) != int(vs[0]) + step * k for k, v in enumerate(vs)):
                return None
            scaled = p if step == 1 else p * step
            return scaled if vs[0] == 0 else scaled + int(vs[0])
        if isinstance(x0, L.Read):
            if any(x.var is not x0.var or x.primed != x0.primed for x in xs):
                return None
            idx = [self._gather(p, [x.index[k] for x in xs]) for k in range(len(x0.index))]
            return None if any(i is None for i in idx) else L.Read(x0.var, tuple(idx),
                                                                   x0.primed)
        if isinstance(x0, (L.Arith, L.Cmp)):
            if any(x.op != x0.op for x in xs):
                return None
            a, b = self._gather(p, [x.a for x in xs]), self._gather(p, [x.b for x in xs])
            if a is None or b is None or (x0.op in ("*", "//", "%") and
                                          not isinstance(b, L.Const)):
                return None
            return type(x0)(x0.op, a, b)
        if isinstance(x0, (L.And, L.Or)):
            if any(len(x.args) != len(x0.args) for x in xs):
                return None
            args = [self._gather(p, [x.args[k] for x in xs]) for k in range(len(x0.args))]
            return None if any(a is None for a in args) else type(x0)(tuple(args))
        if isinstance(x0, L.Not):
            a = self._gather(p, [x.a for x in xs])
            return None if a is None else L.Not(a)
        if isinstance(x0, L.Ite):
            c, a, b = (self._gather(p, [getattr(x, f) for x in xs])
                       for f in ("cond", "then", "other"))
            return None if c is None or a is None or b is None else L.Ite(c, a, b)
        return None

    def equal(self, a: Term, b: Term, pos: Pos) -> Any:
        if self.is_set(a) or self.is_set(b):
            return self.set_op("=", a, b, pos)[1]
        if "opt" in (a[0], b[0]):
            return self._opt_equal(a, b, pos)
        if (a[0] == "fn" and b[0] == "param") or (a[0] == "param" and b[0] == "fn"):
            a, b = self.fn_of(a, pos), self.fn_of(b, pos)
        if a[0] == "fn" and b[0] == "fn":
            if [key(d) for d in a[1]] != [key(d) for d in b[1]]:
                return _FALSE
            return _and(*[self.equal(x, y, pos) for x, y in zip(a[2], b[2])])
        if a[0] == "static":
            return self.eq_value(b, a[1], pos)
        if b[0] == "static":
            return self.eq_value(a, b[1], pos)
        kind = self.kind_of(a) or self.kind_of(b)
        if kind is None:
            for x, y in ((a, b), (b, a)):  # a parameter over values of no one kind (records,
                # a record or a marker): the other side equal to the value its index picks
                if x[0] == "param" and not isinstance(x[1], _Pending):
                    return _or(*[_and(x[1] == k, self.eq_value(y, v, pos))
                                 for k, v in enumerate(x[2])])
            raise not_compiled(pos, "= between values this case does not store")
        x, y = (self.as_kind(t, kind, pos) for t in (a, b))
        return _and(_implies(x, y), _implies(y, x)) if kind == "bool" else x == y

    def _by_params(self, e: Expr, sc: Scope, env: dict[str, Term]) -> Term | None:
        """``e``, reading no state and some \\E-bound parameters (each a finite list of
        values), as a table over them: its value for each of their combinations."""
        names: list[str] = []
        stack: list[Any] = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, OpApp) and x.name in env and env[x.name][0] != "static" \
                    and x.name not in names:
                names.append(x.name)
            if isinstance(x, Expr):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
            elif isinstance(x, tuple):
                stack.extend(x)
            elif hasattr(x, "__dataclass_fields__"):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
        terms = [env[n] for n in names]
        if not terms or any(t[0] != "param" or isinstance(t[1], _Pending) for t in terms):
            return None
        static = {k: v[1] for k, v in env.items() if v[0] == "static"}
        if not self.ev.state_free(e, sc, set(static) | set(names)):
            return None
        size = 1
        for t in terms:
            size *= len(t[2])
        if size > 4096:
            return None
        index: Any = L.Const(0)
        for t in terms:
            index = index * len(t[2]) + t[1]
        values = []
        for combo in itertools.product(*[t[2] for t in terms]):
            try:
                values.append(self.ev.ev(e, sc, {**static, **dict(zip(names, combo))},
                                         Ctx({}, None)))
            except _TlaError:  # (a value some combination fails on, `m.value` of a message
                return None    # without one: a guard before it may exclude it; not tabulated)
        return ("param", index, tuple(values))


    # -- functions, undefined values, ranges ---------------------------------------------

    def error(self, kind: str, pos: Pos) -> Any:
        """A lang expression of ``kind`` that is the kernel's domain error where computed: a
        read past the last element of the first array (the evaluator fails there too)."""
        for v in self.spec.variables:
            if v.shape:
                read = v[(v.shape[0],) + (0,) * (len(v.shape) - 1)]
                self._errors.append(read)  # (kept: `_may_fail` knows them by id)
                self._error_ids.add(id(read))
                if kind == "bool":
                    return read if read.sort == L.BOOL else read == 0
                return L.ite(read, 1, 0) if read.sort == L.BOOL else read
        raise not_compiled(pos, "a value the evaluator may fail on (a CHOOSE without a witness, "
                                "an argument outside a function's domain) in a module without "
                                "a function or set variable")

    def var_term(self, enc: Enc) -> Term:
        """A function variable as a function term over its dimensions."""
        if enc.name not in self._var_terms:
            arr = self.reads[enc.name]

            def build(dims: tuple[tuple[Value, ...], ...], idx: tuple[int, ...]) -> Term:
                if not dims and enc.kind == "set":
                    return ("bits", enc.members, [arr[idx + (k,)] == 1
                                                  for k in range(len(enc.members))], _FALSE)
                if not dims:
                    return self._element(enc, arr[idx])
                return ("fn", dims[0], tuple(build(dims[1:], (*idx, k))
                                             for k in range(len(dims[0]))))
            self._var_terms[enc.name] = build(enc.dims, ())
        return self._var_terms[enc.name]

    def fn_of(self, t: Term, pos: Pos) -> Term:
        if t[0] == "fn":
            return t
        if t[0] == "param" and not isinstance(t[1], _Pending) and t[2] and all(
                isinstance(v, Fcn) for v in t[2]) and len({frozenset(v.map) for v in t[2]}) == 1:
            # a parameter over functions (records) on one domain: a table per element
            dom = tuple(sorted_values(t[2][0].map))
            return ("fn", dom, tuple(("param", t[1], tuple(v.map[d] for v in t[2]))
                                     for d in dom))
        if t[0] == "static" and isinstance(t[1], Fcn):
            dom = tuple(sorted_values(t[1].map))
            return ("fn", dom, tuple(("static", t[1].map[d]) for d in dom))
        raise not_compiled(pos, "applying this function")

    def apply(self, f: Term, arg: Term, pos: Pos) -> Term:
        """``f[arg]``: the element at a known argument, else the one whose argument
        ``arg`` equals (an argument outside the domain: the evaluator's error). At a
        parameter whose values are all in the domain, the elements indexed by it where they
        line up (`_gathered`: ``log[p]`` one read, not a choice among every element)."""
        if f[0] == "err":
            return _ERR
        if f[0] == "opt":  # a marker applied: the evaluator's error
            return self.merge([(f[1] == 0, self.apply(f[3], arg, pos))], _ERR, pos)
        _, dom, elems = self.fn_of(f, pos)
        if arg[0] == "static":
            for d, x in zip(dom, elems):
                if key(d) == key(arg[1]):
                    return x  # type: ignore[no-any-return]
            return _ERR
        if arg[0] == "param" and not isinstance(arg[1], _Pending):
            by_arg = {key(d): x for d, x in zip(dom, elems)}
            if all(key(v) in by_arg for v in arg[2]):
                g = self._gathered(arg[1], [by_arg[key(v)] for v in arg[2]])
                if g is not None:
                    return g
        vals = self.values_of(arg)
        if vals is not None and {key(v) for v in vals} <= {key(d) for d in dom}:
            # the argument is always in the domain: its last possible element by default
            at = [(d, x) for d, x in zip(dom, elems) if key(d) in {key(v) for v in vals}]
            return self.merge([(self.eq_value(arg, d, pos), x) for d, x in at[:-1]],
                              at[-1][1], pos)
        return self.merge([(self.eq_value(arg, d, pos), x) for d, x in zip(dom, elems)],
                          _ERR, pos)

    def _update(self, f: Term, keys: list[Term], new: Expr, sc: Scope,
                env: dict[str, Term], pos: Pos) -> Term:
        """``[f EXCEPT ![k1]...[kn] = new]`` (``@`` the old element); a key outside the
        domain leaves the function as it is, as the evaluator's."""
        _, dom, elems = self.fn_of(f, pos)
        out = []
        for d, old in zip(dom, elems):
            hit = self.eq_value(keys[0], d, pos)
            if _false(hit):
                out.append(old)
                continue
            if len(keys) == 1:
                value = self.tr(new, sc, {**env, "@": old})
            else:
                value = self._update(old, keys[1:], new, sc, env, pos)
            out.append(value if isinstance(hit, L.Const) else self.merge([(hit, value)], old,
                                                                          pos))
        return ("fn", dom, tuple(out))

    def merge(self, pairs: list[tuple[Any, Term]], default: Term, pos: Pos) -> Term:
        """The first term whose condition holds, else ``default``: an IF, a CASE, a function
        applied to an argument read from the state; functions element by element, sets bit
        by bit."""
        kept: list[tuple[Any, Term]] = []
        for c, t in pairs:
            if _false(c):
                continue
            if isinstance(c, L.Const):
                default = t
                break
            kept.append((c, t))
        if not kept:
            return default
        terms = [t for _, t in kept] + [default]
        real = [t for t in terms if t[0] != "err"]
        if not real:
            return _ERR
        if any(t[0] == "opt" for t in real) or (any(self._fn_like(t) for t in real) and any(
                not self._fn_like(t) and not self.is_set(t) for t in real)):
            return self._opt_merge(kept, default, pos)
        if any(t[0] == "fn" or (t[0] == "static" and isinstance(t[1], Fcn)) for t in real):
            fns = [self.fn_of(t, pos) if t[0] != "err" else t for t in terms]
            dom = next(f[1] for f in fns if f[0] == "fn")
            if any(f[0] == "fn" and [key(x) for x in f[1]] != [key(x) for x in dom]
                   for f in fns):
                raise not_compiled(pos, "functions on several domains as one value")
            return ("fn", dom, tuple(self.merge(
                [(c, f[2][k] if f[0] == "fn" else _ERR) for (c, _), f in zip(kept, fns)],
                fns[-1][2][k] if fns[-1][0] == "fn" else _ERR, pos) for k in range(len(dom))))
        if any(self.is_set(t) for t in real):
            members = tuple(sorted_values({key(v): v for t in real
                                           for v in self.universe(t)}.values()))
            split = [self.as_bits(t, pos, members) if t[0] != "err" else None for t in terms]

            # an undefined set's members are the error; it holds no other value
            def chain(pick: Callable[[Any], Any], undefined: Any) -> Any:
                out = pick(split[-1]) if split[-1] is not None else undefined
                for (c, _), sb in zip(reversed(kept), reversed(split[:-1])):
                    out = _ite(c, pick(sb) if sb is not None else undefined, out)
                return out

            def bit(k: int) -> Callable[[Any], Any]:
                return lambda sb: sb[1][k]
            return ("bits", members, [chain(bit(k), self.error("bool", pos))
                                      for k in range(len(members))],
                    chain(lambda sb: sb[2], _FALSE))
        kind = next((k for k in map(self.kind_of, real) if k is not None), None)
        if kind is None:
            raise not_compiled(pos, "a choice between values this case does not store")
        out = self.as_kind(default, kind, pos)
        for c, t in reversed(kept):
            out = L.ite(c, self.as_kind(t, kind, pos), out)
        return (kind, out)

    def as_bits(self, t: Term, pos: Pos, members: tuple[Value, ...] | None = None
                ) -> tuple[tuple[Value, ...], list[Any], Any]:
        """The set ``t`` as its possible members, a boolean each, and whether it holds
        another value."""
        if t[0] == "static" and not isinstance(t[1], frozenset):
            raise not_compiled(pos, f"{show(t[1])} where a set is expected")
        if members is None:
            if t[0] == "bits":
                return tuple(t[1]), list(t[2]), t[3]
            members = tuple(sorted_values({key(v): v for v in self.universe(t)}.values()))
        bs, out = self.bits(t, members, pos)
        return members, bs, out

    def values_of(self, t: Term) -> list[Value] | None:
        """Every value the scalar term ``t`` may take, or None where that is not known."""
        if t[0] == "static":
            return [t[1]]
        if t[0] == "param":
            return list(t[2])
        if t[0] == "bool":
            return [False, True]
        if t[0] == "atom":
            return list(self.atoms)
        if t[0] == "fn":  # a function or record: every combination of its elements' values
            parts: list[list[Value]] = []
            size = 1
            for x in t[2]:
                vals = self.values_of(x)
                if vals is None:
                    return None
                parts.append(vals)
                size *= len(vals)
            if size > RANGE_MAX:
                return None
            return [Fcn(dict(zip(t[1], combo))) for combo in itertools.product(*parts)]
        if t[0] == "opt":
            inner = self.values_of(t[3])
            return None if inner is None else [*t[2], *inner]
        if t[0] == "int":
            r = self.range_of(t[1])
            if r is None or r[1] - r[0] >= RANGE_MAX:
                return None
            return list(range(r[0], r[1] + 1))
        return None

    def range_of(self, e: Any) -> tuple[int, int] | None:
        """An interval holding every value of the lang integer expression ``e``."""
        hit = self._ranges.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        r = self._range(e)
        self._ranges[id(e)] = (e, r)
        return r

    def _range(self, e: Any) -> tuple[int, int] | None:
        if isinstance(e, L.Const):
            return (int(e.value), int(e.value))
        if isinstance(e, L.Read):
            return (e.var.lo, e.var.hi) if e.sort == L.INT else (0, 1)
        if isinstance(e, L.ActionParam):
            return (0, e.size - 1)
        if isinstance(e, L.Bound):
            n = self._sizes.get(e)
            return (0, n - 1) if n else None
        if isinstance(e, L.Local):
            return self._local_ranges.get(e.name)
        if isinstance(e, L.Ite):
            a, b = self.range_of(e.then), self.range_of(e.other)
            return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
        if isinstance(e, L.Quant) and e.kind == "count":
            return (0, e.n)
        if isinstance(e, L.Arith):
            a, b = self.range_of(e.a), self.range_of(e.b)
            if a is None or b is None:
                return None
            if e.op == "+":
                return (a[0] + b[0], a[1] + b[1])
            if e.op == "-":
                return (a[0] - b[1], a[1] - b[0])
            if e.op == "min":
                return (min(a[0], b[0]), min(a[1], b[1]))
            if e.op == "max":
                return (max(a[0], b[0]), max(a[1], b[1]))
            if e.op == "*":
                ends = [x * y for x in a for y in b]
                return (min(ends), max(ends))
            if e.op == "//":
                return (a[0] // b[0], a[1] // b[0])
            if e.op == "%":
                return (0, b[0] - 1)
        return None

    def interval(self, a: Term, b: Term, pos: Pos) -> Term:
        """``a..b`` with an end read from the state: a bit per value it may hold."""
        if a[0] == "err" or b[0] == "err":
            return _ERR
        lo_vals, hi_vals = self.values_of(a), self.values_of(b)
        if lo_vals is None or hi_vals is None or not all(type(v) is int
                                                         for v in lo_vals + hi_vals):
            raise not_compiled(pos, ".. between values whose range is not known")
        x, y = self.as_kind(a, "int", pos), self.as_kind(b, "int", pos)
        members = tuple(range(min(lo_vals), max(hi_vals) + 1))
        return ("bits", members, [_and(x <= m if not isinstance(x, L.Const) else
                                       L.Const(x.value <= m),
                                       m <= y if not isinstance(y, L.Const) else
                                       L.Const(m <= y.value)) for m in members], _FALSE)

    def tr_choose(self, e: Choose, sc: Scope, env: dict[str, Term]) -> Term:
        """``CHOOSE x \\in S : p``: the first member of S, in the evaluator's value order,
        where p holds (none: the evaluator's error)."""
        b = e.bound
        if len(b.names) != 1 or b.tuple:
            raise not_compiled(e.pos, "several names in CHOOSE")
        members, bs, out = self.as_bits(self.tr(b.set, sc, env), b.set.pos)
        _exact(out, b.set.pos)
        pairs = []
        for m, bit in zip(members, bs):
            if _false(bit):
                continue
            with self._under(bit):
                holds = self.as_kind(self.tr(e.body, sc, {**env, b.names[0]: ("static", m)}),
                                     "bool", e.body.pos)
            pairs.append((_and(bit, holds), ("static", m)))
        return self.merge(pairs, _ERR, e.pos)

    def _recursion(self, name: str, args: list[Term], pos: Pos) -> bool:
        """Whether this application of ``name``, inside applications of itself, is deeper
        than any terminating evaluation goes: the arguments that change along the chain
        take finitely many values, and a chain longer than their combinations repeats a
        call, which the evaluator never finishes."""
        chain = [a for n, a in self._calls if n == name]
        if not chain:
            return False
        calls, self._calls = self._calls, []  # the arguments translated as where they stand
        try:
            return self._deeper(name, chain, args, pos)
        finally:
            self._calls = calls

    # -- values computed once ------------------------------------------------------------

    def _lazy(self, t: Term) -> Term:
        """A LET definition's or an operator argument's value where it is read: in an
        action's effects, computed once into locals (under the conditions it is first read
        under, so that it is computed only where the evaluator computes it)."""
        if self.block is None or self._qdepth:
            return self.tr(t[1], t[2], t[3])
        path = tuple(self.path)
        for p, keep, h in self._hoisted.get(id(t), ()):
            if keep is t and len(p) <= len(path) and all(x is y for x, y in zip(p, path)):
                return h
        u = self.tr(t[1], t[2], t[3])
        if not self._may_fail(u):  # (``log == logs[r]``): computed once, wherever read
            path = ()
        h = self._hoist(u, _and(*path))
        self._hoisted.setdefault(id(t), []).append((path, t, h))
        return h

    def _may_fail(self, u: Any) -> bool:
        """Whether the term ``u`` holds a value the evaluator may fail on (an `error`)."""
        stack, seen = [u], set()
        while stack:
            x = stack.pop()
            if id(x) in self._error_ids or x is _ERR:
                return True
            if id(x) in seen:
                continue
            seen.add(id(x))
            if isinstance(x, (tuple, list)):
                stack.extend(x)
            elif isinstance(x, L.ExprBase) and hasattr(x, "__dataclass_fields__"):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
        return False

    def _hoist(self, u: Term, cond: Any) -> Term:
        b = self.block
        assert b is not None
        if u[0] in ("int", "atom", "param", "bool"):
            e = u[1]
            if isinstance(e, (L.Const, L.Read, L.ActionParam, L.Local, _Pending)):
                return u
            if u[0] == "bool":
                return (u[0], b.let("t", _ite(cond, e, _FALSE)))
            r = self.range_of(e)
            loc = b.let("t", _ite(cond, e, r[0] if r is not None else 0))
            if r is not None:
                self._local_ranges[loc.name] = r
            return (u[0], loc, *u[2:])
        if u[0] == "fn":
            return ("fn", u[1], tuple(self._hoist(x, cond) for x in u[2]))
        if u[0] == "opt":
            tag = u[1]
            if not isinstance(tag, (L.Const, L.Read, L.Local)):
                tag = b.let("t", _ite(cond, tag, 0))
                self._local_ranges[tag.name] = (0, len(u[2]))
            return ("opt", tag, u[2], self._hoist(u[3], cond))
        if u[0] == "bits":
            return ("bits", u[1], [self._hoist(("bool", x), cond)[1] for x in u[2]],
                    self._hoist(("bool", u[3]), cond)[1])
        if u[0] == "elems":
            return ("elems", [self._hoist(x, cond) for x in u[1]])
        return u

    def _under(self, cond: Any) -> Any:
        """A context in which the expression translated is under ``cond`` too."""
        gen = self

        class _Ctx:
            def __enter__(self) -> None:
                gen.path.append(cond)

            def __exit__(self, *exc: Any) -> None:
                gen.path.pop()

        return _Ctx()

    def _recursive(self, entry: Defn) -> bool:
        """Whether the operator ``entry`` applies itself, directly or through others."""
        if id(entry) not in self._rec:
            seen: set[int] = set()
            stack: list[tuple[Any, Scope]] = [(entry.d.body, entry.scope)]
            found = False
            while stack and not found:
                x, xsc = stack.pop()
                if isinstance(x, OpApp):
                    d = xsc.defs.get(x.name)
                    if d is entry:
                        found = True
                    elif isinstance(d, Defn) and isinstance(d.d, OpDef) and id(d) not in seen:
                        seen.add(id(d))
                        stack.append((d.d.body, d.scope))
                if isinstance(x, (Expr, OpDef)) or hasattr(x, "__dataclass_fields__"):
                    stack.extend((getattr(x, f), xsc) for f in x.__dataclass_fields__)
                elif isinstance(x, tuple):
                    stack.extend((y, xsc) for y in x)
            self._rec[id(entry)] = found
        return self._rec[id(entry)]

    def _deeper(self, name: str, chain: list[list[Term]], args: list[Term], pos: Pos) -> bool:
        first = chain[0]
        size = 1
        for i, t in enumerate(args):
            if all(c[i] is first[i] for c in chain) and t is first[i]:
                continue  # passed along unchanged
            seen: dict[Any, Value] = {}
            for u in [c[i] for c in chain] + [t]:
                if u[0] == "lazy":
                    u = self.tr(u[1], u[2], u[3])
                vals = self.values_of(u)
                if vals is None:
                    if len(chain) >= UNROLL_MAX:
                        raise not_compiled(pos, f"the recursion of {name} over arguments whose "
                                                "range is not known")
                    size = 0
                    break
                seen.update((key(v), v) for v in vals)
            if size == 0:
                break
            size *= len(seen)
        if size == 0:
            return False
        if len(chain) > size:
            return True
        if len(chain) >= UNROLL_MAX:
            raise not_compiled(pos, f"{name} unrolled deeper than {UNROLL_MAX}")
        return False

    # -- actions -------------------------------------------------------------------------

    def bind(self, a: Expr, sc: Scope, env: dict[str, Term]) -> Term:
        """An operator's argument (or a LET definition without parameters) for its body's
        environment: its value when it reads no state, the term a name is bound to, else the
        expression itself, translated where the body reads it (an argument may read an
        ``\\E``-bound parameter whose action is not made yet)."""
        static = {k: v[1] for k, v in env.items() if v[0] == "static"}
        if self._closed(a, sc, env) and self.ev.state_free(a, sc, set(static)):
            return ("static", self.ev.ev(a, sc, dict(static), Ctx({}, None)))
        if isinstance(a, OpApp) and not a.args and a.name in env:
            return env[a.name]
        return ("lazy", a, sc, env)

    def _let(self, e: Let, sc: Scope, env: dict[str, Term]) -> dict[str, Term]:
        new = dict(env)
        for d in e.defs:
            if not isinstance(d, OpDef):
                raise not_compiled(d.pos, "a function definition inside LET")
            if any(p.arity for p in d.params):
                raise not_compiled(d.pos, "a LET definition with operator parameters")
            new[d.name] = ("op", d, sc, new) if d.params else self.bind(d.body, sc, new)
        return new

    def _ways(self, e: Expr, sc: Scope, env: dict[str, Term], way: _Way) -> Iterator[_Way]:
        """Every way ``e`` can be taken, as the evaluator enumerates them (``Evaluator.act``):
        a disjunction, an ``\\E`` witness, an IF's or a CASE's branch is a way wherever it
        stands in a conjunction; each way extends ``way`` (its \\E bindings become the
        action's parameters, its IF and CASE conditions guards). A conjunct that branches no
        further is one part of the way."""
        if isinstance(e, And):
            yield from self._conj([(x, env) for x in e.items], 0, sc, way.fix())
            return
        if isinstance(e, Or):
            for x in e.items:
                yield from self._ways(x, sc, env, way)
            return
        if isinstance(e, Quant) and e.kind == "E":
            names = [(n, b) for b in e.bounds for n in b.names]
            if any(b.tuple for _, b in names):
                raise not_compiled(e.pos, "a tuple pattern in \\E")
            new, params = dict(env), list(way.params)
            guards: list[tuple[bool, Expr, Scope]] = []
            for name, bound in names:
                s = self._exists_set(bound.set, sc, new)
                if s[0] == "bits":
                    # over a set read from the state: a parameter over every value it may
                    # hold, with the guard that the value is in it
                    _exact(s[3], bound.set.pos)
                    values = tuple(s[1])
                    guards.append((False, OpApp(bound.set.pos, "\\in", (
                        OpApp(bound.set.pos, name), bound.set)), sc))
                elif s[0] != "static" or not isinstance(s[1], frozenset):
                    raise not_compiled(bound.set.pos, "\\E over a set that is not constant")
                else:
                    values = tuple(sorted_values(s[1]))
                if not values:
                    return  # no witness: no way
                new[name] = ("param", _Pending(len(params)), values)
                params.append((name, values))
            inner = replace(way, params=tuple(params))
            for neg, g, gsc in guards:
                inner = inner.add((neg, g, gsc, new))
            yield from self._ways(e.body, sc, new, inner)
            return
        if isinstance(e, Quant) and self._action_level(e.body, sc):
            # \A over an action: the conjunction of its instances (each may branch)
            try:
                bindings = self.every_binding(e, sc, env)
            except _TlaError:
                if not self._plain(e.body, sc):
                    raise
                # over a set read from the state, instances that never branch nor assign:
                # one way where every instance holds, the quantifier as a guard
                yield way.fix().add((None, e, sc, env))
                return
            yield from self._conj([(e.body, c) for c, _ in bindings], 0, sc, way.fix())
            return
        if isinstance(e, If) and self._action_level(e, sc):
            yield from self._ways(e.then, sc, env, way.add((False, e.cond, sc, env)))
            yield from self._ways(e.other, sc, env, way.add((True, e.cond, sc, env)))
            return
        if isinstance(e, Case) and self._action_level(e, sc):
            if e.other is None:
                raise not_compiled(e.pos, "a CASE without OTHER in an action (TLC stops with "
                                          "an error where no arm applies)")
            before = way
            for cond, arm in e.arms:
                yield from self._ways(arm, sc, env, before.add((False, cond, sc, env)))
                before = before.add((True, cond, sc, env))
            yield from self._ways(e.other, sc, env, before)
            return
        if isinstance(e, Let) and self._action_level(e, sc):
            yield from self._ways(e.body, sc, self._let(e, sc, env), way)
            return
        if isinstance(e, OpApp) and e.name in env and env[e.name][0] == "op":
            _, d, dsc, denv = env[e.name]
            if self._action_level(d.body, dsc):
                new = {**denv, **{p.name: self.bind(a, sc, env)
                                  for p, a in zip(d.params, e.args)}}
                yield from self._ways(d.body, dsc, new, way)
                return
        if isinstance(e, OpApp) and e.name in env and env[e.name][0] == "lazy" and not e.args:
            _, x, xsc, xenv = env[e.name]
            if self._action_level(x, xsc):
                yield from self._ways(x, xsc, xenv, way)
                return
        if (isinstance(e, OpApp) and e.name not in env and e.name not in CORE_NAMES) or \
                isinstance(e, Instanced):
            entry = sc.defs.get(e.name) if isinstance(e, OpApp) else \
                self._instance_entry(e, sc, env)
            if isinstance(entry, Defn) and isinstance(entry.d, OpDef) and \
                    self._action_level(entry.d.body, entry.scope):
                d = entry.d
                if any(p.arity for p in d.params):
                    raise not_compiled(e.pos, f"{d.name}'s operator parameters")
                if len(d.params) != len(e.args):
                    raise not_compiled(e.pos, f"applying {d.name}")
                new = {p.name: self.bind(a, sc, env) for p, a in zip(d.params, e.args)}
                inner = way if way.fixed else replace(
                    way, label=d.name, call=tuple(new[p.name] for p in d.params),
                    before=len(way.parts))
                yield from self._ways(d.body, entry.scope, new, inner)
                return
        yield way.add((None, e, sc, env))

    def every_binding(self, e: Quant, sc: Scope, env: dict[str, Term]
                      ) -> list[tuple[dict[str, Term], list[Value]]]:
        """Each binding of ``\\A x \\in S, ...`` over constant sets, in the values' order: the
        environment and the values bound."""
        combos: list[tuple[dict[str, Term], list[Value]]] = [(dict(env), [])]
        for b in e.bounds:
            if b.tuple:
                raise not_compiled(e.pos, "a tuple pattern in \\A")
            for name in b.names:
                s = _enumerated(self.tr(b.set, sc, env))
                if s[0] != "static" or not isinstance(s[1], frozenset):
                    raise not_compiled(b.set.pos, "\\A over a set that is not constant")
                combos = [({**c, name: ("static", v)}, [*vs, v]) for c, vs in combos
                          for v in sorted_values(s[1])]
        return combos

    def _exists_set(self, e: Expr, sc: Scope, env: dict[str, Term]) -> Term:
        """The set an ``\\E`` ranges over: constant, a set variable's bits, or (a set that
        reads \\E-bound parameters of the action, ``Procs \\ {p}``) the union of its values
        over theirs, as bits whose guard ``x \\in S`` is translated with the parameters."""
        # the \E-bound parameters not made yet it reads, by name or through a LET
        # definition or an argument (isr == replicaState[p].isr): their numbers and values
        read = {n: t for n, t in env.items() if self._reads_name(e, n)}
        through = self._pending_in(read)
        if not through:
            t = _enumerated(self.tr(e, sc, env))
            return ("bits", *self.as_bits(t, e.pos)) if t[0] == "elems" else t
        union: dict[Any, Value] = {}
        combos = [(self._fixed_env(env, dict(zip(through, combo)), {}),)
                  for combo in itertools.product(*through.values())]
        for (fixed,) in combos:
            t = _enumerated(self.tr(e, sc, fixed))
            if t[0] in ("bits", "elems"):  # read from the state too: the values it may hold
                members, _, outside = self.as_bits(t, e.pos)
                _exact(outside, e.pos)
                union.update((key(v), v) for v in members)
                continue
            if t[0] != "static" or not isinstance(t[1], frozenset):
                raise not_compiled(e.pos, "\\E over a set that is not constant")
            union.update((key(v), v) for v in t[1])
        members = tuple(sorted_values(union.values()))
        return ("bits", members, [_TRUE] * len(members), _FALSE)

    def _pending_in(self, env: dict[str, Term], seen: set[int] | None = None
                    ) -> dict[int, tuple[Value, ...]]:
        r"""The \E-bound parameters not made yet that ``env``'s LET definitions and
        arguments read: their numbers and values."""
        seen = set() if seen is None else seen
        out: dict[int, tuple[Value, ...]] = {}
        if id(env) in seen:
            return out
        seen.add(id(env))
        for t in env.values():
            if t[0] == "param" and isinstance(t[1], _Pending):
                out[int(t[1])] = t[2]
            elif t[0] in ("lazy", "op"):
                out.update(self._pending_in(t[3], seen))
        return out

    def _fixed_env(self, env: dict[str, Term], at: dict[int, Value],
                   memo: dict[int, dict[str, Term]]) -> dict[str, Term]:
        r"""``env`` with each \E-bound parameter not made yet at the value ``at`` gives."""
        if id(env) in memo:
            return memo[id(env)]
        out: dict[str, Term] = {}
        memo[id(env)] = out
        for k, t in env.items():
            if t[0] == "param" and isinstance(t[1], _Pending) and int(t[1]) in at:
                out[k] = ("static", at[int(t[1])])
            elif t[0] in ("lazy", "op"):
                out[k] = (t[0], t[1], t[2], self._fixed_env(t[3], at, memo))
            else:
                out[k] = t
        return out

    def _reads_name(self, e: Any, name: str) -> bool:
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, OpApp) and x.name == name:
                return True
            if isinstance(x, Expr):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
            elif isinstance(x, tuple):
                stack.extend(x)
            elif hasattr(x, "__dataclass_fields__"):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
        return False

    def _conj(self, items: list[tuple[Expr, dict[str, Term]]], i: int, sc: Scope,
              way: _Way) -> Iterator[_Way]:
        if i == len(items):
            yield way
            return
        e, env = items[i]
        for w in self._ways(e, sc, env, way):
            yield from self._conj(items, i + 1, sc, w)

    def _action_level(self, e: Expr, sc: Scope, depth: int = 0) -> bool:
        """Whether ``e`` unfolds as an action (a conjunction, a disjunction, an \\E, primes),
        so that TLC enumerates it rather than evaluating it."""
        if isinstance(e, (And, Or, Prime, Unchanged)) or (isinstance(e, Quant) and e.kind == "E"):
            return True
        if self._in_init and self._target_of(e, sc, {}, init=True) is not None:
            return True  # Init's x = e, x \in S: an assignment, wherever it is defined
        if isinstance(e, Quant):
            return self._action_level(e.body, sc, depth)
        if isinstance(e, If):
            return self._action_level(e.then, sc, depth) or self._action_level(e.other, sc,
                                                                               depth)
        if isinstance(e, Case):
            return any(self._action_level(v, sc, depth) for _, v in e.arms) or (
                e.other is not None and self._action_level(e.other, sc, depth))
        if isinstance(e, Let):
            return self._action_level(e.body, sc, depth)
        if isinstance(e, OpApp):
            if e.args and isinstance(e.args[0], Prime):
                return True
            entry = sc.defs.get(e.name)
            if depth < 20 and isinstance(entry, Defn) and isinstance(entry.d, OpDef):
                return self._action_level(entry.d.body, entry.scope, depth + 1)
        if isinstance(e, Instanced) and depth < 20:
            entry = self._instance_entry(e, sc, {})
            if isinstance(entry, Defn) and isinstance(entry.d, OpDef):
                return self._action_level(entry.d.body, entry.scope, depth + 1)
        return False

    def _plain(self, e: Expr, sc: Scope, depth: int = 0) -> bool:
        """Whether ``e``, taken as an action, is one way where it holds and none elsewhere:
        no disjunction, \\E, prime or UNCHANGED where the evaluator unfolds it."""
        if depth > 20 or isinstance(e, (Or, Prime, Unchanged)) or (
                isinstance(e, Quant) and e.kind == "E"):
            return False
        if isinstance(e, And):
            return all(self._plain(x, sc, depth) for x in e.items)
        if isinstance(e, (Quant, Let)):
            return self._plain(e.body, sc, depth)
        if isinstance(e, If):
            return self._plain(e.then, sc, depth) and self._plain(e.other, sc, depth)
        if isinstance(e, Case):
            return e.other is not None and all(self._plain(v, sc, depth) for _, v in e.arms) \
                and self._plain(e.other, sc, depth)
        if isinstance(e, OpApp) and e.args and isinstance(e.args[0], Prime):
            return False
        entry = sc.defs.get(e.name) if isinstance(e, OpApp) else \
            self._instance_entry(e, sc, {}) if isinstance(e, Instanced) else None
        if isinstance(entry, Defn) and isinstance(entry.d, OpDef):
            return self._plain(entry.d.body, entry.scope, depth + 1)
        return True

    def _target_of(self, e: Expr, sc: Scope, env: dict[str, Term], init: bool) -> str | None:
        if isinstance(e, OpApp) and e.name in ("=", "\\in") and len(e.args) == 2:
            lhs = e.args[0]
            if not init and isinstance(lhs, Prime):
                lhs = lhs.expr
            elif not init:
                return None
            return self._root_var(lhs, sc, env)
        return None

    def _realize(self, t: Term, ps: tuple[Any, ...], memo: dict[int, Any]) -> Term:
        """``t`` with the \\E-bound parameters of the action being made in place (``memo``:
        the environments and the definitions already redone, a LET's definitions seeing
        each other; a definition redone once, so that one LET definition read through
        several environments is one value, computed once in the effects)."""
        if t[0] == "param" and isinstance(t[1], _Pending):
            return ("param", ps[t[1]], t[2])
        if t[0] in ("lazy", "op"):
            if id(t) not in memo:  # (its environment may hold it: the first one made kept)
                made = (t[0], t[1], t[2], self._realize_env(t[3], ps, memo))
                memo.setdefault(id(t), (t, made))
            return memo[id(t)][1]  # type: ignore[no-any-return]
        return t

    def _realize_env(self, env: dict[str, Term], ps: tuple[Any, ...],
                     memo: dict[int, Any]) -> dict[str, Term]:
        if id(env) in memo:
            done: dict[str, Term] = memo[id(env)]
            return done
        out: dict[str, Term] = {}
        memo[id(env)] = out
        for k, v in env.items():
            out[k] = self._realize(v, ps, memo)
        return out

    def action(self, name: str, way: _Way) -> None:
        sizes = [len(v) for _, v in way.params]

        def build(b: Block, *ps: Any) -> None:
            memo: dict[int, Any] = {}
            parts = [(neg, e, psc, self._realize_env(penv, ps, memo))
                     for neg, e, psc, penv in way.parts]
            self.leaf(b, parts, way.parts[0][1] if way.parts else self.m.next, init=False)

        modified: list[str] = []
        for neg, e, psc, penv in way.parts:
            var = self._target_of(e, psc, penv, init=False) if neg is None else None
            if var is not None and var not in modified:
                modified.append(var)
        self.spec.action(name, over=sizes,
                         modifies=[x for v in modified for x in self.stored(v)])(build)
        self.enabled.append(self._enabled(name, sizes, build))

    def _enabled(self, name: str, sizes: list[int], build: Callable[..., None]) -> Any:
        """Whether some instance of the action is enabled: its guard, its parameters bound by
        \\E (the deadlock check's part)."""
        def nest(k: int, ps: tuple[Any, ...]) -> Any:
            if k == len(sizes):
                b = Block(name, len(ps))
                self.for_enabled = True
                try:
                    build(b, *ps)
                finally:
                    self.for_enabled = False
                return _and(*b.guard)
            return L.exists(sizes[k], lambda v: nest(k + 1, (*ps, v)))
        return nest(0, ())

    def leaf(self, b: Block, parts: list[_Part], at: Expr, init: bool) -> None:
        """One way's conjuncts as the block ``b``: guards, then every assignment's new value
        computed from the state before the step, then written."""
        guards: list[Any] = []
        writes: list[tuple[str, Expr, Scope, dict[str, Term], bool]] = []
        unchanged: set[str] = set()
        # Init's conditions that come before each assignment (in Init, the conditions are
        # tested on the state built, after it)
        after: dict[str, list[Any]] = {}
        for neg, e, psc, penv in parts:
            var = self._target_of(e, psc, penv, init) if neg is None else None
            if init and any(w[0] == var for w in writes):
                var = None  # in Init, x = e or x \in S once x is assigned tests it
            if var is not None:
                if any(w[0] == var for w in writes):
                    raise not_compiled(e.pos, f"{var} assigned twice in one action")
                assert isinstance(e, OpApp)
                writes.append((var, e.args[1], psc, penv, e.name == "\\in"))
                after[var] = list(guards)
            elif isinstance(e, Unchanged) and not init and neg is None:
                unchanged.update(self._unchanged_vars(e.expr, psc, penv))
            else:
                if self._reads_next(e):
                    raise not_compiled(e.pos, "a conjunct that reads the next state")
                g = self.as_kind(self.tr(e, psc, penv), "bool", e.pos)
                guards.append(~g if neg else g)
        both = unchanged & {w[0] for w in writes}
        if both:
            raise not_compiled(at.pos, f"{sorted(both)[0]} both assigned and UNCHANGED")
        done = {w[0] for w in writes} | unchanged
        missing = [v for v in self.m.root.variables if v not in done]
        if missing:
            raise not_compiled(at.pos, f"an action that leaves {missing[0]} undetermined")
        choices: dict[str, Any] = {}
        for var, rhs, psc, penv, member in writes:
            if member:
                s = self.tr(rhs, psc, penv)
                if s[0] == "bits":  # a set read from the state: a choice among the values
                    _exact(s[3], rhs.pos)  # it may hold, the one taken in it
                    values = tuple(s[1])
                    choices[var] = ("param", b.choose(len(values)), values)
                    if self.for_enabled:  # the guard alone, the choice bound in it
                        guards.append(L.exists(len(values),
                                               partial(self._chosen, values, s, rhs.pos)))
                    else:
                        guards.append(self.member(choices[var], s, rhs.pos))
                        names = [w[0] for w in writes]
                        for later in names[names.index(var):]:  # it and what comes after
                            after[later].append(guards[-1])
                    continue
                if s[0] != "static" or not isinstance(s[1], frozenset):
                    raise not_compiled(rhs.pos, f"{var} \\in a set that is not constant")
                values = tuple(sorted_values(s[1]))
                if not values:
                    guards.append(_FALSE)  # no value to take: no way
                    values = (next(iter(self.encodings[var].domain or (0,))),)
                choices[var] = ("param", b.choose(len(values)), values)
        if guards and not init:
            b.require(*guards)
        if self.for_enabled:
            return  # the deadlock check reads the guard alone
        self.block, self.path, self._hoisted = b, [], {}
        try:
            self._effects(b, writes, choices, guards, after, init)
        finally:
            self.block = None

    def _effects(self, b: Block, writes: list[tuple[str, Expr, Scope, dict[str, Term], bool]],
                 choices: dict[str, Any], guards: list[Any],
                 after: dict[str, list[Any]], init: bool) -> None:
        """The assignments' values computed and written. In Next every right-hand side reads
        the state before the step: all are computed first, then written. In Init (``after``:
        the conditions before each assignment) a variable is read as the conjuncts before
        assigned it (``sBit \\in {0, 1} /\\ sAck = sBit``, as TLC and the evaluator read
        it): each value is written before the next one is computed, and only where the
        conditions before it hold (elsewhere the variable keeps its start value, in its
        domain, and Init's conditions reject the state), so that a choice a condition rules
        out computes nothing the evaluator does not."""
        staged: list[tuple[Any, Any]] = []
        for var, rhs, psc, penv, member in writes:
            enc = self.encodings[var]
            alive = _and(*after[var]) if init else _TRUE
            self.path.append(alive)
            if member:
                if enc.domain is not None or enc.shape is not None:
                    raise not_compiled(rhs.pos, f"{var} \\in a set of functions")
                staged.append((self.reads[var], self.as_kind(choices[var], enc.kind, rhs.pos)))
            elif enc.shape is not None:
                self._tree_cells(var, enc.shape, (), (), self.tr(rhs, psc, penv), staged,
                                 rhs.pos)
            elif enc.kind == "set" and enc.domain is None:
                staged += self._set_write(enc, self.tr(rhs, psc, penv), rhs.pos)
            elif enc.domain is None:
                staged.append((self.reads[var], self._store(enc, self.tr(rhs, psc, penv),
                                                            rhs.pos)))
            else:
                staged += self._function_write(enc, rhs, psc, penv)
            self.path.pop()
            if init:
                self._write(b, [(t, _ite(alive, v, t)) for t, v in staged])
                staged = []
        self._write(b, staged)
        if guards and init:
            b.require(*guards)  # Init's conditions on the state it built

    @staticmethod
    def _write(b: Block, staged: list[tuple[Any, Any]]) -> None:
        """Each of ``staged``'s values computed into a local, then each written: a value
        that reads a cell written here reads it as it was."""
        locals_ = [(t, b.let("v", v)) for t, v in staged]
        for target, value in locals_:
            b.set(target, value)

    def _set_write(self, enc: Enc, t: Term, pos: Pos) -> list[tuple[Any, Any]]:
        """The set variable ``enc``'s new value ``t``, a bit per member; a value outside its
        members reads past the variable's last bit: the kernel's domain error, never a set
        silently smaller."""
        arr = self.reads[enc.name]
        bs, outside = self.bits(t, enc.members, pos)
        if not (isinstance(outside, L.Const) and outside.value is False):
            bs[0] = L.ite(outside, arr[len(enc.members)], bs[0])
        return [(arr[k], b) for k, b in enumerate(bs)]

    def _store(self, enc: Enc, t: Term, pos: Pos) -> Any:
        if enc.kind == "bool":
            return L.ite(self.as_kind(t, "bool", pos), 1, 0)
        return self.as_kind(t, enc.kind, pos)

    def _function_write(self, enc: Enc, rhs: Expr, sc: Scope,
                        env: dict[str, Term]) -> list[tuple[Any, Any]]:
        """The function variable ``enc``'s new value, cell by cell: ``[f EXCEPT ![i]..[j] =
        e]`` of the variable itself at arguments known to be in its domain writes that cell;
        any other function value (an EXCEPT at an argument read from the state, a LET's
        function, ``[x \\in D |-> e]``) writes each cell with its element."""
        arr = self.reads[enc.name]
        dims = enc.dims
        if isinstance(rhs, Except) and isinstance(rhs.fn, OpApp) and rhs.fn.name == enc.name \
                and not rhs.fn.args and rhs.fn.name not in env and len(rhs.updates) == 1 \
                and enc.kind != "set":
            path, new = rhs.updates[0]
            idx = []
            for (step, arg), dom in zip(path, dims):
                if step != "app" or len(arg) != 1:  # type: ignore[arg-type]
                    break
                k = self.tr(arg[0], sc, env)  # type: ignore[index]
                if k[0] == "static" and any(key(d) == key(k[1]) for d in dom):
                    idx.append(L.Const(next(i for i, d in enumerate(dom)
                                            if key(d) == key(k[1]))))
                elif k[0] == "param" and not isinstance(k[1], _Pending) and \
                        [key(v) for v in k[2]] == [key(d) for d in dom]:
                    idx.append(k[1])
                else:
                    break
            if len(idx) == len(path) == len(dims):
                old = self._element(enc, arr[tuple(idx)])
                return [(arr[tuple(idx)], self._store(enc, self.tr(new, sc, {**env, "@": old}),
                                                      new.pos))]
        t = self.tr(rhs, sc, env)
        if t[0] == "err":
            return [(arr[(0,) * len(dims)], self.error("int", rhs.pos))]
        out: list[tuple[Any, Any]] = []
        self._cells(enc, dims, self.fn_of(t, rhs.pos), (), out, rhs.pos)
        return out

    def _bit_cells(self, t: Term, members: tuple[Value, ...], arr: Any, idx: tuple[int, ...],
                   pos: Pos) -> list[tuple[Any, Any]]:
        """The set ``t`` written a bit a member to ``arr[idx + (k,)]``: (cell, value) pairs (a
        member outside ``members``: a read past the last bit, the kernel's domain error)."""
        bs, outside = self.bits(t, members, pos)
        cells = [L.ite(b, 1, 0) if not isinstance(b, L.Const) else L.Const(int(b.value))
                 for b in bs]
        if not _false(outside):
            cells[0] = L.ite(outside, arr[idx + (len(members),)], cells[0])
        return [(arr[idx + (k,)], c) for k, c in enumerate(cells)]

    def _cells(self, enc: Enc, dims: tuple[tuple[Value, ...], ...], t: Term,
               idx: tuple[int, ...], out: list[tuple[Any, Any]], pos: Pos) -> None:
        arr = self.reads[enc.name]
        if not dims and enc.kind == "set":  # a function to sets: a bit per member
            if t[0] == "err":
                out.append((arr[idx + (0,)], self.error("int", pos)))
                return
            out += self._bit_cells(t, enc.members, arr, idx, pos)
            return
        if not dims:
            out.append((arr[idx], self._store(enc, t, pos)))
            return
        if t[0] == "err":
            out.append((arr[(0,) * len(enc.dims)], self.error("int", pos)))
            return
        f = self.fn_of(t, pos)
        if [key(d) for d in f[1]] != [key(d) for d in dims[0]]:
            raise not_compiled(pos, f"a function on another domain than {enc.name}'s")
        for k, x in enumerate(f[2]):
            self._cells(enc, dims[1:], x, (*idx, k), out, pos)

    def _unchanged_vars(self, e: Expr, sc: Scope, env: dict[str, Term]) -> list[str]:
        if isinstance(e, Tuple):
            return [v for x in e.items for v in self._unchanged_vars(x, sc, env)]
        if isinstance(e, OpApp) and not e.args and e.name not in env:
            entry = sc.defs.get(e.name)
            if isinstance(entry, Defn) and isinstance(entry.d, OpDef) and not entry.d.params:
                return self._unchanged_vars(entry.d.body, entry.scope, {})
            var = self._root_var(e, sc, env)
            if var is not None:
                return [var]
        raise not_compiled(e.pos, "UNCHANGED of something other than variables")

    def _reads_next(self, e: Any) -> bool:
        stack = [e]
        while stack:
            x = stack.pop()
            if isinstance(x, (Prime, Unchanged)):
                return True
            if isinstance(x, Expr):
                stack.extend(getattr(x, f) for f in x.__dataclass_fields__)
            elif isinstance(x, tuple):
                stack.extend(x)
        return False

    def run(self) -> Compiled:
        self._in_init = True
        try:
            inits = list(self._ways(self.m.init, self.sc, {}, _Way("Init", True, (), ())))
        finally:
            self._in_init = False
        if len(inits) != 1 or inits[0].params:
            raise not_compiled(self.m.init.pos, "a disjunction, \\E, IF or CASE in Init")
        self.spec.initial(lambda b: self.leaf(b, list(inits[0].parts), self.m.init,
                                              init=True))
        used: set[str] = set()
        steps: dict[str, str] = {}
        bindings: dict[str, tuple[tuple[str, tuple[Value, ...]], ...]] = {}
        for way in self._ways(self.m.next, self.sc, {}, _Way("Next", False, (), ())):
            name, k = way.label, 1
            while name in used:
                k += 1
                name = f"{way.label}_{k}"
            used.add(name)
            steps[name] = way.label
            bindings[name] = way.params
            self.ways[name] = way
            self.action(name, way)
        for inv in self.m.invariants:
            self.spec.invariant(inv.name, self.as_kind(self.tr(inv.d.body, inv.scope, {}),
                                                       "bool", inv.d.pos))
        if self.m.constraints or self.m.action_constraints or self.m.view or self.m.symmetry:
            raise not_compiled(self.sc.module.pos, "CONSTRAINT, ACTION_CONSTRAINT, VIEW or "
                                                   "SYMMETRY")
        temporal.fairness(self)
        for name in self.m.properties:
            temporal.prop(self, name)
        self.spec.validate()
        if self.deadlock:  # TLC's: a state where no step is possible
            name = "Deadlock"
            while any(i.name == name for i in self.spec.invariants):
                name += "_"
            self.spec.invariant(name, _or(*self.enabled),
                                doc="some step of Next is possible (TLC's deadlock check)")
        return Compiled(self.spec, self.encodings, self.atoms, self.reads, steps, bindings)


def compile_model(m: Model, domains: dict[str, list[Value]],
                  deadlock: bool | None = None) -> Compiled:
    """``m`` as a `Spec` over ``domains`` (each variable's values: `Result.values`), with the
    invariant ``Deadlock`` (some step possible) when ``deadlock`` (None: the cfg's
    CHECK_DEADLOCK, on by default as TLC's)."""
    return Compiler(m, domains, deadlock).run()


__all__ = ["Compiled", "Enc", "Shape", "compile_model", "key"]
