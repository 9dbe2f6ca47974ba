"""reference_bench counts detections called "book" apart from wrong catalogue names, with those
where no book stands: a shelf board's noise read as lying books fills an empty slot (issue 37)."""
import numpy as np

from spatial_manip.bench import reference_bench
from spatial_manip.scene import Scene, SceneObject, Viewpoint


def _obj(i, label, category, centre, size=(0.2, 0.05, 0.25)):
    return SceneObject(i, label, category, np.asarray(centre, float), np.asarray(size, float))


def test_books_where_no_book_stands_are_counted_apart_from_wrong_names():
    view = Viewpoint(np.zeros(3), np.array([1.0, 0.0, 0.0]))
    truth = Scene(view, view, [_obj("book_1", "book", "book", (0.8, 0.3, 0.1)),
                               _obj("near_1", "mug", "mug", (0.8, -0.3, 0.05), (0.1, 0.1, 0.1))], [])
    seen = [_obj("book_red_large", "book", "book", (0.81, 0.3, 0.1)),          # a book where a book stands
            _obj("book_grey_small", "book", "book", (0.8, 0.0, -0.08)),        # on an empty board
            _obj("book_2", "book", "book", (0.8, -0.3, 0.05)),                 # on the mug
            _obj("mug", "mug", "mug", (0.8, -0.3, 0.05))]
    res = reference_bench.TaskResult("place-0-00000", "i")
    reference_bench._count_wrong_names(res, seen, truth, reference_bench.GATE_M, np.zeros(3))
    assert (res.books, sorted(res.stray_books)) == (3, ["book->mug", "book->nothing"])
    assert (res.named, res.wrong_names) == (1, [])
    assert "where no book stands 2 (66.7%)" in reference_bench.summary([res])


def test_a_wrong_name_records_what_stands_there_and_how_far_it_was_seen():
    view = Viewpoint(np.zeros(3), np.array([1.0, 0.0, 0.0]))
    truth = Scene(view, view, [_obj("book_1", "book", "book", (0.8, 0.3, 0.1))], [])
    seen = [_obj("bowl", "bowl", "bowl", (0.8, 0.3, 0.1), (0.12, 0.12, 0.05))]
    res = reference_bench.TaskResult("place-0-00000", "i")
    reference_bench._count_wrong_names(res, seen, truth, reference_bench.GATE_M, np.array([0.0, 0.3, 0.7]))
    assert res.wrong_names == ["bowl->book"]
    (detail,) = res.wrong_details
    assert (detail["given"], detail["true"], detail["true_category"]) == ("bowl", "book", "book")
    assert detail["range_m"] == 1.0 and detail["size"] == [0.12, 0.12, 0.05]
    assert "by cause {'a book named as an object': 1}" in reference_bench.summary([res])


def test_a_set_down_with_no_slot_is_judged_by_the_checks_its_pose_decides():
    from types import SimpleNamespace

    view = Viewpoint(np.array([-0.5, 0.0, 0.5]), np.array([1.0, 0.0, 0.0]))
    held = SceneObject("bottle_held", "bottle", "bottle", np.array([0.3, 0.0, 0.4]), np.array([0.06, 0.06, 0.2]),
                       held=True)
    truth = Scene(view, view, [_obj("can_1", "can", "can", (0.6, 0.0, 0.05), (0.07, 0.07, 0.1)), held], [])
    task = SimpleNamespace(check=[{"type": "released", "object": "bottle_held"},
                                  {"type": "direction", "object": "bottle_held", "reference": "can_1",
                                   "word": "behind", "frame": "relative"},
                                  {"type": "standing", "object": "bottle_held"}])
    behind, in_front = np.eye(4), np.eye(4)
    behind[:3, 3], in_front[:3, 3] = (0.75, 0.0, 0.1), (0.45, 0.0, 0.1)
    assert reference_bench.set_down_holds(task, truth, behind)
    assert not reference_bench.set_down_holds(task, truth, in_front)
    assert not reference_bench.set_down_holds(task, truth, None)
