"""A PICK goal's gripper opening as it arrives over ROS (float32)."""
import numpy as np
import pytest

from spatial_manip.errors import InvalidGoalError
from spatial_manip.nodes.arm_server import gripper_width


def test_the_full_opening_sent_as_float32_is_the_full_opening():
    sent = float(np.float32(0.085))          # what the planner's 0.085 becomes on the wire
    assert sent > 0.085 and gripper_width(sent, 0.085) == 0.085
    assert gripper_width(0.04, 0.085) == 0.04 and gripper_width(0.0, 0.085) == 0.0


@pytest.mark.parametrize("bad", [0.0851, 0.2, -0.001, float("nan"), float("inf")])
def test_an_opening_outside_the_stroke_is_refused_by_name(bad):
    with pytest.raises(InvalidGoalError, match="gripper_width must be within 0..0.085 m"):
        gripper_width(bad, 0.085)
