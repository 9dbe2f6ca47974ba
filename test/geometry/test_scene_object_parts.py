"""A fixture is its parts, else its box (SceneObject.solid_boxes), the same for the segmenter's
fixture parts, the motion planner's obstacles and the grasp service's solid boxes."""
import numpy as np
import pytest

from spatial_manip.scene import Scene, SceneFormatError, SceneObject, Viewpoint

TURNED = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
PARTS = [{"center": [0.5, 0.0, 0.05], "size": [0.2, 0.1, 0.1], "rotation": TURNED.tolist()},
         {"center": [0.5, 0.0, 0.15], "size": [0.1, 0.1, 0.1]}]          # no rotation: level


def _wedge(parts=PARTS) -> SceneObject:
    return SceneObject("wedge", "wedge", "support", [0.5, 0.0, 0.1], [0.2, 0.1, 0.2], extra={"parts": parts})


def test_a_fixture_is_its_parts_else_its_box():
    boxes = _wedge().solid_boxes()
    assert [b[0].tolist() for b in boxes] == [[0.5, 0.0, 0.05], [0.5, 0.0, 0.15]]
    assert np.allclose(boxes[0][2], TURNED) and np.allclose(boxes[1][2], np.eye(3))
    jar = SceneObject("jar", "jar", "jar", [0.3, 0.2, 0.05], [0.08, 0.08, 0.1])
    [(center, size, rotation)] = jar.solid_boxes()
    assert center.tolist() == [0.3, 0.2, 0.05] and size.tolist() == [0.08, 0.08, 0.1]
    assert _wedge().has_parts and not jar.has_parts


@pytest.mark.parametrize("part, why", [({"center": [0.5, 0.0, 0.1]}, "missing required key 'size'"),
                                       ({"center": [0, 0, 0], "size": [0.1, 0.0, 0.1]}, "'size' must be positive"),
                                       ({"center": [0, 0], "size": [0.1, 0.1, 0.1]}, "'center' must be 3 numbers"),
                                       ("a box", "must be an object")])
def test_a_malformed_part_is_refused_by_object_and_index(part, why):
    with pytest.raises(SceneFormatError, match=rf"object 'wedge': parts\[1\].*{why}"):
        _wedge([PARTS[0], part]).solid_boxes()


def test_the_segmenter_and_the_motion_planner_see_the_same_parts():
    from spatial_manip.perception.base import SegmentationHints

    you = Viewpoint([-0.9, 0.0, 0.6], [1.0, 0.0, 0.0])
    scene = Scene(viewer=you, robot=you, objects=[_wedge()])
    fixtures = SegmentationHints.from_scene(scene).fixtures
    assert [f.center.tolist() for f in fixtures] == [[0.5, 0.0, 0.05], [0.5, 0.0, 0.15]]
    pytest.importorskip("coal")
    from spatial_manip.motion.world import CollisionWorld

    obstacles = CollisionWorld.from_scene(scene).obstacles
    assert [(o.name, o.owner) for o in obstacles] == [("wedge/part0", "wedge"), ("wedge/part1", "wedge")]
    assert np.allclose(obstacles[0].pose[:3, :3], TURNED)


@pytest.mark.parametrize("parts, why", [([PARTS[0], {"center": [0.5, 0.0, 0.1]}], r"parts\[1\].*missing required key 'size'"),
                                        ([PARTS[0], PARTS[1], "a box"], r"parts\[2\].*must be an object"),
                                        ({"center": [0, 0, 0]}, "'parts' must be a list of boxes")])
def test_a_malformed_part_is_refused_as_the_scene_is_read(parts, why):
    """Not later, when a segmenter or planner first asks for the fixture's solid boxes."""
    you = Viewpoint([-0.9, 0.0, 0.6], [1.0, 0.0, 0.0])
    good = Scene(viewer=you, robot=you, objects=[_wedge()]).to_dict()
    assert [o.id for o in Scene.from_dict(good).objects] == ["wedge"]
    good["objects"][0]["parts"] = parts
    with pytest.raises(SceneFormatError, match=rf"object 'wedge': {why}"):
        Scene.from_dict(good)
