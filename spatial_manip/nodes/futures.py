"""Waiting on an rclpy future from a thread that does not spin (the executor's other threads do)."""
from __future__ import annotations

import threading


def wait_future(future, timeout_s: float):
    """The result of an rclpy future spun by another thread, or None after `timeout_s`."""
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    if not done.wait(timeout_s):
        return None
    return future.result()
