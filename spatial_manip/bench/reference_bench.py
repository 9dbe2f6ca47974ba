"""Reference benchmark: does perception find the objects an instruction names?

For each generated task (sim.tasks, the same generator as `spatial-manip tasks`), the MuJoCo
world is reset to the task's scene as sim_node does it, the first observation is rendered (depth
in whole millimetres, as published), and the agent's own perceive and reason stages run on it
(`Agent.perceive` with the workspace's `SegmentationHints`, then the program planner), without
ROS. Per task it reports whether each object the task's program refers to (its references, and
the answer books of a pick) is detected with the right label and a centre within `--gate-cm`
(or 15 % of its largest side: a tall plant seen in part), and whether the planner's choice is
one of the task's answers: the closest offline proxy of a full-stack run's success.

Perception's own figures, against the simulator's ground truth (which only this bench reads):
- wrong names: named detections (a catalogue label) whose centre lies in no true object of that
  label, over all named detections (goal <= 1 %);
- needed objects left unnamed: of the visible objects the instruction needs, those with a
  detection at their place that carries no catalogue name (refused, "object"), beside those
  misnamed there and those not found at all;
- the associator's time per frame: the classical segmenter's naming laps (labels and the
  catalogue fit, `last_timing_s`), beside the whole perceive stage's.

    python -m spatial_manip.bench.reference_bench --suite place --seeds 4 5 --count 16 [--sensing realistic]

`--suite objects` scores the everyday-object suite's first looks the same way (its place tasks by
the checks the set-down pose alone decides: set_down_holds).

The catalogue is the enrolled library (`--catalogue library`, config/library/sim_assets.json: every
asset the generator places, most absent) unless `--catalogue episode` (this episode's objects with
true sizes: the old diagnostic). Over every named detection it also counts wrong names (the label
differs from the true object at its centre) and the time perception took per frame.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from spatial_manip.agent import Agent, AgentConfig
from spatial_manip.camera.types import metres_to_mm
from spatial_manip.errors import SpatialManipError
from spatial_manip.grasping.place_fit import slot_at
from spatial_manip.paths import config_dir
from spatial_manip.perception import SegmentationHints, load_segmenter_config
from spatial_manip.pipeline import GoalRequest
from spatial_manip.scene import Scene
from spatial_manip.sim import sensing
from spatial_manip.sim import tasks as T
from spatial_manip.sim.checker import check_constraints
from spatial_manip.sim.library import catalogue_workspace, library_for
from spatial_manip.sim.world import STOW_Q, SimConfig, SimWorld
from spatial_manip.trace import Trace

GATE_M = 0.05
SIZE_GATE = 0.15     # ... or this share of the object's largest side, if larger
MIN_VISIBLE = 0.05   # a referenced object less visible than this is "unseen": no segmenter can find it


@dataclass
class TaskResult:
    task_id: str
    instruction: str
    # gt id -> "ok" | "missing" | "unseen" (not in the image) | "label:<label given>" | "far:<cm>"
    refs: dict = field(default_factory=dict)
    planned: bool = False
    correct: bool = False
    error: str = ""
    named: int = 0            # movable detections given a catalogue name
    wrong_names: list = field(default_factory=list)   # "given->true" for each named one that is another object
    wrong_details: list = field(default_factory=list)  # per wrong name: where, how large, what is there (_wrong_detail)
    books: int = 0            # movable detections called "book" (named after a library book or book-shaped)
    stray_books: list = field(default_factory=list)   # "book->true" for each where no book stands
    perceive_s: float = 0.0
    associate_s: float = 0.0  # the naming laps of the segmenter (labels, catalogue fit); 0 if it reports none

    @property
    def refs_ok(self) -> bool:
        return all(v == "ok" for v in self.refs.values())


class _Ports:
    """The agent's ports over a SimWorld: what perceive and reason use (as test_agent_e2e's)."""

    def __init__(self, world, workspace, hints, obs):
        self.world, self._workspace, self.obs, self.scene = world, (workspace, hints), obs, None

    def workspace(self):
        return self._workspace

    def publish_scene(self, scene):
        self.scene = scene

    def tcp_pose(self):
        return self.world.tcp_pose()

    def joint_positions(self):
        return self.world.joint_positions()[:6]    # the arm's, without the gripper's


@contextlib.contextmanager
def _quiet_stderr():
    """MuJoCo prints an attach warning per model build on the C stderr: hidden."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def referenced_ids(task, scene) -> list[str]:
    """Scene objects the task's program names, and the answer objects of a pick."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", task.program))
    ids = [o.id for o in scene.objects if o.id in words and o.category not in ("shelf", "table", "support")]
    if task.action == "pick":
        ids += [a for a in task.answer if a not in ids]
    return ids


@dataclass
class FirstLook:
    """A task's first observation as sim_node publishes it (depth in whole millimetres), the arm
    where it stands, what the planner is told (`workspace`: the catalogue), and what only the
    scoring reads (`truth`, the objects the task needs and how much of each is in view)."""

    task: object
    obs: object
    workspace: Scene
    truth: Scene
    tcp_pose: np.ndarray
    joints: np.ndarray
    refs: list
    visible: dict


def first_look(task, scene, *, catalogue: str = "library", library=None, profile=None, skip: int = 0) -> FirstLook:
    """`profile`: the SensingProfile the world renders with (None: ideal), drawn from the task's
    scene seed as sim_node's reset draws it. `skip`: frames rendered and dropped first (each draws
    the next depth noise): a live graph's first look takes whichever frame the camera stream has
    reached, so one scene and seed give different looks from run to run."""
    with _quiet_stderr():
        world = SimWorld(scene, config=SimConfig(**({"sensing": profile} if profile is not None else {})),
                         seed=int(task.scene_seed))
    try:
        if scene.held_object() is None:
            world.pose_arm(STOW_Q)          # as sim_node's reset
        ws = catalogue_workspace(world.export_scene(), world.tcp_pose(), catalogue=catalogue, library=library)
        for _ in range(skip):
            world.render()
        obs = world.render()
        obs = replace(obs, depth_m=metres_to_mm(obs.depth_m).astype(np.float32) * 0.001, segmentation=None)
        truth = world.export_scene()
        refs = referenced_ids(task, truth)
        return FirstLook(task, obs, ws, truth, np.asarray(world.tcp_pose(), float),
                         np.asarray(world.joint_positions()[:6], float), refs, world.visible_fractions(refs))
    finally:
        world.close()


class LookPorts:
    """The agent's ports over a FirstLook: what perceive and reason use."""

    def __init__(self, look: FirstLook):
        self.look, self.scene = look, None
        self._workspace = (look.workspace, SegmentationHints.from_scene(look.workspace))

    def workspace(self):
        return self._workspace

    def publish_scene(self, scene):
        self.scene = scene

    def tcp_pose(self):
        return self.look.tcp_pose

    def joint_positions(self):
        return self.look.joints


def perceive_look(look: FirstLook, segmenter_config: dict, res: TaskResult, *, gate_m: float = GATE_M):
    """The agent's perceive stage on the look, scored into `res`; returns the agent and its look."""
    agent = Agent(LookPorts(look), AgentConfig(segmenter="classical"), segmenter_config=segmenter_config)
    t0 = time.perf_counter()
    seen = agent.perceive(look.obs, look.task.instruction)
    res.perceive_s = time.perf_counter() - t0
    res.associate_s = _association_s(agent)
    score_perception(res, seen.scene, look, gate_m)
    return agent, seen


def score_perception(res: TaskResult, seen: Scene, look: FirstLook, gate_m: float = GATE_M) -> None:
    """Wrong names over the scene's named detections, and how each object the task needs came out."""
    movable = [o for o in seen.objects if not o.held and o.category not in ("shelf", "table", "support")]
    _count_wrong_names(res, movable, look.truth, gate_m, np.asarray(look.obs.T_base_cam, float)[:3, 3])
    for gid in look.refs:
        g = look.truth.get(gid)
        gate = max(gate_m, SIZE_GATE * float(np.max(g.size)))   # a tall plant seen in part: its centre moves
        same = [o for o in movable if o.label == g.label]
        d = [float(np.linalg.norm(o.center - g.center)) for o in same]
        near = [o for o in movable if np.linalg.norm(o.center - g.center) <= gate]
        if same and min(d) <= gate:
            res.refs[gid] = "ok"
        elif near:
            res.refs[gid] = f"label:{near[0].label}"
        elif same:
            res.refs[gid] = f"far:{100 * min(d):.0f}cm"
        else:
            res.refs[gid] = "missing" if look.visible[gid] >= MIN_VISIBLE else "unseen"


def evaluate(task, scene, segmenter_config: dict, *, gate_m: float = GATE_M, catalogue: str = "library",
             library=None, profile=None) -> TaskResult:
    """Perceive and plan on the task's first look (`first_look`), scored against its truth."""
    res = TaskResult(task.id, task.instruction)
    look = first_look(task, scene, catalogue=catalogue, library=library, profile=profile)
    agent, perceived = perceive_look(look, segmenter_config, res, gate_m=gate_m)
    plan_look(agent, perceived, look, res, gate_m=gate_m)
    return res


def plan_look(agent: Agent, perceived, look: FirstLook, res: TaskResult, *, gate_m: float = GATE_M) -> None:
    """The agent's reasoning on its perceived look, scored into `res`: its error code, or whether
    the object it picks (the slot it places in) is the task's answer by the look's truth."""
    task, truth, seen = look.task, look.truth, perceived.scene
    try:
        decision = agent.reason(perceived, GoalRequest(instruction=task.instruction), None, Trace(None, {}))
    except SpatialManipError as e:
        res.error = e.code.value if hasattr(e.code, "value") else str(e.code)
        return
    res.planned = True
    seen = decision.scene if decision.scene is not None else seen   # with what the words named (name_from_words)
    if task.action == "pick":
        o = seen.get(decision.pick_id) if decision.pick_id else None
        res.correct = o is not None and any(
            np.linalg.norm(o.center - truth.get(a).center) <= gate_m for a in task.answer)
    elif task.answer:
        slot = slot_at(seen, decision.place_pose)
        res.correct = slot is not None and slot.id in task.answer or any(t in task.answer for t in decision.target_ids)
    else:
        res.correct = set_down_holds(task, truth, decision.place_pose)


PLACE_POSE_CHECKS = ("direction", "distance", "in_area", "in_regions")   # what a set-down's pose alone decides


def set_down_holds(task, truth: Scene, place_pose) -> bool:
    """Whether the held object set down at `place_pose` (the planner's, from what it saw) meets the
    task's checks that its pose alone decides, against the true scene: a place with no slot to
    choose (the objects suite's "to the right of the alarm clock")."""
    held = truth.held_object()
    checks = [c for c in getattr(task, "check", ()) if c.get("type") in PLACE_POSE_CHECKS]
    if held is None or place_pose is None or not checks:
        return False
    pose = np.asarray(place_pose, float)
    placed = replace(held, center=pose[:3, 3], rotation=pose[:3, :3], held=False)
    final = truth.with_objects([placed if o.id == held.id else o for o in truth.objects])
    return check_constraints(checks, final).success


SUITES = ("pick", "place", "objects")     # the generator's suites whose first looks this bench scores

ASSOCIATION_LAPS = ("labels", "catalogue")   # the classical segmenter's laps that name, not find


def _association_s(agent) -> float:
    """Seconds the last segment() spent naming what it found (0 for a backend without laps)."""
    laps = getattr(agent._segmenter, "last_timing_s", None) or {}
    return float(sum(laps.get(k, 0.0) for k in ASSOCIATION_LAPS))


UNNAMED_LABELS = ("object",)             # the label of a detection refused a catalogue name


def needed_outcomes(results: list[TaskResult]) -> dict[str, int]:
    """How the visible objects the instructions need came out: named (right), unnamed (a
    detection there with no catalogue name), misnamed (a detection there with another name),
    not_found (none there); unseen ones (under MIN_VISIBLE of them in view) counted apart."""
    out = dict.fromkeys(("named", "unnamed", "misnamed", "not_found", "unseen"), 0)
    for v in (v for r in results for v in r.refs.values()):
        kind, _, label = v.partition(":")
        if kind == "ok":
            out["named"] += 1
        elif kind == "unseen":
            out["unseen"] += 1
        elif kind == "label":
            out["unnamed" if label in UNNAMED_LABELS else "misnamed"] += 1
        else:
            out["not_found"] += 1
    return out


def _count_wrong_names(res: TaskResult, movable, truth, gate_m: float, camera) -> None:
    """Named detections (a catalogue label, not the book/object fallback) whose centre lies in
    no true movable object's box (grown by the gate) of that label: each is a wrong name
    ("given->true object there", or "->nothing"). Detections called "book" are counted apart
    (`books`), with those whose centre lies in no true book (`stray_books`): a shelf board's
    noise read as a row of lying books is no wrong catalogue name, yet makes an empty slot full."""
    objects = [o for o in truth.objects if o.category not in ("shelf", "table", "support", "floor")]

    def inside(point, o):
        local = (np.asarray(point, float) - o.center) @ np.asarray(o.rotation, float)
        return bool(np.all(np.abs(local) <= np.asarray(o.size, float) / 2 + gate_m))
    for d in movable:
        if d.label == "book" and d.category == "book":
            res.books += 1
            there = [o for o in objects if inside(d.center, o)]
            if not any(o.category == "book" for o in there):
                res.stray_books.append(f"book->{there[0].label if there else 'nothing'}")
            continue
        if d.label in ("object", "book") and d.category != "reference":
            continue
        res.named += 1
        there = [o for o in objects if inside(d.center, o)]
        if not any(o.label == d.label for o in there):
            res.wrong_names.append(f"{d.label}->{there[0].label if there else 'nothing'}")
            res.wrong_details.append(_wrong_detail(d, there[0] if there else None, camera))


def _wrong_detail(d, true, camera) -> dict:
    """What a wrong name's breakdown by cause reads: the detection's place, size and view, and the
    true object there (its category, and whether it stands on the work surface or a shelf)."""
    return {"id": d.id, "given": d.label, "given_category": d.category,
            "true": true.label if true else None, "true_category": true.category if true else None,
            "true_id": true.id if true else None,
            "center": np.round(d.center, 3).tolist(), "size": np.round(d.size, 3).tolist(),
            "range_m": round(float(np.linalg.norm(np.asarray(d.center) - np.asarray(camera, float))), 3),
            "mask_area_px": d.extra.get("mask_area_px"), "truncated": d.extra.get("truncated")}


def run(suite: str, seeds, count: int, *, gate_m: float = GATE_M, progress=print,
        catalogue: str = "library", profile=None, only=frozenset()) -> list[TaskResult]:

    _, cfg = load_segmenter_config(config_dir() / "params" / "perception.yaml", "classical")
    library = library_for(catalogue)
    results = []
    for seed in seeds:
        with _quiet_stderr():
            items = T.generate(suite, count, seed)
        for task, scene in items:
            if only and task.id not in only:
                continue
            t0 = time.perf_counter()
            r = evaluate(task, scene, cfg, gate_m=gate_m, catalogue=catalogue, library=library, profile=profile)
            results.append(r)
            progress(_row(r, len(results), len(seeds) * count, time.perf_counter() - t0))
    return results


def _row(r: TaskResult, k: int, n: int, dt: float) -> str:
    refs = " ".join(f"{g}={v}" for g, v in r.refs.items()) or "-"
    verdict = "OK " if r.correct else ("bad" if r.planned else r.error[:18])
    return f"[{k:>3}/{n}] {r.task_id:<15} {verdict:<18} refs {refs:<48} {dt:4.1f}s  {r.instruction}"


def summary(results: list[TaskResult]) -> str:
    n = max(len(results), 1)
    refs = [v for r in results for v in r.refs.values()]
    kinds = {}
    for v in refs:
        kinds[v.split(":")[0]] = kinds.get(v.split(":")[0], 0) + 1
    named = sum(r.named for r in results)
    wrong = [w for r in results for w in r.wrong_names]
    books = sum(r.books for r in results)
    stray = [w for r in results for w in r.stray_books]
    times = [r.perceive_s for r in results if r.perceive_s]
    naming = [r.associate_s for r in results if r.associate_s]
    need = needed_outcomes(results)
    visible = max(sum(need.values()) - need["unseen"], 1)
    errors = {}
    for r in results:
        if not r.planned:
            errors[r.error] = errors.get(r.error, 0) + 1
    return (f"tasks {len(results)}: planner correct {sum(r.correct for r in results)}/{len(results)} "
            f"({100 * sum(r.correct for r in results) / n:.0f}%), all refs ok "
            f"{sum(r.refs_ok for r in results)}/{len(results)}; referenced objects {len(refs)}: "
            f"{dict(sorted(kinds.items()))}; planner errors {errors}\n"
            f"named detections {named}: wrong {len(wrong)} ({100 * len(wrong) / max(named, 1):.1f}%) "
            f"{dict(Counter(wrong).most_common())}; by cause "
            f"{dict(Counter(wrong_name_cause(d) for r in results for d in r.wrong_details).most_common())}\n"
            f"detections called book {books}: where no book stands {len(stray)} "
            f"({100 * len(stray) / max(books, 1):.1f}%) {dict(Counter(stray).most_common())}\n"
            f"needed objects in view {visible}: named {need['named']}, left unnamed {need['unnamed']} "
            f"({100 * need['unnamed'] / visible:.1f}%), misnamed {need['misnamed']}, not found {need['not_found']}; "
            f"unseen {need['unseen']}\n"
            f"associator {_ms(naming)} median per frame (p95 {_ms(naming, 95)}); "
            f"perception {_ms(times)} median per frame")


def wrong_name_cause(detail: dict) -> str:
    """What a wrong name (`_wrong_detail`) was, by what stands there: nothing (a sliver, a fixture's
    piece, noise), a book named as a catalogue object, an object named as a library book, or an
    object confused with another seen in part or whole."""
    if detail["true"] is None:
        return "where nothing stands"
    if detail["true_category"] == "book":
        return "a book named as an object"
    if detail["given_category"] == "book":
        return "an object named as a book"
    return "objects confused, seen in part" if detail["truncated"] else "objects confused, seen whole"


def _ms(seconds: list, q: float = 50) -> str:
    return f"{1000 * float(np.percentile(seconds, q)):.0f} ms" if seconds else "-"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="place", choices=SUITES)
    ap.add_argument("--seeds", type=int, nargs="+", default=[4, 5])
    ap.add_argument("--count", type=int, default=16, help="tasks per seed")
    ap.add_argument("--gate-cm", type=float, default=100 * GATE_M, help="centre error allowed")
    ap.add_argument("--json", default="", help="also write one JSON line per task here")
    ap.add_argument("--catalogue", choices=("library", "episode"), default="library",
                    help="library: the enrolled objects (most absent); episode: this episode's objects (diagnostic)")
    sensing.add_arguments(ap, default="ideal")
    ap.add_argument("--only", nargs="*", default=[], help="only these task ids (e.g. place-51-00006)")
    args = ap.parse_args(argv)
    profile = sensing.from_args(args)
    print(f"{args.suite} seeds {' '.join(map(str, args.seeds))} x {args.count} tasks, catalogue {args.catalogue}, "
          f"sensing {profile.label}, classical segmenter, depth in whole millimetres", flush=True)
    results = run(args.suite, args.seeds, args.count, gate_m=args.gate_cm / 100, progress=lambda s: print(s, flush=True),
                  catalogue=args.catalogue, profile=profile, only=set(args.only))
    print(summary(results))
    if args.json:
        with open(args.json, "w") as f:
            f.writelines(json.dumps(asdict(r)) + "\n" for r in results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
