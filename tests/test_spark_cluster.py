"""The Spark engine on a real standalone cluster (a master and two workers on 127.0.0.1, started by
scripts/spark-cluster.sh): the local engine's counts, also when a worker dies mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import NEEDS_JAVA  # noqa: E402

pytestmark = [pytest.mark.slow, NEEDS_JAVA]

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "spark-cluster.sh"
PORT = int(os.environ.get("HWCHECK_TEST_SPARK_PORT", "7177"))
MASTER = f"spark://127.0.0.1:{PORT}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    run = tmp_path_factory.mktemp("spark-cluster")
    env = dict(os.environ, HWCHECK_SPARK_RUN=str(run), SPARK_MASTER_PORT=str(PORT),
               PYTHON=sys.executable, HWCHECK_WORKER_MEMORY="2g")
    subprocess.run([str(SCRIPT), "start"], env=env, check=True, timeout=180)
    try:
        yield run
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, timeout=120)


def hwcheck(args, tmp_path, **popen):
    cmd = [sys.executable, "-m", "hwcheck.checker", "check", "--engine", "spark",
           "--spark-master", MASTER, "--partitions", "4", "--json",
           "--out", str(tmp_path / "out"), *args]
    env = dict(os.environ, HWCHECK_SPARK_CHECKPOINT_DIR=str(tmp_path / "checkpoints"))
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT, **popen)


def local_counts(args, tmp_path):
    out = subprocess.run([sys.executable, "-m", "hwcheck.checker", "check", "--json", "-q",
                          "--out", str(tmp_path / "local"), *args], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.stdout.strip(), out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got, out.returncode


def test_cluster_gives_the_local_engines_counts(cluster, tmp_path):
    args = ["-R", "2", "-M", "2", "-E", "3", "--truncation", "kip-279", "--continue"]
    p = hwcheck(args, tmp_path)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    got = json.loads(out.strip().splitlines()[-1])
    assert got["engine"] == "spark"
    assert (got["distinct"], got["generated"], got["depth"]) == (4978, 14722, 19)
    assert got["verdict"] == "holds"


def _worker_processes(run: Path, n: int) -> list[int]:
    """Worker ``n``'s JVM and the processes it launched (its executor and that one's Python)."""
    top = int((run / f"worker{n}.pid").read_text())
    pids, todo = [], [top]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        kids = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
        todo += [int(k) for k in kids.split()]
    return pids


def test_a_worker_killed_mid_run_changes_nothing(cluster, tmp_path):
    """R3 M2 E3 (6.2 million states, 58 levels) on 4 partitions, one level a job (more
    partitions than the two workers' slots); a worker, its executor and its Python killed at
    level 8: Spark runs the lost tasks again and the counts and violations are the local
    engine's."""
    args = ["-R", "3", "-M", "2", "-E", "3", "--truncation", "hw", "--continue"]
    want, want_rc = local_counts(args, tmp_path)
    p = hwcheck(args, tmp_path)
    killed = []
    err_lines = []
    deadline = time.time() + 600
    for line in p.stderr:  # progress lines: "  level N  distinct ..."
        err_lines.append(line)
        parts = line.split()
        if not killed and len(parts) > 1 and parts[0] == "level" and int(parts[1]) >= 8:
            for pid in _worker_processes(cluster, 1):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        if time.time() > deadline:
            p.kill()
            break
    out = p.stdout.read()
    p.wait(timeout=60)
    assert killed, "the run ended before a worker could be killed:\n" + "".join(err_lines[-30:])
    assert p.returncode == want_rc, "".join(err_lines[-40:])
    # the driver saw the executor go (Spark logs it at error level) and carried on
    assert any("Lost executor" in line or "worker lost" in line.lower() for line in err_lines), \
        "".join(err_lines[-40:])
    got = json.loads(out.strip().splitlines()[-1])
    for key in ("distinct", "generated", "depth", "verdict", "violations"):
        if key == "violations":
            assert [(v["property"], v["length"]) for v in got[key]] == \
                [(v["property"], v["length"]) for v in want[key]]
        else:
            assert got[key] == want[key], key
