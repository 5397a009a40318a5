"""A small protocol that declares a member symmetry, for the symmetry tests (not a real protocol).

``members`` nodes each hold a value 0..1; a leader (an id, -1 = none) may step down keeping its
value (Drop), or hand over (Handoff: every other node's value becomes 1, its own 0); a node
that is not the leader may flip its value (Flip) while there is a leader; a new leader is
elected when there is none (Elect). Initially the last node leads and holds 1, so the initial
state is not its own representative.

What the tests need from it:

* With two members, Drop and Handoff from a leader holding 1 (the other 0) reach the same
  orbit, but only Handoff breaks the action property ``LeaderKeepsValue``: a trace rebuilt
  from representatives must end with Handoff, not with the first instance that reaches the
  orbit.
* ``AllOnes`` (an invariant) is violated by a path through several renamings.
* ``overflow``: Bump lets the leader raise its value past the domain (a DomainError).
* ``oob``: an action property that reads ``val[leader]`` in the next state with the next
  state's leader, -1 once the leader steps down (a DomainError of a transition property).
* ``links``: a member-by-member matrix (two member dimensions), so the canonical form is the
  least row over every permutation rather than a sort.
"""

from hwcheck.spec.lang import Block, Spec, forall, implies, ite, prime
from hwcheck.spec.protocol import Checking, Param, Protocol, Symmetry

NONE = -1


def build(members: int = 2, overflow: bool = False, links: bool = False,
          oob: bool = False) -> Spec:
    n = members
    spec = Spec("SymHandoff", {"members": n, "overflow": overflow, "links": links, "oob": oob})
    val = spec.array("val", (n,), 0, 1, "each node's value")
    leader = spec.scalar("leader", NONE, n - 1, "the leader; -1 = none")
    link = spec.array("link", (n, n), 0, 1, "link[a][b]: a saw b's value as 1") if links else None

    def init(b: Block) -> None:
        b.set(val[n - 1], 1)
        b.set(leader, n - 1)

    spec.initial(init)

    @spec.action("Elect", over=[n], modifies=[leader])
    def elect(b: Block, r) -> None:
        b.require(leader == NONE)
        b.set(leader, r)

    @spec.action("Drop", over=[n], modifies=[leader])
    def drop(b: Block, r) -> None:
        b.require(leader == r)
        b.set(leader, NONE)

    @spec.action("Handoff", over=[n], modifies=[val, leader])
    def handoff(b: Block, r) -> None:
        b.require(leader == r)
        with b.each(n, "q") as q:
            b.set(val[q], ite(q == r, 0, 1))
        b.set(leader, NONE)

    @spec.action("Flip", over=[n], modifies=[val])
    def flip(b: Block, r) -> None:
        b.require(leader != NONE, leader != r)
        b.set(val[r], ite(val[r] == 1, 0, 1))

    if overflow:
        @spec.action("Bump", over=[n], modifies=[val])
        def bump(b: Block, r) -> None:
            b.require(leader == r, val[r] == 1)
            b.set(val[r], val[r] + 1)

    if links:
        @spec.action("Look", over=[n], modifies=[link])
        def look(b: Block, r) -> None:
            b.require(leader == r)
            with b.each(n, "q") as q:
                b.set(link[r, q], val[q])

    spec.invariant("AllOnes", ~forall(n, lambda q: val[q] == 1, "q"),
                   "not every node holds 1")
    spec.action_property("LeaderKeepsValue", forall(n, lambda q: implies(
        leader == q, prime(val[q]) == val[q]), "q"), "the leader's value never changes")
    if oob:
        spec.action_property("NextLeaderValue", implies(leader != NONE, prime(val[leader]) >= 0),
                             "reads val at the next state's leader, which may be -1")
    return spec


def symmetry(spec: Spec) -> Symmetry:
    dims = {"val": (0,)}
    if spec.params["links"]:
        dims["link"] = (0, 1)
    return Symmetry(size=spec.params["members"], dims=dims, ids=("leader",), other=(),
                    params="member")


PROTOCOL = Protocol(
    name="sym-handoff",
    params=(Param("members", 2, range(1, 6), "nodes"),
            Param("overflow", False, bool, "Bump leaves the value's domain"),
            Param("links", False, bool, "a member-by-member matrix"),
            Param("oob", False, bool, "a transition property that reads outside val")),
    builder=build,
    doc="A leader hands a value over: a test protocol with a declared symmetry.",
    checking=Checking(symmetry=symmetry),
)
