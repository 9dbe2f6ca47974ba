"""Contract tests of the segmenters on MuJoCo renders of known scenes: every object found once,
centres within 2 cm, yaw within a few degrees for flat objects, labels and book sizes assigned."""
from dataclasses import replace

import numpy as np
import pytest

from spatial_manip.errors import CanceledError
from spatial_manip.perception import SegmentationHints, detections_to_scene, make_segmenter
from spatial_manip.perception.base import ExpectedObject

BACKENDS = ["ground_truth", "classical"]


def _yaw_error_deg(a_rad: float, b_rad: float) -> float:
    # A box's yaw is defined modulo 180 degrees (front and back look alike).
    d = np.degrees(a_rad - b_rad) % 180.0
    return float(min(d, 180.0 - d))


def _check_against_truth(dets, scene, *, centre_tol_m=0.02, yaw_tol_deg=3.0):
    truth = [o for o in scene.objects if o.category != "table"]
    assert sorted(d.id for d in dets) == sorted(o.id for o in truth), [(d.id, d.label) for d in dets]
    for d in dets:
        o = scene.get(d.id)
        assert d.label == o.label and d.category == o.category
        err = np.linalg.norm(d.box.center - o.center)
        assert err <= centre_tol_m, f"{d.id} centre off by {err * 100:.1f} cm"
        assert d.mask.shape == (480, 640) and d.mask.sum() > 50
        if o.category == "book":
            # Flat objects: the long side's heading matters (square objects have none).
            yaw_true = np.arctan2(o.rotation[1, 0], o.rotation[0, 0])
            assert _yaw_error_deg(d.box.yaw_rad, yaw_true) <= yaw_tol_deg, d.id
            np.testing.assert_allclose(np.sort(d.box.size), np.sort(o.size), atol=0.01)


@pytest.mark.parametrize("backend", BACKENDS)
def test_finds_every_object_from_above(backend, tabletop):
    obs, scene = tabletop
    dets = make_segmenter(backend).segment(obs, hints=SegmentationHints.from_scene(scene))
    _check_against_truth(dets, scene)
    sizes = {d.id: d.size_class for d in dets if d.category == "book"}
    assert sizes == {"obj0": "small", "obj1": "medium", "obj2": "large"}
    colours = {d.id: d.colour for d in dets}
    assert colours == {"obj0": "red", "obj1": "blue", "obj2": "green", "obj3": "yellow", "obj4": "purple"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_finds_every_object_from_the_side(backend, tabletop_side_view):
    obs, scene = tabletop_side_view
    dets = make_segmenter(backend).segment(obs, hints=SegmentationHints.from_scene(scene))
    _check_against_truth(dets, scene)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_detections_on_an_empty_table(backend, empty_table):
    obs, scene = empty_table
    assert make_segmenter(backend).segment(obs, hints=SegmentationHints.from_scene(scene)) == []


def test_classical_without_hints_recognises_books_by_size(tabletop):
    obs, _ = tabletop
    dets = make_segmenter("classical").segment(obs)
    books = sorted((d.size_class, d.id) for d in dets if d.category == "book")
    assert [b[0] for b in books] == ["large", "medium", "small"]
    assert len({d.id for d in dets}) == len(dets) == 5
    assert all(d.id.startswith(("book_", "object_")) for d in dets)


def test_classical_splits_touching_objects_by_colour(touching_books):
    obs, scene = touching_books
    dets = make_segmenter("classical").segment(obs, hints=SegmentationHints.from_scene(scene))
    _check_against_truth(dets, scene)
    assert {d.id: d.colour for d in dets} == {"obj0": "red", "obj1": "blue"}


def test_classical_without_colour_split_merges_them(touching_books):
    obs, _ = touching_books
    assert len(make_segmenter("classical", colour_split=False).segment(obs)) == 1


def test_classical_tolerates_depth_noise(tabletop):
    # L515-like noise: a few millimetres, plus dropped pixels.
    obs, scene = tabletop
    rng = np.random.default_rng(3)
    depth = obs.depth_m + rng.normal(0.0, 0.002, obs.depth_m.shape).astype(np.float32)
    depth[rng.random(depth.shape) < 0.02] = 0.0
    dets = make_segmenter("classical").segment(replace(obs, depth_m=depth), hints=SegmentationHints.from_scene(scene))
    _check_against_truth(dets, scene, yaw_tol_deg=5.0)


def test_classical_is_repeatable(tabletop):
    obs, _ = tabletop
    a = make_segmenter("classical", seed=7).segment(obs)
    b = make_segmenter("classical", seed=7).segment(obs)
    assert [d.id for d in a] == [d.id for d in b]
    np.testing.assert_array_equal([d.box.center for d in a], [d.box.center for d in b])


def test_scene_from_classical_detections(tabletop):
    obs, scene = tabletop
    dets = make_segmenter("classical").segment(obs, hints=SegmentationHints.from_scene(scene))
    out = detections_to_scene(dets, obs)
    assert sorted(out.ids()) == sorted(o.id for o in scene.objects if o.category != "table")
    assert out.get("obj2").size_class == "large"


@pytest.fixture(scope="module")
def espire_tabletop():
    """An ESPIRE tabletop (books on pedestals and in holders, references, a plinth) seen from
    the simulator's camera with the arm stowed, the cell's workspace description and the truth."""
    from spatial_manip.scene import workspace_description
    from spatial_manip.sim.layouts import sample_tabletop
    from spatial_manip.sim.world import STOW_Q, SimWorld

    world = SimWorld(sample_tabletop(np.random.default_rng(1)))
    try:
        world.pose_arm(STOW_Q)
        return world.render(), workspace_description(world.export_scene(), world.tcp_pose()), world.export_scene()
    finally:
        world.close()


def _inside_a_fixture(dets, hints):
    from spatial_manip.geometry.relations import points_in_box

    return [d.id for d in dets if any(points_in_box(d.box.center, part)[0] for part in hints.fixtures)]


def test_classical_removes_configured_fixtures_and_finds_the_books_they_hold(espire_tabletop):
    obs, workspace, truth = espire_tabletop
    hints = SegmentationHints.from_scene(workspace)
    assert hints.fixtures and not any(e.category == "support" for e in hints.expected)
    dets = make_segmenter("classical").segment(obs, hints=hints)
    assert _inside_a_fixture(dets, hints) == []
    found = {d.id: d for d in dets}
    for book in (o for o in truth.objects if o.category == "book"):
        assert book.id in found, f"{book.id} ({book.extra['pose']}) not found: {sorted(found)}"
        assert np.linalg.norm(found[book.id].box.center - book.center) < 0.02, book.id
    # without the fixtures' boxes, pedestals and holders come back as objects
    unaware = make_segmenter("classical").segment(obs, hints=replace(hints, fixtures=()))
    assert len(_inside_a_fixture(unaware, hints)) >= 3


def test_a_foot_hidden_by_something_nearer_or_by_the_image_edge_keeps_an_object():
    from spatial_manip.perception.classical import _foot_hidden

    depth = np.full((100, 100), 2.0)
    depth[20:40, 30:60] = 1.5                       # the object: its foot would be at row 40
    uv = np.argwhere(depth == 1.5)[:, ::-1]
    assert not _foot_hidden(depth, uv)              # the floor behind it shows below: it floats
    depth[40:60, 25:65] = 1.2                        # a nearer book in front of its foot
    assert _foot_hidden(depth, uv)
    edge = np.full((100, 100), 2.0)
    edge[80:100, 30:60] = 1.5                        # cut by the image's bottom edge
    assert _foot_hidden(edge, np.argwhere(edge == 1.5)[:, ::-1])


def _statue_on_a_plinth(x_m: float):
    """Voxels of a statue broader than its plinth, on the plinth's top at z = -0.05: its foot
    hides the plinth's top, so heights there are measured from the floor (z = -0.7); above
    the plinth's seen edge they are measured from the plinth. Returns (voxels, plinth box)."""
    from types import SimpleNamespace

    from spatial_manip.perception.cluster import Voxels

    grid = np.mgrid[0:0.2:0.01, -0.1:0.1:0.01, -0.045:0.2:0.01].reshape(3, -1).T
    pts = grid + [x_m, 0.0, 0.0]
    seen_edge = x_m + 0.1
    height = np.where(pts[:, 0] < seen_edge, pts[:, 2] + 0.7, pts[:, 2] + 0.05)
    height[(pts[:, 0] >= seen_edge) & (pts[:, 2] < 0.065)] = 0.75    # the foot in front of the edge
    plinth = SimpleNamespace(center=np.array([x_m + 0.1, 0.0, -0.375]), size=np.array([0.18, 0.18, 0.65]),
                             rotation=np.eye(3))
    return Voxels(pts, np.zeros_like(pts), 0.005, height), plinth


def test_a_statue_broader_than_its_plinth_rests_on_it():
    # lowest in z, not in height: the heights of its foot are measured from the floor
    vox, plinth = _statue_on_a_plinth(1.3)
    seg = make_segmenter("classical")
    members = np.arange(len(vox.centres))
    assert vox.height[members].min() > seg.config.max_support_gap_m      # it seems to float
    assert seg._rests_on_fixture(vox, members, [plinth])
    assert not seg._rests_on_fixture(vox, members, [])


def test_only_a_floating_cluster_beyond_the_arms_reach_is_kept_as_an_object():
    seg = make_segmenter("classical")
    far, _ = _statue_on_a_plinth(1.3)           # a painting on a thin easel beyond the table
    near, _ = _statue_on_a_plinth(0.5)          # where the arm or a hand can be
    assert seg._out_of_reach(far, np.arange(len(far.centres)))
    assert not seg._out_of_reach(near, np.arange(len(near.centres)))
    assert make_segmenter("classical", arm_reach_m=2.0)._out_of_reach(far, np.arange(len(far.centres))) is False


@pytest.mark.parametrize("reach", [-1.0, 0.0, float("nan")])
def test_an_arm_reach_that_is_not_positive_is_refused_by_name(reach):
    # a negative reach would keep every floating cluster, the arm itself among them
    with pytest.raises(ValueError, match="arm_reach_m must be positive"):
        make_segmenter("classical", arm_reach_m=reach)


def _lamp_on_the_table():
    from spatial_manip.perception.synthetic import SyntheticObject, render_tabletop
    lamp = SyntheticObject("floor lamp", (0.3, 0.3, 0.62), (0.7, 0.25), 0.0, (0.9, 0.8, 0.3, 1))
    return render_tabletop([lamp], camera_pos=(-0.3, 0.0, 1.9))


def test_an_object_taller_than_the_default_limit_is_kept_only_when_the_scene_expects_one():
    obs, _ = _lamp_on_the_table()
    seg = make_segmenter("classical")
    assert seg.config.max_object_height_m < 0.62
    assert seg.segment(obs) == []                      # unexpected and that tall: furniture
    hints = SegmentationHints(expected=(ExpectedObject("floor lamp", size_m=(0.3, 0.3, 0.62)),))
    lamp, = seg.segment(obs, hints=hints)
    assert lamp.label == "floor lamp" and abs(lamp.box.size[2] - 0.62) < 0.03


def test_a_face_seen_head_on_is_an_object_whose_depth_is_unseen():
    # A cube at eye level, camera straight in front: only its front face is in view, which a box
    # fit measures as 0 mm deep. It is kept (it is not a board's edge), with some depth behind
    # the face and its size a lower bound, so the catalogue matches it.
    from spatial_manip.perception.synthetic import TABLE_TOP_Z, SyntheticObject, render_tabletop
    cube = SyntheticObject("rubik's cube", (0.06, 0.06, 0.06), (0.65, 0.0), 0.0, (0.9, 0.5, 0.1, 1))
    eye = TABLE_TOP_Z + 0.03
    obs, _ = render_tabletop([cube], camera_pos=(-0.1, 0.0, eye + 0.005), target=(0.65, 0.0, eye))
    table_top = ((TABLE_TOP_Z, (0.35, -0.6), (0.95, 0.6)),)      # seen edge-on: configured
    hints = SegmentationHints(supports=table_top, expected=(ExpectedObject("rubik's cube", size_m=(0.06,) * 3),))
    det, = make_segmenter("classical", catalogue_fit=False).segment(obs, hints=hints)
    assert det.truncated and det.extra["depth_unseen"] and det.label == "rubik's cube"
    assert abs(det.box.center[1]) < 0.01 and det.box.center[0] > 0.62          # behind its face


def test_a_shelf_wall_read_through_l515_noise_is_the_fixture_and_a_book_beside_a_bookend_is_not():
    """place-51-00005 under realistic sensing: the shelf's back wall, 1.6 m from the camera and
    face-on, read up to 1.5 cm off its plane; with a fixed 4 mm margin around the configured
    panel its points survived as a row of object-sized fragments (named ceramic jar, teddy
    bear ... from the library). The allowance now follows the range noise along each ray: the
    whole wall is the fixture, and a book standing against a bookend keeps its points (a
    uniform 1.6 cm margin cut a quarter of it here, and both books of that scene away)."""
    from spatial_manip.geometry import synthetic as S
    from spatial_manip.camera_model import CameraIntrinsics, backproject
    from spatial_manip.geometry.noise import L515Noise
    from spatial_manip.geometry.relations import points_in_box
    from spatial_manip.transforms import apply
    from spatial_manip.perception.base import FixturePart
    from spatial_manip.perception.classical import _on_fixtures

    T = S.look_at(np.array([0.0, 0.0, 0.6]), np.array([1.6, 0.0, 0.3]))
    K = CameraIntrinsics.from_fovy(320, 240, 40.0)
    wall = S.SynthBox(np.array([1.6, 0.0, 0.4]), np.array([0.01, 0.8, 0.8]), np.eye(3))
    bookend = S.SynthBox(np.array([1.3, 0.15, 0.17]), np.array([0.12, 0.02, 0.14]), np.eye(3))
    book = S.SynthBox(np.array([1.3, 0.1285, 0.11]), np.array([0.15, 0.023, 0.22]), np.eye(3))  # against the bookend
    obs = S.render(K, T, [wall, bookend, book], table_z=0.0)
    depth = L515Noise().apply(obs.depth_m, np.random.default_rng(3))
    pts, uv = backproject(depth, K)
    pts = apply(T, pts)
    label = obs.segmentation[uv[:, 1], uv[:, 0]]
    clean = obs.depth_m[uv[:, 1], uv[:, 0]]
    fly = np.abs(depth[uv[:, 1], uv[:, 0]] - clean) > 0.02      # flying pixels: no surface's
    parts = [FixturePart(b.center, b.size, b.rotation) for b in (wall, bookend)]
    on = _on_fixtures(pts, T[:3, 3], parts, margin_m=0.004)
    on_wall, on_book = (label == 0) & ~fly, (label == 2) & ~fly
    assert on_wall.sum() > 2000 and on_book.sum() > 100
    assert on[on_wall].mean() > 0.99
    assert on[on_book].mean() < 0.1            # the strip of its top within the margin of the bookend

    def within(margin_m):                      # a uniform margin around each box
        return np.any([points_in_box(pts, p, margin_m) for p in parts], axis=0)
    assert within(0.004)[on_wall].mean() < 0.9 and within(0.016)[on_book].mean() > 0.25



def test_classical_stops_at_a_stage_end_when_asked_and_not_otherwise(tabletop):
    """The planner's idle look stops a segmenting the world changed under (a reset): at the first
    stage's end once `should_stop` says so (issue 42); asked and False, the same detections."""
    obs, _ = tabletop
    seg = make_segmenter("classical")
    asked = []
    seg.should_stop = lambda: asked.append(1) or False
    kept = seg.segment(obs)
    assert kept and len(asked) >= 4                       # planes, candidates, clusters, labels (+ catalogue)
    seg.should_stop = lambda: True
    with pytest.raises(CanceledError, match="segmenting stopped after planes"):
        seg.segment(obs)
