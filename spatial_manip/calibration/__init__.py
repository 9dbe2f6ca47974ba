"""Hand-eye calibration with a ChArUco board (issue 25): `spatial-manip calibrate` and
`spatial-manip check-calibration`.

ROS-free core, one concern per module:

- `board`: board geometry from config, detection with OpenCV's ChArUco detector, board pose by
  solvePnP with the camera's own intrinsics and distortion.
- `samples`: pairing each image with the robot pose of the same instant (by timestamps, within a
  maximum skew), joints -> flange pose through our UR forward kinematics, the samples folder.
- `solve`: cv2.calibrateHandEye (Tsai, Park, Horaud, Andreff, Daniilidis) and
  cv2.calibrateRobotWorldHandEye (Shah, Li) for eye-to-hand and eye-in-hand, outlier rejection,
  per-sample residuals and the spread between methods.
- `result`: bounds, the refusal that names the bad samples, and the YAML that
  `spatial_manip.geometry.calibration.load_calibration` reads (residuals as comments).
- `procedure`: images -> board poses -> solve -> report, shared by every source.
- `guidance`: how many more poses and which rotations are still missing (a pure function).
- `auto`: the automatic eye-in-hand pose set inside the arm's safety envelope.
- `bag`: a rosbag2 -> a samples folder (one image per still period of the arm).
- `check`: a calibration file against fresh samples.
Beside it: sim/calibration_cell.py renders a ChArUco plate in MuJoCo on the flange (eye-to-hand)
or on the table (eye-in-hand), with the simulator's ground truth; commands/calibrate.py and
calibrate_live.py are the command and its live loops; nodes/calibration_capture.py is the ROS
capture (topics in, ArmMotion goals out).

OpenCV (`opencv-python-headless` >= 4.7, for cv2.aruco.CharucoDetector) is needed here only.
"""
