"""The package and its seams: one import namespace, a checker that never names the Kafka
protocol, protocols from the registry, kernels checked across processes, generic trace views."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hwcheck.checker import protocols
from hwcheck.checker.engines.options import Options
from hwcheck.checker.engines.partition import KernelMismatch, LevelTask, initial_part
from hwcheck.checker.run import check
from hwcheck.checker.semantics.kernel import Kernel
from hwcheck.checker.traces import html, text
from hwcheck.spec.lang import Block, Spec, SpecError
from hwcheck.spec.protocol import Param, Protocol

ROOT = Path(__file__).resolve().parent.parent


def counter_spec(n: int = 3) -> Spec:
    """Two counters that climb to n; the invariant says they never both reach n."""
    spec = Spec("Counters", {"n": n})
    a = spec.scalar("a", 0, n)
    b = spec.scalar("b", 0, n)

    @spec.action("IncA", modifies=[a])
    def inc_a(blk: Block) -> None:
        blk.require(a < n)
        blk.set(a, a + 1)

    @spec.action("IncB", modifies=[b])
    def inc_b(blk: Block) -> None:
        blk.require(b < n)
        blk.set(b, b + 1)

    spec.initial(lambda blk: None)
    spec.invariant("NotBothDone", ~((a == n) & (b == n)), "the two never both finish")
    return spec.validate()


COUNTERS = Protocol("counters", (Param("n", 3, range(1, 10), "the top"),),
                    lambda n: counter_spec(n))


def test_the_checker_never_imports_the_kafka_protocol():
    """The CLI's default comes from the registry (entry points), not from an import."""
    hits = []
    for path in (ROOT / "checker").rglob("*.py"):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"^\s*(from|import)\s+(hwcheck\.)?spec\.kafka\b", line):
                hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert hits == []


def test_spec_imports_nothing_of_the_checker():
    for path in (ROOT / "spec").rglob("*.py"):
        src = path.read_text()
        assert not re.search(r"^\s*(from|import)\s+(hwcheck\.checker|z3|pyspark|click|numba)\b",
                             src, re.M), path


def test_every_package_folder_is_listed_in_pyproject():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = set()
    for top, name in (("spec", "hwcheck.spec"), ("checker", "hwcheck.checker")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((name,) + rel))
    assert found == listed


def test_the_registry_knows_kafka_and_loads_it_by_name():
    assert "kafka" in protocols.registered()
    proto = protocols.load("kafka")
    assert proto.source == "hwcheck.spec.kafka:PROTOCOL"
    spec = protocols.build(proto, {"replicas": 2})
    assert spec.protocol is proto and spec.source == proto.source
    assert protocols.SpecRef.of(spec).build().params == spec.params


@pytest.mark.parametrize("source, message", [
    ("/no/such/file.py", "no such file"),
    ("no_such_module_anywhere", "cannot import 'no_such_module_anywhere'"),
    ("hwcheck.spec.kafka:NOPE", "the module has no 'NOPE'"),
    ("json", "defines neither PROTOCOL nor build"),
])
def test_a_bad_spec_source_is_one_line(source, message):
    with pytest.raises(SpecError, match=re.escape(message)):
        protocols.load(source)


def test_param_parsing_follows_the_domain():
    proto = protocols.load("kafka")
    got = protocols.parse_params(proto, ["replicas=3", "unclean=true", "truncation=kip-279",
                                         "min-isr=2"])
    assert got == {"replicas": 3, "unclean": True, "truncation": "kip-279", "min_isr": 2}
    for bad, msg in (("replicas", "KEY=VALUE"), ("replicas=x", "takes an integer"),
                     ("nope=1", "has no parameter 'nope'"), ("unclean=maybe", "true or false")):
        with pytest.raises(SpecError, match=msg):
            protocols.parse_params(proto, [bad])


def test_an_executor_that_builds_another_kernel_stops_the_run():
    """A partition rebuilds its kernel from the spec reference; a different kernel (another
    hwcheck version, an edited spec file) is refused, never explored."""
    proto = protocols.load("kafka")
    spec = protocols.build(proto, {"replicas": 2, "max_offset": 1, "max_epoch": 2})
    other = protocols.build(proto, {"replicas": 2, "max_offset": 1, "max_epoch": 3})
    task = LevelTask(protocols.SpecRef.of(spec), Kernel(other).key, 2, (True,), (True,))
    with pytest.raises(KernelMismatch, match="the spec or hwcheck differs here"):
        initial_part(task, 0)


def test_a_spec_built_by_hand_runs_on_the_partitioned_engine():
    """No protocol, no source: the partitions receive the spec itself (pickled)."""
    from hwcheck.checker.engines.partitioned import InProcessBackend, LevelEngine

    spec = counter_spec(3)
    k = Kernel(spec)
    ex = LevelEngine(k, Options(stop_at_violation=False), InProcessBackend(3)).run()
    assert (ex.distinct, ex.depth) == (16, 6)
    assert ex.hits["NotBothDone"].length == 6


def test_generic_views_draw_any_spec(tmp_path):
    # n=3: the kernel the partitioned test above compiles
    spec = protocols.build(COUNTERS, {"n": 3})
    report = check(spec, Options(stop_at_violation=False), out=tmp_path, run_name="c")
    (o,) = report.violations()
    assert (report.exploration.distinct, o.length) == (16, 6)
    txt = (tmp_path / "c" / "NotBothDone.txt").read_text()
    assert txt.splitlines()[0] == "NotBothDone violated in 6 steps (local engine)"
    assert txt.splitlines()[1] == "n=3"
    assert "Step 6: Inc" in txt and "    a  3" in txt and txt.count("*") >= 6
    assert txt.rstrip().endswith("The last state violates NotBothDone.")
    page = (tmp_path / "c" / "NotBothDone.html").read_text()
    assert page.count("<tr>") == 1 + 7
    assert "<th>a</th><th>b</th>" in page
    assert page.count('<span class="changed">') == 6  # one counter changes per step
    assert "violates <b>NotBothDone</b>: the two never both finish" in page
    for external in ("http://", "https://", "<script", "<link", "src="):
        assert external not in page
    assert html.page(o.trace, "x") == html.page(o.trace, "x")
    assert text.text(o.trace) == txt


@pytest.mark.slow
def test_the_wheel_installs_alone_in_a_fresh_venv(tmp_path):
    """Build a wheel, install it into a virtual environment outside the repository, run a check
    there: site-packages holds hwcheck (and its dist-info), nothing named spec or checker, and
    the Spark log4j2 file is package data."""
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-q", "-w", str(dist), str(ROOT)], check=True, capture_output=True)
    (wheel,) = dist.glob("hwcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "hwcheck/checker/spark/log4j2.properties" in names
    assert {n.split("/")[0] for n in names} == {"hwcheck", wheel.name.split("-")[0] + "-"
                                                + wheel.name.split("-")[1] + ".dist-info"}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True,
                   capture_output=True)
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # The dependencies (numba, z3, pyspark, ...) come from this environment, after the venv's
    # own site-packages, rather than from a download: a path added by a .pth file has its own
    # .pth files (this checkout's editable install among them) left unprocessed, so hwcheck
    # itself can only come from the wheel.
    import sysconfig

    (site / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    entries = {p.name for p in site.iterdir()} - {"zz_deps.pth"}
    assert "hwcheck" in entries and any(e.startswith("hwcheck-") and e.endswith(".dist-info")
                                        for e in entries)
    assert not {"spec", "checker"} & entries
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HWCHECK_CACHE"] = str(tmp_path / "cache")
    res = subprocess.run([str(venv / "bin" / "hwcheck"), "check", "--truncation", "kip-279",
                          "--json", "-q", "--out", str(tmp_path / "out")], capture_output=True,
                         text=True, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    obj = json.loads(res.stdout.strip().splitlines()[-1])
    assert (obj["distinct"], obj["protocol"]) == (4978, "hwcheck.spec.kafka:PROTOCOL")
    where = subprocess.run([str(py), "-c", "import hwcheck.checker, hwcheck.spec.kafka as k; "
                            "print(k.__file__)"], capture_output=True, text=True, cwd=tmp_path,
                           env=env, check=True).stdout
    assert where.startswith(str(site))
