"""Book size words on perceived books (issues 36/37): how high a book is, and its size class, read
from the boxes perception measured under realistic sensing in benchmark episodes (seeds 51-53),
against how the task generator defines them on the true books. Each scene below holds the boxes
recorded in that episode's trace; the true books are from its task file."""
import numpy as np
import pytest

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry import relations as rel
from spatial_manip.geometry.boxes import Box3D
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.attributes import book_size_tolerance_m
from spatial_manip.perception.base import Detection, detections_to_scene, perceived_book_class
from spatial_manip.reasoning.planner import ProgramPlanner
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.transforms import look_at

CAMERA = np.array([-0.75, -0.38, 0.54])        # the episodes' camera, about 1.2-1.5 m from the books
VIEWER = Viewpoint(CAMERA, [0.85, 0.28, -0.46])
ROBOT = Viewpoint([0.0, 0.0, 0.0], [1.0, 0.0, 0.0])


def _yaw(deg: float) -> np.ndarray:
    a = np.radians(deg)
    return np.array([[np.cos(a), -np.sin(a), 0.0], [np.sin(a), np.cos(a), 0.0], [0.0, 0.0, 1.0]])


def _perceived(id, center, size, yaw_deg=0.0, size_class=None, **extra) -> SceneObject:
    return SceneObject(id, "book", "book", center, size, _yaw(yaw_deg), size_class=size_class, extra=extra)


def test_a_book_lying_flat_is_as_high_as_its_long_side_as_the_generator_says():
    """pick-51-00004, 'grab a book roughly 29 centimeters high': the large book lies flat on a
    pedestal. The generator's book (size w, t, h = 0.236, 0.038, 0.288, laid down) is 28.8 cm high;
    perception's box of it is 0.27 x 0.232 x 0.047 with z vertical, whose z is the thickness, so
    the planner found no book 29 cm high (TARGET_NOT_FOUND under ideal and realistic sensing)."""
    R_flat = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])      # the book's height axis on -y
    true_book = SceneObject("book_2", "book", "book", [0.456, 0.325, 0.089], [0.236, 0.038, 0.288], R_flat,
                            size_class="large")
    seen = _perceived("book_blue_large", [0.445, 0.313, 0.093], [0.27, 0.232, 0.047], 3.4)
    assert rel.object_height(true_book) == pytest.approx(0.288)
    assert rel.is_about(rel.object_height(seen), 0.29)
    standing = _perceived("book_black_medium", [0.46, -0.106, 0.114], [0.14, 0.023, 0.219], 69.0, "medium")
    scene = Scene(VIEWER, ROBOT, [seen, standing], [], {})
    plan = ProgramPlanner().plan(scene, "grab a book roughly 29 centimeters high")
    assert plan.ok and plan.targets == ["book_blue_large"], plan.error
    # an object that is not a book keeps its own up axis as its height
    jar = SceneObject("jar", "jar", "object", [0.5, 0.0, 0.04], [0.3, 0.06, 0.08], np.eye(3))
    assert rel.object_height(jar) == pytest.approx(0.08)


def test_a_book_no_class_holds_takes_the_nearest_class_over_all_its_sides():
    """pick-51-00008, 'take a large book': the medium green book leaning on its wedge measured
    0.278 x 0.131 x 0.022, which no class holds; read by its longest side alone it was large, and
    the arm took it. Over all three sides it is nearest medium. A small book measured 18.6 cm long
    (its range is 17.5-18.8) read medium by the longest side (pick-53-00002's pink book)."""
    assert rel.book_size_class([0.278, 0.131, 0.022]) is None
    assert rel.size_class(_perceived("b", [0, 0, 0], [0.278, 0.131, 0.022])) == "medium"
    assert rel.size_class(_perceived("b", [0, 0, 0], [0.186, 0.112, 0.027])) == "small"
    assert rel.size_class(_perceived("b", [0, 0, 0], [0.27, 0.232, 0.047])) == "large"
    # the scene's own class (the generator's truth, or perception's measurement) comes first
    assert rel.size_class(_perceived("b", [0, 0, 0], [0.278, 0.131, 0.022], size_class="large")) == "large"
    # a book seen in part has no class: its box is a lower bound
    assert rel.size_class(_perceived("b", [0, 0, 0], [0.15, 0.1, 0.02], truncated=True)) is None
    scene = Scene(VIEWER, ROBOT, [
        _perceived("book_green_large", [0.395, -0.391, 0.136], [0.278, 0.131, 0.022], 30.0),
        _perceived("book_red_large", [0.46, -0.022, 0.096], [0.27, 0.215, 0.046], 66.0, "large")], [], {})
    plan = ProgramPlanner().plan(scene, "take a large book")
    assert plan.ok and plan.targets == ["book_red_large"], plan.error


def _detection(id, center, size, mask=None, **extra) -> Detection:
    box = Box3D(np.asarray(center, float), np.asarray(size, float), np.eye(3), "yaw", 500, 600, 0.9, 0.002)
    return Detection(id, "book", "book", np.zeros((48, 64), bool) if mask is None else mask, 0.8, box, extra=extra)


def test_a_books_size_class_allows_the_sensors_error_at_its_range():
    """Flat books' tops read 6 mm high on average at 1.2-1.5 m under realistic sensing (11 mm at
    worst, seeds 51-53): a small book measured 2.7 cm thick was no class at a fixed 6 mm, and the
    planner guessed. The tolerance is the L515's 3-sigma range error there; at half a metre, where
    the sensor errs less, the same 2.7 cm is too thick for a small book."""
    far = CAMERA + np.array([1.3, 0.0, 0.0])
    near = CAMERA + np.array([0.5, 0.0, 0.0])
    assert np.all(book_size_tolerance_m(1.3) >= book_size_tolerance_m(0.5))
    assert book_size_tolerance_m(1.3)[2] > 2 * book_size_tolerance_m(0.5)[2] - 1e-9
    assert book_size_tolerance_m(0.5)[2] == pytest.approx(rel.BOOK_TOLERANCE_M[2])
    assert perceived_book_class(_detection("b", far, [0.186, 0.112, 0.027]), CAMERA) == "small"
    assert perceived_book_class(_detection("b", near, [0.186, 0.112, 0.027]), CAMERA) is None
    assert perceived_book_class(_detection("b", far, [0.285, 0.211, 0.048]), CAMERA) == "large"


def test_a_book_seen_in_part_is_classed_by_what_was_measured_not_by_its_catalogue_box():
    """pick-51-00012, 'grab one of the small books': the corner of a large book leaning on its wedge
    ran out of the image; the library named it the grey small book and catalogue_fit gave it that
    book's box, so the planner called it small and the arm took it. Its measured part could be any
    class: no class."""
    edge = np.zeros((48, 64), bool)
    edge[10:30, 0:12] = True                              # the mask touches the image's left edge
    corner = _detection("book_grey_small", [0.379, -0.299, 0.167], [0.181, 0.023, 0.115], edge,
                        measured_box={"size": [0.16, 0.12, 0.035]})
    whole = _detection("book_black_small", [0.436, 0.066, 0.094], [0.117, 0.018, 0.188])
    assert corner.truncated and not whole.truncated
    obs = RGBDObservation(rgb=np.zeros((48, 64, 3), np.uint8), depth_m=np.ones((48, 64), np.float32),
                          intrinsics=CameraIntrinsics.from_fovy(64, 48, 45.0),
                          T_base_cam=look_at(CAMERA, (0.45, 0.0, 0.1)))
    scene = detections_to_scene([corner, whole], obs)
    assert scene.get("book_grey_small").size_class is None
    assert scene.get("book_black_small").size_class == "small"
    plan = ProgramPlanner().plan(scene, "grab one of the small books")
    assert plan.ok and plan.targets == ["book_black_small"], plan.error
    # the only class that can hold a measured part is its class
    thick = _detection("b", [0.4, 0.0, 0.1], [0.1, 0.1, 0.1], edge, measured_box={"size": [0.2, 0.15, 0.044]})
    assert perceived_book_class(thick, CAMERA) == "large"


def _seen(id, center, size, R, size_class) -> SceneObject:
    return SceneObject(id, "book", "book", center, size, np.asarray(R, float), size_class=size_class)


def _leaning(id, center, size, tilt_deg, size_class=None) -> SceneObject:
    """A book box leaning `tilt_deg` from upright about its width axis (x)."""
    a = np.radians(tilt_deg)
    return _seen(id, center, size, [[1.0, 0.0, 0.0], [0.0, np.cos(a), -np.sin(a)], [0.0, np.sin(a), np.cos(a)]],
                 size_class)


def test_a_perceived_tilt_just_outside_its_band_is_taken_only_when_none_is_inside():
    """pick-52-00010, 'grab a book leaning roughly 45 degrees': the small book leaning 47.5 degrees
    on its wedge was perceived at 55 (a wedge hides its foot), outside 'about 45' (+-10 degrees),
    the others upright or flat: TARGET_NOT_FOUND. On a perceived scene the nearest within a
    measured tilt's error is taken; the generator and checker keep the band."""
    from spatial_manip.errors import TargetNotFoundError
    from spatial_manip.reasoning.program import PERCEIVED_TILT_SLACK_DEG, execute

    flat = [[-0.998, -0.0639, 0.0], [0.0639, -0.998, 0.0], [0.0, 0.0, 1.0]]
    scene = Scene(VIEWER, ROBOT, [      # the episode's perceived books, as traced (5-degree tilt steps)
        _seen("book_pink_small", [0.5011, 0.3328, 0.0806], [0.1808, 0.1153, 0.0234],
              [[-0.80155, -0.20618, 0.56125], [0.16889, -0.97851, -0.11826], [0.573576436351046, 0.0, 0.8191520442889919]],
              "small"),
        _seen("book_cyan_medium", [0.5372, -0.2863, 0.1378], [0.1519, 0.0295, 0.2284],
              [[0.9131, -0.4077, 0.0], [0.4077, 0.9131, 0.0], [0.0, 0.0, 1.0]], "medium"),
        _seen("book_white_medium", [0.5703, 0.0509, 0.0845], [0.2207, 0.142, 0.029], flat, "medium"),
        _seen("book_black_small", [0.58, 0.563, 0.0946], [0.111, 0.0189, 0.1891],
              [[-0.95, -0.3123, 0.0], [0.3123, -0.95, 0.0], [0.0, 0.0, 1.0]], "small")], [], {})
    assert rel.object_tilt_deg(scene.get("book_pink_small")) == pytest.approx(55.0)
    text = "pick(unique(filterOri$TiltDegree(45.0, filterBook(TABLE))))"
    with pytest.raises(TargetNotFoundError):
        execute(text, scene)                                      # the definition: +-10 degrees
    res = execute(text, scene, tilt_slack_deg=PERCEIVED_TILT_SLACK_DEG)
    assert res.targets == ["book_pink_small"] and any("the nearest within" in t.get("node", "") for t in res.trace)
    plan = ProgramPlanner().plan(scene, "grab a book leaning roughly 45 degrees")
    assert plan.ok and plan.targets == ["book_pink_small"], plan.error
    # a book inside the band wins over a nearer-looking one outside it
    scene.objects.append(_leaning("book_grey_small", [0.4, -0.5, 0.08], [0.115, 0.023, 0.181], 36.0, "small"))
    assert execute(text, scene, tilt_slack_deg=PERCEIVED_TILT_SLACK_DEG).targets == ["book_grey_small"]


def test_a_perceived_tilt_two_steps_off_its_band_is_not_taken():
    """pick-54-00009 (at 70d86d9), 'pick up a book at a tilt of about 60 degrees': the book leaning
    58.8 degrees was named the teddy bear, and the flat black book, read at 80, was taken with a
    10-degree slack: a wrong grasp and 14 contacts. The slack is one step of the fit's tilt search."""
    from spatial_manip.errors import TargetNotFoundError
    from spatial_manip.reasoning.program import PERCEIVED_TILT_SLACK_DEG, execute

    scene = Scene(VIEWER, ROBOT, [
        _leaning("book_black_small", [0.487, 0.293, 0.086], [0.115, 0.023, 0.181], 80.0, "small"),
        _leaning("book_orange_large", [0.589, -0.046, 0.097], [0.217, 0.046, 0.276], 85.0, "large")], [], {})
    with pytest.raises(TargetNotFoundError):
        execute("pick(unique(filterOri$TiltDegree(60.0, filterBook(TABLE))))", scene,
                tilt_slack_deg=PERCEIVED_TILT_SLACK_DEG)
    assert not ProgramPlanner().plan(scene, "pick up a book at a tilt of about 60 degrees").ok
