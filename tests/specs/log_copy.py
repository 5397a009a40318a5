"""Two-record logs copied record by record: a protocol whose invariant needs a lemma with an
existential conjunction (for ``prove --infer``; not a real protocol).

Each of ``nodes`` nodes holds a log of at most two records (``first``, ``second``; 0 for
none), records named by ids that ``Write`` hands out fresh from ``next``. A node with an empty
log copies another's first record (``CopyFirst``); a node holding one record fetches the second
from a node whose first record is the same (``Fetch``: the response, ``resp``, is 0 when that
node has no second record), and appends what came back (``Append``); the response stays in
``resp`` after it, stale. A node may clear its log while no fetch is in flight (``Clear``).

``Matching`` (two logs with the same second record have the same first one) holds. It is not
inductive alone: ``Append`` needs that the record in flight is held, after the same first
record, by some log, ``forall(2, lambda i: ~pending[i] | exists(2, lambda j: (first[j] ==
first[i]) & (second[j] == resp[i])))``, a clause with an existential conjunction. Its
universal reading (every log holding the record in flight has the same first record) needs a
fourth literal (``resp[i] == 0``: an empty response is in flight while other logs hold one
record), beyond the universal templates' three. With two ids (handed out in order) clauses
over their order prove it too; with three they do not.
"""

from hwcheck.spec.lang import Block, Spec, forall, ite
from hwcheck.spec.protocol import Checking, Param, Protocol, Symmetry


def build(nodes: int = 3, ids: int = 3) -> Spec:
    n = nodes
    spec = Spec("LogCopy", {"nodes": n, "ids": ids})
    first = spec.array("first", (n,), 0, ids, "each log's first record; 0 = none")
    second = spec.array("second", (n,), 0, ids, "each log's second record; 0 = none")
    pending = spec.set_of("pending", n, "nodes with a fetch in flight")
    resp = spec.array("resp", (n,), 0, ids, "the record a fetch returns (0: none); stale after")
    nxt = spec.scalar("next", 0, ids + 1, "the next fresh record id")

    spec.initial(lambda b: b.set(nxt, 1))

    @spec.action("Write", over=[n], modifies=[first, second, nxt])
    def write(b: Block, i) -> None:
        """Node i appends a fresh record to its log."""
        b.require(~pending[i], nxt <= ids, second[i] == 0)
        b.set(first[i], ite(first[i] == 0, nxt, first[i]))
        b.set(second[i], ite(first[i] == 0, second[i], nxt))
        b.set(nxt, nxt + 1)

    @spec.action("CopyFirst", over=[n, n], modifies=[first])
    def copy_first(b: Block, i, j) -> None:
        """Node i, its log empty, takes node j's first record."""
        b.require(~pending[i], first[i] == 0, first[j] != 0)
        b.set(first[i], first[j])

    @spec.action("Fetch", over=[n, n], modifies=[pending, resp])
    def fetch(b: Block, i, j) -> None:
        """Node i, holding one record, asks node j (the same first record) for its second."""
        b.require(i != j, ~pending[i], first[i] != 0, second[i] == 0, first[j] == first[i])
        b.set(pending[i], True)
        b.set(resp[i], second[j])

    @spec.action("Append", over=[n], modifies=[pending, second])
    def append(b: Block, i) -> None:
        """Node i appends the record that came back (none when it is 0)."""
        b.require(pending[i])
        b.set(second[i], resp[i])
        b.set(pending[i], False)

    @spec.action("Clear", over=[n], modifies=[first, second])
    def clear(b: Block, i) -> None:
        """Node i empties its log while no fetch is in flight."""
        b.require(forall(n, lambda k: ~pending[k], "k"))
        b.set(first[i], 0)
        b.set(second[i], 0)

    spec.invariant("Matching", forall(n, lambda i: forall(n, lambda j: (second[i] == 0)
                                                           | (second[i] != second[j])
                                                           | (first[i] == first[j]), "j"),
                                      "i"),
                   "two logs with the same second record have the same first")
    return spec


def symmetry(spec: Spec) -> Symmetry:
    return Symmetry(size=spec.params["nodes"],
                    dims={v: (0,) for v in ("first", "second", "pending", "resp")},
                    other=("next",), params="member")


PROTOCOL = Protocol(
    name="log-copy",
    params=(Param("nodes", 3, range(2, 5), "nodes"),
            Param("ids", 3, range(1, 6), "record ids Write hands out")),
    builder=build,
    doc="Two-record logs copied record by record: a test protocol for existential lemmas.",
    checking=Checking(symmetry=symmetry),
)
