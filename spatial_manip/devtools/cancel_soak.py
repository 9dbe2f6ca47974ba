"""Cancel at every stage transition, again and again, and measure how far the arm moves after the
goal answers CANCELED (issue 35: a cancel always stops the arm before it is answered).

    spatial-manip cancel-soak --cancels 100 --out outputs/cancel_soak

One sim graph (its own ROS domain); each cycle resets the simulator to the same scene with the arm
at home, sends the demo's pick-and-place instruction and cancels it `delay` s after the goal's
feedback enters the chosen transition (perceiving, reasoning, grasping, moving to pick, moving to
place, verifying, and the pick's and the place's arm once it has started moving), cycling through
the transitions and the delays (0, 20, 60, 150, 400 ms) so the cancels land at each transition,
around the instant an arm goal is sent and accepted, and with the arm in motion.
/joint_states is recorded throughout: the figure is the largest displacement of any joint over
`--settle` s after the CANCELED answer (longer when the simulator publishes late: until 3 samples
came), from the joints at the answer, placed by their stamps. Prints a
line per cancel and the worst; writes cancels.csv. The planner perceives with `--segmenter`:
ground_truth by default, as the demo, a labelled diagnostic choice here: the figure is how the
arm stops after a cancel, and the goals must reach the motion stages (with `classical` the demo
instruction's goals end in GRASP_FAILED or TARGET_NOT_FOUND before moving on this scene).
"""
from __future__ import annotations

import argparse
import collections
import csv
import dataclasses
import json
import sys
import threading
import time

import numpy as np

from spatial_manip.bench.domains import hold_domains
from spatial_manip.bench.demo import DEFAULT_INSTRUCTION, DEFAULT_SCENE_SEED, find_scene
from spatial_manip.bench.sim_session import command_main, prepare_output, refuse, sim_session
from spatial_manip.bench.worker import WorkspaceRevision
from spatial_manip.nodes.convert import joints_from_msg
from spatial_manip.nodes.futures import wait_future
from spatial_manip.nodes.runner import ActionClient
from spatial_manip.perception import segmenter_names
from spatial_manip.sim import sensing

# (stage, how its feedback detail starts, after the arm starts moving): the moments a cancel is
# aimed at. A motion's arm goal is sent within milliseconds of its "moving" feedback, but the arm
# starts only once its transit is planned: the last two aim at the arm in motion.
TRANSITIONS = (("perceiving", "", False), ("reasoning", "", False), ("grasping", "", False),
               ("moving", "picking", False), ("moving", "placing", False), ("verifying", "", False),
               ("moving", "picking", True), ("moving", "placing", True))
STARTED_RAD = 0.01       # the arm has started: a joint moved this far since the stage's feedback
MIN_SAMPLES_AFTER = 3    # joint samples needed after the answer (waited for up to EXTRA_WAIT_S more)
EXTRA_WAIT_S = 10.0
FRESH_S = 0.1            # a joint sample this close before the answer stands for the joints at it
DELAYS_S = (0.0, 0.02, 0.06, 0.15, 0.4)
MOVING_RAD = 1e-3        # a joint moved more than this in the MOVING_WINDOW_S before the cancel: the arm was moving
MOVING_WINDOW_S = 0.3


def transition_name(transition: tuple[str, str, bool]) -> str:
    stage, detail, arm_moving = transition
    return stage + (f":{detail}" if detail else "") + (" (arm moving)" if arm_moving else "")


def schedule(n: int, transitions=TRANSITIONS, delays=DELAYS_S) -> list[tuple[tuple[str, str, bool], float]]:
    """`n` (transition, delay) pairs: every transition at one delay, then the next delay, ..."""
    return [(transitions[i % len(transitions)], delays[(i // len(transitions)) % len(delays)]) for i in range(n)]


def displacement_after(samples: list[tuple[float, np.ndarray]], t0: float, window_s: float) -> float | None:
    """The largest displacement (rad, any joint) within `window_s` after `t0` from the joints at
    `t0`: the last sample at or before it when it is at most FRESH_S old, else the first after it
    (the simulator publishes no joints while a move segment holds its world: a sample from
    before that segment would count the motion before the answer); None without a sample after."""
    before = [(t, q) for t, q in samples if t <= t0]
    after = [q for t, q in samples if t0 < t <= t0 + window_s]
    if not after:
        return None
    ref = before[-1][1] if before and t0 - before[-1][0] <= FRESH_S else after[0]
    return float(np.max(np.abs(np.asarray(after) - ref)))


def displacement_since(samples: list[tuple[float, np.ndarray]], t0: float, t1: float | None = None) -> float:
    """How far (rad, any joint) the arm got from its last sample at or before `t0` to its last
    sample at or before `t1` (now when None)."""
    before = [q for t, q in samples if t <= t0]
    later = [q for t, q in samples if t0 < t <= (t1 if t1 is not None else float("inf"))]
    if not before or not later:
        return 0.0
    return float(np.max(np.abs(later[-1] - before[-1])))


class JointLog:
    """The arm's joints from /joint_states with their stamps (the publisher's wall clock, this
    machine's: a loaded simulator publishes in bursts, and arrival times would misplace them)."""

    def __init__(self, node, topic: str = "/joint_states", keep: int = 6000):
        from sensor_msgs.msg import JointState

        self._to_q, self._lock = joints_from_msg, threading.Lock()
        self._samples: collections.deque = collections.deque(maxlen=keep)
        node.create_subscription(JointState, topic, self._on_joints, 50)

    def _on_joints(self, msg) -> None:
        q = self._to_q(msg)
        if q is not None:
            with self._lock:
                self._samples.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec, np.asarray(q, float)))

    def samples(self) -> list[tuple[float, np.ndarray]]:
        with self._lock:
            return list(self._samples)


@dataclasses.dataclass
class CancelRecord:
    index: int
    transition: str
    delay_s: float
    reached: bool                 # the goal entered the transition (else it ended before)
    status: str                   # the goal's final status: canceled, succeeded, aborted, no answer
    error_code: str
    answer_s: float               # cancel sent -> result
    moving_at_cancel: bool
    motion_after_rad: float | None

    @property
    def counts(self) -> bool:
        return self.reached and self.status == "canceled" and self.motion_after_rad is not None


def cancel_once(node, client, joints: JointLog, instruction: str, transition: tuple[str, str], delay_s: float,
                settle_s: float, index: int, timeout_s: float = 120.0) -> CancelRecord:
    """Send the goal, cancel it `delay_s` after it enters `transition`, wait for the answer and
    `settle_s` more, and measure the joints."""
    from action_msgs.msg import GoalStatus

    from spatial_manip_interfaces.action import ExecuteInstruction

    stage, detail, arm_moving = transition
    name = transition_name(transition)
    reached, entered = threading.Event(), {}

    def on_feedback(msg):
        if msg.feedback.stage == stage and msg.feedback.detail.startswith(detail) and not entered:
            entered["at"] = time.time()
            if not arm_moving:
                reached.set()

    handle = wait_future(client.send_goal_async(ExecuteInstruction.Goal(instruction=instruction),
                                                feedback_callback=on_feedback), 30.0)
    if handle is None or not handle.accepted:
        return CancelRecord(index, name, delay_s, False, "rejected", "", 0.0, False, None)
    result = handle.get_result_async()
    deadline = time.monotonic() + timeout_s
    while not reached.is_set() and not result.done() and time.monotonic() < deadline:
        reached.wait(0.002)
        if arm_moving and "at" in entered and displacement_since(joints.samples(), entered["at"]) > STARTED_RAD:
            reached.set()
    if not reached.is_set():          # ended (or stuck) before the transition: nothing to cancel there
        res = wait_future(result, max(0.0, deadline - time.monotonic())) or wait_future(handle.cancel_goal_async(), 5)
        code = getattr(getattr(res, "result", None), "error_code", "")
        return CancelRecord(index, name, delay_s, False, "ended before", code, 0.0, False, None)
    time.sleep(delay_s)
    t_cancel = time.time()          # wall clock, as the joints' stamps
    handle.cancel_goal_async()
    res = wait_future(result, 30.0)
    t_answer = time.time()
    time.sleep(settle_s)
    # a loaded simulator publishes in bursts: the figure needs joints after the answer, not none
    wait_until = time.monotonic() + EXTRA_WAIT_S
    while sum(t > t_answer for t, _ in joints.samples()) < MIN_SAMPLES_AFTER and time.monotonic() < wait_until:
        time.sleep(0.05)
    samples = joints.samples()
    after = sorted(t for t, _ in samples if t > t_answer)[:MIN_SAMPLES_AFTER]
    window_s = max(settle_s, (after[-1] - t_answer) if after else 0.0)
    status = {GoalStatus.STATUS_CANCELED: "canceled", GoalStatus.STATUS_SUCCEEDED: "succeeded",
              GoalStatus.STATUS_ABORTED: "aborted"}.get(getattr(res, "status", None), "no answer")
    return CancelRecord(index, name, delay_s, True, status, res.result.error_code if res is not None else "",
                        t_answer - t_cancel,
                        displacement_since(samples, t_cancel - MOVING_WINDOW_S, t_cancel) > MOVING_RAD,
                        displacement_after(samples, t_answer, window_s))


def run_cancels(node, scene, instruction: str, plan: list, settle_s: float, seed: int = 0,
                on_record=None, dead=lambda: []) -> list[CancelRecord]:
    """A reset-goal-cancel cycle per (transition, delay) of `plan` (see `schedule`) on the running
    sim graph `node` talks to; `dead()` names the graph's nodes that have exited (the run stops
    with them)."""
    from spatial_manip_interfaces.action import ExecuteInstruction
    from spatial_manip_interfaces.srv import ResetTask

    joints = JointLog(node)
    revision = WorkspaceRevision(node)
    reset = node.create_client(ResetTask, "/sim/reset_task")
    client = ActionClient(node, ExecuteInstruction, "/spatial_manip/execute_instruction")
    deadline = time.monotonic() + 180.0
    while not (reset.service_is_ready() and client.server_is_ready()):
        if dead() or time.monotonic() > deadline:
            raise RuntimeError(f"the sim graph did not come up ({', '.join(dead()) or 'no reset service or action'} "
                               "after 180 s); see graph.log")
        time.sleep(0.5)
    records = []
    try:
        for i, (transition, delay_s) in enumerate(plan):
            if dead():
                raise RuntimeError(f"a node died: {', '.join(dead())}; see graph.log")
            before = revision.value
            res = wait_future(reset.call_async(ResetTask.Request(scene_json=json.dumps(scene.to_dict()), seed=seed)),
                              60.0)
            if res is None or not res.success:
                raise RuntimeError(f"reset failed: {getattr(res, 'message', 'no answer within 60 s')}")
            revision.wait(lambda r: r != before, timeout_s=20.0)   # the planner plans on the reset world
            record = cancel_once(node, client, joints, instruction, transition, delay_s, settle_s, i)
            records.append(record)
            if on_record is not None:
                on_record(record)
    finally:
        client.destroy()
    return records


def summary(records: list[CancelRecord]) -> str:
    counted = [r for r in records if r.counts]
    unmeasured = sum(r.reached and r.status == "canceled" and r.motion_after_rad is None for r in records)
    if not counted:
        return f"[cancel-soak] none of {len(records)} cancels ended CANCELED with joint samples after it"
    worst = max(counted, key=lambda r: r.motion_after_rad)
    slowest = max(counted, key=lambda r: r.answer_s)     # where a cancel still waits on work that ignores it
    moving = sum(r.moving_at_cancel for r in counted)
    answers = np.array([r.answer_s for r in counted])
    return (f"[cancel-soak] {len(counted)} cancels answered CANCELED ({moving} with the arm moving at the cancel) of "
            f"{len(records)} sent; worst joint motion after CANCELED {worst.motion_after_rad:.4f} rad "
            f"({worst.transition} +{worst.delay_s * 1000:.0f} ms); cancel -> answer median "
            f"{np.median(answers):.2f} s, max {slowest.answer_s:.2f} s ({slowest.transition} "
            f"+{slowest.delay_s * 1000:.0f} ms); {unmeasured} CANCELED without joint samples after the answer")


def line(r: CancelRecord) -> str:
    motion = "-" if r.motion_after_rad is None else f"{r.motion_after_rad:.4f} rad"
    return (f"[cancel-soak] {r.index + 1:3d} {r.transition:<30s} +{r.delay_s * 1000:3.0f} ms: {r.status:<12s} "
            f"{r.error_code:<14s} answer {r.answer_s:5.2f} s, moving {'yes' if r.moving_at_cancel else 'no '}, "
            f"after {motion}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cancels", type=int, default=100, help="reset-goal-cancel cycles (default %(default)s)")
    p.add_argument("--seed", type=int, default=DEFAULT_SCENE_SEED,
                   help="first scene seed to try for the demo instruction (default %(default)s: the first from 0 on "
                        "which it plans)")
    p.add_argument("--settle", type=float, default=1.0, help="seconds of joint states after each answer")
    p.add_argument("--segmenter", default="ground_truth",
                   help="planner_node's perception (default %(default)s: a diagnostic; see above)")
    p.add_argument("--domain", type=int, default=None, help="ROS_DOMAIN_ID of the soak's own graph (default: one "
                   "no other measurement on this machine holds)")
    p.add_argument("--out", required=True, help="output directory (cancels.csv, graph.log)")
    sensing.add_arguments(p)


def run(args) -> int:
    if args.cancels < 1 or not args.settle > 0:
        return refuse("cancel-soak", f"--cancels must be >= 1 and --settle > 0, got {args.cancels} and {args.settle}")
    if args.segmenter not in segmenter_names():
        return refuse("cancel-soak", f"unknown --segmenter {args.segmenter!r}; choose one of "
                                     f"{', '.join(segmenter_names())}")
    out = prepare_output(args.out, hold_domains(1, first=args.domain)[0])
    profile = sensing.from_args(args)
    seed, scene = find_scene(DEFAULT_INSTRUCTION, args.seed)
    print(f"[cancel-soak] scene seed {seed}, sensing {profile.label}, segmenter {args.segmenter}, "
          f"{args.cancels} cancels: {DEFAULT_INSTRUCTION!r}", flush=True)
    with sim_session(out, args.segmenter, profile, "spatial_manip_cancel_soak") as (graph, node):
        records = run_cancels(node, scene, DEFAULT_INSTRUCTION, schedule(args.cancels), args.settle, seed,
                              on_record=lambda r: print(line(r), flush=True), dead=graph.dead)
    with open(out / "cancels.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([fld.name for fld in dataclasses.fields(CancelRecord)])
        for r in records:
            w.writerow(dataclasses.astuple(r))
    print(summary(records))
    print(f"[cancel-soak] wrote {out / 'cancels.csv'}")
    return 0


def main(argv=None) -> int:
    return command_main("spatial-manip cancel-soak", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
