"""The TLA+ front end's reference search against TLC's published counts.

TLC counts every way Init and Next are satisfied as a generated state (the initial states
included) and the initial states' level in the depth, so its generated and depth are hwcheck's
engines' plus the initial choices and plus one; distinct states are the same. Each module here
is a TLA+ twin of a Python port in tests/specs/ (or the Kafka model of docs/tla/), so the
figures come from the tables that already pin the ports (TLC's own, or equal to them).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from engine_contract import MODEL_TABLE, PROTOCOL_TABLE
from test_initial_states import TLC_COUNTS as ANY_START_TLC

from hwcheck.checker import protocols
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.tla.cfg import parse_cfg
from hwcheck.checker.tla.explore import _permute, describe, explore, model
from hwcheck.checker.tla.syntax import TlaError
from hwcheck.checker.tla.values import Fcn, ModelValue

ROOT = Path(__file__).resolve().parent.parent
TLA = ROOT / "tests" / "specs" / "tla"
KAFKA = ROOT / "docs" / "tla"


def run(tla: Path | str, cfg: str | None = None, **kw: object):
    m = model(tla, parse_cfg(cfg, f"{Path(tla).stem}.cfg") if cfg is not None else None)
    return explore(m, **kw)  # type: ignore[arg-type]


def counts(res) -> tuple[int, int, int]:
    return res.distinct, res.generated, res.depth


def port_row(file: str, params: dict) -> tuple:
    return next(r for r in PROTOCOL_TABLE if r[0] == file and r[1] == params)


# -- the small modules, against the Python ports' pinned counts --------------------------


@pytest.mark.parametrize("big, small, goal", [(5, 3, 4), (7, 4, 6), (6, 4, 3)])
def test_die_hard_is_the_ports(big: int, small: int, goal: int) -> None:
    params = {} if (big, small, goal) == (5, 3, 4) else {"big": big, "small": small,
                                                          "goal": goal}
    _, _, distinct, generated, depth, shortest = port_row("die_hard.py", params)
    res = run(TLA / "DieHard.tla", f"CONSTANTS Big = {big} Small = {small} Goal = {goal}\n"
                                   "INIT Init NEXT Next INVARIANTS TypeOK NotSolved")
    assert counts(res) == (distinct, generated + 1, depth + 1)
    assert {k: len(v) - 1 for k, v in res.violations.items()} == shortest
    assert res.verdict == ("violated" if shortest else "holds")


def test_die_hard_trace_is_the_puzzles_solution() -> None:
    res = run(TLA / "DieHard.tla")  # the cfg beside it
    trace = res.violations["NotSolved"]
    assert trace[0].label is None and trace[0].state == {"big": 0, "small": 0}
    assert trace[-1].state["big"] == 4
    assert [str(s.label) for s in trace[1:]] == [
        "FillBig", "BigToSmall", "EmptySmall", "BigToSmall", "FillBig", "BigToSmall"]
    text = describe(trace, ("big", "small"))
    assert text.splitlines()[:4] == ["0: Init", "  big = 0", "  small = 0", "1: FillBig"]
    # each step is one of Next's ways from the state before it
    ev, m = model(TLA / "DieHard.tla").ev, model(TLA / "DieHard.tla")
    for before, after in zip(trace, trace[1:]):
        assert (after.label, after.state) in list(ev.successors(m.next, before.state))


def test_two_phase_with_model_values_is_the_ports() -> None:
    _, _, distinct, generated, depth, _ = port_row("two_phase.py", {"rms": 3})
    res = run(TLA / "TwoPhase.tla")
    assert counts(res) == (distinct, generated + 1, depth + 1) == (288, 1146, 11)
    assert res.verdict == "holds" and res.deadlock is None
    assert ModelValue("r1") in {k for s in res.values("rmState") for k in s.map}
    assert res.values("tmState") == ["aborted", "committed", "init"]


@pytest.mark.slow
def test_two_phase_five_rms_is_the_ports() -> None:
    _, _, distinct, generated, depth, _ = port_row("two_phase.py", {"rms": 5})
    res = run(TLA / "TwoPhase.tla", "CONSTANT RM = {a, b, c, d, e}\nSPECIFICATION TPSpec\n"
                                    "INVARIANT TCConsistent")
    assert counts(res) == (distinct, generated + 1, depth + 1)


def test_symmetry_counts_the_orbits() -> None:
    full = run(TLA / "TwoPhase.tla", "CONSTANT RM = {a, b, c}\nSPECIFICATION TPSpec")
    res = run(TLA / "TwoPhase.tla", "CONSTANT RM = {a, b, c}\nSPECIFICATION TPSpec\n"
                                    "SYMMETRY Perms")
    # the orbits of the full search's states under renaming a, b, c, counted here directly
    names = [ModelValue(n) for n in "abc"]

    def rename(v, p):
        if isinstance(v, ModelValue):
            return p[v]
        if isinstance(v, frozenset):
            return frozenset(rename(x, p) for x in v)
        if isinstance(v, Fcn):
            return Fcn({rename(k, p): rename(x, p) for k, x in v.map.items()})
        return v

    reached = _states(TLA / "TwoPhase.tla", "CONSTANT RM = {a, b, c}\nSPECIFICATION TPSpec")
    perms = [dict(zip(names, q)) for q in itertools.permutations(names)]
    orbits = {frozenset(tuple(rename(x, p) for x in s) for p in perms) for s in reached}
    assert full.distinct == len(reached) == 288
    assert res.distinct == len(orbits) < 288


def test_a_symmetrys_renamings_are_made_once_per_value() -> None:
    # states share their sets and functions: a permutation renames each one once (Paxos's
    # messages under 30 permutations were renamed again for every state)
    a, b = ModelValue("a"), ModelValue("b")
    p = {a: b, b: a}
    kept: dict = {}
    msgs = frozenset({Fcn({"to": a, "n": 1}), Fcn({"to": b, "n": 2})})
    once = _permute(msgs, p, kept)
    assert once == frozenset({Fcn({"to": b, "n": 1}), Fcn({"to": a, "n": 2})})
    assert _permute(msgs, p, kept) is once
    assert _permute(frozenset({next(iter(msgs))}), p, kept) <= once  # an element kept too


def test_symmetry_of_two_sets_is_the_group_they_generate(tmp_path: Path) -> None:
    """``Permutations(A) \\cup Permutations(V)`` (Paxos/MCVoting's SYMMETRY): TLC renames
    A's and V's model values together (the group the permutations generate), so the four
    pairs of A \\X V are one orbit, as TLC counts them (1 distinct state)."""
    (tmp_path / "S.tla").write_text(
        "---- MODULE S ----\nEXTENDS TLC\nCONSTANTS A, V\nVARIABLE x\n"
        "Init == x \\in A \\X V\nNext == UNCHANGED x\n"
        "Sym == Permutations(A) \\cup Permutations(V)\n====\n")
    cfg = ("CONSTANTS A = {a1, a2} V = {v1, v2}\nINIT Init NEXT Next\n"
           "CHECK_DEADLOCK FALSE\n")
    assert run(tmp_path / "S.tla", cfg).distinct == 4
    assert run(tmp_path / "S.tla", cfg + "SYMMETRY Sym").distinct == 1


def _states(tla: Path, cfg: str) -> set[tuple]:
    """Every reachable state (as a tuple in variable order), by a search written here."""
    m = model(tla, parse_cfg(cfg, "x.cfg"))
    seen: set[tuple] = set()
    todo = list(m.ev.initial(m.init))
    while todo:
        s = todo.pop()
        row = tuple(s[v] for v in m.root.variables)
        if row not in seen:
            seen.add(row)
            todo += [t for _, t in m.ev.successors(m.next, s)]
    return seen


def _port_counts(file: str, **params: object) -> tuple[int, int, int]:
    """A Python port's distinct states, transitions plus initial states, and levels, by a
    search over the interpreter (no kernel to compile)."""
    spec = protocols.build(protocols.load(str(ROOT / "tests" / "specs" / file)), params)
    it = Interpreter(spec)
    level = it.initials()
    seen = {r.tobytes() for r in level}
    generated, depth = len(level), 0
    while level:
        depth += 1
        nxt = []
        for row in level:
            for _, t in it.successors(row):
                generated += 1
                if t.tobytes() not in seen:
                    seen.add(t.tobytes())
                    nxt.append(t)
        level = nxt
    return len(seen), generated, depth


def test_token_ring_is_the_ports() -> None:
    res = run(TLA / "TokenRing.tla", "CONSTANT N = 3\nSPECIFICATION SpecUseStrong_PassWeak",
              check_deadlock=False)
    assert counts(res) == _port_counts("token_ring.py", nodes=3) == (24, 73, 6)


@pytest.mark.parametrize("naive", [False, True])
def test_peterson_is_the_ports(naive: bool) -> None:
    res = run(TLA / "Peterson.tla", f"CONSTANT Naive = {str(naive).upper()}\n"
                                    "SPECIFICATION SpecWeak", check_deadlock=False)
    assert counts(res) == _port_counts("peterson.py", naive=naive)


# -- the repository's TLC twins ---------------------------------------------------------


@pytest.mark.parametrize("cfg", sorted(ANY_START_TLC))
def test_any_start_is_tlcs(cfg: tuple[int, int, int, int]) -> None:
    n, m, incs, spare = cfg
    res = run(TLA / "AnyStart.tla", f"CONSTANTS N = {n} M = {m} Incs = {incs} "
                                    f"Spare = {spare}\nINIT Init\nNEXT Next\n"
                                    "INVARIANT BudgetKept", check_deadlock=False)
    assert counts(res) == ANY_START_TLC[cfg]


# tests/specs/tla/README.md, "ViewCounter: VIEW": TLC's distinct / generated / depth
VIEW_COUNTER_TLC = {("FALSE", True): (9, 22, 5), ("FALSE", False): (21, 50, 6),
                    ("TRUE", True): (9, 22, 5), ("TRUE", False): (21, 44, 6)}


@pytest.mark.parametrize("peek, view", sorted(VIEW_COUNTER_TLC))
def test_view_counter_is_tlcs(peek: str, view: bool) -> None:
    res = run(TLA / "ViewCounter.tla", f"CONSTANTS N = 3 M = 2 K = 4 Peek = {peek}\n"
                                       "INIT Init NEXT Next INVARIANT YBounded\n"
                                       + ("VIEW view" if view else ""), check_deadlock=False)
    assert counts(res) == VIEW_COUNTER_TLC[(peek, view)]


def _kafka_cfg(r: int, m: int, e: int, truncation: str, expansion: str) -> str:
    name = {"hw": "hw", "leader-epoch": "leader-epoch", "kip-279": "kip-279"}[truncation]
    return f"R{r}-M{m}-E{e}-{name}" + ("-epoch-start" if expansion == "epoch-start" else "")


# docs/tla/README.md: the two configurations engine_contract.py's table does not carry
KAFKA_TLC_MORE = {"R2-M2-E3-fixed-acks-1": (12294, 37356, 24, {"AckedNotLost": 3}),
                  "R2-M2-E3-fixed-unclean": (12291, 35603, 27, {
                      "CommittedNotLost": 4, "AckedNotLost": 4, "LogsMatchBelowHw": 5})}


# the R=2 rows (10 to 15 s each here); the R=3 rows take 2 to 3 minutes each in plain Python
# (checked by hand: docs/tla.md)
@pytest.mark.slow
@pytest.mark.parametrize("row", [r for r in MODEL_TABLE if r[0] == 2],
                         ids=lambda r: _kafka_cfg(*r[:5]))
def test_kafka_hw_is_tlcs(row: tuple) -> None:
    r, m, e, truncation, expansion, distinct, generated, depth, shortest = row
    cfg = KAFKA / f"{_kafka_cfg(r, m, e, truncation, expansion)}.cfg"
    res = explore(model(KAFKA / "KafkaHW.tla", cfg), check_deadlock=False)
    assert counts(res) == (distinct, generated + 1, depth + 1)
    assert {k: len(v) - 1 for k, v in res.violations.items()} == shortest


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KAFKA_TLC_MORE))
def test_kafka_hw_fixed_variants_are_tlcs(name: str) -> None:
    distinct, generated, depth, shortest = KAFKA_TLC_MORE[name]
    res = explore(model(KAFKA / "KafkaHW.tla", KAFKA / f"{name}.cfg"), check_deadlock=False)
    assert counts(res) == (distinct, generated, depth)
    assert {k: len(v) - 1 for k, v in res.violations.items()} == shortest


# docs/tla/README.md, "The KRaft controller": TLC's figures on KafkaKRaft.tla (about 20 s
# each here)
KRAFT_TLC = {"KRaft-R2-M1-E2-kraft": (5042, 21850, 22),
             "KRaft-R2-M1-E2-kraft-fencing-elr": (4371, 19550, 23)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KRAFT_TLC))
def test_kafka_kraft_is_tlcs(name: str) -> None:
    res = explore(model(KAFKA / "KafkaKRaft.tla", KAFKA / f"{name}.cfg"), check_deadlock=False)
    assert counts(res) == KRAFT_TLC[name] and res.verdict == "holds"


# tests/specs/tla/README.md, "KRaft: Vanlightly/kafka-tlaplus's v3.5 and ELR specs": the
# original modules with the cfg beside them, at the limits given (clean, unclean, fence,
# AlterPartition shutdowns) and TLC's deadlock check off, as TLC's -deadlock; TLC's figures
VANLIGHTLY = {"v3.5": ("kraft_v35", "kafka_replication_v3_5_simple", "KafkaReplicationV35Simple"),
              "ELR": ("kraft_elr", "kafka_replication_v_elr_simple", "KafkaReplicationVElrSimple")}
LIMITS = ("CleanShutdownLimit", "UncleanShutdownLimit", "FenceBrokerLimit",
          "AlterPartitionLimit")


def vanlightly(spec: str, limits: tuple[int, int, int, int] | None = None):
    folder, module, cfg = VANLIGHTLY[spec]
    text = (TLA / folder / f"{cfg}.cfg").read_text()
    for name, value in zip(LIMITS, limits or ()):
        text, n = re.subn(rf"\b{name} = \d+", f"{name} = {value}", text)
        assert n == 1, name
    return model(TLA / folder / f"{module}.tla", parse_cfg(text, f"{cfg}.cfg"))


@pytest.mark.slow
@pytest.mark.parametrize("spec", sorted(VANLIGHTLY))
def test_vanlightlys_kraft_originals_at_the_limits_0_are_tlcs(spec: str) -> None:
    res = explore(vanlightly(spec, (0, 0, 0, 0)), check_deadlock=False)  # about 3 s each
    assert counts(res) == (642, 1482, 24) and res.verdict == "holds"


@pytest.mark.slow
def test_vanlightlys_kraft_v35_cfg_deadlocks_where_tlc_does() -> None:
    # the cfg as it is (an unclean shutdown; TLC's deadlock check on): TLC stops at a
    # deadlock after 12 steps, with 13,712 distinct states and 34,658 generated (about 45 s)
    res = explore(vanlightly("v3.5"), stop_at_first=True)
    assert (res.distinct, res.generated) == (13712, 34658)
    assert res.deadlock is not None and len(res.deadlock) - 1 == 12
    assert [s.label.name for s in res.deadlock[-3:] if s.label is not None] == [
        "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate", "UnfenceBroker"]


# -- TLC's conventions on small modules written here ---------------------------------------


COUNTER = """---- MODULE Counter ----
EXTENDS Naturals
CONSTANT Max
VARIABLE x
Init == x = 0
Next == x < Max /\\ x' = x + 1
Loop == Next \\/ (x = Max /\\ x' = 0)
Twice == x' = (x + 1) % (Max + 1) \\/ x' = (x + 1) % (Max + 1)
Unbounded == x' = x + 1
Small == x < 3
Up == x' > x
Eventually == <>(x = Max)
====
"""


@pytest.fixture
def counter(tmp_path: Path) -> Path:
    p = tmp_path / "Counter.tla"
    p.write_text(COUNTER)
    return p


def test_deadlock_as_tlc_checks_it(counter: Path) -> None:
    res = run(counter, "CONSTANT Max = 3\nINIT Init\nNEXT Next")
    assert res.deadlock is not None and res.verdict == "violated"
    assert [s.state["x"] for s in res.deadlock] == [0, 1, 2, 3]
    assert counts(res) == (4, 4, 4)
    off = run(counter, "CONSTANT Max = 3\nINIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE")
    assert off.deadlock is None and off.verdict == "holds"
    assert run(counter, "CONSTANT Max = 3\nINIT Init\nNEXT Next",
               check_deadlock=False).verdict == "holds"
    assert run(counter, "CONSTANT Max = 3\nINIT Init\nNEXT Loop").deadlock is None


def test_each_way_next_is_satisfied_is_generated(counter: Path) -> None:
    res = run(counter, "CONSTANT Max = 2\nINIT Init\nNEXT Twice")
    assert counts(res) == (3, 1 + 2 * 3, 3)


def test_constraints_generate_but_do_not_keep(counter: Path) -> None:
    res = run(counter, "CONSTANT Max = 9\nINIT Init\nNEXT Unbounded\nCONSTRAINT Small")
    assert counts(res) == (3, 4, 3)  # x = 3 generated from x = 2, outside the model
    act = run(counter, "CONSTANT Max = 9\nINIT Init\nNEXT Loop\nACTION_CONSTRAINT Up")
    assert counts(act) == (10, 11, 10)  # the wrap to 0 is generated, not taken


def test_a_temporal_property_is_left_unknown_never_holds(counter: Path) -> None:
    res = run(counter, "CONSTANT Max = 2\nINIT Init\nNEXT Loop\nPROPERTY Eventually")
    assert res.unchecked == ("Eventually",) and res.verdict == "unknown"


def test_a_limit_is_unknown(counter: Path) -> None:
    res = run(counter, "CONSTANT Max = 50\nINIT Init\nNEXT Loop", max_states=10)
    assert not res.complete and res.verdict == "unknown" and res.distinct < 51


def test_stop_at_first_violation(tmp_path: Path) -> None:
    res = run(TLA / "DieHard.tla", stop_at_first=True)
    assert list(res.violations) == ["NotSolved"] and res.distinct < 16


@pytest.mark.parametrize("next_, message", [
    ("Bad == x = 0", "Counter.tla:13:1: the step Bad does not determine x'"),
    ("Bad == x' = x + TRUE", "Counter.tla:13:13: + applied to a boolean (TRUE), not an "
                             "integer"),
    ("Bad == x' = x' + 1", "Counter.tla:13:13: x is read before it is assigned"),
    ("Bad == x' = CASE x = 5 -> 1", "Counter.tla:13:13: no arm of this CASE applies"),
    ("Bad == x' = [i \\in 1..2 |-> i][x]", "Counter.tla:13:13: <<1, 2>>[0]: 0 is not in the "
                                            "function's domain"),
    ("Circle == Circle\nBad == x' = Circle",
     "Counter.tla:14:1: evaluating this recursed too deeply"),
    ("RECURSIVE F(_)\nF(n) == F(n + 1)\nBad == x' = F(0)",
     "Counter.tla:15:1: evaluating this recursed too deeply"),
])
def test_evaluation_errors_name_the_place(tmp_path: Path, next_: str, message: str) -> None:
    p = tmp_path / "Counter.tla"
    p.write_text(COUNTER.replace("====", next_ + "\n===="))
    with pytest.raises(TlaError) as e:
        run(p, "CONSTANT Max = 2\nINIT Init\nNEXT Bad")
    assert str(e.value).startswith(str(tmp_path)) and message in str(e.value)
    assert "\n" not in str(e.value)
