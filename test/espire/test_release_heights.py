"""Where ESPIRE's server lets a placed book go (episode._release_heights): set down on what is
under the clicked point, as low as the arm reaches, never more than MAX_RELEASE_DROP_M over it:
a point high above its support, or with nothing under it, gives no height (no release), where
the server used to let the book fall from the point's own height."""
import numpy as np
import pytest

from spatial_manip.espire.episode import MAX_RELEASE_DROP_M, RELEASE_RAISES_M, _release_heights
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.sim import placement

TABLE_TOP = 0.0


def _scene() -> Scene:
    table = SceneObject("table", "table", "table", [0.55, 0.0, TABLE_TOP - 0.35], [0.6, 1.4, 0.7], np.eye(3))
    book = SceneObject("book_1", "book", "book", [0.5, 0.0, 0.3], [0.15, 0.02, 0.22], np.eye(3), held=True)
    return Scene(Viewpoint([-0.7, 0, 0.7], [1, 0, -0.6]), Viewpoint([0, 0, 0], [1, 0, 0]), [table, book])


@pytest.mark.parametrize("above_m", [0.0, 0.03, 0.12, 0.30])
def test_a_book_is_released_at_most_max_release_drop_over_what_is_under_the_point(above_m):
    heights = _release_heights(_scene(), "book_1", [0.5, 0.1], TABLE_TOP + above_m)
    low = TABLE_TOP + placement.DROP_M
    assert heights and heights[0] == pytest.approx(low)                      # as low as the arm reaches first
    assert heights == sorted(heights) and max(heights) - low <= MAX_RELEASE_DROP_M + 1e-9, heights
    assert len(heights) <= len(RELEASE_RAISES_M) + 1


def test_the_points_own_height_is_tried_only_near_its_support():
    low = TABLE_TOP + placement.DROP_M
    near = _release_heights(_scene(), "book_1", [0.5, 0.1], TABLE_TOP + 0.03)
    assert near[-1] == pytest.approx(TABLE_TOP + 0.03 + placement.DROP_M)
    high = _release_heights(_scene(), "book_1", [0.5, 0.1], TABLE_TOP + 0.30)
    assert high == pytest.approx([low + r for r in RELEASE_RAISES_M])        # not dropped from 30 cm


def test_nothing_under_the_point_gives_no_release():
    assert _release_heights(_scene(), "book_1", [1.5, 0.1], TABLE_TOP + 0.05) == []    # past the table's far edge
