"""The one breadth-first search driver: every engine and the state graph run this loop.

The driver owns what is the same for every engine: the level loop, the stop rule asked before
every level (``stop.py``), Ctrl-C, SIGTERM and out of memory (the run stops and keeps what it
found), the counters of the ``Exploration``, the first hit of every property, progress, and
the paths of the hits. What differs between engines is how a level is expanded, and that is a
``LevelSource``:

- ``engines/local.py``: the compiled kernel on one worker or several, the visited set in
  memory, the levels in the work folder;
- ``engines/partitioned.py``: the partitions of a backend (in this process, or Spark);
- ``graph/explore.py``: the kernel that keeps every transition (the state graph).

A source reports each level as a ``LevelResult`` (transitions generated, states new, the first
hits it found, in its canonical order) and turns the hits' targets into paths when asked; it
never decides to stop except between chunks of a level, by asking the rule's ``limit``.

Canonical choice (so that every engine reports the same trace): each state's parent is the
least (parent fingerprint, action instance) among the states of the previous level that reach
it, and a property's witness is the state of least fingerprint on the first level that has one
(the sources keep this; ``exploration.py`` says what a path is).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from hwcheck.checker.search import faults
from hwcheck.checker.search.exploration import (
    Exploration,
    Hit,
    Progress,
    interrupt_reason,
)
from hwcheck.checker.search.stop import StopRule
from hwcheck.spec.verdicts import Kind

DOMAIN = Kind.DOMAIN  # the kind of a hit that left a variable's declared domain


@dataclass
class Found:
    """A property's first hit, as a source found it: ``target`` is what the source walks back
    from to build the path (a path already, a fingerprint, a state id: the source's own)."""

    name: str
    kind: str
    length: int  # steps from the initial state
    target: Any


@dataclass
class LevelResult:
    """One level, as a source reports it."""

    generated: int = 0  # transitions of the level expanded (duplicates included)
    new: int = 0  # states the next level has
    found: list[Found] = field(default_factory=list)  # first hits, in the source's order
    stopped: str = ""  # why the level was cut short: a limit, an interrupt ('' if it was not)
    interrupted: bool = False  # by Ctrl-C, SIGTERM or out of memory: the search ends there
    # the depth the new states reach, when not one more than the expanded level's (a source
    # that first finishes a level an earlier run stopped in, whose new states are shallower)
    depth: int | None = None


class LevelSource:
    """How an engine expands a level. The driver calls, in order: ``prepare`` (before the
    clock starts: compile, start workers), ``start`` (the initial level, or a resumed run's
    counters), ``expand`` once per level while ``frontier`` is not empty and the rule says go
    on, ``paths`` once, ``finish`` (figures into ``ex.stats``; always called)."""

    name = "source"
    # the paths of this source's hits are known as soon as the hits are (the local engine's:
    # a checkpoint between levels keeps them); else they are asked for after the search
    paths_at_once = False

    def exploration(self) -> Exploration:
        """The empty report this source fills."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Work before the clock starts."""

    def start(self, ex: Exploration, progress: Progress) -> LevelResult:
        """The initial level (``new`` states at depth 0 and their hits); a resumed run sets
        ``ex``'s counters and hits instead and reports nothing new."""
        raise NotImplementedError

    def frontier(self) -> int:
        """States left to expand at the current depth."""
        raise NotImplementedError

    def expand(self, depth: int, ex: Exploration, progress: Progress,
               rule: StopRule) -> LevelResult:
        """Expand the frontier (the states at ``depth``) into the next level."""
        raise NotImplementedError

    def paths(self, targets: dict[str, Any]) -> dict[str, list[tuple[int, int | None]]]:
        """The path of each hit's target."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Stop the work under way (after Ctrl-C)."""

    def on_stop(self, ex: Exploration) -> None:
        """The search stopped before its end, by a limit or by Ctrl-C, SIGTERM or out of
        memory (``ex.stop_reason``): keep what a later run can go on from (the local engine's
        final checkpoint). Called once a run, before the hits' paths are rebuilt."""

    def finish(self, ex: Exploration) -> None:
        """Release what the search held; the source's figures into ``ex.stats``."""


class Search:
    """One breadth-first search over ``source``. ``run`` explores until the frontier is empty or
    a rule stops it, and may be called again with another rule to go on from there (a check
    that stops at its first violation, then the whole graph for recoverability: one
    exploration). ``finish`` releases the source; ``search`` does all three for one rule."""

    def __init__(self, source: LevelSource, report: Any = None):
        self.source = source
        self.ex = source.exploration()
        source.prepare()
        self.progress = Progress(report)
        self.targets: dict[str, Any] = {}
        self.started = False
        self.stopped = False  # by Ctrl-C, SIGTERM or out of memory: nothing more to explore
        self.told = False  # the source was told this run stopped (``LevelSource.on_stop``)

    def run(self, rule: StopRule) -> Exploration:
        """Go on until the frontier is empty or ``rule`` stops the search; the exploration so
        far (a copy, so that a later ``run`` leaves it as it is).

        The result is complete only when every level was expanded and every hit has its path.
        A stop (Ctrl-C, SIGTERM, out of memory) keeps what was found: the hits found so far get
        their paths if the source can still give them, else they keep none."""
        source, ex, progress, targets = self.source, self.ex, self.progress, self.targets
        if self.stopped:
            return _copy(ex)
        ex.stop_reason = ""
        finished = tracing = traced = self.told = False
        try:
            if not self.started:
                self.started = True
                first = source.start(ex, progress)
                _record(source, first.found, ex, targets)
                ex.distinct += first.new
            while source.frontier():
                ex.seconds = progress.elapsed()
                reason = rule.before_level(ex)
                if reason:
                    ex.stop_reason = reason
                    if ex.limited:  # not at the first violation: the check is done there
                        self._stopped()
                    break
                depth = ex.depth
                faults.at("interrupt", depth)  # tests: a Ctrl-C or SIGTERM at a known level
                faults.at("terminate", depth)
                level = source.expand(depth, ex, progress, rule)
                ex.generated += level.generated
                _record(source, level.found, ex, targets)
                if level.new:
                    ex.distinct += level.new
                    ex.depth = depth + 1 if level.depth is None else level.depth
                # a level stopped in the middle of its expansion: the next one is partial
                ex.partial_level = ex.depth if level.stopped and level.new else None
                progress.tick(depth + 1, ex.distinct, level.new)
                if level.stopped:
                    ex.stop_reason = level.stopped
                    self.stopped = level.interrupted  # no later run goes on from there
                    self._stopped()
                    break
            else:
                finished = True
            tracing = True
            _set_paths(ex, targets, source.paths(targets))
            traced = True
            ex.complete = finished  # only now: every level expanded, every hit with its path
        except (KeyboardInterrupt, MemoryError) as e:
            ex.complete = False
            ex.stop_reason = interrupt_reason(e)
            self.stopped = True
            try:
                source.cancel()
            except Exception:  # noqa: BLE001 - gone with the signal: nothing left to stop
                pass
            if not tracing:
                try:
                    self._stopped()
                except (KeyboardInterrupt, MemoryError):  # a second signal: what it kept stays
                    pass
            if not traced:
                _paths_after_stop(source, targets, ex, retry=not tracing)
        ex.seconds = progress.elapsed()
        return _copy(ex)

    def _stopped(self) -> None:
        """Tell the source, once a run, that the search stopped before its end."""
        if not self.told:
            self.told = True
            self.source.on_stop(self.ex)

    def finish(self) -> Exploration:
        """Release the source; the whole exploration with the source's figures."""
        self.ex.seconds = self.progress.elapsed()
        self.source.finish(self.ex)
        return self.ex


def search(source: LevelSource, rule: StopRule, report: Any = None) -> Exploration:
    """Breadth-first search over ``source`` until its frontier is empty or ``rule`` stops it."""
    s = Search(source, report)
    try:
        ex = s.run(rule)
    finally:
        full = s.finish()
    ex.stats = full.stats
    return ex


def _copy(ex: Exploration) -> Exploration:
    return dataclasses.replace(ex, hits={n: dataclasses.replace(h) for n, h in ex.hits.items()},
                               checked=list(ex.checked), stats=dict(ex.stats))


def _record(source: LevelSource, found: list[Found], ex: Exploration,
            targets: dict[str, Any]) -> None:
    """Each property's first hit; a domain error is a property of its own, checked from the
    moment it is first hit."""
    for f in found:
        if f.kind == DOMAIN:
            if f.name in ex.hits:
                continue
            ex.checked.append((f.name, DOMAIN))
        hit = ex.hits[f.name] = Hit(f.name, f.kind, f.length, None)
        if source.paths_at_once:
            hit.path = source.paths({f.name: f.target})[f.name]
        else:
            targets[f.name] = f.target


def _set_paths(ex: Exploration, targets: dict[str, Any], paths: dict[str, Any]) -> None:
    """Each target's path; a target given its path is done with (a later run of the search
    may number the source's states anew: the state graph finishing a level a limit stopped
    in), one without keeps its target for a later try."""
    for name in list(targets):
        ex.hits[name].path = paths.get(name)
        if ex.hits[name].path is not None:
            del targets[name]


def _paths_after_stop(source: LevelSource, targets: dict[str, Any], ex: Exploration,
                      retry: bool) -> None:
    """A stop during the levels: what was found lies in levels the source stored in full (a
    state is in one level only, so the records of a level cut short are never read for it), so
    its paths are rebuilt as after the last level. Not when the stop came while they were being
    rebuilt, nor when the rebuild is stopped or fails (a backend gone with the signal): those
    hits keep no path."""
    paths: dict[str, Any] = {}
    if retry and targets:
        try:
            paths = source.paths(targets)
        except (KeyboardInterrupt, MemoryError) as e:
            ex.stop_reason += f"; {interrupt_reason(e)} while traces were rebuilt"
        except Exception as e:  # noqa: BLE001 - the backend may be gone with the signal
            ex.stop_reason += f"; traces not rebuilt: {type(e).__name__}: {e}"
    _set_paths(ex, targets, paths)
