"""Simulate a vehicle: robot_state_publisher + the wmr_dynamics simulator node + RViz.

    ros2 launch wmr_dynamics sim.launch.py vehicle:=rocky7 world:=rough mode:=dynamic
    ros2 launch wmr_dynamics sim.launch.py urdf:=/path/robot.urdf vehicle_config:=/path/robot.yaml

Drive it with cmd_vel, e.g. ``ros2 run teleop_twist_keyboard teleop_twist_keyboard``.  The node's other
parameters are in config/sim.yaml (pass ``params_file:=...`` for your own).  Without ``ros2 launch`` (a
pip-only install), start the node alone: ``wmr-ros-sim --ros-args -p vehicle:=rocky7``.
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
           ("vehicle", "urdf", "vehicle_config", "world", "mode", "params_file", "rviz")}
    urdf = arg["urdf"] or os.path.join(share, "urdf", arg["vehicle"] + ".urdf")
    config = arg["vehicle_config"] or os.path.join(share, "config", arg["vehicle"] + ".yaml")
    with open(urdf) as f:
        description = f.read()
    nodes = [
        Node(package="robot_state_publisher", executable="robot_state_publisher",
             parameters=[{"robot_description": description}]),
        Node(package=PACKAGE, executable="sim_node", name="wmr_sim", output="screen",
             parameters=[arg["params_file"] or os.path.join(share, "config", "sim.yaml"),
                         {"urdf_file": urdf, "vehicle_config": config, "world": arg["world"], "mode": arg["mode"]}]),
    ]
    if arg["rviz"].lower() in ("true", "1"):
        nodes.append(Node(package="rviz2", executable="rviz2",
                          arguments=["-d", os.path.join(share, "config", "sim.rviz")]))
    return nodes


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("vehicle", default_value="rocky7", description="bundled vehicle name"),
        DeclareLaunchArgument("urdf", default_value="", description="path to a URDF (overrides vehicle)"),
        DeclareLaunchArgument("vehicle_config", default_value="", description="vehicle YAML (default: bundled)"),
        DeclareLaunchArgument("world", default_value="flat", description="flat | rough | ramp | steps | FILE"),
        DeclareLaunchArgument("mode", default_value="kinematic", description="kinematic | enhanced | dynamic"),
        DeclareLaunchArgument("params_file", default_value="", description="node parameters (default config/sim.yaml)"),
        DeclareLaunchArgument("rviz", default_value="true", description="start rviz2"),
        OpaqueFunction(function=_nodes),
    ])
