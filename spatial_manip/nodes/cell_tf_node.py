"""cell_tf_node: the cell as RViz and tf2 see it. Publishes

- `/tf_static` (tf2_msgs/TFMessage, transient-local, as tf2's static broadcaster does): the hand-eye
  calibration (base -> camera optical frame eye-to-hand, tool0 -> it eye-in-hand) and, with
  `publish_robot_tf`, every fixed joint of the robot description;
- `/robot_description` (std_msgs/String, transient-local): urdf/'s model with its camera joint
  set to the calibration, for RViz's RobotModel display;
- `/tf` from `/joint_states` for the arm's revolute joints (robot_state_publisher's job, for
  machines without it; set `publish_robot_tf:=false` where robot_state_publisher runs).

The transforms are computed in the core (spatial_manip.workspace.cell_tf); tf2_ros is not used.

    ros2 run spatial_manip cell_tf_node --ros-args -p calibration_file:=config/calibration/cell.yaml

A relative calibration_file that does not exist from the working directory is looked up under
config/ (the real graph passes calibration/cell.yaml).
"""
from __future__ import annotations

import sys
import time

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from spatial_manip.control.config import load_arm_config
from spatial_manip.errors import ConfigError, InvalidGoalError
from spatial_manip.geometry.calibration import load_calibration
from spatial_manip.nodes import convert
from spatial_manip.nodes.camera_tf import transform_to_matrix
from spatial_manip.nodes.parameters import declare_parameters
from spatial_manip.nodes.runner import spin_node
from spatial_manip.paths import resolve_user_file
from spatial_manip.workspace import cell_tf
from spatial_manip.workspace.cell_tf import CameraMount

                     # (0.6 s were needed on a loaded 2-core machine; 1.5 s missed it once)



def tf_message_class():
    """tf2_msgs/TFMessage, or a configuration error saying where to get it (it is part of every
    ROS 2 install; the PyPI wheels have no tf2_msgs)."""
    try:
        from tf2_msgs.msg import TFMessage
    except ImportError as e:
        raise InvalidGoalError("cell_tf_node needs tf2_msgs (apt: ros-<distro>-tf2-msgs; any sourced ROS 2 "
                               "install has it), which the PyPI ROS wheels do not ship") from e
    return TFMessage


def transform_stamped(parent: str, child: str, T, stamp):
    from geometry_msgs.msg import TransformStamped

    msg = TransformStamped()
    msg.header.frame_id, msg.header.stamp, msg.child_frame_id = parent, stamp, child
    pose = convert.pose_msg_from_matrix(T)
    t = msg.transform
    t.translation.x, t.translation.y, t.translation.z = pose.position.x, pose.position.y, pose.position.z
    t.rotation = pose.orientation
    return msg


class CellTfNode(Node):
    def __init__(self):
        super().__init__("cell_tf_node")
        started = time.monotonic()          # discovery runs from the node's creation
        self.p = declare_parameters(self)   # spatial_manip/parameters.py
        self._discovery_deadline = started + float(self.p["driver_discovery_s"])
        if not self.p["calibration_file"]:
            raise ConfigError("cell_tf_node needs the calibration_file parameter (spatial-manip calibrate --out)")
        # a CalibrationError is a ConfigError: spin_node prints it as a one-line refusal
        cal = load_calibration(resolve_user_file(self.p["calibration_file"]))
        self.TFMessage = tf_message_class()
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
        model = self.p["model"] or load_arm_config()["kinematics"]["model"]
        urdf = cell_tf.calibrated_description(cal, model)
        self.joints = cell_tf.parse_joints(urdf)
        robot = self.p["publish_robot_tf"] and not self._driver_publishes_the_robot()
        static = cell_tf.fixed_transforms(self.joints) if robot else [cell_tf.calibration_transform(cal)]
        self.static_pub = self.create_publisher(self.TFMessage, "/tf_static", latched)
        self._static = static
        if self.p["camera_mount_frame"]:      # the camera's own frames come from its driver: wait for them
            self._mount = CameraMount(self.p["camera_mount_frame"], cell_tf.calibration_transform(cal))
            self._static = [t for t in static if t[1] != self._mount.camera_frame]
            heard = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
            self.create_subscription(self.TFMessage, "/tf_static", self._on_tf_static, heard)
        self._publish_static()
        if robot:
            self.description_pub = self.create_publisher(String, self.p["description_topic"], latched)
            self.description_pub.publish(String(data=urdf))
        parent, child, _ = cell_tf.calibration_transform(cal)
        self.get_logger().info(f"static TF {parent} -> {child} from {self.p['calibration_file']} "
                               f"({len(static)} static transforms)")
        if robot:
            self.tf_pub = self.create_publisher(self.TFMessage, "/tf", 10)
            self.create_subscription(JointState, self.p["joint_states_topic"], self._on_joints, 10)

    def _publish_static(self) -> None:
        stamp = self.get_clock().now().to_msg()
        self.static_pub.publish(self.TFMessage(transforms=[transform_stamped(p, c, T, stamp) for p, c, T in self._static]))

    def _on_tf_static(self, msg) -> None:
        mount = self._mount.from_driver([(t.header.frame_id, t.child_frame_id, transform_to_matrix(t.transform))
                                         for t in msg.transforms])
        if mount is not None:
            self._static = [*self._static, mount]     # /tf_static keeps a publisher's last message: all of them
            self._publish_static()
            self.get_logger().info(f"static TF {mount[0]} -> {mount[1]}: the calibration through the camera "
                                   f"driver's frames down to {self._mount.camera_frame}")

    def _driver_publishes_the_robot(self) -> bool:
        """Whether another node (the UR driver's robot_state_publisher) already publishes the
        robot description: then its TF is the arm's, and a second copy would give every link two
        parents. Waits until driver_discovery_s after the node's creation for the graph to be discovered."""
        while time.monotonic() < self._discovery_deadline:
            if self.count_publishers(self.p["description_topic"]) > 0:
                self.get_logger().info(f"{self.p['description_topic']} already has a publisher (a robot_state_publisher):"
                                       " publishing only the calibration, not the robot's description and TF")
                return True
            time.sleep(0.1)
        return False

    def _on_joints(self, msg: JointState) -> None:
        moving = cell_tf.joint_transforms(self.joints, dict(zip(msg.name, msg.position)))
        if moving:
            self.tf_pub.publish(self.TFMessage(transforms=[transform_stamped(p, c, T, msg.header.stamp)
                                                           for p, c, T in moving]))


def main(args=None) -> int:
    return spin_node(CellTfNode, args=args)


if __name__ == "__main__":
    sys.exit(main())
