"""box_2d_to_box_3d against analytic ground truth: ray-cast boxes on a table, random poses."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.geometry import synthetic as S
from spatial_manip.geometry.boxes import BoxFitError, SupportPlane, box_2d_to_box_3d, min_area_rect_angle
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.noise import L515Noise

INTR = CameraIntrinsics.from_fovy(640, 480, 55)


def _yaw_err_deg(R, truth_R):
    a = np.arctan2(R[1, 0], R[0, 0]) - np.arctan2(truth_R[1, 0], truth_R[0, 0])
    return abs(np.degrees((a + np.pi / 2) % np.pi - np.pi / 2))


def _cases(seed, n, noise=None, intr=INTR):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        b = S.random_lying_box(rng)
        obs = S.render(intr, S.random_camera(rng), [b])
        bb = S.box_pixel_bounds(obs, 0)
        seg = obs.segmentation == 0
        if bb is None or seg.sum() < 300 or seg[[0, -1]].any() or seg[:, [0, -1]].any():
            continue  # invisible, tiny, or cut by the image border: not measurable
        if noise is not None:
            obs.depth_m = noise.apply(obs.depth_m, rng)
        out.append((b, obs, bb))
    return out


@pytest.mark.parametrize("use_mask", [False, True])
def test_noiseless_lying_boxes_centre_size_yaw(use_mask):
    for b, obs, bb in _cases(11, 25):
        r = box_2d_to_box_3d(obs, mask=obs.segmentation == 0) if use_mask else box_2d_to_box_3d(obs, bb)
        assert r.mode == "yaw"
        assert np.linalg.norm(r.center - b.center) <= 0.005
        assert np.abs(r.size - b.size).max() <= 0.005
        assert _yaw_err_deg(r.rotation, b.rotation) <= 3.0
        assert r.quality > 0.8 and r.n_points > 100


def test_noiseless_at_1024x768():
    intr = CameraIntrinsics.from_fovy(1024, 768, 55)
    for b, obs, bb in _cases(12, 6, intr=intr):
        r = box_2d_to_box_3d(obs, bb)
        assert np.linalg.norm(r.center - b.center) <= 0.005 and np.abs(r.size - b.size).max() <= 0.005


def test_l515_noise_centre_within_15mm_on_95_percent():
    errors, size_errors = [], []
    for b, obs, bb in _cases(13, 40, noise=L515Noise()):
        r = box_2d_to_box_3d(obs, bb)
        errors.append(np.linalg.norm(r.center - b.center))
        size_errors.append(np.abs(r.size - b.size).max())
    assert np.mean(np.array(errors) <= 0.015) >= 0.95, np.round(np.sort(errors)[-5:], 4)
    # not in the issue, but a grasp needs it: the noise-corrected top keeps sizes within 1 cm
    assert np.percentile(size_errors, 95) <= 0.010, np.round(np.sort(size_errors)[-5:], 4)


@pytest.mark.parametrize("tilt_deg", [20, 40])
def test_tilted_box_gets_full_orientation(tilt_deg):
    size = np.array([0.2, 0.14, 0.03])
    R = Rotation.from_euler("zy", [0.4, tilt_deg], degrees=True).as_matrix()
    corners = (np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * size / 2) @ R.T
    b = S.SynthBox(np.array([0.5, 0.0, -corners[:, 2].min()]), size, R)
    obs = S.render(INTR, S.look_at([0.9, 0.4, 0.8], [0.5, 0, 0.05]), [b])
    r = box_2d_to_box_3d(obs, S.box_pixel_bounds(obs, 0))
    assert r.mode == "full"
    assert np.linalg.norm(r.center - b.center) < 0.008
    np.testing.assert_allclose(np.sort(r.size), np.sort(size), atol=0.006)
    assert np.degrees(np.arccos(abs(r.rotation[:, 2] @ [0, 0, 1]))) == pytest.approx(tilt_deg, abs=3)


@pytest.mark.parametrize("tilt_deg", [35, 50, 65])
def test_a_book_leaning_towards_the_camera_seen_by_its_edges_gets_its_lean(tilt_deg):
    """Seen down its length, a leaning book shows its top edge and one side edge, no cover: no
    face for principal axes, and an upright box would call it standing. Its edges lie on the
    faces of the box leaning with it."""
    from spatial_manip.geometry.relations import book_tilt_deg
    from spatial_manip.scene import SceneObject

    size = np.array([0.20, 0.03, 0.28])          # width, thickness, length
    R = Rotation.from_euler("x", tilt_deg, degrees=True).as_matrix()
    corners = (np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * size / 2) @ R.T
    b = S.SynthBox(np.array([0.5, 0.0, -corners[:, 2].min()]), size, R)
    eye = b.center + 0.6 * R[:, 2] + [0.2, 0, 0]   # above its top end, a little to one side
    obs = S.render(INTR, S.look_at(eye, b.center), [b])
    r = box_2d_to_box_3d(obs, mask=obs.segmentation == 0)
    assert r.mode == "full"
    seen = SceneObject("b", "book", "book", r.center, r.size, r.rotation)
    assert book_tilt_deg(seen) == pytest.approx(tilt_deg, abs=3)
    assert r.size.min() == pytest.approx(0.03, abs=0.004)     # its thickness, not its depth


def test_flying_pixels_and_holes_are_rejected():
    rng = np.random.default_rng(5)
    b, obs, bb = _cases(14, 1)[0]
    noisy = L515Noise(sigma_base_m=0, sigma_quad_m_per_m2=0, flying_prob=1.0, quantum_m=0).apply(obs.depth_m, rng)
    obs.depth_m = noisy
    r = box_2d_to_box_3d(obs, bb)
    assert np.linalg.norm(r.center - b.center) <= 0.006 and np.abs(r.size - b.size).max() <= 0.010


def test_box_and_scene_object_and_dict():
    b, obs, bb = _cases(15, 1)[0]
    r = box_2d_to_box_3d(obs, bb)
    o = r.to_scene_object("o1", "book")
    assert o.category == "book" and np.allclose(o.center, r.center) and o.extra["fit_mode"] == "yaw"
    d = r.to_dict()
    assert d["frame_id"] == "base" and len(d["rotation"]) == 3 and d["support_plane"]["normal"][2] > 0.99
    assert np.allclose(np.linalg.det(r.rotation), 1) and r.rotation[2, 2] > 0.99
    assert r.points.shape == (r.n_points, 3) and r.pixels.shape == (r.n_points, 2)


def test_without_plane_uses_gravity_and_known_plane_is_used():
    b, obs, bb = _cases(16, 1)[0]
    known = SupportPlane(np.array([0, 0, 1.0]), 0.0)
    r = box_2d_to_box_3d(obs, mask=obs.segmentation == 0, support_plane=known)
    assert r.mode == "yaw" and abs(r.center[2] - b.center[2]) < 0.003
    g = box_2d_to_box_3d(obs, mask=obs.segmentation == 0, support_plane=False)
    assert g.mode in ("gravity", "full") and g.support_plane is None
    assert g.center[2] >= b.center[2] - 0.002  # only the visible top and sides: centre biased up


def test_errors_say_what_went_wrong():
    b, obs, bb = _cases(17, 1)[0]
    with pytest.raises(BoxFitError, match="valid depth"):
        box_2d_to_box_3d(obs, [0, 0, 3, 3])
    with pytest.raises(BoxFitError, match="2x2"):
        box_2d_to_box_3d(obs, [10, 10, 10, 40])
    with pytest.raises(ValueError, match="mask is"):
        box_2d_to_box_3d(obs, mask=np.ones((5, 5), bool))
    obs.depth_m[:] = 0
    with pytest.raises(BoxFitError):
        box_2d_to_box_3d(obs, bb)


def test_min_area_rect_angle_recovers_rotation():
    rng = np.random.default_rng(0)
    pts = rng.uniform([-0.1, -0.03], [0.1, 0.03], (500, 2))
    a = 0.3
    rot = pts @ np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    got = min_area_rect_angle(rot)
    assert min(abs(got - a), abs(got - a + np.pi / 2), abs(got - a - np.pi / 2)) < 0.02
