"""The ego camera's frame and the goal-mask geometry, without rendering."""
import numpy as np

from spatial_manip.espire import views
from spatial_manip.camera_model import CameraIntrinsics
from spatial_manip.observation import RGBDObservation
from spatial_manip.scene import Region


def test_ego_camera_is_a_right_handed_frame_looking_past_the_fingertips():
    T_tcp = np.eye(4)
    T_tcp[:3, :3] = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]     # approach straight down
    T_tcp[:3, 3] = [0.5, 0.1, 0.3]
    T = views.ego_camera_pose(T_tcp)
    R = T[:3, :3]
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.isclose(np.linalg.det(R), 1.0)
    assert R[:, 2] @ np.array([0, 0, -1.0]) > 0.8          # optical z mostly along the approach
    assert T[2, 3] > T_tcp[2, 3]                            # behind the TCP, on the wrist
    look = T_tcp[:3, 3] + views.EGO_LOOK_M * T_tcp[:3, 2]
    assert np.allclose(np.cross(R[:, 2], look - T[:3, 3]), 0, atol=1e-9)   # aimed at the look point


def _obs_looking_down(h=120, w=160) -> RGBDObservation:
    k = CameraIntrinsics.from_fovy(w, h, 60.0)
    T = np.eye(4)
    T[:3, :3] = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]          # optical z = world -z
    T[:3, 3] = [0, 0, 1.0]
    return RGBDObservation(rgb=np.zeros((h, w, 3), np.uint8), depth_m=np.ones((h, w), np.float32),
                           intrinsics=k, T_base_cam=T)


def test_a_box_below_the_camera_masks_its_silhouette_and_pixels_lift_back_to_3d():
    obs = _obs_looking_down()
    box = Region(id="slot", kind="slot", center=[0, 0, 0.0], size=[0.2, 0.2, 0.02])
    m = views.box_mask(obs, box)
    assert m[60, 80] and not m[0, 0]
    assert views.click_distance_px(m, 60, 80) == 0.0
    assert views.click_distance_px(m, 0, 0) > 10
    p = views.pixel_point(obs, 60, 80)          # depth 1 m from a camera 1 m up: the floor
    assert np.allclose(p, [0, 0, 0], atol=0.01)


def test_a_goal_box_is_drawn_around_the_mask_only():
    rgb = np.zeros((40, 40, 3), np.uint8)
    mask = np.zeros((40, 40), bool)
    mask[10:20, 15:30] = True
    out = views.draw_goal_boxes(rgb, [mask], (255, 0, 255))
    changed = np.any(out != rgb, axis=2)
    rows, cols = np.nonzero(changed)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (10, 19, 15, 29)
    assert not changed[15, 22]                  # the outline, not a filled box


def test_a_click_counts_as_on_the_marked_area_inside_the_box_drawn_around_its_mask():
    mask = np.zeros((10, 12), bool)
    mask[2, 3] = mask[5, 7] = True
    box = views.mask_box(mask)
    assert box == (2, 5, 3, 7)                          # r0, r1, c0, c1: the drawn rectangle
    assert views.in_box(box, 4, 4) and views.in_box(box, 5, 7)
    assert not views.in_box(box, 6, 4) and not views.in_box(box, 3, 8)
    assert views.mask_box(np.zeros((4, 4), bool)) is None and not views.in_box(None, 0, 0)
