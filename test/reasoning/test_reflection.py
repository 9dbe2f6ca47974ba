"""Reflection decides what a retry redoes from what is in the gripper."""
import numpy as np

from spatial_manip.errors import ErrorCode, GraspFailedError, MotionFailedError, SpatialManipError
from spatial_manip.reasoning.reflection import RETRY_PICK, RETRY_PLACE, reflect


def test_a_place_that_stopped_short_with_the_book_held_retries_the_place():
    T = np.eye(4)
    r = reflect(MotionFailedError("stopped short in phase 'pre_place'"), attempt=1, holding="book_4",
                pick_id="book_4", tried_place_pose=T)
    assert r.retry == RETRY_PLACE and r.holding == "book_4"
    assert len(r.failed_place_poses) == 1 and r.failed_grasp_ids == ()
    assert "book_4 is still in the gripper" in r.summary and "not the pick" in r.summary


def test_a_failed_grasp_retries_the_pick_and_remembers_the_object():
    r1 = reflect(GraspFailedError("3 grasps failed"), attempt=1, holding=None, pick_id="book_2")
    r2 = reflect(GraspFailedError("3 grasps failed"), attempt=2, holding=None, pick_id="book_3", previous=r1)
    assert r2.retry == RETRY_PICK and r2.failed_grasp_ids == ("book_2", "book_3")
    assert "book_2, book_3 tried last" in r2.summary


def test_failed_place_poses_accumulate_only_while_holding():
    T1, T2 = np.eye(4), np.diag([-1.0, -1.0, 1.0, 1.0])
    r1 = reflect(MotionFailedError("x"), attempt=1, holding="b", tried_place_pose=T1)
    r2 = reflect(MotionFailedError("y"), attempt=2, holding="b", tried_place_pose=T2, previous=r1)
    assert len(r2.failed_place_poses) == 2
    dropped = reflect(SpatialManipError("landed 5 cm off", ErrorCode.VERIFY_FAILED), attempt=3, holding=None, tried_place_pose=T1,
                      previous=r2)
    assert dropped.retry == RETRY_PICK and len(dropped.failed_place_poses) == 2
    d = dropped.to_dict()
    assert d["retry"] == "pick" and d["failed_place_poses"][0] == T1.tolist()


def test_the_first_looks_candidates_are_kept_through_every_retry():
    r1 = reflect(GraspFailedError("5 grasps failed"), attempt=1, holding=None, pick_id="book_4", pick_targets=["book_4"])
    r2 = reflect(GraspFailedError("no grasp"), attempt=2, holding=None, pick_id="book_4",
                 pick_targets=["book_4", "book_1"], previous=r1)
    assert r1.named_ids == r2.named_ids == ("book_4",)
    assert r2.to_dict()["named_ids"] == ["book_4"]

