"""Setting up a cell: capture its workspace description (table, fixtures) from one calibrated
RGB-D look, and check a workspace file against a fresh look. ROS-free (the live camera is
nodes/live_observation.py).

    capture.py   table plane + extent, fixture boxes -> Scene (the planner's workspace file)
    check.py     a workspace file vs a new observation: what moved, what is missing
    sources.py   saved observations (.npz) and rosbag2 input
    reach.py     which shelf slots the arm reaches (the generator's rule too)
The MuJoCo cell to capture and its ground truth (--sim, the tests) is sim/capture_cell.py.
"""
