"""The Spark session hwcheck runs in: one per process, created on first use and reused.

Settings that matter for a level-synchronous search: a SparkContext alone (no Spark SQL), few
partitions (``spark.default.parallelism`` follows ``--partitions``), no locality wait (a level's
tasks should start at once rather than wait up to 3 s for the executor caching their input),
Python workers reused across tasks (each keeps its compiled kernel), JVMs that leave the cores
to the workers (``JVM_OPTIONS``), no UI, errors-only logs.

Environment knobs (for clusters and benchmarks): ``HWCHECK_SPARK_DRIVER_MEMORY`` (default 2g),
``HWCHECK_SPARK_EXECUTOR_MEMORY`` (default 2g), ``HWCHECK_SPARK_CONF`` (extra ``k=v`` pairs,
separated by spaces).
"""

from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlparse

from hwcheck.checker.environment import EnvironmentFault

if TYPE_CHECKING:
    from pyspark import SparkContext

LOG4J = Path(__file__).with_name("log4j2.properties")
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def on_loopback(master: str) -> bool:
    """A local master, or a cluster whose master listens on this machine's loopback."""
    if is_local(master):
        return True
    host = urlparse(master).hostname
    return host in LOOPBACK


def conf_pairs(master: str, parts: int | None) -> dict[str, str]:
    # the JVMs schedule tasks and hold no state of the search (the inbox exchange): the
    # quick compiler alone and one collector thread leave the cores to the Python workers
    # (R3 M3 E3: the driver JVM's CPU time during the run halved)
    log = f"-Dlog4j2.configurationFile=file:{LOG4J} {JVM_OPTIONS}"
    conf = {
        "spark.master": master,
        "spark.app.name": "hwcheck",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.locality.wait": "0s",
        "spark.python.worker.reuse": "true",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.driver.memory": os.environ.get("HWCHECK_SPARK_DRIVER_MEMORY", "2g"),
        "spark.executor.memory": os.environ.get("HWCHECK_SPARK_EXECUTOR_MEMORY", "2g"),
        "spark.driver.extraJavaOptions": log,
        "spark.executorEnv.PYTHONHASHSEED": "0",
        # blocks are pickled numpy arrays of fingerprints and states: random bits that LZ4
        # cannot shrink, so compressing them only costs CPU twice per level
        "spark.shuffle.compress": "false",
        "spark.shuffle.spill.compress": "false",
    }
    if parts:
        conf["spark.default.parallelism"] = str(parts)
    if on_loopback(master):
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
        conf["spark.executor.extraJavaOptions"] = log  # same machine: the file is there
    for key in ("HWCHECK_CACHE", "NUMBA_CACHE_DIR"):
        if key in os.environ:
            conf[f"spark.executorEnv.{key}"] = os.environ[key]
    for pair in os.environ.get("HWCHECK_SPARK_CONF", "").split():
        k, _, v = pair.partition("=")
        conf[k] = v
    return conf


class SparkUnavailable(EnvironmentFault):
    """Spark cannot start here (no Java, a master that does not answer): one line, at once."""


CONNECT_TIMEOUT = 5.0  # seconds to wait for a standalone master to accept a connection


def preflight(master: str) -> None:
    """What a Spark session needs, checked before waiting on one: Java, and for a standalone
    master (spark://host:port) a listening port."""
    import shutil
    import socket

    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and Path(java_home, "bin", "java").exists()):
        raise SparkUnavailable("the Spark engine needs Java 17: no java on PATH or in "
                               "JAVA_HOME")
    if master.startswith("spark://"):
        url = urlparse(master)
        if not url.hostname or not url.port:
            raise SparkUnavailable(f"--spark-master {master}: expected spark://HOST:PORT")
        try:
            with socket.create_connection((url.hostname, url.port), timeout=CONNECT_TIMEOUT):
                pass
        except OSError as e:
            raise SparkUnavailable(f"--spark-master {master}: no Spark master answers there "
                                   f"({e.strerror or e})") from None
    elif not is_local(master):
        raise SparkUnavailable(f"--spark-master {master}: expected local[N] or spark://HOST:PORT")


def spark_context(master: str, parts: int | None = None) -> SparkContext:
    """The process's SparkContext for ``master``: the running one if it has that master,
    otherwise a new one (stopping a context with another master first)."""
    from pyspark import SparkConf, SparkContext

    sc = SparkContext._active_spark_context
    if sc is not None:
        if sc.master == master:
            return sc
        stop()
    preflight(master)
    if on_loopback(master):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = SparkConf()
    for k, v in conf_pairs(master, parts).items():
        conf.set(k, v)
    # a SparkContext, not a SparkSession: nothing here uses Spark SQL (1.2 s less to start)
    sc = SparkContext.getOrCreate(conf)
    sc.setLogLevel("ERROR")
    atexit.register(stop)
    return sc


def stop() -> None:
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is not None:
        sc.stop()


def jvm_pid(sc: SparkContext) -> int | None:
    """The driver JVM's process id (it also hosts the executor in local mode)."""
    try:
        jvm: Any = sc._jvm  # set once a SparkContext exists (py4j's JVMView, untyped)
        return int(jvm.java.lang.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001 - a figure for reports only
        return None


def peak_rss_of(pid: int | None) -> int:
    """A process's peak resident memory (VmHWM), 0 if unknown."""
    if pid is None:
        return 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def task_slots(sc: SparkContext) -> int:
    """How many tasks can run at once now: local[N]'s N; on a cluster, the cores of the
    executors registered now over spark.task.cpus. 0 if it cannot be told."""
    master = cast(str, sc.master)  # a SparkContext has a master (it refuses to start without)
    try:
        if is_local(master):
            inside = master[len("local["):-1] if master.startswith("local[") else "1"
            n = inside.split(",")[0]
            return (os.cpu_count() or 1) if n == "*" else int(n)
        per_task = int(sc.getConf().get("spark.task.cpus", "1"))
        execs = sc._jsc.sc().statusStore().executorList(True)
        cores = sum(int(execs.apply(i).totalCores()) for i in range(execs.size())
                    if execs.apply(i).id() != "driver")
        return cores // max(1, per_task)
    except Exception:  # noqa: BLE001 - unknown: the caller runs one level a job
        return 0
