"""Ground-truth segmentation from the simulator: masks from its segmentation image, boxes from
depth (the same box fit as the other backends, so its error measures the depth geometry, not the
segmentation), labels from the scene's id -> (label, category) map in the hints."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial_manip.errors import NoObservationError
from spatial_manip.observation import RGBDObservation
from spatial_manip.perception.base import (UNREPORTED_CATEGORIES, Detection, SegmentationHints,
                                           check_observation)
from spatial_manip.perception.box import detection_from_mask
from spatial_manip.perception.catalogue_fit import complete_from_catalogue
from spatial_manip.perception.cloud import base_cloud
from spatial_manip.perception.planes import fit_horizontal_planes


@dataclass(kw_only=True)
class GroundTruthConfig:
    min_pixels: int = 30                 # smaller visible segments are dropped (mostly occluded)
    skip_categories: tuple = UNREPORTED_CATEGORIES
    plane_stride_px: int = 4             # pixel stride of the cloud the support planes are fit on
    catalogue_fit: bool = True           # an object seen in part gets its catalogue box (catalogue_fit.py)
    seed: int = 0

    def __post_init__(self):
        if self.min_pixels < 1 or self.plane_stride_px < 1:
            raise ValueError(f"min_pixels and plane_stride_px must be >= 1, got {self.min_pixels}, {self.plane_stride_px}")
        self.skip_categories = tuple(self.skip_categories)


class GroundTruthSegmenter:
    """Segmenter over the simulator's segmentation image (RGBDObservation.segmentation)."""

    def __init__(self, **config):
        self.config = GroundTruthConfig(**config)

    def segment(self, obs: RGBDObservation, *, hints: SegmentationHints | None = None) -> list[Detection]:
        valid = check_observation(obs)
        if obs.segmentation is None:
            raise NoObservationError(
                "the ground_truth segmenter needs the simulator's segmentation image, and this "
                "observation has none: use the sim camera, or the 'classical' segmenter for real frames")
        hints = hints or SegmentationHints()
        seg = np.asarray(obs.segmentation)
        rng = np.random.default_rng(self.config.seed)
        cloud, _ = base_cloud(obs, valid, stride=self.config.plane_stride_px)
        planes = fit_horizontal_planes(cloud, rng)

        detections = []
        for obj_id, mask in self._masks(seg, obs.segment_ids).items():
            label, category = hints.objects.get(obj_id, (obj_id, "object"))
            if category in self.config.skip_categories:
                continue
            mask &= valid
            if np.count_nonzero(mask) < self.config.min_pixels:
                continue
            det = detection_from_mask(obs, mask, planes, id=obj_id, label=label, category=category,
                                      score=1.0, backend="ground_truth")
            if det is not None:
                detections.append(det)
        if self.config.catalogue_fit:
            complete_from_catalogue(obs, detections, hints.expected, planes)
        return sorted(detections, key=lambda d: d.id)

    @staticmethod
    def _masks(seg: np.ndarray, segment_ids: dict) -> dict[str, np.ndarray]:
        """Object id -> mask, merging segments that belong to one object (several geoms).
        With a non-empty `segment_ids`, unmapped segments are scenery (robot links, walls)."""
        masks: dict[str, np.ndarray] = {}
        for index in np.unique(seg):
            if index < 0:
                continue
            key = int(index)
            obj_id = segment_ids.get(key, segment_ids.get(str(key)))
            if obj_id is None:
                if segment_ids:
                    continue
                obj_id = f"segment_{key}"
            obj_id = str(obj_id)
            m = seg == index
            masks[obj_id] = masks[obj_id] | m if obj_id in masks else m
        return masks
