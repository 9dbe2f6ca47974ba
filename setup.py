"""ament_python package `spatial_manip`.

Node executables are console_scripts so `ros2 run spatial_manip <node>` works on a ROS machine
(setup.cfg puts them in lib/spatial_manip); `spatial-manip` is the command line for people.
"""
import os

from setuptools import find_packages, setup

PACKAGE = "spatial_manip"


def share_files(*folders: str) -> list[tuple[str, list[str]]]:
    """data_files installing every file under `folders` into share/spatial_manip/ with the same
    layout: a new config subfolder (config/library/ once was not) cannot be forgotten."""
    out = []
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            if files:
                out.append((os.path.join("share", PACKAGE, root), sorted(os.path.join(root, f) for f in files)))
    return out

# node name -> module with main(); the bringup graphs refer to these names
NODES = {
    "planner_node": "spatial_manip.nodes.planner_node",
    "camera_node": "spatial_manip.nodes.camera_node",
    "recorder_node": "spatial_manip.nodes.recorder_node",
    "replay_node": "spatial_manip.nodes.replay_node",
    "grasp_node": "spatial_manip.nodes.grasp_node",
    "sim_node": "spatial_manip.nodes.sim_node",
    "arm_node": "spatial_manip.nodes.arm_node",
    "cell_tf_node": "spatial_manip.nodes.cell_tf_node",
}

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, PACKAGE + ".*"]),
    package_data={PACKAGE: ["sim/assets/*", "web/*", "reasoning/*.lark"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        *share_files("launch", "config", "urdf"),
    ],
    install_requires=["setuptools"],
    zip_safe=False,
    maintainer="spatial_manip maintainers",
    maintainer_email="maintainers@spatial-manip.dev",
    description="Spatial-instruction pick and place for a UR5 with a RealSense L515.",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [f"{name} = {mod}:main" for name, mod in NODES.items()]
        + ["spatial-manip = spatial_manip.cli:main"],
    },
)
