"""Where a node's Python memory grows between goals: tracemalloc snapshots diffed goal by goal.

Off unless the environment names an output file, so a node pays nothing by default:

    SPATIAL_MANIP_MEMTRACE=/tmp/planner_mem.txt spatial-manip soak --goals 10 ...

After each goal the node calls `after_goal()`; the file gets the resident size and the allocation
sites that grew most since the previous goal and since the first (by traceback, a few frames
deep). Memory allocated outside Python's allocator (open3d, MuJoCo) is not traced: an RSS that
rises with a flat traced total points there.
"""
from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

ENV = "SPATIAL_MANIP_MEMTRACE"
FRAMES = 12
TOP = 15


class GoalMemoryTrace:
    def __init__(self, out: Path, frames: int = FRAMES, top: int = TOP):
        self.out, self.top, self.goals = out, top, 0
        tracemalloc.start(frames)
        self._first = self._previous = None

    @classmethod
    def from_env(cls) -> "GoalMemoryTrace | None":
        path = os.environ.get(ENV, "")
        return cls(Path(path)) if path else None

    def after_goal(self) -> None:
        import psutil

        self.goals += 1
        snap = tracemalloc.take_snapshot().filter_traces((
            tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap*>")))
        traced_mb = sum(s.size for s in snap.statistics("filename")) / 2**20
        rss_mb = psutil.Process().memory_info().rss / 2**20
        lines = [f"=== goal {self.goals}: rss {rss_mb:.1f} MB, traced {traced_mb:.1f} MB"]
        for title, base in (("since previous goal", self._previous), ("since goal 1", self._first)):
            if base is None:
                continue
            lines.append(f"--- {title}")
            for stat in snap.compare_to(base, "traceback")[:self.top]:
                if stat.size_diff <= 0:
                    continue
                lines.append(f"{stat.size_diff / 2**20:+8.2f} MB {stat.count_diff:+7d} blocks")
                lines.extend("      " + line for line in stat.traceback.format()[-2 * FRAMES:])
        if self._first is None:
            self._first = snap
        self._previous = snap
        with open(self.out, "a") as f:
            f.write("\n".join(lines) + "\n")
