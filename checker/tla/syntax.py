"""hwcheck's own TLA+ syntax tree: small frozen dataclasses, each node with its FILE:LINE:COL.

The parser (`parse.py`) builds these from tree-sitter-tlaplus's concrete syntax tree; the module
resolver, the evaluator and (later) the compiler read only these, never the tree-sitter nodes.
Infix, prefix and standard-module operators are all `OpApp` with the operator's canonical name
(``"+"``, ``"\\cup"``, ``"Len"``); user operators are `OpApp` too, resolved by name in scope.
"""

from __future__ import annotations

from dataclasses import dataclass

from hwcheck.spec.lang import SpecError


class TlaError(SpecError):
    """A TLA+ module, cfg or evaluation that hwcheck cannot accept: one line, naming
    ``FILE:LINE:COL`` and the problem (the command line prints it and exits 2)."""


@dataclass(frozen=True, slots=True)
class Pos:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def fail(pos: Pos | None, message: str) -> TlaError:
    """The one-line error at ``pos`` (a TlaError to raise). With a position it says where the
    module is at fault, so the language keeps it as it is when an action built from the module
    raises it (``SpecError.at``)."""
    err = TlaError(f"{pos}: {message}" if pos is not None else message)
    if pos is not None:
        err.at = str(pos)
    return err


# ------------------------------------------------------------------------------------------
# Expressions
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Expr:
    pos: Pos


@dataclass(frozen=True, slots=True)
class Num(Expr):
    value: int


@dataclass(frozen=True, slots=True)
class Str(Expr):
    value: str


@dataclass(frozen=True, slots=True)
class Bool(Expr):
    value: bool


@dataclass(frozen=True, slots=True)
class OpApp(Expr):
    """``name`` or ``name(args)``: an identifier, a user operator's application, a built-in
    infix/prefix operator or a standard-module operator (``Nat``, ``BOOLEAN`` included)."""

    name: str
    args: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class Instanced(Expr):
    """``I!Op(args)`` or ``I(p)!Op``: an operator of a named instance."""

    instance: str
    instance_args: tuple[Expr, ...]
    name: str
    args: tuple[Expr, ...]
    # ``A!B!Op``: the instances after the first (each with its arguments), in order
    chain: tuple[tuple[str, tuple[Expr, ...]], ...] = ()


@dataclass(frozen=True, slots=True)
class And(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Prime(Expr):
    expr: Expr


@dataclass(frozen=True, slots=True)
class Bound:
    """``x, y \\in S`` or ``<<x, y>> \\in S`` (``tuple`` true)."""

    names: tuple[str, ...]
    tuple: bool
    set: Expr


@dataclass(frozen=True, slots=True)
class Quant(Expr):
    kind: str  # "E" or "A"
    bounds: tuple[Bound, ...]
    body: Expr


@dataclass(frozen=True, slots=True)
class Choose(Expr):
    bound: Bound
    body: Expr


@dataclass(frozen=True, slots=True)
class SetEnum(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class SetFilter(Expr):
    bound: Bound
    pred: Expr


@dataclass(frozen=True, slots=True)
class SetMap(Expr):
    expr: Expr
    bounds: tuple[Bound, ...]


@dataclass(frozen=True, slots=True)
class FnLit(Expr):
    bounds: tuple[Bound, ...]
    body: Expr


@dataclass(frozen=True, slots=True)
class FnApp(Expr):
    fn: Expr
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Except(Expr):
    """``[f EXCEPT !path = e, ...]``: each path a tuple of ("app", args) or ("field", name)."""

    fn: Expr
    updates: tuple[tuple[tuple[tuple[str, object], ...], Expr], ...]


@dataclass(frozen=True, slots=True)
class At(Expr):
    """``@`` inside an EXCEPT's new value."""


@dataclass(frozen=True, slots=True)
class RecordLit(Expr):
    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, slots=True)
class RecordSet(Expr):
    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, slots=True)
class FnSet(Expr):
    domain: Expr
    range: Expr


@dataclass(frozen=True, slots=True)
class Dot(Expr):
    expr: Expr
    field: str


@dataclass(frozen=True, slots=True)
class Tuple(Expr):
    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class If(Expr):
    cond: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True, slots=True)
class Case(Expr):
    arms: tuple[tuple[Expr, Expr], ...]
    other: Expr | None


@dataclass(frozen=True, slots=True)
class Let(Expr):
    defs: tuple[Definition, ...]
    body: Expr


@dataclass(frozen=True, slots=True)
class Unchanged(Expr):
    expr: Expr


@dataclass(frozen=True, slots=True)
class Enabled(Expr):
    expr: Expr


@dataclass(frozen=True, slots=True)
class Conjunct(Expr):
    """``Inv!2``: the second conjunct (or disjunct) of the definition ``Inv``'s body."""

    name: str
    index: int


@dataclass(frozen=True, slots=True)
class LetFn(Expr):
    """The value of a function definition inside LET, in the LET's environment (the
    evaluator makes one for each ``f[x \\in S] == e`` it binds there)."""

    d: FnDef


@dataclass(frozen=True, slots=True)
class Lambda(Expr):
    """``LAMBDA x, y : e``, an operator given as an argument."""

    params: tuple[str, ...]
    body: Expr


@dataclass(frozen=True, slots=True)
class Unevaluable(Expr):
    """An expression TLC cannot evaluate either (an unbounded CHOOSE): an error where it is
    evaluated, nothing where the cfg gives its definition a value instead."""

    what: str


@dataclass(frozen=True, slots=True)
class Fairness(Expr):
    kind: str  # "WF" or "SF"
    vars: Expr
    action: Expr


@dataclass(frozen=True, slots=True)
class StepAction(Expr):
    """``[A]_v`` (``box``) or ``<<A>>_v``."""

    box: bool
    action: Expr
    vars: Expr


@dataclass(frozen=True, slots=True)
class Temporal(Expr):
    """``[]P``, ``<>P``, ``P ~> Q``: parsed (for SPECIFICATION and PROPERTY), never evaluated
    as a state or action predicate."""

    op: str  # "[]", "<>", "~>"
    args: tuple[Expr, ...]


# ------------------------------------------------------------------------------------------
# Units of a module
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    """An operator's formal parameter: ``x`` (arity 0) or ``Op(_, _)`` (arity 2)."""

    name: str
    arity: int


@dataclass(frozen=True, slots=True)
class OpDef:
    pos: Pos
    name: str
    params: tuple[Param, ...]
    body: Expr
    local: bool = False


@dataclass(frozen=True, slots=True)
class FnDef:
    """``f[x \\in S] == e``: a (possibly recursive) function."""

    pos: Pos
    name: str
    bounds: tuple[Bound, ...]
    body: Expr
    local: bool = False


@dataclass(frozen=True, slots=True)
class InstanceDef:
    """``INSTANCE M WITH a <- e`` (``name`` None: its definitions join this module's) or
    ``N(p) == INSTANCE M WITH ...``."""

    pos: Pos
    name: str | None
    params: tuple[Param, ...]
    module: str
    substitutions: tuple[tuple[str, Expr], ...]
    local: bool = False


Definition = OpDef | FnDef | InstanceDef


@dataclass(frozen=True, slots=True)
class Module:
    pos: Pos
    name: str
    extends: tuple[tuple[str, Pos], ...]
    constants: tuple[Param, ...]
    variables: tuple[str, ...]
    definitions: tuple[Definition, ...]
    assumptions: tuple[Expr, ...]
