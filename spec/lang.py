"""The specification language: typed expressions, effect statements, actions and properties.

A spec is plain data. Every backend (the compiled BFS kernel, the replay interpreter, the Z3
translator, the Spark partition function) walks the same objects; none keeps its own copy of the
protocol. Sizes are static: quantifiers and loops range over ``0..n-1`` for a Python int ``n``
fixed when the spec is built, so every backend may unroll them.

Expressions are built with Python operators (``a + 1``, ``a == b``, ``p & q``, ``~p``) and the
helpers below. An expression has no Python truth value: ``if expr:`` raises, so a guard can never
be silently evaluated at build time.

Effects are statements with sequential semantics: the action's statements run in order on a copy
of the pre-state, each reading what the earlier ones wrote. The guard reads the pre-state.
"""

from __future__ import annotations

import itertools
import numbers
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

if TYPE_CHECKING:
    from types import FrameType, TracebackType

    from typing_extensions import Never  # typing's own from Python 3.11

    from .protocol import Protocol
    from .types import Type, TypedVar

INT = "int"
BOOL = "bool"

F = TypeVar("F", bound=Callable[..., object])  # an action's function, kept as it is


class SpecError(ValueError):
    """A malformed spec, raised when the spec is built and naming the action or property at
    fault. ``at`` is ``FILE:LINE`` of the spec's code at fault once it is known (then the
    message starts with it)."""

    at: str = ""


# The language's own modules: a spec's line is the first frame outside them (the Kafka model's
# lines count as a spec's; so do a user's files).
_LANGUAGE = frozenset({"hwcheck.spec.lang", "hwcheck.spec.types", "hwcheck.spec.protocol",
                       "contextlib"})


def _spec_frame(frame: FrameType) -> bool:
    name = frame.f_globals.get("__name__", "")
    return name not in _LANGUAGE and not name.startswith("hwcheck.checker.") \
        and not frame.f_code.co_filename.startswith("<")


def place(filename: str, line: int) -> str:
    """``FILE:LINE``, the file relative to the working folder when it is inside it."""
    try:
        rel = os.path.relpath(filename)
        shown = filename if rel.startswith("..") else rel
    except ValueError:  # another drive
        shown = filename
    return f"{shown}:{line}"


def caller() -> str:
    """``FILE:LINE`` of the spec's code that called into the language (the first frame outside
    it): where a property or a node was declared. Empty when there is none."""
    f: FrameType | None = sys._getframe(1)
    while f is not None and not _spec_frame(f):
        f = f.f_back
    return "" if f is None else place(f.f_code.co_filename, f.f_lineno)


def _library(filename: str) -> bool:
    """Whether a file is the standard library's or an installed package's."""
    global _LIBRARIES
    if _LIBRARIES is None:
        import sysconfig

        paths = sysconfig.get_paths()
        _LIBRARIES = tuple({os.path.realpath(paths[k]) + os.sep
                            for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths})
    return os.path.realpath(filename).startswith(_LIBRARIES)


_LIBRARIES: tuple[str, ...] | None = None


def raised_at(tb: TracebackType | None) -> str:
    """``FILE:LINE`` of the innermost frame of a traceback that is the spec's code: outside the
    language, and outside the libraries it calls when there is such a frame."""
    at = mine = ""
    while tb is not None:
        if _spec_frame(tb.tb_frame):
            at = place(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
            if not _library(tb.tb_frame.f_code.co_filename):
                mine = at
        tb = tb.tb_next
    return mine or at


def one_line(e: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none)."""
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def located(e: BaseException, at: str, what: str = "") -> SpecError:
    """``e`` as a SpecError that says where the spec went wrong: ``FILE:LINE: what: message``.
    An error that already says where is kept; ``what`` (``action Send``) replaces the bare
    name the language's own messages start with."""
    if isinstance(e, SpecError) and e.at:
        return e
    msg = one_line(e) if isinstance(e, SpecError) else f"{type(e).__name__}: {one_line(e)}"
    if what and not msg.startswith(what):
        kind, _, bare = what.rpartition(" ")
        if msg.startswith((bare + ":", bare + " ")):  # "Send: ...", "Send guard: ..."
            msg = f"{kind} {msg}" if kind else msg
        else:
            msg = f"{what}: {msg}"
    out = SpecError(f"{at}: {msg}" if at else msg)
    out.at = at
    return out


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------


class ExprBase:
    """Base of every expression node: the operators that build expressions. ``sort`` is INT or
    BOOL. ``Expr`` (below) is the union of the node classes: what a reader takes and matches
    on, so that mypy proves it handles every node."""

    __slots__ = ()

    @property
    def sort(self) -> str:
        """INT or BOOL: each node class says which."""
        raise NotImplementedError

    # ``lift(self)`` is ``self`` (every subclass is a node class of ``Expr``), typed as one
    def __add__(self, other: Value) -> Arith:
        return Arith("+", lift(self), lift(other))

    def __radd__(self, other: Value) -> Arith:
        return Arith("+", lift(other), lift(self))

    def __sub__(self, other: Value) -> Arith:
        return Arith("-", lift(self), lift(other))

    def __rsub__(self, other: Value) -> Arith:
        return Arith("-", lift(other), lift(self))

    # products and quotients by constants: the constant is always the right operand
    def __mul__(self, other: Value) -> Arith:
        return Arith("*", lift(self), _constant(other, "*"))

    def __rmul__(self, other: Value) -> Arith:
        return Arith("*", lift(self), _constant(other, "*"))

    def __floordiv__(self, other: Value) -> Arith:
        return Arith("//", lift(self), _constant(other, "//", positive=True))

    def __mod__(self, other: Value) -> Arith:
        return Arith("%", lift(self), _constant(other, "%", positive=True))

    def __eq__(self, other: Value) -> Cmp:  # type: ignore[override]
        return Cmp("==", lift(self), lift(other))

    def __ne__(self, other: Value) -> Cmp:  # type: ignore[override]
        return Cmp("!=", lift(self), lift(other))

    def __lt__(self, other: Value) -> Cmp:
        return Cmp("<", lift(self), lift(other))

    def __le__(self, other: Value) -> Cmp:
        return Cmp("<=", lift(self), lift(other))

    def __gt__(self, other: Value) -> Cmp:
        return Cmp("<", lift(other), lift(self))

    def __ge__(self, other: Value) -> Cmp:
        return Cmp("<=", lift(other), lift(self))

    def __and__(self, other: Value) -> Expr:
        return conj(lift(self), other)

    def __rand__(self, other: Value) -> Expr:
        return conj(other, lift(self))

    def __or__(self, other: Value) -> Expr:
        return disj(lift(self), other)

    def __ror__(self, other: Value) -> Expr:
        return disj(other, lift(self))

    def __invert__(self) -> Not:
        return Not(lift(self))

    def __bool__(self) -> bool:
        raise SpecError(f"an expression ({show(self)}) has no Python truth value: `if`, "
                        "`and`, `or`, `not` and chained comparisons cannot test it; use ite(), "
                        "Block.when() or &, |, ~")

    __hash__ = object.__hash__


@dataclass(frozen=True, eq=False)
class Const(ExprBase):
    value: int | bool

    @property
    def sort(self) -> str:
        return BOOL if isinstance(self.value, bool) else INT


@dataclass(frozen=True, eq=False)
class Read(ExprBase):
    """A state variable's element: ``var[index...]``; ``primed`` reads the next state."""

    var: Var
    index: tuple[Expr, ...]
    primed: bool = False

    @property
    def sort(self) -> str:
        return self.var.sort


@dataclass(frozen=True, eq=False)
class Bound(ExprBase):
    """The variable of a quantifier, a reduction or a loop: an int in ``0..n-1``."""

    name: str
    sort = INT


@dataclass(frozen=True, eq=False)
class ActionParam(ExprBase):
    """An action's parameter (for example the replica of FetchRequest(f))."""

    name: str
    size: int
    sort = INT


@dataclass(frozen=True, eq=False)
class Local(ExprBase):
    """A local of an action body, written by Block.let / Block.assign."""

    name: str
    sort: str = INT


@dataclass(frozen=True, eq=False)
class Arith(ExprBase):
    """``a op b``. For ``*``, ``//`` (floor division, TLA+ ``\\div``) and ``%`` (TLA+ ``%``)
    ``b`` is a constant, positive for the last two."""

    op: str  # + - min max * // %
    a: Expr
    b: Expr
    sort = INT


@dataclass(frozen=True, eq=False)
class Cmp(ExprBase):
    op: str  # == != < <=
    a: Expr
    b: Expr
    sort = BOOL


@dataclass(frozen=True, eq=False)
class And(ExprBase):
    args: tuple[Expr, ...]
    sort = BOOL


@dataclass(frozen=True, eq=False)
class Or(ExprBase):
    args: tuple[Expr, ...]
    sort = BOOL


@dataclass(frozen=True, eq=False)
class Not(ExprBase):
    a: Expr
    sort = BOOL


@dataclass(frozen=True, eq=False)
class Ite(ExprBase):
    cond: Expr
    then: Expr
    other: Expr

    @property
    def sort(self) -> str:
        return self.then.sort


@dataclass(frozen=True, eq=False)
class Quant(ExprBase):
    """A reduction over ``var in 0..n-1``.

    kind: ``forall``/``exists`` (body is BOOL, result BOOL); ``count`` (body BOOL, result INT);
    ``min``/``max`` (the least/greatest ``body`` over the ``var`` where ``cond`` holds, ``default``
    when there is none).
    """

    kind: str
    var: Bound
    n: int
    body: Expr
    cond: Expr | None = None
    default: Expr | None = None

    @property
    def sort(self) -> str:
        return BOOL if self.kind in ("forall", "exists") else INT

    @property
    def reduction(self) -> tuple[Expr, Expr]:
        """A min/max reduction's condition and default (``validate`` requires both)."""
        if self.cond is None or self.default is None:
            raise SpecError(f"{self.kind} needs a condition and a default")
        return self.cond, self.default


# Every expression node. A reader of expressions takes an ``Expr`` and matches on these classes,
# ending in ``unknown_node``: mypy then fails on a reader that forgets a node added here.
Expr: TypeAlias = Const | Read | Bound | ActionParam | Local | Arith | Cmp | And | Or | Not | Ite \
    | Quant
# What the operators and helpers take where an expression goes: a node or a Python int or bool
Value: TypeAlias = "Expr | int"


def unknown_node(node: Never, what: str) -> SpecError:
    """The error a reader raises in the last case of its ``match`` over ``Expr`` or ``Stmt``
    (``raise unknown_node(e, ...)``): to mypy it is ``assert_never`` (a node class without a
    case of its own reaches it, a type error); at run time, something that is no node of the
    language (a tree built around it by hand) is a SpecError: ``what`` and the type's name
    (``codegen: unknown expression node Foo``)."""
    return SpecError(f"{what} {type(node).__name__}")


def _constant(x: object, op: str, positive: bool = False) -> Const:
    c = x if isinstance(x, Const) else lift(x) if isinstance(x, (bool, int)) else None
    if not isinstance(c, Const) or isinstance(c.value, bool):
        raise SpecError(f"{op} takes an integer constant as one operand, got {show(x)}")
    if positive and c.value <= 0:
        raise SpecError(f"{op} takes a positive constant divisor, got {c.value}")
    return c


def lift(x: object) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, (bool, int)):
        return Const(x)
    if isinstance(x, Var):
        raise SpecError(f"cannot use the variable {x.name} itself in an expression: read an "
                        f"element, {x.name}[{', '.join('i' for _ in x.shape)}]")
    raise SpecError(f"cannot use {show(x)} ({type(x).__name__}) in an expression")


TRUE = Const(True)


def conj(*args: Value) -> Expr:
    flat: list[Expr] = []
    for a in map(lift, args):
        flat.extend(a.args if isinstance(a, And) else (a,))
    return flat[0] if len(flat) == 1 else And(tuple(flat))


def disj(*args: Value) -> Expr:
    flat: list[Expr] = []
    for a in map(lift, args):
        flat.extend(a.args if isinstance(a, Or) else (a,))
    return flat[0] if len(flat) == 1 else Or(tuple(flat))


def implies(a: Value, b: Value) -> Expr:
    return disj(Not(lift(a)), b)


def ite(cond: Value, then: Value, other: Value) -> Expr:
    return Ite(lift(cond), lift(then), lift(other))


def min_(a: Value, b: Value) -> Expr:
    return Arith("min", lift(a), lift(b))


def max_(a: Value, b: Value) -> Expr:
    return Arith("max", lift(a), lift(b))


_bound_ids = itertools.count()


def _is_size(n: object) -> bool:
    """Whether ``n`` is a size: an integer (a Python or numpy one, not a bool) >= 0."""
    return isinstance(n, numbers.Integral) and not isinstance(n, bool) and int(n) >= 0


def _bound(hint: str, n: int = 0, what: str = "a quantifier") -> Bound:
    """A fresh bound variable for ``what`` over ``0..n-1`` (``n`` checked: a size)."""
    if not _is_size(n):
        raise SpecError(f"{what} ranges over 0..n-1 for a size n (an integer >= 0), got "
                        f"{show(n)}")
    return Bound(f"{hint}{next(_bound_ids)}")


def forall(n: int, body: Callable[[Bound], Value], hint: str = "i") -> Expr:
    v = _bound(hint, n, "forall")
    return Quant("forall", v, n, lift(body(v)))


def exists(n: int, body: Callable[[Bound], Value], hint: str = "i") -> Expr:
    v = _bound(hint, n, "exists")
    return Quant("exists", v, n, lift(body(v)))


def count(n: int, cond: Callable[[Bound], Value], hint: str = "i") -> Expr:
    v = _bound(hint, n, "count")
    return Quant("count", v, n, lift(cond(v)))


def min_over(n: int, value: Callable[[Bound], Value], where: Callable[[Bound], Value],
             default: Value, hint: str = "i") -> Expr:
    """The least ``value(i)`` over the ``i in 0..n-1`` where ``where(i)``; ``default`` if none."""
    v = _bound(hint, n, "min_over")
    return Quant("min", v, n, lift(value(v)), lift(where(v)), lift(default))


def max_over(n: int, value: Callable[[Bound], Value], where: Callable[[Bound], Value],
             default: Value, hint: str = "i") -> Expr:
    """The greatest ``value(i)`` over the ``i in 0..n-1`` where ``where(i)``; ``default`` if
    none."""
    v = _bound(hint, n, "max_over")
    return Quant("max", v, n, lift(value(v)), lift(where(v)), lift(default))


def prime(e: Expr) -> Expr:
    """The same expression over the next state (for action properties)."""
    return map_expr(e, lambda x: Read(x.var, tuple(prime(i) for i in x.index), True)
                    if isinstance(x, Read) else None)


def map_expr(e: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild ``e`` bottom-up, replacing each node for which ``fn`` returns an expression."""
    r = fn(e)
    if r is not None:
        return r
    match e:
        case Const() | Bound() | ActionParam() | Local():
            return e
        case Read():
            return Read(e.var, tuple(map_expr(i, fn) for i in e.index), e.primed)
        case Arith() | Cmp():
            return type(e)(e.op, map_expr(e.a, fn), map_expr(e.b, fn))
        case And() | Or():
            return type(e)(tuple(map_expr(a, fn) for a in e.args))
        case Not():
            return Not(map_expr(e.a, fn))
        case Ite():
            return Ite(map_expr(e.cond, fn), map_expr(e.then, fn), map_expr(e.other, fn))
        case Quant():
            return Quant(e.kind, e.var, e.n, map_expr(e.body, fn),
                         None if e.cond is None else map_expr(e.cond, fn),
                         None if e.default is None else map_expr(e.default, fn))
        case _:
            raise unknown_node(e, "unknown expression node")


def reads_next(e: Expr) -> bool:
    """Whether ``e`` reads the next state (a transition predicate)."""
    return any(isinstance(x, Read) and x.primed for x in walk(e))


def children(e: Expr) -> tuple[Expr, ...]:
    match e:
        case Read():
            return e.index
        case Arith() | Cmp():
            return (e.a, e.b)
        case And() | Or():
            return e.args
        case Not():
            return (e.a,)
        case Ite():
            return (e.cond, e.then, e.other)
        case Quant():
            return tuple(x for x in (e.body, e.cond, e.default) if x is not None)
        case Const() | Bound() | ActionParam() | Local():
            return ()
        case _:
            raise unknown_node(e, "unknown expression node")


def walk(e: Expr) -> Iterator[Expr]:
    yield e
    for c in children(e):
        yield from walk(c)


_BINARY = {"+": 4, "-": 4, "*": 5, "//": 5, "%": 5, "==": 3, "!=": 3, "<": 3, "<=": 3}


def show(e: object, limit: int = 120) -> str:
    """An expression as a spec writer reads it: ``y % 3``, ``log[r, k - 1]``, ``x' == x + 1``,
    ``forall i in 0..2: ok[i]`` (cut at ``limit`` characters). Anything that is not an
    expression is shown as Python shows it."""
    if not isinstance(e, Expr):
        text = repr(e)
    else:
        text = _show(e, 0)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _show(e: Expr, outer: int) -> str:
    """``e`` in parentheses when it binds looser than its context ``outer`` (0: none)."""
    if not isinstance(e, Expr):  # a stray object in a tree built by hand: its type's name
        return type(e).__name__
    prec, text = _show_node(e)
    return f"({text})" if prec and outer > prec else text


def _show_node(e: Expr) -> tuple[int, str]:
    match e:
        case Const():
            return 0, str(e.value)
        case Read():
            idx = f"[{', '.join(_show(i, 0) for i in e.index)}]" if e.index else ""
            return 0, f"{e.var.name}{idx}" + ("'" if e.primed else "")
        case Bound() | Local():
            return 0, e.name
        case ActionParam():
            return 0, e.name.rpartition(".")[2]  # "Send.p0" -> "p0"
        case Arith() if e.op in ("min", "max"):
            return 0, f"{e.op}({_show(e.a, 0)}, {_show(e.b, 0)})"
        case Arith() | Cmp():
            p = _BINARY[e.op]
            return p, f"{_show(e.a, p)} {e.op} {_show(e.b, p + 1)}"
        case And() | Or():
            p, op = (2, " & ") if isinstance(e, And) else (1, " | ")
            return p, op.join(_show(a, p + 1) for a in e.args)
        case Not():
            return 0, f"~{_show(e.a, 9)}"
        case Ite():
            return 0, f"ite({_show(e.cond, 0)}, {_show(e.then, 0)}, {_show(e.other, 0)})"
        case Quant():
            head = f"{e.kind} {e.var.name} in 0..{e.n - 1}"
            if e.kind in ("min", "max"):
                cond, default = e.reduction
                return 0, (f"{e.kind}({_show(e.body, 0)} for {e.var.name} in 0..{e.n - 1} if "
                           f"{_show(cond, 0)}, else {_show(default, 0)})")
            return 0, f"({head}: {_show(e.body, 0)})"
        case _:  # ``show`` passes nothing else
            raise unknown_node(e, "unknown expression node")


# --------------------------------------------------------------------------------------------
# State variables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Var:
    """A state variable: a scalar or an array of small integers with a finite domain lo..hi.

    ``kind`` is how traces present it: ``scalar``, ``map`` (a function of its indices) or ``set``
    (a one-dimensional BOOL array read as the set of indices where it is true).
    """

    name: str
    shape: tuple[int, ...]
    lo: int
    hi: int
    sort: str = INT
    kind: str = "scalar"
    doc: str = ""
    # the value of every cell before Init writes it: 0, or the domain's bound nearest to 0;
    # a typed variable's leaf sets its own (an absent optional's sentinel, say)
    start: int | None = None

    @property
    def initial(self) -> int:
        return self.start if self.start is not None else max(self.lo, min(self.hi, 0))

    def __getitem__(self, index: Value | tuple[Value, ...]) -> Read:
        idx = index if isinstance(index, tuple) else (index,)
        if len(idx) != len(self.shape):
            raise SpecError(f"{self.name} takes {len(self.shape)} "
                            f"{'index' if len(self.shape) == 1 else 'indices'}, got {len(idx)}")
        return Read(self, tuple(lift(i) for i in idx))

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def cells(self) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(d) for d in self.shape))


# --------------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Assign:
    target: Read
    value: Expr


@dataclass(frozen=True, eq=False)
class SetLocal:
    local: Local
    value: Expr


@dataclass(eq=False)
class If:
    cond: Expr
    then: list[Stmt]
    other: list[Stmt] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class For:
    var: Bound
    n: int
    body: list[Stmt]


# Every statement. A reader of statements matches on these classes, ending in ``unknown_node``
# (as a reader of ``Expr`` does).
Stmt: TypeAlias = Assign | SetLocal | If | For


class Block:
    """Builds an action body (or the initial state) as a list of statements.

    >>> b.set(hw[f], 0)
    >>> n = b.let("n", leo(f))
    >>> with b.when(n > 0):
    ...     b.set(log[f, n - 1], 0)
    >>> with b.otherwise():
    ...     ...
    >>> with b.each(R) as r:
    ...     b.set(rleo[r], 0)
    """

    def __init__(self, owner: str, nparams: int = 0):
        self.owner = owner
        self.nparams = nparams  # the action's parameters; choices are numbered after them
        self.choices: list[ActionParam] = []
        self.guard: list[Expr] = []
        self.post: list[Expr] = []  # Init's conditions on the state it built
        self.stmts: list[Stmt] = []
        self._stack: list[list[Stmt]] = [self.stmts]
        self._names: set[str] = set()
        self._last_if: If | None = None

    def require(self, *conds: Value) -> None:
        """Conjoin ``conds`` to the guard. Guards read the pre-state, so they come first. In
        Init, a ``require`` after the effect constrains the state built (TLA+'s conjuncts of
        Init that test the variables): a choice that breaks it gives no initial state."""
        if self.stmts and self.owner == "Init":
            self.post.extend(lift(c) for c in conds)
            return
        if self.stmts:
            raise SpecError(f"{self.owner}: require() after an effect statement")
        self.guard.extend(lift(c) for c in conds)

    def choose(self, n: int) -> ActionParam:
        """A value in ``0..n-1`` chosen by the action (TLA+ ``\\E x \\in 0..n-1`` in the
        action's body): every choice is its own successor, as if it were one more parameter of
        the action. Constrain it with ``require``; so, like a guard, it comes before the
        effect. In Init, each choice that ``require`` allows is an initial state (TLA+'s
        ``x \\in S`` in Init)."""
        if self.stmts:
            raise SpecError(f"{self.owner}: choose() after an effect statement")
        if not isinstance(n, int) or n < 1:
            raise SpecError(f"{self.owner}: choose() needs a positive number of values, got {n!r}")
        p = ActionParam(f"{self.owner}.p{self.nparams + len(self.choices)}", n)
        self.choices.append(p)
        return p

    def put(self, target: Any, value: Any) -> None:
        """Write a whole typed value (a record, a set, a sequence, ...: ``spec/types.py``);
        every part of ``value`` is read before ``target`` is written."""
        from hwcheck.spec.types import put

        put(self, target, value)

    def append(self, seq: Any, value: Any) -> None:
        """Append ``value`` to the sequence ``seq`` (past its capacity: a domain error)."""
        from hwcheck.spec.types import append

        append(self, seq, value)

    def truncate(self, seq: Any, k: Value) -> None:
        """Keep the first ``k`` items of the sequence ``seq``."""
        from hwcheck.spec.types import truncate

        truncate(self, seq, k)

    def insert(self, s: Any, value: Any, count: int = 1) -> None:
        """Add ``value`` to the set or bag ``s`` (``types.ValueSet``, ``types.Bag``): kept in
        sorted slots; past the capacity, a domain error."""
        from hwcheck.spec.types import insert

        insert(self, s, value, count)

    def remove(self, s: Any, k: Value) -> None:
        """Remove the member in slot ``k`` of the set or bag ``s``."""
        from hwcheck.spec.types import remove

        remove(self, s, k)

    def deliver(self, s: Any, k: Value) -> None:
        """One delivery of the bag ``s``'s value in slot ``k`` (its count goes down by one)."""
        from hwcheck.spec.types import deliver

        deliver(self, s, k)

    def _emit(self, s: Stmt) -> None:
        self._stack[-1].append(s)
        self._last_if = s if isinstance(s, If) else None

    def set(self, target: Expr, value: Value) -> None:
        """``target := value``. ``target`` must be a state variable's element (a ``Read``); it is
        typed as any expression so that a typed value's part (``seq.len``, ``s.count(k)``:
        ``spec/types.py``) is given as it is, and anything else is refused here."""
        if not isinstance(target, Read) or target.primed:
            raise SpecError(f"{self.owner}: can only assign to a state variable element")
        v = lift(value)
        if v.sort != target.sort:
            raise SpecError(f"{self.owner}: assigning a {v.sort} to {target.var.name} "
                            f"({target.sort})")
        self._emit(Assign(target, v))

    def let(self, name: str, value: Value) -> Local:
        v = lift(value)
        base, k = name, 1
        while name in self._names:
            k += 1
            name = f"{base}{k}"
        self._names.add(name)
        loc = Local(name, v.sort)
        self._emit(SetLocal(loc, v))
        return loc

    def assign(self, local: Local, value: Value) -> None:
        v = lift(value)
        if v.sort != local.sort:
            raise SpecError(f"{self.owner}: assigning a {v.sort} to local {local.name} "
                            f"({local.sort})")
        self._emit(SetLocal(local, v))

    @contextmanager
    def when(self, cond: Value) -> Iterator[None]:
        node = If(lift(cond), [])
        self._emit(node)
        self._stack.append(node.then)
        try:
            yield
        finally:
            self._stack.pop()
            self._last_if = node

    @contextmanager
    def otherwise(self) -> Iterator[None]:
        node = self._last_if
        if node is None or node.other:
            raise SpecError(f"{self.owner}: otherwise() must follow a when() block")
        self._stack.append(node.other)
        try:
            yield
        finally:
            self._stack.pop()
            self._last_if = None

    @contextmanager
    def each(self, n: int, hint: str = "i") -> Iterator[Bound]:
        v = _bound(hint, n, "each")
        node = For(v, n, [])
        self._emit(node)
        self._stack.append(node.body)
        try:
            yield v
        finally:
            self._stack.pop()
            self._last_if = None


def _modified(m: object) -> list[str]:
    """The names of the core variables an entry of an action's ``modifies`` stands for: a
    variable, a read of one, its name, or a typed variable (``spec/types.py``) or a part of
    one."""
    if isinstance(m, str):
        return [m]
    if isinstance(m, Read):
        return [m.var.name]
    if isinstance(m, Var):
        return [m.name]
    from hwcheck.spec.types import TypedVar, stored_vars

    if isinstance(m, TypedVar):
        return [v.name for _, v in m.leaves]
    return stored_vars(m)


def walk_stmts(stmts: Iterable[Stmt]) -> Iterator[Stmt]:
    for s in stmts:
        yield s
        match s:
            case If():
                yield from walk_stmts(s.then)
                yield from walk_stmts(s.other)
            case For():
                yield from walk_stmts(s.body)
            case Assign() | SetLocal():
                pass
            case _:
                raise unknown_node(s, "unknown statement")


def stmt_exprs(s: Stmt) -> tuple[Expr, ...]:
    match s:
        case Assign():
            return (s.target, s.value)
        case SetLocal():
            return (s.value,)
        case If():
            return (s.cond,)
        case For():
            return ()
        case _:
            raise unknown_node(s, "unknown statement")


# --------------------------------------------------------------------------------------------
# Actions and properties
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Action:
    """Guard + effect + the variables the effect may modify. ``params`` are static ranges."""

    name: str
    params: tuple[ActionParam, ...]
    guard: Expr
    body: tuple[Stmt, ...]
    modifies: frozenset[str]
    doc: str = ""
    # "weak" or "strong" fairness of each instance (an instance continuously, or infinitely
    # often, enabled is eventually taken); None: none. Read only by the liveness check.
    fairness: str | None = None
    origin: str = ""  # FILE:LINE of the spec's code that declared it (error messages)

    def instances(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(p.size) for p in self.params)))


@dataclass(frozen=True, eq=False)
class Invariant:
    name: str
    expr: Expr
    doc: str = ""
    origin: str = ""  # FILE:LINE of the spec's code that declared it


@dataclass(frozen=True, eq=False)
class ActionProperty:
    """A property of every transition (state, next state); reads the next state with prime()."""

    name: str
    expr: Expr
    doc: str = ""
    origin: str = ""  # FILE:LINE of the spec's code that declared it


@dataclass(frozen=True, eq=False)
class Reachable:
    """A predicate that should be reachable: a guard against vacuous passes. Over a state, or
    over a transition when it reads the next state with prime()."""

    name: str
    expr: Expr
    doc: str = ""
    origin: str = ""  # FILE:LINE of the spec's code that declared it


FAIRNESS = ("weak", "strong")
LIVENESS_FORMS = ("leads_to", "always_eventually", "eventually_always")


@dataclass(frozen=True, eq=False)
class Liveness:
    """A property of infinite behaviours, decided on the state graph under the actions' declared
    fairness. The behaviours are the infinite ones: any state may stutter (repeat unchanged), so
    a state with no successor stutters forever.

    - ``leads_to``: every state satisfying ``p`` is followed (now or later) by one satisfying
      ``q`` (TLA+ ``p ~> q``);
    - ``always_eventually``: ``p`` holds infinitely often (``[]<>p``; ``q`` unused);
    - ``eventually_always``: from some point on ``p`` holds forever (``<>[]p``).

    ``quiet``: names of actions that, for this property, eventually stop: only behaviours that
    take them finitely often are considered (TLA+ ``<>[][~A]_vars => property``), the way to say
    "once failures stop"."""

    name: str
    form: str
    p: Expr
    q: Expr | None = None
    doc: str = ""
    quiet: tuple[str, ...] = ()
    origin: str = ""  # FILE:LINE of the spec's code that declared it

    @property
    def predicates(self) -> list[tuple[str, Expr]]:
        """The state predicates the check reads: (``<name>.p``, p) and, for leads-to, q."""
        out = [(f"{self.name}.p", self.p)]
        if self.q is not None:
            out.append((f"{self.name}.q", self.q))
        return out


@dataclass(frozen=True, eq=False)
class FairGroup:
    """Fairness of several action instances taken together, as TLA+'s ``WF_v(A)`` and
    ``SF_v(A)`` of an action ``A`` that more than one instance takes (a disjunction inside it,
    an ``\\E`` below it): ``weak``, a behaviour on which some member is enabled in every state
    from some point on takes some member infinitely often; ``strong``, one on which some member
    is enabled infinitely often does. ``members``: (action name, its parameters' indices)."""

    name: str
    kind: str
    members: tuple[tuple[str, tuple[int, ...]], ...]
    origin: str = ""  # FILE:LINE of the spec's code that declared it


@dataclass(frozen=True)
class FairCondition:
    """One fairness condition over the spec's instances (by `Instance.index`): an action's
    instance with its declared fairness, or a `FairGroup`."""

    name: str
    kind: str
    instances: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Instance:
    """One action instance: the action and the values of its parameters."""

    index: int
    action: Action
    args: tuple[int, ...]

    @property
    def label(self) -> str:
        if not self.args:
            return self.action.name
        return f"{self.action.name}({', '.join(map(str, self.args))})"


def _origin_of(fn: Callable[..., object]) -> str:
    """``FILE:LINE`` of a function's definition (an action's body, Init's builder)."""
    code = getattr(fn, "__code__", None)
    return place(code.co_filename, code.co_firstlineno) if code is not None else ""


def _run_builder(fn: Callable[..., object], b: Block, what: str, origin: str,
                 *args: ActionParam) -> None:
    """Run the spec's function that states an action (or Init); a mistake in it is a SpecError
    naming ``what`` and the line of the spec's code that made it."""
    try:
        fn(b, *args)
    except Exception as e:  # noqa: BLE001 - the spec's code may raise anything; a BaseException
        # (sys.exit, Ctrl-C) goes on to whoever builds the spec (checker/protocols.py)
        raise located(e, raised_at(e.__traceback__) or origin, what) from None


def _lift_at(x: object, at: str, what: str) -> Expr:
    try:
        return lift(x)
    except SpecError as e:
        raise located(e, at, what) from None


@dataclass(eq=False)
class Spec:
    """A declarative state-transition model: variables, initial state, actions, properties."""

    name: str
    params: dict[str, Any]
    variables: list[Var] = field(default_factory=list)
    init: list[Stmt] = field(default_factory=list)
    # Init's choices (``Block.choose`` in Init) and the guard over them and the bottom state:
    # each choice the guard allows is an initial state; none: one initial state
    init_params: tuple[ActionParam, ...] = ()
    init_guard: Expr = TRUE
    init_post: Expr = TRUE  # Init's conditions on the state it built (over it and the choices)
    actions: list[Action] = field(default_factory=list)
    invariants: list[Invariant] = field(default_factory=list)
    action_properties: list[ActionProperty] = field(default_factory=list)
    reachables: list[Reachable] = field(default_factory=list)
    liveness: list[Liveness] = field(default_factory=list)
    fair_groups: list[FairGroup] = field(default_factory=list)  # besides each action's own
    # the variables declared with a structured type (``spec/types.py``), each stored as the
    # core variables of its leaves (which ``variables`` lists)
    typed: list[TypedVar] = field(default_factory=list)
    # VIEW: the names of the core variables a state's fingerprint covers (None: all of them);
    # two states that agree on these are one state (``Spec.view_of``)
    view: tuple[str, ...] | None = None
    # The Protocol that built this spec (None for a spec built by hand) and where that protocol
    # was loaded from (``package.module:NAME`` or ``/path/file.py:NAME``), so that another
    # process can rebuild the same spec from (source, params).
    protocol: Protocol | None = field(default=None, repr=False, compare=False)
    source: str = ""

    def __getstate__(self) -> dict[str, Any]:
        # a protocol holds functions: a pickled spec travels without it
        state = dict(self.__dict__)
        state["protocol"] = None
        return state

    # -- declaration ---------------------------------------------------------------------------

    def _declare(self, var: Var) -> Var:
        if any(v.name == var.name for v in self.variables):
            raise SpecError(f"variable {var.name} declared twice")
        if var.lo > var.hi:
            raise SpecError(f"variable {var.name}: empty domain {var.lo}..{var.hi}")
        for d in var.shape:
            if not _is_size(d):
                raise SpecError(f"variable {var.name}: its shape {var.shape} needs sizes "
                                f"(integers >= 0), got {d!r}")
        self.variables.append(var)
        return var

    def scalar(self, name: str, lo: int, hi: int, doc: str = "") -> Read:
        return self._declare(Var(name, (), lo, hi, INT, "scalar", doc))[()]

    def array(self, name: str, shape: tuple[int, ...], lo: int, hi: int, doc: str = "") -> Var:
        return self._declare(Var(name, tuple(shape), lo, hi, INT, "map", doc))

    def declare(self, name: str, type: Type, over: Sequence[int] = (), doc: str = "") -> Any:
        """A variable of a structured type (``spec/types.py``: Int, Bool, Enum, Record, Opt,
        SetOf, Seq), over the dimensions ``over``: its handle, or a ``TypedVar`` to index."""
        from hwcheck.spec.types import declare

        return declare(self, name, type, tuple(over), doc)

    def set_of(self, name: str, n: int, doc: str = "") -> Var:
        """A subset of 0..n-1, stored as n booleans."""
        return self._declare(Var(name, (n,), 0, 1, BOOL, "set", doc))

    def initial(self, build: Callable[[Block], None]) -> None:
        """Init: ``build(b)`` writes the initial state over the bottom of every domain. With
        ``b.choose`` (and ``b.require`` over the choices) it states several initial states, one
        per allowed choice, as TLA+'s ``x \\in S`` conjuncts in Init do."""
        b = Block("Init")
        _run_builder(build, b, "Init", _origin_of(build))
        self.init = b.stmts
        self.init_params = tuple(b.choices)
        self.init_guard = conj(*b.guard) if b.guard else TRUE
        self.init_post = conj(*b.post) if b.post else TRUE

    @property
    def init_action(self) -> Action:
        """Init as an action from the bottom state (every variable at its start value): its
        parameters are Init's choices, each instance one candidate initial state."""
        return Action("Init", self.init_params, self.init_guard, tuple(self.init),
                      frozenset(v.name for v in self.variables))

    def action(self, name: str, over: Sequence[int] = (), modifies: Sequence[object] = (),
               doc: str = "", fairness: str | None = None) -> Callable[[F], F]:
        """Decorator: ``@spec.action("Crash", over=[R], modifies=[alive, ...])`` on
        ``def crash(b, f): ...``. The function states the guard with ``b.require`` and the effect
        with the other Block methods. ``fairness``: "weak" or "strong", for each instance apart
        (the liveness properties assume it); None, the default: none."""
        if fairness not in (None, *FAIRNESS):
            raise SpecError(f"{name}: fairness must be 'weak', 'strong' or None, got {fairness!r}")

        at = caller()
        for n in over:
            if not _is_size(n):
                raise located(SpecError(f"over takes sizes (integers >= 0), got {n!r}"), at,
                              f"action {name}")

        def deco(fn: F) -> F:
            origin = _origin_of(fn) or at
            params = tuple(ActionParam(f"{name}.p{i}", n) for i, n in enumerate(over))
            b = Block(name, len(params))
            _run_builder(fn, b, f"action {name}", origin, *params)
            params += tuple(b.choices)
            try:
                names = frozenset(n for m in modifies for n in _modified(m))
            except SpecError as e:
                raise located(e, at, f"action {name}") from None
            self.actions.append(Action(name, params, conj(*b.guard) if b.guard else TRUE,
                                       tuple(b.stmts), names, doc or (fn.__doc__ or "").strip(),
                                       fairness, origin))
            return fn

        return deco

    def view_of(self, *variables: object) -> None:
        """TLA+'s VIEW: states are told apart by ``variables`` alone (core variables, typed
        variables or their names); the others (auxiliary counters, histories) ride along with
        the first state found of each view. hwcheck classifies the view when it checks: sound
        when no excluded variable is read by a guard, by a property or by the update of an
        included one, order-dependent otherwise (the counts may then depend on the order of
        exploration, as TLC's do)."""
        typed = {t.name: t for t in self.typed}
        names: list[str] = []
        for v in variables:
            for n in _modified(typed.get(v, v) if isinstance(v, str) else v):
                if n not in names:
                    names.append(n)
        self.view = tuple(names)

    def invariant(self, name: str, expr: Value, doc: str = "") -> None:
        at = caller()
        self.invariants.append(Invariant(name, _lift_at(expr, at, f"invariant {name}"), doc,
                                         at))

    def action_property(self, name: str, expr: Value, doc: str = "") -> None:
        at = caller()
        self.action_properties.append(ActionProperty(
            name, _lift_at(expr, at, f"action property {name}"), doc, at))

    def reachable(self, name: str, expr: Value, doc: str = "") -> None:
        at = caller()
        self.reachables.append(Reachable(name, _lift_at(expr, at, f"reachability check {name}"),
                                         doc, at))

    def leads_to(self, name: str, p: Value | Callable[..., Value],
                 q: Value | Callable[..., Value], doc: str = "", quiet: Sequence[str] = (),
                 over: Sequence[int] = ()) -> None:
        """Every state satisfying ``p`` is followed, on every fair behaviour, by one satisfying
        ``q`` (``p ~> q``). With ``over`` (sizes), ``p`` and ``q`` are functions of one index
        per size, and the property is one for each (``\\A i \\in 0..n-1 : p(i) ~> q(i)``), named
        ``name(i)``."""
        self._liveness(name, "leads_to", p, q, doc, quiet, over, caller())

    def always_eventually(self, name: str, p: Value | Callable[..., Value], doc: str = "",
                          quiet: Sequence[str] = (), over: Sequence[int] = ()) -> None:
        """On every fair behaviour ``p`` holds infinitely often (``[]<>p``); ``over`` as
        `leads_to`'s."""
        self._liveness(name, "always_eventually", p, None, doc, quiet, over, caller())

    def eventually_always(self, name: str, p: Value | Callable[..., Value], doc: str = "",
                          quiet: Sequence[str] = (), over: Sequence[int] = ()) -> None:
        """On every fair behaviour ``p`` holds from some point on (``<>[]p``); ``over`` as
        `leads_to`'s."""
        self._liveness(name, "eventually_always", p, None, doc, quiet, over, caller())

    def _liveness(self, name: str, form: str, p: Value | Callable[..., Value],
                  q: Value | Callable[..., Value] | None, doc: str, quiet: Sequence[str],
                  over: Sequence[int], at: str) -> None:
        what = f"liveness property {name}"
        combos: list[tuple[int, ...]] = list(itertools.product(*(range(n) for n in over))) \
            if over else [()]
        for idx in combos:
            label = f"{name}({', '.join(map(str, idx))})" if over else name
            pe: Value | Callable[..., Value] = p
            qe: Value | Callable[..., Value] | None = q
            if over:
                try:
                    if not callable(p) or (q is not None and not callable(q)):
                        raise TypeError("a value is not a function")
                    pe = p(*idx)
                    qe = None if q is None else q(*idx)
                except TypeError as e:  # not a function of the indices
                    raise located(SpecError(f"with over=, p and q are functions of one index "
                                            f"per size ({e})"), at, what) from None
            self.liveness.append(Liveness(
                label, form, _lift_at(pe, at, what),
                None if qe is None else _lift_at(qe, at, what), doc, tuple(quiet), at))

    def fair(self, name: str, kind: str, members: Sequence[tuple[str, Sequence[int]]]) -> None:
        """Fairness (``kind``: "weak" or "strong") of the action instances ``members`` taken
        together (`FairGroup`); an instance is in one fairness condition at most."""
        self.fair_groups.append(FairGroup(name, kind, tuple((a, tuple(args))
                                                            for a, args in members), caller()))

    # -- derived -------------------------------------------------------------------------------

    def instances(self) -> list[Instance]:
        out: list[Instance] = []
        for a in self.actions:
            for args in a.instances():
                out.append(Instance(len(out), a, args))
        return out

    def fairness_conditions(self) -> list[FairCondition]:
        """Every fairness condition: each instance of an action declared fair, then each
        `FairGroup`. A SpecError if an instance is in two, or a group names no instance."""
        insts = self.instances()
        out = [FairCondition(i.label, i.action.fairness, (i.index,))
               for i in insts if i.action.fairness is not None]
        by_key = {(i.action.name, i.args): i.index for i in insts}
        for g in self.fair_groups:
            where = f"fairness {g.name}"
            try:
                if g.kind not in FAIRNESS:
                    raise SpecError(f"{where}: fairness must be 'weak' or 'strong', "
                                    f"got {g.kind!r}")
                missing = [m for m in g.members if m not in by_key]
                if missing:
                    a, args = missing[0]
                    raise SpecError(f"{where}: {a}{list(args)} is no action instance")
                if not g.members:
                    raise SpecError(f"{where}: no action instance")
            except SpecError as e:
                raise located(e, g.origin, where) from None
            out.append(FairCondition(g.name, g.kind, tuple(sorted({by_key[m]
                                                                   for m in g.members}))))
        seen: dict[int, str] = {}
        for c in out:
            for i in c.instances:
                if i in seen:
                    raise SpecError(f"{insts[i].label} is in two fairness conditions "
                                    f"({seen[i]} and {c.name}): each instance is in one at "
                                    "most")
                seen[i] = c.name
        return out

    def var(self, name: str) -> Var:
        for v in self.variables:
            if v.name == name:
                return v
        raise SpecError(f"unknown variable {name}")

    def invariant_named(self, name: str) -> Invariant:
        for i in self.invariants:
            if i.name == name:
                return i
        known = ", ".join(i.name for i in self.invariants)
        raise SpecError(f"unknown invariant {name!r} (known: {known})")

    # -- validation ----------------------------------------------------------------------------

    def validate(self) -> Spec:
        """Check the whole spec; raise SpecError naming the action or property at fault."""
        declared = {v.name: v for v in self.variables}
        self._check_expr("Init guard", self.init_guard, BOOL, set(), set(self.init_params), set(),
                         False)
        self._check_body("Init", self.init, self.init_params, frozenset(declared))
        self._check_expr("Init condition", self.init_post, BOOL, set(), set(self.init_params),
                         set(), False)
        for a in self.actions:
            try:
                self._check_expr(a.name + " guard", a.guard, BOOL, set(), set(a.params), set(),
                                 False)
                self._check_body(a.name, a.body, a.params, a.modifies)
                unknown = a.modifies - set(declared)
                if unknown:
                    raise SpecError(f"{a.name}: modifies unknown variable(s) "
                                    f"{', '.join(sorted(unknown))}")
            except SpecError as e:
                raise located(e, a.origin, f"action {a.name}") from None
        for kind, props, primed in (("invariant", self.invariants, False),
                                    ("action property", self.action_properties, True),
                                    ("reachability check", self.reachables, True),
                                    ("liveness property", self.liveness, False)):
            seen = set()
            for p in props:
                try:
                    if p.name in seen:
                        raise SpecError(f"{kind} {p.name} declared twice")
                    seen.add(p.name)
                    if isinstance(p, Liveness):
                        self._check_liveness(p, declared)
                        continue
                    self._check_expr(f"{kind} {p.name}", p.expr, BOOL, set(), set(), set(),
                                     primed)
                except SpecError as e:
                    raise located(e, p.origin, f"{kind} {p.name}") from None
        others = {p.name for g in (self.invariants, self.action_properties, self.reachables)
                  for p in g}
        for p in self.liveness:
            if p.name in others:
                raise located(SpecError("another property has its name"), p.origin,
                              f"liveness property {p.name}")
        if len({a.name for a in self.actions}) != len(self.actions):
            raise SpecError("two actions share a name")
        if self.view is not None:
            strays = [n for n in self.view if n not in declared]
            if strays or not self.view:
                raise SpecError(f"the view names unknown variable(s) {', '.join(strays)}"
                                if strays else "the view names no variable")
        self.fairness_conditions()  # the groups name instances, each in one condition at most
        return self

    def _check_liveness(self, p: Liveness, declared: dict[str, Var]) -> None:
        where = f"liveness property {p.name}"
        if p.form not in LIVENESS_FORMS:
            raise SpecError(f"{where}: unknown form {p.form!r}")
        if (p.q is None) != (p.form != "leads_to"):
            raise SpecError(f"{where}: leads-to takes p and q, the others p alone")
        for e in (p.p, p.q):
            if e is not None:  # state predicates: a liveness property reads no next state
                self._check_expr(where, e, BOOL, set(), set(), set(), False)
        actions = {a.name for a in self.actions}
        for a in p.quiet:
            if a not in actions:
                raise SpecError(f"{where}: quiet names {a!r}, which is not an action")

    def _check_var(self, where: str, var: Var) -> None:
        if var not in self.variables:
            raise SpecError(f"{where}: reads or writes undeclared variable {var.name}")

    def _check_expr(self, where: str, e: Expr, sort: str | None, bounds: set[Bound],
                    params: set[ActionParam], locals_: set[str], primed_ok: bool) -> None:
        if sort is not None and e.sort != sort:
            raise SpecError(f"{where}: expected a {sort} expression, got {e.sort}")
        match e:
            case Read():
                self._check_var(where, e.var)
                if e.primed and not primed_ok:
                    raise SpecError(f"{where}: reads the next state of {e.var.name} outside an "
                                    "action property")
                for i in e.index:
                    self._check_expr(where, i, INT, bounds, params, locals_, primed_ok)
            case Bound():
                if e not in bounds:
                    raise SpecError(f"{where}: bound variable {e.name} used outside its scope")
            case ActionParam():
                if e not in params:
                    raise SpecError(f"{where}: parameter {e.name} of another action")
            case Local():
                if e.name not in locals_:
                    raise SpecError(f"{where}: local {e.name} read before it is set in scope")
            case Const():
                pass
            case Arith():
                if e.op in ("*", "//", "%") and (not isinstance(e.b, Const) or (
                        e.op != "*" and int(e.b.value) <= 0)):
                    raise SpecError(f"{where}: {e.op} needs a constant (positive divisor) on "
                                    "the right")
                for x in (e.a, e.b):
                    self._check_expr(where, x, INT, bounds, params, locals_, primed_ok)
            case Cmp():
                if e.a.sort != e.b.sort or (e.op in ("<", "<=") and e.a.sort != INT):
                    raise SpecError(f"{where}: comparison {e.op} of {e.a.sort} and {e.b.sort}")
                for x in (e.a, e.b):
                    self._check_expr(where, x, None, bounds, params, locals_, primed_ok)
            case And() | Or():
                for x in e.args:
                    self._check_expr(where, x, BOOL, bounds, params, locals_, primed_ok)
            case Not():
                self._check_expr(where, e.a, BOOL, bounds, params, locals_, primed_ok)
            case Ite():
                self._check_expr(where, e.cond, BOOL, bounds, params, locals_, primed_ok)
                if e.then.sort != e.other.sort:
                    raise SpecError(f"{where}: ite branches of sorts {e.then.sort} and "
                                    f"{e.other.sort}")
                self._check_expr(where, e.then, None, bounds, params, locals_, primed_ok)
                self._check_expr(where, e.other, None, bounds, params, locals_, primed_ok)
            case Quant():
                inner = bounds | {e.var}
                body_sort = BOOL if e.kind in ("forall", "exists", "count") else INT
                self._check_expr(where, e.body, body_sort, inner, params, locals_, primed_ok)
                if e.kind in ("min", "max"):
                    if e.cond is None or e.default is None:
                        raise SpecError(f"{where}: {e.kind} needs a condition and a default")
                    self._check_expr(where, e.cond, BOOL, inner, params, locals_, primed_ok)
                    self._check_expr(where, e.default, INT, bounds, params, locals_, primed_ok)
            case _:
                raise unknown_node(e, f"{where}: unknown expression node")

    def _check_body(self, where: str, stmts: Sequence[Stmt], params: Sequence[ActionParam],
                    modifies: frozenset[str]) -> None:
        def check(block: Iterable[Stmt], bounds: set[Bound], locals_: set[str]) -> None:
            scope = set(locals_)
            for s in block:
                match s:
                    case Assign():
                        if s.target.var.name not in modifies:
                            raise SpecError(f"{where}: writes {s.target.var.name}, "
                                            f"which is not in its modifies list")
                        self._check_expr(where, s.target, None, bounds, set(params), scope,
                                         False)
                        self._check_expr(where, s.value, s.target.sort, bounds, set(params),
                                         scope, False)
                    case SetLocal():
                        self._check_expr(where, s.value, s.local.sort, bounds, set(params),
                                         scope, False)
                        scope.add(s.local.name)
                    case If():
                        self._check_expr(where, s.cond, BOOL, bounds, set(params), scope, False)
                        check(s.then, bounds, scope)
                        check(s.other, bounds, scope)
                    case For():
                        check(s.body, bounds | {s.var}, scope)
                    case _:
                        raise unknown_node(s, f"{where}: unknown statement")

        check(stmts, set(), set())
