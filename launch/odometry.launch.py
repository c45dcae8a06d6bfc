"""3D wheel odometry on a real robot: the wmr_dynamics odometry node on the robot's joint_states and imu.

    ros2 launch wmr_dynamics odometry.launch.py vehicle:=rocky7
    ros2 launch wmr_dynamics odometry.launch.py urdf:=/path/robot.urdf vehicle_config:=/path/robot.yaml \\
        params_file:=/path/calibrated.yaml

Remap the inputs if the robot publishes elsewhere, e.g. ``joint_states_topic:=/robot/joint_states``.  Without
``ros2 launch``: ``wmr-ros-odometry --ros-args -p vehicle:=rocky7``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription

PACKAGE = "wmr_dynamics"


def _nodes(context):
    share = get_package_share_directory(PACKAGE)
    arg = {name: LaunchConfiguration(name).perform(context) for name in
           ("vehicle", "urdf", "vehicle_config", "params_file", "joint_states_topic", "imu_topic")}
    urdf = arg["urdf"] or os.path.join(share, "urdf", arg["vehicle"] + ".urdf")
    config = arg["vehicle_config"] or os.path.join(share, "config", arg["vehicle"] + ".yaml")
    return [Node(package=PACKAGE, executable="odometry_node", name="wmr_odometry", output="screen",
                 parameters=[{"urdf_file": urdf, "vehicle_config": config, "params_file": arg["params_file"]}],
                 remappings=[("joint_states", arg["joint_states_topic"]), ("imu", arg["imu_topic"])])]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("vehicle", default_value="rocky7", description="bundled vehicle name"),
        DeclareLaunchArgument("urdf", default_value="", description="path to a URDF (overrides vehicle)"),
        DeclareLaunchArgument("vehicle_config", default_value="", description="vehicle YAML (default: bundled)"),
        DeclareLaunchArgument("params_file", default_value="", description="calibrated odometry parameters YAML"),
        DeclareLaunchArgument("joint_states_topic", default_value="joint_states"),
        DeclareLaunchArgument("imu_topic", default_value="imu"),
        OpaqueFunction(function=_nodes),
    ])
