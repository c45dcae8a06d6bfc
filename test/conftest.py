"""Test-session setup.  Runs before any test module imports rclpy (ROS_NOTES.md: mandatory)."""

import os
import random

# DDS discovery must stay on loopback on this machine, and each session gets its own domain.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 101)))
os.environ.setdefault("MPLBACKEND", "Agg")
