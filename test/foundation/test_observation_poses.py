"""ObservationBuffer pairs each frame with the camera pose valid when it was taken (pick-51-00002:
the new scene's first frame came before its pose and was perceived through the previous
episode's, 30 cm off). A fixed calibration still holds for every frame."""
import threading
import time

import numpy as np
import pytest

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.observation import CameraPoses, ObservationBuffer

W, H = 8, 6


def _pose(y: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (-0.75, y, 0.6)
    return T


OLD, NEW = _pose(-0.38), _pose(0.33)      # the camera of pick-51-00000, then of pick-51-00002


def _buffer(**kw) -> ObservationBuffer:
    buf = ObservationBuffer(**kw)
    buf.set_intrinsics(CameraIntrinsics.from_fovy(W, H, 43.3))
    return buf


def _frame(buf: ObservationBuffer, stamp_s: float, received_s: float, pose=None) -> None:
    buf.add_color(stamp_s, np.zeros((H, W, 3), np.uint8), received_s)
    buf.add_depth(stamp_s, np.ones((H, W), np.float32), received_s)
    if pose is not None:
        buf.set_extrinsics(pose, stamp_s)


def _now():
    return time.monotonic()


def test_a_new_frame_waits_for_its_own_pose_and_never_takes_the_previous_episodes():
    buf = _buffer()
    _frame(buf, 10.0, _now(), OLD)          # a frame of the previous episode, with its pose
    asked = _now()
    _frame(buf, 12.0, asked + 1e-3)         # the new scene's first frame; its pose is still on the way
    assert buf.wait_pair(timeout_s=0.1, newer_than_s=asked, now=_now) is None
    threading.Timer(0.05, buf.set_extrinsics, (NEW, 12.0)).start()
    obs = buf.wait_pair(timeout_s=2.0, newer_than_s=asked, now=_now)
    assert obs is not None and obs.stamp_s == 12.0 and np.allclose(obs.T_base_cam, NEW)


def test_a_node_that_just_joined_waits_for_the_first_frames_own_pose():
    """The demo at 78df932: the planner held only the start-up scene's latched pose, of a frame it
    never saw, when the reset's first frame came ahead of its pose; it was read through the old
    camera (66 cm off) and the place was refused as off the table."""
    buf = _buffer()
    buf.set_extrinsics(OLD, 10.0)           # latched: its frame was published before we subscribed
    asked = _now()
    _frame(buf, 12.0, asked + 1e-3)         # the new scene's first frame; its pose is on the way
    assert buf.wait_pair(timeout_s=0.1, newer_than_s=asked, now=_now) is None
    threading.Timer(0.05, buf.set_extrinsics, (NEW, 12.0)).start()
    obs = buf.wait_pair(timeout_s=2.0, newer_than_s=asked, now=_now)
    assert obs is not None and obs.stamp_s == 12.0 and np.allclose(obs.T_base_cam, NEW)
    assert buf.poses.per_frame


def test_a_calibration_stamped_once_is_called_fixed_after_a_few_frames_without_their_own():
    poses = CameraPoses()
    poses.add(OLD, 5.0)
    poses.note_frame(10.0)
    assert poses.for_frame(10.0) is None    # it may yet be a per-frame source's
    for s in (10.2, 10.4):
        poses.note_frame(s)
    assert not poses.per_frame and np.allclose(poses.for_frame(10.4), OLD)


def test_an_older_frame_keeps_its_own_pose_when_a_newer_pose_has_come():
    buf = _buffer()
    asked = _now()
    _frame(buf, 10.0, asked + 1e-3, OLD)
    buf.set_extrinsics(NEW, 12.0)           # the pose of a frame not here yet
    obs = buf.wait_pair(timeout_s=0.5, newer_than_s=asked, now=_now)
    assert obs.stamp_s == 10.0 and np.allclose(obs.T_base_cam, OLD)


@pytest.mark.parametrize("stamp", [None, 0.0, 5.0], ids=["tf_static", "unstamped", "latched_at_start"])
def test_a_fixed_calibration_holds_for_every_later_frame(stamp):
    buf = _buffer()
    buf.set_extrinsics(OLD, stamp)
    asked = _now()
    for s in (10.0, 10.2, 10.4):
        _frame(buf, s, asked + 1e-3)
    obs = buf.wait_pair(timeout_s=0.5, newer_than_s=asked, now=_now)
    assert obs.stamp_s == 10.4 and np.allclose(obs.T_base_cam, OLD)
    assert not buf.poses.per_frame and buf.missing() == []


def test_a_per_frame_source_that_stops_sending_poses_is_named_as_missing():
    buf = _buffer()
    _frame(buf, 10.0, _now(), OLD)
    for k in range(5):                      # the colour buffer keeps 5: none of these has its pose
        _frame(buf, 11.0 + k, _now())
    assert any("the camera pose of a recent frame" in m for m in buf.missing())


def test_a_fixed_pose_from_tf_replaces_per_frame_poses():
    poses = CameraPoses()
    poses.note_frame(1.0)
    poses.add(OLD, 1.0)
    assert poses.per_frame and poses.for_frame(1.2) is None
    poses.add(NEW)                          # TF's calibration arrives: it holds for every frame
    assert not poses.per_frame and np.allclose(poses.for_frame(1.2), NEW)


def test_a_pose_with_non_finite_entries_is_refused():
    bad = OLD.copy()
    bad[0, 3] = np.nan
    with pytest.raises(ValueError, match="finite 4x4 transform"):
        CameraPoses().add(bad, 1.0)
