"""What every hwcheck command shares: exit codes, one-line errors, output, and the options that
choose a spec (the default protocol's own flags, or ``--spec`` with ``--param``).

Exit codes a script can rely on: 0 holds (or a trace replayed as claimed), 12 a violation,
2 bad usage or bad input, 3 unknown (a limit was reached before a verdict), 1 an internal error
or a trace that does not replay.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from hwcheck.checker import protocols
from hwcheck.spec.lang import Spec, SpecError
from hwcheck.spec.protocol import NO_VIEWS, Param, Protocol

if TYPE_CHECKING:
    from types import FrameType

F = TypeVar("F", bound=Callable[..., Any])  # a command's function, as a click option decorates it

EXIT_HOLDS = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNKNOWN = 3
EXIT_VIOLATED = 12

VERDICT_EXIT = {"holds": EXIT_HOLDS, "violated": EXIT_VIOLATED, "unknown": EXIT_UNKNOWN}


class InputError(click.ClickException):
    """Bad input: reported as one line, exit code 2."""

    exit_code = EXIT_USAGE


class Output:
    """Where a command's human text goes: stdout, or stderr when ``--json`` keeps stdout for
    the one JSON object."""

    def __init__(self, as_json: bool = False, quiet: bool = False) -> None:
        self.as_json = as_json
        self.quiet = quiet

    def say(self, msg: str = "") -> None:
        click.echo(msg, err=self.as_json)

    def progress(self, msg: str) -> None:
        if not self.quiet:
            click.echo(f"  {msg}", err=True)

    def progress_fn(self) -> Callable[[str], None] | None:
        return None if self.quiet else self.progress

    def result(self, obj: dict[str, Any]) -> None:
        """The --json object, as the last line of stdout."""
        if self.as_json:
            click.echo(json.dumps(obj))


def say(msg: str = "", err: bool = False) -> None:
    click.echo(msg, err=err)


def sigterm_stops_like_ctrl_c() -> None:
    """From now on SIGTERM (``timeout``, a batch system, ``kill``) raises ``Terminated`` in the
    main thread, so a run stops at its next safe point and reports what it found."""
    import signal

    from hwcheck.checker.search.exploration import Terminated

    def handler(signum: int, frame: FrameType | None) -> NoReturn:
        raise Terminated()

    signal.signal(signal.SIGTERM, handler)


def parse_size(text: str, option: str = "--max-memory") -> int:
    """``300M``, ``2G``, ``1.5g``, ``512k`` or a number of bytes (``option``: its name in the
    error)."""
    units = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    t = text.strip().lower().removesuffix("ib").removesuffix("b") if text else ""
    unit = t[-1:] if t[-1:] in "kmgt" else ""
    try:
        value = float(t[:-1] if unit else t)
    except ValueError:
        raise InputError(f"{option} takes a size such as 300M or 2G, got {text!r}") from None
    if value <= 0:
        raise InputError(f"{option} must be positive, got {text!r}")
    return int(value * units[unit])


# -- choosing a spec -----------------------------------------------------------------------------


def _default_protocol() -> Protocol | None:
    try:
        return protocols.default()
    except SpecError:
        return None


DEFAULT = _default_protocol()


def _option_for(p: Param) -> Callable[[F], F]:
    """A click option for one of the default protocol's parameters (all default to None, so
    that only what the user gave overrides a scenario's or the protocol's defaults)."""
    dest = p.name
    shown = "on" if p.default is True else "off" if p.default is False else p.default
    help_ = f"{p.help}, {p.describe()} [default: {shown}]" if isinstance(p.domain, range) \
        else f"{p.help} [default: {shown}]"
    if p.domain is bool:
        return click.option(*p.flags, dest, default=None, help=help_)
    if isinstance(p.domain, tuple):
        return click.option(*p.flags, dest, type=click.Choice(p.domain), default=None,
                            help=help_)
    kind = int if isinstance(p.default, int) else str
    return click.option(*p.flags, dest, type=kind, default=None, help=help_)


MODEL_KEYS = tuple(p.name for p in DEFAULT.params if p.flags) if DEFAULT else ()


def spec_options(fn: F) -> F:
    """``--spec``, ``--param`` and the default protocol's own options (``--replicas`` ...)."""
    opts = [
        click.option("--spec", "spec_source", default=None, metavar="SOURCE",
                     help="The protocol to check: FILE.py[:NAME], package.module[:NAME] or a "
                          "registered name (`hwcheck params --spec ...` lists its parameters) "
                          f"[default: {protocols.DEFAULT}]"),
        click.option("--param", "param_pairs", multiple=True, metavar="KEY=VALUE",
                     help="A parameter of the protocol (repeatable; integers and booleans "
                          "parsed, otherwise strings)"),
        click.option("--config", "tla_config", default=None, metavar="FILE.cfg",
                     help="With --spec FILE.tla: the TLC configuration (constants, INIT/NEXT "
                          "or SPECIFICATION, INVARIANTS) [default: the module's name with "
                          ".cfg, as TLC's]"),
    ]
    if DEFAULT is not None:
        opts += [_option_for(p) for p in DEFAULT.params if p.flags]
    for o in reversed(opts):
        fn = o(fn)
    return fn


def protocol_from(kwargs: dict[str, Any]) -> Protocol:
    """The protocol the options name (and pop ``--spec``); the default one without --spec."""
    source = kwargs.pop("spec_source", None)
    try:
        if source is None:
            if DEFAULT is None:
                raise SpecError(f"no protocol named {protocols.DEFAULT!r} is installed "
                                "(install hwcheck, or give --spec)")
            return DEFAULT
        return protocols.load(source)
    except SpecError as e:
        raise InputError(str(e)) from None


def params_from(proto: Protocol, kwargs: dict[str, Any],
                base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The parameters the options give (popped from ``kwargs``) over ``base``: the default
    protocol's own flags, then ``--param`` pairs."""
    model = {k: kwargs.pop(k) for k in MODEL_KEYS if k in kwargs}
    model = {k: v for k, v in model.items() if v is not None}
    pairs = kwargs.pop("param_pairs", ())
    liveness = model.pop("liveness", None) if proto is not DEFAULT else None
    config = kwargs.pop("tla_config", None)
    if config is not None:
        if not proto.source.endswith(".tla"):
            raise InputError("--config is the TLC configuration of a TLA+ module: give it with "
                             "--spec FILE.tla")
        config = str(Path(config).expanduser().resolve())
    if model and DEFAULT is not None and proto is not DEFAULT:
        flags = ", ".join(DEFAULT.param(k).flags[0].split("/")[0] for k in model)
        raise InputError(f"{flags} belong{'s' * (len(model) == 1)} to the {DEFAULT.name} "
                         f"protocol; give the parameters of {proto.name} with --param "
                         "KEY=VALUE")
    try:
        given = dict(base or {})
        given.update(model)
        given.update(protocols.parse_params(proto, pairs))
        if config is not None:
            given["config"] = config
        params = proto.resolve(given)
        if liveness is not None:
            _liveness_flag(proto, params, liveness)
        return params
    except SpecError as e:
        raise InputError(str(e)) from None


def _liveness_flag(proto: Protocol, params: dict[str, Any], on: bool) -> None:
    """``--liveness`` / ``--no-liveness`` given with another protocol than the default one, whose
    switch they are: a spec's own liveness properties are always checked, so ``--liveness``
    is accepted when it declares some and ``--no-liveness`` when it declares none; the other
    cases are refused in one line saying why."""
    declared = [p.name for p in protocols.build(proto, params).liveness]
    if on and not declared:
        raise InputError(f"{proto.name} declares no liveness properties, so --liveness has "
                         f"nothing to check (the flag declares the {protocols.DEFAULT} protocol's "
                         "own; a spec states its liveness properties with "
                         "spec.leads_to, always_eventually or eventually_always)")
    if not on and declared:
        raise InputError(f"{proto.name} declares liveness properties ({', '.join(declared)}) "
                         "and every check decides them; --no-liveness is the "
                         f"{protocols.DEFAULT} protocol's switch: check the "
                         "others with --property NAME")


class NotBuilt(InputError):
    """The protocol and parameters a command's options name, whose spec could not be built
    (``error``): one line, exit 2 (``check`` handles a TLA+ module's refusals itself:
    ``cli/tla.py``)."""

    def __init__(self, proto: Protocol, params: dict[str, Any], run_name: str | None,
                 error: SpecError) -> None:
        super().__init__(str(error))
        self.proto, self.params, self.run_name, self.error = proto, params, run_name, error


@dataclass(frozen=True)
class Chosen:
    """The protocol, parameters and built spec a command's options name."""

    proto: Protocol
    params: dict[str, Any]
    spec: Spec
    run_name: str | None = None  # with --scenario: the run's folder name (see ``choose_spec``)


def choose_spec(kwargs: dict[str, Any], scenario: str | None = None) -> Chosen:
    """The spec the options name (popped from ``kwargs``): the protocol (``--spec``, or the
    default one), the parameters over a scenario's (``--scenario``), the default protocol's own
    flags and ``--param`` pairs, built; every failure one line, exit 2. With a scenario, the
    run's folder is its name, or ``SCENARIO+PARAMETERS`` when parameters given override some
    of its own (so that the scenario's own traces stay canonical)."""
    return build_chosen(*choose_protocol(kwargs, scenario))


def choose_protocol(kwargs: dict[str, Any], scenario: str | None = None
                    ) -> tuple[Protocol, dict[str, Any], str | None]:
    """The protocol, parameters and run folder name ``choose_spec`` builds, not built yet."""
    proto = protocol_from(kwargs)
    base = None
    if scenario is not None:
        try:
            base = proto.scenario(scenario).params
        except SpecError as e:
            raise InputError(str(e)) from None
    params = params_from(proto, kwargs, base)
    run_name = None
    if scenario is not None:
        run_name = scenario if params == proto.resolve(base) else \
            f"{scenario}+{proto.name_of(params)}"
    return proto, params, run_name


def build_chosen(proto: Protocol, params: dict[str, Any], run_name: str | None) -> Chosen:
    """``proto``'s spec for ``params``; ``NotBuilt`` (one line, exit 2) if it cannot be."""
    try:
        return Chosen(proto, params, protocols.build(proto, params), run_name)
    except SpecError as e:
        raise NotBuilt(proto, params, run_name, e) from None


def params_line(proto: Protocol | None, params: dict[str, Any]) -> str:
    from hwcheck.checker.traces.text import params_line as line

    return line(params, proto.views if proto is not None else NO_VIEWS)


def output_options(what: str = "Where counterexamples are written "
                                  "(<out>/<run-name>/<Property>.itf.json)",
                   run_name_default: str = "the parameters") -> Callable[[F], F]:
    """--out, --run-name and --quiet, shared by the commands that write traces."""

    def deco(fn: F) -> F:
        for o in reversed([
            click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                         default=Path("hwcheck-out"), show_default=True, help=what),
            click.option("--run-name", default=None,
                         help=f"Folder name under --out [default: {run_name_default}]"),
            click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr"),
        ]):
            fn = o(fn)
        return fn

    return deco


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print one JSON object as the last line of stdout (human text "
                             "then goes to stderr)")(fn)


def workers_option(fn: F) -> F:
    return click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
                        help="Threads of the local engine, each expanding part of every level "
                             "and owning a slice of the visited set; the same counts and traces "
                             "for any N [default: the cores this process may use; one when the "
                             "declared domains allow fewer than 2^20 states]")(fn)


def local_workers(engine: str, workers: int | None, spec: Spec | None = None) -> dict[str, int]:
    """The engine options that --workers gives (``plan.engine_workers``): one line, exit 2,
    with another engine than the local one."""
    from hwcheck.checker.plan import PlanError, engine_workers

    try:
        return engine_workers(engine, workers, spec)
    except PlanError as e:
        raise InputError(str(e)) from None


def check_properties(spec: Spec, names: Iterable[str],
                     kinds: Container[str] = ("invariant", "action")) -> None:
    known = []
    if "invariant" in kinds:
        known += [p.name for p in spec.invariants]
    if "action" in kinds:
        known += [p.name for p in spec.action_properties]
    if "liveness" in kinds:
        known += [p.name for p in spec.liveness]
    what = "property" if "liveness" in kinds else "invariant"
    for name in names:
        if name not in known:
            raise InputError(f"unknown {what} {name!r} (known: {', '.join(known)})")
