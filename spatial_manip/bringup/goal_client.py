"""A real ExecuteInstruction action client: send one goal, stream feedback, return the result.
Used by `spatial-manip goal`, the demo and the benchmark runner."""
from __future__ import annotations

import contextlib
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Callable

from spatial_manip.nodes.futures import wait_future

KINDS = {"auto": 0, "pick": 1, "place": 2, "pick_and_place": 3}
ACTION_NAME = "/spatial_manip/execute_instruction"   # planner_node's, in the root namespace


@contextlib.contextmanager
def spinning_node(name: str, *, threads: int = 2):
    """An rclpy node in its own context, spun by a background thread so callers can block on
    futures; the executor, node and context are shut down on exit."""
    import rclpy
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    ctx = rclpy.Context()
    # rclpy's own Ctrl-C handler would shut the context down at once, and a running goal could
    # then not be canceled; Ctrl-C stays a KeyboardInterrupt in the caller's thread instead
    rclpy.init(context=ctx, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(name, context=ctx)
    ex = SingleThreadedExecutor(context=ctx) if threads == 1 else MultiThreadedExecutor(num_threads=threads, context=ctx)
    ex.add_node(node)
    spinner = threading.Thread(target=ex.spin, daemon=True)
    spinner.start()
    try:
        yield node
    finally:
        ex.shutdown()
        # the node is destroyed only once the spin thread is out of its wait set (or clearly
        # stuck): destroying it under a waiting executor fails there with 'action client
        # pointer is invalid' (seen with a 5 s join on a loaded CI machine)
        spinner.join(timeout=30.0)
        node.destroy_node()
        rclpy.try_shutdown(context=ctx)


@dataclass
class GoalReport:
    accepted: bool
    status: str = ""                       # succeeded | aborted | canceled | rejected | timeout | server_lost
    result: object | None = None           # ExecuteInstruction.Result
    feedback: list = field(default_factory=list)
    elapsed_s: float = 0.0
    interrupted: bool = False              # Ctrl-C canceled the goal
    error: str = ""                        # why there is no result (server_lost, timeout)


CANCEL_WAIT_S = 30.0   # how long Ctrl-C waits for the server to stop the arm and answer


def _cancel_and_wait(handle, result_future, watch: "ServerWatch"):
    """Ask the server to cancel and wait for its final result (None if it never answers, or
    stops answering: `watch`). A second Ctrl-C while waiting is ignored: leaving now would hide
    whether the arm stopped."""
    print("\ncanceling the goal (the arm stops); waiting for the server...", flush=True)
    handle.cancel_goal_async()      # the result says how the goal ended; the cancel's own answer adds nothing
    return _wait_ignoring_interrupts(result_future, CANCEL_WAIT_S, watch)


def _wait_ignoring_interrupts(future, timeout_s: float, watch: "ServerWatch | None" = None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            res = wait_future(future, min(0.2, max(0.0, deadline - time.monotonic())))
        except KeyboardInterrupt:
            continue
        if res is not None:
            return res
        if watch is not None and watch.silent_for() > SERVER_LOST_S:
            return None
    return None


LOST_ANSWER_S = 5.0   # feedback this long without the server's answer to the goal: the answer was lost
SERVER_LOST_S = 6.0   # no answer to any liveness probe (or feedback) for this long: the server is gone
PROBE_PERIOD_S = 1.0


class ServerWatch:
    """Whether the action server still answers while a goal runs. DDS forgets a process killed
    with -9 only when its discovery lease ends (20 s with Fast DDS), and the server then sends
    no result ever: so every PROBE_PERIOD_S the watch asks the server to cancel a goal id nobody
    ever sent (the action protocol answers that at once with "unknown goal" and cancels nothing:
    a non-zero id with a zero stamp names that goal alone). Feedback counts as an answer too.
    Probes are not retried but re-sent, so one lost reply costs nothing."""

    def __init__(self, client):
        from rclpy.action.client import ClientGoalHandle
        from unique_identifier_msgs.msg import UUID

        nobody = UUID(uuid=list(uuid.uuid4().bytes))
        answer = client._action_type.Impl.SendGoalService.Response(accepted=True)
        self._client, self._nobodys_goal = client, ClientGoalHandle(client, nobody, answer)
        self.last_answer = self._last_probe = time.monotonic()

    def heard(self, *_args) -> None:
        self.last_answer = time.monotonic()

    def silent_for(self) -> float:
        """Seconds since the server last answered; sends the next probe when one is due."""
        now = time.monotonic()
        if now - self._last_probe >= PROBE_PERIOD_S:
            self._last_probe = now
            self._client._cancel_goal_async(self._nobodys_goal).add_done_callback(self.heard)
        return now - self.last_answer


def _wait_result(result_future, timeout_s: float, watch: ServerWatch):
    """The goal's result, or None after `timeout_s`; ServerLost once the server is silent for
    SERVER_LOST_S."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        res = wait_future(result_future, min(0.2, max(0.0, deadline - time.monotonic())))
        if res is not None:
            return res
        silent = watch.silent_for()
        if silent > SERVER_LOST_S:
            raise ServerLost(f"the action server stopped answering {silent:.0f} s ago (its node was killed or "
                             "hangs; is planner_node running?); the goal's outcome is unknown")
    return None


class ServerLost(Exception):
    """The action server vanished while the goal ran."""


def _accepted(client, sent, running: dict, timeout_s: float):
    """The goal's handle once the server answers; None if it does not within `timeout_s`. A
    goal whose feedback arrives but whose answer does not (DDS can drop a service reply when the
    reply's reader matched late, on a loaded machine) was accepted: its handle is made from the
    feedback's goal id, so the result is still fetched."""
    from rclpy.action.client import ClientGoalHandle

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if sent.done():
            return sent.result()
        time.sleep(0.05)
        if "since" in running and time.monotonic() - running["since"] > LOST_ANSWER_S:
            answer = client._action_type.Impl.SendGoalService.Response(accepted=True)
            return ClientGoalHandle(client, running["goal_id"], answer)
    return None


_clients_lock = threading.Lock()
_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # node -> {action name: client}


def _action_client(node, action_name: str):
    """One ExecuteInstruction client per node and action name, kept for the node's life. A
    client destroyed after each goal while another thread spins the node can hand the executor
    a freed handle ('action client pointer is invalid'): its spin thread dies and every later
    goal hangs (a bench worker at b468744, after 7 of 16 place episodes)."""
    # ROS (rclpy through nodes.runner, the action types) only when a goal is sent
    from spatial_manip.nodes.runner import ActionClient

    from spatial_manip_interfaces.action import ExecuteInstruction

    with _clients_lock:
        per_node = _clients.setdefault(node, {})
        if action_name not in per_node:
            per_node[action_name] = ActionClient(node, ExecuteInstruction, action_name)
        return per_node[action_name]


def send_goal(node, instruction: str, *, kind: str | int = "auto", dry_run: bool = False,
              max_attempts: int = 0, timeout_s: float = 180.0, server_timeout_s: float = 20.0,
              on_feedback: Callable | None = None, cancel_after_s: float | None = None,
              action_name: str = ACTION_NAME) -> GoalReport:
    """Send a goal from `node` (spun by the caller's executor in another thread).
    `max_attempts` 0 leaves the server's configured default. Ctrl-C while the goal runs cancels
    it and waits for the server's answer, so the arm is stopped before the caller exits
    (`report.interrupted`)."""
    # ROS (the action types) only when a goal is sent
    from action_msgs.msg import GoalStatus

    from spatial_manip_interfaces.action import ExecuteInstruction

    client = _action_client(node, action_name)
    if not client.wait_for_server(timeout_sec=server_timeout_s):
        raise TimeoutError(f"no ExecuteInstruction server at {action_name} within {server_timeout_s:g} s")
    goal = ExecuteInstruction.Goal(instruction=instruction, task_kind=KINDS.get(kind, kind) if isinstance(kind, str) else kind,
                                   dry_run=dry_run, max_attempts=max_attempts)
    report = GoalReport(accepted=False)
    t0 = time.monotonic()
    running: dict = {}      # the goal's id and when its first feedback came

    watch = ServerWatch(client)

    def fb(msg):
        watch.heard()
        running.setdefault("goal_id", msg.goal_id)
        running.setdefault("since", time.monotonic())
        report.feedback.append(msg.feedback)
        if on_feedback:
            on_feedback(msg.feedback)

    sent = client.send_goal_async(goal, feedback_callback=fb)
    try:
        handle = _accepted(client, sent, running, server_timeout_s)
    except KeyboardInterrupt:
        # the server may have taken the goal already (its feedback can come before the
        # answer): learn whether it did, so a running goal is canceled, never left behind
        report.interrupted = True
        handle = _wait_ignoring_interrupts(sent, CANCEL_WAIT_S)
    if handle is None or not handle.accepted:
        report.status = "rejected"
        return report
    report.accepted = True
    result_future = handle.get_result_async()
    try:
        if report.interrupted:
            raise KeyboardInterrupt
        if cancel_after_s is not None:
            time.sleep(cancel_after_s)
            wait_future(handle.cancel_goal_async(), 10.0)
        res = _wait_result(result_future, timeout_s, watch)
    except KeyboardInterrupt:
        report.interrupted = True
        res = _cancel_and_wait(handle, result_future, watch)
    except ServerLost as e:
        report.elapsed_s, report.status, report.error = time.monotonic() - t0, "server_lost", str(e)
        return report
    report.elapsed_s = time.monotonic() - t0
    if res is None:
        report.status, report.error = "timeout", f"no result within {timeout_s:g} s; the goal was canceled"
        wait_future(handle.cancel_goal_async(), 5.0)
        return report
    report.result = res.result
    report.status = {GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_ABORTED: "aborted",
                     GoalStatus.STATUS_CANCELED: "canceled"}.get(res.status, str(res.status))
    return report
