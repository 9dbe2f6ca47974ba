"""`spatial-manip replay BAG...`: publish bags into the graph with their original timing."""
from __future__ import annotations

import time

import rclpy
from rclpy.executors import SingleThreadedExecutor

from spatial_manip.bags.io import BagError
from spatial_manip.bags.replay import ReplayConfig
from spatial_manip.nodes.replay_node import ReplayNode

SETTLE_S = 1.0    # after the first subscriber, until no other has appeared for this long: the
                  # subscriber's side of a match can come later than ours, and what is sent before
                  # it is lost (but the frames lost in 5 reproductions of the loaded-machine
                  # test failure were the last ones, lost at exit: see ACK_TIMEOUT_S)
ACK_TIMEOUT_S = 5.0  # when done, for reliable subscribers to acknowledge the last messages: exiting
                    # destroys the publishers and what is still in flight with them (on a loaded
                    # machine a subscriber lost the last frame of a replay that had just exited)


def add_arguments(p) -> None:
    p.add_argument("bags", nargs="+", help="bag folders (with metadata.yaml) or .db3/.mcap files")
    p.add_argument("--rate", type=float, default=1.0, help="playback speed factor (default 1)")
    p.add_argument("--start-offset", type=float, default=0.0, help="skip this many seconds of the start")
    p.add_argument("--loop", action="store_true", help="play again from the start when done")
    p.add_argument("--topics", nargs="+", default=[], help="only these topics (default: all)")
    p.add_argument("--clock", action="store_true",
                   help="publish the recording's time on /clock (like ros2 bag play --clock): the replay graph's nodes "
                        "(`spatial-manip launch replay`) run on it, so the planner answers goals on the replayed frames")
    p.add_argument("--wait-subscribers", type=float, default=0.0,
                   help="wait up to this many seconds for a subscriber before starting (lost messages otherwise)")
    p.add_argument("--ack-timeout", type=float, default=ACK_TIMEOUT_S,
                   help="when done, wait up to this many seconds for reliable subscribers to acknowledge "
                        f"every message before exiting (default {ACK_TIMEOUT_S:g}; 0: exit at once, "
                        "the last messages may be lost; like ros2 bag play --wait-for-all-acked)")


def run(args) -> int:
    try:
        cfg = ReplayConfig(rate=args.rate, start_offset_s=args.start_offset, loop=args.loop, topics=tuple(args.topics),
                           clock=args.clock)
    except ValueError as e:
        print(f"replay: {e}")
        return 2
    rclpy.init()
    try:
        node = ReplayNode(bags=args.bags, config=cfg)
    except BagError as e:
        print(f"replay: {e}")
        rclpy.shutdown()
        return 2
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    for r in node.readers:
        print(f"{r.path}: {len(r.topics)} topics, {(r.end_ns - r.start_ns) / 1e9:.1f} s", flush=True)
    deadline = time.monotonic() + args.wait_subscribers
    while time.monotonic() < deadline and not node.subscriber_count():
        ex.spin_once(timeout_sec=0.05)
    if args.wait_subscribers and node.subscriber_count():
        # a client subscribing to several topics is discovered one topic at a time (slower on a
        # loaded machine): wait until no new one has come for SETTLE_S, or the first frames of a
        # topic matched late are lost
        count, quiet_since = node.subscriber_count(), time.monotonic()
        while time.monotonic() - quiet_since < SETTLE_S and time.monotonic() < deadline + SETTLE_S:
            ex.spin_once(timeout_sec=0.05)
            n = node.subscriber_count()
            if n != count:
                count, quiet_since = n, time.monotonic()
    node.start()
    unacked = []
    try:
        while rclpy.ok() and not node.done.is_set():
            ex.spin_once(timeout_sec=0.1)
        if node.done.is_set() and args.ack_timeout > 0:
            unacked = node.wait_for_all_acked(args.ack_timeout)
    except KeyboardInterrupt:
        pass
    finally:
        error = node.error
        n = node.published
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    print(f"published {n} messages")
    if unacked:
        print(f"replay: not acknowledged within {args.ack_timeout:g} s on {', '.join(unacked)}: "
              "a subscriber may have missed the last messages")
    if error is not None:
        print(f"replay: {error}")
        return 1
    return 0
