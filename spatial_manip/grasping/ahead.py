"""Grasps proposed ahead (issue 42): while the planner reasons on its newest look, or waits for a
person to speak, grasp_node proposes (and motion-checks) the grasps of every graspable object of
that look, one at a time, so that a pick's grasp request is answered at once. A result serves only
the look it was made on (the scene message it answered from, by identity) and the arm's joints it
was checked from: a new look or any arm motion throws every result away, and a result serves one
request (a retry proposes anew, on a newer frame, as it would without this). Proposing ahead starts
as soon as a look's scene comes (the look is done: its objects are what a goal will ask for), once
the arm and the requests have been quiet for `quiet_s`; a job under way when
a request, a new look or an arm motion shows a goal at work is told to yield (`yield_job`: grasp_node
lowers its thread's priority), and runs at the node's own until then; a request for the very object
the job proposes for waits for it and has it run at the node's priority again (`resume_job`), and a
job a new look, an arm motion or a request for another object made useless is stale (`stale`:
grasp_node's proposing stops at its next step). The jobs go in the order a pick is likely to ask for them (`likely_order`): the objects
the planner can name that are no landmark first; of those, the categories the last requests asked for;
then the ones a superlative singles out among the few of their category (leftmost, closest ...); nearest
the arm's base first.

ROS-free: grasp_node hands in the scenes and joints it hears and runs the work on a thread of its
own; what a result is (a grasping.service.GraspResult) does not matter here."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable

import numpy as np

from spatial_manip.config import build, read_yaml, section
from spatial_manip.errors import ConfigError
from spatial_manip.perception.look_ahead import ARM_STILL_TOL_RAD
from spatial_manip.scene import FIXTURE_CATEGORIES


@dataclass(frozen=True, kw_only=True)
class GraspsAheadConfig:
    enabled: bool = True
    quiet_s: float = 0.75       # the arm and the requests quiet this long before proposing ahead (a new scene: at once)
    max_grasps: int = 1         # grasps asked for ahead, until a request says how many (a pick: 1, a pick and place: 15)

    def __post_init__(self):
        if not (isinstance(self.quiet_s, (int, float)) and 0.0 <= self.quiet_s <= 60.0):
            raise ConfigError(f"grasp.ahead.quiet_s must be within 0..60 s, got {self.quiet_s!r}")
        if not (isinstance(self.max_grasps, int) and 1 <= self.max_grasps <= 1000):
            raise ConfigError(f"grasp.ahead.max_grasps must be an integer within 1..1000, got {self.max_grasps!r}")


def load_grasps_ahead_config(path: str | Path) -> GraspsAheadConfig:
    """The `grasp.ahead` section of grasp.yaml (absent: the defaults); a ConfigError naming the
    file, key and value."""
    data = read_yaml(path)
    where = f"{path}: grasp"
    return build(GraspsAheadConfig, section(data.get("grasp", data), "ahead", where, required=False), f"{where}.ahead")


def graspable_ids(objects) -> list[str]:
    """The ids of the objects (each with `id`, `category`, `held`) a pick could ask grasps for:
    none while one is in the gripper (the next goal sets it down: proposing then only took the CPU
    from a place goal's planning and motion), else every one that is no fixture."""
    if any(o.held for o in objects):
        return []
    return [o.id for o in objects if o.category not in FIXTURE_CATEGORIES]


# categories a pick seldom asks for: landmarks named to say where (ESPIRE's references), and the
# segmenter's unnamed "object" (the planner cannot name it, so no instruction can ask for it by name)
LANDMARK_CATEGORIES = ("reference",)
# an object is first or last along an axis only this far clear of the next (a near tie names neither)
SUPERLATIVE_GAP_M = 0.02
# a superlative singles objects out only among this many of a kind or fewer. Among more, nearly every one
# is first or last along one of the five axes, so the count put the corners first and the middle ones,
# which a rank or a relation names ('the third leftmost book', 'a book between ...'), last. On session
# 30's traces (latency 77, pick 80-84, objects 86-88) the target of a kind of 4 or more stood 1.50 jobs
# deep by reach alone and 1.70 with the superlatives (pick); of a kind of 2-3, 1.06 -> 0.88 (pick) and
# 1.23 -> 0.77 (objects). Latency-bench seed 77's 'third leftmost book' (the nearest the base, 5th by
# the count) waited 1.44 s (quiet) and 4.02 s (load 11) for grasps proposed anew
SUPERLATIVE_KIND_MAX = 3
UNNAMED_LABELS = ("", "object")


def likely_order(objects, asked_categories=(), viewer=None) -> list[str]:
    """The graspable objects' ids (`graspable_ids`) in the order a pick is likely to ask for them:
    named objects that are no landmark, then landmarks, then unnamed ones; within each, those of
    `asked_categories` first (the categories the last requests named: a person who asked for a
    book asks for a book next, issue 42's latency bench asked for 6 books in a row), then those a
    superlative singles out among the few of their category, most such ways first (`extremes`: 'the
    leftmost mug', 'the one closest to you' name these; a middle one needs a rank or an attribute),
    then nearest the arm's base (the base frame's origin) first, as the far ones are seldom within reach. Objects need `id`,
    `category`, `held`, `label` and a centre (`center`, or a message's `pose.position`); one without
    a finite centre goes last in its group. `viewer`: the camera's position (x, y, z), whose left and
    right and near and far a person names too; None: the base frame's alone."""
    ids = set(graspable_ids(objects))
    asked = set(asked_categories)
    kept = [(k, o) for k, o in enumerate(objects) if o.id in ids]
    centres = {}
    for _, o in kept:
        try:
            c = np.asarray(_centre(o), float)
            centres[o.id] = c if c.shape == (3,) and np.all(np.isfinite(c)) else None
        except (TypeError, ValueError, IndexError):
            centres[o.id] = None

    def group_of(o) -> int:
        named = str(getattr(o, "label", "") or "").strip().lower() not in UNNAMED_LABELS
        return 0 if named and o.category not in LANDMARK_CATEGORIES else 1 if named else 2

    singled = extremes({o.id: (o.category, centres[o.id]) for _, o in kept if group_of(o) < 2}, viewer)

    def rank(k_o):
        k, o = k_o
        c = centres[o.id]
        reach = float(np.hypot(c[0], c[1])) if c is not None else np.inf
        return group_of(o), o.category not in asked, -singled.get(o.id, 0), reach, k

    return list(dict.fromkeys(o.id for _, o in sorted(kept, key=rank)))


def extremes(placed: dict, viewer=None) -> dict[str, int]:
    """Of `placed` (id -> (category, centre (3,) or None)): for each id, on how many axes a
    superlative names it is first or last of its category: the base frame's x and y and distance
    from the base ('farthest from the robot'), and with `viewer` (x, y, z) the viewer's left-right
    and distance ('the leftmost book as you see it', 'the one closest to you'), when it stands
    SUPERLATIVE_GAP_M clear of the next along it. A corner object counts on several, a middle one on
    none, one alone of its kind on none (its noun names it; on sessions 28-29's pick and objects
    traces the target was more often one among others of its kind), one of more than
    SUPERLATIVE_KIND_MAX of its kind on none (most of them are an end of some axis); one without a
    centre is absent."""
    by_category: dict = {}
    for i, (category, c) in placed.items():
        if c is not None:
            by_category.setdefault(category, []).append((i, c))
    v = None
    if viewer is not None:
        v = np.asarray(viewer, float).reshape(-1)[:3]
        v = v if v.shape == (3,) and np.all(np.isfinite(v)) else None
    out: dict[str, int] = {}
    for members in by_category.values():
        if len(members) > SUPERLATIVE_KIND_MAX:
            continue
        ids = [i for i, _ in members]
        C = np.array([c for _, c in members])
        axes = [C[:, 0], C[:, 1], np.hypot(C[:, 0], C[:, 1])]
        if v is not None:
            ahead = C[:, :2].mean(axis=0) - v[:2]
            if np.linalg.norm(ahead) > 1e-6:
                ahead = ahead / np.linalg.norm(ahead)
                axes.append((C[:, :2] - v[:2]) @ np.array([-ahead[1], ahead[0]]))    # left-right as seen
            axes.append(np.linalg.norm(C - v, axis=1))
        for a in axes:
            if len(a) == 1:
                continue
            order = np.argsort(a, kind="stable")
            ends = {int(order[0])} if a[order[1]] - a[order[0]] > SUPERLATIVE_GAP_M else set()
            if a[order[-1]] - a[order[-2]] > SUPERLATIVE_GAP_M:
                ends.add(int(order[-1]))
            for k in ends:
                out[ids[k]] = out.get(ids[k], 0) + 1
    return out


def unchanged_ids(last, scene) -> list[str]:
    """The ids of `scene`'s objects that `last` (a scene message, or None) held exactly so (every
    field equal), when both were seen from the same camera pose and most of `last`'s objects are
    unchanged: the same look published again (the planner's names from the words); else [] (a new
    look: its boxes never match a former one's to the last bit, as the depth's noise differs)."""
    if last is None or scene is None or last.viewer != scene.viewer or not last.objects:
        return []
    before = {o.id: o for o in last.objects}
    kept = [o.id for o in scene.objects if before.get(o.id) == o]
    return kept if 2 * len(kept) > len(last.objects) else []


def _centre(o):
    """An object's centre as (x, y, z): a core SceneObject's `center`, a DetectedObject message's
    `pose.position`."""
    if hasattr(o, "center"):
        return o.center
    c = o.pose.position
    return c.x, c.y, c.z


@dataclass(frozen=True)
class Job:
    """One object to propose grasps for ahead, and what held when it was handed out."""

    scene: Any                  # the scene message (compared by identity)
    object_id: str
    max_grasps: int
    arm_moved_at_s: float | None


class GraspsAhead:
    def __init__(self, config: GraspsAheadConfig = GraspsAheadConfig(), clock=time.monotonic,
                 yield_job: Callable[[], None] = lambda: None, resume_job: Callable[[], None] = lambda: None):
        """`yield_job()`: called (under the lock, so briefly) when a goal shows itself while a job
        runs; the job should give the CPU to it from then on. `resume_job()`: called when a request
        asks for the object the job proposes for; the job is the goal's own then and should run at
        full priority again."""
        self.config, self._clock, self._yield_job, self._resume_job = config, clock, yield_job, resume_job
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)     # a job ended
        self._scene: Hashable | None = None
        self._look: list = []           # the newest look's scene messages: its first, then each republished (`same_look`)
        self._ids: list[str] = []       # the graspable objects of the newest look
        self._todo: list[str] = []
        self._running: Job | None = None
        self._abandoned: Job | None = None      # a job a request stopped waiting for (stale: it stops)
        self._done: dict[tuple[str, int], tuple[Any, float]] = {}    # (id, max_grasps) -> (result, when made)
        self._asked_at_s = -np.inf
        self._arm_ref: np.ndarray | None = None
        self._arm_moved_at_s: float | None = None
        self.max_grasps = config.max_grasps

    def new_scene(self, scene, object_ids) -> None:
        """A new look: what was proposed for the last one goes; `object_ids` (the graspable ones) are to do."""
        with self._lock:
            self._scene, self._look = scene, [scene]
            self._ids = list(dict.fromkeys(object_ids)) if self.config.enabled else []    # in the order given
            self._todo, self._done = list(self._ids), {}
            self._goal_at_work()

    def same_look(self, scene, kept_ids, object_ids) -> None:
        """The newest look published again (`scene`), with only `kept_ids`' boxes as they were (the
        planner names a reference from the instruction's words and republishes: agent.reason): their
        results and the job under way carry over, the others' go (a name or a box that changed), and
        `object_ids` (the graspable ones, in order) not proposed for yet are to do, as after a new
        look. A new look threw every result away, so a goal whose words named a reference found none
        ready. The arm's own planning checks every path again in the goal's world."""
        kept = set(kept_ids)
        with self._lock:
            self._scene = scene
            self._look.append(scene)
            self._done = {k: v for k, v in self._done.items() if k[0] in kept}
            running = self._running
            if running is not None and running.object_id not in kept:
                self._abandoned = running
            made = {i for i, _ in self._done} | ({running.object_id} if running is not None and
                                                 running.object_id in kept else set())
            self._ids = list(dict.fromkeys(object_ids)) if self.config.enabled else []
            self._todo = [i for i in self._ids if i not in made]

    def _of_look(self, scene) -> bool:
        """Whether `scene` is the newest look (or that look published again)."""
        return scene is not None and any(scene is s for s in self._look)

    def note_joints(self, q) -> None:
        """The arm's joints as heard: a motion beyond ARM_STILL_TOL_RAD since the reference throws
        every result away (each was checked from where the arm stood) and nothing more is proposed
        for this look (the planner looks again after a motion)."""
        q = np.asarray(q, float)
        if np.shape(q) != (6,) or not np.all(np.isfinite(q)):
            return
        with self._lock:
            if self._arm_ref is None:
                self._arm_ref, self._arm_moved_at_s = q, self._clock()
            elif float(np.max(np.abs(q - self._arm_ref))) > ARM_STILL_TOL_RAD:
                self._arm_ref, self._arm_moved_at_s = q, self._clock()
                self._todo, self._done = [], {}
                self._goal_at_work()

    def asked(self, max_grasps: int, object_id: str = "") -> None:
        """A request came: a goal runs on this look, and its motion follows, so nothing more is
        proposed ahead for it (at once, with no idle time, proposing ahead for the other objects took
        the CPU from the goal's planning and motion); later looks ask for as many grasps. A job under
        way for `object_id` (with as many grasps or more) is the request's answer: it runs at full
        priority (the request waits for it: `take`); any other yields and is stale (it stops at its
        next step): the goal's motion follows and throws its result away, and until then it took
        the CPU from the request's own proposing (1.8-2.4 s, the largest stage of a goal whose
        grasps were not ready, latency-bench seed 74)."""
        with self._lock:
            self._asked_at_s = self._clock()
            self._todo = []
            if max_grasps > 0:
                self.max_grasps = int(max_grasps)
            job = self._running
            if job is not None and self._of_look(job.scene) and object_id and job.object_id == object_id and \
                    job.max_grasps >= int(max_grasps):
                self._resume_job()
            else:
                if job is not None:
                    self._abandoned = job
                self._goal_at_work()

    def stale(self, job: Job) -> bool:
        """Whether `job`'s result can no longer be kept: a newer look came, or the arm moved, since
        it was handed out, or a request for another object came, or one stopped waiting for it
        (its proposing may stop)."""
        with self._lock:
            return not self._of_look(job.scene) or job.arm_moved_at_s != self._arm_moved_at_s or job is self._abandoned

    def _goal_at_work(self) -> None:
        """A request, a new look or an arm motion: the job under way, if any, yields the CPU to
        the goal (it ran at the node's priority while nothing else asked for it)."""
        if self._running is not None:
            self._yield_job()

    def next_job(self) -> Job | None:
        """The next object to propose for, once the arm and the requests have been quiet for
        `quiet_s` (the joints known); None when there is none or it is too soon. A new scene is no
        reason to wait: waiting `quiet_s` after it too left the first job 0.8 s later after each look
        (latency-bench seed 72), when a goal 8 s after a reset found 1-2 of its objects proposed. The
        job runs until `put`: a request for the same object waits for it (`take`)."""
        with self._lock:
            if not self._todo or self._arm_moved_at_s is None or self._running is not None:
                return None
            quiet_since = max(self._asked_at_s, self._arm_moved_at_s)
            if self._clock() - quiet_since < self.config.quiet_s:
                return None
            self._running = Job(self._scene, self._todo[0], self.max_grasps, self._arm_moved_at_s)
            return self._running

    def put(self, job: Job, result, keep: bool = True) -> None:
        """A job's result, kept when the scene is still the newest, the arm has not moved since the
        job was handed out and `keep` (a result that depends on nothing but the look and the joints);
        the job is done either way."""
        with self._lock:
            if self._running is job:
                self._running = None
                self._changed.notify_all()
            if not self._of_look(job.scene):
                return
            if job.object_id in self._todo:
                self._todo.remove(job.object_id)
            if keep and job.arm_moved_at_s == self._arm_moved_at_s:
                self._done[(job.object_id, job.max_grasps)] = (result, self._clock())

    def take(self, scene, object_id: str, max_grasps: int, wait_s: float = 0.0) -> tuple[Any, float] | None:
        """(the result proposed ahead for `object_id` on `scene` for `max_grasps` grasps or more,
        seconds since it was made), or None; a job for it under way is waited for up to `wait_s`.
        A job still under way after `wait_s` is abandoned (`stale`), so that it does not compete with
        the request's own proposing. The caller keeps the best `max_grasps` of a result made for more (the motion check keeps
        the best that pass in rank order, so they are the ones a request for fewer gets). A result
        serves one request: a retry on the same look proposes anew (on a newer frame), as it would
        without proposing ahead."""
        n = int(max_grasps)
        deadline = self._clock() + wait_s
        with self._lock:
            def ours(job):
                return job is not None and job.object_id == object_id and job.max_grasps >= n and \
                    (job.scene is scene or self._of_look(job.scene) and self._of_look(scene))

            while ours(self._running) and self._clock() < deadline:
                self._changed.wait(max(0.0, min(0.1, deadline - self._clock())))
            if ours(self._running):       # waited long enough: the request proposes alone, the job stops
                self._abandoned = self._running
            if not self._of_look(scene) or self._scene is None:
                return None
            made = sorted(m for (i, m) in self._done if i == object_id and m >= n)
            hit = self._done.pop((object_id, made[0]), None) if made else None
            return None if hit is None else (hit[0], self._clock() - hit[1])

    def pending(self) -> int:
        with self._lock:
            return len(self._todo)
