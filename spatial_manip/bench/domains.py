"""ROS domains a measurement holds alone on this machine.

Benchmarks run their graphs in their own ROS domains so two runs never answer each other's
goals. Drawing a domain at random was not enough: two benches on one machine drew domain 34
together and each took the other's goal responses ("Ignoring unexpected goal response"), so
both figures were wrong. A domain is now held through an exclusive lock on a file in a
per-user folder for as long as the process lives (the kernel drops the lock when it exits,
however it exits), and a run takes only domains no other run holds.

Domains 1-101 are used (the range whose DDS ports cannot meet Linux's ephemeral ports); the
tests draw theirs from 215-232 (test/helpers/ros_helpers.PRIVATE_DOMAINS).
"""
from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

BENCH_DOMAINS = range(1, 102)
_held: dict[int, int] = {}          # domain -> the open file descriptor whose lock holds it


def _lock_dir() -> Path:
    d = Path(tempfile.gettempdir()) / f"spatial_manip-ros-domains-{os.getuid()}"
    d.mkdir(mode=0o700, exist_ok=True)
    return d


def _try_hold(domain: int) -> bool:
    fd = os.open(_lock_dir() / f"{domain}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _held[domain] = fd
    return True


def hold_domains(k: int, *, first: int | None = None) -> list[int]:
    """`k` domains (consecutive from `first` when given, else the first free run of `k`) held by
    this process until it exits or `release` is called; a clear error when they are not free."""
    if k < 1:
        raise ValueError(f"hold_domains needs at least 1 domain, got {k}")
    starts = [first] if first is not None else range(BENCH_DOMAINS.start, BENCH_DOMAINS.stop - k + 1)
    for start in starts:
        taken = []
        for d in range(start, start + k):
            if d in _held or not _try_hold(d):      # held here already: another part of this run's
                break
            taken.append(d)
        if len(taken) == k:
            return taken
        release(taken)
    where = f"{first}-{first + k - 1}" if first is not None else f"any run of {k} in {BENCH_DOMAINS.start}-{BENCH_DOMAINS.stop - 1}"
    raise RuntimeError(f"ROS domains {where} are held by other measurements on this machine "
                       f"(lock files in {_lock_dir()}); wait for them, or pass other domains")


def release(domains) -> None:
    """Let other runs take these domains again."""
    for d in domains:
        fd = _held.pop(d, None)
        if fd is not None:
            os.close(fd)
