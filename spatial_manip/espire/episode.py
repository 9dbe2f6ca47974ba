"""One ESPIRE task in one MuJoCo world: observe, localize, move (ESPIRE's point-based action), end.

The point-based action: the pixel of a MOVE is lifted to the 3D point under it (the referenced
observation's depth and camera), and the arm acts there, as ESPIRE's execution loop (supplementary,
Algorithm 3) does; what it does stands, right or wrong:

- pick: the book the point lands on (the pixel's own object, never a book merely near it) is
  grasped the way the ground-truth oracle grasps it (top edge of an upright book, the
  overhanging end of a lying one) and lifted. A wrong book stays in the gripper: the trial and
  the episode fail (ESPIRE's criterion: the target book is held). With no book under the point,
  or the gripper already full, the end-effector moves over the point (a new wrist view) when it
  safely can, as ESPIRE's execution prompt says of a point "on another object or a free-space
  region".
- place: a pixel outside the box the highlighted views draw around the placement area, or
  inside it on the robot (the arm carrying the book often stands in front of the area) or on the
  book it holds, sets nothing down (the arm holding the book does not move; a failed trial), as
  ESPIRE's execution prompt has it: the robot places only at a point "on the target area",
  elsewhere it only moves its end-effector. Inside the box the held book is released at the point, as ESPIRE's end-effector goes to the clicked
  point and places there (`_slot_plan`): the middle of its bottom over the point, set down on
  what is under it (a slot's floor, the table: `_release_heights`), across the slot at the
  point, carried in from the front as far as the arm sets a book down in a slot. Nothing is
  centred, fitted into a slot's free part or moved to a nearby slot: a point high on a slot's
  back panel sets the book down on the floor below it, a point off every slot on whatever the
  point is on (if the arm reaches it), and where the book then ends is physics' answer, judged
  by ESPIRE's criteria. A point where the
  book would run into the shelf's frame or into what stands there sets nothing down, nor does one
  with nothing under it or where the arm reaches no set-down within MAX_RELEASE_DROP_M over what
  is under it (a book is set down, never dropped from the point's height). The pose is
  the one the driver chose (`chosen_set_down`: the held book turned by the MOVE's
  `rotation_delta`, upright or flat, whichever is nearer; protocol.SET_DOWN_DELTAS), never the
  task's, and ESPIRE's criteria want the pose the words ask for, upright when they name none
  (`espire_criteria`). On the table (metric tasks) it is stood on its long edge centred on the
  point (a book chosen flat is refused there, no motion). A released book is not fetched back.

Every trial counts (LOCALIZING_TRIALS, MOVING_TRIALS: ESPIRE's budget, held by the server): a
MOVE the arm cannot make at the point leaves the world as it was (the book still in hand, as in
ESPIRE's Figure 10, where the next trial succeeds) and is one of the five.

Rotation (SET_TASK's `rotation`): the axes named there are the driver's to choose. Each MOVE's
`rotation_delta` turns the end-effector from its current orientation about the target book's
axes; on a named axis the action is done at the orientation the driver reached, and the trial
succeeds only if that is within ROTATION_TOL_DEG of the oracle's (ESPIRE A.4: tilts within +-10
degrees). Axes not named are aligned by the server. A rotation the arm cannot reach is a failed
trial with no motion, never a silent fallback.

Replies never name the goal: no object or slot ids, no goal coordinates, no checker messages;
`goal_met`, `status`, the distance ESPIRE's analyze reads, and what the arm did.
`status` follows what ESPIRE's reflective driver reads: "success" (acted at the point),
"refocus" (nothing to act on at the point: at most the end-effector moved over it).
"""
from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from scipy.spatial.transform import Rotation

from spatial_manip.control.primitives import back_off
from spatial_manip.errors import SpatialManipError
from spatial_manip.espire import protocol as proto
from spatial_manip.espire import views
from spatial_manip.espire.client import low_pixel_in_box
from spatial_manip.geometry import relations as rel
from spatial_manip.geometry import support
from spatial_manip.transforms import quat_to_matrix
from spatial_manip.motion.arm_plans import ArmReach
from spatial_manip.scene import Region, Scene
from spatial_manip.sim import oracle, placement
from spatial_manip.sim.arm import sim_primitives
from spatial_manip.sim.checker import check_task
from spatial_manip.sim.sensing import IDEAL, SensingProfile
from spatial_manip.sim.tasks import Task, feasible_slots
from spatial_manip.sim.world import STOW_Q

SLOT_MARGIN_M = 0.01        # a place's point this close to a slot's box is in it (its floor, its back panel)
BACK_GAP_M = 0.005          # a book carried in towards a slot's back panel stops this short of it
TOUCH_M = 0.002             # boxes may overlap this much before the book is said to run into them
LIFT_M = 0.10
# a book is released this much over what it is set down on when the arm cannot set it down right
# there, lowest first: upright in a top slot, the slide in just over the front board was out of
# the arm's reach on the floor and in it 1 cm up (place-53-00009)
RELEASE_RAISES_M = (0.0, 0.01, 0.02, 0.04, 0.08)
# ... and never more than this over it: a lab's arm sets a book down, it does not drop it (a point
# high on a slot's back panel, or with nothing under it, is refused where no low set-down is reached)
MAX_RELEASE_DROP_M = RELEASE_RAISES_M[-1]
HOVER_M = 0.15              # an end-effector sent to a point with nothing to act on stops this high above it
OPEN_M = 0.085
MAX_KEPT_OBSERVATIONS = 8   # current observations kept for LOCALIZE / MOVE references
ROTATION_TOL_DEG = 10.0     # ESPIRE A.4's angle tolerance
# ESPIRE's trial budget per episode (its client's config.yaml: localizing_trials 3, moving_trials 5;
# Algorithms 2 and 3 loop "for i = 1 to N"). A failed trial is one of them whatever it did: a MOVE
# the arm cannot make at the point is answered as a failed trial, as ESPIRE's Figure 10 shows one
# ("moved", not successful, the book still in hand for the next). The server holds the budget so
# that no driver can turn refused moves into unlimited guesses.
LOCALIZING_TRIALS = 3
MOVING_TRIALS = 5
OUTSIDE_BOX = "the pixel is outside the box the highlighted view draws around the placement area"


@dataclasses.dataclass
class Kept:
    view: str
    obs: object               # RGBDObservation
    version: int


@dataclasses.dataclass
class Action:
    """What one MOVE did; `goal_met` is filled in from the world afterwards."""
    status: str               # success | refocus
    did: str                  # grasp | place | hover | none
    message: str
    distance: float
    rotation_error_deg: float | None = None


class Episode:
    def __init__(self, task: Task, scene: Scene, rotation_require: list, sensing: SensingProfile = IDEAL):
        self.task, self.initial, self.rotation_require = task, scene, rotation_require
        self.required = [a is not None for a in rotation_require]     # pitch, yaw, roll
        # the profile's effects are drawn from the task's scene seed: the same task, the same draw
        self.adapter = oracle.SimWorldAdapter(scene, sensing=sensing, seed=int(task.scene_seed))
        self.world = self.adapter.world
        # the robot's primitives and planner; the planner restarts OMPL's seed sequence at arm.yaml's sim
        # motion.seed before every search, so each episode plans as if the server had just started
        self.motions = sim_primitives(self.world, STOW_Q)
        self._arm = ArmReach(self.motions.plans.planner)
        if task.action == "pick" and scene.held_object() is None:
            # look with the arm folded away, as the generator checked visibility (tasks.observable)
            self.world.pose_arm(STOW_Q)
            self.world.step(int(0.2 / self.world.model.opt.timestep))
        self.criteria = espire_criteria(task)
        self.color_name, self.color_rgb = views.highlight_color(scene)
        self.marked = self._choose_marked()
        self.version = 0                  # bumped by every MOVE: older observations are stale
        self.kept: dict[str, Kept] = {}
        self._views: dict = {}            # view -> (version, observation, encodings): see _render
        self.stale: dict[str, int] = {}
        self.localize_attempts = 0
        self.localization = "pending"     # pending | met | skipped
        self.moves = 0
        self.rotation_ok: bool | None = None   # of the grasp or release that made the current state
        self.ended: dict | None = None    # END_TASK's reply, repeated to a second END_TASK
        self.update_s: list[float] = []   # observation renders and MOVE executions, seconds

    def close(self) -> None:
        self.adapter.close()

    # --- state --------------------------------------------------------------------------------
    def env_state(self) -> dict:
        """The arm's state; the world is summarised without naming any object (ids would tell
        the goal)."""
        w = self.world
        T = w.tcp_pose()
        q = Rotation.from_matrix(T[:3, :3]).as_quat()        # x, y, z, w
        return {"robot_js": _r(w.joint_positions()), "joint_names": list(w.joint_names),
                "wrapped_robot_ee_pos": _r(T[:3, 3]), "wrapped_robot_ee_ori": _r([q[3], q[0], q[1], q[2]]),
                "world_info": {"frame": "robot base (z up, metres)", "gripper_holds_object": w.held_object_id() is not None,
                               "sim_time_s": round(float(w.data.time), 3)}}

    def goal(self) -> tuple[list[str], list]:
        """(object ids, boxes) the task is about: answer books (pick), target slots (place), or
        the area a metric placement must reach."""
        t = self.task
        if t.action == "pick":
            return list(t.answer), []
        if t.answer:
            return [], [self.initial.get(r) for r in t.answer]
        return [], [_metric_area(t, self.initial)]

    def goal_met(self) -> bool:
        """ESPIRE's criteria on the world as it is, and the driver's rotation within tolerance."""
        ok = check_task(self.criteria, self.world.export_scene(), self.initial).success
        return bool(ok) and self.rotation_ok is not False

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
            pose = self._pose()
            fits = feasible_slots(scene, t.answer, pose) or boxes
            # the arm holding the book stands in front of the shelf: mark a slot the camera sees
            obs = views.render(self.world, "world")
            seen = {r.id: round(_seen_fraction(obs, r), 1) for r in fits}
            boxes = [min(fits, key=lambda r: (-seen[r.id], rel.distance(r, scene.robot)))]
        held = scene.held_object()
        if t.action != "pick" and boxes and boxes[0].kind == "slot" and held is not None:
            return [], [set_down_area(boxes[0], held.size, self._pose())]
        return ids, boxes

    def _pose(self) -> str:
        return next((c["pose"] for c in self.task.check if c["type"] == "pose"), "upright")

    # --- requests -----------------------------------------------------------------------------
    def observe(self, uid: str, view: str, highlight: bool) -> dict:
        """`view` of the world as it is now (the ego camera rides on the arm, wherever the last
        action left it), rendered once per MOVE (`_render`)."""
        t0 = time.perf_counter()
        obs, encoded = self._render(view)
        if highlight not in encoded:
            rgb = self.highlighted(obs) if highlight else obs.rgb
            encoded[highlight] = proto.encode_png(rgb), proto.encode_f32(obs.depth_m)
        self._keep(uid, Kept(view, obs, self.version))
        h, w = obs.depth_m.shape
        content = {"rgb": encoded[highlight][0], "depth": encoded[highlight][1],
                   "intrinsic": proto.encode_f32(obs.intrinsics.K), "extrinsic": proto.encode_f32(obs.T_base_cam),
                   "shape": {"row": h, "col": w}, "view": view, "highlight_goal": bool(highlight),
                   "bbox_color": self.color_name, "depth_unit": "m",
                   "extrinsic_frame": "T_base_camera: camera (x right, y down, z forward) to robot base"}
        self.update_s.append(time.perf_counter() - t0)
        return content

    def highlighted(self, obs) -> np.ndarray:
        """`obs`'s colour image with the box a highlighted view draws around what is marked."""
        return views.draw_goal_boxes(obs.rgb, [views.goal_mask(obs, *self.marked)], self.color_rgb)

    def _render(self, view: str) -> tuple:
        """(observation, its encodings by highlight) of `view` as the world is now. Only a MOVE
        changes the world (it bumps `version`), so a view asked again before the next MOVE (ESPIRE's
        driver looks plain then highlighted, and twice around END_TASK) is the same image, rendered
        and encoded once; unless the sensing profile draws new depth noise for every frame, as a
        real camera's would be."""
        last = self._views.get(view)
        if last is not None and last[0] == self.version:
            return last[1], last[2]
        obs = views.render(self.world, view)
        encoded: dict = {}
        if self.world.sensing.depth_noise is None:
            self._views[view] = (self.version, obs, encoded)
        return obs, encoded

    def localize(self, kept: Kept, row: int, col: int, req_uid: str = "") -> dict:
        if self.localize_attempts >= LOCALIZING_TRIALS:
            raise proto.ProtocolError(proto.CONFLICT, f"all {LOCALIZING_TRIALS} localizing trials of this task are used "
                                      "(ESPIRE's budget); send SKIP_LOCALIZATION or go on to MOVE", req_uid)
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

    def move(self, kept: Kept, row: int, col: int, delta_deg: list, req_uid: str = "") -> dict:
        t0 = time.perf_counter()
        if self.goal_met():     # nothing left to do: the driver's loop may still send a MOVE
            act = Action("success", "none", "the goal is already met; END_TASK ends the task", 0.0)
        elif self.moves >= MOVING_TRIALS:
            raise proto.ProtocolError(proto.CONFLICT, f"all {MOVING_TRIALS} moving trials of this task are used "
                                      "(ESPIRE's budget); send END_TASK", req_uid)
        else:
            p = views.pixel_point(kept.obs, row, col)
            seg = kept.obs.segmentation
            clicked = kept.obs.segment_ids.get(int(seg[row, col])) if seg is not None else None
            if self.task.action == "pick":
                act = self._move_pick(p, clicked, delta_deg)
            else:
                off_area = self.off_target_area(kept.obs, row, col)
                act = self._move_place(p, delta_deg, on_area=off_area is None, off_area=off_area)
            self.moves += 1
            self._invalidate()
        self.update_s.append(time.perf_counter() - t0)
        return self._reply(act)

    def _reply(self, act: Action) -> dict:
        T = self.world.tcp_pose()
        q = Rotation.from_matrix(T[:3, :3]).as_quat()
        details = {"distance": round(float(act.distance), 4), "wrapped_robot_ee_pos": _r(T[:3, 3]),
                   "wrapped_robot_ee_ori": _r([q[3], q[0], q[1], q[2]]), "action": act.did,
                   "holding": self.world.held_object_id() is not None, "message": act.message,
                   "rotation_error_deg": None if act.rotation_error_deg is None else round(act.rotation_error_deg, 1)}
        details["trial"], details["trials_left"] = self.moves, MOVING_TRIALS - self.moves
        return {"goal_met": self.goal_met(), "status": act.status,
                "post_state": {"execution": {"details": details}, "env_state": self.env_state()}}

    def end(self) -> dict:
        """ESPIRE's verdict on the final state; a second END_TASK gets the same reply."""
        if self.ended is None:
            met = self.goal_met()
            self.ended = {"goal_met": met, "post_state": {
                "execution": {"finish_goal": met, "moves": self.moves},
                "localization": {"state": self.localization, "attempts": self.localize_attempts},
                "env_state": self.env_state()}}
        return self.ended

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

    # --- the oracle's action (task feasibility, in-process oracle runs) ------------------------
    def act_on_goal(self) -> bool:
        """Do what the oracle does, through the same actions a MOVE takes, on the marked goal
        (the nominal rotation on every axis); whether the goal is then met."""
        ids, boxes = self.marked
        if self.task.action == "pick":
            book = self.world.export_scene().get(ids[0])
            self._grasp(self.world.export_scene(), book, "success", [0.0, 0.0, 0.0], oracle_rotation=True)
        else:
            p = self._goal_point(boxes[0]) if boxes[0].id == "goal_area" else self._oracle_click()
            if p is None:
                return False
            # the oracle's pixel lies inside the drawn box (client.low_pixel_in_box looks only there)
            self._move_place(p, [0.0, 0.0, 0.0], on_area=True, oracle_rotation=True)
        return self.goal_met()

    def _oracle_click(self):
        """The point the oracle driver clicks on the highlighted world view (client.low_pixel_in_box:
        the lowest point the marked area shows, in its middle across), or None: a task is feasible
        when the oracle, seeing what a driver sees, can put the book in."""
        obs = views.render(self.world, "world")
        px = low_pixel_in_box(obs.rgb, self.highlighted(obs), obs.depth_m, (obs.intrinsics.K, obs.T_base_cam))
        return views.pixel_point(obs, *px) if px is not None else None

    @staticmethod
    def _goal_point(area: Region) -> np.ndarray:
        """The point the oracle aims at on a metric area: its top (the table under it)."""
        return np.asarray(area.center, float) - [0.0, 0.0, 0.005]

    # --- rotation -----------------------------------------------------------------------------
    def _with_rotation(self, poses: list, R_frame: np.ndarray, centre, delta_deg, oracle_rotation: bool = False):
        """The action's TCP poses turned as the driver asked on the axes it owns (turned about
        `centre` in the book's frame R_frame), and the largest error on those axes (None when
        the server aligns every axis)."""
        if not any(self.required) or oracle_rotation:
            return poses, None
        now = _axis_offsets_deg(self.world.tcp_pose()[:3, :3], poses[0][:3, :3], R_frame)
        off = [_wrap_deg(now[i] + float(delta_deg[i])) if self.required[i] else 0.0 for i in range(3)]
        turned = [_rotated_about(T, R_frame, centre, off) for T in poses]
        return turned, max(abs(off[i]) for i in range(3) if self.required[i])

    # --- pick ---------------------------------------------------------------------------------
    def _move_pick(self, p, clicked: str | None, delta_deg) -> Action:
        w = self.world
        if w.held_object_id() is not None:      # a wrong book stays in the hand
            return self._hover(p, "the gripper already holds a book", grip_empty=False)
        scene = w.export_scene()
        book = self._pick_target(scene, clicked)
        if book is None:
            return self._hover(p, "no book at the point")
        return self._grasp(scene, book, "success", delta_deg)

    def _grasp(self, scene: Scene, book, status: str, delta_deg, oracle_rotation: bool = False) -> Action:
        w = self.world
        try:
            plan = oracle.plan_pick(scene, dataclasses.replace(self.task, answer=[book.id]), self._graspable)
        except SpatialManipError:
            return Action("refocus", "none", "no reachable grasp of the book at the point; the arm did not move",
                          self._goal_distance(book.center))
        (T,), err = self._with_rotation([plan.poses[1]], book.rotation, plan.poses[1][:3, 3], delta_deg, oracle_rotation)
        if err is not None and not self._graspable(T):
            return Action("refocus", "none", "the rotation asked for is out of the arm's reach; the arm did not move",
                          self._goal_distance(T[:3, 3]), err)
        lying = rel.book_pose_class(book) != "upright"
        message = "grasped and lifted"
        try:
            self.motions.pick(T, approach_m=0.07 if lying else 0.10, lift_m=LIFT_M, scene=scene, target_id=book.id)
        except SpatialManipError as e:      # refused by the planner, blocked, or closed on nothing
            message = f"the grasp did not hold a book ({e.code.value})"
        if w.held_object_id() is not None:
            self.rotation_ok = err is None or err <= ROTATION_TOL_DEG
        return Action(status, "grasp", message, self._goal_distance(T[:3, 3]), err)

    def _graspable(self, T, T_from=None) -> bool:
        """The oracle's grasp test: IK on the model, and a straight approach from 10 cm back along
        which the arm clears itself (what the primitives' planner will ask)."""
        return self.adapter.reachable(T, T_from) and self._arm.reaches(back_off(T, 0.10), T)

    @staticmethod
    def _pick_target(scene: Scene, clicked: str | None):
        """The book the clicked pixel shows, if any: a point beside a book selects nothing (no
        snapping to the nearest one), as ESPIRE grasps only at a point on the book."""
        books = {o.id: o for o in scene.objects if o.category == "book" and not o.held}
        return books.get(clicked)

    def _hover(self, p, why: str, grip_empty: bool = True) -> Action:
        """Nothing to act on at the point: the end-effector goes over it (a straight, checked
        move; an empty gripper only, so no carried book sweeps the scene), for a new wrist view."""
        if p is None:
            return Action("refocus", "none", f"{why}; no depth at the point, the arm did not move",
                          self._goal_distance(self.world.tcp_pose()[:3, 3]))
        if grip_empty and self.world.held_object_id() is None:
            T = self.world.tcp_pose()
            T[:3, 3] = np.asarray(p, float) + [0.0, 0.0, HOVER_M]
            try:
                if self.adapter.reachable(T):
                    self.motions.waypoints([T], scene=self.world.export_scene())
                    return Action("refocus", "hover", f"{why}; the end-effector moved over the point",
                                  self._goal_distance(p))
            except SpatialManipError:
                pass
        return Action("refocus", "none", f"{why}; the arm did not move", self._goal_distance(p))

    def _goal_distance(self, point) -> float:
        """Metres from a point to the nearest goal (answer book, slot or metric area)."""
        ids, boxes = self.goal()
        goal = [self.initial.get(i) for i in ids] + boxes
        return min((_distance_to_goal(g, point) for g in goal), default=0.0)

    # --- place --------------------------------------------------------------------------------
    def _move_place(self, p, delta_deg, *, on_area: bool, off_area: str | None = None,
                    oracle_rotation: bool = False) -> Action:
        """`on_area`: the clicked pixel is on the placement area (`off_target_area`: inside the box
        the highlighted view draws around it, and not on the robot or the book it holds); a shelf
        place is made only there. `off_area` says why not."""
        w = self.world
        held_id = w.held_object_id()
        if held_id is None:                 # released already: the book stays where it was sent
            # the distance is the book's, where it lies, as after the place (not the new point's:
            # a book on the floor is not 0 m from the goal because the click is)
            book = self.initial.held_object()
            act = self._hover(p, "the gripper holds no book")
            return act if book is None else dataclasses.replace(act, distance=self._book_distance(book.id))
        if p is None:
            return Action("refocus", "none", "no depth at the point (background); the arm did not move",
                          self._book_distance(held_id))
        if self.task.answer and not on_area:
            why = off_area or OUTSIDE_BOX
            return Action("refocus", "none", f"{why}: nothing was set down and the arm did not move",
                          self._book_distance(held_id))
        scene = w.export_scene()
        T_now = w.tcp_pose()
        offset = np.linalg.inv(T_now) @ w.object_pose(held_id)
        # the oracle's own action (feasibility) sets the book down as the task asks; a MOVE as the driver chose
        pose = self._pose() if oracle_rotation else chosen_set_down(scene.get(held_id), delta_deg)
        if self.task.answer or not self.task.place_pose:
            plan, status, why = self._slot_plan(scene, p, held_id, offset, T_now, pose)
        elif pose != "upright":
            plan, status, why = None, "refocus", f"a book is only stood on the table, never laid {pose} (rotation_delta turned it {pose})"
        else:
            plan, status, why = self._table_plan(scene, p, held_id, offset, T_now)
        if plan is None:
            return Action("refocus", "none", f"{why}; the arm did not move", self._book_distance(held_id))
        poses, err = self._with_rotation(plan.poses, plan.T_book[:3, :3], plan.T_book[:3, 3], delta_deg, oracle_rotation)
        if err is not None and not all(self.adapter.reachable(T) for T in poses):
            return Action("refocus", "none", "the rotation asked for is out of the arm's reach; the arm did not move",
                          self._book_distance(held_id), err)
        return self._place_along(poses, held_id, status, err)

    def off_target_area(self, obs, row: int, col: int) -> str | None:
        """Why a pixel of `obs` is not on the placement area ESPIRE places on, or None when it is:
        inside the box the highlighted view draws around the marked area (`in_marked_box`) and
        showing neither the robot (its arm, its gripper: segmentation -1, as is the floor) nor the
        book it holds. The arm carrying the book often stands in front of the area, inside its box:
        such a point "lies on another object" (ESPIRE's execution prompt), and a release there
        dropped the book from the arm to the floor (place seed 0's test click, 1.13 m from the goal)."""
        if not self.in_marked_box(obs, row, col):
            return OUTSIDE_BOX
        if obs.segmentation is None:
            return None
        seg = int(obs.segmentation[row, col])
        held = self.world.held_object_id()
        if seg < 0:
            return "the pixel shows the robot (its arm or gripper) or the floor in front of the placement area"
        if held is not None and obs.segment_ids.get(seg) == held:
            return "the pixel shows the book in the gripper, in front of the placement area"
        return None

    def in_marked_box(self, obs, row: int, col: int) -> bool:
        """Whether a pixel of `obs` lies inside the box the highlighted view draws around the marked
        placement area: ESPIRE places only there ("If the predicted target point lies on the target
        area, the robot will attempt to directly place the book at that location. If the predicted
        point lies on another object or a free-space region, the robot will move its end-effector
        to the indicated position": its execution prompt, supplementary Figure 4b for picks). The
        driver sees the box, so the box, not the area's 3-D extent, is what counts."""
        return views.in_box(views.mask_box(views.goal_mask(obs, *self.marked)), row, col)

    def _place_along(self, poses, held_id: str, status: str, err) -> Action:
        """The robot's place primitive (planned transit, the envelope, the planner's collision
        checks) along (pre, at, retreat); it releases the book there, right place or wrong."""
        w = self.world
        pre, at, retreat = poses
        approach = at[:3, 3] - pre[:3, 3]
        d_in = float(np.linalg.norm(approach))
        message = "placed and released"
        try:
            self.motions.place(at, approach_m=d_in, retreat_m=float(np.linalg.norm(retreat[:3, 3] - at[:3, 3])),
                               approach_dir=approach / max(d_in, 1e-9), scene=w.export_scene())
        except SpatialManipError as e:      # refused before moving, or stopped on the way
            message = f"the place motion stopped ({e.code.value})"
        if w.held_object_id() is None:
            self.rotation_ok = err is None or err <= ROTATION_TOL_DEG
            return Action(status, "place", message, self._book_distance(held_id), err)
        return Action("refocus", "none", f"{message}; the book is still in the gripper", self._book_distance(held_id), err)

    def _book_distance(self, held_id: str) -> float:
        """How far the book (where it is now) is from the nearest goal region."""
        return self._goal_distance(self.world.export_scene().get(held_id).center)

    def _slot_plan(self, scene: Scene, p, held_id: str, offset, T_now, pose: str):
        """The book released at the point, as ESPIRE's end-effector goes to the clicked 3-D point
        and places there: the held book (in the pose the MOVE chose) with the middle of its
        bottom over the point, released just above what is under it (`_release_heights`), and
        across at the point; in a slot, carried in from the front as far as the generator sets a
        book down (the arm reaches no deeper; placement.slot_candidates), elsewhere over the
        point. Nothing is centred, fitted into a free part or moved to a slot's middle: a point
        high on a back panel sets the book down on the floor below it, and where it ends is
        physics' answer, which ESPIRE's criteria judge.
        A point where the book would run into the shelf's frame or into what stands at the
        point, or that the arm cannot reach, sets nothing down."""
        size = np.asarray(scene.get(held_id).size, float)
        slot = next((r for r in scene.regions if rel.point_in_box(p, r, SLOT_MARGIN_M)), None)
        inv_off = np.linalg.inv(offset)
        tried = []
        for R in placement.slot_frames(pose, offset):
            half = np.abs(R) @ (size / 2)                   # the book's half extents along x, y, z
            c = np.array([p[0], p[1], 0.0])
            if slot is not None:        # carried in as far as the generator's set-down
                inset = -placement.FINGERTIP_M if pose == "flat" else placement.SLOT_INSET_M
                c[0] = float(rel._corners(slot)[:, 0].min()) + inset + half[0]
            heights = _release_heights(scene, held_id, c, p[2])
            tried += [] if heights else ["unsupported"]
            for bottom in heights:
                c[2] = bottom + half[2]
                T_book = np.eye(4)
                T_book[:3, :3], T_book[:3, 3] = R, c
                if _runs_into(scene, held_id, c, half, slot):
                    tried.append("into")
                    continue
                T_tcp = T_book @ inv_off
                pre_dx = float(c[0] - half[0]) - (_shelf_front_x(scene, c[0] - half[0]) - 2 * half[0] - 0.03)
                poses = placement.approach_poses(T_tcp, np.array([-max(pre_dx, 0.05), 0, 0.015]),
                                                 np.array([-0.10 - placement.FINGERTIP_M, 0, 0.0]))
                if all(self.adapter.reachable(T, a) for T, a in zip(poses, [T_now] + poses[:-1])):
                    return placement.PlacePlan(poses, T_book, f"at the point {pose}"), "success", ""
                tried.append("reach")
        if tried and all(t == "into" for t in tried):
            return None, "refocus", f"the book {pose} at the point would run into the shelf or what stands there"
        if tried and all(t == "unsupported" for t in tried):
            return None, "refocus", f"nothing under the point to set the book {pose} down on"
        return None, "refocus", (f"no reachable way to put the book {pose} at the point, set down at most "
                                 f"{100 * MAX_RELEASE_DROP_M:.0f} cm over what is under it")

    def _table_plan(self, scene: Scene, p, held_id: str, offset, T_now):
        """Stand the held book on its gripped edge centred on the point: every yaw (15 deg
        steps), nearest the orientation the task sets the book down in first (else covers
        facing the task's reference), the first whose three poses the arm reaches."""
        size = np.asarray(scene.get(held_id).size, float)
        top = _support_top(scene, p)
        if top is None:
            return None, "refocus", "the point is not on the table"
        cands = _standing_rotations(offset)
        want = (self.task.place_pose or {}).get("orientation")
        if want is not None:       # the book turned as the task sets it down (the server's part, as for slots)
            R_want = quat_to_matrix(want)
            cands.sort(key=lambda c: _box_misalignment(c[1], R_want))
        elif (toward := _toward_reference(scene, self.task.reference, p)) is not None:
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
                return placement.PlacePlan(poses, T_book, f"table yaw {yaw}"), "success", ""
        return None, "refocus", "no reachable way to stand the book at the point"


def espire_criteria(task: Task) -> dict:
    """The task as ESPIRE scores it: a book put on the shelf must also stand as the words ask,
    upright when they name no pose (ESPIRE's place prompt: "the book in your hand should be
    placed in the vertical manner"), and ESPIRE judges that pose by its angle (A.4: "the final
    tilt angle within +-10 degrees of the expected angle"): upright is a tilt of 0, flat of 90
    (`POSE_TILT_DEG`), not the looser pose classes of relations.book_pose_class (a book leaning
    20 degrees in a slot still reads upright there). The generator names the pose only when the
    family is about it, so without this a book laid flat in a right slot would count, and a
    driver turning the book at random would lose nothing."""
    d = task.to_dict()
    kinds = {c["type"] for c in d["check"]}
    checks = list(d["check"])
    if "in_regions" in kinds and "pose" not in kinds:
        book = next(c["object"] for c in checks if c["type"] == "in_regions")
        checks.append({"type": "pose", "object": book, "pose": "upright"})
    d["check"] = [_as_tilt(c) for c in checks]
    return d


# the tilt (relations.book_tilt_deg: 0 standing, 90 lying) ESPIRE expects of a book in a named pose
POSE_TILT_DEG = {"upright": 0.0, "flat": 90.0}


def _as_tilt(check: dict) -> dict:
    """A pose check of a pose with an angle, as ESPIRE's tilt criterion on that angle."""
    if check["type"] != "pose" or check["pose"] not in POSE_TILT_DEG:
        return check
    return {"type": "tilt", "object": check["object"], "deg": POSE_TILT_DEG[check["pose"]], "tol_deg": rel.TILT_TOL_DEG}


def free_span(slot: Region) -> tuple[float, float]:
    """(lo, hi) world y of the part of a slot nothing stands in (the generator's `free_y`)."""
    lo, hi = slot.extra.get("free_y", [slot.center[1] - slot.size[1] / 2, slot.center[1] + slot.size[1] / 2])
    return float(lo), float(hi)


def across_room(size, pose: str) -> float:
    """Metres across a slot a held book of `size` (W, H, L) needs in `pose`, as the generator's
    fit test measures it (tasks._fits): upright, its thickness and the opening fingers; flat,
    its length (it slides in width first)."""
    _, H, L = (float(v) for v in size)
    return L + 0.04 if pose == "flat" else H + 0.07


def placement_area(slot: Region, span: tuple[float, float] | None = None) -> Region:
    """The part of a slot a book is set down in: the slot's whole depth and height over the
    `span` across it (default its free span), as a slot region (the placement's input and what
    the highlighted views mark: ESPIRE marks the placement area, not the slot's contents)."""
    lo, hi = span if span is not None else free_span(slot)
    area = dataclasses.replace(slot, center=np.array(slot.center, float), size=np.array(slot.size, float),
                               extra=dict(slot.extra))
    area.center[1], area.size[1] = (lo + hi) / 2, hi - lo
    area.extra["free_y"] = [lo, hi]
    return area


def set_down_area(slot: Region, size, pose: str) -> Region:
    """Where in a slot a held book of `size` goes in `pose`: the middle of the slot's free part,
    as wide as the book and the opening fingers need (what the highlighted views mark, ESPIRE's
    "placement area"; the feasibility oracle clicks its lowest point in view). A wide shelf's free
    part reaches beyond the arm, so its middle, not all of it, is marked."""
    lo, hi = free_span(slot)
    mid, room = (lo + hi) / 2, across_room(size, pose)
    return placement_area(slot, (mid - room / 2, mid + room / 2))


def chosen_set_down(held, delta_deg) -> str:
    """The set-down pose a place MOVE asks for: the held book turned by `rotation_delta` (about its
    own axes, as _delta_rotation reads it), "flat" when its thickness then points nearer the
    vertical than the horizontal, else "upright"."""
    Rw = _delta_rotation(held.rotation, delta_deg)
    turned = held if Rw is None else dataclasses.replace(held, rotation=Rw @ held.rotation)
    return "flat" if rel.book_tilt_deg(turned) >= 45.0 else "upright"


def _half_extents(obj) -> np.ndarray:
    return np.abs(np.asarray(obj.rotation, float)) @ (np.asarray(obj.size, float) / 2)


def _runs_into(scene: Scene, held_id: str, c, half, slot) -> bool:
    """Whether the book's box at centre `c` (half extents `half`, world-aligned) would pass
    through something: another object; in a slot, its side walls or the board above it; outside
    every slot, the shelf's frame."""
    lo, hi = c - half + TOUCH_M, c + half - TOUCH_M
    for o in scene.objects:
        if o.id == held_id or o.held or o.category in ("table", "shelf"):
            continue
        h = _half_extents(o)
        if np.all(lo < o.center + h) and np.all(hi > o.center - h):
            return True
    if slot is not None:
        corners = rel._corners(slot)
        return bool(lo[1] < corners[:, 1].min() or hi[1] > corners[:, 1].max() or hi[2] > corners[:, 2].max())
    for shelf in scene.by_category("shelf"):
        h = _half_extents(shelf)
        if np.all(lo < shelf.center + h) and np.all(hi > shelf.center - h):
            return True
    return False


def _shelf_front_x(scene: Scene, default: float) -> float:
    """The x of the shelf's front face (the approach starts in front of it)."""
    shelves = scene.by_category("shelf")
    return min((float(s.center[0] - _half_extents(s)[0]) for s in shelves), default=default - 0.05)


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


def _box_misalignment(R: np.ndarray, R_want: np.ndarray) -> float:
    """0 when a box at rotation R lies as one at R_want (a box is the same after half turns
    about its axes), up to 3 when its axes cross them."""
    return float(3.0 - np.abs(np.diag(R.T @ R_want)).sum())


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


def _axis_offsets_deg(R_now: np.ndarray, R_goal: np.ndarray, R_frame: np.ndarray) -> list:
    """(pitch, yaw, roll) degrees that turn R_goal into R_now about the axes of R_frame, in
    _delta_rotation's convention (the inverse of it)."""
    local = R_frame.T @ (R_now @ R_goal.T) @ R_frame
    yaw, pitch, roll = Rotation.from_matrix(local).as_euler("ZYX", degrees=True)
    return [float(pitch), float(yaw), float(roll)]


def _wrap_deg(a: float) -> float:
    return (a + 180.0) % 360.0 - 180.0


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


def _release_heights(scene: Scene, held_id: str, c, z: float) -> list[float]:
    """The heights to release a book whose bottom middle is over `c` (x, y) at, lowest first:
    DROP_M above the highest surface under it no higher than the clicked height `z`
    (geometry.support, the rule that refuses "50 cm above the cube": a slot's floor, a book lying
    in it, the table), then RELEASE_RAISES_M over that where the arm cannot set it down right
    there, and at the point's own height last if that is within MAX_RELEASE_DROP_M of it. No height
    when nothing carries it there: a book is set down, never dropped (one dropped 22 cm bounced
    out over the slot's front edge: the lay-it-flat task of test_episode_rules), so a point high
    on a slot's back panel sets it down on the floor below or nowhere."""
    at_point = z + placement.DROP_M
    surface = support.surface_under(support.surfaces(scene, held_id), [c[0], c[1], z])
    if surface is None:
        return []
    low = surface.top_z + placement.DROP_M
    last = [max(at_point, low)] if at_point - low <= MAX_RELEASE_DROP_M else []
    return [low + r for r in RELEASE_RAISES_M if low + r < at_point] + last


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
