"""TLA+ values: hashable and canonical, with TLC's equalities.

Integers, booleans and strings are Python's ``int``, ``bool`` and ``str``; a model value is a
`ModelValue`; a finite set is a ``frozenset``; every function is an `Fcn`, so a sequence or a
tuple is the function on ``1..n`` and a record the function on its field names (``<<a, b>>``
equals ``[i \\in 1..2 |-> ...]`` and ``[x |-> 1]`` equals ``"x" :> 1``, as in TLC). Sets that
TLC keeps lazy (``Nat``, ``Int``, ``STRING``, ``Seq(S)``, and ``SUBSET S``, ``[S -> T]``,
``[a : S]`` until something enumerates them) are `LazySet`s that answer membership without
enumerating.

`key` is the canonical order (CHOOSE takes the first witness in it; printing and the search's
successor order use it), `show` prints a value as TLC does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

Value = Any  # int | bool | str | ModelValue | frozenset | Fcn | LazySet


class ModelValue:
    """A cfg's model value: equal only to itself, unequal to every other value."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelValue) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("ModelValue", self.name))

    def __repr__(self) -> str:
        return self.name


class Fcn:
    """A function with a finite domain (sequences, tuples and records included)."""

    __slots__ = ("map", "_hash", "_key")

    def __init__(self, mapping: dict[Value, Value]) -> None:
        self.map = mapping  # never changed once built: the hash and the key are kept
        self._hash: int | None = None
        self._key: tuple[Any, ...] | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fcn) and self.map == other.map

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self.map.items()))
        return self._hash

    def __repr__(self) -> str:
        return show(self)

    def is_seq(self) -> bool:
        m = self.map
        return all(i in m for i in range(1, len(m) + 1)) and not any(
            isinstance(k, bool) for k in m)

    def is_record(self) -> bool:
        return bool(self.map) and all(isinstance(k, str) for k in self.map)

    def seq(self) -> list[Value]:
        """The items of a sequence, in order (the caller checked `is_seq`)."""
        return [self.map[i] for i in range(1, len(self.map) + 1)]


def tup(items: Iterable[Value]) -> Fcn:
    """The sequence (tuple) of ``items``."""
    return Fcn(dict(enumerate(items, 1)))


def record(fields: Iterable[tuple[str, Value]]) -> Fcn:
    return Fcn(dict(fields))


class LazySet:
    """A set TLC does not enumerate until it must: membership without enumeration."""

    finite = True

    def contains(self, v: Value) -> bool:
        raise NotImplementedError

    def elements(self) -> frozenset[Value]:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def in_order(self) -> Iterator[Value]:
        """The elements in the canonical order (`key`), built one at a time where the set
        knows how (a CHOOSE or a quantifier over ``[S -> T]`` or ``SUBSET S`` stops at its
        first witness without building the others)."""
        return iter(sorted_values(self.elements()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazySet) and not (self.finite and other.finite):
            return self is other or repr(self) == repr(other)
        if isinstance(other, (LazySet, frozenset)) and self.finite:
            return self.elements() == as_frozen(other)
        return False

    def __hash__(self) -> int:
        kept: int | None = self.__dict__.get("_hash")
        if kept is None:  # a lazy set does not change: hashed once
            kept = self.__dict__["_hash"] = hash(self.elements()) if self.finite else hash(
                self.describe())
        return kept

    def __repr__(self) -> str:
        return self.describe()


def as_frozen(s: object) -> frozenset[Value]:
    return s.elements() if isinstance(s, LazySet) else s  # type: ignore[return-value]


class Infinite(LazySet):
    """``Nat``, ``Int``, ``STRING``."""

    finite = False

    def __init__(self, name: str, test: Callable[[Value], bool]) -> None:
        self.name = name
        self.test = test

    def contains(self, v: Value) -> bool:
        return self.test(v)

    def describe(self) -> str:
        return self.name


NAT = Infinite("Nat", lambda v: type(v) is int and v >= 0)
INT = Infinite("Int", lambda v: type(v) is int)
STRING = Infinite("STRING", lambda v: type(v) is str)


class SeqSet(LazySet):
    """``Seq(S)``: every finite sequence of elements of S."""

    finite = False

    def __init__(self, base: Value) -> None:
        self.base = base

    def contains(self, v: Value) -> bool:
        return isinstance(v, Fcn) and v.is_seq() and all(member(x, self.base) for x in v.seq())

    def describe(self) -> str:
        return f"Seq({show(self.base)})"


class SubsetSet(LazySet):
    def __init__(self, base: Value) -> None:
        self.base = base

    def contains(self, v: Value) -> bool:
        if isinstance(v, LazySet):
            v = v.elements()
        return isinstance(v, frozenset) and all(member(x, self.base) for x in v)

    def elements(self) -> frozenset[Value]:
        items = sorted_values(as_frozen(self.base))
        return frozenset(frozenset(c) for n in range(len(items) + 1)
                         for c in itertools.combinations(items, n))

    def in_order(self) -> Iterator[Value]:
        # `key` orders sets by their size, then their sorted elements: {}, {a}, {b}, ...,
        # {a, b}, {a, c}, ... (TLC's order of SUBSET S)
        items = sorted_values(as_frozen(self.base))
        return (frozenset(c) for n in range(len(items) + 1)
                for c in itertools.combinations(items, n))

    def describe(self) -> str:
        return f"SUBSET {show(self.base)}"


class FcnSet(LazySet):
    """``[S -> T]``."""

    def __init__(self, domain: Value, rng: Value) -> None:
        self.domain = domain
        self.rng = rng

    @property
    def finite(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.domain, "finite", True) and getattr(self.rng, "finite", True))

    def contains(self, v: Value) -> bool:
        if not isinstance(v, Fcn) or frozenset(v.map) != as_frozen(self.domain):
            return False
        return all(member(x, self.rng) for x in v.map.values())

    def elements(self) -> frozenset[Value]:
        return frozenset(self.in_order())

    def in_order(self) -> Iterator[Value]:
        # functions of one domain: `key` compares their values in the domain's order, the
        # first argument's most significant (TLC's order of [S -> T] too)
        dom = sorted_values(as_frozen(self.domain))
        rng = _in_order(self.rng)
        return (Fcn(dict(zip(dom, vs))) for vs in itertools.product(rng, repeat=len(dom)))

    def describe(self) -> str:
        return f"[{show(self.domain)} -> {show(self.rng)}]"


class RecordSet(LazySet):
    """``[a : S, b : T]``."""

    def __init__(self, fields: tuple[tuple[str, Value], ...]) -> None:
        self.fields = fields

    @property
    def finite(self) -> bool:  # type: ignore[override]
        return all(getattr(s, "finite", True) for _, s in self.fields)

    def contains(self, v: Value) -> bool:
        return (isinstance(v, Fcn) and set(v.map) == {f for f, _ in self.fields}
                and all(member(v.map[f], s) for f, s in self.fields))

    def elements(self) -> frozenset[Value]:
        return frozenset(self.in_order())

    def in_order(self) -> Iterator[Value]:
        fields = sorted(self.fields, key=lambda fs: fs[0])  # `key` reads the fields by name
        names = [f for f, _ in fields]
        sets = [_in_order(s) for _, s in fields]
        return (Fcn(dict(zip(names, vs))) for vs in itertools.product(*sets))

    def describe(self) -> str:
        return "[" + ", ".join(f"{f} : {show(s)}" for f, s in self.fields) + "]"


class ProductSet(LazySet):
    """``S \\X T`` where a factor cannot be enumerated (``f[n \\in Nat, v \\in S]``'s
    domain): membership only."""

    def __init__(self, factors: tuple[Value, ...]) -> None:
        self.factors = factors

    @property
    def finite(self) -> bool:  # type: ignore[override]
        return all(getattr(s, "finite", True) for s in self.factors)

    def contains(self, v: Value) -> bool:
        return (isinstance(v, Fcn) and v.is_seq() and len(v.map) == len(self.factors)
                and all(member(x, s) for x, s in zip(v.seq(), self.factors)))

    def elements(self) -> frozenset[Value]:
        return frozenset(self.in_order())

    def in_order(self) -> Iterator[Value]:
        return (tup(c) for c in itertools.product(*[_in_order(s) for s in self.factors]))

    def describe(self) -> str:
        return " \\X ".join(show(s) for s in self.factors)


class UnionSet(LazySet):
    """``UNION S`` where a member of S cannot be enumerated: membership only, as TLC."""

    def __init__(self, sets: frozenset[Value]) -> None:
        self.sets = sets

    @property
    def finite(self) -> bool:  # type: ignore[override]
        return all(getattr(s, "finite", True) for s in self.sets)

    def contains(self, v: Value) -> bool:
        return any(member(v, s) for s in self.sets)

    def elements(self) -> frozenset[Value]:
        return frozenset(x for s in self.sets for x in as_frozen(s))

    def describe(self) -> str:
        return "UNION " + show(self.sets)


def member(v: Value, s: Value) -> bool:
    if isinstance(s, frozenset):
        return v in s
    return s.contains(v)  # type: ignore[no-any-return]


def is_set(v: Value) -> bool:
    return isinstance(v, (frozenset, LazySet))


_RANK = {bool: 0, int: 1, str: 2, ModelValue: 3, frozenset: 4, Fcn: 5}


def key(v: Value) -> tuple[Any, ...]:
    """The canonical order of values: booleans, integers, strings, model values, sets,
    functions; each kind in its natural order, and as TLC compares them (its order of a
    CHOOSE): sets by their size, then their sorted elements; functions (tuples and records
    too) by their domain's size, then their sorted domain, then their values in its order."""
    t = type(v)
    if t is int or t is bool or t is str:
        return (_RANK[t], v)
    if t is ModelValue:
        return (3, v.name)
    if t is frozenset:
        return (4, len(v), tuple(sorted(map(key, v))))
    if t is Fcn:
        kept: tuple[Any, ...] | None = v._key
        if kept is None:
            pairs = sorted(((key(a), x) for a, x in v.map.items()), key=_first)
            kept = v._key = (5, len(pairs), tuple(a for a, _ in pairs),
                             tuple(key(x) for _, x in pairs))
        return kept
    if isinstance(v, LazySet):
        if not v.finite:
            return (6, v.describe())
        elems = v.elements()
        return (4, len(elems), tuple(sorted(map(key, elems))))
    return (7, repr(v))


def _first(pair: tuple[Any, Any]) -> Any:
    return pair[0]


def _name(v: ModelValue) -> str:
    return v.name


def sorted_values(s: Iterable[Value]) -> list[Value]:
    """``s`` in the canonical order (`key`); elements all of one kind among booleans,
    integers and strings (in their natural order, as `key` orders them) or model values (by
    name) are sorted without building keys."""
    items = list(s)
    if not items:
        return items
    t = type(items[0])
    if t is int or t is str or t is bool or t is ModelValue:
        for x in items:
            if type(x) is not t:
                break
        else:
            if t is ModelValue:
                items.sort(key=_name)
            else:
                items.sort()
            return items
    items.sort(key=key)
    return items


def show(v: Value) -> str:
    """``v`` as TLC prints it."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, ModelValue):
        return v.name
    if isinstance(v, frozenset):
        return "{" + ", ".join(show(x) for x in sorted_values(v)) + "}"
    if isinstance(v, Fcn):
        if v.is_seq():
            return "<<" + ", ".join(show(x) for x in v.seq()) + ">>"
        if v.is_record():
            return "[" + ", ".join(f"{k} |-> {show(x)}" for k, x in
                                   sorted(v.map.items())) + "]"
        return "(" + " @@ ".join(f"{show(k)} :> {show(x)}" for k, x in
                                 sorted(v.map.items(), key=lambda kv: key(kv[0]))) + ")"
    if isinstance(v, LazySet):
        return v.describe()
    return repr(v)


def kind(v: Value) -> str:
    """The kind of value, for error messages."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, ModelValue):
        return "a model value"
    if is_set(v):
        return "a set"
    if isinstance(v, Fcn):
        return "a function"
    return type(v).__name__


def _in_order(s: Value) -> list[Value]:
    """The elements of a finite set in the canonical order, as a list."""
    return list(s.in_order()) if isinstance(s, LazySet) else sorted_values(s)


def iterate(s: Value) -> Iterator[Value]:
    """The elements of a finite set in canonical order (a LazySet enumerated one at a time
    where it can be)."""
    return s.in_order() if isinstance(s, LazySet) else iter(sorted_values(s))
