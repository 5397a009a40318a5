"""Traces as ITF JSON (the Informal Trace Format that Apalache and Quint read and write).

Values follow the TLA+ model: a scalar is a JSON number, a set is ``{"#set": [...]}``, a
function over an index range is ``{"#map": [[key, value], ...]}``; a variable of a structured
type is one value (records as objects, sequences as lists, optional values as tagged variants,
enum members by name: ``values.py``). ``#meta`` carries the
protocol (a source ``hwcheck --spec`` understands; for a user's spec file or module also
``protocol-sha256``, the digest of its source file) and its parameters, the engine, the property
and the action taken into each state. Traces from other tools may lack all of that but the
states.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hwcheck.checker import protocols
from hwcheck.checker.traces.trace import KINDS as GROUPS
from hwcheck.checker.traces.trace import Trace, TraceError
from hwcheck.checker.traces.values import ValueError_, absorb, present, shown_names
from hwcheck.spec.lang import Spec, Var

FORMAT = "ITF"
FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
DIGEST = "protocol-sha256"  # #meta: the sha256 of a user's spec file the trace was written from


def _encode(var: Var, value: Any) -> Any:
    if var.kind == "scalar":
        return value
    if var.kind == "set":
        return {"#set": list(value)}
    return _map(value)


def _map(value: Any) -> Any:
    if isinstance(value, list):
        return {"#map": [[i, _map(v)] for i, v in enumerate(value)]}
    return value


MAX_BIGINT_DIGITS = 40  # far past any cell type; a longer number is not a state of a spec


def _decode(var: Var, value: Any, where: str) -> Any:
    """The value of ``var`` as the layout's readable form, checked against the declaration:
    an integer inside the domain, a set of indices inside the shape, a map whose keys are
    exactly the indices of each dimension. A TraceError names the state, variable and key."""
    name = var.name
    if var.kind == "scalar":
        return _in_domain(var, _integer(value, where, name), where, name)
    if var.kind == "set":
        if not isinstance(value, dict) or set(value) != {"#set"} \
                or not isinstance(value["#set"], list):
            raise TraceError(f"{where}: {name} should be {{\"#set\": [...]}}")
        members = [_integer(x, where, name) for x in value["#set"]]
        n = var.shape[0]
        for x in members:
            if not 0 <= x < n:
                raise TraceError(f"{where}: {name} has member {x}, outside 0..{n - 1}")
        if len(set(members)) != len(members):
            raise TraceError(f"{where}: {name} lists a member twice")
        return sorted(members)
    return _unmap(var, value, var.shape, where, name)


def _integer(x: Any, where: str, name: str) -> int:
    if isinstance(x, dict):
        if set(x) != {"#bigint"} or not isinstance(x["#bigint"], str):
            raise TraceError(f"{where}: {name} holds {_short(x)}, not an integer")
        digits = x["#bigint"]
        body = digits[1:] if digits[:1] == "-" else digits
        if not body.isdigit() or not body.isascii() or len(body) > MAX_BIGINT_DIGITS:
            raise TraceError(f"{where}: {name} holds the #bigint {_short(digits)}, not an "
                             "integer of any domain")
        return int(digits)
    if isinstance(x, bool) or not isinstance(x, int):
        raise TraceError(f"{where}: {name} holds {_short(x)}, not an integer")
    return x


def _in_domain(var: Var, x: int, where: str, name: str) -> int:
    if not var.lo <= x <= var.hi:
        raise TraceError(f"{where}: {name} is {x}, outside its domain {var.lo}..{var.hi}")
    return x


def _unmap(var: Var, value: Any, shape: tuple[int, ...], where: str, name: str) -> Any:
    if not shape:
        return _in_domain(var, _integer(value, where, name), where, name)
    if not isinstance(value, dict) or set(value) != {"#map"} or not isinstance(value["#map"],
                                                                              list):
        raise TraceError(f"{where}: {name} should be {{\"#map\": [[key, value], ...]}}")
    out: dict[int, object] = {}
    for pair in value["#map"]:
        if not isinstance(pair, list) or len(pair) != 2:
            raise TraceError(f"{where}: {name} has a #map entry that is not a [key, value] "
                             f"pair: {_short(pair)}")
        k = _integer(pair[0], where, name)
        if not 0 <= k < shape[0]:
            raise TraceError(f"{where}: {name} has key {k}, outside 0..{shape[0] - 1}")
        if k in out:
            raise TraceError(f"{where}: {name} has key {k} twice")
        out[k] = _unmap(var, pair[1], shape[1:], f"{where}", f"{name}[{k}]")
    missing = [k for k in range(shape[0]) if k not in out]
    if missing:
        raise TraceError(f"{where}: {name} lacks key {missing[0]}")
    return [out[k] for k in range(shape[0])]


def _short(x: object) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def to_itf(spec: Spec, trace: Trace) -> dict[str, Any]:
    names = shown_names(spec)
    states = []
    for i, st in enumerate(trace.states):
        meta: dict[str, object] = {"index": i}
        if i and trace.actions is not None:
            meta["action"] = trace.actions[i - 1]
        item = {"#meta": meta}
        if spec.typed:  # typed variables as values (records as objects, ...), the rest as is
            shown = present(spec, st)
            raw = {v.name: v for v in spec.variables}
            item.update({n: _encode(raw[n], shown[n]) if n in raw else shown[n]
                         for n in names})
        else:
            item.update({v.name: _encode(v, st[v.name]) for v in spec.variables})
        states.append(item)
    meta = {
        "format": FORMAT,
        "format-description": FORMAT_DESCRIPTION,
        "source": "hwcheck",
        "spec": trace.spec,
        "protocol": spec.source or None,
    }
    digest = protocols.source_digest(spec.source)
    if digest is not None:  # a user's spec: which version of its file wrote the trace
        meta[DIGEST] = digest
    meta.update({
        "params": trace.params,
        "engine": trace.engine,
        "property": trace.property,
        "kind": trace.kind,
        "length": trace.length,
    })
    meta.update(trace.meta)
    return {"#meta": meta, "vars": names, "states": states}


def dumps(spec: Spec, trace: Trace) -> str:
    return json.dumps(to_itf(spec, trace), indent=1, sort_keys=False) + "\n"


def read(path: Path) -> dict[str, Any]:
    """The parsed file; raises TraceError for a missing or malformed file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TraceError(f"no such trace file: {path}") from None
    except IsADirectoryError:
        raise TraceError(f"{path} is a folder, not a trace file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError(f"cannot read {path}: {e}") from None
    except json.JSONDecodeError as e:
        raise TraceError(f"{path} is not JSON: {e.msg} at line {e.lineno}") from None
    except RecursionError:
        raise TraceError(f"{path} nests too deeply to be a trace") from None
    except ValueError as e:  # e.g. an integer of too many digits
        raise TraceError(f"{path} is not a trace: {str(e).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("states"), list) \
            or not isinstance(data.get("#meta", {}), dict):
        raise TraceError(f"{path} is not an ITF trace (needs a list of states)")
    return data


KINDS = ("invariant", "action", "reachable", "domain", "liveness")


def _declared_kind(spec: Spec, name: str | None) -> str:
    """The kind ``spec`` declares the property ``name`` as (``invariant`` when it has none of
    that name: replay then says so)."""
    for kind, group in GROUPS.items():
        if any(p.name == name for p in getattr(spec, group)):
            return kind
    return "invariant"


def from_itf(spec: Spec, data: dict[str, Any], where: str = "trace",
             prop: str | None = None) -> Trace:
    """The trace in ``data`` over ``spec``'s variables, every part that means something checked
    against the spec: the variables (no more, no fewer), each value in its domain, the keys of
    each map, the spec's name, the property's name and kind, the recorded length. ``actions`` is
    None when no state names the action that led to it (a trace from another tool); ``prop``
    names the property when ``#meta`` does not."""
    meta = data.get("#meta") or {}
    shown = shown_names(spec)
    names = set(shown)
    if "vars" in data and (not isinstance(data["vars"], list) or set(map(str, data["vars"]))
                           != names or len(data["vars"]) != len(names)):
        raise TraceError(f"{where}: vars {_short(data['vars'])} are not the variables of "
                         f"{spec.name} ({', '.join(shown)})")
    if "spec" in meta and meta["spec"] != spec.name:
        raise TraceError(f"{where}: the trace is of spec {_short(meta['spec'])}, not "
                         f"{spec.name}")
    name = meta["property"] if meta.get("property") is not None else prop
    if name is not None and not isinstance(name, str):
        raise TraceError(f"{where}: #meta.property {_short(name)} is not a name")
    # without #meta.kind, the kind the spec declares the property as (an invariant if none)
    kind = meta["kind"] if "kind" in meta else _declared_kind(spec, name)
    if kind not in KINDS:
        raise TraceError(f"{where}: #meta.kind {_short(kind)} is not one of {', '.join(KINDS)}")
    states, actions = [], []
    for i, item in enumerate(data["states"]):
        if not isinstance(item, dict):
            raise TraceError(f"{where}: state {i} is not an object")
        missing = [n for n in shown if n not in item]
        if missing:
            raise TraceError(f"{where}: state {i} lacks {', '.join(missing)}")
        extra = sorted(k for k in item if k not in names and k != "#meta")
        if extra:
            raise TraceError(f"{where}: state {i} has {_short(extra[0])}, which is not a "
                             f"variable of {spec.name}")
        if spec.typed:
            try:
                states.append(absorb(spec, item, f"{where} state {i}", _decode))
            except ValueError_ as e:
                raise TraceError(str(e)) from None
        else:
            states.append({v.name: _decode(v, item[v.name], f"{where} state {i}")
                           for v in spec.variables})
        smeta = item.get("#meta", {})
        if not isinstance(smeta, dict):
            raise TraceError(f"{where}: state {i} has a #meta that is not an object")
        if i:
            actions.append(smeta.get("action"))
    if not states:
        raise TraceError(f"{where}: the trace has no states")
    labels: list[str] | None = None
    if not all(a is None for a in actions):
        if not all(isinstance(a, str) for a in actions):
            i = next(i for i, a in enumerate(actions, 1) if not isinstance(a, str))
            raise TraceError(f"{where}: state {i} has no #meta.action")
        labels = [a for a in actions if isinstance(a, str)]  # every one is
    rest = {k: v for k, v in meta.items() if k not in (
        "format", "format-description", "source", "spec", "protocol", DIGEST, "params",
        "engine", "property", "kind", "length")}
    engine = meta.get("engine", "?")
    trace = Trace(spec.name, dict(spec.params), engine if isinstance(engine, str) else "?",
                  name, kind, labels, states, rest)
    if "length" in meta and meta["length"] != trace.length:
        raise TraceError(f"{where}: #meta.length says {_short(meta['length'])} steps, the "
                         f"trace has {trace.length}")
    return trace
