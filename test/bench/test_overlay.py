"""Trace overlays: boxes, targets, grasps and the place pose projected on a synthetic camera,
and the pipeline saving them beside the observation with the best grasps in its trace."""
import threading

import numpy as np
import pytest

from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.transforms import make_transform
from spatial_manip.observation import RGBDObservation
from spatial_manip.overlay import (AXIS_COLOURS, BOX_COLOUR, GRASP_COLOUR, PATH_COLOUR, PLACE_COLOUR, TARGET_COLOUR,
                                   draw_overlay, grasps_to_draw, project_segments)
from spatial_manip.grasping.grasp_group import GraspGroup
from spatial_manip.pipeline import (Decision, Grasped, InstructionPipeline, Perceived, Placed, SetDown, Verified,
                                  validate_goal)
from spatial_manip.scene import Scene, SceneObject, Viewpoint
from spatial_manip.trace import read_when_drawn

INTR = CameraIntrinsics(320, 240, 200.0, 200.0, 160.0, 120.0)
# camera at the base origin looking along base +x: optical x = -base y, y = -base z, z = +base x
T_BASE_CAM = make_transform(np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], float), [0, 0, 0])
BLACK = np.zeros((240, 320, 3), np.uint8)


def _pixel(u: float, v: float) -> tuple[int, int]:
    return int(round(v)), int(round(u))


def _has_colour(img, u, v, colour, radius=2) -> bool:
    r, c = _pixel(u, v)
    patch = img[r - radius:r + radius + 1, c - radius:c + radius + 1].reshape(-1, 3)
    return bool((np.abs(patch.astype(int) - colour).sum(1) < 10).any())


def _box(obj_id, center, size=(0.2, 0.2, 0.2)):
    return SceneObject(obj_id, "book", "book", center, size)


def test_a_box_in_front_is_drawn_where_its_edges_project():
    img = draw_overlay(BLACK, T_BASE_CAM, INTR, objects=[_box("book_1", [1.0, 0, 0])])
    # the front face (x = 0.9) has vertical edges at base y = +-0.1: u = 160 -+ 200 * 0.1 / 0.9
    du = 200 * 0.1 / 0.9
    assert _has_colour(img, 160 - du, 120, BOX_COLOUR) and _has_colour(img, 160 + du, 120, BOX_COLOUR)
    assert (img[120, 160] == 0).all()                  # the box is a wireframe: its middle is untouched
    assert (img[5:20, 5:20] == 0).all()                # and nothing is drawn far from it
    assert img.shape == BLACK.shape and img.dtype == np.uint8


def test_targets_get_their_own_colour():
    img = draw_overlay(BLACK, T_BASE_CAM, INTR, objects=[_box("a", [1.0, 0.3, 0]), _box("b", [1.0, -0.3, 0])],
                       target_ids=["b"])
    # the near face's outer vertical edges: a at u = 160 - 200*0.4/0.9, b at u = 160 + 200*0.4/0.9
    du = 200 * 0.4 / 0.9
    assert _has_colour(img, 160 - du, 120, BOX_COLOUR) and not _has_colour(img, 160 - du, 120, TARGET_COLOUR)
    assert _has_colour(img, 160 + du, 120, TARGET_COLOUR)


def test_geometry_behind_the_camera_is_skipped_and_straddling_edges_are_clipped():
    behind = draw_overlay(BLACK, T_BASE_CAM, INTR, objects=[_box("gone", [-1.0, 0, 0])],
                          grasps=[{"pose": make_transform(np.eye(3), [-0.5, 0, 0]), "width": 0.04}],
                          place_pose=make_transform(np.eye(3), [-0.8, 0, 0]), place_size=[0.1, 0.1, 0.1])
    assert (behind == 0).all()
    segs = project_segments(np.array([[[-1.0, 0.1, 0.0], [1.0, 0.1, 0.0]]]), T_BASE_CAM, INTR)
    assert len(segs) == 1 and np.isfinite(np.array(segs)).all()
    straddle = draw_overlay(BLACK, T_BASE_CAM, INTR, objects=[_box("around", [0.0, 0, 0], (1.0, 0.6, 0.6))])
    assert straddle.any()


def test_grasp_and_place_pose_are_drawn():
    # a grasp approaching along base +x at 1 m: fingers at base y = +-0.03 ahead of the palm
    g = {"pose": make_transform(np.eye(3), [1.0, 0, 0]), "width": 0.06, "depth": 0.02, "score": 0.9}
    img = draw_overlay(BLACK, T_BASE_CAM, INTR, grasps=[g], chosen=0)
    assert _has_colour(img, 160 - 200 * 0.03 / 1.0, 120, GRASP_COLOUR)
    place = make_transform(np.eye(3), [1.0, 0, -0.2])
    img = draw_overlay(BLACK, T_BASE_CAM, INTR, place_pose=place, place_size=[0.1, 0.3, 0.05])
    # the z axis goes up in the image from the place point; the box's side edge at base y = -0.15
    assert _has_colour(img, 160, 120 + 200 * 0.2 - 200 * 0.04 / 1.0, AXIS_COLOURS[2])
    assert _has_colour(img, 160 + 200 * 0.15 / 0.95, 120 + 200 * 0.2 / 0.95, PLACE_COLOUR)


def test_the_planned_tcp_path_is_drawn_as_a_polyline():
    # at 1 m ahead, from base y = +0.2 across to y = -0.2, then down 0.2 m: u from 120 to 200, then v from 120 to 160
    path = [(1.0, 0.2, 0.0), (1.0, -0.2, 0.0), (1.0, -0.2, -0.2)]
    img = draw_overlay(BLACK, T_BASE_CAM, INTR, path=path)
    assert _has_colour(img, 160, 120, PATH_COLOUR) and _has_colour(img, 200, 140, PATH_COLOUR)
    assert not _has_colour(img, 140, 150, PATH_COLOUR)           # only along the path
    assert (draw_overlay(BLACK, T_BASE_CAM, INTR, path=path[:1]) == 0).all()    # one point is no way


def test_grasps_to_draw_keeps_the_best_and_the_one_that_held():
    grasps = [{"pose": np.eye(4), "score": 1.0 - 0.1 * i, "width": 0.03, "depth": 0.01} for i in range(8)]
    shown, k = grasps_to_draw(grasps, {"score": 0.3, "width": 0.03})
    assert len(shown) == 6 and k == 5 and shown[k]["score"] == pytest.approx(0.3)
    shown, k = grasps_to_draw(grasps, None)
    assert len(shown) == 5 and k is None
    assert grasps_to_draw([np.eye(4)], {"score": 1.0, "width": 0.03}) == ([], None)


class _Agent:
    def observe(self, cancel):
        return RGBDObservation(BLACK.copy(), np.ones((240, 320), np.float32), INTR, T_BASE_CAM)

    def perceive(self, obs):
        objs = [_box("book_1", [1.0, 0.2, 0]), _box("book_2", [1.0, -0.2, 0])]
        return Perceived(obs, Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), objs))

    def clear_view(self, cancel):
        pass

    def reason(self, seen, goal, reflection, trace):
        return Decision("pick_and_place", ("book_2",), pick_id="book_2",
                        place_pose=make_transform(np.eye(3), [1.2, 0, 0.1]))

    def check_place(self, decision, seen, cancel=None):
        pass

    def propose_grasps(self, decision, seen):
        return GraspGroup.from_parts(scores=[0.9 - 0.1 * i for i in range(7)], widths=0.05, heights=0.02, depths=0.02,
                                     rotations=np.tile(np.eye(3), (7, 1, 1)), translations=[[0.9, -0.2, 0]] * 7,
                                     frame_id="base")

    def pick(self, grasps, decision, cancel):
        return Grasped(object_id=decision.pick_id, tcp_pose=np.eye(4), score=grasps[1].score, width=grasps[1].width)

    def set_down(self, decision, grasped, cancel):
        return SetDown(object_id=decision.pick_id, object_pose=decision.place_pose, tcp_pose=decision.place_pose,
                       size=None)

    def place(self, decision, set_down, cancel):
        return Placed(set_down=set_down)

    def verify_on_frame(self, placed, obs):
        return None          # never confirmed on the frame alone: the full look and verify

    def verify(self, decision, placed, goal, after):
        return Verified(True, "", "ok")

    def held_id(self):
        return None

    def stop_motion(self):
        pass


def test_pipeline_saves_overlays_and_the_best_grasps(tmp_path):
    out = InstructionPipeline(_Agent(), trace_dir=str(tmp_path)).run(
        validate_goal("pick the right book and put it behind", "auto"), threading.Event())
    assert out.success, out.message
    t = read_when_drawn(tmp_path / "trace.json")         # the last images may come after the result
    names = [i["name"] for i in t["images"]]
    assert names == ["observation", "overlay_decision", "overlay_grasp", "overlay_after"]
    assert all((tmp_path / i["file"]).is_file() and i["caption"] for i in t["images"])
    grasps = next(e for e in t["events"] if e["kind"] == "grasps")
    assert grasps["count"] == 7 and len(grasps["top"]) == 5
    assert set(grasps["top"][0]) == {"pose", "width", "depth", "score"}
    assert not [e for e in t["events"] if e["kind"] == "overlay_error"]
    from PIL import Image

    decision = np.asarray(Image.open(tmp_path / t["images"][1]["file"]))
    assert (np.abs(decision.astype(int) - TARGET_COLOUR).sum(-1) < 10).any()
    assert (np.abs(decision.astype(int) - PLACE_COLOUR).sum(-1) < 10).any()
    grasp = np.asarray(Image.open(tmp_path / t["images"][2]["file"]))
    assert (np.abs(grasp.astype(int) - GRASP_COLOUR).sum(-1) < 10).any()
    assert grasp.shape[0] == 240 and grasp.shape[1] > 320 + 4          # the enlarged view beside it
    zoom = grasp[:, 324:]
    assert (np.abs(zoom.astype(int) - GRASP_COLOUR).sum(-1) < 10).sum() > \
        (np.abs(grasp[:, :320].astype(int) - GRASP_COLOUR).sum(-1) < 10).sum()
