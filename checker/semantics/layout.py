"""The state layout: a state is a flat row of small integers, one cell per variable element.

Variables sit in declaration order, each array row-major. The cell type is the narrowest of
int8, int16 and int32 that holds every variable's domain (the Kafka model's rows are int8).
Rows are padded with zeros to a multiple of 8 bytes (``stride`` cells) so the fingerprint can
read them as 64-bit words.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from hwcheck.spec.lang import BOOL, Spec, SpecError, Var


@dataclass(frozen=True)
class Layout:
    spec: Spec
    offsets: dict[str, int]
    width: int
    stride: int
    dtype: type = np.int8

    @classmethod
    def of(cls, spec: Spec) -> Layout:
        offsets, off = {}, 0
        lo = min((v.lo for v in spec.variables), default=0)
        hi = max((v.hi for v in spec.variables), default=0)
        dtype = next((t for t in CELL_TYPES if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max),
                     None)
        if dtype is None:
            wide = next(v for v in spec.variables if v.lo < -2**31 or v.hi >= 2**31)
            raise SpecError(f"variable {wide.name}: domain {wide.lo}..{wide.hi} does not fit in "
                            "int32")
        for v in spec.variables:
            offsets[v.name] = off
            off += v.size
        per_word = 8 // np.dtype(dtype).itemsize  # cells per 64-bit word
        stride = max(per_word, (off + per_word - 1) // per_word * per_word)
        return cls(spec, offsets, off, stride, dtype)

    @cached_property
    def view_mask(self) -> np.ndarray | None:
        """Under a VIEW (``Spec.view``): the row's 64-bit words with every bit of the cells the
        view covers set and those of the other cells clear, so ``words & mask`` is what a
        fingerprint reads. None without a view."""
        if self.spec.view is None:
            return None
        cells: np.ndarray = np.zeros(self.stride, self.dtype)
        for v in self.spec.variables:
            if v.name in self.spec.view:
                off = self.offsets[v.name]
                cells[off:off + v.size] = -1  # all bits set
        mask: np.ndarray = cells.view(np.uint64).copy()
        return mask

    def identity(self, row: np.ndarray) -> np.ndarray:
        """What a state's fingerprint reads: the row, its cells outside a VIEW cleared."""
        mask = self.view_mask
        row = np.ascontiguousarray(row, dtype=self.dtype)
        if mask is None:
            return row
        cleared: np.ndarray = (row.view(np.uint64) & mask).view(self.dtype)
        return cleared

    def cell(self, var: Var, idx: tuple[int, ...]) -> int:
        """The row position of ``var[idx]``; raises IndexError outside the variable's shape."""
        pos = 0
        for i, d in zip(idx, var.shape):
            if not 0 <= i < d:
                raise IndexError(f"{var.name}{list(idx)} is outside its shape {list(var.shape)}")
            pos = pos * d + i
        return self.offsets[var.name] + pos

    def empty(self, n: int = 0) -> np.ndarray:
        return np.zeros((n, self.stride), dtype=self.dtype) if n else \
            np.zeros(self.stride, self.dtype)

    # -- readable forms ------------------------------------------------------------------------

    def to_dict(self, row: np.ndarray) -> dict[str, Any]:
        """Variables by name: ints for scalars, nested lists for maps, sorted lists for sets."""
        out: dict[str, object] = {}
        for v in self.spec.variables:
            off = self.offsets[v.name]
            flat = [int(x) for x in row[off:off + v.size]]
            if v.kind == "scalar":
                out[v.name] = flat[0]
            elif v.kind == "set":
                out[v.name] = [i for i, x in enumerate(flat) if x]
            else:
                out[v.name] = _nest(flat, v.shape)
        return out

    def from_dict(self, values: dict[str, Any]) -> np.ndarray:
        row = self.empty()
        missing = [v.name for v in self.spec.variables if v.name not in values]
        if missing:
            raise SpecError(f"state lacks variable(s) {', '.join(missing)}")
        for v in self.spec.variables:
            val = values[v.name]
            off = self.offsets[v.name]
            if v.kind == "scalar":
                flat = [val]
            elif v.kind == "set":
                members = set(val)
                if not members <= set(range(v.shape[0])):
                    raise SpecError(f"{v.name}: members {sorted(members)} outside "
                                    f"0..{v.shape[0] - 1}")
                flat = [1 if i in members else 0 for i in range(v.shape[0])]
            else:
                flat = _flatten(val, v.shape, v.name)
            for i, x in enumerate(flat):
                x = int(x) if v.sort != BOOL else int(bool(x))
                if not v.lo <= x <= v.hi:
                    raise SpecError(f"{v.name}: value {x} outside its domain {v.lo}..{v.hi}")
                row[off + i] = x
        return row


CELL_TYPES = (np.int8, np.int16, np.int32)


def _nest(flat: list[int], shape: tuple[int, ...]) -> Any:
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _flatten(val: Any, shape: tuple[int, ...], name: str) -> list[int]:
    if not isinstance(val, (list, tuple)) or len(val) != shape[0]:
        raise SpecError(f"{name}: expected a list of {shape[0]}, got {val!r}")
    if len(shape) == 1:
        return list(val)
    out: list[int] = []
    for x in val:
        out.extend(_flatten(x, shape[1:], name))
    return out
