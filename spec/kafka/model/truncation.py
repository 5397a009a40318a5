"""Where a follower truncates its log before it fetches from a new leader: the base model's
three rules (``--truncation``): to its HW, by leader epoch (KIP-101), or KIP-279's walk back
epoch by epoch. With a log start offset (``--log-start-offset``) the leader's epoch cache has
lost the epochs below its log start, and a follower's log may hold nothing above its own.
"""

from __future__ import annotations

from hwcheck.spec.kafka.model.context import Model
from hwcheck.spec.lang import (
    Block,
    Expr,
    Value,
    ite,
    max_over,
    min_,
    min_over,
)


def end_offset(m: Model, lg: Value, leo_l: Value, e: Value) -> Expr:
    """The first offset of log lg holding an epoch > e; its LEO if none."""
    return min_over(m.M, lambda k: k, lambda k: (k < leo_l) & (m.log[lg, k] > e), leo_l, "k")


def truncation_point(m: Model, b: Block, f: Value, L: Value) -> Expr:
    """The offset follower f cuts its log to for leader L."""
    log, start = m.log, m.log_start
    lf = b.let("lf", m.leo(f))
    if m.p.truncation == "hw":
        return min_(lf, m.hw[f])
    leo_l = b.let("leoL", m.leo(L))
    if m.p.truncation == "leader-epoch":
        if start is not None:  # no record left above the log start offset: nothing to truncate
            last = b.let("last", ite(lf > start[f], log[f, lf - 1], 0))
            return ite(last == 0, lf, min_(lf, end_offset(m, L, leo_l, last)))
        last = b.let("last", ite(lf > 0, log[f, lf - 1], 0))
        return ite(last == 0, 0, min_(lf, end_offset(m, L, leo_l, last)))
    return _kip_279(m, b, f, L, lf, leo_l)


def _kip_279(m: Model, b: Block, f: Value, L: Value, lf: Value, leo_l: Value) -> Expr:
    """KIP-279: walk back epoch by epoch to the largest common one. Each round that does not
    stop lowers n, so M + 1 rounds always reach the fixed point."""
    log, start, M = m.log, m.log_start, m.M
    n = b.let("n", lf)
    done = b.let("done", False)
    with b.each(M + 1, "round"):
        with b.when(~done):
            with b.when((n <= start[f]) if start is not None else (n == 0)):
                b.assign(done, True)
            with b.otherwise():
                last = b.let("last", log[f, n - 1])
                common = b.let("common", max_over(
                    M, lambda k: log[L, k],
                    lambda k: (k < leo_l) & (log[L, k] >= 1) & (log[L, k] <= last), 0, "k"))
                with b.when(common == 0):
                    if start is not None:
                        # The leader's epoch cache has no epoch <= last (they were deleted
                        # with the log's start): it answers with the start of the first
                        # later epoch (LeaderEpochFileCache.endOffsetFor). Without a log
                        # start offset this is 0, as below.
                        b.assign(n, min_(n, end_offset(m, L, leo_l, last)))
                    else:
                        b.assign(n, 0)
                    b.assign(done, True)
                with b.otherwise():
                    end_l = b.let("endL", end_offset(m, L, leo_l, common))
                    with b.when(common == last):
                        b.assign(n, min_(n, end_l))
                        b.assign(done, True)
                    with b.otherwise():
                        end_f = min_over(M, lambda k: k,
                                         lambda k: (k < n) & (log[f, k] > common), n, "k")
                        b.assign(n, min_(end_l, end_f))
    return n
