"""Two-phase commit (Lamport and Gray's TwoPhase.tla), written in hwcheck's spec language.

A transaction manager (TM) and ``rms`` resource managers (RMs). Each RM is working, prepared,
committed or aborted; the TM is init, committed or aborted and records which RMs said
Prepared. Messages are never lost: ``msgs`` is the set of messages ever sent (Prepared from
each RM, one Commit, one Abort), as in the TLA+ spec; here it is three variables, the set of RMs
whose Prepared was sent and two flags (0 or 1) for Commit and Abort. With 3 RMs a full
breadth-first search finds 288 distinct states (the figure TLC and Stateright publish), with 5
RMs 8,832 (Stateright's).

``tm_commits_early=True`` is a broken TM that decides Commit as soon as one RM has prepared:
an RM that chose to abort meanwhile, and one that commits, break TCConsistent.
"""

from hwcheck.spec.lang import Block, Spec, exists, forall, implies
from hwcheck.spec.protocol import HOLDS, Param, Protocol, Scenario

# rmState values (the strings of TwoPhase.tla, numbered)
WORKING, PREPARED, COMMITTED, ABORTED = 0, 1, 2, 3
# tmState values
INIT, TM_COMMITTED, TM_ABORTED = 0, 1, 2


def build(rms: int = 3, tm_commits_early: bool = False) -> Spec:
    spec = Spec("TwoPhase", {"rms": rms, "tm_commits_early": tm_commits_early})
    rm_state = spec.array("rmState", (rms,), WORKING, ABORTED,
                          "0 working, 1 prepared, 2 committed, 3 aborted")
    tm_state = spec.scalar("tmState", INIT, TM_ABORTED, "0 init, 1 committed, 2 aborted")
    tm_prepared = spec.set_of("tmPrepared", rms, "RMs from which the TM received Prepared")
    msg_prepared = spec.set_of("msgPrepared", rms, "Prepared messages sent, by RM")
    msg_commit = spec.scalar("msgCommit", 0, 1, "1 once the TM sent Commit")
    msg_abort = spec.scalar("msgAbort", 0, 1, "1 once the TM sent Abort")

    spec.initial(lambda b: None)  # every variable starts at the bottom of its domain

    @spec.action("TMRcvPrepared", over=[rms], modifies=[tm_prepared])
    def tm_rcv_prepared(b: Block, rm) -> None:
        """The TM receives a Prepared message from rm."""
        b.require(tm_state == INIT, msg_prepared[rm])
        b.set(tm_prepared[rm], True)

    @spec.action("TMCommit", modifies=[tm_state, msg_commit])
    def tm_commit(b: Block) -> None:
        """The TM commits once every RM has prepared (the broken TM: once any has)."""
        if tm_commits_early:
            b.require(tm_state == INIT, exists(rms, lambda r: tm_prepared[r]))
        else:
            b.require(tm_state == INIT, forall(rms, lambda r: tm_prepared[r]))
        b.set(tm_state, TM_COMMITTED)
        b.set(msg_commit, 1)

    @spec.action("TMAbort", modifies=[tm_state, msg_abort])
    def tm_abort(b: Block) -> None:
        """The TM aborts spontaneously."""
        b.require(tm_state == INIT)
        b.set(tm_state, TM_ABORTED)
        b.set(msg_abort, 1)

    @spec.action("RMPrepare", over=[rms], modifies=[rm_state, msg_prepared])
    def rm_prepare(b: Block, rm) -> None:
        """rm prepares and tells the TM."""
        b.require(rm_state[rm] == WORKING)
        b.set(rm_state[rm], PREPARED)
        b.set(msg_prepared[rm], True)

    @spec.action("RMChooseToAbort", over=[rms], modifies=[rm_state])
    def rm_choose_to_abort(b: Block, rm) -> None:
        """rm aborts on its own."""
        b.require(rm_state[rm] == WORKING)
        b.set(rm_state[rm], ABORTED)

    @spec.action("RMRcvCommitMsg", over=[rms], modifies=[rm_state])
    def rm_rcv_commit(b: Block, rm) -> None:
        """rm receives the Commit message."""
        b.require(msg_commit == 1)
        b.set(rm_state[rm], COMMITTED)

    @spec.action("RMRcvAbortMsg", over=[rms], modifies=[rm_state])
    def rm_rcv_abort(b: Block, rm) -> None:
        """rm receives the Abort message."""
        b.require(msg_abort == 1)
        b.set(rm_state[rm], ABORTED)

    def within(x, lo: int, hi: int):
        return (x >= lo) & (x <= hi)

    spec.invariant("TPTypeOK", forall(rms, lambda r: within(rm_state[r], WORKING, ABORTED))
                   & within(tm_state, INIT, TM_ABORTED) & within(msg_commit, 0, 1)
                   & within(msg_abort, 0, 1),
                   "every variable holds a value of its type (TwoPhase.tla's TPTypeOK; the "
                   "declared domains make it hold by construction)")
    spec.invariant("TCConsistent", forall(rms, lambda a: forall(rms, lambda c: implies(
        rm_state[a] == ABORTED, rm_state[c] != COMMITTED), "c"), "a"),
        "no RM has committed while another has aborted")
    spec.invariant("CommitAfterAllPrepared", implies(
        tm_state == TM_COMMITTED, forall(rms, lambda r: msg_prepared[r])),
        "the TM commits only once every RM has prepared")
    spec.reachable("Committed", exists(rms, lambda r: rm_state[r] == COMMITTED),
                   "an RM committed")
    spec.reachable("Aborted", exists(rms, lambda r: rm_state[r] == ABORTED), "an RM aborted")
    return spec


def _expect(**violated):
    names = ("TPTypeOK", "TCConsistent", "CommitAfterAllPrepared")
    return {n: violated.get(n, HOLDS) for n in names}


PROTOCOL = Protocol(
    name="two-phase",
    params=(Param("rms", 3, range(1, 7), "resource managers"),
            Param("tm_commits_early", False, bool,
                  "a broken TM that commits once any RM has prepared")),
    builder=build,
    doc="Two-phase commit (TwoPhase.tla): a transaction manager and rms resource managers.",
    scenarios=(
        Scenario("two-phase-3", "Three RMs: every RM commits or every RM aborts.", "-",
                 {"rms": 3}, _expect(), ("Committed", "Aborted"), 288),
        Scenario("two-phase-5", "Five RMs (Stateright's figure).", "-",
                 {"rms": 5}, _expect(), ("Committed", "Aborted"), 8832),
        Scenario("two-phase-early-commit", "A TM that commits once one RM has prepared: "
                 "another RM has aborted by then.", "-", {"rms": 2, "tm_commits_early": True},
                 _expect(TCConsistent=5, CommitAfterAllPrepared=3), ("Committed", "Aborted"), 76),
    ),
)
