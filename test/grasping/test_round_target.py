"""A round object standing on the table shows the camera its nearer half: the box fitted to those
points is short on the far side and its centre lies toward the camera (a standing bottle's by
1.7 cm, objects-92-00004: grasps centred on it closed in front of its axis). The grasp proposer
completes its section about the circle its front follows (antipodal.round_completed); flat faces,
seen square or at a slant, and a box's corner keep their boxes."""
import numpy as np
import pytest

from spatial_manip.grasping.antipodal import round_completed
from spatial_manip.grasping.base import ObjectBox

EYE = np.array([-0.8, -0.4, 0.6])
UP = np.array([0.0, 0.0, 1.0])


def _seen(points: np.ndarray, normals: np.ndarray, rng, sigma_m: float) -> np.ndarray:
    """The points whose surface faces the camera, each moved along its ray by the range noise."""
    facing = np.einsum("ij,ij->i", normals, EYE - points) > 0
    p = points[facing]
    ray = (p - EYE) / np.linalg.norm(p - EYE, axis=1, keepdims=True)
    return p + ray * rng.normal(0.0, sigma_m, (len(p), 1))


def _bottle(centre_xy, radius, height, rng, sigma_m=0.003):
    """A cylinder with a neck a third as wide on top (its top is mostly hidden behind its front)."""
    a = rng.uniform(0, 2 * np.pi, 4000)
    z = rng.uniform(0, height, 4000)
    side = np.stack([centre_xy[0] + radius * np.cos(a), centre_xy[1] + radius * np.sin(a), z], axis=1)
    normals = np.stack([np.cos(a), np.sin(a), np.zeros_like(a)], axis=1)
    rr, t = radius / 3 * np.sqrt(rng.uniform(0, 1, 800)), rng.uniform(0, 2 * np.pi, 800)
    top = np.stack([centre_xy[0] + rr * np.cos(t), centre_xy[1] + rr * np.sin(t), np.full(800, height)], axis=1)
    return _seen(np.vstack([side, top]), np.vstack([normals, np.tile(UP, (800, 1))]), rng, sigma_m)


def _cuboid(centre_xy, size, yaw, rng, sigma_m=0.003):
    R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1.0]])
    pts, normals = [], []
    for k in range(3):
        for s in (-1, 1):
            q = rng.uniform(-0.5, 0.5, (1500, 3)) * size
            q[:, k] = s * size[k] / 2
            n = np.zeros(3)
            n[k] = s
            pts.append(q @ R.T + [centre_xy[0], centre_xy[1], size[2] / 2])
            normals.append(np.tile(R @ n, (1500, 1)))
    return _seen(np.vstack(pts), np.vstack(normals), rng, sigma_m)


def _measured_box(points: np.ndarray) -> ObjectBox:
    """The box a yaw fit gives the seen points (level axes across and along the line of sight), in
    the camera's frame (the proposer's: the camera at the origin, axes as the base's)."""
    d = points.mean(axis=0) - EYE
    d[2] = 0
    d /= np.linalg.norm(d)
    R = np.stack([np.cross(UP, d), d, UP], axis=1)
    local = points @ R
    lo, hi = np.percentile(local, 2, axis=0), np.percentile(local, 98, axis=0)
    lo[2] = 0.0
    return ObjectBox(R @ ((lo + hi) / 2) - EYE, hi - lo, R)


@pytest.mark.parametrize("radius", [0.0215, 0.035])
def test_a_standing_bottles_box_is_centred_on_its_axis_and_as_deep_as_wide(radius):
    rng = np.random.default_rng(3)
    axis = np.array([0.45, -0.15])
    seen = _bottle(axis, radius, 0.15, rng)
    box = _measured_box(seen)
    axis = axis - EYE[:2]
    assert np.linalg.norm(box.center[:2] - axis) > 0.3 * radius     # the front-only box sits toward the camera
    done = round_completed(box, seen - EYE, UP)
    assert np.linalg.norm(done.center[:2] - axis) < 0.25 * radius
    assert np.allclose(done.size[:2], 2 * radius, atol=0.3 * radius)
    assert done.size[2] == pytest.approx(box.size[2])


@pytest.mark.parametrize("yaw_deg", [0.0, 25.0, 45.0])
def test_a_cuboids_box_is_kept(yaw_deg):
    """A carton seen face on, at a slant and corner on: its front is no arc."""
    rng = np.random.default_rng(4)
    pts = _cuboid((0.5, -0.1), np.array([0.06, 0.06, 0.14]), np.radians(yaw_deg) + np.arctan2(0.3, 1.3), rng)
    box = _measured_box(pts)
    assert round_completed(box, pts - EYE, UP) is box




@pytest.mark.slow
def test_the_recorded_standing_bottles_grasps_close_about_its_axis():
    """frames/objects-92-00004: grasps for the white bottle's box as perception measures it (front
    only, 1.7 cm toward the camera) put their pads, at the median, within 1 cm of the bottle's axis
    by the simulator's truth (1.5 cm with the box as measured)."""
    from pathlib import Path

    from spatial_manip.bench import record_frames
    from spatial_manip.bench.grasp_stability import make_service
    from spatial_manip.bench.reference_bench import TaskResult, perceive_look
    from spatial_manip.grasping.service import TargetBox
    from spatial_manip.paths import config_dir
    from spatial_manip.perception import load_segmenter_config

    look, _ = record_frames.load(Path(__file__).parent / "frames" / "objects-92-00004")
    config = load_segmenter_config(config_dir() / "params" / "perception.yaml", "classical")[1]
    _, seen = perceive_look(look, config, TaskResult(look.task.id, look.task.instruction))
    bottle = look.truth.get("bottle_1")
    det = min(seen.scene.objects, key=lambda o: np.linalg.norm(o.center - bottle.center))
    assert det.label == "bottle"
    service = make_service()
    box = TargetBox(det.center, det.size, det.rotation, det.id)
    res = service.propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, box, scene=seen.scene)
    assert res.success, res.message
    tcp = service.gripper.tcp_poses(res.grasps.matrices(), res.grasps.depths)
    assert np.median(np.linalg.norm(tcp[:, :2, 3] - bottle.center[:2], axis=1)) < 0.01
