"""Domains past int8: a counter up to ``top`` (1,000 by default, an int16 cell; 100,000 an int32
one) and a flag; every pair is reachable, so a full search finds 2 * (top + 1) states."""

from hwcheck.spec.lang import Block, Spec


def build(top: int = 1000) -> Spec:
    spec = Spec("Wide", {"top": top})
    n = spec.scalar("n", 0, top, "the counter")
    flag = spec.scalar("flag", 0, 1, "a bit")
    spec.initial(lambda blk: None)

    @spec.action("Inc", modifies=[n])
    def inc(blk: Block) -> None:
        blk.require(n < top)
        blk.set(n, n + 1)

    @spec.action("Flip", modifies=[flag])
    def flip(blk: Block) -> None:
        blk.set(flag, 1 - flag)

    spec.invariant("Bounded", n <= top)
    spec.reachable("Top", n == top, "the counter reached the top")
    return spec
