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
