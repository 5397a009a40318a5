"""The TLA+ parser: tree-sitter-tlaplus's tree to hwcheck's syntax tree, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwcheck.checker.tla import syntax as S
from hwcheck.checker.tla.parse import parse_file, parse_source
from hwcheck.spec.lang import SpecError

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted([*ROOT.glob("docs/tla/*.tla"), *ROOT.glob("tests/specs/tla/*.tla")])


def body(src: str, name: str = "e") -> S.Expr:
    m = parse_source(f"---- MODULE T ----\n{src}\n====\n", "T.tla")
    return next(d.body for d in m.definitions if isinstance(d, S.OpDef) and d.name == name)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_the_repositorys_modules_parse(path: Path) -> None:
    m = parse_file(path)
    assert m.name == path.stem
    assert m.variables or m.extends


def test_module_units() -> None:
    m = parse_file(ROOT / "docs/tla/KafkaHW.tla")
    assert [e for e, _ in m.extends] == ["Integers", "FiniteSets"]
    assert [c.name for c in m.constants] == ["R", "M", "E", "Truncation", "Expansion", "Acks",
                                             "MinIsr", "Unclean"]
    assert m.variables[:3] == ("log", "hw", "alive") and len(m.variables) == 13
    names = [d.name for d in m.definitions]
    assert {"Init", "Next", "Spec", "Kip279", "LogsMatchBelowHw"} <= set(names)
    kip = next(d for d in m.definitions if d.name == "Kip279")
    assert isinstance(kip, S.OpDef) and [p.name for p in kip.params] == ["lf", "ll", "n"]
    assert kip.pos == S.Pos(str(ROOT / "docs/tla/KafkaHW.tla"), 50, 1)


def test_expressions() -> None:
    e = body("e == /\\ x' = 1\n     /\\ \\/ a\n        \\/ b /\\ c")
    assert isinstance(e, S.And) and len(e.items) == 2
    assert isinstance(e.items[0], S.OpApp) and e.items[0].name == "="
    assert isinstance(e.items[0].args[0], S.Prime)
    assert isinstance(e.items[1], S.Or) and isinstance(e.items[1].items[1], S.And)
    # a chain of /\ is one conjunction, \X is n-ary only without parentheses
    assert len(body("e == a /\\ b /\\ c /\\ d").items) == 4  # type: ignore[attr-defined]
    assert len(body("e == A \\X B \\X C").args) == 3  # type: ignore[attr-defined]
    assert len(body("e == A \\X (B \\X C)").args) == 2  # type: ignore[attr-defined]
    ex = body("e == [f EXCEPT ![1].a = @ + 1, !.b = 2]")
    assert isinstance(ex, S.Except)
    assert [p for p, _ in ex.updates] == [(("app", (S.Num(ex.updates[0][0][0][1][0].pos, 1),)),
                                           ("field", "a")), (("field", "b"),)]
    assert isinstance(ex.updates[0][1].args[0], S.At)  # type: ignore[attr-defined]
    q = body("e == \\E a, b \\in S, <<c, d>> \\in T : TRUE")
    assert isinstance(q, S.Quant) and q.kind == "E"
    assert [(b.names, b.tuple) for b in q.bounds] == [(("a", "b"), False), (("c", "d"), True)]
    assert body("e == -3") == S.Num(S.Pos("T.tla", 2, 6), -3)
    assert isinstance(body("e == I!Op(1)"), S.Instanced)
    assert isinstance(body("e == WF_vars(A)"), S.Fairness)
    assert isinstance(body("e == [][Next]_vars"), S.Temporal)
    c = body("e == CASE x = 1 -> 2 [] OTHER -> 3")
    assert isinstance(c, S.Case) and len(c.arms) == 1 and c.other is not None


def test_comments_anywhere() -> None:
    e = body("e == /\\ a (* one *)\n     \\* two\n     /\\ b")
    assert isinstance(e, S.And) and len(e.items) == 2


@pytest.mark.parametrize("src, message", [
    ("e == (1 + ", "T.tla:2:1: parse error near 'e == (1 +'"),
    ("VARIABLE x\ne == 1\nf == {1, 2", "T.tla:4:1: parse error near 'f == {1, 2'"),
    ("e == LAMBDA x : x", "parse error"),
    ("e == 3.5", "T.tla:2:6: unsupported construct: real numbers"),
    ("a ^+ == a", "T.tla:2:1: unsupported construct: a user-defined prefix or postfix"),
])
def test_errors_are_one_line_with_the_position(src: str, message: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_source(f"---- MODULE T ----\n{src}\n====\n", "T.tla")
    assert message in str(e.value) and "\n" not in str(e.value)
    assert str(e.value).startswith("T.tla:")


def test_no_module_and_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(S.TlaError, match="X.tla:1:5: parse error"):
        parse_source("just text", "X.tla")
    with pytest.raises(S.TlaError, match="cannot read"):
        parse_file(tmp_path / "Missing.tla")
