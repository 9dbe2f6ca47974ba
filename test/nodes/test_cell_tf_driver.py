"""cell_tf_node joining a cell whose UR driver already runs robot_state_publisher (issue 39):
it sees /robot_description published and publishes only the calibration, so no link gets a
second parent. Over real DDS, in separate processes."""
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from ros_helpers import private_domain_id

pytestmark = [pytest.mark.ros]
rclpy = pytest.importorskip("rclpy")

DRIVER = """
import sys, time, rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node("robot_state_publisher")
pub = node.create_publisher(String, "robot_description", QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
pub.publish(String(data="<robot name='ur'/>"))
print("driver up", flush=True)
time.sleep(float(sys.argv[1]))
"""


def test_a_running_robot_state_publisher_keeps_cell_tf_to_the_calibration(tmp_path):
    from tf2_msgs_build import tf2_msgs_env

    cal = tmp_path / "cell.yaml"
    cal.write_text(yaml.safe_dump({"mode": "eye_to_hand", "T_base_camera": {"translation": [1.0, 0.0, 0.8],
                                                                            "rotation_xyzw": [0, 0, 0, 1]}}))
    env = {**os.environ, **tf2_msgs_env(), "PYTHONUNBUFFERED": "1", "ROS_DOMAIN_ID": str(private_domain_id())}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, "60"], env=env, stdout=subprocess.PIPE, text=True)
    node = None
    try:
        assert driver.stdout.readline().strip() == "driver up"
        node = subprocess.Popen([sys.executable, "-m", "spatial_manip.nodes.cell_tf_node", "--ros-args",
                                 "-p", f"calibration_file:={cal}",
                                 # discovery took over the default 3 s on a loaded machine; found, it stops looking
                                 "-p", "driver_discovery_s:=30.0"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline and not any("static TF" in line for line in lines):
            line = node.stdout.readline()
            if not line:
                break
            lines.append(line)
        out = "".join(lines)
        assert "already has a publisher" in out and "(1 static transforms)" in out, out
    finally:
        for p in (node, driver):
            if p is not None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
