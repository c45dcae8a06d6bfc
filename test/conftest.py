"""Test-session setup.  Runs before any test module imports rclpy (ROS_NOTES.md: mandatory)."""

import os
import random

# DDS discovery must stay on loopback on this machine, and each session gets its own domain.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 101)))
os.environ.setdefault("MPLBACKEND", "Agg")


import pytest  # noqa: E402 - after the environment above


@pytest.fixture(scope="module")
def context():
    """An rclpy context of the test's own (rclpy imported only now, after the DDS settings above)."""
    import rclpy

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.shutdown(context=ctx)


@pytest.fixture
def probe(context):
    """A test-side node that publishes and records topics (test/ros_util.py)."""
    from ros_util import Probe

    p = Probe(context)
    yield p
    p.close()
