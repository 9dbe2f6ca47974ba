"""contact_graspnet backend: convention conversion, the install message, one real inference."""
import importlib.util

import numpy as np
import pytest

from spatial_manip.errors import BackendUnavailableError, ErrorCode
from spatial_manip.grasping import BACKENDS, DEFAULT_BACKEND
from spatial_manip.grasping import contact_graspnet as cgn

from synthetic import box_scene

BOX = ((0.5, 0.0, 0.04), (0.05, 0.06, 0.08))  # 5 x 6 x 8 cm block on the table


def test_registered_but_never_the_default():
    assert "contact_graspnet" in BACKENDS and DEFAULT_BACKEND == "antipodal"


def test_a_top_down_cgn_grasp_maps_to_the_graspnet_convention():
    # CGN hand frame: x = baseline (closing), z = approach, y = z x x; origin 0.1034 m behind the contact
    a, b = np.array([0.0, 0.0, -1.0]), np.array([1.0, 0.0, 0.0])
    pose = np.eye(4)
    pose[:3, :3] = np.stack([b, np.cross(a, b), a], axis=1)
    contact, width = np.array([0.1, 0.0, 0.05]), 0.04
    pose[:3, 3] = contact - 0.1034 * a + width / 2 * b
    R, t = cgn.cgn_to_graspnet(pose[None], contact[None], np.array([width]), tip_margin_m=0.01, depth_m=0.02)
    expected = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [-1.0, 0.0, 0.0]])  # columns: approach, closing, x cross y
    np.testing.assert_allclose(R[0], expected, atol=1e-12)
    np.testing.assert_allclose(R[0][:, 0], a)
    np.testing.assert_allclose(R[0][:, 1], b)
    assert np.isclose(np.linalg.det(R[0]), 1.0)
    # fingertips (t + depth * approach) 1 cm past the midpoint of the two contacts
    np.testing.assert_allclose(t[0] + 0.02 * a, contact + width / 2 * b + 0.01 * a, atol=1e-12)


def test_gravity_frame_puts_up_on_z():
    up = np.array([0.0, -0.7, -0.7]) / np.sqrt(0.98)
    R = cgn.gravity_frame(up)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(R @ up, [0, 0, 1], atol=1e-12)
    assert np.isclose(np.linalg.det(R), 1.0)


def test_missing_package_names_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cgn_pytorch" else real(name, *a))
    with pytest.raises(BackendUnavailableError) as e:
        cgn._import_cgn()
    assert "pip install --no-deps cgn-pytorch==0.4.3" in str(e.value)
    assert isinstance(e.value.code, ErrorCode)


@pytest.fixture(scope="module")
def proposer():
    pytest.importorskip("torch")
    pytest.importorskip("trimesh")
    if importlib.util.find_spec("cgn_pytorch") is None:
        pytest.skip("cgn_pytorch not installed (optional backend)")
    from spatial_manip.registry import make

    return make("grasp", "contact_graspnet")


def test_real_cgn_build_matches_our_reading_of_its_convention(proposer):
    import torch

    model = proposer._model
    z1 = torch.tensor([[0.0, 1.0, 0.0]])            # baseline
    z2 = torch.tensor([[0.0, 0.0, 1.0]])            # approach
    contact, w = torch.tensor([[0.2, 0.1, 0.5]]), torch.tensor([0.03])
    pose = model.build_6d_grasps(contact, z1, z2, w, gripper_depth=0.1034).numpy()
    R, t = cgn.cgn_to_graspnet(pose, contact.numpy().astype(float), w.numpy().astype(float), tip_margin_m=0.0, depth_m=0.0)
    np.testing.assert_allclose(R[0][:, 0], [0, 0, 1], atol=1e-6)   # approach
    np.testing.assert_allclose(R[0][:, 1], [0, 1, 0], atol=1e-6)   # closing
    np.testing.assert_allclose(t[0], [0.2, 0.115, 0.5], atol=1e-6)  # contacts' midpoint
    # the hand origin sits gripper_depth behind that midpoint
    np.testing.assert_allclose(pose[0, :3, 3], [0.2, 0.115, 0.5 - 0.1034], atol=1e-6)


def test_inference_on_a_box_returns_wellformed_camera_frame_grasps(proposer):
    pts, lab, T, up = box_scene([BOX])
    gg, cloud = proposer.get_grasp(pts, None, target_mask=lab == 1, up=up)
    assert len(gg) > 0, gg.note
    assert gg.frame_id == "camera_color_optical_frame"
    assert np.all(np.diff(gg.scores) <= 1e-12)
    assert np.all((gg.scores >= proposer.config.min_score) & (gg.scores <= 1))
    assert np.all((gg.widths >= 0) & (gg.widths <= proposer.gripper.max_width_m))
    R = gg.rotation_matrices
    np.testing.assert_allclose(R @ R.transpose(0, 2, 1), np.broadcast_to(np.eye(3), R.shape), atol=1e-5)
    assert np.allclose(np.linalg.det(R), 1.0, atol=1e-5)
    base = gg.transform(T, frame_id="base")
    c, s = np.asarray(BOX[0]), np.asarray(BOX[1])
    # fingertips near the box, every grasp of the target (contacts on it), none approaching from below
    tips = base.translations + base.approaches * base.depths[:, None]
    assert np.all(np.abs(tips - c) <= s / 2 + 0.05)
    assert np.all(base.approaches[:, 2] < 0.5)
    # the same seed gives the same grasps
    gg2, _ = proposer.get_grasp(pts, None, target_mask=lab == 1, up=up)
    np.testing.assert_allclose(gg2.grasp_group_array, gg.grasp_group_array, atol=1e-6)


def test_refine_with_cloud_recentres_a_zero_width_grasp_on_the_object():
    from spatial_manip.grasping.gripper import GripperGeometry

    g = GripperGeometry()
    # a 5 cm wide slab of points along y in [0, 0.05], x in [0, 0.02], thin in z; grasp: approach +x,
    # closing +y, CGN contact at y = 0 with a predicted width of 0
    ys, xs = np.meshgrid(np.arange(0, 0.0501, 0.002), np.arange(0, 0.0201, 0.002))
    target = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], axis=1)
    R = np.eye(3)[None]
    contact = np.array([[0.005, 0.0, 0.0]])
    t = contact + (0.01 - 0.02) * R[:, :, 0]            # tip_margin 0.01, depth 0.02
    t2, w = cgn.refine_with_cloud(R, t, np.array([0.0]), target, g, tip_margin_m=0.01, depth_m=0.02)
    assert abs(w[0] - (0.05 + 2 * 0.004)) < 0.003
    np.testing.assert_allclose((t2 - t)[0], [0.0, 0.025, 0.0], atol=0.003)
    # nothing between the pads: CGN's values stay
    t3, w3 = cgn.refine_with_cloud(R, t + [0, 0, 0.5], np.array([0.03]), target, g, tip_margin_m=0.01, depth_m=0.02)
    np.testing.assert_allclose(w3, [0.03])
    np.testing.assert_allclose(t3, t + [0, 0, 0.5], atol=1e-12)
