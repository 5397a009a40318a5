"""A VIEW's classification: whether counting states by their view can depend on the order of
exploration.

Under a VIEW (``Spec.view``) two states that agree on the view's variables are one state: the
first found is kept and explored, the others are dropped. That is exact when the variables left
out never influence the ones kept or what is checked: then every state with a given view has
successors with the same views and the same verdicts, and the counts are those of the
quotient, whatever the order. hwcheck knows every action's read set, so it decides this
statically:

- **sound**: no excluded variable is read by a guard, by a property (invariant, action
  property, reachability check), or by the write of an included variable (its value, its
  index, a condition around it, or a local it is computed from);
- **order-dependent** otherwise, with the reasons: which state represents a view then depends
  on the order the states were found in, and so may the counts (TLC's as well), so they may
  differ from a full-state run's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hwcheck.spec.lang import (
    Action,
    Assign,
    Expr,
    For,
    If,
    Local,
    Read,
    SetLocal,
    Spec,
    Stmt,
    unknown_node,
    walk,
)


@dataclass(frozen=True)
class ViewClass:
    """``sound`` or ``order-dependent``, with the reasons of the latter (one line each)."""

    kind: str
    covered: tuple[str, ...]
    excluded: tuple[str, ...]
    reasons: tuple[str, ...] = ()

    @property
    def sound(self) -> bool:
        return self.kind == "sound"

    def line(self) -> str:
        head = (f"view: fingerprints over {len(self.covered)} of "
                f"{len(self.covered) + len(self.excluded)} variables (left out: "
                f"{', '.join(self.excluded) or 'none'}); ")
        if self.sound:
            return head + ("sound: no variable left out is read by a guard, a property or the "
                           "write of one kept, so the counts do not depend on the order of "
                           "exploration")
        return head + ("order-dependent: " + "; ".join(self.reasons[:3])
                       + ("; ..." if len(self.reasons) > 3 else "")
                       + ": counts may differ from a full-state run")


def _reads(e: Expr, locals_: dict[str, set[str]]) -> set[str]:
    out: set[str] = set()
    for x in walk(e):
        if isinstance(x, Read):
            out.add(x.var.name)
        elif isinstance(x, Local):
            out |= locals_.get(x.name, set())
    return out


def classify(spec: Spec) -> ViewClass | None:
    """The classification of ``spec``'s view; None without one."""
    if spec.view is None:
        return None
    kept = set(spec.view)
    names = [v.name for v in spec.variables]
    excluded = tuple(n for n in names if n not in kept)
    out = set(excluded)
    reasons: list[str] = []

    def note(why: str) -> None:
        if why not in reasons:
            reasons.append(why)

    for a in spec.actions:
        bad = _reads(a.guard, {}) & out
        if bad:
            note(f"the guard of {a.name} reads {', '.join(sorted(bad))}")
        locals_: dict[str, set[str]] = {}

        def body(stmts: Iterable[Stmt], ctx: set[str], a: Action = a,
                 locals_: dict[str, set[str]] = locals_) -> None:
            for s in stmts:
                match s:
                    case SetLocal():
                        deps = _reads(s.value, locals_) | ctx
                        locals_[s.local.name] = locals_.get(s.local.name, set()) | deps
                    case Assign():
                        deps = _reads(s.value, locals_) | ctx
                        for i in s.target.index:
                            deps |= _reads(i, locals_)
                        bad = deps & out
                        if s.target.var.name in kept and bad:
                            note(f"{a.name} writes {s.target.var.name} from "
                                 f"{', '.join(sorted(bad))}")
                    case If():
                        inner = ctx | _reads(s.cond, locals_)
                        body(s.then, inner)
                        body(s.other, inner)
                    case For():
                        body(s.body, ctx)
                    case _:
                        raise unknown_node(s, "unknown statement")

        body(list(a.body), set())
    for kind, group in (("invariant", spec.invariants),
                        ("action property", spec.action_properties),
                        ("reachability check", spec.reachables)):
        for p in group:
            bad = _reads(p.expr, {}) & out
            if bad:
                note(f"{kind} {p.name} reads {', '.join(sorted(bad))}")
    return ViewClass("order-dependent" if reasons else "sound",
                     tuple(n for n in names if n in kept), excluded, tuple(reasons))
