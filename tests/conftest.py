import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hypothesis import settings  # noqa: E402

# No per-example time limit: the first example of a test may compile a numba function, and
# the tests share the machine's cores with other work; a slow example is not a failure.
settings.register_profile("hwcheck", deadline=None)
settings.load_profile("hwcheck")
