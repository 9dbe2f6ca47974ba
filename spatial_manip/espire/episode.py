"""One ESPIRE task in one MuJoCo world: observe, localize, move (ESPIRE's point-based action), end.

The point-based action: the pixel of a MOVE is lifted to the 3D point under it (the referenced
observation's depth and camera), and the arm acts there:

- pick: the book under the point (or the nearest within RETREAT_RADIUS_M) is grasped the way
  the ground-truth oracle grasps it (top edge of an upright book, the overhanging end of a lying
  one) and lifted. A book outside the answer set is put back down, so the next trial starts
  from the same table.
- place: the held book goes into the shelf slot under the point (nearest within
  RETREAT_RADIUS_M), in the pose the task asks for; on the table (metric tasks) it is stood on
  its long edge centred on the point. It is released only when the task's constraints already
  hold in the hand; otherwise the arm backs out still holding it, so each of the client's
  trials can try again (a released book could not be fetched back).

`status` follows what ESPIRE's reflective driver reads: "success" (acted at the point),
"retreat" (acted at the nearest feasible place, not the point itself), "refocus" (nothing
feasible near the point; the arm did not move). `goal_met` is our checker (ESPIRE's criteria)
on the state after the action; END_TASK's `finish_goal` is the checker on the final state.
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.control.primitives import back_off
from spatial_manip.sim.arm import sim_primitives
from spatial_manip.motion.arm_plans import ArmReach
from spatial_manip.errors import SpatialManipError, UnreachableError
from spatial_manip.espire import protocol as proto
from spatial_manip.espire import views
from spatial_manip.geometry import relations as rel
from spatial_manip.scene import Region, Scene
from spatial_manip.sim import oracle, placement
from spatial_manip.sim.checker import check_constraints, check_task
from spatial_manip.sim.tasks import Task, feasible_slots
from spatial_manip.sim.world import STOW_Q

RETREAT_RADIUS_M = 0.05     # a point this close to a book / slot still selects it ("retreat")
LIFT_M = 0.10
OPEN_M = 0.085
NEAR_M = 0.03               # a Cartesian move stopped this close (contact) still counts as arrived
MAX_KEPT_OBSERVATIONS = 8   # current observations kept for LOCALIZE / MOVE references


@dataclasses.dataclass
class Kept:
    view: str
    obs: object               # RGBDObservation
    version: int


class Episode:
    def __init__(self, task: Task, scene: Scene, rotation_require: list):
        self.task, self.initial, self.rotation_require = task, scene, rotation_require
        self.adapter = oracle.SimWorldAdapter(scene)
        self.world = self.adapter.world
        self.motions = sim_primitives(self.world, STOW_Q)     # the robot's primitives and planner
        self._arm = ArmReach(self.motions.plans.planner)
        if task.action == "pick" and scene.held_object() is None:
            # look with the arm folded away, as the generator checked visibility (tasks.observable)
            self.world.pose_arm(STOW_Q)
            self.world.step(int(0.2 / self.world.model.opt.timestep))
        self.color_name, self.color_rgb = views.highlight_color(scene)
        self.marked = self._choose_marked()
        self.version = 0                  # bumped by every MOVE: older observations are stale
        self.kept: dict[str, Kept] = {}
        self.stale: dict[str, int] = {}
        self.localize_attempts = 0
        self.localization = "pending"     # pending | met | skipped
        self.moves = 0
        self.ended = False
        self.update_s: list[float] = []   # observation renders and MOVE executions, seconds

    def close(self) -> None:
        self.adapter.close()

    # --- state --------------------------------------------------------------------------------
    def env_state(self) -> dict:
        w = self.world
        T = w.tcp_pose()
        q = Rotation.from_matrix(T[:3, :3]).as_quat()        # x, y, z, w
        objects = {}
        for o in w.export_scene().objects:
            if o.category in ("book", "reference"):
                objects[o.id] = {"category": o.category, "label": o.label,
                                 "position": _r(o.center), "held": bool(o.held)}
        return {"robot_js": _r(w.joint_positions()), "joint_names": list(w.joint_names),
                "wrapped_robot_ee_pos": _r(T[:3, 3]), "wrapped_robot_ee_ori": _r([q[3], q[0], q[1], q[2]]),
                "world_info": {"frame": "robot base (z up, metres)", "held_object": w.held_object_id(),
                               "objects": objects, "sim_time_s": round(float(w.data.time), 3)}}

    def goal(self) -> tuple[list[str], list]:
        """(object ids, boxes) the task is about: answer books (pick), target slots (place), or
        the area a metric placement must reach."""
        t = self.task
        if t.action == "pick":
            return list(t.answer), []
        if t.answer:
            return [], [self.initial.get(r) for r in t.answer]
        return [], [_metric_area(t, self.initial)]

    def _choose_marked(self) -> tuple[list[str], list]:
        """The one goal the highlighted views mark, as ESPIRE marks "the book that needs to be
        grabbed" / "the placement area": of several answers, the one the oracle would act on
        (the nearest reachable book; the nearest slot the held book fits). Localization and the
        checker still accept every answer."""
        ids, boxes = self.goal()
        t, scene = self.task, self.initial
        if t.action == "pick" and len(ids) > 1:
            for oid in sorted(ids, key=lambda i: float(np.linalg.norm(scene.get(i).center))):
                try:
                    oracle.plan_pick(scene, dataclasses.replace(t, answer=[oid]), self._graspable)
                    return [oid], []
                except SpatialManipError:
                    continue
            return ids[:1], []
        if t.action != "pick" and len(boxes) > 1:
            pose = next((c["pose"] for c in t.check if c["type"] == "pose"), "upright")
            fits = feasible_slots(scene, t.answer, pose) or boxes
            # the arm holding the book stands in front of the shelf: mark a slot the camera sees
            obs = views.render(self.world, "world")
            seen = {r.id: round(_seen_fraction(obs, r), 1) for r in fits}
            return [], [min(fits, key=lambda r: (-seen[r.id], rel.distance(r, scene.robot)))]
        return ids, boxes

    # --- requests -----------------------------------------------------------------------------
    def observe(self, uid: str, view: str, highlight: bool) -> dict:
        t0 = time.perf_counter()
        obs = views.render(self.world, view)
        ids, boxes = self.marked
        masks = [views.goal_mask(obs, ids, boxes)]
        rgb = views.draw_goal_boxes(obs.rgb, masks, self.color_rgb) if highlight else obs.rgb
        self._keep(uid, Kept(view, obs, self.version))
        h, w = obs.depth_m.shape
        content = {"rgb": proto.encode_png(rgb), "depth": proto.encode_f32(obs.depth_m),
                   "intrinsic": proto.encode_f32(obs.intrinsics.K), "extrinsic": proto.encode_f32(obs.T_base_cam),
                   "shape": {"row": h, "col": w}, "view": view, "highlight_goal": bool(highlight),
                   "bbox_color": self.color_name, "goal_visible": bool(any(m.any() for m in masks)),
                   "depth_unit": "m", "extrinsic_frame": "T_base_camera: camera (x right, y down, z forward) to robot base"}
        self.update_s.append(time.perf_counter() - t0)
        return content

    def localize(self, kept: Kept, row: int, col: int) -> dict:
        self.localize_attempts += 1
        ids, boxes = self.goal()
        mask = views.goal_mask(kept.obs, ids, boxes)
        met = bool(mask[row, col])
        if met:
            self.localization = "met"
        return {"goal_met": met, "post_state": {"localization": {"details": {
            "click_distance_px": views.click_distance_px(mask, row, col), "point": {"row": row, "col": col},
            "view": kept.view, "attempt": self.localize_attempts}}}}

    def skip_localization(self) -> dict:
        if self.localization == "pending":
            self.localization = "skipped"
        return {"goal_met": self.localization == "met", "post_state": {"localization": {"details": {
            "skipped": True, "attempts": self.localize_attempts, "state": self.localization}}}}

    def move(self, kept: Kept, row: int, col: int, delta_deg: list) -> dict:
        t0 = time.perf_counter()
        p = views.pixel_point(kept.obs, row, col)
        seg = kept.obs.segmentation
        clicked = kept.obs.segment_ids.get(int(seg[row, col])) if seg is not None else None
        if self.task.action == "pick":
            result = self._move_pick(p, clicked, delta_deg)
        else:
            result = self._move_place(p, delta_deg)
        self.moves += 1
        self._invalidate()
        T = self.world.tcp_pose()
        q = Rotation.from_matrix(T[:3, :3]).as_quat()
        details = {"distance": round(float(result.pop("distance")), 4), "wrapped_robot_ee_pos": _r(T[:3, 3]),
                   "wrapped_robot_ee_ori": _r([q[3], q[0], q[1], q[2]]),
                   "target_point": None if p is None else _r(p), **result.pop("details")}
        self.update_s.append(time.perf_counter() - t0)
        return {"goal_met": result["goal_met"], "status": result["status"],
                "post_state": {"execution": {"details": details}, "env_state": self.env_state()}}

    def end(self) -> dict:
        r = check_task(self.task.to_dict(), self.world.export_scene(), self.initial)
        self.ended = True
        return {"goal_met": bool(r.success), "post_state": {
            "execution": {"finish_goal": bool(r.success), "failure_category": r.failure_category,
                          "message": r.message, "moves": self.moves},
            "localization": {"state": self.localization, "attempts": self.localize_attempts},
            "env_state": self.env_state()}}

    # --- observations -------------------------------------------------------------------------
    def _keep(self, uid: str, kept: Kept) -> None:
        self.kept[uid] = kept
        while len(self.kept) > MAX_KEPT_OBSERVATIONS:       # oldest first (dicts keep order)
            old = next(iter(self.kept))
            self.stale[old] = self.kept.pop(old).version

    def _invalidate(self) -> None:
        self.version += 1
        for uid, k in list(self.kept.items()):
            self.stale[uid] = k.version
            del self.kept[uid]

    def reference(self, uid: str, req_uid: str) -> Kept:
        """The observation a LOCALIZE / MOVE points into; it must show the world as it is now."""
        if not isinstance(uid, str) or not uid:
            raise proto.ProtocolError(proto.BAD_REQUEST, "field 'reference_uid' must be the uid of a GET_OBSERVATION request",
                                      req_uid)
        if uid in self.kept:
            return self.kept[uid]
        if uid in self.stale:
            raise proto.ProtocolError(proto.CONFLICT, f"observation {uid} is stale: the arm has moved since "
                                      "(or newer observations replaced it); send GET_OBSERVATION again", req_uid)
        raise proto.ProtocolError(proto.NOT_FOUND, f"no observation {uid} in this task; reference_uid must be "
                                  "the uid of a GET_OBSERVATION request sent after SET_TASK", req_uid)

    # --- pick ---------------------------------------------------------------------------------
    def _move_pick(self, p, clicked: str | None, delta_deg) -> dict:
        w, answer = self.world, set(self.task.answer)
        held = w.held_object_id()
        if held in answer:
            raise proto.ProtocolError(proto.CONFLICT, f"the gripper already holds {held}, an answer book: the goal is "
                                      "met; send END_TASK")
        scene = w.export_scene()
        book, status = self._pick_target(scene, p, clicked)
        if book is None:
            return self._no_action(p, "no book at or near the point")
        try:
            plan = oracle.plan_pick(scene, dataclasses.replace(self.task, answer=[book.id]), self._graspable)
        except SpatialManipError as e:
            return self._no_action(p, f"no reachable grasp of {book.id}: {e.message}")
        T = plan.poses[1]
        T_rot = _rotated_about(T, book.rotation, T[:3, 3], delta_deg)   # turned about the grasp point
        if T_rot is not T and self.adapter.reachable(T_rot):
            T = T_rot
        elif T_rot is not T:
            status = "retreat"      # the asked rotation has no IK solution: the nominal grasp instead
        lying = rel.book_pose_class(book) != "upright"
        motion_error = ""
        try:
            self.motions.pick(T, approach_m=0.07 if lying else 0.10, lift_m=LIFT_M, scene=scene, target_id=book.id)
        except SpatialManipError as e:      # refused by the planner, blocked, or closed on nothing: the verdict says
            motion_error = e.message
        held = w.held_object_id()
        put_back = held is not None and held not in answer
        if put_back:        # a wrong book goes back where it was taken from
            _try_move(w, T, speed=0.1)
            w.set_gripper(OPEN_M)
            _try_move(w, back_off(T, 0.10))
        verdict = check_task(self.task.to_dict(), w.export_scene(), self.initial)
        dist = min(rel.distance_to_point(self.initial.get(i), T[:3, 3]) for i in answer)
        return {"goal_met": bool(verdict.success), "status": status, "distance": dist,
                "details": {"acted_on": book.id, "held": w.held_object_id(), "put_back": put_back,
                            "message": verdict.message, "motion_error": motion_error}}

    def _graspable(self, T, T_from=None) -> bool:
        """The oracle's grasp test: IK on the model, and a straight approach from 10 cm back along
        which the arm clears itself (what the primitives' planner will ask)."""
        return self.adapter.reachable(T, T_from) and self._arm.reaches(back_off(T, 0.10), T)

    def _pick_target(self, scene: Scene, p, clicked: str | None):
        books = {o.id: o for o in scene.objects if o.category == "book" and not o.held}
        if clicked in books:
            return books[clicked], "success"
        if p is None:
            return None, "refocus"
        near = sorted(books.values(), key=lambda o: rel.distance_to_point(o, p))
        if near and rel.distance_to_point(near[0], p) <= RETREAT_RADIUS_M:
            return near[0], "retreat"
        return None, "refocus"

    def _no_action(self, p, why: str) -> dict:
        ids, boxes = self.goal()
        where = p if p is not None else self.world.tcp_pose()[:3, 3]
        goal = [self.initial.get(i) for i in ids] + boxes
        dist = min((rel.distance_to_point(g, where) for g in goal), default=float("nan"))
        return {"goal_met": False, "status": "refocus", "distance": dist,
                "details": {"acted_on": None, "held": self.world.held_object_id(), "message": why}}

    # --- place --------------------------------------------------------------------------------
    def _move_place(self, p, delta_deg) -> dict:
        w = self.world
        held_id = w.held_object_id()
        if held_id is None:
            if check_task(self.task.to_dict(), w.export_scene(), self.initial).success:
                raise proto.ProtocolError(proto.CONFLICT, "the book is already placed and the goal is met; send END_TASK")
            return self._no_action(p, "the gripper holds no book")
        if p is None:
            return self._no_action(p, "no depth at the point (background)")
        scene = w.export_scene()
        T_now = w.tcp_pose()
        offset = np.linalg.inv(T_now) @ w.object_pose(held_id)
        if self.task.answer or not self.task.place_pose:
            plan, status, label = self._slot_plan(scene, p, held_id, offset, T_now)
        else:
            plan, status, label = self._table_plan(scene, p, held_id, offset, T_now)
        if plan is None:
            return self._no_action(p, label)
        poses = _rotate_plan(plan.poses, plan.T_book, delta_deg)
        if poses is not plan.poses and not all(self.adapter.reachable(T) for T in poses):
            poses, status = plan.poses, "retreat"
        return self._place_along(poses, held_id, status, label)

    def _place_along(self, poses, held_id: str, status: str, label: str) -> dict:
        """The robot's place primitive (planned transit, the envelope, the planner's collision
        checks) along (pre, at, retreat); it releases only if the task's constraints hold in
        the hand, else backs out holding."""
        w = self.world
        pre, at, retreat = poses
        approach = at[:3, 3] - pre[:3, 3]
        d_in = float(np.linalg.norm(approach))
        in_hand = {}

        def release_if() -> bool:
            specs = [c for c in self.task.check if c["type"] not in ("released", "held")]
            in_hand["verdict"] = check_constraints(specs, w.export_scene(), self.initial) if specs else None
            return in_hand["verdict"] is None or in_hand["verdict"].success

        try:
            result = self.motions.place(at, approach_m=d_in, retreat_m=float(np.linalg.norm(retreat[:3, 3] - at[:3, 3])),
                                        approach_dir=approach / max(d_in, 1e-9), scene=w.export_scene(),
                                        release_if=release_if)
        except SpatialManipError as e:      # refused by the planner or blocked: the book stays in the hand
            return {"goal_met": False, "status": "refocus", "distance": self._distance(held_id),
                    "details": {"acted_on": label, "held": w.held_object_id(), "released": False,
                                "message": f"not placed: {e.message}"}}
        if result.object_held:
            return {"goal_met": False, "status": status, "distance": self._distance(held_id),
                    "details": {"acted_on": label, "held": w.held_object_id(), "released": False,
                                "message": f"not released: {in_hand['verdict'].message}"}}
        verdict = check_task(self.task.to_dict(), w.export_scene(), self.initial)
        return {"goal_met": bool(verdict.success), "status": status, "distance": self._distance(held_id),
                "details": {"acted_on": label, "held": w.held_object_id(), "released": True,
                            "message": verdict.message}}

    def _distance(self, held_id: str) -> float:
        """How far the book (where it is now) is from the nearest goal region."""
        _, boxes = self.goal()
        book = self.world.export_scene().get(held_id)
        return min(_distance_to_goal(b, book.center) for b in boxes) if boxes else 0.0

    def _slot_plan(self, scene: Scene, p, held_id: str, offset, T_now):
        slots = sorted(scene.regions, key=lambda r: rel.distance_to_point(r, p))
        if not slots or rel.distance_to_point(slots[0], p) > RETREAT_RADIUS_M:
            return None, "refocus", "no shelf slot at or near the point"
        slot = slots[0]
        status = "success" if rel.point_in_box(p, slot, 0.01) else "retreat"
        pose = next((c["pose"] for c in self.task.check if c["type"] == "pose"), "upright")
        # only the pose constraint: the slot is the client's choice, right or wrong
        pose_check = [c for c in self.task.check if c["type"] == "pose"]
        plan = placement.plan_slot_place(scene, [slot], pose, pose_check, held_id, offset, T_now,
                                         self.adapter.reachable)
        if plan is None:
            return None, "refocus", f"no reachable way to put the book {pose} into {slot.id}"
        return plan, status, slot.id

    def _table_plan(self, scene: Scene, p, held_id: str, offset, T_now):
        """Stand the held book on its gripped edge centred on the point: every yaw (15 deg
        steps), covers facing the task's reference first (as a person sets a book down beside
        something), the first whose three poses the arm reaches."""
        size = np.asarray(scene.get(held_id).size, float)
        top = _support_top(scene, p)
        if top is None:
            return None, "refocus", "the point is not on the table"
        cands = _standing_rotations(offset)
        toward = _toward_reference(scene, self.task.reference, p)
        if toward is not None:
            cands.sort(key=lambda c: float(np.abs(c[1].T @ toward) @ size))
        inv_off = np.linalg.inv(offset)
        for yaw, R in cands:
            half_h = float(np.abs(R.T @ [0, 0, 1.0]) @ (size / 2))
            T_book = np.eye(4)
            T_book[:3, :3], T_book[:3, 3] = R, [p[0], p[1], top + half_h + placement.DROP_M]
            T_tcp = T_book @ inv_off
            up = T_tcp.copy()
            up[2, 3] += LIFT_M
            poses = [up, T_tcp, up.copy()]
            if all(self.adapter.reachable(T) for T in poses):
                return placement.PlacePlan(poses, T_book, f"table at {_r(p[:2])} yaw {yaw}"), "success", \
                    f"table at {_r(p[:2])} yaw {yaw}"
        return None, "refocus", "no reachable way to stand the book at the point"


def _standing_rotations(offset) -> list:
    """(yaw deg, R) of the held book stood on the edge the gripper holds (gripper on top)."""
    p_tcp_in_book = -(offset[:3, :3].T @ offset[:3, 3])
    up_axis = int(np.argmax(np.abs(p_tcp_in_book)))     # the gripped edge is across this axis
    rest = [i for i in range(3) if i != up_axis]
    out = []
    for yaw in range(0, 180, 15):
        a = math.radians(yaw)
        axes = [None, None, None]
        axes[up_axis] = np.array([0, 0, 1.0])
        axes[rest[0]], axes[rest[1]] = np.array([math.cos(a), math.sin(a), 0]), np.array([-math.sin(a), math.cos(a), 0])
        out += [(yaw, R) for R in placement.signed_frames(tuple(axes)) if (R @ p_tcp_in_book)[2] >= 0.01]
    return out


def _toward_reference(scene: Scene, ref_id: str | None, p) -> np.ndarray | None:
    try:
        ref = scene.get(ref_id) if ref_id else None
    except KeyError:
        return None
    if ref is None:
        return None
    d = np.r_[np.asarray(p[:2], float) - ref.center[:2], 0.0]
    n = float(np.linalg.norm(d))
    return d / n if n > 1e-6 else None


# --- helpers ------------------------------------------------------------------------------------
def _r(v, nd: int = 4) -> list:
    return [round(float(x), nd) for x in np.asarray(v, float).reshape(-1)]


def _try_move(world, T, speed: float = 0.2) -> bool:
    """A Cartesian move that counts as done when it stopped within NEAR_M (a brushed board)."""
    try:
        if world.move_tcp(T, speed_mps=speed):
            return True
    except UnreachableError:
        return False
    return float(np.linalg.norm(world.tcp_pose()[:3, 3] - T[:3, 3])) <= NEAR_M


def _delta_rotation(R_frame: np.ndarray, delta_deg) -> np.ndarray | None:
    """World rotation for (pitch, yaw, roll) degrees about the axes of the frame R_frame
    (pitch about its y, yaw about its z, roll about its x); None for no rotation."""
    pitch, yaw, roll = (float(v) for v in delta_deg)
    if max(abs(pitch), abs(yaw), abs(roll)) < 1e-9:
        return None
    local = Rotation.from_euler("ZYX", [yaw, pitch, roll], degrees=True).as_matrix()
    return R_frame @ local @ R_frame.T


def _rotated_about(T: np.ndarray, R_frame: np.ndarray, centre, delta_deg) -> np.ndarray:
    Rw = _delta_rotation(R_frame, delta_deg)
    if Rw is None:
        return T
    out = T.copy()
    out[:3, :3] = Rw @ T[:3, :3]
    out[:3, 3] = centre + Rw @ (T[:3, 3] - centre)
    return out


def _rotate_plan(poses: list, T_book: np.ndarray, delta_deg) -> list:
    """The place poses turned by the delta about the held book's centre, in the book's frame."""
    if _delta_rotation(T_book[:3, :3], delta_deg) is None:
        return poses
    return [_rotated_about(T, T_book[:3, :3], T_book[:3, 3], delta_deg) for T in poses]


def _distance_to_goal(box, point) -> float:
    """Metres from a point to a goal box; to a metric goal area (flat on the table), across the
    table only: the held book's centre stands above the area, not in it."""
    p = np.asarray(point, float).copy()
    if box.id == "goal_area":
        p[2] = box.center[2]
    return rel.distance_to_point(box, p)


def _seen_fraction(obs, box, margin_m: float = 0.02) -> float:
    """Share of a box's image silhouette where the camera sees into the box (not an occluder)."""
    rows, cols = np.nonzero(views.box_mask(obs, box))
    if len(rows) == 0:
        return 0.0
    z = obs.depth_m[rows, cols]
    k = obs.intrinsics
    pts = np.column_stack([(cols - k.cx) / k.fx * z, (rows - k.cy) / k.fy * z, z])
    pts = pts @ obs.T_base_cam[:3, :3].T + obs.T_base_cam[:3, 3]
    local = (pts - box.center) @ box.rotation
    inside = np.all(np.abs(local) <= box.size / 2 + margin_m, axis=1) & (z > 0)
    return float(inside.mean())


def _support_top(scene: Scene, p) -> float | None:
    """The top of the table under a point; None off the table."""
    top = rel.support_top(scene.by_category("table"), p, math.nan)
    return None if math.isnan(top) else top


def _metric_area(task: Task, scene: Scene) -> Region:
    """Where a metric placement's centre must land, as a flat box on the table: around the
    program's place position, as wide as the distance tolerance (flat, so that its image
    silhouette is the patch of table a click should hit)."""
    tol = next((float(c.get("tol_m", 0.03)) for c in task.check if c["type"] == "distance"), 0.03)
    c = np.asarray(task.place_pose["position"], float).copy()
    top = _support_top(scene, c)
    c[2] = (top if top is not None else 0.0) + 0.005
    return Region(id="goal_area", kind="area", center=c, size=[2 * tol, 2 * tol, 0.01])
