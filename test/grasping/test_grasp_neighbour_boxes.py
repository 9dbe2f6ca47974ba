"""GraspService with the scene's neighbours as solid boxes: the demo under realistic sensing (noise
draw 2, classical segmenter, library catalogue) proposed three edge pinches of the lying book,
each with the real finger at the pre-grasp inside the ceramic jar's box, and the motion check,
which holds every scene box as an obstacle, dropped them all (GRASP_FAILED). The proposer had
checked its gripper against the cloud alone, and the camera sees a neighbour's front only. Here
the jar stands beside the book's near edge, on the line the pinches' pre-grasps take, and its
depth is not in the image (its hidden part): with its box in the scene no grasp puts the real
gripper in it on the way in, and the book is still grasped."""
from types import SimpleNamespace

import numpy as np

from spatial_manip.grasping.gripper import GripperGeometry
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox
from spatial_manip.registry import make
from spatial_manip.scene import SceneObject

from real_gripper import gripper_points, inside_box
from synthetic import render_boxes
from test_grasp_fixtures import BOOK, PEDESTAL

JAR = ((0.32, -0.05, 0.04), (0.06, 0.06, 0.08))     # beside the book's near edge (x 0.40), 4 cm short of its top
APPROACH_M = 0.10                                   # the service's pre-grasp back-off


def _scene(with_jar: bool):
    def obj(oid, category, box):
        return SceneObject(oid, oid, category, np.array(box[0]), np.array(box[1]), np.eye(3))
    objects = [obj("pedestal", "support", PEDESTAL), obj("book", "book", BOOK), obj("table", "table", ((0.5, 0, -0.02),
                                                                                                   (0.8, 1.0, 0.04)))]
    return SimpleNamespace(objects=objects + ([obj("ceramic_jar", "reference", JAR)] if with_jar else []))


def _grasps(scene):
    depth, intr, T, _ = render_boxes([PEDESTAL, BOOK])            # the jar's depth unseen
    gripper = GripperGeometry()
    service = GraspService(make("grasp", "antipodal"), gripper, ServiceConfig(max_grasps=50))
    res = service.propose_for_box(depth, intr, T, TargetBox(np.array(BOOK[0]), np.array(BOOK[1]), np.eye(3), "book"),
                                  scene=scene)
    assert res.success, res.message
    return gripper, res.grasps


def _in_jar_on_the_way_in(gripper, g) -> bool:
    """Whether the real gripper, open as the arm opens it, meets the jar's box anywhere from the
    pre-grasp to the grasp."""
    tcp = g.translation + g.depth * g.approach
    opening = float(gripper.opening_m(g.width))
    return any(inside_box(gripper_points(g.rotation_matrix, tcp - s * g.approach, opening), *JAR).any()
               for s in np.linspace(0.0, APPROACH_M, 11))


def test_a_neighbours_box_keeps_the_gripper_out_on_the_way_in():
    gripper, blind = _grasps(_scene(with_jar=False))
    assert any(_in_jar_on_the_way_in(gripper, g) for g in blind), "the situation no longer puts a grasp in the jar"
    gripper, gg = _grasps(_scene(with_jar=True))
    assert len(gg) > 0
    hits = [np.round(g.translation, 3).tolist() for g in gg if _in_jar_on_the_way_in(gripper, g)]
    assert not hits, f"grasps at {hits} pass through the jar's box"


def test_the_table_the_target_and_a_held_object_are_not_obstacles():
    service = GraspService(make("grasp", "antipodal"), GripperGeometry())
    box = TargetBox(np.array(BOOK[0]), np.array(BOOK[1]), np.eye(3), "book_seen")     # the target under another id
    scene = _scene(with_jar=True)
    held = SceneObject("mug", "mug", "object", np.array([0.3, 0.1, 0.3]), np.array([0.08, 0.08, 0.1]), np.eye(3),
                       held=True)
    scene.objects.append(held)
    pts = service._fixture_points(scene, box)
    assert inside_box(pts, *JAR).sum() > 50
    assert not np.any(pts[:, 2] < -0.001), "the table's box was filled"
    assert not inside_box(pts, held.center, held.size).any()
    assert not inside_box(pts, *BOOK).any()
    off = GraspService(make("grasp", "antipodal"), GripperGeometry(), ServiceConfig(neighbour_boxes=False))
    assert not inside_box(off._fixture_points(scene, box), *JAR).any()
