"""geometry-bench: the fast paths agree with the per-pixel loops they are compared with, and the
command prints its figures."""
import json

import numpy as np

from spatial_manip.cli import main
from spatial_manip.bench import geometry_bench as bench
from spatial_manip.geometry import synthetic as S
from spatial_manip.camera_model import CameraIntrinsics, backproject
from spatial_manip.transforms import apply


def test_backproject_matches_the_python_loop():
    intr = CameraIntrinsics.from_fovy(160, 120, 55)
    rng = np.random.default_rng(0)
    obs = S.render(intr, S.random_camera(rng), [S.random_lying_box(rng)])
    obs.depth_m[::7, ::5] = 0
    fast, _ = backproject(obs.depth_m, intr)
    np.testing.assert_allclose(fast, np.array(bench.loop_backproject(obs.depth_m, intr)), atol=1e-9)


def test_loop_box_extents_match_vectorised_points():
    intr = CameraIntrinsics.from_fovy(160, 120, 55)
    rng = np.random.default_rng(1)
    obs = S.render(intr, S.look_at([0.9, 0, 0.6], [0.5, 0, 0]), [S.random_lying_box(rng)])
    box = [40, 30, 120, 90]
    mask = np.zeros(obs.depth_m.shape, bool)
    mask[30:90, 40:120] = True
    p = apply(obs.T_base_cam, backproject(obs.depth_m, intr, mask)[0])
    lo, hi = bench.loop_box(obs, box)
    np.testing.assert_allclose(lo, p.min(0), atol=1e-9)
    np.testing.assert_allclose(hi, p.max(0), atol=1e-9)


def test_command_prints_figures(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["geometry-bench", "--objects", "2", "--repeats", "1", "--baseline-objects", "1",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "back-projection 1024x768: median" in text and "box_2d_to_box_3d 640x480" in text
    report = json.loads(out.read_text())
    # the speed-ups are figures to print, not to assert: one repeat on a loaded machine can invert them
    for r in report["box_2d_to_box_3d"]:
        assert r["median_ms"] > 0 and r["speedup_vs_loop"] > 0 and r["failures"] == 0
    assert report["backprojection"]["speedup_vs_loop"] > 0
