"""Writing traces to disk: every file goes to a temporary name in its folder and is renamed
into place, so a reader never sees half a file and a failed write leaves nothing behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hwcheck.checker.traces import html, itf, text
from hwcheck.checker.traces.trace import Trace


def write_atomic(path: Path, data: str) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
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


def write_trace(spec, trace: Trace, folder: Path, text_body: str | None = None) -> list[Path]:
    """Write ``<folder>/<Property>.itf.json``, ``.txt`` and ``.html``; returns the paths.
    ``text_body`` replaces the text rendering (a counterexample to induction has its own)."""
    folder = Path(folder)
    name = trace.property
    return [write_atomic(folder / f"{name}.itf.json", itf.dumps(spec, trace)),
            write_atomic(folder / f"{name}.txt", text_body if text_body is not None
                         else text.text(trace)),
            write_atomic(folder / f"{name}.html",
                         html.page(trace, html.describe(spec, name)))]
