"""Online IPEM calibration on a live robot, feeding the odometry node as it learns.

    ros2 launch wmr_dynamics calibration.launch.py vehicle:=landtamer params_file:=/path/landtamer_cal.yaml
    ros2 launch wmr_dynamics calibration.launch.py urdf:=/path/robot.urdf vehicle_config:=/path/robot.yaml \\
        pose_type:=navsatfix pose_topic:=/gnss/fix odometry:=false

Starts the calibration node (encoders, IMU and GPS/INS in; the parameter YAML written as it learns, resumed
on restart) and, unless ``odometry:=false``, the odometry node, which switches to every new estimate it
publishes.  Without ``ros2 launch``: ``wmr-ros-calibrate --ros-args -p vehicle:=landtamer``.
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
           ("vehicle", "urdf", "vehicle_config", "params_file", "model", "interval_s", "pose_type", "pose_topic",
            "joint_states_topic", "imu_topic", "odometry")}
    urdf = arg["urdf"] or os.path.join(share, "urdf", arg["vehicle"] + ".urdf")
    config = arg["vehicle_config"] or os.path.join(share, "config", arg["vehicle"] + ".yaml")
    pose_in = "fix" if arg["pose_type"] == "navsatfix" else "gps/odom"
    inputs = [("joint_states", arg["joint_states_topic"]), ("imu", arg["imu_topic"])]
    nodes = [Node(package=PACKAGE, executable="calibration_node", name="wmr_calibration", output="screen",
                  parameters=[{"urdf_file": urdf, "vehicle_config": config, "params_file": arg["params_file"],
                               "model": arg["model"], "interval_s": float(arg["interval_s"]),
                               "pose_type": arg["pose_type"]}],
                  remappings=[*inputs, (pose_in, arg["pose_topic"] or pose_in)])]
    if arg["odometry"].lower() in ("true", "1", "yes"):
        nodes.append(Node(package=PACKAGE, executable="odometry_node", name="wmr_odometry", output="screen",
                          parameters=[{"urdf_file": urdf, "vehicle_config": config}], remappings=inputs))
    return nodes


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("vehicle", default_value="landtamer", description="bundled vehicle name"),
        DeclareLaunchArgument("urdf", default_value="", description="path to a URDF (overrides vehicle)"),
        DeclareLaunchArgument("vehicle_config", default_value="", description="vehicle YAML (default: bundled)"),
        DeclareLaunchArgument("params_file", default_value="calibration.yaml",
                              description="parameter YAML written as the calibration learns (resumed from)"),
        DeclareLaunchArgument("model", default_value="enhanced",
                              description="enhanced | kinematic | diffdrive | dynamic"),
        DeclareLaunchArgument("interval_s", default_value="2.0", description="prediction interval, s"),
        DeclareLaunchArgument("pose_type", default_value="odometry", description="odometry (GPS/INS) | navsatfix"),
        DeclareLaunchArgument("pose_topic", default_value="", description="ground-truth topic (default gps/odom "
                                                                          "or fix)"),
        DeclareLaunchArgument("joint_states_topic", default_value="joint_states"),
        DeclareLaunchArgument("imu_topic", default_value="imu"),
        DeclareLaunchArgument("odometry", default_value="true", description="also run the odometry node"),
        OpaqueFunction(function=_nodes),
    ])
