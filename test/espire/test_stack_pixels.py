"""Where the stack driver clicks: on a book rather than the support under it, and, after a MOVE
the arm refused, on a target an earlier plan listed when the new plan's are all tried."""
import numpy as np

from spatial_manip.espire.stack_driver import INNER_PX, Choice, _carried, _deepest, _untried, target_pixel
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.scene import SceneObject


def _facing_a_wall(gap_z=(0.045, 0.07)) -> RGBDObservation:
    """A camera 5 cm above the table looking along +x at a wall 1 m away, which shows only
    below and above `gap_z` (as a book on a pedestal shows its cover and the pedestal's side,
    with the centre of its box between them)."""
    h, w = 240, 320
    k = CameraIntrinsics.from_fovy(w, h, 40.0)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([[0, -1, 0], [0, 0, -1], [1, 0, 0]])     # optical z along world +x
    T[:3, 3] = [0.0, 0.0, 0.05]
    depth = np.ones((h, w), np.float32)
    obs = RGBDObservation(rgb=np.zeros((h, w, 3), np.uint8), depth_m=depth, intrinsics=k, T_base_cam=T)
    pts, uv = base_cloud(obs, np.ones((h, w), bool))
    hidden = (pts[:, 2] > gap_z[0]) & (pts[:, 2] < gap_z[1])
    depth[uv[hidden, 1], uv[hidden, 0]] = 0.0
    return obs


def _height_at(obs, px) -> float:
    k = obs.intrinsics
    return float(obs.T_base_cam[2, 3] - (px[0] - k.cy) / k.fy * obs.depth_m[px])


def test_a_books_pixel_is_taken_from_the_upper_half_of_its_box():
    obs = _facing_a_wall()
    book = SceneObject("book_red_small", "book", "book", [1.0, 0.0, 0.05], [0.04, 0.2, 0.10])
    anywhere = target_pixel(obs, box=book)
    on_top = target_pixel(obs, box=book, upper=True)
    assert _height_at(obs, anywhere) < 0.05          # nearest the centre: the support's side below
    assert 0.05 <= _height_at(obs, on_top) <= 0.10
    assert abs(on_top[1] - anywhere[1]) <= 1         # the same column, higher up


def test_the_upper_half_falls_back_to_the_whole_box_when_only_its_lower_half_shows():
    obs = _facing_a_wall(gap_z=(0.045, 0.5))
    book = SceneObject("book_1", "book", "book", [1.0, 0.0, 0.05], [0.04, 0.2, 0.10])
    px = target_pixel(obs, box=book, upper=True)
    assert px is not None and _height_at(obs, px) < 0.05


def test_a_slot_is_clicked_at_the_lowest_points_it_shows_where_a_released_book_stands():
    obs = _facing_a_wall(gap_z=(0.0, 0.0))
    slot = SceneObject("slot_r1c1", "slot", "slot", [1.0, 0.0, 0.20], [0.4, 0.3, 0.30])
    middle = target_pixel(obs, box=slot)
    low = target_pixel(obs, box=slot, lowest=True)
    assert abs(_height_at(obs, middle) - 0.20) < 0.02             # the back panel's middle
    assert _height_at(obs, low) < 0.05 + 0.016                    # the slot's lowest visible points
    assert abs(low[1] - middle[1]) <= 1                           # across, still its middle


def test_a_refused_target_falls_back_on_an_earlier_plans_untried_targets():
    first = Choice(pixel=(10, 10), target="book_a", alternatives=[("book_a", (10, 10)), ("book_b", (50, 50)),
                                                                  ("book_c", (90, 90))])
    tried = [(10, 10)]
    earlier = _carried(first, [])
    # the re-plan lists only a and b (same pixels): b, then c from the first plan
    replan = Choice(pixel=(10, 11), target="book_a", alternatives=[("book_a", (10, 11)), ("book_b", (50, 50))])
    nxt = _untried(replan, tried, earlier)
    assert (nxt.target, nxt.pixel) == ("book_b", (50, 50))
    tried.append(nxt.pixel)
    earlier = _carried(nxt, earlier)
    nxt = _untried(replan, tried, earlier)
    assert (nxt.target, nxt.pixel) == ("book_c", (90, 90))
    tried.append(nxt.pixel)
    assert _untried(replan, tried, _carried(nxt, earlier)).pixel is None


def test_a_new_plans_pixel_for_a_target_replaces_the_earlier_one():
    earlier = [("book_a", (10, 10)), ("book_b", (50, 50))]
    replan = Choice(pixel=(70, 70), target="book_b", alternatives=[("book_b", (70, 70))])
    assert _untried(replan, [(70, 70)], earlier).pixel == (10, 10)      # a was never tried
    assert _untried(replan, [(70, 70), (10, 10)], earlier).pixel is None   # b's old pixel is not retried


def test_a_books_pixel_lies_inside_the_region_its_points_form_not_on_its_edge():
    """The upper half of the box shows as a strip under 2 px tall nearest the centre (5.0-5.5
    cm) and a band above (7-10 cm, about 10 px): the pixel is taken INNER_PX inside a region of
    its points, in the band, not on the strip's edge where the next pixel is the support."""
    obs = _facing_a_wall(gap_z=(0.055, 0.07))
    book = SceneObject("book_1", "book", "book", [1.0, 0.0, 0.05], [0.04, 0.2, 0.10])
    px = target_pixel(obs, box=book, upper=True)
    assert 0.07 <= _height_at(obs, px) <= 0.10, px
    assert all(obs.depth_m[r, px[1]] > 0 for r in range(px[0] - INNER_PX, px[0] + INNER_PX + 1)), px


def test_a_second_try_at_a_book_clicks_the_deepest_pixel_of_its_region():
    """The upper half of the box shows as a 2 px strip nearest the centre and a band above: the
    first pixel (nearest the centre, INNER_PX inside) and the deepest one lie in the band, the
    deepest farther from the band's edge; it is the pixel a driver tries when the first grasped
    nothing (pick-54-00008 at 7c93cdf: the first pixel 1.4 px off the book, the same pixel again
    on the re-plan, then no trial left to try)."""
    obs = _facing_a_wall(gap_z=(0.055, 0.07))
    book = SceneObject("book_1", "book", "book", [1.0, 0.0, 0.05], [0.04, 0.2, 0.10])
    first = target_pixel(obs, box=book, upper=True)
    deep = target_pixel(obs, box=book, upper=True, deepest=True)
    assert 0.07 <= _height_at(obs, deep) <= 0.10, deep

    def margin(px):        # rows of the region (the box's upper half, 1 cm margin) above and below px, in its column
        up = next(k for k in range(1, 100) if obs.depth_m[px[0] - k, px[1]] == 0 or _height_at(obs, (px[0] - k, px[1])) > 0.11)
        down = next(k for k in range(1, 100) if obs.depth_m[px[0] + k, px[1]] == 0)
        return min(up, down)
    assert margin(deep) > margin(first) >= INNER_PX
    # the re-plan gives the same first pixel: the driver goes on to the deepest one
    replan = Choice(pixel=first, target="book_1", alternatives=[("book_1", first), ("book_1", deep)])
    assert _untried(replan, [first]).pixel == deep


def test_the_deepest_pixel_of_a_region_cut_by_the_image_border_keeps_off_the_border():
    """A book cut by the image's left border (columns 0-29, rows 100-139): what lies past the
    border is unseen, so the surest pixel is 15 columns inside (and at least 15 rows from the
    top and bottom), not on column 0, which a distance to the region's edge alone (no frame)
    took as deepest (20 rows from the top and bottom, nothing to its left)."""
    rows, cols = np.mgrid[100:140, 0:30]
    uv = np.column_stack([cols.ravel(), rows.ravel()])
    u, v = _deepest(uv, (240, 320))
    assert 14 <= u <= 15 and 114 <= v <= 125
