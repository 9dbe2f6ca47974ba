"""Perception: segmenters that turn one RGB-D observation into detections and a Scene.

    seg = make_segmenter("classical", seed=0)
    dets = seg.segment(obs, hints=SegmentationHints(expected=(ExpectedObject(label="jar", ...),)))
    scene = detections_to_scene(dets, obs)

Backends (role "segmenter"): ground_truth (simulator segmentation), classical (support planes +
clustering + colour, no weights), learned (open-vocabulary detector + SAM, weights on disk).
"""
from spatial_manip.config import backend_section, read_yaml, section
from spatial_manip.geometry.boxes import Box3D
from spatial_manip.perception.base import (Detection, ExpectedObject, SegmentationHints,
                                           Segmenter, camera_viewpoint, check_observation,
                                           detections_to_scene, perceive_with_workspace)
from spatial_manip.registry import backend_names, make, register_role

BACKENDS = {
    "ground_truth": "spatial_manip.perception.ground_truth:GroundTruthSegmenter",
    "classical": "spatial_manip.perception.classical:ClassicalSegmenter",
    "learned": "spatial_manip.perception.learned:LearnedSegmenter",
}
CONFIGS = {   # what each backend's section of perception.yaml holds
    "ground_truth": "spatial_manip.perception.ground_truth:GroundTruthConfig",
    "classical": "spatial_manip.perception.classical:ClassicalConfig",
    "learned": "spatial_manip.perception.learned:LearnedConfig",
}
register_role("segmenter", BACKENDS, CONFIGS)


def make_segmenter(name: str, **config) -> Segmenter:
    """Build segmenter backend `name` with its keyword configuration."""
    return make("segmenter", name, **config)


def segmenter_names() -> list[str]:
    return backend_names("segmenter")


def load_segmenter_config(path, backend: str = "") -> tuple[str, dict]:
    """config/params/perception.yaml: (backend name, its section), checked through the backend's
    config dataclass (ConfigError naming the file, key and value). `backend` overrides the
    file's `segmenter.backend` ("" = the file's)."""
    where = f"{path}: segmenter"
    seg = section(read_yaml(path), "segmenter", str(path))
    backend = backend or seg.get("backend", "classical")
    return backend, backend_section("segmenter", backend, section(seg, backend, where, required=False), where)


__all__ = ["Box3D", "Detection", "ExpectedObject", "SegmentationHints", "Segmenter",
           "camera_viewpoint", "check_observation", "detections_to_scene", "make_segmenter", "perceive_with_workspace",
           "segmenter_names", "load_segmenter_config", "BACKENDS"]
