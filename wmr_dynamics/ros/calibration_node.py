"""The calibration node: online IPEM (thesis §3.2.4) from live encoders, IMU and GPS/INS.

    wmr-ros-calibrate --ros-args -p vehicle:=landtamer -p params_file:=landtamer_calibration.yaml
    ros2 launch wmr_dynamics calibration.launch.py vehicle:=landtamer

Subscribes ``joint_states`` (sensor_msgs/JointState), ``imu`` (sensor_msgs/Imu: roll/pitch inputs; with a
NavSatFix also the yaw) and the ground truth: ``gps/odom`` (nav_msgs/Odometry, ``pose_type:=odometry``) or
``fix`` (sensor_msgs/NavSatFix, ``pose_type:=navsatfix``, local east-north plane about the first fix).
Messages are used by their header stamps.  Every ``interval_s`` of pose measurements, once the joint states
(and the IMU) have passed the interval's end, the interval is predicted and the identification EKF
updated (:class:`~wmr_dynamics.calibration.ipem.OnlineIpem`, with the Mahalanobis gate of eq. 3.68); an
interval with a gap in any stream is skipped.

Publishes ``calibration/parameters`` (std_msgs/String, the parameter YAML, transient local: the odometry node
subscribes to it and switches to each new estimate) and ``calibration/residual`` (std_msgs/Float64MultiArray:
t0, t1 (s), r_x, r_y (m), r_yaw (rad), Mahalanobis distance, accepted 0/1).  Writes ``params_file`` atomically
after every interval and on shutdown; a restarted node resumes from it (``resume``, default true).

Parameters: vehicle / urdf_file / robot_description / vehicle_config (as the other nodes), model
("enhanced" | "kinematic" | "diffdrive" | "dynamic": the vehicle YAML's contact model), interval_s (2.0),
params_file ("calibration.yaml"), resume (true), pose_type ("odometry"), pose_std ([] = the messages'
covariances, else [position m, yaw rad]), gate (90.0), process_noise (0.0: Q of eq. 3.49 as a fraction of
the initial standard deviations), use_imu (true).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import yaml
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import Imu, JointState, NavSatFix
from std_msgs.msg import Float64MultiArray, String

from wmr_dynamics.calibration.calibrate import CalibrationResult, params_mapping, write_params
from wmr_dynamics.calibration.ipem import OnlineIpem, OnlineSettings
from wmr_dynamics.calibration.log import CalibrationError, LogBuilder
from wmr_dynamics.calibration.predict import KINDS, Predictor, intervals
from wmr_dynamics.errors import WmrError
from wmr_dynamics.ros.common import ThrottledWarnings, load_vehicle_parameters, run_node

#: subscription queue depth of each input topic (messages)
QUEUE_DEPTH = 2000

class CalibrationNode(Node):
    def __init__(self, **kwargs) -> None:  # noqa: ANN003 - rclpy Node options
        super().__init__("wmr_calibration", **kwargs)
        self.ekf: OnlineIpem | None = None
        self._warn = ThrottledWarnings(self)
        self.model = load_vehicle_parameters(self)
        p = {name: self.declare_parameter(name, default).value for name, default in
             {"model": "enhanced", "interval_s": 2.0, "params_file": "calibration.yaml", "resume": True,
              "pose_type": "odometry", "pose_std": [0.0], "gate": 90.0, "process_noise": 0.0,
              "use_imu": True}.items()}
        if p["model"] not in KINDS:
            raise WmrError(f"parameter model: expected one of {', '.join(KINDS)}, got {p['model']!r}")
        if not (isinstance(p["interval_s"], (int, float)) and math.isfinite(p["interval_s"]) and p["interval_s"] > 0):
            raise WmrError(f"parameter interval_s: expected a positive number of seconds, got {p['interval_s']!r}")
        std = [float(x) for x in p["pose_std"]]
        if std != [0.0] and (len(std) != 2 or not all(math.isfinite(x) and x > 0 for x in std)):
            raise WmrError(f"parameter pose_std: expected [position m, yaw rad] > 0, got {std}")
        self.kind, self.interval = p["model"], float(p["interval_s"])
        self.path = Path(p["params_file"])
        if self.path.is_dir():
            raise WmrError(f"parameter params_file: {self.path} is a folder; give the YAML file to write")
        try:
            self.builder = LogBuilder(self.model, p["pose_type"], tuple(std) if std != [0.0] else None, "live topics")
        except CalibrationError as e:
            raise WmrError(f"parameter pose_type: {e}") from None
        self.settings = OnlineSettings(gate=float(p["gate"]), process_noise=float(p["process_noise"]))
        self._resume = self._load_previous() if p["resume"] and self.path.is_file() else None
        self._t0: float | None = None  # start of the interval being collected (a pose stamp), s
        self._joints_to = self._imu_to = -math.inf  # latest stamps seen, s
        self.use_imu = bool(p["use_imu"]) or p["pose_type"] == "navsatfix"
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.pub_params = self.create_publisher(String, "calibration/parameters", latched)
        self.pub_residual = self.create_publisher(Float64MultiArray, "calibration/residual", 20)
        # deep queues: an interval's update (the model run 2n + 2 times) blocks the callbacks for a while, and a
        # message dropped then would leave a gap, i.e. a skipped interval (about 20 s of data at 100 Hz)
        self.create_subscription(JointState, "joint_states", self._on_joints, QUEUE_DEPTH)
        if self.use_imu:
            self.create_subscription(Imu, "imu", self._on_imu, QUEUE_DEPTH)
        if p["pose_type"] == "navsatfix":
            self.create_subscription(NavSatFix, "fix", self._on_pose, QUEUE_DEPTH)
        else:
            self.create_subscription(Odometry, "gps/odom", self._on_pose, QUEUE_DEPTH)
        self.create_timer(0.1, self._step)
        self.get_logger().info(f"{self.model.name}: online IPEM of the {self.kind} model, {self.interval:g} s "
                               f"intervals, writing {self.path}"
                               + (f" (resumed from {self._resume['intervals']} intervals)" if self._resume else ""))

    # ---- input -----------------------------------------------------------------------------------------
    def _on_joints(self, msg: JointState) -> None:
        self._joints_to = max(self._joints_to, self.builder.joint_state(msg))

    def _on_imu(self, msg: Imu) -> None:
        o = msg.orientation
        if not (np.isfinite([o.x, o.y, o.z, o.w]).all() and abs(math.hypot(o.x, o.y, o.z, o.w) - 1.0) < 0.1):
            self._warn("imu rejected: orientation is not a unit quaternion", "imu")
            return
        self._imu_to = max(self._imu_to, self.builder.imu(msg))

    def _on_pose(self, msg: Odometry | NavSatFix) -> None:
        t = self.builder.pose(msg)
        if self._t0 is None:
            self._t0 = t

    # ---- calibration -------------------------------------------------------------------------------------
    def _step(self) -> None:
        """Calibrate on every complete interval: poses from t0 to t0 + interval_s, joint states (and IMU) past it."""
        while self._t0 is not None:
            ends = [t for t, _ in self.builder.P if t >= self._t0 + self.interval - 1e-6]
            if not ends:
                return
            t1 = ends[0]
            if self._joints_to < t1 or (self.use_imu and self._imu_to < t1):
                return  # the inputs have not reached the interval's end yet
            self._calibrate(self._t0, t1)
            self._t0 = t1
            self.builder.prune(t1 - 1.0)

    def _calibrate(self, t0: float, t1: float) -> None:
        try:
            log = self.builder.build(t0 - 0.5, t1 + 0.5, poses=(t0, t1))
        except CalibrationError as e:
            self._warn(f"interval {t0:.1f}-{t1:.1f} s skipped: {e}", "skip")
            return
        ivs = [iv for iv in intervals(log, self.interval) if abs(iv.t0 - t0) < 1e-6] if len(log.pose_t) > 1 else []
        if not ivs:
            self._warn(f"interval {t0:.1f}-{t1:.1f} s skipped: a gap in the joint states, IMU or poses", "gap")
            return
        try:
            if self.ekf is None:
                self.ekf = self._make_ekf(log)
            else:
                self.ekf.predictor.use_log(log)
            step = self.ekf.update(ivs[0])
        except WmrError as e:
            self._warn(f"interval {t0:.1f}-{t1:.1f} s skipped: {e}", "interval")
            return
        self.pub_residual.publish(Float64MultiArray(data=[t0, t1, *map(float, step.r), step.mahalanobis,
                                                          float(step.accepted)]))
        if step.accepted:
            self._save()
        else:
            self._warn(f"interval {t0:.1f}-{t1:.1f} s rejected as an outlier (Mahalanobis {step.mahalanobis:.1f} > "
                       f"{self.settings.gate:g})", "outlier")

    def _make_ekf(self, log) -> OnlineIpem:  # noqa: ANN001
        pred = Predictor(self.model, log, self.kind)
        prev = self._resume
        if prev is None:
            return OnlineIpem(pred, pred.nominal, self.settings)
        n = len(pred.names)
        cov = np.diag([self.settings.p_std ** 2] * n + [self.settings.s_std ** 2] * 3)
        cov[:n, :n] = prev["cov"]
        ekf = OnlineIpem(pred, prev["p"], self.settings, s=prev["s"], cov=cov)
        ekf.accepted = prev["intervals"]
        return ekf

    def _load_previous(self) -> dict | None:
        """p, s, cov and the interval count of a parameter YAML this node wrote before (resume)."""
        try:
            data = yaml.safe_load(self.path.read_text()) or {}
            if data.get("model") != self.kind:
                raise ValueError(f"it holds the {data.get('model')!r} model, not {self.kind!r}")
            names = list(data["covariance"]["parameters"])
            par = dict(data["calibration_parameters"])
            p = np.array([float(par[n]) for n in names])
            cov = np.array(data["covariance"]["matrix"], dtype=float).reshape(len(names), len(names))
            noise = data["process_noise"]
            s = np.sqrt([float(noise["v_x"]), float(noise["v_y"]), float(noise["omega_z"])])
            return {"p": p, "s": s, "cov": cov, "intervals": int(data["calibration"].get("accepted", 0))}
        except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as e:
            self.get_logger().warning(f"params_file {self.path}: not resumed ({e}); starting from the uncalibrated "
                                      "model")
            return None

    def _save(self, publish: bool = True) -> None:
        """Write params_file (atomically) and publish the parameters."""
        ekf = self.ekf
        if ekf is None:
            return
        n = len(ekf.p)
        res = CalibrationResult(self.kind, ekf.predictor.names, ekf.p, ekf.s, ekf.cov[:n, :n],
                                intervals=len(ekf.history), accepted=ekf.accepted)
        mapping = params_mapping(self.model, res, ekf.predictor, "live topics")
        try:
            write_params(self.path, mapping)
        except OSError as e:
            self._warn(f"params_file {self.path}: cannot write: {e}", "write")
        if publish:
            self.pub_params.publish(String(data=yaml.safe_dump(mapping, sort_keys=False, default_flow_style=None)))

    def destroy_node(self) -> None:
        self._save(publish=False)  # on shutdown (Ctrl-C): write the file only, nobody is left to listen
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Console script ``wmr-ros-calibrate`` (and ``ros2 run wmr_dynamics calibration_node``)."""
    return run_node("wmr-ros-calibrate", CalibrationNode, args)


if __name__ == "__main__":
    sys.exit(main())
