"""The expected place success of a driver that clicks uniformly random pixels, estimated pixel by
pixel with the server's own place rather than from whole episodes (issue 40: the floor beside
the measured random rate).

ESPIRE (supplementary A.4) counts a place as done when the book's centre lies in the target
area (an answer slot) and its tilt is within 10 degrees of the expected one (upright unless the
words lay it flat). The server releases the book at the clicked 3-D point in the pose the MOVE
chose, if the arm can take it there without running it into anything (episode.py); else nothing
moves and the trial is spent. So one trial of the random driver (a uniform pixel, a uniform pose
of protocol.SET_DOWN_DELTAS) ends in one of three ways, whose probabilities are shares of the
image's pixels:

    s  the book goes into an answer slot in the pose the words ask for  -> success, episode over
    r  the book is released anywhere else or in the wrong pose          -> failure, episode over
    m  nothing is set down                                              -> the next trial

The random driver clicks the world view first and, after a miss, the wrist ("ego") view, which
stays the same while nothing moves. Over ESPIRE's budget of MOVING_TRIALS:

    P(success) = s_world + m_world * s_ego * (1 + m_ego + ... + m_ego ** (MOVING_TRIALS - 2))

The server releases the book at the clicked point and physics says where it ends
(`Episode._slot_plan`), so a pixel's outcome is found by doing what the server does: the shares
come from PIXELS_PER_VIEW pixels drawn uniformly (seeded), each played by the server's own place
(`Episode._move_place`: plan, motion, release, the world stepped) from the episode's start state,
restored between pixels, and judged by ESPIRE's criteria (`Episode.goal_met`). A pixel in the
pose the words do not ask for can only fail: it is planned, not played (a plan counts as a
release). The combinatorial prior beside it assumes every slot equally likely: |answer| /
|slots| times the share of poses the words accept. Both are also given for a random clicker that
always sends the pose the words ask for (upright unless they lay it flat, as ESPIRE's place
prompt says): the pose draw halves our random driver's chance, not ESPIRE's.

    python -m spatial_manip.bench.espire_chance DIR/tasks.jsonl [...]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import mujoco
import numpy as np

from spatial_manip.espire import protocol as proto
from spatial_manip.espire import views
from spatial_manip.espire.client import FLAT_FAMILY_KEY
from spatial_manip.espire.episode import MOVING_TRIALS, Episode
from spatial_manip.scene import Scene
from spatial_manip.sim import tasks

PIXELS_PER_VIEW = 40      # pixels drawn per view and task: each release is played in the simulator
POSES = sorted(proto.SET_DOWN_DELTAS)
STATE = mujoco.mjtState.mjSTATE_INTEGRATION


@dataclasses.dataclass
class TrialShares:
    success: float        # s: into an answer slot in the asked pose
    released: float       # r: set down anywhere else, or in the wrong pose
    nothing: float        # m: nothing set down


@dataclasses.dataclass
class Chance:
    task_id: str
    family: str
    answer: int
    slots: int
    world: TrialShares
    ego: TrialShares
    expected: float       # P(success) over the trial budget, the pose drawn at random (our random driver)
    prior: float          # |answer| / |slots| * share of accepted poses
    world_kept: TrialShares   # the same with the pose the words ask for on every MOVE (a random clicker
    ego_kept: TrialShares     # that keeps the book upright, as ESPIRE's place prompt tells it to)
    expected_kept: float
    prior_kept: float


def expected_success(world: TrialShares, ego: TrialShares, trials: int = MOVING_TRIALS) -> float:
    later = sum(ego.nothing ** k for k in range(trials - 1))
    return world.success + world.nothing * ego.success * later


def wanted_pose(task) -> str:
    return "flat" if task.family_key == FLAT_FAMILY_KEY else "upright"


class PixelOutcomes:
    """What a place MOVE at a pixel of a view does, found by the server's own place played from
    the episode's start state (MuJoCo's integration state, restored before every pixel)."""

    def __init__(self, ep: Episode, rng: np.random.Generator):
        self.ep, self.rng = ep, rng
        m, d = ep.world.model, ep.world.data
        self.start = np.empty(mujoco.mj_stateSize(m, STATE))
        mujoco.mj_getState(m, d, self.start, STATE)

    def _restore(self) -> None:
        ep, m, d = self.ep, self.ep.world.model, self.ep.world.data
        with ep.world.lock:
            mujoco.mj_setState(m, d, self.start, STATE)
            mujoco.mj_forward(m, d)
        ep.moves, ep.rotation_ok, ep.motions.held = 0, None, None

    def outcome(self, p, pose: str, want: str) -> str:
        """success | released | nothing for a place MOVE at base-frame point p in `pose`."""
        if p is None:
            return "nothing"
        self._restore()
        ep = self.ep
        if pose != want:            # can only fail: released (if the server would plan it) or nothing
            world = ep.world
            held = world.held_object_id()
            offset = np.linalg.inv(world.tcp_pose()) @ world.object_pose(held)
            plan, _, _ = ep._slot_plan(world.export_scene(), p, held, offset, world.tcp_pose(), pose)
            return "nothing" if plan is None else "released"
        act = ep._move_place(p, list(proto.SET_DOWN_DELTAS[pose]))
        if act.did != "place":
            return "nothing"
        return "success" if ep.goal_met() else "released"

    def shares(self, view: str) -> tuple[TrialShares, TrialShares]:
        """(shares with the pose drawn at random, shares with the pose the words ask for)."""
        self._restore()
        obs = views.render(self.ep.world, view)
        want = wanted_pose(self.ep.task)
        h, w = obs.depth_m.shape
        by_pose = {pose: {"success": 0.0, "released": 0.0, "nothing": 0.0} for pose in POSES}
        for _ in range(PIXELS_PER_VIEW):
            p = views.pixel_point(obs, int(self.rng.integers(h)), int(self.rng.integers(w)))
            for pose in POSES:
                by_pose[pose][self.outcome(p, pose, want)] += 1.0
        self._restore()
        drawn = {k: sum(c[k] for c in by_pose.values()) / len(POSES) / PIXELS_PER_VIEW for k in by_pose[want]}
        kept = {k: v / PIXELS_PER_VIEW for k, v in by_pose[want].items()}
        return TrialShares(**drawn), TrialShares(**kept)


def chance_of(task, scene: Scene, seed: int = 0) -> Chance:
    if task.action != "place" or not task.answer:
        raise ValueError(f"{task.id}: expected a shelf place task (an answer set of slots), got {task.action} "
                         f"with answer {task.answer}; pass the place suite's tasks.jsonl")
    ep = Episode(task, scene, [None, None, None])
    try:
        outcomes = PixelOutcomes(ep, np.random.default_rng(seed))
        (world, world_kept), (ego, ego_kept) = outcomes.shares("world"), outcomes.shares("ego")
    finally:
        ep.close()
    slots = [r for r in scene.regions if r.kind == "slot"]
    prior_kept = len(task.answer) / max(len(slots), 1)
    return Chance(task.id, task.family, len(task.answer), len(slots), world, ego, expected_success(world, ego),
                  prior_kept / len(POSES), world_kept, ego_kept, expected_success(world_kept, ego_kept), prior_kept)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", help="served place tasks (espire-server --tasks-out DIR: DIR/tasks.jsonl)")
    ap.add_argument("--json", default=None, help="also write the per-task figures here")
    ap.add_argument("--seed", type=int, default=0, help="seed of the pixels drawn (default 0)")
    args = ap.parse_args(argv)
    out = []
    for path in args.tasks:
        for task, scene_path in tasks.load(path):
            ch = chance_of(task, Scene.load(scene_path), seed=args.seed)
            out.append(ch)
            print(f"{ch.task_id:16s} {ch.family:28s} answer {ch.answer:2d}/{ch.slots:2d}  prior {ch.prior:5.1%}  "
                  f"world s {ch.world.success:5.1%} r {ch.world.released:5.1%}  ego s {ch.ego.success:5.1%} "
                  f"r {ch.ego.released:5.1%}  expected {ch.expected:5.1%}  | pose kept: prior {ch.prior_kept:5.1%} "
                  f"expected {ch.expected_kept:5.1%}", flush=True)
    if out:
        print(f"{len(out)} place tasks ({PIXELS_PER_VIEW} pixels a view, seed {args.seed}): expected random-click success "
              f"{np.mean([c.expected for c in out]):.1%} "
              f"(sum {sum(c.expected for c in out):.2f} tasks), combinatorial prior {np.mean([c.prior for c in out]):.1%}; "
              f"a random clicker keeping the pose the words ask for: {np.mean([c.expected_kept for c in out]):.1%} "
              f"(sum {sum(c.expected_kept for c in out):.2f}), prior {np.mean([c.prior_kept for c in out]):.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dataclasses.asdict(c) for c in out], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
