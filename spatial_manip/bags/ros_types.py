"""ROS type names (as bags and the graph spell them) -> rclpy message classes. Imports rclpy
message packages lazily, so the rest of spatial_manip.bags stays ROS-free."""
from __future__ import annotations

import importlib

from spatial_manip.bags.io import BagError

_ACTION_PARTS = {"Goal": "Goal", "Result": "Result", "Feedback": "Feedback", "FeedbackMessage": "FeedbackMessage"}


def message_class(msgtype: str, where: str = ""):
    """'sensor_msgs/msg/Image' -> sensor_msgs.msg.Image; 'pkg/action/X_FeedbackMessage' ->
    pkg.action.X.Impl.FeedbackMessage. Raises BagError naming `where` (bag and topic)."""
    parts = msgtype.split("/")
    if len(parts) != 3:
        raise BagError(f"{where}: {msgtype!r} is not a ROS 2 type name pkg/msg/Name")
    pkg, kind, name = parts
    try:
        module = importlib.import_module(f"{pkg}.{kind}")
        if kind == "action" and "_" in name:
            base, _, part = name.rpartition("_")
            action = getattr(module, base)
            return getattr(action, part) if part in ("Goal", "Result", "Feedback") else getattr(action.Impl, part)
        return getattr(module, name)
    except (ImportError, AttributeError) as e:
        raise BagError(f"{where}: message type {msgtype} is not installed here ({e}); install its "
                       "package (e.g. ros-<pkg> wheel or apt) or leave the topic out") from e
