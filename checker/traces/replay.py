"""Replaying a trace file: find the spec it belongs to, read it, and check what it claims.

A trace hwcheck wrote names its protocol (``#meta.protocol``, a source the loader understands)
and parameters (``#meta.params``), so it is replayed with no other input. A trace another tool
wrote (Apalache, Quint) has neither, nor action names: it is replayed against the spec given
with ``--spec``/``--param``, and each step is matched to the action instance that produces the
next state (the first in instance order, when several do).
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


def spec_for(req: ReplayRequest, meta: dict[str, Any]) -> Spec:
    """The spec a trace is replayed against (TraceError if it cannot be had)."""
    source = req.spec_source or meta.get("protocol")
    if source is not None and not isinstance(source, str):
        raise TraceError(f"{req.path}: #meta.protocol is not a spec source: {source!r:.60}")
    if source is None and meta.get("source") == "hwcheck":
        source = protocols.DEFAULT  # traces from before #meta named the protocol
    if source is None:
        raise TraceError(f"{req.path}: the trace does not say which spec it belongs to (it was "
                         "not written by hwcheck): give --spec and --param")
    try:
        proto = protocols.load(source)
        given: dict[str, Any] = {}
        if req.spec_source is None or meta.get("protocol") == source:
            given = meta.get("params") or {}
            if not isinstance(given, dict):
                raise SpecError(f"#meta.params is not an object: {given!r}")
        given = dict(given)
        given.update(protocols.parse_params(proto, req.param_pairs))
        return protocols.build(proto, given)
    except SpecError as e:
        raise TraceError(f"{req.path}: {e}") from None


def load_and_replay(req: ReplayRequest) -> tuple[Spec, Trace, TraceError | None]:
    """(spec, trace, None) when the trace replays as it claims, (spec, trace, why) when it does
    not; raises TraceError when the file is not a trace of a spec that can be built."""
    data = itf.read(req.path)
    meta = data.get("#meta") or {}
    spec = spec_for(req, meta)
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
        return spec, trace, e
    return spec, trace, None


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
