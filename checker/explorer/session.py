"""One explorer session: a path of states from the start, taken one action at a time.

Successors come from the compiled kernel's ``step`` (what every engine explores); the
interpreter takes the same step too, and a difference between the two is reported rather than
hidden. Which properties the current state (and the last step) violates is the interpreter's
evaluation of the spec's own properties. A loaded trace (ITF) is replayed through the
interpreter first; jumping to its state i makes its first i steps the current path.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.spec.lang import Expr, Instance, Spec, SpecError, reads_next
from hwcheck.spec.protocol import protocol_of, recovery_of

if TYPE_CHECKING:
    from hwcheck.checker.traces.trace import Trace


class SessionError(ValueError):
    """A request the session cannot carry out: said in one line (HTTP 4xx)."""

    def __init__(self, msg: str, status: int = 400) -> None:
        super().__init__(msg)
        self.status = status


class Session:
    def __init__(self, spec: Spec, kernel: Kernel | None = None) -> None:
        self.spec = spec
        self.kernel = kernel or Kernel(spec)
        self.interp = Interpreter(spec)
        self.layout = self.interp.layout
        self.instances = self.kernel.instances
        # held by each change and each read of the path; the server holds it across a change
        # and the state it answers with (so it is reentrant)
        self.lock = threading.RLock()
        self.starts: list[np.ndarray] = [np.asarray(r, self.layout.dtype)
                                         for r in self.kernel.initials]
        self.path: list[tuple[np.ndarray, str | None]] = [(self.starts[0].copy(), None)]
        self.trace: Trace | None = None  # a loaded trace
        self.trace_rows: list[np.ndarray] = []
        self.trace_name = ""
        self.warning: str | None = None  # said when the trace's spec is not the one given
        self.version = 0  # bumped on every change (the page reloads the view by it)
        rec = recovery_of(spec)
        self.healthy = rec.healthy if rec is not None else None
        self.kernel.warm("step")

    # -- construction from a trace file ------------------------------------------------------

    @classmethod
    def from_trace_file(cls, path: Path, spec_source: str | None = None,
                        param_pairs: tuple[str, ...] = ()) -> Session:
        """A session over the spec of a trace file, with the trace loaded: the registered
        protocol its #meta names, or the spec given (``spec_source``, ``--spec``: a trace never
        chooses code to run), with the trace's parameters under ``param_pairs``. ``warning``
        says when the spec given is not the file the trace was written from."""
        from hwcheck.checker.traces import itf
        from hwcheck.checker.traces.replay import ReplayRequest, spec_for
        from hwcheck.checker.traces.trace import TraceError

        try:
            data = itf.read(Path(path))
            spec, check = spec_for(ReplayRequest(Path(path), spec_source, tuple(param_pairs)),
                                   data.get("#meta") or {})
        except TraceError as e:
            raise SessionError(str(e)) from None
        session = cls(spec)
        session.warning = check.warning
        session.load_trace_file(path)
        return session

    def load_trace_file(self, path: Path) -> None:
        """Read a trace of this session's spec and replay it through the interpreter."""
        from hwcheck.checker.traces import itf
        from hwcheck.checker.traces.replay import find_actions
        from hwcheck.checker.traces.trace import TraceError, replay, replay_cti, views_of

        try:
            data = itf.read(Path(path))
            trace = itf.from_itf(self.spec, data, str(path))
            trace.views = views_of(self.spec)
            if trace.actions is None:
                trace.actions = find_actions(self.spec, trace)
            rows = replay_cti(self.spec, trace) if trace.is_cti else replay(self.spec, trace)
        except TraceError as e:
            raise SessionError(f"{path}: does not replay: {e}") from None
        with self.lock:
            self.trace, self.trace_rows = trace, [np.asarray(r, self.layout.dtype) for r in rows]
            self.trace_name = Path(path).name
            self.version += 1

    # -- what the page shows -----------------------------------------------------------------

    def title(self) -> str:
        from hwcheck.checker.traces.text import params_line

        views = protocol_of(self.spec).views
        return f"{self.spec.name} {params_line(self.spec.params, views)}"

    @property
    def current(self) -> np.ndarray:
        return self.path[-1][0]

    def successors(self, row: np.ndarray) -> list[dict[str, Any]]:
        """Every action instance with whether it is enabled in ``row``: the kernel's step, and
        the interpreter's, which must agree."""
        out = []
        for inst in self.instances:
            nxt = self.kernel.step(inst.index, row)
            refused = self.kernel.last_error
            item: dict[str, Any] = {"index": inst.index, "label": inst.label,
                                    "action": inst.action.name, "enabled": nxt is not None}
            try:
                ref = self.interp.step(inst, row)
            except ModelError as e:
                ref = None
                item["refused"] = str(e)
            if refused and "refused" not in item:
                item["refused"] = self.kernel.domain_errors.name(refused)
            if (nxt is None) != (ref is None) or (nxt is not None and ref is not None
                                                  and not np.array_equal(
                                                      nxt[:self.layout.width],
                                                      ref[:self.layout.width])):
                item["disagreement"] = ("the compiled kernel and the interpreter disagree on "
                                        "this step")
            out.append(item)
        return out

    def violations(self) -> dict[str, Any]:
        """The properties the current state (and the step into it) violate; the reachability
        checks it satisfies; whether it is healthy."""
        row = self.current
        prev = self.path[-2][0] if len(self.path) > 1 else None
        # the names in each list; "healthy": a bool
        out: dict[str, Any] = {"invariants": [], "actions": [], "reached": [], "errors": []}
        for p in self.spec.invariants:
            self._judge(p.name, p.expr, row, None, out["invariants"], out["errors"], False)
        for a in self.spec.action_properties:
            if prev is not None:
                self._judge(a.name, a.expr, prev, row, out["actions"], out["errors"], False)
        for r in self.spec.reachables:
            if reads_next(r.expr):
                if prev is not None:
                    self._judge(r.name, r.expr, prev, row, out["reached"], out["errors"], True)
            else:
                self._judge(r.name, r.expr, row, None, out["reached"], out["errors"], True)
        if self.healthy is not None:
            out["healthy"] = self.interp.holds(self.healthy, row)
        return out

    def _judge(self, name: str, expr: Expr, row: np.ndarray, nxt: np.ndarray | None,
               into: list[str], errors: list[str], want: bool) -> None:
        try:
            if self.interp.holds(expr, row, nxt) == want:
                into.append(name)
        except ModelError as e:
            errors.append(f"{name}: {e}")

    def state(self) -> dict[str, Any]:
        """Everything the page shows, as JSON."""
        with self.lock:
            row = self.current
            prev = self.path[-2][0] if len(self.path) > 1 else None
            st = self.layout.to_dict(row)
            before = self.layout.to_dict(prev) if prev is not None else None
            out = {
                "title": self.title(), "spec": self.spec.name, "params": dict(self.spec.params),
                "version": self.version, "depth": len(self.path) - 1,
                "initials": len(self.starts), "initial": self._initial_index(),
                "path": [label for _, label in self.path[1:]],
                "state": st,
                "changed": [k for k in st if before is not None and before[k] != st[k]],
                "actions": self.successors(row),
                "properties": self.violations(),
                "trace": None,
            }
            if self.trace is not None:
                t = self.trace
                out["trace"] = {
                    "name": self.trace_name, "property": t.property, "kind": t.kind,
                    "cti": t.is_cti, "length": len(t.states) - 1,
                    "steps": [t.start_label] + list(t.actions or []),
                    "at": self._trace_position()}
            return out

    def _initial_index(self) -> int | None:
        """Which initial state the current path starts from (None: a loaded trace's CTI
        pre-state, which is none of them)."""
        for k, row in enumerate(self.starts):
            if np.array_equal(row, self.path[0][0]):
                return k
        return None

    def _trace_position(self) -> int | None:
        """The trace state the current path is (the path is the trace's prefix), if any."""
        n = len(self.path)
        if self.trace is None or n > len(self.trace_rows):
            return None
        for (row, label), i in zip(self.path, range(n)):
            if not np.array_equal(row, self.trace_rows[i]):
                return None
            if i and label != self.trace.labels[i - 1]:
                return None
        return n - 1

    # -- what the page does ------------------------------------------------------------------

    def step(self, action: object) -> None:
        """Take an action instance (its label or index) from the current state."""
        with self.lock:
            inst = self._instance(action)
            nxt = self.kernel.step(inst.index, self.current)
            if nxt is None:
                why = self.kernel.last_error
                raise SessionError(
                    f"{inst.label} is not enabled in the current state" if not why else
                    f"{inst.label} leaves the declared domains: "
                    f"{self.kernel.domain_errors.name(why)}", 409)
            self.path.append((nxt, inst.label))
            self.version += 1

    def back(self) -> None:
        with self.lock:
            if len(self.path) == 1:
                raise SessionError("already at the first state", 409)
            self.path.pop()
            self.version += 1

    def reset(self, initial: object = 0) -> None:
        """Go back to an initial state: the ``initial``-th in Init's order (the first by
        default)."""
        with self.lock:
            n = len(self.starts)
            if isinstance(initial, bool) or not isinstance(initial, int) \
                    or not 0 <= initial < n:
                raise SessionError(f"the spec has initial states 0..{n - 1}, "
                                   f"not {initial!r}")
            del self.path[1:]
            self.path[0] = (self.starts[initial].copy(), None)
            self.version += 1

    def jump(self, index: object) -> None:
        """Make the loaded trace's first ``index`` steps the current path."""
        with self.lock:
            if self.trace is None:
                raise SessionError("no trace is loaded (start the explorer with --trace FILE)",
                                   409)
            if isinstance(index, bool) or not isinstance(index, int) \
                    or not 0 <= index < len(self.trace_rows):
                raise SessionError(f"the trace has states 0..{len(self.trace_rows) - 1}, "
                                   f"not {index!r}")
            self.path = [(self.trace_rows[0].copy(), None)] + [
                (self.trace_rows[i].copy(), self.trace.labels[i - 1])
                for i in range(1, index + 1)]
            self.version += 1

    def _instance(self, action: object) -> Instance:
        if isinstance(action, bool) or not isinstance(action, (int, str)):
            raise SessionError(f"an action is a label or an index, not {action!r}")
        if isinstance(action, int):
            if not 0 <= action < len(self.instances):
                raise SessionError(f"no action instance {action} (0..{len(self.instances) - 1})")
            return self.instances[action]
        try:
            return self.interp.instance(action)
        except SpecError:
            raise SessionError(f"unknown action {action!r}") from None

    # -- the protocol's drawing ----------------------------------------------------------------

    def view(self) -> str:
        """The current state as an HTML document: the protocol's trace page of the path so far
        (its last row is the current state) where the protocol draws traces, else a table of
        the current state's variables with what the last step changed marked."""
        from html import escape

        with self.lock:
            st = self.layout.to_dict(self.current)
            prev = self.layout.to_dict(self.path[-2][0]) if len(self.path) > 1 else None
        views = protocol_of(self.spec).views
        if views.html is not None:  # the trace page of the path so far
            from hwcheck.checker.traces.trace import Trace

            with self.lock:
                path = [(self.layout.to_dict(row), lbl) for row, lbl in self.path]
                cti = self.trace is not None and self.trace.is_cti and \
                    np.array_equal(self.path[0][0], self.trace_rows[0])
            steps = [lbl for _, lbl in path[1:] if lbl is not None]  # each step has its label
            trace = Trace(self.spec.name, dict(self.spec.params), "explorer", None, "invariant",
                          steps, [d for d, _ in path],
                          {"cti": True} if cti else {}, views=views)
            n = len(path) - 1
            return views.html(trace, f"the path so far: {n} step{'s' if n != 1 else ''} "
                                     f"(the current state is the last row)", "")
        changed = ' class="changed"'
        rows = "".join(
            f"<tr{changed if prev is not None and prev[k] != v else ''}>"
            f"<th>{escape(k)}</th><td>{escape(_show(v))}</td></tr>" for k, v in st.items())
        return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><style>"
                "body{font-family:monospace;margin:8px}td,th{border:1px solid #ccc;"
                "padding:3px 6px;text-align:left}tr.changed td{background:#ffe066}</style>"
                f"</head><body><table>{rows}</table></body></html>\n")


def _show(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + " ".join(_show(x) for x in v) + "]"
    return str(v)
