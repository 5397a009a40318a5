"""Action coverage in `check`: per action, the states that enable it and the new states it
reached first; the same from every level source; an action never enabled is named."""

from __future__ import annotations

import functools
import json

import pytest
from click.testing import CliRunner
from helpers import kafka, tiered

from hwcheck.checker.cli.main import main
from hwcheck.checker.engines.options import Options
from hwcheck.checker.run import check
from hwcheck.checker.semantics.interp import Interpreter, ModelError

R2 = dict(replicas=2, max_offset=2, max_epoch=3, truncation="hw")


@functools.cache
def plain_coverage() -> dict:
    """Breadth-first over the interpreter on R2: per action, the states enabling it."""
    spec = kafka(**R2)
    interp = Interpreter(spec)
    start = interp.initial()
    key = lambda r: tuple(int(x) for x in r)  # noqa: E731
    seen, front = {key(start)}, [start]
    enabled = {a.name: 0 for a in spec.actions}
    while front:
        nxt = []
        for row in front:
            for inst in interp.instances:
                try:
                    succ = interp.step(inst, row)
                except ModelError:
                    continue
                if succ is None:
                    continue
                enabled[inst.action.name] += 1
                if key(succ) not in seen:
                    seen.add(key(succ))
                    nxt.append(succ)
        front = nxt
    return {"enabled": enabled, "distinct": len(seen)}


@pytest.mark.parametrize("how", tiered([dict(workers=1), dict(recoverable=True), dict(workers=2),
                                        dict(engine="partitioned", parts=3)],
                                       {"workers=1", "recoverable=True"},
                                       key=lambda h: ",".join(f"{k}={v}" for k, v in h.items())))
def test_every_source_counts_the_same_coverage(how):
    spec = kafka(**R2)
    rep = check(spec, Options(stop_at_violation=False), **how)
    cov = rep.coverage()
    plain = plain_coverage()
    assert {a: c["enabled"] for a, c in cov.items()} == plain["enabled"]
    assert sum(c["enabled"] for c in cov.values()) == rep.exploration.generated
    assert sum(c["new"] for c in cov.values()) == rep.exploration.distinct - 1
    assert rep.never_enabled() == []


@pytest.mark.slow  # a kernel no other fast test compiles
def test_an_action_never_enabled_is_named(tmp_path):
    from hwcheck.spec.lang import Block, Spec

    path = tmp_path / "dead.py"
    path.write_text('''
from hwcheck.spec.lang import Block, Spec

def build(n: int = 3) -> Spec:
    spec = Spec("Dead", {"n": n})
    x = spec.scalar("x", 0, n)
    spec.initial(lambda b: None)

    @spec.action("Inc", modifies=[x])
    def inc(b: Block) -> None:
        b.require(x < n)
        b.set(x, x + 1)

    @spec.action("Never", modifies=[x])
    def never(b: Block) -> None:
        b.require(x > n)
        b.set(x, 0)

    spec.invariant("InRange", x <= n)
    return spec
''')
    del Block, Spec
    res = CliRunner().invoke(main, ["check", "--spec", str(path), "--out", str(tmp_path),
                                    "--json"])
    assert res.exit_code == 0
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    assert obj["coverage"] == {"Inc": {"enabled": 3, "new": 3}, "Never": {"enabled": 0, "new": 0}}
    assert "Never never enabled" in res.stderr


def test_workers_spilling_their_own_buckets_count_the_same_coverage(monkeypatch):
    """Levels in files from the first byte, each worker putting its owner's new states into
    its own buckets (and their actions into the coverage) on its thread: the coverage of one
    worker in memory."""
    from hwcheck.checker.engines import spill

    spec = kafka(**R2)
    one = check(spec, Options(stop_at_violation=False), workers=1).coverage()
    monkeypatch.setattr(spill, "SPILL_BYTES", 0)
    monkeypatch.setattr(spill, "BUCKET_BYTES", 4096)
    owned = []
    real = spill.NextLevel.add_own

    def add_own(self, *a):
        owned.append(a[0])
        real(self, *a)

    monkeypatch.setattr(spill.NextLevel, "add_own", add_own)
    assert check(spec, Options(stop_at_violation=False), workers=2).coverage() == one
    assert set(owned) == {0, 1}  # both workers spilled their own
