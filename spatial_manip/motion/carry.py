"""Whether a configuration is a carry pose for a held object (issues 37/38): where the arm may take
what it holds before the camera looks, so that neither the arm nor the object hides the table or the
shelf the next goal needs, and from where the next motion can start.

A holding arm looked where the pick (or a reset) left it, and its forearm hid the place's reference
(books place-86-00002: 44% of the teddy bear; objects-89-00013: 52% of the newton's cradle behind
the upper arm). Carried home, the same arm once stood with its start inside the robot stand's
keep-out on a shelf layout, and home itself hangs in front of the camera's view of a shelf's lowest
board: home is checked, on the layout the goal's scene describes, before the carry moves the arm:

- safe: every link and the held object keep CARRY_CLEAR_M from every keep-out box, fixture and seen
  object, and the TCP lies inside the envelope's workspace (a carry under load ends within a few
  millimetres of its goal; the next motion checks its start with no margin);
- useful: from the scene's viewer (the camera), the arm and the held object there hide less of the
  scene than where the arm is now (each object a grid of points, a table the space above its top).

Computed from the robot model and the scene, never from a simulator."""
from __future__ import annotations

import numpy as np

from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.line_of_sight import ARM_MARGIN_M, blocked_lines, box_points
from spatial_manip.motion.world import Attached, CollisionWorld

CARRY_CLEAR_M = 0.03      # a carry pose keeps this from every keep-out, fixture and seen object
TABLE_SPACE_M = 0.30      # of a table, the camera needs the space this high above its top
VIEW_GAIN = 0.05          # a carry must uncover at least this share of the scene to be worth its motion
OBJECT_GRID, FIXTURE_GRID = 3, 6   # view points per box axis (a shelf or a table is a large box)


def carry_refusal(robot, envelope, world: CollisionWorld, scene, q_now, q_carry) -> str | None:
    """Why `q_carry` is no carry pose for `world.attached` (the held object) from `q_now` in
    `scene` (the goal's: fixtures and seen objects, its viewer the camera), or None when it is one.
    `world`: what the carry is planned in (the scene's bodies, the held object attached)."""
    checker = CollisionChecker(robot, world.with_keep_out(envelope), envelope, CARRY_CLEAR_M)
    problem = checker.problem(np.asarray(q_carry, float))
    if problem is not None:
        return f"not clear by {CARRY_CLEAR_M:.2f} m there: {problem}"
    camera = viewer_position(scene)
    points = view_points(scene)
    if camera is None or not len(points):
        return None
    held = world.attached
    now = hidden_share(robot, envelope, q_now, held, camera, points)
    there = hidden_share(robot, envelope, q_carry, held, camera, points)
    if there > now - VIEW_GAIN:
        return (f"the arm and what it holds would hide {100 * there:.0f}% of the scene from the camera there, "
                f"{100 * now:.0f}% where the arm is")
    return None


def viewer_position(scene) -> np.ndarray | None:
    """The camera's position (the scene's viewer), None when the scene leaves it unset."""
    viewer = getattr(scene, "viewer", None) if scene is not None else None
    p = None if viewer is None else np.asarray(viewer.position, float)
    return None if p is None or not np.all(np.isfinite(p)) or not np.any(p) else p


def view_points(scene) -> list[np.ndarray]:
    """Per object of the scene the camera should see (the held one and the floor left out), the
    points of it whose lines of sight count: a grid in its box; of a table, in the space above its top."""
    out = []
    for o in scene.objects if scene is not None else ():
        if o.held or o.category == "floor":
            continue
        center, size, R = np.asarray(o.center, float), np.asarray(o.size, float), np.asarray(o.rotation, float)
        grid = FIXTURE_GRID if o.category in ("table", "shelf") else OBJECT_GRID
        if o.category == "table":
            up = R.T @ np.array([0.0, 0.0, 1.0])
            axis = int(np.argmax(np.abs(up)))
            top = center + R[:, axis] * np.sign(up[axis]) * size[axis] / 2
            center = top + R[:, axis] * np.sign(up[axis]) * TABLE_SPACE_M / 2
            size = size.copy()
            size[axis] = TABLE_SPACE_M
        out.append(box_points(center, size, R, grid))
    return out


def hidden_share(robot, envelope, q, held: Attached | None, camera, points: list[np.ndarray]) -> float:
    """The mean over objects of the share of their view points whose line from `camera` passes
    through the arm's bodies (grown by ARM_MARGIN_M) or the held object at joints `q`."""
    q = np.asarray(q, float)
    box = None
    if held is not None:
        T = np.asarray(envelope.kin.fk(q), float) @ np.asarray(held.T_tcp_object, float)
        box = (T, np.asarray(held.size, float) / 2 + ARM_MARGIN_M)
    shares = [float(blocked_lines(robot, q, camera, targets, ARM_MARGIN_M, box).mean()) for targets in points]
    return float(np.mean(shares)) if shares else 0.0
