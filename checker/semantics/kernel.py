"""Loads the compiled kernel of a spec: generated source, written once to the cache, numba-compiled.

The generated module is a real file (``$HWCHECK_CACHE/kernels/k_<hash>.py``, default
``~/.cache/hwcheck``) so numba's on-disk cache can keep its machine code: the first run of a
configuration compiles for some seconds, later runs load in about one. The file name is a hash
of the source and of ``checker/semantics/fingerprint.py``, so a changed spec or run-time never
meets a stale cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from hwcheck.checker.environment import EnvironmentFault
from hwcheck.checker.semantics.codegen import generate, source_key
from hwcheck.checker.semantics.exprgen import DomainErrors
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.semantics.signatures import (
    CheckArgs,
    DedupArgs,
    ExactArgs,
    Properties,
    SplitArgs,
    StepArgs,
)
from hwcheck.spec.lang import Spec, SpecError


def cache_dir() -> Path:
    from hwcheck.checker import _cache

    return _cache


_loaded: dict[tuple[str, str], Any] = {}


def _load(src: str) -> Any:
    return load_generated(src, "kernels", "k", "hwcheck_kernel")


def load_generated(src: str, sub: str, prefix: str, modname: str) -> Any:
    """The generated module of source ``src``, written once (atomically) to the cache folder
    ``sub`` as ``<prefix>_<hash>.py`` and imported as ``<modname>_<hash>``: a real file, so
    numba's disk cache keeps its machine code, and one name in every process (numba's cached
    code refers to its module by name). The kernel, the graph kernel and the simulation
    kernel are each one of these."""
    key = source_key(src)
    if (sub, key) in _loaded:
        return _loaded[(sub, key)]
    folder = cache_dir() / sub
    path = folder / f"{prefix}_{key}.py"
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
    mod = _import(path, f"{modname}_{key}")
    _loaded[(sub, key)] = mod
    return mod


_held = threading.local()  # the compile locks this thread holds (a nested warm takes none again)


@contextlib.contextmanager
def compile_lock(path: Path) -> Iterator[None]:
    """Held while a generated module's functions are compiled into numba's disk cache: one
    process compiles them and any other that needs them at that time (another test worker,
    another run of the same configuration) waits and then loads what it wrote, instead of
    compiling the same functions beside it. ``path``: the module's file; the lock is a file
    beside it (``.lock``), released by the system if its holder dies. A cache that cannot
    be written compiles without it."""
    held = getattr(_held, "paths", None)
    if held is None:
        held = _held.paths = set()
    if path in held:
        yield
        return
    try:
        fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(path)
        try:
            yield
        finally:
            held.discard(path)
    finally:
        os.close(fd)  # releases the lock


def _import(path: Path, name: str) -> ModuleType:
    """The generated module at ``path``, under the one name every process gives it."""
    if name in sys.modules:
        return sys.modules[name]
    mspec = importlib.util.spec_from_file_location(name, path)
    assert mspec is not None and mspec.loader is not None  # a .py file always has both
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[name] = mod
    mspec.loader.exec_module(mod)
    return mod


class Kernel:
    """The compiled functions of one spec, plus what the engines need to call them.

    With ``symmetry`` the kernel keeps one state per orbit of the protocol's declared symmetry
    (``checker.semantics.symmetry``): every successor the expansion emits, and ``start``, are
    canonical representatives. ``step`` stays concrete (traces replay real states). A protocol
    that declares no symmetry, or one that does not cover the spec, is a SpecError.
    ``canon_method``: "auto" (sorting where that is exact, else every permutation), "sort",
    "compare" (sorting without packed keys) or "perms" (tests compare them)."""

    def __init__(self, spec: Spec, symmetry: bool = False, canon_method: str = "auto"):
        self.spec = spec
        self.layout = Layout.of(spec)
        self.props = Properties.of(spec)
        self.instances = spec.instances()
        self.symmetry = None  # the declared symmetry (a dict) when the kernel reduces by it
        self.canon_plan = None
        if symmetry:
            from hwcheck.checker.semantics import symmetry as sym

            self.symmetry = sym.declared(spec)
            self.canon_plan = sym.plan(spec, self.layout, self.symmetry, canon_method)
        errors = DomainErrors()
        self.fails: dict[str, bool] = {}  # which generated functions have a run-time check
        self.source = generate(spec, self.layout, errors, self.canon_plan, self.fails)
        self.domain_errors = errors  # code -> DomainError(variable, action or property)
        self.key = source_key(self.source)
        self.mod = _load(self.source)

    @property
    def stride(self) -> int:
        return self.layout.stride

    @property
    def dtype(self) -> DTypeLike:
        return self.layout.dtype

    @property
    def ninst(self) -> int:
        return len(self.instances)

    @property
    def nerrors(self) -> int:
        """The size of the domain-error arrays (codes 1..nerrors-1; 0 means none)."""
        return len(self.domain_errors.entries)

    @property
    def act_dtype(self) -> DTypeLike:
        """The dtype of an action instance index: one byte while there are fewer than 256."""
        return act_dtype_of(self.ninst)

    def error_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(err, dom_row, dom_inst) for a kernel call: no error yet."""
        n = self.nerrors
        return np.zeros(1, np.int64), np.full(n, -1, np.int64), np.full(n, -1, np.int64)

    @cached_property
    def initials(self) -> np.ndarray:
        """The initial states, one row each: Init's allowed choices in order, each state once
        (one row unless Init chooses)."""
        rows: list[np.ndarray] = []
        seen: set[bytes] = set()
        self._init_generated = 0
        for k in range(self.mod.NINIT):
            err = np.zeros(1, np.int64)
            ok, row = self.mod.initial(k, err)
            if err[0]:
                raise SpecError(f"Init leaves the declared domains: "
                                f"{self.domain_errors.name(int(err[0]))}")
            self._init_generated += bool(ok)
            if ok and row.tobytes() not in seen:
                seen.add(row.tobytes())
                rows.append(row)
        if not rows:
            raise SpecError("Init: no choice satisfies its guard and its conditions, so there is "
                            "no initial state")
        return np.stack(rows)

    @property
    def init_generated(self) -> int:
        """Init's allowed choices, a state chosen twice counted twice (what TLC counts as the
        initial states generated)."""
        _ = self.initials
        return self._init_generated

    @property
    def initial(self) -> np.ndarray:
        """The first initial state (the only one unless Init chooses)."""
        first: np.ndarray = self.initials[0]
        return first

    @property
    def symmetric(self) -> bool:
        """Whether the search keeps one representative per orbit (counts are orbits)."""
        return self.symmetry is not None

    @cached_property
    def starts(self) -> np.ndarray:
        """The rows the search starts from: the initial states, canonical under symmetry, one
        row per state the search tells apart (per orbit; per view under a VIEW), in order.
        Engines that keep fingerprints only drop any whose fingerprint an earlier one has."""
        rows: list[np.ndarray] = []
        seen: set[bytes] = set()
        for row in self.initials:
            c = self.canonical(row)
            key = np.ascontiguousarray(self.layout.identity(c)).tobytes()
            if key not in seen:
                seen.add(key)
                rows.append(c)
        return np.stack(rows)

    @property
    def start(self) -> np.ndarray:
        """The first of ``starts``."""
        first: np.ndarray = self.starts[0]
        return first

    def canonical(self, row: np.ndarray) -> np.ndarray:
        """The representative of ``row``'s orbit (a copy of ``row`` without symmetry)."""
        row = np.ascontiguousarray(row, dtype=self.dtype)
        out: np.ndarray = self.mod.canonical(row) if self.symmetric else row.copy()
        return out

    def state_fingerprint(self, row: np.ndarray) -> int:
        """The fingerprint the engines record for the state ``row``: of its representative
        under symmetry, of the row itself otherwise."""
        return self.fingerprint(self.canonical(row) if self.symmetric else row)

    def fingerprint(self, row: np.ndarray) -> int:
        from hwcheck.checker.semantics.fingerprint import fingerprint

        return int(fingerprint(self.layout.identity(row)))

    def step(self, inst: int, row: np.ndarray) -> np.ndarray | None:
        """The successor of ``row`` by instance ``inst``; None when the instance is disabled or
        the step leaves the declared domains (``step_error`` tells which)."""
        t = np.empty(self.stride, self.dtype)
        err = np.zeros(1, np.int64)
        ok = self.mod.step(inst, np.ascontiguousarray(row, self.dtype), t, err)
        self.last_error = int(err[0])
        return t if ok else None

    def taken(self, inst: int, row: np.ndarray) -> np.ndarray:
        """The successor of ``row`` by ``inst``, a step the search took (a transition
        property's hit): disabled there, it is an internal error, said."""
        t = self.step(inst, row)
        if t is None:
            raise RuntimeError(f"instance {inst} is disabled in a state the search took it from")
        return t

    def warm(self, *parts: str, say: Callable[[str], None] | None = None) -> None:
        """Compile (or load from the disk cache) the kernel functions an engine will call, so
        that the engine's clock does not count compilation. ``parts``: "local" (the fused
        expand-and-dedup), "exact" (the same, keeping every state), "parallel" (the
        expansion of several workers, which routes successors to their owners: one compiled
        function for every number of workers), "step"; default: "local" and "step".

        When a part has never been compiled for this kernel, ``say`` (a line of text) is told
        so first, and on a machine with more than one core a helper process compiles the
        other entry points (initial state, state predicates, step, half of the actions, and
        ``canonical`` for a symmetric kernel) while this one compiles the expand kernel (with
        ``canon`` inside it when symmetric); the two meet in numba's disk cache. The helper
        imports this kernel's own module file, so it compiles the same symmetric or
        non-symmetric source."""
        parts = parts or ("local", "step")
        missing = [p for p in parts if not self._marker(p).exists()]
        if not missing:
            self._warm(parts)  # numba loads them from its disk cache
            return
        if say is not None:
            guess = _estimate(missing)
            say("compiling the kernel for this configuration (first run: "
                + (f"about {guess:.0f} s" if guess else "some seconds")
                + "; cached after that)...")
        with compile_lock(cache_dir() / "kernels" / f"k_{self.key}.py"):
            self._compile(parts)

    def _compile(self, parts: tuple[str, ...]) -> None:
        """``warm``'s compile, under the kernel's compile lock: a part another process compiled
        meanwhile is loaded, not compiled again."""
        missing = [p for p in parts if not self._marker(p).exists()]
        t0 = time.perf_counter()
        helper = self._start_helper() if any(_expand_of(p) for p in missing) else None
        try:
            self._warm(parts, helper)
        finally:
            if helper is not None and helper.poll() is None:
                helper.kill()
                helper.wait()
        seconds = time.perf_counter() - t0
        for p in missing:
            try:
                self._marker(p).write_text(f"{seconds:.2f}\n")
            except OSError:  # a read-only cache still runs; it only says this again
                pass

    def _marker(self, part: str) -> Path:
        """Exists once ``part`` of this kernel has been compiled into the cache; holds the
        seconds it took."""
        return cache_dir() / "kernels" / f"k_{self.key}.{part}.compiled"

    def _start_helper(self) -> subprocess.Popen[bytes] | None:
        # HWCHECK_COMPILE_HELPER=0: no helper (the cores are busy anyway, as under a parallel
        # test run: a helper would only compile what this process compiles too)
        if len(_cores()) < 2 or not sys.executable \
                or os.environ.get("HWCHECK_COMPILE_HELPER") == "0":
            return None
        path = cache_dir() / "kernels" / f"k_{self.key}.py"
        try:
            return subprocess.Popen(
                [sys.executable, "-c", "import sys; from hwcheck.checker.semantics.kernel "
                 "import precompile; precompile(sys.argv[1], sys.argv[2], int(sys.argv[3]))",
                 str(path), self.key, str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:  # no helper: this process compiles everything
            return None

    def _warm(self, parts: Iterable[str],
              helper: subprocess.Popen[bytes] | None = None) -> None:
        from hwcheck.checker.semantics.fingerprint import fingerprint

        for part in parts:  # the long ones first: the helper does the rest
            name = _expand_of(part)
            if name is not None:
                getattr(self.mod, name)(*_samples(self.mod)[name])
        args = _samples(self.mod)
        if helper is not None:
            try:
                helper.wait(timeout=HELPER_WAIT)
            except subprocess.TimeoutExpired:  # compile here whatever it has not
                pass
        fingerprint(self.initial)
        if self.symmetric:
            self.mod.canonical(self.initial)
        self.mod.check_states(*args["check_states"])
        if "step" in parts:
            self.step(0, self.initial)


# The expand kernel of each part of ``Kernel.warm``.
EXPAND = {"local": "expand_dedup", "exact": "expand_exact", "parallel": "expand_split"}


def _expand_of(part: str) -> str | None:
    return EXPAND.get(part)
HELPER_WAIT = 120.0  # seconds the engine's process waits for the compile helper at most


def _cores() -> set[int]:
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def _samples(mod: ModuleType) -> dict[str, tuple[Any, ...]]:
    """For each entry point of a kernel module, arguments of the types the engines pass (no
    row is read: lo = hi = 0, n = 0); ``expand_split``'s for two owners, of the types every
    number of owners has."""
    from hwcheck.checker.semantics.fingerprint import table_refs

    stride, dtype, ninst, nerr = mod.STRIDE, mod.DTYPE, mod.NINST, mod.NERRORS
    ns = max(sum(name.startswith("sp_") for name in vars(mod)), 1)
    nt = max(sum(name.startswith("tp_") for name in vars(mod)), 1)
    row = np.zeros(stride, dtype)
    one = np.zeros((1, stride), dtype)
    err, dom_row, dom_inst = (np.zeros(1, np.int64), np.full(nerr, -1, np.int64),
                              np.full(nerr, -1, np.int64))
    out = np.empty((ninst, stride), dtype)
    par, act, fps = (np.empty(ninst, np.int32), np.empty(ninst, act_dtype_of(ninst)),
                     np.empty(ninst, np.uint64))
    tp: dict[str, Any] = dict(tp_active=np.zeros(nt, np.bool_), tp_row=np.full(nt, -1, np.int64),
              tp_inst=np.full(nt, -1, np.int64), err=err, dom_row=dom_row, dom_inst=dom_inst,
              cov=np.zeros(max(ninst, 1), np.int64))
    table = np.zeros(16, np.uint64)
    level: dict[str, Any] = dict(front=one, lo=0, hi=0, table=table, max_fill=8, filled=0,
                                 out=out, par=par, act=act, fps=fps, **tp)
    return {
        "initial": (0, err),
        "check_states": CheckArgs(rows=one, n=0, active=np.zeros(ns, np.bool_),
                                  hits=np.full(ns, -1, np.int64), err=err, dom_row=dom_row),
        "step": StepArgs(inst=0, s=row, t=row.copy(), err=err),
        "expand_dedup": DedupArgs(**level),
        "expand_exact": ExactArgs(**level, slots=np.zeros(16, np.int64), store=out, nstored=0),
        "expand_split": SplitArgs(front=one, lo=0, hi=0, tables=table_refs([table, table]),
                                  o_rows=np.empty((2, ninst, stride), dtype).view(np.uint64),
                                  o_par=np.empty((2, ninst), np.int32),
                                  o_act=np.empty((2, ninst), act_dtype_of(ninst)),
                                  o_fps=np.empty((2, ninst), np.uint64),
                                  o_n=np.zeros(2, np.int64), **tp),
    }


def precompile(path: str, key: str, parent: int | None = None) -> None:
    """What the compile helper of ``Kernel.warm`` runs: compile, into numba's disk cache and
    without running any of them, the guards and effects from the last action back (the
    engine's process compiles them from the first, inside its expand kernel), then the
    initial state, the state predicates and ``step`` (and ``canonical`` when the module is a
    symmetric kernel's). ``parent``: the engine's process; once it is gone (killed before it
    could end this one), this ends before its next compile, so that no helper outlives it."""
    import inspect

    from numba import typeof

    def orphaned() -> bool:
        return parent is not None and os.getppid() != parent

    mod = _import(Path(path), f"hwcheck_kernel_{key}")
    args = _samples(mod)
    row, err = np.zeros(mod.STRIDE, mod.DTYPE), np.zeros(1, np.int64)
    actions = sorted(int(name[2:]) for name in vars(mod) if name.startswith("g_")
                     and name[2:].isdigit())
    for ai in reversed(actions):
        for name in (f"e_{ai}", f"g_{ai}"):
            if orphaned():
                return
            f = getattr(mod, name)
            params = len(inspect.signature(f.py_func).parameters) - 2  # (s or t, p..., err)
            f.compile(tuple(typeof(x) for x in (row, *[0] * params, err)))
    for name in ("initial", "check_states", "step"):
        if orphaned():
            return
        getattr(mod, name).compile(tuple(typeof(x) for x in args[name]))
    if hasattr(mod, "canonical"):  # a symmetric kernel (its module is the one with canon)
        mod.canonical.compile((typeof(row),))


def act_dtype_of(ninst: int) -> DTypeLike:
    """The dtype of an action instance index: one byte while there are fewer than 256."""
    return np.uint8 if ninst < 256 else np.uint16


def _estimate(parts: Iterable[str]) -> float | None:
    """Seconds the last compile of these parts took on this machine (another kernel's); None
    if none is known."""
    folder = cache_dir() / "kernels"
    seconds = []
    for p in parts:
        try:
            last = max(folder.glob(f"k_*.{p}.compiled"), key=lambda f: f.stat().st_mtime)
            seconds.append(float(last.read_text()))
        except (ValueError, OSError):
            pass
    return max(seconds, default=None)
