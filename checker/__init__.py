"""hwcheck's checker: how the spec is explored (compiled BFS, Z3, Spark) and reported."""

import os
from pathlib import Path

# numba keeps compiled kernels on disk; point its cache somewhere persistent and writable
# before numba is first imported (an installed package's own folder may not be writable).
_cache = Path(os.environ.get("HWCHECK_CACHE") or Path.home() / ".cache" / "hwcheck")
os.environ.setdefault("NUMBA_CACHE_DIR", str(_cache / "numba"))
