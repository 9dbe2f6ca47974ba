"""The reach rule reads the arm model's numbers (the shoulder at the model's DH d1), chosen as the
arm is: a UR5's shoulder sits 7 cm lower than a UR5e's, so a high wrist one reaches the other does not."""
import numpy as np
import pytest

from spatial_manip.control.config import load_kinematics, load_reach
from spatial_manip.control.kinematics import DH_PRESETS
from spatial_manip.geometry.reach import REACH_M, SLOT_REACH_M, Reach, slot_wrist


@pytest.mark.parametrize("model", ["ur5", "ur5e"])
def test_the_shoulder_is_the_chosen_models(model):
    reach = load_reach(model=model)
    assert reach.shoulder_z_m == pytest.approx(DH_PRESETS[model]["d1"]) == load_kinematics(model=model).d1
    assert (reach.reach_m, reach.slot_reach_m) == (REACH_M, SLOT_REACH_M)
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
