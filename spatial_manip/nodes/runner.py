"""The one `main()` body every node shares: init, build, spin until Ctrl-C or shutdown, clean up."""
from __future__ import annotations

import sys
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor

from spatial_manip.errors import SpatialManipError


def spin_node(make_node: Callable, *, args=None, threads: int | None = 1,
              close: Callable | None = None) -> int:
    """Run the node built by `make_node` (threads=1: single-threaded; None: one per core).
    `close(node)` releases what the node holds (devices, threads) before it is destroyed. A
    configuration error raised while building it is printed and gives exit status 1."""
    rclpy.init(args=args)
    node = None
    try:
        node = make_node()
        executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        executor.spin()
    except SpatialManipError as e:
        if node is not None:
            raise
        print(f"{getattr(make_node, '__name__', 'node')}: {e.code.value}: {e.message}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            if close is not None:
                close(node)
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
