"""`spatial-manip camera-bench`: how fast camera_node publishes a RealSense recording, and how
many frames it drops, against the SDK decoding the same recording alone in the same process.

For each profile (640x480 pairs, and L515 XGA: 1024x768 depth + 1280x720 colour), a synthetic
recording is built, then timed three ways with alignment on:
  sdk        pipeline + align, non-real-time, frames copied out (the baseline)
  node max   camera_node, non-real-time playback (as fast as it goes; newest frame wins)
  node 30Hz  camera_node, real-time playback (the camera's rate): must publish every frame
"""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import Image

from spatial_manip.camera.synthetic import SyntheticConfig, build_recording
from spatial_manip.nodes.camera_node import CameraNode

PROFILES = {"vga": dict(depth_width=640, depth_height=480, color_width=640, color_height=480),
            "xga": dict(depth_width=1024, depth_height=768, color_width=1280, color_height=720)}


def add_arguments(p) -> None:
    p.add_argument("--profiles", nargs="+", default=list(PROFILES), choices=list(PROFILES))
    p.add_argument("--frames", type=int, default=120, help="frames per recording (default 120 = 4 s)")
    p.add_argument("--workdir", default="", help="where to write the recordings (default: a temp dir)")


def sdk_playback_fps(path: str, real_time: bool = False) -> tuple[float, int]:
    """Frames per second of pipeline + align alone, copying each pair out as the node does, and
    the number of synchronised pairs (depth and colour of the same frame) it delivered."""
    import pyrealsense2 as rs  # the SDK is optional: only this command needs it

    cfg = rs.config()
    cfg.enable_device_from_file(path, repeat_playback=False)
    pipe = rs.pipeline()
    prof = pipe.start(cfg)
    prof.get_device().as_playback().set_real_time(real_time)
    align = rs.align(rs.stream.color)
    n, t0, pairs = 0, time.perf_counter(), set()
    while True:
        ok, fs = pipe.try_wait_for_frames(1000)
        if not ok:
            break
        fs = align.process(fs)
        if fs.get_color_frame().get_frame_number() == fs.get_depth_frame().get_frame_number():
            pairs.add(fs.get_color_frame().get_frame_number())
        np.asanyarray(fs.get_color_frame().get_data()).copy()
        np.asanyarray(fs.get_depth_frame().get_data()).copy()
        n += 1
    dt = time.perf_counter() - t0 - 1.0  # the last wait timed out
    pipe.stop()
    return n / max(dt, 1e-9), len(pairs)


def node_playback(path: str, real_time: bool, n_recorded: int) -> dict:
    """Run camera_node on the recording in this process with a subscriber; rate and drops."""
    rclpy.init(args=["--ros-args", "-p", "source:=file", "-p", f"file_path:={path}",
                     "-p", f"real_time:={'true' if real_time else 'false'}", "-p", "max_frame_age_s:=1.0"])
    stamps: list[float] = []
    sub_node = rclpy.create_node("camera_bench_sub")
    sub_node.create_subscription(Image, "/camera/aligned_depth_to_color/image_raw",
                                 lambda m: stamps.append(time.perf_counter()), 50)
    t0 = time.perf_counter()
    node = CameraNode()
    ex = SingleThreadedExecutor()
    ex.add_node(sub_node)
    ex.add_node(node)
    pub_times = []
    orig = node.publish_frame

    def timed(frame):
        orig(frame)
        pub_times.append(time.perf_counter())
    node.publish_frame = timed
    try:
        while node.source.status not in ("ended", "closed") and time.perf_counter() - t0 < 120:
            ex.spin_once(timeout_sec=0.05)
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            ex.spin_once(timeout_sec=0.05)
    finally:
        delivered = node.source.frames_delivered
        node.destroy_node()
        sub_node.destroy_node()
        rclpy.shutdown()
    span = (pub_times[-1] - pub_times[0]) if len(pub_times) > 1 else float("nan")
    return {"published": len(pub_times), "received": len(stamps), "captured_pairs": delivered,
            "dropped": n_recorded - len(pub_times), "publish_fps": (len(pub_times) - 1) / span if span else 0.0}


def run(args) -> int:
    workdir = args.workdir or tempfile.mkdtemp(prefix="camera_bench_")
    os.makedirs(workdir, exist_ok=True)
    rows = []
    for name in args.profiles:
        path = os.path.join(workdir, f"{name}.db3")
        print(f"[{name}] building a {args.frames}-frame recording ...", flush=True)
        build_recording(path, SyntheticConfig(n_frames=args.frames, distinct_frames=4, **PROFILES[name]),
                        keep_frames=False)
        sdk_fps, _ = sdk_playback_fps(path)
        _, sdk_n = sdk_playback_fps(path, real_time=True)
        fast = node_playback(path, real_time=False, n_recorded=args.frames)
        live = node_playback(path, real_time=True, n_recorded=args.frames)
        rows.append((name, sdk_fps, sdk_n, fast, live))
    print(f"\n{'profile':8} {'sdk fps':>8} {'node max fps':>12} {'ratio':>6} {'dropped':>8} "
          f"{'node 30Hz fps':>13} {'dropped':>8} {'received':>8} {'sdk 30Hz pairs':>14}  (of {args.frames} recorded)")
    for name, sdk_fps, sdk_n, fast, live in rows:
        ratio = fast["publish_fps"] / sdk_fps if sdk_fps else float("nan")
        print(f"{name:8} {sdk_fps:8.1f} {fast['publish_fps']:12.1f} {ratio:6.2f} {fast['dropped']:8d} "
              f"{live['publish_fps']:13.1f} {live['dropped']:8d} {live['received']:8d} {sdk_n:14d}")
    print("sdk = pipeline+align alone (non-real-time); node max = camera_node, non-real-time playback "
          "(newest frame wins, so drops are frames decoded faster than published); node 30Hz = real-time "
          "playback at the recording's rate; sdk 30Hz pairs = synchronised pairs the SDK alone delivers in "
          "real-time playback (its own drops). The first frames of a recording are not delivered by SDK playback.")
    return 0
