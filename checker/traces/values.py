"""Typed variables as values: what a trace shows of a variable declared with a structured type
(``spec/types.py``), and the way back.

A trace's states hold the core variables (the leaves of each typed variable, as
``Layout.to_dict`` reads them). What a user reads, and what ITF carries, is each typed
variable as one value, in the conventions of Apalache and Quint: a record is a JSON object, a
set ``{"#set": [...]}``, a sequence a list, a function over an index range (a typed variable's
own dimensions, a bag's counts) ``{"#map": [[key, value], ...]}``, an optional value the
variant ``{"tag": "Some", "value": v}`` or ``{"tag": "None", "value": {}}``, an enum member its
name. ``present`` makes those values; ``absorb`` reads them back into the core variables,
checking every part (and putting a set's or a bag's members into their canonical order, so a
trace from another tool may list them in any order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hwcheck.spec.lang import Spec, Var
from hwcheck.spec.types import (
    Bool,
    Enum,
    Int,
    Opt,
    Record,
    Seq,
    SetOf,
    Slots,
    Type,
    TypedVar,
    _scalar_type,
)

LeafPath = tuple[str, ...]  # a leaf's path in its type (``Leaf.path``)
Get = Callable[[LeafPath, tuple[int, ...]], Any]  # a leaf's cell at an index: get(path, inner)
Put = Callable[[LeafPath, tuple[int, ...], Any], None]  # put(path, inner, cell)


class ValueError_(ValueError):
    """A value that is not of its variable's type; the message names the variable and part."""


def typed_of(spec: Spec) -> dict[str, TypedVar]:
    """The core variable names of each typed variable, mapped to it."""
    return {v.name: t for t in getattr(spec, "typed", []) for _, v in t.leaves}


def shown_names(spec: Spec) -> list[str]:
    """The variables a user sees, in declaration order: each typed variable once (where its
    first leaf is), every other variable as itself."""
    owner = typed_of(spec)
    out: list[str] = []
    for v in spec.variables:
        name = owner[v.name].name if v.name in owner else v.name
        if name not in out:
            out.append(name)
    return out


def _flat(var: Var, readable: Any) -> list[int]:
    """A core variable's cells, row-major, from its readable form (``Layout.to_dict``)."""
    if var.kind == "scalar":
        return [int(readable)]
    if var.kind == "set":
        members = set(readable)
        return [1 if i in members else 0 for i in range(var.shape[0])]
    out: list[int] = []

    def walk(x: Any) -> None:
        if isinstance(x, list):
            for y in x:
                walk(y)
        else:
            out.append(int(x))

    walk(readable)
    return out


def _pos(dims: tuple[int, ...], idx: tuple[int, ...]) -> int:
    p = 0
    for i, d in zip(idx, dims):
        p = p * d + i
    return p


# -- present --------------------------------------------------------------------------------


def present(spec: Spec, state: dict[str, Any]) -> dict[str, Any]:
    """The state as the user sees it: typed variables as values (ITF JSON), the others as
    they are."""
    owner = typed_of(spec)
    out: dict[str, Any] = {}
    for v in spec.variables:
        if v.name not in owner:
            out[v.name] = state[v.name]
            continue
        tv = owner[v.name]
        if tv.name in out:
            continue
        cells = {leaf.path: (_flat(var, state[var.name]), var.shape)
                 for leaf, var in tv.leaves}
        out[tv.name] = _over(tv, cells, ())
    return out


def _over(tv: TypedVar, cells: dict[LeafPath, tuple[list[Any], tuple[int, ...]]],
          outer: tuple[int, ...]) -> Any:
    depth = len(outer)
    if depth == len(tv.over):
        def get(path: LeafPath, inner: tuple[int, ...]) -> Any:
            flat, shape = cells[path]
            return flat[_pos(shape, outer + tuple(inner))]

        return _value(tv.type, get)
    return {"#map": [[i, _over(tv, cells, outer + (i,))] for i in range(tv.over[depth])]}


def _value(t: Type, get: Get) -> Any:
    if isinstance(t, Bool):
        return bool(get((), ()))
    if isinstance(t, Enum):
        return t.names[get((), ())]
    if isinstance(t, Int):
        return get((), ())
    if isinstance(t, Opt):
        if _scalar_type(t.of):
            v = get((), ())
            if v == t.of.leaves()[0].lo - 1:
                return {"tag": "None", "value": {}}
            return {"tag": "Some", "value": _value(t.of, get)}
        if not get(("some",), ()):
            return {"tag": "None", "value": {}}
        return {"tag": "Some", "value": _value(t.of, lambda p, i: get(("value",) + p, i))}
    if isinstance(t, Record):
        # mypy cannot infer a lambda with a default argument (each binds its own field)
        return {n: _value(ft, lambda p, i, n=n: get((n,) + p, i))  # type: ignore[misc]
                for n, ft in t.fields.items()}
    if isinstance(t, SetOf):
        return {"#set": [i for i in range(t.n) if get((), (i,))]}
    if isinstance(t, Seq):
        return [_value(t.of, lambda p, i, k=k: get(("items",) + p,  # type: ignore[misc]
                                                   (k,) + tuple(i)))
                for k in range(get(("len",), ()))]
    if isinstance(t, Slots):
        items = [_value(t.of, lambda p, i, k=k: get(("items",) + p,  # type: ignore[misc]
                                                    (k,) + tuple(i)))
                 for k in range(get(("used",), ()))]
        if t.max_count is None:
            return {"#set": items}
        return {"#map": [[m, get(("count",), (k,))] for k, m in enumerate(items)]}
    raise TypeError(f"unknown type {type(t).__name__}")


# -- absorb ---------------------------------------------------------------------------------


def absorb(spec: Spec, values: dict[str, Any], where: str,
           decode: Callable[[Var, Any, str], Any]) -> dict[str, Any]:
    """The core variables' readable forms from a state as the user sees it. ``decode(var,
    value, where)`` reads a variable that is not typed (ITF's own reading). Raises
    ValueError_ naming the state, the variable and the part at fault."""
    owner = typed_of(spec)
    out: dict[str, Any] = {}
    for v in spec.variables:
        if v.name not in owner:
            out[v.name] = decode(v, values[v.name], where)
            continue
        tv = owner[v.name]
        if tv.leaves[0][1].name != v.name:
            continue
        flats = {leaf.path: [None] * var.size for leaf, var in tv.leaves}
        shapes = {leaf.path: var.shape for leaf, var in tv.leaves}
        _read_over(tv, values[tv.name], (), flats, shapes, f"{where}: {tv.name}")
        for leaf, var in tv.leaves:
            flat = flats[leaf.path]
            out[var.name] = _readable(var, flat)
    return out


def _readable(var: Var, flat: list[Any]) -> Any:
    if var.kind == "scalar":
        return flat[0]
    if var.kind == "set":
        return [i for i, x in enumerate(flat) if x]

    def nest(xs: list[Any], shape: tuple[int, ...]) -> Any:
        if len(shape) == 1:
            return list(xs)
        step = len(xs) // shape[0]
        return [nest(xs[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]

    return nest(flat, var.shape)


def _read_over(tv: TypedVar, value: Any, outer: tuple[int, ...], flats: dict[LeafPath, list[Any]],
               shapes: dict[LeafPath, tuple[int, ...]],
               where: str) -> None:
    depth = len(outer)
    if depth == len(tv.over):
        def put(path: LeafPath, inner: tuple[int, ...], x: Any) -> None:
            flats[path][_pos(shapes[path], outer + tuple(inner))] = x

        _read(tv.type, value, put, where)
        return
    entries = _map_entries(value, where)
    n = tv.over[depth]
    keys = [_int(k, where) for k, _ in entries]
    if sorted(keys) != list(range(n)):
        raise ValueError_(f"{where}: the keys should be 0..{n - 1}, got {sorted(keys)}")
    for k, v in entries:
        _read_over(tv, v, outer + (int(k),), flats, shapes, f"{where}[{k}]")


def _map_entries(value: Any, where: str) -> list[list[Any]]:
    if not isinstance(value, dict) or set(value) != {"#map"} or not isinstance(value["#map"],
                                                                              list):
        raise ValueError_(f"{where} should be {{\"#map\": [[key, value], ...]}}")
    for pair in value["#map"]:
        if not isinstance(pair, list) or len(pair) != 2:
            raise ValueError_(f"{where} has a #map entry that is not a [key, value] pair")
    return value["#map"]


def _int(x: Any, where: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError_(f"{where} holds {x!r}, not an integer")
    return x


def _in(x: int, lo: int, hi: int, where: str) -> int:
    if not lo <= x <= hi:
        raise ValueError_(f"{where} is {x}, outside {lo}..{hi}")
    return x


def _read(t: Type, value: Any, put: Put, where: str) -> None:
    """Write ``value`` of type ``t`` into the leaves through ``put(path, inner, cell)``."""
    if isinstance(t, Bool):
        if not isinstance(value, bool):
            raise ValueError_(f"{where} holds {value!r}, not a boolean")
        put((), (), int(value))
    elif isinstance(t, Enum):
        if value not in t.names:
            raise ValueError_(f"{where} holds {value!r}, not one of {', '.join(t.names)}")
        put((), (), t.names.index(value))
    elif isinstance(t, Int):
        put((), (), _in(_int(value, where), t.lo, t.hi, where))
    elif isinstance(t, Opt):
        tag = value.get("tag") if isinstance(value, dict) else None
        if tag not in ("Some", "None") or set(value) != {"tag", "value"}:
            raise ValueError_(f"{where} should be {{\"tag\": \"Some\" or \"None\", "
                              "\"value\": ...}")
        if _scalar_type(t.of):
            if tag == "None":
                put((), (), t.of.leaves()[0].lo - 1)
            else:
                _read(t.of, value["value"], put, f"{where}.value")
            return
        put(("some",), (), int(tag == "Some"))

        def inner(p: LeafPath, i: tuple[int, ...], x: Any) -> None:
            put(("value",) + p, i, x)

        if tag == "Some":
            _read(t.of, value["value"], inner, f"{where}.value")
        else:
            _defaults(t.of, inner)
    elif isinstance(t, Record):
        if not isinstance(value, dict) or set(value) != set(t.fields):
            raise ValueError_(f"{where} should be a record with fields "
                              f"{', '.join(t.fields)}")
        for n, ft in t.fields.items():
            _read(ft, value[n], lambda p, i, x, n=n: put((n,) + p, i, x),  # type: ignore[misc]
                  f"{where}.{n}")
    elif isinstance(t, SetOf):
        members = _set_members(value, where)
        ints = [_in(_int(m, where), 0, t.n - 1, where) for m in members]
        if len(set(ints)) != len(ints):
            raise ValueError_(f"{where} lists a member twice")
        for i in range(t.n):
            put((), (i,), int(i in ints))
    elif isinstance(t, Seq):
        if not isinstance(value, list) or len(value) > t.cap:
            raise ValueError_(f"{where} should be a list of at most {t.cap} items")
        put(("len",), (), len(value))
        for k in range(t.cap):
            def slot(p: LeafPath, i: tuple[int, ...], x: Any, k: int = k) -> None:
                put(("items",) + p, (k,) + tuple(i), x)

            if k < len(value):
                _read(t.of, value[k], slot, f"{where}[{k}]")
            else:
                _defaults(t.of, slot)
    elif isinstance(t, Slots):
        _read_slots(t, value, put, where)
    else:
        raise TypeError(f"unknown type {type(t).__name__}")


def _set_members(value: Any, where: str) -> list[Any]:
    if not isinstance(value, dict) or set(value) != {"#set"} or not isinstance(value["#set"],
                                                                              list):
        raise ValueError_(f"{where} should be {{\"#set\": [...]}}")
    return value["#set"]


def _defaults(t: Type, put: Put) -> None:
    for leaf in t.leaves():
        for flat in range(_cells(leaf.dims)):
            put(leaf.path, _unflat(leaf.dims, flat), leaf.default)


def _cells(dims: tuple[int, ...]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _unflat(dims: tuple[int, ...], p: int) -> tuple[int, ...]:
    out = []
    for d in reversed(dims):
        out.append(p % d)
        p //= d
    return tuple(reversed(out))


def _read_slots(t: Slots, value: Any, put: Put, where: str) -> None:
    if t.max_count is None:
        items = [(m, None) for m in _set_members(value, where)]
    else:
        items = [(m, c) for m, c in _map_entries(value, where)]
    if len(items) > t.cap:
        raise ValueError_(f"{where} holds {len(items)} values, more than its capacity {t.cap}")
    leaves = t.of.leaves()
    parsed = []
    for j, (m, c) in enumerate(items):
        cells: dict[LeafPath, list[Any]] = {leaf.path: [0] * _cells(leaf.dims) for leaf in leaves}
        dims = {leaf.path: leaf.dims for leaf in leaves}

        def keep(p: LeafPath, i: tuple[int, ...], x: Any,
                 cells: dict[LeafPath, list[Any]] = cells,
                 dims: dict[LeafPath, tuple[int, ...]] = dims) -> None:
            cells[p][_pos(dims[p], tuple(i))] = x

        _read(t.of, m, keep, f"{where} member {j}")
        key = tuple(x for leaf in leaves for x in cells[leaf.path])
        count = None if c is None else _in(_int(c, where), 0, t.max_count, f"{where} count")
        parsed.append((key, cells, count))
    parsed.sort(key=lambda e: e[0])  # the canonical order: by value, as the kernel keeps it
    if len({k for k, _, _ in parsed}) != len(parsed):
        raise ValueError_(f"{where} lists a value twice")
    put(("used",), (), len(parsed))
    for k in range(t.cap):
        for leaf in leaves:
            for flat in range(_cells(leaf.dims)):
                x = parsed[k][1][leaf.path][flat] if k < len(parsed) else leaf.default
                put(("items",) + leaf.path, (k,) + _unflat(leaf.dims, flat), x)
        if t.max_count is not None:
            put(("count",), (k,), parsed[k][2] if k < len(parsed) else 0)


# -- showing ----------------------------------------------------------------------------------


def show(v: Any) -> str:
    """A presented value in TLA+'s notation: records ``[a |-> 1]``, sets ``{1, 2}``, sequences
    ``<<1, 2>>``, functions ``(0 :> a @@ 1 :> b)``, variants ``Some(x)``/``None``."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        if set(v) == {"#set"}:
            return "{" + ", ".join(show(x) for x in v["#set"]) + "}"
        if set(v) == {"#map"}:
            return "(" + " @@ ".join(f"{show(k)} :> {show(x)}" for k, x in v["#map"]) + ")" \
                if v["#map"] else "<<>>"
        if set(v) == {"tag", "value"} and v["tag"] in ("Some", "None"):
            return "None" if v["tag"] == "None" else f"Some({show(v['value'])})"
        return "[" + ", ".join(f"{k} |-> {show(x)}" for k, x in v.items()) + "]"
    if isinstance(v, list):
        return "<<" + ", ".join(show(x) for x in v) + ">>"
    return str(v)

