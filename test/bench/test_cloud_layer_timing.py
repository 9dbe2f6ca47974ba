"""The point-cloud layer's timing bench: its comparisons of answers and its baseline checkout."""
import json

import numpy as np
import pytest

from spatial_manip.bench import cloud_layer_probe as probe
from spatial_manip.bench import cloud_layer_timing as timing
from spatial_manip.bench.perception_bench import matched_centre_errors
from spatial_manip.bench.revisions import worktree


def test_planes_compare_the_same_way_up_whatever_sign_each_fit_chose():
    a = {"normal": [0.0, 0.0, 1.0], "offset": -0.10}
    b = {"normal": [0.0, 0.0, -1.0], "offset": 0.102}
    angle, offset_mm = timing._plane_gap(a, b)
    assert angle == pytest.approx(0.0, abs=1e-6)
    assert offset_mm == pytest.approx(2.0, abs=1e-6)
    assert timing._plane_gap(a, None) is None


def test_each_truth_centre_is_matched_by_at_most_one_detection_within_the_gate():
    truth = [[0.5, 0.0, 0.1], [0.5, 0.3, 0.1]]
    found = [[0.51, 0.0, 0.1], [0.52, 0.0, 0.1], [0.9, 0.3, 0.1]]
    assert len(matched_centre_errors(found, truth, timing.MATCH_GATE_M)) == 1   # two near the first, none near the second
    assert len(matched_centre_errors([], truth, timing.MATCH_GATE_M)) == 0


def test_the_probe_finds_this_trees_layer_and_its_operations_answer_on_a_plane():
    ops = probe._ops()
    assert ops["layer"]
    rng = np.random.default_rng(0)
    table = np.c_[rng.uniform(0.3, 0.8, 3000), rng.uniform(-0.3, 0.3, 3000), rng.normal(0.0, 0.001, 3000)]
    normal, offset, inliers = ops["plane"](table)
    assert abs(normal[2]) > 0.99 and abs(offset) < 0.005 and inliers > 2500
    assert len(ops["voxel"](table, probe.VOXEL_M)) < len(table)
    assert ops["normals"](table[:500], 16, (0.5, 0.0, 1.0)).shape == (500, 3)


def test_report_gives_a_ratio_per_measure_and_leaves_places_out_of_the_grasp_figures(tmp_path):
    def row(name, scale, grasps):
        r = {"frame": name, "voxels": 10, "detections": [[0.5, 0.0, 0.1]], "grasps": grasps,
             "plane": {"normal": [0, 0, 1], "offset": 0.0}, "support_plane": None}
        r.update({f"{m}_s": scale for m in timing.OPERATIONS + timing.STAGES})
        if grasps is None:
            r["grasp_s"] = None
        return r
    for name in ("pick-1", "place-1"):
        (tmp_path / f"{name}.truth.json").write_text(json.dumps([[0.5, 0.0, 0.1]]))
        for tree in ("hand", "layer"):
            np.save(tmp_path / f"{name}.normals.{tree}.npy", np.tile([0.0, 0.0, 1.0], (4, 1)))
    baseline = {"frames": [row("pick-1", 2.0, 5), row("place-1", 2.0, None)]}
    current = {"frames": [row("pick-1", 1.0, 4), row("place-1", 1.0, None)]}
    text = timing.report(current, baseline, tmp_path, "REV")
    assert "segment" in text and "0.50" in text
    assert "a grasp on 1/1 pick targets, 5 grasps" in text and "a grasp on 1/1 pick targets, 4 grasps" in text
    assert "2/2 objects the task needs found" in text


def test_an_unknown_baseline_revision_is_refused_by_name():
    with pytest.raises(ValueError, match="no-such-revision"):
        with worktree("no-such-revision"):
            pass
