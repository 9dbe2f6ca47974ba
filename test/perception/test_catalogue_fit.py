"""The catalogue box of an object seen in part, posed on analytic depth (geometry.synthetic)."""
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.bench import record_frames
from spatial_manip.bench.reference_bench import TaskResult, perceive_look
from spatial_manip.geometry.relations import object_height
from spatial_manip.paths import config_dir
from spatial_manip.perception import load_segmenter_config
from spatial_manip.geometry import synthetic as S
from spatial_manip.geometry.boxes import box_2d_to_box_3d
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.relations import book_tilt_deg
from spatial_manip.perception.base import Detection, ExpectedObject
from spatial_manip.perception.catalogue_fit import (CatalogueFitConfig, _fit, complete_from_catalogue,
                                                     fit_catalogue_box, settle_names_by_depth, size_agrees,
                                                     whole_size)
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.scene import SceneObject

INTR = CameraIntrinsics.from_fovy(640, 480, 55)
EYE = np.array([0.0, 0.0, 0.75])
BOOK = np.array([0.15, 0.023, 0.226])         # width, thickness, length (a medium book)


class _Plane:                                   # the table: z = 0, normal up
    normal, d = np.array([0.0, 0.0, 1.0]), 0.0


def _standing(size, centre_xy, tilt_deg=0.0, yaw_deg=90.0, color=(200, 60, 40)):
    """A box standing on the table, leaning `tilt_deg` about its width axis."""
    R = Rotation.from_euler("ZX", [yaw_deg, tilt_deg], degrees=True).as_matrix()
    corners = (np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * size / 2) @ R.T
    return S.SynthBox(np.array([*centre_xy, -corners[:, 2].min()]), np.asarray(size, float), R, color)


def _scene(book, *others):
    obs = S.render(INTR, S.look_at(EYE, book.center), [book, *others])
    return obs, obs.segmentation == 0


def _centre_err(box, truth):
    return float(np.linalg.norm(box.center - truth.center))


def test_a_book_whose_foot_is_hidden_gets_its_full_length_and_position():
    """A wedge in front hides the lower half of a book leaning back 20 deg: the visible part
    measures short, the catalogue box is grown where the wedge hides it, not into free space."""
    book = _standing(BOOK, (0.55, 0.0), tilt_deg=20)
    wedge = _standing((0.20, 0.06, 0.12), (0.50, 0.0), color=(90, 90, 90))
    obs, mask = _scene(book, wedge)
    measured = box_2d_to_box_3d(obs, mask=mask)
    assert measured.size.max() < BOOK[2] - 0.04          # what the depth alone gives: short
    fit = fit_catalogue_box(obs, mask, BOOK, measured=measured, plane=_Plane())
    assert fit is not None and fit.mode == "catalogue"
    assert np.allclose(np.sort(fit.size), np.sort(BOOK))
    assert _centre_err(fit, book) < 0.01
    seen = SceneObject("b", "book", "book", fit.center, fit.size, fit.rotation)
    assert book_tilt_deg(seen) == pytest.approx(20, abs=6)


def test_a_leaning_book_mostly_hidden_behind_another_is_posed_not_called_a_cube():
    book = _standing(BOOK, (0.62, 0.0), tilt_deg=45)
    front = _standing((0.30, 0.04, 0.20), (0.52, 0.0), color=(40, 160, 60))
    obs, mask = _scene(book, front)
    measured = box_2d_to_box_3d(obs, mask=mask)
    fit = fit_catalogue_box(obs, mask, BOOK, measured=measured, plane=_Plane())
    assert fit is not None and _centre_err(fit, book) < 0.015
    seen = SceneObject("b", "book", "book", fit.center, fit.size, fit.rotation)
    assert book_tilt_deg(seen) == pytest.approx(45, abs=6)


def test_a_flat_book_whose_near_half_an_upright_one_hides_is_grown_towards_the_camera():
    """pick-21-00006: a flat book behind an upright one showed its far half; the fit put the hidden
    slack on the side away from the camera (free table there, which the depth refutes) because only
    that placement was ranked, and the grasps missed the book by 4 cm. Both sides are ranked now."""
    # on a pedestal narrower than the book, as the benchmark's books lie: past its far edge the
    # depth falls 7 cm to the table, which refutes a box grown that way
    flat = S.SynthBox(np.array([0.65, 0.0, 0.0775]), np.array([0.179, 0.123, 0.015]), np.eye(3), (250, 220, 30))
    pedestal = S.SynthBox(np.array([0.65, 0.0, 0.035]), np.array([0.109, 0.093, 0.07]), np.eye(3), (120, 120, 120))
    front = _standing((0.03, 0.30, 0.19), (0.55, 0.0), yaw_deg=0.0, color=(90, 30, 110))
    obs = S.render(INTR, S.look_at(EYE, flat.center), [flat, front, pedestal])
    mask = obs.segmentation == 0
    measured = box_2d_to_box_3d(obs, mask=mask)
    assert measured.size.max() < 0.15                    # what the depth alone gives: the far part
    on_pedestal = type("Top", (), {"normal": np.array([0.0, 0.0, 1.0]), "d": -0.07})()
    fit = fit_catalogue_box(obs, mask, (0.123, 0.015, 0.179), measured=measured, plane=on_pedestal)
    assert fit is not None and _centre_err(fit, flat) < 0.01


def test_a_catalogue_size_smaller_than_what_is_seen_is_refused():
    book = _standing(BOOK, (0.55, 0.0))
    obs, mask = _scene(book)
    assert fit_catalogue_box(obs, mask, (0.1, 0.02, 0.12), plane=_Plane()) is None


def test_a_box_the_depth_sees_through_is_refused():
    """A catalogue box twice as tall as the book would stand in free space the camera sees
    through (the table behind it): refused, whichever way it is grown."""
    book = _standing(BOOK, (0.55, 0.0))
    obs, mask = _scene(book)
    assert fit_catalogue_box(obs, mask, (0.15, 0.023, 0.45), plane=_Plane()) is None


def test_complete_from_catalogue_changes_only_disagreeing_catalogued_objects():
    hidden = _standing(BOOK, (0.55, 0.10), tilt_deg=20)
    wedge = _standing((0.20, 0.06, 0.12), (0.50, 0.10), color=(90, 90, 90))
    whole = _standing((0.12, 0.017, 0.18), (0.55, -0.12), color=(40, 60, 200))
    obs = S.render(INTR, S.look_at(EYE, np.array([0.55, 0.0, 0.05])), [hidden, wedge, whole])
    dets = []
    for i, name in ((0, "book_1"), (2, "book_2")):
        mask = obs.segmentation == i
        dets.append(Detection(name, "book", "book", mask, 1.0, box_2d_to_box_3d(obs, mask=mask)))
    dets.append(Detection("mystery", "object", "object", obs.segmentation == 1, 1.0,
                          box_2d_to_box_3d(obs, mask=obs.segmentation == 1)))
    whole_box = dets[1].box
    expected = [ExpectedObject("book", "book", tuple(BOOK), id="book_1"),
                ExpectedObject("book", "book", (0.12, 0.017, 0.18), id="book_2")]
    changed = complete_from_catalogue(obs, dets, expected, planes=[])
    assert changed == ["book_1"]
    assert _centre_err(dets[0].box, hidden) < 0.01 and dets[0].size_class == "medium"
    assert dets[0].extra["measured_box"]["mode"] != "catalogue"
    assert dets[1].box is whole_box                    # agrees with its catalogue size: kept
    assert dets[2].box.mode != "catalogue"             # not in the catalogue: kept


MUG = (0.1146, 0.0874, 0.1079)


def _leaning_on_wedge():
    """pick-52-00005: a medium book leaning 35 deg on its wedge, whose cover (23 cm) no mug's box holds."""
    book = _standing(BOOK, (0.55, 0.0), tilt_deg=35, color=(240, 240, 240))
    wedge = _standing((0.20, 0.06, 0.10), (0.49, 0.0), color=(150, 120, 90))
    obs = S.render(INTR, S.look_at(EYE, book.center), [book, wedge])
    mask = obs.segmentation == 0
    return obs, mask, book


def test_a_name_whose_box_cannot_hold_what_is_seen_goes_to_the_runner_up_that_can():
    obs, mask, book = _leaning_on_wedge()
    det = Detection("white_porcelain_mug", "mug", "mug", mask, 0.6, box_2d_to_box_3d(obs, mask=mask),
                    extra={"matched": "white_porcelain_mug", "runner_up": {"label": "book", "category": "book",
                                                                           "id": "book_white_medium"}})
    expected = [ExpectedObject("mug", "mug", MUG, id="white_porcelain_mug"),
                ExpectedObject("book", "book", tuple(BOOK), id="book_white_medium")]
    changed = complete_from_catalogue(obs, [det], expected, planes=[])
    assert (det.id, det.label, det.category) == ("book_white_medium", "book", "book")
    assert "cannot hold" in det.extra["named_by_depth"] and "runner_up" not in det.extra
    assert changed == ["book_white_medium"] and _centre_err(det.box, book) < 0.02


def test_a_refused_name_is_settled_only_when_one_candidate_cannot_hold_the_cluster():
    obs, mask, _ = _leaning_on_wedge()
    candidates = [{"label": "mug", "category": "mug", "id": "mug"}, {"label": "book", "category": "book", "id": "b"}]
    det = Detection("object_0", "object", "object", mask, 0.5, box_2d_to_box_3d(obs, mask=mask),
                    extra={"refused": "mug or book", "candidates": list(candidates)})
    other = Detection("book_0", "book", "book", obs.segmentation == 1, 0.5, box_2d_to_box_3d(obs, mask=obs.segmentation == 1))
    expected = [ExpectedObject("mug", "mug", MUG, id="mug"), ExpectedObject("book", "book", tuple(BOOK), id="b")]
    settled = settle_names_by_depth(obs, [det, other], expected, planes=[])
    assert list(settled) == ["b"] and det.label == "book" and "candidates" not in det.extra
    # a box large enough to hold it too leaves the refusal standing: the depth cannot tell
    det2 = Detection("object_1", "object", "object", mask, 0.5, box_2d_to_box_3d(obs, mask=mask),
                     extra={"refused": "vase or book", "candidates": [{"label": "vase", "category": "vase", "id": "v"},
                                                                      candidates[1]]})
    big = [ExpectedObject("vase", "vase", (0.26, 0.2, 0.2), id="v"), expected[1]]
    assert settle_names_by_depth(obs, [det2], big, planes=[]) == {} and det2.label == "object"


def test_size_agreement_is_per_sorted_side():
    assert size_agrees([0.2, 0.1, 0.02], (0.02, 0.1, 0.21), 0.015)
    assert not size_agrees([0.2, 0.1, 0.02], (0.02, 0.1, 0.24), 0.015)


@pytest.mark.parametrize("size", [(0.1, 0.2), (0.1, -0.2, 0.3), (0.1, float("nan"), 0.3)])
def test_a_malformed_catalogue_size_is_refused_by_value(size):
    book = _standing(BOOK, (0.55, 0.0))
    obs, mask = _scene(book)
    with pytest.raises(ValueError, match="catalogue size"):
        fit_catalogue_box(obs, mask, size)


@pytest.mark.parametrize("kw", [{"see_through_m": -0.01}, {"consistent_m": float("nan")},
                                {"max_see_through": 0.0}, {"tilt_step_deg": 0.0}, {"tie_scale_m": 0.0}])
def test_config_refuses_bad_values(kw):
    with pytest.raises(ValueError):
        CatalogueFitConfig(**kw)


def test_a_leaning_book_read_through_l515_flying_pixels_still_gets_its_catalogue_box():
    """pick-51-00005 (realistic): flying pixels strewn between a book leaning 50 deg on its wedge
    and the table behind it stretched its points along the view past the large book's every
    side, and no catalogue box could hold them. Then the fit is made on the points off the depth
    edges. (Noise seed 4: all points are held by no box here; on other seeds they are, and
    that fit is kept.)"""
    from dataclasses import replace
    from spatial_manip.geometry.noise import L515Noise
    large = np.array([0.2177, 0.0465, 0.2761])
    book = _standing(large, (0.60, 0.0), tilt_deg=50, color=(160, 70, 210))
    wedge = _standing((0.20, 0.12, 0.06), (0.50, 0.0), color=(150, 120, 90))
    obs = S.render(INTR, S.look_at(np.array([-0.25, 0.0, 0.75]), book.center), [book, wedge])
    obs = replace(obs, depth_m=L515Noise(flying_prob=0.8).apply(obs.depth_m, np.random.default_rng(4)))
    mask = obs.segmentation == 0
    measured = box_2d_to_box_3d(obs, mask=mask)
    assert _fit(obs, mask, base_cloud(obs, mask)[0], large, measured, _Plane(), CatalogueFitConfig()) is None
    fit = fit_catalogue_box(obs, mask, large, measured=measured, plane=_Plane())
    assert fit is not None and _centre_err(fit, book) < 0.035


def test_pieces_left_unnamed_after_the_catalogue_fit_each_get_their_own_id():
    """pick-52-00015 (realistic, at 4fafae7): one_name_per_space left two pieces unnamed in one look,
    clearing both ids to '', and the planner's scene refused the duplicate: an INTERNAL error
    ended the goal. Each unnamed piece gets a fresh object_<k> id; named ones keep theirs."""
    from spatial_manip.geometry.boxes import Box3D
    from spatial_manip.observation import RGBDObservation
    from spatial_manip.perception.base import detections_to_scene

    def named(id, label, size, centre, n_points):
        box = Box3D(np.asarray(centre, float), np.asarray(size, float), np.eye(3), "yaw", 500, 500, 1.0, 0.001)
        mask = np.zeros((48, 64), bool)
        mask[20:24, 20:24] = True
        return Detection(id, label, "reference", mask, 0.5, box, (90, 80, 60),
                         extra={"n_points": n_points, "matched": id})

    bust = named("marble_bust", "marble bust", (0.5, 0.46, 0.53), (1.62, -0.31, 0.29), 6763)
    bust_side = named("floor_lamp_1", "floor lamp", (0.46, 0.46, 0.46), (1.65, -0.41, 0.33), 2738)
    mirror = named("cheval_mirror", "cheval mirror", (0.4, 0.42, 0.5), (1.6, 0.4, 0.3), 5000)
    mirror_side = named("floor_lamp_2", "floor lamp", (0.38, 0.4, 0.46), (1.62, 0.38, 0.3), 1500)
    taken = named("object_0", "object", (0.06, 0.06, 0.07), (0.7, 0.1, 0.03), 300)
    dets = [bust, bust_side, mirror, mirror_side, taken]
    obs = RGBDObservation(rgb=np.zeros((48, 64, 3), np.uint8), depth_m=np.ones((48, 64), np.float32),
                          intrinsics=CameraIntrinsics.from_fovy(64, 48, 45.0), T_base_cam=np.eye(4))
    complete_from_catalogue(obs, dets, [], planes=[])
    assert bust_side.label == mirror_side.label == "object"
    ids = [d.id for d in dets]
    assert ids[:3:2] == ["marble_bust", "cheval_mirror"] and ids[4] == "object_0"
    assert len(set(ids)) == len(ids) and all(ids), ids
    assert {o.id for o in detections_to_scene(dets, obs).objects} == set(ids)


def test_a_catalogue_box_is_as_large_on_each_side_as_any_enrolled_view_saw():
    """Each enrolled view boxes what it sees: the red coffee mug is 9.1 cm across with its handle
    hidden, 12.5 cm with it in view. Its catalogue box takes the most each side measured, footprint
    sides longest to longest (views' own order may differ), heights to heights."""
    hidden, handle, turned = (0.0914, 0.0747, 0.1308), (0.1248, 0.0772, 0.1317), (0.0876, 0.1059, 0.131)
    mug = ExpectedObject("mug", "mug", (0.0914, 0.0777, 0.1314), id="red_coffee_mug", placement="near",
                         views=tuple((v, (146, 99, 96)) for v in (hidden, handle, turned)))
    assert np.allclose(whole_size(mug), (0.1248, 0.0876, 0.1317))
    narrow_first = ExpectedObject("mug", "mug", (0.0777, 0.0914, 0.1314), views=mug.views)
    assert np.allclose(whole_size(narrow_first), (0.0876, 0.1248, 0.1317))
    # no views, or an entry standing beyond the work surface (a painting's edge-on view boxes its
    # easel's diagonal): the listed size
    assert whole_size(ExpectedObject("mug", "mug", (0.0914, 0.0777, 0.1314))) == (0.0914, 0.0777, 0.1314)
    painting = ExpectedObject("painting", "reference", (0.78, 0.23, 0.46), placement="distant",
                              views=(((0.78, 0.53, 0.51), (90, 80, 60)),))
    assert whole_size(painting) == (0.78, 0.23, 0.46)
    assert whole_size(ExpectedObject("thing")) is None


@pytest.mark.slow
def test_a_standing_mug_with_its_handle_in_view_keeps_standing():
    """objects-85-00003 (realistic, recorded frame): the standing red coffee mug, its handle in
    view (12 cm across), was given a box of the size enrolled with the handle hidden (9.1 cm),
    which held the handle's points only tilted: 15-40 degrees, its centre 2 cm high, and live its
    9.1 cm side read as its height, so 'the shorter mug' took it over the 10.7 cm porcelain mug.
    With the whole size every view saw, it stands, its centre within 1 cm of the truth's."""
    look, _ = record_frames.load(Path(__file__).parent / "frames" / "objects-85-00003")
    cfg = load_segmenter_config(config_dir() / "params" / "perception.yaml", "classical")[1]
    _, seen = perceive_look(look, cfg, TaskResult(look.task.id, look.task.instruction))
    mugs = {o.id: o for o in seen.scene.objects if o.label == "mug"}
    red, truth = mugs["red_coffee_mug"], look.truth.get("mug_3")
    assert np.degrees(np.arccos(min(1.0, abs(red.rotation[2, 2])))) < 5.0
    assert abs(red.center[2] - truth.center[2]) < 0.01
    assert object_height(red) > object_height(mugs["white_porcelain_mug"]) + 0.015
