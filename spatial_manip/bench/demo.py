"""`spatial-manip demo`: the main job on the embedded default. Starts the sim graph through the
pip-only launcher (sim, grasp and planner nodes as separate processes over real DDS), resets
the world to a seeded tabletop scene that the instruction fits, sends one ExecuteInstruction
goal from a real action client, prints the feedback as it arrives and the result, and writes
the trace page."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time

from dataclasses import replace
from pathlib import Path

import numpy as np

from spatial_manip.bench.domains import hold_domains
from spatial_manip.bench.trace_page import render_trace
from spatial_manip.bench.worker import WorkspaceRevision, default_catalogue, sim_node_sensing
from spatial_manip.bringup.goal_client import send_goal, spinning_node, wait_future
from spatial_manip.bringup.graph import load_graph
from spatial_manip.bringup.launcher import Launcher
from spatial_manip.errors import SpatialManipError
from spatial_manip.geometry.relations import book_pose_class, distance
from spatial_manip.reasoning.compound import plan_compound
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.scene import Scene
from spatial_manip.sim import sensing
from spatial_manip.sim.layouts import sample_tabletop
from spatial_manip.sim.world import SimConfig, SimWorld
from spatial_manip.transforms import quat_to_matrix

# Words whose meaning hangs on nothing assumed: a rubik's cube has no front, so "to the right of"
# is the camera's right, which is where a person looking at the trace sees the book land.
DEFAULT_INSTRUCTION = "pick the leftmost book lying flat and place it 15 cm to the right of the rubik's cube"
# The first seed at which a search from 0 finds a scene the default instruction fits: the demo
# starts there (the search from 0 cost 20 s quiet, 84 s under load, on every run); test_demo checks
# the default still fits here, and the cancel and agent tests share this scene
DEFAULT_SCENE_SEED = 1446


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--instruction", default=DEFAULT_INSTRUCTION, help="what to ask (default: %(default)r)")
    p.add_argument("--seed", type=int, default=None,
                   help="first scene seed to try (deterministic; default: DEFAULT_SCENE_SEED for the default "
                        "instruction, else 0)")
    p.add_argument("--noise-seed", type=int, default=None,
                   help="seed of the sensing profile's draws (depth noise, calibration and arm errors) on the "
                        "same scene (default: the scene's seed)")
    p.add_argument("--graph", default="sim", help="graph to launch (default: sim)")
    p.add_argument("--timeout", type=float, default=150.0, help="seconds allowed for the goal")
    p.add_argument("--dry-run", action="store_true", help="plan only; the arm does not move")
    p.add_argument("--attempts", type=int, default=0,
                   help="attempts, with reflection between them (default 0: the planner's configured default)")
    # What a lab has (issue 37: ground truth is never a default). The lying book's box once reached
    # down to its pedestal's configured top, under the depth's (frame demo-1446-noise1446-frame1):
    # see perception.planes.settled_known_planes
    p.add_argument("--segmenter", default="classical",
                   help="perception backend: classical (the default: what a lab has, no simulator knowledge) or "
                        "ground_truth (a diagnostic the header labels: the simulator's segmentation; boxes still "
                        "come from depth)")
    p.add_argument("--catalogue", default=None, choices=("episode", "library"),
                   help="what the simulator tells the planner about the objects: episode (this scene's objects, a "
                        "diagnostic a lab does not have; the default with --segmenter ground_truth) or library (the "
                        "enrolled library of every asset, config/library/sim_assets.json; the default otherwise)")
    p.add_argument("--domain", type=int, default=None,
                   help="ROS_DOMAIN_ID of the demo's graph and client (default: ROS_DOMAIN_ID when set, else a "
                        "free domain held alone on this machine, as the benchmarks hold theirs)")
    # realistic, as the benchmark, the oracle and sim_node (issue 36): the L515's noise, calibration and
    # arm errors; `--sensing ideal` renders clean depth with an exact camera pose and the nominal arm
    sensing.add_arguments(p, default="realistic")


REACH_M = 0.70   # horizontal reach kept for the demo's place pose (UR5e: 0.85 m, less the approach)
TABLE_MARGIN_M = 0.02  # and the place footprint (the book laid down at any turn) this far inside the table's edges
PLACE_CLEAR_M = 0.08   # free table around the demo's place footprint: room for the fingers, nothing to knock


def find_scene(instruction: str, seed: int, tries: int = 1500, min_visible: float = 0.5, min_pixels: int = 400):
    """The first seeded tabletop scene on which the instruction plans (on ground truth) and in
    which the books it is about (the target and those lying in the same pose) and the references
    it names are at least `min_visible` visible from the camera, so the demo asks something a
    camera can answer in the world it shows."""

    planner = make_planner("program")

    def plan_one(sc, text, kind):
        result = planner.plan(sc, text, task_kind=kind)
        if not result.ok:
            raise SpatialManipError(result.error["message"], result.error["code"])
        return result

    for s in range(seed, seed + tries):
        scene = sample_tabletop(np.random.default_rng(s))
        try:
            pick, place = plan_compound(scene, instruction, "auto", plan_one)
        except SpatialManipError:
            continue
        words = set(instruction.lower().split())
        target = scene.get(pick.targets[0]) if pick is not None and pick.targets else None
        if place is not None and not _place_is_clear(scene, place.place_pose, target):
            continue
        named = [o.id for o in scene.objects if o.category == "reference" and words & set(o.label.lower().split())]
        books = [o.id for o in scene.objects if o.category == "book"
                 and (target is None or book_pose_class(o) == book_pose_class(target))]
        try:     # the world refuses a scene whose initial arm pose collides: the reset would too
            world = SimWorld(scene, config=SimConfig())
        except SpatialManipError:
            continue
        try:
            seen = world.visible_fractions(books + named)
            obs = world.render()
        finally:
            world.close()
        index = {oid: i for i, oid in obs.segment_ids.items()}
        pixels = {oid: int(np.count_nonzero(obs.segmentation == index[oid])) for oid in seen}
        if min(seen.values()) >= min_visible and min(pixels.values()) >= min_pixels:
            return s, scene
    raise SystemExit(f"no tabletop scene among seeds {seed}..{seed + tries - 1} fits {instruction!r} "
                     f"with the books and references it names at least {min_visible:.0%} visible")


def _place_is_clear(scene, place_pose, held) -> bool:
    """The place pose is within easy reach and its footprint has PLACE_CLEAR_M of free table
    around it, so the demo shows the words, not a crowded set-down."""
    if place_pose is None:
        return True
    position = np.asarray(place_pose.position, float)
    if np.linalg.norm(position[:2]) > REACH_M:
        return False
    table = next((o for o in scene.objects if o.category == "table"), None)
    if held is not None and table is not None:
        lo, hi = table.corners().min(0), table.corners().max(0)
        reach = float(np.max(held.size)) / 2 + TABLE_MARGIN_M
        if np.any(position[:2] - reach < lo[:2]) or np.any(position[:2] + reach > hi[:2]):
            return False
    if held is None:
        return True
    placed = replace(held, center=position, rotation=quat_to_matrix(place_pose.orientation))
    others = [o for o in scene.objects if o.id != held.id and o.category != "table"]
    return all(distance(placed, o) >= PLACE_CLEAR_M for o in others)


def set_down_truth(trace_path: str, final_state: dict, start: Scene | None = None) -> str:
    """One line on how far, by the simulator's truth after the goal (which the planner never
    sees), the set-down object rests from the place the planner chose (the last decision with a
    place pose before the last set-down in the trace; a table place keeps its x-y), so a user can
    tell a set-down that drifted from one the check misread. Perception's ids are the library's
    (book_green_small), not the simulator's (book_3): an id the simulator does not know is its
    object that moved furthest from `start`, the scene the demo reset to."""
    events = json.loads(Path(trace_path).read_text()).get("events", [])
    last = max((i for i, e in enumerate(events) if e.get("kind") == "placed"), default=None)
    if last is None:
        return "set-down (the simulator's truth): nothing was set down"
    decision = next((e for e in reversed(events[:last]) if e.get("kind") == "decision" and e.get("place_pose")), None)
    placed_id = events[last].get("placed_id")
    objects = final_state.get("objects", [])
    obj = next((o for o in objects if o.get("id") == placed_id), None)
    if obj is None and start is not None and objects:
        obj = max(objects, key=lambda o: _moved_m(o, start))
        placed_id = f"{placed_id} ({obj.get('id')} in the simulator)"
    if decision is None or obj is None:
        return f"set-down (the simulator's truth): {placed_id} has no place pose or no final state"
    want = np.asarray(decision["place_pose"], float)[:2, 3]
    miss = float(np.linalg.norm(np.asarray(obj["center"], float)[:2] - want))
    return (f"set-down (the simulator's truth, never seen by the planner): {placed_id} rests {miss * 100:.1f} cm "
            "from the planned place")


def _moved_m(final: dict, start: Scene) -> float:
    """How far the simulator's object `final` (its final state) lies from where it started."""
    before = next((o for o in start.objects if o.id == final.get("id")), None)
    if before is None or final.get("center") is None:
        return 0.0
    return float(np.linalg.norm(np.asarray(final["center"], float) - np.asarray(before.center, float)))


def own_domain(requested: int | None) -> int:
    """The ROS domain the demo's graph and its client run in: the one asked for, else
    ROS_DOMAIN_ID when the user set it (to watch the demo from RViz), else a free domain held
    alone on this machine (bench/domains.py). Two demos on one machine in the default domain
    answered each other's goals ('another instruction is running', another demo's trace)."""
    if requested is None and os.environ.get("ROS_DOMAIN_ID", "").strip():
        return int(os.environ["ROS_DOMAIN_ID"])
    if requested is not None and not 0 <= requested <= 232:
        raise SystemExit(f"[demo] --domain must be a ROS domain id in 0..232, got {requested}")
    try:
        domain = hold_domains(1, first=requested)[0]
    except RuntimeError as e:
        raise SystemExit(f"[demo] {e}") from e
    os.environ["ROS_DOMAIN_ID"] = str(domain)      # before rclpy.init and before the graph starts
    return domain


def perception_label(segmenter: str, catalogue: str) -> str:
    """What the demo's perception was told, said plainly: a simulator-fed run is a diagnostic."""
    label = f"segmenter {segmenter}; catalogue {catalogue}"
    if segmenter == "ground_truth" or catalogue == "episode":
        return label + " (DIAGNOSTIC: the simulator's own segmentation or object list, which a lab does not have)"
    return label + " (what a lab has: no simulator knowledge, the enrolled library)"


def run(args) -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)     # Ctrl-C cancels the goal (see goal_cli)

    profile = sensing.from_args(args)
    if args.noise_seed is not None and not 0 <= args.noise_seed < 2 ** 32:
        raise SystemExit(f"--noise-seed must be in 0..{2 ** 32 - 1} (a reset's seed), got {args.noise_seed}")
    domain = own_domain(args.domain)
    first = args.seed if args.seed is not None else \
        (DEFAULT_SCENE_SEED if args.instruction == DEFAULT_INSTRUCTION else 0)
    seed, scene = find_scene(args.instruction, first)
    print(f"[demo] scene seed {seed}: {', '.join(o.id for o in scene.objects if o.category not in ('table', 'support'))}")
    noise_seed = seed if args.noise_seed is None else args.noise_seed
    catalogue = args.catalogue or default_catalogue(args.segmenter)
    print(f"[demo] sensing profile: {profile.label} (draws of seed {noise_seed}); {perception_label(args.segmenter, catalogue)}; "
          f"ROS domain {domain}")
    launcher = Launcher(load_graph(args.graph), params={"planner_node": {"segmenter": args.segmenter},
                                                       "sim_node": {**sim_node_sensing(profile),
                                                                    "catalogue": catalogue}}, grace_s=5.0)
    launcher.start()
    waiter = threading.Thread(target=lambda: setattr(launcher, "exit_code", launcher.wait()), daemon=True)
    waiter.start()
    t0 = time.monotonic()
    try:
        return _run_goal(args, scene, noise_seed, t0, profile.label)
    finally:
        launcher.request_stop()
        waiter.join(timeout=20)


def _run_goal(args, scene, noise_seed: int, t0: float, sensing_label: str) -> int:
    from spatial_manip_interfaces.srv import CheckSuccess, ResetTask  # built by colcon: absent where only the CLI's help is read

    with spinning_node("spatial_manip_demo") as node:
        reset = node.create_client(ResetTask, "/sim/reset_task")
        final_state = node.create_client(CheckSuccess, "/sim/check_success")
        planner_revision = WorkspaceRevision(node)
        if not reset.wait_for_service(timeout_sec=60.0):
            print("[demo] the sim node did not come up within 60 s", file=sys.stderr)
            return 2
        planner_revision.wait(bool, timeout_s=10.0)      # the planner's revision before the reset
        before = planner_revision.value
        request = ResetTask.Request(scene_json=json.dumps(scene.to_dict()), seed=noise_seed)
        res = wait_future(reset.call_async(request), 60.0)
        if res is None or not res.success:
            print(f"[demo] reset failed: {getattr(res, 'message', 'no answer')}", file=sys.stderr)
            return 2
        # a goal sent before the planner has taken the reset's workspace would be planned on the old world
        # (revisions are "<resets>:<task>": the sim's own start is "0:")
        if not planner_revision.wait(lambda r: r and r != before and not r.startswith("0:"), timeout_s=20.0):
            print("[demo] the planner had not taken the new workspace after 20 s; sending the goal anyway",
                  file=sys.stderr)
        print(f"[demo] goal: {args.instruction!r}")
        report = send_goal(node, args.instruction, dry_run=args.dry_run, timeout_s=args.timeout,
                           max_attempts=args.attempts,
                           server_timeout_s=60.0, on_feedback=lambda fb: print(
                               f"[demo]   [{fb.progress * 100:5.1f}%] {fb.stage:<10} {fb.detail}", flush=True))
        r = report.result
        if r is None:
            print(f"[demo] no result: {report.status}", file=sys.stderr)
            return 1
        print(f"[demo] result: success={r.success} code={r.error_code!r} targets={list(r.target_ids)} "
              f"(sensing {sensing_label})")
        print(f"[demo]   {r.message}")
        if r.trace_path:
            truth = wait_future(final_state.call_async(CheckSuccess.Request()), 20.0)
            if truth is not None and truth.final_state_json:
                print(f"[demo] {set_down_truth(r.trace_path, json.loads(truth.final_state_json), scene)}")
            page = render_trace(r.trace_path, sensing=sensing_label)
            print(f"[demo] trace page: {page}")
        print(f"[demo] finished in {time.monotonic() - t0:.1f} s")
        return 0 if r.success else 1
