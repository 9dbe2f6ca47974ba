"""The simulated arm's place into a shelf slot, in-process on MuJoCo: planned by the program
planner, fitted to the grasp (place_fit with the slot's entry), slid in from the front."""
import numpy as np

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
