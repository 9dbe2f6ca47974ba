"""The arm is no object on the table: the agent leaves the arm's own pixels out of each look.

pick-15-00007 (a seed no tuning used): the camera, behind and beside the robot, saw the stowed
forearm beside the base; the classical segmenter made it `object_0`, the grasp service's motion
check found the arm starting inside it and skipped, and five unchecked grasps failed at the
arm. Rendered in MuJoCo with the arm where sim_node leaves it after a reset."""
from dataclasses import replace

import numpy as np
import pytest

from spatial_manip.agent import ARM_DEPTH_M, Agent, AgentConfig, without_arm
from spatial_manip.camera.types import metres_to_mm
from spatial_manip.paths import config_dir
from spatial_manip.perception import SegmentationHints, load_segmenter_config
from spatial_manip.perception.reference_bench import _Ports
from spatial_manip.scene import workspace_description
from spatial_manip.sim import tasks as T
from spatial_manip.sim.world import STOW_Q, SimConfig, SimWorld

pytestmark = pytest.mark.slow


class _NoJoints(_Ports):
    def joint_positions(self):
        return None


def _look(ports_class):
    task, scene = T.generate("pick", 16, 15)[7]
    world = SimWorld(scene, config=SimConfig(), seed=int(task.scene_seed))
    try:
        world.pose_arm(STOW_Q)
        ws = workspace_description(world.export_scene(), world.tcp_pose())
        rendered = world.render()
        obs = replace(rendered, depth_m=metres_to_mm(rendered.depth_m).astype(np.float32) * 0.001, segmentation=None)
        _, cfg = load_segmenter_config(config_dir() / "params" / "perception.yaml", "classical")
        agent = Agent(ports_class(world, ws, SegmentationHints.from_scene(ws), obs), AgentConfig(segmenter="classical"),
                      segmenter_config=cfg)
        return agent.perceive(obs), obs, agent, rendered.segmentation
    finally:
        world.close()


def _behind_the_base(scene):
    return [o.id for o in scene.objects if o.center[0] < 0.0]


def test_the_stowed_arm_in_view_is_not_an_object():
    blind, _, _, _ = _look(_NoJoints)
    assert _behind_the_base(blind)            # the forearm, seen as an object, without the joints
    seen, obs, agent, segmentation = _look(_Ports)
    assert not _behind_the_base(seen)
    assert {o.id for o in seen.objects if o.category == "book"} == {o.id for o in blind.objects if o.category == "book"}
    # only the arm's pixels go: none of the scene's objects, the table or the floor (the
    # simulator's segment ids >= 0; -1 is the robot or the floor)
    cleared = (without_arm(obs, agent._arm_reach().planner.robot, STOW_Q).depth_m == ARM_DEPTH_M) & (obs.depth_m > 0)
    assert np.count_nonzero(cleared) > 1000
    assert np.count_nonzero(cleared & (segmentation >= 0)) < 0.01 * np.count_nonzero(cleared)
