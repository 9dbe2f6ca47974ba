"""Offline evaluation (ROS-free): re-plan every instruction recorded in bags at the observation
the robot had, and compare with what was recorded (targets, target pose, planning outcome).

A goal is found from `/spatial_manip/instruction_log` (JSON the planner publishes per result);
its start is when the last goal before the log entry appeared as accepted/executing on
`<action>/_action/status` (else the log entry itself).

The observation is the one the live planner could have planned on: the last colour/depth pair
(equal stamps) received before the goal's first `reasoning` feedback. The live planner first
moves the arm out of view, then waits for a frame newer than that, then perceives and only then
reports `reasoning`; a frame from the goal's start shows the arm on its way home, over the
objects (that is how "the leftmost book" once came out TARGET_NOT_FOUND offline). Bags without
feedback fall back to the first pair received at or after the start (else the last before).

Perception needs what the live planner had: the workspace description (`/spatial_manip/workspace`,
latched: the object catalogue that names and sizes the objects, the fixtures and regions). It
is passed on as `plan_fn(observation, instruction, task_kind, workspace=Scene)` when the bag
has it, else `plan_fn(observation, instruction, task_kind)`.
"""
from __future__ import annotations

import bisect
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from spatial_manip.bags.io import BagError, BagReader
from spatial_manip import transforms as tf
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.observation import RGBDObservation
from spatial_manip.scene import Scene, SceneFormatError
from spatial_manip.task_kinds import TASK_KINDS

LOG_TOPIC = "/spatial_manip/instruction_log"
STATUS_TOPIC = "/spatial_manip/execute_instruction/_action/status"
COLOR, DEPTH = "/camera/color/image_raw", "/camera/aligned_depth_to_color/image_raw"
INFO, EXTR = "/camera/color/camera_info", "/camera/extrinsics"
WORKSPACE = "/spatial_manip/workspace"
FEEDBACK_TOPIC = "/spatial_manip/execute_instruction/_action/feedback"
# failures decided by planning; the others (motion, grasp, verify) happen after it succeeded
PLANNING_CODES = {"INVALID_GOAL", "TARGET_NOT_FOUND", "AMBIGUOUS", "NOT_UNDERSTOOD", "NO_OBSERVATION"}
ACTIVE = {1, 2}  # action_msgs/GoalStatus ACCEPTED, EXECUTING


@dataclass
class OfflinePlan:
    ok: bool
    targets: list = field(default_factory=list)
    target_xyz: list | None = None
    error_code: str = ""
    message: str = ""


@dataclass
class RecordedGoal:
    bag: str
    index: int
    log_ns: int
    start_ns: int
    instruction: str
    task_kind: str
    success: bool
    error_code: str
    targets: list
    target_xyz: list | None
    reason_ns: int | None = None   # first `reasoning` feedback: the live planner had its frame by then


@dataclass
class Comparison:
    goal: RecordedGoal
    offline: OfflinePlan
    observation_ns: int | None
    targets_match: bool
    pose_error_m: float | None
    outcome_match: bool

    @property
    def verdict(self) -> str:
        if self.observation_ns is None:
            return "no-observation"
        ok = self.targets_match and self.outcome_match and (self.pose_error_m is None or self.pose_error_m <= 0.03)
        return "same" if ok else "DIFFERENT"

    def to_dict(self) -> dict:
        return {"goal": asdict(self.goal), "offline": asdict(self.offline), "observation_ns": self.observation_ns,
                "targets_match": self.targets_match, "pose_error_m": self.pose_error_m,
                "outcome_match": self.outcome_match, "verdict": self.verdict}


def _image_array(msg) -> np.ndarray:
    dtype, ch = {"rgb8": (np.uint8, 3), "bgr8": (np.uint8, 3), "16UC1": (np.uint16, 1), "mono16": (np.uint16, 1),
                 "32FC1": (np.float32, 1)}[msg.encoding]
    item = np.dtype(dtype).itemsize
    rows = np.asarray(msg.data, np.uint8).reshape(msg.height, msg.step)[:, : msg.width * ch * item]
    arr = rows.copy().view(np.dtype(dtype).newbyteorder(">" if msg.is_bigendian else "<")).astype(dtype)
    arr = arr.reshape(msg.height, msg.width, ch)
    arr = arr[..., ::-1] if msg.encoding == "bgr8" else arr
    return np.ascontiguousarray(arr[..., 0] if ch == 1 else arr)


def _stamp_ns(header) -> int:
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


class BagIndex:
    """What evaluation needs from one bag, indexed by receive time."""

    def __init__(self, reader: BagReader):
        self.reader = reader
        reader.require([LOG_TOPIC])
        self.goals: list[RecordedGoal] = []
        self.pairs: list[tuple[int, object, object]] = []      # (receive ns, colour msg, depth msg)
        self.infos: list[tuple[int, object]] = []
        self.extrinsics: list[tuple[int, object]] = []
        self.workspaces: list[tuple[int, str]] = []             # (receive ns, JSON scene)
        self.started: list[tuple[int, bytes]] = []              # (receive ns, goal id) as each goal showed up
        self.reasoning: dict[bytes, int] = {}                   # goal id -> first `reasoning` feedback ns
        self._scan()

    def _scan(self) -> None:
        r = self.reader
        topics = [t for t in (LOG_TOPIC, STATUS_TOPIC, COLOR, DEPTH, INFO, EXTR, WORKSPACE, FEEDBACK_TOPIC)
                  if t in r.topics]
        colors: dict[int, object] = {}
        depths: dict[int, tuple[int, object]] = {}
        seen: set = set()
        for m in r.messages(topics):
            if m.topic in (COLOR, DEPTH):
                msg = r.deserialize(m)
                (colors if m.topic == COLOR else depths)[_stamp_ns(msg.header)] = (m.t_ns, msg)
                s = _stamp_ns(msg.header)
                if s in colors and s in depths:
                    self.pairs.append((max(colors[s][0], depths[s][0]), colors.pop(s)[1], depths.pop(s)[1]))
            elif m.topic == INFO:
                self.infos.append((m.t_ns, r.deserialize(m)))
            elif m.topic == EXTR:
                self.extrinsics.append((m.t_ns, r.deserialize(m)))
            elif m.topic == WORKSPACE:
                self.workspaces.append((m.t_ns, r.deserialize(m).data))
            elif m.topic == FEEDBACK_TOPIC:
                fb = r.deserialize(m)
                if fb.feedback.stage == "reasoning":
                    self.reasoning.setdefault(bytes(fb.goal_id.uuid), m.t_ns)
            elif m.topic == STATUS_TOPIC:
                for st in r.deserialize(m).status_list:
                    key = bytes(st.goal_info.goal_id.uuid)
                    if st.status in ACTIVE and key not in seen:
                        seen.add(key)
                        self.started.append((m.t_ns, key))
            else:
                self._add_goal(m)

    def _add_goal(self, m) -> None:
        text = self.reader.deserialize(m).data
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise BagError(f"bag {self.reader.path} topic {LOG_TOPIC}: entry is not JSON ({e}): {text[:80]!r}") from e
        kind = d.get("task_kind", 0)
        # goals run one at a time: this result belongs to the goal that started last before it
        start, goal_id = max(((t, k) for t, k in self.started if t <= m.t_ns), default=(None, None))
        reason = self.reasoning.get(goal_id) if goal_id is not None else None
        pose = d.get("target_pose")
        self.goals.append(RecordedGoal(
            bag=str(self.reader.path), index=len(self.goals), log_ns=m.t_ns,
            start_ns=start if start is not None else m.t_ns, instruction=d.get("instruction", ""),
            task_kind=TASK_KINDS[kind] if isinstance(kind, int) and 0 <= kind < len(TASK_KINDS) else str(kind),
            success=bool(d.get("success")), error_code=d.get("error_code", ""),
            targets=list(d.get("target_ids", [])),
            target_xyz=pose if d.get("target_ids") and pose and any(pose) else None,
            reason_ns=reason if reason is not None and reason <= m.t_ns else None))

    def observation_for(self, goal: RecordedGoal) -> tuple[RGBDObservation | None, int | None]:
        """The frame the live planner planned on (see the module docstring)."""
        if goal.reason_ns is not None:
            times = [p[0] for p in self.pairs]
            i = bisect.bisect_right(times, goal.reason_ns) - 1
            if i >= 0 and times[i] >= goal.start_ns:
                return self._observation(i)
        return self.observation_at(goal.start_ns)

    def workspace_at(self, t_ns: int):
        """The workspace Scene in force at t_ns (the latest received before; else the first), or None."""
        text = _latest(self.workspaces, t_ns) or (self.workspaces[0][1] if self.workspaces else None)
        if text is None:
            return None
        try:
            return Scene.from_dict(json.loads(text))
        except (json.JSONDecodeError, SceneFormatError, KeyError, TypeError, ValueError) as e:
            raise BagError(f"bag {self.reader.path} topic {WORKSPACE}: not a workspace scene ({e}); "
                           "re-record with a planner-compatible sim/workspace publisher") from e

    def observation_at(self, t_ns: int) -> tuple[RGBDObservation | None, int | None]:
        """The first pair received at or after t_ns, else the last before; None without pairs."""
        if not self.pairs:
            return None, None
        times = [p[0] for p in self.pairs]
        return self._observation(min(bisect.bisect_left(times, t_ns), len(self.pairs) - 1))

    def _observation(self, i: int) -> tuple[RGBDObservation, int]:
        t, cmsg, dmsg = self.pairs[i]
        info = _latest(self.infos, t) or (self.infos[0][1] if self.infos else None)
        if info is None:
            raise BagError(f"bag {self.reader.path} has images but no {INFO}: cannot rebuild the observation")
        extr = _latest(self.extrinsics, t) or (self.extrinsics[0][1] if self.extrinsics else None)
        if extr is None:
            raise BagError(f"bag {self.reader.path} has no {EXTR}: cannot place the camera in the base frame")
        p, q = extr.pose.position, extr.pose.orientation
        T = tf.pose_to_matrix([p.x, p.y, p.z], [q.x, q.y, q.z, q.w])
        rgb, depth = _image_array(cmsg), _image_array(dmsg)
        depth_m = depth.astype(np.float32) * np.float32(0.001) if depth.dtype == np.uint16 else depth
        intr = CameraIntrinsics.from_camera_info(info)
        return RGBDObservation(rgb=rgb, depth_m=depth_m, intrinsics=intr, T_base_cam=T,
                               stamp_s=_stamp_ns(cmsg.header) / 1e9), _stamp_ns(cmsg.header)


def _latest(items: list, t_ns: int):
    best = None
    for t, m in items:
        if t <= t_ns:
            best = m
    return best


def compare(goal: RecordedGoal, offline: OfflinePlan, obs_ns: int | None) -> Comparison:
    pose_err = None
    if goal.target_xyz is not None and offline.target_xyz is not None:
        pose_err = float(np.linalg.norm(np.subtract(goal.target_xyz, offline.target_xyz)))
    recorded_plan_ok = goal.success or goal.error_code not in PLANNING_CODES
    return Comparison(goal, offline, obs_ns, sorted(goal.targets) == sorted(offline.targets), pose_err,
                      recorded_plan_ok == offline.ok and (offline.ok or offline.error_code == goal.error_code))


PlanFn = Callable[..., OfflinePlan]  # (observation, instruction, task_kind[, workspace=Scene])


def evaluate_bags(paths: list[str], plan_fn: PlanFn, progress=None) -> list[Comparison]:
    out = []
    for path in paths:
        with BagReader(path) as reader:
            index = BagIndex(reader)
            for goal in (progress(index.goals, desc=Path(path).name) if progress else index.goals):
                obs, obs_ns = index.observation_for(goal)
                if obs is None:
                    offline = OfflinePlan(False, error_code="NO_OBSERVATION", message="no colour/depth pair in the bag")
                else:
                    ws = index.workspace_at(goal.reason_ns if goal.reason_ns is not None else goal.start_ns)
                    extra = {"workspace": ws} if ws is not None else {}
                    offline = plan_fn(obs, goal.instruction, goal.task_kind, **extra)
                out.append(compare(goal, offline, obs_ns))
    return out


def format_table(rows: list[Comparison]) -> str:
    lines = [f"{'bag':18} {'#':>2} {'instruction':40} {'recorded':24} {'offline':24} {'pose err':>8} verdict"]
    for c in rows:
        rec = ",".join(c.goal.targets) or (c.goal.error_code or "-")
        off = ",".join(c.offline.targets) or (c.offline.error_code or "-")
        err = f"{c.pose_error_m * 100:6.1f}cm" if c.pose_error_m is not None else "       -"
        lines.append(f"{Path(c.goal.bag).name[:18]:18} {c.goal.index:2d} {c.goal.instruction[:40]:40} "
                     f"{rec[:24]:24} {off[:24]:24} {err:>8} {c.verdict}")
    same = sum(c.verdict == "same" for c in rows)
    lines.append(f"{same}/{len(rows)} instructions planned the same as recorded")
    return "\n".join(lines)
