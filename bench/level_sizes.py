"""The size of every BFS level of a run, to project a state space too large to finish.

``python bench/level_sizes.py --spec tests/specs/kraft_v35.py --param view=false --max-seconds
1500 --workers 2 --json levels.json`` explores as `hwcheck check --continue` does (the local
engine, the one search driver) until the space is done or a limit stops it, and prints each
finished level's new states, the distinct states after it and the seconds it ended at, then the
run's totals and the disk its work folder took at most. A space that is not done has its
levels' growth factors printed too (each level's size over the one before), which is what a
projection of its remaining levels rests on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from hwcheck.checker import protocols
from hwcheck.checker.engines.local import LocalEngine
from hwcheck.checker.engines.options import Options
from hwcheck.checker.search.driver import Search
from hwcheck.checker.search.exploration import Progress
from hwcheck.checker.semantics.kernel import Kernel


class LevelLog(Progress):
    """The driver's progress, kept a level at a time: the first tick naming a level is the one
    the driver gives when that level is done (distinct states after it, its new states); the
    engine's ticks inside the next level's expansion name the same level after it."""

    def __init__(self) -> None:
        super().__init__(None)
        self.levels: list[tuple[int, int, int, float]] = []  # level, new, distinct, seconds

    def tick(self, level: int, distinct: int, frontier: int, force: bool = False) -> None:
        if not self.levels or level > self.levels[-1][0]:
            self.levels.append((level, frontier, distinct, self.elapsed()))
            print(f"level {level:4d}  new {frontier:>14,}  distinct {distinct:>16,}  "
                  f"{self.elapsed():9.1f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="kafka", help="a protocol name or file (as check --spec)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--max-seconds", type=float, default=None)
    ap.add_argument("--max-states", type=int, default=None)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", help="write the levels and totals here")
    a = ap.parse_args()
    proto = protocols.load(a.spec)
    params = protocols.parse_params(proto, a.param)
    spec = protocols.build(proto, params)
    t0 = time.perf_counter()
    opts = Options(stop_at_violation=False, max_states=a.max_states, max_seconds=a.max_seconds)
    search = Search(LocalEngine(Kernel(spec), opts, workers=a.workers))
    log = search.progress = LevelLog()  # the driver's progress, kept a level at a time
    try:
        ex = search.run(opts.stop_rule())
    finally:
        ex.stats = search.finish().stats
    growth = [round(b[1] / a_[1], 3) for a_, b in zip(log.levels, log.levels[1:]) if a_[1]]
    done = dict(spec=a.spec, params={k: v for k, v in params.items()}, workers=a.workers,
                complete=ex.complete, stop=ex.stop_reason, distinct=ex.distinct,
                generated=ex.generated, depth=ex.depth, seconds=ex.seconds,
                process=time.perf_counter() - t0, disk_bytes=ex.stats.get("disk_bytes"),
                peak_rss=ex.stats.get("peak_rss"), cpus=os.cpu_count(),
                levels=[dict(level=lv, new=n, distinct=d, seconds=round(s, 2))
                        for lv, n, d, s in log.levels], growth=growth)
    print(f"{'complete' if ex.complete else 'stopped: ' + ex.stop_reason}: {ex.distinct:,} "
          f"distinct, {ex.generated:,} generated, depth {ex.depth}, {ex.seconds:.1f} s; the "
          f"work folder held {(ex.stats.get('disk_bytes') or 0) / 2**20:,.0f} MiB at most")
    if not ex.complete:
        print("growth of the last levels: " + ", ".join(f"{g:.3f}" for g in growth[-10:]))
    if a.json:
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(done, f, default=str)
        os.replace(tmp, a.json)
    sys.exit(0)


if __name__ == "__main__":
    main()
