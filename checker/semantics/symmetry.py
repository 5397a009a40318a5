"""A protocol's declared symmetry, checked, and the canonical form of a state under it.

A protocol may declare (``spec.protocol.Symmetry``) that renaming its members by any
permutation maps states to states, actions to actions and properties to themselves: for each
variable, the dimensions indexed by a member (``dims``), the variables holding a member's id
(``ids``, negative = none) and those a renaming leaves alone (``other``). The Z3 checks use it
to cut the induction step to one case per orbit; the explicit-state engines (``check
--symmetry``) keep one representative state per orbit.

The canonical form of a state is computed inside the compiled kernel on every successor
(``canon_source`` generates it). It is exact: every state of an orbit gets the same
representative, so the number of representatives the search stores is the number of orbits.
Two methods, both exact:

* ``sort`` (when every member-indexed variable has one member dimension): members that an id
  variable names are numbered first, in the order the id cells name them; the others follow,
  sorted by their slice (every cell indexed by that member, a fixed order of cells). The result
  is the least row, over all permutations, in the order "id cells first, then member 0's slice,
  member 1's, ..., then the rest": the ids fix the named members' new numbers, and the least
  sequence of the remaining slices is the sorted one. Members with equal slices that no id
  names are interchangeable, so ties cannot make two representatives.
* ``perms`` (any declaration): the least row, in layout order, over all R! permutations
  applied to the row (precomputed as a gather table), with an early exit in each comparison.

Nothing here runs per state in Python: ``canon_source`` is numba source, and ``plan`` only
precomputes its tables.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from hwcheck.spec.lang import Spec, SpecError

from hwcheck.checker.semantics.layout import Layout

METHODS = ("auto", "sort", "perms")
MAX_PERMS = 40320  # 8!: beyond this the permutation tables would be larger than the state space


def symmetry_of(spec: Spec) -> dict | None:
    """The protocol's declared symmetry for ``spec``, as a dict (``Symmetry.as_dict``); None if
    the protocol declares none (or the spec was built by hand)."""
    fn = getattr(spec.protocol, "symmetry", None)
    return fn(spec).as_dict() if fn is not None else None


def check_symmetry(spec: Spec, symmetry: dict, member_params: bool = False) -> None:
    """Refuse (SpecError, one line) a declaration under which a reduction would not be sound:
    every variable in exactly one of dims, ids and other; a dims entry names dimensions of the
    members' size; an id variable holds a member id or a negative value. With
    ``member_params`` (or when the declaration says ``params="member"``), every action
    parameter must range over the members."""
    n = symmetry["size"]
    groups = [set(symmetry["dims"]), set(symmetry["ids"]), set(symmetry["other"])]
    names = {v.name for v in spec.variables}
    for g in groups:
        unknown = sorted(g - names)
        if unknown:
            raise SpecError(f"symmetry: {spec.name} has no variable {unknown[0]!r}")
    for v in spec.variables:
        k = sum(v.name in g for g in groups)
        if k != 1:
            raise SpecError(f"symmetry: variable {v.name} is listed {k} times (dims, ids, other);"
                            " every variable must be in exactly one")
        if v.name in symmetry["dims"]:
            dims = tuple(symmetry["dims"][v.name])
            if not dims or len(set(dims)) != len(dims) or any(
                    not 0 <= d < len(v.shape) or v.shape[d] != n for d in dims):
                raise SpecError(f"symmetry: {v.name} has no dimension of size {n} at "
                                f"{list(dims)} (its shape is {list(v.shape)})")
        if v.name in symmetry["ids"] and v.hi > n - 1:
            raise SpecError(f"symmetry: {v.name} holds values up to {v.hi}, not only member ids "
                            f"(0..{n - 1}) or negative values")
    if member_params or symmetry.get("params") == "member":
        for a in spec.actions:
            for p in a.params:
                if p.size != n:
                    raise SpecError(f"symmetry: a parameter of {a.name} is not a member")


def declared(spec: Spec) -> dict:
    """The checked symmetry a run with ``--symmetry`` uses; a SpecError (one line) if the
    protocol declares none or declares one that does not cover the spec."""
    sym = symmetry_of(spec)
    if sym is None:
        who = spec.protocol.name if spec.protocol is not None else spec.name
        raise SpecError(f"--symmetry: {who} declares no symmetry")
    check_symmetry(spec, sym)
    return sym


def _cells(var, layout: Layout, dim: int, member: int) -> list[int]:
    """The row positions of ``var``'s cells whose index in dimension ``dim`` is ``member``."""
    out = []
    for idx in itertools.product(*(range(d) for d in var.shape)):
        if idx[dim] == member:
            out.append(layout.cell(var, idx))
    return out


def permute_row(spec: Spec, layout: Layout, row, perm, symmetry: dict) -> np.ndarray:
    """The state ``row`` with member r renamed to perm[r] (any member dimensions)."""
    out = np.array(row, copy=True)
    for v in spec.variables:
        off = layout.offsets[v.name]
        if v.name in symmetry["dims"]:
            dims = set(symmetry["dims"][v.name])
            for idx in itertools.product(*(range(d) for d in v.shape)):
                new = tuple(perm[i] if d in dims else i for d, i in enumerate(idx))
                out[layout.cell(v, new)] = row[layout.cell(v, idx)]
        elif v.name in symmetry["ids"]:
            for i in range(v.size):
                x = int(row[off + i])
                out[off + i] = perm[x] if x >= 0 else x
    return out


@dataclass(frozen=True)
class Plan:
    """The tables of one canonical form: which method, and the positions it reads."""

    method: str  # "sort" | "perms"
    size: int
    ids: tuple  # row positions of the id cells, in comparison order
    slices: tuple  # sort: per member, the row positions of its slice (same order for each)
    perms: tuple  # perms: every permutation (new number of each old member), identity first
    src: tuple  # perms: per permutation, the row position each cell's value comes from


def plan(spec: Spec, layout: Layout, symmetry: dict, method: str = "auto") -> Plan:
    """The canonical-form tables of ``symmetry`` (already checked) for ``layout``."""
    if method not in METHODS:
        raise ValueError(f"unknown canonical-form method {method!r}")
    n = symmetry["size"]
    ids = []
    for v in spec.variables:
        if v.name in symmetry["ids"]:
            off = layout.offsets[v.name]
            ids.extend(range(off, off + v.size))
    separable = all(len(d) == 1 for d in symmetry["dims"].values())
    if method == "auto":
        method = "sort" if separable else "perms"
    if method == "sort":
        if not separable:
            raise ValueError("the sort method needs one member dimension per variable")
        slices = [[] for _ in range(n)]
        for v in spec.variables:
            if v.name in symmetry["dims"]:
                (dim,) = symmetry["dims"][v.name]
                for r in range(n):
                    slices[r].extend(_cells(v, layout, dim, r))
        return Plan("sort", n, tuple(ids), tuple(map(tuple, slices)), (), ())
    count = 1
    for i in range(2, n + 1):
        count *= i
    if count > MAX_PERMS:
        raise SpecError(f"symmetry: {n} members have {count:,} permutations; the canonical "
                        f"form by permutations takes at most {MAX_PERMS:,}")
    perms, srcs = [], []
    for perm in itertools.permutations(range(n)):  # the identity first
        src = list(range(layout.stride))
        for v in spec.variables:
            if v.name in symmetry["dims"]:
                dims = set(symmetry["dims"][v.name])
                for idx in itertools.product(*(range(d) for d in v.shape)):
                    new = tuple(perm[i] if d in dims else i for d, i in enumerate(idx))
                    src[layout.cell(v, new)] = layout.cell(v, idx)
        perms.append(perm)
        srcs.append(tuple(src))
    return Plan("perms", n, tuple(ids), (), tuple(perms), tuple(srcs))


def _array(name: str, values, dtype: str = "int64") -> str:
    """A module-level constant array (numba freezes it into the compiled code)."""
    nested = [list(v) for v in values] if values and isinstance(values[0], tuple) else list(values)
    return f"{name} = np.array({nested!r}, np.{dtype})"


def canon_source(p: Plan) -> str:
    """Numba source defining ``canon(t, c, w)``: turn the row ``t`` into its canonical form in
    place (``c``: a scratch row, ``w``: ``SYM_WORK`` scratch int64s, both the caller's, so the
    kernel allocates nothing per state), and ``canonical(s)``: a canonical copy of ``s``."""
    n = p.size
    lines = [f"\n# -- canonical form under the declared symmetry: method {p.method}, "
             f"{n} members --",
             f"SYM_N = {n}",
             f"SYM_NIDS = {len(p.ids)}",
             _array("SYM_IDS", p.ids if p.ids else (0,))]
    if p.method == "sort":
        q = len(p.slices[0]) if p.slices else 0
        lines += [f"SYM_Q = {q}",
                  _array("SYM_SLICE", p.slices if q else tuple((0,) for _ in range(n))),
                  f"SYM_WORK = {2 * n}",
                  SORT_SOURCE]
    else:
        isid = [0] * len(p.src[0])
        for pos in p.ids:
            isid[pos] = 1
        lines += [f"SYM_P = {len(p.perms)}",
                  _array("SYM_PERMS", p.perms),
                  _array("SYM_SRC", p.src),
                  _array("SYM_ISID", tuple(isid), "int8"),
                  "SYM_WORK = 1",
                  PERMS_SOURCE]
    lines.append(CANONICAL_SOURCE)
    return "\n".join(lines)


SORT_SOURCE = '''

@njit(cache=True, inline="always")
def _slice_lt(t, a, b):
    """Member a's slice is less than member b's (lexicographically, early exit)."""
    for q in range(SYM_Q):
        x = t[SYM_SLICE[a, q]]
        y = t[SYM_SLICE[b, q]]
        if x != y:
            return x < y
    return False


@njit(cache=True)
def canon(t, c, w):
    """``t`` becomes its canonical form: members named by the id cells first (in the order
    named), then the others sorted by slice. w[0:N]: the new number of each member;
    w[N:2N]: the unnamed members, being sorted."""
    for r in range(SYM_N):
        w[r] = -1
    nxt = 0
    for q in range(SYM_NIDS):
        x = t[SYM_IDS[q]]
        if x >= 0 and w[x] < 0:
            w[x] = nxt
            nxt += 1
    nf = 0
    for r in range(SYM_N):
        if w[r] < 0:
            w[SYM_N + nf] = r
            nf += 1
    for i in range(1, nf):  # insertion sort: at most a handful of members
        a = w[SYM_N + i]
        j = i - 1
        while j >= 0 and _slice_lt(t, a, w[SYM_N + j]):
            w[SYM_N + j + 1] = w[SYM_N + j]
            j -= 1
        w[SYM_N + j + 1] = a
    same = True
    for i in range(nf):
        w[w[SYM_N + i]] = nxt + i
    for r in range(SYM_N):
        if w[r] != r:
            same = False
    if same:
        return
    _copy(t, c)
    for r in range(SYM_N):
        nr = w[r]
        if nr != r:
            for q in range(SYM_Q):
                c[SYM_SLICE[nr, q]] = t[SYM_SLICE[r, q]]
    for q in range(SYM_NIDS):
        x = t[SYM_IDS[q]]
        if x >= 0:
            c[SYM_IDS[q]] = w[x]
    _copy(c, t)
'''

PERMS_SOURCE = '''

@njit(cache=True, inline="always")
def _perm_cell(t, p, j):
    """Cell j of the row ``t`` renamed by permutation p."""
    v = t[SYM_SRC[p, j]]
    if SYM_ISID[j] != 0 and v >= 0:
        v = SYM_PERMS[p, v]
    return v


@njit(cache=True)
def canon(t, c, w):
    """``t`` becomes the least row, in layout order, over every permutation applied to it."""
    best = 0
    for p in range(1, SYM_P):
        for j in range(STRIDE):
            x = _perm_cell(t, p, j)
            y = _perm_cell(t, best, j)
            if x != y:
                if x < y:
                    best = p
                break
    if best == 0:
        return
    for j in range(STRIDE):
        c[j] = _perm_cell(t, best, j)
    _copy(c, t)
'''

CANONICAL_SOURCE = '''

@njit(cache=True)
def canonical(s):
    """A canonical copy of the row ``s``."""
    t = s.copy()
    canon(t, np.empty(STRIDE, DTYPE), np.empty(SYM_WORK, np.int64))
    return t
'''
