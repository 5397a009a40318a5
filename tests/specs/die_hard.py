"""The Die Hard jugs puzzle (TLA+'s DieHard.tla), written in hwcheck's spec language.

Two jugs of ``big`` and ``small`` gallons and a tap: fill a jug, empty it, or pour one into the
other until the one is empty or the other full. The invariant ``NotSolved`` says the big jug
never holds ``goal`` gallons; its shortest violation is the puzzle's shortest solution (6 steps
for 5, 3 and 4). The module exposes ``build`` rather than a ``Protocol``: hwcheck makes its
keyword arguments the parameters.
"""

from hwcheck.spec.lang import Block, Spec, min_


def build(big: int = 5, small: int = 3, goal: int = 4) -> Spec:
    spec = Spec("DieHard", {"big": big, "small": small, "goal": goal})
    b_ = spec.scalar("big", 0, big, "gallons in the big jug")
    s_ = spec.scalar("small", 0, small, "gallons in the small jug")
    spec.initial(lambda b: None)       # no statements: every variable starts at 0

    @spec.action("FillSmall", modifies=[s_])
    def fill_small(b: Block) -> None:
        b.set(s_, small)

    @spec.action("FillBig", modifies=[b_])
    def fill_big(b: Block) -> None:
        b.set(b_, big)

    @spec.action("EmptySmall", modifies=[s_])
    def empty_small(b: Block) -> None:
        b.set(s_, 0)

    @spec.action("EmptyBig", modifies=[b_])
    def empty_big(b: Block) -> None:
        b.set(b_, 0)

    @spec.action("SmallToBig", modifies=[b_, s_])
    def small_to_big(b: Block) -> None:
        poured = b.let("poured", min_(s_, big - b_))
        b.set(b_, b_ + poured)
        b.set(s_, s_ - poured)

    @spec.action("BigToSmall", modifies=[b_, s_])
    def big_to_small(b: Block) -> None:
        poured = b.let("poured", min_(b_, small - s_))
        b.set(b_, b_ - poured)
        b.set(s_, s_ + poured)

    spec.invariant("TypeOK", (b_ >= 0) & (b_ <= big) & (s_ >= 0) & (s_ <= small),
                   "both jugs hold what fits")
    spec.invariant("NotSolved", b_ != goal, f"the big jug never holds {goal} gallons")
    spec.reachable("BothFull", (b_ == big) & (s_ == small), "both jugs full")
    return spec
