"""``python -m checker``: the hwcheck command line."""

from checker.cli import run

run()
