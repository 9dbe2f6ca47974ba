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
from spatial_manip.commands.calibrate_live import interactive_session  # noqa: E402
from spatial_manip.calibration.result import pose_error  # noqa: E402
from spatial_manip.nodes.calibration_capture import RosCalibrationCapture  # noqa: E402
from spatial_manip.calibration.samples import SampleError, load_samples  # noqa: E402
from spatial_manip.sim.calibration_cell import CalibrationCell, sample_poses  # noqa: E402
from spatial_manip.control.kinematics import JOINT_NAMES  # noqa: E402

TOPICS = dict(image_topic="/calib_test/color/image_raw", camera_info_topic="/calib_test/color/camera_info",
              joint_states_topic="/calib_test/joint_states")


class FakeDrivers:
    """Publishes what the camera and UR drivers publish, for the arm pose `self.k`; the images
    of each pose are rendered once, up front (MuJoCo's GL context stays on this thread)."""

    def __init__(self, cell: CalibrationCell, qs, rng, topics=TOPICS):
        from sensor_msgs.msg import Image, JointState  # noqa: F401
        from spatial_manip.nodes.convert import array_to_image, intrinsics_to_camera_info

        self.qs = qs
        self.images = [array_to_image(cell.render(q, rng), "rgb8", "camera_color_optical_frame") for q in qs]
        self.info = intrinsics_to_camera_info(cell.intrinsics, "camera_color_optical_frame")
        self.k, self.stop = 0, threading.Event()
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx)
        self.node = rclpy.create_node("calib_fake_drivers", context=self.ctx)
        self.pub_img = self.node.create_publisher(Image, topics["image_topic"], 5)
        self.pub_info = self.node.create_publisher(type(self.info), topics["camera_info_topic"], 5)
        self.pub_js = self.node.create_publisher(JointState, topics["joint_states_topic"], 50)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        from sensor_msgs.msg import JointState
        from spatial_manip.nodes.convert import seconds_to_stamp

        t0, n = time.monotonic(), 0
        while not self.stop.is_set():
            t = 100.0 + n * 0.008                  # the cell's clock: 125 Hz joint states
            k = self.k                             # one pose for this tick's joints and image
            js = JointState(name=list(JOINT_NAMES), position=[float(v) for v in self.qs[k]])
            js.header.stamp = seconds_to_stamp(t)
            self.pub_js.publish(js)
            if n % 8 == 4:                         # ~15 Hz camera, stamped between two joint states
                img = self.images[k]
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


class ArmServer:
    """An ArmMotion server on the fake drivers' node: a WAYPOINTS goal moves the arm to the
    configuration (of those rendered) whose TCP is at the goal pose, else aborts like the arm node."""

    def __init__(self, drivers: FakeDrivers, kin_tcp):
        from rclpy.action import ActionServer
        from rclpy.executors import SingleThreadedExecutor
        from spatial_manip_interfaces.action import ArmMotion

        self.d, self.kin, self.goals = drivers, kin_tcp, []
        self.server = ActionServer(drivers.node, ArmMotion, "/calib_test/arm_motion", self._execute)
        self.ex = SingleThreadedExecutor(context=drivers.ctx)
        self.ex.add_node(drivers.node)
        threading.Thread(target=self.ex.spin, daemon=True).start()

    def _execute(self, handle):
        from spatial_manip.nodes.convert import matrix_from_pose_msg
        from spatial_manip_interfaces.action import ArmMotion

        T = matrix_from_pose_msg(handle.request.waypoints[0])
        self.goals.append(T)
        err = [np.linalg.norm(self.kin.fk(q)[:3, 3] - T[:3, 3]) for q in self.d.qs]
        handle.succeed()
        if min(err) > 1e-3:
            return ArmMotion.Result(success=False, error_code="UNREACHABLE", message="not a rendered pose")
        self.d.k = int(np.argmin(err))
        return ArmMotion.Result(success=True)


def test_automatic_mode_drives_the_arm_through_the_planned_poses(cells, tmp_path, capsys):
    import yaml

    from spatial_manip.paths import config_dir
    from spatial_manip.calibration.auto import eye_in_hand_pose_set
    from spatial_manip.sim.calibration_cell import Q_NOMINAL
    from spatial_manip.cli import main
    from spatial_manip.control.safety import SafetyEnvelope
    from spatial_manip.geometry.calibration import load_calibration
    from spatial_manip.transforms import apply, matrix_to_rotvec_pose, rotvec_pose_to_matrix

    cell = cells("eye_in_hand")
    X, Y = cell.truth()
    centre = apply(Y, BoardConfig().center) + [0.02, -0.01, 0.0]          # known to 2 cm
    mount = matrix_to_rotvec_pose(X) + [0.004, -0.003, 0.0, 0.02, 0.0, -0.01]   # the bracket's drawing
    envelope = SafetyEnvelope.from_config(yaml.safe_load((config_dir() / "params" / "arm.yaml").read_text()))
    plan = eye_in_hand_pose_set(centre, rotvec_pose_to_matrix(mount), envelope.kin, n=12, q_ref=Q_NOMINAL,
                                envelope=envelope)
    topics = {k: v.replace("/calib_test/", "/calib_auto/") for k, v in TOPICS.items()}   # apart from the other test's
    d = FakeDrivers(cell, [Q_NOMINAL] + plan, np.random.default_rng(5), topics)   # the arm starts at Q_NOMINAL
    server = ArmServer(d, envelope.kin)
    out = tmp_path / "cal.yaml"
    try:
        status = main(["calibrate", "--ros", "--auto", "--mode", "eye_in_hand", "--poses", "12", "--settle-s", "0.05",
                       "--board-center", *map(str, centre), "--camera-mount", *map(str, mount),
                       "--arm-action", "/calib_test/arm_motion", "--capture-dir", str(tmp_path / "cap"), "--out", str(out),
                       "--image-topic", topics["image_topic"], "--camera-info-topic", topics["camera_info_topic"],
                       "--joint-states-topic", topics["joint_states_topic"]])
    finally:
        server.ex.shutdown()
        d.close()
    text = capsys.readouterr()
    assert status == 0, text.err
    assert len(server.goals) == 12 and "12 poses planned inside the safety envelope" in text.out
    mm, deg = pose_error(load_calibration(out).T_mount_camera, X)
    assert mm < 3.0 and deg < 0.3, (mm, deg)
