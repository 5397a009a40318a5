"""Bad TLA+ input is one line, never a traceback: a module and a cfg mutated a few tokens at a
time, loaded and explored (a little), give a model or a `TlaError` and nothing else."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hwcheck.checker.tla.cfg import parse_cfg
from hwcheck.checker.tla.explore import explore, model
from hwcheck.checker.tla.syntax import TlaError

ROOT = Path(__file__).resolve().parent.parent
MODULE = (ROOT / "tests" / "specs" / "tla" / "Relay.tla").read_text()
CFG = (ROOT / "tests" / "specs" / "tla" / "Relay.cfg").read_text()
# The default tier replays the same examples every run; HWCHECK_FUZZ_EXAMPLES=N explores N
# fresh random ones (as tests/test_fuzz_inputs.py).
_LONG = os.environ.get("HWCHECK_FUZZ_EXAMPLES")
FUZZ = settings(max_examples=int(_LONG or 150), derandomize=not _LONG, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

TOKENS = ["+", "-", "=", "'", "\\E", "\\A", "(", ")", "[", "]", "{", "}", "<<", ">>", "0", "1",
          "\"s\"", "TRUE", "EXCEPT", "!", "@", "|->", "\\in", ":", ",", "/\\", "\\/", "Procs",
          "turns", "holder", "phase", "IF", "THEN", "ELSE", "LET", "IN", "==", "CHOOSE",
          "DOMAIN", "SUBSET", "..", "Max", "p", "q", "UNCHANGED", "~", "#", "\\cup", ".",
          "Len", "<<>>", "{}", "\\X", "Cardinality", "CASE", "->", "OTHER", "Next", "Init"]


@st.composite
def mutated(draw: st.DrawFn, text: str, tokens: list[str]) -> str:
    words = text.split(" ")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(words) - 1))
        how = draw(st.sampled_from(["replace", "insert", "delete"]))
        if how == "delete":
            del words[i]
        else:
            tok = draw(st.sampled_from(tokens))
            if how == "replace":
                words[i] = tok
            else:
                words.insert(i, tok)
    return " ".join(words)


@FUZZ
@given(text=mutated(MODULE, TOKENS))
def test_a_mutated_module_is_a_model_or_one_line(tmp_path: Path, text: str) -> None:
    (tmp_path / "Relay.tla").write_text(text)
    try:
        explore(model(tmp_path / "Relay.tla", parse_cfg(CFG, "Relay.cfg")), max_states=100)
    except TlaError as e:
        assert "\n" not in str(e)
        assert str(e).startswith((str(tmp_path / "Relay.tla"), "Relay.cfg:")), str(e)


@FUZZ
@given(text=mutated(CFG, ["=", "<-", "{", "}", ",", "INIT", "NEXT", "CONSTANT", "Procs",
                          "Max", "-1", "\"s\"", "TRUE", "INVARIANT", "SPECIFICATION", "Nope",
                          "(*", "*)", "\\*", "p1", "CHECK_DEADLOCK", "VIEW", "SYMMETRY"]))
def test_a_mutated_cfg_is_a_model_or_one_line(text: str) -> None:
    try:
        explore(model(ROOT / "tests" / "specs" / "tla" / "Relay.tla",
                      parse_cfg(text, "Relay.cfg")), max_states=100)
    except TlaError as e:
        assert "\n" not in str(e)
