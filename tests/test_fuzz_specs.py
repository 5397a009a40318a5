"""Broken spec files, drawn by Hypothesis: a small spec with one or two mistakes put where a
spec writer makes them (at import, in the builder, in Init, in an action's body, in a property,
in a declaration): exceptions of every kind, ``sys.exit``, expressions the language refuses,
truth-tested expressions, writes outside ``modifies``, sizes below zero. Every command ends in
one line on stderr that names the spec's file, exit 2, never a traceback nor an internal
repr."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_inputs import FUZZ, hwcheck

INTERNAL = re.compile(r"\b(Read|Var|Const|Arith|Cmp|Bound|ActionParam|Local|Quant)\(")

TEMPLATE = """import sys
from hwcheck.spec.lang import Block, Spec, forall, ite
{import_}

def build(n: int = 2):
    {build}
    spec = Spec("Fuzz", {{"n": n}})
    x = spec.scalar("x", 0, 3)
    y = spec.scalar("y", 0, 3)
    a = spec.array("a", (n,), 0, 1)
    {declare}

    def init(b):
        {init}
        b.set(x, 0)

    spec.initial(init)

    @spec.action("Step", over=[n], modifies=[x, a])
    def step(b: Block, i) -> None:
        b.require(x < 3)
        {action}
        b.set(x, x + 1)

    spec.invariant("Small", {invariant})
    return spec
"""

# statements that raise or exit, anywhere a statement goes
RAISES = ["raise ValueError('bad value')", "raise RuntimeError()", "raise KeyError('k')",
          "raise TypeError('t')", "raise RecursionError('deep')", "1 / 0", "[][1]",
          "sys.exit(0)", "sys.exit(1)", "sys.exit(12)", "sys.exit()", "sys.exit('bye')",
          "raise SystemExit(3)", "raise KeyboardInterrupt", "raise GeneratorExit",
          "raise MemoryError('m')", "import no_such_module_anywhere"]
# statements of an action's body (or Init's) that the language refuses
BODY = ["b.set(x, x % y)", "b.set(x, x * y)", "b.set(x, x // 0)", "b.set(x, x % -2)",
        "b.set(x, 1 if x else 0)", "b.set(x, int(x and y))", "b.set(x, int(not x))",
        "b.set(y, 1)", "b.set(x + 1, 1)", "b.set(x, x == 1)", "b.set(x, a)",
        "b.set(x, 'three')", "b.set(x, None)", "b.set(x, 1.5)", "b.set(a[0, 0], 1)",
        "b.set(x, forall(-1, lambda j: a[j] == 0))", "b.choose(0)", "b.require(x < 1, 'yes')",
        "b.set(x, ite(x == 0, x < 1, 2))", "b.set(x, x < y < 3)"]
INIT = [m for m in BODY if m != "b.set(y, 1)"]  # Init writes every variable
# invariants the language refuses
INVARIANT = ["x % y == 0", "x + 1", "a", "'x <= 3'", "None", "x < y < 3", "x if x else y",
             "a[x, y] == 0", "forall(-2, lambda j: a[j] == 0)", "ite(x == 0, 1, x < 1)"]
# declarations the language refuses
DECLARE = ["spec.array('z', (-n,), 0, 1)", "spec.scalar('z', 3, 1)", "spec.scalar('x', 0, 1)",
           "spec.set_of('s', -1)", "spec.array('z', (n, 'n'), 0, 1)"]

MISTAKE = st.one_of(
    st.tuples(st.just("import_"), st.sampled_from(RAISES)),
    st.tuples(st.just("build"), st.sampled_from(RAISES)),
    st.tuples(st.just("declare"), st.sampled_from(RAISES + DECLARE)),
    st.tuples(st.just("init"), st.sampled_from(RAISES + INIT)),
    st.tuples(st.just("action"), st.sampled_from(RAISES + BODY)),
    st.tuples(st.just("invariant"), st.sampled_from(INVARIANT)),
)
COMMAND = st.sampled_from([["check"], ["bmc", "--depth", "2"], ["prove"], ["simulate"],
                           ["graph"], ["mutate"]])


def spec_text(mistakes: list[tuple[str, str]]) -> str:
    parts = {"import_": "", "build": "pass", "declare": "pass", "init": "pass",
             "action": "pass", "invariant": "x <= 3"}
    for place, text in mistakes:
        if place in ("invariant",) or parts[place] == "pass" or parts[place] == "":
            parts[place] = text
    return TEMPLATE.format(**parts)


@FUZZ
@given(mistakes=st.lists(MISTAKE, min_size=1, max_size=2, unique_by=lambda m: m[0]),
       command=COMMAND)
def test_a_broken_spec_is_one_line_naming_its_file(mistakes, command, tmp_path_factory, capsys):
    folder = tmp_path_factory.mktemp("spec")
    f = folder / "broken.py"
    f.write_text(spec_text(mistakes))
    code, out, err = hwcheck(capsys, *command, "--spec", str(f), "--out", str(folder / "out"))
    assert "Traceback" not in out + err
    assert code == 2, (mistakes, command, code, out, err)
    lines = err.rstrip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hwcheck: error: "), (mistakes, err)
    assert "broken" in lines[0], (mistakes, lines[0])  # the spec's file (or its name)
    assert not INTERNAL.search(lines[0]), (mistakes, lines[0])


def test_every_mistake_alone_is_refused(tmp_path, capsys):
    """Each mistake of the lists above is one (so that the fuzzing asserts something about
    each): alone in the spec, the build fails in one line that says where."""
    cases = [("import_", m) for m in RAISES] + [("build", m) for m in RAISES] + \
            [("declare", m) for m in DECLARE] + [("init", m) for m in INIT] + \
            [("action", m) for m in BODY] + [("invariant", m) for m in INVARIANT]
    for k, mistake in enumerate(cases):
        f = tmp_path / f"broken{k}.py"
        f.write_text(spec_text([mistake]))
        code, out, err = hwcheck(capsys, "bmc", "--depth", "1", "--spec", str(f), "--out",
                                 str(tmp_path / "out"))
        assert code == 2 and "Traceback" not in err, (mistake, code, out, err)
        line = err.strip()
        assert line.startswith("hwcheck: error: ") and "\n" not in line, (mistake, err)
        assert re.search(rf"broken{k}\.py:\d+", line), (mistake, line)  # the file and line
        assert not INTERNAL.search(line), (mistake, line)
