"""The standard modules as native operator tables.

Naturals, Integers, Sequences, FiniteSets, Bags and TLC, and the CommunityModules operators the
Kafka specifications use (FiniteSetsExt, SequencesExt, Functions), written in Python rather than
read from their TLA+ sources, as TLC overrides them in Java. A module extends another's table
(Integers has Naturals'); `TABLES` maps a module name to its operators. An operator whose
argument is itself an operator (``SelectSeq(s, Test)``) receives a Python callable.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from .syntax import Pos, fail
from .values import (
    INT,
    NAT,
    Fcn,
    SeqSet,
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


TLC = {b.name: b for b in [
    Builtin("TLCGet", 1, _tlc_get),
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
}
