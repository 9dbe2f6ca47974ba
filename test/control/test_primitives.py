"""Motion primitives over a unit-test double of the Arm/Gripper protocols."""
import threading
import time

import numpy as np
import pytest

from spatial_manip.control.base import Arm, Gripper, SafetyStatus, straight_driven_path
from spatial_manip.control.config import load_arm_config
from spatial_manip.control.primitives import (STAND_OFF_FRACTIONS, MotionPrimitives, PrimitivesConfig,
                                              approach_direction)
from spatial_manip.control.safety import SafetyEnvelope
from spatial_manip.errors import (CanceledError, GraspFailedError, InvalidGoalError, MotionFailedError,
                                  UnreachableError)


class FakeArm:
    """Records commands; moves take `move_time_s` and honour stop() from another thread."""

    def __init__(self, kin, q0, move_time_s=0.0, fail_on=None):
        self.kin, self.q = kin, np.array(q0, float)
        self.log, self.move_time_s, self.fail_on = [], move_time_s, fail_on
        self._stop = threading.Event()
        self.moving = threading.Event()     # set once a move has started
        self.stops = 0

    def connect(self): pass
    def close(self): pass
    def __enter__(self): return self
    def __exit__(self, *exc): pass
    is_connected = True

    def _move(self, kind, q_goal):
        self.log.append((kind, np.array(q_goal)))
        if self.fail_on == len(self.log):
            raise MotionFailedError("protective stop")
        self._stop.clear()
        self.moving.set()
        if self._stop.wait(self.move_time_s):
            raise CanceledError("stopped")
        self.q = np.array(q_goal, float)

    def move_l(self, T, speed, accel):
        self.last_speed = speed
        self._move("L", self.kin.ik(T, self.q))

    def move_j(self, q, speed, accel):
        self._move("J", q)

    def move_path(self, qs, speed, accel):
        self._move("J", qs[-1])

    def driven_path(self, qs, speed, accel):
        return straight_driven_path(self.q, qs)      # _move goes straight (to the end)

    def stop(self):
        self.stops += 1
        self._stop.set()

    def joint_positions(self): return self.q.copy()
    def tcp_pose(self): return self.kin.fk(self.q)
    def safety_status(self): return SafetyStatus()


class FakeGripper:
    """Logs its commands ("open", ("move", width), "close") and, with an `arm`, what the arm had
    done when each was sent and when its wait ended ("moved")."""

    def __init__(self, holds=True, arm=None):
        self.holds, self.log, self.width, self.closed, self.arm = holds, [], 0.085, False, arm
        self.timeline = []      # (what, arm moves started by then)
    def connect(self): pass
    def disconnect(self): pass
    def activate(self): self.log.append("activate")
    def move(self, width_m, speed, force):
        self.start_move(width_m, speed, force)
        return self.wait_moved()

    def start_move(self, width_m, speed, force):
        self.log.append("open" if width_m is None else ("move", width_m))
        self._note("start_move")
        self.width, self.closed = 0.085 if width_m is None else width_m, False

    def wait_moved(self):
        self._note("moved")
        return False

    def open(self):
        self.start_move(None, 1.0, 0.5)

    def close(self):
        self.log.append("close")
        self._note("close")
        self.width, self.closed = (0.03 if self.holds else 0.0), True
        return self.holds

    def _note(self, what):
        if self.arm is not None:
            self.timeline.append((what, len(self.arm.log)))

    def width_m(self): return self.width
    def holding(self): return self.holds and self.closed and self.width > 0.0


_PLANS = []


def _plans():
    """The motion planner over arm.yaml (real, not a double): the primitives plan every transit."""
    if not _PLANS:
        from spatial_manip.motion.arm_plans import ArmPlans
        from spatial_manip.motion.factory import make_planner
        _PLANS.append(ArmPlans(make_planner(load_arm_config(), {"seed": 7})))
    return _PLANS[0]


@pytest.fixture
def setup():
    cfg = load_arm_config()
    env = SafetyEnvelope.from_config(cfg)
    pc = PrimitivesConfig.from_config(cfg["primitives"])
    return env, pc


def grasp(x, y, z):
    T = np.eye(4)
    T[:3, :3] = np.diag([1.0, -1.0, -1.0])
    T[:3, 3] = [x, y, z]
    return T


def test_protocols_are_satisfied_by_the_doubles(setup):
    env, pc = setup
    assert isinstance(FakeArm(env.kin, pc.home_q), Arm)
    assert isinstance(FakeGripper(), Gripper)


def test_pick_runs_phases_in_order_and_ends_lifted(setup):
    env, pc = setup
    arm, grip = FakeArm(env.kin, pc.home_q), FakeGripper()
    phases = []
    res = MotionPrimitives(arm, grip, env, pc, _plans()).pick(grasp(0.5, 0.0, 0.05), progress=lambda p, d, f: phases.append((p, f)))
    assert [p for p, _ in phases] == ["pre_grasp", "open", "approach", "close", "lift", "lift"]
    assert [f for _, f in phases] == sorted(f for _, f in phases)
    assert [k for k, _ in arm.log] == ["J", "L", "L"]
    np.testing.assert_allclose(env.kin.fk(arm.log[0][1])[:3, 3], [0.5, 0.0, 0.15], atol=1e-9)  # pre-grasp 10 cm up
    np.testing.assert_allclose(res.final_pose[:3, 3], [0.5, 0.0, 0.15], atol=1e-9)
    assert res.object_held and grip.log == ["open", "close"]


def test_pick_on_nothing_lifts_then_reports_grasp_failed(setup):
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    with pytest.raises(GraspFailedError, match="without detecting an object"):
        MotionPrimitives(arm, FakeGripper(holds=False), env, pc, _plans()).pick(grasp(0.5, 0.0, 0.05))
    assert len(arm.log) == 3


class SlippingGripper(FakeGripper):
    """Closes on the object, which then slips out of the fingers during the lift."""
    def holding(self): return False


def test_an_object_that_slips_out_during_the_lift_is_a_failed_grasp(setup):
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    prims = MotionPrimitives(arm, SlippingGripper(), env, pc, _plans())
    with pytest.raises(GraspFailedError, match="slipped out of the gripper during the lift"):
        prims.pick(grasp(0.5, 0.0, 0.05))
    assert len(arm.log) == 3 and prims.held is None


def test_a_lift_beyond_reach_is_lowered_to_the_highest_fraction_that_fits(setup):
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    res = MotionPrimitives(arm, FakeGripper(), env, pc, _plans()).pick(grasp(0.5, 0.0, 0.3), lift_m=0.4)
    # pointing down at x = 0.5 m the UR5e reaches up to z ~0.63 m: 0.3 + 0.4 is out, 0.3 + 0.3 in
    np.testing.assert_allclose(res.final_pose[:3, 3], [0.5, 0.0, 0.6], atol=1e-9)


def test_a_pre_grasp_beyond_reach_is_stood_off_shorter(setup):
    """The full approach distance back from the grasp is out of the arm's reach: the pick stands
    off at the longest shorter distance it reaches (STAND_OFF_FRACTIONS) and approaches from
    there, as the grasp service's check kept it (an edge pinch at a lying book's near end)."""
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    at = grasp(0.5, 0.0, 0.55)      # pointing down at x = 0.5 m the UR5e reaches up to z ~0.63 m: 10 cm above is out
    MotionPrimitives(arm, FakeGripper(), env, pc, _plans()).pick(at, lift_m=0.05)
    assert [k for k, _ in arm.log] == ["J", "L", "L"]
    stand_off = STAND_OFF_FRACTIONS[1] * pc.approach_distance_m
    np.testing.assert_allclose(env.kin.fk(arm.log[0][1])[:3, 3], [0.5, 0.0, 0.55 + stand_off], atol=1e-6)


def test_the_fingers_open_while_the_arm_travels_to_the_pre_grasp(setup):
    """The gripper is sent open as the transit starts and waited for only at the pre-grasp, so
    the arm leaves at once; it closes only after the approach."""
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q, move_time_s=0.05)
    grip = FakeGripper(arm=arm)
    MotionPrimitives(arm, grip, env, pc, _plans()).pick(grasp(0.5, 0.0, 0.05), width_m=0.05)
    assert grip.timeline == [("start_move", 0), ("moved", 1), ("close", 2)]   # sent before the transit (J) started,
    assert [k for k, _ in arm.log] == ["J", "L", "L"] and grip.log == [("move", 0.05), "close"]   # awaited after


def test_fingers_that_hold_something_open_before_the_arm_moves(setup):
    """What is in the fingers is let go where the arm stands, as before, never along the way."""
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    grip = FakeGripper(arm=arm)
    grip.close()
    MotionPrimitives(arm, grip, env, pc, _plans()).pick(grasp(0.5, 0.0, 0.05))
    assert grip.timeline[:3] == [("close", 0), ("start_move", 0), ("moved", 0)]


def test_a_pick_whose_every_lift_is_out_of_reach_stops_at_the_pre_grasp(setup):
    """The lift is planned while the arm travels: when it is refused, the arm ends stopped at the
    pre-grasp, nothing closed, and the pick fails with the lift's refusal (UnreachableError, the
    error code a refusal before moving gave)."""
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    grip = FakeGripper()
    at = grasp(0.5, 0.0, 0.62)
    with pytest.raises(UnreachableError, match="lift"):
        MotionPrimitives(arm, grip, env, pc, _plans()).pick(at, approach_m=0.005, lift_m=0.4)
    assert [k for k, _ in arm.log] == ["J"] and "close" not in grip.log
    np.testing.assert_allclose(env.kin.fk(arm.q)[:3, 3], at[:3, 3] + [0.0, 0.0, 0.005], atol=1e-9)


def test_place_descends_opens_and_retreats_along_tcp_z(setup):
    env, pc = setup
    arm, grip = FakeArm(env.kin, pc.home_q), FakeGripper()
    res = MotionPrimitives(arm, grip, env, pc, _plans()).place(grasp(0.45, 0.2, 0.08), approach_m=0.05)
    assert grip.log == ["open"]
    np.testing.assert_allclose(res.final_pose[:3, 3], [0.45, 0.2, 0.18], atol=1e-9)


def test_place_that_may_not_release_backs_out_holding(setup):
    """release_if is asked at the place pose: False keeps the gripper closed and returns to the
    pre-place pose with the object (the ESPIRE server's place when the task's pose is not met)."""
    env, pc = setup
    arm, grip = FakeArm(env.kin, pc.home_q), FakeGripper()
    at = grasp(0.45, 0.2, 0.08)
    asked = []
    res = MotionPrimitives(arm, grip, env, pc, _plans()).place(
        at, approach_m=0.05, release_if=lambda: asked.append(arm.tcp_pose()[:3, 3].copy()) or False)
    np.testing.assert_allclose(asked, [at[:3, 3]], atol=1e-9)            # asked once, at the place pose
    assert grip.log == [] and res.object_held
    np.testing.assert_allclose(res.final_pose[:3, 3], [0.45, 0.2, 0.13], atol=1e-9)   # the pre-place pose


def test_place_with_an_approach_direction_slides_in_and_backs_out_along_it(setup):
    """Into a shelf slot: pre-place and retreat lie back along the given direction (+x), not
    above the place pose."""
    env, pc = setup
    arm, grip = FakeArm(env.kin, pc.home_q), FakeGripper()
    res = MotionPrimitives(arm, grip, env, pc, _plans()).place(grasp(0.45, 0.2, 0.08), approach_m=0.05, retreat_m=0.08,
                                                     approach_dir=approach_direction([2.0, 0.0, 0.0]))
    np.testing.assert_allclose(res.final_pose[:3, 3], [0.37, 0.2, 0.08], atol=1e-9)
    with pytest.raises(InvalidGoalError, match="approach_direction"):
        approach_direction([np.nan, 0, 0])
    assert approach_direction([0, 0, 0]) is None


def test_unsafe_plan_is_refused_before_any_motion(setup):
    env, pc = setup
    arm, grip = FakeArm(env.kin, pc.home_q), FakeGripper()
    with pytest.raises(UnreachableError):
        MotionPrimitives(arm, grip, env, pc, _plans()).pick(grasp(0.5, 0.0, 0.001))  # grasp under the table limit
    with pytest.raises(UnreachableError):
        MotionPrimitives(arm, grip, env, pc, _plans()).waypoints([grasp(0.5, 0.0, 0.2), grasp(0.5, 0.9, 0.2)])
    assert arm.log == [] and grip.log == []


def test_speed_scale_is_capped_by_the_envelope(setup):
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    MotionPrimitives(arm, FakeGripper(), env, pc, _plans()).waypoints([grasp(0.5, 0.0, 0.2)], speed_scale=1.0)
    assert arm.last_speed <= env.config.max_tcp_speed_m_s


def test_contact_moves_stay_slower_than_transits_when_the_configured_speed_is_over_the_cap(setup):
    """A TCP speed configured over the envelope's cap: the approach and lift run at the contact
    scale of the capped speed (the cap was applied after scaling, so they ran at the full cap)."""
    import dataclasses

    env, pc = setup
    fast = dataclasses.replace(pc, speed_m_s=10 * env.config.max_tcp_speed_m_s)
    arm, speeds = FakeArm(env.kin, pc.home_q), []
    move_l = arm.move_l
    arm.move_l = lambda T, speed, accel: (speeds.append(speed), move_l(T, speed, accel))
    MotionPrimitives(arm, FakeGripper(), env, fast, _plans()).pick(grasp(0.5, 0.0, 0.05))
    assert speeds and all(v == pytest.approx(env.config.max_tcp_speed_m_s * pc.contact_speed_scale) for v in speeds)


def test_cancel_during_a_phase_stops_the_arm_and_raises(setup):
    env, pc = setup
    away = np.asarray(pc.home_q) + [0.3, 0.0, 0.0, 0.0, 0.0, 0.0]     # home is then a real move
    arm = FakeArm(env.kin, away, move_time_s=5.0)
    cancel, cancelled_at = threading.Event(), []

    def cancel_once_moving():  # planning the transit first can take a while on a loaded machine
        arm.moving.wait(30)
        time.sleep(0.1)
        cancelled_at.append(time.monotonic())
        cancel.set()

    threading.Thread(target=cancel_once_moving, daemon=True).start()
    with pytest.raises(CanceledError):
        MotionPrimitives(arm, FakeGripper(), env, pc, _plans()).home(cancel=cancel)
    assert time.monotonic() - cancelled_at[0] < 1.0 and arm.stops >= 1


def test_cancel_before_start_moves_nothing(setup):
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CanceledError):
        MotionPrimitives(arm, FakeGripper(), env, pc, _plans()).pick(grasp(0.5, 0.0, 0.05), cancel=cancel)
    assert arm.log == []


def test_motion_failure_stops_the_sequence(setup):
    env, pc = setup
    arm, grip = FakeArm(env.kin, pc.home_q, fail_on=2), FakeGripper()
    with pytest.raises(MotionFailedError, match="protective stop"):
        MotionPrimitives(arm, grip, env, pc, _plans()).pick(grasp(0.5, 0.0, 0.05))
    assert len(arm.log) == 2 and grip.log == ["open"]  # never closed, never lifted


def test_lift_height_covers_an_object_hanging_from_its_end():
    from spatial_manip.control.primitives import LIFT_MAX_M, LIFT_MIN_M, lift_height_for
    assert lift_height_for([0.03, 0.05, 0.04]) == LIFT_MIN_M            # small: the usual lift
    assert abs(lift_height_for([0.24, 0.17, 0.02]) - 0.27) < 1e-9       # a book: its length + 3 cm
    assert lift_height_for([0.6, 0.1, 0.1]) == LIFT_MAX_M
    with pytest.raises(InvalidGoalError):
        lift_height_for([np.nan, 0.1, 0.1])


class LateGripper(FakeGripper):
    """Closing detects nothing (a thin wall between the pads), yet the object comes up in them."""
    def close(self):
        super().close()
        return False


def test_an_object_the_lift_carries_up_is_held_though_closing_detected_none(setup):
    env, pc = setup
    arm = FakeArm(env.kin, pc.home_q)
    prims = MotionPrimitives(arm, LateGripper(), env, pc, _plans())
    res = prims.pick(grasp(0.5, 0.0, 0.05))
    assert res.object_held and len(arm.log) == 3
