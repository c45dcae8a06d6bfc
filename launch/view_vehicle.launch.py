"""Show a bundled (or any) vehicle URDF in RViz: robot_state_publisher + joint_state_publisher + rviz2.

    ros2 launch wmr_dynamics view_vehicle.launch.py vehicle:=rocky7
    ros2 launch wmr_dynamics view_vehicle.launch.py urdf:=/path/to/robot.urdf

The simulator node (coming with the ROS issue) publishes joint states and TF itself; this file is for
inspecting a model's frames and wheels.
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
    urdf = LaunchConfiguration("urdf").perform(context)
    if not urdf:
        urdf = os.path.join(share, "urdf", LaunchConfiguration("vehicle").perform(context) + ".urdf")
    with open(urdf) as f:
        description = f.read()
    nodes = [
        Node(package="robot_state_publisher", executable="robot_state_publisher",
             parameters=[{"robot_description": description}]),
        Node(package="joint_state_publisher", executable="joint_state_publisher"),
    ]
    if LaunchConfiguration("rviz").perform(context).lower() in ("true", "1"):
        nodes.append(Node(package="rviz2", executable="rviz2",
                          arguments=["-d", os.path.join(share, "config", "view_vehicle.rviz")]))
    return nodes


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("vehicle", default_value="rocky7", description="bundled vehicle name"),
        DeclareLaunchArgument("urdf", default_value="", description="path to a URDF (overrides vehicle)"),
        DeclareLaunchArgument("rviz", default_value="true", description="start rviz2"),
        OpaqueFunction(function=_nodes),
    ])
