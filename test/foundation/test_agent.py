"""The agent's decisions on unit-test ports: what is in the gripper, homing before a look,
trying grasps in order, and checking a pick."""
import threading
from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.agent import (MOTION_HOME, MOTION_PICK, MOTION_PLACE, REGRASP_LIFT_M, Agent, AgentConfig, MotionResult,
                                 _tcp_poses)
from spatial_manip.control.primitives import lift_height_for
from spatial_manip.errors import GraspFailedError, MotionFailedError, UnreachableError
from spatial_manip.geometry.relations import book_pose_class
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.pipeline import Decision, Perceived, Placed, SetDown, TouchedGraspError, Verified, validate_goal
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.transforms import make_transform

BOOK = SceneObject("book_1", "book", "book", [0.5, 0.0, 0.02], [0.2, 0.15, 0.03])


def _scene(*objects) -> Scene:
    return Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), list(objects))


def _grasps(scores, width=0.03, depth=0.01, poses=None) -> GraspGroup:
    """Base-frame grasps (identity poses unless given), as the grasp service's port returns them."""
    poses = np.tile(np.eye(4), (len(scores), 1, 1)) if poses is None else np.asarray(poses, float)
    return GraspGroup.from_parts(scores=scores, widths=width, heights=0.02, depths=depth,
                                 rotations=poses[:, :3, :3], translations=poses[:, :3, 3], frame_id="base")


class FakePorts:
    """A unit-test double for the agent's I/O: a settable workspace and scripted motion results."""

    def __init__(self, results=(), ready=True):
        self.ws = None
        self.results, self.ready = list(results), ready
        self.requests = []

    def workspace(self):
        return self.ws, None

    def arm_ready(self):
        return self.ready

    def run_motion(self, request, cancel):
        self.requests.append(request)
        return self.results.pop(0) if self.results else MotionResult(success=True)

    def tcp_pose(self):
        return np.eye(4)

    def joint_positions(self):
        return None

    def stop_motion(self):
        pass


def test_each_new_workspace_says_what_is_in_the_gripper():
    ports = FakePorts()
    agent = Agent(ports, AgentConfig(planner="program"))
    assert agent.held_id() is None
    held = SceneObject("book_1", "book", "book", [0, 0, 0], [0.2, 0.15, 0.03], held=True,
                       extra={"T_object_tcp": np.eye(4).tolist()})
    ports.ws = _scene(held)
    assert agent.held_id() == "book_1"
    ports.ws = _scene(BOOK)          # a reset with nothing in hand
    assert agent.held_id() is None


def test_the_arm_goes_home_before_a_look_unless_it_holds_something_it_cannot_carry():
    warnings = []
    ports = FakePorts(ready=False)
    agent = Agent(ports, warn=warnings.append)
    for _ in range(2):
        agent.clear_view(threading.Event())
    assert ports.requests == [] and warnings == ["no arm action server: perceiving with the arm where it is"]
    ports.ready = True
    agent.clear_view(threading.Event())
    assert [r.kind for r in ports.requests] == [MOTION_HOME]
    # held, its grasp not known: it cannot be carried as planned, so the look is taken where the arm is
    ports.ws = _scene(SceneObject("book_1", "book", "book", [0, 0, 0], [0.2, 0.15, 0.03], held=True))
    agent.clear_view(threading.Event())
    assert len(ports.requests) == 1


def test_holding_an_object_the_arm_carries_it_home_on_the_gripper_before_a_look():
    """Issues 37/38: a place goal's look was taken with the arm holding the object where the scene
    began, and the arm hid the place's reference (objects-88-00014: the forearm in front of the
    pillar bookend, TARGET_NOT_FOUND). The arm now carries it home first, before any look of the
    goal, the object a body on the gripper at its known grasp."""
    T = make_transform(np.eye(3), [0.0, 0.0, 0.05])
    held = SceneObject("can_1", "can", "can", [0.3, 0.0, 0.4], [0.066, 0.066, 0.12], held=True,
                       extra={"T_object_tcp": T.tolist()})
    table = SceneObject("table", "table", "table", [0.55, 0.0, -0.35], [0.6, 1.4, 0.7])
    ports = FakePorts()
    ports.ws = _scene(table, held)
    Agent(ports).clear_view(threading.Event())
    [request] = ports.requests
    assert request.kind == MOTION_HOME
    carried = request.scene.held_object()
    assert carried.id == "can_1" and np.allclose(carried.extra["T_object_tcp"], T)
    assert "table" in request.scene.ids()
    ports = FakePorts()
    ports.ws = _scene(table, held)
    Agent(ports, AgentConfig(carry_out_of_view=False)).clear_view(threading.Event())
    assert ports.requests == []


def test_a_look_after_the_carry_places_the_held_object_as_it_was_held_before_it():
    """At home the tool is turned: a place that keeps the held object's pose kept the turned one
    and set a bottle down on its side (objects-81-00009). The look places it as it was held
    before the first carry; a second carry (after a failed place) keeps that first pose."""
    T_grasp = make_transform(np.eye(3), [0.0, 0.0, 0.05])
    T_before = make_transform(Rotation.from_euler("z", 30, degrees=True).as_matrix() @ np.diag([1.0, -1.0, -1.0]),
                              [0.3, 0.2, 0.45])
    T_home = make_transform(Rotation.from_euler("x", 90, degrees=True).as_matrix(), [-0.5, -0.4, -0.44])
    held = SceneObject("can_1", "can", "can", [0.3, 0.2, 0.4], [0.066, 0.066, 0.12], held=True,
                       extra={"T_object_tcp": T_grasp.tolist()})

    class Carrying(FakePorts):
        tcp = T_before

        def tcp_pose(self):
            return self.tcp

        def run_motion(self, request, cancel):
            self.requests.append(request)
            self.tcp = T_home
            return MotionResult(success=True, final_pose=T_home)

    ports = Carrying()
    ports.ws = _scene(held)
    agent = Agent(ports)
    agent.clear_view(threading.Event())
    want = T_before @ np.linalg.inv(T_grasp)
    for _ in range(2):
        seen = agent._mark_held(_scene(BOOK), ports.ws).get("can_1")
        assert seen.held and np.allclose(seen.center, want[:3, 3]) and np.allclose(seen.rotation, want[:3, :3])
        ports.tcp = make_transform(np.eye(3), [0.4, 0.0, 0.3])     # a failed place left it elsewhere: carried again
        agent.clear_view(threading.Event())
    assert [r.kind for r in ports.requests] == [MOTION_HOME] * 3


def test_a_carry_the_arm_server_refuses_leaves_the_arm_where_it_is_and_the_trace_says_why():
    """Home may be no carry pose on a layout (motion.carry: before a shelf it hides the lowest
    board as much as the arm where it is; a start inside the stand's keep-out, place-85-00013):
    the arm server refuses, the look is taken where the arm is and `carry_note` says so; the
    same pose is not asked again until the arm moves or a new scene begins, and the look places
    the held object where the TCP is (no carry happened)."""
    T_grasp = make_transform(np.eye(3), [0.0, 0.0, 0.05])
    held = SceneObject("book_11", "book", "book", [0.5, 0.2, 0.1], [0.115, 0.018, 0.181], held=True,
                       extra={"T_object_tcp": T_grasp.tolist()})
    refusal = MotionResult(success=False, error_code="UNREACHABLE",
                           message="home is no carry pose for book_11 on this layout: the arm and what it "
                                   "holds would hide 43% of the scene from the camera there, 41% where the arm is")
    ports = FakePorts(results=[refusal])
    ports.ws = _scene(held)
    agent = Agent(ports)
    agent.clear_view(threading.Event())
    assert [r.kind for r in ports.requests] == [MOTION_HOME]
    assert agent.carry_note.startswith("not carried out of view (home is no carry pose for book_11")
    assert agent._holding.T_base_tcp_before_carry is None
    agent.clear_view(threading.Event())          # the arm has not moved: not asked again
    assert len(ports.requests) == 1 and agent.carry_note is None
    ports.ws = _scene(held)                      # a new scene (a reset): asked again, and carried
    agent.clear_view(threading.Event())
    assert len(ports.requests) == 2 and agent.carry_note == "book_11 carried out of the camera's view"


def test_a_lost_arm_server_before_a_look_leaves_the_look_to_say_whether_the_camera_is_there():
    """Issue 35: a frozen sim_node during perceiving ended MOTION_FAILED from the home move; the
    look that follows names the camera (NO_OBSERVATION) when the camera is gone too."""
    from spatial_manip.errors import ArmLostError

    class LostArm(FakePorts):
        def run_motion(self, request, cancel):
            self.requests.append(request)
            raise ArmLostError("arm server lost: no TCP pose for 3 s during the motion")
    warnings = []
    ports = LostArm()
    Agent(ports, warn=warnings.append).clear_view(threading.Event())
    assert len(ports.requests) == 1 and "arm server lost" in warnings[0]


def test_a_grasp_refused_before_the_arm_moved_gives_way_to_the_next_and_the_one_that_holds_is_remembered():
    ports = FakePorts([MotionResult(success=False, error_code="MOTION_FAILED", message="no path to the pre-grasp",
                                    final_pose=np.eye(4)),
                       MotionResult(success=True, object_held=True)])
    agent = Agent(ports)
    decision = Decision("pick", ("book_1",), pick_id="book_1", scene=_scene(BOOK))
    picked = agent.pick(_grasps([0.9, 0.8]), decision, threading.Event())
    assert picked.score == pytest.approx(0.8) and picked.object_id == "book_1" and agent.held_id() == "book_1"
    assert [r.kind for r in ports.requests] == [MOTION_PICK] * 2
    assert ports.requests[0].gripper_width_m == pytest.approx(0.05)
    assert ports.requests[0].lift_height_m == lift_height_for(BOOK.size)
    goal = validate_goal("pick the book", "pick")
    assert agent.verify(decision, None, goal, None) == Verified(True, "", "book_1 is in the gripper")


@pytest.mark.parametrize("result", [
    MotionResult(success=False, error_code="GRASP_FAILED", message="the gripper closed to 0.002 m without detecting "
                 "an object"),
    MotionResult(success=False, error_code="GRASP_FAILED", message="the object slipped out of the gripper during "
                 "the lift"),
    MotionResult(success=False, error_code="MOTION_FAILED", message="move_l: the simulated arm could not follow "
                 "(blocked by contact or IK)", final_pose=make_transform(np.eye(3), [0.3, 0.1, 0.2]))])
def test_a_grasp_that_reached_the_object_and_holds_nothing_stops_the_list_for_a_new_look(result):
    """A miss, a slip, or an arm stopped on its way may have moved the object: the rest of the list
    was proposed for a table that may be gone (the pipeline looks again, `MAX_RELOOKS`)."""
    ports = FakePorts([result, MotionResult(success=True, object_held=True)])
    decision = Decision("pick", ("book_1",), pick_id="book_1", scene=_scene(BOOK))
    poses = [make_transform(np.eye(3), [0.5, 0.0, 0.05]), make_transform(np.eye(3), [0.45, 0.0, 0.05])]
    with pytest.raises(TouchedGraspError, match="1 grasp.s. of book_1 failed, the last after reaching it") as e:
        Agent(ports).pick(_grasps([0.9, 0.8], poses=poses), decision, threading.Event())
    assert len(ports.requests) == 1 and e.value.code.value == "GRASP_FAILED"
    assert np.allclose(e.value.tcp_pose, ports.requests[0].target)


def test_a_grasp_that_failed_after_reaching_the_object_is_not_tried_again_on_the_new_look():
    ports = FakePorts([MotionResult(success=True, object_held=True)])
    failed = _tcp_poses(_grasps([0.9], poses=[make_transform(np.eye(3), [0.5, 0.0, 0.05])]))[0]
    same = make_transform(Rotation.from_euler("z", 10, degrees=True).as_matrix(), [0.504, 0.0, 0.05])
    other = make_transform(Rotation.from_euler("z", 90, degrees=True).as_matrix(), [0.5, 0.0, 0.05])
    decision = Decision("pick", ("book_1",), pick_id="book_1", scene=_scene(BOOK), failed_grasps=(failed,))
    picked = Agent(ports).pick(_grasps([0.9, 0.8], poses=[same, other]), decision, threading.Event())
    assert picked.score == pytest.approx(0.8) and len(ports.requests) == 1

    class SameAgain(FakePorts):     # the best alone was proposed: the pick asks for more, and gets it again
        def propose_grasps(self, target_id, max_grasps):
            return _grasps([0.9], poses=[same])
    with pytest.raises(GraspFailedError, match="every proposed grasp of book_1 is one that reached it and failed"):
        Agent(SameAgain()).pick(_grasps([0.9], poses=[same]), decision, threading.Event())


def test_a_pick_refused_its_best_grasp_before_moving_asks_for_the_rest_and_tries_the_ones_not_tried():
    """A pick proposes its best grasp alone; when the arm refuses it without moving, the pick asks
    for as many as it may try and goes on with the others (the refused one proposed again is
    skipped), as it went down the list before; a grasp that held asks for nothing more."""
    asked = []
    best, second = (make_transform(np.eye(3), [0.5, 0.0, 0.05]),
                    make_transform(Rotation.from_euler("z", 90, degrees=True).as_matrix(), [0.45, 0.0, 0.05]))

    class Proposing(FakePorts):
        def propose_grasps(self, target_id, max_grasps):
            asked.append(max_grasps)
            return _grasps([0.9, 0.8][:max_grasps], poses=[best, second][:max_grasps])
    refused = MotionResult(success=False, error_code="MOTION_FAILED", message="approach: the straight move is blocked")
    ports = Proposing([refused, MotionResult(success=True, object_held=True)])
    agent = Agent(ports, AgentConfig(max_grasp_tries=3))
    decision = Decision("pick", ("book_1",), pick_id="book_1", scene=_scene(BOOK))
    picked = agent.pick(agent.propose_grasps(decision, Perceived(None, decision.scene)), decision, threading.Event())
    assert asked == [1, 3] and picked.score == pytest.approx(0.8)
    assert [r.target[:3, 3].tolist() for r in ports.requests] == [t[:3, 3].tolist() for t in
                                                                 _tcp_poses(_grasps([0.9, 0.8], poses=[best, second]))]
    asked.clear()
    held = Proposing([MotionResult(success=True, object_held=True)])
    agent = Agent(held, AgentConfig(max_grasp_tries=3))
    assert agent.pick(agent.propose_grasps(decision, Perceived(None, decision.scene)), decision,
                      threading.Event()).score == pytest.approx(0.9)
    assert asked == [1] and len(held.requests) == 1


def test_grasps_not_in_the_base_frame_are_refused_before_the_arm_moves():
    from spatial_manip.errors import SpatialManipError

    class CameraFrameGrasps(FakePorts):
        def propose_grasps(self, target_id, max_grasps):
            return GraspGroup.from_parts(scores=[0.9], widths=0.03, heights=0.02, depths=0.01, rotations=np.eye(3),
                                         translations=np.zeros(3), frame_id="camera_color_optical_frame")
    ports = CameraFrameGrasps()
    decision = Decision("pick", ("book_1",), pick_id="book_1", scene=_scene(BOOK))
    with pytest.raises(SpatialManipError, match="came in frame 'camera_color_optical_frame', expected 'base'"):
        Agent(ports).propose_grasps(decision, Perceived(None, decision.scene))
    assert ports.requests == []


def test_a_pick_asks_for_its_best_grasp_and_a_pick_and_place_for_three_times_as_many_as_it_tries():
    asked = []

    class CountingPorts(FakePorts):
        def propose_grasps(self, target_id, max_grasps):
            asked.append(max_grasps)
            return _grasps([0.9])
    agent = Agent(CountingPorts(), AgentConfig(max_grasp_tries=4))
    pick = Decision("pick", ("book_1",), pick_id="book_1", scene=_scene(BOOK))
    agent.propose_grasps(pick, Perceived(None, pick.scene))
    agent.propose_grasps(replace(pick, place_pose=np.eye(4)), Perceived(None, pick.scene))
    assert asked == [1, 12]


def test_grasps_that_all_miss_are_grasp_failed_with_each_reason():
    ports = FakePorts([MotionResult(success=False, error_code="MOTION_FAILED", message="stopped short")] * 2)
    agent = Agent(ports, AgentConfig(max_grasp_tries=2))
    decision = Decision("pick", ("book_1",), pick_id="book_1", scene=_scene(BOOK))
    with pytest.raises(GraspFailedError, match="2 grasp.s. of book_1 failed: MOTION_FAILED: stopped short; "):
        agent.pick(_grasps([0.9] * 3), decision, threading.Event())
    assert agent.held_id() is None


def test_a_place_with_nothing_known_in_the_gripper_is_refused_before_moving():
    ports = FakePorts()
    cancel = threading.Event()
    cancel.set()       # no waiting for a workspace that may still say what is held
    decision = Decision("place", (), place_pose=np.eye(4), scene=_scene(BOOK))
    with pytest.raises(MotionFailedError, match="nothing is known to be in the gripper"):
        Agent(ports).set_down(decision, None, cancel)
    assert ports.requests == []


def test_a_slot_place_out_of_reach_in_the_middle_is_made_nearer_the_robot_in_the_same_slot():
    """place-6-00015: the slot above the sculpture sits 0.57 m to the side; its middle is out of
    the arm's reach for a book slid in held by its edge, its near end is not."""
    from spatial_manip.grasping.place_fit import point_in_box
    from spatial_manip.scene import Region
    slot = Region("slot_r4c3", "slot", center=[0.97, -0.569, -0.284], size=[0.44, 0.56, 0.344],
                  rotation=np.diag([-1.0, -1.0, 1.0]))
    grasp = np.array([[0, 0, 1.0, -0.084], [0, 1.0, 0, 0], [-1.0, 0, 0, 0], [0, 0, 0, 1]])  # by its width edge
    held = SceneObject("book_13", "book", "book", [0.5, 0.0, 0.2], [0.228, 0.039, 0.258], held=True,
                       extra={"T_object_tcp": grasp.tolist()})
    scene = Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [held], [slot])
    ports = FakePorts()
    ports.ws = scene
    T_place = np.diag([-1.0, -1.0, 1.0, 1.0])
    T_place[:3, 3] = [0.97, -0.569, -0.327]
    decision = Decision("place", ("slot_r4c3",), place_pose=T_place, scene=scene)
    agent = Agent(ports, AgentConfig(arm_backend="sim"))
    placed = agent.place(decision, agent.set_down(decision, None, threading.Event()), threading.Event()).set_down
    assert placed.object_pose[1, 3] > -0.569 + 0.04 and point_in_box(placed.object_pose[:3, 3], slot)
    assert placed.slot is slot and len(ports.requests) == 1
    assert ports.requests[0].approach_direction is not None and ports.requests[0].approach_distance_m > 0
    # a pick-and-place keeps the grasps that make one of those places, and sets down where they do
    decision, T_obj = _book_into_the_far_slot(slot, T_place)
    agent = Agent(FakePorts(), AgentConfig(arm_backend="sim"))
    kept, tcps, fitted = agent._grasps_that_place(_grasps([0.9], width=0.039), [T_obj @ grasp], T_obj,
                                                  decision.scene.get("book_13").size, decision)
    assert len(kept) == 1 and fitted[1, 3] > -0.569 + 0.04 and point_in_box(fitted[:3, 3], slot)


def _book_into_the_far_slot(slot, T_place) -> tuple[Decision, np.ndarray]:
    """A pick-and-place of a book on the table into `slot` at T_place, and the book's pose."""
    book = SceneObject("book_13", "book", "book", [0.5, 0.0, 0.129], [0.228, 0.039, 0.258])
    scene = Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [book], [slot])
    decision = Decision("pick_and_place", ("book_13", slot.id), pick_id="book_13", place_pose=T_place, scene=scene)
    return decision, make_transform(np.eye(3), book.center)


def _a_grasped_book_into_the_bottom_right_slot() -> tuple[Decision, np.ndarray, np.ndarray]:
    """A pick-and-place of a book into the shelf's bottom right slot, the book's pose, and a grasp of it
    (in its frame) from the side."""
    from spatial_manip.scene import Region
    slot = Region("slot_r4c3", "slot", center=[0.97, -0.569, -0.284], size=[0.44, 0.56, 0.344],
                  rotation=np.diag([-1.0, -1.0, 1.0]))
    T_place = np.diag([-1.0, -1.0, 1.0, 1.0])
    T_place[:3, 3] = [0.97, -0.569, -0.327]
    decision, T_obj = _book_into_the_far_slot(slot, T_place)
    return decision, T_obj, np.array([[0, 0, 1.0, -0.084], [0, 1.0, 0, 0], [-1.0, 0, 0, 0], [0, 0, 0, 1]])


def test_a_cancel_while_a_pick_and_places_set_down_is_fitted_ends_the_fitting_at_its_next_arm_check(monkeypatch):
    """The fit asks the arm model about dozens of rotations per grasp (75 here, 8.5 s in the cancel
    soak at load 5-9, 22 s in a test at load 20) before the pick's motion is sent: a cancel made
    during one of them ends the pick at the next, and no motion is sent."""
    from spatial_manip.errors import CanceledError
    from spatial_manip.motion.arm_plans import ArmReach
    decision, T_obj, grasp = _a_grasped_book_into_the_bottom_right_slot()
    cancel, checks, reaches = threading.Event(), [], ArmReach.reaches

    def canceled_during_the_second(self, pre_T, T_base_tcp):
        checks.append(pre_T)
        answer = reaches(self, pre_T, T_base_tcp)
        if len(checks) == 2:
            cancel.set()
        return answer

    monkeypatch.setattr(ArmReach, "reaches", canceled_during_the_second)
    ports = FakePorts()
    agent = Agent(ports, AgentConfig(arm_backend="sim"))
    with pytest.raises(CanceledError, match="canceled while its set-down was being fitted"):
        agent.pick(_grasps([0.9] * 3, width=0.039, poses=[T_obj @ grasp] * 3), decision, cancel)
    assert len(checks) == 3 and ports.requests == []


def test_a_dry_runs_place_check_canceled_before_it_starts_asks_the_arm_model_nothing(monkeypatch):
    """A dry run's place check fits the same set-downs (8-22 s under load); a cancel set before it
    ends it before the first arm check, even where no rotation would come as far as one."""
    from spatial_manip.errors import CanceledError
    from spatial_manip.motion.arm_plans import ArmReach
    decision, T_obj, grasp = _a_grasped_book_into_the_bottom_right_slot()
    checks = []
    monkeypatch.setattr(ArmReach, "reaches", lambda self, pre_T, T: checks.append(pre_T) or True)
    agent = Agent(FakePorts(), AgentConfig(arm_backend="sim"))
    monkeypatch.setattr(agent, "propose_grasps", lambda decision, seen: _grasps([0.9] * 3, width=0.039,
                                                                                poses=[T_obj @ grasp] * 3))
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CanceledError, match="the set-down was not sent"):
        agent.check_place(decision, None, cancel)
    assert checks == []


def test_a_book_too_wide_to_lay_flat_as_held_is_stood_up_only_when_the_words_name_no_pose_and_the_result_says_so():
    """The demo: its flat book (11.1 cm wide, wider than the 2F-85 opens) can be held only across its
    1.6 cm thickness, from the side where it overhangs its pedestal; laid flat on the table, the lower
    finger would be under it. With no pose word it stands up and the result says so; with one it is refused."""
    grasp = np.array([[0, 0, 1.0, -0.0355], [0, 1.0, 0, 0], [-1.0, 0, 0, 0], [0, 0, 0, 1]])   # 2 cm in from its edge
    held = SceneObject("book_3", "book", "book", [0.5, 0.0, 0.3], [0.111, 0.016, 0.185], held=True,
                       extra={"T_object_tcp": grasp.tolist()})
    table = SceneObject("table", "table", "table", [0.55, 0.0, -0.35], [0.6, 1.4, 0.7])
    ports = FakePorts()
    ports.ws = _scene(held, table)
    flat = np.eye(4)
    flat[:3, :3] = [[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]        # its thickness (y) vertical
    flat[:3, 3] = [0.55, 0.1, 0.008]
    agent = Agent(ports, AgentConfig(arm_backend="sim"))
    free = Decision("place", ("table",), place_pose=flat, scene=ports.ws, any_pose_class=True)
    put = agent.set_down(free, None, threading.Event())
    assert book_pose_class(replace(held, rotation=put.object_pose[:3, :3])) == "upright"
    assert put.note.startswith("set down upright, not flat: as the gripper holds it")
    with pytest.raises(UnreachableError):
        agent.set_down(replace(free, any_pose_class=False), None, threading.Event())


def _held_by_its_side_edge() -> tuple[Agent, FakePorts, Decision]:
    """place-85-00009 'lay the book flat on the shelf': the book came into the fingers held 3 cm in
    from its side edge, across its thickness; laid flat, the lower finger would be under it."""
    from spatial_manip.scene import Region
    slot = Region("slot_r3c1", "slot", center=[0.97, 0.368, -0.1475], size=[0.44, 0.825, 0.435],
                  rotation=np.diag([-1.0, -1.0, 1.0]))
    grasp = np.array([[0, 0, 1.0, -0.0247], [0, -1.0, 0, 0], [1.0, 0, 0, 0], [0, 0, 0, 1]])
    held = SceneObject("book_8", "book", "book", [0.52, -0.065, 0.109], [0.109, 0.017, 0.186], held=True,
                       extra={"T_object_tcp": grasp.tolist()})
    scene = Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [held], [slot])
    ports = FakePorts()
    ports.ws = scene
    T_place = np.array([[-1.0, 0, 0, 0.97], [0, 0, 1.0, 0.368], [0, 1.0, 0, -0.356], [0, 0, 0, 1]])   # flat
    return Agent(ports, AgentConfig(arm_backend="sim")), ports, Decision("place", ("slot_r3c1",), place_pose=T_place,
                                                                          scene=scene)


def test_a_held_book_that_cannot_be_laid_flat_as_held_is_stood_in_the_slot_and_grasped_nearer_its_edge():
    agent, ports, decision = _held_by_its_side_edge()
    put = agent.set_down(decision, None, threading.Event())
    r = put.regrasp
    assert r is not None and "put a finger into the support" in r.reason
    assert abs(r.aside.object_pose[2, 2]) > 0.99                   # stood upright (its height vertical) first
    assert abs(put.object_pose[2, 1]) > 0.99                       # then laid flat (its thickness vertical)
    assert 0.004 < r.slid_m <= 0.0247 + 0.0545 - 0.012             # nearer its edge, the pads still on it
    np.testing.assert_allclose(r.tcp_pose, r.aside.object_pose @ r.T_object_tcp, atol=1e-9)
    np.testing.assert_allclose(put.tcp_pose, put.object_pose @ r.T_object_tcp, atol=1e-9)
    assert r.aside.approach_direction is not None and put.approach_direction is not None
    ports.results = [MotionResult(success=True), MotionResult(success=True, object_held=True), MotionResult(success=True)]
    agent.place(decision, put, threading.Event())
    kinds = [q.kind for q in ports.requests]
    assert kinds == [MOTION_PLACE, MOTION_PICK, MOTION_PLACE]
    aside, pick, final = ports.requests
    np.testing.assert_allclose(aside.target, r.aside.tcp_pose)
    np.testing.assert_allclose(pick.target, r.tcp_pose)
    assert pick.target_id == "book_8" and pick.lift_height_m == REGRASP_LIFT_M
    book = pick.scene.get("book_8")                               # the pick plans around it where it stands
    assert not book.held and np.allclose(book.center, r.aside.object_pose[:3, 3])
    np.testing.assert_allclose(final.target, put.tcp_pose)
    assert agent._holding is None


def test_a_regrasp_is_made_once_a_goal_and_one_that_fails_is_not_retried():
    agent, ports, decision = _held_by_its_side_edge()
    with pytest.raises(UnreachableError, match="put a finger into the support"):
        agent.set_down(replace(decision, may_regrasp=False), None, threading.Event())
    put = agent.set_down(decision, None, threading.Event())
    ports.results = [MotionResult(success=True), MotionResult(success=False, error_code="GRASP_FAILED", message="slipped")]
    with pytest.raises(GraspFailedError, match="to be grasped again .* nearer its edge, and that grasp failed") as e:
        agent.place(decision, put, threading.Event())
    assert e.value.retryable is False and len(ports.requests) == 2 and agent._holding is None
    # a book 6 cm wide: held even 1.2 cm in from its edge, laid flat its middle would be out of the
    # slot with the finger under it; no regrasp can help, and the refusal says so before moving
    agent, ports, decision = _held_by_its_side_edge()
    agent.held_id()                    # the workspace says what is held, and how
    h = agent._holding
    narrow = np.array(h.T_object_tcp)
    narrow[0, 3] = -0.005
    agent._holding = replace(h, T_object_tcp=narrow, size=np.array([0.06, 0.017, 0.186]))
    with pytest.raises(UnreachableError, match="nor after a regrasp .no grasp slid out"):
        agent.set_down(decision, None, threading.Event())
    assert ports.requests == []


def test_a_retried_pick_keeps_to_what_the_words_described_before_the_failed_grasp_pushed_it():
    """pick-7-00010 'the books third farthest from the robot': book_4 alone on the first look; its
    failed grasp pushed it level with book_1, and the retry, trying the failed one last, took book_1."""
    from types import SimpleNamespace
    from spatial_manip.agent import _decision
    from spatial_manip.reasoning.reflection import reflect
    r1 = reflect(GraspFailedError("5 grasps of book_4 failed"), attempt=1, holding=None, pick_id="book_4",
                 pick_targets=["book_4"])
    tied = SimpleNamespace(targets=["book_1", "book_4"], notes=[], program="pick(...)", place_pose=None)
    d = _decision(_scene(BOOK), tied, None, r1)
    assert d.pick_id == "book_4" and d.pick_alternatives == ()
    assert any("book_4" in n and "first attempt" in n for n in d.notes)
    # a choice among several the words still describe: the one whose grasps failed goes last
    r = reflect(GraspFailedError("x"), attempt=1, holding=None, pick_id="book_1", pick_targets=["book_1", "book_2"])
    both = SimpleNamespace(targets=["book_1", "book_2", "book_3"], notes=[], program="pick(...)", place_pose=None)
    d = _decision(_scene(BOOK), both, None, r)
    assert d.pick_id == "book_2" and d.pick_alternatives == ("book_1",)



def _placed_decision(x, y, bottom, size=(0.15, 0.03, 0.22)) -> tuple[Decision, Placed]:
    """A place decision and what Agent.place returns: book_1 set down upright with its bottom at `bottom`."""
    T = np.eye(4)
    T[:3, 3] = [x, y, bottom + size[2] / 2]
    held = SceneObject("book_1", "book", "book", [0.3, 0.0, 0.4], size, held=True)
    put = SetDown(object_id="book_1", object_pose=T, tcp_pose=T, size=np.array(size))
    return Decision("place", (), place_pose=T, scene=_scene(held)), Placed(set_down=put)


def _verify(placed: tuple[Decision, Placed], goal, seen: Scene) -> tuple[bool, str, str]:
    v = Agent(FakePorts()).verify(placed[0], placed[1], goal, seen)
    return v.success, v.category, v.message


TABLE = SceneObject("table", "table", "table", [0.6, 0.0, -0.35], [0.6, 1.4, 0.7])
CUBE = SceneObject("cube", "rubik's cube", "reference", [0.5, 0.0, 0.03], [0.06, 0.06, 0.06])


def _seen_book(x, y, bottom):
    return SceneObject("book_1", "book", "book", [x, y, bottom + 0.11], [0.15, 0.03, 0.22])


def test_a_place_is_verified_by_the_placed_book_itself_resting_where_planned():
    goal = validate_goal("put it on the rubik's cube", "place")
    ok, _, msg = _verify(_placed_decision(0.5, 0.0, 0.06), goal,
                                           _scene(TABLE, CUBE, _seen_book(0.51, 0.0, 0.062)))
    assert ok and msg == "book_1 placed within 1.0 cm of the computed pose, on the rubik's cube (cube)"


def test_a_book_that_fell_fails_verification_saying_how_far_it_fell():
    goal = validate_goal("put it 50 cm above the table", "place")
    decision = _placed_decision(0.5, 0.0, 0.48)
    # it fell straight down onto the table: the old check (any object within 3 cm in x-y) passed this
    ok, category, msg = _verify(decision, goal, _scene(TABLE, _seen_book(0.5, 0.0, 0.0)))
    assert (ok, category, msg) == (False, "fell", "the book (book_1) is 0.48 m below the place pose: it fell")
    # off the cube onto the table beside it: the cube stands where the book should be, but lower
    ok, category, msg = _verify(_placed_decision(0.5, 0.0, 0.06), goal,
                                                  _scene(TABLE, CUBE, _seen_book(0.5, 0.1, 0.0)))
    assert (ok, category) == (False, "fell") and "0.06 m below the place pose" in msg


def test_a_book_seen_floating_or_missing_fails_verification_with_what_was_seen():
    goal = validate_goal("put it on the table", "place")
    floating = SceneObject("book_1", "book", "book", [0.5, 0.0, 0.25 + 0.11], [0.15, 0.03, 0.22])
    ok, category, msg = _verify(_placed_decision(0.5, 0.0, 0.25), goal, _scene(TABLE, floating))
    assert (ok, category) == (False, "not_supported") and "0.25 m above the nearest surface" in msg
    ok, category, msg = _verify(_placed_decision(0.5, 0.0, 0.0), goal, _scene(TABLE, CUBE))
    assert (ok, category) == (False, "not_in_region") and msg.startswith("book_1 is not seen after placing; "
                                                                        "the nearest object to the place pose, cube")


def _slot_place(seen_from, *seen) -> Verified:
    """place-51-00000: a book set down in the shelf's middle slot, judged on a look taken from
    `seen_from` (camera position, arm joints), as Agent.perceive leaves it."""
    from spatial_manip.scene import Region
    from spatial_manip.sim.world import STOW_Q
    slot = Region("slot_r2c1", "slot", center=[0.97, 0.044, 0.065], size=[0.44, 1.6, 0.577])
    T = np.eye(4)
    T[:3, 3] = [0.89, 0.044, -0.11]
    put = SetDown(object_id="book_3", object_pose=T, tcp_pose=T, size=np.array([0.15, 0.03, 0.22]), slot=slot)
    agent = Agent(FakePorts(), AgentConfig(arm_backend="sim"))
    agent._seen_from = (np.asarray(seen_from[0], float), None if seen_from[1] is None else STOW_Q + seen_from[1])
    decision = Decision("place", ("slot_r2c1",), place_pose=T, scene=_scene())
    return agent.verify(decision, Placed(set_down=put), validate_goal("place the book in the slot", "place"),
                        _scene(TABLE, *seen))


def test_a_place_the_arms_own_body_hides_from_the_camera_stands_on_its_release():
    """Seen from behind the robot with the arm home, the base hides the slot's middle: seeing no
    book there is no evidence, so the place is not retried (9 of 16 on seed 51 were)."""
    camera, pan = [-1.335, -0.091, 0.59], np.zeros(6)
    v = _slot_place((camera, pan), CUBE)
    assert v.success and v.message.startswith("book_3 released in slot_r2c1 as planned; not checked by sight: "
                                              "the arm's own body hides")
    # a book seen there is judged as always
    v = _slot_place((camera, pan), SceneObject("object_2", "book", "book", [0.9, 0.05, -0.1], [0.15, 0.03, 0.2]))
    assert v.success and v.message == "object_2 is in slot_r2c1"


def test_an_empty_place_in_full_view_or_seen_from_unknown_joints_still_fails():
    in_view = _slot_place(([-1.335, -1.2, 0.59], np.zeros(6)), CUBE)      # the camera off to the side
    unknown = _slot_place(([-1.335, -0.091, 0.59], None), CUBE)
    for v in (in_view, unknown):
        assert (v.success, v.category) == (False, "not_in_region") and v.message.startswith("no object is seen in")


def _stowed_agent() -> Agent:
    """An agent on the sim's arm, standing stowed (out of the camera's way)."""
    from spatial_manip.sim.world import STOW_Q

    class ArmStowed(FakePorts):
        def joint_positions(self):
            return np.array(STOW_Q)

    return Agent(ArmStowed(), AgentConfig(arm_backend="sim"))


def _book_set_down_in_a_slot() -> Placed:
    """book_3 (15 x 3 x 22 cm) set down in slot_r2c1 of a shelf."""
    from spatial_manip.scene import Region
    slot = Region("slot_r2c1", "slot", center=[0.97, 0.044, 0.065], size=[0.44, 1.6, 0.577])
    T = np.eye(4)
    T[:3, 3] = [0.89, 0.044, -0.11]
    return Placed(set_down=SetDown(object_id="book_3", object_pose=T, tcp_pose=T,
                                   size=np.array([0.15, 0.03, 0.22]), slot=slot))


def test_a_place_the_arm_hides_is_answered_on_the_frame_without_a_full_look():
    """Issue 42: when the frame's depth cannot confirm a set-down and the arm's own body hides
    it from the camera, a full look could not see it either: the release stands at once. In
    view, the frame check leaves it to the full look (None)."""
    from spatial_manip.geometry import synthetic as S
    from spatial_manip.camera_model import CameraIntrinsics

    placed = _book_set_down_in_a_slot()
    T = placed.set_down.object_pose
    agent = _stowed_agent()
    K = CameraIntrinsics.from_fovy(160, 120, 43.3)
    behind = S.render(K, S.look_at(np.array([-1.335, -0.091, 0.59]), T[:3, 3]), [], table_z=-0.22)
    v = agent.verify_on_frame(placed, behind)               # the slot is empty in this frame, and hidden
    assert v is not None and v.success and "not checked by sight" in v.message
    beside = S.render(K, S.look_at(np.array([-1.335, -1.2, 0.59]), T[:3, 3]), [], table_z=-0.22)
    assert agent.verify_on_frame(placed, beside) is None


def test_a_slot_place_off_its_own_pixels_is_confirmed_by_the_depth_that_arrived_in_the_slot():
    """Issue 42: a book standing in a slot often misses its planned box's pixels by a centimetre or
    two (seed 71: 3 of 6 places), and the full look that followed cost 7-10 s. What a full look's
    verify asks of a slot (an object in it within SLOT_VERIFY_RADIUS_M of the set-down) is asked of
    the depth that came nearer since the look before the place; too little there, or an unchanged
    frame, leaves it to the full look (None)."""
    from spatial_manip.geometry import synthetic as S
    from spatial_manip.camera_model import CameraIntrinsics

    placed = _book_set_down_in_a_slot()
    T, size = placed.set_down.object_pose, placed.set_down.size
    K = CameraIntrinsics.from_fovy(640, 480, 43.3)
    camera = S.look_at(np.array([-1.335, -1.2, 0.59]), T[:3, 3])      # the slot in full view

    def frame(*offsets_m):
        books = [S.SynthBox(T[:3, 3] + np.asarray(o, float), size, np.eye(3)) for o in offsets_m]
        return S.render(K, camera, books, table_z=-0.22)

    def verdict(after):
        agent = _stowed_agent()
        agent._seen_frame = frame()                 # the look before the place: the slot empty
        return agent.verify_on_frame(placed, after)

    v = verdict(frame([0.02, 0.08, 0.0]))            # in the slot, 8 cm along it: off its own pixels
    assert v is not None and v.success and v.message.startswith("book_3 seen in slot_r2c1: ")
    assert "pixels of depth arrived there within 15 cm of its set-down" in v.message
    assert verdict(frame()) is None                  # nothing arrived
    assert verdict(frame([0.0, 0.35, 0.0])) is None  # arrived in the slot, but far from where it was set down


def test_prepare_builds_what_the_first_look_would_once():
    """Issue 42: the first goal's look paid 2-3 s more than the next for building the segmenter and
    the arm's model and loading open3d; a node prepares them at start-up, and a look uses those."""
    import sys

    agent = Agent(FakePorts(), AgentConfig(segmenter="classical"))
    agent.prepare()
    segmenter, reach = agent._perception(), agent._arm_reach()
    assert "open3d" in sys.modules and reach.planner.robot is not None
    agent.prepare()
    assert agent._perception() is segmenter and agent._arm_reach() is reach


def test_the_place_checks_use_the_arm_model_the_launch_chose_not_only_arm_yaml():
    """ur_type reached arm_node and grasp_node but not planner_node, whose place-pose IK and arm mask
    kept arm.yaml's model: a UR5 cell had its places checked on a UR5e (d1 163 vs 89 mm)."""
    from spatial_manip.control.kinematics import DH_PRESETS

    config = AgentConfig.from_params({"ur_type": "ur5", "arm_backend": "", "segmenter": "classical"})
    assert config.ur_type == "ur5"
    for model in ("ur5", "ur5e"):
        reach = Agent(FakePorts(), replace(config, ur_type=model))._arm_reach()
        assert reach.kin.d1 == pytest.approx(DH_PRESETS[model]["d1"])
        assert reach.planner.robot.urdf.name.startswith(f"{model}_robotiq")


def test_no_home_motion_is_sent_while_the_tcp_is_where_the_last_one_left_it():
    """Issue 42: every goal after a reset or a pick sent a home motion that did not move the arm,
    an action round trip before the look. Sent again once the TCP has left home (by 1 mm)."""
    home = np.eye(4)
    home[:3, 3] = [0.1, -0.4, 0.6]

    class AtHome(FakePorts):
        tcp = home

        def tcp_pose(self):
            return self.tcp

    ports = AtHome([MotionResult(success=True, final_pose=home)] * 3)
    agent = Agent(ports)
    agent.clear_view(threading.Event())
    agent.clear_view(threading.Event())
    assert [r.kind for r in ports.requests] == [MOTION_HOME]
    ports.tcp = home.copy()
    ports.tcp[0, 3] += 0.002
    agent.clear_view(threading.Event())
    assert [r.kind for r in ports.requests] == [MOTION_HOME, MOTION_HOME]


def test_the_language_planner_is_warmed_before_the_first_goal_and_a_failing_warm_up_is_left_to_it():
    """Agent.prepare (a node's start-up) plans one made-up instruction, so what the planner builds
    on its first plan is not built in the first goal's reasoning (issue 42); what it raises is the
    first goal's to meet."""
    planned = []

    class Planner:
        def __init__(self, fail):
            self.fail = fail

        def plan(self, scene, text, **kw):
            planned.append((sorted(scene.ids()), text))
            if self.fail:
                raise RuntimeError("no grammar")

    agent = Agent(FakePorts(), AgentConfig())
    for fail in (False, True):
        agent._planner = Planner(fail)
        agent._warm_planner()
    assert len(planned) == 2 and "book_1" in planned[0][0] and "book" in planned[0][1]


def test_the_program_planner_gets_the_reach_of_the_arm_the_graph_drives():
    """The planner's reach rule read arm.yaml's model at plan time; it is the one of the agent's
    arm_config_file, arm_backend and ur_type (planner_node's parameters, the launch's ur_type):
    the model's shoulder, and the backend's reach figures and safety workspace (4319ca6)."""
    from spatial_manip.control.config import load_reach
    from spatial_manip.control.kinematics import DH_PRESETS

    for model in ("ur5", "ur5e"):
        config = AgentConfig(planner="program", ur_type=model)
        planner = Agent(FakePorts(), config)._make_planner()
        assert planner.config.reach.shoulder_z_m == DH_PRESETS[model]["d1"]
        assert planner.config.reach == load_reach(config.arm_config_file, config.arm_backend, model)
        assert planner.config.reach.workspace_max_m is not None


class _StagedSegmenter:
    """Stops at its first stage's end when its `should_stop` says so, as the classical one does."""

    def __init__(self):
        self.should_stop = lambda: False

    def segment(self, obs, *, hints=None):
        from spatial_manip.errors import CanceledError
        if self.should_stop():
            raise CanceledError("segmenting stopped after planes: its look is no longer wanted")
        return []


def test_a_look_stops_at_a_stage_end_once_the_agent_is_interrupted_and_the_segmenter_keeps_its_own_stop():
    """planner_node interrupts every look once the goal running was canceled or the node stops: a
    goal's look, which passes no `should_stop`, took the cancel soak's answer to 10 s at load 19."""
    from spatial_manip.errors import CanceledError
    interrupted, segmenter = [False], _StagedSegmenter()
    own_stop = segmenter.should_stop
    agent = Agent(FakePorts(), interrupt=lambda: interrupted[0])
    agent._segmenter = segmenter
    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.observation import RGBDObservation
    obs = RGBDObservation(rgb=np.zeros((120, 160, 3), np.uint8), depth_m=np.zeros((120, 160), np.float32),
                          intrinsics=CameraIntrinsics.from_fovy(160, 120, 43.3), T_base_cam=np.eye(4))
    interrupted[0] = True
    for look_stop in (None, lambda: False):      # a goal's look, an idle one
        with pytest.raises(CanceledError, match="no longer wanted"):
            agent.perceive(obs, should_stop=look_stop)
        assert segmenter.should_stop is own_stop
    interrupted[0] = False
    with pytest.raises(CanceledError, match="no longer wanted"):     # an idle look's own reason still stops it
        agent.perceive(obs, should_stop=lambda: True)
