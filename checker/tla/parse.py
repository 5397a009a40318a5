"""TLA+ source to hwcheck's syntax tree (`syntax.py`), through the TLA+ community's grammar.

tree-sitter-tlaplus parses; this module only walks its concrete syntax tree. A parse error
(an ERROR or MISSING node) or a construct outside the fragment hwcheck evaluates is one
`TlaError` line, ``FILE:LINE:COL: ...``, never a traceback.
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from .syntax import (
    And,
    At,
    Bool,
    Bound,
    Case,
    Choose,
    Conjunct,
    Definition,
    Dot,
    Enabled,
    Except,
    Expr,
    Fairness,
    FnApp,
    FnDef,
    FnLit,
    FnSet,
    If,
    Instanced,
    InstanceDef,
    Lambda,
    Let,
    Module,
    Num,
    OpApp,
    OpDef,
    Or,
    Param,
    Pos,
    Prime,
    Quant,
    RecordLit,
    RecordSet,
    SetEnum,
    SetFilter,
    SetMap,
    StepAction,
    Str,
    Temporal,
    TlaError,
    Tuple,
    Unchanged,
    Unevaluable,
    fail,
)

Node = Any  # a tree_sitter.Node

# The grammar's infix symbols hwcheck evaluates, by node type, to the operator's canonical name.
INFIX = {
    "eq": "=", "neq": "/=", "lt": "<", "gt": ">", "leq": "<=", "geq": ">=",
    "in": "\\in", "notin": "\\notin", "subseteq": "\\subseteq", "subset": "\\subset",
    "supseteq": "\\supseteq", "supset": "\\supset",
    "cup": "\\cup", "cap": "\\cap", "setminus": "\\",
    "plus": "+", "minus": "-", "mul": "*", "div": "\\div", "mod": "%", "pow": "^",
    "dots_2": "..", "circ": "\\o", "map_to": ":>", "compose": "@@",
    "implies": "=>", "iff": "<=>", "equiv": "<=>",
    "plusplus": "++", "minusminus": "--", "ominus": "(-)", "oplus": "(+)",
    "sqsubseteq": "\\sqsubseteq", "preceq": "\\preceq",
}
PREFIX = {"lnot": "~", "negative": "-.", "powerset": "SUBSET", "union": "UNION",
          "domain": "DOMAIN"}
BUILTIN_SETS = {"nat_number_set": "Nat", "int_number_set": "Int", "boolean_set": "BOOLEAN",
                "string_set": "STRING", "real_number_set": "Real"}

COMMENTS = ("comment", "block_comment", "block_comment_text", "extramodular_text")

UNITS = ("extends", "constant_declaration", "variable_declaration", "operator_definition",
         "function_definition", "module_definition", "instance", "local_definition",
         "assumption", "recursive_declaration")

# Friendly names of grammar nodes outside the fragment, for the one-line error.
UNSUPPORTED = {
    "lambda": "LAMBDA", "real_number": "real numbers", "octal_number": "octal numbers",
    "unbounded_quantification": "an unbounded quantifier (\\E x : or \\A x :)",
    "temporal_forall": "temporal \\AA", "temporal_exists": "temporal \\EE",
    "unbounded_choose": "an unbounded CHOOSE", "module": "a module nested in a module",
    "theorem": "THEOREM", "proof": "a proof", "label": "a label",
    "subexpression": "a subexpression reference", "use_or_hide": "USE or HIDE",
}


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_tlaplus
    from tree_sitter import Language, Parser

    with warnings.catch_warnings():
        # tree-sitter-tlaplus 1.5 hands the language over as an int, which tree-sitter 0.2x
        # still accepts with a deprecation warning
        warnings.simplefilter("ignore", DeprecationWarning)
        return Parser(Language(tree_sitter_tlaplus.language()))


def parse_file(path: str | Path) -> Module:
    """The first module of the file at ``path``."""
    p = Path(path)
    try:
        source = p.read_bytes()
    except OSError as e:
        raise TlaError(f"{p}: cannot read: {e.strerror or e}") from None
    return parse_source(source, str(p))


def parse_source(source: bytes | str, file: str = "<tla>") -> Module:
    return parse_all(source, file)[0]


def parse_all(source: bytes | str, file: str = "<tla>") -> list[Module]:
    """Every module in the text, the first the file's own."""
    if isinstance(source, str):
        source = source.encode()
    tree = _parser().parse(source)
    return _Walker(file, source).modules(tree.root_node)


def parse_file_all(path: str | Path) -> list[Module]:
    """Every module of the file at ``path``."""
    p = Path(path)
    try:
        source = p.read_bytes()
    except OSError as e:
        raise TlaError(f"{p}: cannot read: {e.strerror or e}") from None
    return parse_all(source, str(p))


class _Walker:
    def __init__(self, file: str, source: bytes) -> None:
        self.file = file
        self.source = source

    def kids(self, n: Node) -> list[Node]:
        """The named children of ``n`` without comments (the grammar allows them anywhere)."""
        return [c for c in n.named_children if c.type not in COMMENTS]

    def pos(self, n: Node) -> Pos:
        row, col = n.start_point
        return Pos(self.file, row + 1, col + 1)

    def error(self, n: Node, message: str) -> TlaError:
        return fail(self.pos(n), message)

    def text(self, n: Node) -> str:
        return bytes(n.text).decode("utf-8", "replace")

    def check_errors(self, root: Node) -> None:
        """The first ERROR or MISSING node in source order, as a parse error."""
        stack = [root]
        while stack:
            n = stack.pop()
            if n.is_missing:
                raise self.error(n, f"parse error: missing {n.type!r}")
            if n.is_error:
                at = self.error_start(n)
                row, col = at.start_point
                lines = self.source.split(b"\n")
                line = lines[row][col:] if row < len(lines) else b""
                snippet = line.decode("utf-8", "replace").rstrip()[:40]
                raise self.error(at, f"parse error near {snippet!r}")
            if n.has_error:
                stack.extend(reversed(n.children))

    def error_start(self, n: Node) -> Node:
        """Where an ERROR node's trouble starts: tree-sitter wraps a module it cannot finish in
        one ERROR, holding the units it did parse; the first child past the header that is not
        such a unit begins the text it could not parse."""
        header = ("single_line", "MODULE", "----", "header_line")
        kids = n.children
        i = 0
        while i < len(kids) and (kids[i].type in header or kids[i].type in COMMENTS):
            i += 1
        if i and i < len(kids) and kids[i - 1].type == "MODULE":
            i += 1  # the module's name
        while i < len(kids) and kids[i].type in header:
            i += 1
        while i < len(kids) and (kids[i].type in UNITS or kids[i].type in COMMENTS):
            i += 1
        return kids[i] if i < len(kids) else n

    # -- the module ----------------------------------------------------------------------

    def module(self, root: Node) -> Module:
        return self.modules(root)[0]

    def modules(self, root: Node) -> list[Module]:
        """Every module of the file, in order (TLC reads the ones after the first as modules
        the first may extend or instantiate)."""
        self.check_errors(root)
        mods = [c for c in self.kids(root) if c.type == "module"]
        if not mods:
            raise self.error(root, "no module (a line ---- MODULE Name ----) in this file")
        return [self.one_module(m) for m in mods]

    def one_module(self, m: Node) -> Module:
        name = self.text(m.child_by_field_name("name"))
        extends: list[tuple[str, Pos]] = []
        constants: list[Param] = []
        variables: list[str] = []
        definitions: list[Definition] = []
        assumptions: list[Expr] = []
        for c in self.kids(m):
            t = c.type
            if t in ("header_line", "double_line", "identifier", "block_comment", "comment",
                     "single_line", "recursive_declaration"):
                continue
            if t == "theorem" and c.child_by_field_name("name") is not None:
                definitions.append(self.theorem(c))  # THEOREM T == e: T names e
                continue
            if t in ("theorem", "proof", "use_or_hide"):
                continue  # statements for the prover: nothing a model checker reads (as TLC)
            if t == "extends":
                extends += [(self.text(i), self.pos(i)) for i in self.kids(c)
                            if i.type == "identifier_ref"]
            elif t == "constant_declaration":
                for d in self.kids(c):
                    if d.type == "identifier":
                        constants.append(Param(self.text(d), 0))
                    elif d.type == "operator_declaration":
                        constants.append(self.declared_param(d))
            elif t == "variable_declaration":
                variables += [self.text(i) for i in self.kids(c) if i.type == "identifier"]
            elif t in ("operator_definition", "function_definition", "module_definition",
                       "instance", "local_definition"):
                definitions.append(self.definition(c))
            elif t == "assumption":
                exprs = [e for e in self.kids(c) if e.type != "identifier"]
                assumptions.append(self.expr(exprs[-1]))
                named = [e for e in self.kids(c) if e.type == "identifier"]
                if named:  # ASSUME A == e: A names e too
                    definitions.append(OpDef(self.pos(c), self.text(named[0]), (),
                                             assumptions[-1]))
            else:
                raise self.unsupported(c)
        return Module(self.pos(m), name, tuple(extends), tuple(constants), tuple(variables),
                      tuple(definitions), tuple(assumptions))

    def theorem(self, c: Node) -> OpDef:
        """A named theorem as the definition of its statement (an ASSUME ... PROVE, or
        anything else outside the fragment, an error only where it is evaluated)."""
        statement = c.child_by_field_name("statement")
        try:
            body = self.expr(statement)
        except TlaError:
            body = Unevaluable(self.pos(statement), "a theorem's statement outside the "
                                                    "fragment")
        return OpDef(self.pos(c), self.text(c.child_by_field_name("name")), (), body)

    def unsupported(self, n: Node) -> TlaError:
        what = UNSUPPORTED.get(n.type, n.type.replace("_", " "))
        return self.error(n, f"unsupported construct: {what}")

    def declared_param(self, d: Node) -> Param:
        name = self.text(d.child_by_field_name("name"))
        arity = sum(1 for x in d.children_by_field_name("parameter") if x.type == "placeholder")
        return Param(name, arity)

    def params(self, n: Node) -> tuple[Param, ...]:
        out = []
        for p in n.children_by_field_name("parameter"):
            if p.type == "identifier":
                out.append(Param(self.text(p), 0))
            elif p.type == "operator_declaration":
                out.append(self.declared_param(p))
            elif p.is_named:
                raise self.unsupported(p)
        return tuple(out)

    def definition(self, c: Node, local: bool = False) -> Definition:
        t = c.type
        if t == "local_definition":
            return self.definition(self.kids(c)[0], local=True)
        if t == "operator_definition":
            name_node = c.child_by_field_name("name")
            if name_node.type == "infix_op_symbol":  # a \prec b == ...: applied by symbol
                name = self.infix_name(self.kids(name_node)[0] if self.kids(name_node)
                                       else name_node)
            elif name_node.type != "identifier":
                raise self.error(c, "unsupported construct: a user-defined prefix or postfix "
                                    "operator")
            else:
                name = self.text(name_node)
            return OpDef(self.pos(c), name, self.params(c),
                         self.expr(c.child_by_field_name("definition")), local)
        if t == "function_definition":
            bounds = tuple(self.bound(b) for b in self.kids(c)
                           if b.type == "quantifier_bound")
            return FnDef(self.pos(c), self.text(c.child_by_field_name("name")), bounds,
                         self.expr(c.child_by_field_name("definition")), local)
        if t == "module_definition":
            inst = self.instance(c.child_by_field_name("definition"), local)
            return InstanceDef(self.pos(c), self.text(c.child_by_field_name("name")),
                               self.params(c), inst.module, inst.substitutions, local)
        if t == "instance":
            return self.instance(c, local)
        raise self.unsupported(c)

    def instance(self, c: Node, local: bool) -> InstanceDef:
        module = ""
        subs: list[tuple[str, Expr]] = []
        for x in self.kids(c):
            if x.type == "identifier_ref" and not module:
                module = self.text(x)
            elif x.type == "substitution":
                parts = [y for y in self.kids(x) if y.type != "gets"]
                if parts[0].type != "identifier_ref":
                    raise self.error(parts[0], "unsupported construct: substituting an "
                                               "operator symbol in INSTANCE")
                subs.append((self.text(parts[0]), self.expr(parts[1])))
        return InstanceDef(self.pos(c), None, (), module, tuple(subs), local)

    # -- expressions ---------------------------------------------------------------------

    def bound(self, b: Node) -> Bound:
        intros = b.children_by_field_name("intro")
        names: list[str] = []
        is_tuple = False
        for i in intros:
            if i.type == "identifier":
                names.append(self.text(i))
            elif i.type == "tuple_of_identifiers":
                is_tuple = True
                names += [self.text(x) for x in self.kids(i) if x.type == "identifier"]
        return Bound(tuple(names), is_tuple, self.expr(b.child_by_field_name("set")))

    def exprs(self, nodes: list[Node]) -> tuple[Expr, ...]:
        return tuple(self.expr(x) for x in nodes if x.is_named and x.type not in COMMENTS)

    def expr(self, n: Node) -> Expr:
        t = n.type
        pos = self.pos(n)
        method = getattr(self, "e_" + t, None)
        if method is not None:
            return method(n, pos)  # type: ignore[no-any-return]
        if t in BUILTIN_SETS:
            if t == "real_number_set":
                raise self.unsupported(n)
            return OpApp(pos, BUILTIN_SETS[t])
        raise self.unsupported(n)

    def e_parentheses(self, n: Node, pos: Pos) -> Expr:
        return self.expr(self.kids(n)[0])

    def e_unbounded_quantification(self, n: Node, pos: Pos) -> Expr:
        return Unevaluable(pos, "an unbounded quantifier (\\E x : or \\A x :), which TLC "
                                "cannot evaluate either")

    def e_infix_op_symbol(self, n: Node, pos: Pos) -> Expr:
        """An infix operator given as an argument (``FoldFunctionOnSet(+, 0, f, S)``): the
        operator of two arguments it names."""
        sym = self.kids(n)[0] if self.kids(n) else n
        a, b = OpApp(pos, "$a"), OpApp(pos, "$b")
        return Lambda(pos, ("$a", "$b"), OpApp(pos, self.infix_name(sym), (a, b)))

    def e_lambda(self, n: Node, pos: Pos) -> Expr:
        kids = self.kids(n)
        return Lambda(pos, tuple(self.text(k) for k in kids[:-1] if k.type == "identifier"),
                      self.expr(kids[-1]))

    def e_label(self, n: Node, pos: Pos) -> Expr:
        return self.expr(n.child_by_field_name("expression"))  # lbl:: e is e

    def e_nat_number(self, n: Node, pos: Pos) -> Expr:
        return Num(pos, int(self.text(n)))

    def e_string(self, n: Node, pos: Pos) -> Expr:
        raw = self.text(n)[1:-1]
        out = raw.replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t")
        return Str(pos, out.replace("\\\\", "\\"))

    def e_boolean(self, n: Node, pos: Pos) -> Expr:
        return Bool(pos, self.text(n) == "TRUE")

    def e_identifier_ref(self, n: Node, pos: Pos) -> Expr:
        return OpApp(pos, self.text(n))

    def e_bound_op(self, n: Node, pos: Pos) -> Expr:
        name = n.child_by_field_name("name")
        if name.type != "identifier_ref":
            raise self.unsupported(name)
        return OpApp(pos, self.text(name), self.exprs(n.children_by_field_name("parameter")))

    def e_subexpression(self, n: Node, pos: Pos) -> Expr:
        prefix = [c for c in self.kids(n) if c.type == "subexpr_prefix"]
        nav = [c for c in self.kids(n) if c.type == "subexpr_tree_nav"]
        comps = [c for c in self.kids(prefix[0]) if c.type == "subexpr_component"] \
            if prefix else []
        kids = self.kids(nav[0]) if nav else []
        if len(comps) == 1 and len(kids) == 1 and kids[0].type == "child_id" \
                and self.kids(comps[0])[0].type == "identifier_ref":
            return Conjunct(pos, self.text(self.kids(comps[0])[0]), int(self.text(kids[0])))
        if comps and len(nav) == 1 and len(kids) == 1 and kids[0].type == "colon":
            # ``Name!:``, ``Name(a)!:``, ``I!Name!:``: the body of the definition (or theorem)
            # Name, which is what Name itself stands for
            path: list[tuple[str, tuple[Expr, ...]]] = []
            for c in comps:
                comp = self.kids(c)[0]
                if comp.type == "identifier_ref":
                    path.append((self.text(comp), ()))
                elif comp.type == "bound_op" and \
                        comp.child_by_field_name("name").type == "identifier_ref":
                    path.append((self.text(comp.child_by_field_name("name")),
                                 self.exprs(comp.children_by_field_name("parameter"))))
                else:
                    raise self.unsupported(n)
            *insts, (name, args) = path
            if not insts:
                return OpApp(pos, name, args)
            (inst, inst_args), *chain = insts
            return Instanced(pos, inst, inst_args, name, args, tuple(chain))
        raise self.unsupported(n)

    def e_prefixed_op(self, n: Node, pos: Pos) -> Expr:
        prefix = n.child_by_field_name("prefix")
        comps = [c for c in self.kids(prefix) if c.type == "subexpr_component"]
        path: list[tuple[str, tuple[Expr, ...]]] = []
        for c in comps:  # A!B!Op: the instance A, then its instance B, ...
            comp = self.kids(c)[0]
            if comp.type == "identifier_ref":
                path.append((self.text(comp), ()))
            elif comp.type == "bound_op":
                path.append((self.text(comp.child_by_field_name("name")),
                             self.exprs(comp.children_by_field_name("parameter"))))
            else:
                raise self.unsupported(comp)
        op = n.child_by_field_name("op")
        inner = self.expr(op)
        if not isinstance(inner, OpApp) or not path:
            raise self.unsupported(op)
        (inst, inst_args), *chain = path
        return Instanced(pos, inst, inst_args, inner.name, inner.args, tuple(chain))

    def e_bound_infix_op(self, n: Node, pos: Pos) -> Expr:
        sym = n.child_by_field_name("symbol").type
        lhs, rhs = n.child_by_field_name("lhs"), n.child_by_field_name("rhs")
        if sym == "land":
            return And(pos, self.flat(n, "land", And))
        if sym == "lor":
            return Or(pos, self.flat(n, "lor", Or))
        if sym == "times":
            return OpApp(pos, "\\X", self.flat(n, "times", None))
        if sym == "leads_to":
            return Temporal(pos, "~>", (self.expr(lhs), self.expr(rhs)))
        if sym in ("cdot", "compose_actions"):  # A \cdot B: action composition
            return OpApp(pos, "\\cdot", (self.expr(lhs), self.expr(rhs)))
        # the standard operators by their canonical names, any other symbol as a user
        # definition of that name (a \prec b == ...), resolved in scope
        return OpApp(pos, self.infix_name(n.child_by_field_name("symbol")),
                     (self.expr(lhs), self.expr(rhs)))

    def infix_name(self, sym: Node) -> str:
        """An infix symbol's operator name: the canonical one, or the symbol as written."""
        return INFIX.get(sym.type) or self.text(sym)

    def flat(self, n: Node, sym: str, cls: type | None) -> tuple[Expr, ...]:
        """The operands of a chain of one associative infix operator (``a /\\ b /\\ c``)."""
        out: list[Expr] = []
        for side in ("lhs", "rhs"):
            c = n.child_by_field_name(side)
            if c.type == "bound_infix_op" and c.child_by_field_name("symbol").type == sym:
                if cls is None and side == "rhs":
                    out.append(self.expr(c))  # a \X (b \X c) is not a \X b \X c
                else:
                    out += self.flat(c, sym, cls)
            else:
                e = self.expr(c)
                if cls is not None and isinstance(e, cls):
                    out += e.items  # type: ignore[attr-defined]
                else:
                    out.append(e)
        return tuple(out)

    def e_bound_prefix_op(self, n: Node, pos: Pos) -> Expr:
        sym = n.child_by_field_name("symbol").type
        rhs = self.expr(n.child_by_field_name("rhs"))
        if sym == "unchanged":
            return Unchanged(pos, rhs)
        if sym == "enabled":
            return Enabled(pos, rhs)
        if sym in ("always", "eventually"):
            return Temporal(pos, "[]" if sym == "always" else "<>", (rhs,))
        if sym not in PREFIX:
            raise self.error(n, f"unsupported construct: the prefix operator {sym}")
        if sym == "negative" and isinstance(rhs, Num):
            return Num(pos, -rhs.value)
        return OpApp(pos, PREFIX[sym], (rhs,))

    def e_bound_postfix_op(self, n: Node, pos: Pos) -> Expr:
        sym = n.child_by_field_name("symbol").type
        if sym != "prime":
            raise self.error(n, f"unsupported construct: the postfix operator {sym}")
        return Prime(pos, self.expr(n.child_by_field_name("lhs")))

    def e_conj_list(self, n: Node, pos: Pos) -> Expr:
        items: list[Expr] = []
        for c in self.kids(n):
            e = self.expr([x for x in self.kids(c) if x.type != "bullet_conj"][0])
            items += e.items if isinstance(e, And) else [e]
        return And(pos, tuple(items))

    def e_disj_list(self, n: Node, pos: Pos) -> Expr:
        items: list[Expr] = []
        for c in self.kids(n):
            e = self.expr([x for x in self.kids(c) if x.type != "bullet_disj"][0])
            items += e.items if isinstance(e, Or) else [e]
        return Or(pos, tuple(items))

    def e_bounded_quantification(self, n: Node, pos: Pos) -> Expr:
        kind = "E" if n.child_by_field_name("quantifier").type == "exists" else "A"
        bounds = tuple(self.bound(b) for b in n.children_by_field_name("bound")
                       if b.type == "quantifier_bound")
        return Quant(pos, kind, bounds, self.expr(n.child_by_field_name("expression")))

    def e_choose(self, n: Node, pos: Pos) -> Expr:
        if n.child_by_field_name("set") is None:  # NoVal == CHOOSE v : v \notin Val
            return Unevaluable(pos, "an unbounded CHOOSE, which TLC cannot evaluate either "
                                    "(give the definition a value in the cfg)")
        return Choose(pos, self.bound(n), self.expr(n.child_by_field_name("expression")))

    def e_finite_set_literal(self, n: Node, pos: Pos) -> Expr:
        return SetEnum(pos, self.exprs(self.kids(n)))

    def e_set_filter(self, n: Node, pos: Pos) -> Expr:
        return SetFilter(pos, self.bound(n.child_by_field_name("generator")),
                         self.expr(n.child_by_field_name("filter")))

    def e_set_map(self, n: Node, pos: Pos) -> Expr:
        bounds = tuple(self.bound(b) for b in n.children_by_field_name("generator")
                       if b.type == "quantifier_bound")
        return SetMap(pos, self.expr(n.child_by_field_name("map")), bounds)

    def e_function_literal(self, n: Node, pos: Pos) -> Expr:
        bounds = tuple(self.bound(b) for b in self.kids(n) if b.type == "quantifier_bound")
        body = [c for c in self.kids(n) if c.type not in ("quantifier_bound",
                                                               "all_map_to")][-1]
        return FnLit(pos, bounds, self.expr(body))

    def e_function_evaluation(self, n: Node, pos: Pos) -> Expr:
        parts = self.kids(n)
        return FnApp(pos, self.expr(parts[0]), self.exprs(parts[1:]))

    def e_except(self, n: Node, pos: Pos) -> Expr:
        updates = []
        for u in self.kids(n):
            if u.type != "except_update":
                continue
            path: list[tuple[str, object]] = []
            spec = [x for x in u.children_by_field_name("update_specifier") if x.is_named]
            for step in self.kids(spec[0]):
                if step.type == "except_update_fn_appl":
                    path.append(("app", self.exprs(self.kids(step))))
                elif step.type == "except_update_record_field":
                    path.append(("field", self.text(self.kids(step)[0])))
                else:
                    raise self.unsupported(step)
            updates.append((tuple(path), self.expr(u.child_by_field_name("new_val"))))
        return Except(pos, self.expr(n.child_by_field_name("expr_to_update")), tuple(updates))

    def e_prev_func_val(self, n: Node, pos: Pos) -> Expr:
        return At(pos)

    def _fields(self, n: Node) -> tuple[tuple[str, Expr], ...]:
        parts = [c for c in self.kids(n) if c.type not in ("all_map_to", "set_in")]
        return tuple((self.text(parts[i]), self.expr(parts[i + 1]))
                     for i in range(0, len(parts), 2))

    def e_record_literal(self, n: Node, pos: Pos) -> Expr:
        return RecordLit(pos, self._fields(n))

    def e_set_of_records(self, n: Node, pos: Pos) -> Expr:
        return RecordSet(pos, self._fields(n))

    def e_set_of_functions(self, n: Node, pos: Pos) -> Expr:
        parts = [c for c in self.kids(n) if c.type != "maps_to"]
        return FnSet(pos, self.expr(parts[0]), self.expr(parts[1]))

    def e_record_value(self, n: Node, pos: Pos) -> Expr:
        parts = self.kids(n)
        return Dot(pos, self.expr(parts[0]), self.text(parts[1]))

    def e_tuple_literal(self, n: Node, pos: Pos) -> Expr:
        return Tuple(pos, self.exprs([c for c in self.kids(n)
                                      if c.type not in ("langle_bracket", "rangle_bracket")]))

    def e_if_then_else(self, n: Node, pos: Pos) -> Expr:
        return If(pos, self.expr(n.child_by_field_name("if")),
                  self.expr(n.child_by_field_name("then")),
                  self.expr(n.child_by_field_name("else")))

    def e_case(self, n: Node, pos: Pos) -> Expr:
        arms = []
        other = None
        for c in self.kids(n):
            parts = [x for x in self.kids(c) if x.type != "case_arrow"]
            if c.type == "case_arm":
                arms.append((self.expr(parts[0]), self.expr(parts[1])))
            elif c.type == "other_arm":
                other = self.expr(parts[0])
        return Case(pos, tuple(arms), other)

    def e_let_in(self, n: Node, pos: Pos) -> Expr:
        defs = tuple(self.definition(d) for d in n.children_by_field_name("definitions")
                     if d.is_named and d.type != "recursive_declaration")
        for d in defs:
            if isinstance(d, InstanceDef):
                raise fail(d.pos, "unsupported construct: INSTANCE inside LET")
        return Let(pos, defs, self.expr(n.child_by_field_name("expression")))

    def e_fairness(self, n: Node, pos: Pos) -> Expr:
        kind = "WF" if n.children[0].type == "WF_" else "SF"
        parts = self.kids(n)
        return Fairness(pos, kind, self.expr(parts[0]), self.expr(parts[1]))

    def e_step_expr_or_stutter(self, n: Node, pos: Pos) -> Expr:
        parts = self.kids(n)
        return StepAction(pos, True, self.expr(parts[0]), self.expr(parts[1]))

    def e_step_expr_no_stutter(self, n: Node, pos: Pos) -> Expr:
        parts = [c for c in self.kids(n)
                 if c.type not in ("langle_bracket", "rangle_bracket_sub")]
        return StepAction(pos, False, self.expr(parts[0]), self.expr(parts[1]))
