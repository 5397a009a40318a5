"""A token ring with requests: a liveness test protocol that tells weak fairness from strong.

``nodes`` nodes pass one token around a ring. A node may ask for the token at any time
(``Request``: not fair, a node need never ask); the holder may serve its own request (``Use``)
or pass the token on (``Pass``, weakly fair: the token keeps moving). ``Use`` of a node is
enabled only while the token is there, so it is enabled infinitely often but never
continuously: weak fairness on it lets the token pass forever, strong fairness does not.

- ``Served`` (``want[i] ~> ~want[i]`` for node 0): violated without fairness (the stuttering
  lasso) and with weak fairness on ``Use`` (the token passes forever), holds with strong;
- ``TokenVisits`` (``[]<>(token = 0)``): holds whenever ``Pass`` is weakly fair;
- ``Settles`` (``<>[](no request open)``): violated (requests may come forever);
  ``SettlesOnceQuiet``, the same on the behaviours whose requests eventually stop (``quiet``):
  holds with strong fairness on ``Use``.

The module exposes ``build``; hwcheck makes its keyword arguments the parameters.
"""

from hwcheck.spec.lang import Block, Spec, forall, ite


def build(nodes: int = 3, use: str = "strong", passing: str = "weak") -> Spec:
    fair = {"none": None, "weak": "weak", "strong": "strong"}
    spec = Spec("TokenRing", {"nodes": nodes, "use": use, "passing": passing})
    token = spec.scalar("token", 0, nodes - 1, "the node holding the token")
    want = spec.set_of("want", nodes, "nodes with a request open")
    spec.initial(lambda b: None)

    @spec.action("Request", over=[nodes], modifies=[want])
    def request(b: Block, i) -> None:
        """Node i asks for the token."""
        b.require(~want[i])
        b.set(want[i], True)

    @spec.action("Use", over=[nodes], modifies=[want], fairness=fair[use])
    def use_(b: Block, i) -> None:
        """The holder serves its request."""
        b.require(token == i, want[i])
        b.set(want[i], False)

    @spec.action("Pass", over=[nodes], modifies=[token], fairness=fair[passing])
    def pass_(b: Block, i) -> None:
        """The holder passes the token to the next node."""
        b.require(token == i)
        b.set(token, ite(token == nodes - 1, 0, token + 1))

    spec.invariant("TokenInRing", (token >= 0) & (token < nodes), "the token is at a node")
    spec.leads_to("Served", want[0], ~want[0], "node 0's request is served")
    spec.always_eventually("TokenVisits", token == 0, "the token comes back to node 0")
    quiet = forall(nodes, lambda i: ~want[i], "i")
    spec.eventually_always("Settles", quiet, "from some point on no request is open")
    spec.eventually_always("SettlesOnceQuiet", quiet,
                           "once requests stop, every open one is served", quiet=["Request"])
    return spec
