"""The sensing profile (sim/sensing.py): its parser and errors, each effect's magnitude measured in
what SimWorld renders and reports, and determinism per seed. Worlds render at 320x240 to keep
the run short on 2 cores."""
import argparse
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import ndimage
from scipy.spatial.transform import Rotation

from ros_helpers import private_domain_id
from spatial_manip.errors import ConfigError
from spatial_manip.geometry.noise import L515Noise
from spatial_manip.transforms import invert
from spatial_manip.sim import layouts as L
from spatial_manip.sim import sensing as S
from spatial_manip.sim.sensing import EFFECTS, IDEAL, only, sensing_profile
from spatial_manip.sim.world import SimConfig, SimWorld

SEEDS = range(40)


def _world(profile, seed=3):
    scene = L.sample_tabletop(np.random.default_rng(1), n_books=3)
    return SimWorld(scene, config=SimConfig(width=320, height=240, sensing=profile), seed=seed)


@pytest.fixture(scope="module")
def ideal():
    with _world(IDEAL) as w:
        yield w, w.render()


# --- the parser -------------------------------------------------------------------------------
def test_profiles_and_effects_parse_and_label_themselves():
    p = sensing_profile("realistic", "misregistration, arm_kinematics")
    assert p.off == {"misregistration", "arm_kinematics"} and p.scale == 1.0
    assert p.label == "realistic (off: arm_kinematics, misregistration)"
    assert not p.enabled("misregistration") and p.enabled("depth_noise")
    assert sensing_profile("harsh").scale == 2.0 and sensing_profile("harsh").label == "harsh"
    assert not any(IDEAL.enabled(e) for e in EFFECTS)
    assert only("depth_noise").to_dict()["effects"] == ["depth_noise"]


def test_an_unknown_profile_or_effect_is_refused_by_name():
    with pytest.raises(ConfigError, match=r"unknown sensing profile 'realistc'.*ideal, realistic, harsh"):
        sensing_profile("realistc")
    with pytest.raises(ConfigError, match=r"unknown sensing effect 'noise'.*depth_noise, misregistration"):
        sensing_profile("realistic", "calibration,noise")
    with pytest.raises(ValueError, match="unknown sensing effect 'glare'"):
        IDEAL.enabled("glare")


def test_the_command_line_refuses_an_unknown_effect_before_running(capsys):
    p = argparse.ArgumentParser(prog="bench")
    S.add_arguments(p)
    assert S.from_args(p.parse_args([])).name == "realistic"
    with pytest.raises(SystemExit):
        p.parse_args(["--sensing-off", "lighting,blur"])
    assert "unknown sensing effect 'blur'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        p.parse_args(["--sensing", "clean"])
    assert "invalid choice: 'clean'" in capsys.readouterr().err


# --- the draws: bounds, harsh doubles, determinism ----------------------------------------------
def test_draws_stay_within_the_stated_bounds_and_harsh_doubles_them():
    for name, k in (("realistic", 1), ("harsh", 2)):
        for seed in SEEDS:
            d = sensing_profile(name).draw(seed).summary()
            assert k * 1.0 - 0.01 <= d["calibration_mm"] <= k * 2.0 + 0.01, d
            assert k * 0.05 - 1e-3 <= d["calibration_deg"] <= k * 0.15 + 1e-3, d
            assert k * 2 - 0.71 <= math.hypot(*d["depth_shift_px"]) <= k * 5 + 0.71, d    # whole pixels
            assert all(k * 0.2 - 0.01 <= v <= k * 1.0 + 0.01 for v in d["link_offsets_mm"].values()), d
            assert abs(d["light_scale"] - 1) <= k * 0.25 and d["colour_spread"] == pytest.approx(k * 0.08)
    assert L515Noise().scaled(2).sigma_m(1.0) == pytest.approx(2 * L515Noise().sigma_m(1.0))


def test_draws_repeat_per_seed_and_one_effect_off_leaves_the_others_unchanged():
    a, b, c = (sensing_profile("realistic").draw(seed) for seed in (7, 7, 8))
    assert a.depth_shift_px == b.depth_shift_px and np.array_equal(a.T_cam_error, b.T_cam_error)
    assert np.array_equal(a.colour_gains(5), b.colour_gains(5)) and a.light_scale == b.light_scale
    assert not np.array_equal(a.T_cam_error, c.T_cam_error)
    off = sensing_profile("realistic", "misregistration,lighting").draw(7)
    assert off.depth_shift_px == (0, 0) and off.light_scale == 1.0
    assert np.array_equal(off.T_cam_error, a.T_cam_error)
    assert all(np.array_equal(off.link_offsets_m[k], v) for k, v in a.link_offsets_m.items())


# --- each effect in a rendered frame --------------------------------------------------------------
def _measured_shift(depth: np.ndarray, segmentation: np.ndarray, reach: int = 8) -> tuple[int, int]:
    """The (du, dv) that best lays the depth image's edges (a jump over 2 cm in a pixel's 3x3
    neighbourhood) onto the colour image's object edges (two labels in it)."""
    depth_edges = ndimage.maximum_filter(depth, 3) - ndimage.minimum_filter(depth, 3) > 0.02
    seg_edges = ndimage.maximum_filter(segmentation, 3) != ndimage.minimum_filter(segmentation, 3)
    seg_edges[:reach + 1], seg_edges[-reach - 1:], seg_edges[:, :reach + 1], seg_edges[:, -reach - 1:] = 0, 0, 0, 0
    scores = {(du, dv): np.count_nonzero(np.roll(seg_edges, (dv, du), (0, 1)) & depth_edges)
              for du in range(-reach, reach + 1) for dv in range(-reach, reach + 1)}
    return max(scores, key=scores.get)


def test_misregistration_is_measurable_between_depth_and_colour_edges(ideal):
    assert _measured_shift(ideal[1].depth_m, ideal[1].segmentation) == (0, 0)
    for seed in (3, 4):
        with _world(only("misregistration"), seed) as w:
            obs = w.render()
            assert _measured_shift(obs.depth_m, obs.segmentation) == w.sensing.depth_shift_px != (0, 0)
            assert 2 <= math.hypot(*w.sensing.depth_shift_px) <= 5.8


def test_the_planner_gets_the_calibrated_extrinsics_while_mujoco_renders_from_the_true_pose(ideal):
    with _world(only("calibration")) as w:
        obs = w.render()
        assert np.array_equal(obs.depth_m, ideal[1].depth_m)           # the same camera renders
        assert np.allclose(w.T_base_cam_true, ideal[0].T_base_cam)
        assert np.array_equal(obs.T_base_cam, w.T_base_cam)
        err = invert(w.T_base_cam_true) @ obs.T_base_cam
        assert 0.001 - 1e-9 <= np.linalg.norm(err[:3, 3]) <= 0.002 + 1e-9
        assert 0.05 <= math.degrees(Rotation.from_matrix(err[:3, :3]).magnitude()) <= 0.15 + 1e-6


def test_the_simulated_arm_differs_from_the_nominal_model_the_controller_reports():
    with _world(only("arm_kinematics")) as w:
        offsets = sum(np.linalg.norm(v) for v in w.sensing.link_offsets_m.values())
        gap = np.linalg.norm(w.actual_tcp_pose()[:3, 3] - w.tcp_pose()[:3, 3])
        assert 0.0002 < gap <= offsets + 1e-6          # visible, and no more than the links add up to
        T = w.tcp_pose()
        T[2, 3] += 0.03
        assert w.move_tcp(T)
        # the controller arrives by its own (nominal) model; the real TCP is off by the arm's error
        assert np.linalg.norm(w.tcp_pose()[:3, 3] - T[:3, 3]) < 0.001
        assert 0.0002 < np.linalg.norm(w.actual_tcp_pose()[:3, 3] - T[:3, 3]) <= offsets + 0.001


def test_the_ideal_arm_is_where_the_controller_says(ideal):
    assert np.allclose(ideal[0].actual_tcp_pose(), ideal[0].tcp_pose(), atol=1e-9)


def test_depth_noise_in_a_frame_follows_the_l515_model_and_harsh_doubles_it(ideal):
    clean = ideal[1].depth_m
    jumps = ndimage.maximum_filter(clean, 3) - ndimage.minimum_filter(clean, 3)
    flat = (clean > 0) & (jumps < 0.005)                # away from edges: range noise only
    expected = L515Noise().sigma_m(clean[flat])
    spread = {}
    for name in ("realistic", "harsh"):
        with _world(sensing_profile(name, "misregistration,calibration,arm_kinematics,lighting,surface_colour")) as w:
            d = w.render().depth_m
        ok = flat & (d > 0)
        spread[name] = float(np.sqrt(np.mean((d[ok] - clean[ok]) ** 2)))
    k = spread["realistic"] / math.sqrt(np.mean(expected ** 2) + 0.001 ** 2 / 12)
    assert 0.8 < k < 1.25, spread
    assert 1.7 < spread["harsh"] / spread["realistic"] < 2.3, spread


def test_lighting_and_surface_colour_change_the_colour_image_only(ideal):
    with _world(only("lighting", "surface_colour")) as w:
        obs = w.render()
        assert np.array_equal(obs.depth_m, ideal[1].depth_m)
        diff = np.abs(obs.rgb.astype(int) - ideal[1].rgb.astype(int))
        assert diff.mean() > 2, diff.mean()
        gains = w.sensing.colour_gains(len(w.meta.object_ids))
        assert np.all(np.abs(gains - 1) <= 0.08)


def test_a_seed_renders_the_same_episode_and_another_seed_another():
    with _world(sensing_profile("realistic"), 5) as a, _world(sensing_profile("realistic"), 5) as b, \
            _world(sensing_profile("realistic"), 6) as c:
        oa, ob, oc = a.render(), b.render(), c.render()
        assert np.array_equal(oa.rgb, ob.rgb) and np.array_equal(oa.depth_m, ob.depth_m)
        assert np.array_equal(oa.T_base_cam, ob.T_base_cam) and np.array_equal(a.actual_tcp_pose(), b.actual_tcp_pose())
        assert not np.array_equal(oa.depth_m, oc.depth_m) and not np.array_equal(oa.T_base_cam, oc.T_base_cam)


@pytest.mark.ros
def test_sim_node_refuses_an_unknown_effect_at_start_naming_the_parameter():
    pytest.importorskip("rclpy")
    proc = subprocess.run([sys.executable, "-m", "spatial_manip.nodes.sim_node", "--ros-args",
                           "-p", "sensing:=realistic", "-p", "sensing_off:=calibraton"],
                          check=False, capture_output=True, text=True, timeout=90, env={**os.environ, "ROS_DOMAIN_ID": str(private_domain_id())})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in out, out
    assert "sensing_off" in out and "'calibraton'" in out and "refused to start" in out, out
