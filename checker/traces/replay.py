"""Replaying a trace file: find the spec it belongs to, read it, and check what it claims.

A trace is data: it never chooses code. A trace hwcheck wrote names its protocol
(``#meta.protocol``) and parameters (``#meta.params``). When that is a registered protocol (the
entry-point registry: ``protocols.registered_name``) the trace is replayed with no other input;
any other spec (a file, a module) is imported only when the user gives it with ``--spec``, and
the digest the trace records of that spec's file (``#meta.protocol-sha256``) is compared with
the file given: a difference is said (a warning; the replay still checks every step against the
spec given). A trace another tool wrote (Apalache, Quint) has neither protocol nor action names:
it is replayed against the spec given with ``--spec``/``--param``, and each step is matched to
the action instance that produces the next state (the first in instance order, when several
do).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwcheck.checker import protocols
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.traces import itf
from hwcheck.checker.traces.trace import (
    Trace,
    TraceError,
    presenter_of,
    replay,
    replay_cti,
    views_of,
)
from hwcheck.spec.lang import Spec, SpecError


@dataclass(frozen=True)
class ReplayRequest:
    path: Path
    spec_source: str | None = None  # --spec
    param_pairs: tuple[str, ...] = ()  # --param KEY=VALUE
    prop: str | None = None  # --property, for a trace without #meta.property


@dataclass(frozen=True)
class SpecCheck:
    """Whether the spec a trace is replayed against is the one it was written from, by the
    digest of the spec's file: ``registered`` (a registered protocol: its name identifies it),
    ``matches``, ``differs`` (``warning`` says it in one line), ``not recorded`` (a trace
    without a digest), or ``none`` (the trace names no spec: another tool's)."""

    digest: str
    warning: str | None = None


def _short(x: object) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def spec_for(req: ReplayRequest, meta: dict[str, Any]) -> tuple[Spec, SpecCheck]:
    """The spec a trace is replayed against, and how it compares with the one the trace was
    written from (TraceError if it cannot be had). Nothing is imported that the trace names
    unless it is a registered protocol; a spec file or module is the user's ``--spec``."""
    named = meta.get("protocol")
    if named is not None and not isinstance(named, str):
        raise TraceError(f"{req.path}: #meta.protocol is not a spec source: {_short(named)}")
    if req.spec_source is not None:
        source = req.spec_source
    elif named is not None:
        registered = protocols.registered_name(named)
        if registered is None:
            raise TraceError(f"{req.path}: the trace names the spec {_short(named)}, which is "
                             "not a registered protocol; hwcheck runs no code a trace names: "
                             "give the spec with --spec")
        source = registered
    elif meta.get("source") == "hwcheck":
        source = protocols.DEFAULT  # traces from before #meta named the protocol
    else:
        raise TraceError(f"{req.path}: the trace does not say which spec it belongs to (it was "
                         "not written by hwcheck): give --spec and --param")
    try:
        proto = protocols.load(source)
        recorded = meta.get("params")
        if recorded is not None and not isinstance(recorded, dict):
            raise SpecError(f"#meta.params is not an object: {_short(recorded)}")
        given: dict[str, Any] = {}
        # the trace's parameters, under --param: with --spec, when they are the given spec's
        if recorded and (req.spec_source is None
                         or set(recorded) <= {p.name for p in proto.params}):
            given = dict(recorded)
        given.update(protocols.parse_params(proto, req.param_pairs))
        spec = protocols.build(proto, given)
    except SpecError as e:
        raise TraceError(f"{req.path}: {e}") from None
    return spec, _check(req, spec.source, named, meta)


def _check(req: ReplayRequest, source: str | None, named: str | None,
           meta: dict[str, Any]) -> SpecCheck:
    if named is None:  # an old trace of the default protocol, or another tool's
        return SpecCheck("registered" if req.spec_source is None else "none")
    reg = protocols.registered_name(named)
    if reg is not None:
        if reg == protocols.registered_name(source):
            return SpecCheck("registered")
        return SpecCheck("differs", f"warning: the trace was written from the registered "
                                    f"protocol {reg}, not from the spec given; the trace is "
                                    "checked against the spec given")
    recorded = meta.get(itf.DIGEST)
    if recorded is None:
        return SpecCheck("not recorded")
    digest = protocols.source_digest(source)
    if digest is not None and recorded == digest:
        return SpecCheck("matches")
    return SpecCheck("differs", f"warning: the spec given ({req.spec_source or source}) is "
                                "not the file the trace was written from (its sha256 differs "
                                "from #meta.protocol-sha256); the trace is checked against the "
                                "spec given")


def load_and_replay(req: ReplayRequest
                    ) -> tuple[Spec, Trace, TraceError | None, SpecCheck]:
    """(spec, trace, None, check) when the trace replays as it claims, (spec, trace, why, check)
    when it does not; raises TraceError when the file is not a trace of a spec that can be
    built, or when an option contradicts the trace (``--property`` naming another property
    than the one the trace is a counterexample of)."""
    data = itf.read(req.path)
    meta = data.get("#meta") or {}
    claimed = meta.get("property")
    if req.prop is not None and claimed is not None and claimed != req.prop:
        raise TraceError(f"{req.path}: the trace is about {_short(claimed)}, not {req.prop!r}: "
                         "--property names the claim of a trace that names none")
    spec, check = spec_for(req, meta)
    trace = itf.from_itf(spec, data, str(req.path), prop=req.prop)
    trace.views = views_of(spec)
    trace.present = presenter_of(spec)
    try:
        if trace.actions is None:  # a trace without action names: find them
            trace.actions = find_actions(spec, trace)
        if trace.is_cti:
            replay_cti(spec, trace)
        else:
            replay(spec, trace)
    except TraceError as e:
        return spec, trace, e, check
    return spec, trace, None, check


def find_actions(spec: Spec, trace: Trace) -> list[str]:
    """For each step, the first action instance (in instance order) whose successor is the
    next state; TraceError naming the first step that no action produces."""
    interp = Interpreter(spec)
    layout = interp.layout
    labels = []
    for step in range(1, len(trace.states)):
        try:
            row = layout.from_dict(trace.states[step - 1])
            want = layout.from_dict(trace.states[step])
        except SpecError as e:
            raise TraceError(f"step {step - 1}: {e}") from None
        for inst in interp.instances:
            try:
                nxt = interp.step(inst, row)
            except ModelError:  # this instance would leave the declared domains: not the step
                continue
            if nxt is not None and (nxt == want).all():
                labels.append(inst.label)
                break
        else:
            raise TraceError(f"step {step}: no action of {spec.name} leads from state "
                             f"{step - 1} to state {step}")
    return labels
