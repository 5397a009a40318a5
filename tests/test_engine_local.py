"""The shared engine contract, run against the local compiled BFS."""

from engine_contract import EngineContract


class TestLocalEngine(EngineContract):
    engine = "local"
