"""Our stack as an ESPIRE driver: perception + planner choose the pixel of LOCALIZE, perception
the pixel of MOVE in the box ESPIRE's execution view marks.

The driver is a client of the protocol and nothing else. Per task, in the order ESPIRE's own
driver sequences an episode (espire_eval_common/driver.py: choose, set, localize with trials,
move with trials, a last observation, END_TASK, one more observation):

1. SET_TASK (no rotation requirement); the reply's end-effector pose is kept for the held object;
2. GET_OBSERVATION of the `world` view *without* the goal highlight (localization is the
   spatial reasoning ESPIRE scores: the highlighted image draws the answer);
3. the reply becomes an `RGBDObservation` (PNG colour, float32 depth, intrinsic, extrinsic), the
   classical segmenter turns it into a Scene, the `program` planner reads the instruction on it;
4. the target becomes a pixel: a pick's object, a slot, or a metric place position, through the
   observation's own intrinsic/extrinsic (`target_pixel`);
5. LOCALIZE that pixel (SKIP_LOCALIZATION when it missed or nothing was planned);
6. execution as ESPIRE's drivers do it (espire_eval_common/driver.py moves on the highlighted
   view; the execution prompt names only "the book ... marked by a bounding box" or "the
   placement area ... marked by a bounding box", not the instruction): the world view plain,
   then highlighted; the box is where they differ; the stack perceives the plain image and
   clicks inside the box where its geometry says the action lands (`choose_marked`), and MOVEs
   there on the highlighted observation, in the set-down pose its plan of the instruction chose;
   after a MOVE that did not meet the goal, it looks again and MOVEs again while it has a pixel
   it has not tried (ESPIRE's `moving_trials`, default 5);
7. GET_OBSERVATION, END_TASK, GET_OBSERVATION (ESPIRE's finalize_task), with highlight off.

What it reads of the replies: images, depth, intrinsic, extrinsic, the end-effector pose, the
`goal_met` of its own LOCALIZE / MOVE (to stop, as ESPIRE's drivers do), and for execution the
highlighted image's box. It never reads `click_distance_px`, the MOVE's `distance`, or the task
list's family fields (the server names no goal object, slot or point in any reply). They are
logged, as ESPIRE's client logs every reply, for the statistics. So localization scores the
stack's reasoning, execution its acting on a marked target (ESPIRE Table 9's column), and
analyze's "localized and goal met" both.

Cell knowledge: by default none, only what a model driver gets (observation + instruction).
With the served tasks' file (`--cell-config`), what a lab gives the stack it deploys
(`cell_configuration`): the cell's fixtures and its shelf's slots as configured, empty (what is
in them is perceived), the book in the gripper, and the enrolled object library as the catalogue
(config/library/sim_assets.json: every object the lab enrolled, most absent, none with a pose).
Nothing of the episode's own objects: not which are present, nor where, nor their sizes.

Logs, per episode: DIR/<nnn>_<task>/run.log in the format of ESPIRE's client (loguru's
"YYYY-MM-DD at HH:MM:SS | LEVEL | message" with Send / Recv JSON, binary fields dropped), so
ESPIRE's `analyze.py` reads DIR unchanged; and DIR/results.jsonl, one record per task with the
fields analyze.py extracts (set_task, localize, move, end_task, timestamps) plus what the stack
planned. `summarize` prints localization and execution success per family from either.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import re
import time
import uuid
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from scipy import ndimage

from spatial_manip.agent import with_held
from spatial_manip.espire import protocol as proto
from spatial_manip.espire import views
from spatial_manip.espire.client import EspireProtocolClient, EspireReplyError, drawn_box
from spatial_manip.espire.episode import placement_area, set_down_area
from spatial_manip.camera_model import CameraIntrinsics, project
from spatial_manip.geometry.relations import points_in_box
from spatial_manip.transforms import apply, invert, quat_to_matrix
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception import make_segmenter, perceive_with_workspace
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.scene import FIXTURE_CATEGORIES, Scene
from spatial_manip.sim import tasks as sim_tasks
from spatial_manip.sim.library import catalogue_workspace
from spatial_manip.workspace.shelf_check import occupied_span
from spatial_manip.sim.capture_cell import clear_shelf, fixtures_only

OBS_KEYS = ("rgb", "depth", "intrinsic", "extrinsic")   # binary: ESPIRE's client saves them as files
NO_ROTATION = [None, None, None]
TRIED_PX = 4           # a pixel this close to one already tried is the same choice: stop retrying
METRIC_NEAR_M = 0.03   # a metric place's pixel: a surface point this close (across) to the position
INNER_PX = 3           # a target's pixel lies this far inside the image region of its points (see _inner)
LOWEST_BAND_M = 0.015  # a slot is clicked among the points it shows within this of its lowest


# --- observation -> RGBDObservation -----------------------------------------------------------
def observation_from_reply(content: dict) -> RGBDObservation:
    """The stack's observation from a GET_OBSERVATION reply (its encodings: protocol.py)."""
    h, w = int(content["shape"]["row"]), int(content["shape"]["col"])
    K = proto.decode_f32(content["intrinsic"], 3, 3).astype(float)
    T = proto.decode_f32(content["extrinsic"], 4, 4).astype(float)
    depth = proto.decode_f32(content["depth"], h, w).copy()
    return RGBDObservation(proto.decode_png(content["rgb"]), depth, CameraIntrinsics.from_K(K, w, h), T)


def tcp_pose(env_state: dict) -> np.ndarray | None:
    """4x4 TCP pose from env_state's wrapped_robot_ee_pos / _ori (w, x, y, z)."""
    try:
        w, x, y, z = (float(v) for v in env_state["wrapped_robot_ee_ori"])
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = quat_to_matrix([x, y, z, w]), np.asarray(env_state["wrapped_robot_ee_pos"], float)
        return T
    except (KeyError, TypeError, ValueError):
        return None


# --- target -> pixel ----------------------------------------------------------------------------
def _projection(obs: RGBDObservation, p) -> tuple[int, int] | None:
    uv, inside = project(apply(invert(obs.T_base_cam), np.asarray(p, float)[None]), obs.intrinsics)
    if not inside[0]:
        return None
    return int(round(uv[0, 1])), int(round(uv[0, 0]))


def target_pixel(obs: RGBDObservation, *, box=None, point=None, upper: bool = False,
                 lowest: bool = False, deepest: bool = False, within=None) -> tuple[int, int] | None:
    """(row, col) where the camera sees the target: among pixels whose 3D point lies in `box`
    (an object or a slot, 1 cm margin), the one nearest the box centre's projection, so that the
    server's point-based action lands on it (a slot is clicked where the camera sees into it, not
    on the held book in front of it); `upper`: only the box's upper half where it shows, since a
    perceived book's box takes in the pedestal, holder or ramp it rests on, whose pixels are not
    the book (4 of 24 first pixels on seeds 41-43 fell on a support); `lowest`: only the lowest
    points it sees in the box (a slot: its floor, where the server sets the held book down,
    across the slot at the clicked point); `deepest`: the pixel
    farthest inside the image region of those points instead of the one nearest the centre (a
    second try when the first grasped nothing); `within`: only pixels inside that image box
    (r0, r1, c0, c1: the box ESPIRE's execution view marks), nearest its centre. For a `point` (a
    metric place position), the surface pixel under it (nearest across, not above it). Falls back
    to the plain projection; None when the target is outside the image."""
    valid = np.isfinite(obs.depth_m) & (obs.depth_m > 0)
    pts, uv = base_cloud(obs, valid)
    if box is not None:
        centre = _projection(obs, box.center)
        sel = points_in_box(pts, box, 0.01)
        if within is not None:
            sel &= _in_pixel_box(uv, within)
            centre = ((within[0] + within[1]) // 2, (within[2] + within[3]) // 2)
        if upper and sel.any():
            top = sel & (pts[:, 2] >= float(np.asarray(box.center, float)[2]))
            sel = top if top.any() else sel
        if lowest and sel.any():
            sel &= pts[:, 2] <= pts[sel, 2].min() + LOWEST_BAND_M
        if sel.any() and deepest:
            u, v = _deepest(uv[sel], obs.depth_m.shape)
            return int(v), int(u)
        if sel.any():
            cand = _inner(uv[sel], obs.depth_m.shape)
            ref = np.array(centre[::-1]) if centre is not None else cand.mean(axis=0)
            k = int(np.argmin(np.sum((cand - ref) ** 2, axis=1)))
            return int(cand[k, 1]), int(cand[k, 0])
        return centre if within is None else None
    p = np.asarray(point, float)
    below = pts[:, 2] <= p[2] + 0.005
    if below.any():
        d = np.linalg.norm(pts[below, :2] - p[:2], axis=1)
        k = int(np.argmin(d))
        if d[k] <= METRIC_NEAR_M:
            return int(uv[below][k, 1]), int(uv[below][k, 0])
    return _projection(obs, p)


def _in_pixel_box(uv: np.ndarray, box) -> np.ndarray:
    r0, r1, c0, c1 = box
    return (uv[:, 1] >= r0) & (uv[:, 1] <= r1) & (uv[:, 0] >= c0) & (uv[:, 0] <= c1)


def _inner(uv: np.ndarray, shape: tuple, erode_px: int = INNER_PX) -> np.ndarray:
    """The pixels (u, v) at least `erode_px` inside the image region they form, when some are:
    the server acts only at a point on the object (no snapping to a book beside the point), and
    a pixel at the region's edge can show the table or the support just past the box's margin."""
    region = np.zeros(shape, bool)
    region[uv[:, 1], uv[:, 0]] = True
    inner = ndimage.binary_erosion(region, iterations=erode_px)
    keep = inner[uv[:, 1], uv[:, 0]]
    return uv[keep] if keep.any() else uv


def _deepest(uv: np.ndarray, shape: tuple) -> np.ndarray:
    """The pixel (u, v) farthest from the edge of the image region the pixels form: where a
    click is surest to land on the target even when the region's centre lies near its edge. The
    image's border is an edge too (what lies past it is unseen): the region is measured inside a
    one-pixel frame of background, else a target cut by the border had its deepest pixel on it."""
    region = np.zeros((shape[0] + 2, shape[1] + 2), bool)
    region[uv[:, 1] + 1, uv[:, 0] + 1] = True
    inside = ndimage.distance_transform_edt(region)[uv[:, 1] + 1, uv[:, 0] + 1]
    return uv[int(np.argmax(inside))]


# --- perception + planning ------------------------------------------------------------------
@dataclasses.dataclass
class Choice:
    pixel: tuple[int, int] | None = None
    target: str = ""               # object id, slot id, or "place at (x, y, z)"
    # every target the plan accepts, in its order, with its pixel: when the arm cannot act on
    # the first (no reachable grasp), the next MOVE tries the next, as the pipeline's pick does
    alternatives: list = dataclasses.field(default_factory=list)
    program: str | None = None
    set_down: str = "upright"      # a place: the pose the plan sets the book down in (protocol.SET_DOWN_DELTAS)
    error: str = ""
    perceive_s: float = 0.0
    plan_s: float = 0.0

    def to_dict(self) -> dict:
        return {"pixel": list(self.pixel) if self.pixel else None, "target": self.target, "program": self.program,
                "alternatives": [t for t, _ in self.alternatives],
                "error": self.error, "perceive_s": round(self.perceive_s, 3), "plan_s": round(self.plan_s, 4)}


class StackPolicy:
    """Perception + planner -> pixel, on one observation."""

    def __init__(self, segmenter: str = "classical", planner: str = "program", scenes: dict | None = None,
                 library=None):
        """`scenes`: task id -> the task's scene file (load_scenes), of which only the cell
        configuration is used (`cell_configuration`, with `library` as the catalogue); None: no
        cell knowledge."""
        if scenes is not None and library is None:
            raise ValueError("a cell configuration needs the enrolled library as its catalogue "
                             "(spatial_manip.sim.library.load_default_library())")
        self.seg, self.planner = make_segmenter(segmenter), make_planner(planner)
        self.scenes, self.library = scenes, library
        self.workspace: Scene | None = None

    def begin(self, task_id: str, T_tcp: np.ndarray | None) -> None:
        """A new task: its cell configuration (the held book's grasp from the start pose)."""
        full = self.scenes.get(task_id) if self.scenes is not None else None
        self.workspace = cell_configuration(full, T_tcp, self.library) if full is not None else None

    def perceive(self, obs: RGBDObservation, T_tcp: np.ndarray | None) -> Scene:
        scene = perceive_with_workspace(self.seg, obs, self.workspace)
        if self.workspace is None:
            return scene
        return with_perceived_occupancy(_with_held(scene, self.workspace, T_tcp))

    def choose(self, obs: RGBDObservation, task: dict, T_tcp: np.ndarray | None) -> Choice:
        out = Choice()
        t0 = time.perf_counter()
        try:
            scene = self.perceive(obs, T_tcp)
        except Exception as e:        # NoObservationError, no support plane: the stack sees nothing to act on
            out.error, out.perceive_s = f"perception: {type(e).__name__}: {e}", time.perf_counter() - t0
            return out
        out.perceive_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        kind = task["action"] if task.get("action") in ("pick", "place") else "auto"
        result = self.planner.plan(scene, task["instruction"], observation=obs, task_kind=kind)
        out.plan_s, out.program = time.perf_counter() - t0, result.program
        out.set_down = planned_set_down(result.program)
        if not result.ok:
            out.error = f"{result.error['code']}: {result.error['message']}"
            return out
        if kind == "place" and result.place_pose is not None and not _slot_ids(scene, result.targets):
            p = np.asarray(result.place_pose.position, float)
            out.target, out.pixel = f"place at {np.round(p, 3).tolist()}", target_pixel(obs, point=p)
        elif result.targets:
            second = []     # an object's deepest pixel, tried once every first pixel is (a click that grasped nothing)
            for tid in result.targets:
                slot = next((r for r in scene.regions if r.id == tid), None)
                # a slot is clicked in the middle of its free part (the server sets the book down where
                # the point is; a wide shelf's free part reaches beyond the arm)
                px = (target_pixel(obs, box=_free_middle(slot, scene, out.set_down), lowest=True) if slot is not None
                      else target_pixel(obs, box=scene.get(tid), upper=True))
                if px is not None:
                    out.alternatives.append((tid, px))
                if slot is None and (deep := target_pixel(obs, box=scene.get(tid), upper=True, deepest=True)) is not None:
                    second.append((tid, deep))
            out.alternatives += second
            out.target, out.pixel = out.alternatives[0] if out.alternatives else (result.targets[0], None)
        elif result.place_pose is not None:
            p = np.asarray(result.place_pose.position, float)
            out.target, out.pixel = f"place at {np.round(p, 3).tolist()}", target_pixel(obs, point=p)
        if out.pixel is None and not out.error:
            out.error = f"the target {out.target or '?'} is not in the image"
        return out


    def choose_marked(self, obs: RGBDObservation, task: dict, T_tcp: np.ndarray | None, marked,
                      set_down: str = "upright") -> Choice:
        """The pixel of a MOVE in the box ESPIRE's execution view marks (`marked`: r0, r1, c0, c1
        of `obs`'s image), as ESPIRE's own drivers act: their execution prompt names only the box
        ("the book ... marked by a bounding box", "the placement area is marked by a bounding
        box"), not the instruction. The stack perceives the plain image and clicks where its
        geometry says the action lands: a pick, on the perceived object that fills the box best
        (then the next), upper part, inside the box; a place, on the lowest points the box shows
        of the stack's own set-down area in the perceived slot whose area the box outlines. `set_down`
        is the pose the instruction's plan chose (the box does not say it)."""
        out = Choice(set_down=set_down, target="marked box")
        t0 = time.perf_counter()
        try:
            scene = self.perceive(obs, T_tcp)
        except Exception as e:        # as in choose: nothing perceived, nothing to click
            out.error, out.perceive_s = f"perception: {type(e).__name__}: {e}", time.perf_counter() - t0
            return out
        out.perceive_s = time.perf_counter() - t0
        valid = np.isfinite(obs.depth_m) & (obs.depth_m > 0)
        pts, uv = base_cloud(obs, valid)
        inside = _in_pixel_box(uv, marked)
        if task.get("action") == "place":
            out.alternatives = _marked_place_pixels(obs, scene, marked, set_down)
        else:
            out.alternatives = _marked_pick_pixels(obs, scene, pts, inside, marked)
        if out.alternatives:
            out.target, out.pixel = out.alternatives[0]
        else:
            out.error = "nothing the stack perceives lies in the marked box"
        return out


def _marked_pick_pixels(obs, scene: Scene, pts, inside, marked) -> list:
    """(object id, pixel) for the perceived movable objects whose image overlaps the marked box,
    best overlap (intersection over union of pixels) first: each one's pixel in its upper part,
    then, for a second try, each one's deepest pixel there."""
    scored = []
    for o in scene.objects:
        if o.held or o.category in FIXTURE_CATEGORIES:
            continue
        mine = points_in_box(pts, o, 0.01)
        shared = int(np.sum(mine & inside))
        if shared:
            scored.append((shared / int(np.sum(mine | inside)), o))
    ranked = [o for _, o in sorted(scored, key=lambda so: -so[0])]
    first = [(o.id, target_pixel(obs, box=o, upper=True, within=marked)) for o in ranked]
    second = [(o.id, target_pixel(obs, box=o, upper=True, within=marked, deepest=True)) for o in ranked]
    return [(t, px) for t, px in first + second if px is not None]


def _marked_place_pixels(obs, scene: Scene, marked, set_down: str) -> list:
    """(slot id, pixel) for the perceived slots whose set-down area (the stack's own, its free
    middle) the marked box outlines, best first: the box ESPIRE draws is the image box of the
    placement area, so the slot whose area's image box overlaps it most (intersection over union)
    is the one marked; a box also shows the floor of the slot above or below it in perspective,
    and counting the points it shows chose that slot (place-54-00003: the box of row 4 showed
    more of row 3's floor). Clicked at the lowest point of that area inside the box, else of the
    slot inside the box."""
    scored = []
    for slot in scene.regions:
        area = _free_middle(slot, scene, set_down)
        overlap = _box_iou(views.mask_box(views.box_mask(obs, area)), marked)
        if overlap > 0.0:
            scored.append((overlap, slot, area))
    out = []
    for _, slot, area in sorted(scored, key=lambda s: -s[0]):
        px = (target_pixel(obs, box=area, lowest=True, within=marked)
              or target_pixel(obs, box=slot, lowest=True, within=marked))
        if px is not None:
            out.append((slot.id, px))
    return out


def _box_iou(a, b) -> float:
    """Intersection over union of two image boxes (r0, r1, c0, c1, inclusive); 0 when one is None."""
    if a is None or b is None:
        return 0.0
    rows = min(a[1], b[1]) - max(a[0], b[0]) + 1
    cols = min(a[3], b[3]) - max(a[2], b[2]) + 1
    if rows <= 0 or cols <= 0:
        return 0.0
    shared = rows * cols
    return shared / (_box_area(a) + _box_area(b) - shared)


def _box_area(box) -> int:
    return (box[1] - box[0] + 1) * (box[3] - box[2] + 1)


def cell_configuration(full: Scene, T_tcp: np.ndarray | None, library) -> Scene:
    """What a lab configures for the cell of a served task (its scene file): the table or the
    shelf, and the shelf's slots as a capture writes them, empty; the book in the gripper (the
    robot knows what it picked and how it holds it); and the enrolled `library` as the catalogue.
    The episode's other objects are not in it, nor the supports and bookends it drew for them
    (where those stand tells where the books lie)."""
    cell = clear_shelf(full) if full.extra.get("kind") == "shelf" else fixtures_only(full)
    cell = cell.with_objects([o for o in cell.objects if o.category != "support"] + [o for o in full.objects if o.held])
    return catalogue_workspace(cell, T_tcp, catalogue="library", library=library)


def with_perceived_occupancy(scene: Scene) -> Scene:
    """The scene with each slot's occupancy and free span measured from the objects perceived
    standing in it (the configured slots are empty), as check-workspace measures them."""
    if not scene.regions:
        return scene
    movable = [SimpleNamespace(box=o) for o in scene.objects if not o.held and o.category not in FIXTURE_CATEGORIES]
    regions = []
    for slot in scene.regions:
        slot = copy.deepcopy(slot)
        span = occupied_span(slot, movable) if slot.kind == "slot" else None
        if span is not None:
            lo, hi, _ = span           # across the slot, in its own frame: to the world's y
            half = slot.size[1] / 2
            free = max([(-half, lo), (hi, half)], key=lambda iv: iv[1] - iv[0])
            ys = sorted(slot.center[1] + slot.rotation[1, 1] * np.array(free))
            slot.occupancy = float((hi - lo) / slot.size[1])
            slot.extra["free_y"] = [float(ys[0]), float(ys[1])]
        regions.append(slot)
    return Scene(scene.viewer, scene.robot, list(scene.objects), regions, dict(scene.extra))


def _free_middle(slot, scene: Scene, pose: str):
    """The book-wide middle of a perceived slot's free part (episode.set_down_area), or its whole
    free part when the stack does not know the book in its gripper."""
    held = scene.held_object()
    return set_down_area(slot, held.size, pose) if held is not None else placement_area(slot)


def _slot_ids(scene: Scene, ids) -> list[str]:
    regions = {r.id for r in scene.regions}
    return [i for i in ids if i in regions]


def _with_held(scene: Scene, ws: Scene, T_tcp: np.ndarray | None) -> Scene:
    """The book in the gripper where the TCP says it is (the robot knows how it holds it), as
    planner_node marks it; segments next to it are that book seen in the fingers."""
    held = ws.held_object()
    if held is None or T_tcp is None or "T_object_tcp" not in held.extra:
        return scene
    T_obj = T_tcp @ invert(np.asarray(held.extra["T_object_tcp"], float))
    obj = dataclasses.replace(held, center=T_obj[:3, 3], rotation=T_obj[:3, :3], held=True)
    return scene.with_objects(with_held([o for o in scene.objects if o.id != held.id], obj))


def load_scenes(tasks_jsonl: str) -> dict:
    """task id -> its scene, for StackPolicy's cell configuration (only its workspace
    description is ever used: fixtures, slots, a catalogue without positions)."""
    return {t.id: Scene.load(p) for t, p in sim_tasks.load(tasks_jsonl)}


# --- the episode ------------------------------------------------------------------------------
def _stamp() -> str:
    return datetime.now().strftime("%Y-%m-%d at %H:%M:%S")


def _loggable(d):
    """A reply without its binary fields, JSON-safe (ESPIRE's client drops the same keys)."""
    if isinstance(d, dict):
        return {k: _loggable(v) for k, v in d.items() if k not in OBS_KEYS}
    if isinstance(d, (list, tuple)):
        return [_loggable(v) for v in d]
    if isinstance(d, bytes):
        return f"<{len(d)} bytes>"
    return d


class RunLog:
    """One episode's run.log in ESPIRE's client format, and the record analyze.py extracts."""

    def __init__(self, path: Path | None):
        self.lines: list[str] = []
        self.path = path

    def write(self, message: str, data: dict | None = None, level: str = "INFO") -> None:
        text = message + ("\n" + json.dumps(_loggable(data), indent=2, ensure_ascii=False) if data is not None else "")
        self.lines.append(f"{_stamp()} | {level} | {text}")

    def close(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("\n".join(self.lines) + "\n")


class StackDriver:
    """Plays one task over `client` with `policy`'s pixels; returns the episode's record."""

    def __init__(self, client: EspireProtocolClient, policy: StackPolicy, *, localizing_trials: int = 1,
                 moving_trials: int = 5, log_dir: Path | None = None):
        self.c, self.policy = client, policy
        self.loc_trials, self.move_trials = max(1, localizing_trials), max(1, moving_trials)
        self.log_dir = log_dir

    def _send(self, log: RunLog, kind: str, **content) -> dict:
        """One request through the client; logs Send / Recv as ESPIRE's client does; the content,
        or EspireReplyError on a code other than 200."""
        uid = str(uuid.uuid4())
        msg = {"uid": uid, "type": kind, "content": {**content, "sid": self.c.sid}}
        log.write("Send", msg)
        self.c.send_raw(proto.encode_request(uid, kind, msg["content"]))
        response = self.c.receive(uid)
        if response["code"] != proto.OK:
            log.write(f"Request {uid} failed: {response['info']}", level="ERROR")
            raise EspireReplyError(kind, response["code"], response["info"])
        log.write("Recv", {"uid": uid, "response": response})
        if kind == "GET_OBSERVATION":
            response["content"]["uid"] = uid
        return response["content"]

    def run(self, task: dict, index: int = 0) -> dict:
        t_start = time.perf_counter()
        path = self.log_dir / f"{index:03d}_{task['id']}" / "run.log" if self.log_dir else None
        log = RunLog(path)
        rec = {"id": task["id"], "action": task["action"], "instruction": task["instruction"],
               "family": task.get("family", ""), "family_key": task.get("family_key", ""),
               "set_task": [], "localize": [], "localize_timestamp": [], "move": [], "move_timestamp": [],
               "end_task": [], "choices": [], "error": ""}
        log.write("==== Client started ====")
        log.write("Task selected", {"id": task["id"], "action": task["action"], "instruction": task["instruction"]})
        try:
            self._episode(task, log, rec)
            log.write("==== Client stopped normally ====")
            rec["client_stopped"] = _stamp()
        except (EspireReplyError, TimeoutError) as e:
            rec["error"] = str(e)
            log.write(f"Client stopped due to {type(e).__name__}: {e}", level="ERROR")
        rec["wall_s"] = round(time.perf_counter() - t_start, 2)
        log.close()
        return rec

    def _observe(self, log: RunLog) -> tuple[dict, RGBDObservation]:
        content = self._send(log, "GET_OBSERVATION", view="world", highlight_goal=False)
        return content, observation_from_reply(content)

    def _observe_marked(self, log: RunLog) -> tuple[dict, RGBDObservation, tuple | None]:
        """ESPIRE's execution view: the world view plain (what the stack perceives) and then
        highlighted (the reply a MOVE refers to, as ESPIRE's driver moves on it); the marked box
        is where the two images differ (client.drawn_box)."""
        _, obs = self._observe(log)
        high = self._send(log, "GET_OBSERVATION", view="world", highlight_goal=True)
        return high, obs, drawn_box(obs.rgb, proto.decode_png(high["rgb"]))

    def _move_choice(self, log: RunLog, rec: dict, task: dict, T_tcp, set_down: str) -> tuple[dict, Choice]:
        """The next MOVE's reference observation and pixel: in the marked box (choose_marked),
        or, with no box in view, where the stack's own plan puts the target."""
        content, obs, marked = self._observe_marked(log)
        if marked is None:
            choice = self.policy.choose(obs, task, T_tcp)
        else:
            choice = self.policy.choose_marked(obs, task, T_tcp, marked, set_down)
        rec["choices"].append({**choice.to_dict(), "marked_box": list(marked) if marked else None})
        return content, choice

    def _episode(self, task: dict, log: RunLog, rec: dict) -> None:
        st = self._send(log, "SET_TASK", task_id=task["id"], rotation=NO_ROTATION)
        env = st["start_state"]["env_state"]
        rec["set_task"].append({k: env.get(k) for k in ("robot_js", "wrapped_robot_ee_pos", "wrapped_robot_ee_ori")})
        T_tcp = tcp_pose(env)
        self.policy.begin(task["id"], T_tcp)

        # localize: ESPIRE's trials re-ask a sampling model; the stack answers the same each time
        content, obs = self._observe(log)
        choice = self.policy.choose(obs, task, T_tcp)
        rec["choices"].append(choice.to_dict())
        met = False
        for trial in range(self.loc_trials if choice.pixel is not None else 0):
            log.write(f"Localizing trial {trial + 1} / {self.loc_trials}")
            rec["localize_timestamp"].append(_stamp())
            r = self._send(log, "LOCALIZE", reference_uid=content["uid"],
                           point={"row": choice.pixel[0], "col": choice.pixel[1]})
            rec["localize"].append({"success": bool(r["goal_met"]),
                                    "distance": r["post_state"]["localization"]["details"]["click_distance_px"]})
            met = bool(r["goal_met"])
            if met:
                break
        if not met:
            self._send(log, "SKIP_LOCALIZATION", goal=None)

        # move, as ESPIRE's drivers do: on the execution view's marked box, a fresh look after
        # every MOVE that did not meet the goal; the targets of earlier looks stay candidates
        # after the new one's (a book the arm cannot grasp is refused without moving)
        set_down = choice.set_down
        content, choice = self._move_choice(log, rec, task, T_tcp, set_down)
        tried: list[tuple[int, int]] = []
        earlier: list = []
        for trial in range(self.move_trials):
            choice = _untried(choice, tried, earlier)
            if choice.pixel is None:
                break
            log.write(f"Moving trial {trial + 1} / {self.move_trials}")
            rec["move_timestamp"].append(_stamp())
            tried.append(choice.pixel)
            turn = {"rotation_delta": list(proto.SET_DOWN_DELTAS[choice.set_down])} if task["action"] == "place" else {}
            r = self._send(log, "MOVE", reference_uid=content["uid"],
                           point={"row": choice.pixel[0], "col": choice.pixel[1]}, **turn)
            d = r["post_state"]["execution"]["details"]
            rec["move"].append({"success": bool(r["goal_met"]), "distance": d["distance"], "status": r.get("status"),
                                "wrapped_robot_ee_pos": d["wrapped_robot_ee_pos"],
                                "wrapped_robot_ee_ori": d["wrapped_robot_ee_ori"],
                                "robot_js": r["post_state"]["env_state"]["robot_js"]})
            if r["goal_met"]:
                break
            earlier = _carried(choice, earlier)
            content, choice = self._move_choice(log, rec, task, tcp_pose(r["post_state"]["env_state"]), set_down)

        self._send(log, "GET_OBSERVATION", view="world", highlight_goal=False)
        end = self._send(log, "END_TASK")
        rec["end_task"].append({"execution": end["post_state"]["execution"],
                                "localization": end["post_state"].get("localization")})
        self._send(log, "GET_OBSERVATION", view="world", highlight_goal=False)


def planned_set_down(program: str | None) -> str:
    """The set-down pose the plan's program names: flat when it says `pose=flat`, else upright
    (a carried book kept as held stands; the server offers no tilted set-down)."""
    return "flat" if program and re.search(r"\bpose=flat\b", program) else "upright"


def _untried(choice: Choice, tried: list, earlier: list = ()) -> Choice:
    """The choice moved to its first target whose pixel was not tried yet, then to the first of
    `earlier` plans' targets (not in this plan) not tried yet (pixel None: none left)."""
    def fresh(px) -> bool:
        return px is not None and all(abs(px[0] - a) + abs(px[1] - b) > TRIED_PX for a, b in tried)
    if fresh(choice.pixel):
        return choice
    named = {t for t, _ in choice.alternatives}
    later = [(t, px) for t, px in earlier if t not in named]
    nxt = next(((t, px) for t, px in list(choice.alternatives) + later if fresh(px)), None)
    return dataclasses.replace(choice, target=nxt[0] if nxt else choice.target, pixel=nxt[1] if nxt else None)


def _carried(choice: Choice, earlier: list) -> list:
    """The candidates a later MOVE may fall back on: this plan's targets, then earlier plans'
    others. The world camera stands still, and a MOVE that did not act left the books where they
    were, so an earlier pixel still shows its target."""
    named = {t for t, _ in choice.alternatives}
    return list(choice.alternatives) + [(t, px) for t, px in earlier if t not in named]


# --- statistics -------------------------------------------------------------------------------
def localized(rec: dict) -> bool:
    return any(u.get("success", False) for u in rec["localize"])


def executed(rec: dict) -> bool:
    return any(u.get("success", False) for u in rec["move"])


def finished(rec: dict) -> bool:
    return any(u.get("execution", {}).get("finish_goal", False) for u in rec["end_task"])


def summarize(records: list[dict]) -> str:
    """Localization and execution success (analyze.py's definitions: any LOCALIZE / MOVE with
    goal_met), and finish_goal, per family, per action and overall."""
    def row(name: str, rs: list[dict]) -> str:
        n = len(rs)
        f = [sum(fn(r) for r in rs) for fn in (localized, executed, finished)]
        pct = [f"{k}/{n} ({100 * k / n:3.0f}%)" if n else "-" for k in f]
        return f"  {name:<40} {n:>4}  {pct[0]:>14}  {pct[1]:>14}  {pct[2]:>14}"

    lines = [f"  {'family':<40} {'n':>4}  {'localization':>14}  {'execution':>14}  {'finish_goal':>14}"]
    for key in sorted({r["family_key"] for r in records}):
        lines.append(row(key, [r for r in records if r["family_key"] == key]))
    for action in sorted({r["action"] for r in records}):
        lines.append(row(f"[{action}]", [r for r in records if r["action"] == action]))
    lines.append(row("[all]", records))
    why: dict = {}
    for r in records:
        if executed(r):
            continue
        first = r["choices"][0] if r.get("choices") else {}
        if first.get("error"):
            key = "no pixel: " + first["error"].split(":")[0]
        elif not r["move"]:
            key = "no move"
        else:
            key = "moved, goal not met" + (" (localized)" if localized(r) else " (localization missed)")
        why[key] = why.get(key, 0) + 1
    if why:
        lines.append("  not executed: " + ", ".join(f"{k} {v}" for k, v in sorted(why.items(), key=lambda kv: -kv[1])))
    errs = [r for r in records if r.get("error")]
    if errs:
        lines.append(f"  {len(errs)} episode(s) ended on a protocol error: " + "; ".join(r["id"] for r in errs[:5]))
    return "\n".join(lines)


def load_results(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
