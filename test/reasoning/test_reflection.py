"""Reflection decides what a retry redoes from what is in the gripper."""
import numpy as np

from spatial_manip.errors import ErrorCode, GraspFailedError, MotionFailedError, SpatialManipError
from spatial_manip.reasoning.reflection import RETRY_PICK, RETRY_PLACE, keep_described, reflect


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



def _mug(id, x, y):
    from spatial_manip.scene import SceneObject
    return SceneObject(id, "mug", "mug", [x, y, 0.06], [0.1, 0.09, 0.11], np.eye(3))


def _unnamed(id, x, y):
    from spatial_manip.scene import SceneObject
    return SceneObject(id, "object", "object", [x, y, 0.06], [0.1, 0.09, 0.11], np.eye(3))


def _look(*objects):
    from spatial_manip.scene import Scene, Viewpoint
    return Scene(Viewpoint([-0.7, 0.0, 0.6], [1.0, 0.0, -0.5]), Viewpoint([0, 0, 0], [1, 0, 0]), list(objects), [], {})


def test_a_retry_refuses_when_the_name_the_words_took_is_on_another_object_now():
    """objects-63-00013 'grab the taller mug': the first look's one mug (at y -0.39) failed to be
    grasped; the new look gave its name to the other mug, 0.7 m away, and read the first one as an
    unnamed object; the retry took the other mug. It must refuse instead."""
    import pytest
    first = _look(_mug("white_mug", 0.50, -0.39))
    r = reflect(GraspFailedError("5 grasps failed"), attempt=1, holding=None, pick_id="white_mug",
                pick_targets=["white_mug"], scene=first)
    assert r.named_centres[0] == pytest.approx((0.50, -0.39, 0.06))
    again = _look(_mug("white_mug", 0.44, 0.30))
    with pytest.raises(SpatialManipError, match=r"described white_mug \(not found near where it stood\); on this look "
                                                r"they describe white_mug: refusing") as e:
        keep_described(r, again.with_objects(again.objects + [_unnamed("object_0", 0.51, -0.39)]), ["white_mug"])
    assert e.value.code == ErrorCode.TARGET_NOT_FOUND
    # pushed a few centimetres by the failed grasp: still the object the words meant
    pushed = _look(_mug("white_mug", 0.53, -0.36))
    assert keep_described(r, pushed, ["white_mug"]) == (["white_mug"], None)


def test_a_retry_refuses_an_object_the_words_describe_only_on_the_new_look():
    """The first target is gone from what the words describe: the newcomer they describe now was not
    what they meant on the untouched table (it became 'the leftmost mug' only after the push)."""
    import pytest
    first = _look(_mug("mug_a", 0.5, 0.2), _mug("mug_b", 0.5, -0.2))
    r = reflect(GraspFailedError("x"), attempt=1, holding=None, pick_id="mug_a", pick_targets=["mug_a"], scene=first)
    with pytest.raises(SpatialManipError, match=r"on the first look the words described mug_a \(found now as mug_a\); "
                                                "on this look they describe mug_b"):
        keep_described(r, first, ["mug_b"])
    # several described now, one of them the first look's: kept to it, with a note
    kept, note = keep_described(r, first, ["mug_b", "mug_a"])
    assert kept == ["mug_a"] and "kept to mug_a" in note


def test_an_object_carried_away_by_a_failed_place_is_matched_by_name_only():
    """A pick-and-place that dropped the object on the way: it lies where the arm let it go, so where
    the first look saw it says nothing; its name still does."""
    first = _look(_mug("mug_a", 0.5, 0.2))
    r1 = reflect(GraspFailedError("x"), attempt=1, holding=None, pick_id="mug_a", pick_targets=["mug_a"], scene=first)
    r2 = reflect(SpatialManipError("dropped", ErrorCode.VERIFY_FAILED), attempt=2, holding=None, pick_id="mug_a",
                 tried_place_pose=np.eye(4), previous=r1)
    assert r2.named_centres == (None,)
    assert keep_described(r2, _look(_mug("mug_a", 0.3, -0.4)), ["mug_a"]) == (["mug_a"], None)


def test_a_retry_keeps_the_object_the_new_look_names_otherwise_where_it_stood():
    """pick-59-00007 at 06cdc41: the first look read a book book_blue_small, its grasp failed, and the
    next look, 3 cm on, read the same book book_blue_medium; the retry refused it as another object.
    What stands where the first look's target stood (the nearest of its kind, within a push) is it."""
    from spatial_manip.scene import SceneObject
    book = lambda id, x, y: SceneObject(id, "book", "book", [x, y, 0.08], [0.18, 0.12, 0.02], np.eye(3))  # noqa: E731
    first = _look(book("book_blue_small", 0.418, 0.027), book("book_brown_medium", 0.433, 0.286))
    r = reflect(GraspFailedError("no grasp"), attempt=1, holding=None, pick_id="book_blue_small",
                pick_targets=["book_blue_small"], scene=first)
    again = _look(book("book_blue_medium", 0.456, 0.029), book("book_brown_medium", 0.433, 0.286))
    assert keep_described(r, again, ["book_blue_medium"]) == (["book_blue_medium"], None)
