"""A protocol: a family of specs, one per parameter set, as a value the checker receives.

A ``Protocol`` names its parameters (each with a domain, a default and a help line), builds the
``Spec`` of one parameter set, and names the scenarios it must pass. Beyond that it carries two
separate, optional parts: ``Checking``, what the checker may use (strengthening lemmas for Z3,
the symmetry of its index sets, the predicates of recoverability), and ``Views``, how it presents
itself (drawings of its traces, names of parameter sets). Only the builder is required; the
checker falls back to generic behaviour for anything a protocol leaves out (plain induction, no
symmetry, a table of variables per step). ``protocol_of(spec)`` is the protocol of any spec,
one built by hand included.

Nothing here knows a particular protocol, and nothing runs on import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .lang import BOOL, Expr, Spec, SpecError, lift
from .verdicts import Verdict

HOLDS = Verdict.HOLDS  # what a scenario expects of a property that holds (for spec files)


@dataclass(frozen=True)
class Param:
    """One parameter of a protocol.

    ``domain`` is a tuple of allowed values (strings, for a choice), a range of integers
    (``range(lo, hi + 1)``), ``bool``, ``int`` (any integer) or ``str`` (any string). ``flags``
    are the command-line names
    the default protocol's options use (``("--replicas", "-R")``); other protocols' parameters
    are given as ``--param name=value``.
    """

    name: str
    default: Any
    domain: Any
    help: str = ""
    flags: tuple[str, ...] = ()

    def describe(self) -> str:
        """The domain in words: ``1..5``, ``hw|leader-epoch``, ``true|false``."""
        d = self.domain
        if d is bool:
            return "true|false"
        if d is int:
            return "integer"
        if d is str:
            return "string"
        if isinstance(d, range):
            return f"{d.start}..{d.stop - 1}"
        if isinstance(d, tuple):
            return "|".join(map(str, d))
        return "any"

    def check(self, value: Any) -> Any:
        """``value`` if it is in the domain; a SpecError naming the parameter otherwise."""
        d = self.domain
        ok = True
        if d is bool:
            ok = isinstance(value, bool)
        elif d is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif d is str:
            ok = isinstance(value, str)
        elif isinstance(d, range):
            ok = isinstance(value, int) and not isinstance(value, bool) and value in d
        elif isinstance(d, tuple):
            ok = value in d and type(value) is type(d[0]) if d else False
        if not ok:
            raise SpecError(f"parameter {self.name} must be in {self.describe()}, got {value!r}")
        return value

    def parse(self, text: str) -> Any:
        """The value of ``text`` for this parameter (for ``--param name=text``)."""
        d = self.domain
        if d is bool:
            low = text.strip().lower()
            if low in ("true", "1", "yes", "on"):
                return True
            if low in ("false", "0", "no", "off"):
                return False
            raise SpecError(f"parameter {self.name} takes true or false, got {text!r}")
        if isinstance(d, range) or d is int:
            try:
                return int(text)
            except ValueError:
                raise SpecError(f"parameter {self.name} takes an integer, got {text!r}") from None
        return text


@dataclass(frozen=True)
class Scenario:
    """A named parameter set with what a full exploration of it must find.

    ``expect`` maps every invariant and action property to ``HOLDS`` or the length in steps of
    its shortest violation; ``reached`` lists the reachability checks that must be reached (a
    guard against properties that hold only because nothing happens); ``states`` pins the number
    of distinct reachable states when given.
    """

    name: str
    story: str
    bug: str
    params: dict[str, Any]
    expect: dict[str, Any] = field(default_factory=dict)
    reached: tuple[str, ...] = ()
    states: int | None = None

    def expected(self, prop: str) -> Any:
        return self.expect.get(prop)

    def violated(self) -> dict[str, int]:
        return {k: v for k, v in self.expect.items() if v != HOLDS}


@dataclass(frozen=True)
class Symmetry:
    """Index sets whose members the protocol treats alike: renaming them by any permutation maps
    states to states, actions to actions and properties to themselves (the initial state may
    pick members out).

    ``size``: the number of members; ``dims``: for each variable, the dimensions indexed by a
    member; ``ids``: variables whose every cell holds a member's id (a negative value means
    none); ``other``: the variables a renaming leaves alone; ``params``: "member" when every
    action parameter ranges over the members. Every variable is in exactly one of dims, ids,
    other, or in both dims and ids (an array over the members holding member ids: renamed both
    ways, which only the canonical form by permutations does).
    """

    size: int
    dims: dict[str, tuple[int, ...]]
    ids: tuple[str, ...] = ()
    other: tuple[str, ...] = ()
    params: str = "member"

    def as_dict(self) -> dict[str, Any]:
        return {"size": self.size, "dims": dict(self.dims), "ids": tuple(self.ids),
                "other": tuple(self.other), "params": self.params}


@dataclass(frozen=True)
class Checking:
    """What the checker may use beyond a spec, every part optional: a protocol without any of
    them is checked with plain induction, no symmetry and no recoverability.

    ``lemmas(spec)``: every strengthening lemma of a spec, as (name, state predicate) pairs;
    ``shipped_lemmas(invariant)``: the names of the lemmas ``prove`` uses for an invariant by
    default; ``cheap``: invariants ``bmc`` may prove first and then assume in every state;
    ``symmetry(spec)``: the index sets whose members the spec treats alike (None for a spec
    without); ``healthy(spec)`` and ``at_bound(spec)``: the state predicates of ``check
    --recoverable`` (the protocol has healed, e.g. every replica holds the leader's log; a state
    can make no progress only because of the model's bounds, e.g. no epoch left), see
    ``recovery_of``.
    """

    lemmas: Callable[[Spec], list[tuple[str, Expr]]] | None = None
    shipped_lemmas: Callable[[str], list[str]] | None = None
    cheap: tuple[str, ...] = ()
    symmetry: Callable[[Spec], Symmetry | None] | None = None
    healthy: Callable[[Spec], Expr] | None = None
    at_bound: Callable[[Spec], Expr] | None = None


@dataclass(frozen=True)
class Views:
    """How the protocol presents itself, every part optional. Each drawing takes a trace (states
    as dicts of variables, action labels, params, property, kind) and returns text; without one
    the generic table of variables is used.

    ``text(trace)``: the body of the text rendering (after the headline); ``html(trace,
    description)``: a whole HTML page; ``params_line(params)``: one line naming the parameters;
    ``slug(params)``: a short file-name-safe name for a parameter set (run folders, trace files).
    """

    text: Callable[..., str] | None = None
    html: Callable[..., str] | None = None
    params_line: Callable[[dict[str, Any]], str] | None = None
    slug: Callable[[dict[str, Any]], str] | None = None


NO_VIEWS = Views()


@dataclass(frozen=True)
class Protocol:
    """A protocol the checker receives: its parameters and ``builder`` (what a spec is), the
    scenarios it must pass, what the checker may use beyond the spec (``checking``) and how it
    presents itself (``views``). Command-line names of parameters are their ``Param.flags``."""

    name: str
    params: tuple[Param, ...]
    builder: Callable[..., Spec]  # keyword arguments: the parameters
    doc: str = ""
    scenarios: tuple[Scenario, ...] = ()
    check_params: Callable[[dict[str, Any]], None] | None = None  # constraints between parameters
    checking: Checking = field(default_factory=Checking)
    views: Views = NO_VIEWS
    source: str = ""  # where it was loaded from (set by the loader): module:NAME or file.py:NAME

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.params) or "none"
        raise SpecError(f"{self.name} has no parameter {name!r} (known: {known})")

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def resolve(self, given: dict[str, Any] | None = None) -> dict[str, Any]:
        """The full parameter set: the defaults overridden by ``given``, each value checked."""
        given = dict(given or {})
        out = self.defaults()
        for name, value in given.items():
            self.param(name)  # an unknown name is an error
            out[name] = value
        if self.check_params is not None:  # the protocol's own wording first
            self.check_params(out)
        for p in self.params:
            p.check(out[p.name])
        return out

    def build(self, given: dict[str, Any] | None = None) -> Spec:
        """The validated spec of one parameter set."""
        params = self.resolve(given)
        spec = self.builder(**params)
        if not isinstance(spec, Spec):
            raise SpecError(f"{self.name}: build returned {type(spec).__name__}, not a Spec")
        spec.params = dict(params)
        spec.protocol = self
        spec.source = self.source
        return spec.validate()

    def name_of(self, params: dict[str, Any]) -> str:
        """A short file-name-safe name for a parameter set."""
        if self.views.slug is not None:
            return self.views.slug(params)
        parts = [f"{k}-{v}" for k, v in sorted(params.items())]
        return "-".join([self.name] + parts).replace("/", "_")

    def scenario(self, name: str) -> Scenario:
        for s in self.scenarios:
            if s.name == name:
                return s
        known = ", ".join(s.name for s in self.scenarios) or "none"
        raise SpecError(f"unknown scenario {name!r} (known: {known})")


def function_protocol(fn: Callable[..., Spec], name: str | None = None) -> Protocol:
    """A protocol from a plain ``build(**params) -> Spec`` function: its keyword arguments with
    defaults are the parameters (domains from the defaults' types)."""
    import inspect

    params = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        if p.default is p.empty:
            raise SpecError(f"{fn.__name__}: parameter {p.name} needs a default value")
        d = p.default
        domain = bool if isinstance(d, bool) else int if isinstance(d, int) else \
            str if isinstance(d, str) else None
        params.append(Param(p.name, d, domain))
    return Protocol(name or fn.__name__, tuple(params), fn, doc=(fn.__doc__ or "").strip())


@dataclass(frozen=True)
class Recovery:
    """What recoverability is of one spec: ``healthy`` (the states the protocol should always be
    able to get back to) and ``at_bound`` (states whose lack of progress is the model's bounds',
    not the protocol's; None: there are none). Both are state predicates of the spec."""

    healthy: Expr
    at_bound: Expr | None = None


def protocol_of(spec: Spec) -> Protocol:
    """The protocol that built ``spec``; for a spec built by hand (or one that crossed a process
    boundary without it), a protocol of that spec alone: its name, no parameters, no extras."""
    proto = spec.protocol
    if isinstance(proto, Protocol):
        return proto
    return Protocol(spec.name, (), lambda: spec, source=spec.source)


def recovery_of(spec: Spec) -> Recovery | None:
    """The recoverability predicates the protocol that built ``spec`` states for it (None when
    it states no healthy predicate), checked like the spec's invariants: a malformed one is a
    SpecError naming it."""
    proto = protocol_of(spec)
    if proto.checking.healthy is None:
        return None
    out: list[Expr | None] = []
    for what, f in (("healthy predicate", proto.checking.healthy),
                    ("at-bound predicate", proto.checking.at_bound)):
        if f is None:
            out.append(None)
            continue
        try:
            e = lift(f(spec))
        except SpecError as err:
            raise SpecError(f"{proto.name}: {what}: {err}") from None
        spec._check_expr(f"{proto.name} {what}", e, BOOL, set(), set(), set(), False)
        out.append(e)
    healthy = out[0]
    assert healthy is not None  # checking.healthy is not None
    return Recovery(healthy, out[1])


def lemmas_of(spec: Spec) -> list[tuple[str, Expr]]:
    """Every lemma the protocol that built ``spec`` states for it (none for a spec built by hand
    or a protocol without lemmas)."""
    fn = protocol_of(spec).checking.lemmas
    return list(fn(spec)) if fn is not None else []
