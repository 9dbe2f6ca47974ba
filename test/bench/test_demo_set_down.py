"""The demo's line on where the simulator has the set-down object (the truth after the goal,
never seen by the planner), read from a trace's last set-down and its decision."""
import json

from spatial_manip.bench.demo import set_down_truth


def _trace(tmp_path, events):
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"events": events}))
    return str(path)


def _place(x, y):
    return [[1, 0, 0, x], [0, 1, 0, y], [0, 0, 1, 0.008], [0, 0, 0, 1]]


def test_the_distance_is_from_the_last_set_downs_planned_place(tmp_path):
    trace = _trace(tmp_path, [{"kind": "decision", "place_pose": _place(0.5, 0.0)},
                              {"kind": "placed", "placed_id": "book_3"},
                              {"kind": "decision", "place_pose": _place(0.7, 0.0)},   # a retry's plan
                              {"kind": "placed", "placed_id": "book_3"},
                              {"kind": "decision", "place_pose": _place(0.9, 0.0)}])  # after it: not used
    line = set_down_truth(trace, {"objects": [{"id": "book_3", "center": [0.73, 0.04, 0.01]}]})
    assert "book_3 rests 5.0 cm from the planned place" in line


def test_nothing_set_down_is_said(tmp_path):
    trace = _trace(tmp_path, [{"kind": "decision", "place_pose": _place(0.5, 0.0)}])
    assert "nothing was set down" in set_down_truth(trace, {"objects": []})
    trace = _trace(tmp_path, [{"kind": "decision", "place_pose": _place(0.5, 0.0)},
                              {"kind": "placed", "placed_id": "book_3"}])
    assert "no final state" in set_down_truth(trace, {"objects": [{"id": "book_1", "center": [0, 0, 0]}]})


def test_a_library_id_is_the_simulators_object_that_moved_furthest(tmp_path):
    """With the library catalogue perception names the book book_green_small; the simulator calls
    it book_3."""
    import numpy as np

    from spatial_manip.scene import Scene, SceneObject

    start = Scene(viewer=None, robot=None, objects=[
        SceneObject("book_3", "book", "book", np.array([0.60, -0.48, 0.01]), np.array([0.18, 0.11, 0.02])),
        SceneObject("near_1", "rubik's cube", "reference", np.array([0.68, 0.29, 0.03]), np.full(3, 0.06))])
    trace = _trace(tmp_path, [{"kind": "decision", "place_pose": _place(0.70, 0.44)},
                              {"kind": "placed", "placed_id": "book_green_small"}])
    final = {"objects": [{"id": "book_3", "center": [0.71, 0.44, 0.01]},
                         {"id": "near_1", "center": [0.68, 0.30, 0.03]}]}
    line = set_down_truth(trace, final, start)
    assert "book_green_small (book_3 in the simulator) rests 1.0 cm" in line
