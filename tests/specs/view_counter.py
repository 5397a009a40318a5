"""A VIEW test protocol: two counters and an auxiliary step count that the view leaves out.

``x`` counts modulo ``n``, ``y`` up to ``m`` and back to 0; ``steps`` counts the steps taken
(up to ``k``): an auxiliary variable of the kind a VIEW leaves out. With ``view=True`` states
are told apart by ``x`` and ``y`` alone. With ``peek=True`` the guard of ``IncY`` also reads
``steps`` (it stops at ``k``), which makes the view order-dependent: which state stands for a
view then decides what is enabled. ``target``: an invariant ``x != target`` to violate.
``tla/ViewCounter.tla`` is the same for TLC.
"""

from hwcheck.spec.lang import Block, Spec, ite


def build(n: int = 3, m: int = 2, k: int = 4, view: bool = True, peek: bool = False,
          target: int = -1) -> Spec:
    spec = Spec("ViewCounter", {"n": n, "m": m, "k": k, "view": view, "peek": peek,
                                "target": target})
    x = spec.scalar("x", 0, n - 1)
    y = spec.scalar("y", 0, m)
    steps = spec.scalar("steps", 0, k, "steps taken (auxiliary)")
    spec.initial(lambda b: None)

    def count(b: Block) -> None:
        b.set(steps, ite(steps < k, steps + 1, k))

    @spec.action("IncX", modifies=[x, steps])
    def inc_x(b: Block) -> None:
        b.set(x, (x + 1) % n)
        count(b)

    @spec.action("IncY", modifies=[y, steps])
    def inc_y(b: Block) -> None:
        b.require(y < m, *([steps < k] if peek else []))
        b.set(y, y + 1)
        count(b)

    @spec.action("ResetY", modifies=[y, steps])
    def reset_y(b: Block) -> None:
        b.require(y > 0)
        b.set(y, 0)
        count(b)

    spec.invariant("YBounded", y <= m)
    if target >= 0:  # a violation to trace: x reaches the target
        spec.invariant("XNotTarget", x != target)
    if view:
        spec.view_of(x, y)
    return spec
