"""ArmPlans and ArmReach on the real libraries: a start in contact is left by a straight move
before the plan, the simulated cell's stand is a body, and a place pose is judged around the
scene as well as against the arm itself."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ompl")
pytest.importorskip("pinocchio")

from spatial_manip.control.config import load_arm_config  # noqa: E402
from spatial_manip.motion.arm_plans import ArmPlans, ArmReach  # noqa: E402
from spatial_manip.motion.cartesian import clear_of_contact, straight_segment  # noqa: E402
from spatial_manip.motion.checker import CollisionChecker  # noqa: E402
from spatial_manip.motion.factory import make_planner  # noqa: E402
from spatial_manip.motion.world import CollisionWorld  # noqa: E402
from spatial_manip.scene import SceneObject, Viewpoint, Scene  # noqa: E402

DOWN = np.diag([1.0, -1.0, -1.0])        # TCP approach -z (top-down)


def pose(p, R=DOWN) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


@pytest.fixture(scope="module")
def planner():
    return make_planner(load_arm_config(), {"seed": 5})


@pytest.fixture(scope="module")
def sim_planner():
    return make_planner(load_arm_config(None, {"arm.backend": "sim"}), {"seed": 5})


@pytest.fixture(scope="module")
def home():
    return np.asarray(load_arm_config()["primitives"]["home_q"], float)


def test_a_start_touching_a_box_backs_out_straight_then_plans(planner, home):
    """A finger left against a book (a move stopped short) backs 5 cm out along the TCP axis,
    touching only that book, and the transit is planned from there."""
    q = planner.envelope.kin.ik(pose([0.45, 0.0, 0.20]), home)
    world = CollisionWorld()
    world.add_box("book_1", [0.45, 0.056, 0.20], [0.02, 0.012, 0.04])        # against the open finger
    world.add_box("table", [0.6, 0.0, -0.025], [0.9, 1.4, 0.05])
    checker = CollisionChecker(planner.robot, world, planner.envelope, 0.0)
    assert checker.contact(q)[1] == "book_1"
    T_clear, q_clear = clear_of_contact(planner.robot, planner.envelope, world, q)
    np.testing.assert_allclose(T_clear[:3, 3], [0.45, 0.0, 0.25], atol=1e-9)   # back along the TCP z (down)
    np.testing.assert_allclose(planner.envelope.kin.fk(q_clear), T_clear, atol=1e-6)
    assert checker.contact(q_clear) is None

    transit = ArmPlans(planner).transit(q, home, world, "home")
    np.testing.assert_allclose(transit.clear_T, T_clear)
    np.testing.assert_allclose(transit.path.waypoints[0], q_clear, atol=1e-9)
    np.testing.assert_allclose(transit.path.waypoints[-1], home, atol=1e-9)


def test_a_start_touching_nothing_needs_no_clearing(planner, home):
    T_clear, q = clear_of_contact(planner.robot, planner.envelope, CollisionWorld(), home)
    assert T_clear is None and np.array_equal(q, home)


def test_the_sim_cells_stand_blocks_an_arm_hanging_down_beside_it(sim_planner):
    """The simulated UR5e stands on a pillar (sim/mjcf.py's robot_stand); the sim cell's
    envelope makes it a body, so the upper arm hanging straight down is refused."""
    hanging = np.array([0.0, 1.57, 0.0, -1.57, 0.0, 0.0])
    world = CollisionWorld().with_keep_out(sim_planner.envelope)
    pair = CollisionChecker(sim_planner.robot, world, sim_planner.envelope, 0.0).contact(hanging)
    assert pair == ("upper_arm_link", "keep_out:robot_stand")


def test_the_sim_cells_stand_is_round(sim_planner):
    """The stand is a 0.08 m pillar; its keep-out is the pillar plus 1 cm, round: an arm 1 cm
    clear of the pillar beside the box's corner is not refused (place-85-00013's start: the
    forearm reaching down past the stand's corner, refused for every motion by the old square
    box), while one whose forearm passes within 1 cm of the pillar still is."""
    stand = next(b for b in sim_planner.envelope.config.keep_out if b.name == "robot_stand")
    assert stand.radius_m == pytest.approx(0.09) and stand.max_m[0] == pytest.approx(0.09)
    start = np.array([-3.824, -0.274, 2.477, -5.513, -1.108, -0.351])
    world = CollisionWorld().with_keep_out(sim_planner.envelope)
    assert CollisionChecker(sim_planner.robot, world, sim_planner.envelope, 0.0).contact(start) is None
    square = CollisionWorld()
    square.add_box("square", [0.0, 0.0, -0.46], [0.18, 0.18, 0.88])
    assert CollisionChecker(sim_planner.robot, square, sim_planner.envelope, 0.0).contact(start) is not None
    hanging = np.array([0.0, 1.57, 0.0, -1.57, 0.0, 0.0])
    assert CollisionChecker(sim_planner.robot, world, sim_planner.envelope, 0.0).contact(hanging) is not None


def test_a_place_blocked_by_a_fixture_is_refused_around_the_scene_only(planner):
    """A book set down on the table beside a tall board: the bare arm reaches the pose, but the
    arm carrying the book would sweep through the board on every configuration."""
    reach = ArmReach(planner)
    T = pose([0.50, 0.0, 0.05])
    pre = pose([0.50, 0.0, 0.15])
    assert reach.reaches(pre, T)
    viewer = Viewpoint(np.array([-0.9, 0.0, 0.9]), np.array([1.0, 0.0, -0.6]))
    table = SceneObject("table", "table", "table", np.array([0.6, 0.0, -0.025]), np.array([0.9, 1.4, 0.05]),
                        np.eye(3))
    board = SceneObject("board", "board", "support", np.array([0.50, 0.0, 0.25]), np.array([0.30, 0.30, 0.02]),
                        np.eye(3))
    scene = Scene(viewer, Viewpoint(np.zeros(3), np.array([1.0, 0.0, 0.0])), [table, board], [], {})
    T_object_tcp = np.linalg.inv(pose([0.0, 0.0, 0.03], np.eye(3)))
    around = reach.around(scene, "book_9", [0.20, 0.03, 0.15], T_object_tcp)
    assert not around.reaches(pre, T)
    assert around.around(None, "book_9", [0.2, 0.03, 0.15], T_object_tcp) is around


def test_what_a_book_leans_against_is_touching_but_not_under_it():
    """A book leaning on a holder's wall: the wall is beside it (not a support under it), and
    lifting the book out slides along it, so the lift may touch it."""
    from spatial_manip.motion.world import support_ids, touching_ids

    viewer = Viewpoint(np.array([-0.9, 0.0, 0.9]), np.array([1.0, 0.0, -0.6]))
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(0.3), -np.sin(0.3)], [0.0, np.sin(0.3), np.cos(0.3)]])
    book = SceneObject("book_1", "book", "book", np.array([0.5, 0.0, 0.11]), np.array([0.15, 0.02, 0.21]), tilt)
    wall_y = book.corners()[:, 1].max() + 0.005
    holder = SceneObject("holder", "holder", "support", np.array([0.5, wall_y + 0.01, 0.05]),
                         np.array([0.15, 0.02, 0.10]), np.eye(3))
    far = SceneObject("lamp", "lamp", "reference", np.array([0.5, 0.4, 0.05]), np.array([0.05, 0.05, 0.1]), np.eye(3))
    scene = Scene(viewer, Viewpoint(np.zeros(3), np.array([1.0, 0.0, 0.0])), [book, holder, far], [], {})
    assert "holder" not in support_ids(scene, "book_1", gap_m=0.03)
    assert touching_ids(scene, "book_1", gap_m=0.03) == ["holder"]


def _cloud_of_box(center, size, step=0.01) -> list:
    """Points on the faces of an axis-aligned box, as a depth camera would see them (all sides)."""
    c, h = np.asarray(center, float), np.asarray(size, float) / 2
    axes = [np.arange(-h[k], h[k] + 1e-9, step) for k in range(3)]
    g = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    on_face = np.any(np.isclose(np.abs(g), h, atol=step / 2), axis=1)
    return (g[on_face] + c).tolist()


def test_clutter_in_the_cloud_blocks_a_move_that_the_scene_boxes_allow(planner, home):
    """A lamp the camera saw but perception did not name is avoided through the goal's cloud; a
    named book's own points are not clutter, nor is the arm itself."""
    viewer = Viewpoint(np.array([-0.9, 0.0, 0.9]), np.array([1.0, 0.0, -0.6]))
    book = SceneObject("book_1", "book", "book", np.array([0.45, 0.0, 0.05]), np.array([0.15, 0.2, 0.1]), np.eye(3))
    q = planner.envelope.kin.ik(pose([0.45, 0.0, 0.35]), home)
    arm_points = [planner.envelope.kin.fk(q)[:3, 3] + [0.0, 0.0, 0.05]]            # on the gripper
    lamp = _cloud_of_box([0.45, 0.0, 0.20], [0.06, 0.06, 0.06])                    # between the TCP and the book
    cloud = {"voxel_m": 0.02, "points": _cloud_of_box(book.center, book.size) + lamp + arm_points}
    scene = Scene(viewer, Viewpoint(np.zeros(3), np.array([1.0, 0.0, 0.0])), [book], [], {"cloud": cloud})
    plans = ArmPlans(planner)
    clutter, voxel, clearance = plans._clutter(scene, q)
    assert voxel == 0.02 and clearance == 0.0 and len(clutter) == len(lamp)     # the lamp only
    world = plans.world(scene, q_now=q)
    assert "cloud" in world.names()
    with pytest.raises(Exception, match="cloud"):
        straight_segment(planner.robot, planner.envelope, world, q, pose([0.45, 0.0, 0.12]), allowed=["book_1"])
    bare = ArmPlans(planner).world(Scene(viewer, scene.robot, [book], [], {}), q_now=q)
    straight_segment(planner.robot, planner.envelope, bare, q, pose([0.45, 0.0, 0.12]), allowed=["book_1"])


def test_an_arm_at_home_goes_nowhere_and_builds_no_world(planner, home):
    class NoWorld(ArmPlans):
        def world(self, *a, **kw):
            raise AssertionError("a world was built for an arm already at home")

    transit = NoWorld(planner).home(home + 5e-5, home, None, None)
    assert transit.path is None and transit.clear_T is None
    away = home + np.array([0.3, 0, 0, 0, 0, 0])
    assert ArmPlans(planner).home(away, home, None, None).path is not None



def test_a_picks_transit_hands_the_pre_grasp_hints_to_the_planner(monkeypatch):
    """ArmPlans.pre_grasp_hints (the grasp service's paths, set by the arm server) reach the
    planner for a transit that has some, and nothing extra is passed when there are none."""
    import spatial_manip.motion.arm_plans as arm_plans

    calls = []

    class Planner:
        robot, envelope = None, None

        def plan(self, start, goal, world, *, phase="transit", **kw):
            calls.append(kw)
            return type("Path", (), {"waypoints": np.array([start, goal])})()

    monkeypatch.setattr(arm_plans, "clear_of_contact", lambda robot, envelope, world, q: (None, np.asarray(q, float)))
    plans = ArmPlans(Planner())
    plans.transit(np.zeros(6), np.ones(6), None, "pre_grasp", [np.zeros((2, 6))])
    plans.transit(np.zeros(6), np.ones(6), None, "home")
    assert len(calls[0]["hints"]) == 1 and calls[1] == {}


def test_a_pick_goes_first_where_the_motion_checks_path_runs(planner, home):
    """The grasp service's motion check reached a grasp on a configuration other than the nearest
    and at a shorter stand-off (the nearer ones may need a search that fails: pick-82-00002 spent
    2.1 s so before its first motion). Its path, handed over as a hint from where the arm still
    is, is what the pick's transit follows; a hint from elsewhere leaves the nearest first."""
    from spatial_manip.control.primitives import pre_grasp_poses

    grasp = pose([0.45, 0.1, 0.10])
    pres = pre_grasp_poses(grasp, 0.10)
    plans = ArmPlans(planner)
    nearest = plans._configurations(home, pres[0], "pre_grasp")[0]
    checked = plans._configurations(home, pres[1], "pre_grasp")[1]         # the shoulder turned the other way
    path = planner.plan(home, checked, CollisionWorld(), phase="pre_grasp").waypoints
    plans.pre_grasp_hints = [path]
    transit = plans.pick_start(home + 0.003, grasp, pres, None, "").transit    # the arm's noise since the check
    assert transit.path.found_by == "hint"
    np.testing.assert_allclose(transit.path.waypoints[-1], checked, atol=1e-9)
    plans.pre_grasp_hints = [np.vstack([home + 0.1, path[1:]])]
    transit = plans.pick_start(home, grasp, pres, None, "").transit
    np.testing.assert_allclose(transit.path.waypoints[-1], nearest, atol=1e-9)


def test_a_hinted_pick_solves_each_pre_grasps_ik_once(planner, home, monkeypatch):
    """Ordering the pre-grasps by the hint needs every pre-grasp's IK; the reach then uses those
    solutions, not a second IK of the one it takes. Without a hint from where the arm is, only the
    pre-grasps tried are solved."""
    from spatial_manip.control.primitives import pre_grasp_poses

    grasp = pose([0.45, 0.1, 0.10])
    pres = pre_grasp_poses(grasp, 0.10)
    plans = ArmPlans(planner)
    checked = plans._configurations(home, pres[1], "pre_grasp")[1]
    path = planner.plan(home, checked, CollisionWorld(), phase="pre_grasp").waypoints
    kin_class, solved = type(planner.envelope.kin), []
    ik_all = kin_class.ik_all
    monkeypatch.setattr(kin_class, "ik_all", lambda self, T, q: solved.append(T) or ik_all(self, T, q))
    plans.pre_grasp_hints = [path]
    plans.pick_start(home + 0.003, grasp, pres, None, "")
    assert len(solved) == len(pres) > 1
    solved.clear()
    plans.pre_grasp_hints = []
    plans.pick_start(home, grasp, pres, None, "")
    assert len(solved) == 1
