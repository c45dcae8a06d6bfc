"""ROS 2 front end: nodes and message conversions (the only part of the package that imports rclpy).

- :mod:`wmr_dynamics.ros.sim_node` — the simulator node (``wmr-ros-sim``).
- :mod:`wmr_dynamics.ros.convert` — library arrays ↔ ROS messages, checks of incoming maps.

With a pip-only install, ``make install`` provides rclpy and the messages from PyPI and builds ``tf2_msgs``
and ``grid_map_msgs`` into the virtual environment (``ros_compat/``).
"""
