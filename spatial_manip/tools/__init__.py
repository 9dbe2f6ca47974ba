"""The TIGeR tool set: camera_intrinsics, camera_extrinsics, depth_sensor, object_segmentation,
box_2d_to_box_3d, point_3d_to_point_2d and code_executor, each `f(ctx, **json_args) -> dict`
with an OpenAI function schema, in `TOOLS` (name -> (function, schema))."""
from spatial_manip.tools.geometry_tools import ToolContext
from spatial_manip.tools.registry import SCHEMAS, TOOLS, call_tool, openai_tools, validate

__all__ = ["TOOLS", "SCHEMAS", "ToolContext", "call_tool", "openai_tools", "validate"]
