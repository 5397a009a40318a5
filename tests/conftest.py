import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hypothesis import settings  # noqa: E402

# No per-example time limit: the first example of a test may compile a numba function, and
# the tests share the machine's cores with other work; a slow example is not a failure.
settings.register_profile("hwcheck", deadline=None)
settings.load_profile("hwcheck")

# Under pytest-xdist every core already runs a test file: no compile helper processes beside
# them (they would compile again what the test's own process compiles). Inherited by the
# command lines the tests start; the test of the helper itself turns it back on.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("HWCHECK_COMPILE_HELPER", "0")


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_in_the_session(tmp_path_factory):
    """Every run a test starts, in the test's process or as a command line, makes its work
    folder under this session's temporary folder (``TMPDIR``), which pytest deletes a few
    sessions later: a run a test kills with SIGKILL cannot delete its own."""
    folder = str(tmp_path_factory.mktemp("tmp"))
    before = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    yield
    if before[0] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before[0]
    tempfile.tempdir = before[1]


# HWCHECK_TEST_KERNELS=FILE: after each test, append to FILE the kernel files it added to the
# cache (what it compiled first), to keep the fast tier's configurations few.
if os.environ.get("HWCHECK_TEST_KERNELS"):
    from hwcheck.checker import _cache

    def _kernel_files() -> set[str]:
        return {str(p.relative_to(_cache)) for d in ("kernels", "graph", "sim")
                if (_cache / d).is_dir()
                for p in (_cache / d).iterdir() if not p.name.endswith((".tmp", ".lock"))}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        before = _kernel_files()
        yield
        new = sorted(_kernel_files() - before)
        if new:
            with open(os.environ["HWCHECK_TEST_KERNELS"], "a") as f:
                f.write(f"{item.nodeid}\t{' '.join(new)}\n")
