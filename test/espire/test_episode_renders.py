"""An episode renders a view once per state of the world: ESPIRE's driver asks for the same view
again before it acts (plain, then highlighted; twice around END_TASK), and the world changes only
in a MOVE. A sensing profile that draws depth noise per frame renders every request."""
import io
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from spatial_manip.espire import views
from spatial_manip.espire.episode import Episode
from spatial_manip.sim import layouts as L
from spatial_manip.sim.sensing import SensingProfile
from spatial_manip.sim.tasks import Task

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _place_episode(sensing: SensingProfile) -> Episode:
    scene = L.sample_shelf(np.random.default_rng(2), layout="grid", stance="espire")
    held = scene.held_object().id
    slot = next(r.id for r in scene.regions if r.extra["reachable"])
    task = Task(id="renders", suite="place", action="place", family="Attribute/Index2D",
                family_key="place:Attribute/Index2D", aspect="Attribute", granularity="Fine", difficulty="medium",
                instruction="place the book in the marked slot", program="", answer=[slot], golden_steps=4,
                scene="", check=[{"type": "released", "object": held},
                                 {"type": "in_regions", "object": held, "regions": [slot]}],
                held=held, scene_kind="shelf", scene_seed=2)
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return Episode(task, scene, [None, None, None], sensing)


@pytest.fixture
def count_renders(monkeypatch):
    calls = []
    real = views.render

    def counting(world, view):
        calls.append(view)
        return real(world, view)
    monkeypatch.setattr(views, "render", counting)
    return calls


def test_a_view_asked_again_before_a_move_is_the_same_image_rendered_once(count_renders):
    ep = _place_episode(SensingProfile(name="ideal"))
    try:
        plain = ep.observe("a", "world", False)
        marked = ep.observe("b", "world", True)
        again = ep.observe("c", "world", True)
        ego = ep.observe("d", "ego", False)
        assert count_renders == ["world", "ego"]
        assert plain["depth"] == marked["depth"] and plain["rgb"] != marked["rgb"]   # the box drawn on it
        assert again["rgb"] == marked["rgb"]
        assert ego["rgb"] != plain["rgb"]
        ep.move(ep.reference("b", "m1"), 240, 320, [0.0, 0.0, 0.0])     # any MOVE: the world may have changed
        ep.observe("e", "world", True)
        assert count_renders == ["world", "ego", "world"]
        assert len(ep.update_s) == 6          # every request still counts as an environment update
    finally:
        ep.close()


def test_per_frame_depth_noise_renders_every_request(count_renders):
    ep = _place_episode(SensingProfile(name="realistic"))
    try:
        assert ep.world.sensing.depth_noise is not None
        first = ep.observe("a", "world", False)
        second = ep.observe("b", "world", False)
        assert count_renders == ["world", "world"]
        assert first["depth"] != second["depth"]      # a new draw of the noise, as a real camera's
    finally:
        ep.close()
