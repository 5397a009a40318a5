"""Traces as ITF JSON (the Informal Trace Format that Apalache and Quint read and write).

Values follow the TLA+ model: a scalar is a JSON number, a set is ``{"#set": [...]}``, a
function over an index range is ``{"#map": [[key, value], ...]}``. ``#meta`` carries the
protocol (a source ``hwcheck --spec`` understands) and its parameters, the engine, the property
and the action taken into each state. Traces from other tools may lack all of that but the
states.
"""

from __future__ import annotations

import json
from pathlib import Path

from hwcheck.spec.lang import Spec

from hwcheck.checker.traces.trace import Trace, TraceError

FORMAT = "ITF"
FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"


def _encode(var, value):
    if var.kind == "scalar":
        return value
    if var.kind == "set":
        return {"#set": list(value)}
    return _map(value)


def _map(value):
    if isinstance(value, list):
        return {"#map": [[i, _map(v)] for i, v in enumerate(value)]}
    return value


def _decode(var, value, where: str):
    if var.kind == "scalar":
        if isinstance(value, dict) and "#bigint" in value:
            return int(value["#bigint"])
        if not isinstance(value, int):
            raise TraceError(f"{where}: {var.name} should be an integer, got {value!r}")
        return value
    if var.kind == "set":
        if not isinstance(value, dict) or "#set" not in value:
            raise TraceError(f"{where}: {var.name} should be a #set")
        return sorted(_decode_int(x, where, var.name) for x in value["#set"])
    return _unmap(value, where, var.name)


def _decode_int(x, where: str, name: str) -> int:
    if isinstance(x, dict) and "#bigint" in x:
        return int(x["#bigint"])
    if not isinstance(x, int):
        raise TraceError(f"{where}: {name} holds a non-integer {x!r}")
    return x


def _unmap(value, where: str, name: str):
    if isinstance(value, dict) and "#map" in value:
        pairs = sorted((_decode_int(k, where, name), v) for k, v in value["#map"])
        return [_unmap(v, where, name) for _, v in pairs]
    return _decode_int(value, where, name)


def to_itf(spec: Spec, trace: Trace) -> dict:
    names = [v.name for v in spec.variables]
    states = []
    for i, st in enumerate(trace.states):
        meta = {"index": i}
        if i:
            meta["action"] = trace.actions[i - 1]
        item = {"#meta": meta}
        item.update({v.name: _encode(v, st[v.name]) for v in spec.variables})
        states.append(item)
    meta = {
        "format": FORMAT,
        "format-description": FORMAT_DESCRIPTION,
        "source": "hwcheck",
        "spec": trace.spec,
        "protocol": spec.source or None,
        "params": trace.params,
        "engine": trace.engine,
        "property": trace.property,
        "kind": trace.kind,
        "length": trace.length,
    }
    meta.update(trace.meta)
    return {"#meta": meta, "vars": names, "states": states}


def dumps(spec: Spec, trace: Trace) -> str:
    return json.dumps(to_itf(spec, trace), indent=1, sort_keys=False) + "\n"


def read(path: Path) -> dict:
    """The parsed file; raises TraceError for a missing or malformed file."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise TraceError(f"no such trace file: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TraceError(f"cannot read {path}: {e}") from None
    except json.JSONDecodeError as e:
        raise TraceError(f"{path} is not JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("states"), list) \
            or not isinstance(data.get("#meta", {}), dict):
        raise TraceError(f"{path} is not an ITF trace (needs a list of states)")
    return data


def from_itf(spec: Spec, data: dict, where: str = "trace", prop: str | None = None) -> Trace:
    """The trace in ``data`` over ``spec``'s variables. ``actions`` is None when no state names
    the action that led to it (a trace from another tool); ``prop`` names the property when
    ``#meta`` does not."""
    meta = data.get("#meta") or {}
    states, actions = [], []
    for i, item in enumerate(data["states"]):
        if not isinstance(item, dict):
            raise TraceError(f"{where}: state {i} is not an object")
        missing = [v.name for v in spec.variables if v.name not in item]
        if missing:
            raise TraceError(f"{where}: state {i} lacks {', '.join(missing)}")
        states.append({v.name: _decode(v, item[v.name], f"{where} state {i}")
                       for v in spec.variables})
        if i:
            act = (item.get("#meta") or {}).get("action")
            actions.append(act)
    if not states:
        raise TraceError(f"{where}: the trace has no states")
    if all(a is None for a in actions):
        actions = None
    elif not all(isinstance(a, str) for a in actions):
        i = next(i for i, a in enumerate(actions, 1) if not isinstance(a, str))
        raise TraceError(f"{where}: state {i} has no #meta.action")
    extra = {k: v for k, v in meta.items() if k not in (
        "format", "format-description", "source", "spec", "protocol", "params", "engine",
        "property", "kind", "length")}
    return Trace(meta.get("spec", spec.name), dict(spec.params), meta.get("engine", "?"),
                 meta.get("property", prop), meta.get("kind", "invariant"), actions, states,
                 extra)
