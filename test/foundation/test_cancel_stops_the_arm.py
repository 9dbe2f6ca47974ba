"""A cancel always stops the arm before it is answered (issue 35 item 3), on the sim graph over
real DDS: goals are canceled at every stage transition (perceiving, reasoning, grasping, moving
to pick, moving to place, verifying), which puts cancels between an arm goal's sending and its
acceptance, and with the pick's and the place's arm in motion. Each answered CANCELED must leave the joints still:
/joint_states after the answer moves less than STILL_RAD. `spatial-manip cancel-soak` runs the
same cycle 100+ times and prints the worst figure."""
import pytest

from ros_helpers import client_node
from spatial_manip.bench.demo import DEFAULT_INSTRUCTION, DEFAULT_SCENE_SEED, find_scene
from spatial_manip.bench.worker import Graph
from spatial_manip.devtools import cancel_soak

pytestmark = [pytest.mark.slow, pytest.mark.ros]
STILL_RAD = 0.005       # joint motion allowed after CANCELED (the sim arm stops within one control period)
# every transition right at it: the pick's and the place's arm goals are sent within milliseconds
# of their "moving" feedback, so those cancels land before the send or between send and
# acceptance; the last two wait for the arm to be moving
PLAN = [(t, 0.0) for t in cancel_soak.TRANSITIONS]


@pytest.mark.timeout(1500)      # 8-16 goals on the sim graph: minutes on a loaded machine
def test_every_cancel_leaves_the_arm_standing_still(tmp_path):
    seed, scene = find_scene(DEFAULT_INSTRUCTION, DEFAULT_SCENE_SEED)
    records = []
    with open(tmp_path / "graph.log", "w") as log:
        # the simulator's own segmentation: this tests cancelling, not reading a noisy frame
        graph = Graph("sim", {"planner_node": {"trace_dir": str(tmp_path / "traces"), "segmenter": "ground_truth"},
                              "sim_node": {"catalogue": "episode"}}, log)
        try:
            with client_node() as node:
                records = cancel_soak.run_cancels(node, scene, DEFAULT_INSTRUCTION, PLAN, settle_s=0.6, seed=seed,
                                                  dead=graph.dead)
                # a goal that failed before its transition (a slipped grasp, a starved camera on a
                # loaded machine) gets one more try at it
                missed = [plan for plan, r in zip(PLAN, records) if not r.counts]
                records += cancel_soak.run_cancels(node, scene, DEFAULT_INSTRUCTION, missed, settle_s=0.6, seed=seed,
                                                   dead=graph.dead)
        finally:
            graph.stop()
    lines = "\n".join(cancel_soak.line(r) for r in records)
    counted = [r for r in records if r.counts]
    assert {r.transition for r in counted} >= {"perceiving", "reasoning", "grasping", "moving:picking",
                                               "moving:picking (arm moving)"}, lines
    assert any(r.moving_at_cancel for r in counted), "no cancel met the arm moving:\n" + lines
    worst = max(r.motion_after_rad for r in counted)
    assert worst < STILL_RAD, lines
    # every counted cancel was answered CANCELED (CancelRecord.counts); how fast is cancel-soak's
    # figure, not a test's: a 10 s bound failed a fresh-clone run at load ~20 (22 s for a cancel
    # while the pick's motion was being planned, the arm still)
