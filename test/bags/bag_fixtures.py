import numpy as np



def camera_messages(n=4, seed=0):
    """n pairs of rgb8 + 16UC1 images with camera_info, as rclpy messages (t_ns, topic, msg)."""
    from sensor_msgs.msg import CameraInfo

    from spatial_manip.camera_model import CameraIntrinsics
    from spatial_manip.nodes.convert import array_to_image, intrinsics_to_camera_info, seconds_to_stamp

    rng = np.random.default_rng(seed)
    intr = CameraIntrinsics(64, 48, 50.0, 50.0, 31.5, 23.5)
    out = []
    for i in range(n):
        t = 100.0 + i / 30
        stamp = seconds_to_stamp(t)
        rgb = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
        depth = rng.integers(0, 4000, (48, 64), dtype=np.uint16)
        fid = "camera_color_optical_frame"
        out.append((int(t * 1e9), "/camera/color/image_raw", array_to_image(rgb, "rgb8", fid, stamp)))
        out.append((int(t * 1e9) + 1, "/camera/aligned_depth_to_color/image_raw", array_to_image(depth, "16UC1", fid, stamp)))
        info = intrinsics_to_camera_info(intr, fid, stamp)
        assert isinstance(info, CameraInfo)
        out.append((int(t * 1e9) + 2, "/camera/color/camera_info", info))
    return out
