"""hwcheck's checker: how the spec is explored (compiled BFS, Z3, Spark) and reported."""

import os
from pathlib import Path

# numba keeps compiled kernels on disk; point its cache somewhere persistent and writable
# before numba is first imported (an installed package's own folder may not be writable).
_cache = Path(os.environ.get("HWCHECK_CACHE") or Path.home() / ".cache" / "hwcheck")
os.environ.setdefault("NUMBA_CACHE_DIR", str(_cache / "numba"))
# hwcheck does no linear algebra, and OpenBLAS's own threads (numpy's and scipy's) spin after a
# call, taking cores from the search's workers (0.4 s of CPU in a 5-s two-worker run); before
# numpy is first imported
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
