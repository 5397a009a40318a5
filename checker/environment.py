"""Faults of the machine rather than of the input: what a run needs and cannot have here (Java
for Spark, a Spark master that answers, a writable kernel cache). The command line reports
them in one line, exit 2, after a bounded wait."""


class EnvironmentFault(RuntimeError):
    """Something the run needs is missing or unreachable on this machine."""
