"""TLA+ modules and cfgs: EXTENDS and INSTANCE resolved from the module's folder, the standard
modules, the cfg's constants and sections, and their one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hwcheck.checker.tla.cfg import parse_cfg, parse_cfg_file
from hwcheck.checker.tla.evaluate import Evaluator
from hwcheck.checker.tla.explore import explore, model
from hwcheck.checker.tla.modules import load
from hwcheck.checker.tla.syntax import TlaError
from hwcheck.checker.tla.values import ModelValue

ROOT = Path(__file__).resolve().parent.parent


def test_cfg_sections_and_values() -> None:
    cfg = parse_cfg("""
\\* a comment
(* a block
   comment *)
CONSTANTS
    N = 3  M = -2
    Name = "x\\"y"
    Flag = FALSE
    Nodes = {n1, n2}
    Empty = {}
    m = m
    Op <- Impl
INIT Init NEXT Next
INVARIANTS Inv1 Inv2
INVARIANT Inv3
PROPERTIES P
CONSTRAINT C ACTION_CONSTRAINT AC
VIEW V SYMMETRY S
CHECK_DEADLOCK FALSE
""", "M.cfg")
    assert {k: v for k, (v, _) in cfg.constants.items()} == {
        "N": 3, "M": -2, "Name": 'x"y', "Flag": False,
        "Nodes": frozenset({ModelValue("n1"), ModelValue("n2")}), "Empty": frozenset(),
        "m": ModelValue("m")}
    assert cfg.overrides["Op"][0] == "Impl"
    assert [n for n, _ in cfg.invariants] == ["Inv1", "Inv2", "Inv3"]
    assert (cfg.init and cfg.init[0], cfg.next and cfg.next[0]) == ("Init", "Next")
    assert [n for n, _ in cfg.properties] == ["P"] and cfg.check_deadlock is False
    assert cfg.view and cfg.view[0] == "V" and cfg.symmetry and cfg.symmetry[0] == "S"
    assert str(cfg.invariants[2][1]) == "M.cfg:15:11"


def test_the_repositorys_cfgs_parse() -> None:
    for path in sorted([*ROOT.glob("docs/tla/*.cfg"), *ROOT.glob("tests/specs/tla/*.cfg")]):
        cfg = parse_cfg_file(path)
        assert cfg.specification or cfg.init


@pytest.mark.parametrize("text, message", [
    ("CONSTANT N", "X.cfg:1:10: constant N: expected = or <- after it"),
    ("CONSTANT N = 1 N = 2", "X.cfg:1:16: constant N given twice"),
    ("POSTCONDITION A", "X.cfg:1:1: unsupported cfg keyword POSTCONDITION"),
    ("INIT I NEXT N SPECIFICATION S", "X.cfg:1:29: SPECIFICATION and INIT/NEXT both given"),
    ("INIT I", "X.cfg:1:6: INIT and NEXT go together"),
    ("INIT I INIT J NEXT N", "X.cfg:1:13: INIT given twice (first at X.cfg:1:6)"),
    ("CONSTANT S = {1, 2", "X.cfg:1:14: expected , or } in a set"),
    ("CHECK_DEADLOCK maybe", "X.cfg:1:1: CHECK_DEADLOCK takes TRUE or FALSE"),
    ("Init", "X.cfg:1:1: expected a cfg keyword (CONSTANTS, INIT, ...), found 'Init'"),
    ("CONSTANT N = 1 ; ", "X.cfg:1:16: unexpected ';' in the cfg"),
    ("CONSTANT Op <- [M Impl", "X.cfg:1:16: constant Op: expected <- [Module] Operator"),
])
def test_cfg_errors(text: str, message: str) -> None:
    with pytest.raises(TlaError) as e:
        parse_cfg(text, "X.cfg")
    assert str(e.value).startswith(message)


def write(folder: Path, **modules: str) -> None:
    for name, text in modules.items():
        (folder / f"{name}.tla").write_text(f"---- MODULE {name} ----\n{text}\n====\n")


def test_extends_from_the_folder() -> None:
    root = load(ROOT / "docs/tla/KafkaHWLiveness.tla",
                parse_cfg_file(ROOT / "docs/tla/R2-M2-E3-kip-279-liveness.cfg"))
    assert root.variables[:2] == ("log", "hw") and "LiveSpec" in root.scope.defs
    assert "Produce" in root.scope.defs and "Cardinality" in root.scope.defs
    assert root.scope.values["R"] == 2


def test_instance_with_substitution_and_named_instances(tmp_path: Path) -> None:
    write(tmp_path,
          Counter="EXTENDS Naturals\nCONSTANT Limit\nVARIABLE c\n"
                  "CInit == c = 0\nInc == c < Limit /\\ c' = c + 1\nAtLimit == c = Limit",
          Main="EXTENDS Naturals\nCONSTANT Top\nVARIABLES a, b\n"
               "A == INSTANCE Counter WITH Limit <- Top, c <- a\n"
               "B(l) == INSTANCE Counter WITH Limit <- l, c <- b\n"
               "INSTANCE Counter WITH Limit <- 1, c <- b\n"
               "Init == A!CInit /\\ B(2)!CInit\n"
               "Next == (A!Inc /\\ UNCHANGED b) \\/ (B(2)!Inc /\\ UNCHANGED a)\n"
               "Done == A!AtLimit /\\ AtLimit")
    m = model(tmp_path / "Main.tla", parse_cfg("CONSTANT Top = 3\nINIT Init\nNEXT Next\n"
                                               "INVARIANT Done", "Main.cfg"))
    res = explore(m, check_deadlock=False)
    assert res.distinct == 4 * 3  # a in 0..3, b in 0..2
    assert res.generated == 1 + 3 * 3 + 4 * 2
    # the unnamed instance's AtLimit reads b at Limit 1: violated by the initial state
    assert len(res.violations["Done"]) == 1


def test_a_parameterised_instance_is_made_once_per_argument(tmp_path: Path) -> None:
    write(tmp_path, Counter="CONSTANT Limit\nVARIABLE c\nL == Limit",
          Main="EXTENDS Naturals\nVARIABLE v\nB(l) == INSTANCE Counter WITH Limit <- l, c <- v\n"
               "e == B(1)!L + B(2)!L + B(1)!L")
    ev = Evaluator(load(tmp_path / "Main.tla", parse_cfg("", "Main.cfg")))
    assert ev.value(ev.definition("e").d.body, {}) == 4


def test_a_cfg_override_replaces_a_definition(tmp_path: Path) -> None:
    write(tmp_path, Main="EXTENDS Naturals\nCONSTANT Size\nVARIABLE v\nDefault == 5\n"
                         "Small == 2\nLimit == Default\ne == Limit + Size")
    ev = Evaluator(load(tmp_path / "Main.tla", parse_cfg("CONSTANTS Size = 1 Default <- Small",
                                                         "Main.cfg")))
    assert ev.value(ev.definition("e").d.body, {}) == 3


@pytest.mark.parametrize("modules, cfg, message", [
    ({"Main": "EXTENDS Missing"}, "", "Main.tla:2:9: module Missing not found"),
    ({"Main": "EXTENDS Reals"}, "", "Main.tla:2:9: unsupported module Reals"),
    ({"Main": "EXTENDS Other", "Other": "EXTENDS Main"}, "",
     "Main.tla:1:1: module Main extends itself"),
    ({"Main": "CONSTANT N"}, "", "Main.cfg:1:1: the cfg gives no value for the constant N"),
    ({"Main": "CONSTANT N"}, "CONSTANT N = 1 Q = 2",
     "Main.cfg:1:16: the cfg sets Q, which the module neither declares nor defines"),
    ({"Main": "CONSTANT N"}, "CONSTANT N <- Nope", "Main.cfg:1:10: N <- Nope: the module "
                                                  "defines no Nope"),
    ({"Main": "A == 1\nA == 2"}, "", "Main.tla:3:1: A is defined twice"),
    ({"Main": "VARIABLE x\nI == INSTANCE Other", "Other": "CONSTANT K"}, "",
     "Main.tla:3:1: INSTANCE Other: no substitution for its constant K"),
    ({"Main": "I == INSTANCE Other WITH Z <- 1", "Other": "CONSTANT K"}, "",
     "Main.tla:2:1: INSTANCE Other WITH Z: Other declares no constant or variable Z"),
])
def test_module_errors(tmp_path: Path, modules: dict[str, str], cfg: str, message: str) -> None:
    write(tmp_path, **modules)
    with pytest.raises(TlaError) as e:
        load(tmp_path / "Main.tla", parse_cfg(cfg, "Main.cfg"))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_specification_and_what_the_cfg_names_must_exist(tmp_path: Path) -> None:
    write(tmp_path, Main="VARIABLE x\nInit == x = 0\nNext == x' = x\n"
                         "Spec == Init /\\ [][Next]_x /\\ WF_x(Next)\nInv == x = 0")
    m = model(tmp_path / "Main.tla", parse_cfg("SPECIFICATION Spec\nINVARIANT Inv", "Main.cfg"))
    assert explore(m).distinct == 1
    with pytest.raises(TlaError, match="Main.cfg:1:11: INVARIANT Nope: the module defines no"):
        model(tmp_path / "Main.tla", parse_cfg("INVARIANT Nope\nSPECIFICATION Spec",
                                               "Main.cfg"))
    with pytest.raises(TlaError, match="SPECIFICATION Init: expected Init"):
        model(tmp_path / "Main.tla", parse_cfg("SPECIFICATION Init", "Main.cfg"))


def test_the_cfg_defaults_to_the_modules_name(tmp_path: Path) -> None:
    write(tmp_path, Main="EXTENDS Naturals\nVARIABLE x\nInit == x = 0\nNext == x' = 1 - x")
    (tmp_path / "Main.cfg").write_text("INIT Init\nNEXT Next\n")
    assert explore(model(tmp_path / "Main.tla")).distinct == 2
    with pytest.raises(TlaError, match="Other.cfg: cannot read"):
        model(tmp_path / "Main.tla", tmp_path / "Other.cfg")


def test_a_false_assumption_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, Main="EXTENDS Naturals\nCONSTANT N\nASSUME N > 2\nVARIABLE x\n"
                         "Init == x = 0\nNext == x' = x")
    with pytest.raises(TlaError, match="Main.tla:4:8: this ASSUME is false"):
        model(tmp_path / "Main.tla", parse_cfg("CONSTANT N = 1\nINIT Init NEXT Next", "M.cfg"))


def test_a_module_after_the_first_in_its_file_is_found(tmp_path: Path) -> None:
    (tmp_path / "Two.tla").write_text(
        "---- MODULE Two ----\nEXTENDS Common\nVARIABLE x\nInit == x = K\nNext == x' = x\n"
        "====\n---- MODULE Common ----\nK == 7\n====\n")
    root = load(tmp_path / "Two.tla", parse_cfg("", "Two.cfg"))
    assert "K" in root.scope.defs


def test_a_module_extended_along_two_paths_is_read_once(tmp_path: Path) -> None:
    for name, ext in [("D", ""), ("B", "EXTENDS D\n"), ("C", "EXTENDS D\n")]:
        (tmp_path / f"{name}.tla").write_text(f"---- MODULE {name} ----\n{ext}K{name} == 1\n"
                                              "====\n")
    (tmp_path / "A.tla").write_text("---- MODULE A ----\nEXTENDS B, C\n====\n")
    root = load(tmp_path / "A.tla", parse_cfg("", "A.cfg"))
    assert {"KB", "KC", "KD"} <= set(root.scope.defs)


def test_an_extended_modules_local_definition_gives_way_to_the_extenders_own(
        tmp_path: Path) -> None:
    # hachikuji's Kip279 has LOCAL Next and Kip320, extending it, its own Next
    write(tmp_path,
          Base="EXTENDS Naturals\nVARIABLE x\nInit == x = 0\nLOCAL Next == x' = x + 2",
          Top="EXTENDS Base\nNext == x < 3 /\\ x' = x + 1")
    m = model(tmp_path / "Top.tla", parse_cfg("INIT Init NEXT Next CHECK_DEADLOCK FALSE",
                                              "Top.cfg"))
    assert explore(m).distinct == 4  # 0..3 by Top's Next (Base's would give 0, 2, ...)
    write(tmp_path, Twice="LOCAL A == 1\nA == 2")
    with pytest.raises(TlaError, match="A is defined twice"):
        load(tmp_path / "Twice.tla", parse_cfg("", "Twice.cfg"))
