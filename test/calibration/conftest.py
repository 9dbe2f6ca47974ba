"""One MuJoCo calibration cell per set-up for the whole session: building one (model compile,
GL context, texture upload) costs more than the renders a test needs."""
import os

import pytest

os.environ.setdefault("MUJOCO_GL", "egl")


@pytest.fixture(scope="session")
def cells():
    from spatial_manip.calibration.board import BoardConfig
    from spatial_manip.sim.calibration_cell import CalibrationCell, CellConfig

    built = {}

    def get(mode: str):
        if mode not in built:
            built[mode] = CalibrationCell(BoardConfig(), CellConfig(mode=mode))
        return built[mode]
    yield get
    for cell in built.values():
        cell.close()
