"""Option sets drawn by Hypothesis for the commands that take a spec, on the small specs of
``tests/specs/``: the protocol's parameters with values inside and outside their domains, the
default protocol's own flags, properties that exist or not, bounds and limits. Every case ends
in a verdict with its documented exit code (0 holds, 3 unknown, 12 violated) or in one line on
stderr with exit 2; never a traceback. (``tests/test_fuzz_inputs.py`` fuzzes the Kafka
command line's own options.)

The commands that compile a kernel (check, simulate, graph) always get one bad parameter too,
so that the fast tier compiles nothing new; bmc, prove and params run whatever is drawn (Z3 on small
specs)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from test_fuzz_inputs import FUZZ, hwcheck

# each spec with parameter values inside its domains, and its invariants
SPECS = {"tests/specs/two_phase.py": ["rms=2", "rms=3", "tm_commits_early=true",
                                      "tm_commits_early=false", "tm-commits-early=0"],
         "tests/specs/die_hard.py": ["big=7", "big=6", "small=4", "goal=6", "goal=3"],
         "tests/specs/token_ring.py": ["nodes=2", "nodes=3"],
         "flags.py": ["n=1", "n=2", "n=3"]}
INVARIANTS = {"tests/specs/two_phase.py": ["TCConsistent", "TPTypeOK"],
              "tests/specs/die_hard.py": ["NotSolved", "TypeOK"],
              "tests/specs/token_ring.py": [], "flags.py": ["AtMostOne"]}
# values outside every spec's domains (and another spec's parameters: unknown names)
PARAM = st.sampled_from([
    "rms=0", "rms=7", "rms=-1", "rms=x", "rms=", "rms", "=3", "rms=1e3", "tm_commits_early=maybe",
    "big=-1", "big=x", "nodes=-1", "nodes=x", "n=-1", "n=-3", "n=x", "unknown=1",
    *[p for ps in SPECS.values() for p in ps]])
GOOD_OPTION = st.sampled_from([["--quiet"], ["--json"], ["--liveness"], ["--invariant", "TypeOK"],
                               ["--invariant", "TCConsistent"], ["--invariant", "NotSolved"]])
# options every command refuses (a value outside its range, or an option it does not have)
BAD_OPTION = st.sampled_from([
    ["-R", "3"], ["--replicas", "-1"], ["--truncation", "kip-279"], ["--no-liveness"],
    ["--invariant", "NoSuchInvariant"], ["--spec", "nope.py"],
    ["--spec", "tests/specs/two_phase.py:NOPE"], ["--workers", "0"], ["--max-states", "0"],
    ["--max-memory", "x"], ["--depth", "-1"], ["--timeout", "0"], ["--walks", "0"],
    ["--seed", "x"], ["--format", "png"], ["--scenario", "nope"],
])
COMPILING = ["check", "simulate", "graph"]
# a plain build(n) whose n sizes an array: no declared domain, so n=-1 must fail the build
FLAGS = """from hwcheck.spec.lang import Block, Spec, count


def build(n: int = 2):
    spec = Spec("Flags", {"n": n})
    flag = spec.array("flag", (n,), 0, 1)
    spec.initial(lambda b: None)

    @spec.action("Raise", over=[n], modifies=[flag])
    def raise_(b: Block, i) -> None:
        b.require(count(n, lambda j: flag[j] == 1) == 0)
        b.set(flag[i], 1)

    spec.invariant("AtMostOne", count(n, lambda j: flag[j] == 1) <= 1)
    return spec
"""


@st.composite
def params_of(draw, spec: str) -> list[str]:
    valid = st.sampled_from(SPECS[spec])
    return draw(st.lists(st.one_of(valid, valid, PARAM), max_size=3))


def refused(spec: str, params: list[str], good: list[list[str]], bad: list[list[str]]) -> bool:
    """Whether bmc or prove must refuse these options (exit 2)."""
    return bool(bad) or any(p not in SPECS[spec] for p in params) or any(
        (o[0] == "--liveness" and "token_ring" not in spec)
        or (o[0] == "--invariant" and o[1] not in INVARIANTS[spec]) for o in good)


@FUZZ
@given(command=st.sampled_from(["bmc", "prove", "check", "bmc", "prove", "simulate", "graph",
                                "params"]),
       spec_params=st.sampled_from(sorted(SPECS)).flatmap(
           lambda s: st.tuples(st.just(s), params_of(s))),
       good=st.lists(GOOD_OPTION, max_size=2), bad=st.lists(BAD_OPTION, max_size=1),
       depth=st.integers(0, 2))
def test_any_option_set_is_a_verdict_or_one_line(command, spec_params, good, bad, depth,
                                                 tmp_path_factory, capsys):
    spec, params = spec_params
    folder = tmp_path_factory.mktemp("out")
    (folder / "flags.py").write_text(FLAGS)
    args = [command, "--spec", str(folder / spec) if spec == "flags.py" else spec]
    if command == "params":  # the protocol's parameters: no other option
        params, good, bad = [], [], bad[:1] if bad and bad[0][0] == "--spec" else []
    else:
        args += ["--out", str(folder)]
    if command == "bmc":
        args += ["--depth", str(depth)]
    if command in COMPILING:  # no spec of SPECS takes rms=-1
        bad = [*bad, ["--param", "rms=-1"]]
    for p in params:
        args += ["--param", p]
    for opt in good + bad:
        args += opt
    code, out, err = hwcheck(capsys, *args)
    assert "Traceback" not in out + err, args
    if refused(spec, params, good, bad):
        assert code == 2, (args, code, out, err)
        lines = err.rstrip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hwcheck: error: "), (args, err)
    else:
        assert code in ((0,) if command == "params" else (0, 3, 12)), (args, code, out, err)
        assert command == "params" or "verdict" in out + err, (args, out, err)
