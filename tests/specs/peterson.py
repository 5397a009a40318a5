"""Peterson's mutual exclusion for two processes: a liveness test protocol.

Each process loops: it leaves its non-critical section when it wants to (``Try``: not fair, a
process need never want to), raises its flag, gives the other the turn (``GiveTurn``), waits
until the other's flag is down or the turn is its own (``Enter``), and leaves the critical
section (``Exit``). ``fairness`` applies to ``GiveTurn``, ``Enter`` and ``Exit``.

- ``Mutex`` (invariant): never both in the critical section;
- ``NoStarvation0`` and ``NoStarvation1``: a process that tries enters (``pc = 1 ~> pc = 3``).
  Violated without fairness (the stuttering lasso), holds with weak fairness.
- ``naive=True`` drops the turn (enter when the other's flag is down): both flags up, both
  wait forever, and starvation freedom fails even with strong fairness (a deadlock stutters).

The module exposes ``build``; hwcheck makes its keyword arguments the parameters.
"""

from hwcheck.spec.lang import Block, Spec

IDLE, FLAG, WAIT, CRIT = 0, 1, 2, 3  # pc: non-critical; flag raised; turn given; critical


def build(fairness: str = "weak", naive: bool = False) -> Spec:
    fair = {"none": None, "weak": "weak", "strong": "strong"}[fairness]
    spec = Spec("Peterson", {"fairness": fairness, "naive": naive})
    pc = spec.array("pc", (2,), IDLE, CRIT, "0 non-critical, 1 flag raised, 2 waiting, 3 critical")
    flag = spec.set_of("flag", 2, "processes whose flag is raised")
    turn = spec.scalar("turn", 0, 1, "whose turn it is to wait")
    spec.initial(lambda b: None)

    @spec.action("Try", over=[2], modifies=[pc, flag])
    def try_(b: Block, i) -> None:
        """Process i leaves its non-critical section and raises its flag."""
        b.require(pc[i] == IDLE)
        b.set(flag[i], True)
        b.set(pc[i], FLAG)

    @spec.action("GiveTurn", over=[2], modifies=[pc, turn], fairness=fair)
    def give_turn(b: Block, i) -> None:
        """Process i lets the other go first."""
        b.require(pc[i] == FLAG)
        if not naive:
            b.set(turn, 1 - i)
        b.set(pc[i], WAIT)

    @spec.action("Enter", over=[2], modifies=[pc], fairness=fair)
    def enter(b: Block, i) -> None:
        """Process i enters once the other is not interested or it is i's turn."""
        other = 1 - i
        if naive:
            b.require(pc[i] == WAIT, ~flag[other])
        else:
            b.require(pc[i] == WAIT, ~flag[other] | (turn == i))
        b.set(pc[i], CRIT)

    @spec.action("Exit", over=[2], modifies=[pc, flag], fairness=fair)
    def exit_(b: Block, i) -> None:
        """Process i leaves the critical section and lowers its flag."""
        b.require(pc[i] == CRIT)
        b.set(flag[i], False)
        b.set(pc[i], IDLE)

    spec.invariant("Mutex", ~((pc[0] == CRIT) & (pc[1] == CRIT)), "never both critical")
    for i in range(2):
        spec.leads_to(f"NoStarvation{i}", pc[i] == FLAG, pc[i] == CRIT,
                      f"process {i}, once it tries, enters its critical section")
    return spec
