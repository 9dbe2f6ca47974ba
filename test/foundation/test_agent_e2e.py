"""Instructions end to end through the agent, in one process and without ROS: the MuJoCo world
renders the camera and runs the arm (the motion primitives over the MuJoCo arm, what sim_node
serves), the antipodal grasp
proposer runs through the grasp service's core (what grasp_node serves), the ground-truth
segmenter reads the world's segmentation. The scene is the demo's, for its own instruction."""
from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from spatial_manip.agent import MOTION_HOME, MOTION_PICK, MOTION_PLACE, Agent, AgentConfig, MotionResult
from spatial_manip.bench.demo import DEFAULT_INSTRUCTION, DEFAULT_SCENE_SEED, find_scene
from spatial_manip.control.config import load_home_q, load_kinematics, load_workspace
from spatial_manip.control.primitives import approach_direction
from spatial_manip.sim.arm import sim_primitives
from spatial_manip.errors import ErrorCode, GraspFailedError, SpatialManipError
from spatial_manip.grasping.gripper import load_grasp_config
from spatial_manip.grasping.service import GraspService, ServiceConfig, TargetBox
from spatial_manip.perception import SegmentationHints
from spatial_manip.pipeline import InstructionPipeline, Stage, validate_goal
from spatial_manip.registry import make
from spatial_manip.scene import Scene, workspace_description
from spatial_manip.sim.world import STOW_Q, SimConfig, SimWorld

pytestmark = pytest.mark.slow
GRASP_YAML = Path(__file__).resolve().parents[2] / "config" / "params" / "grasp.yaml"
PICK_WORDS = "pick the leftmost book lying flat"
PLACE_WORDS = "place it 15 cm to the right of the rubik's cube"


class SimPorts:
    """The agent's ports over a SimWorld in this process, wired as the sim graph wires them:
    the workspace is the world's description (as sim_node publishes it after a reset), grasps
    are proposed on the last observation for the object in the last published scene."""

    def __init__(self, scene: Scene, seed: int):
        self.world = SimWorld(scene, config=SimConfig(), seed=seed)
        self.motions = sim_primitives(self.world, STOW_Q)
        if scene.held_object() is None:
            self.world.pose_arm(STOW_Q)     # as sim_node's reset: an episode starts with the arm home
        ws = workspace_description(self.world.export_scene(), self.world.tcp_pose())
        self._workspace = (ws, SegmentationHints.from_scene(ws))
        gripper, backend, cfg = load_grasp_config(GRASP_YAML)
        # grasp_node's core with the sim's arm: IK and link clearance at the grasp and pre-grasp.
        # Without grasp.yaml's motion check, whose time budget would make the run depend on load.
        lo, hi = load_workspace("", "sim")      # the sim arm's safety workspace, as grasp_node's
        self.grasps = GraspService(make("grasp", backend, gripper=gripper, **cfg), gripper,
                                   ServiceConfig(workspace_min_m=lo, workspace_max_m=hi,
                                                 reference_q=load_home_q("", "sim")),
                                   kinematics=load_kinematics("", "sim"))
        self.obs = self.scene = None
        self.motions_run: list[str] = []

    def observe(self, cancel):
        obs = self.world.render()
        # in whole millimetres, as sim_node publishes depth (16UC1) and the nodes read it back
        depth_mm = np.clip(np.round(obs.depth_m * 1000.0), 0, 65535).astype(np.uint16)
        self.obs = replace(obs, depth_m=depth_mm.astype(np.float32) * 0.001)
        return self.obs

    def workspace(self):
        return self._workspace

    def publish_scene(self, scene):
        self.scene = scene

    def propose_grasps(self, target_id, max_grasps):
        o = self.scene.get(target_id)
        box = TargetBox(o.center, np.asarray(o.size, float), o.rotation, target_id)
        r = self.grasps.propose_for_box(self.obs.depth_m, self.obs.intrinsics, self.obs.T_base_cam, box, max_grasps,
                                        scene=self.scene, q_now=self.world.joint_positions()[:6])
        if not r.success or not len(r.grasps):
            raise SpatialManipError(f"no grasp for {target_id}: {r.message}", r.error_code or ErrorCode.GRASP_FAILED)
        return r.grasps

    def arm_ready(self):
        return True

    def run_motion(self, request, cancel):
        """What sim_node's ArmMotion server does with the request, with its result codes."""
        self.motions_run.append(request.kind)
        try:
            done = self._move(request, cancel)
        except GraspFailedError as e:
            return MotionResult(success=False, error_code=e.code.value, message=e.message)
        except SpatialManipError as e:
            return MotionResult(success=False, object_held=self.world.held_object_id() is not None,
                                error_code=e.code.value, message=e.message)
        return MotionResult(success=True, object_held=self.world.held_object_id() is not None,
                            tcp_path=tuple(map(tuple, done.tcp_path)))

    def _move(self, request, cancel):
        m = self.motions
        if request.kind == MOTION_HOME:
            return m.home(cancel=cancel, scene=request.scene)
        direction = request.approach_direction if request.approach_direction is not None else np.zeros(3)
        common = dict(approach_m=request.approach_distance_m or None, cancel=cancel, scene=request.scene,
                      approach_dir=approach_direction(direction))
        if request.kind == MOTION_PICK:
            return m.pick(request.target, width_m=request.gripper_width_m, lift_m=request.lift_height_m or None,
                          target_id=request.target_id, **common)
        return m.place(request.target, retreat_m=request.lift_height_m or None, **common)

    def stop_motion(self):
        pass

    def tcp_pose(self):
        return self.world.tcp_pose()

    def joint_positions(self):
        return self.world.joint_positions()[:6]    # the arm's, without the gripper's

    def close(self):
        self.world.close()


class FailingMotions(SimPorts):
    """Unit-test double: the arm refuses `kind` motions (without moving) until the pipeline
    has reflected once, as a grasp that closes on nothing or a set-down that stops short."""

    def __init__(self, scene, seed, fail: str):
        super().__init__(scene, seed)
        self.fail, self.reflected = fail, False

    def run_motion(self, request, cancel):
        if request.kind == self.fail and not self.reflected:
            self.motions_run.append(f"failed {request.kind}")
            code = "GRASP_FAILED" if self.fail == MOTION_PICK else "MOTION_FAILED"
            return MotionResult(success=False, error_code=code, message=f"scripted {request.kind} failure")
        return super().run_motion(request, cancel)


@pytest.fixture(scope="module")
def demo_scene():
    # the demo's scene (test_demo checks on the demo's own run that the default instruction fits it)
    return find_scene(DEFAULT_INSTRUCTION, DEFAULT_SCENE_SEED)


def _run(ports: SimPorts, words: str, attempts: int = 1, trace_dir=None):
    feedback = []

    def on_feedback(stage, detail, progress, attempt):
        feedback.append((stage, detail))
        if stage is Stage.REFLECTING and isinstance(ports, FailingMotions):
            ports.reflected = True

    agent = Agent(ports, AgentConfig(segmenter="ground_truth", arm_backend="sim"))
    pipe = InstructionPipeline(agent, feedback=on_feedback, trace_dir=str(trace_dir) if trace_dir else None)
    outcome = pipe.run(validate_goal(words, "auto", max_attempts=attempts), threading.Event())
    return outcome, agent, feedback


def test_pick_then_place_from_a_reset_with_the_book_in_hand(demo_scene):
    seed, scene = demo_scene
    ports = SimPorts(scene, seed)
    try:
        out, agent, _ = _run(ports, PICK_WORDS)
        assert out.success, out.message
        held = out.target_ids[0]
        assert out.message == f"{held} is in the gripper" and ports.world.held_object_id() == held
        in_hand = ports.world.export_scene()      # what a reset to a task with a held book starts from
    finally:
        ports.close()
    assert in_hand.held_object().id == held and "ee_pose" in in_hand.extra
    ports = SimPorts(in_hand, seed)
    try:
        out, agent, _ = _run(ports, PLACE_WORDS)
        assert out.success, out.message
        # carried home before the look (issues 37/38: the arm where the reset left it hid the table);
        # confirmed on the first frame after homing by its depth, without a full look (issue 42)
        assert out.message.startswith(f"{held} seen at the computed pose") and ports.motions_run == [MOTION_HOME,
                                                                                                   MOTION_PLACE,
                                                                                                   MOTION_HOME]
        assert ports.world.held_object_id() is None and agent.held_id() is None
    finally:
        ports.close()


def test_pick_and_place_succeeds_and_sets_the_book_down_where_planned(demo_scene, tmp_path):
    seed, scene = demo_scene
    ports = SimPorts(scene, seed)
    try:
        out, agent, _ = _run(ports, DEFAULT_INSTRUCTION, trace_dir=tmp_path)
        assert out.success, out.message
        events = json.loads((tmp_path / "trace.json").read_text())["events"]
        planned = np.asarray(next(e for e in events if e["kind"] == "decision")["place_pose"])
        book = ports.world.object_pose(out.target_ids[0])[:3, 3]       # where it really is, not where it is seen
        assert np.linalg.norm(book[:2] - planned[:2, 3]) < 0.03
        assert ports.motions_run[-3:] == [MOTION_PICK, MOTION_PLACE, MOTION_HOME] and agent.held_id() is None
        # the TCP's planned way, drawn on the trace: through the grasp and up, through the set-down and back
        picked = next(e for e in events if e["kind"] == "picked")
        placed = next(e for e in events if e["kind"] == "placed")
        to_grasp, to_place = np.asarray(picked["tcp_path"]), np.asarray(placed["tcp_path"])
        assert len(to_grasp) > 3 and len(to_place) > 3
        np.testing.assert_allclose(to_grasp[-2], np.asarray(picked["grasp_pose"])[:3, 3], atol=1e-9)
        np.testing.assert_allclose(to_place[-2], np.asarray(placed["tcp_pose"])[:3, 3], atol=1e-9)
    finally:
        ports.close()


def test_a_failed_grasp_is_reflected_on_and_the_pick_planned_again(demo_scene):
    seed, scene = demo_scene
    ports = FailingMotions(scene, seed, fail=MOTION_PICK)
    try:
        out, agent, feedback = _run(ports, PICK_WORDS, attempts=2)
        assert out.success and out.attempts == 2, out.message
        reflecting = [d for s, d in feedback if s is Stage.REFLECTING]
        assert len(reflecting) == 1 and "nothing is held: looking again and planning the pick again" in reflecting[0]
        assert ports.motions_run.count(MOTION_PICK) >= 1 and ports.motions_run[0] == MOTION_HOME
        assert agent.held_id() == out.target_ids[0] == ports.world.held_object_id()
    finally:
        ports.close()


def test_a_failed_place_with_the_book_in_hand_plans_the_place_again_not_the_pick(demo_scene, tmp_path):
    """The retry looks again (the book still in the fingers), plans only the place, and sets
    the book down another way (the failed set-down is tried last). Whether that other way holds
    is the world's physics; what is checked is that the pick is never redone."""
    seed, scene = demo_scene
    ports = FailingMotions(scene, seed, fail=MOTION_PLACE)
    try:
        out, agent, feedback = _run(ports, DEFAULT_INSTRUCTION, attempts=2, trace_dir=tmp_path)
        assert out.attempts == 2, out.message
        events = json.loads((tmp_path / "trace.json").read_text())["events"]
        book = next(e for e in events if e["kind"] == "decision")["pick_id"]
        reflecting = [d for s, d in feedback if s is Stage.REFLECTING]
        assert len(reflecting) == 1 and f"{book} is still in the gripper: planning the place again" in reflecting[0]
        retry = ports.motions_run[ports.motions_run.index(f"failed {MOTION_PLACE}") + 1:]
        # the book carried home for the retry's look, then set down
        assert retry[:2] == [MOTION_HOME, MOTION_PLACE] and MOTION_PICK not in retry, ports.motions_run
        assert [e["holding"] for e in events if e["kind"] == "retry_place"] == [book]
        assert len([e for e in events if e["kind"] == "picked"]) == 1
        places = [e["place_pose"] for e in events if e["kind"] == "decision"]
        assert len(places) == 2 and np.allclose(np.asarray(places[0])[:3, 3], np.asarray(places[1])[:3, 3], atol=0.03)
    finally:
        ports.close()


def test_a_place_that_began_with_the_book_in_hand_is_planned_again_with_its_pose_words(demo_scene, tmp_path):
    """A place goal whose set-down failed is planned again as the first time, pose words and all:
    read as a pick-and-place ("take [the book lying flat], put it on the shelf"), books
    place-112-00013's retry lost its pose, set the book down upright and reported success. (Here
    "standing upright": this book, held from the top, cannot be set down flat at all.)"""
    seed, scene = demo_scene
    ports = SimPorts(scene, seed)
    try:
        out, _, _ = _run(ports, PICK_WORDS)
        assert out.success, out.message
        in_hand = ports.world.export_scene()
    finally:
        ports.close()
    ports = FailingMotions(in_hand, seed, fail=MOTION_PLACE)
    try:
        out, _, _ = _run(ports, "place the book standing upright 15 cm to the right of the rubik's cube", attempts=2,
                         trace_dir=tmp_path)
        events = json.loads((tmp_path / "trace.json").read_text())["events"]
        assert [e["holding"] for e in events if e["kind"] == "retry_place"] == []
        programs = [e["program"] for e in events if e["kind"] == "decision"]
        assert len(programs) == 2 and all("pose=upright" in p for p in programs), programs
    finally:
        ports.close()


def test_a_dry_run_refuses_a_place_the_arm_cannot_make_and_moves_nothing(demo_scene):
    """A real run would find before moving that nothing carries the book 5 m away (geometry.support:
    the plan refuses it); a dry run says so too instead of 'would pick_and_place'."""
    seed, scene = demo_scene
    ports = SimPorts(scene, seed)
    try:
        agent = Agent(ports, AgentConfig(segmenter="ground_truth", arm_backend="sim"))
        far = InstructionPipeline(agent).run(validate_goal(PICK_WORDS + " and place it 500 cm to the right of the "
                                                           "rubik's cube", "auto", max_attempts=1, dry_run=True),
                                             threading.Event())
        assert not far.success and far.error_code == "UNREACHABLE", far.message
        assert "no support under the book" in far.message and "beyond the edge of the table" in far.message
        near = InstructionPipeline(agent).run(validate_goal(DEFAULT_INSTRUCTION, "auto", max_attempts=1, dry_run=True),
                                              threading.Event())
        assert near.success and near.message.startswith("dry run: would pick_and_place"), near.message
        assert MOTION_PICK not in ports.motions_run and MOTION_PLACE not in ports.motions_run
        assert ports.world.held_object_id() is None
    finally:
        ports.close()
