"""The rosbags typestore for this project: ROS 2 Kilted standard types plus the
spatial_manip_interfaces messages and the action types that travel on topics (goal, result,
feedback and the hidden `_action/feedback` FeedbackMessage), read from the .msg/.action files."""
from __future__ import annotations

import functools
import re

from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from spatial_manip.paths import INTERFACES as PACKAGE
from spatial_manip.paths import interfaces_dir


def _split_action(text: str) -> tuple[str, str, str]:
    parts = re.split(r"^---\s*$", text, flags=re.M)
    if len(parts) != 3:
        raise ValueError(f"an .action file has goal --- result --- feedback, got {len(parts)} parts")
    return parts[0], parts[1], parts[2]


def interface_types() -> dict:
    """rosbags type definitions of every message and action-on-topic type of the package."""
    root = interfaces_dir()
    types: dict = {}
    for f in sorted((root / "msg").glob("*.msg")):
        types.update(get_types_from_msg(f.read_text(), f"{PACKAGE}/msg/{f.stem}"))
    for f in sorted((root / "action").glob("*.action")):
        goal, result, feedback = _split_action(f.read_text())
        base = f"{PACKAGE}/action/{f.stem}"
        alias = f"{PACKAGE}/msg/{f.stem}"
        for suffix, body in (("Goal", goal), ("Result", result), ("Feedback", feedback)):
            types.update(get_types_from_msg(body, f"{base}_{suffix}"))
            # rosbags writes message definitions only for nested types named pkg/msg/X: the
            # FeedbackMessage nests the feedback under this alias (same fields, same CDR bytes)
            types.update(get_types_from_msg(body, f"{alias}_{suffix}"))
        types.update(get_types_from_msg(f"unique_identifier_msgs/UUID goal_id\n{alias}_Feedback feedback\n",
                                        f"{base}_FeedbackMessage"))
    return types


@functools.lru_cache(maxsize=1)
def project_typestore():
    """Kilted standard types + this project's interfaces (built once per process)."""
    store = get_typestore(Stores.ROS2_KILTED)
    store.register(interface_types())
    return store
