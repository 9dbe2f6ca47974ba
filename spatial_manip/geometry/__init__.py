"""Geometry on calibrated depth: oriented boxes from pixels (boxes), point clouds (pointcloud, over
open3d), support surfaces (support), the depth check after a set-down (depth_check), the L515 noise
model (noise), analytic test frames (synthetic), the hand-eye file (calibration), a small TF buffer
(tf_tree), which places the arm reaches (reach), and every spatial word, once (relations). The camera model and the rigid transforms these
build on sit below this package, in spatial_manip/camera_model.py and spatial_manip/transforms.py.
"""
