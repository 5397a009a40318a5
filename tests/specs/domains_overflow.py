"""Deliberate domain errors: ``a`` (declared 0..top) is incremented with no guard, so the
spec leaves its declared domain after ``top`` increments; ``pick`` reads ``slot[i]`` with an
index that can step past the array. Every engine must report these as findings, never wrap.
"""

from hwcheck.spec.lang import Block, Spec


def build(top: int = 3, index_error: bool = False) -> Spec:
    spec = Spec("Overflow", {"top": top, "index_error": index_error})
    a = spec.scalar("a", 0, top)
    b = spec.scalar("b", 0, top)
    i = spec.scalar("i", 0, 3)
    slot = spec.array("slot", (2,), 0, 1)
    spec.initial(lambda blk: None)

    if index_error:
        @spec.action("Pick", modifies=[i, slot])
        def pick(blk: Block) -> None:
            blk.require(i < 3)
            blk.set(slot[i], 1)  # i = 2 is outside slot's shape 0..1
            blk.set(i, i + 1)

    @spec.action("IncA", modifies=[a])
    def inc_a(blk: Block) -> None:
        if index_error:
            blk.require(a < top)
        blk.set(a, a + 1)  # no guard (unless index_error): a leaves 0..top

    @spec.action("IncB", modifies=[b])
    def inc_b(blk: Block) -> None:
        blk.require(b < top)
        blk.set(b, b + 1)

    spec.invariant("Small", a + b < 2 * top + 1)
    return spec
