"""The expected success of a driver that clicks uniformly random pixels through ESPIRE's stock
client flow, estimated pixel by pixel with the server's own rules rather than from whole episodes
(issue 40: the floor beside the measured random rate). Place tasks only (random picks land on
nothing the arm can grasp often enough to matter: 0/24 measured).

ESPIRE's client (espire-eval, BaseDriver.run) plays LOCALIZE up to 3 times on the plain world
view, then MOVE up to 5 times on highlighted views (the world view first, the wrist view after
each miss), then END_TASK; it sends no `rotation_delta` unless SET_TASK named rotation axes, so
a random clicker through it sets the book down as it holds it, upright. Its `analyze` prints both
"Moving success" (the goal met by a MOVE) and "Localizing and moving success" (a LOCALIZE hit an
answer too); ESPIRE's supplementary does not say which one Table 9 reports, so both are given.

Localization: a LOCALIZE is met when the pixel lies on an answer slot (`Episode.localize`), so
with a share `a` of the world view on answers, P(localized) = 1 - (1 - a) ** LOCALIZING_TRIALS.

Execution (A.4: the book's centre in an answer slot and its tilt within 10 degrees of the one
the words ask for, upright when they name none): the server sets the book down only at a pixel inside the
box the highlighted view draws around the placement area, as ESPIRE places only "on the target
area", and releases it at that pixel's 3-D point (episode.py), so one MOVE ends in one of three
ways, shares of the view's pixels:

    s  the book goes into an answer slot in the pose the words ask for  -> success, episode over
    r  it is released in the box but ends elsewhere or tilted           -> failure, episode over
    m  nothing is set down (a pixel outside the box or on the robot, or no way there) -> the next trial

    P(moved) = s_world + m_world * s_ego * (1 + m_ego + ... + m_ego ** (MOVING_TRIALS - 2))

(the wrist view stays the same while nothing moves). The shares come from PIXELS_PER_VIEW pixels
drawn uniformly (seeded), each played by the server's own place (`Episode._move_place`: plan,
motion, release, the world stepped) from the episode's start state, restored between pixels, and
judged by `Episode.goal_met`. A random click's localization and its moves are independent, so
P(localized and moved) = P(localized) * P(moved). The combinatorial prior beside them assumes
every slot equally likely: |answer| / |slots|.

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
from spatial_manip.espire.episode import LOCALIZING_TRIALS, MOVING_TRIALS, Episode
from spatial_manip.scene import Scene
from spatial_manip.sim import tasks

PIXELS_PER_VIEW = 40      # pixels drawn per view and task: each release is played in the simulator
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
    prior: float          # |answer| / |slots|
    answer_share: float   # a: share of the plain world view a LOCALIZE accepts
    localized: float      # P(a LOCALIZE is met within ESPIRE's budget)
    world: TrialShares
    ego: TrialShares
    moved: float          # P(a MOVE meets the goal within ESPIRE's budget)
    localized_and_moved: float


def expected_success(world: TrialShares, ego: TrialShares, trials: int = MOVING_TRIALS) -> float:
    later = sum(ego.nothing ** k for k in range(trials - 1))
    return world.success + world.nothing * ego.success * later


def localized_chance(answer_share: float, trials: int = LOCALIZING_TRIALS) -> float:
    return 1.0 - (1.0 - answer_share) ** trials


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

    def outcome(self, p, on_area: bool) -> str:
        """success | released | nothing for a place MOVE at base-frame point p (its pixel inside the
        drawn box or not) with no rotation_delta."""
        if p is None or not on_area:
            return "nothing"
        self._restore()
        act = self.ep._move_place(p, list(proto.SET_DOWN_DELTAS["upright"]), on_area=True)
        if act.did != "place":
            return "nothing"
        return "success" if self.ep.goal_met() else "released"

    def shares(self, view: str) -> TrialShares:
        self._restore()
        obs = views.render(self.ep.world, view)
        h, w = obs.depth_m.shape
        counts = {"success": 0, "released": 0, "nothing": 0}
        for _ in range(PIXELS_PER_VIEW):
            row, col = int(self.rng.integers(h)), int(self.rng.integers(w))
            counts[self.outcome(views.pixel_point(obs, row, col), self.ep.off_target_area(obs, row, col) is None)] += 1
        self._restore()
        return TrialShares(**{k: v / PIXELS_PER_VIEW for k, v in counts.items()})

    def answer_share(self) -> float:
        """The share of the plain world view a LOCALIZE accepts (the mask `Episode.localize` reads)."""
        self._restore()
        return float(views.goal_mask(views.render(self.ep.world, "world"), *self.ep.goal()).mean())


def chance_of(task, scene: Scene, seed: int = 0) -> Chance:
    if task.action != "place" or not task.answer:
        raise ValueError(f"{task.id}: expected a shelf place task (an answer set of slots), got {task.action} "
                         f"with answer {task.answer}; pass the place suite's tasks.jsonl")
    ep = Episode(task, scene, [None, None, None])
    try:
        outcomes = PixelOutcomes(ep, np.random.default_rng(seed))
        a = outcomes.answer_share()
        world, ego = outcomes.shares("world"), outcomes.shares("ego")
    finally:
        ep.close()
    slots = [r for r in scene.regions if r.kind == "slot"]
    moved, localized = expected_success(world, ego), localized_chance(a)
    return Chance(task.id, task.family, len(task.answer), len(slots), len(task.answer) / max(len(slots), 1),
                  a, localized, world, ego, moved, localized * moved)


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
                  f"localized {ch.localized:5.1%} (answers {ch.answer_share:5.1%} of the view)  "
                  f"world s {ch.world.success:5.1%} r {ch.world.released:5.1%}  ego s {ch.ego.success:5.1%} "
                  f"r {ch.ego.released:5.1%}  moved {ch.moved:5.1%}  localized and moved {ch.localized_and_moved:5.1%}",
                  flush=True)
    if out:
        def total(attr: str) -> str:
            v = [getattr(c, attr) for c in out]
            return f"{np.mean(v):.1%} ({sum(v):.2f}/{len(v)})"
        print(f"{len(out)} place tasks ({PIXELS_PER_VIEW} pixels a view, seed {args.seed}), a random clicker through "
              f"ESPIRE's client (no rotation_delta): moving success {total('moved')}, localizing and moving "
              f"{total('localized_and_moved')}, localizing {total('localized')}; combinatorial prior {total('prior')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dataclasses.asdict(c) for c in out], f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
