"""The joint_trajectory Arm backend against a MuJoCo world in another process that consumes the
same trajectory_msgs/JointTrajectory topic and publishes /joint_states, as gz-sim's
JointTrajectoryController does behind ros_gz_bridge. Run as a script, this file is that consumer."""
import math
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from mujoco_controller import (SIM_TCP_OFFSET, connected, joint_state, move_j_follows_the_plan, mujoco_arm,
                               spin_quietly, start_controller, stop_controller)

CMD_TOPIC = "/test_traj/joint_trajectory"
STATE_TOPIC = "/test_traj/joint_states"
TCP_TOPIC = "/test_traj/tcp_pose"


# --- the consumer (a separate process) ---------------------------------------------------------
def consumer_main(cmd_topic: str = CMD_TOPIC, state_topic: str = STATE_TOPIC) -> None:
    """Play received trajectories on a SimWorld in real time: at each point's time, put the arm at
    that point and run the physics for the interval; publish joints and the MuJoCo TCP at 50 Hz."""
    world = mujoco_arm()
    import rclpy
    from geometry_msgs.msg import PoseStamped
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from spatial_manip.nodes import convert
    from spatial_manip.sim import mjcf

    rclpy.init()
    node = rclpy.create_node("mujoco_trajectory_consumer")
    pub = node.create_publisher(JointState, state_topic, 10)
    tcp_pub = node.create_publisher(PoseStamped, TCP_TOPIC, 10)
    plan: list = []                                   # [(monotonic time, q)], replaced by each message

    def on_trajectory(msg: JointTrajectory) -> None:
        order = [list(msg.joint_names).index(n) for n in mjcf.ARM_JOINTS]
        t0 = time.monotonic()
        plan[:] = [(t0 + p.time_from_start.sec + p.time_from_start.nanosec * 1e-9,
                    np.array([p.positions[i] for i in order])) for p in msg.points]

    def tick() -> None:
        due = [q for t, q in plan if t <= time.monotonic()]
        if due:
            world.pose_arm(due[-1])
            del plan[:len(due)]
        world.step(10)                                # 20 ms of physics, the servos holding the arm
        js = joint_state(world, node)
        pub.publish(js)
        tcp_pub.publish(convert.pose_stamped(world.tcp_pose(), "base", js.header.stamp))

    node.create_subscription(JointTrajectory, cmd_topic, on_trajectory, 10)
    node.create_timer(0.02, tick)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass


# --- the tests ---------------------------------------------------------------------------------
rclpy = pytest.importorskip("rclpy")
import trajectory_msgs.msg  # noqa: E402,F401  (requirements-ros.txt: ros-trajectory-msgs; fail, do not skip)

from spatial_manip.control import base  # noqa: E402,F401  (registers the arm backends)
from spatial_manip.control.trajectory_arm import TrajectoryArm, cosine_duration  # noqa: E402
from spatial_manip.errors import BackendUnavailableError, CanceledError, MotionFailedError  # noqa: E402
from spatial_manip.registry import make  # noqa: E402


class _TcpListener:
    """The MuJoCo world's own TCP pose, on a context of its own."""

    def __init__(self):
        from geometry_msgs.msg import PoseStamped
        from rclpy.executors import SingleThreadedExecutor

        from spatial_manip.nodes import convert

        self.ctx = rclpy.Context()
        rclpy.init(args=[], context=self.ctx)
        self.node = rclpy.create_node("tcp_listener", context=self.ctx)
        self.T = None
        self.node.create_subscription(PoseStamped, TCP_TOPIC,
                                      lambda m: setattr(self, "T", convert.matrix_from_pose_msg(m.pose)), 10)
        self.ex = SingleThreadedExecutor(context=self.ctx)
        self.ex.add_node(self.node)
        self.thread = threading.Thread(target=spin_quietly, args=(self.ex,), daemon=True)
        self.thread.start()

    def close(self):
        self.ex.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        self.ctx.try_shutdown()


@pytest.fixture(scope="module")
def consumer():
    proc = start_controller(__file__)
    yield proc
    stop_controller(proc)


@pytest.fixture(scope="module")
def arm(consumer):
    a = make("arm", "joint_trajectory", command_topic=CMD_TOPIC, state_topic=STATE_TOPIC, model="ur5e",
             tcp_offset=SIM_TCP_OFFSET, connect_timeout_s=40.0, goal_tolerance_rad=0.003)
    yield connected(a, consumer, "the MuJoCo consumer")
    a.close()


def test_move_j_reaches_the_goal_in_the_mujoco_world(arm):
    move_j_follows_the_plan(arm, tolerance_rad=0.003)


def test_move_l_puts_the_mujoco_tcp_on_the_target(arm):
    listener = _TcpListener()
    try:
        T0 = arm.tcp_pose()
        target = T0.copy()
        target[:3, 3] += [0.05, -0.04, 0.03]
        arm.move_l(target, speed=0.2, accel=1.0)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and (listener.T is None):
            time.sleep(0.05)
        time.sleep(0.1)
        # the MuJoCo model's own TCP site, not only our DH forward kinematics, is at the target
        assert np.linalg.norm(listener.T[:3, 3] - target[:3, 3]) < 0.003
        assert np.linalg.norm(arm.tcp_pose()[:3, 3] - target[:3, 3]) < 0.002
    finally:
        listener.close()


def test_stop_cancels_a_running_move_and_holds(arm):
    q0 = arm.joint_positions()
    goal = q0 + np.array([0.8, 0, 0, 0, 0, 0])

    def stop_once_moving():  # the consumer may start late on a loaded machine: time from its start
        deadline = time.monotonic() + 10.0
        while abs(arm.joint_positions()[0] - q0[0]) < 1e-3 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.4)
        arm.stop()

    threading.Thread(target=stop_once_moving, daemon=True).start()
    with pytest.raises(CanceledError):
        arm.move_j(goal, speed=0.5, accel=1.0)
    time.sleep(0.3)
    q_stop = arm.joint_positions()
    time.sleep(0.4)
    moved = abs(q_stop[0] - q0[0])
    assert 0.02 < moved < 0.7, f"stopped after {moved:.3f} rad of 0.8"
    assert np.max(np.abs(arm.joint_positions() - q_stop)) < 0.01, "the arm kept moving after stop()"


def test_losing_the_joint_states_is_a_named_failure(arm, consumer):
    consumer.terminate()
    consumer.wait(5)
    time.sleep(arm.state_timeout_s + 0.3)
    assert not arm.safety_status().ok
    with pytest.raises(MotionFailedError, match="no fresh"):
        arm.move_j(np.zeros(6), speed=1.0, accel=1.0)


def _spin_until(executor, pred, timeout_s):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not pred():
        executor.spin_once(timeout_sec=0.05)
    return pred()


def test_the_gazebo_graphs_arm_node_moves_the_arm_through_the_trajectory_topic():
    """arm_node exactly as config/graphs/gazebo.yaml starts it (config/gazebo/arm.yaml, the
    /joint_states remap), with the MuJoCo consumer on the bridge's ROS topics in Gazebo's place."""
    from rclpy.action import ActionClient
    from sensor_msgs.msg import JointState

    from spatial_manip.bringup.graph import load_graph
    from spatial_manip.bringup.launcher import find_executable
    from spatial_manip.control.config import load_arm_config
    from spatial_manip.control.kinematics import URKinematics
    from spatial_manip.nodes.convert import matrix_from_pose_msg, pose_msg_from_matrix
    from spatial_manip_interfaces.action import ArmMotion

    spec = next(n for n in load_graph("gazebo").nodes if n.name == "arm_node")
    topics = load_arm_config(dict(spec.params)["config_file"])["arm"]["joint_trajectory"]
    sim = start_controller(__file__, topics["command_topic"], topics["state_topic"])
    node_proc = subprocess.Popen([find_executable(spec), *spec.ros_args()], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
    ctx = rclpy.Context()
    rclpy.init(args=[], context=ctx)
    node = rclpy.create_node("gazebo_graph_test", context=ctx)
    ex = rclpy.executors.SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    echo = []
    node.create_subscription(JointState, "/spatial_manip/arm_node/joint_states", echo.append, 10)
    try:
        ac = ActionClient(node, ArmMotion, "/spatial_manip/arm_motion")
        assert _spin_until(ex, ac.server_is_ready, 60), "arm_node did not serve ArmMotion"
        assert _spin_until(ex, lambda: echo, 10), "arm_node's remapped joint-state echo is missing"
        # only the simulator publishes the state the backend reads: the echo went elsewhere
        state = topics["state_topic"]
        assert _spin_until(ex, lambda: node.count_publishers(state) >= 1, 10)
        _spin_until(ex, lambda: False, 0.5)          # time for a second publisher to be discovered
        assert node.count_publishers(state) == 1
        js = echo[-1]
        q = np.array(js.position[:6])
        kin = URKinematics.from_config(load_arm_config(dict(spec.params)["config_file"])["kinematics"])
        target = kin.fk(q)
        target[:3, 3] += [0.03, -0.03, 0.02]
        goal = ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_WAYPOINTS, waypoints=[pose_msg_from_matrix(target)])
        gf = ac.send_goal_async(goal)
        assert _spin_until(ex, gf.done, 20) and gf.result().accepted
        rf = gf.result().get_result_async()
        assert _spin_until(ex, rf.done, 60), "no ArmMotion result"
        result = rf.result().result
        assert result.success, (result.error_code, result.message)
        assert np.linalg.norm(matrix_from_pose_msg(result.final_pose.pose)[:3, 3] - target[:3, 3]) < 0.002
    finally:
        ex.shutdown(timeout_sec=1.0)
        node.destroy_node()
        ctx.try_shutdown()
        for p in (node_proc, sim):
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def test_an_arm_that_does_not_follow_is_a_motion_failure_and_is_told_to_hold():
    """A controller that takes trajectories but never moves (blocked arm): the backend gives up
    settle_timeout_s after the trajectory's end, names the error left, and commands a hold."""
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    ctx = rclpy.Context()
    rclpy.init(args=[], context=ctx)
    node = rclpy.create_node("stuck_controller", context=ctx)
    got = []
    node.create_subscription(JointTrajectory, "/stuck/joint_trajectory", got.append, 10)
    pub = node.create_publisher(JointState, "/stuck/joint_states", 10)
    q_stuck = [0.0, -1.5, 1.5, -1.5, -1.5, 0.0]
    node.create_timer(0.02, lambda: pub.publish(JointState(name=list(base.JOINT_NAMES), position=q_stuck)))
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    threading.Thread(target=spin_quietly, args=(ex,), daemon=True).start()
    arm = TrajectoryArm(command_topic="/stuck/joint_trajectory", state_topic="/stuck/joint_states",
                        settle_timeout_s=0.3, connect_timeout_s=20)
    try:
        arm.connect()
        with pytest.raises(MotionFailedError, match=r"deg from the goal .* /stuck/joint_trajectory"):
            arm.move_j(np.array(q_stuck) + 0.1, speed=1.0, accel=2.0)
        deadline = time.monotonic() + 2
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(got) == 2 and len(got[0].points) > 1          # the motion, then the hold
        assert len(got[1].points) == 1 and np.allclose(got[1].points[0].positions, q_stuck)
    finally:
        arm.close()
        ex.shutdown(timeout_sec=1.0)
        node.destroy_node()
        ctx.try_shutdown()


def test_connect_without_a_simulator_says_what_is_missing():
    a = TrajectoryArm(command_topic="/nobody/joint_trajectory", state_topic="/nobody/joint_states",
                      connect_timeout_s=0.5)
    with pytest.raises(BackendUnavailableError, match="/nobody/joint_states"):
        a.connect()
    assert not a.is_connected


def test_settings_are_checked():
    assert isinstance(TrajectoryArm(), base.Arm)
    with pytest.raises(ValueError, match="unknown joint_trajectory arm settings"):
        make("arm", "joint_trajectory", host="1.2.3.4")
    with pytest.raises(ValueError, match="arm model"):
        TrajectoryArm(model="ur10")
    assert cosine_duration(math.pi, 1.0, 100.0) == pytest.approx(math.pi ** 2 / 2)


if __name__ == "__main__":
    consumer_main(*sys.argv[1:3])
