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
