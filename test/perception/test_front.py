"""An enrolled object's front: the signature enrollment records (workspace/enroll.py) and the front
perception measures from it in a scene (perception/front.py), or refuses to."""
import math
from dataclasses import replace

import numpy as np
import pytest

from spatial_manip.geometry import relations as rel
from spatial_manip.perception.front import MIN_FOOTPRINT_ASPECT, footprint_axes, front_axis, measure_front
from spatial_manip.scene import SceneObject
from spatial_manip.workspace.enroll import Library, LibraryEntry

DARK_FRONT = {"side": "long", "aspect": 3.6, "front_colour": [0.45, 0.45, 0.43]}


def _box(yaw_deg=30.0, size=(0.24, 0.07, 0.24)):
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    return SceneObject("rider", "armento rider", "reference", [0.7, -0.1, 0.12], size,
                       np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]))


def test_footprint_axes_are_horizontal_longer_first_with_their_ratio():
    long_axis, short_axis, aspect = footprint_axes(_box(30.0))
    assert np.allclose(np.abs(long_axis), [math.cos(math.radians(30)), math.sin(math.radians(30)), 0], atol=1e-9)
    assert abs(float(long_axis @ short_axis)) < 1e-9 and aspect == pytest.approx(0.24 / 0.07)


def test_a_front_of_the_bodys_colour_or_one_unseen_at_enrollment_is_refused_before_looking():
    """Neither can tell a front, so neither needs the image (None here): a clock whose enrolled
    front reads as its body, an object whose front end enrollment did not see."""
    front, why = measure_front(None, None, _box(), {**DARK_FRONT, "front_colour": [1.0, 0.98, 1.02]})
    assert front is None and "body's colour" in why
    front, why = measure_front(None, None, _box(), {**DARK_FRONT, "front_colour": None})
    assert front is None and "enroll it again facing the camera" in why


def test_the_axis_a_front_lies_on_is_told_by_a_footprint_that_was_and_is_not_square():
    """A picture frame's face has its body's colour, so which end is its front is not measured,
    but its front is on its thin side (enrolled 'short', 21.6 x 4.5 cm): the planner assumes the
    nearer end of that axis, not the frame's edge (pick-82-00001). A square footprint tells no axis."""
    frame = {"side": "short", "aspect": 4.6, "front_colour": [1.0, 1.0, 1.0]}
    long_axis, short_axis, _ = footprint_axes(_box(30.0))
    assert np.allclose(front_axis(_box(30.0), frame), short_axis)
    assert np.allclose(front_axis(_box(30.0), DARK_FRONT), long_axis)
    assert front_axis(_box(30.0), {**frame, "aspect": MIN_FOOTPRINT_ASPECT - 0.1}) is None
    assert front_axis(_box(30.0, size=(0.16, 0.15, 0.24)), frame) is None


def test_turned_to_face_puts_the_front_on_the_nearest_box_side_with_its_sizes():
    o = SceneObject("rider", "armento rider", "reference", [0.7, -0.1, 0.12], [0.07, 0.24, 0.24], np.eye(3))
    turned = rel.turned_to_face(o, [0.1, -1.0, 0.0], "measured: test")
    assert turned.oriented and np.allclose(turned.rotation[:, 0], [0, -1, 0])
    assert np.allclose(turned.size, [0.24, 0.07, 0.24]) and turned.extra["front"] == "measured: test"


def test_the_library_keeps_a_front_signature_and_reads_an_older_file_without_one(tmp_path):
    from spatial_manip.workspace.catalogue import library_object

    e = LibraryEntry(id="armento_rider", name="armento rider", category="reference", size_m=(0.235, 0.065, 0.243),
                     rgb=(140, 90, 50), colours=("brown",), shape="box", has_front=True, front=DARK_FRONT)
    path = tmp_path / "lib.json"
    Library([e]).save(path)
    back = Library.load(path).entries["armento_rider"]
    assert back.front == DARK_FRONT and library_object(back).extra["front_signature"] == DARK_FRONT
    old = replace(back, front={})                     # a file enrolled before fronts were measured
    assert "front_signature" not in library_object(old).extra and library_object(old).oriented


def test_measure_object_refuses_an_unknown_facing_word():
    from spatial_manip.workspace.enroll import measure_object

    with pytest.raises(ValueError, match="facing must be one of"):
        measure_object(None, None, name="clock", has_front=True, facing="north")


@pytest.fixture(scope="module")
def enrolled_rider():
    from spatial_manip.sim.library import enroll_sim

    enrolled, _, obj = enroll_sim("armento_rider")
    return enrolled.entry.front, obj


def _seen_from_the_benchmark_camera(obj, yaw_deg, name="armento rider"):
    from spatial_manip.scene import Viewpoint
    from spatial_manip.sim.capture_cell import _rz, fixtures_only, render_cell
    from spatial_manip.sim.library import _cell_with
    from spatial_manip.workspace.enroll import measure_object

    placed = replace(obj, rotation=_rz(math.radians(yaw_deg)), center=np.array([0.7, -0.1, obj.center[2]]))
    cell, _ = _cell_with(placed, [])
    bench_camera = np.array([-0.74, 0.30, 0.58])              # where the benchmark's tabletop camera stands
    cell = replace(cell, viewer=Viewpoint(bench_camera, placed.center - bench_camera))
    obs = render_cell(cell, seed=1)
    seen = measure_object(obs, fixtures_only(cell), name=name, seed=1)
    return obs, seen, np.asarray(placed.rotation)[:, 0]


@pytest.mark.slow
def test_a_rider_enrolled_facing_the_camera_has_its_front_measured_when_it_faces_the_camera(enrolled_rider):
    """Enrolled once facing the enrolling camera (a dark panel on its front end), then set down
    turned 210 degrees before the benchmark's camera (its front 37 degrees off the camera's
    direction): the front is measured within 30 degrees."""
    signature, obj = enrolled_rider
    assert signature["side"] == "long" and max(abs(c - 1.0) for c in signature["front_colour"]) > 0.25
    obs, seen, true_front = _seen_from_the_benchmark_camera(obj, 210.0)
    front, why = measure_front(obs, seen.mask, seen.box, signature)
    assert front is not None, why
    assert math.degrees(math.acos(np.clip(float(front @ true_front), -1, 1))) < 30, why


@pytest.mark.parametrize("yaw_deg", [45.0, 300.0])
@pytest.mark.slow
def test_a_rider_turned_away_from_the_camera_has_its_front_measured(enrolled_rider, yaw_deg):
    """Its front turned 120 and 135 degrees from the camera's direction: seen from its side, both
    ends show, the dark one is the front, and it is measured within 30 degrees (a rule that read
    only a front turned within 60 degrees of the camera left the planner to assume the end nearer
    the camera, the rider's back: pick-88-00008)."""
    signature, obj = enrolled_rider
    obs, seen, true_front = _seen_from_the_benchmark_camera(obj, yaw_deg)
    front, why = measure_front(obs, seen.mask, seen.box, signature)
    assert front is not None, why
    assert math.degrees(math.acos(np.clip(float(front @ true_front), -1, 1))) < 30, why


@pytest.mark.slow
def test_a_rider_turned_to_the_cameras_right_is_refused_or_read_never_back_to_front(enrolled_rider):
    """pick-52-00011 ('a book at 3 o'clock of the armento rider, relative to the way it faces'):
    the rider faced the camera's right (yaw 261), its ends seen about equally from the side. The
    measurement names the front within 30 degrees or refuses and says why; it never names the back."""
    signature, obj = enrolled_rider
    obs, seen, true_front = _seen_from_the_benchmark_camera(obj, 261.0)
    front, why = measure_front(obs, seen.mask, seen.box, signature)
    assert why
    assert front is None or math.degrees(math.acos(np.clip(float(front @ true_front), -1, 1))) < 30, why


@pytest.mark.slow
def test_a_recorded_rider_facing_away_is_turned_to_its_measured_front():
    """The recorded first look of books pick-88-00008 ('a book behind the armento rider, relative
    to the way it faces'): the rider's front, 106 degrees from the camera, is measured, and the
    perceived rider faces within 30 degrees of the way the truth's does."""
    _, _, off_deg = _recorded_front("pick-88-00008", "armento rider", "near_1")
    assert off_deg < 30


def _recorded_front(frame: str, label: str, truth_id: str):
    """(the look, the perceived scene, degrees between the front perception measured for the
    object named `label` and the truth's `truth_id`) on a recorded frame, the front measured."""
    from pathlib import Path

    from spatial_manip.bench import record_frames
    from spatial_manip.bench.reference_bench import TaskResult, perceive_look
    from spatial_manip.paths import config_dir
    from spatial_manip.perception import load_segmenter_config

    look, _ = record_frames.load(Path(__file__).parent / "frames" / frame)
    config = load_segmenter_config(config_dir() / "params" / "perception.yaml", "classical")[1]
    _, seen = perceive_look(look, config, TaskResult(look.task.id, look.task.instruction))
    obj = next(o for o in seen.scene.objects if o.label == label)
    assert "front_unmeasured" not in obj.extra, obj.extra["front_unmeasured"]
    true_front = rel.horizontal(np.asarray(look.truth.get(truth_id).rotation, float)[:, 0])
    seen_front = rel.horizontal(np.asarray(obj.rotation, float)[:, 0])
    return look, seen.scene, math.degrees(math.acos(np.clip(float(seen_front @ true_front), -1, 1)))


@pytest.fixture(scope="module")
def enrolled_bear():
    from spatial_manip.sim.library import enroll_sim

    enrolled, _, obj = enroll_sim("teddy_bear")
    return enrolled.entry.front, obj


@pytest.mark.parametrize("yaw_deg", [60.0, 300.0])
@pytest.mark.slow
def test_a_bear_with_a_nearly_square_footprint_has_its_front_measured_from_its_four_ends(enrolled_bear, yaw_deg):
    """A sitting teddy bear enrolled at 1.095:1 (which footprint side holds its front is not told
    by its box) turned 104 and 136 degrees from the camera: of the four ends of its footprint, the
    one with the enrolled front's colour is the front, within 30 degrees. Turned every 30 degrees at
    three places before the benchmark's camera (session 34's sweep), 14 of 36 views were read, none
    more than 35 degrees off, the rest refused; before, none was read and the planner assumed the
    bear faced the camera (pick-91-00006)."""
    signature, obj = enrolled_bear
    assert signature["aspect"] < MIN_FOOTPRINT_ASPECT
    obs, seen, true_front = _seen_from_the_benchmark_camera(obj, yaw_deg, "teddy bear")
    front, why = measure_front(obs, seen.mask, seen.box, signature)
    assert front is not None, why
    assert math.degrees(math.acos(np.clip(float(front @ true_front), -1, 1))) < 30, why


@pytest.mark.slow
def test_a_bear_facing_the_camera_is_refused_or_read_never_back_to_front(enrolled_bear):
    """Facing the camera its front fills the view and no end shows the front's colour apart from
    the others: refused (the planner then assumes it faces the camera, which it does), never read
    back to front."""
    signature, obj = enrolled_bear
    obs, seen, true_front = _seen_from_the_benchmark_camera(obj, 150.0, "teddy bear")
    front, why = measure_front(obs, seen.mask, seen.box, signature)
    assert why
    assert front is None or math.degrees(math.acos(np.clip(float(front @ true_front), -1, 1))) < 45, why


@pytest.mark.slow
def test_a_recorded_bear_facing_the_cameras_right_is_turned_to_its_front_and_a_book_behind_it_found():
    """The recorded first look of books pick-91-00006 ('a book that is behind the teddy bear,
    from its own point of view'): the bear, its front 88 degrees from the camera, is turned within
    30 degrees of the truth's front, and the planner takes one of the books the truth puts behind it."""
    from spatial_manip.reasoning.planner import ProgramPlanner

    look, scene, off_deg = _recorded_front("pick-91-00006", "teddy bear", "near_2")
    assert off_deg < 30
    plan = ProgramPlanner().plan(scene, look.task.instruction)
    assert plan.ok, plan.error
    behind = [o for o in scene.objects for gid in look.task.answer
              if float(np.linalg.norm(o.center - look.truth.get(gid).center)) < 0.05]
    assert plan.targets and set(plan.targets) <= {o.id for o in behind}, plan.targets
