"""The simulated arm's place into a shelf slot, in-process on MuJoCo: planned by the program
planner, fitted to the grasp (place_fit with the slot's entry), slid in from the front."""
import numpy as np
import pytest

from spatial_manip.control.config import load_kinematics
from spatial_manip.geometry.transforms import invert, make_transform, quat_to_matrix
from spatial_manip.grasping.place_fit import fit_place, slot_entry
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.sim.checker import check_task
from spatial_manip.sim.motions import SimMotions
from spatial_manip.sim.tasks import generate
from spatial_manip.sim.world import SimWorld


def test_a_held_book_slides_into_the_planned_shelf_slot():
    task, scene = generate("place", 1, 0)[0]
    world = SimWorld(scene)
    try:
        held = scene.held_object()
        in_hand = invert(world.object_pose(held.id)) @ world.tcp_pose()
        plan = make_planner("program").plan(scene, task.instruction, task_kind="place")
        assert plan.ok, plan.error
        P = make_transform(quat_to_matrix(plan.place_pose.orientation), plan.place_pose.position)
        entry = slot_entry(scene, P)
        assert entry is not None and np.allclose(entry.direction, [1, 0, 0])
        T_obj, T_tcp = fit_place(P, held.size, in_hand, width_m=float(np.min(held.size)),
                                 kinematics=load_kinematics(backend="sim"), entry=entry)
        phases = []
        ok = SimMotions(world).place(T_tcp, approach=entry.approach_m(T_obj, held.size), lift=0.1,
                                     direction=entry.direction,
                                     phase=lambda name, _p, fn: phases.append(name) or fn())
        assert ok and phases == ["carry", "hover", "pre_place", "descend", "open", "retreat"]
        result = check_task(task.to_dict(), world.export_scene(), scene)
        assert result.success, result.message
    finally:
        world.close()


def test_a_hover_or_lift_beyond_reach_is_lowered_to_the_highest_reachable_fraction():
    task, scene = generate("pick", 1, 0)[0]
    world = SimWorld(scene)
    try:
        down = np.diag([1.0, -1.0, -1.0])         # TCP z pointing at the table
        T = make_transform(down, [0.6, 0.05, 0.25])
        assert world.reachable(T)
        too_high = make_transform(down, [0.6, 0.05, 0.25 + 0.6])
        assert not world.reachable(too_high)
        raised = SimMotions(world)._raised(T, 0.6)
        assert T[2, 3] < raised[2, 3] < too_high[2, 3]
        assert world.reachable(raised)
        assert np.allclose(raised[:3, :3], down) and np.allclose(raised[:2, 3], T[:2, 3])
        near = SimMotions(world)._raised(T, 0.05)
        assert np.isclose(near[2, 3], 0.30)      # within reach: the full rise
        for bad in (np.eye(3), np.full((4, 4), np.nan)):
            with pytest.raises(ValueError, match="finite 4x4"):
                world.reachable(bad)
    finally:
        world.close()


def test_folding_home_goes_round_the_upright_arm_and_knocks_nothing_over():
    # home is low behind the base; on this scene a straight joint move there from the ready
    # pose swings the forearm across the near table and throws a reference off it
    from spatial_manip.sim.world import HOME_Q, STOW_Q

    def movable(world):
        return {o.id: o.center.copy() for o in world.export_scene().objects if o.category in ("book", "reference")}

    def moved(before, world):
        return max(np.linalg.norm(c - before[k]) for k, c in movable(world).items())

    _task, scene = generate("pick", 48, 0)[5]
    with SimWorld(scene) as straight:
        straight.move_joints(HOME_Q)
        before = movable(straight)
        straight.move_joints(STOW_Q)
        assert moved(before, straight) > 0.1
    with SimWorld(scene) as world:
        motions = SimMotions(world, STOW_Q)
        world.move_joints(HOME_Q)
        before = movable(world)
        phases = []
        assert motions.home(phase=lambda name, _p, fn: phases.append(name) or fn()) and phases == ["home"]
        assert np.allclose(world.joint_positions()[:6], STOW_Q, atol=0.01)
        assert motions._unfold(None) and np.allclose(world.joint_positions()[:6], HOME_Q, atol=0.01)
        assert moved(before, world) < 0.01
