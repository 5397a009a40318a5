"""Compiles a spec into the Python source of a numba kernel module.

Every quantifier is unrolled (sizes are static) and constants are folded, so a guard such as
``forall r: hw[r] <= leo(r)`` becomes straight-line code over fixed row positions. Statements
keep their loops. The module defines, per action, a guard ``g_<a>(s, p...)`` and an effect
``e_<a>(t, p...)`` that updates ``t`` in place (``t`` starts as a copy of the state), per
property a predicate, and the level kernels that the engines call:

- ``expand_dedup``: expand frontier rows, fingerprint each successor and keep the ones the
  visited table has not seen (every engine: the partitioned ones pass a scratch table);
- ``check_states``: the first row of a batch that violates each invariant (or reaches each
  reachability target).

Property conventions shared with the engines: state predicates are the invariants followed by
the state reachability checks; transition predicates are the action properties followed by the
transition reachability checks. A "hit" is a violation for an invariant or action property and a
witness for a reachability check.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass

import numpy as np

from hwcheck.spec.lang import (BOOL, ActionParam, And, Arith, Assign, Bound, Cmp, Const, Expr, For, If,
                       Ite, Local, Not, Or, Quant, Read, SetLocal, Spec, SpecError, reads_next)

from hwcheck.checker.semantics.layout import Layout

INF = 1 << 40  # larger than any model value: the "no candidate" of an unrolled min/max
UNBOUNDED = (-(1 << 62), 1 << 62)  # the range of a value nothing is known of

Code = int | bool | str  # a folded constant, or Python source


@dataclass(frozen=True)
class Properties:
    """The spec's properties in the order the kernel numbers them."""

    state: list  # (name, expr, kind) kind: "invariant" | "reachable"
    transition: list  # (name, expr, kind) kind: "action" | "reachable"

    @classmethod
    def of(cls, spec: Spec) -> "Properties":
        state = [(i.name, i.expr, "invariant") for i in spec.invariants]
        state += [(r.name, r.expr, "reachable") for r in spec.reachables if not reads_next(r.expr)]
        trans = [(a.name, a.expr, "action") for a in spec.action_properties]
        trans += [(r.name, r.expr, "reachable") for r in spec.reachables if reads_next(r.expr)]
        return cls(state, trans)


def _const(c: Code) -> bool:
    return not isinstance(c, str)


def _src(c: Code) -> str:
    if isinstance(c, bool):
        return "True" if c else "False"
    return str(c) if isinstance(c, int) else c


class DomainErrors:
    """The numbered ways a spec can leave its declared domains: a write of a value outside a
    variable's domain, or an index outside its shape, in an action's guard or effect, in a
    property, or in Init. Code c (from 1) is ``DomainError(variable, where)``; the kernel
    reports the code, the engines the name."""

    def __init__(self):
        self.entries: list[tuple[str, str]] = [("", "")]  # code 0: no error

    def code(self, var: str, where: str) -> int:
        key = (var, where)
        if key not in self.entries:
            self.entries.append(key)
        return self.entries.index(key)

    def name(self, code: int) -> str:
        var, where = self.entries[code]
        return domain_error_name(var, where)


def _checked(c: Code) -> bool:
    """Whether generated source ``c`` holds a run-time check (so evaluating it may fail)."""
    return isinstance(c, str) and "_oob(" in c


def _scalar(e) -> bool:
    return isinstance(e, Read) and not e.index


def _meet(a, b):
    """The intersection of two ranges (None: no knowledge)."""
    if a is None:
        return b
    return (max(a[0], b[0]), min(a[1], b[1]))


def domain_error_name(var: str, where: str) -> str:
    return f"DomainError({var}, {where})"


class ExprGen:
    """Python source for expressions over rows ``cur`` (unprimed reads) and ``nxt`` (primed).

    A read whose index is not provably inside its variable's shape (by the ranges of the
    values that make it up) is guarded: out of range it reads 0 and records the error code in
    ``err[0]``; the caller checks ``err`` after every guard, effect and property."""

    def __init__(self, layout: Layout, cur: str, nxt: str | None = None,
                 errors: DomainErrors | None = None):
        self.layout = layout
        self.cur = cur
        self.nxt = nxt
        self.errors = errors if errors is not None else DomainErrors()
        self.where = ""  # the action or property being generated: names its errors
        self.code_ranges: dict[str, tuple[int, int]] = {}  # loop variables and parameters
        self.local_ranges: dict[str, tuple[int, int]] = {}
        # what is known where an expression is evaluated: scalar variable -> range, from the
        # conjuncts before it (``a and b``: b runs only when a holds) and the action's guard
        self.facts: dict[tuple[str, bool], tuple[int, int]] = {}
        self.checks = 0  # the run-time checks emitted so far (a function with none cannot fail)

    # -- facts -------------------------------------------------------------------------------------

    def facts_of(self, e: Expr, holds: bool = True) -> dict:
        """Ranges of scalar variables implied by ``e`` being true (or false): comparisons of a
        scalar with a constant, under conjunctions, disjunctions and negations."""
        if isinstance(e, Not):
            return self.facts_of(e.a, not holds)
        if isinstance(e, (And, Or)) and isinstance(e, And) == holds:
            out: dict = {}
            for a in e.args:
                for k, r in self.facts_of(a, holds).items():
                    out[k] = _meet(out.get(k), r)
            return out
        if not isinstance(e, Cmp):
            return {}
        op, a, b = e.op, e.a, e.b
        if _scalar(b) and isinstance(a, Const):  # c OP x: turn around
            a, b = b, a
            op = {"==": "==", "!=": "!=", "<": ">", "<=": ">="}[op]
        if not (_scalar(a) and isinstance(b, Const)) or a.var.sort == BOOL:
            return {}
        if not holds:
            op = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
        lo, hi = a.var.lo, a.var.hi
        c = int(b.value)
        r = {"==": (c, c), "<": (lo, c - 1), "<=": (lo, c), ">": (c + 1, hi),
             ">=": (c, hi)}.get(op)
        if op == "!=":
            r = (lo + 1, hi) if c == lo else (lo, hi - 1) if c == hi else (lo, hi)
        return {(a.var.name, a.primed): r}

    def assuming(self, facts: dict):
        """A context in which ``facts`` hold too."""
        gen = self

        class _Ctx:
            def __enter__(self):
                self.saved = gen.facts
                merged = dict(gen.facts)
                for k, r in facts.items():
                    merged[k] = _meet(merged.get(k), r)
                gen.facts = merged

            def __exit__(self, *exc):
                gen.facts = self.saved

        return _Ctx()

    # -- value ranges ----------------------------------------------------------------------------

    def rng(self, e: Expr, env: dict, inner: dict | None = None) -> tuple[int, int]:
        """An interval holding every value ``e`` can take (as generated under ``env``)."""
        inner = inner or {}
        r = self.rng
        if isinstance(e, Const):
            return (int(e.value), int(e.value))
        if isinstance(e, (Bound, ActionParam)):
            if e in inner:
                return inner[e]
            code = env.get(e)
            if code is None:
                return (0, e.size - 1) if isinstance(e, ActionParam) else UNBOUNDED
            return (code, code) if _const(code) else self.code_ranges.get(code, UNBOUNDED)
        if isinstance(e, Local):
            return self.local_ranges.get(e.name, UNBOUNDED)
        if isinstance(e, Read):
            if e.var.sort == BOOL:
                return (0, 1)
            known = self.facts.get((e.var.name, e.primed)) if not e.index else None
            return known if known is not None else (e.var.lo, e.var.hi)
        if isinstance(e, Arith):
            (a0, a1), (b0, b1) = r(e.a, env, inner), r(e.b, env, inner)
            if e.op == "+":
                return (a0 + b0, a1 + b1)
            if e.op == "-":
                return (a0 - b1, a1 - b0)
            if e.op == "min":
                return (min(a0, b0), min(a1, b1))
            return (max(a0, b0), max(a1, b1))
        if isinstance(e, Ite):
            (a0, a1), (b0, b1) = r(e.then, env, inner), r(e.other, env, inner)
            return (min(a0, b0), max(a1, b1))
        if isinstance(e, Quant):
            if e.kind in ("forall", "exists"):
                return (0, 1)
            if e.kind == "count":
                return (0, e.n)
            within = dict(inner)
            within[e.var] = (0, e.n - 1)
            (a0, a1), (b0, b1) = r(e.body, env, within), r(e.default, env, inner)
            return (min(a0, b0), max(a1, b1))
        return (0, 1)  # comparisons and connectives

    def index_checks(self, e: Read, env: dict, idx: list) -> list[str]:
        """The conditions an index of ``e`` needs at run time (those not provably in shape)."""
        conds = []
        for ie, code, d in zip(e.index, idx, e.var.shape):
            lo, hi = (int(code), int(code)) if _const(code) else self.rng(ie, env)
            if _const(code) and not 0 <= int(code) < d:
                return ["False"]
            if lo < 0 or hi > d - 1:
                conds.append(f"0 <= {_src(code)} < {d}")
        return conds

    def __call__(self, e: Expr, env: dict) -> Code:
        g = self
        if isinstance(e, Const):
            return e.value
        if isinstance(e, (Bound, ActionParam)):
            return env[e]
        if isinstance(e, Local):
            return "l_" + e.name
        if isinstance(e, Read):
            return g.read(e, env)
        if isinstance(e, Arith):
            a, b = g(e.a, env), g(e.b, env)
            if _const(a) and _const(b):
                return {"+": a + b, "-": a - b, "min": min(a, b), "max": max(a, b)}[e.op]
            if e.op in ("+", "-"):
                if _const(b) and b == 0:
                    return a
                return f"({_src(a)} {e.op} {_src(b)})"
            return f"{e.op}({_src(a)}, {_src(b)})"
        if isinstance(e, Cmp):
            a, b = g(e.a, env), g(e.b, env)
            if _const(a) and _const(b):
                return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b}[e.op]
            return f"({_src(a)} {e.op} {_src(b)})"
        if isinstance(e, (And, Or)):  # each argument runs only when the ones before let it
            parts, known = [], {}
            for x in e.args:
                with self.assuming(known):
                    parts.append(g(x, env))
                for k, r in self.facts_of(x, isinstance(e, And)).items():
                    known[k] = _meet(known.get(k), r)
            return self.junction(parts, "and" if isinstance(e, And) else "or")
        if isinstance(e, Not):
            a = g(e.a, env)
            return (not a) if _const(a) else f"(not {a})"
        if isinstance(e, Ite):
            c = g(e.cond, env)
            if _const(c):
                return g(e.then if c else e.other, env)
            with self.assuming(self.facts_of(e.cond, True)):
                a = g(e.then, env)
            with self.assuming(self.facts_of(e.cond, False)):
                b = g(e.other, env)
            if _const(a) and _const(b) and a == b and type(a) is type(b) and not _checked(c):
                return a
            return f"({_src(a)} if {c} else {_src(b)})"
        if isinstance(e, Quant):
            return self.quant(e, env)
        raise SpecError(f"codegen: unknown expression node {type(e).__name__}")

    def junction(self, parts: list, op: str) -> Code:
        unit = op == "and"
        kept = []
        for p in parts:
            if _const(p):
                if bool(p) != unit:
                    # the parts before still run, as in the interpreter, when one may fail
                    if any(_checked(k) for k in kept):
                        return "(" + f" {op} ".join(kept + [str(not unit)]) + ")"
                    return not unit
                continue
            kept.append(p)
        if not kept:
            return unit
        return kept[0] if len(kept) == 1 else "(" + f" {op} ".join(kept) + ")"

    def read(self, e: Read, env: dict) -> Code:
        idx = [self(i, env) for i in e.index]
        cell = self.cell(e, env, idx)
        conds = self.index_checks(e, env, idx)
        if conds:
            code = self.errors.code(e.var.name, self.where)
            cell = f"({cell} if {' and '.join(conds)} else _oob(err, {code}, {e.var.lo}))"
            self.checks += 1
        return f"({cell} != 0)" if e.var.sort == BOOL else cell

    def cell(self, e: Read, env: dict, idx: list | None = None) -> str:
        """The source of the row element ``e`` reads (as stored), with no index check."""
        var = e.var
        row = self.nxt if e.primed else self.cur
        if row is None:
            raise SpecError(f"codegen: {var.name} read from a state this predicate has no access to")
        if idx is None:
            idx = [self(i, env) for i in e.index]
        idx = [int(i) if _const(i) else i for i in idx]
        base = self.layout.offsets[var.name]
        const_part, terms, stride = base, [], 1
        for i, d in reversed(list(zip(idx, var.shape))):
            if _const(i):
                const_part += int(i) * stride
            else:
                terms.append(i if stride == 1 else f"{i} * {stride}")
            stride *= d
        pos = " + ".join(reversed(terms)) if terms else ""
        if terms:
            pos = f"{const_part} + {pos}" if const_part else pos
        else:
            pos = str(const_part)
        return f"{row}[{pos}]"

    def quant(self, e: Quant, env: dict) -> Code:
        def at(i: int, x: Expr) -> Code:
            inner = dict(env)
            inner[e.var] = i
            return self(x, inner)

        if e.kind in ("forall", "exists"):
            return self.junction([at(i, e.body) for i in range(e.n)],
                                 "and" if e.kind == "forall" else "or")
        if e.kind == "count":
            total, terms = 0, []
            for i in range(e.n):
                c = at(i, e.body)
                if _const(c):
                    total += int(bool(c))
                else:
                    terms.append(f"(1 if {c} else 0)")
            if not terms:
                return total
            return "(" + " + ".join(terms + ([str(total)] if total else [])) + ")"
        # min / max with a condition and a default
        sentinel = INF if e.kind == "min" else -INF
        cands = []
        for i in range(e.n):
            c = at(i, e.cond)
            if _const(c):
                if c:
                    cands.append(at(i, e.body))
                continue
            v = at(i, e.body)
            cands.append(f"({_src(v)} if {c} else {sentinel})")
        default = self(e.default, env)
        if not cands:
            return default
        if all(_const(c) for c in cands):
            return min(cands) if e.kind == "min" else max(cands)
        inner = cands[0] if len(cands) == 1 else f"{e.kind}({', '.join(map(_src, cands))})"
        if any(_const(c) for c in cands):  # some candidate always counts: never the sentinel
            return _src(inner)
        if _checked(default):  # evaluated only when no candidate counts, as the interpreter does
            return f"({_src(default)} if {inner} == {sentinel} else {inner})"
        return f"_or_default({inner}, {sentinel}, {_src(default)})"


class BodyGen:
    """Python source for statements; every read and write goes to row ``t``."""

    def _unchecked(self, before: int, lines: list[str]) -> list[str]:
        """A write that needed no check of its own: count only the checks of its reads."""
        self.ex.checks -= 1
        return lines

    def __init__(self, layout: Layout, errors: DomainErrors | None = None):
        self.layout = layout
        self.ex = ExprGen(layout, "t", errors=errors)
        self.loops = itertools.count()
        self.ret = "return"  # how a failed check leaves the function

    def begin(self, where: str, stmts, env: dict, ret: str = "return") -> None:
        """Before generating a body: name its errors and bound the values of its locals (a
        fixpoint over every assignment; what does not settle is unbounded)."""
        self.ex.where = where
        self.ret = ret
        ranges: dict[str, tuple[int, int]] = {}
        self.ex.local_ranges = ranges
        sets: list = []

        def scan(block, inner):
            for s in block:
                if isinstance(s, SetLocal):
                    sets.append((s, dict(inner)))
                elif isinstance(s, If):
                    scan(s.then, inner)
                    scan(s.other, inner)
                elif isinstance(s, For):
                    within = dict(inner)
                    within[s.var] = (0, s.n - 1)
                    scan(s.body, within)

        scan(stmts, {})
        # In statement order, each local's range grows to hold every value assigned to it; a
        # local that still grows after a few rounds (a counter in a loop) is unbounded.
        for _ in range(8):
            before = dict(ranges)
            for s, inner in sets:
                lo, hi = self.ex.rng(s.value, env, inner)
                old = ranges.get(s.local.name)
                ranges[s.local.name] = (lo, hi) if old is None else (min(old[0], lo),
                                                                     max(old[1], hi))
            if ranges == before:
                break
        else:
            for name in ranges:
                ranges[name] = UNBOUNDED

    def __call__(self, stmts, env: dict, depth: int) -> list[str]:
        pad = "    " * depth
        out: list[str] = []
        for s in stmts:
            if isinstance(s, Assign):
                out.extend(self.assign(s, env, pad))
            elif isinstance(s, SetLocal):
                out.append(f"{pad}l_{s.local.name} = {_src(self.ex(s.value, env))}")
            elif isinstance(s, If):
                c = self.ex(s.cond, env)
                if _const(c):
                    out.extend(self(s.then if c else s.other, env, depth))
                    continue
                out.append(f"{pad}if {c}:")
                out.extend(self(s.then, env, depth + 1) or [pad + "    pass"])
                if s.other:
                    out.append(f"{pad}else:")
                    out.extend(self(s.other, env, depth + 1))
            elif isinstance(s, For):
                name = f"i{next(self.loops)}"
                inner = dict(env)
                inner[s.var] = name
                self.ex.code_ranges[name] = (0, s.n - 1)
                out.append(f"{pad}for {name} in range({s.n}):")
                out.extend(self(s.body, inner, depth + 1) or [pad + "    pass"])
            else:
                raise SpecError(f"codegen: unknown statement {type(s).__name__}")
        return out

    def assign(self, s: Assign, env: dict, pad: str) -> list[str]:
        """A write, with the checks it needs: every index inside the variable's shape and the
        value inside its domain, unless the ranges prove it."""
        var, ex = s.target.var, self.ex
        code = ex.errors.code(var.name, ex.where)
        fail = f"_fail(err, {code})"
        out = []
        before = ex.checks
        ex.checks += 1  # undone below when the write needs no check
        idx = [ex(i, env) for i in s.target.index]
        # An index that reads through a check is evaluated first, into a temporary: the
        # interpreter evaluates the indices, then checks them, then the value, and the first
        # failure names the error (Python would evaluate ``t[i] = v``'s value before ``i``).
        for n, i in enumerate(idx):
            if _checked(i):
                out.append(f"{pad}_k{n} = {i}")
                idx[n] = f"_k{n}"
        conds = ex.index_checks(s.target, env, idx)
        if conds == ["False"]:
            return out + [f"{pad}{fail}", f"{pad}{self.ret}"]
        if conds:
            out += [f"{pad}if not ({' and '.join(conds)}):", f"{pad}    {fail}",
                    f"{pad}    {self.ret}"]
        tgt = ex.cell(s.target, env, idx)
        v = ex(s.value, env)
        checked = bool(conds)
        if s.target.sort == BOOL:
            val = str(int(bool(v))) if _const(v) else f"1 if {v} else 0"
            return out + [f"{pad}{tgt} = {val}"] if checked else self._unchecked(
                before, out + [f"{pad}{tgt} = {val}"])
        if _const(v):
            if not var.lo <= int(v) <= var.hi:
                return out + [f"{pad}{fail}", f"{pad}{self.ret}"]
            line = out + [f"{pad}{tgt} = {int(v)}"]
            return line if checked else self._unchecked(before, line)
        lo, hi = ex.rng(s.value, env)
        if var.lo <= lo and hi <= var.hi:
            line = out + [f"{pad}{tgt} = {v}"]
            return line if checked else self._unchecked(before, line)
        return out + [f"{pad}_v = {v}",
                      f"{pad}if _v < {var.lo} or _v > {var.hi}:",
                      f"{pad}    {fail}",
                      f"{pad}    {self.ret}",
                      f"{pad}{tgt} = _v"]


HEADER = '''\
# Generated by hwcheck's checker/semantics/codegen.py from the spec {name} {params}.
# Do not edit: it is rebuilt whenever the spec or the code generator changes.
import numpy as np
from numba import njit

from hwcheck.checker.semantics.fingerprint import (TAIL, fingerprint, fingerprint_words,
                                                   owners_room, table_insert_batch,
                                                   table_insert_exact, table_split_batch)

STRIDE = {stride}
NINST = {ninst}
# expand_dedup generates the successors of BLOCK rows, then inserts them into the visited table
# together (table_insert_batch); ROOM: the most successors of a block
BLOCK = {block}
ROOM = BLOCK * NINST
DTYPE = np.{dtype}
WORDS = STRIDE * DTYPE(0).itemsize // 8  # 64-bit words a row
ACT = np.uint8 if NINST < 256 else np.uint16  # an action instance


@njit(cache=True, inline="always")
def _or_default(x, sentinel, default):
    return default if x == sentinel else x


@njit(cache=True, inline="always")
def _fail(err, code):
    if err[0] == 0:  # the first error of the step is the one reported
        err[0] = code


@njit(cache=True, inline="always")
def _oob(err, code, value):
    # a read outside a shape: the step fails; it goes on with a value inside the variable's
    # domain, so every range the code generator proved still holds (no access leaves the row)
    _fail(err, code)
    return value


@njit(cache=True, inline="always")
def _dom(err, dom_row, dom_inst, i, inst):
    c = err[0]
    err[0] = 0
    if dom_row[c] < 0:
        dom_row[c] = i
        dom_inst[c] = inst


@njit(cache=True, inline="always")
def _dom_state(err, dom_row, i):
    c = err[0]
    err[0] = 0
    if dom_row[c] < 0:
        dom_row[c] = i


@njit(cache=True)
def _copy(src, dst):
    for q in range(STRIDE):
        dst[q] = src[q]


@njit(cache=True, inline="always")
def _get_words(rows, i, dst):
    # dst = row i of rows, both as 64-bit words
    for q in range(WORDS):
        dst[q] = rows[i, q]


@njit(cache=True, inline="always")
def _put_words(src, rows, i):
    # row i of rows = src, both as 64-bit words
    for q in range(WORDS):
        rows[i, q] = src[q]
'''


def generate(spec: Spec, layout: Layout | None = None,
             errors: DomainErrors | None = None, canon=None) -> str:
    """The kernel module's source for ``spec``; ``errors`` collects the numbered domain
    errors the generated checks report. With ``canon`` (a ``symmetry.Plan``) the expansion
    turns every successor into its canonical form before fingerprinting it, and the module
    also defines ``canon`` and ``canonical``; without it the source is what it always was."""
    layout = layout or Layout.of(spec)
    errors = errors if errors is not None else DomainErrors()
    props = Properties.of(spec)
    instances = spec.instances()
    lines = [HEADER.format(name=spec.name, params=spec.params, stride=layout.stride,
                           ninst=len(instances), dtype=np.dtype(layout.dtype).name,
                           block=block_rows(len(instances)))]
    body = BodyGen(layout, errors)
    guards = ExprGen(layout, "s", errors=errors)
    fails: dict[str, bool] = {}  # generated function -> whether it has a run-time check

    def counted(name: str, gen: ExprGen, make):
        before = gen.checks
        out = make()
        fails[name] = gen.checks > before
        return out

    for ai, a in enumerate(spec.actions):
        args = [f"p{i}" for i in range(len(a.params))]
        env = dict(zip(a.params, args))
        for gen in (guards, body.ex):
            gen.code_ranges.update({f"p{i}": (0, p.size - 1) for i, p in enumerate(a.params)})
        guards.where = a.name
        guards.local_ranges = {}
        guard = counted(f"g_{ai}", guards, lambda: guards(a.guard, env))
        lines.append(f"\n@njit(cache=True)\ndef g_{ai}({', '.join(['s', *args, 'err'])}):"
                     f"  # {a.name} guard\n    return {_src(guard)}\n")
        # the guard holds when the effect runs: what it says of a variable the effect does not
        # write holds throughout the effect
        body.ex.facts = {k: r for k, r in guards.facts_of(a.guard).items()
                         if k[0] not in a.modifies}
        body.begin(a.name, a.body, env)
        stmts = counted(f"e_{ai}", body.ex, lambda: body(a.body, env, 1)) or ["    pass"]
        body.ex.facts = {}
        lines.append(f"\n@njit(cache=True)\ndef e_{ai}({', '.join(['t', *args, 'err'])}):"
                     f"  # {a.name} effect\n" + "\n".join(stmts) + "\n")

    for j, (name, expr, _) in enumerate(props.state):
        gen = ExprGen(layout, "s", errors=errors)
        gen.where = name
        code = counted(f"sp_{j}", gen, lambda: gen(expr, {}))
        lines.append(f"\n@njit(cache=True)\ndef sp_{j}(s, err):  # {name}\n"
                     f"    return {_src(code)}\n")
    for j, (name, expr, _) in enumerate(props.transition):
        gen = ExprGen(layout, "s", "n", errors=errors)
        gen.where = name
        code = counted(f"tp_{j}", gen, lambda: gen(expr, {}))
        lines.append(f"\n@njit(cache=True)\ndef tp_{j}(s, n, err):  # {name}\n"
                     f"    return {_src(code)}\n")

    lines.append(_init_fn(spec, layout, body))
    lines.append(_check_states(props, fails))
    lines.append(_step_fn(spec))
    if canon is not None:
        from hwcheck.checker.semantics.symmetry import canon_source

        lines.append(canon_source(canon))
    sym = canon is not None
    lines.append(_expand(spec, props, fails, sym=sym))
    lines.append(_expand(spec, props, fails, exact=True, sym=sym))
    lines.append(_expand(spec, props, fails, split=True, sym=sym))
    lines.append(f"\nNERRORS = {len(errors.entries)}  # domain error codes 1..NERRORS-1\n")
    return "\n".join(lines)


def _init_fn(spec: Spec, layout: Layout, body: BodyGen) -> str:
    lines = ["\n@njit(cache=True)\ndef initial(err):", "    t = np.zeros(STRIDE, DTYPE)"]
    for v in spec.variables:
        low = max(v.lo, min(v.hi, 0))
        if low:
            off = layout.offsets[v.name]
            lines.append(f"    t[{off}:{off + v.size}] = {low}")
    body.begin("Init", spec.init, {}, ret="return t")
    lines.extend(body(spec.init, {}, 1))
    lines.append("    return t\n")
    return "\n".join(lines)


def _hit(kind: str, test: str) -> str:
    """A hit is a violation (the predicate is false) or a witness (a reachability target holds)."""
    return test if kind == "reachable" else f"not {test}"


def _check_states(props: Properties, fails: dict) -> str:
    lines = ["\n@njit(cache=True, nogil=True)",  # (several workers check slices at once)
             "def check_states(rows, n, active, hits, err, dom_row):",
             '    """For each active state predicate j still without a hit, set hits[j] to the',
             '    first row index in 0..n-1 that hits it; a predicate that reads outside a',
             '    variable\'s shape records its domain error code\'s first row in dom_row.',
             '    Returns how many are still open."""',
             "    for i in range(n):",
             "        s = rows[i]",
             "        open_ = 0"]
    for j, (name, _, kind) in enumerate(props.state):
        lines += [f"        if active[{j}] and hits[{j}] < 0:  # {name}",
                  f"            h = {_hit(kind, f'sp_{j}(s, err)')}"]
        if fails[f"sp_{j}"]:
            lines += ["            if err[0] != 0:",
                      "                _dom_state(err, dom_row, i)",
                      "                open_ += 1",
                      "            elif h:"]
        else:
            lines += ["            if h:"]
        lines += [f"                hits[{j}] = i",
                  "            else:",
                  "                open_ += 1"]
    lines += ["        if open_ == 0:", "            return 0", "    return 1\n"]
    return "\n".join(lines)


def _instances(spec: Spec):
    """(action index, action, first instance index) in enumeration order."""
    base = 0
    for ai, a in enumerate(spec.actions):
        yield ai, a, base
        base += len(a.instances())


def _step_fn(spec: Spec) -> str:
    """step(inst, s, t, err): apply instance ``inst`` to ``s`` into ``t``; False when disabled
    or when the step leaves the declared domains (then err[0] holds the error code)."""
    lines = ["\n@njit(cache=True)", "def step(inst, s, t, err):"]
    for ai, a, base in _instances(spec):
        n = len(a.instances())
        sizes = [p.size for p in a.params]
        lines.append(f"    if inst < {base + n}:  # {a.name}")
        lines.append(f"        k = inst - {base}")
        for i in reversed(range(len(sizes))):
            lines.append(f"        p{i} = k % {sizes[i]}")
            lines.append(f"        k //= {sizes[i]}")
        args = [f"p{i}" for i in range(len(sizes))]
        lines.append(f"        if not g_{ai}({', '.join(['s', *args, 'err'])}) or err[0] != 0:")
        lines.append("            return False")
        lines.append("        _copy(s, t)")
        lines.append(f"        e_{ai}({', '.join(['t', *args, 'err'])})")
        lines.append("        return err[0] == 0")
    lines.append("    return False\n")
    return "\n".join(lines)


def _expand(spec: Spec, props: Properties, fails: dict, exact: bool = False,
            split: bool = False, sym: bool = False) -> str:
    """``expand_dedup``, or with ``exact`` ``expand_exact``: the same, against a table that also
    keeps every visited state (``store``, ``slots``), so a fingerprint shared by two different
    states never hides one of them; or with ``split`` ``expand_split``: for several workers
    that expand slices of a level at once, against a visited set split into tables by owner
    (``parallel.py``): each successor its owner's table does not hold yet (a lookup only) goes
    to that owner's buffers, which the owner inserts afterwards; it releases the GIL (numba
    compiles each only when a run asks for it). With ``sym`` (any of the three), each
    successor becomes its canonical form (``canon``) after the transition predicates have seen
    it and before it is fingerprinted: the table, the successors and the fingerprints are of
    representatives."""
    sig = ("front, lo, hi, table, max_fill, filled, out, par, act, fps, tp_active, tp_row, "
           "tp_inst, err, dom_row, dom_inst")
    if exact:
        sig += ", slots, store, nstored"
    ret = "w, filled, gen, nstored" if exact else "w, filled, gen"
    if split:
        sig = ("front, lo, hi, tables, o_rows, o_par, o_act, o_fps, o_n, tp_active, tp_row, "
               "tp_inst, err, dom_row, dom_inst")
        ret = "gen"
    doc = ('    """Expand rows lo..hi-1 of ``front``; append each successor the visited table has\n'
           '    not seen to out/par/act/fps. Stops before a row whose successors might overflow\n'
           '    ``out`` or push the table past ``max_fill`` entries. A step that leaves the\n'
           '    declared domains has no successor: its error code\'s first (row, instance) goes\n'
           '    to dom_row/dom_inst. Returns (next row, entries written, table fill,\n'
           '    transitions generated)."""')
    name = "expand_split" if split else "expand_exact" if exact else "expand_dedup"
    if split:
        doc = ('    """Expand rows lo..hi-1 of ``front``; append each successor that its owner\'s\n'
               '    table (``tables[o]``, o by the fingerprint\'s high bits) does not hold to\n'
               '    that owner\'s buffers: ``o_rows[o]`` (rows as 64-bit words), ``o_par[o]``,\n'
               '    ``o_act[o]``, ``o_fps[o]``, from position ``o_n[o]`` (moved on). Stops\n'
               '    before a block of rows whose successors might overflow an owner\'s buffers.\n'
               '    Domain errors and transition predicates as ``expand_dedup``. Returns (next\n'
               '    row, transitions generated)."""')
    lines = [f"\n@njit(cache=True{', nogil=True' if split else ''})\ndef {name}({sig}):",
             doc,
             "    tw = np.empty(WORDS, np.uint64)  # the scratch successor, as words to hash",
             "    t = tw.view(DTYPE)",
             "    fw = front.view(np.uint64)  # rows are copied a word at a time"]
    if split:  # a block's successors, before the lookups
        lines += ["    ow = np.empty((ROOM, WORDS), np.uint64)",
                  "    par = np.empty(ROOM, np.int32)",
                  "    act = np.empty(ROOM, ACT)",
                  "    fps = np.empty(ROOM, np.uint64)"]
    else:
        lines += ["    ow = out.view(np.uint64)",
                  "    cap = out.shape[0]",
                  "    w = 0"]
    if sym:
        lines += ["    cb = np.empty(STRIDE, DTYPE)", "    cw = np.empty(SYM_WORK, np.int64)"]
    lines += ["    gen = 0"]
    if split:
        lines += ["    q = 0",
                  "    for i in range(lo, hi):",
                  "        if (i - lo) % BLOCK == 0:",
                  "            table_split_batch(tables, ow, par, act, fps, q, o_rows, o_par, "
                  "o_act, o_fps, o_n)",
                  "            q = 0",
                  "            if not owners_room(o_fps, o_n, ROOM):",
                  f"                return i, {ret}",
                  "        s = front[i]"]
    elif not exact:
        # expand_dedup: w: successors inserted and new; w..q-1: the block's, not yet inserted.
        # A block's inserts must not overflow ``out``, pass ``max_fill`` or run into the
        # table's last slot
        lines += ["    q = 0",
                  "    tcap = table.size - TAIL",
                  "    for i in range(lo, hi):",
                  "        if (i - lo) % BLOCK == 0:",
                  "            n = table_insert_batch(table, tcap, ow, par, act, fps, w, q)",
                  "            filled += n - w",
                  "            w = q = n",
                  "            if (w + ROOM > cap or filled + ROOM > max_fill",
                  "                    or table[table.size - ROOM - 1] != 0):",
                  f"                return i, {ret}",
                  "        s = front[i]"]
    else:
        lines += ["    mask = table.size - 1",
                  "    for i in range(lo, hi):",
                  "        if (w + NINST > cap or filled + NINST > max_fill"
                  " or nstored + NINST > store.shape[0]):",
                  f"            return i, {ret}",
                  "        s = front[i]"]
    for ai, a, base in _instances(spec):
        sizes = [p.size for p in a.params]
        pad = "        "
        args = []
        for d, size in enumerate(sizes):
            lines.append(f"{pad}for p{d} in range({size}):")
            args.append(f"p{d}")
            pad += "    "
        inst = str(base)
        mult = 1
        for d in reversed(range(len(sizes))):
            inst += f" + p{d}" + (f" * {mult}" if mult != 1 else "")
            mult *= sizes[d]
        # err is looked at only after the functions that have a run-time check
        g_fails, e_fails = fails[f"g_{ai}"], fails[f"e_{ai}"]
        tp_fails = any(fails[f"tp_{j}"] for j in range(len(props.transition)))
        ok = " and err[0] == 0" if g_fails else ""
        lines += [f"{pad}if g_{ai}({', '.join(['s', *args, 'err'])}){ok}:  # {a.name}",
                  f"{pad}    gen += 1",
                  f"{pad}    _get_words(fw, i, tw)",
                  f"{pad}    e_{ai}({', '.join(['t', *args, 'err'])})"]
        inner = pad + "    "
        if e_fails:
            lines.append(f"{inner}if err[0] == 0:")
            inner += "    "
        for j, (pname, _, kind) in enumerate(props.transition):
            lines += [f"{inner}if tp_active[{j}] and tp_row[{j}] < 0:  # {pname}",
                      f"{inner}    h = {_hit(kind, f'tp_{j}(s, t, err)')}",
                      f"{inner}    if h{' and err[0] == 0' if fails[f'tp_{j}'] else ''}:",
                      f"{inner}        tp_row[{j}] = i",
                      f"{inner}        tp_inst[{j}] = {inst}"]
        if tp_fails:
            lines.append(f"{inner}if err[0] == 0:")
            inner += "    "
        insert = "table_insert_exact(table, slots, mask, fp, t, store, nstored)"
        if sym:
            lines.append(f"{inner}canon(t, cb, cw)")
        lines.append(f"{inner}fp = fingerprint_words(tw)")
        if exact:
            lines += [f"{inner}if {insert}:",
                      f"{inner}    filled += 1"]
            inner += "    "
        w = "w" if exact else "q"
        if exact:
            lines += [f"{inner}_copy(t, store[nstored])",
                      f"{inner}nstored += 1"]
        lines += [f"{inner}_put_words(tw, ow, {w})",
                  f"{inner}par[{w}] = i",
                  f"{inner}act[{w}] = {inst}",
                  f"{inner}fps[{w}] = fp",
                  f"{inner}{w} += 1"]
        if g_fails or e_fails or tp_fails:
            lines += [f"{pad}if err[0] != 0:",
                      f"{pad}    _dom(err, dom_row, dom_inst, i, {inst})"]
    if split:
        lines += ["    table_split_batch(tables, ow, par, act, fps, q, o_rows, o_par, o_act, o_fps, "
                  "o_n)"]
    elif not exact:
        lines += ["    n = table_insert_batch(table, tcap, ow, par, act, fps, w, q)",
                  "    filled += n - w",
                  "    w = n"]
    lines.append(f"    return hi, {ret}\n")
    return "\n".join(lines)


def block_rows(ninst: int) -> int:
    """Rows a block of ``expand_dedup``: up to 32, as long as a block's successors stay well
    inside the table's ``TAIL``."""
    from hwcheck.checker.semantics.fingerprint import TAIL

    block = 32
    while block > 1 and block * ninst > TAIL // 2:
        block //= 2
    return block


def source_key(src: str) -> str:
    """The cache key of a generated module: its text and the run-time module it imports."""
    from hwcheck.checker.semantics import fingerprint as rt

    with open(rt.__file__, "rb") as f:
        rt_src = f.read()
    return hashlib.sha1(src.encode() + rt_src).hexdigest()[:16]
