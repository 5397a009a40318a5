"""The Spark engine: the partitioned BFS of ``checker.engines.partitioned`` with its partitions in
Spark."""
