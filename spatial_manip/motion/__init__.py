"""Collision-aware motion: the robot description (URDF/SRDF in urdf/), a collision world built
from the perceived scene and depth cloud, and joint-space planners behind `MotionPlanner`.

ROS-free. What a node or the grasp service calls:

    from spatial_manip.control.config import load_arm_config
    from spatial_manip.motion.factory import make_planner
    from spatial_manip.motion.world import CollisionWorld, support_ids
    from spatial_manip.motion.cartesian import straight_segment

    planner = make_planner(load_arm_config())                 # arm.yaml; optional `motion:` section
    world = CollisionWorld.from_scene(scene, allowed=[target_id], cloud=points_base, T_base_tcp=T_now)
    path = planner.plan(q_now, T_pregrasp_or_q_goal, world, phase="pre_grasp")   # JointPath
    qs = straight_segment(planner.robot, planner.envelope, world, path.q[-1], T_grasp,
                          allowed=support_ids(scene, target_id), phase="approach")

Errors: GoalBlockedError / UnreachableError (UNREACHABLE) and PlanNotFoundError (MOTION_FAILED),
each with `.phase` and `.body` (what blocks). Modules import their heavy libraries (OMPL,
Pinocchio, coal, TOPP-RA) on use, so importing this package is cheap.
"""
