"""Live capture through real rclpy/DDS: a publisher plays the camera driver (MuJoCo renders of the
board, camera_info) and the UR driver (/joint_states at 125 Hz); the interactive session takes
poses on 'Enter', pairs them by stamp, saves the folder and solves it."""
import argparse
import os
import threading
import time

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
os.environ.setdefault("MUJOCO_GL", "egl")

from spatial_manip.calibration.board import BoardConfig  # noqa: E402
from spatial_manip.calibration.live import interactive_session  # noqa: E402
from spatial_manip.calibration.result import pose_error  # noqa: E402
from spatial_manip.calibration.ros_capture import RosCalibrationCapture  # noqa: E402
from spatial_manip.calibration.samples import SampleError, load_samples  # noqa: E402
from spatial_manip.calibration.sim import CalibrationCell, sample_poses  # noqa: E402
from spatial_manip.control.kinematics import JOINT_NAMES  # noqa: E402

TOPICS = dict(image_topic="/calib_test/color/image_raw", camera_info_topic="/calib_test/color/camera_info",
              joint_states_topic="/calib_test/joint_states")


class FakeDrivers:
    """Publishes what the camera and UR drivers publish, for the arm pose `self.k`; the images
    of each pose are rendered once, up front (MuJoCo's GL context stays on this thread)."""

    def __init__(self, cell: CalibrationCell, qs, rng):
        from sensor_msgs.msg import Image, JointState  # noqa: F401
        from spatial_manip.nodes.convert import array_to_image, intrinsics_to_camera_info

        self.qs = qs
        self.images = [array_to_image(cell.render(q, rng), "rgb8", "camera_color_optical_frame") for q in qs]
        self.info = intrinsics_to_camera_info(cell.intrinsics, "camera_color_optical_frame")
        self.k, self.stop = 0, threading.Event()
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx)
        self.node = rclpy.create_node("calib_fake_drivers", context=self.ctx)
        self.pub_img = self.node.create_publisher(Image, TOPICS["image_topic"], 5)
        self.pub_info = self.node.create_publisher(type(self.info), TOPICS["camera_info_topic"], 5)
        self.pub_js = self.node.create_publisher(JointState, TOPICS["joint_states_topic"], 50)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        from sensor_msgs.msg import JointState
        from spatial_manip.nodes.convert import seconds_to_stamp

        t0, n = time.monotonic(), 0
        while not self.stop.is_set():
            t = 100.0 + n * 0.008                  # the cell's clock: 125 Hz joint states
            js = JointState(name=list(JOINT_NAMES), position=[float(v) for v in self.qs[self.k]])
            js.header.stamp = seconds_to_stamp(t)
            self.pub_js.publish(js)
            if n % 8 == 4:                         # ~15 Hz camera, stamped between two joint states
                img = self.images[self.k]
                img.header.stamp = seconds_to_stamp(t + 0.003)
                self.info.header.stamp = img.header.stamp
                self.pub_img.publish(img)
                self.pub_info.publish(self.info)
            n += 1
            time.sleep(max(0.0, t0 + n * 0.008 - time.monotonic()))

    def close(self):
        self.stop.set()
        self.thread.join(timeout=2)
        self.node.destroy_node()
        rclpy.shutdown(context=self.ctx)


@pytest.fixture(scope="module")
def drivers(cells):
    rng = np.random.default_rng(11)
    cell = cells("eye_to_hand")
    qs = sample_poses(cell, 11, rng)
    d = FakeDrivers(cell, qs, rng)
    truth = cell.truth()[0]
    yield d, truth
    d.close()


def test_interactive_session_over_ros_recovers_the_camera(drivers, tmp_path, capsys):
    d, truth = drivers
    answers = iter([""] * len(d.qs) + ["s"])

    def ask(prompt):
        a = next(answers)
        if a == "" and ask.taken:
            d.k += 1                     # the user moves the arm to the next pose and holds it
            time.sleep(0.15)
        ask.taken = True
        return a
    ask.taken = False
    args = argparse.Namespace(mode="eye_to_hand", capture_dir=str(tmp_path), robot_model="ur5e", **TOPICS)
    report = interactive_session(args, BoardConfig(), 0.02, {"min_samples": 11}, ask=ask)
    out = capsys.readouterr().out
    assert out.count("kept img_") == len(d.qs) and "take at least 11 more" in out
    assert len(report.solution.inliers) == len(d.qs)
    mm, deg = pose_error(report.T_mount_camera, truth)
    assert mm < 3.0 and deg < 0.3, (mm, deg)
    saved = load_samples(tmp_path, max_skew_s=0.02)     # the folder solves again offline, paired the same
    assert len(saved.image_paths) == len(d.qs) and all(abs(s) <= 0.005 for s in saved.skew_s)


def test_a_silent_camera_topic_is_named():
    cap = RosCalibrationCapture(image_topic="/calib_test/nothing_here", info_topic="/calib_test/no_info",
                                joint_topic="/calib_test/no_joints")
    try:
        with pytest.raises(SampleError, match="no camera_info on /calib_test/no_info within 0.3 s"):
            cap.intrinsics(timeout_s=0.3)
        with pytest.raises(SampleError, match="no new image on /calib_test/nothing_here within the timeout"):
            cap.take(timeout_s=0.3)
    finally:
        cap.close()
