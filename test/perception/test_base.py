import numpy as np
import pytest

from spatial_manip.errors import BackendUnavailableError, ErrorCode, NoObservationError
from spatial_manip.perception import (Box3D, Detection, ExpectedObject, SegmentationHints,
                                      Segmenter, detections_to_scene, make_segmenter, segmenter_names)
from spatial_manip.scene import Scene


def test_registry_lists_every_backend():
    assert segmenter_names() == ["classical", "ground_truth", "learned"]
    with pytest.raises(ValueError, match="choose one of"):
        make_segmenter("magic")


@pytest.mark.parametrize("name", ["classical", "ground_truth"])
def test_backends_satisfy_the_protocol(name):
    assert isinstance(make_segmenter(name), Segmenter)


def test_config_is_validated():
    with pytest.raises(TypeError):
        make_segmenter("classical", voxel_size=0.01)          # unknown key
    with pytest.raises(ValueError, match="voxel_m"):
        make_segmenter("classical", voxel_m=0.02, cluster_radius_m=0.01)
    with pytest.raises(ValueError, match="size_m"):
        ExpectedObject(label="jar", size_m=(0.1, -0.1, 0.1))
    for bad in [(255, 0), (float("nan"), 1, 2), (300, 0, 0), (-1, 0, 0)]:
        with pytest.raises(ValueError, match="'jar': colour must be a name or 3 values in 0..255"):
            ExpectedObject(label="jar", colour=bad)
    assert ExpectedObject(label="jar", colour=(64, 153, 64)).colour == (64, 153, 64)
    for bad in ["white", ("white", "mauvish"), (("white",),)]:
        with pytest.raises(ValueError, match="'jar': colours must be known colour names"):
            ExpectedObject(label="jar", colours=bad)
    assert ExpectedObject(label="jar", colours=["yellow", "grey"]).colours == ("yellow", "grey")


def test_a_catalogue_colour_that_is_not_rgb_is_refused_when_the_workspace_arrives():
    from spatial_manip.scene import Scene, SceneObject, Viewpoint
    jar = SceneObject("near_1", "ceramic jar", "reference", [0.5, 0, 0.05], [0.06, 0.06, 0.08],
                      extra={"rgb": [230, 230]})
    with pytest.raises(ValueError, match="'ceramic jar': colour"):
        SegmentationHints.from_scene(Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [jar]))


@pytest.mark.parametrize("name", ["classical", "ground_truth"])
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_empty_or_nan_depth_is_a_clear_no_observation(name, fill, tabletop):
    obs, _ = tabletop
    from dataclasses import replace
    bad = replace(obs, depth_m=np.full_like(obs.depth_m, fill))
    with pytest.raises(NoObservationError, match="valid pixels") as e:
        make_segmenter(name).segment(bad)
    assert e.value.code == ErrorCode.NO_OBSERVATION


def test_ground_truth_needs_the_segmentation_image(tabletop):
    from dataclasses import replace
    obs, _ = tabletop
    with pytest.raises(NoObservationError, match="classical"):
        make_segmenter("ground_truth").segment(replace(obs, segmentation=None))


def test_learned_backend_without_weights_says_what_to_download(tmp_path):
    with pytest.raises(BackendUnavailableError) as e:
        make_segmenter("learned", detector_path=str(tmp_path / "owlv2"), sam_path=str(tmp_path / "sam"))
    msg = str(e.value)
    assert str(tmp_path / "owlv2") in msg and "download" in msg.lower()
    assert "google/owlv2" in msg and "facebook/sam" in msg


def test_detections_to_scene(tabletop):
    obs, _ = tabletop
    box = Box3D(np.array([0.6, 0.1, 0.76]), np.array([0.2, 0.1, 0.02]), np.eye(3), mode="yaw",
                n_points=100, n_region=100, quality=1.0, residual_m=0.0)
    det = Detection(id="book_0", label="book", category="book", mask=np.zeros(obs.depth_m.shape, bool),
                    score=0.9, box=box, mean_rgb=(200, 20, 20), colour="red", size_class="small")
    scene = detections_to_scene([det], obs)
    assert isinstance(scene, Scene)
    np.testing.assert_allclose(scene.viewer.position, obs.T_base_cam[:3, 3])
    np.testing.assert_allclose(scene.viewer.forward, obs.T_base_cam[:3, 2])
    np.testing.assert_allclose(scene.robot.forward, [1, 0, 0])
    o = scene.get("book_0")
    assert o.size_class == "small" and o.extra["colour"] == "red"
    # JSON round trip through the public scene format
    again = Scene.from_dict(scene.to_dict())
    np.testing.assert_allclose(again.get("book_0").center, box.center)
    assert "has_front" not in o.extra and not o.oriented
    # a front the catalogue knows of is flagged, not guessed: depth does not show which side it is
    flagged = detections_to_scene([det], obs, fronts=["book_0"]).get("book_0")
    assert flagged.extra["has_front"] is True and not flagged.oriented
    with pytest.raises(ValueError, match="unique"):
        detections_to_scene([det, det], obs)


def test_hints_from_scene_keep_names_not_poses(tabletop):
    _, scene = tabletop
    hints = SegmentationHints.from_scene(scene)
    assert hints.objects["obj3"] == ("jar", "reference")
    assert all(e.category != "table" for e in hints.expected)
    assert not any(hasattr(e, "center") for e in hints.expected)


def test_hints_carry_the_colour_names_enrolment_read():
    from spatial_manip.scene import Scene, SceneObject, Viewpoint
    mug = SceneObject("white_porcelain_mug", "mug", "mug", [0.5, 0, 0.05], [0.12, 0.09, 0.11],
                      extra={"rgb": [177, 163, 126], "colours": ["yellow", "white"]})
    hints = SegmentationHints.from_scene(Scene(Viewpoint([0, 0, 1], [1, 0, 0]), Viewpoint([0, 0, 0], [1, 0, 0]), [mug]))
    assert hints.expected[0].colours == ("yellow", "white")


def test_the_cells_floor_is_a_configured_support(tabletop):
    from dataclasses import replace
    _, scene = tabletop
    assert SegmentationHints.from_scene(scene).supports == ()
    floor = SegmentationHints.from_scene(replace(scene, extra={**scene.extra, "ground_z": -0.75})).supports
    assert len(floor) == 1 and floor[0][0] == -0.75
    assert np.all(np.asarray(floor[0][1]) <= -2.0) and np.all(np.asarray(floor[0][2]) >= 2.0)
