"""Run-time pieces of the compiled kernel: the state fingerprint and the visited-set table.

Both are numba functions over plain numpy arrays, so the local engine, the Spark executors and
the trace tools compute the same 64-bit fingerprint in every process.

Fingerprint: the state row (its cells padded to a multiple of 8 bytes) read as little-endian
64-bit words; each word hashed with its position (``word_term``: SplitMix64's finalizer of the
word plus the position's multiple of the golden ratio), the terms added modulo 2^64
(``fingerprint_sum``), the sum finished with murmur3's fmix64 (``fingerprint_of_sum``). A sum
composes: a successor that differs from its parent in a few words has the parent's sum with
those words' terms replaced, so the kernels fingerprint a successor in the time of the words its
action writes (decision record 0021). 0 is reserved for "empty slot", so a digest of 0 becomes 1.

Visited table (``table_*``): ordered linear probing over a uint64 array of any capacity, see
``table_insert``; 0 marks a free slot. The exact table (``--exact``) keeps plain linear probing
over a power-of-two array, with the position of each slot's state beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# The arrays the functions take (numba compiles them for the dtypes they are called with; the
# annotations say what the callers give, numba reads none of them)
U64: TypeAlias = np.uint64
Words: TypeAlias = npt.NDArray[np.uint64]  # a row as 64-bit words, a table, fingerprints
Ints: TypeAlias = npt.NDArray[np.int64]  # parents, positions, counts, table_refs
Cells: TypeAlias = npt.NDArray[Any]  # state rows: the layout's cell dtype
# numba's compiler objects in an intrinsic (typing context, types, LLVM builder): untyped
Numba: TypeAlias = Any
# an index or a count: a Python int, or a numpy one inside the compiled functions
Int: TypeAlias = int | np.int64

C1: U64 = np.uint64(0x87C37B91114253D5)
C2: U64 = np.uint64(0x4CF5AD432745937F)
F1: U64 = np.uint64(0xFF51AFD7ED558CCD)
F2: U64 = np.uint64(0xC4CEB9FE1A85EC53)
SEED: U64 = np.uint64(0x9E3779B97F4A7C15)
U31: U64 = np.uint64(31)
U33: U64 = np.uint64(33)
U27: U64 = np.uint64(27)


@njit(cache=True, inline="always")
def _fmix64(k: U64) -> U64:
    k ^= k >> U33
    k *= F1
    k ^= k >> U33
    k *= F2
    k ^= k >> U33
    return k


@njit(cache=True)
def fingerprint(row: Cells) -> U64:
    """The 64-bit fingerprint of one state row (length in bytes a multiple of 8)."""
    return fingerprint_words(row.view(np.uint64))


M1: U64 = np.uint64(0xBF58476D1CE4E5B9)  # SplitMix64's finalizer (Stafford's Mix13)
M2: U64 = np.uint64(0x94D049BB133111EB)
U30: U64 = np.uint64(30)


@njit(cache=True, inline="always")
def word_term(q: int, x: U64) -> U64:
    """Word ``x`` at position ``q`` of a row: its term of the fingerprint's sum."""
    z: U64 = x + (np.uint64(q) + np.uint64(1)) * SEED
    z = (z ^ (z >> U30)) * M1
    z = (z ^ (z >> U27)) * M2
    term: U64 = z ^ (z >> U31)
    return term


@njit(cache=True, inline="always")
def fingerprint_sum(words: Words) -> U64:
    """The sum (modulo 2^64) of a row's word terms, its length's first: what
    ``fingerprint_of_sum`` finishes. A successor's sum is its parent's with the terms of the
    words that differ replaced."""
    h: U64 = np.uint64(words.size) * C1
    for q in range(words.size):
        h += word_term(q, words[q])
    return h


@njit(cache=True, inline="always")
def fingerprint_sum_masked(words: Words, mask: Words) -> U64:
    """``fingerprint_sum`` of the words ``words & mask`` (a VIEW's cells: ``Layout.view_mask``)."""
    h: U64 = np.uint64(words.size) * C1
    for q in range(words.size):
        h += word_term(q, words[q] & mask[q])
    return h


@njit(cache=True, inline="always")
def fingerprint_of_sum(h: U64) -> U64:
    """The fingerprint of a row whose ``fingerprint_sum`` is ``h``."""
    h = _fmix64(h ^ C2)
    if h == np.uint64(0):
        h = np.uint64(1)
    return h


@njit(cache=True, inline="always")
def fingerprint_words(words: Words) -> U64:
    """``fingerprint`` of a row given as its 64-bit words. The kernels keep their scratch row
    as words and call this: a ``view`` per successor costs several times the hash."""
    return fingerprint_of_sum(fingerprint_sum(words))


U32: U64 = np.uint64(32)
# Slots after the last home slot: a run of occupied slots may go on into them (the table never
# wraps around), so a table of capacity ``cap`` is an array of ``cap + TAIL`` slots.
TAIL = 1 << 17  # more than any spec's action instances (at most 2^16)
GROW_BLOCK = 1 << 12  # slots a block in ``table_grow``


@njit(cache=True, inline="always")
def _key(fp: U64) -> U64:
    # what a slot holds: the fingerprint with its halves swapped, so that the order of keys
    # follows their home slots (taken from the low half; the high half picks the partition)
    key: U64 = (fp << U32) | (fp >> U32)
    return key


@njit(cache=True, inline="always")
def _home(key: U64, cap: int) -> np.int64:
    home: np.int64 = np.int64(((key >> U32) * np.uint64(cap)) >> U32)
    return home


@intrinsic
def _prefetch(typingctx: Numba, arr: Numba, index: Numba) -> tuple[Numba, Callable[..., Numba]]:
    """LLVM's prefetch (for a write, kept in every cache level) of ``arr[index]``."""
    sig = types.void(arr, index)

    def codegen(context: Numba, builder: Numba, signature: Numba, args: Sequence[Numba]) -> Numba:
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 1), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, inline="always")
def table_prefetch(table: Words, cap: int, fp: U64) -> None:
    """Start loading ``fp``'s home slot into the cache (an insert soon after finds it there)."""
    _prefetch(table, _home(_key(fp), cap))  # type: ignore[call-arg]  # a numba intrinsic:
    # its typing context argument is numba's to give


@njit(cache=True)
def table_insert(table: Words, cap: int, fp: U64) -> bool:
    """Insert ``fp`` into a table of capacity ``cap``; True if it was not there yet.

    Ordered linear probing: the keys are in increasing order through the whole table, each at
    or after its home slot with no free slot in between. A lookup stops at the first key not
    below its own (so a miss costs as few probes as a hit); an insert shifts the rest of the
    run up by one slot. The caller keeps the last ``NINST + 1`` slots free (see ``codegen``)."""
    key = _key(fp)
    i = _home(key, cap)
    while True:
        v = table[i]
        if v == key:
            return False
        if v == np.uint64(0):
            table[i] = key
            return True
        if v > key:  # key goes here; the rest of the run moves up a slot, in one pass
            table[i] = key
            while v != np.uint64(0):
                i += 1
                v, table[i] = table[i], v
            return True
        i += 1


PREFETCH = 16  # inserts ahead whose home slot is being loaded


@njit(cache=True, inline="always")
def table_contains(table: Words, cap: int, fp: U64) -> bool:
    """Whether ``fp`` is in the table (a lookup only: it stops at the first key not below)."""
    key = _key(fp)
    i = _home(key, cap)
    while True:
        v = table[i]
        if v >= key or v == np.uint64(0):
            found: bool = v == key
            return found
        i += 1


@njit(cache=True)
def table_insert_batch(table: Words, cap: int, rows: Cells, par: Ints, act: Ints, fps: Words,
                       w: int, q: int) -> int:
    """Insert the candidates ``w..q-1`` (rows with parent, action, fingerprint) in order; the
    new ones are moved down to ``w``, ``w+1``, ... Returns the end of the new ones. The home
    slots of the next ``PREFETCH`` candidates are loaded while one is inserted, so a level's
    inserts wait on memory together rather than one after the other."""
    for k in range(w, min(q, w + PREFETCH)):
        table_prefetch(table, cap, fps[k])
    n = w
    for k in range(w, q):
        if k + PREFETCH < q:
            table_prefetch(table, cap, fps[k + PREFETCH])
        fp = fps[k]
        if table_insert(table, cap, fp):
            if n != k:
                for c in range(rows.shape[1]):
                    rows[n, c] = rows[k, c]
                par[n] = par[k]
                act[n] = act[k]
                fps[n] = fp
            n += 1
    return n


@njit(cache=True, inline="always")
def owner_of(fp: U64, parts: int) -> np.int64:
    """The partition (0..parts-1) that owns ``fp``, by its high 32 bits: ``partition.owners``
    for one fingerprint."""
    owner: np.int64 = np.int64(((fp >> U32) * np.uint64(parts)) >> U32)
    return owner


@intrinsic
def _uint64_at(typingctx: Numba, address: Numba) -> tuple[Numba, Callable[..., Numba]]:
    """The pointer to a uint64 at the integer ``address``."""
    sig = types.CPointer(types.uint64)(address)

    def codegen(context: Numba, builder: Numba, signature: Numba, args: Sequence[Numba]) -> Numba:
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


def table_refs(tables: Sequence[Words]) -> Ints:
    """The owners' tables (uint64 arrays) as the several-worker split takes them, one shape
    for any number of owners: int64 [owners, 2], each table's (address, slots). The caller
    keeps the arrays alive while a kernel reads them."""
    return np.array([(t.ctypes.data, t.size) for t in tables], np.int64).reshape(-1, 2)


@njit(cache=True, inline="always")
def table_of(tables: Ints, o: Int) -> Words:
    """Owner o's table of ``table_refs``, as an array (a view: it owns nothing)."""
    return carray(_uint64_at(tables[o, 0]), (tables[o, 1],))  # type: ignore[call-arg]


@njit(cache=True, inline="always")
def owners_room(o_fps: Words, o_n: Ints, room: int) -> bool:
    """True if every owner's buffer (a row of ``o_fps``) has ``room`` free entries after its
    first ``o_n[o]``."""
    for o in range(o_n.size):
        if o_fps.shape[1] - o_n[o] < room:
            return False
    return True


@njit(cache=True, inline="always")
def table_split_batch(tables: Ints, rows: Words, par: Ints, act: Ints, fps: Words, q: int,
                      o_rows: Words, o_par: Ints, o_act: Ints, o_fps: Words, o_n: Ints) -> None:
    """Route the candidates ``0..q-1`` (rows as 64-bit words, with parent, action and
    fingerprint) to their owners: each that its owner's table (``table_of(tables, o)``) does
    not hold is appended to owner o's buffers (``o_rows[o]``, ``o_par[o]``, ...) at
    ``o_n[o]``, in order. A lookup only, while the owners may be inserting into their tables:
    a key is never removed and a slot only ever holds a key of the set, so a key found was seen
    before; one missed while a run is being shifted is left for its owner's insert, which drops
    it then. The home slots of the next ``PREFETCH`` candidates are loaded while one is looked
    up. The owners are the rows of ``tables`` and of the buffers, so one compiled function
    serves any number of them."""
    parts = tables.shape[0]
    for k in range(min(q, PREFETCH)):
        t = table_of(tables, owner_of(fps[k], parts))
        table_prefetch(t, t.size - TAIL, fps[k])
    words = rows.shape[1]
    for k in range(q):
        if k + PREFETCH < q:
            f2 = fps[k + PREFETCH]
            t2 = table_of(tables, owner_of(f2, parts))
            table_prefetch(t2, t2.size - TAIL, f2)
        fp = fps[k]
        o = owner_of(fp, parts)
        t = table_of(tables, o)
        if table_contains(t, t.size - TAIL, fp):
            continue
        w = o_n[o]
        for c in range(words):
            o_rows[o, w, c] = rows[k, c]
        o_par[o, w] = par[k]
        o_act[o, w] = act[k]
        o_fps[o, w] = fp
        o_n[o] = w + 1


@njit(cache=True, nogil=True)
def table_grow(table: Words, old_cap: int, new_cap: int) -> bool:
    """Re-lay a table of capacity ``old_cap`` as one of capacity ``new_cap`` (larger) in place:
    ``table`` is the larger array, the old layout in its first ``old_cap + TAIL`` slots and
    zeros after. Every key moves up (its new home is not below its old one): a forward pass
    finds, block by block, where the first key of each block goes; then the blocks are moved
    from the last to the first, each key from its last to its first. Returns False if the keys
    do not fit (then nothing was moved)."""
    old_end = old_cap + TAIL
    nb = (old_end + GROW_BLOCK - 1) // GROW_BLOCK
    carry = np.empty(nb, np.int64)
    last = np.int64(-1)
    for b in range(nb):
        carry[b] = last
        for i in range(b * GROW_BLOCK, min(old_end, (b + 1) * GROW_BLOCK)):
            v = table[i]
            if v != np.uint64(0):
                last = max(_home(v, new_cap), last + 1)
    if last >= table.size - 1:
        return False
    pos = np.empty(GROW_BLOCK, np.int64)
    for b in range(nb - 1, -1, -1):
        lo = b * GROW_BLOCK
        hi = min(old_end, lo + GROW_BLOCK)
        last = carry[b]
        for i in range(lo, hi):
            v = table[i]
            if v != np.uint64(0):
                last = max(_home(v, new_cap), last + 1)
                pos[i - lo] = last
        for i in range(hi - 1, lo - 1, -1):
            v = table[i]
            if v != np.uint64(0):
                table[i] = np.uint64(0)
                table[pos[i - lo]] = v
    return True


@njit(cache=True, nogil=True)
def table_fill(table: Words, cap: int, fps: Words) -> bool:
    """Lay the distinct fingerprints ``fps`` (any order, no zero) into the empty ``table`` of
    capacity ``cap``. Returns False if they do not fit."""
    keys = np.empty(fps.size, np.uint64)
    for k in range(fps.size):
        keys[k] = _key(fps[k])
    keys.sort()
    last = np.int64(-1)
    for k in range(keys.size):
        last = max(_home(keys[k], cap), last + 1)
        if last >= table.size - 1:
            return False
        table[last] = keys[k]
    return True


@njit(cache=True, nogil=True)
def table_room(table: Words, more: int) -> bool:
    """True if ``more`` inserts cannot reach the table's last slot: the runs end before the
    last ``more + 1`` slots (a run is contiguous, so these are all free)."""
    for i in range(max(0, table.size - 1 - more), table.size):
        if table[i] != np.uint64(0):
            return False
    return True


@njit(cache=True, nogil=True)
def table_fingerprints(table: Words, n: int) -> Words:
    """The ``n`` fingerprints a table holds, in table order."""
    out = np.empty(n, np.uint64)
    w = 0
    for i in range(table.size):
        v = table[i]
        if v != np.uint64(0):
            out[w] = _key(v)  # swapping the halves back
            w += 1
    return out[:w]


@njit(cache=True)
def table_insert_exact(table: Words, slots: Ints, mask: int, fp: U64, row: Cells, store: Cells,
                       n: int) -> bool:
    """Insert the state ``row`` (fingerprint ``fp``) into an exact table: a slot holds a
    fingerprint and the position of its state in ``store``; a fingerprint already there counts
    as this state only if the stored state is this row, cell for cell. True if it is new (it
    then gets position ``n``; the caller copies the row to ``store[n]``)."""
    i = np.int64(fp & np.uint64(mask))
    while True:
        v = table[i]
        if v == np.uint64(0):
            table[i] = fp
            slots[i] = n
            return True
        if v == fp:
            j = slots[i]
            same = True
            for q in range(row.size):
                if store[j, q] != row[q]:
                    same = False
                    break
            if same:
                return False
        i = (i + 1) & mask


@njit(cache=True)
def table_rehash_exact(old: Words, old_slots: Ints, new: Words, new_slots: Ints) -> None:
    """Move every entry of an exact table into the empty, larger ``new``/``new_slots``."""
    mask = new.size - 1
    for i in range(old.size):
        v = old[i]
        if v != np.uint64(0):
            k = np.int64(v & np.uint64(mask))
            while new[k] != np.uint64(0):
                k = (k + 1) & mask
            new[k] = v
            new_slots[k] = old_slots[i]
