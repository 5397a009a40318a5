"""Errors a spec writer can act on: whatever a spec raises or exits with while it is imported or
built is one line naming the spec and exit 2 in every command; the language's errors name the
action or property and the spec's file and line, expressions shown as written; parameters
outside their domains are refused; bmc and prove report Init's domain errors as check does."""

from __future__ import annotations

import json
import re

import pytest
from test_fuzz_inputs import hwcheck

from hwcheck.checker import protocols
from hwcheck.spec.lang import Block, Spec, SpecError, forall, ite, max_over, min_, prime, show

INTERNAL = re.compile(r"\b(Read|Var|Const|Arith|Cmp|Bound|ActionParam|Local|Quant)\(")

HEAD = "from hwcheck.spec.lang import Block, Spec\n"
BUILD = ("def build(n: int = 2):\n"
         "    spec = Spec('Tiny', {'n': n})\n"
         "    x = spec.scalar('x', 0, 3)\n"
         "    y = spec.scalar('y', 0, 3)\n"
         "    spec.initial(lambda b: None)\n"
         "    @spec.action('Step', modifies=[x])\n"
         "    def step(b: Block) -> None:\n"
         "        b.require(x < 3)\n"
         "        b.set(x, x + 1)\n"
         "    spec.invariant('Small', x <= 3)\n"
         "    return spec\n")


def one_line_error(code: int, out: str, err: str) -> str:
    assert code == 2, (code, out, err)
    assert "Traceback" not in out + err
    lines = err.rstrip().splitlines()  # progress lines ("  ...") may come first
    assert lines and lines[-1].startswith("hwcheck: error: "), err
    assert all(x.startswith("  ") for x in lines[:-1]), err
    assert not INTERNAL.search(lines[-1]), lines[-1]
    return lines[-1]


# -- whatever a spec raises or exits with ---------------------------------------------------------

EXITS = {
    "import-exit-0": "import sys\nsys.exit(0)\n" + HEAD + BUILD,
    "import-keyboard-interrupt": "raise KeyboardInterrupt\n",
    "build-exit-0": HEAD + BUILD.replace("    spec = Spec(", "    raise SystemExit(0)\n"
                                         "    spec = Spec("),
    "action-generator-exit": HEAD + BUILD.replace("        b.require(x < 3)\n",
                                                  "        raise GeneratorExit\n"),
    "invariant-keyboard-interrupt": HEAD + "def boom():\n    raise KeyboardInterrupt\n"
    + BUILD.replace("spec.invariant('Small', x <= 3)", "spec.invariant('Small', boom())"),
}
RAISED = {"import-exit-0": "raised SystemExit(0)",
          "import-keyboard-interrupt": "raised KeyboardInterrupt",
          "build-exit-0": "raised SystemExit(0)", "action-generator-exit": "raised GeneratorExit",
          "invariant-keyboard-interrupt": "raised KeyboardInterrupt"}
COMMANDS = {
    "check": ["check"], "prove": ["prove"], "bmc": ["bmc", "--depth", "1"],
    "simulate": ["simulate", "--walks", "1"], "graph": ["graph"], "mutate": ["mutate"],
    "explore": ["explore", "--port", "0"], "suite": ["suite"], "params": ["params"],
    "replay": ["replay", "trace.itf.json"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("fault", list(EXITS))
def test_a_spec_that_exits_or_raises_is_one_line_and_exit_2(fault, command, tmp_path, capsys,
                                                             monkeypatch):
    """sys.exit(0) in a spec used to end the command with exit 0: the verdict of a spec that
    holds."""
    if command == "params" and not fault.startswith("import"):
        pytest.skip("params lists the parameters without building the spec")
    if command == "suite":
        # a protocol with a scenario, so that suite builds the spec
        src = EXITS[fault] + ("from hwcheck.spec.protocol import Param, Protocol, Scenario\n"
                              "PROTOCOL = Protocol('tiny', (Param('n', 2, range(1, 4)),), build,"
                              " scenarios=(Scenario('s', '', '', {'n': 2}),))\n")
    else:
        src = EXITS[fault]
    spec = tmp_path / "exits.py"
    spec.write_text(src)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.itf.json").write_text(json.dumps({
        "#meta": {"format": "ITF", "protocol": f"{spec}:build", "params": {"n": 2},
                  "property": "Small", "kind": "invariant"},
        "vars": ["x", "y"], "states": [{"#meta": {"index": 0}, "x": 0, "y": 0}]}))
    line = one_line_error(*hwcheck(capsys, *COMMANDS[command], "--spec", str(spec)))
    assert RAISED[fault] in line, line
    assert "exits" in line, line  # the spec is named (its file, or the protocol named after it)


def test_the_line_of_a_spec_that_exits_names_where(tmp_path, capsys):
    f = tmp_path / "exits.py"
    f.write_text(EXITS["build-exit-0"])
    line = one_line_error(*hwcheck(capsys, "check", "--spec", str(f)))
    assert line == (f"hwcheck: error: exits: building the spec raised SystemExit(0) at {f}:3")


# -- bmc and prove: Init's domain errors as check says them ---------------------------------------

INIT_LEAVES = HEAD + """
def build():
    spec = Spec('InitLeaves', {})
    x = spec.scalar('x', 0, 3)
    a = spec.array('a', (2,), 0, 3)
    def init(b):
        k = b.choose(4)             # a[2] and a[3] are outside a's shape
        b.set(x, a[k])
    spec.initial(init)
    @spec.action('Step', modifies=[x])
    def step(b: Block) -> None:
        b.require(x < 3)
        b.set(x, x + 1)
    spec.invariant('Small', x <= 3)
    return spec
"""
INIT_WRITES = INIT_LEAVES.replace("b.set(x, a[k])", "b.set(x, k + 2)")
CHECK_SAYS = {"leaves": "hwcheck: error: Init leaves the declared domains: DomainError(a, Init)",
              "writes": "hwcheck: error: Init leaves the declared domains: DomainError(x, Init)"}


@pytest.mark.parametrize("command", [["bmc", "--depth", "3"], ["prove"]])
@pytest.mark.parametrize("case", ["leaves", "writes"])
def test_bmc_and_prove_refuse_an_init_that_leaves_its_domains(case, command, tmp_path, capsys):
    """bmc said unknown (exit 3) and prove said proved (exit 0) of an Init whose choices read
    outside a shape; check refuses it (exit 2)."""
    f = tmp_path / "init.py"
    f.write_text(INIT_LEAVES if case == "leaves" else INIT_WRITES)
    line = one_line_error(*hwcheck(capsys, *command, "--spec", str(f), "--out",
                                   str(tmp_path / "out")))
    assert line == CHECK_SAYS[case]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["leaves", "writes"])
def test_check_says_the_same_of_init(case, tmp_path, capsys):
    f = tmp_path / "init.py"
    f.write_text(INIT_LEAVES if case == "leaves" else INIT_WRITES)
    line = one_line_error(*hwcheck(capsys, "check", "--spec", str(f), "--out",
                                   str(tmp_path / "out")))
    assert line == CHECK_SAYS[case]


# -- parameters ------------------------------------------------------------------------------------

ARRAY = HEAD + """
def build(n: int = 3):
    spec = Spec('Arr', {'n': n})
    a = spec.array('a', (n,), 0, 1)
    spec.initial(lambda b: None)
    @spec.action('Flip', over=[n], modifies=[a])
    def flip(b: Block, i) -> None:
        b.set(a[i], 1)
    spec.invariant('Ok', a[0] <= 1)
    return spec
"""


@pytest.mark.parametrize("command", [["check"], ["bmc", "--depth", "1"], ["prove"],
                                     ["simulate"], ["graph"]])
def test_a_negative_size_is_refused_naming_the_parameter(command, tmp_path, capsys):
    """A plain build(n: int = 3) declares a type, no domain: n=-1 gave an array of shape (-1,)
    (a DomainError trace, exit 12). The build fails in one line that says where and that the
    parameter has no declared domain."""
    f = tmp_path / "arr.py"
    f.write_text(ARRAY)
    line = one_line_error(*hwcheck(capsys, *command, "--spec", str(f), "--param", "n=-1",
                                   "--out", str(tmp_path / "out")))
    assert f"{f}:5: variable a: its shape (-1,) needs sizes (integers >= 0), got -1" in line
    assert "n=-1: arr declares no domain for this parameter, only a type" in line


@pytest.mark.parametrize("pair", ["rms=0", "rms=7", "rms=-1", "rms=x", "tm_commits_early=maybe",
                                  "nope=1"])
def test_a_declared_domain_refuses_a_value_outside_it(pair, capsys):
    line = one_line_error(*hwcheck(capsys, "bmc", "--depth", "1", "--spec",
                                   "tests/specs/two_phase.py", "--param", pair))
    assert pair.split("=")[0] in line


def test_sizes_are_checked_where_the_spec_declares_them():
    spec = Spec("S", {})
    for bad in (lambda: spec.array("a", (2, -1), 0, 1), lambda: spec.set_of("s", -2),
                lambda: forall(-1, lambda i: i == 0), lambda: spec.action("A", over=[-3])):
        with pytest.raises(SpecError, match="integer >= 0|integers >= 0"):
            bad()
    assert spec.array("empty", (0,), 0, 1).size == 0  # a size of 0 is a size


# -- messages that name the action or property and the line ----------------------------------------

def _build_error(tmp_path, body: str) -> str:
    f = tmp_path / f"spec{len(list(tmp_path.iterdir()))}.py"  # a file is loaded once
    f.write_text(HEAD + "from hwcheck.spec.lang import ite\n" + body)
    with pytest.raises(SpecError) as e:
        protocols.build(protocols.load(str(f)))
    msg = str(e.value)
    assert not INTERNAL.search(msg), msg
    return msg.replace(str(f), "FILE")


def test_a_non_constant_operand_is_shown_as_written(tmp_path):
    msg = _build_error(tmp_path, BUILD.replace("b.set(x, x + 1)", "b.set(x, x % y)"))
    assert msg == "FILE:11: action Step: % takes an integer constant as one operand, got y"


def test_truth_testing_names_the_action_and_the_line(tmp_path):
    msg = _build_error(tmp_path, BUILD.replace("        b.set(x, x + 1)\n",
                                               "        if x + 1 < y:\n"
                                               "            b.set(x, x + 1)\n"))
    assert msg.startswith("FILE:11: action Step: an expression (x + 1 < y) has no Python truth "
                          "value"), msg


def test_a_property_error_names_the_property_and_its_line(tmp_path):
    msg = _build_error(tmp_path, BUILD.replace("spec.invariant('Small', x <= 3)",
                                               "spec.invariant('Small', x + 3)"))
    assert msg == "FILE:12: invariant Small: expected a bool expression, got int"
    msg = _build_error(tmp_path, BUILD.replace("spec.invariant('Small', x <= 3)",
                                               "spec.invariant('Small', 'x <= 3')"))
    assert msg == "FILE:12: invariant Small: cannot use 'x <= 3' (str) in an expression"


def test_a_validation_error_names_the_action_where_it_is_defined(tmp_path):
    msg = _build_error(tmp_path, BUILD.replace("b.set(x, x + 1)", "b.set(y, x)"))
    assert msg == "FILE:8: action Step: writes y, which is not in its modifies list"


def test_an_error_in_init_names_its_line(tmp_path):
    msg = _build_error(tmp_path, BUILD.replace("spec.initial(lambda b: None)",
                                               "spec.initial(lambda b: b.set(x, y * y))"))
    assert msg == "FILE:7: Init: * takes an integer constant as one operand, got y"


def test_a_whole_array_in_an_expression_says_to_index_it(tmp_path):
    msg = _build_error(tmp_path, ARRAY.replace("a[0] <= 1", "ite(a[0] == 0, a, 1) <= 1")
                       .replace(HEAD, ""))
    assert msg.endswith("cannot use the variable a itself in an expression: read an element, "
                        "a[i]"), msg


def test_show_writes_expressions_as_python_reads_them():
    spec = Spec("S", {})
    x, y = spec.scalar("x", 0, 3), spec.scalar("y", 0, 3)
    log = spec.array("log", (2, 3), 0, 3)
    assert show(x % 3) == "x % 3"
    assert show((x + 1) * 2) == "(x + 1) * 2"
    assert show(x - (y - 1)) == "x - (y - 1)"
    assert show((x == 1) & ~(y < 2) | (x <= y)) == "x == 1 & ~(y < 2) | x <= y"
    assert show(log[x, y - 1]) == "log[x, y - 1]"
    assert show(prime(x) == min_(x + 1, 3)) == "x' == min(x + 1, 3)"
    assert show(ite(x == 0, y, 1)) == "ite(x == 0, y, 1)"
    assert re.fullmatch(r"\(forall (\w+) in 0\.\.1: log\[\1, 0\] == 0\)",
                        show(forall(2, lambda i: log[i, 0] == 0)))
    assert show(max_over(2, lambda i: log[i, 0], lambda i: i < x, -1)).startswith("max(log[")
    assert show(x + 1, limit=4) == "x..."


# -- --liveness with another protocol --------------------------------------------------------------

def test_liveness_on_a_spec_without_liveness_properties_says_so(capsys):
    """It said "--liveness belong to the kafka protocol; give the parameters of two-phase with
    --param KEY=VALUE": neither the grammar nor the advice fit a switch."""
    line = one_line_error(*hwcheck(capsys, "check", "--spec", "tests/specs/two_phase.py",
                                   "--liveness"))
    assert line.startswith("hwcheck: error: two-phase declares no liveness properties, so "
                           "--liveness has nothing to check")


def test_liveness_on_a_spec_with_liveness_properties_is_accepted(capsys, tmp_path):
    """The spec's liveness properties are decided anyway: --liveness asks for what it does."""
    code, out, err = hwcheck(capsys, "bmc", "--depth", "1", "--spec", "tests/specs/token_ring.py",
                             "--liveness", "--out", str(tmp_path))
    assert code == 3 and "verdict: unknown: no violation within 1 steps" in out, (out, err)
    line = one_line_error(*hwcheck(capsys, "check", "--spec", "tests/specs/token_ring.py",
                                   "--no-liveness"))
    assert "--property NAME" in line


def test_a_default_protocol_flag_says_it_belongs_to_it(capsys):
    line = one_line_error(*hwcheck(capsys, "bmc", "--spec", "tests/specs/two_phase.py",
                                   "-R", "3"))
    assert line == ("hwcheck: error: --replicas belongs to the kafka protocol; give the "
                    "parameters of two-phase with --param KEY=VALUE")


def test_a_block_error_outside_a_spec_file_still_names_the_action():
    spec = Spec("S", {})
    x = spec.scalar("x", 0, 3)
    with pytest.raises(SpecError, match=r"test_spec_errors\.py:\d+: action A: require\(\) after "
                                        "an effect statement"):
        @spec.action("A", modifies=[x])
        def a(b: Block) -> None:
            b.set(x, 1)
            b.require(x == 0)


def test_an_exception_in_an_action_body_names_the_action_and_the_line(tmp_path):
    """It was "tiny: building the spec raised ZeroDivisionError: ...": no action, no line."""
    msg = _build_error(tmp_path, BUILD.replace("b.set(x, x + 1)", "b.set(x, 1 // 0)"))
    assert msg == ("FILE:11: action Step: ZeroDivisionError: integer division or modulo by "
                   "zero")
