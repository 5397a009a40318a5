"""Loads the compiled kernel of a spec: generated source, written once to the cache, numba-compiled.

The generated module is a real file (``$HWCHECK_CACHE/kernels/k_<hash>.py``, default
``~/.cache/hwcheck``) so numba's on-disk cache can keep its machine code: the first run of a
configuration compiles for some seconds, later runs load in about one. The file name is a hash
of the source and of ``checker/semantics/fingerprint.py``, so a changed spec or run-time never meets a stale cache.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from functools import cached_property
from pathlib import Path

import numpy as np

from hwcheck.checker.environment import EnvironmentFault
from hwcheck.spec.lang import Spec, SpecError

from hwcheck.checker.semantics.codegen import DomainErrors, Properties, generate, source_key
from hwcheck.checker.semantics.layout import Layout


def cache_dir() -> Path:
    from hwcheck.checker import _cache

    return _cache


_loaded: dict[str, object] = {}


def _load(src: str):
    key = source_key(src)
    if key in _loaded:
        return _loaded[key]
    folder = cache_dir() / "kernels"
    path = folder / f"k_{key}.py"
    if not path.exists():
        tmp = None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                f.write(src)
            os.replace(tmp, path)  # atomic: concurrent processes never see half a file
        except OSError as e:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)  # never leave a stray temporary file
            raise EnvironmentFault(f"the kernel cache {folder} cannot be written "
                                   f"({e.strerror or e}); set HWCHECK_CACHE to a writable "
                                   "folder") from None
    name = f"hwcheck_kernel_{key}"
    mspec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[name] = mod
    mspec.loader.exec_module(mod)
    _loaded[key] = mod
    return mod


class Kernel:
    """The compiled functions of one spec, plus what the engines need to call them."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self.layout = Layout.of(spec)
        self.props = Properties.of(spec)
        self.instances = spec.instances()
        errors = DomainErrors()
        self.source = generate(spec, self.layout, errors)
        self.domain_errors = errors  # code -> DomainError(variable, action or property)
        self.key = source_key(self.source)
        self.mod = _load(self.source)

    @property
    def stride(self) -> int:
        return self.layout.stride

    @property
    def dtype(self):
        return self.layout.dtype

    @property
    def ninst(self) -> int:
        return len(self.instances)

    @property
    def nerrors(self) -> int:
        """The size of the domain-error arrays (codes 1..nerrors-1; 0 means none)."""
        return len(self.domain_errors.entries)

    @property
    def act_dtype(self):
        """The dtype of an action instance index: one byte while there are fewer than 256."""
        return np.uint8 if self.ninst < 256 else np.uint16

    def error_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(err, dom_row, dom_inst) for a kernel call: no error yet."""
        n = self.nerrors
        return np.zeros(1, np.int64), np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    @cached_property
    def initial(self) -> np.ndarray:
        err = np.zeros(1, np.int64)
        row = self.mod.initial(err)
        if err[0]:
            raise SpecError(f"Init leaves the declared domains: "
                            f"{self.domain_errors.name(int(err[0]))}")
        return row

    def fingerprint(self, row: np.ndarray) -> int:
        from hwcheck.checker.semantics.fingerprint import fingerprint

        return int(fingerprint(np.ascontiguousarray(row, dtype=self.dtype)))

    def step(self, inst: int, row: np.ndarray) -> np.ndarray | None:
        """The successor of ``row`` by instance ``inst``; None when the instance is disabled or
        the step leaves the declared domains (``step_error`` tells which)."""
        t = np.empty(self.stride, self.dtype)
        err = np.zeros(1, np.int64)
        ok = self.mod.step(inst, np.ascontiguousarray(row, self.dtype), t, err)
        self.last_error = int(err[0])
        return t if ok else None

    def warm(self, *parts: str) -> None:
        """Compile (or load from the disk cache) the kernel functions an engine will call, so
        that the engine's clock does not count compilation. ``parts``: "local" (the fused
        expand-and-dedup), "exact" (the same, keeping every state), "parallel" (every
        successor, for several workers), "step"; default: "local" and "step"."""
        from hwcheck.checker.semantics.fingerprint import fingerprint

        parts = parts or ("local", "step")
        fingerprint(self.initial)
        one = self.initial.reshape(1, -1).copy()
        ns, nt = len(self.props.state), len(self.props.transition)
        err, dom_row, dom_inst = self.error_arrays()
        self.mod.check_states(one, 1, np.zeros(max(ns, 1), np.bool_),
                              np.full(max(ns, 1), -1, np.int64), err, dom_row)
        out = np.empty((self.ninst, self.stride), self.dtype)
        par = np.empty(self.ninst, np.int32)
        act = np.empty(self.ninst, self.act_dtype)
        fps = np.empty(self.ninst, np.uint64)
        tp = (np.zeros(max(nt, 1), np.bool_), np.full(max(nt, 1), -1, np.int64),
              np.full(max(nt, 1), -1, np.int64))
        if "local" in parts:
            table = np.zeros(16, np.uint64)
            self.mod.expand_dedup(one, 0, 0, table, 8, 0, out, par, act, fps, *tp, err, dom_row,
                                  dom_inst)
        if "exact" in parts:
            table = np.zeros(16, np.uint64)
            self.mod.expand_exact(one, 0, 0, table, 8, 0, out, par, act, fps, *tp, err, dom_row,
                                  dom_inst, np.zeros(16, np.int64), out, 0)
        if "parallel" in parts:
            self.mod.expand_all(one, 0, 0, out, par, act, fps, *tp, err, dom_row, dom_inst)
        if "step" in parts:
            self.step(0, self.initial)
