"""Reflection: causes recorded from the failure state, and the retry context."""
import numpy as np
import pytest

from spatial_manip.reasoning import examples as ex
from spatial_manip.reasoning.planner import make_planner
from spatial_manip.reasoning.reflection import Outcome, reflect, replan_with


def test_wrong_object_is_excluded_next_time():
    scene = ex.table_scene()
    plan = make_planner("program").plan(scene, "take a flat-lying book from the table")
    ctx = reflect("take a flat book", plan, Outcome(False, "VERIFY_FAILED", "b_small_flat", "b_med_up"), scene, scene)
    assert ctx.cause == "wrong_object" and ctx.exclude_ids == ["b_med_up"] and "b_med_up" in ctx.prompt
    ctx2 = reflect("take a flat book", plan, Outcome(False, "UNREACHABLE", "b_small_flat", None), scene, scene, ctx)
    assert ctx2.attempt == 2 and set(ctx2.exclude_ids) == {"b_med_up", "b_small_flat"} and len(ctx2.history) == 2
    assert replan_with(plan, ctx2).targets == ["b_med_flat"]


def test_grasp_slipped_retries_same_target():
    scene = ex.table_scene()
    plan = make_planner("program").plan(scene, "take a flat-lying book from the table")
    ctx = reflect("x", plan, Outcome(False, "GRASP_FAILED", "b_med_flat", None))
    assert ctx.cause == "grasp_slipped" and replan_with(plan, ctx).targets[0] == "b_med_flat"


def test_missed_region_gives_a_correction():
    scene = ex.shelf_scene()
    plan = make_planner("program").plan(scene, "place the book at row 2, column 3 of the shelf")
    after = ex.shelf_scene()
    book = after.get("held_book")
    book.held = False
    book.center = np.asarray(plan.place_pose.position) + np.array([0.0, 0.2, 0.0])   # landed in column 2
    ctx = reflect("row 2 col 3", plan, Outcome(False, "VERIFY_FAILED", "slot_r2c3", "held_book"), scene, after)
    assert ctx.cause == "missed_region"
    assert np.allclose(replan_with(plan, ctx).place_pose.position, np.asarray(plan.place_pose.position) + [0, -0.2, 0])


def test_success_is_not_reflected():
    plan = make_planner("program").plan(ex.table_scene(), "take a large book")
    with pytest.raises(ValueError):
        reflect("x", plan, Outcome(True))


def test_unavailable_backend_is_a_clear_error():
    from spatial_manip.errors import BackendUnavailableError, SpatialManipError
    from spatial_manip.registry import backend_names
    assert {"program", "openai", "transformers"} <= set(backend_names("planner"))
    with pytest.raises(SpatialManipError):
        try:
            make_planner("openai")
        except BackendUnavailableError as e:
            assert "program" in e.message
            raise
        else:                       # the backend exists once it is written: then it must build
            raise SpatialManipError("built")
