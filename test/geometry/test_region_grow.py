"""Region grower against the renderer's ground-truth segmentation."""
import numpy as np
import pytest

from spatial_manip.geometry import synthetic as S
from spatial_manip.geometry.boxes import box_2d_to_box_3d
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.geometry.region_grow import object_segmentation
from spatial_manip.transforms import make_transform

INTR = CameraIntrinsics.from_fovy(640, 480, 55)


def _scene(seed, noise=False):
    rng = np.random.default_rng(seed)
    a = S.random_lying_box(rng, xy_range=((0.45, 0.5), (-0.15, -0.1)))
    b = S.random_lying_box(rng, xy_range=((0.45, 0.5), (0.1, 0.15)))
    obs = S.render(INTR, S.look_at([1.0, 0.0, 0.7], [0.45, 0, 0]), [a, b])
    if noise:
        obs.depth_m = L515Noise().apply(obs.depth_m, rng)
    return obs


def _iou(m, truth):
    return (m & truth).sum() / (m | truth).sum()


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("noise", [False, True])
def test_box_prompt_recovers_object(seed, noise):
    obs = _scene(seed, noise)
    for i in (0, 1):
        truth = obs.segmentation == i
        m = object_segmentation(obs, box=S.box_pixel_bounds(obs, i, pad_px=10))
        assert _iou(m, truth) > (0.85 if noise else 0.95)


def test_point_prompt_and_mask_feeds_box_fit():
    obs = _scene(3)
    ys, xs = np.nonzero(obs.segmentation == 1)
    m = object_segmentation(obs, point=(xs.mean(), ys.mean()))
    assert _iou(m, obs.segmentation == 1) > 0.95
    box = box_2d_to_box_3d(obs, mask=m)
    assert box.n_points > 100


def test_bad_prompts_raise():
    obs = _scene(4)
    with pytest.raises(ValueError, match="box"):
        object_segmentation(obs)
    with pytest.raises(ValueError, match="outside"):
        object_segmentation(obs, point=(5000, 3))
    empty = S.render(INTR, make_transform(t=[0, 0, 1]), [], table_z=None)
    with pytest.raises(ValueError):
        object_segmentation(empty, box=[10, 10, 60, 60])
