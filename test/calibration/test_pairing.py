"""Image <-> robot pose pairing by timestamps, and joint states -> flange pose."""
import json

import numpy as np
import pytest

from spatial_manip.calibration.samples import (SampleError, flange_from_joints, load_samples, pair_by_stamp,
                                               write_samples)
from spatial_manip.control.kinematics import DH_PRESETS, JOINT_NAMES, URKinematics
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import matrix_to_rotvec_pose

KIN = URKinematics(**DH_PRESETS["ur5e"])


def test_each_image_gets_the_state_nearest_its_stamp_not_the_latest():
    robot = np.arange(0.0, 3.0, 0.008)            # 125 Hz joint states for 3 s
    images = [0.503, 1.201, 2.5011]
    p = pair_by_stamp(images, robot, max_skew_s=0.01)
    assert p.unpaired == {}
    for i, r, skew in p.pairs:
        assert abs(robot[r] - images[i]) == pytest.approx(np.min(np.abs(robot - images[i])))
        assert abs(skew) <= 0.004 + 1e-9
    # the latest state (index -1) is not what images 0 and 1 get
    assert [r for _, r, _ in p.pairs][:2] != [len(robot) - 1] * 2


def test_unsorted_robot_stamps_pair_by_value():
    p = pair_by_stamp([1.0, 2.0], [2.001, 5.0, 0.999], max_skew_s=0.005)
    assert [(i, r) for i, r, _ in p.pairs] == [(0, 2), (1, 0)]


def test_a_state_too_far_in_time_leaves_the_image_unpaired_and_says_why():
    p = pair_by_stamp([1.0, 2.0], [1.001, 2.5], max_skew_s=0.02)
    assert [i for i, _, _ in p.pairs] == [0]
    assert "500 ms away (max 20 ms)" in p.unpaired[1]


def test_one_robot_state_serves_one_image_only():
    p = pair_by_stamp([1.0, 1.002], [1.001], max_skew_s=0.02)
    assert len(p.pairs) == 1 and "already paired with image 0" in p.unpaired[1]


def test_no_robot_states_and_negative_skew():
    assert pair_by_stamp([1.0], []).unpaired == {0: "no robot state at all"}
    with pytest.raises(SampleError, match="max_skew_s must be >= 0"):
        pair_by_stamp([1.0], [1.0], -1)


def test_flange_from_named_joints_in_any_order_with_prefix_and_gripper():
    q = np.array([0.1, -1.2, 1.4, -0.9, -1.5, 0.3])
    names = ["gripper_joint"] + [f"ur_{n}" for n in reversed(JOINT_NAMES)]
    pos = [0.04] + list(q[::-1])
    np.testing.assert_allclose(flange_from_joints(names, pos, KIN), KIN.fk_flange(q), atol=1e-12)
    with pytest.raises(SampleError, match="lacks \\['elbow_joint'\\]"):
        flange_from_joints([n for n in JOINT_NAMES if n != "elbow_joint"], q[:5], KIN)


def test_samples_folder_pairs_by_stamp_and_reads_every_pose_kind(tmp_path):
    q = np.array([0.1, -1.2, 1.4, -0.9, -1.5, 0.3])
    T = KIN.fk_flange(q)
    intr = CameraIntrinsics.from_fovy(640, 480, 43.3)
    robot = [{"stamp": 1.0, "joints": q.tolist(), "names": list(JOINT_NAMES)},
             {"stamp": 2.0, "tool0_pose": matrix_to_rotvec_pose(T).tolist()},
             {"stamp": 3.0, "tcp_pose": matrix_to_rotvec_pose(T @ _tcp()).tolist()}]
    write_samples(tmp_path, mode="eye_in_hand", intrinsics=intr,
                  images=[("a.png", 1.001), ("b.png", 2.002), ("c.png", 2.999), ("d.png", 7.0)], robot=robot)
    data = json.loads((tmp_path / "samples.json").read_text())
    data["tcp_offset"] = [0.0, 0.0, 0.15, 0.0, 0.0, 0.5]
    (tmp_path / "samples.json").write_text(json.dumps(data))
    s = load_samples(tmp_path)
    assert s.mode == "eye_in_hand" and [p.name for p in s.image_paths] == ["a.png", "b.png", "c.png"]
    for Tb in s.T_base_tool0:
        np.testing.assert_allclose(Tb, T, atol=1e-9)
    assert "d.png" in s.unpaired and "ms away" in s.unpaired["d.png"]


def _tcp():
    from spatial_manip.control.kinematics import tcp_offset_matrix
    return tcp_offset_matrix([0.0, 0.0, 0.15, 0.0, 0.0, 0.5])


def test_a_tcp_pose_without_the_tcp_offset_is_refused(tmp_path):
    intr = CameraIntrinsics.from_fovy(640, 480, 43.3)
    write_samples(tmp_path, mode="eye_to_hand", intrinsics=intr, images=[("a.png", 1.0)],
                  robot=[{"stamp": 1.0, "tcp_pose": [0.4, 0, 0.3, 0, 3.14, 0]}])
    with pytest.raises(SampleError, match="needs the file's 'tcp_offset'"):
        load_samples(tmp_path)
    with pytest.raises(SampleError, match="samples.json does not exist"):
        load_samples(tmp_path / "nowhere")


def test_malformed_entries_are_named(tmp_path):
    intr = CameraIntrinsics.from_fovy(640, 480, 43.3)
    write_samples(tmp_path, mode="eye_to_hand", intrinsics=intr, images=[("a.png", 1.0)],
                  robot=[{"joints": [0.0] * 6}])
    with pytest.raises(SampleError, match=r"robot\[0\] lacks \['stamp'\]"):
        load_samples(tmp_path)
    data = json.loads((tmp_path / "samples.json").read_text())
    data["images"] = [{"stamp": 1.0}]
    (tmp_path / "samples.json").write_text(json.dumps(data))
    with pytest.raises(SampleError, match=r"images\[0\] lacks \['file'\]"):
        load_samples(tmp_path)
