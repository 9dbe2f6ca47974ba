"""The ur_driver Arm backend (control/fjt_arm.py) against a control_msgs FollowJointTrajectory
action server in another process that plays each goal's trajectory on the MuJoCo arm, publishes
/joint_states and a speed scaling in percent as the UR driver's broadcasters do, and slows the
trajectory down by that scaling as scaled_joint_trajectory_controller does. Run as a script, this
file is that server. Test-only knobs of the server: the pendant's speed slider (SLIDER_TOPIC, percent)
and an error code the next goal aborts with (FAULT_TOPIC), as a real controller reports one."""
import math
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from mujoco_controller import (SIM_TCP_OFFSET, connected, joint_state, move_j_follows_the_plan, mujoco_arm,
                               start_controller, stop_controller)

NS = os.environ.get("FJT_TEST_NS", "/test_fjt")    # "" by hand: the UR driver's own names, for ros2 launch
ACTION = f"{NS}/scaled_joint_trajectory_controller/follow_joint_trajectory"
STATE_TOPIC = f"{NS}/joint_states"
SCALING_TOPIC = f"{NS}/speed_scaling_state_broadcaster/speed_scaling"
SLIDER_TOPIC = f"{NS}/test_slider_percent"
FAULT_TOPIC = f"{NS}/test_next_error_code"


# --- the action server (a separate process) ----------------------------------------------------
def server_main() -> None:
    world = mujoco_arm()
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionServer, CancelResponse
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.executors import MultiThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64, Int32

    from spatial_manip.sim import mjcf

    rclpy.init()
    node = rclpy.create_node("mujoco_fjt_server")
    group = ReentrantCallbackGroup()
    start = os.environ.get("FJT_TEST_START_Q")          # by hand: where the arm stands at start (6 rad, commas)
    state = {"target": np.array([float(v) for v in start.split(",")]) if start else None, "slider": 100.0, "fault": 0}
    lock = threading.Lock()
    joint_pub = node.create_publisher(JointState, STATE_TOPIC, 10)
    scaling_pub = node.create_publisher(Float64, SCALING_TOPIC, 10)

    def tick() -> None:                 # 50 Hz: the arm goes to the controller's set-point
        with lock:
            if state["target"] is not None:
                world.pose_arm(state["target"])
            world.step(10)
            js = joint_state(world, node)
        joint_pub.publish(js)
        scaling_pub.publish(Float64(data=state["slider"]))

    def execute(goal_handle):
        traj = goal_handle.request.trajectory
        result = FollowJointTrajectory.Result()
        if sorted(traj.joint_names) != sorted(mjcf.ARM_JOINTS):
            result.error_code = FollowJointTrajectory.Result.INVALID_JOINTS
            result.error_string = f"joints {list(traj.joint_names)} are not the controller's {list(mjcf.ARM_JOINTS)}"
            goal_handle.abort()
            return result
        order = [list(traj.joint_names).index(n) for n in mjcf.ARM_JOINTS]
        times = np.array([0.0] + [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in traj.points])
        with lock:
            start = world.joint_positions()[:6].copy()
        points = np.vstack([start] + [np.array(p.positions)[order] for p in traj.points])
        fault, state["fault"] = state["fault"], 0
        tau, last = 0.0, time.monotonic()
        while tau < times[-1]:
            if goal_handle.is_cancel_requested:           # hold where the arm is
                with lock:
                    state["target"] = world.joint_positions()[:6].copy()
                goal_handle.canceled()
                return result
            if fault and tau > times[-1] / 2:
                with lock:
                    state["target"] = world.joint_positions()[:6].copy()
                result.error_code = fault
                result.error_string = "shoulder_lift_joint: position error 0.120 beyond the tolerance 0.050"
                goal_handle.abort()
                return result
            time.sleep(0.01)
            now = time.monotonic()
            tau += (now - last) * state["slider"] / 100.0     # the scaled controller's own clock
            last = now
            q = np.array([np.interp(min(tau, times[-1]), times, points[:, j]) for j in range(6)])
            with lock:
                state["target"] = q
        time.sleep(0.05)
        goal_handle.succeed()
        result.error_code = FollowJointTrajectory.Result.SUCCESSFUL
        return result

    def set_slider(msg) -> None:
        state["slider"] = float(msg.data)

    def set_fault(msg) -> None:
        state["fault"] = int(msg.data)

    ActionServer(node, FollowJointTrajectory, ACTION, execute_callback=execute, callback_group=group,
                 cancel_callback=lambda _g: CancelResponse.ACCEPT)
    node.create_subscription(Float64, SLIDER_TOPIC, set_slider, 10, callback_group=group)
    node.create_subscription(Int32, FAULT_TOPIC, set_fault, 10, callback_group=group)
    node.create_timer(0.02, tick, callback_group=group)
    executor = MultiThreadedExecutor(num_threads=3)
    executor.add_node(node)
    print("fjt server ready", flush=True)
    try:
        executor.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass


if __name__ == "__main__":
    server_main()
    sys.exit(0)


# --- the tests ---------------------------------------------------------------------------------
from spatial_manip.control.fjt_arm import ERROR_ADVICE, STATUS_ABORTED, STATUS_CANCELED, result_error  # noqa: E402


def test_every_error_code_reads_as_one_line_with_what_to_do():
    for code, (name, meaning, todo) in ERROR_ADVICE.items():
        msg = result_error("move_path", "/fjt", STATUS_ABORTED, code, "joint 2 off by 0.1")
        assert name in msg and meaning in msg and todo in msg and "joint 2 off by 0.1" in msg and "\n" not in msg
    assert result_error("move_j", "/fjt", 4, 0, "") is None
    assert "canceled the goal" in result_error("move_j", "/fjt", STATUS_CANCELED, 0, "")
    assert "error code -9" in result_error("move_j", "/fjt", STATUS_ABORTED, -9, "")
    assert "External Control" in result_error("move_j", "/fjt", STATUS_ABORTED, 0, "")


rclpy = pytest.importorskip("rclpy")

from spatial_manip.control import base  # noqa: E402,F401  (registers the arm backends)
from spatial_manip.control.trajectory_arm import cosine_duration  # noqa: E402
from spatial_manip.errors import CanceledError, MotionFailedError  # noqa: E402
from spatial_manip.registry import make  # noqa: E402


@pytest.fixture(scope="module")
def msgs_env():
    from tf2_msgs_build import control_msgs_env, use_in_this_process

    env = control_msgs_env()      # control_msgs is no PyPI wheel: a test-only build of its message
    use_in_this_process(env)
    return env


@pytest.fixture(scope="module")
def server(msgs_env):
    proc = start_controller(__file__, env=msgs_env)
    yield proc
    stop_controller(proc)


class _Knobs:
    """The test's hands on the server: the pendant's slider and the next goal's error code."""

    def __init__(self):
        from std_msgs.msg import Float64, Int32

        self.ctx = rclpy.Context()
        rclpy.init(args=[], context=self.ctx)
        self.node = rclpy.create_node("fjt_test_knobs", context=self.ctx)
        self.slider = self.node.create_publisher(Float64, SLIDER_TOPIC, 10)
        self.fault = self.node.create_publisher(Int32, FAULT_TOPIC, 10)
        self.Float64, self.Int32 = Float64, Int32

    def _publish(self, pub, msg, arm, check) -> None:
        deadline = time.monotonic() + 10
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        while time.monotonic() < deadline:
            pub.publish(msg)
            time.sleep(0.1)
            if check():
                return
        pytest.fail(f"the server did not take {msg} within 10 s")

    def set_slider(self, percent: float, arm) -> None:
        self._publish(self.slider, self.Float64(data=percent), arm, lambda: abs(arm.speed_scaling - percent / 100) < 1e-6)

    def next_error(self, code: int) -> None:
        deadline = time.monotonic() + 10
        while self.fault.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.fault.publish(self.Int32(data=code))
        time.sleep(0.3)       # reliable, and the server subscribes before it serves: one message is enough

    def close(self):
        self.node.destroy_node()
        self.ctx.try_shutdown()


@pytest.fixture(scope="module")
def arm(server):
    a = make("arm", "ur_driver", action_name=ACTION, state_topic=STATE_TOPIC, speed_scaling_topic=SCALING_TOPIC,
             model="ur5e", tcp_offset=SIM_TCP_OFFSET, connect_timeout_s=60.0, goal_tolerance_rad=0.003,
             settle_timeout_s=0.5, goal_time_tolerance_s=0.5, stop_timeout_s=3.0)
    yield connected(a, server, "the MuJoCo FollowJointTrajectory server")
    a.close()


@pytest.fixture(scope="module")
def knobs(arm):
    k = _Knobs()
    yield k
    k.set_slider(100.0, arm)
    k.close()





@pytest.mark.ros
def test_a_goal_completes_on_the_mujoco_arm(arm):
    q0 = move_j_follows_the_plan(arm, tolerance_rad=0.01)
    back = np.vstack([q0 + np.array([0.1, -0.05, 0.05, 0.05, 0.1, -0.1]), q0])
    arm.move_path(back, speed=1.0, accel=2.0)
    assert np.max(np.abs(arm.joint_positions() - q0)) < 0.01


@pytest.mark.ros
def test_stop_cancels_the_goal_and_the_arm_stands_still(arm):
    q0 = arm.joint_positions()
    goal = q0 + np.array([0.8, 0.0, 0.0, 0.0, 0.0, 0.0])        # about 1.9 s at 0.6 rad/s
    done: dict = {}

    def run():
        try:
            arm.move_j(goal, speed=0.6, accel=1.0)
            done["error"] = None
        except Exception as e:            # noqa: BLE001  (the test looks at which one)
            done["error"] = e
        done["t"] = time.monotonic()

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(0.7)
    t_stop = time.monotonic()
    arm.stop()
    worker.join(10)
    assert isinstance(done.get("error"), CanceledError), done
    assert done["t"] - t_stop < 3.0                       # cancel acknowledged and the arm stood still in time
    q_stop = arm.joint_positions()
    assert 0.05 < q_stop[0] - q0[0] < 0.75                   # stopped on the way, not at the goal
    time.sleep(0.5)
    assert np.max(np.abs(arm.joint_positions() - q_stop)) < 0.01   # and stays there
    arm.move_j(q0, speed=1.0, accel=2.0)


@pytest.mark.ros
def test_an_error_code_becomes_its_message(arm, knobs):
    q0 = arm.joint_positions()
    knobs.next_error(-4)
    with pytest.raises(MotionFailedError) as e:
        arm.move_j(q0 + np.array([0.3, 0, 0, 0, 0, 0]), speed=1.0, accel=2.0)
    assert "PATH_TOLERANCE_VIOLATED" in e.value.message and "path tolerance" in e.value.message
    assert "shoulder_lift_joint" in e.value.message and "\n" not in e.value.message
    arm.move_j(q0, speed=1.0, accel=2.0)                    # the next goal runs normally


@pytest.mark.ros
def test_a_slider_at_half_speed_lengthens_the_motion_and_does_not_fail_it(arm, knobs):
    knobs.set_slider(50.0, arm)
    q0 = arm.joint_positions()
    goal = q0 + np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.2])
    nominal = cosine_duration(1.2, 0.6, 1.0)                 # about 3.1 s; the budget is nominal + 1 s
    t = time.monotonic()
    arm.move_j(goal, speed=0.6, accel=1.0)                   # would time out if scaling were ignored
    took = time.monotonic() - t
    assert np.max(np.abs(arm.joint_positions() - goal)) < 0.01
    assert took > 1.8 * nominal, (took, nominal)
    assert math.isclose(arm.speed_scaling, 0.5)
    knobs.set_slider(100.0, arm)
    arm.move_j(q0, speed=1.0, accel=2.0)


@pytest.mark.ros
@pytest.mark.slow
def test_arm_node_with_the_ur_driver_backend_homes_the_arm_and_leaves_joint_states_to_the_driver(arm, msgs_env, tmp_path):
    """arm_node (its own process, -p arm.backend:=ur_driver) serves an ArmMotion HOME goal through the
    same FollowJointTrajectory server, and publishes no arm joint states of its own."""
    import yaml
    from rclpy.action import ActionClient
    from sensor_msgs.msg import JointState

    from node_process import stop
    from spatial_manip.control.config import load_arm_config
    from spatial_manip_interfaces.action import ArmMotion

    cfg = load_arm_config(None, {"arm.backend": "sim"})      # the simulated cell's envelope, TCP and home
    home = arm.joint_positions() + np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.3])
    cfg["arm"].update(backend="ur_driver", gripper={"backend": "none"},
                      ur_driver={"action_name": ACTION, "state_topic": STATE_TOPIC, "speed_scaling_topic": SCALING_TOPIC})
    cfg["primitives"]["home_q"] = [float(v) for v in home]
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(cfg))
    node = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.arm_node", "--ros-args", "-r", "__ns:=/test_fjt_node",
                             "-p", f"config_file:={path}"], env={**os.environ, **msgs_env, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    ctx = rclpy.Context()
    rclpy.init(args=[], context=ctx)
    try:
        client_node = rclpy.create_node("fjt_arm_node_client", context=ctx)
        own_states: list = []
        client_node.create_subscription(JointState, "/test_fjt_node/joint_states", own_states.append, 10)
        client = ActionClient(client_node, ArmMotion, "/test_fjt_node/spatial_manip/arm_motion")
        executor = rclpy.executors.SingleThreadedExecutor(context=ctx)
        executor.add_node(client_node)

        def spin_until(future, timeout_s):
            deadline = time.monotonic() + timeout_s
            while not future.done() and time.monotonic() < deadline and node.poll() is None:
                executor.spin_once(timeout_sec=0.1)
            return future.done()

        deadline = time.monotonic() + 60
        while not client.server_is_ready() and time.monotonic() < deadline and node.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        assert client.server_is_ready(), f"arm_node did not come up: {stop(node)}"
        sent = client.send_goal_async(ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME, speed_scale=0.5))
        assert spin_until(sent, 10) and sent.result().accepted
        result = sent.result().get_result_async()
        assert spin_until(result, 60), f"no result: {stop(node)}"
        res = result.result().result
        assert res.success, (res.error_code, res.message)
        assert np.max(np.abs(arm.joint_positions() - home)) < 0.01
        assert own_states == []          # the driver (here: the server) publishes the arm's joints
        arm.move_j(home - np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.3]), speed=1.0, accel=2.0)
    finally:
        ctx.try_shutdown()
        stop(node)
