"""The standard modules as native operator tables.

Naturals, Integers, Sequences, FiniteSets, Bags and TLC, TLC's Randomization and TLCExt, and
CommunityModules (FiniteSetsExt, SequencesExt, Functions, BagsExt, Folds, IOUtils, ...), written
in Python rather than read from their TLA+ sources, as TLC overrides them in Java. A module
extends another's table (Integers has Naturals'); `TABLES` maps a module name to its operators.
An operator whose argument is itself an operator (``SelectSeq(s, Test)``) receives a Python
callable. An operator hwcheck does not give a meaning (it writes a file, runs a command, asks
TLC's search for a path) is in its module's table as a refusal: one line naming it where it is
evaluated, nothing where it is not.

Random choices (Randomization, TLC's ``RandomElement``) come from one generator, seeded with
`RANDOM_SEED` when a module is loaded (`reseed`): a run gives the same values every time.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Callable
from dataclasses import dataclass

from .syntax import Pos, fail
from .values import (
    INT,
    NAT,
    Fcn,
    FcnSet,
    ModelValue,
    ProductSet,
    RecordSet,
    SeqSet,
    SubsetSet,
    Value,
    as_frozen,
    is_set,
    kind,
    show,
    sorted_values,
    tup,
)


@dataclass(frozen=True)
class Builtin:
    """A standard operator: ``fn(pos, *args)`` over evaluated arguments; the positions in
    ``op_args`` take an operator (a callable over values) instead of a value."""

    name: str
    arity: int
    fn: Callable[..., Value]
    op_args: tuple[int, ...] = ()
    # its value may differ between two evaluations (a random choice): never kept as a
    # constant expression's value or an operator's memo
    varies: bool = False


def _refused(name: str, arity: int, why: str) -> Builtin:
    """An operator hwcheck gives no meaning: an error naming it where it is evaluated."""
    def run(pos: Pos, *args: Value) -> Value:
        raise fail(pos, f"unsupported operator {name}: {why}")
    return Builtin(name, arity, run)


def _int(v: Value, pos: Pos, op: str) -> int:
    if type(v) is not int:
        raise fail(pos, f"{op} applied to {kind(v)} ({show(v)}), not an integer")
    return v


def _seq(v: Value, pos: Pos, op: str) -> list[Value]:
    if isinstance(v, Fcn) and v.is_seq():
        return v.seq()
    if v == frozenset():
        return []  # the empty function is also the empty sequence
    raise fail(pos, f"{op} applied to {kind(v)} ({show(v)}), not a sequence")


def _set(v: Value, pos: Pos, op: str) -> frozenset[Value]:
    if not is_set(v):
        raise fail(pos, f"{op} applied to {kind(v)} ({show(v)}), not a set")
    if not getattr(v, "finite", True):
        raise fail(pos, f"{op} applied to the infinite set {show(v)}")
    return as_frozen(v)


def _arith(op: str, f: Callable[[int, int], int]) -> Builtin:
    def run(pos: Pos, a: Value, b: Value) -> Value:
        return f(_int(a, pos, op), _int(b, pos, op))
    return Builtin(op, 2, run)


def _cmp(op: str, f: Callable[[int, int], bool]) -> Builtin:
    def run(pos: Pos, a: Value, b: Value) -> Value:
        return f(_int(a, pos, op), _int(b, pos, op))
    return Builtin(op, 2, run)


def _div(pos: Pos, a: Value, b: Value) -> Value:
    if _int(b, pos, "\\div") == 0:
        raise fail(pos, "division by zero")
    return _int(a, pos, "\\div") // b


def _mod(pos: Pos, a: Value, b: Value) -> Value:
    if _int(b, pos, "%") <= 0:
        raise fail(pos, f"% by {b}: the divisor must be positive")
    return _int(a, pos, "%") % b


def _pow(pos: Pos, a: Value, b: Value) -> Value:
    if _int(b, pos, "^") < 0:
        raise fail(pos, "^ with a negative exponent")
    return _int(a, pos, "^") ** b


def _range(pos: Pos, a: Value, b: Value) -> Value:
    return frozenset(range(_int(a, pos, ".."), _int(b, pos, "..") + 1))


NATURALS = {b.name: b for b in [
    _arith("+", lambda a, b: a + b), _arith("-", lambda a, b: a - b),
    _arith("*", lambda a, b: a * b),
    _cmp("<", lambda a, b: a < b), _cmp(">", lambda a, b: a > b),
    _cmp("<=", lambda a, b: a <= b), _cmp(">=", lambda a, b: a >= b),
    Builtin("\\div", 2, _div), Builtin("%", 2, _mod), Builtin("^", 2, _pow),
    Builtin("..", 2, _range), Builtin("Nat", 0, lambda pos: NAT),
]}
INTEGERS = {**NATURALS, "Int": Builtin("Int", 0, lambda pos: INT),
            "-.": Builtin("-.", 1, lambda pos, a: -_int(a, pos, "-"))}


def _sub_seq(pos: Pos, s: Value, m: Value, n: Value) -> Value:
    items = _seq(s, pos, "SubSeq")
    m, n = _int(m, pos, "SubSeq"), _int(n, pos, "SubSeq")
    if m > n:
        return tup(())
    if m < 1 or n > len(items):
        raise fail(pos, f"SubSeq({show(s)}, {m}, {n}): out of range")
    return tup(items[m - 1:n])


def _head(pos: Pos, s: Value) -> Value:
    items = _seq(s, pos, "Head")
    if not items:
        raise fail(pos, "Head of the empty sequence")
    return items[0]


def _tail(pos: Pos, s: Value) -> Value:
    items = _seq(s, pos, "Tail")
    if not items:
        raise fail(pos, "Tail of the empty sequence")
    return tup(items[1:])


SEQUENCES = {b.name: b for b in [
    Builtin("Seq", 1, lambda pos, s: SeqSet(s)),
    Builtin("Len", 1, lambda pos, s: len(_seq(s, pos, "Len"))),
    Builtin("\\o", 2, lambda pos, s, t: tup(_seq(s, pos, "\\o") + _seq(t, pos, "\\o"))),
    Builtin("Append", 2, lambda pos, s, e: tup([*_seq(s, pos, "Append"), e])),
    Builtin("Head", 1, _head), Builtin("Tail", 1, _tail), Builtin("SubSeq", 3, _sub_seq),
    Builtin("SelectSeq", 2, lambda pos, s, test: tup(
        [x for x in _seq(s, pos, "SelectSeq") if test(x) is True]), op_args=(1,)),
]}


def _cardinality(pos: Pos, s: Value) -> Value:
    return len(_set(s, pos, "Cardinality"))


FINITE_SETS = {b.name: b for b in [
    Builtin("Cardinality", 1, _cardinality),
    Builtin("IsFiniteSet", 1, lambda pos, s: bool(getattr(s, "finite", True))),
]}


# Bags: a bag is a function from its elements to their (positive) counts.
def _bag(v: Value, pos: Pos, op: str) -> dict[Value, int]:
    if isinstance(v, Fcn):
        return v.map
    if v == frozenset():
        return {}
    raise fail(pos, f"{op} applied to {kind(v)} ({show(v)}), not a bag")


def _bag_plus(pos: Pos, a: Value, b: Value) -> Value:
    out = dict(_bag(a, pos, "(+)"))
    for k, n in _bag(b, pos, "(+)").items():
        out[k] = out.get(k, 0) + n
    return Fcn(out)


def _bag_minus(pos: Pos, a: Value, b: Value) -> Value:
    out = dict(_bag(a, pos, "(-)"))
    for k, n in _bag(b, pos, "(-)").items():
        if k in out:
            out[k] -= n
            if out[k] <= 0:
                del out[k]
    return Fcn(out)


BAGS = {b.name: b for b in [
    Builtin("EmptyBag", 0, lambda pos: Fcn({})),
    Builtin("SetToBag", 1, lambda pos, s: Fcn({x: 1 for x in _set(s, pos, "SetToBag")})),
    Builtin("BagToSet", 1, lambda pos, b: frozenset(_bag(b, pos, "BagToSet"))),
    Builtin("BagIn", 2, lambda pos, e, b: e in _bag(b, pos, "BagIn")),
    Builtin("CopiesIn", 2, lambda pos, e, b: _bag(b, pos, "CopiesIn").get(e, 0)),
    Builtin("(+)", 2, _bag_plus), Builtin("(-)", 2, _bag_minus),
    Builtin("BagCardinality", 1, lambda pos, b: sum(_bag(b, pos, "BagCardinality").values())),
    Builtin("\\sqsubseteq", 2, lambda pos, a, b: all(
        n <= _bag(b, pos, "\\sqsubseteq").get(k, 0) for k, n in _bag(a, pos, "\\sqsubseteq")
        .items())),
    Builtin("BagUnion", 1, lambda pos, s: _bag_union(pos, s)),
]}


def _bag_union(pos: Pos, s: Value) -> Value:
    out: Value = Fcn({})
    for b in sorted_values(_set(s, pos, "BagUnion")):
        out = _bag_plus(pos, out, b)
    return out


def _map_to(pos: Pos, a: Value, b: Value) -> Value:
    return Fcn({a: b})


def _compose(pos: Pos, f: Value, g: Value) -> Value:
    if not isinstance(f, Fcn) or not isinstance(g, Fcn):
        raise fail(pos, "@@ applied to something that is not a function")
    return Fcn({**g.map, **f.map})


def _permutations(pos: Pos, s: Value) -> Value:
    items = sorted_values(_set(s, pos, "Permutations"))
    return frozenset(Fcn(dict(zip(items, p))) for p in itertools.permutations(items))


def _assert(pos: Pos, ok: Value, message: Value) -> Value:
    if ok is not True:
        raise fail(pos, f"Assert failed: {show(message)}")
    return True


def _sort_seq(pos: Pos, s: Value, less: Callable[[Value, Value], Value]) -> Value:
    import functools

    items = _seq(s, pos, "SortSeq")

    def cmp(a: Value, b: Value) -> int:
        return -1 if less(a, b) is True else (1 if less(b, a) is True else 0)
    return tup(sorted(items, key=functools.cmp_to_key(cmp)))


# TLCGet of a Java property: what hwcheck does as TLC does with that property set
_PROPERTIES = {"-Dtlc2.tool.impl.Tool.cdot": "true"}  # A \cdot B is always composed


def _tlc_get(pos: Pos, what: Value) -> Value:
    if isinstance(what, str) and what in _PROPERTIES:
        return _PROPERTIES[what]
    raise fail(pos, f"TLCGet({show(what)}): hwcheck gives no TLC statistics or registers")


RANDOM_SEED = 0
_RANDOM = random.Random(RANDOM_SEED)


def reseed(seed: int = RANDOM_SEED) -> None:
    """Starts the random choices again from ``seed`` (a module's loading does)."""
    _RANDOM.seed(seed)


def _random_element(pos: Pos, s: Value) -> Value:
    """TLC's ``RandomElement``: a member of the finite set ``s`` chosen at random (a set of
    functions, records or tuples, or ``SUBSET S``, drawn a component at a time, as TLC's
    override does, without enumerating the set)."""
    if isinstance(s, FcnSet) and s.finite:
        return Fcn({k: _random_element(pos, s.rng)
                    for k in sorted_values(_set(s.domain, pos, "RandomElement"))})
    if isinstance(s, RecordSet) and s.finite:
        return Fcn({f: _random_element(pos, v) for f, v in s.fields})
    if isinstance(s, ProductSet) and s.finite:
        return tup([_random_element(pos, f) for f in s.factors])
    if isinstance(s, SubsetSet) and getattr(s.base, "finite", True):
        return frozenset(x for x in sorted_values(_set(s.base, pos, "RandomElement"))
                         if _RANDOM.random() < 0.5)
    items = sorted_values(_set(s, pos, "RandomElement"))
    if not items:
        raise fail(pos, "RandomElement of the empty set")
    return items[_RANDOM.randrange(len(items))]


TLC = {b.name: b for b in [
    Builtin("TLCGet", 1, _tlc_get),
    Builtin("RandomElement", 1, _random_element, varies=True),
    Builtin("TLCEval", 1, lambda pos, v: v),
    _refused("TLCSet", 2, "hwcheck has no TLC registers"),
    _refused("JavaTime", 0, "a run's values do not depend on the clock"),
    _refused("Any", 0, "the set of all values cannot be evaluated"),
    Builtin(":>", 2, _map_to), Builtin("@@", 2, _compose),
    Builtin("Permutations", 1, _permutations),
    Builtin("Print", 2, lambda pos, out, v: v), Builtin("PrintT", 1, lambda pos, out: True),
    Builtin("Assert", 2, _assert), Builtin("ToString", 1, lambda pos, v: show(v)),
    Builtin("SortSeq", 2, _sort_seq, op_args=(1,)),
]}


def _fold_set(pos: Pos, op: Callable[[Value, Value], Value], base: Value, s: Value) -> Value:
    """MapThenFoldSet's order: op(x1, op(x2, ... op(xn, base))), x1 the first CHOOSE picks."""
    acc = base
    for x in reversed(sorted_values(_set(s, pos, "FoldSet"))):
        acc = op(x, acc)
    return acc


def _inverse(pos: Pos, f: Value, s: Value, t: Value) -> Value:
    """``[t \\in T |-> CHOOSE s \\in S : t \\in Range(f) => f[s] = t]`` (CHOOSE: the first in
    the value order)."""
    if not isinstance(f, Fcn):
        raise fail(pos, f"Inverse applied to {kind(f)}, not a function")
    dom = sorted_values(_set(s, pos, "Inverse"))
    rng = frozenset(f.map.values())
    out: dict[Value, Value] = {}
    for y in sorted_values(_set(t, pos, "Inverse")):
        pick = next((x for x in dom if y not in rng or (x in f.map and f.map[x] == y)), None)
        if pick is None:
            raise fail(pos, f"Inverse: CHOOSE found no value for {show(y)}")
        out[y] = pick
    return Fcn(out)


def _fold_function_on_set(pos: Pos, op: Callable[[Value, Value], Value], base: Value,
                          f: Value, indices: Value) -> Value:
    if not isinstance(f, Fcn):
        raise fail(pos, f"FoldFunctionOnSet applied to {kind(f)}, not a function")
    acc = base
    for i in reversed(sorted_values(_set(indices, pos, "FoldFunctionOnSet"))):
        if i not in f.map:
            raise fail(pos, f"FoldFunctionOnSet: {show(i)} is not in the function's domain")
        acc = op(f.map[i], acc)
    return acc


def _extreme(name: str, pick: Callable[..., Value]) -> Builtin:
    def run(pos: Pos, s: Value) -> Value:
        items = _set(s, pos, name)
        if not items:
            raise fail(pos, f"{name} of the empty set")
        return pick(_int(x, pos, name) for x in items)
    return Builtin(name, 1, run)


def _k_subset(pos: Pos, k: Value, s: Value) -> Value:
    items = sorted_values(_set(s, pos, "kSubset"))
    return frozenset(frozenset(c) for c in itertools.combinations(items, _int(k, pos, "kSubset")))


FINITE_SETS_EXT = {**FINITE_SETS, **{b.name: b for b in [
    Builtin("FoldSet", 3, _fold_set, op_args=(0,)),
    Builtin("SumSet", 1, lambda pos, s: sum(_int(x, pos, "SumSet") for x in
                                            _set(s, pos, "SumSet"))),
    _extreme("Max", max), _extreme("Min", min),
    Builtin("Quantify", 2, lambda pos, s, p: sum(1 for x in _set(s, pos, "Quantify")
                                                 if p(x) is True), op_args=(1,)),
    Builtin("kSubset", 2, _k_subset),
    Builtin("SymDiff", 2, lambda pos, a, b: _set(a, pos, "SymDiff") ^ _set(b, pos, "SymDiff")),
]}}


def _last(pos: Pos, s: Value) -> Value:
    items = _seq(s, pos, "Last")
    if not items:
        raise fail(pos, "Last of the empty sequence")
    return items[-1]


def _front(pos: Pos, s: Value) -> Value:
    items = _seq(s, pos, "Front")
    if not items:
        raise fail(pos, "Front of the empty sequence")
    return tup(items[:-1])


def _fold_left(pos: Pos, op: Callable[[Value, Value], Value], base: Value, s: Value) -> Value:
    acc = base
    for x in _seq(s, pos, "FoldLeft"):
        acc = op(acc, x)
    return acc


def _fold_right(pos: Pos, op: Callable[[Value, Value], Value], s: Value, base: Value) -> Value:
    acc = base
    for x in reversed(_seq(s, pos, "FoldRight")):
        acc = op(x, acc)
    return acc


def _remove_at(pos: Pos, s: Value, i: Value) -> Value:
    items = _seq(s, pos, "RemoveAt")
    i = _int(i, pos, "RemoveAt")
    if not 1 <= i <= len(items):
        raise fail(pos, f"RemoveAt({show(s)}, {i}): out of range")
    return tup(items[:i - 1] + items[i:])


def _insert_at(pos: Pos, s: Value, i: Value, e: Value) -> Value:
    items = _seq(s, pos, "InsertAt")
    i = _int(i, pos, "InsertAt")
    if not 1 <= i <= len(items) + 1:
        raise fail(pos, f"InsertAt({show(s)}, {i}, ...): out of range")
    return tup(items[:i - 1] + [e] + items[i - 1:])


def _range_of(pos: Pos, f: Value) -> Value:
    if not isinstance(f, Fcn):
        raise fail(pos, f"Range applied to {kind(f)}, not a function")
    return frozenset(f.map.values())


SEQUENCES_EXT = {**SEQUENCES, **{b.name: b for b in [
    Builtin("ToSet", 1, lambda pos, s: frozenset(_seq(s, pos, "ToSet"))),
    Builtin("Cons", 2, lambda pos, e, s: tup([e, *_seq(s, pos, "Cons")])),
    Builtin("Last", 1, _last), Builtin("Front", 1, _front),
    Builtin("Reverse", 1, lambda pos, s: tup(list(reversed(_seq(s, pos, "Reverse"))))),
    Builtin("IsPrefix", 2, lambda pos, s, t: _seq(t, pos, "IsPrefix")[:len(
        _seq(s, pos, "IsPrefix"))] == _seq(s, pos, "IsPrefix")),
    Builtin("Contains", 2, lambda pos, s, e: e in _seq(s, pos, "Contains")),
    Builtin("Remove", 2, lambda pos, s, e: tup([x for x in _seq(s, pos, "Remove") if x != e])),
    Builtin("RemoveAt", 2, _remove_at), Builtin("InsertAt", 3, _insert_at),
    Builtin("FoldLeft", 3, _fold_left, op_args=(0,)),
    Builtin("FoldRight", 3, _fold_right, op_args=(0,)),
    Builtin("SetToSeq", 1, lambda pos, s: tup(sorted_values(_set(s, pos, "SetToSeq")))),
    Builtin("Range", 1, _range_of),
]}}


def _restrict(pos: Pos, f: Value, s: Value) -> Value:
    if not isinstance(f, Fcn):
        raise fail(pos, f"Restrict applied to {kind(f)}, not a function")
    keep = _set(s, pos, "Restrict")
    return Fcn({k: v for k, v in f.map.items() if k in keep})


def _injective(pos: Pos, f: Value) -> Value:
    if not isinstance(f, Fcn):
        raise fail(pos, f"IsInjective applied to {kind(f)}, not a function")
    return len(set(f.map.values())) == len(f.map)


FUNCTIONS = {b.name: b for b in [
    Builtin("Range", 1, _range_of), Builtin("Restrict", 2, _restrict),
    Builtin("IsInjective", 1, _injective),
    Builtin("Inverse", 3, _inverse),
    Builtin("AntiFunction", 1, lambda pos, f: _inverse(
        pos, f, frozenset(f.map) if isinstance(f, Fcn) else f, _range_of(pos, f))),
    Builtin("FoldFunctionOnSet", 4, _fold_function_on_set, op_args=(0,)),
    Builtin("FoldFunction", 3, lambda pos, op, base, f: _fold_function_on_set(
        pos, op, base, f, frozenset(f.map) if isinstance(f, Fcn) else f), op_args=(0,)),
    Builtin("SumFunctionOnSet", 2, lambda pos, f, s: _fold_function_on_set(
        pos, lambda x, acc: _int(x, pos, "SumFunctionOnSet") + acc, 0, f, s)),
    Builtin("SumFunction", 1, lambda pos, f: _fold_function_on_set(
        pos, lambda x, acc: _int(x, pos, "SumFunction") + acc, 0, f,
        frozenset(f.map) if isinstance(f, Fcn) else f)),
]}

def _graph(pos: Pos, g: Value, op: str) -> tuple[frozenset[Value], frozenset[Value]]:
    """A graph's nodes and edges (a record ``[node |-> N, edge |-> E]``)."""
    if not (isinstance(g, Fcn) and "node" in g.map and "edge" in g.map):
        raise fail(pos, f"{op} applied to {kind(g)} ({show(g)}), not a graph "
                        "[node |-> ..., edge |-> ...]")
    return _set(g.map["node"], pos, op), _set(g.map["edge"], pos, op)


def _undirected(pos: Pos, g: Value, loop_free: bool) -> bool:
    op = "IsLoopFreeUndirectedGraph" if loop_free else "IsUndirectedGraph"
    if not (isinstance(g, Fcn) and set(g.map) == {"node", "edge"}):
        return False
    nodes, edges = _graph(pos, g, op)
    return all(isinstance(e, frozenset) and 1 <= len(e) <= 2 and e <= nodes
               and (len(e) == 2 or not loop_free) for e in edges)


def _components(pos: Pos, g: Value) -> Value:
    """The connected components (the override's union-find: an edge that is not a set of one
    or two nodes of the graph joins nothing)."""
    nodes, edges = _graph(pos, g, "ConnectedComponents")
    parent = {n: n for n in nodes}

    def find(n: Value) -> Value:
        while parent[n] != n:
            n = parent[n]
        return n

    for e in edges:
        if isinstance(e, frozenset) and 1 <= len(e) <= 2 and e <= nodes:
            a, *rest = list(e)
            parent[find(a)] = find(rest[0] if rest else a)
    comps: dict[Value, set[Value]] = {}
    for n in nodes:
        comps.setdefault(find(n), set()).add(n)
    return frozenset(frozenset(c) for c in comps.values())


def _connected_in(pos: Pos, m: Value, n: Value, g: Value) -> bool:
    nodes, _ = _graph(pos, g, "AreConnectedIn")
    if m not in nodes or n not in nodes:
        return False
    return any(m in c and n in c for c in _components(pos, g))


UNDIRECTED_GRAPHS = {b.name: b for b in [
    Builtin("IsUndirectedGraph", 1, lambda pos, g: _undirected(pos, g, False)),
    Builtin("IsLoopFreeUndirectedGraph", 1, lambda pos, g: _undirected(pos, g, True)),
    Builtin("ConnectedComponents", 1, _components),
    Builtin("IsStronglyConnected", 1, lambda pos, g: _components(pos, g) == frozenset(
        {_graph(pos, g, "IsStronglyConnected")[0]})),
    Builtin("AreConnectedIn", 3, _connected_in),
]}

def _bits(op: str, f: Callable[..., int]) -> Callable[..., Value]:
    """A Bitwise operator: defined on non-negative integers, as the module's definitions."""
    def run(pos: Pos, *xs: Value) -> Value:
        vals = [_int(x, pos, op) for x in xs]
        if any(v < 0 for v in vals):
            raise fail(pos, f"{op} of a negative integer (Bitwise is for Nat)")
        return f(*vals)
    return run


BITWISE = {b.name: b for b in [
    Builtin("&", 2, _bits("&", lambda x, y: x & y)),
    Builtin("|", 2, _bits("|", lambda x, y: x | y)),
    Builtin("^^", 2, _bits("^^", lambda x, y: x ^ y)),
    Builtin("Not", 1, _bits("Not", lambda x: ~x & ((1 << x.bit_length()) - 1))),
    Builtin("shiftR", 2, _bits("shiftR", lambda n, k: n >> k)),
]}

def _count(v: Value, pos: Pos, op: str) -> int:
    n = _int(v, pos, op)
    if n < 0:
        raise fail(pos, f"{op} of {n}: the number must not be negative")
    return n


def _random_subset(pos: Pos, k: Value, s: Value) -> Value:
    """``RandomSubset(k, S)``: a subset of ``S`` of ``k`` elements chosen at random."""
    n = _count(k, pos, "RandomSubset")
    items = sorted_values(_set(s, pos, "RandomSubset"))
    if n > len(items):
        raise fail(pos, f"RandomSubset({n}, ...): the set has only {len(items)} element(s)")
    return frozenset(_RANDOM.sample(items, n))


def _coin_subsets(pos: Pos, picks: int, p: float, s: Value, op: str) -> Value:
    """``picks`` subsets of ``S``, each element in each with probability ``p`` (TLC's
    coin-tossing draw: duplicates fall together, so the set may have fewer)."""
    items = sorted_values(_set(s, pos, op))
    if len(items) < 31 and picks > 1 << len(items):
        raise fail(pos, f"{op}({picks}, ...): more than the 2^{len(items)} subsets of the set")
    return frozenset(frozenset(x for x in items if _RANDOM.random() < p) for _ in range(picks))


def _random_set_of_subsets(pos: Pos, k: Value, n: Value, s: Value) -> Value:
    """``RandomSetOfSubsets(k, n, S)``: ``k`` random subsets of ``S``, each element in each
    with probability ``n / Cardinality(S)``."""
    picks, mean = _count(k, pos, "RandomSetOfSubsets"), _count(n, pos, "RandomSetOfSubsets")
    size = len(_set(s, pos, "RandomSetOfSubsets"))
    if mean > size:
        raise fail(pos, f"RandomSetOfSubsets(_, {mean}, S): S has only {size} element(s)")
    return _coin_subsets(pos, picks, mean / size if size else 0.0, s, "RandomSetOfSubsets")


def _random_subset_set(pos: Pos, k: Value, prob: Value, s: Value) -> Value:
    """``RandomSubsetSet(k, "p", S)``: ``k`` random subsets, each element in with probability
    ``p`` (a string, as TLC reads it)."""
    picks = _count(k, pos, "RandomSubsetSet")
    try:
        p = float(prob) if isinstance(prob, str) else -1.0
    except ValueError:
        p = -1.0
    if not 0.0 <= p <= 1.0:
        raise fail(pos, f"RandomSubsetSet(_, {show(prob)}, _): not a string giving a "
                        "probability between 0 and 1")
    return _coin_subsets(pos, picks, p, s, "RandomSubsetSet")


RANDOMIZATION = {b.name: b for b in [
    Builtin("RandomSubset", 2, _random_subset, varies=True),
    Builtin("RandomSetOfSubsets", 3, _random_set_of_subsets, varies=True),
    Builtin("RandomSubsetSet", 3, _random_subset_set, varies=True),
    # the module's own definition (TLC has no override): five draws' sizes
    Builtin("TestRandomSetOfSubsets", 3, lambda pos, k, n, s: tup(
        [len(as_frozen(_random_set_of_subsets(pos, k, n, s))) for _ in range(5)]),
        varies=True),
]}


def _pick_successor(pos: Pos, ok: Value) -> Value:
    if ok is True:
        return True
    raise fail(pos, "unsupported operator PickSuccessor: with a false condition TLC asks its "
                    "user which successor to keep, and hwcheck's search asks no one")


_NO_PATH = "hwcheck's breadth-first search gives an expression no path to its state"
TLC_EXT = {b.name: b for b in [
    # AssertEq prints the two values where they differ: hwcheck prints nothing (as PrintT)
    Builtin("AssertEq", 2, lambda pos, a, b: a == b),
    Builtin("TLCModelValue", 1, lambda pos, name: ModelValue(name) if isinstance(name, str)
            else _refuse_value(pos, "TLCModelValue", name)),
    Builtin("TLCDefer", 1, lambda pos, v: True),
    Builtin("TLCNoOp", 1, lambda pos, v: v),
    Builtin("TLCCache", 2, lambda pos, v, closure: v),
    Builtin("PickSuccessor", 1, _pick_successor),
    _refused("AssertError", 2, "it compares TLC's own error messages, which hwcheck's are not"),
    _refused("TLCGetOrDefault", 2, "hwcheck has no TLC registers"),
    _refused("TLCGetAndSet", 4, "hwcheck has no TLC registers"),
    _refused("TLCFP", 1, "TLC's fingerprints are not hwcheck's"),
    _refused("TLCEvalDefinition", 1, "hwcheck does not evaluate a definition by its name"),
    _refused("Trace", 0, _NO_PATH), _refused("CounterExample", 0, _NO_PATH),
    _refused("ToTrace", 1, _NO_PATH),
]}


def _refuse_value(pos: Pos, op: str, v: Value) -> Value:
    raise fail(pos, f"{op} applied to {kind(v)} ({show(v)}), not a string")


_WRITES = "hwcheck's checks write no file from a specification"
_READS = "hwcheck's checks read no file from a specification"
JSON = {b.name: b for b in [
    _refused("ToJson", 1, "hwcheck does not render JSON inside a specification"),
    _refused("ToJsonArray", 1, "hwcheck does not render JSON inside a specification"),
    _refused("ToJsonObject", 1, "hwcheck does not render JSON inside a specification"),
    _refused("JsonSerialize", 2, _WRITES), _refused("ndJsonSerialize", 2, _WRITES),
    _refused("JsonDeserialize", 1, _READS), _refused("ndJsonDeserialize", 1, _READS),
]}


def _atoi(pos: Pos, s: Value) -> Value:
    """IOUtils' ``atoi``: the integer a string of decimal digits writes."""
    text = s.strip() if isinstance(s, str) else None
    if text is None or not text.lstrip("+-").isdigit() or not text.isascii():
        raise fail(pos, f"atoi({show(s)}): not a string of decimal digits")
    return int(text)


_RUNS = "hwcheck never runs a command from a specification"
IOUTILS = {b.name: b for b in [
    # the environment when the module is read: a record of strings, as TLC's override gives
    Builtin("IOEnv", 0, lambda pos: Fcn(dict(os.environ))),
    Builtin("atoi", 1, _atoi),
    _refused("IOExec", 1, _RUNS), _refused("IOEnvExec", 2, _RUNS),
    _refused("IOExecTemplate", 2, _RUNS), _refused("IOEnvExecTemplate", 3, _RUNS),
    _refused("IOSerialize", 3, _WRITES), _refused("IODeserialize", 2, _READS),
    _refused("Serialize", 3, _WRITES), _refused("Deserialize", 2, _READS),
]}


def _map_then_fold(pos: Pos, op: Callable[[Value, Value], Value], base: Value,
                   f: Callable[[Value], Value], choose: Callable[[Value], Value],
                   s: frozenset[Value], name: str) -> Value:
    """Folds' ``MapThenFoldSet``: ``op(f(x1), op(f(x2), ... op(f(xn), base)))``, ``x1`` what
    ``choose`` picks from the whole set, ``x2`` from the rest, ..."""
    order = []
    rest = s
    while rest:
        x = choose(rest)
        if x not in rest:
            raise fail(pos, f"{name}: the choice {show(x)} is not in the set it chose from")
        order.append(x)
        rest = rest - {x}
    acc = base
    for x in reversed(order):
        acc = op(f(x), acc)
    return acc


FOLDS = {b.name: b for b in [
    Builtin("MapThenFoldSet", 5, lambda pos, op, base, f, choose, s: _map_then_fold(
        pos, op, base, f, choose, _set(s, pos, "MapThenFoldSet"), "MapThenFoldSet"),
        op_args=(0, 2, 3)),
]}


def _bag_add(pos: Pos, b: Value, x: Value) -> Value:
    out = dict(_bag(b, pos, "BagAdd"))
    out[x] = out.get(x, 0) + 1
    return Fcn(out)


def _bag_remove(pos: Pos, b: Value, x: Value, every: bool) -> Value:
    out = dict(_bag(b, pos, "BagRemoveAll" if every else "BagRemove"))
    if x in out:
        if every or out[x] == 1:
            del out[x]
        else:
            out[x] -= 1
    return Fcn(out)


def _map_then_fold_bag(pos: Pos, op: Callable[[Value, Value], Value], base: Value,
                       f: Callable[[Value], Value], choose: Callable[[Value], Value],
                       b: Value) -> Value:
    """BagsExt's ``MapThenFoldBag``: MapThenFoldSet over the bag's elements, an element of
    ``n`` copies handled as ``op(... op(op(base, f(x)), f(x)) ..., f(x))`` (``n`` times)."""
    counts = _bag(b, pos, "MapThenFoldBag")

    def handle(x: Value) -> Value:
        acc = base
        for _ in range(_int(counts[x], pos, "MapThenFoldBag")):
            acc = op(acc, f(x))
        return acc
    return _map_then_fold(pos, op, base, handle, choose, frozenset(counts), "MapThenFoldBag")


def _fold_bag(pos: Pos, op: Callable[[Value, Value], Value], base: Value, b: Value) -> Value:
    """``FoldBag`` as the community modules' Java override computes it (not as the module's
    definition reads): ``op(... op(op(base, x1), x1) ..., xn)``, each element as many times
    as its copies, the elements in the value order."""
    counts = _bag(b, pos, "FoldBag")
    acc = base
    for x in sorted_values(counts):
        n = counts[x]
        if type(n) is not int or n <= 0:
            raise fail(pos, f"FoldBag: {show(n)} copies of {show(x)}, not a positive integer")
        for _ in range(n):
            acc = op(acc, x)
    return acc


BAGS_EXT = {b.name: b for b in [
    Builtin("BagAdd", 2, _bag_add),
    Builtin("BagRemove", 2, lambda pos, b, x: _bag_remove(pos, b, x, False)),
    Builtin("BagRemoveAll", 2, lambda pos, b, x: _bag_remove(pos, b, x, True)),
    Builtin("MapThenFoldBag", 5, _map_then_fold_bag, op_args=(0, 2, 3)),
    Builtin("FoldBag", 3, _fold_bag, op_args=(0,)),
    Builtin("SumBag", 1, lambda pos, b: _fold_bag(
        pos, lambda x, y: _int(x, pos, "SumBag") + _int(y, pos, "SumBag"), 0, b)),
    Builtin("ProductBag", 1, lambda pos, b: _fold_bag(
        pos, lambda x, y: _int(x, pos, "ProductBag") * _int(y, pos, "ProductBag"), 1, b)),
]}

TABLES: dict[str, dict[str, Builtin]] = {
    "Naturals": NATURALS, "Integers": INTEGERS, "Sequences": SEQUENCES,
    "FiniteSets": FINITE_SETS, "Bags": BAGS, "TLC": TLC,
    # FiniteSetsExt extends Integers, FiniteSets and Functions (the community module's EXTENDS)
    "FiniteSetsExt": {**INTEGERS, **FUNCTIONS, **FINITE_SETS_EXT},
    "SequencesExt": SEQUENCES_EXT, "Functions": FUNCTIONS,
    # the proof system's libraries (TLAPS): their theorems and proof backends are for the
    # prover, which hwcheck skips as TLC does; a module extending one gets what they extend
    "TLAPS": {}, "NaturalsInduction": INTEGERS, "WellFoundedInduction": INTEGERS,
    "FunctionTheorems": FUNCTIONS, "FiniteSetTheorems": {**FINITE_SETS, **FUNCTIONS},
    "SequenceTheorems": {**SEQUENCES, **INTEGERS}, "SequencesExtTheorems": SEQUENCES_EXT,
    "FiniteSetsExtTheorems": FINITE_SETS_EXT, "BagsTheorems": BAGS,
    "UndirectedGraphs": UNDIRECTED_GRAPHS, "Bitwise": BITWISE,
    # TLC's Randomization and TLCExt, the community modules Json, IOUtils, Folds and BagsExt
    # (each instantiates the modules it uses LOCALly: a module extending it gets its own only)
    "Randomization": RANDOMIZATION, "TLCExt": TLC_EXT, "Json": JSON, "IOUtils": IOUTILS,
    "Folds": FOLDS, "BagsExt": BAGS_EXT,
}
