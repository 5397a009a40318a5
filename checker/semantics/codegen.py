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

from hwcheck.spec.lang import (BOOL, ActionParam, And, Arith, Assign, Bound, Cmp, Const, Expr, For, If,
                       Ite, Local, Not, Or, Quant, Read, SetLocal, Spec, SpecError, reads_next)

from hwcheck.checker.semantics.layout import Layout

INF = 1 << 20  # larger than any model value: the "no candidate" of an unrolled min/max

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


class ExprGen:
    """Python source for expressions over rows ``cur`` (unprimed reads) and ``nxt`` (primed)."""

    def __init__(self, layout: Layout, cur: str, nxt: str | None = None):
        self.layout = layout
        self.cur = cur
        self.nxt = nxt

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
        if isinstance(e, And):
            return self.junction([g(x, env) for x in e.args], "and")
        if isinstance(e, Or):
            return self.junction([g(x, env) for x in e.args], "or")
        if isinstance(e, Not):
            a = g(e.a, env)
            return (not a) if _const(a) else f"(not {a})"
        if isinstance(e, Ite):
            c = g(e.cond, env)
            if _const(c):
                return g(e.then if c else e.other, env)
            a, b = g(e.then, env), g(e.other, env)
            if _const(a) and _const(b) and a == b and type(a) is type(b):
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
                    return not unit
                continue
            kept.append(p)
        if not kept:
            return unit
        return kept[0] if len(kept) == 1 else "(" + f" {op} ".join(kept) + ")"

    def read(self, e: Read, env: dict) -> Code:
        cell = self.cell(e, env)
        return f"({cell} != 0)" if e.var.sort == BOOL else cell

    def cell(self, e: Read, env: dict) -> str:
        """The source of the row element ``e`` reads (as stored, an int8)."""
        var = e.var
        row = self.nxt if e.primed else self.cur
        if row is None:
            raise SpecError(f"codegen: {var.name} read from a state this predicate has no access to")
        idx = [self(i, env) for i in e.index]
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
        return f"_or_default({inner}, {sentinel}, {_src(default)})"


class BodyGen:
    """Python source for statements; every read and write goes to row ``t``."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.ex = ExprGen(layout, "t")
        self.loops = itertools.count()

    def __call__(self, stmts, env: dict, depth: int) -> list[str]:
        pad = "    " * depth
        out: list[str] = []
        for s in stmts:
            if isinstance(s, Assign):
                tgt = self.ex.cell(s.target, env)
                if s.target.sort == BOOL:
                    v = self.ex(s.value, env)
                    val = str(int(bool(v))) if _const(v) else f"1 if {v} else 0"
                else:
                    val = _src(self.ex(s.value, env))
                out.append(f"{pad}{tgt} = {val}")
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
                out.append(f"{pad}for {name} in range({s.n}):")
                out.extend(self(s.body, inner, depth + 1) or [pad + "    pass"])
            else:
                raise SpecError(f"codegen: unknown statement {type(s).__name__}")
        return out


HEADER = '''\
# Generated by hwcheck's checker/semantics/codegen.py from the spec {name} {params}.
# Do not edit: it is rebuilt whenever the spec or the code generator changes.
import numpy as np
from numba import njit

from hwcheck.checker.semantics.fingerprint import fingerprint, table_insert

STRIDE = {stride}
NINST = {ninst}


@njit(cache=True, inline="always")
def _or_default(x, sentinel, default):
    return default if x == sentinel else x


@njit(cache=True)
def _copy(src, dst):
    for q in range(STRIDE):
        dst[q] = src[q]
'''


def generate(spec: Spec, layout: Layout | None = None) -> str:
    """The kernel module's source for ``spec``."""
    layout = layout or Layout.of(spec)
    props = Properties.of(spec)
    instances = spec.instances()
    lines = [HEADER.format(name=spec.name, params=spec.params, stride=layout.stride,
                           ninst=len(instances))]
    body = BodyGen(layout)

    for ai, a in enumerate(spec.actions):
        args = [f"p{i}" for i in range(len(a.params))]
        env = dict(zip(a.params, args))
        guard = ExprGen(layout, "s")(a.guard, env)
        lines.append(f"\n@njit(cache=True)\ndef g_{ai}({', '.join(['s', *args])}):"
                     f"  # {a.name} guard\n    return {_src(guard)}\n")
        stmts = body(a.body, env, 1) or ["    pass"]
        lines.append(f"\n@njit(cache=True)\ndef e_{ai}({', '.join(['t', *args])}):"
                     f"  # {a.name} effect\n" + "\n".join(stmts) + "\n")

    for j, (name, expr, _) in enumerate(props.state):
        lines.append(f"\n@njit(cache=True)\ndef sp_{j}(s):  # {name}\n"
                     f"    return {_src(ExprGen(layout, 's')(expr, {}))}\n")
    for j, (name, expr, _) in enumerate(props.transition):
        lines.append(f"\n@njit(cache=True)\ndef tp_{j}(s, n):  # {name}\n"
                     f"    return {_src(ExprGen(layout, 's', 'n')(expr, {}))}\n")

    lines.append(_init_fn(spec, layout, body))
    lines.append(_check_states(props))
    lines.append(_step_fn(spec))
    lines.append(_expand(spec, props))
    return "\n".join(lines)


def _init_fn(spec: Spec, layout: Layout, body: BodyGen) -> str:
    lines = ["\n@njit(cache=True)\ndef initial():", "    t = np.zeros(STRIDE, np.int8)"]
    for v in spec.variables:
        low = max(v.lo, min(v.hi, 0))
        if low:
            off = layout.offsets[v.name]
            lines.append(f"    t[{off}:{off + v.size}] = {low}")
    lines.extend(body(spec.init, {}, 1))
    lines.append("    return t\n")
    return "\n".join(lines)


def _hit(kind: str, test: str) -> str:
    """A hit is a violation (the predicate is false) or a witness (a reachability target holds)."""
    return test if kind == "reachable" else f"not {test}"


def _check_states(props: Properties) -> str:
    lines = ["\n@njit(cache=True)",
             "def check_states(rows, n, active, hits):",
             '    """For each active state predicate j still without a hit, set hits[j] to the',
             '    first row index in 0..n-1 that hits it. Returns how many are still open."""',
             "    for i in range(n):",
             "        s = rows[i]",
             "        open_ = 0"]
    for j, (name, _, kind) in enumerate(props.state):
        lines += [f"        if active[{j}] and hits[{j}] < 0:  # {name}",
                  f"            if {_hit(kind, f'sp_{j}(s)')}:",
                  f"                hits[{j}] = i",
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
    """step(inst, s, t): apply instance ``inst`` to ``s`` into ``t``; False when disabled."""
    lines = ["\n@njit(cache=True)", "def step(inst, s, t):"]
    for ai, a, base in _instances(spec):
        n = len(a.instances())
        sizes = [p.size for p in a.params]
        lines.append(f"    if inst < {base + n}:  # {a.name}")
        lines.append(f"        k = inst - {base}")
        args = []
        for i in reversed(range(len(sizes))):
            lines.append(f"        p{i} = k % {sizes[i]}")
            lines.append(f"        k //= {sizes[i]}")
        args = [f"p{i}" for i in range(len(sizes))]
        call = ", ".join(["s", *args])
        lines.append(f"        if not g_{ai}({call}):")
        lines.append("            return False")
        lines.append("        _copy(s, t)")
        lines.append(f"        e_{ai}({', '.join(['t', *args])})")
        lines.append("        return True")
    lines.append("    return False\n")
    return "\n".join(lines)


def _expand(spec: Spec, props: Properties) -> str:
    sig = "front, lo, hi, table, max_fill, filled, out, par, act, fps, tp_active, tp_row, tp_inst"
    doc = ('    """Expand rows lo..hi-1 of ``front``; append each successor the visited table has\n'
           '    not seen to out/par/act/fps. Stops before a row whose successors might overflow\n'
           '    ``out`` or push the table past ``max_fill`` entries. Returns (next row, entries\n'
           '    written, table fill, transitions generated)."""')
    lines = [f"\n@njit(cache=True)\ndef expand_dedup({sig}):", doc,
             "    t = np.empty(STRIDE, np.int8)",
             "    cap = out.shape[0]",
             "    gen = 0",
             "    w = 0",
             "    mask = table.size - 1",
             "    for i in range(lo, hi):",
             "        if w + NINST > cap or filled + NINST > max_fill:",
             "            return i, w, filled, gen",
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
        lines += [f"{pad}if g_{ai}({', '.join(['s', *args])}):  # {a.name}",
                  f"{pad}    gen += 1",
                  f"{pad}    _copy(s, t)",
                  f"{pad}    e_{ai}({', '.join(['t', *args])})",
                  f"{pad}    inst = {inst}"]
        for j, (pname, _, kind) in enumerate(props.transition):
            lines += [f"{pad}    if tp_active[{j}] and tp_row[{j}] < 0 and "
                      f"{_hit(kind, f'tp_{j}(s, t)')}:  # {pname}",
                      f"{pad}        tp_row[{j}] = i",
                      f"{pad}        tp_inst[{j}] = inst"]
        lines.append(f"{pad}    fp = fingerprint(t)")
        inner = pad + "        "
        lines.append(f"{pad}    if table_insert(table, mask, fp):")
        lines.append(f"{inner}filled += 1")
        lines += [f"{inner}_copy(t, out[w])",
                  f"{inner}par[w] = i",
                  f"{inner}act[w] = inst",
                  f"{inner}fps[w] = fp",
                  f"{inner}w += 1"]
    lines.append("    return hi, w, filled, gen\n")
    return "\n".join(lines)


def source_key(src: str) -> str:
    """The cache key of a generated module: its text and the run-time module it imports."""
    from hwcheck.checker.semantics import fingerprint as rt

    with open(rt.__file__, "rb") as f:
        rt_src = f.read()
    return hashlib.sha1(src.encode() + rt_src).hexdigest()[:16]
