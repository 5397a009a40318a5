"""``prove --infer`` on a TLA+ module: the module compiled by the TLA+ front end is a spec like
any other, its cfg's invariants are what is proved, and the lemmas saved prove it again through
``--lemmas-file``. The TLA+ front end keeps a set of records as one cell per record (TwoPhase's
``msgs``: the Prepared message of each resource manager, then Commit and Abort), so the
templates read an axis that extends an index set by that set's bound variable and its extra
cells by constants."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from hwcheck.checker.cli.main import main
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.semantics.layout import Layout
from hwcheck.checker.z3 import candidates as K
from hwcheck.spec.lang import Spec

TLA = Path(__file__).parent / "specs" / "tla"


def run(*args: str):
    res = CliRunner().invoke(main, list(args))
    return res.exit_code, res.output


def _messages() -> Spec:
    """Three members' states and a set of five messages: one per member, then two more."""
    spec = Spec("Messages", {})
    spec.array("st", (3,), 0, 2, "a member's state")
    spec.set_of("msgs", 5, "the messages sent: one per member, then Commit and Abort")
    return spec


def test_an_axis_that_extends_an_index_set_is_read_by_its_bound_variable_and_constants():
    """``msgs[i]`` for a member i (the first three cells, or the last three: which end the
    members' cells take is the values' order), the other cells by constants, with or without
    a bound variable; every such read is in range."""
    spec = _messages()
    vocab = K.Vocabulary(spec, [])
    bound = set(vocab.terms((3,)))
    assert K.Term("msgs", (("b", 0),)) in bound
    assert K.Term("msgs", (("o", (0, 2)),)) in bound  # msgs[i + 2]: the last three
    assert {K.Term("msgs", (("c", c),)) for c in (0, 1, 3, 4)} <= bound
    assert K.Term("msgs", (("c", 2),)) not in bound  # a member's cell either way
    alone = set(vocab.terms(()))
    assert {K.Term("msgs", (("c", c),)) for c in (3, 4)} <= alone
    # a clause over them is an expression of the spec whose reads stay in range
    lit = K.Literal("not", K.Term("msgs", (("b", 0),)))
    c = K.Candidate((3,), (lit, K.Literal("!=", K.Term("st", (("b", 0),)), 0)))
    row = np.zeros(Layout.of(spec).width, np.int64)
    assert Interpreter(spec).holds(K.to_expr(spec, c), row)
    assert K.to_source(spec, c) == "forall(3, lambda i: ~msgs[i] | (st[i] != 0), 'i')"
    last = K.Candidate((3,), (K.Literal("not", K.Term("msgs", (("o", (0, 2)),))),
                              K.Literal("!=", K.Term("st", (("b", 0),)), 0)))
    assert Interpreter(spec).holds(K.to_expr(spec, last), row)
    assert "msgs[i + 2]" in K.to_source(spec, last)


def test_a_renamed_members_axis_extends_nothing():
    """Under a symmetry that renames the members, no member is read through another axis
    (and no constant names one): the candidates stay symmetric."""
    spec = _messages()
    vocab = K.Vocabulary(spec, [], {"dims": {"st": (0,)}, "ids": ()})
    for sizes in K.bound_sets(vocab, 1):
        for t in vocab.terms(sizes):
            for kind, x in t.index:
                if t.var == "msgs" and kind == "b":  # its own index set only
                    assert sizes[x] == 5, (sizes, t)
                if t.var == "st":
                    assert kind == "b" and sizes[x] == -3, (sizes, t)


@pytest.mark.slow
def test_twophase_tla_is_proved_with_no_lemma_and_the_file_proves_it_again(tmp_path):
    """TCConsistent of TwoPhase.tla with lemmas inferred over the compiled module; the saved
    file, read against the same module, proves it with the ordinary proof."""
    spec = str(TLA / "TwoPhase.tla")
    code, out = run("prove", "--spec", spec, "--invariant", "TCConsistent", "--infer",
                    "--out", str(tmp_path), "--json", "-q")
    assert code == 0, out
    (res,) = json.loads(out.strip().splitlines()[-1])["invariants"]
    assert res["status"] == "holds" and res["lemmas"] == [] and res["inferred"]["lemmas"]
    assert res["inferred"]["states"] == 288  # TLC's distinct states
    saved = res["inferred"]["file"]
    code, out = run("prove", "--spec", spec, "--invariant", "TCConsistent", "--lemmas-file",
                    saved, "--out", str(tmp_path), "-q")
    assert code == 0 and "verdict: proved TCConsistent inductive" in out, out
    # without them, plain induction does not prove it: the lemmas are what proves it
    code, out = run("prove", "--spec", spec, "--invariant", "TCConsistent", "--out",
                    str(tmp_path), "-q")
    assert code == 3 and "counterexample to induction" in out, out
