"""An answer that hangs on a detection perception left unnamed between two objects is refused
(reasoning/unsure_names.py): the planner never guesses a target (pick-84-00004)."""
import numpy as np

from spatial_manip.reasoning.planner import ProgramPlanner
from spatial_manip.reasoning.unsure_names import tied_readings
from spatial_manip.scene import Scene, SceneObject, Viewpoint

VIEWER = Viewpoint([-0.6, 0.0, 0.9], [0.6, 0.0, -0.8])        # looking along +x: its left is +y
ROBOT = Viewpoint([0.0, 0.0, 0.0], [1.0, 0.0, 0.0])
BOOKEND = {"label": "pillar bookend", "category": "reference", "id": "pillar_bookend", "tie": True}
SMALL_BOOK = {"label": "book", "category": "book", "id": "book_grey_small", "tie": True}


def _book(id, y):
    return SceneObject(id, "book", "book", [0.5, y, 0.02], [0.22, 0.15, 0.03], np.eye(3), size_class="medium")


def _unnamed(y, candidates=(BOOKEND, SMALL_BOOK)):
    return SceneObject("object_4", "object", "object", [0.5, y, 0.02], [0.2, 0.13, 0.02], np.eye(3),
                       extra={"candidates": [dict(c) for c in candidates]})


def _scene(*objects):
    return Scene(VIEWER, ROBOT, list(objects))


def plan(scene, text):
    return ProgramPlanner().plan(scene, text)


def test_a_rank_the_unsure_detection_would_take_is_refused_naming_it():
    r = plan(_scene(_book("book_a", 0.3), _book("book_b", 0.0), _unnamed(-0.3)), "take the rightmost book")
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()
    assert "object_4" in r.error["message"] and "pillar bookend" in r.error["message"], r.error["message"]
    assert r.targets == []


def test_a_rank_the_unsure_detection_cannot_change_stands_and_says_what_was_checked():
    r = plan(_scene(_book("book_a", 0.3), _book("book_b", 0.0), _unnamed(0.1)), "take the rightmost book")
    assert r.ok and r.targets == ["book_b"], r.to_json()
    checked = [e for e in r.trace if e.get("event") == "unsure_names"]
    assert checked and {"object": "object_4", "as": "book", "changes": ""} in checked[0]["readings"]


def test_any_book_stands_when_the_reading_only_adds_a_choice():
    r = plan(_scene(_book("book_a", 0.3), _unnamed(-0.3)), "take a book")
    assert r.ok and r.targets == ["book_a"], r.to_json()


def test_the_book_is_refused_when_the_unsure_detection_may_be_a_second_book():
    r = plan(_scene(_book("book_a", 0.3), _unnamed(-0.3)), "take the book")
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()


def test_a_candidate_another_detection_is_named_after_is_no_reading():
    named = _book("book_grey_small", 0.3)
    scene = _scene(named, _unnamed(-0.3))
    assert [c["id"] for _, c in tied_readings(scene)] == ["pillar_bookend"]
    assert plan(scene, "take the rightmost book").targets == ["book_grey_small"]


def test_candidates_not_tied_are_no_reading():
    loose = [{**SMALL_BOOK, "tie": False}, BOOKEND]
    scene = _scene(_book("book_a", 0.3), _unnamed(-0.3, loose))
    assert [c["id"] for _, c in tied_readings(scene)] == ["pillar_bookend"]
    assert plan(scene, "take the rightmost book").targets == ["book_a"]


# A noun the scene names once is bound to that object when the words are read ("the bowl on the far
# right" -> filterRel$RightMost(yellow_bowl)): each reading is read anew, or it never sees a second
# bowl. objects-89-00007 / -91-00007 (realistic): the arm at home hid half of the black bowl, left
# unnamed between a bottle and a bowl (or a bowl alone tied), and the yellow bowl was taken.
BOTTLE = {"label": "bottle", "category": "bottle", "id": "salad_dressing", "tie": True}
BOWL = {"label": "bowl", "category": "bowl", "id": "black_bowl", "tie": True}


def _bowl(id, x, y):
    return SceneObject(id, "bowl", "bowl", [x, y, 0.025], [0.11, 0.1, 0.047], np.eye(3))


def _half_bowl(x, y, candidates):
    return SceneObject("object_0", "object", "object", [x, y, 0.025], [0.1, 0.05, 0.047], np.eye(3),
                       extra={"candidates": [dict(c) for c in candidates]})


def test_a_rank_over_a_noun_the_scene_names_once_is_refused_when_the_unsure_detection_may_be_one():
    r = plan(_scene(_bowl("yellow_bowl", 0.58, 0.4), _half_bowl(0.42, -0.19, (BOTTLE, BOWL))),
             "grab the bowl on the far right")
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()
    assert "object_0" in r.error["message"] and "bowl" in r.error["message"], r.error["message"]


def test_a_distance_over_a_noun_the_scene_names_once_is_refused_when_the_unsure_detection_may_be_one():
    mug = SceneObject("white_mug", "mug", "mug", [0.4, -0.116, 0.054], [0.1, 0.09, 0.11], np.eye(3))
    r = plan(_scene(_bowl("yellow_bowl", 0.57, 0.103), mug, _half_bowl(0.645, -0.196, (BOWL,))),
             "take the bowl nearest to the mug")
    assert not r.ok and r.error["code"] == "AMBIGUOUS", r.to_json()
    assert "fits the bowl (black_bowl) as well as another object" in r.error["message"], r.error["message"]


def test_a_noun_the_scene_names_once_stands_when_no_reading_changes_it():
    scene = _scene(_bowl("yellow_bowl", 0.58, 0.4), _half_bowl(0.42, -0.19, (BOTTLE, BOWL)))
    for text in ("grab the yellow bowl", "grab the bowl on the far left"):
        r = plan(scene, text)
        assert r.ok and r.targets == ["yellow_bowl"], (text, r.to_json())


# A piece is no reading of an entry it spans less than half of (labelling.PIECE_SHARE of its longest
# side): an 81-pixel strip at a standing book's depth edge, 2.6 x 0.9 x 5 cm, tied a 17.9 cm small
# book and a carton, and refused a rank the planner answered right (pick-88-00009, frame in
# test/perception/frames). The half-hidden bowl above, 10 of its 11 cm, is still read.
SIZED_BOOK = {**SMALL_BOOK, "size_m": [0.115, 0.019, 0.179]}
SIZED_CARTON = {"label": "carton", "category": "carton", "id": "orange_juice", "tie": True, "size_m": [0.055, 0.054, 0.135]}


def _strip(y, size=(0.026, 0.009, 0.05)):
    return SceneObject("object_0", "object", "object", [0.5, y, 0.03], list(size), np.eye(3),
                       extra={"candidates": [dict(SIZED_BOOK), dict(SIZED_CARTON)]})


def test_a_piece_of_the_tied_entry_is_no_reading_and_the_trace_says_so():
    r = plan(_scene(_book("book_a", 0.3), _book("book_b", 0.0), _strip(-0.3)), "take the rightmost book")
    assert r.ok and r.targets == ["book_b"], r.to_json()
    readings = [e for e in r.trace if e.get("event") == "unsure_names"][0]["readings"]
    assert {"object": "object_0", "as": "book", "changes": "", "not_read": "a piece: 5 cm of its 18 cm"} in readings


def test_a_detection_spanning_half_the_tied_entry_is_still_read():
    r = plan(_scene(_book("book_a", 0.3), _book("book_b", 0.0), _strip(-0.3, (0.02, 0.01, 0.095))),
             "take the rightmost book")
    assert not r.ok and r.error["code"] == "AMBIGUOUS" and "object_0" in r.error["message"], r.to_json()
