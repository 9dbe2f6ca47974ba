"""Quantities out of range are refused by name, never silently changed (issue 24): a negative or
zero distance, a clock hour outside 1-12, a tilt beyond 90 degrees."""
import pytest

from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning.planner import make_planner


@pytest.fixture(scope="module")
def plan():
    planner, scene = make_planner("program"), ex.held_table_scene()
    return lambda text: planner.plan(scene, text, task_kind="place")


@pytest.mark.parametrize("text,needle", [
    ("place it -3 cm to the right of the jar", "cannot be negative"),
    ("place it \u22123 cm to the right of the jar", "cannot be negative"),
    ("place it 0 cm to the right of the jar", "a distance of 0"),
    ("place it at 13 o'clock from the jar, 10 cm away", "clock hours run from 1 to 12"),
    ("place it tilted 400 degrees 10 cm left of the jar", "a tilt runs from 0 to 90"),
])
def test_out_of_range_quantities_are_invalid_goals(plan, text, needle):
    r = plan(text)
    assert r.error is not None and r.error["code"] == "INVALID_GOAL" and needle in r.error["message"], r.error


@pytest.mark.parametrize("text,program", [
    ("place it 3 cm to the right of the jar", "metric$Right(0.03, jar"),
    ("put it tilted 30 degrees 10 cm left of the jar", "tilt_deg=30.0"),
])
def test_quantities_in_range_still_plan(plan, text, program):
    r = plan(text)
    assert r.ok and program in r.program, (r.program, r.error)
