"""``python -m hwcheck.checker``: the hwcheck command line."""

from hwcheck.checker.cli.main import run

run()
