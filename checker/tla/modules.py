"""Modules resolved into scopes: EXTENDS, INSTANCE (with WITH substitution, named or not), the
standard modules' native tables, and a root module bound to its cfg.

A `Scope` is one module instance: the definitions it sees by name (its own, its EXTENDS
closure's, an unnamed INSTANCE's, each a `Defn` that remembers the scope its body is evaluated
in), and how its constants and variables are given: the root scope takes constants from the cfg
and variables from the state; an instantiated module's scope maps each of its constants and
variables to an expression of the instantiating scope (the WITH substitution, or the same name
there). Modules are read from the root module's folder; the standard modules are `stdlib`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cfg import Config
from .parse import parse_file, parse_file_all
from .stdlib import TABLES, Builtin, reseed
from .syntax import (
    Expr,
    FnDef,
    InstanceDef,
    Module,
    OpApp,
    OpDef,
    Param,
    Pos,
    fail,
)
from .values import ModelValue, Value

# Standard modules TLC knows whose operators hwcheck does not give.
UNSUPPORTED_MODULES = ("Reals", "RealTime", "CSV", "Graphs", "Relation", "Combinatorics",
                       "DyadicRationals", "Apalache", "Variants", "Strings")


@dataclass(eq=False)
class Defn:
    """A user definition and the scope its body is evaluated in. ``memo`` caches the values of
    an operator that reads no state (the evaluator's analysis fills it)."""

    d: OpDef | FnDef
    scope: Scope
    free: bool | None = None
    memo: dict[Any, Value] | None = None

    @property
    def name(self) -> str:
        return self.d.name


@dataclass(eq=False)
class InstanceRef:
    """``N(p) == INSTANCE M WITH ...``: scopes made on use (one per argument tuple)."""

    d: InstanceDef
    scope: Scope
    loader: Loader
    made: dict[tuple[Value, ...], Scope] = field(default_factory=dict)

    def instance(self, args: tuple[Value, ...]) -> Scope:
        s = self.made.get(args)
        if s is None:
            env = {p.name: v for p, v in zip(self.d.params, args)}
            s = self.made[args] = self.loader.instantiate(self.d, self.scope, env)
        return s


Entry = Defn | Builtin | InstanceRef


class Scope:
    def __init__(self, module: Module, root: bool) -> None:
        self.module = module
        self.root = root
        self.defs: dict[str, Entry] = {}
        self.constants: dict[str, Param] = {}  # declared, in order
        self.variables: list[str] = []  # declared, in order
        # the root's
        self.values: dict[str, Value] = {}
        self.state_vars: frozenset[str] = frozenset()
        # an instance's: name -> (expression, scope and environment it is evaluated in)
        self.subst: dict[str, tuple[Expr, Scope, dict[str, Value]]] = {}
        self.merged: set[str] = set()  # the modules whose definitions are here (EXTENDS)

    def knows(self, name: str) -> bool:
        return (name in self.defs or name in self.subst or name in self.values
                or name in self.state_vars)


class Loader:
    """Reads modules from one folder (each parsed once) and builds their scopes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.parsed: dict[str, Module] = {}
        # the cfg's ``Name <- [M] Other``: by module, Name -> (Other, its position)
        self.scoped: dict[str, dict[str, tuple[str, Pos]]] = {}
        self.root: Scope | None = None  # once the root module is populated
        self.instances: list[Scope] = []  # the instances' scopes made before that
        self.scopes: list[Scope] = []  # every instance's scope
        # the cfg's ``Seq <- BoundedSeq`` of a standard operator: it stands everywhere (the
        # one definition SANY shares), instances included
        self.standard: dict[str, Entry] = {}

    def scope_overrides(self, scope: Scope) -> None:
        """The cfg's module-scoped substitutions for ``scope`` (an instance of a module)."""
        given = self.scoped.get(scope.module.name)
        if not given:
            return
        if self.root is None:
            self.instances.append(scope)
            return
        for name, (target, pos) in given.items():
            self.override(scope, name, target, pos, scope.module.name)

    def override(self, scope: Scope, name: str, target: str, pos: Pos, module: str) -> None:
        """``name`` in ``scope`` is the root module's ``target`` (an operator or a constant)."""
        assert self.root is not None
        entry = self.root.defs.get(target)
        if entry is not None:
            scope.defs[name] = entry
        elif target in self.root.values:
            scope.defs.pop(name, None)
            if scope is self.root:
                scope.values[name] = self.root.values[target]
            else:  # the root's constant, read where the instance reads the name
                scope.defs[name] = Defn(OpDef(pos, name, (), OpApp(pos, target)), self.root)
        else:
            raise fail(pos, f"{name} <- [{module}] {target}: the module defines no {target}")

    def module(self, name: str, pos: Pos) -> Module:
        if name in self.parsed:
            return self.parsed[name]
        path = self.folder / f"{name}.tla"
        if name in UNSUPPORTED_MODULES and not path.exists():  # the folder's own comes first
            raise fail(pos, f"unsupported module {name}: hwcheck has no native table for it")
        if not path.exists():
            raise fail(pos, f"module {name} not found: no {path} and no standard module "
                            f"of that name")
        m = parse_file(path)
        if m.name != name:
            raise fail(m.pos, f"the file {path.name} holds module {m.name}, not {name}")
        self.parsed[name] = m
        return m

    def populate(self, scope: Scope, m: Module, seen: frozenset[str] = frozenset()) -> None:
        """``m``'s EXTENDS closure and definitions into ``scope``."""
        if m.name in seen:
            raise fail(m.pos, f"module {m.name} extends itself (a cycle of EXTENDS)")
        if m.name in scope.merged:
            return  # extended along two paths (A extends B and C, both extend D): once
        seen = seen | {m.name}
        scope.merged.add(m.name)
        for name, pos in m.extends:
            if name in TABLES:
                for op, b in TABLES[name].items():
                    scope.defs.setdefault(op, b)
            else:
                self.populate(scope, self.module(name, pos), seen)
        for c in m.constants:
            scope.constants.setdefault(c.name, c)
        for v in m.variables:
            if v not in scope.variables:
                scope.variables.append(v)
        for d in m.definitions:
            if isinstance(d, (OpDef, FnDef)):
                self._define(scope, d.name, Defn(d, scope), d.pos)
            elif d.name is None and d.module in TABLES and not d.substitutions:
                for op, b in TABLES[d.module].items():  # INSTANCE Naturals: its operators
                    scope.defs.setdefault(op, b)
            elif d.name is None:
                inner = self.instantiate(d, scope, {})
                for name, entry in inner.defs.items():
                    if not (isinstance(entry, Defn) and entry.d.local):
                        scope.defs.setdefault(name, entry)
            else:
                ref = InstanceRef(d, scope, self)
                # made now, so that a substitution it lacks is an error when loading
                probe = self.instantiate(d, scope, {p.name: None for p in d.params})
                if not d.params:
                    ref.made[()] = probe
                self._define(scope, d.name, ref, d.pos)

    def _define(self, scope: Scope, name: str, entry: Entry, pos: Pos) -> None:
        old = scope.defs.get(name)
        if isinstance(old, Defn) and old.d.local and old.d.pos.file != pos.file:
            # an extended module's LOCAL definition is not the extending module's (Kip279's
            # LOCAL Next, Kip320's own Next): the module's own replaces it (in this scope,
            # which EXTENDS flattens, for the extended module's definitions too)
            old = None
        if isinstance(old, (Defn, InstanceRef)):
            raise fail(pos, f"{name} is defined twice (first at {old.d.pos})")
        if name in scope.constants or name in scope.variables:
            raise fail(pos, f"{name} is defined and also declared a constant or variable")
        scope.defs[name] = entry

    def instantiate(self, d: InstanceDef, outer: Scope, env: dict[str, Value]) -> Scope:
        m = self.module(d.module, d.pos)
        inner = Scope(m, root=False)
        self.populate(inner, m)
        given = dict(d.substitutions)
        for name in given:
            if name not in inner.constants and name not in inner.variables:
                raise fail(d.pos, f"INSTANCE {d.module} WITH {name}: {d.module} declares no "
                                  f"constant or variable {name}")
        for name in [*inner.constants, *inner.variables]:
            if name in given:
                inner.subst[name] = (given.pop(name), outer, env)
            elif outer.knows(name) or name in outer.constants or name in outer.variables \
                    or name in env:
                inner.subst[name] = (OpApp(d.pos, name), outer, env)
            else:
                raise fail(d.pos, f"INSTANCE {d.module}: no substitution for its "
                                  f"{'constant' if name in inner.constants else 'variable'} "
                                  f"{name}, and nothing named {name} here")
        self.scope_overrides(inner)
        self.scopes.append(inner)
        for name, entry in self.standard.items():
            if isinstance(inner.defs.get(name), Builtin):
                inner.defs[name] = entry
        return inner


@dataclass
class Root:
    """A root module bound to its cfg: the scope every name resolves from."""

    scope: Scope
    variables: tuple[str, ...]
    cfg: Config
    loader: Loader


def load(tla: str | Path, cfg: Config) -> Root:
    """The module at ``tla`` with its EXTENDS and INSTANCEs resolved, constants bound from
    ``cfg`` (every declared constant must be given; an override names an operator)."""
    path = Path(tla)
    reseed()  # the random choices (Randomization, RandomElement) are the same on every load
    loader = Loader(path.parent)
    m, *more = parse_file_all(path)
    loader.parsed[m.name] = m
    for extra in more:  # modules after the first in the file: the first may use them
        loader.parsed.setdefault(extra.name, extra)
    for (module, name), given in cfg.scoped.items():
        loader.scoped.setdefault(module, {})[name] = given
    scope = Scope(m, root=True)
    loader.populate(scope, m)
    scope.state_vars = frozenset(scope.variables)
    for name, (value, pos) in cfg.constants.items():
        if name in scope.constants:
            if scope.constants[name].arity:
                raise fail(pos, f"constant {name} takes arguments: give it with <-")
            scope.values[name] = value
        elif isinstance(scope.defs.get(name), Defn):
            # TLC lets the cfg override a definition with a value
            scope.defs.pop(name)
            scope.values[name] = value
        elif value != ModelValue(name):  # `r1 = r1` only names a model value (TLC takes it)
            raise fail(pos, f"the cfg sets {name}, which the module neither declares nor defines")
    for name, (target, pos) in cfg.overrides.items():
        entry = scope.defs.get(target)
        if entry is None:
            raise fail(pos, f"{name} <- {target}: the module defines no {target}")
        if name not in scope.constants and name not in scope.defs:
            raise fail(pos, f"the cfg overrides {name}, which the module neither declares "
                            f"nor defines")
        if isinstance(scope.defs.get(name), Builtin):  # a standard operator: everywhere
            loader.standard[name] = entry
            for inner in loader.scopes:
                if isinstance(inner.defs.get(name), Builtin):
                    inner.defs[name] = entry
        scope.defs[name] = entry
    loader.root = scope  # the cfg's module-scoped substitutions, now that its values are
    for inner in loader.instances:
        loader.scope_overrides(inner)
    for (module, name), (target, pos) in cfg.scoped.items():
        if module in scope.merged:  # a module the root extends: its definitions are the root's
            loader.override(scope, name, target, pos, module)
    missing = [c for c in scope.constants if c not in scope.values and c not in scope.defs]
    if missing:
        raise fail(Pos(cfg.file, 1, 1), f"the cfg gives no value for the constant "
                                         f"{missing[0]} of {m.name}")
    return Root(scope, tuple(scope.variables), cfg, loader)
