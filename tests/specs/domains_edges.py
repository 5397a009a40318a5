"""Domain errors where the order of evaluation decides which one a step reports: every action
here can read or write outside a shape or a domain on some state of the declared domains, in a
place the code generator folds, short-circuits or reorders. The kernel, the Z3 translation and
the interpreter must name the same first error (tests/test_domains.py drives them over every
state). The behaviour itself is of no interest: nothing here is reachable-checked.
"""

from hwcheck.spec.lang import Block, Spec, conj, forall, ite, min_over


def build() -> Spec:
    spec = Spec("DomainEdges", {})
    k = spec.scalar("k", 0, 3, "an index that can pass the arrays' shape (2)")
    arr = spec.array("arr", (2,), 0, 2)
    q = spec.array("q", (2,), -2, -1, "a domain without 0")
    out = spec.array("out", (3,), 0, 3)
    w = spec.array("w", (2,), 0, 1)
    spec.initial(lambda blk: None)

    @spec.action("Folded", modifies=[out])
    def folded(blk: Block) -> None:
        # the second conjunct folds to False; the first still runs (and reads arr[k])
        blk.require(conj(arr[k] == 1, forall(2, lambda j: j > 5)))
        blk.set(out[0], 0)

    @spec.action("SameBranches", modifies=[out])
    def same_branches(blk: Block) -> None:
        blk.set(out[0], ite(arr[k] == 1, 2, 2))  # both branches 2: the condition still runs

    @spec.action("LazyDefault", modifies=[out])
    def lazy_default(blk: Block) -> None:
        # the default arr[k] is read only when no arr[j] is 2
        blk.set(out[1], min_over(2, lambda j: arr[j], lambda j: arr[j] == 2, arr[k]))

    @spec.action("IndexFirst", modifies=[out])
    def index_first(blk: Block) -> None:
        # the index reads arr[k] before the value reads q[k] (and the value can pass 3)
        blk.set(out[arr[k]], q[k] + 5)

    @spec.action("ThroughOob", modifies=[w])
    def through_oob(blk: Block) -> None:
        # q[k] + 2 is in 0..1 for every q in its domain: the write needs no index check, so a
        # failed read of q must give a value of q's domain (not 0, which would write w[2])
        blk.set(w[q[k] + 2], 1)

    @spec.action("Step", modifies=[k])
    def step(blk: Block) -> None:
        blk.require(k < 3)
        blk.set(k, k + 1)

    spec.invariant("Anything", k >= 0)
    spec.invariant("ReadsPast", q[k] <= -1)
    return spec
