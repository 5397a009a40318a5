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

# each spec with parameter values inside its domains (others are drawn from every spec's)
SPECS = {"tests/specs/two_phase.py": ["rms=2", "rms=3", "tm_commits_early=true",
                                      "tm_commits_early=false", "tm-commits-early=0"],
         "tests/specs/die_hard.py": ["big=7", "big=6", "small=4", "goal=6", "goal=3"],
         "tests/specs/token_ring.py": ["nodes=2", "nodes=3", "use=weak", "passing=strong"]}
PARAM = st.sampled_from([
    "rms=0", "rms=7", "rms=-1", "rms=x", "rms=", "rms", "=3", "rms=1e3", "tm_commits_early=maybe",
    "big=-1", "big=x", "small=0", "goal=-5", "goal=99", "nodes=-1", "nodes=0", "use=x",
    "unknown=1",
    *[p for ps in SPECS.values() for p in ps]])
GOOD_OPTION = st.sampled_from([
    ["--param", "rms=2"], ["--param", "big=6"], ["--invariant", "TCConsistent"],
    ["--invariant", "NotSolved"], ["--invariant", "TypeOK"], ["--quiet"], ["--json"],
])
BAD_OPTION = st.sampled_from([
    ["--param", "rms=-1"], ["--param", "rms=x"], ["--param", "nope=1"], ["--param", "big=-1"],
    ["--param", "big=x"], ["--param", "="], ["-R", "3"], ["--replicas", "-1"], ["--liveness"],
    ["--truncation", "kip-279"], ["--invariant", "NoSuchInvariant"], ["--spec", "nope.py"],
    ["--spec", "tests/specs/two_phase.py:NOPE"], ["--workers", "0"], ["--max-states", "0"],
    ["--max-memory", "x"], ["--depth", "-1"], ["--timeout", "0"], ["--walks", "0"],
    ["--seed", "x"], ["--format", "png"], ["--scenario", "nope"],
])
COMPILING = ["check", "simulate", "graph"]


@st.composite
def params_of(draw, spec: str) -> list[str]:
    valid = st.sampled_from(SPECS[spec])
    return draw(st.lists(st.one_of(valid, valid, PARAM), max_size=3))


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
    if command in COMPILING:  # no spec of SPECS takes rms=-1
        bad = [*bad, ["--param", "rms=-1"]]
    args = [command, "--spec", spec]
    if command == "params":  # the protocol's parameters: no other option
        params, good, bad = [], [], bad[:1] if bad and bad[0][0] == "--spec" else []
    else:
        args += ["--out", str(tmp_path_factory.mktemp("out"))]
    if command == "bmc":
        args += ["--depth", str(depth)]
    for p in params:
        args += ["--param", p]
    for opt in good + bad:
        args += opt
    code, out, err = hwcheck(capsys, *args)
    assert "Traceback" not in out + err, args
    assert code in (0, 2, 3, 12), (args, code, out, err)
    if code == 2:
        lines = err.rstrip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hwcheck: error: "), (args, err)
    elif command != "params":
        assert "verdict" in out + err, (args, out, err)
    if command in COMPILING:
        assert code == 2, (args, code, out, err)  # each of them is refused before a kernel
