"""`spatial-manip motion-bench`: planning time, success and path length of the motion planner on
the benchmark's own scenes (sim/tasks.py), with the simulated cell's arm (arm.yaml `sim`).

Queries per task, as the pick-and-place runs them:
  pick:  scene start pose -> pre-grasp (transit, target left out of the world), the straight
         approach and lift (target and its support allowed), and lift pose -> a pose 45 cm over
         the table centre carrying the book (attached to the gripper);
  place: scene start pose (book in hand) -> pre-place in front of the slot (transit), and the
         straight insertion into the slot.
The simulated cell has no camera stand (its camera is each scene's viewer), so arm.yaml's
keep-out box is dropped; on shelf scenes the floor of the envelope is the floor under the shelf.

The world is the generator's boxes (this times the planner, not perception). `--cloud` adds the
depth cloud of the scene rendered from its viewer with the arm at the start pose, under the
`--sensing` profile: `raw` every pixel (one point per 2 cm voxel), `map` the obstacle map the
agent sends (motion.obstacle_map: flying pixels, unsupported returns and the arm dropped, with the
sensor's clearance); in both, points on the arm's bodies (3 cm) or within the boxes' margin are
not clutter, as in the agent.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from spatial_manip.errors import SpatialManipError
from spatial_manip.control.config import load_arm_config
from spatial_manip.motion.cartesian import straight_segment
from spatial_manip.motion.checker import CollisionChecker
from spatial_manip.motion.factory import make_planner
from spatial_manip.motion.obstacle_map import build_obstacle_map, raw_points
from spatial_manip.motion.world import CLOUD_EXPLAINED_M, CollisionWorld, support_ids
from spatial_manip.geometry.pointcloud import voxel_downsample
from spatial_manip.scene import FIXTURE_CATEGORIES
from spatial_manip.sim import sensing as sensing_mod
from spatial_manip.sim import oracle
from spatial_manip.sim import tasks as T
from spatial_manip.sim.oracle import grasp_point
from spatial_manip.sim.world import HOME_Q, SimConfig, SimWorld


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="task-generator seeds (default 0 1 2)")
    p.add_argument("--count", type=int, default=12, help="tasks per suite and seed (default 12)")
    p.add_argument("--suites", nargs="+", default=["pick", "place"], choices=["pick", "place"])
    p.add_argument("--budget", type=float, default=1.0, help="planning time budget per query, s (default 1.0)")
    p.add_argument("--planner-seed", type=int, default=1, help="OMPL's random seed, positive (default 1)")
    p.add_argument("--verbose", action="store_true", help="one line per query")
    p.add_argument("--cloud", choices=["none", "raw", "map"], default="none",
                   help="add the rendered depth cloud: none (boxes only), raw pixels, or the obstacle map")
    sensing_mod.add_arguments(p, default="ideal")


def _arm_config(kind: str, ground_z: float) -> dict:
    cfg = load_arm_config(overrides={"arm.backend": "sim"})
    cfg["safety"]["keep_out"] = []
    if kind == "shelf":
        cfg["safety"]["table_height_m"] = ground_z
        cfg["safety"]["workspace_min_m"][2] = ground_z
    return cfg


class Bench:
    def __init__(self, budget: float, planner_seed: int, verbose: bool, cloud: str = "none", sensing=None):
        self.budget, self.seed, self.verbose = budget, planner_seed, verbose
        self.cloud, self.sensing = cloud, sensing
        self.cloud_s: list[tuple[float, float]] = []   # building each task's cloud (map or raw): wall, CPU s
        self._task_cloud = None
        self._planners: dict = {}
        self.rows: list[dict] = []

    def planner(self, kind: str, ground_z: float):
        key = (kind, ground_z)
        if key not in self._planners:
            self._planners[key] = make_planner(_arm_config(kind, ground_z), {"seed": self.seed})
        return self._planners[key]

    def run_task(self, task, scene) -> None:
        kind = "shelf" if scene.extra.get("kind") == "shelf" else "tabletop"
        pl = self.planner(kind, float(scene.extra.get("ground_z", 0.0)))
        ee = np.asarray(scene.extra["ee_pose"], float)
        try:
            start = _start_configuration(pl, ee)
            self._task_cloud = self._cloud(task, scene, pl)
            if task.action == "pick":
                reach = oracle.KinematicWorld(scene).reachable      # the oracle's poses with an IK solution
                self._pick(pl, task, scene, start, oracle.plan_pick(scene, task, reach).poses)
            else:
                self._place(pl, task, scene, start, ee, oracle.plan_place(oracle.KinematicWorld(scene), scene, task).poses)
        except SpatialManipError as e:   # no IK for the scene's start or the oracle's poses
            self._row(task, "setup", "skipped", (time.perf_counter(), time.process_time()), np.nan, np.nan, str(e))

    def _pick(self, pl, task, scene, start, poses) -> None:
        # the oracle takes the nearest answer book the arm reaches: the one its grasp is at
        books = [o for o in scene.objects if o.id in task.answer]
        target = min(books, key=lambda o: float(np.linalg.norm(grasp_point(o) - poses[1][:3, 3])))
        allowed = support_ids(scene, target.id)
        world = self._world(scene, allowed=[target.id])
        path = self._transit(pl, task, "pre_grasp", start, poses[0], world)
        if path is None:
            return
        q_grasp = self._straight(pl, task, "approach", path.waypoints[-1], poses[1], world, allowed)
        if q_grasp is None:
            return
        T_obj = np.eye(4)
        T_obj[:3, :3], T_obj[:3, 3] = target.rotation, target.center
        world.attach(target.id, target.size, np.linalg.inv(poses[1]) @ T_obj)   # grasped: it moves with the hand
        q_lift = self._straight(pl, task, "lift", q_grasp[-1], poses[2], world, allowed)
        if q_lift is not None:   # carry it up over the table centre, keeping the grasp orientation
            T_carry = np.array(poses[2], float)
            T_carry[:3, 3] = [0.40, 0.0, 0.60]
            self._transit(pl, task, "carry", q_lift[-1], T_carry, world)

    def _place(self, pl, task, scene, start, ee, poses) -> None:
        world = self._world(scene, T_base_tcp=ee)
        path = self._transit(pl, task, "pre_place", start, poses[0], world)
        if path is not None:
            self._straight(pl, task, "insert", path.waypoints[-1], poses[1], world, [])

    def _cloud(self, task, scene, pl):
        """The scene's depth cloud as --cloud asks (None: boxes only) and its clearance, minus the
        arm at the image's joints and what the scene's boxes (the held one too) explain (the map's
        registered to the fixtures first, as the agent's)."""
        if self.cloud == "none":
            return None
        with SimWorld(scene, config=SimConfig(sensing=self.sensing), seed=int(task.scene_seed)) as sim:
            obs, q_image = sim.render(), sim.joint_positions()[:6]
        t0, c0 = time.perf_counter(), time.process_time()
        on_arm = lambda p: pl.robot.points_on(p, q_image, 0.03)        # noqa: E731
        if self.cloud == "map":
            fixtures = [o for o in scene.objects if o.category in FIXTURE_CATEGORIES]    # as the agent's map
            m = build_obstacle_map(obs.depth_m, obs.intrinsics, obs.T_base_cam, exclude=on_arm, fixtures=fixtures)
            pts, clearance = m.points, m.clearance_m
        else:
            pts = raw_points(obs.depth_m, obs.intrinsics, obs.T_base_cam)
            pts, clearance = pts[~on_arm(pts)], 0.0
            pts = pts[voxel_downsample(pts, 0.02)]
        self.cloud_s.append((time.perf_counter() - t0, time.process_time() - c0))
        boxes = CollisionWorld.from_scene(scene.with_objects([replace(o, held=False) for o in scene.objects]))
        return pts[~boxes.explains(pts, max(CLOUD_EXPLAINED_M, clearance))], clearance

    def _world(self, scene, **kw) -> CollisionWorld:
        world = CollisionWorld.from_scene(scene, **kw)
        if self._task_cloud is not None:
            world.add_cloud(self._task_cloud[0], 0.02, self._task_cloud[1])
        return world

    def _transit(self, pl, task, phase, start, goal, world):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            path = pl.plan(start, goal, world, phase=phase, time_budget_s=self.budget)
        except SpatialManipError as e:
            self._row(task, phase, e.code.value, (t0, c0), np.nan, np.nan, e.message)
            return None
        T0 = pl.envelope.kin.fk(start)[:3, 3]
        straight = float(np.linalg.norm(path.tcp[-1] - T0))
        self._row(task, phase, "ok", (t0, c0), path.tcp_length_m, straight, "")
        return path

    def _straight(self, pl, task, phase, q0, T_goal, world, allowed):
        t0 = (time.perf_counter(), time.process_time())
        try:
            qs = straight_segment(pl.robot, pl.envelope, world, q0, T_goal, allowed=allowed, phase=phase,
                                  keep_out_bodies=False)
        except SpatialManipError as e:
            self._row(task, phase, e.code.value, t0, np.nan, np.nan, e.message)
            return None
        self._row(task, phase, "ok", t0, np.nan, np.nan, "")
        return qs

    def _row(self, task, phase, status, started, length, straight, message) -> None:
        """`started`: (perf_counter, process_time) at the query's start: wall and CPU time."""
        wall, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
        row = dict(task=task.id, phase=phase, status=status, s=wall, cpu=cpu, length=length, straight=straight,
                   msg=message)
        self.rows.append(row)
        if self.verbose:
            print(f"  {task.id:18s} {phase:11s} {status:14s} {1000 * wall:7.1f} ms ({1000 * cpu:6.1f} ms CPU)  "
                  f"{message[:100]}")


def _start_configuration(pl, T_tcp: np.ndarray) -> np.ndarray:
    """The scene's start TCP pose as the arm would hold it: the IK solution nearest home that
    does not fold the arm into itself (a real arm is never in such a configuration)."""
    kin = pl.envelope.kin
    sols = sorted(kin.ik_all(T_tcp, _home()), key=lambda q: float(np.max(np.abs(q - _home()))))
    alone = CollisionChecker(pl.robot, CollisionWorld(), None)
    return next((q for q in sols if not alone.collides(q)), kin.ik(T_tcp, _home()))


def _home() -> np.ndarray:
    return np.asarray(HOME_Q, float)


def report(rows: list[dict]) -> str:
    transit = [r for r in rows if r["phase"] in ("pre_grasp", "carry", "pre_place")]
    straight = [r for r in rows if r["phase"] in ("approach", "lift", "insert")]
    lines = ["", "transit queries (planned: RRTConnect + simplification + TOPP-RA + final dense check)"]
    lines += _summary(transit, with_length=True)
    lines += ["", "straight Cartesian segments (approach / lift / insert, target and support allowed)"]
    lines += _summary(straight, with_length=False)
    skipped = [r for r in rows if r["status"] == "skipped"]
    if skipped:
        lines.append(f"\n{len(skipped)} task(s) skipped (no IK for the scene's start or the oracle's poses)")
    return "\n".join(lines)


def _summary(rows: list[dict], with_length: bool) -> list[str]:
    if not rows:
        return ["  (none)"]
    ok = [r for r in rows if r["status"] == "ok"]
    out = [f"  queries {len(rows)}, success {len(ok)}/{len(rows)} ({100 * len(ok) / len(rows):.0f} %)"]
    for key, what in (("s", "wall"), ("cpu", "CPU ")):
        t = np.array([r[key] for r in ok]) * 1000
        if len(t):
            out.append(f"  {what} time per successful query: median {np.median(t):.1f} ms, "
                       f"p95 {np.percentile(t, 95):.1f} ms, max {t.max():.1f} ms")
    if with_length and ok:
        ratio = np.array([r["length"] / r["straight"] for r in ok if r["straight"] > 1e-3])
        if len(ratio):
            out.append(f"  TCP path length / straight-line distance: median {np.median(ratio):.2f}, "
                       f"p95 {np.percentile(ratio, 95):.2f}")
    fails: dict = {}
    for r in rows:
        if r["status"] not in ("ok", "skipped"):
            fails.setdefault(f"{r['phase']} {r['status']}", []).append(r["msg"])
    for k, msgs in sorted(fails.items()):
        out.append(f"  failed {k}: {len(msgs)}, e.g. {msgs[0][:160]}")
    return out


def run(args) -> int:
    sensing = sensing_mod.from_args(args)
    bench = Bench(args.budget, args.planner_seed, args.verbose, args.cloud, sensing)
    bench.planner("tabletop", 0.0).plan(_home(), _home(), _empty())   # load libraries before timing
    for seed in args.seeds:
        for suite in args.suites:
            items = T.generate(suite, args.count, seed)
            print(f"seed {seed} suite {suite}: {len(items)} tasks")
            for task, scene in items:
                bench.run_task(task, scene)
    print(report(bench.rows))
    if bench.cloud_s:
        t = 1000 * np.array(bench.cloud_s)
        print(f"\ncloud '{args.cloud}' per frame (the arm's pixels included): wall median {np.median(t[:, 0]):.0f} ms, "
              f"CPU median {np.median(t[:, 1]):.0f} ms, p95 {np.percentile(t[:, 1], 95):.0f} ms")
    print(f"cloud: {args.cloud}; sensing: {sensing.label}")
    print(f"\nseeds {args.seeds}, {args.count} tasks per suite and seed, budget {args.budget} s, "
          f"OMPL seed {args.planner_seed}; goal: median < 50 ms, p95 < 250 ms (wall, 2 cores). "
          f"CPU time is this process's alone: wall exceeds it when other work shares the cores.")
    return 0


def _empty():
    return CollisionWorld()
