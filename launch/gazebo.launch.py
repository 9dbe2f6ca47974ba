"""`ros2 launch spatial_manip gazebo.launch.py world:=OUT/scenes/<id>.sdf [gui:=true]`

Gazebo Harmonic (`gz sim`) running a world exported by `spatial-manip tasks --sdf`, the camera
extrinsics of that world (its `<id>.calibration.yaml`, published latched on /camera/extrinsics as
camera_node does for a calibrated cell), and the graph in config/graphs/gazebo.yaml: ros_gz_bridge,
arm_node over joint trajectories, the grasp and planner nodes.

launch/launch_ros are imported inside generate_launch_description only, so this file imports on
machines without them (the tests read its command builders)."""
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_launch import graph_launch_description  # noqa: E402

EXTRINSICS_TOPIC = "/camera/extrinsics"


def gz_sim_command(world: str, gui: bool = False) -> list[str]:
    """`gz sim -r WORLD`: run at once (-r); server only (-s) unless a GUI is asked for."""
    if not Path(world).is_file():
        raise FileNotFoundError(f"world {world!r} does not exist; write one with "
                                "`spatial-manip tasks --suite pick --count 1 --out OUT --sdf`")
    return ["gz", "sim", "-r", *([] if gui else ["-s"]), str(world)]


def calibration_for(world: str) -> Path:
    """The calibration file sdf_export writes beside a world: <stem>.calibration.yaml."""
    p = Path(world)
    return p.with_name(p.stem + ".calibration.yaml")


def extrinsics_command(calibration: Path, frame_id: str = "base") -> list[str]:
    """`ros2 topic pub` of the calibrated camera pose, latched (transient local) and reliable,
    the QoS camera_node publishes /camera/extrinsics with and the planner subscribes with."""
    from spatial_manip.geometry.calibration import load_calibration
    from spatial_manip.transforms import matrix_to_quat

    T = load_calibration(calibration).T_base_camera()
    # plain floats: a numpy scalar's repr ("np.float64(...)") is not YAML
    (x, y, z), (qx, qy, qz, qw) = [float(v) for v in T[:3, 3]], [float(v) for v in matrix_to_quat(T[:3, :3])]
    msg = (f"{{header: {{frame_id: {frame_id}}}, pose: {{position: {{x: {x!r}, y: {y!r}, z: {z!r}}}, "
           f"orientation: {{x: {qx!r}, y: {qy!r}, z: {qz!r}, w: {qw!r}}}}}}}")
    return ["ros2", "topic", "pub", "--qos-durability", "transient_local", "--qos-reliability", "reliable",
            "--rate", "1", EXTRINSICS_TOPIC, "geometry_msgs/msg/PoseStamped", msg]


def _actions(context):
    from launch.actions import ExecuteProcess
    from launch.substitutions import LaunchConfiguration

    world = LaunchConfiguration("world").perform(context)
    gui = LaunchConfiguration("gui").perform(context).lower() in ("1", "true", "yes")
    return [ExecuteProcess(cmd=gz_sim_command(world, gui), name="gz_sim", output="screen"),
            ExecuteProcess(cmd=extrinsics_command(calibration_for(world)), name="camera_extrinsics",
                           output="log"),
            *graph_launch_description("gazebo").entities]


def generate_launch_description():
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    return LaunchDescription([
        DeclareLaunchArgument("world", description="an exported world: OUT/scenes/<id>.sdf (spatial-manip tasks --sdf)"),
        DeclareLaunchArgument("gui", default_value="false", description="also open the Gazebo GUI"),
        OpaqueFunction(function=_actions),
    ])
