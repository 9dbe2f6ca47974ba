"""arm_node: the ArmMotion action server over the configured arm backend.

Reads config/params/arm.yaml (parameter `config_file`), lets `arm.backend` ("ur_rtde" | "ur_driver"
| "sim" | "joint_trajectory") and `arm.host` override it, connects the arm and the gripper (bounded retries), and serves
`/spatial_manip/arm_motion`, `/joint_states` and `/tcp_pose_broadcaster/pose` through
`ArmActionServer`. A lost controller link (ur_rtde) is re-established by the arm's keeper with
bounded back-off (`reconnect_max_delay_s`); the state shows on /spatial_manip/arm_status and in the
results of goals sent meanwhile, /joint_states pauses until the link is back, and no motion is
resumed by itself. The gripper socket is re-opened after a reconnect and re-activated (if the
controller reset it) only when the next goal first moves it. Try it without a robot:

    spatial-manip ur-emulator &
    arm_node --ros-args -p arm.backend:=ur_rtde -p arm.host:=127.0.0.1
"""
from __future__ import annotations

import sys
import threading

from rclpy.node import Node

from spatial_manip.nodes.parameters import declare_parameters
from spatial_manip.nodes.runner import spin_node

from spatial_manip.control.config import arm_overrides, load_arm_config
from spatial_manip.control.ur_version import check_model, controller_version
from spatial_manip.control.factory import make_arm_from_config, make_gripper_from_config
from spatial_manip.motion.arm_plans import make_primitives
from spatial_manip.errors import MotionFailedError
from spatial_manip.nodes.arm_server import ACTION_NAME, ArmActionServer

PARAMS = {"config_file": "", "arm.backend": "", "arm.host": "", "ur_type": "", "state_rate_hz": 50.0,
          "frame_id": "base", "reconnect_max_delay_s": 0.0}   # 0: arm.yaml's (or the backend's) value


class ReopeningGripper:
    """The gripper behind a socket that may go away with the controller: after a reconnect (or
    a socket error) the next call re-opens the socket, and the next MOTION command re-activates
    it first if the controller reset it. Never moves the fingers on its own."""

    MOTION = ("open", "close", "move", "start_move")

    def __init__(self, gripper):
        self._g = gripper
        self._lock = threading.RLock()
        self._stale = False      # socket to re-open before the next call
        self._check_active = False

    def mark_stale(self) -> None:
        with self._lock:
            self._stale = self._check_active = True

    def __getattr__(self, name):
        attr = getattr(self._g, name)
        if not callable(attr) or name in ("connect", "disconnect", "activate"):
            return attr
        return lambda *a, **kw: self._call(name, attr, *a, **kw)

    def _call(self, name, fn, *args, **kwargs):
        with self._lock:
            if self._stale:
                self._g.disconnect()
                self._g.connect()   # bounded retries; MotionFailedError names the socket
                self._stale = False
            if self._check_active and name in self.MOTION:
                self._g.activate()  # no-op when still active; a reset gripper is activated by this goal
                self._check_active = False
            try:
                return fn(*args, **kwargs)
            except MotionFailedError as e:
                if "socket" in e.message or "connect" in e.message:
                    self._stale = self._check_active = True  # re-open on the next call
                raise


class ArmNode(Node):
    def __init__(self):
        super().__init__("arm_node")
        p = declare_parameters(self, PARAMS)
        cfg = load_arm_config(p["config_file"] or None, arm_overrides(p["arm.backend"], p["ur_type"]))
        backend = cfg["arm"]["backend"]
        if p["arm.host"]:
            if backend == "ur_rtde":       # the ur_driver backend talks to the driver, not the controller
                cfg["arm"].setdefault(backend, {})["host"] = p["arm.host"]
            cfg["arm"].setdefault("gripper", {})["host"] = p["arm.host"]
        if p["reconnect_max_delay_s"] > 0:
            cfg["arm"].setdefault(backend, {})["reconnect_max_delay_s"] = float(p["reconnect_max_delay_s"])
        if backend == "ur_rtde":
            _check_controller_model(cfg)
        self.arm = make_arm_from_config(cfg)
        self.gripper = make_gripper_from_config(cfg) if backend != "sim" else getattr(self.arm, "gripper", None)
        self.arm.connect()
        if self.gripper is not None and backend != "sim":
            try:
                self.gripper.connect()
                self.gripper.activate()
            except BaseException:
                self.arm.close()        # a refused start leaves no backend thread behind (it aborted the process)
                raise
            self.gripper = ReopeningGripper(self.gripper)
        self._keep_connected()
        self.server = ArmActionServer(self, self.arm, self.gripper, make_primitives(cfg, self.arm, self.gripper),
                                      state_rate_hz=float(p["state_rate_hz"]), frame_id=p["frame_id"],
                                      # the UR driver's broadcasters publish the arm's joints and TCP pose
                                      # (and the ur_driver backend reads those joint states)
                                      publish_arm_state=backend != "ur_driver",
                                      gripper_max_width_m=float(cfg["arm"].get("gripper", {}).get("max_width_m", 0.085)))
        self.get_logger().info(f"arm_node ready: backend {backend}, action {ACTION_NAME}")

    def _keep_connected(self) -> None:
        keep = getattr(self.arm, "keep_connected", None)
        if keep is None:
            return  # the sim arm lives in this process: nothing to lose
        keep(log=self._log_link, on_reconnect=getattr(self.gripper, "mark_stale", None))

    def _log_link(self, level: str, msg: str) -> None:
        # one call site per severity: rclpy refuses two severities from one line
        if level == "info":
            self.get_logger().info(msg)
        else:
            self.get_logger().warning(msg)


def _check_controller_model(cfg: dict) -> None:
    """Refuse a model preset (ur_type) the controller contradicts: a UR5e's kinematics on a CB3
    would put every pose centimetres off. An unreachable controller is left to the arm's connect."""
    host = cfg["arm"]["ur_rtde"].get("host", "127.0.0.1")
    try:
        version = controller_version(host)
    except OSError:
        return
    check_model(cfg["kinematics"]["model"], host, version)


def main(args=None) -> int:
    # finish runs while every rclpy context still does (the joint_trajectory and ur_driver backends
    # stop the arm through their own); close releases the devices, the arm stopped first
    return spin_node(ArmNode, args=args, threads=4, close=lambda n: n.server.release(n.gripper),
                     finish=lambda n: n.server.finish())


if __name__ == "__main__":
    sys.exit(main())
