"""Calibration from a recorded rosbag2: the camera runs at 2.5 Hz the whole time, while the arm
rests at each pose and moves between them; only still images are used."""
import os
import re

import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")

from spatial_manip.calibration.bag import still_periods  # noqa: E402
from spatial_manip.sim.calibration_cell import Q_NOMINAL, sample_poses  # noqa: E402
from spatial_manip.cli import main  # noqa: E402
from spatial_manip.control.kinematics import JOINT_NAMES  # noqa: E402
from spatial_manip.geometry.calibration import load_calibration  # noqa: E402
from spatial_manip.calibration.result import pose_error  # noqa: E402

DWELL_S, MOVE_S = 0.6, 0.4


def _arm_at(t, qs):
    """Joints at time t: rest at qs[k] for DWELL_S, then a linear move to qs[k + 1]."""
    k, s = divmod(t, DWELL_S + MOVE_S)
    k = int(k)
    q0 = qs[min(k, len(qs) - 1)]
    if s <= DWELL_S or k + 1 >= len(qs):
        return q0
    return q0 + (s - DWELL_S) / MOVE_S * (qs[k + 1] - q0)


class _Messages:
    """sensor_msgs as a recorder stores them: CDR from the rosbags typestore (rclpy's
    serialize_message pads JointState with 8 stray bytes that bag readers reject; the bytes on
    the wire, which a recorder stores, are exact)."""

    def __init__(self, intr):
        from spatial_manip.bags.typestore import project_typestore

        self.ts, self.intr = project_typestore(), intr
        self.T = self.ts.types

    def _header(self, t):
        T = self.T
        return T["std_msgs/msg/Header"](stamp=T["builtin_interfaces/msg/Time"](sec=int(t), nanosec=int(round(t % 1 * 1e9))),
                                        frame_id="camera_color_optical_frame")

    def joints(self, t, q):
        msg = self.T["sensor_msgs/msg/JointState"](header=self._header(t), name=list(JOINT_NAMES), position=np.asarray(q, float),
                                                   velocity=np.zeros(0), effort=np.zeros(0))
        return self.ts.serialize_cdr(msg, "sensor_msgs/msg/JointState")

    def image(self, t, rgb):
        msg = self.T["sensor_msgs/msg/Image"](header=self._header(t), height=rgb.shape[0], width=rgb.shape[1], encoding="rgb8",
                                              is_bigendian=0, step=rgb.shape[1] * 3, data=rgb.reshape(-1))
        return self.ts.serialize_cdr(msg, "sensor_msgs/msg/Image")

    def info(self, t):
        i, T = self.intr, self.T
        roi = T["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0, do_rectify=False)
        msg = T["sensor_msgs/msg/CameraInfo"](header=self._header(t), height=i.height, width=i.width, distortion_model="plumb_bob",
                                              d=np.zeros(5), k=i.K.reshape(-1), r=np.eye(3).reshape(-1),
                                              p=np.c_[i.K, np.zeros(3)].reshape(-1), binning_x=0, binning_y=0, roi=roi)
        return self.ts.serialize_cdr(msg, "sensor_msgs/msg/CameraInfo")


TOPICS = {"/camera/color/image_raw": "sensor_msgs/msg/Image", "/camera/color/camera_info": "sensor_msgs/msg/CameraInfo",
          "/joint_states": "sensor_msgs/msg/JointState"}


def _record(bag, cell, qs, rng, t0=1000.0):
    """125 Hz joint states and a 2.5 Hz camera that also runs while the arm moves."""
    from spatial_manip.bags.io import BagWriter

    msgs = _Messages(cell.intrinsics)
    with BagWriter(bag) as w:
        for topic, kind in TOPICS.items():
            w.add_topic(topic, kind)
        for n in range(int(len(qs) * (DWELL_S + MOVE_S) / 0.008)):
            t = t0 + n * 0.008
            w.write("/joint_states", int(t * 1e9), msgs.joints(t, _arm_at(t - t0, qs)))
            if n % 50 == 3:
                exposure = t + 0.002                          # received 30 ms later
                w.write("/camera/color/image_raw", int((t + 0.03) * 1e9),
                        msgs.image(exposure, cell.render(_arm_at(exposure - t0, qs), rng)))
                w.write("/camera/color/camera_info", int((t + 0.03) * 1e9), msgs.info(exposure))


def test_calibrate_from_a_bag_uses_one_still_image_per_pose(tmp_path, capsys, cells):
    rng = np.random.default_rng(21)
    cell = cells("eye_to_hand")
    qs = sample_poses(cell, 11, rng)
    _record(tmp_path / "bag", cell, qs, rng)
    truth = cell.truth()[0]
    out = tmp_path / "cal.yaml"
    assert main(["calibrate", "--bag", str(tmp_path / "bag"), "--out", str(out), "--capture-dir", str(tmp_path / "s")]) == 0
    text = capsys.readouterr().out
    assert "11 images taken while the arm was still" in text, text
    used, rejected = (int(v) for v in re.search(r"(\d+) samples used, (\d+) rejected", text).groups())
    assert used + rejected == 11 and used >= 10, text
    mm, deg = pose_error(load_calibration(out).T_mount_camera, truth)
    assert mm < 3.0 and deg < 0.3, (mm, deg)


def test_still_periods_need_the_arm_at_rest_long_enough():
    t = np.arange(0, 3, 0.008)
    q = np.array([_arm_at(s, [Q_NOMINAL, Q_NOMINAL + 0.3, Q_NOMINAL - 0.2]) for s in t])
    periods = still_periods(t, q)
    assert len(periods) == 3 and all(b - a >= 0.55 for a, b in periods)
    # only the last rest (open-ended) lasts 0.7 s
    assert still_periods(t, q, min_duration_s=0.7) == [periods[-1]]


def test_a_bag_without_the_topics_is_named(tmp_path, capsys):
    from spatial_manip.bags.io import BagWriter

    with BagWriter(tmp_path / "empty") as w:
        w.add_topic("/other", "std_msgs/msg/String")
    assert main(["calibrate", "--bag", str(tmp_path / "empty")]) == 2
    assert "has no topic /camera/color/image_raw, /camera/color/camera_info, /joint_states" in capsys.readouterr().err
