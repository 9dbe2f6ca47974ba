"""Replay timing (ROS-free): messages of one or more bags in time order, released at their
original spacing scaled by a rate, from a start offset, optionally looping.

The caller supplies `publish(BagMessage)`; the ROS side is spatial_manip.nodes.replay_node.
"""
from __future__ import annotations

import heapq
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from spatial_manip.bags.io import BagMessage, BagReader


@dataclass(kw_only=True)
class ReplayConfig:
    rate: float = 1.0              # 2.0 = twice as fast
    start_offset_s: float = 0.0    # skip this much of the beginning of the recording
    loop: bool = False
    topics: tuple = ()             # () = every topic
    clock: bool = False            # publish the recording's time on /clock (nodes with use_sim_time follow it)

    def __post_init__(self):
        if not self.rate > 0:
            raise ValueError(f"rate must be positive, got {self.rate}")
        if self.start_offset_s < 0:
            raise ValueError(f"start_offset_s must be >= 0, got {self.start_offset_s}")


def merged_messages(readers: list[BagReader], cfg: ReplayConfig) -> Iterator[BagMessage]:
    """Messages of every bag merged by time, from the earliest start + offset."""
    start = min(r.start_ns for r in readers) + int(cfg.start_offset_s * 1e9)
    streams = []
    for r in readers:
        topics = [t for t in cfg.topics if t in r.topics] if cfg.topics else None
        if topics == []:
            continue
        streams.append(r.messages(topics, start_ns=start))
    return heapq.merge(*streams, key=lambda m: m.t_ns)


def play(readers: list[BagReader], publish: Callable[[BagMessage], None], cfg: ReplayConfig,
         stop: threading.Event | None = None, clock=time.monotonic, sleep=None) -> int:
    """Publish with the original timing; returns how many messages were published."""
    if cfg.topics:
        missing = [t for t in cfg.topics if not any(t in r.topics for r in readers)]
        if missing:
            readers[0].require(missing)  # raises, naming the bag and the topic
    stop = stop or threading.Event()
    sleep = sleep or stop.wait  # a stop request interrupts the wait
    n = 0
    while not stop.is_set():
        t0_wall, t0_bag = None, None
        for msg in merged_messages(readers, cfg):
            if stop.is_set():
                break
            if t0_wall is None:
                t0_wall, t0_bag = clock(), msg.t_ns
            due = t0_wall + (msg.t_ns - t0_bag) / 1e9 / cfg.rate
            wait = due - clock()
            if wait > 0:
                sleep(wait)
            publish(msg)
            n += 1
        if not cfg.loop or t0_wall is None:
            break
    return n
