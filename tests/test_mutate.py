"""`hwcheck mutate`: mutants on the syntax tree, one schema kernel for all of them, the kill
matrix; the KAFKA-7128 fix's condition killed at three replicas and not at two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import kafka

from hwcheck.checker import protocols
from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.options import Options
from hwcheck.checker.mutate.mutants import mutants, schema, schema_for
from hwcheck.checker.mutate.run import EQUIVALENT, KILLED, mutate
from hwcheck.checker.run import check
from hwcheck.checker.semantics.interp import Interpreter, ModelError
from hwcheck.checker.traces.trace import replay

SPECS = Path(__file__).resolve().parent / "specs"


def two_phase():
    return protocols.build(protocols.load(str(SPECS / "two_phase.py")), {"rms": 3})


def plain_distinct(spec) -> int:
    interp = Interpreter(spec)
    key = lambda r: tuple(int(x) for x in r)  # noqa: E731
    start = interp.initial()
    seen, todo = {key(start)}, [start]
    while todo:
        row = todo.pop()
        for inst in interp.instances:
            try:
                nxt = interp.step(inst, row)
            except ModelError:
                continue
            if nxt is not None and key(nxt) not in seen:
                seen.add(key(nxt))
                todo.append(nxt)
    return len(seen)


@pytest.mark.slow  # the schema's kernel: no other fast test compiles it
def test_the_kill_matrix_of_two_phase_commit():
    spec = two_phase()
    rep = mutate(spec)
    assert len(rep.results) == len(mutants(spec)) > 20
    assert rep.original.distinct == 288  # the schema running mutant 0 is the spec itself
    assert sum(rep.count(s) for s in ("killed", "survived", "equivalent", "unknown")) == \
        len(rep.results)
    # TMCommit without the "every RM prepared" condition commits while an RM aborts
    m = next(r for r in rep.results if r.mutant.action == "TMCommit"
             and r.mutant.operator == "drop-conjunct")
    assert m.status == KILLED and "TCConsistent" in m.hits
    sch, _ = schema(spec)
    for r in rep.results:  # every kill's trace replays on the schema running that mutant
        if r.trace is not None:
            replay(schema_for(sch, r.mutant.id), r.trace)
    assert 0.5 < rep.kill_rate <= 1.0


@pytest.mark.slow
def test_a_mutant_in_the_schema_has_the_states_of_the_mutant_alone():
    """The compiled schema running mutant k explores what the interpreter explores on the
    schema whose initial state picks k (an independent search over tuples)."""
    spec = two_phase()
    sch, found = schema(spec)
    rep = mutate(spec, only=[m.id for m in found[:12]])
    for r in rep.results:
        assert r.distinct == plain_distinct(schema_for(sch, r.mutant.id)), r.mutant.diff


@pytest.mark.slow  # the schema's kernel
def test_the_command_writes_the_matrix(tmp_path):
    res = CliRunner().invoke(main, ["mutate", "--spec", str(SPECS / "two_phase.py"), "--out",
                                    str(tmp_path), "--json", "-q"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    assert obj["mutants"] == len(obj["results"]) and obj["killed"] > 0
    page = next(tmp_path.rglob("mutants.html")).read_text()
    assert "kill rate" in page and page.count("data-mutant=") == obj["mutants"]


def test_the_command_lists_the_mutants_and_refuses_bad_input():
    runner = CliRunner()
    listed = runner.invoke(main, ["mutate", "--spec", str(SPECS / "two_phase.py"), "--list"])
    assert listed.exit_code == 0 and "drop-conjunct" in listed.output
    for bad, why in ((["--mutant", "9999"], "has mutants 1.."),
                     (["--escalate", "nosuch"], "not an integer parameter")):
        r = runner.invoke(main, ["mutate", "--spec", str(SPECS / "two_phase.py"), *bad])
        assert r.exit_code == 2 and why in r.output


def _epoch_start(spec) -> int:
    """The mutant that drops ISR expansion's epoch-start condition (the KAFKA-7128 fix)."""
    return next(m.id for m in mutants(spec) if m.action == "FetchRequest"
                and m.operator == "drop-conjunct" and "== epoch, else ll) <= lf" in m.before)


@pytest.mark.slow
def test_dropping_the_kafka_7128_fix_is_killed_at_three_replicas_not_two():
    fixed = dict(truncation="kip-279", isr_expansion="epoch-start", max_offset=1, max_epoch=3)
    r3 = kafka(replicas=3, **fixed)
    rep = mutate(r3, only=[_epoch_start(r3)])
    (res,) = rep.results
    assert res.status == KILLED and res.hits["CommittedNotLost"] == 12  # KAFKA-7128's trace
    # the mutant is the old ISR expansion: its state count is the unfixed model's
    unfixed = check(kafka(replicas=3, **dict(fixed, isr_expansion="hw")),
                    Options(stop_at_violation=False))
    assert res.distinct == unfixed.exploration.distinct == 69_689
    r2 = kafka(replicas=2, **fixed)
    (res2,) = mutate(r2, only=[_epoch_start(r2)]).results
    assert res2.status == EQUIVALENT
