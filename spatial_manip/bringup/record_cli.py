"""`spatial-manip record OUT`: record the stack's topics into a rosbag2 until Ctrl-C (or --duration)."""
from __future__ import annotations

import time

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from spatial_manip.bags.io import BagError
from spatial_manip.nodes.recorder_node import DEFAULT_TOPICS, PLANNER_TOPICS, RecorderNode


def add_arguments(p) -> None:
    p.add_argument("out", help="new bag folder (metadata.yaml + .db3/.mcap are written into it)")
    p.add_argument("--storage", choices=["sqlite3", "mcap"], default="sqlite3")
    p.add_argument("--topics", nargs="+", default=DEFAULT_TOPICS, help="topics to record (default: %(default)s)")
    p.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (0: until Ctrl-C)")
    p.add_argument("--flush-period-s", type=float, default=1.0,
                   help="write the bag to disk this often: a killed recorder loses at most this much "
                        "(recover the rest with `spatial-manip bag-repair`); 0: only at the end")


def run(args) -> int:
    rclpy.init()
    try:
        node = RecorderNode(output=args.out, storage=args.storage, topics=args.topics,
                            flush_period_s=args.flush_period_s)
    except BagError as e:
        print(f"record: {e}")
        rclpy.shutdown()
        return 2
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    t_end = time.monotonic() + args.duration if args.duration > 0 else float("inf")
    print(f"recording {len(args.topics)} topics into {args.out} ({args.storage}); Ctrl-C to stop", flush=True)
    try:
        while rclpy.ok() and time.monotonic() < t_end:
            ex.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass  # Ctrl-C or SIGTERM (rclpy shuts the context down): finish the bag below
    finally:
        counts = node.close()
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    for topic, n in sorted(counts.items()):
        print(f"{n:8d}  {topic}")
    missing = [t for t in args.topics if not counts.get(t)]
    if missing:
        print(f"never published (not in the bag): {', '.join(missing)}")
    needed = [t for t in PLANNER_TOPICS if t in missing]
    if needed:
        print(f"warning: the planner needs {', '.join(needed)}; `spatial-manip evaluate` cannot re-plan this "
              "bag without them (start the camera driver / calibration publisher before recording)")
    return 0
