"""The reach rule reads the arm model's numbers (the shoulder at the model's DH d1), chosen as the
arm is: a UR5's shoulder sits 7 cm lower than a UR5e's, so a high wrist one reaches the other does not."""
import dataclasses

import numpy as np
import pytest

from spatial_manip.control.config import load_arm_config, load_kinematics, load_reach
from spatial_manip.errors import ConfigError
from spatial_manip.control.kinematics import DH_PRESETS
from spatial_manip.geometry.reach import REACH_M, SLOT_REACH_M, Reach, slot_tcp, slot_wrist
from spatial_manip.scene import Region


@pytest.mark.parametrize("model", ["ur5", "ur5e"])
def test_the_shoulder_is_the_chosen_models(model):
    reach = load_reach(model=model)
    assert reach.shoulder_z_m == pytest.approx(DH_PRESETS[model]["d1"]) == load_kinematics(model=model).d1
    assert (reach.reach_m, reach.slot_reach_m) == (REACH_M, REACH_M)    # a real cell: slots unmeasured
    np.testing.assert_allclose(reach.shoulder, [0.0, 0.0, DH_PRESETS[model]["d1"]])


def test_the_simulators_arm_is_a_ur5e_whatever_the_file_chooses():
    """The planner's rule on the sim graph is the UR5e's; the generator flags slots with the simulated
    UR5e's own shoulder (its MJCF's), within a millimetre of it."""
    from spatial_manip.sim.layouts import SIM_SHOULDER_Z_M

    assert load_reach(backend="sim", model="ur5").shoulder_z_m == pytest.approx(DH_PRESETS["ur5e"]["d1"])
    assert abs(SIM_SHOULDER_Z_M - DH_PRESETS["ur5e"]["d1"]) <= 1e-3


def test_a_high_wrist_is_within_a_ur5es_reach_and_beyond_a_ur5s():
    ur5, ur5e = load_reach(model="ur5"), load_reach(model="ur5e")
    wrist = [0.6, 0.0, ur5e.shoulder_z_m + np.sqrt(0.79 ** 2 - 0.6 ** 2)]     # 0.79 m from the UR5e's shoulder
    assert ur5e.wrist_reaches(wrist) and not ur5.wrist_reaches(wrist)          # 0.84 m from the UR5's
    top = np.array(wrist) - [0.0, 0.0, 0.156]                                   # the same wrist, set down from above
    assert ur5e.reaches_from_above(top) and not ur5.reaches_from_above(top)
    assert ur5.reaches_from_above(top + [0.4, 0.0, 0.0], base=[0.4, 0.0, 0.0]) is False
    assert Reach(ur5.shoulder_z_m, reach_m=0.85).wrist_reaches(wrist)          # a longer rule reaches it


def test_the_planner_and_espire_s_shelves_read_one_slot_reach():
    """A set-down into a slot reaches farther than one from above (the forearm level, not the wrist
    hung over the object): the planner's rule and ESPIRE's shelf flag are both SLOT_REACH_M, measured
    through the server's arm, so a slot the server flags the planner takes as reached; the main
    bench's flag keeps the narrower 0.80 m."""
    from spatial_manip.sim import layouts as L

    planner = load_reach(backend="sim")
    assert L.SHELF_STANCES["espire"].slot_reach_m == planner.slot_reach_m == SLOT_REACH_M
    assert L.SHELF_STANCES["bench"].slot_reach_m == REACH_M < SLOT_REACH_M
    flagged = []
    for seed in range(10):
        scene = L.sample_shelf(np.random.default_rng(seed), layout="grid", stance="espire")
        for slot in scene.regions:
            assert slot.extra["reachable"] == Reach(L.SIM_SHOULDER_Z_M).reaches_into(slot)
            if slot.extra["reachable"]:
                flagged.append(float(np.linalg.norm(slot_wrist(slot) - planner.shoulder)))
    assert max(flagged) > 0.9                 # slots the 0.80 m rule called out of reach


def _slot(front_x: float, floor_z: float) -> Region:
    """A 30 cm deep, 40 cm wide, 35 cm high slot straight ahead of the base, its front face at front_x."""
    return Region(id="slot", kind="slot", center=np.array([front_x + 0.15, 0.0, floor_z + 0.175]), size=np.array([0.30, 0.40, 0.35]),
                  rotation=np.eye(3))


def test_a_real_cell_slot_whose_set_down_tcp_leaves_the_safety_box_is_not_reached():
    """A slot with its front face 1.0 m out and its floor 0.20 m up: the wrist enters 0.925 m from
    the shoulder, within the simulated arm's slot reach, but the set-down TCP is 1.06 m out, past
    the real cell's safety.workspace_max_m x (0.95), where the envelope refuses it: not reached,
    whatever figure the cell's reach section gives. The simulated cell's box (1.15 m) allows it."""
    slot = _slot(1.0, 0.20)
    real, sim = load_reach(), load_reach(backend="sim")
    cap_x = load_arm_config()["safety"]["workspace_max_m"][0]
    assert slot_tcp(slot)[0] == pytest.approx(1.06) and slot_tcp(slot)[0] > cap_x == real.workspace_max_m[0]
    assert float(np.linalg.norm(slot_wrist(slot) - real.shoulder)) == pytest.approx(0.925, abs=0.002)
    assert sim.reaches_into(slot)
    assert not real.reaches_into(slot)
    assert not dataclasses.replace(real, slot_reach_m=SLOT_REACH_M).reaches_into(slot)    # the box decides
    assert dataclasses.replace(real, slot_reach_m=SLOT_REACH_M, workspace_min_m=None,
                               workspace_max_m=None).reaches_into(slot)
    nearer = _slot(0.85, 0.0)                                 # TCP 0.91 m out, wrist 0.76 m from the shoulder
    assert real.reaches_into(nearer) and real.tcp_allowed(slot_tcp(nearer))


def test_a_set_down_from_above_outside_the_safety_box_is_not_reached():
    """The same box bounds a set-down from above: a place 0.78 m to the side is within the
    wrist's 0.80 m but past the real cell's y limit (0.75)."""
    real = load_reach()
    top = [0.05, 0.78, 0.05]
    assert real.wrist_reaches(np.add(top, [0.0, 0.0, 0.156]))
    assert not real.reaches_from_above(top)
    assert load_reach(backend="sim").reaches_from_above(top)


def test_a_reach_section_with_a_wrong_key_or_figure_is_refused_by_name():
    with pytest.raises(ConfigError, match="reach: unknown key 'slot_reach'"):
        load_arm_config(overrides={"reach.slot_reach": 1.0})
    with pytest.raises(ConfigError, match="slot_reach_m must be a positive distance"):
        load_arm_config(overrides={"reach.slot_reach_m": -0.5})
    with pytest.raises(ValueError, match="both workspace_min_m and workspace_max_m"):
        Reach(0.1625, workspace_min_m=(0.0, 0.0, 0.0))
