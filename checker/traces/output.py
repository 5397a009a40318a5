"""Writing traces and other named outputs to disk: a regular file goes to a temporary name in
its folder and is renamed into place, so a reader never sees half a file and a failed write
leaves nothing behind. What is not a regular file is never replaced: a device (``/dev/null``),
a FIFO or a symbolic link is opened and written in place, and ``-`` is standard output."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hwcheck.checker.traces import html, itf, text
from hwcheck.checker.traces.trace import Trace
from hwcheck.spec.lang import Spec

STDOUT = "-"  # as an output's name: standard output


def write_atomic(path: Path | str, data: str) -> Path:
    """Write ``data`` to ``path``: a new or regular file through a temporary file in the same
    folder and a rename; anything else that exists there (a device, a FIFO, a symbolic link:
    ``/dev/null``, ``/dev/stdout``) opened and written in place, never replaced; ``-`` to
    standard output."""
    if str(path) == STDOUT:
        sys.stdout.write(data)
        sys.stdout.flush()
        return Path(STDOUT)
    path = Path(path)
    try:
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        with open(path, "w", encoding="utf-8") as f:  # a device or a FIFO: written, not replaced
            f.write(data)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def write_trace(spec: Spec, trace: Trace, folder: Path, text_body: str | None = None,
                identity: dict[str, Any] | None = None) -> list[Path]:
    """Write ``<folder>/<Property>.itf.json``, ``.txt`` and ``.html``; returns the paths.
    ``text_body`` replaces the text rendering (a counterexample to induction has its own);
    ``identity`` is recorded in the folder's marker file (see ``prepare_run_folder``)."""
    folder = Path(folder)
    if identity is not None:
        write_trace_marker(folder, identity)
    name = file_name(trace.property or "")  # none claimed: "trace"
    return [write_atomic(folder / f"{name}.itf.json", itf.dumps(spec, trace)),
            write_atomic(folder / f"{name}.txt", text_body if text_body is not None
                         else text.text(trace)),
            write_atomic(folder / f"{name}.html",
                         html.page(trace, html.describe(spec, name)))]


def file_name(prop: str) -> str:
    """A property's name as a file name: ``DomainError(a, IncA)`` becomes
    ``DomainError-a-IncA``; plain names stay as they are."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", prop).strip("-") or "trace"


class OutputError(ValueError):
    """An output folder that cannot be used: said in one line, before anything is explored."""


MARKER = ".hwcheck-run.json"  # in each run folder: what wrote the traces there
TRACE_SUFFIXES = (".itf.json", ".txt", ".html")
MAX_RUN_NAME = 120


def check_run_name(run_name: str) -> str:
    """A run name is one folder name under --out: never a path that leaves it."""
    if not run_name or run_name in (".", "..") or "/" in run_name or "\\" in run_name \
            or "\0" in run_name or not run_name.isprintable():
        raise OutputError(f"--run-name must be a single folder name, got {run_name!r}")
    if len(run_name) > MAX_RUN_NAME:
        raise OutputError(f"--run-name is {len(run_name)} characters; at most {MAX_RUN_NAME}")
    return run_name


def prepare_run_folder(out: Path, run_name: str, identity: dict[str, Any]) -> Path:
    """``out/run_name``, checked before the exploration: the output folder can be written, and
    the run folder holds no traces of another configuration or command (``identity``: the
    protocol, its parameters and the command). The folder itself is made when the first trace
    is written (``write_trace`` with the identity, which it records in a marker file)."""
    check_run_name(run_name)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=out, prefix=".hwcheck-probe-", delete=True)
        probe.close()
    except OSError as e:
        raise OutputError(f"--out {out} cannot be written: {e.strerror or e}") from None
    folder = out / run_name
    marker = folder / MARKER
    if folder.is_dir() and marker.is_file():
        try:
            old = json.loads(marker.read_text())
        except (OSError, ValueError):
            old = None
        if old != identity:
            raise OutputError(f"{folder} holds traces of another configuration or command; give "
                              "another --run-name, or remove that folder")
    return folder


def write_trace_marker(folder: Path, identity: dict[str, Any]) -> Path:
    """Record in ``folder`` what wrote the traces under it (``prepare_run_folder`` reads it)."""
    return write_atomic(Path(folder) / MARKER, json.dumps(identity, sort_keys=True, indent=1)
                        + "\n")


def clear_stale(folder: Path, names: Iterable[str], written: Iterable[Path]) -> None:
    """Remove the trace files of properties ``names`` that this run did not write, so that the
    folder holds exactly the current traces (other files are left alone)."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    keep = {Path(p) for p in written}
    for name in names:
        for suffix in TRACE_SUFFIXES:
            f = folder / f"{file_name(name)}{suffix}"
            if f.exists() and f not in keep:
                f.unlink()
