"""The capture's inputs besides the simulator: a rosbag2 as the RealSense driver records it
(16UC1 millimetres, camera_info), and the live topics through rclpy and DDS; both give the
same observation, and the capture on it matches the simulator's table within a centimetre."""
import threading
import time

import numpy as np
import pytest
import yaml

from spatial_manip.geometry.calibration import load_calibration
from spatial_manip.workspace.capture import capture_workspace
from spatial_manip.sim.capture_cell import accuracy_report, demo_cell, render_cell
from spatial_manip.workspace.sources import observation_from_bag

COLOR, DEPTH, INFO = "/camera/color/image_raw", "/camera/aligned_depth_to_color/image_raw", "/camera/color/camera_info"
FRAME = "camera_color_optical_frame"


@pytest.fixture(scope="module")
def rendered():
    truth = demo_cell()
    obs = render_cell(truth, seed=3)
    return truth, obs, np.round(obs.depth_m * 1000).astype(np.uint16)     # as the driver publishes it


@pytest.fixture()
def calibration(rendered, tmp_path):
    path = tmp_path / "cal.yaml"
    path.write_text(yaml.safe_dump({"mode": "eye_to_hand", "T_base_camera": {"matrix": rendered[1].T_base_cam.tolist()}}))
    return load_calibration(path)


def _messages(obs, depth_mm, t: float):
    from spatial_manip.nodes.convert import array_to_image, intrinsics_to_camera_info, seconds_to_stamp

    stamp = seconds_to_stamp(t)
    return (array_to_image(obs.rgb, "rgb8", FRAME, stamp), array_to_image(depth_mm, "16UC1", FRAME, stamp),
            intrinsics_to_camera_info(obs.intrinsics, FRAME, stamp))


def test_bag_as_the_driver_records_it(rendered, calibration, tmp_path):
    from rclpy.serialization import serialize_message

    from spatial_manip.bags.io import BagWriter

    truth, obs, depth_mm = rendered
    with BagWriter(tmp_path / "bag", "sqlite3") as w:
        for topic, kind in ((INFO, "CameraInfo"), (COLOR, "Image"), (DEPTH, "Image")):
            w.add_topic(topic, f"sensor_msgs/msg/{kind}")
        color, depth, info = _messages(obs, depth_mm, 12.5)
        # the depth of an earlier frame first: only a colour/depth pair with one stamp counts
        w.write(INFO, 1, serialize_message(info))
        w.write(DEPTH, 2, serialize_message(_messages(obs, depth_mm, 12.4)[1]))
        for k, (topic, msg) in enumerate(((COLOR, color), (DEPTH, depth))):
            w.write(topic, 10 + k, serialize_message(msg))
    got = observation_from_bag(tmp_path / "bag", calibration)
    assert got.stamp_s == pytest.approx(12.5)
    assert np.array_equal(got.rgb, obs.rgb)
    assert np.allclose(got.depth_m, depth_mm * 0.001, atol=1e-6)
    assert np.allclose(got.T_base_cam, obs.T_base_cam) and got.intrinsics.fx == pytest.approx(obs.intrinsics.fx)
    report = accuracy_report(capture_workspace(got).scene, truth)
    assert abs(report["table_top_error_m"]) < 0.01 and report["table_size_error_m"] < 0.01


def test_live_topics_over_dds(rendered, calibration):
    rclpy = pytest.importorskip("rclpy")
    from spatial_manip.nodes.live_observation import live_observation

    _, obs, depth_mm = rendered
    rclpy.init()
    stop = threading.Event()
    node = rclpy.create_node("fake_realsense_driver")
    pubs = [node.create_publisher(type(m), topic, 5) for topic, m in zip((COLOR, DEPTH, INFO), _messages(obs, depth_mm, 0))]

    def drive():
        while not stop.is_set():     # 15 Hz with stamps of now, as the driver publishes
            for pub, msg in zip(pubs, _messages(obs, depth_mm, time.time())):
                pub.publish(msg)
            stop.wait(1 / 15)

    thread = threading.Thread(target=drive, daemon=True)
    thread.start()
    try:
        got = live_observation(calibration, color=COLOR, depth=DEPTH, info=INFO, timeout_s=15)
    finally:
        stop.set()
        thread.join()
        node.destroy_node()
        rclpy.shutdown()
    assert np.array_equal(got.rgb, obs.rgb)
    assert np.allclose(got.depth_m, depth_mm * 0.001, atol=1e-6)
    assert np.allclose(got.T_base_cam, obs.T_base_cam)


def test_live_without_a_camera_says_what_is_missing(calibration):
    rclpy = pytest.importorskip("rclpy")
    from spatial_manip.errors import NoObservationError
    from spatial_manip.nodes.live_observation import live_observation

    assert not rclpy.ok()
    with pytest.raises(NoObservationError, match="no synchronized observation within 1 s.*/nobody/color"):
        live_observation(calibration, color="/nobody/color", depth="/nobody/depth", info="/nobody/info", timeout_s=1)
