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
    reference_bench._count_wrong_names(res, seen, truth, reference_bench.GATE_M)
    assert (res.books, sorted(res.stray_books)) == (3, ["book->mug", "book->nothing"])
    assert (res.named, res.wrong_names) == (1, [])
    assert "where no book stands 2 (66.7%)" in reference_bench.summary([res])
