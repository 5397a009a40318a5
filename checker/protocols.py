"""Where protocols come from: the registry (entry points) and user spec files and modules.

``load("kafka")`` finds a protocol registered under the entry-point group ``hwcheck.protocols``;
``load("path/to/file.py[:NAME]")`` and ``load("package.module[:NAME]")`` import a user's spec.
NAME is a ``Protocol`` or a function whose keyword arguments are the parameters and which
returns a ``Spec``; without NAME the loader takes ``PROTOCOL``, else ``build``. Every failure
(no such file, an import that raises, no such name, a spec that does not validate) is a
``SpecError`` with one line naming the source.

A ``SpecRef`` (source + parameters) is the picklable identity of a spec: another process (a
Spark executor, a resumed run) rebuilds the same spec from it.

A trace file names the protocol it was written from, but a trace is data and never chooses
code: ``registered_name`` says whether a source a trace names is a registered protocol (the
only kind a trace may name alone); any other spec is given by the user, and ``source_digest``
(the sha256 of the spec's source file, recorded in the trace) tells whether it is the one the
trace was written from.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from hwcheck.spec.lang import Spec, SpecError, located, one_line, raised_at
from hwcheck.spec.protocol import Protocol, function_protocol

GROUP = "hwcheck.protocols"
DEFAULT = "kafka"  # the registered name `hwcheck` runs when no --spec is given

_cache: dict[str, Protocol] = {}
_digests: dict[str, str] = {}  # a spec file's absolute path -> sha256 of what was imported


def registered() -> dict[str, EntryPoint]:
    """The protocols installed under the entry-point group: name -> entry point."""
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def default() -> Protocol:
    return load(DEFAULT)


def _split(source: str) -> tuple[str, str | None]:
    """(module or file, NAME or None). A Windows drive letter is not a NAME separator."""
    head, sep, name = source.rpartition(":")
    if sep and name and "/" not in name and "\\" not in name and not (len(head) == 1):
        return head, name
    return source, None


def _is_file(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target


def _import_file(path: Path) -> ModuleType:
    key = "hwcheck_user_spec_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    try:
        _digests[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        pass  # the loader says why it cannot read the file
    # As when Python runs a script: the file's folder is searched first while it is imported,
    # so a spec may import a module of its own beside it (``from consts import ...``).
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[key]
        raise
    finally:
        if added and folder in sys.path:
            sys.path.remove(folder)
    return mod


def load(source: str) -> Protocol:
    """The protocol named by ``source`` (a registered name, a file or a module, with an optional
    ``:NAME``); a SpecError in one line if it cannot be had."""
    target, name = _split(source)
    # A file is cached by its absolute path: the same relative path from another working
    # folder is another file.
    key = f"{Path(target).expanduser().resolve()}:{name}" if _is_file(target) else source
    if key in _cache:
        return _cache[key]
    if target.endswith(".tla"):
        proto = _tla_protocol(Path(target).expanduser().resolve(), source)
        _cache[key] = proto
        return proto
    reg = registered()
    if source in reg:
        proto = load(reg[source].value)
        _cache[source] = proto
        return proto
    try:
        if _is_file(target):
            path = Path(target).expanduser().resolve()
            if not path.is_file():
                raise SpecError(f"--spec {source}: no such file {target}")
            mod = _import_file(path)
            canonical = f"{path}:{name}" if name else str(path)
        else:
            mod = importlib.import_module(target)
            canonical = f"{target}:{name}" if name else target
    except SpecError:
        raise
    except ModuleNotFoundError as e:
        at = raised_at(e.__traceback__)
        raise SpecError(f"--spec {source}: cannot import {e.name!r}"
                        + (f" at {at}" if at else "")) from None
    except SyntaxError as e:
        raise SpecError(f"--spec {source}: syntax error at line {e.lineno}: {e.msg}") from None
    except BaseException as e:  # noqa: BLE001 - a user's module may raise anything on import,
        # sys.exit() and KeyboardInterrupt included: none of them may pass for a verdict
        at = raised_at(e.__traceback__)
        raise SpecError(f"--spec {source}: importing it raised {type(e).__name__}"
                        f"{_detail(e)}" + (f" at {at}" if at else "")) from None
    obj = _pick(mod, name, source)
    if isinstance(obj, Protocol):
        proto = obj
    elif callable(obj):
        fn_name = getattr(obj, "__name__", None)
        # a file's `build` is named after the file (die_hard.py -> die_hard)
        stem = Path(target).stem if _is_file(target) else target.rpartition(".")[2]
        proto = function_protocol(obj, stem if fn_name in (None, "build") else fn_name)
    else:
        raise SpecError(f"--spec {source}: {name or 'PROTOCOL'} is neither a Protocol nor a "
                        "function returning a Spec")
    canonical = canonical if name else f"{canonical}:{_chosen_name(mod)}"
    proto = dataclasses.replace(proto, source=canonical)
    _cache[key] = proto
    return proto


def _tla_protocol(path: Path, source: str) -> Protocol:
    """A TLA+ module as a protocol: its one parameter the TLC cfg (by default the module's
    name with .cfg), the spec the front end's compiled path (``checker/tla/front.py``)."""
    if not path.is_file():
        raise SpecError(f"--spec {source}: no such file {path}")
    from hwcheck.checker.tla.front import default_cfg, protocol

    proto: Protocol = protocol(path, str(default_cfg(path)))
    return proto


def registered_name(source: object) -> str | None:
    """The registered name of the protocol ``source`` names, if it is a registered one: its
    name (``kafka``) or its entry point (``hwcheck.spec.kafka:PROTOCOL``, what a registered
    protocol's traces record). None for anything else (a file, a module, not a string): what a
    trace names is looked up here and never imported."""
    if not isinstance(source, str):
        return None
    for name, ep in registered().items():
        if source in (name, ep.value):
            return name
    return None


def source_digest(source: str | None) -> str | None:
    """The sha256 (hex) of the source file of the spec ``source`` (a loaded protocol's
    canonical source: ``/path/spec.py:NAME`` or ``package.module:NAME``): what a trace records
    to say which version of a user's spec wrote it. None for a registered protocol (its name
    identifies it) and for a source whose file cannot be read. Only the spec's own file is
    hashed, not the modules it imports."""
    if not source or registered_name(source) is not None:
        return None
    target, _ = _split(source)
    if _is_file(target):
        path = Path(target).expanduser().resolve()
        if str(path) in _digests:
            return _digests[str(path)]
        origin: str | None = str(path)
    else:
        mod = sys.modules.get(target)  # a module spec this process loaded
        origin = getattr(mod, "__file__", None)
    if not origin:
        return None
    try:
        return hashlib.sha256(Path(origin).read_bytes()).hexdigest()
    except OSError:
        return None


def _chosen_name(mod: ModuleType) -> str:
    return "PROTOCOL" if hasattr(mod, "PROTOCOL") else "build"


def _pick(mod: ModuleType, name: str | None, source: str) -> Any:
    if name is not None:
        if not hasattr(mod, name):
            raise SpecError(f"--spec {source}: the module has no {name!r}")
        return getattr(mod, name)
    for candidate in ("PROTOCOL", "build"):
        if hasattr(mod, candidate):
            return getattr(mod, candidate)
    raise SpecError(f"--spec {source}: the module defines neither PROTOCOL nor build "
                    "(name one with FILE.py:NAME)")


def _detail(e: BaseException) -> str:
    """``: message`` of an exception that has one (``sys.exit(0)`` has the code 0)."""
    if isinstance(e, SystemExit):
        return f"({e.code!r})" if e.code is not None else "()"
    text = str(e).strip()
    return f": {one_line(e)}" if text else ""


def build(proto: Protocol, params: dict[str, Any] | None = None) -> Spec:
    """``proto``'s spec for ``params``; a SpecError in one line naming the protocol, and the
    line of the spec's code at fault when there is one, if building fails (anything the
    builder raises, ``sys.exit()`` and KeyboardInterrupt included: none may pass for a
    verdict)."""
    resolved = proto.resolve(params)  # a parameter outside its domain: the protocol's words
    try:
        return proto.build(resolved)
    except SpecError as e:
        at = e.at or raised_at(e.__traceback__)
        note = _typed_only(proto, params)
        if at == e.at and not note:
            raise  # it says where already (or nothing of the spec's code is on the way)
        err = SpecError(f"{e if at == e.at else located(e, at)}{note}")
        err.at = at
        raise err from None
    except BaseException as e:  # noqa: BLE001 - a user's builder may raise anything
        at = raised_at(e.__traceback__)
        raise SpecError(f"{proto.name}: building the spec raised {type(e).__name__}"
                        f"{_detail(e)}" + (f" at {at}" if at else "")
                        + _typed_only(proto, params)) from None


def _typed_only(proto: Protocol, params: dict[str, Any] | None) -> str:
    """When the builder failed for parameters given without a declared domain (a plain
    ``build(n: int = 3)`` declares only a type): a note saying so, naming them."""
    loose = [p for p in proto.params if p.domain in (int, str) and params
             and p.name in params and params[p.name] != p.default]
    if not loose:
        return ""
    given = ", ".join(f"{p.name}={params[p.name]!r}" for p in loose)  # type: ignore[index]
    return (f" ({given}: {proto.name} declares no domain for "
            f"{'this parameter' if len(loose) == 1 else 'these parameters'}, only a type; "
            "declare one with a Protocol's Param(name, default, range(lo, hi + 1)))")


def parse_params(proto: Protocol, pairs: Iterable[str]) -> dict[str, Any]:
    """``--param KEY=VALUE`` pairs as a dict of typed values (integers and booleans parsed by
    the parameter's domain, otherwise strings)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise SpecError(f"--param takes KEY=VALUE, got {pair!r}")
        key = key.strip().replace("-", "_") if key.strip() not in {p.name for p in proto.params} \
            else key.strip()
        out[key] = proto.param(key).parse(value)
    return out


@dataclass(frozen=True)
class SpecRef:
    """The picklable identity of a spec: the protocol's source and the parameters."""

    source: str
    params: tuple[tuple[str, Any], ...]  # sorted (name, value) pairs

    @classmethod
    def of(cls, spec: Spec) -> SpecRef | None:
        if not spec.source:
            return None
        return cls(spec.source, tuple(sorted(spec.params.items())))

    def build(self) -> Spec:
        return build(load(self.source), dict(self.params))
