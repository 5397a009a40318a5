"""The expression compiler: spec expressions and statements to numba-ready Python source.

Every quantifier is unrolled (sizes are static) and constants are folded, so a guard such as
``forall r: hw[r] <= leo(r)`` becomes straight-line code over fixed row positions. Statements
keep their loops. An interval analysis (declared domains, parameter and loop ranges, locals,
facts of the guard and of earlier conjuncts) proves indices and written values in range; what it
cannot prove gets a run-time check that reports ``DomainError(variable, where)`` through the
numbered codes of ``DomainErrors``.

``ExprGen`` compiles an expression over a state row (``s``, and ``n`` for the next state of a
transition predicate); ``BodyGen`` compiles an action's statements into an in-place effect on
``t``. The kernel templates (``templates.py``) put the results into functions.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeGuard

from hwcheck.checker.semantics.layout import Layout
from hwcheck.spec.lang import (
    BOOL,
    ActionParam,
    And,
    Arith,
    Assign,
    Bound,
    Cmp,
    Const,
    Expr,
    For,
    If,
    Ite,
    Local,
    Not,
    Or,
    Quant,
    Read,
    SetLocal,
    SpecError,
    Stmt,
    unknown_node,
)

INF = 1 << 40  # larger than any model value: the "no candidate" of an unrolled min/max
UNBOUNDED = (-(1 << 62), 1 << 62)  # the range of a value nothing is known of

Code = int | bool | str  # a folded constant, or Python source
Range = tuple[int, int]  # an interval of values
Facts = dict[tuple[str, bool], Range]  # (scalar variable, primed) -> what is known of it
CodeEnv = dict[Bound | ActionParam, Code]  # a quantifier or loop variable, a parameter -> code
Ranges = dict[Bound | ActionParam, Range]  # the same -> the values it takes


# each arithmetic operator on Python ints (// and % floor, as TLA+'s \\div and % with a
# positive divisor, and as numba compiles them)
ARITH: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "min": min, "max": max,
    "*": lambda a, b: a * b, "//": lambda a, b: a // b, "%": lambda a, b: a % b}


def _const(c: Code) -> TypeGuard[int | bool]:
    return not isinstance(c, str)


def src(c: Code) -> str:
    if isinstance(c, bool):
        return "True" if c else "False"
    return str(c) if isinstance(c, int) else c


class DomainErrors:
    """The numbered ways a spec can leave its declared domains: a write of a value outside a
    variable's domain, or an index outside its shape, in an action's guard or effect, in a
    property, or in Init. Code c (from 1) is ``DomainError(variable, where)``; the kernel
    reports the code, the engines the name."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = [("", "")]  # code 0: no error

    def code(self, var: str, where: str) -> int:
        key = (var, where)
        if key not in self.entries:
            self.entries.append(key)
        return self.entries.index(key)

    def name(self, code: int) -> str:
        var, where = self.entries[code]
        return domain_error_name(var, where)


def shared(gen: ExprGen, texts: list[str], names: Callable[[], str]) -> tuple[list[str],
                                                                          list[str]]:
    """Common subexpressions of ``texts`` (code ``gen`` generated since its ``tally`` was
    last cleared) computed once, ahead: the assignments to put before the texts and the texts
    that use them. Only code that cannot fail and reads nothing that needed a fact is taken
    (it may run where it was behind a condition). Big actions repeat big subexpressions, and
    numba's compile time grows with the code it is given."""
    cands = sorted((c for c, n in gen.tally.items() if n >= 2 and "_oob(" not in c
                    and not any(u in c for u in gen.unsafe)), key=len)
    gen.tally.clear()
    defs: list[tuple[str, str]] = []
    done: list[tuple[str, str]] = []
    for c in cands:
        for old, new in done:  # the smaller ones already taken
            c = c.replace(old, new)
        if sum(t.count(c) for t in texts) + sum(d.count(c) for _, d in defs) < 2:
            continue
        name = names()
        texts = [t.replace(c, name) for t in texts]
        defs.append((name, c))
        done.append((c, name))
    return [f"{name} = {d}" for name, d in defs], texts


def _checked(c: Code) -> bool:
    """Whether generated source ``c`` holds a run-time check (so evaluating it may fail)."""
    return isinstance(c, str) and "_oob(" in c


def _scalar(e: Expr) -> TypeGuard[Read]:
    return isinstance(e, Read) and not e.index


def _meet(a: Range | None, b: Range) -> Range:
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
        # how often a fact narrowed a read's range: code generated without a use may run in
        # any order (a junction of such parts is evaluated whole, without branches)
        self.fact_uses = 0
        # common subexpressions (``shared``): how often each composite code was generated,
        # and the reads whose index needed a fact (not to be evaluated ahead of it)
        self.tally: Counter[str] = Counter()
        self.unsafe: set[str] = set()

    # -- facts -------------------------------------------------------------------------------------

    def facts_of(self, e: Expr, holds: bool = True) -> Facts:
        """Ranges of scalar variables implied by ``e`` being true (or false): comparisons of a
        scalar with a constant, under conjunctions, disjunctions and negations."""
        if isinstance(e, Not):
            return self.facts_of(e.a, not holds)
        if isinstance(e, (And, Or)) and isinstance(e, And) == holds:
            out: Facts = {}
            for a in e.args:
                for k, known in self.facts_of(a, holds).items():
                    out[k] = _meet(out.get(k), known)
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
        r: Range | None = {"==": (c, c), "<": (lo, c - 1), "<=": (lo, c), ">": (c + 1, hi),
                           ">=": (c, hi)}.get(op)
        if op == "!=":
            r = (lo + 1, hi) if c == lo else (lo, hi - 1) if c == hi else (lo, hi)
        if r is None:  # every operator is one of the above
            return {}
        return {(a.var.name, a.primed): r}

    @contextmanager
    def assuming(self, facts: Facts) -> Iterator[None]:
        """A context in which ``facts`` hold too."""
        saved = self.facts
        merged = dict(saved)
        for k, r in facts.items():
            merged[k] = _meet(merged.get(k), r)
        self.facts = merged
        try:
            yield
        finally:
            self.facts = saved

    # -- value ranges ----------------------------------------------------------------------------

    def rng(self, e: Expr, env: CodeEnv, inner: Ranges | None = None) -> Range:
        """An interval holding every value ``e`` can take (as generated under ``env``)."""
        inner = inner or {}
        r = self.rng
        match e:
            case Const():
                return (int(e.value), int(e.value))
            case Bound() | ActionParam():
                if e in inner:
                    return inner[e]
                code = env.get(e)
                if code is None:
                    return (0, e.size - 1) if isinstance(e, ActionParam) else UNBOUNDED
                return self.code_ranges.get(code, UNBOUNDED) if isinstance(code, str) \
                    else (code, code)
            case Local():
                return self.local_ranges.get(e.name, UNBOUNDED)
            case Read():
                if e.var.sort == BOOL:
                    return (0, 1)
                known = self.facts.get((e.var.name, e.primed)) if not e.index else None
                if known is None:
                    return (e.var.lo, e.var.hi)
                self.fact_uses += 1
                return known
            case Arith():
                (a0, a1), (b0, b1) = r(e.a, env, inner), r(e.b, env, inner)
                if e.op == "+":
                    return (a0 + b0, a1 + b1)
                if e.op == "-":
                    return (a0 - b1, a1 - b0)
                if e.op == "min":
                    return (min(a0, b0), min(a1, b1))
                if e.op == "*":  # b is a constant
                    return (min(a0 * b0, a1 * b0), max(a0 * b0, a1 * b0))
                if e.op == "//":  # b is a positive constant
                    return (a0 // b0, a1 // b0)
                if e.op == "%":
                    return (0, b0 - 1) if a1 - a0 >= b0 or a0 % b0 > a1 % b0 else (a0 % b0,
                                                                                    a1 % b0)
                return (max(a0, b0), max(a1, b1))
            case Ite():
                (a0, a1), (b0, b1) = r(e.then, env, inner), r(e.other, env, inner)
                return (min(a0, b0), max(a1, b1))
            case Quant():
                if e.kind in ("forall", "exists"):
                    return (0, 1)
                if e.kind == "count":
                    return (0, e.n)
                within = dict(inner)
                within[e.var] = (0, e.n - 1)
                (a0, a1), (b0, b1) = r(e.body, env, within), r(e.reduction[1], env, inner)
                return (min(a0, b0), max(a1, b1))
            case Cmp() | And() | Or() | Not():
                return (0, 1)
            case _:
                raise unknown_node(e, "codegen: unknown expression node")

    def index_checks(self, e: Read, env: CodeEnv, idx: list[Code]) -> list[str]:
        """The conditions an index of ``e`` needs at run time (those not provably in shape)."""
        conds = []
        for ie, code, d in zip(e.index, idx, e.var.shape):
            lo, hi = (int(code), int(code)) if _const(code) else self.rng(ie, env)
            if _const(code) and not 0 <= int(code) < d:
                return ["False"]
            if lo < 0 or hi > d - 1:
                conds.append(f"0 <= {src(code)} < {d}")
        return conds

    def __call__(self, e: Expr, env: CodeEnv) -> Code:
        uses = self.fact_uses
        c = self._gen(e, env)
        if isinstance(c, str):
            if isinstance(e, Read):
                if self.fact_uses != uses:
                    self.unsafe.add(c)
            elif len(c) >= 16 and c[0] == "(" and c[-1] == ")":
                self.tally[c] += 1
        return c

    def _gen(self, e: Expr, env: CodeEnv) -> Code:
        g = self
        match e:
            case Const():
                return e.value
            case Bound() | ActionParam():
                return env[e]
            case Local():
                return "l_" + e.name
            case Read():
                return g.read(e, env)
            case Arith():
                a, b = g(e.a, env), g(e.b, env)
                if _const(a) and _const(b):
                    return ARITH[e.op](a, b)
                if e.op in ("+", "-", "*", "//", "%"):
                    if _const(b) and b == 0 and e.op in ("+", "-"):
                        return a
                    return f"({src(a)} {e.op} {src(b)})"
                return f"{e.op}({src(a)}, {src(b)})"
            case Cmp():
                a, b = g(e.a, env), g(e.b, env)
                if _const(a) and _const(b):
                    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b}[e.op]
                return f"({src(a)} {e.op} {src(b)})"
            case And() | Or():  # each argument runs only when the ones before let it
                parts: list[Code] = []
                known: Facts = {}  # facts of the parts before (``facts_of``)
                uses = self.fact_uses
                for x in e.args:
                    with self.assuming(known):
                        parts.append(g(x, env))
                    for k, r in self.facts_of(x, isinstance(e, And)).items():
                        known[k] = _meet(known.get(k), r)
                # parts that cannot fail and need no fact of another: evaluated whole, `&` /
                # `|` (a short-circuit `and` is a branch, and numba compiles big functions'
                # branches slowly)
                eager = self.fact_uses == uses and not any(_checked(p) for p in parts)
                return self.junction(parts, "and" if isinstance(e, And) else "or", eager)
            case Not():
                a = g(e.a, env)
                return (not a) if _const(a) else f"(not {a})"
            case Ite():
                c = g(e.cond, env)
                if _const(c):
                    return g(e.then if c else e.other, env)
                with self.assuming(self.facts_of(e.cond, True)):
                    a = g(e.then, env)
                with self.assuming(self.facts_of(e.cond, False)):
                    b = g(e.other, env)
                if _const(a) and _const(b) and a == b and type(a) is type(b) \
                        and not _checked(c):
                    return a
                if (_const(a) and _const(b) and type(a) is int and type(b) is int
                        and {a, b} == {0, 1}):  # a boolean as 0 or 1: no branch
                    return f"int({c})" if a == 1 else f"int(not {c})"
                return f"({src(a)} if {c} else {src(b)})"
            case Quant():
                return self.quant(e, env)
            case _:
                raise unknown_node(e, "codegen: unknown expression node")

    def junction(self, parts: list[Code], op: str, eager: bool = False) -> Code:
        unit = op == "and"
        kept: list[str] = []  # the parts that are not constants
        for p in parts:
            if not isinstance(p, str):  # a constant
                if bool(p) != unit:
                    # the parts before still run, as in the interpreter, when one may fail
                    if any(_checked(k) for k in kept):
                        return "(" + f" {op} ".join(kept + [str(not unit)]) + ")"
                    return not unit
                continue
            kept.append(p)
        if not kept:
            return unit
        if eager:
            op = "&" if unit else "|"
        return kept[0] if len(kept) == 1 else "(" + f" {op} ".join(kept) + ")"

    def read(self, e: Read, env: CodeEnv) -> Code:
        idx = [self(i, env) for i in e.index]
        cell = self.cell(e, env, idx)
        conds = self.index_checks(e, env, idx)
        if conds:
            code = self.errors.code(e.var.name, self.where)
            cell = f"({cell} if {' and '.join(conds)} else _oob(err, {code}, {e.var.lo}))"
            self.checks += 1
        return f"({cell} != 0)" if e.var.sort == BOOL else cell

    def cell(self, e: Read, env: CodeEnv, idx: list[Code] | None = None) -> str:
        """The source of the row element ``e`` reads (as stored), with no index check."""
        var = e.var
        row = self.nxt if e.primed else self.cur
        if row is None:
            raise SpecError(f"codegen: {var.name} read from a state this predicate has no "
                            "access to")
        if idx is None:
            idx = [self(i, env) for i in e.index]
        idx = [int(i) if _const(i) else i for i in idx]
        base = self.layout.offsets[var.name]
        const_part, terms, stride = base, [], 1
        for i, d in reversed(list(zip(idx, var.shape))):
            if not isinstance(i, str):  # a constant
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

    def quant(self, e: Quant, env: CodeEnv) -> Code:
        def at(i: int, x: Expr) -> Code:
            inner = dict(env)
            inner[e.var] = i
            return self(x, inner)

        if e.kind in ("forall", "exists"):
            uses = self.fact_uses
            parts = [at(i, e.body) for i in range(e.n)]
            eager = self.fact_uses == uses and not any(_checked(p) for p in parts)
            return self.junction(parts, "and" if e.kind == "forall" else "or", eager)
        if e.kind == "count":
            total, terms = 0, []
            for i in range(e.n):
                c = at(i, e.body)
                if _const(c):
                    total += int(bool(c))
                else:
                    terms.append(f"(1 if {c} else 0)" if _checked(c) else f"int({c})")
            if not terms:
                return total
            return "(" + " + ".join(terms + ([str(total)] if total else [])) + ")"
        # min / max with a condition and a default
        sentinel = INF if e.kind == "min" else -INF
        cond, default_expr = e.reduction
        cands = []
        for i in range(e.n):
            c = at(i, cond)
            if _const(c):
                if c:
                    cands.append(at(i, e.body))
                continue
            v = at(i, e.body)
            cands.append(f"({src(v)} if {c} else {sentinel})")
        default = self(default_expr, env)
        if not cands:
            return default
        if all(_const(c) for c in cands):
            return min(cands) if e.kind == "min" else max(cands)
        inner = cands[0] if len(cands) == 1 else f"{e.kind}({', '.join(map(src, cands))})"
        if any(_const(c) for c in cands):  # some candidate always counts: never the sentinel
            return src(inner)
        if _checked(default):  # evaluated only when no candidate counts, as the interpreter does
            return f"({src(default)} if {inner} == {sentinel} else {inner})"
        return f"_or_default({inner}, {sentinel}, {src(default)})"


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
        # every temporary a fresh name: numba rebuilds SSA form for each name assigned more
        # than once, in time that grows with the function's blocks (minutes for big actions)
        self.temps = itertools.count()
        self.ret = "return"  # how a failed check leaves the function

    def begin(self, where: str, stmts: Iterable[Stmt], env: CodeEnv, ret: str = "return"
              ) -> None:
        """Before generating a body: name its errors and bound the values of its locals (a
        fixpoint over every assignment; what does not settle is unbounded)."""
        self.ex.where = where
        self.ret = ret
        ranges: dict[str, tuple[int, int]] = {}
        self.ex.local_ranges = ranges
        sets: list[tuple[SetLocal, Ranges]] = []

        def scan(block: Iterable[Stmt], inner: Ranges) -> None:
            for s in block:
                match s:
                    case SetLocal():
                        sets.append((s, dict(inner)))
                    case If():
                        scan(s.then, inner)
                        scan(s.other, inner)
                    case For():
                        within = dict(inner)
                        within[s.var] = (0, s.n - 1)
                        scan(s.body, within)
                    case Assign():
                        pass
                    case _:
                        raise unknown_node(s, "codegen: unknown statement")

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

    def __call__(self, stmts: Iterable[Stmt], env: CodeEnv, depth: int) -> list[str]:
        pad = "    " * depth
        out: list[str] = []
        for s in stmts:
            self.ex.tally.clear()  # each statement's common subexpressions go just before it
            match s:
                case Assign():
                    out.extend(self.share(self.assign(s, env, pad), pad))
                case SetLocal():
                    out.extend(self.share([f"{pad}l_{s.local.name} = "
                                           f"{src(self.ex(s.value, env))}"], pad))
                case If():
                    c = self.ex(s.cond, env)
                    if _const(c):
                        out.extend(self(s.then if c else s.other, env, depth))
                        continue
                    out.extend(self.share([f"{pad}if {c}:"], pad))
                    out.extend(self(s.then, env, depth + 1) or [pad + "    pass"])
                    if s.other:
                        out.append(f"{pad}else:")
                        out.extend(self(s.other, env, depth + 1))
                case For():
                    name = f"i{next(self.loops)}"
                    inner = dict(env)
                    inner[s.var] = name
                    self.ex.code_ranges[name] = (0, s.n - 1)
                    out.append(f"{pad}for {name} in range({s.n}):")
                    out.extend(self(s.body, inner, depth + 1) or [pad + "    pass"])
                case _:
                    raise unknown_node(s, "codegen: unknown statement")
        return out

    def share(self, lines: list[str], pad: str) -> list[str]:
        pre, lines = shared(self.ex, lines, lambda: f"_c{next(self.temps)}")
        return [pad + p for p in pre] + lines

    def assign(self, s: Assign, env: CodeEnv, pad: str) -> list[str]:
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
                k = f"_k{next(self.temps)}"
                out.append(f"{pad}{k} = {i}")
                idx[n] = k
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
            val = str(int(bool(v))) if _const(v) else f"int({v})"
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
        tmp = f"_v{next(self.temps)}"
        return out + [f"{pad}{tmp} = {v}",
                      f"{pad}if ({tmp} < {var.lo}) | ({tmp} > {var.hi}):",
                      f"{pad}    {fail}",
                      f"{pad}    {self.ret}",
                      f"{pad}{tgt} = {tmp}"]
