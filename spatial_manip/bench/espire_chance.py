"""The expected place success of a driver that clicks uniformly random pixels, computed from the
episodes themselves rather than played (issue 40: the floor beside the measured random rate).

ESPIRE (supplementary A.4) counts a place as done when the book's centre lies in the target
area (an answer slot) and its tilt is within 10 degrees of the expected one (upright unless the
words lay it flat). The server sets the book down where the clicked 3-D point is (episode.py):
in the slot the point lies in, on that slot's free part, if the arm can put it there in the pose
the MOVE chose; anywhere else nothing moves and the trial is spent. So one trial of the random
driver (a uniform pixel, a uniform pose of protocol.SET_DOWN_DELTAS) ends in one of three ways,
whose probabilities are shares of the image's pixels:

    s  the book goes into an answer slot in the pose the words ask for  -> success, episode over
    r  the book is released anywhere else or in the wrong pose          -> failure, episode over
    m  nothing is set down                                              -> the next trial

The random driver clicks the world view first and, after a miss, the wrist ("ego") view, which
stays the same while nothing moves. Over ESPIRE's budget of MOVING_TRIALS:

    P(success) = s_world + m_world * s_ego * (1 + m_ego + ... + m_ego ** (MOVING_TRIALS - 2))

Each pixel is classified with the server's own rule (`Episode._slot_plan`: the slot under the
point, its free part, the fit and the arm's reach), the plan made once per slot, pose and 2 cm
across it; the motion planner itself is not run, so a set-down it would refuse counts as made (this
overstates r and s alike). The combinatorial prior beside it assumes every slot equally likely:
|answer| / |slots| times the share of poses the words accept. Both are also given for a random
clicker that always sends the pose the words ask for (upright unless they lay it flat, as
ESPIRE's place prompt says): the pose draw halves our random driver's chance, not ESPIRE's.

    python -m spatial_manip.bench.espire_chance DIR/tasks.jsonl [...]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import numpy as np

from spatial_manip.espire import protocol as proto
from spatial_manip.espire import views
from spatial_manip.espire.client import FLAT_FAMILY_KEY
from spatial_manip.espire.episode import MOVING_TRIALS, SLOT_MARGIN_M, Episode, free_span
from spatial_manip.geometry import relations as rel
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.scene import Scene
from spatial_manip.sim import tasks

PIXEL_STRIDE = 4          # every 4th pixel of each row and column: 160 x 120 points per view
POSES = sorted(proto.SET_DOWN_DELTAS)
Y_BIN_M = 0.02          # set-down plans are made once per slot, pose and 2 cm across the slot


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
    """What a place MOVE at each pixel of a view would do, by the server's own rule."""

    def __init__(self, ep: Episode):
        self.ep = ep
        self.scene = ep.world.export_scene()
        self.held = ep.world.held_object_id()
        T_now = ep.world.tcp_pose()
        self.T_now = T_now
        self.offset = np.linalg.inv(T_now) @ ep.world.object_pose(self.held)
        self._plans: dict = {}

    def _sets_down(self, slot, y: float, pose: str) -> bool:
        key = (slot.id, round(y / Y_BIN_M), pose)
        if key not in self._plans:
            p = np.array([slot.center[0], round(y / Y_BIN_M) * Y_BIN_M, slot.center[2]])
            plan, _, _ = self.ep._slot_plan(self.scene, p, self.held, self.offset, self.T_now, pose)
            self._plans[key] = plan is not None
        return self._plans[key]

    def shares(self, view: str) -> tuple[TrialShares, TrialShares]:
        """(shares with the pose drawn at random, shares with the pose the words ask for)."""
        obs = views.render(self.ep.world, view)
        answer, want = set(self.ep.task.answer), wanted_pose(self.ep.task)
        by_pose = {pose: {"success": 0.0, "released": 0.0, "nothing": 0.0} for pose in POSES}
        sample = np.zeros(obs.depth_m.shape, bool)
        sample[PIXEL_STRIDE // 2::PIXEL_STRIDE, PIXEL_STRIDE // 2::PIXEL_STRIDE] = True
        total = int(sample.sum())
        pts, _ = base_cloud(obs, sample & np.isfinite(obs.depth_m) & (obs.depth_m > 0))
        slot_of = np.full(len(pts), -1)
        for i, region in reversed(list(enumerate(self.scene.regions))):     # the first region wins, as in _slot_plan
            slot_of[rel.points_in_box(pts, region, SLOT_MARGIN_M)] = i
        for p, i in zip(pts, slot_of):
            slot = self.scene.regions[i] if i >= 0 else None
            for pose in POSES:
                by_pose[pose][self._outcome(slot, p, pose, answer, want)] += 1.0
        for counts in by_pose.values():
            counts["nothing"] += total - len(pts)          # no depth: nothing under the pixel
        drawn = {k: sum(c[k] for c in by_pose.values()) / len(POSES) / total for k in by_pose[want]}
        kept = {k: v / total for k, v in by_pose[want].items()}
        return TrialShares(**drawn), TrialShares(**kept)

    def _outcome(self, slot, p, pose: str, answer: set, want: str) -> str:
        if slot is None:
            return "nothing"
        lo, hi = free_span(slot)
        if not lo - SLOT_MARGIN_M <= p[1] <= hi + SLOT_MARGIN_M or not self._sets_down(slot, float(p[1]), pose):
            return "nothing"
        return "success" if slot.id in answer and pose == want else "released"


def chance_of(task, scene: Scene) -> Chance:
    if task.action != "place" or not task.answer:
        raise ValueError(f"{task.id}: expected a shelf place task (an answer set of slots), got {task.action} "
                         f"with answer {task.answer}; pass the place suite's tasks.jsonl")
    ep = Episode(task, scene, [None, None, None])
    try:
        outcomes = PixelOutcomes(ep)
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
    args = ap.parse_args(argv)
    out = []
    for path in args.tasks:
        for task, scene_path in tasks.load(path):
            ch = chance_of(task, Scene.load(scene_path))
            out.append(ch)
            print(f"{ch.task_id:16s} {ch.family:28s} answer {ch.answer:2d}/{ch.slots:2d}  prior {ch.prior:5.1%}  "
                  f"world s {ch.world.success:5.1%} r {ch.world.released:5.1%}  ego s {ch.ego.success:5.1%} "
                  f"r {ch.ego.released:5.1%}  expected {ch.expected:5.1%}  | pose kept: prior {ch.prior_kept:5.1%} "
                  f"expected {ch.expected_kept:5.1%}", flush=True)
    if out:
        print(f"{len(out)} place tasks: expected random-click success {np.mean([c.expected for c in out]):.1%} "
              f"(sum {sum(c.expected for c in out):.2f} tasks), combinatorial prior {np.mean([c.prior for c in out]):.1%}; "
              f"a random clicker keeping the pose the words ask for: {np.mean([c.expected_kept for c in out]):.1%} "
              f"(sum {sum(c.expected_kept for c in out):.2f}), prior {np.mean([c.prior_kept for c in out]):.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dataclasses.asdict(c) for c in out], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
