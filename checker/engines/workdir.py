"""The run's work folder and the files in it, the same for every level source: the folder
itself (``WorkDir``: ``--workdir``, or a temporary folder, removed with everything in it at the
end), a file mapped shared (``WorkFile``: what the kernels write there is the file's, not the
process's; its disk blocks taken before its pages are written, its pages let go of once done
with), and a growing column that moves into such a file past the memory budget (``Column``).

The local engine appends its levels' buckets and parent records to files of the folder
(``spill.py``); the state graph keeps its level buffers (``graph/buffers.py``, ``WorkRows``)
and its columns (``Column``) in mapped files there. A full disk is ``NoRoom`` for both
(``no_room``): the search stops as out of memory, keeping what it found."""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from hwcheck.checker.engines.visited import RESERVE_FROM, physical_words, reserve
from hwcheck.checker.search.exploration import NoRoom

PREFIX = "hwcheck-work-"


class WorkDir:
    """A run's work folder: a new folder inside ``parent`` (``--workdir``), or a temporary
    folder; removed, with everything in it, by ``close``. Keeps the most it held at once.

    The folder's name holds the process's id (``hwcheck-work-PID-XXXX``). A run killed with
    SIGKILL cannot remove its folder, so each new one first removes, in the same parent, the
    folders of processes that no longer exist (``clear_orphans``)."""

    def __init__(self, parent: str | os.PathLike[str] | None = None) -> None:
        if parent is not None:
            Path(parent).mkdir(parents=True, exist_ok=True)
        where = Path(tempfile.gettempdir() if parent is None else parent)
        clear_orphans(where)
        self.path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=str(where)))
        self.bytes = 0  # what the files hold now
        self.peak_bytes = 0
        self._n = 0

    def new_file(self, stem: str) -> Path:
        self._n += 1
        return self.path / f"{stem}-{self._n}.bin"

    def wrote(self, nbytes: int) -> None:
        self.bytes += nbytes
        self.peak_bytes = max(self.peak_bytes, self.bytes)

    def remove(self, path: Path) -> None:
        try:
            size = path.stat().st_size
            path.unlink()
        except OSError:
            return
        self.bytes -= size

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def clear_orphans(parent: Path) -> list[Path]:
    """Remove the work folders in ``parent`` of processes that no longer exist (a run killed
    with SIGKILL leaves its folder); returns them. A folder of a live process, of a process
    this one may not signal (another user's), or one it cannot remove is left as it is."""
    gone: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return gone
    for folder in entries:
        pid = folder.name[len(PREFIX):].split("-", 1)[0]
        if not folder.name.startswith(PREFIX) or not pid.isdigit() or _alive(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            gone.append(folder)
    return gone


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, and belongs to someone else
        return True
    return True


def no_room(e: OSError, folder: Path) -> Exception:
    """``e`` as the search takes it: a disk with no room (or over its quota) is ``NoRoom``
    naming the folder (the search stops as out of memory), any other error itself."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return NoRoom(f"{folder}: {e.strerror}")
    return e


@contextmanager
def writing(folder: Path) -> Iterator[None]:
    """Files of ``folder`` written inside: a full disk is ``NoRoom`` (``no_room``)."""
    try:
        yield
    except OSError as e:
        raise no_room(e, folder) from None


class WorkFile:
    """``nbytes`` of a file in the run's work folder (``WorkDir``), mapped shared: the
    kernels read and write views of it (``array``) as any array, and what they wrote is the
    file's, not the process's. The system writes such pages to the file and frees them when it
    needs the memory (anonymous memory has nowhere to go without swap); the search lets go of
    the pages it is done with (``drop``: they stay in the file, read back if asked) and of
    contents it no longer needs (``discard``: cut from the file, never written out). The file is
    sparse, and the bytes the search will write are given their blocks first (``allocate``),
    so that a full disk is ``NoRoom`` there, not a SIGBUS where a page is first written. Its
    name leaves the folder as soon as it is mapped: the file lives while its descriptor is open
    (until ``close``, or until the ``WorkFile`` is collected) or a view of it is referenced, and
    a process killed with SIGKILL leaves none of it on the disk."""

    def __init__(self, work: WorkDir, stem: str, nbytes: int):
        self.path = work.new_file(stem)
        self.nbytes = max(nbytes, 1)
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(self.fd, self.nbytes)
            self.mm = mmap.mmap(self.fd, self.nbytes, flags=mmap.MAP_SHARED)
        except BaseException:
            os.close(self.fd)
            raise
        finally:
            os.unlink(self.path)
        self._close = weakref.finalize(self, os.close, self.fd)
        self.discarded = False
        self.base = int(np.frombuffer(self.mm, np.uint8, 1).__array_interface__["data"][0])

    def array(self, dtype: Any, count: int) -> np.ndarray:
        return np.frombuffer(self.mm, dtype, count)

    def holds(self, a: np.ndarray) -> bool:
        """Whether ``a`` is a view of this file."""
        at = int(a.__array_interface__["data"][0]) - self.base
        return a.size > 0 and 0 <= at < self.nbytes

    def drop(self, lo: int, hi: int) -> None:
        """Let go of the whole pages of bytes lo..hi-1."""
        page = mmap.PAGESIZE
        a = -(-lo // page) * page
        b = min(hi, self.nbytes) // page * page
        if b > a:
            self.mm.madvise(mmap.MADV_DONTNEED, a, b - a)

    def discard(self) -> None:
        """The contents are no longer needed: they go (the file reads as zeros again, its
        blocks given back until ``ready``)."""
        os.ftruncate(self.fd, 0)
        os.ftruncate(self.fd, self.nbytes)
        self.discarded = True

    def ready(self) -> None:
        """About to be written again: the blocks ``discard`` gave back taken anew."""
        if self.discarded:
            self.allocate(0, self.nbytes)
            self.discarded = False

    def allocate(self, lo: int, hi: int) -> None:
        """Blocks on the disk for bytes lo..hi-1 (``NoRoom`` where there are none)."""
        if hi <= lo:
            return
        try:
            os.posix_fallocate(self.fd, lo, min(hi, self.nbytes) - lo)
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # else: sparse, as it is
                raise no_room(e, self.path.parent) from None

    def held(self) -> int:
        """The bytes the disk holds for it."""
        return int(os.fstat(self.fd).st_blocks) * 512

    def close(self) -> None:
        """The descriptor goes (the views stay readable while referenced; the file with the
        last of them)."""
        self._close()


def grown(a: np.ndarray, cap: int, used: int) -> np.ndarray:
    """``a``'s first ``used`` entries in a new array of ``cap``."""
    new = np.empty((cap,) + a.shape[1:], a.dtype)
    new[:used] = a[:used]
    return new


class Column:
    """A growing array of one kind (``a``, of which the search uses a prefix): doubled by
    copying while small; past ``RESERVE_FROM`` entries, grown in place in an address range
    reserved for the machine's memory, its pages written once and never copied. With a work
    folder (``folder`` makes it when first asked), a column past ``budget`` bytes moves once
    into a range of the same size in a file there (``WorkFile``), and the entries the search is
    done writing (``settle``) are the file's, not the process's."""

    def __init__(self, dtype: Any, cap: int = 1024, folder: Callable[[], WorkDir] | None = None,
                 stem: str = "column", budget: Callable[[], int] | None = None):
        self.a = np.empty(cap, dtype)
        self.mem: np.ndarray | None = None
        self.folder, self.stem, self.budget = folder, stem, budget
        self.file: WorkFile | None = None

    def room(self, used: int, need: int) -> None:
        """At least ``need`` entries, the first ``used`` kept."""
        if need <= self.a.size:
            return
        cap = max(need, 2 * self.a.size)
        if self.file is None and self.folder is not None and self.budget is not None and \
                cap * self.a.itemsize > self.budget():
            self._to_file(self.folder, used)
        if self.mem is None and cap >= RESERVE_FROM:
            reserved = reserve(physical_words(), huge=False)  # written in order
            if reserved is not None:
                self.mem = reserved.view(self.a.dtype)
                self.mem[:used] = self.a[:used]
        if self.mem is not None and cap <= self.mem.size:
            if self.file is not None:  # the disk's blocks first (a full disk: ``NoRoom``)
                self.file.allocate(used * self.a.itemsize, cap * self.a.itemsize)
            self.a = self.mem[:cap]
        else:
            self.a = grown(self.a, cap, used)

    def _to_file(self, folder: Callable[[], WorkDir], used: int) -> None:
        """Move into a range of a file of the work folder (one the size of the machine's
        memory, sparse); where no such file can be made and mapped (an address space limit),
        the column stays in memory, as without a work folder."""
        try:
            f = WorkFile(folder(), self.stem, physical_words() * 8)
        except OSError:
            self.folder = None
            return
        try:
            f.allocate(0, used * self.a.itemsize)  # (a full disk: ``NoRoom``)
        except BaseException:
            f.close()
            raise
        mem = f.array(self.a.dtype, physical_words() * 8 // self.a.itemsize)
        mem[:used] = self.a[:used]
        self.file, self.mem = f, mem

    def settle(self, upto: int) -> None:
        """Entries ..upto-1 are written: in the work folder, their whole pages are let go of
        (read back from the file if asked)."""
        if self.file is not None:
            self.file.drop(0, upto * self.a.itemsize)

    def close(self) -> None:
        """Its file, if any, leaves the work folder (the entries stay readable)."""
        if self.file is not None:
            self.file.close()
