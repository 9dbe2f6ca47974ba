"""The scene as planner_node's perceive() builds it from one observation and the workspace file,
for the offline tools that must see what the robot saw (`spatial-manip evaluate`, the ESPIRE
stack driver)."""
from __future__ import annotations

from spatial_manip.perception import SegmentationHints, detections_to_scene
from spatial_manip.scene import FIXTURE_CATEGORIES


def perceive_with_workspace(seg, obs, workspace=None):
    """The scene as planner_node's perceive() builds it: the workspace's catalogue names and
    sizes the objects (segmenter hints), its fixtures and regions are taken as configured, and a
    segment of a fixture is not a new object. Without the workspace, the classical segmenter
    names objects `book_N`/`object_N` and keeps fixtures as objects: offline ids then never match
    the recorded ones (keep the two in step: planner_ports.perceive does the same)."""
    if workspace is None:
        return detections_to_scene(seg.segment(obs), obs)
    fixtures = [o for o in workspace.objects if o.category in FIXTURE_CATEGORIES]
    fixture_ids = {o.id for o in fixtures}
    hints = SegmentationHints.from_scene(workspace)
    detections = [d for d in seg.segment(obs, hints=hints) if d.id not in fixture_ids]
    return detections_to_scene(detections, obs, regions=workspace.regions, extra_objects=fixtures,
                               fronts=[o.id for o in workspace.objects if o.oriented])
