"""The set-down check on a frame's depth alone (issue 42): a book where it was set down fills
its box; an empty spot, or the book 5 cm away, does not; nor does the book behind the arm."""
import numpy as np

from spatial_manip.geometry import synthetic as S
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.depth_check import depth_evidence
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.transforms import make_transform

K = CameraIntrinsics.from_fovy(320, 240, 40.0)
T_CAM = S.look_at(np.array([-0.2, 0.0, 0.7]), np.array([0.6, 0.0, 0.05]))
SIZE = np.array([0.15, 0.03, 0.22])                  # an upright book
BOOK = make_transform(np.eye(3), [0.6, 0.0, 0.11])


def _frame(*boxes, noisy=False):
    obs = S.render(K, T_CAM, [S.SynthBox(np.asarray(c, float), np.asarray(s, float), np.eye(3), (90, 90, 90))
                              for c, s in boxes])
    if noisy:
        obs.depth_m = L515Noise().apply(obs.depth_m, np.random.default_rng(0))
    return obs


def _evidence(obs, T=BOOK):
    return depth_evidence(obs, T, SIZE, grow_m=0.02, lift_m=0.01)


def _share(obs, T=BOOK):
    return _evidence(obs, T).share_seen()


def test_a_book_at_its_set_down_pose_fills_its_box_and_an_empty_table_does_not():
    there = _frame((BOOK[:3, 3], SIZE), noisy=True)
    assert _share(there) > 0.9
    assert _share(_frame()) == 0.0                                   # the table under it is not it
    moved = _frame(([0.6, 0.05, 0.11], SIZE), noisy=True)            # 5 cm to the side
    assert _share(moved) < 0.8


def test_something_in_front_hides_it_and_says_nothing_either_way():
    """A block between camera and book (the arm, a shelf board): its pixels count neither way;
    what still shows the place decides."""
    wall = ([0.3, 0.0, 0.25], [0.08, 0.3, 0.3])                      # hides all of it
    hidden = _evidence(_frame((BOOK[:3, 3], SIZE), wall))
    assert hidden.inside == 0 and hidden.behind == 0 and hidden.in_front > 0
    board = ([0.45, 0.0, 0.06], [0.02, 0.3, 0.12])                   # hides its lower half
    there, gone = _evidence(_frame((BOOK[:3, 3], SIZE), board)), _evidence(_frame(board))
    assert there.in_front > 0 and there.share_seen() > 0.9 and there.inside >= 30
    assert gone.share_seen() < 0.2 and gone.behind > 0


def test_a_core_asks_only_the_pixels_a_book_set_down_a_little_off_still_covers():
    """Seen from 2.4 m (a far shelf), a book set down 3 cm along its width off its pose leaves the
    edge pixels of its planned box seeing past it; the box's core, 2 cm in from each face, is
    still all book. An empty place and a book 8 cm off stay unconfirmed."""
    turned = make_transform(np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), [0.6, 0.0, 0.11])
    far = S.look_at(np.array([-1.6, 0.3, 1.0]), np.array([0.6, 0.0, 0.05]))

    def seen(offset_m, core_m):
        obs = S.render(K, far, [S.SynthBox(np.array([0.6, offset_m, 0.11]), SIZE, turned[:3, :3], (90, 90, 90))])
        obs.depth_m = L515Noise().apply(obs.depth_m, np.random.default_rng(0))
        return depth_evidence(obs, turned, SIZE, grow_m=0.02, lift_m=0.01, core_m=core_m)

    assert seen(0.03, 0.0).share_seen() < 0.8
    core = seen(0.03, 0.02)
    assert core.share_seen() > 0.85 and core.inside >= 30
    assert seen(0.08, 0.02).share_seen() < 0.7
    empty = S.render(K, far, [])
    assert depth_evidence(empty, turned, SIZE, grow_m=0.02, lift_m=0.01, core_m=0.02).inside == 0
