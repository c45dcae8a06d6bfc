"""The odometry node: calibrated 3D wheel odometry on a real robot (:mod:`wmr_dynamics.odometry`).

    wmr-ros-odometry --ros-args -p vehicle:=rocky7 [-p params_file:=calibrated.yaml]
    ros2 run wmr_dynamics odometry_node --ros-args -p urdf_file:=robot.urdf -p vehicle_config:=robot.yaml

Subscribes ``joint_states`` (sensor_msgs/JointState; the actuated joints by name) and ``imu``
(sensor_msgs/Imu: its roll and pitch set the attitude; optional).  Publishes ``odom`` (nav_msgs/Odometry:
pose from the start at the origin, or ``initial_pose`` [x, y, z, yaw]; the body twist of the model) and
``/tf`` (odom → base) for every joint-state message used.  Stamps are the joint states' header stamps, so a
replayed bag gives the same path as ``wmr-odometry`` on the bag.

Parameters: vehicle / urdf_file / robot_description / vehicle_config (as the simulator node), params_file
(calibrated odometry parameters: model, slip, wheels), odom_frame ("odom"), base_frame (the URDF's root
link), frame_prefix, initial_pose, publish_tf (true), use_imu (true), params_topic
("calibration/parameters": the calibration node's latched parameter YAML, applied as it comes; "" for
none), imu_wait (0.2 s: how long a joint
state waits for the IMU stream to pass its stamp, so the attitude applied to it does not depend on which
topic's message arrived first).  Malformed messages (unknown or missing joints, NaN)
are rejected with a throttled warning.
"""

from __future__ import annotations

import sys
import time
from collections import deque

import numpy as np
import yaml
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from wmr_dynamics import spatial
from wmr_dynamics.errors import WmrError
from wmr_dynamics.odometry import OdometryParams, WheelOdometry
from wmr_dynamics.ros import convert
from wmr_dynamics.ros.common import ThrottledWarnings, load_vehicle_parameters, run_node


class OdometryNode(Node):
    def __init__(self, **kwargs) -> None:  # noqa: ANN003 - rclpy Node options
        super().__init__("wmr_odometry", **kwargs)
        self._warn = ThrottledWarnings(self)
        model = load_vehicle_parameters(self)
        p = {name: self.declare_parameter(name, default).value for name, default in
             {"params_file": "", "odom_frame": "odom", "base_frame": "", "frame_prefix": "",
              "initial_pose": [0.0, 0.0, 0.0, 0.0], "publish_tf": True, "use_imu": True,
              "imu_wait": 0.2, "params_topic": "calibration/parameters"}.items()}
        try:
            params = OdometryParams.load(p["params_file"]) if p["params_file"] else None
            self.odo = WheelOdometry(model, params, list(p["initial_pose"]))
        except WmrError as e:
            raise WmrError(f"parameter params_file / initial_pose: {e}") from None
        self.odom_frame = p["frame_prefix"] + p["odom_frame"]
        self.base_frame = p["frame_prefix"] + (p["base_frame"] or model.frame_names[0])
        self.publish_tf = p["publish_tf"]
        self.pub_odom = self.create_publisher(Odometry, "odom", 50)
        self.pub_tf = self.create_publisher(TFMessage, "/tf", 50)
        # A joint state waits (at most imu_wait s) for the IMU stream to pass its stamp, so that the attitude
        # applied to it never depends on which of the two topics' messages arrived first.
        self.use_imu, self.imu_wait = bool(p["use_imu"]), float(p["imu_wait"])
        self._pending: deque[tuple[int, float, JointState]] = deque()
        self._imu_ns: int | None = None  # stamp of the latest IMU message
        self._first_joints: float | None = None  # wall time of the first joint state
        self.create_subscription(JointState, "joint_states", self._on_joints, 200)
        if p["params_topic"]:  # a calibration node running live: switch to each new estimate
            latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.create_subscription(String, p["params_topic"], self._on_params, latched)
        if self.use_imu:
            self.create_subscription(Imu, "imu", self._on_imu, 200)
            self.create_timer(0.05, self._drain)
        self.get_logger().info(f"{model.name}: {self.odo.params.model} odometry, {self.odom_frame} -> "
                               f"{self.base_frame}")

    def _on_params(self, msg: String) -> None:
        try:
            params = OdometryParams.from_mapping(yaml.safe_load(msg.data), "calibration parameters message")
            self.odo.set_params(params)
        except (WmrError, yaml.YAMLError) as e:
            self._warn(f"calibration parameters rejected: {e}", "params")
            return
        self.get_logger().info(f"calibrated parameters applied: {params.model}, slip {list(params.slip)}")

    def _on_imu(self, msg: Imu) -> None:
        o = msg.orientation
        q = np.array([o.x, o.y, o.z, o.w])
        n = np.linalg.norm(q)
        if not (np.isfinite(n) and n > 0.5):
            self._warn(f"imu rejected: orientation {q.tolist()} is not a unit quaternion", "imu")
            return
        roll, pitch, _ = spatial.quat_to_rpy(q / n)
        stamp_ns = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        self.odo.set_attitude(roll, pitch, self.odo.seconds(stamp_ns))
        self._imu_ns = stamp_ns if self._imu_ns is None else max(self._imu_ns, stamp_ns)
        self._drain()

    def _on_joints(self, msg: JointState) -> None:
        now = time.monotonic()
        self._first_joints = now if self._first_joints is None else self._first_joints
        self._pending.append((msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec, now, msg))
        self._drain()

    def _drain(self) -> None:
        """Process the waiting joint states that the IMU stream has passed, or that waited imu_wait s (an IMU
        that never came: 2 s after the first joint state without any, joint states no longer wait, with a warning)."""
        now = time.monotonic()
        no_imu = not self.use_imu or (self._imu_ns is None and self._first_joints is not None
                                      and now - self._first_joints > 2.0)
        if self.use_imu and no_imu and self._pending:
            self._warn("no imu messages: odometry without roll/pitch (set use_imu:=false to silence)", "no-imu")
        while self._pending:
            stamp_ns, arrived, msg = self._pending[0]
            if not (no_imu or (self._imu_ns is not None and self._imu_ns >= stamp_ns)
                    or now - arrived > self.imu_wait):
                break
            self._pending.popleft()
            self._process(msg)

    def _process(self, msg: JointState) -> None:
        t = self.odo.seconds(msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec)
        try:
            used = self.odo.update(t, list(msg.name), msg.position, msg.velocity)
        except WmrError as e:
            self._warn(f"joint_states rejected: {e}", "joints")
            return
        if not used:
            return
        q = np.r_[self.odo.quaternion(), self.odo.position]
        if not np.all(np.isfinite(q)):
            self._warn("odometry became non-finite; not published", "nan")
            return
        stamp = msg.header.stamp
        self.pub_odom.publish(convert.odometry(stamp, self.odom_frame, self.base_frame, q, self.odo.twist,
                                               1e-4, 1e-4))
        if self.publish_tf:
            self.pub_tf.publish(TFMessage(transforms=[convert.transform(stamp, self.odom_frame, self.base_frame, q)]))


def main(args: list[str] | None = None) -> int:
    """Console script ``wmr-ros-odometry`` (and ``ros2 run wmr_dynamics odometry_node``)."""
    return run_node("wmr-ros-odometry", OdometryNode, args)


if __name__ == "__main__":
    sys.exit(main())
