"""Shared helpers of the tests: the Kafka protocol as the registry loads it."""

from __future__ import annotations

from hwcheck.checker import protocols
from hwcheck.spec.kafka.params import Params


def kafka(params: Params | dict | None = None, **kw):
    """The Kafka spec of ``params`` (a Params, a dict, or keyword arguments), built through the
    registry as the command line builds it (so it knows its protocol: lemmas, views, source)."""
    if isinstance(params, Params):
        params = params.as_dict()
    given = dict(params or {})
    given.update(kw)
    return protocols.build(protocols.load("kafka"), given)


def _has_java() -> bool:
    import os
    import shutil
    from pathlib import Path

    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and Path(home, "bin", "java").exists()))


# The Spark engine needs Java 17; everything else runs without it.
NEEDS_JAVA = __import__("pytest").mark.skipif(
    not _has_java(), reason="no Java on this machine: the Spark engine needs Java 17")
