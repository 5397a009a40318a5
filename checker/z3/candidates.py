"""Candidate lemmas for ``prove --infer``: templates over a spec's variables, and the filter that
keeps those true in every reachable state of an explored instance.

A candidate is a clause, universally quantified over bound index variables: a disjunction of
one to three literals. A literal compares two terms (``==``, ``!=``, ``<``, ``<=``), a term with
a constant of its domain, or says that a boolean term holds or not. A term is a scalar variable,
an array cell indexed by bound variables (each of the axis' index set), by a scalar the spec
uses as an index (``log[leader, k]``, guarded by ``leader >= 0`` where the scalar may be -1) or,
for index sets that no declared symmetry renames, by a constant; or a bound variable itself
(``k < hw[r]``). Under a declared symmetry the member axes (its ``dims``) form their own index
set: no candidate names a member by a constant, compares members by order or indexes a member
axis with a variable of another index set, so every candidate is invariant under renaming
members, which the prover's symmetry reduction needs.

The filter evaluates ground literals with numpy over the reachable rows (a column compare per
literal and binding, nothing per state in Python), packs each into a bit set over the distinct
valuations, and decides every clause of a bound set by OR-ing bit sets: a clause survives when
every binding's OR is all ones.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hwcheck.checker.semantics.layout import Layout
from hwcheck.spec.lang import (
    BOOL,
    Expr,
    Not,
    Quant,
    Read,
    Spec,
    _bound,
    conj,
    disj,
    lift,
)

# a term's index: ("b", bound number) | ("o", (bound number, offset)): the bound variable plus
# a constant | ("c", constant) | ("s", scalar variable name)
Index = tuple[str, object]

BOUND_NAMES = "ijkl"
EXTRA = 3  # the most cells an axis may add to the index set it extends


@dataclass(frozen=True)
class Term:
    """A cell read (``var`` with ``index``) or, with ``var`` None, bound variable ``bound``."""

    var: str | None
    index: tuple[Index, ...] = ()
    bound: int = -1

    def bounds(self) -> set[int]:
        if self.var is None:
            return {self.bound}
        return {int(v) if k == "b" else int(v[0])  # type: ignore[call-overload, index]
                for k, v in self.index if k in ("b", "o")}

    def scalars(self) -> list[str]:
        return [str(v) for k, v in self.index if k == "s"]


@dataclass(frozen=True)
class Literal:
    """``a op b`` (b a Term or an int constant); for a boolean term ``op`` is ``is``/``not``."""

    op: str
    a: Term
    b: Term | int | None = None

    def terms(self) -> tuple[Term, ...]:
        return (self.a, self.b) if isinstance(self.b, Term) else (self.a,)


@dataclass(frozen=True)
class Candidate:
    """A clause over bound index variables of sorts ``sizes``: forall bindings, some literal
    holds. A sort is the size n of an index set, negative (-n) for the members a declared
    symmetry renames. The last ``exists`` bound variables are existential, inside the others
    (``forall i: exists j: ...``: for every i some j makes a literal true)."""

    sizes: tuple[int, ...]
    literals: tuple[Literal, ...]
    exists: int = 0
    # with an existential conjunction: ``forall u: literals | exists e: conj[0] & conj[1] ...``
    # (``literals`` over the universal variables only, each of ``conj`` over the existential)
    conj: tuple[Literal, ...] = ()

    def quantifiers(self) -> list[str]:
        n = len(self.sizes)
        return ["forall" if b < n - self.exists else "exists" for b in range(n)]


class Vocabulary:
    """The terms and literals of a spec, per bound set (a tuple of sorts). ``symmetry``: the
    declared symmetry (its ``dims`` name the member axes of each variable, its ``ids`` the
    scalars that hold a member), or None."""

    def __init__(self, spec: Spec, index_scalars: Sequence[str],
                 symmetry: dict[str, Any] | None = None, consts: bool = True) -> None:
        self.spec = spec
        self.vars = {v.name: v for v in spec.variables}
        self.consts = consts
        dims = dict(symmetry["dims"]) if symmetry else {}
        ids = set(symmetry["ids"]) if symmetry else set()
        self.ids = ids  # variables whose values are members: compared for equality only
        self.axis = {v.name: tuple(-d if a in dims.get(v.name, ()) else d
                                   for a, d in enumerate(v.shape)) for v in spec.variables}
        self.sizes = sorted({s for sorts in self.axis.values() for s in sorts})
        # scalars used as indices, with the sorts they fit (their domain within -1..n-1; a
        # member id only the member sort, another scalar only the others)
        self.id_scalars = {x: [n for n in self.sizes
                               if self.vars[x].lo >= -1 and self.vars[x].hi <= abs(n) - 1
                               and (n < 0) == (x in ids)]
                           for x in index_scalars if not self.vars[x].shape}

    def domain(self, t: Term, sizes: tuple[int, ...]) -> tuple[int, int]:
        if t.var is None:
            return 0, abs(sizes[t.bound]) - 1
        v = self.vars[t.var]
        return v.lo, v.hi

    def comparable(self, a: Term, b: Term, sizes: tuple[int, ...]) -> bool:
        """Two integer terms are compared when they range over the same kind of values: cells
        whose domains start alike and end at most one apart, or start one apart and end alike
        (a value of ``1..n`` and a cell of ``0..n`` that keeps 0 for none: an epoch and the
        epoch of a log's record, 0 where there is no record), or a bound index variable of
        ``0..n-1`` and a cell of ``0..n`` (an offset and a log end, say) or a scalar the spec
        indexes with over the same index set."""
        if a.var is None and b.var is None:
            return False
        if a.var is None or b.var is None:
            bound, cell = (a, b) if a.var is None else (b, a)
            v = self.vars[str(cell.var)]
            n = sizes[bound.bound]
            return (v.lo == 0 and v.hi == abs(n)) or n in self.id_scalars.get(v.name, ())
        va, vb = self.vars[a.var], self.vars[b.var]
        if va.lo == vb.lo:
            return abs(va.hi - vb.hi) <= 1
        return va.hi == vb.hi and abs(va.lo - vb.lo) == 1 and min(va.lo, vb.lo) == 0

    def extends(self, d: int, sizes: tuple[int, ...]) -> int | None:
        """The index set (its size n) that an axis of ``d`` cells extends by at most
        ``EXTRA`` cells: the largest positive sort under ``d`` among the bound set's (or, with
        none bound, the vocabulary's); None when there is none. A renamed members' axis
        (negative) extends nothing."""
        if d <= 0:
            return None
        pool = [n for n in (sizes or self.sizes) if 0 < n < d and d - n <= EXTRA]
        return max(pool) if pool else None

    def sort(self, t: Term) -> str:
        return BOOL if t.var is not None and self.vars[t.var].sort == BOOL else "int"

    def terms(self, sizes: tuple[int, ...]) -> list[Term]:
        """Every term over the bound variables of ``sizes`` (each used or not)."""
        out: list[Term] = []
        for v in self.spec.variables:
            choices = []
            for d in self.axis[v.name]:
                opts: list[Index] = [("b", b) for b, n in enumerate(sizes) if n == d]
                # an axis that extends an index set (n cells one per member, then or after a
                # few more: the set of messages, one per member and the others, in the
                # values' order): a bound variable of that set reads the first n cells or
                # the last n, constants the cells beside them
                ext = self.extends(d, sizes) if len(v.shape) == 1 else None
                if ext is not None and sizes:
                    opts += [("b", b) for b, n in enumerate(sizes) if n == ext]
                    opts += [("o", (b, d - ext)) for b, n in enumerate(sizes) if n == ext]
                opts += [("s", s) for s, fits in self.id_scalars.items() if d in fits]
                if self.consts and d > 0:
                    # every constant of a small index set without bound variables; with them,
                    # in a variable of several dimensions, the first and the last (a log's
                    # first and last offsets); the cells an extended index set adds
                    if not sizes and d <= 3:
                        opts += [("c", c) for c in range(d)]
                    elif sizes and len(v.shape) > 1:
                        opts += [("c", c) for c in sorted({0, d - 1})]
                    elif ext is not None:
                        opts += [("c", c) for c in sorted({*range(ext, d), *range(d - ext)})]
                choices.append(opts)
            for idx in itertools.product(*choices):
                out.append(Term(v.name, tuple(idx)))
        for b, n in enumerate(sizes):
            if n > 0:  # a member is only compared for equality, never used as a number
                out.append(Term(None, (), b))
        return out

    def literals(self, sizes: tuple[int, ...]) -> list[Literal]:
        terms = self.terms(sizes)
        out: list[Literal] = []
        ints = [t for t in terms if self.sort(t) != BOOL]
        for t in terms:
            if self.sort(t) == BOOL:
                out += [Literal("is", t), Literal("not", t)]
                continue
            if t.var is None:
                continue  # a bound variable is compared with cells, not with constants
            lo, hi = self.domain(t, sizes)
            member = t.var in self.ids
            for c in range(lo, hi + 1):
                if member and c >= 0:
                    continue  # a member named by a constant: not symmetric
                out.append(Literal("==", t, c))
                out.append(Literal("!=", t, c))
                if lo < c < hi and not member:
                    out.append(Literal("<=", t, c))
                    out.append(Literal(">=", t, c))
        for a, b in itertools.combinations(ints, 2):
            if (a.var in self.ids) != (b.var in self.ids):
                continue  # a member against a number: not symmetric
            if not self.comparable(a, b, sizes):
                continue
            out += [Literal("==", a, b), Literal("!=", a, b)]
            if a.var not in self.ids:
                out += [Literal("<", a, b), Literal("<", b, a), Literal("<=", a, b),
                        Literal("<=", b, a)]
        for x, y in itertools.combinations(range(len(sizes)), 2):
            if sizes[x] == sizes[y]:
                ta, tb = Term(None, (), x), Term(None, (), y)
                out += [Literal("==", ta, tb), Literal("!=", ta, tb)]
                if sizes[x] > 0:
                    out += [Literal("<", ta, tb), Literal("<", tb, ta)]
        return out


def bound_sets(vocab: Vocabulary, nbounds: int, exists: int = 0) -> list[tuple[int, ...]]:
    """Sorted tuples of index-set sizes with at most ``nbounds`` entries; with ``exists``, the
    tuples of exactly ``nbounds`` entries whose last ``exists`` are existential, in every order
    (for each member some offset, for each offset some member), and at least one universal."""
    if exists:
        if nbounds <= exists:
            return []
        return [u + e for u in itertools.combinations_with_replacement(vocab.sizes,
                                                                        nbounds - exists)
                for e in itertools.product(vocab.sizes, repeat=exists)]
    return [s for k in range(nbounds + 1)
            for s in itertools.combinations_with_replacement(vocab.sizes, k)]


def existential_literals(sizes: tuple[int, ...], lits: Sequence[Literal],
                         exists: int) -> list[Literal]:
    """``lits`` less those some value of an existential variable satisfies whatever the state,
    so that every clause with them says nothing: a comparison of bound variables only
    (``exists j: j == i``), or one that the existential variable taken equal to a universal one
    of its sort makes a term's comparison with itself (``exists j: log[j, 0] == log[i, 0]``)."""
    return [lit for lit in lits if not _witnessed(sizes, lit, exists)]


def _witnessed(sizes: tuple[int, ...], lit: Literal, exists: int) -> list[int] | None:
    """The universal variables whose value, taken by the existential one, makes ``lit`` true
    whatever the state (a comparison of a term with itself; every one for a comparison of
    bound variables only); None when there is none."""
    first = len(sizes) - exists
    if all(t.var is None for t in lit.terms()):
        return list(range(first)) if any(t.bound >= first for t in lit.terms()) else None
    if not isinstance(lit.b, Term) or lit.op not in ("==", "<=", ">="):
        return None
    out = [u for e in range(first, len(sizes)) for u in range(first)
           if sizes[u] == sizes[e] and _rebind(lit.a, e, u) == _rebind(lit.b, e, u)]
    return out or None


def _rebind(t: Term, old: int, new: int) -> Term:
    """``t`` with bound variable ``old`` read as ``new``."""
    if t.var is None:
        return Term(None, (), new if t.bound == old else t.bound)
    return Term(t.var, tuple(("b", new) if k == "b" and x == old else
                             ("o", (new, x[1])) if k == "o" and x[0] == old  # type: ignore[index]
                             else (k, x) for k, x in t.index))


def uses_all(sizes: tuple[int, ...], lits: Sequence[Literal]) -> bool:
    """Every bound variable appears in some literal (else the clause is one with fewer)."""
    used: set[int] = set()
    for lit in lits:
        for t in lit.terms():
            used |= t.bounds()
    return used == set(range(len(sizes)))


# -- evaluation over reachable rows ---------------------------------------------------------------


class Evaluator:
    """Ground literals over a matrix of rows (one state a row), as numpy bool arrays."""

    def __init__(self, spec: Spec, layout: Layout, rows: np.ndarray) -> None:
        self.spec = spec
        self.layout = layout
        self.rows = rows
        self.n = rows.shape[0]
        self.vars = {v.name: v for v in spec.variables}
        self._cache: dict[tuple[Term, tuple[int, ...]], np.ndarray | int] = {}

    def term(self, t: Term, binding: tuple[int, ...]) -> np.ndarray | int:
        if t.var is None:
            return binding[t.bound]
        key = (t, tuple(binding[b] for b in sorted(t.bounds())))
        got = self._cache.get(key)
        if got is not None:
            return got
        v = self.vars[t.var]
        base = self.layout.offsets[v.name]
        flat: np.ndarray | int = 0
        for (kind, x), d in zip(t.index, v.shape):
            if kind == "b":
                i: np.ndarray | int = binding[int(x)]  # type: ignore[call-overload]
            elif kind == "o":
                i = binding[int(x[0])] + int(x[1])  # type: ignore[index]
            elif kind == "c":
                i = int(x)  # type: ignore[call-overload]
            else:
                s = self.vars[str(x)]
                i = np.clip(self.rows[:, self.layout.offsets[s.name]].astype(np.int64), 0, d - 1)
            flat = flat * d + i
        if isinstance(flat, int):
            out: np.ndarray = self.rows[:, base + flat].astype(np.int64)
        else:
            out = self.rows[np.arange(self.n), base + flat].astype(np.int64)
        self._cache[key] = out
        return out

    def literal(self, lit: Literal, binding: tuple[int, ...]) -> np.ndarray:
        a = self.term(lit.a, binding)
        if lit.op in ("is", "not"):
            val = np.asarray(a) != 0
            res = val if lit.op == "is" else ~val
        else:
            b = self.term(lit.b, binding) if isinstance(lit.b, Term) else lit.b
            x, y = np.asarray(a), np.asarray(b)
            res = np.asarray({"==": np.equal, "!=": np.not_equal, "<": np.less,
                              "<=": np.less_equal, ">=": np.greater_equal}[lit.op](x, y))
        # a read through a scalar that names no member (-1) is guarded by that scalar
        for s in set(lit.a.scalars() + (lit.b.scalars() if isinstance(lit.b, Term) else [])):
            res = res | (self.rows[:, self.layout.offsets[s]] < 0)
        return np.broadcast_to(res, (self.n,))


def _pack(bits: np.ndarray) -> np.ndarray:
    """bool [m, n] -> uint64 [m, ceil(n/64)], the padding bits set."""
    m, n = bits.shape
    pad = (-n) % 64
    if pad:
        bits = np.concatenate([bits, np.ones((m, pad), bool)], axis=1)
    return np.packbits(bits, axis=1, bitorder="little").view(np.uint64)


def survivors(ev: Evaluator, sizes: tuple[int, ...], lits: list[Literal], width: int,
              limit: int = 200_000, exists: int = 0) -> Iterator[Candidate]:
    """The clauses of up to ``width`` of ``lits`` over ``sizes`` that hold in every row (at
    most ``limit`` of them; the last ``exists`` bound variables existential). Clauses that
    contain a surviving smaller clause are not produced (they say less), nor clauses true for
    every value of their terms' declared domains (tautologies)."""
    bindings = list(itertools.product(*(range(abs(n)) for n in sizes)))
    if exists:
        lits = existential_literals(sizes, lits, exists)
    nl = len(lits)
    if not bindings or not nl:
        return
    # [literal, binding, words]: each ground literal as a bit set over the rows
    nw = (ev.n + 63) // 64
    words = np.empty((nl, len(bindings), nw), np.uint64)
    for li, lit in enumerate(lits):
        words[li] = _pack(np.stack([ev.literal(lit, b) for b in bindings]))
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    # the existential bindings vary fastest: OR-ed together per universal binding
    ne = int(np.prod([abs(n) for n in sizes[len(sizes) - exists:]])) if exists else 1

    def holds(w: np.ndarray) -> np.ndarray:
        """[..., binding, words] -> [...]: true where every universal binding holds."""
        if ne > 1:
            w = np.bitwise_or.reduce(w.reshape(w.shape[:-2] + (-1, ne, nw)), axis=-2)
        return np.asarray(np.all(w == full, axis=(-2, -1)))

    valid1 = np.array([bool(holds(words[i])) for i in range(nl)])
    count = 0

    def emit(idx: tuple[int, ...]) -> Candidate | None:
        chosen = [lits[i] for i in idx]
        if not uses_all(sizes, chosen) or _tautology(ev, sizes, chosen):
            return None
        return Candidate(sizes, tuple(chosen), exists)

    for i in range(nl):
        if valid1[i]:
            got = emit((i,))
            if got:
                count += 1
                yield got
    if width < 2:
        return
    alive = [i for i in range(nl) if not valid1[i]]
    pairs_ok: set[tuple[int, int]] = set()
    for ai, i in enumerate(alive):
        rest = np.array(alive[ai + 1:], dtype=np.int64)
        if not rest.size:
            break
        ok = holds(words[i][None] | words[rest])
        for j in rest[ok]:
            pairs_ok.add((i, int(j)))
            got = emit((i, int(j)))
            if got:
                count += 1
                if count > limit:
                    return
                yield got
    if width < 3:
        return
    for ai, i in enumerate(alive):
        for bj in range(ai + 1, len(alive)):
            j = alive[bj]
            if (i, j) in pairs_ok:
                continue
            rest = np.array([k for k in alive[bj + 1:] if (i, k) not in pairs_ok
                             and (j, k) not in pairs_ok], dtype=np.int64)
            if not rest.size:
                continue
            ok = holds((words[i] | words[j])[None] | words[rest])
            for k in rest[ok]:
                got = emit((i, j, int(k)))
                if got:
                    count += 1
                    if count > limit:
                        return
                    yield got


# -- existential conjunctions ---------------------------------------------------------------------


def conj_literals(sizes: tuple[int, ...], lits: Sequence[Literal]) -> list[Literal]:
    """The literals an existential conjunction is made of, over ``sizes`` whose last variable is
    the existential one: each reads it, says that two cells or a cell and a constant are equal
    or that a boolean cell holds or not (a witness is named by what it holds), and reads through
    no scalar (the clause's guard on a scalar that may name no member does not reach inside the
    conjunction)."""
    e = len(sizes) - 1
    return [lit for lit in lits if lit.op in ("==", "is", "not")
            and all(t.var is not None and not t.scalars() for t in lit.terms())
            and any(e in t.bounds() for t in lit.terms())]


def guard_literals(vocab: Vocabulary, sizes: tuple[int, ...],
                   lits: Sequence[Literal]) -> list[Literal]:
    """The literals that guard an existential conjunction: a boolean cell holds or not, or a
    cell is or is not the first value of its domain (0: none, no record, nothing in flight).
    Reads through a scalar are left out, as in the conjunction."""
    out = []
    for lit in lits:
        if lit.a.var is None or lit.a.scalars() or isinstance(lit.b, Term):
            continue
        if lit.op in ("is", "not") or (lit.op in ("==", "!=")
                                       and lit.b == vocab.domain(lit.a, sizes)[0]):
            out.append(lit)
    return out


def conj_survivors(ev: Evaluator, sizes: tuple[int, ...], guards: Sequence[Literal],
                   conj_lits: Sequence[Literal], width: int, k: int,
                   limit: int = 200_000, minimal: bool = True,
                   max_rows: int = 20_000) -> Iterator[Candidate]:
    """The clauses ``forall u: g | ... | exists e: c & ...`` that hold in every row: at most
    ``width - 1`` of ``guards`` (literals over the universal variables, ``sizes[:-1]``) and a
    conjunction of one to ``k`` of ``conj_lits`` (literals over ``sizes``, each reading the
    existential variable, ``sizes[-1]``).

    The conjunction at one universal binding (an *atom*: the OR over the existential values of
    the AND of its literals' values) is one more literal of a universal clause. Every guard set
    is decided against every atom at once: one matrix product over the distinct points (a row
    at a universal binding) counts, for each pair, the points that neither covers. Left out:
    conjunctions that the witness ``e = u`` makes true whatever the state (``exists j:
    log[j, 0] == log[i, 0]``) or that hold at no point; guards that hold alone; with
    ``minimal``, clauses whose guards contain a smaller set that holds with the same
    conjunction (they say less, but may be the inductive one: ``prove --infer`` keeps them).
    Beyond ``max_rows`` rows it reads a uniform sample of them (its matrices grow with the
    points): a candidate false in a row left out is dropped by Houdini, never trusted."""
    if ev.n > max_rows:
        pick = np.random.default_rng(0).choice(ev.n, max_rows, replace=False)
        ev = Evaluator(ev.spec, ev.layout, ev.rows[np.sort(pick)])
    usizes = sizes[:-1]
    ubind = list(itertools.product(*(range(abs(n)) for n in usizes)))
    ne = abs(sizes[-1])
    if not ubind or not ne or not conj_lits:
        return
    npts = ev.n * len(ubind)
    # a literal's value at every point: [universal binding, row] flattened
    gbits = np.array([np.concatenate([ev.literal(g, u) for u in ubind]) for g in guards],
                     bool).reshape(len(guards), npts)
    cbits = np.array([[np.concatenate([ev.literal(c, u + (e,)) for u in ubind])
                       for e in range(ne)] for c in conj_lits], bool)  # [conj, e, point]
    wit = [set(_witnessed(sizes, c, 1) or ()) for c in conj_lits]
    atoms: list[tuple[int, ...]] = []
    abits: list[np.ndarray] = []
    for size in range(1, k + 1):
        for combo in itertools.combinations(range(len(conj_lits)), size):
            if set.intersection(*(wit[i] for i in combo)):
                continue  # exists j: ... true at j = i whatever the state
            if len({conj_lits[i].a for i in combo if conj_lits[i].op in ("is", "not")}) < \
                    sum(conj_lits[i].op in ("is", "not") for i in combo):
                continue  # a boolean cell both held and not: never true
            got = np.logical_and.reduce(cbits[list(combo)], axis=0).any(axis=0)
            if got.any():
                atoms.append(combo)
                abits.append(got)
    if not atoms:
        return
    amat = np.array(abits)  # [atom, point]
    gvalid: np.ndarray = np.all(gbits, axis=1)
    live = [i for i in range(len(guards)) if not gvalid[i]]
    count = 0

    def used(gs: tuple[int, ...], atom: tuple[int, ...]) -> bool:
        lits = [guards[i] for i in gs] + [conj_lits[i] for i in atom]
        return uses_all(sizes, lits)

    # the guard sets, smallest first, each with the points it leaves uncovered
    sets: list[tuple[int, ...]] = [()]
    for size in range(1, width):
        sets += list(itertools.combinations(live, size))
    uncovered = np.ones((len(sets), npts), bool)
    for si, gs in enumerate(sets):
        for g in gs:
            uncovered[si] &= ~gbits[g]
    # guards that hold alone are a universal clause, not this one
    keep: np.ndarray = np.any(uncovered, axis=1)
    sets = [gs for gs, x in zip(sets, keep) if x]
    uncovered = uncovered[keep]
    # the distinct points: a point is what the guards and atoms say at it
    pts = np.concatenate([uncovered, ~amat])
    _, first = np.unique(np.packbits(pts, axis=0).T, axis=0, return_index=True)
    u = uncovered[:, first].astype(np.float32)
    na = (~amat[:, first]).astype(np.float32)
    holding: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for lo in range(0, len(sets), 1024):
        miss = u[lo:lo + 1024] @ na.T  # [guard set, atom]: points neither covers
        for si, ai in zip(*np.nonzero(miss == 0)):
            gs, atom = sets[lo + int(si)], atoms[int(ai)]
            if minimal and any(sub in holding.get(atom, ()) for r in range(len(gs))
                               for sub in itertools.combinations(gs, r)):
                continue
            holding.setdefault(atom, set()).add(gs)
            if not used(gs, atom):
                continue
            count += 1
            if count > limit:
                return
            yield Candidate(sizes, tuple(guards[i] for i in gs), 1,
                            tuple(conj_lits[i] for i in atom))


def _tautology(ev: Evaluator, sizes: tuple[int, ...], lits: Sequence[Literal]) -> bool:
    """Whether the clause holds for every value of its terms' declared domains (checked by
    enumerating them when its literals share at most two terms)."""
    terms = sorted({t for lit in lits for t in lit.terms()}, key=repr)
    if len(terms) > 2:
        return False
    doms = _domains(ev, sizes, terms)
    if len(terms) == 2 and terms[0].var is not None and terms[0] == terms[1]:
        return False
    for vals in itertools.product(*doms):
        env = dict(zip(terms, vals))
        if not any(_lit_value(lit, env) for lit in lits):
            return False
    return True


def _domains(ev: Evaluator, sizes: tuple[int, ...], terms: Sequence[Term]) -> list[range]:
    """Each term's declared values: a bound variable's indices, a cell's range."""
    doms = []
    for t in terms:
        if t.var is None:
            doms.append(range(abs(sizes[t.bound])))
        else:
            v = ev.vars[t.var]
            doms.append(range(v.lo, v.hi + 1))
    return doms


def _lit_value(lit: Literal, env: dict[Term, int]) -> bool:
    a = env[lit.a]
    if lit.op == "is":
        return a != 0
    if lit.op == "not":
        return a == 0
    b = env[lit.b] if isinstance(lit.b, Term) else lit.b
    assert b is not None
    return bool({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">=": a >= b}[lit.op])


# -- subsumption ----------------------------------------------------------------------------------


def implies(ev: Evaluator, sizes: tuple[int, ...], a: Literal, b: Literal) -> bool:
    """Whether literal ``a`` implies ``b`` whatever the values of their terms (each term a
    value of its declared domain, distinct terms independent: enumerated, at most
    ``IMPLIES_VALUES`` assignments). A literal read through a scalar holds where the scalar
    names no member (``guarded``), so ``a`` implies ``b`` only if its scalars are ``b``'s."""
    if a == b:
        return True
    if not set(_lit_scalars(a)) <= set(_lit_scalars(b)):
        return False
    terms = sorted({t for lit in (a, b) for t in lit.terms()}, key=repr)
    if any(x >= len(sizes) for t in terms for x in t.bounds()):
        return False  # over a bound variable ``sizes`` does not have
    doms = _domains(ev, sizes, terms)
    if math.prod(len(d) for d in doms) > IMPLIES_VALUES:
        return False
    for vals in itertools.product(*doms):
        env = dict(zip(terms, vals))
        if _lit_value(a, env) and not _lit_value(b, env):
            return False
    return True


IMPLIES_VALUES = 4096  # the most assignments of its terms' values ``implies`` enumerates


def _lit_scalars(lit: Literal) -> list[str]:
    return lit.a.scalars() + (lit.b.scalars() if isinstance(lit.b, Term) else [])


def subsumed(ev: Evaluator, cands: Sequence[Candidate]) -> dict[int, int]:
    """The candidates another one of ``cands`` implies, syntactically: each (by its index) ->
    one that implies it. ``c`` implies ``d`` when both are universal clauses (no existential
    variable), ``c``'s bound variables are the first of ``d``'s (the same sorts), ``c`` has at
    most as many literals, and each literal of ``c`` implies one of ``d`` over the same terms
    or fewer (``implies``): for every binding, ``c`` true makes ``d`` true. Of two that imply
    each other the one listed first stays; the relation has no cycle, so every candidate it
    names has one it does not name that implies it."""
    plain = [i for i, c in enumerate(cands) if not c.exists and not c.conj]
    by_terms: dict[frozenset[Term], set[Literal]] = {}
    index: dict[frozenset[Literal], list[int]] = {}
    for i in plain:
        for lit in cands[i].literals:
            by_terms.setdefault(frozenset(lit.terms()), set()).add(lit)
        index.setdefault(frozenset(cands[i].literals), []).append(i)
    below: dict[tuple[tuple[int, ...], Literal], set[Literal]] = {}

    def implied_by(sizes: tuple[int, ...], m: Literal) -> set[Literal]:
        """The literals of the candidates over ``m``'s terms (or some of them) that imply it."""
        key = (sizes, m)
        if key not in below:
            ts = list(dict.fromkeys(m.terms()))
            near = set().union(*(by_terms.get(frozenset(sub), set())
                                 for k in range(1, len(ts) + 1)
                                 for sub in itertools.combinations(ts, k)))
            below[key] = {lit for lit in near if implies(ev, sizes, lit, m)}
        return below[key]

    def rank(i: int) -> tuple[int, int, int]:
        return len(cands[i].literals), len(cands[i].sizes), i

    out: dict[int, int] = {}
    for d in plain:
        dc = cands[d]
        below_d = sorted(set().union(*(implied_by(dc.sizes, m) for m in dc.literals)), key=repr)
        if len(below_d) > SUBSUME_LITERALS:
            continue
        hit = next((c for k in range(1, len(dc.literals) + 1)
                    for sub in itertools.combinations(below_d, k)
                    for c in index.get(frozenset(sub), ())
                    if c != d and rank(c) < rank(d)
                    and cands[c].sizes == dc.sizes[:len(cands[c].sizes)]), None)
        if hit is not None:
            out[d] = hit
    return out


SUBSUME_LITERALS = 24  # a candidate more literals imply than this is not looked at


# -- candidates as spec expressions and as source --------------------------------------------------


def to_expr(spec: Spec, c: Candidate) -> Expr:
    """The candidate as an expression of the spec language (nested ``forall``)."""
    bounds = [_bound(BOUND_NAMES[k % len(BOUND_NAMES)]) for k in range(len(c.sizes))]

    def term(t: Term) -> Expr:
        if t.var is None:
            return bounds[t.bound]
        v = spec.var(t.var)
        idx: list[Expr] = []
        for kind, x in t.index:
            if kind == "b":
                idx.append(bounds[int(x)])  # type: ignore[call-overload]
            elif kind == "o":
                idx.append(bounds[int(x[0])] + int(x[1]))  # type: ignore[index]
            elif kind == "c":
                idx.append(lift(int(x)))  # type: ignore[call-overload]
            else:
                idx.append(spec.var(str(x))[()])
        return Read(v, tuple(idx))

    def literal(lit: Literal) -> Expr:
        a = term(lit.a)
        if lit.op == "is":
            return a
        if lit.op == "not":
            return Not(a)
        b = term(lit.b) if isinstance(lit.b, Term) else lift(lit.b)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">=": a >= b}[lit.op]

    guards = [spec.var(s)[()] < 0 for s in guarded(spec, c)]
    parts = [literal(lit) for lit in c.literals]
    quants = list(zip(bounds, c.sizes, c.quantifiers()))
    if c.conj:  # forall u: guards | exists e: conj
        b, n, q = quants.pop()
        parts.append(Quant(q, b, abs(n), conj(*(literal(lit) for lit in c.conj))))
    body = disj(*guards, *parts)
    for b, n, q in reversed(quants):
        body = Quant(q, b, abs(n), body)
    return body


def guarded(spec: Spec, c: Candidate) -> list[str]:
    """The scalars a candidate indexes with that may name no member (-1): each guards the
    clause (``leader < 0 | ...``), so that every read it makes is in range."""
    out: list[str] = []
    for lit in c.literals:
        for s in lit.a.scalars() + (lit.b.scalars() if isinstance(lit.b, Term) else []):
            if spec.var(s).lo < 0 and s not in out:
                out.append(s)
    return out


def to_source(spec: Spec, c: Candidate) -> str:
    """The candidate as spec-language Python, over the handles ``handles_source`` binds."""
    names = [BOUND_NAMES[k % len(BOUND_NAMES)] + ("" if k < len(BOUND_NAMES) else str(k))
             for k in range(len(c.sizes))]

    def term(t: Term) -> str:
        if t.var is None:
            return names[t.bound]
        v = spec.var(t.var)
        if not v.shape:
            return t.var
        idx = [names[int(x)] if k == "b" else  # type: ignore
               f"{names[int(x[0])]} + {int(x[1])}" if k == "o" else str(x)  # type: ignore
               for k, x in t.index]
        return f"{t.var}[{', '.join(idx)}]"

    def literal(lit: Literal) -> str:
        a = term(lit.a)
        if lit.op == "is":
            return a
        if lit.op == "not":
            return f"~{a}"
        b = term(lit.b) if isinstance(lit.b, Term) else str(lit.b)
        return f"({a} {lit.op} {b})"

    guards = [f"({s} < 0)" for s in guarded(spec, c)]
    parts = [literal(lit) for lit in c.literals]
    quants = list(zip(names, c.sizes, c.quantifiers()))
    if c.conj:  # forall u: guards | exists e: conj
        name, n, q = quants.pop()
        inner = " & ".join(literal(lit) for lit in c.conj)
        parts.append(f"{q}({abs(n)}, lambda {name}: {inner}, {name!r})")
    body = " | ".join(guards + parts)
    for name, n, q in reversed(quants):
        body = f"{q}({abs(n)}, lambda {name}: {body}, {name!r})"
    return body


def handles_source(spec: Spec) -> list[str]:
    """The lines that bind each variable's handle: ``log = spec.var("log")``, and a scalar's
    read: ``leader = spec.var("leader")[()]``."""
    return [f"{v.name} = spec.var({v.name!r})" + ("[()]" if not v.shape else "")
            for v in spec.variables]


def false_on(ev: Evaluator, cands: Sequence[Candidate], rows: Sequence[np.ndarray]) -> list[bool]:
    """For each candidate, whether it is false on one of ``rows`` (counterexamples to
    induction: a candidate false there excludes them)."""
    return [n > 0 for n in excluded(ev, cands, rows)]


def excluded(ev: Evaluator, cands: Sequence[Candidate], rows: Sequence[np.ndarray]) -> list[int]:
    """For each candidate, how many of ``rows`` it is false on."""
    return [int(n) for n in falsified(ev, cands, rows).sum(axis=1)]


def falsified(ev: Evaluator, cands: Sequence[Candidate],
              rows: Sequence[np.ndarray]) -> np.ndarray:
    """Whether each candidate (a row of the result) is false on each of ``rows`` (a column)."""
    out = np.zeros((len(cands), len(rows)), bool)
    if not rows or not cands:
        return out
    xev = Evaluator(ev.spec, ev.layout, np.stack([np.asarray(r) for r in rows]))
    memo: dict[tuple[Literal, tuple[int, ...]], np.ndarray] = {}

    def value(lit: Literal, b: tuple[int, ...]) -> np.ndarray:
        if (lit, b) not in memo:
            memo[lit, b] = xev.literal(lit, b)
        return memo[lit, b]

    for k, c in enumerate(cands):
        nu = len(c.sizes) - c.exists
        holds = np.ones(xev.n, bool)
        for u in itertools.product(*(range(abs(n)) for n in c.sizes[:nu])):
            any_true = np.zeros(xev.n, bool)
            for e in itertools.product(*(range(abs(n)) for n in c.sizes[nu:])):
                if c.conj:  # the guards over u alone, the conjunction at u, e
                    any_true |= np.logical_and.reduce([value(lit, u + e) for lit in c.conj])
                    for lit in c.literals:
                        any_true |= value(lit, u)
                    continue
                for lit in c.literals:
                    any_true |= value(lit, u + e)
            holds &= any_true
        out[k] = ~holds
    return out
