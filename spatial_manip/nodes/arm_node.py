"""arm_node: the ArmMotion action server over the configured arm backend.

Reads config/params/arm.yaml (parameter `config_file`), lets `arm.backend` ("ur_rtde" | "sim")
and `arm.host` override it, connects the arm and the gripper (bounded retries), and serves
`/spatial_manip/arm_motion`, `/joint_states` and `/tcp_pose_broadcaster/pose` through
`ArmActionServer`. Try it without a robot:

    spatial-manip ur-emulator &
    arm_node --ros-args -p arm.backend:=ur_rtde -p arm.host:=127.0.0.1
"""
from __future__ import annotations

import sys

from rclpy.node import Node

from spatial_manip.nodes.runner import spin_node

from spatial_manip.control.config import load_arm_config
from spatial_manip.control.factory import make_arm_from_config, make_gripper_from_config, make_primitives
from spatial_manip.nodes.arm_server import ArmActionServer

PARAMS = {"config_file": "", "arm.backend": "", "arm.host": "", "state_rate_hz": 50.0, "frame_id": "base"}


class ArmNode(Node):
    def __init__(self):
        super().__init__("arm_node")
        for name, default in PARAMS.items():
            self.declare_parameter(name, default)
        p = {name: self.get_parameter(name).value for name in PARAMS}
        overrides = {}
        if p["arm.backend"]:
            overrides["arm.backend"] = p["arm.backend"]
        cfg = load_arm_config(p["config_file"] or None, overrides)
        backend = cfg["arm"]["backend"]
        if p["arm.host"]:
            cfg["arm"].setdefault(backend, {})["host"] = p["arm.host"]
            cfg["arm"].setdefault("gripper", {})["host"] = p["arm.host"]
        self.arm = make_arm_from_config(cfg)
        self.gripper = make_gripper_from_config(cfg) if backend != "sim" else getattr(self.arm, "gripper", None)
        self.arm.connect()
        if self.gripper is not None and backend != "sim":
            self.gripper.connect()
            self.gripper.activate()
        self.server = ArmActionServer(self, self.arm, self.gripper, make_primitives(cfg, self.arm, self.gripper),
                                      state_rate_hz=float(p["state_rate_hz"]), frame_id=p["frame_id"],
                                      gripper_max_width_m=float(cfg["arm"].get("gripper", {}).get("max_width_m", 0.085)))
        self.get_logger().info(f"arm_node ready: backend {backend}, action /spatial_manip/arm_motion")

    def shutdown(self):
        if self.gripper is not None and hasattr(self.gripper, "disconnect"):
            self.gripper.disconnect()
        self.arm.close()


def main(args=None) -> int:
    return spin_node(ArmNode, args=args, threads=4, close=lambda n: n.shutdown())


if __name__ == "__main__":
    sys.exit(main())
