import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from spatial_manip.grasping.grasp_group import N_COLUMNS, SCORE, Grasp, GraspGroup


def _group(n=5, seed=0):
    rng = np.random.default_rng(seed)
    return GraspGroup.from_parts(scores=rng.random(n), widths=0.05, heights=0.02, depths=0.03,
                                 rotations=Rotation.random(n, random_state=seed).as_matrix(),
                                 translations=rng.random((n, 3)), object_ids=np.arange(n))


def test_properties_are_column_views_of_one_array():
    gg = _group()
    assert gg.grasp_group_array.shape == (5, N_COLUMNS)
    assert np.allclose(gg.widths, 0.05) and gg.rotation_matrices.shape == (5, 3, 3)
    assert gg.object_ids.tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError):
        gg.grasp_group_array[0, SCORE] = 2.0  # read-only: methods never mutate


def test_indexing_int_slice_mask():
    gg = _group()
    g = gg[np.int64(2)]
    assert isinstance(g, Grasp) and g.object_id == 2
    assert np.allclose(g.to_row(), gg.grasp_group_array[2])
    assert len(gg[1:3]) == 2 and isinstance(gg[1:3], GraspGroup)
    assert len(gg[gg.scores > 0.5]) == int((gg.scores > 0.5).sum())
    with pytest.raises(IndexError):
        gg[np.ones(3, bool)]


def test_sort_transform_roundtrip_and_new_objects():
    gg = _group()
    s = gg.sort_by_score()
    assert np.all(np.diff(s.scores) <= 0) and s is not gg
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("z", 0.7).as_matrix()
    T[:3, 3] = [1, 2, 3]
    moved = gg.transform(T, frame_id="base")
    assert moved.frame_id == "base" and gg.frame_id == "camera_color_optical_frame"
    back = moved.transform(np.linalg.inv(T), frame_id="camera_color_optical_frame")
    assert np.allclose(back.grasp_group_array, gg.grasp_group_array)


def test_nms_merges_near_duplicates_and_flipped_twins():
    R = np.eye(3)
    flipped = R @ np.diag([1, -1, -1])  # half-turn about the approach: the same physical grasp
    gg = GraspGroup.from_parts(scores=[0.9, 0.8, 0.7, 0.6], widths=0.05, heights=0.02, depths=0.03,
                               rotations=[R, flipped, R, Rotation.from_euler("y", 90, degrees=True).as_matrix()],
                               translations=[[0, 0, 0], [0.01, 0, 0], [0.2, 0, 0], [0, 0, 0.005]])
    kept = gg.nms(0.03, np.deg2rad(30))
    assert kept.scores.tolist() == pytest.approx([0.9, 0.7, 0.6])


def test_save_load(tmp_path):
    gg = _group()
    gg.save_npy(tmp_path / "g.npy")
    assert np.array_equal(GraspGroup.from_npy(tmp_path / "g.npy").grasp_group_array, gg.grasp_group_array)


def test_bad_shapes_and_units():
    with pytest.raises(ValueError, match=r"\(N, 17\)"):
        GraspGroup(np.zeros((3, 16)))
    with pytest.raises(ValueError, match="metres"):
        GraspGroup(unit="mm")
    assert len(GraspGroup()) == 0 and len(GraspGroup().nms()) == 0


def test_to_dicts_gives_each_grasp_as_the_plain_fields_a_trace_records():
    gg = _group(3)
    rows = gg.to_dicts()
    assert [set(r) for r in rows] == [{"pose", "score", "width", "depth"}] * 3
    assert np.allclose(rows[1]["pose"], gg[1].matrix()) and rows[1]["score"] == pytest.approx(gg.scores[1])
    assert rows[2]["width"] == pytest.approx(0.05) and rows[2]["depth"] == pytest.approx(0.03)
    assert GraspGroup(frame_id="base").to_dicts() == []
