"""TLC's model configuration file (``.cfg``): the constants and what to check.

``CONSTANT(S)`` with ``Name = value`` (an integer, a string, TRUE/FALSE, a model value, a set
of these) and ``Name <- Other`` (the definition or constant ``Name`` replaced by the operator
``Other``); ``INIT``/``NEXT`` or ``SPECIFICATION``; ``INVARIANT(S)``, ``PROPERTY(IES)``,
``CONSTRAINT(S)``, ``ACTION_CONSTRAINT(S)``, ``VIEW``, ``SYMMETRY``, ``CHECK_DEADLOCK``.
Anything else is one line ``FILE:LINE:COL: ...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .syntax import Pos, TlaError, fail
from .values import ModelValue, Value


@dataclass(frozen=True)
class Config:
    file: str
    constants: dict[str, tuple[Value, Pos]] = field(default_factory=dict)
    overrides: dict[str, tuple[str, Pos]] = field(default_factory=dict)
    # ``Name <- [M] Other``: in module M, Name is the root module's Other
    scoped: dict[tuple[str, str], tuple[str, Pos]] = field(default_factory=dict)
    init: tuple[str, Pos] | None = None
    next: tuple[str, Pos] | None = None
    specification: tuple[str, Pos] | None = None
    invariants: tuple[tuple[str, Pos], ...] = ()
    properties: tuple[tuple[str, Pos], ...] = ()
    constraints: tuple[tuple[str, Pos], ...] = ()
    action_constraints: tuple[tuple[str, Pos], ...] = ()
    view: tuple[str, Pos] | None = None
    symmetry: tuple[str, Pos] | None = None
    check_deadlock: bool = True


KEYWORDS = {
    "CONSTANT": "constants", "CONSTANTS": "constants", "INIT": "init", "NEXT": "next",
    "SPECIFICATION": "specification", "INVARIANT": "invariants", "INVARIANTS": "invariants",
    "PROPERTY": "properties", "PROPERTIES": "properties", "CONSTRAINT": "constraints",
    "CONSTRAINTS": "constraints", "ACTION_CONSTRAINT": "action_constraints",
    "ACTION_CONSTRAINTS": "action_constraints", "VIEW": "view", "SYMMETRY": "symmetry",
    "CHECK_DEADLOCK": "check_deadlock",
}
UNSUPPORTED = ("POSTCONDITION", "TYPE", "TYPE_CONSTRAINT")
IGNORED = ("ALIAS",)  # how TLC prints a trace's states: nothing a check reads
SINGLE = ("init", "next", "specification", "view", "symmetry")

_TOKEN = re.compile(r'''
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<line_comment>\\\*[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>-?\d+)
  | (?P<gets><-) | (?P<eq>=) | (?P<lbrace>\{) | (?P<rbrace>\}) | (?P<comma>,)
  | (?P<lbrack>\[) | (?P<rbrack>\])
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
''', re.VERBOSE)


def _tokens(text: str, file: str) -> list[tuple[str, str, Pos]]:
    out: list[tuple[str, str, Pos]] = []
    i, line, col = 0, 1, 1
    depth = 0
    while i < len(text):
        if text.startswith("(*", i):
            depth += 1
            i += 2
            col += 2
            continue
        if depth:
            if text.startswith("*)", i):
                depth -= 1
                i += 2
                col += 2
            else:
                if text[i] == "\n":
                    line, col = line + 1, 1
                else:
                    col += 1
                i += 1
            continue
        if text.startswith("----", i) or text.startswith("====", i):
            j = text.find("\n", i)
            j = len(text) if j < 0 else j
            col += j - i
            i = j
            continue
        m = _TOKEN.match(text, i)
        if m is None:
            raise fail(Pos(file, line, col), f"unexpected {text[i]!r} in the cfg")
        kind = m.lastgroup or ""
        if kind == "nl":
            line, col = line + 1, 1
        elif kind not in ("ws", "line_comment"):
            out.append((kind, m.group(), Pos(file, line, col)))
            col += len(m.group())
        else:
            col += len(m.group())
        i = m.end()
    if depth:
        raise fail(Pos(file, line, col), "unterminated comment (* ... in the cfg")
    return out


def parse_cfg_file(path: str | Path) -> Config:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise TlaError(f"{p}: cannot read: {e.strerror or e}") from None
    return parse_cfg(text, str(p))


def parse_cfg(text: str, file: str = "<cfg>") -> Config:
    toks = _tokens(text, file)
    values: dict[str, object] = {"constants": {}, "overrides": {}, "scoped": {},
                                 "invariants": [],
                                 "properties": [], "constraints": [],
                                 "action_constraints": []}
    i = 0
    section: str | None = None
    seen: dict[str, Pos] = {}
    while i < len(toks):
        kind, text_, pos = toks[i]
        if kind == "name" and text_ in UNSUPPORTED:
            raise fail(pos, f"unsupported cfg keyword {text_}")
        if kind == "name" and text_ in IGNORED:
            i += 1
            if i < len(toks) and toks[i][0] == "name" and toks[i][1] not in KEYWORDS:
                i += 1  # its operator
            section = None
            continue
        if kind == "name" and text_ in KEYWORDS:
            section = KEYWORDS[text_]
            i += 1
            if section == "check_deadlock":
                if i >= len(toks) or toks[i][1] not in ("TRUE", "FALSE"):
                    raise fail(pos, "CHECK_DEADLOCK takes TRUE or FALSE")
                values["check_deadlock"] = toks[i][1] == "TRUE"
                i += 1
                section = None
            continue
        if section is None:
            raise fail(pos, f"expected a cfg keyword (CONSTANTS, INIT, ...), found {text_!r}")
        if kind != "name":
            raise fail(pos, f"expected a name, found {text_!r}")
        if section == "constants":
            i = _constant(toks, i, values)
            continue
        if section in SINGLE:
            if section in seen:
                raise fail(pos, f"{section.upper()} given twice (first at {seen[section]})")
            seen[section] = pos
            values[section] = (text_, pos)
            section = None
        else:
            values[section].append((text_, pos))  # type: ignore[attr-defined]
        i += 1
    for k in ("invariants", "properties", "constraints", "action_constraints"):
        values[k] = tuple(values[k])  # type: ignore[arg-type]
    cfg = Config(file, **values)  # type: ignore[arg-type]
    if cfg.specification and (cfg.init or cfg.next):
        raise fail(cfg.specification[1], "SPECIFICATION and INIT/NEXT both given: give one")
    if bool(cfg.init) != bool(cfg.next):
        given = cfg.init or cfg.next
        raise fail(given[1] if given else None, "INIT and NEXT go together: give both")
    return cfg


def _constant(toks: list[tuple[str, str, Pos]], i: int, values: dict[str, object]) -> int:
    name, pos = toks[i][1], toks[i][2]
    if i + 1 >= len(toks) or toks[i + 1][0] not in ("eq", "gets"):
        raise fail(pos, f"constant {name}: expected = or <- after it")
    constants: dict[str, tuple[Value, Pos]] = values["constants"]  # type: ignore[assignment]
    overrides: dict[str, tuple[str, Pos]] = values["overrides"]  # type: ignore[assignment]
    scoped_given = i + 2 < len(toks) and toks[i + 2][0] == "lbrack"
    if (name in constants or name in overrides) and not scoped_given:
        raise fail(pos, f"constant {name} given twice")
    if scoped_given:  # Name <- [M] Other, Name = [M] Other: in module M, Name is Other
        if [k for k, _, _ in toks[i + 3:i + 6]] != ["name", "rbrack", "name"]:
            raise fail(toks[i + 2][2], f"constant {name}: expected <- [Module] Operator")
        scoped: dict[tuple[str, str], tuple[str, Pos]] = values["scoped"]  # type: ignore[assignment]
        module = toks[i + 3][1]
        if (module, name) in scoped:
            raise fail(pos, f"constant {name} given twice for module {module}")
        scoped[(module, name)] = (toks[i + 5][1], pos)
        return i + 6
    if toks[i + 1][0] == "gets":
        if i + 2 >= len(toks) or toks[i + 2][0] != "name":
            raise fail(pos, f"constant {name}: expected an operator name after <-")
        overrides[name] = (toks[i + 2][1], pos)
        return i + 3
    value, j = _value(toks, i + 2, pos)
    constants[name] = (value, pos)
    return j


def _value(toks: list[tuple[str, str, Pos]], i: int, at: Pos) -> tuple[Value, int]:
    if i >= len(toks):
        raise fail(at, "expected a value")
    kind, text, pos = toks[i]
    if kind == "number":
        return int(text), i + 1
    if kind == "string":
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\"), i + 1
    if kind == "name":
        if text in KEYWORDS or text in UNSUPPORTED or text in IGNORED:
            raise fail(pos, f"expected a value, found the keyword {text}")
        if text in ("TRUE", "FALSE"):
            return text == "TRUE", i + 1
        return ModelValue(text), i + 1
    if kind == "lbrace":
        items = []
        i += 1
        if i < len(toks) and toks[i][0] == "rbrace":
            return frozenset(), i + 1
        while True:
            v, i = _value(toks, i, pos)
            items.append(v)
            if i < len(toks) and toks[i][0] == "comma":
                i += 1
                continue
            if i < len(toks) and toks[i][0] == "rbrace":
                return frozenset(items), i + 1
            raise fail(toks[i][2] if i < len(toks) else pos, "expected , or } in a set")
    raise fail(pos, f"expected a value, found {text!r}")
