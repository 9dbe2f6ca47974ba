"""RobotModel.points_on tests only the points near a body exactly (issue 42: every pixel against
every body cost seconds a look); the mask must be the one the exhaustive test gives."""
import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from spatial_manip.motion.robot import RobotModel, _inside_grown, description_paths  # noqa: E402


def test_the_prefiltered_mask_equals_every_point_against_every_body():
    robot = RobotModel(*description_paths("ur5e", "eye_to_hand"))
    rng = np.random.default_rng(3)
    for q in (np.array([0.0, 0.5, 1.0, -3.0, 0.0, 0.0]), np.array([0.3, -1.2, 1.4, -1.7, -1.57, 0.2])):
        pts = rng.uniform([-1.0, -1.0, -0.2], [1.0, 1.0, 1.2], size=(60_000, 3))
        data, gdata = robot.model.createData(), pin.GeometryData(robot.geom)
        pin.updateGeometryPlacements(robot.model, data, robot.geom, gdata, q)
        every = np.zeros(len(pts), bool)
        for g, M in zip(robot.geom.geometryObjects, gdata.oMg):
            every |= _inside_grown(g.geometry, (pts - M.translation) @ M.rotation, 0.03)
        assert every.sum() > 100                       # the arm is among the points
        assert np.array_equal(robot.points_on(pts, q, 0.03), every)
