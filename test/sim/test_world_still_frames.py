"""SimWorld.render draws a still world once: the camera's frames between motions reuse the last
drawing (the same pixels), keep their own sensor noise, and anything the renderer draws that moves
or changes colour, or a reset, draws anew. 320x240 keeps the run short on 2 cores."""
import numpy as np
import pytest

from spatial_manip.sim import layouts as L
from spatial_manip.sim.sensing import only
from spatial_manip.sim.world import HOME_Q, SimConfig, SimWorld

CFG = SimConfig(width=320, height=240)


class _DrawCounter:
    """Counts the renderer's GL passes (colour, depth and segmentation: 3 per drawn frame)."""

    def __init__(self, world, monkeypatch):
        self.passes = 0
        renderer = world._get_renderer()
        draw = renderer.render

        def counted(*a, **k):
            self.passes += 1
            return draw(*a, **k)
        monkeypatch.setattr(renderer, "render", counted)


@pytest.fixture(scope="module")
def scene():
    return L.sample_tabletop(np.random.default_rng(4), n_books=2)


def test_a_still_world_is_drawn_once_and_its_frames_are_the_drawings_pixels(scene, monkeypatch):
    with SimWorld(scene, config=CFG, seed=4) as w:
        first = w.render()
        counter = _DrawCounter(w, monkeypatch)
        again = w.render()
        assert counter.passes == 0
        for a, b in ((first.rgb, again.rgb), (first.depth_m, again.depth_m), (first.segmentation, again.segmentation)):
            assert np.array_equal(a, b)
        again.depth_m[:] = 0.0                       # a caller's frame is its own: the drawing stays
        assert np.array_equal(w.render().depth_m, first.depth_m)


def test_the_sensor_noise_of_a_still_world_is_drawn_per_frame(scene):
    with SimWorld(scene, config=SimConfig(width=320, height=240, sensing=only("depth_noise")), seed=4) as w:
        a, b = w.render(), w.render()
        assert np.array_equal(a.rgb, b.rgb)
        assert not np.array_equal(a.depth_m, b.depth_m)
        seen = (a.depth_m > 0) & (b.depth_m > 0)
        assert np.median(np.abs(a.depth_m - b.depth_m)[seen]) < 0.02


def test_a_moved_arm_a_hidden_geom_and_a_reset_are_drawn_anew(scene, monkeypatch):
    with SimWorld(scene, config=CFG, seed=4) as w:
        before = w.render()
        counter = _DrawCounter(w, monkeypatch)
        w.pose_arm(HOME_Q + np.array([0.4, 0.0, 0.0, 0.0, 0.0, 0.0]))
        moved = w.render()
        assert counter.passes == 3 and not np.array_equal(moved.rgb, before.rgb)
        alpha = w.model.geom_rgba[:, 3].copy()
        with w.lock:
            w.model.geom_rgba[:, 3] = 0.0
            hidden = w.render()
            w.model.geom_rgba[:, 3] = alpha
        assert counter.passes == 6 and not np.any(hidden.depth_m > 0)
        assert np.array_equal(w.render().rgb, moved.rgb) and counter.passes == 9
        w.reset(scene, seed=4)
        counter = _DrawCounter(w, monkeypatch)       # the new model's renderer
        w.render()
        assert counter.passes == 3
