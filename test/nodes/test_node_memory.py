"""Nodes cap glibc's malloc arenas before their threads start (issue 24): with one arena per
thread, sim_node's resident memory grew 650 MB -> 1.7 GB over its first 14 resets."""
import os
import platform
import subprocess
import sys

import pytest

PROBE = "from spatial_manip.nodes.runner import limit_malloc_arenas; print(limit_malloc_arenas())"


def _probe(env_extra: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env_extra
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the arena cap is glibc's")
def test_the_arena_cap_is_set_unless_the_user_set_one():
    assert _probe({}) == "True"
    assert _probe({"MALLOC_ARENA_MAX": "4"}) == "False"        # the user's own setting wins
