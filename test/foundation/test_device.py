"""The one Device / Closeable base (issue 41): connect on entry, close on exit (also on error)."""
import ast
import pathlib

import pytest

from spatial_manip.device import Closeable, Device

ROOT = pathlib.Path(__file__).resolve().parents[2] / "spatial_manip"


class _Link(Device):
    def __init__(self):
        self.calls = []

    def connect(self):
        self.calls.append("connect")

    def close(self):
        self.calls.append("close")


def test_a_device_connects_on_entry_and_closes_on_error():
    link = _Link()
    with pytest.raises(RuntimeError):
        with link as entered:
            assert entered is link
            raise RuntimeError("boom")
    assert link.calls == ["connect", "close"]


def test_a_closeable_is_open_from_construction():
    class File(Closeable):
        closed = False

        def close(self):
            self.closed = True

    with File() as f:
        assert not f.closed
    assert f.closed


def test_a_device_without_connect_or_close_cannot_be_built():
    class Half(Device):
        def close(self):
            pass

    with pytest.raises(TypeError, match="connect"):
        Half()


# The Gripper role's close() closes the jaws (its release is disconnect()); espire/, sim/world.py and
# reasoning/ are edited by other engineers this session (left for their next change).
_OWN_CONTEXT = {"control/robotiq.py", "espire/client.py", "sim/world.py", "reasoning/openai_backend.py"}


def test_no_backend_repeats_the_enter_exit_pair():
    """Classes whose __enter__ only connects and returns self inherit it from spatial_manip.device."""
    copies = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == "__enter__" and rel not in ("device.py", *_OWN_CONTEXT):
                body = [ast.unparse(s) for s in node.body if not isinstance(s, ast.Expr) or "connect" in ast.unparse(s)]
                if body in (["return self"], ["self.connect()", "return self"]):
                    copies.append(f"{rel}:{node.lineno}")
    assert not copies, f"inherit Device or Closeable instead: {copies}"


def test_the_device_backends_are_devices():
    from spatial_manip.bags.io import BagReader, BagWriter
    from spatial_manip.sim.calibration_cell import CalibrationCell
    from spatial_manip.camera.realsense import RealSenseSource
    from spatial_manip.control.trajectory_arm import TrajectoryArm
    from spatial_manip.control.ur_rtde_arm import URRtdeArm
    from spatial_manip.sim.arm import SimArm
    assert all(issubclass(c, Device) for c in (RealSenseSource, URRtdeArm, TrajectoryArm, SimArm))
    assert all(issubclass(c, Closeable) for c in (BagReader, BagWriter, CalibrationCell))
