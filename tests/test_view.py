"""VIEW: fingerprints over a declared subset of the variables, and its classification.

``tests/specs/view_counter.py`` against TLC (``tests/specs/tla/ViewCounter.tla``; TLC's
generated and depth are hwcheck's plus one): with the view, 9 distinct states, 22 generated,
depth 5; without it 21 / 50 / 6, and 21 / 44 / 6 when ``IncY``'s guard reads the auxiliary
``steps`` (``peek``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.view import classify
from hwcheck.spec.lang import Block, Spec, SpecError

SPEC = str(Path(__file__).parent / "specs" / "view_counter.py")


def counter(**params):
    return protocols.build(protocols.load(SPEC), params)


def counts(spec, **opts):
    ex = check(spec, Options(stop_at_violation=False), **opts).exploration
    return ex.distinct, ex.generated, ex.depth


@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_a_sound_view_counts_as_tlc_does(workers):
    assert counts(counter(), workers=workers) == (9, 21, 4)
    assert counts(counter(view=False), workers=workers) == (21, 49, 5)


def test_the_classification_names_what_reads_a_variable_left_out():
    assert classify(counter()).sound
    assert classify(counter(view=False)) is None
    peek = classify(counter(peek=True))
    assert peek.kind == "order-dependent" and peek.excluded == ("steps",)
    assert peek.reasons == ("the guard of IncY reads steps",)

    spec = Spec("Leak", {})
    a, b = spec.scalar("a", 0, 3), spec.scalar("b", 0, 3)
    spec.initial(lambda blk: None)

    @spec.action("Copy", modifies=[a, b])
    def copy(blk: Block) -> None:  # a is written from b through a local and a condition
        v = blk.let("v", b)
        with blk.when(b > 1):
            blk.set(a, v)
        blk.set(b, 0)

    spec.invariant("Small", b < 3)
    spec.view_of(a)
    got = classify(spec.validate())
    assert got.reasons == ("Copy writes a from b", "invariant Small reads b")


@pytest.mark.slow  # kernels of their own
def test_check_says_an_order_dependent_view_and_gives_the_full_state_counts(tmp_path):
    res = CliRunner().invoke(main, ["check", "--spec", SPEC, "--param", "peek=true",
                                    "--continue", "--json", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "view: fingerprints over 2 of 3 variables (left out: steps); order-dependent: the " \
           "guard of IncY reads steps: counts may differ from a full-state run" in res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert (out["distinct"], out["generated"]) == (9, 21)
    assert out["view"]["full_state"] == {"distinct": 21, "generated": 43, "depth": 5,
                                         "complete": True}


@pytest.mark.slow  # kernels of their own
def test_a_violation_under_a_view_has_a_trace_that_replays(tmp_path):
    res = CliRunner().invoke(main, ["check", "--spec", SPEC, "--param", "target=2",
                                    "--out", str(tmp_path)])
    assert res.exit_code == 12, res.output
    [itf] = sorted(tmp_path.rglob("XNotTarget.itf.json"))
    res = CliRunner().invoke(main, ["replay", str(itf), "--spec", SPEC])
    assert res.exit_code == 0 and res.output.startswith("replay: confirmed: XNotTarget"), \
        res.output


def test_what_reads_whole_states_is_refused_with_a_view(tmp_path):
    for flag in ("--exact",):  # (--recoverable and --symmetry need more of a protocol)
        res = CliRunner().invoke(main, ["check", "--spec", SPEC, flag, "--out", str(tmp_path)])
        assert res.exit_code == 2, res.output
        assert res.output.strip().splitlines()[-1] == (
            "Error: ViewCounter has a VIEW: check it without --symmetry, --exact, --recoverable "
            "and liveness properties (each reads whole states)")
    with pytest.raises(SpecError, match="unknown variable"):
        spec = Spec("V", {})
        spec.scalar("a", 0, 1)
        spec.initial(lambda b: None)
        spec.view_of("nope")
        spec.validate()


@pytest.mark.slow  # kernels of their own
def test_simulation_counts_views_too():
    from hwcheck.checker.sim.simulate import SimOptions, simulate

    opts = SimOptions(seed=0, walks=200, depth=20, max_seconds=None)
    assert simulate(counter(), opts).distinct == 9  # views, not the 21 full states
    assert simulate(counter(view=False), opts).distinct > 9
