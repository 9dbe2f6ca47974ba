"""The simulated lab, ROS-free: the MuJoCo world and its arm (world, mjcf, arm, contacts), the
sensing profiles that give it a real cell's errors (sensing), the task generator and its scenes
(tasks, families, layouts, assets, library, object_*), the success checker and the ground-truth
oracle (checker, oracle, placement), Gazebo export (sdf_*), and the cells that calibration and
workspace capture are tried on with their ground truth (calibration_cell, capture_cell).

The simulator's ground truth never reaches the planner in a benchmark: only its images, joints
and what a lab would configure do.
"""
