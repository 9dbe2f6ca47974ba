"""planner_node: the ExecuteInstruction action server. A thin adapter: it validates goals,
runs one at a time through the ROS-free `InstructionPipeline` and `Agent`, and maps feedback,
cancel and the outcome onto the action. The agent's ROS I/O lives in `planner_ports.py`."""
from __future__ import annotations

import sys

import json
import threading
import time
from dataclasses import fields, replace

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from spatial_manip.nodes.parameters import declare_parameters
from spatial_manip.nodes.runner import spin_node
from std_msgs.msg import String

from spatial_manip.agent import Agent, AgentConfig
from spatial_manip.heap import GoalMemoryTrace
from spatial_manip.errors import ConfigError, ErrorCode, InvalidGoalError
from spatial_manip.heap import release_freed_memory
from spatial_manip.perception.look_ahead import LookAhead, LookAheadConfig
from spatial_manip.perception import load_segmenter_config
from spatial_manip.paths import params_file
from spatial_manip.registry import backend_names
from spatial_manip.nodes.convert import pose_msg_from_matrix, pose_stamped
from spatial_manip.nodes.planner_ports import PlannerPorts
from spatial_manip.pipeline import InstructionPipeline, Outcome, validate_goal
from spatial_manip.trace import prune_traces
from spatial_manip_interfaces.action import ExecuteInstruction

ACTION_NAME = "spatial_manip/execute_instruction"
# segmenters whose look does not depend on the instruction, so one look serves any goal; any other
# (an open-vocabulary detector asked for the words) gets a look of its own per goal
SEGMENTERS_WITHOUT_WORDS = ("classical", "ground_truth")
# a goal's clean-up (old traces pruned, freed memory handed back: issue 35) runs this long after its
# result was handed to the action server, on a thread of its own: nothing of it is the person's to wait
# for (3-28 ms a goal, latency-bench seed 71 at load 10-13; more with many traces kept). The memory is
# not handed back when a new goal has started by then (its own end does it)
AFTER_GOAL_S = 0.25
# how long a stop waits for the last goal's trace images (drawn beside the goal; the process ends
# after `close`, runner.end_process): an image takes 0.15-0.45 s under load
DRAWN_WAIT_S = 1.0


def _one_of(key: str, name: str, names: list[str]) -> None:
    if name not in names:
        raise ConfigError(f"parameter {key}: {name!r} is not one of {', '.join(names)}")


class PlannerNode(Node):
    def __init__(self):
        super().__init__("planner_node")
        self.group = ReentrantCallbackGroup()
        self.p = declare_parameters(self, on_change=self._on_parameter)   # spatial_manip/parameters.py
        if self.p["segmenter"]:
            _one_of("segmenter", self.p["segmenter"], backend_names("segmenter"))
        self.p["segmenter"], segmenter_config = load_segmenter_config(
            self.p["perception_config_file"] or params_file("perception.yaml"), self.p["segmenter"])
        _one_of("planner", self.p["planner"], backend_names("planner"))   # the model backends are built at the first goal
        if self.p["trace_keep_goals"] < 0 or self.p["trace_keep_mb"] < 0:
            raise ConfigError(f"parameters trace_keep_goals/trace_keep_mb must be 0 (no limit) or positive, got "
                              f"{self.p['trace_keep_goals']}/{self.p['trace_keep_mb']}")
        looks_config = LookAheadConfig(max_age_s=float(self.p["look_max_age_s"]),
                                       cpu_share=float(self.p["look_cpu_share"]))
        self.ports = PlannerPorts(self, self.group, self.p)
        self._busy = threading.Lock()
        self._cancel = self.ports.goal_cancel
        self._stopping = False
        self.agent = Agent(self.ports, AgentConfig.from_params(self.p), warn=self.get_logger().warn,
                           segmenter_config=segmenter_config, interrupt=self._look_unwanted)
        self.looks = LookAhead(self.agent, looks_config, joints=self.ports.joint_positions,
                               workspace=lambda: self.ports.workspace()[0],
                               words_matter=self.p["segmenter"] not in SEGMENTERS_WITHOUT_WORDS)
        self.pipeline = InstructionPipeline(self.agent, trace_dir=None, looks=self.looks)
        self.ports.on_camera_wait = self._camera_wait
        self.ports.goal_waiting = self._busy.locked
        # looking ahead while idle, so that a goal can reason at once on a fresh look (issue 42)
        self._stop_looking = threading.Event()
        self._looker = threading.Thread(target=self.looks.idle_loop, name="look_ahead", daemon=True,
                                        args=(self._may_look_ahead, self._stop_looking, self.get_logger().warn,
                                              self.get_logger().info))
        self._looker.start()
        # the segmenter, the arm's model and the point-cloud library, built beside start-up rather
        # than by the first goal's look (which waits for this if it comes first)
        threading.Thread(target=self._prepare, name="prepare", daemon=True).start()
        self._memtrace = GoalMemoryTrace.from_env()   # off unless SPATIAL_MANIP_MEMTRACE names a file
        self._log_pub = self.create_publisher(String, "spatial_manip/instruction_log", 10)
        self._server = ActionServer(
            self, ExecuteInstruction, ACTION_NAME, execute_callback=self._execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=self._on_cancel, callback_group=self.group)
        self.get_logger().info(f"ready: {ACTION_NAME}")

    def _prepare(self) -> None:
        try:
            self.agent.prepare()
        except Exception as e:  # the first goal builds them again, and says what fails
            self.get_logger().warn(f"could not prepare perception at start-up ({type(e).__name__}: {e}); "
                                   "the first goal's look will")

    def _camera_wait(self, note: str) -> None:
        """A look waits once more for a slow camera: logged, and the running goal's client told."""
        self.get_logger().warn(note)
        self.pipeline.note(note)

    def _look_unwanted(self) -> bool:
        """A look serves no one once the node stops, or once the goal running (the one it is for,
        or one waiting behind an idle look) was canceled."""
        return self._stopping or (self._cancel.is_set() and self._busy.locked())

    def _may_look_ahead(self) -> bool:
        """No goal runs and the camera's images, intrinsics and pose have all come."""
        return not self._busy.locked() and not self.ports.buffer.missing()

    def _on_parameter(self, name: str, value) -> None:
        """A run-time change (`ros2 param set`): the ports read self.p at each use; the agent's
        own settings are a frozen copy, replaced here."""
        if name in {f.name for f in fields(AgentConfig)}:
            self.agent.config = replace(self.agent.config, **{name: value})
        self.get_logger().info(f"parameter {name} set to {value!r}")

    def _on_cancel(self, _goal_handle) -> CancelResponse:
        self._cancel.set()
        return CancelResponse.ACCEPT

    def _execute(self, goal_handle):
        g = goal_handle.request
        if not self._busy.acquire(blocking=False):
            # A second goal while one runs: refused with a code and a reason the client can read.
            goal_handle.abort()
            return self._result(Outcome(False, ErrorCode.BUSY.value,
                                        "another instruction is running; wait for it or cancel it first"))
        try:
            self._cancel.clear()
            try:
                goal = validate_goal(g.instruction, int(g.task_kind), g.dry_run, int(g.max_attempts),
                                     default_attempts=int(self.p["default_max_attempts"]))
            except InvalidGoalError as e:
                goal_handle.abort()
                return self._log(g, self._result(Outcome(False, e.code.value, e.message)))

            def feedback(stage, detail, progress, attempt):
                fb = ExecuteInstruction.Feedback(stage=stage.value, detail=detail,
                                                 progress=float(progress), attempt=int(attempt))
                goal_handle.publish_feedback(fb)

            self.pipeline.feedback = feedback
            self.pipeline.trace_dir = self.ports.new_trace_dir()
            outcome = self.pipeline.run(goal, self._cancel)
            if self._stopping and not outcome.success:
                outcome.message = "the planner node is stopping (the graph was shut down): " + outcome.message
            if outcome.error_code == ErrorCode.CANCELED.value and goal_handle.is_cancel_requested:
                goal_handle.canceled()
            elif outcome.success:
                goal_handle.succeed()
            else:
                goal_handle.abort()
            return self._log(g, self._result(outcome))
        finally:
            self._busy.release()
            cleanup = threading.Timer(AFTER_GOAL_S, self._after_goal)
            cleanup.daemon = True
            cleanup.start()

    def _after_goal(self) -> None:
        """Once a goal's result has gone out: prune old traces, and hand back the freed memory
        (a goal's perception and planning free ~50-100 MB that glibc keeps fragmented: without that
        the node grew 388 -> 559 MB over 24 soak goals, issue 35) unless a new goal runs already."""
        t0 = time.monotonic()
        try:
            prune_traces(self.ports.trace_root, int(self.p["trace_keep_goals"]), float(self.p["trace_keep_mb"]))
            if not self._busy.locked():     # a goal that started since would wait for no one: it runs beside
                release_freed_memory()
                if self._memtrace is not None:
                    self._memtrace.after_goal()
        except Exception as e:  # a timer thread: nothing may escape it
            self.get_logger().warn(f"cleaning up after a goal failed ({type(e).__name__}: {e})")
        else:
            self.get_logger().info(f"after the goal: traces pruned and memory handed back in "
                                   f"{1e3 * (time.monotonic() - t0):.0f} ms")

    def finish(self):
        """On shutdown: end the running goal (the pipeline stops the arm) so its client gets a
        result; returns a predicate that is true once no goal runs."""
        self._stopping = True
        self._stop_looking.set()
        self._cancel.set()
        return lambda: not self._busy.locked()

    def _result(self, o: Outcome) -> ExecuteInstruction.Result:
        r = ExecuteInstruction.Result(success=o.success, error_code=o.error_code, message=o.message,
                                      target_ids=list(o.target_ids), trace_path=o.trace_path,
                                      attempts=int(o.attempts))
        stamp = self.get_clock().now().to_msg()
        if o.target_pose is not None:
            r.target_pose = pose_stamped(o.target_pose, "base", stamp)
        if o.grasp is not None:
            r.grasp.pose = pose_msg_from_matrix(o.grasp)
            r.grasp.score, r.grasp.width = float(o.grasp_score), float(o.grasp_width)
        return r

    def _log(self, goal, result):
        """Publish goal and result as one JSON line, so `spatial-manip record` keeps them."""
        self._log_pub.publish(String(data=json.dumps({
            "time": time.time(), "instruction": goal.instruction, "task_kind": int(goal.task_kind),
            "dry_run": bool(goal.dry_run), "max_attempts": int(goal.max_attempts),
            "success": result.success, "error_code": result.error_code, "message": result.message,
            "target_ids": list(result.target_ids), "trace_path": result.trace_path,
            "target_pose": [result.target_pose.pose.position.x, result.target_pose.pose.position.y,
                            result.target_pose.pose.position.z]})))
        return result


    def close(self) -> None:
        self._stop_looking.set()
        self._looker.join(timeout=2.0)
        # start-up's preparation is not waited for: the process ends after `close` without the
        # interpreter's teardown (runner.end_process), whose exit while preparation was inside a native
        # library that starts threads (open3d) aborted it ("terminate called without an active exception")
        try:
            self.pipeline.wait_drawn(timeout_s=DRAWN_WAIT_S)
        except TimeoutError:
            self.get_logger().warn(f"the last goal's trace images were not all written within {DRAWN_WAIT_S:g} s "
                                   "of the stop; its trace.json says images_pending and lists none of them")
        finally:
            self.ports.close()      # the arm's stop: runs whatever the waits above did


def main(args=None) -> int:
    return spin_node(PlannerNode, args=args, threads=4, close=lambda n: n.close(),
                     finish=lambda n: n.finish())


if __name__ == "__main__":
    sys.exit(main())
