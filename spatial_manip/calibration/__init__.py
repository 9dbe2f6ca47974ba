"""Hand-eye calibration with a ChArUco board (issue 25): `spatial-manip calibrate`.

ROS-free core, one concern per module:

- `board`: board geometry from config, detection with OpenCV's ChArUco detector, board pose by
  solvePnP with the camera's own intrinsics.
- `samples`: pairing each image with the robot pose of the same instant (by timestamps, within a
  maximum skew), joints -> flange pose through our UR forward kinematics, the samples folder.
- `solve`: cv2.calibrateHandEye (Tsai, Park, Horaud, Andreff, Daniilidis) and
  cv2.calibrateRobotWorldHandEye (Shah, Li) for eye-to-hand and eye-in-hand, outlier rejection,
  per-sample residuals and the spread between methods.
- `result`: bounds, the refusal that names the bad samples, and the YAML that
  `spatial_manip.geometry.calibration.load_calibration` reads (residuals as comments).
- `guidance`: how many more poses and which rotations are still missing (a pure function).
- `sim`: a ChArUco plate rendered by MuJoCo on the flange (eye-to-hand) or on the table
  (eye-in-hand), with the simulator's ground truth.
- `cli`: the command; `ros_capture`: the only module that imports rclpy.

OpenCV (`opencv-python-headless` >= 4.7, for cv2.aruco.CharucoDetector) is imported here only.
"""
