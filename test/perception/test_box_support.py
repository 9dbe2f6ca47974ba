"""Where an object's box ends below: on the plane it rests on, or on its own lowest point when
something hidden holds it up. Under realistic sensing a colour mask holds a border of background
(depth-to-colour misregistration) and flying pixels; a flat book on a pedestal must not be
stretched down to the table through them (the demo's scene), and books leaning on wedges must
keep their bottoms on the table (4521ef4 reverted a mask erosion that lifted them 10 cm)."""
from dataclasses import replace

import numpy as np
import pytest

from spatial_manip.perception.box import detection_from_mask
from spatial_manip.perception.planes import known_plane


def _box(obs, mask, table_z: float = 0.0, table_xy=((-0.5, -1.0), (1.5, 1.0))):
    """The detection's box with the planes a cell's workspace gives: the table, the floor below."""
    planes = [known_plane(table_z, *table_xy), known_plane(table_z - 0.7, (-2.0, -2.0), (3.0, 2.0))]
    return detection_from_mask(obs, mask, planes, id="book", label="book", category="book", score=1.0,
                               backend="test").box


def _bottom(obs, mask, table_z: float = 0.0, table_xy=((-0.5, -1.0), (1.5, 1.0))) -> float:
    return float(_box(obs, mask, table_z, table_xy).corners()[:, 2].min() - table_z)


def test_a_book_lying_on_a_pedestal_keeps_its_own_bottom_through_misregistration_and_flying_pixels():
    """A synthetic frame of the demo's book (lying flat on a 7 cm pedestal), its depth shifted
    against colour and given the L515's noise: the colour mask holds the pedestal's side and
    the table below the book's edge."""
    from spatial_manip.geometry import synthetic as S
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.geometry.noise import L515Noise

    T = S.look_at(np.array([-0.2, 0.0, 0.7]), np.array([0.6, 0.0, 0.05]))
    K = CameraIntrinsics.from_fovy(320, 240, 40.0)
    book = S.SynthBox(np.array([0.6, 0.0, 0.078]), np.array([0.185, 0.111, 0.016]), np.eye(3), (40, 70, 200))
    pedestal = S.SynthBox(np.array([0.62, -0.01, 0.035]), np.array([0.136, 0.116, 0.07]), np.eye(3), (120, 120, 120))
    obs = S.render(K, T, [book, pedestal])
    depth = np.zeros_like(obs.depth_m)
    depth[:-4, 2:] = obs.depth_m[4:, :-2]             # depth 2 px right and 4 px up of colour
    noisy = replace(obs, depth_m=L515Noise().apply(depth, np.random.default_rng(0)))
    assert _bottom(obs, obs.segmentation == 0) == pytest.approx(0.07, abs=0.01)      # clean: as before
    box = _box(noisy, obs.segmentation == 0)
    assert box.size[2] < 0.03 and box.corners()[:, 2].min() > 0.05, (box.center, box.size)   # not down to the table


@pytest.mark.slow
@pytest.mark.parametrize("sensing", ["ideal", "realistic"])
def test_the_demo_scenes_books_rest_where_they_do_in_rendered_frames(sensing):
    """The demo's scene (tabletop seed 1446) rendered in MuJoCo with its episode's sensing draw,
    masks from the simulator's segmentation as the ground-truth segmenter gives them: the book on
    the pedestal ends at the pedestal's top, the two leaning on wedges at the table."""
    from spatial_manip.sim.layouts import sample_tabletop
    from spatial_manip.sim.sensing import sensing_profile
    from spatial_manip.sim.world import SimConfig, SimWorld

    scene = sample_tabletop(np.random.default_rng(1446))
    world = SimWorld(scene, config=SimConfig(sensing=sensing_profile(sensing)), seed=1446)
    try:
        obs = world.render()
    finally:
        world.close()
    corners = scene.get("table").corners()
    table_z, table_xy = float(corners[:, 2].max()), (tuple(corners.min(0)[:2]), tuple(corners.max(0)[:2]))
    index = {oid: i for i, oid in obs.segment_ids.items()}
    # a background pixel or a flying one below the table's edge must not make the floor the plane
    # under a book (under realistic sensing 31 of 86 objects in 7 scenes got the floor or none)
    bottoms = {oid: _bottom(obs, obs.segmentation == index[oid], table_z, table_xy)
               for oid in ("book_1", "book_2", "book_3")}
    assert bottoms["book_3"] == pytest.approx(0.07, abs=0.02), bottoms          # flat, on the pedestal
    if sensing == "ideal":       # under noise the wedges' boxes are still off (issue 36)
        assert max(bottoms["book_1"], bottoms["book_2"]) < 0.05, bottoms     # leaning, on the table


@pytest.mark.slow
def test_the_demo_book_perceived_classically_keeps_its_thickness_and_gets_a_grasp():
    """The demo's first look (recorded frame demo-1446-noise1446-frame1: realistic sensing, its
    calibration shows the table 9 mm up), perceived as the agent does (classical, the library):
    the lying book's box is read on its pedestal's top as the depth shows it (lifted with the
    table, planes.settled_known_planes), not as configured; reaching down to the configured top,
    it was 2.8 cm thick for the book's 1.6, and the grasp service, placing the lower finger under
    that box, found every candidate's knuckle in the table (GRASP_FAILED on 6 of 8 frames)."""
    from pathlib import Path

    from spatial_manip.bench import record_frames
    from spatial_manip.bench.grasp_stability import make_service
    from spatial_manip.bench.reference_bench import TaskResult, perceive_look
    from spatial_manip.grasping.service import TargetBox
    from spatial_manip.paths import config_dir
    from spatial_manip.perception import load_segmenter_config

    look, _ = record_frames.load(Path(__file__).parent / "frames" / "demo-1446-noise1446-frame1")
    config = load_segmenter_config(config_dir() / "params" / "perception.yaml", "classical")[1]
    _, seen = perceive_look(look, config, TaskResult(look.task.id, look.task.instruction))
    truth = look.truth.get(look.task.answer[0])
    book = min((o for o in seen.scene.objects if o.category == "book"),
               key=lambda o: np.linalg.norm(np.asarray(o.center) - truth.center))
    assert np.linalg.norm(np.asarray(book.center)[:2] - truth.center[:2]) < 0.02, book.id
    assert min(book.size) < min(truth.size) + 0.006, (book.size, truth.size)
    box = TargetBox(np.asarray(book.center, float), np.asarray(book.size, float), np.asarray(book.rotation, float),
                    book.id)
    result = make_service().propose_for_box(look.obs.depth_m, look.obs.intrinsics, look.obs.T_base_cam, box,
                                            scene=seen.scene)
    assert result.success, result.message
