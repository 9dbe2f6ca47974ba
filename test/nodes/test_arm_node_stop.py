"""arm_node stopped by Ctrl-C mid-motion, on the joint_trajectory backend against a MuJoCo
controller in another process (test/control/test_trajectory_arm.py run as a script): the stop
reaches the controller as a hold, though the backend talks to it through an rclpy context of its
own, which rclpy's signal handler used to shut down before the node's shutdown ran."""
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from machine_load import scaled_by_load  # noqa: E402
from mujoco_controller import SIM_TCP_OFFSET, start_controller, stop_controller  # noqa: E402
from ros_helpers import arm_motion_client  # noqa: E402
from spatial_manip.sim.world import HOME_Q  # noqa: E402
from spatial_manip_interfaces.action import ArmMotion  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.ros]

CMD_TOPIC = "/test_arm_stop/joint_trajectory"
STATE_TOPIC = "/test_arm_stop/joint_states"
CONSUMER = Path(__file__).parents[1] / "control" / "test_trajectory_arm.py"
REPO = Path(__file__).parents[2]
TURN_RAD = 1.2       # HOME turns the base this far, at SLOW_RAD_S: several seconds of motion
SLOW_RAD_S = 0.3


def arm_config(tmp_path: Path) -> Path:
    """The Gazebo variant's arm (joint_trajectory backend) on the test's topics, with the MuJoCo
    model's TCP and a HOME that is a slow turn of the base from where the MuJoCo arm stands."""
    cfg = yaml.safe_load((REPO / "config" / "gazebo" / "arm.yaml").read_text())
    cfg["arm"]["joint_trajectory"].update(command_topic=CMD_TOPIC, state_topic=STATE_TOPIC, connect_timeout_s=60.0)
    cfg["kinematics"]["tcp_offset"] = list(SIM_TCP_OFFSET)
    home = np.array(HOME_Q, float)
    home[0] += TURN_RAD
    cfg["primitives"].update(home_q=home.tolist(), joint_speed_rad_s=SLOW_RAD_S)
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _done(future, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.02)
    return future.done()


def _log_once_stopped(node: subprocess.Popen) -> str:
    """arm_node's log (stderr), terminated first if it still runs (killed after 10 s)."""
    if node.poll() is None:
        node.terminate()
    try:
        return node.communicate(timeout=10)[1]
    except subprocess.TimeoutExpired:
        node.kill()
        return node.communicate()[1]


def test_ctrl_c_mid_motion_holds_the_arm_through_the_backends_own_context(tmp_path):
    consumer = start_controller(str(CONSUMER), CMD_TOPIC, STATE_TOPIC)
    node = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.arm_node", "--ros-args",
                             "-p", f"config_file:={arm_config(tmp_path)}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        with arm_motion_client("arm_stop_test_client", node, discovery_s=2.0) as (client_node, client):
            commands, first = [], threading.Event()

            def on_command(msg):
                commands.append((time.monotonic(), len(msg.points)))
                first.set()
            client_node.create_subscription(JointTrajectory, CMD_TOPIC, on_command, 10)
            time.sleep(1.0)     # the subscription matched before the path goes out
            sent = client.send_goal_async(ArmMotion.Goal(motion=ArmMotion.Goal.MOTION_HOME))
            assert first.wait(scaled_by_load(30.0)), "arm_node sent no trajectory"
            assert _done(sent, scaled_by_load(5.0)) and sent.result().accepted
            assert commands[0][1] > 1, "the first command is the turn's path"
            time.sleep(1.0)     # well inside the turn's several seconds
            interrupted = time.monotonic()
            node.send_signal(signal.SIGINT)
            deadline = interrupted + scaled_by_load(5.0)
            while len(commands) < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(commands) >= 2, "the stop never reached the controller: the turn runs to its end"
            assert commands[1][1] == 1 and commands[1][0] - interrupted < scaled_by_load(2.0)   # a hold, at once
            result = sent.result().get_result_async()
            assert _done(result, scaled_by_load(5.0)), "the goal's client got no result before arm_node exited"
            assert result.result().result.error_code == "CANCELED"
        assert node.wait(scaled_by_load(10.0)) == 0
    finally:
        print(_log_once_stopped(node))    # shown when the test fails
        stop_controller(consumer)
