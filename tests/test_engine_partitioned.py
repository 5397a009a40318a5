"""The shared engine contract, run against the partitioned engine with every partition in this
process: the Spark engine's algorithm without a JVM."""

from engine_contract import (
    FAST_PROTOCOL,
    FAST_ROW,
    EngineContract,
    model_table_test,
    protocol_max_states_test,
    protocol_table_test,
)


class TestPartitionedEngine(EngineContract):
    engine = "partitioned"
    engine_opts = {"parts": 2}  # two owners: the expansion the fast tier compiles once (three and
    # four partitions: tests/test_partition.py, tests/test_part_matrix.py)
    test_model_table = model_table_test(FAST_ROW)
    test_protocol_table = protocol_table_test(FAST_PROTOCOL)
    test_protocol_max_states_gives_unknown = protocol_max_states_test(fast=False)
