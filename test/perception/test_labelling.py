"""Naming clusters from the library (perception.labelling) on the frames that motivated a rule."""
import numpy as np

from spatial_manip.geometry.boxes import Box3D
from spatial_manip.perception.base import Detection, ExpectedObject
from spatial_manip.perception.labelling import assign_labels, match_cost

BOOK_LARGE = (0.2761, 0.2177, 0.0465)
BICYCLE = (0.2045, 0.0736, 0.1833)


def _tilted_slab(size, tilt_deg, center=(0.48, 0.08, 0.19)):
    """A box fitted in full (tilted) orientation: its thin axis tilt_deg from vertical."""
    t = np.radians(tilt_deg)
    R = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(t), -np.sin(t)], [0.0, np.sin(t), np.cos(t)]])
    return Box3D(np.asarray(center, float), np.asarray(size, float), R, "full", 500, 500, 1.0, 0.001)


def test_a_book_entry_that_fits_clearly_better_than_the_object_the_assignment_chose_names_the_cluster():
    """pick-53-00011 (realistic sensing): a black large book leaning 40 degrees on its wedge,
    seen as a 21 x 17 cm slab 4 cm thick, fits its book entry 0.12 and the black bicycle
    sculpture 0.22; the book entry's fallback cost made the assignment choose the sculpture and
    the book then refused it. A rival better by the name margin is the name."""
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    det = Detection("", "object", "object", mask, 0.5, _tilted_slab((0.208, 0.044, 0.168), 50), (25, 24, 25),
                    extra={"lower_bound_sides": [True, True, True]})
    expected = [ExpectedObject("bicycle sculpture", "reference", BICYCLE, (38, 38, 47), id="bicycle_sculpture"),
                ExpectedObject("book", "book", BOOK_LARGE, (32, 32, 32), id="book_black_large")]
    book, bike = match_cost(det, expected[1]), match_cost(det, expected[0])
    assert book + 0.08 <= bike                             # the premise: the book clearly fits better
    assign_labels([det], expected)
    assert (det.id, det.label) == ("book_black_large", "book") and "refused" not in det.extra


def test_near_equal_fits_are_still_refused_and_a_clearly_better_object_is_still_named():
    mask = np.zeros((48, 64), bool)
    mask[10:20, 10:20] = True
    box = _tilted_slab(BICYCLE, 90, center=(0.6, 0.2, 0.09))      # upright, the sculpture's own size
    det = Detection("", "object", "object", mask, 0.5, box, (38, 38, 47))
    expected = [ExpectedObject("bicycle sculpture", "reference", BICYCLE, (38, 38, 47), id="bicycle_sculpture"),
                ExpectedObject("book", "book", BOOK_LARGE, (32, 32, 32), id="book_black_large")]
    assign_labels([det], expected)
    assert det.id == "bicycle_sculpture"
