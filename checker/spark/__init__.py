"""The Spark engine: the partitioned BFS of ``checker.levels`` with its partitions in Spark."""
