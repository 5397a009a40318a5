"""How the machine serves what the workers do at once besides computing: N threads each
appending to its own files in a folder (the spill's writes), reading them back, and copying
between fresh or reused buffers in memory, for N = 1, 2, 4, ... (``--threads``). Prints the
aggregate GB/s of each: a rate that stops growing with the threads is a part of the machine
(its kernel, a sandbox's file system) that the workers wait for in turn.

``python bench/probe_io.py --dir /tmp --mb 256 --threads 1 4 16``
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

CHUNK = 128 << 10  # one write: the spill's buffer


def _write(path: str, data: np.ndarray, files: int) -> None:
    fs = [open(f"{path}-{i}", "ab", buffering=0) for i in range(files)]  # noqa: SIM115
    try:
        view = data.data
        for k, at in enumerate(range(0, data.size, CHUNK)):
            fs[k % files].write(view[at:at + CHUNK])
    finally:
        for f in fs:
            f.close()


def _read(path: str, files: int) -> int:
    return sum(np.fromfile(f"{path}-{i}", np.uint8).size for i in range(files))


def _copy(data: np.ndarray, reuse: np.ndarray | None) -> None:
    for _ in range(4):
        out = reuse if reuse is not None else np.empty_like(data)
        np.copyto(out, data)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=None, help="the folder written to (a temporary one in it)")
    ap.add_argument("--mb", type=int, default=256, help="MiB each thread writes")
    ap.add_argument("--files", type=int, default=16, help="files each thread appends to")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    a = ap.parse_args()
    for n in a.threads:
        datas = [np.random.default_rng(t).integers(0, 255, a.mb << 20, dtype=np.uint8)
                 for t in range(n)]
        total = n * (a.mb << 20)
        with tempfile.TemporaryDirectory(dir=a.dir) as d, ThreadPoolExecutor(n) as pool:
            paths = [os.path.join(d, f"t{t}") for t in range(n)]
            t0 = time.perf_counter()
            list(pool.map(_write, paths, datas, [a.files] * n))
            w = time.perf_counter() - t0
            t0 = time.perf_counter()
            assert sum(pool.map(_read, paths, [a.files] * n)) == total
            r = time.perf_counter() - t0
            t0 = time.perf_counter()
            list(pool.map(_copy, datas, [None] * n))
            fresh = time.perf_counter() - t0
            reuse = [np.empty_like(x) for x in datas]
            list(pool.map(_copy, datas, reuse))  # touched once
            t0 = time.perf_counter()
            list(pool.map(_copy, datas, reuse))
            kept = time.perf_counter() - t0
        gb = total / 1e9
        print(f"{n:3d} threads: write {gb / w:6.2f} GB/s, read {gb / r:6.2f} GB/s, copy into "
              f"fresh memory {4 * gb / fresh:6.2f} GB/s, into reused memory "
              f"{4 * gb / kept:6.2f} GB/s", flush=True)


if __name__ == "__main__":
    main()
