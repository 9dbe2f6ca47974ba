"""The C heap a long-running node leaves behind: glibc keeps what a goal freed, fragmented between
its arenas, and hands little of it back by itself. Reading it (`heap_mb`) tells a leak (bytes in
use grow) from fragmentation (only the freed-but-kept bytes grow); `release_freed_memory` returns
the free pages to the system; GoalMemoryTrace (below) records where a node's memory grows between
goals."""
from __future__ import annotations

import collections
import ctypes
import gc
import os
from pathlib import Path

import numpy as np
import psutil

MB = 2**20


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                      "fsmblks", "uordblks", "fordblks", "keepcost")]


def _libc():
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:          # not glibc
        return None


def heap_mb() -> tuple[float, float, float]:
    """(in use by live allocations, freed but kept, mmapped) MB over all glibc arenas; NaNs on
    another C library (or a glibc older than 2.33, without mallinfo2)."""
    libc = _libc()
    fn = getattr(libc, "mallinfo2", None) if libc is not None else None
    if fn is None:
        return float("nan"), float("nan"), float("nan")
    fn.restype = _MallInfo2
    info = fn()
    return info.uordblks / MB, info.fordblks / MB, info.hblkhd / MB


def release_freed_memory() -> None:
    """Hand the heap's free pages back to the system (malloc_trim). Measured under
    `spatial-manip soak` (issue 35): sim_node grew 634 -> 937 MB over 50 resets, keeping the
    replaced models' freed pages; planner_node 388 -> 559 MB over 24 goals with the bytes in use
    flat at 64 MB and the freed-but-kept bytes following its resident size up."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


# Where a node's memory grows between goals, cheaply enough to run under a soak.
#
# Off unless the environment names an output file, so a node pays nothing by default:
#
#     SPATIAL_MANIP_MEMTRACE=/tmp/planner_mem.txt spatial-manip soak --goals 10 ...
#
# After each goal the node calls `after_goal()`, which appends: the resident size; glibc's heap
# (mallinfo2: bytes in use by live allocations, and bytes freed but kept by the allocator); the
# bytes of numpy arrays reachable from Python containers; and the object types whose live count
# grew most since the previous goal. Nothing is traced during the goal (tracemalloc slowed the
# planner under load until its goals timed out). A heap whose free bytes grow while the in-use bytes
# and the object counts stay flat is fragmentation, not a reference kept somewhere.
ENV = "SPATIAL_MANIP_MEMTRACE"
TOP = 15


def reachable_arrays() -> tuple[int, float]:
    """(count, MB) of the numpy arrays Python containers refer to (arrays are not tracked by gc
    themselves); views are counted by their own size."""
    seen, total = set(), 0
    for obj in gc.get_objects():
        for ref in gc.get_referents(obj):
            if isinstance(ref, np.ndarray) and id(ref) not in seen:
                seen.add(id(ref))
                total += ref.nbytes if ref.base is None else 0
    return len(seen), total / MB


class GoalMemoryTrace:
    """After each goal, one record of the node's memory (see the comment above ENV)."""

    def __init__(self, out: Path, top: int = TOP):
        self.out, self.top, self.goals = out, top, 0
        self._counts: collections.Counter | None = None

    @classmethod
    def from_env(cls) -> "GoalMemoryTrace | None":
        path = os.environ.get(ENV, "")
        return cls(Path(path)) if path else None

    def after_goal(self) -> None:
        self.goals += 1
        gc.collect()
        counts = collections.Counter(type(o).__qualname__ for o in gc.get_objects())
        in_use, free, mapped = heap_mb()
        n_arrays, arrays_mb = reachable_arrays()
        rss_mb = psutil.Process().memory_info().rss / MB
        lines = [f"=== goal {self.goals}: rss {rss_mb:.1f} MB; heap in use {in_use:.1f} MB, free kept {free:.1f} MB, "
                 f"mmapped {mapped:.1f} MB; {n_arrays} arrays {arrays_mb:.1f} MB; {sum(counts.values())} objects"]
        if self._counts is not None:
            grown = (counts - self._counts).most_common(self.top)
            lines += [f"    {n:+7d} {name}" for name, n in grown]
        self._counts = counts
        with open(self.out, "a") as f:
            f.write("\n".join(lines) + "\n")
