"""Structured state: enums, records, optional values, sets and bounded sequences over the row.

The engines know one kind of state variable: a scalar or an array of small integers
(``lang.Var``). A typed variable is stored as several of them, one per *leaf* of its type,
each shaped by the variable's own dimensions followed by the leaf's inner ones:

    spec.declare("replicaState", Record(hw=Int(0, 2), leader=Opt(Int(0, 2)), isr=SetOf(3)),
             over=(3,))

declares ``replicaState.hw[3]``, ``replicaState.leader[3]`` and ``replicaState.isr[3, 3]``.
Every backend (the kernel, the interpreter, Z3, symmetry, the traces) reads those leaves as
it reads any variable, so each gets the new types for free. What makes this sound is the
*canonical form*: a value has exactly one encoding, so equal values give equal rows and equal
fingerprints. A set is one boolean per possible member; an optional scalar holds a sentinel
below its domain when absent; an absent optional record holds its fields' defaults; a
sequence holds its length and its items, and every slot past the length holds the item
type's default (``truncate`` clears them, ``append`` past the capacity is a domain error of
``<name>.len``, a finding that names the variable).

A typed value in an expression is a *handle*: a scalar leaf is simply an expression (a
``Read``), so arithmetic and comparisons work as before; a record handle has its fields as
attributes; a set handle has ``has``, ``add``, ``remove``, ``|``, ``&``, ``-``, ``size``,
``forall``, ``exists``; a sequence handle has ``len``, ``[i]`` and ``last()``. ``==`` and
``!=`` compare whole values. ``Block.put`` writes a whole value (reading every part of it
first, as TLA+'s primed assignments do), ``Block.append`` and ``Block.truncate`` change a
sequence, ``Block.choose`` picks a value inside an action (TLA+ ``\\E x \\in S`` in an
action's body: one successor per choice).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from hwcheck.spec.lang import (
    BOOL,
    INT,
    Const,
    Expr,
    Read,
    SpecError,
    Var,
    conj,
    count,
    disj,
    exists,
    forall,
    ite,
    lift,
    max_,
    min_,
    show,
)

if TYPE_CHECKING:
    from hwcheck.spec.lang import Block, Spec, Value

# An index into a leaf's inner dimensions: each an int (a static slot) or an expression
Index: TypeAlias = "tuple[Value, ...]"
# how a handle reads a leaf: (its path, its index) -> the read
Getter: TypeAlias = "Callable[[tuple[str, ...], Index], Expr]"
# A typed value in an expression (a handle): an expression for a scalar, else a ``Composite``.
# Which one depends on the type, a value known when the spec is built, so a handle's readers
# (``RecVal``'s fields, a sequence's items) give ``Any``.
Handle: TypeAlias = Any

# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """One stored part of a type: its path of field names, its inner dimensions, its domain,
    and the value it holds when unused (absent optional, slot past a sequence's length)."""

    path: tuple[str, ...]
    dims: tuple[int, ...]
    lo: int
    hi: int
    sort: str
    default: int


class Type:
    """A state type: how a value is stored (its leaves) and read (its handle)."""

    def leaves(self) -> list[Leaf]:
        raise NotImplementedError

    def handle(self, get: Getter) -> Handle:
        """The value whose leaf ``path`` at inner index ``idx`` is ``get(path, idx)``."""
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class Int(Type):
    lo: int
    hi: int

    def leaves(self) -> list[Leaf]:
        if self.lo > self.hi:
            raise SpecError(f"Int({self.lo}, {self.hi}) is empty")
        return [Leaf((), (), self.lo, self.hi, INT, max(self.lo, min(self.hi, 0)))]

    def handle(self, get: Getter) -> Expr:
        return get((), ())


@dataclass(frozen=True, eq=False)
class Bool(Type):
    def leaves(self) -> list[Leaf]:
        return [Leaf((), (), 0, 1, BOOL, 0)]

    def handle(self, get: Getter) -> Expr:
        return get((), ())


@dataclass(frozen=True, eq=False)
class EnumValue(Const):
    """A member of an enum: the constant of its index, shown by its name."""

    enum: Enum | None = None
    label: str = ""


class Enum(Type):
    """A finite set of named values, stored as their index: ``Role = Enum("Leader",
    "Follower")``; ``Role.Leader`` is a constant, ``Role.names`` the names in order."""

    def __init__(self, *names: str):
        if not names or len(set(names)) != len(names):
            raise SpecError(f"an enum needs distinct names, got {names!r}")
        self.names = tuple(names)
        for i, n in enumerate(names):
            if not n.isidentifier() or n in ("names", "leaves", "handle", "value"):
                raise SpecError(f"enum name {n!r} is not usable as an attribute")
            setattr(self, n, EnumValue(i, self, n))

    def value(self, name: str) -> EnumValue:
        if name not in self.names:
            raise SpecError(f"{name!r} is not one of {', '.join(self.names)}")
        v: EnumValue = getattr(self, name)
        return v

    def leaves(self) -> list[Leaf]:
        return [Leaf((), (), 0, len(self.names) - 1, INT, 0)]

    def handle(self, get: Getter) -> Expr:
        return get((), ())


@dataclass(frozen=True, eq=False)
class Opt(Type):
    """An optional value. Of a scalar (Int or Enum): one cell holding ``none`` (one below the
    scalar's domain) when absent. Of a record: a ``some`` flag and the record's fields, which
    hold their defaults when absent."""

    of: Type

    @property
    def none(self) -> Const:
        """The absent value of an optional scalar."""
        if not _scalar_type(self.of):
            raise SpecError("only an optional scalar has a none constant; test an optional "
                            "record with is_some()")
        return Const(self.of.leaves()[0].lo - 1)

    def leaves(self) -> list[Leaf]:
        if _scalar_type(self.of):
            [leaf] = self.of.leaves()
            return [Leaf((), (), leaf.lo - 1, leaf.hi, INT, leaf.lo - 1)]
        return [Leaf(("some",), (), 0, 1, BOOL, 0)] + [
            Leaf(("value",) + x.path, x.dims, x.lo, x.hi, x.sort, x.default)
            for x in self.of.leaves()]

    def handle(self, get: Getter) -> Expr | OptVal:
        if _scalar_type(self.of):
            return get((), ())
        return OptVal(self, get(("some",), ()),
                      self.of.handle(lambda p, i: get(("value",) + p, i)))


class Record(Type):
    """A record of named fields, in the order given: ``Record(hw=Int(0, 3), isr=SetOf(3))``.
    Calling it builds a record value: ``QState(leader=r, epoch=e + 1, isr=isr.remove(r))``."""

    def __init__(self, **fields: Type):
        if not fields:
            raise SpecError("a record needs at least one field")
        for name, t in fields.items():
            if not isinstance(t, Type):
                raise SpecError(f"field {name}: {show(t)} is not a type")
        self.fields = dict(fields)

    def leaves(self) -> list[Leaf]:
        return [Leaf((name,) + x.path, x.dims, x.lo, x.hi, x.sort, x.default)
                for name, t in self.fields.items() for x in t.leaves()]

    def handle(self, get: Getter) -> RecVal:
        def field_of(name: str) -> Getter:
            return lambda p, i: get((name,) + p, i)

        return RecVal(self, {name: t.handle(field_of(name)) for name, t in self.fields.items()})

    def __call__(self, **values: Handle) -> RecVal:
        missing = [n for n in self.fields if n not in values]
        extra = [n for n in values if n not in self.fields]
        if missing or extra:
            raise SpecError(f"record value: missing {missing}, unknown {extra}")
        return RecVal(self, {n: _coerce(self.fields[n], values[n]) for n in self.fields})


@dataclass(frozen=True, eq=False)
class SetOf(Type):
    """A subset of ``0..n-1``: one boolean per possible member."""

    n: int

    def leaves(self) -> list[Leaf]:
        return [Leaf((), (self.n,), 0, 1, BOOL, 0)]

    def handle(self, get: Getter) -> SetVal:
        return SetVal(self.n, lambda i: get((), (i,)))


@dataclass(frozen=True, eq=False)
class Seq(Type):
    """A sequence of at most ``cap`` items of type ``of``: its length and ``cap`` slots."""

    of: Type
    cap: int

    def leaves(self) -> list[Leaf]:
        if self.cap < 1:
            raise SpecError(f"a sequence needs a capacity of at least 1, got {self.cap}")
        return [Leaf(("len",), (), 0, self.cap, INT, 0)] + [
            Leaf(("items",) + x.path, (self.cap,) + x.dims, x.lo, x.hi, x.sort, x.default)
            for x in self.of.leaves()]

    def handle(self, get: Getter) -> SeqVal:
        return SeqVal(self, get(("len",), ()),
                      lambda k: self.of.handle(lambda p, i: get(("items",) + p, (k,) + i)))


def _scalar_type(t: Type) -> bool:
    return isinstance(t, (Int, Bool, Enum))


# --------------------------------------------------------------------------------------------
# Handles: typed values in expressions
# --------------------------------------------------------------------------------------------


class Composite:
    """A handle of a structured value; ``==``/``!=`` compare whole values."""

    def parts(self) -> Iterator[Expr]:
        """Every stored part, in leaf order (what equality and assignment walk)."""
        raise NotImplementedError

    def __eq__(self, other: Handle) -> Expr:  # type: ignore[override]
        mine, theirs = list(self.parts()), list(_parts(other))
        if len(mine) != len(theirs):
            raise SpecError("comparing values of different types")
        return conj(*(a == b for a, b in zip(mine, theirs))) if mine else lift(True)

    def __ne__(self, other: Handle) -> Expr:  # type: ignore[override]
        equal: Expr = self == other
        return ~equal

    def __bool__(self) -> bool:
        raise SpecError("a value has no Python truth value; compare it or use its methods")

    __hash__ = object.__hash__


class RecVal(Composite):
    def __init__(self, rtype: Record, fields: dict[str, Any]):
        self._type = rtype
        self._fields = fields

    def __getattr__(self, name: str) -> Handle:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._fields[name]
        except KeyError:
            raise SpecError(f"the record has no field {name!r} (fields: "
                            f"{', '.join(self._fields)})") from None

    def replace(self, **values: Handle) -> RecVal:
        """The same record with some fields changed (TLA+ ``[r EXCEPT !.f = v]``)."""
        fields = dict(self._fields)
        for n, v in values.items():
            if n not in fields:
                raise SpecError(f"the record has no field {n!r}")
            fields[n] = _coerce(self._type.fields[n], v)
        return RecVal(self._type, fields)

    def parts(self) -> Iterator[Expr]:
        for v in self._fields.values():
            yield from _parts(v)


class OptVal(Composite):
    def __init__(self, otype: Opt, some: Expr, value: Any):
        self._type, self._some, self.value = otype, some, value

    def is_some(self) -> Expr:
        return self._some == True  # noqa: E712 (an expression, not a Python comparison)

    def is_none(self) -> Expr:
        return self._some == False  # noqa: E712

    def parts(self) -> Iterator[Expr]:
        yield self._some
        yield from _parts(self.value)


class SetVal(Composite):
    """A subset of ``0..n-1`` given by its membership test."""

    def __init__(self, n: int, member: Callable[[Any], Expr]):
        self.n = n
        self._member = member

    def has(self, i: Value) -> Expr:
        """Whether ``i`` (an int or an expression) is a member."""
        if isinstance(i, int) and not isinstance(i, bool):
            if not 0 <= i < self.n:
                return lift(False)
            return lift(self._member(i))
        return lift(self._member(lift(i)))

    def _static(self, k: int) -> Expr:
        return lift(self._member(k))

    def add(self, j: Value) -> SetVal:
        return SetVal(self.n, lambda i: _at(self, i) | _eq(i, j))

    def remove(self, j: Value) -> SetVal:
        return SetVal(self.n, lambda i: _at(self, i) & ~_eq(i, j))

    def __or__(self, other: SetVal) -> SetVal:
        return SetVal(self.n, lambda i: _at(self, i) | _at(other, i))

    def __and__(self, other: SetVal) -> SetVal:
        return SetVal(self.n, lambda i: _at(self, i) & _at(other, i))

    def __sub__(self, other: SetVal) -> SetVal:
        return SetVal(self.n, lambda i: _at(self, i) & ~_at(other, i))

    def size(self) -> Expr:
        return count(self.n, lambda i: self.has(i))

    def is_empty(self) -> Expr:
        return forall(self.n, lambda i: ~self.has(i))

    def subset_of(self, other: SetVal) -> Expr:
        return forall(self.n, lambda i: ~self.has(i) | other.has(i))

    def forall(self, body: Callable[[Any], Expr]) -> Expr:
        """``\\A i \\in s : body(i)``."""
        return forall(self.n, lambda i: ~self.has(i) | lift(body(i)))

    def exists(self, body: Callable[[Any], Expr]) -> Expr:
        """``\\E i \\in s : body(i)``."""
        return exists(self.n, lambda i: self.has(i) & lift(body(i)))

    def parts(self) -> Iterator[Expr]:
        for k in range(self.n):
            yield self._static(k)


def set_of(n: int, *members: Value) -> SetVal:
    """The subset of ``0..n-1`` holding ``members`` (ints or expressions)."""
    return SetVal(n, lambda i: disj(lift(False), *(_eq(i, m) for m in members)))


def full_set(n: int) -> SetVal:
    return SetVal(n, lambda i: lift(True))


class SeqVal(Composite):
    def __init__(self, stype: Seq, length: Expr, item: Callable[[Any], Any]):
        self._type, self.len, self._item = stype, length, item

    @property
    def cap(self) -> int:
        return self._type.cap

    def __getitem__(self, k: Value) -> Handle:
        """The item at position ``k`` (from 0; an int or an expression)."""
        return self._item(lift(k) if not isinstance(k, int) else k)

    def last(self) -> Handle:
        return self[self.len - 1]

    def parts(self) -> Iterator[Expr]:
        yield self.len
        for k in range(self._type.cap):
            yield from _parts(self._item(k))


def _eq(i: Value, j: Value) -> Expr:
    if isinstance(i, int) and isinstance(j, int):
        return lift(i == j)
    return lift(i) == lift(j)


def _at(s: SetVal, i: Value) -> Expr:
    return s.has(i) if not isinstance(i, int) else s._static(i)


def _parts(v: Handle) -> Iterator[Expr]:
    if isinstance(v, Composite):
        yield from v.parts()
    else:
        yield lift(v)


def _coerce(t: Type, v: Handle) -> Handle:
    """A value given for a field of type ``t``, checked for its shape."""
    if isinstance(t, SetOf):
        if not isinstance(v, SetVal) or v.n != t.n:
            raise SpecError(f"expected a set of 0..{t.n - 1}")
        return v
    if isinstance(t, (Record, Seq)) and not isinstance(v, Composite):
        raise SpecError(f"expected a {type(t).__name__.lower()} value, got {show(v)}")
    if isinstance(t, Opt) and not _scalar_type(t.of) and not isinstance(v, OptVal):
        raise SpecError(f"expected an optional record value, got {show(v)}")
    return v if isinstance(v, Composite) else lift(v)


def some(t: Opt, value: Handle) -> OptVal:
    """The optional record ``t`` holding ``value``."""
    return OptVal(t, lift(True), _coerce(t.of, value))


def none_of(t: Opt) -> OptVal:
    """The absent optional record ``t``: its fields at their defaults (the canonical form)."""
    defaults = iter(x.default for x in t.of.leaves() for _ in range(_cells(x.dims)))
    return OptVal(t, lift(False), _rebuild(t.of, defaults))


def _cells(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _rebuild(t: Type, values: Iterator[int]) -> Handle:
    """A constant value of type ``t`` from its parts in leaf order."""
    leaves = t.leaves()
    flat: dict[tuple[str, ...], list[Expr]] = {x.path: [] for x in leaves}
    for x in leaves:
        for _ in range(_cells(x.dims)):
            flat[x.path].append(lift(bool(next(values)) if x.sort == BOOL else next(values)))

    def get(path: tuple[str, ...], idx: Index) -> Expr:
        x = next(leaf for leaf in leaves if leaf.path == path)
        pos = 0
        for i, d in zip(idx, x.dims):
            if not isinstance(i, int):
                raise SpecError("a constant value is indexed by constants only")
            pos = pos * d + i
        return flat[path][pos]

    return t.handle(get)


# --------------------------------------------------------------------------------------------
# Declaring typed variables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class TypedVar:
    """A variable of a structured type: its name, outer dimensions, type and the core
    variables holding its leaves (in leaf order)."""

    name: str
    over: tuple[int, ...]
    type: Type
    leaves: tuple[tuple[Leaf, Var], ...]

    def at(self, idx: Index) -> Handle:
        """The handle of the value at outer index ``idx``."""
        by_path = {leaf.path: var for leaf, var in self.leaves}
        return self.type.handle(lambda path, inner: Read(
            by_path[path], tuple(lift(i) for i in tuple(idx) + tuple(inner))))

    def __getitem__(self, index: Value | Index) -> Handle:
        idx = index if isinstance(index, tuple) else (index,)
        if len(idx) != len(self.over):
            raise SpecError(f"{self.name} takes {len(self.over)} indices, got {len(idx)}")
        return self.at(idx)


def stored_vars(v: Handle) -> list[str]:
    """The names of the core variables a handle over a variable reads."""
    return sorted({c.var.name for c in targets(v)})


def leaf_name(name: str, path: tuple[str, ...]) -> str:
    return ".".join((name,) + path)


def declare(spec: Spec, name: str, t: Type, over: tuple[int, ...] = (), doc: str = "") -> Handle:
    """Declare ``name`` of type ``t`` over dimensions ``over`` in ``spec``; return its handle
    (a ``TypedVar`` to index when ``over`` is not empty)."""
    if not isinstance(t, Type):
        raise SpecError(f"variable {name}: {show(t)} is not a type")
    pairs = []
    for leaf in t.leaves():
        shape = tuple(over) + leaf.dims
        kind = "scalar" if not shape else "set" if (leaf.sort == BOOL and not over
                                                      and len(leaf.dims) == 1) else "map"
        var = Var(leaf_name(name, leaf.path), shape, leaf.lo, leaf.hi, leaf.sort, kind, doc,
                  leaf.default)
        spec._declare(var)
        pairs.append((leaf, var))
    tv = TypedVar(name, tuple(over), t, tuple(pairs))
    spec.typed.append(tv)
    return tv if over else tv.at(())


# --------------------------------------------------------------------------------------------
# Writing typed values (Block.put, Block.append, Block.truncate)
# --------------------------------------------------------------------------------------------


def targets(v: Handle) -> list[Read]:
    """The stored cells of a handle over a variable, in leaf order."""
    out = []
    for p in _parts(v):
        if not isinstance(p, Read):
            raise SpecError("can only write to a variable's value, not to a computed one")
        out.append(p)
    return out


def put(b: Block, target: Handle, value: Handle) -> None:
    """``target := value`` for a whole typed value; every part of ``value`` is read before any
    part of ``target`` is written (TLA+: primed values are functions of the old state)."""
    cells = targets(target)
    saved = _saved(b, value)
    if len(cells) != len(saved):
        raise SpecError(f"{b.owner}: writing a value of another type")
    for c, p in zip(cells, saved):
        b.set(c, p)


def _saved(b: Block, value: Handle) -> list[Expr]:
    """The parts of ``value``, each not a constant read into a local of the action."""
    return [p if isinstance(p, Const) else b.let("v", p) for p in _parts(value)]


def append(b: Block, seq: SeqVal, value: Handle) -> None:
    """Append ``value`` to ``seq``. Past its capacity the length leaves its domain: a domain
    error of ``<name>.len``, reported as a finding."""
    saved = _saved(b, value)  # the value is read before the length changes
    n = b.let("n", seq.len)
    b.set(seq.len, n + 1)
    with b.when(n < seq.cap):
        # n < cap here: clamped, the slot's index needs no check of its own at run time
        cells = targets(seq[b.let("k", min_(n, seq.cap - 1))])
        if len(cells) != len(saved):
            raise SpecError(f"{b.owner}: appending a value of another type")
        for c, p in zip(cells, saved):
            b.set(c, p)


def truncate(b: Block, seq: SeqVal, k: Value) -> None:
    """Keep the first ``k`` items of ``seq`` (``k`` at most its length); the slots past them
    go back to their defaults, so that equal sequences stay equal rows."""
    kk = b.let("k", lift(k))
    defaults = [x.default for x in seq._type.of.leaves() for _ in range(_cells(x.dims))]
    for slot in range(seq.cap):
        for cell, d in zip(targets(seq[slot]), defaults):
            b.set(cell, ite(slot < kk, cell, lift(bool(d)) if cell.sort == BOOL else d))
    b.set(seq.len, kk)


# --------------------------------------------------------------------------------------------
# Sets and bags of structured values: sorted slots
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Slots(Type):
    """Up to ``cap`` distinct values of type ``of`` (each with a ``count`` when ``max_count``
    is not None: a bag), stored in slots sorted by value; the slots past ``used`` hold their
    defaults. So a set or bag is one row whatever the order its members came in. Use it
    through ``ValueSet`` and ``Bag``."""

    of: Type
    cap: int
    max_count: int | None = None

    def leaves(self) -> list[Leaf]:
        if self.cap < 1:
            raise SpecError(f"a set or bag needs a capacity of at least 1, got {self.cap}")
        out = [Leaf(("used",), (), 0, self.cap, INT, 0)]
        out += [Leaf(("items",) + x.path, (self.cap,) + x.dims, x.lo, x.hi, x.sort, x.default)
                for x in self.of.leaves()]
        if self.max_count is not None:
            out.append(Leaf(("count",), (self.cap,), 0, self.max_count, INT, 0))
        return out

    def handle(self, get: Getter) -> SlotsVal:
        count = None if self.max_count is None else (lambda k: get(("count",), (k,)))
        return SlotsVal(self, get(("used",), ()),
                        lambda k: self.of.handle(lambda p, i: get(("items",) + p, (k,) + i)),
                        count)


def ValueSet(of: Type, cap: int) -> Slots:  # noqa: N802 (a type constructor)
    """A set of at most ``cap`` values of type ``of`` (records, say: a set of messages)."""
    return Slots(of, cap)


def Bag(of: Type, cap: int, max_count: int = 3) -> Slots:  # noqa: N802
    """A bag of values of type ``of``: at most ``cap`` distinct ones, each with a count of
    deliveries left (0..``max_count``). A value sent stays in the bag at count 0 once
    delivered, as a TLA+ function from messages to counts keeps its domain."""
    return Slots(of, cap, max_count)


class SlotsVal(Composite):
    def __init__(self, stype: Slots, used: Expr, item: Callable[[Any], Any],
                 count: Callable[[Any], Expr] | None):
        self._type, self.used, self._item, self._count = stype, used, item, count

    @property
    def cap(self) -> int:
        return self._type.cap

    def item(self, k: Value) -> Handle:
        """The value in slot ``k`` (meaningful for ``k < used``)."""
        return self._item(lift(k) if not isinstance(k, int) else k)

    def count(self, k: Value) -> Expr:
        """A bag's count of the value in slot ``k``."""
        if self._count is None:
            raise SpecError("a set has no counts (a bag has)")
        return self._count(lift(k) if not isinstance(k, int) else k)

    def present(self, k: Value) -> Expr:
        """Whether slot ``k`` holds a value (of a bag: also one not yet delivered)."""
        live = lift(k) < self.used
        return live if self._count is None else live & (self.count(k) > 0)

    def has(self, value: Handle) -> Expr:
        """Whether ``value`` is a member (of a bag: with a count above 0)."""
        return disj(lift(False), *(self.present(k) & (self.item(k) == value)
                                   for k in range(self.cap)))

    def known(self, value: Handle) -> Expr:
        """Whether ``value`` is in the slots at all (a bag's value delivered to count 0 is)."""
        return disj(lift(False), *((k < self.used) & (self.item(k) == value)
                                   for k in range(self.cap)))

    def size(self) -> Expr:
        return count(self.cap, lambda k: self.present(k))

    def forall(self, body: Callable[[Any], Expr]) -> Expr:
        """Every member satisfies ``body(member)``."""
        return conj(*(~self.present(k) | lift(body(self.item(k))) for k in range(self.cap)))

    def exists(self, body: Callable[[Any], Expr]) -> Expr:
        return disj(lift(False), *(self.present(k) & lift(body(self.item(k)))
                                   for k in range(self.cap)))

    def parts(self) -> Iterator[Expr]:
        yield self.used
        for k in range(self.cap):
            yield from _parts(self._item(k))
        if self._count is not None:
            for k in range(self.cap):
                yield self._count(k)


def _ints(parts: Sequence[Expr]) -> list[Expr]:
    return [ite(x, 1, 0) if x.sort == BOOL else x for x in parts]


def _less(a: Sequence[Expr], b: Sequence[Expr]) -> Expr:
    """``a < b`` in the lexicographic order of their parts (booleans as 0 < 1)."""
    out: Expr = lift(False)
    for x, y in reversed(list(zip(_ints(a), _ints(b)))):
        out = (x < y) | ((x == y) & out)
    return out


def _key(parts: Sequence[Expr], bounds: list[tuple[int, int]]) -> Expr | None:
    """The mixed-radix number of ``parts`` (each inside its ``(lo, hi)`` bounds, the first
    the most significant): ordered as the parts are lexicographically. None where the domains
    multiply to 2**62 or more."""
    size = 1
    for lo, hi in bounds:
        size *= hi - lo + 1
    if size >= 2 ** 62:
        return None
    out: Expr = lift(0)
    weight = 1
    for p, (lo, hi) in reversed(list(zip(_ints(parts), bounds))):
        out = (p - lo) * weight + out if weight != 1 else p - lo + out
        weight *= hi - lo + 1
    return out


def insert(b: Block, s: SlotsVal, value: Handle, count: int = 1) -> None:
    """Add ``value`` to the set or bag ``s``: a set keeps a member it has; a bag adds ``count``
    to the value's count (past ``max_count``: a domain error of ``<name>.count``). A new value
    takes its place in the sorted slots (the later ones move up); past the capacity, a domain
    error of ``<name>.used``, reported as a finding."""
    parts = _saved(b, value)
    used = b.let("used", s.used)
    cap = s.cap
    olds = [targets(s.item(k)) for k in range(cap)]
    # where it is, if it is there; else how many members sort below it
    at = b.let("at", lift(-1))
    for j in range(cap):
        with b.when((j < used) & conj(*(c == p for c, p in zip(olds[j], parts)))):
            b.assign(at, j)
    if s._count is not None:
        with b.when(at >= 0):
            k = b.let("k", max_(at, 0))  # clamped: the index needs no check
            b.set(s.count(k), s.count(k) + count)
    with b.when(at < 0):
        # how many members sort below it: by mixed-radix keys where they fit in an int (one
        # comparison, where the lexicographic one nests as deep as the parts are many)
        bounds = [(x.lo, x.hi) for x in s._type.of.leaves() for _ in range(_cells(x.dims))]
        key = _key(parts, bounds)
        if key is None:
            below = count_of(cap, lambda k: (k < used) & _less(olds[k], parts))
        else:
            vkey = b.let("key", key)

            def slot_key(k: int) -> Expr:
                old = _key(olds[k], bounds)
                assert old is not None  # the value's bounds, whose key fits
                return old

            below = count_of(cap, lambda k: (k < used) & (slot_key(k) < vkey))
        b.set(s.used, used + 1)  # past the capacity: the finding (so below < cap from here)
        pos = b.let("pos", min_(below, cap - 1))
        # the members from pos up move one slot up, from the top down (each slot reads the
        # one below, unmoved): a loop, so the code does not grow with the capacity
        if cap > 1:
            with b.each(cap - 1, "slot") as i:
                k = b.let("k", (cap - 1) - i)  # cap - 1 down to 1
                with b.when((k > pos) & (k <= used)):
                    for c, src in zip(targets(s.item(k)), targets(s.item(k - 1))):
                        b.set(c, src)
                    if s._count is not None:
                        b.set(s.count(k), s.count(k - 1))
        for c, p in zip(targets(s.item(pos)), parts):
            b.set(c, p)
        if s._count is not None:
            b.set(s.count(pos), lift(count))


def count_of(n: int, cond: Callable[[int], Expr]) -> Expr:
    """How many of the static ``k in 0..n-1`` satisfy ``cond(k)``."""
    out: Expr = lift(0)
    for k in range(n):
        out = out + ite(cond(k), 1, 0)
    return out


def remove(b: Block, s: SlotsVal, k: Value) -> None:
    """Remove the value in slot ``k`` (``k < used``: a receive's parameter) from the set or bag
    ``s``: the slots above move down and the last one goes back to its defaults."""
    kk = b.let("k", lift(k))
    used = b.let("used", s.used)
    cap = s.cap
    olds = [targets(s.item(j)) for j in range(cap)]
    defaults = [x.default for x in s._type.of.leaves() for _ in range(_cells(x.dims))]
    for j in range(cap):  # from the bottom: each slot reads the one above, unmoved
        above = olds[j + 1] if j + 1 < cap else None
        for q, c in enumerate(olds[j]):
            d = lift(bool(defaults[q])) if c.sort == BOOL else lift(defaults[q])
            nxt = above[q] if above is not None else d
            b.set(c, ite(j < kk, c, ite(j + 1 < used, nxt, d)))
        if s._count is not None:
            cnt = s.count(j)
            nxt_cnt = s.count(j + 1) if j + 1 < cap else lift(0)
            b.set(cnt, ite(j < kk, cnt, ite(j + 1 < used, nxt_cnt, 0)))
    b.set(s.used, used - 1)


def deliver(b: Block, s: SlotsVal, k: Value) -> None:
    """One delivery of the bag's value in slot ``k``: its count goes down by one (the value
    stays, at count 0 once delivered as often as it was sent)."""
    if s._count is None:
        raise SpecError(f"{b.owner}: deliver() is for a bag; remove() a set's member")
    b.set(s.count(k), s.count(k) - 1)


def holds_slots(t: Type) -> bool:
    """Whether a value of type ``t`` keeps a set or bag in sorted slots anywhere inside."""
    if isinstance(t, Slots):
        return True
    if isinstance(t, Record):
        return any(holds_slots(f) for f in t.fields.values())
    if isinstance(t, (Opt, Seq)):
        return holds_slots(t.of)
    return False
