"""planner_node's growth over a soak (issue 35) was the C heap keeping what each goal freed: the
bytes in use stayed flat while the freed-but-kept bytes, and the resident size with them, rose.
These tests make that pattern in a fresh process and check that `release_freed_memory` hands the
kept pages back, so the retained memory stays bounded by what is live."""
import math
import subprocess
import sys

import pytest

from spatial_manip.heap import heap_mb

FRAGMENT = r"""
import threading
import psutil
from spatial_manip.heap import heap_mb, release_freed_memory

MB = 2**20
kept = []

def goal():
    # a goal's working set in heap-sized blocks (below malloc's mmap threshold); what outlives the
    # goal is spread through it, so the heap cannot shrink from its top
    blocks = [bytearray(60_000) for _ in range(2000)]
    kept.extend(blocks[::40])

for _ in range(2):
    threads = [threading.Thread(target=goal) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
rss = lambda: psutil.Process().memory_info().rss / MB
before, (in_use, free, _) = rss(), heap_mb()
release_freed_memory()
after, (in_use_after, _, _) = rss(), heap_mb()
print(before, after, in_use, free, in_use_after)
"""


NO_MALLINFO2 = math.isnan(heap_mb()[0])


@pytest.mark.skipif(NO_MALLINFO2, reason="not glibc >= 2.33: no mallinfo2 to read the heap with")
def test_the_heap_a_goal_freed_is_handed_back():
    out = subprocess.run([sys.executable, "-c", FRAGMENT], capture_output=True, text=True, timeout=60, check=True)
    rss_before, rss_after, in_use, free, in_use_after = map(float, out.stdout.split())
    assert free > 150, f"the pattern did not fragment the heap ({free:.0f} MB free kept)"
    assert rss_before - rss_after > 0.8 * free, (
        f"resident {rss_before:.0f} -> {rss_after:.0f} MB with {free:.0f} MB freed but kept: not handed back")
    assert abs(in_use_after - in_use) < 1 and in_use < 30     # only the live blocks stay (~12 MB)


def test_the_heap_reading_is_in_megabytes():
    if NO_MALLINFO2:
        pytest.skip("not glibc >= 2.33")
    in_use, free, mapped = heap_mb()
    assert 1 < in_use < 4096 and 0 <= free < 4096 and 0 <= mapped < 4096
