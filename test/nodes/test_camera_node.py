"""camera_node as a separate process playing a synthetic recording; this test subscribes."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
from geometry_msgs.msg import PoseStamped  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import CameraInfo, Image  # noqa: E402

from node_process import stop  # noqa: E402
from ros_helpers import plain_node  # noqa: E402
from spatial_manip.nodes.convert import image_to_array  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CALIB = os.path.join(ROOT, "config", "calibration", "eye_to_hand.example.yaml")


@pytest.fixture
def ros_node():
    with plain_node("camera_node_test") as node:
        yield node


def start_camera_node(*params):
    args = [sys.executable, "-m", "spatial_manip.nodes.camera_node", "--ros-args"]
    for p in params:
        args += ["-p", p]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.ros
def test_node_publishes_recording_like_the_realsense_driver(vga_recording, ros_node):
    got = {"color": [], "depth": [], "cinfo": [], "dinfo": [], "extr": []}
    ros_node.create_subscription(Image, "/camera/color/image_raw", got["color"].append, 10)
    ros_node.create_subscription(Image, "/camera/aligned_depth_to_color/image_raw", got["depth"].append, 10)
    ros_node.create_subscription(CameraInfo, "/camera/color/camera_info", got["cinfo"].append, 10)
    ros_node.create_subscription(CameraInfo, "/camera/aligned_depth_to_color/camera_info", got["dinfo"].append, 10)
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    ros_node.create_subscription(PoseStamped, "/camera/extrinsics", got["extr"].append, latched)
    proc = start_camera_node("source:=file", f"file_path:={vga_recording.path}", "real_time:=true",
                             "repeat_playback:=true", f"calibration_file:={CALIB}", "max_frame_age_s:=1.0")
    def pairs() -> int:      # colour and depth of the same instant (under load, some drop)
        stamp = lambda m: (m.header.stamp.sec, m.header.stamp.nanosec)  # noqa: E731
        return len({stamp(m) for m in got["depth"]} & {stamp(m) for m in got["color"]})

    try:
        deadline = time.monotonic() + 60
        # every message the checks below read, camera infos too (none may be assumed to have come)
        while ((len(got["depth"]) < 8 or pairs() < 3 or not got["extr"] or not got["cinfo"] or not got["dinfo"])
               and time.monotonic() < deadline):
            rclpy.spin_once(ros_node, timeout_sec=0.1)
            assert proc.poll() is None, stop(proc)
    finally:
        log = stop(proc)
    assert len(got["depth"]) >= 8, log
    assert got["extr"] and got["extr"][0].header.frame_id == "base"
    assert got["extr"][0].pose.position.x == pytest.approx(1.2)

    by_stamp = {round(f.stamp_ms * 1e6): f for f in vga_recording.frames}
    colors = {(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec): m for m in got["color"]}
    checked = 0
    for dmsg in got["depth"]:
        ns = dmsg.header.stamp.sec * 10**9 + dmsg.header.stamp.nanosec
        rec = by_stamp[ns]  # sensor time (global_time) is the ROS stamp, to the nanosecond
        assert dmsg.encoding == "16UC1" and dmsg.header.frame_id == "camera_color_optical_frame"
        depth = image_to_array(dmsg)
        want_mm = np.rint(rec.depth_raw * 0.25).astype(np.uint16)   # L515 0.25 mm units -> mm
        ok = depth > 0
        assert (depth[ok] == want_mm[ok]).mean() > 0.999
        if ns in colors:
            cmsg = colors[ns]
            assert cmsg.encoding == "rgb8" and cmsg.header.frame_id == "camera_color_optical_frame"
            assert np.array_equal(image_to_array(cmsg), rec.rgb)
            checked += 1
    assert checked >= 3  # colour and depth of the same instant both arrived (the rest: order/QoS)
    ci = vga_recording.color_intrinsics
    for info in (got["cinfo"][0], got["dinfo"][0]):
        assert (info.width, info.height) == (ci.width, ci.height)
        assert np.allclose(np.array(info.k), ci.K.reshape(-1), atol=1e-3)
        assert info.distortion_model == "plumb_bob" and len(info.d) == 5
        assert info.header.frame_id == "camera_color_optical_frame"


@pytest.mark.parametrize("text, names", [
    ("T_base_camera: {translation: [.nan, 0, 0.8], rotation_xyzw: [0, 0, 0, 1]}\n", ["translation", "nan"]),
    ("T_base_camera: {translation: [1200, 0, 800], rotation_xyzw: [0, 0, 0, 1]}\n", ["translation", "1200.0"]),
])
def test_a_bad_calibration_file_stops_the_node_with_one_line(tmp_path, text, names):
    """It crashed mid-traceback with an unrelated last line ('CameraNode' object has no
    attribute '_stop'), and millimetres were accepted."""
    cal = tmp_path / "cal.yaml"
    cal.write_text(text)
    proc = start_camera_node("source:=file", "file_path:=/nonexistent.bag", f"calibration_file:={cal}")
    out, _ = proc.communicate(timeout=90)    # a start-up on a loaded machine
    assert proc.returncode == 1, out
    assert "Traceback" not in out and out.strip().splitlines()[-1].startswith("CameraNode: refused to start: ")
    assert all(n in out for n in [str(cal), *names]), out


def test_an_unknown_parameter_stops_the_node(tmp_path):
    params = tmp_path / "camera.yaml"
    params.write_text("camera_node:\n  ros__parameters:\n    depth_widht: 1024\n")
    proc = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.camera_node", "--ros-args",
                             "--params-file", str(params)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate(timeout=90)    # a start-up on a loaded machine
    assert proc.returncode == 1 and "Traceback" not in out, out
    assert all(n in out for n in ["depth_widht", str(params), "1024", "depth_width"]), out
