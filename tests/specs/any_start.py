"""Several initial states: nodes start with any values that are not all equal (a test protocol,
with its TLA+ twin ``tla/AnyStart.tla``).

``nodes`` nodes each hold a value in 0..``values``-1. Init chooses every value and two nodes
whose values differ (each such pair is a choice, as TLC counts an existential's witnesses); it
also chooses a ``spare`` value that no variable keeps, so each initial state is chosen again and
again (TLA+'s ``\\E z \\in 0..spare-1 : TRUE``). Copy(i, j) gives node j node i's value; Inc(i)
raises a value while the budget of ``incs`` lasts (with ``live``: weakly fair, each node's
apart, and the liveness property ``BudgetSpent``).

What the tests need from it: ``NotAllEqual`` is violated one step from some initial states;
``NoMax`` is violated in an initial state that is not the first one (the trace must start from
it); ``BudgetSpent`` (liveness) fails by a lasso from an initial state; the nodes are
interchangeable (a declared symmetry), so initial states fall into orbits.
"""

from hwcheck.spec.lang import Block, Spec, forall
from hwcheck.spec.protocol import Checking, Param, Protocol, Symmetry


def build(nodes: int = 3, values: int = 3, incs: int = 2, spare: int = 2,
          live: bool = False) -> Spec:
    n, m = nodes, values
    spec = Spec("AnyStart", {"nodes": n, "values": m, "incs": incs, "spare": spare, "live": live})
    v = spec.array("v", (n,), 0, m - 1, "each node's value")
    budget = spec.scalar("budget", 0, incs, "the increments made")

    def init(b: Block) -> None:
        picks = [b.choose(m) for _ in range(n)]  # v \in [Nodes -> 0..M-1]
        i, j = b.choose(n), b.choose(n)  # \E i, j \in Nodes : v[i] # v[j]
        b.choose(spare)  # \E z \in 0..Spare-1 : TRUE: chosen, and kept nowhere
        for k, p in enumerate(picks):
            b.set(v[k], p)
        b.require(v[i] != v[j])  # after the effect: a condition on the state built

    spec.initial(init)

    @spec.action("Copy", over=[n, n], modifies=[v])
    def copy(b: Block, i, j) -> None:
        b.require(i != j, v[i] != v[j])
        b.set(v[j], v[i])

    @spec.action("Inc", over=[n], modifies=[v, budget], fairness="weak" if live else None)
    def inc(b: Block, i) -> None:
        b.require(budget < incs, v[i] < m - 1)
        b.set(v[i], v[i] + 1)
        b.set(budget, budget + 1)

    spec.invariant("NotAllEqual", ~forall(n, lambda i: v[i] == v[0], "i"),
                   "some two nodes hold different values")
    spec.invariant("NoMax", forall(n, lambda i: v[i] != m - 1, "i"),
                   "no node holds the largest value")
    spec.invariant("BudgetKept", budget <= incs, "the increments stay within the budget")
    if live:
        spec.always_eventually("BudgetSpent", budget == incs,
                               "the budget is spent (false: the values can all reach the "
                               "largest first)")
    return spec


PROTOCOL = Protocol(
    name="any-start",
    params=(Param("nodes", 3, range(2, 6), "nodes"),
            Param("values", 3, range(2, 5), "values a node may hold"),
            Param("incs", 2, range(0, 4), "increments allowed in all"),
            Param("spare", 2, range(1, 4), "times each initial state is chosen"),
            Param("live", False, bool, "Inc weakly fair and the liveness property")),
    builder=build,
    doc="Nodes start with any values not all equal: a test protocol with several initial states.",
    checking=Checking(symmetry=lambda spec: Symmetry(size=spec.params["nodes"], dims={"v": (0,)},
                                                     ids=(), other=("budget",), params="node")),
)
