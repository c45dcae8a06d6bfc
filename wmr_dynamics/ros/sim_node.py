"""The simulator node: a vehicle from its URDF driven by ``cmd_vel`` on a terrain, stepped by the library.

    wmr-ros-sim --ros-args -p urdf_file:=robot.urdf -p world:=flat -p mode:=dynamic
    ros2 run wmr_dynamics sim_node --ros-args -p vehicle:=rocky7 -p world:=rough

Parameters (all optional):
    vehicle (str, "rocky7"): a bundled vehicle, or a path to a URDF / vehicle YAML; used when neither
        ``robot_description`` nor ``urdf_file`` is given.
    robot_description (str): the URDF as a string (as robot_state_publisher publishes it).
    urdf_file (str): path of the URDF.  vehicle_config (str): the vehicle YAML (docs/vehicle_yaml.md).
    world (str, "flat"): flat | rough | ramp | steps | a terrain file (.txt, .yaml, .npy, .png) | an SDF world.
    mode (str, "kinematic"): kinematic | enhanced | dynamic.  contact_model (str): dynamic mode's wheel–ground
        model (linear, pacejka, ishigami, ding); default the vehicle YAML's.
    dt (float, 0.01 s): the step.  real_time_factor (float, 1.0): simulated seconds per wall second; 0 runs
        as fast as possible.  publish_rate (float, 50 Hz, simulated time): odom, /tf, joint_states, markers.
    initial_pose (float[]): [x, y, yaw] or [x, y, z, roll, pitch, yaw] (m, rad; the vehicle is placed on the
        terrain at x, y with that yaw); default the vehicle YAML's initial_pose.
    frame_prefix (str): prepended to the odom and base frame names (several robots in one TF tree).
    odom_frame (str, "odom"), base_frame (str, the URDF's root link).
    cmd_vel_stamped (bool, false): ``cmd_vel`` carries geometry_msgs/TwistStamped instead of Twist.
    cmd_timeout (float, 0.5 s of wall time): a command older than this is replaced by standstill (0, 0).
    markers (bool, true): publish contact markers, at ``marker_rate`` (10 Hz of simulated time).
    sensors (bool, true): publish simulated sensors (:mod:`wmr_dynamics.sensors`): ``imu`` every publish
        period, ``gps/odom`` and ``fix`` at ``gps_rate`` (10 Hz), with white noise of standard deviations
        imu_attitude_std (0.002 rad), imu_gyro_std (0.005 rad/s), imu_accel_std (0.05 m/s²),
        gps_position_std (0.02 m), gps_attitude_std (0.005 rad); ``fix`` about ``datum`` [lat deg, lon deg,
        alt m]; ``sensor_seed`` seeds the noise.

Topics: subscribes ``cmd_vel`` (Twist: linear.x m/s, angular.z rad/s), ``joint_commands``
(std_msgs/Float64MultiArray: actuated joint rates in the vehicle's actuated-joint order, like ros2_control's
forward command controller; the latest of the two command kinds wins), ``terrain_map``
(grid_map_msgs/GridMap, "elevation" layer) and ``terrain_cloud`` (an organized sensor_msgs/PointCloud2 height
map).  Publishes ``odom`` (nav_msgs/Odometry), ``/tf`` (odom → base), ``joint_states`` (every movable
joint), the simulated sensors ``imu`` (sensor_msgs/Imu), ``gps/odom`` (nav_msgs/Odometry) and ``fix``
(sensor_msgs/NavSatFix), ``contact_markers`` (MarkerArray), ``terrain_marker`` (Marker, latched), and
``/clock`` when the node's ``use_sim_time`` is true (the stamps are then simulated time from 0; otherwise
wall time at start + simulated time).  Services: ``~/reset`` (std_srvs/Trigger: back to the initial pose)
and ``~/pause`` (std_srvs/SetBool).

Every received command and map is checked: NaN/inf, wrong lengths or malformed maps are rejected with a
(throttled) warning; commands beyond the URDF's joint speed limits are scaled down (:mod:`wmr_dynamics.limits`)
with one throttled warning; a step that fails or diverges puts the vehicle back to its last good state with
an error logged.  Nothing non-finite is ever published.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState, NavSatFix, PointCloud2
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.errors import WmrError
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.limits import limit_command, limit_rates
from wmr_dynamics.ros import convert
from wmr_dynamics.ros.common import ThrottledWarnings, load_vehicle_parameters, run_node
from wmr_dynamics.ros.convert import MessageError

#: a state whose speed exceeds this (m/s, rad/s) is treated as diverged
DIVERGED_SPEED = 1e3
#: the largest number of steps one tick may take in real-time mode (a slow machine falls behind, not apart)
MAX_CATCH_UP_S = 0.5


class SimNode(Node):
    """See the module docstring.  ``tick()`` advances and publishes; :func:`main` spins it."""

    def __init__(self, **kwargs) -> None:  # noqa: ANN003 - rclpy Node options
        super().__init__("wmr_sim", **kwargs)
        self._warn = ThrottledWarnings(self)
        self.model = load_vehicle_parameters(self)
        p = self._params()
        from wmr_dynamics.stepper import Stepper
        from wmr_dynamics.terrain import load_terrain

        try:
            self.terrain = load_terrain(p["world"])
        except WmrError as e:
            raise WmrError(f"parameter world: {e}") from None
        dynamics = None
        if p["mode"] == "dynamic":
            from wmr_dynamics.dynamics.force_balance import DynamicsOptions

            dynamics = DynamicsOptions.from_config(self.model, contact=p["contact_model"] or None)
        if not (np.isfinite(p["dt"]) and 0 < p["dt"] <= 0.1):
            raise WmrError(f"parameter dt: expected a step in (0, 0.1] s, got {p['dt']}")
        if not (np.isfinite(p["real_time_factor"]) and p["real_time_factor"] >= 0):
            raise WmrError(f"parameter real_time_factor: expected >= 0 (0: as fast as possible), got "
                           f"{p['real_time_factor']}")
        if not (np.isfinite(p["publish_rate"]) and 0 < p["publish_rate"] <= 1000):
            raise WmrError(f"parameter publish_rate: expected a rate in (0, 1000] Hz, got {p['publish_rate']}")
        self.stepper = Stepper(self.model, self.terrain, mode=p["mode"], dt=p["dt"], dynamics=dynamics)
        self.q0 = self._initial_state(p["initial_pose"])
        self.data = self.stepper.make_data(self.q0)  # loads the compiled engine (a cold compile is announced)
        self.dt, self.rtf = p["dt"], p["real_time_factor"]
        self.steps_per_publish = max(1, int(round(1.0 / (p["publish_rate"] * self.dt))))
        prefix = p["frame_prefix"]
        self.odom_frame = prefix + p["odom_frame"]
        self.base_frame = prefix + (p["base_frame"] or self.model.frame_names[0])
        self.gps_frame = prefix + "gps"
        self.cmd_timeout, self.markers = p["cmd_timeout"], p["markers"]
        if not (np.isfinite(p["marker_rate"]) and p["marker_rate"] > 0):
            raise WmrError(f"parameter marker_rate: expected a positive rate in Hz, got {p['marker_rate']}")
        self.marker_every = max(1, int(round(1.0 / (p["marker_rate"] * self.dt * self.steps_per_publish))))
        self.sim_clock = self.get_parameter("use_sim_time").value
        self.t0 = 0.0 if self.sim_clock else time.time()
        self.joint_names = self.model.joint_names
        self._command: tuple[str, np.ndarray, float] = ("twist", np.zeros(2), -np.inf)
        self._good = self._snapshot()
        self.paused = False
        self._wall0, self._sim0 = time.monotonic(), 0.0

        self.pub_odom = self.create_publisher(Odometry, "odom", 10)
        self.pub_tf = self.create_publisher(TFMessage, "/tf", 10)
        self.pub_joints = self.create_publisher(JointState, "joint_states", 10)
        self.pub_markers = self.create_publisher(MarkerArray, "contact_markers", 1)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.pub_terrain = self.create_publisher(Marker, "terrain_marker", latched)
        self.pub_clock = self.create_publisher(Clock, "/clock", 10) if self.sim_clock else None
        self.sensors = self._sensor_stream(p)
        if self.sensors is not None:
            self.pub_imu = self.create_publisher(Imu, "imu", 50)
            self.pub_gps = self.create_publisher(Odometry, "gps/odom", 10)
            self.pub_fix = self.create_publisher(NavSatFix, "fix", 10)
            self.gps_every = max(1, int(round(1.0 / (p["gps_rate"] * self.dt * self.steps_per_publish))))
        twist_type = TwistStamped if p["cmd_vel_stamped"] else Twist
        self.create_subscription(twist_type, "cmd_vel", self._on_twist, 10)
        self.create_subscription(Float64MultiArray, "joint_commands", self._on_rates, 10)
        from grid_map_msgs.msg import GridMap

        self.create_subscription(GridMap, "terrain_map", lambda m: self._on_map(m, convert.grid_map_heights), 1)
        self.create_subscription(PointCloud2, "terrain_cloud", lambda m: self._on_map(m, convert.cloud_heights), 1)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.create_service(SetBool, "~/pause", self._on_pause)
        self._publish_terrain()
        self.publish()
        self.get_logger().info(
            f"{self.model.name}: {p['mode']} model, dt {self.dt} s, real-time factor "
            f"{self.rtf if self.rtf > 0 else 'max'}, world {p['world']}, publishing {self.odom_frame} -> "
            f"{self.base_frame} every {self.steps_per_publish * self.dt:.3f} s of simulated time")

    # ---- set-up ------------------------------------------------------------------------------------------
    def _params(self) -> dict:
        defaults = {"world": "flat", "mode": "kinematic", "contact_model": "", "dt": 0.01,
                    "real_time_factor": 1.0, "publish_rate": 50.0, "initial_pose": [0.0],
                    "frame_prefix": "", "odom_frame": "odom", "base_frame": "", "cmd_vel_stamped": False,
                    "cmd_timeout": 0.5, "markers": True, "marker_rate": 10.0, "sensors": True, "gps_rate": 10.0,
                    "imu_attitude_std": 0.002, "imu_gyro_std": 0.005, "imu_accel_std": 0.05,
                    "gps_position_std": 0.02, "gps_attitude_std": 0.005, "datum": [40.4433, -79.9436, 300.0],
                    "sensor_seed": 0}
        p = {}
        for name, default in defaults.items():
            p[name] = self.declare_parameter(name, default).value
        p["initial_pose"] = [] if list(p["initial_pose"]) == [0.0] else list(p["initial_pose"])
        if p["mode"] not in ("kinematic", "enhanced", "dynamic"):
            raise WmrError(f"parameter mode: expected kinematic, enhanced or dynamic, got '{p['mode']}'")
        return p

    def _sensor_stream(self, p: dict):  # noqa: ANN202
        if not p["sensors"]:
            return None
        from wmr_dynamics.sensors import SensorSpec, SensorStream

        datum = list(p["datum"])
        if len(datum) != 3:
            raise WmrError(f"parameter datum: expected [latitude deg, longitude deg, altitude m], got {datum}")
        try:
            spec = SensorSpec(gps_rate_hz=p["gps_rate"], imu_attitude_std=p["imu_attitude_std"],
                              imu_gyro_std=p["imu_gyro_std"], imu_accel_std=p["imu_accel_std"],
                              gps_position_std=p["gps_position_std"], gps_attitude_std=p["gps_attitude_std"],
                              datum=tuple(float(v) for v in datum), seed=int(p["sensor_seed"]))
        except WmrError as e:
            raise WmrError(f"sensor parameters: {e}") from None
        return SensorStream(spec)

    def _initial_state(self, pose: list[float]) -> np.ndarray:
        if pose and (len(pose) not in (3, 6) or not np.all(np.isfinite(pose))):
            raise WmrError(f"parameter initial_pose: expected [x, y, yaw] or [x, y, z, roll, pitch, yaw] "
                           f"(finite, m and rad), got {pose}")
        if not pose:
            return self.stepper.initial_state()
        return self.stepper.initial_state(xyz=pose[:2], yaw=pose[-1])

    def _snapshot(self) -> tuple:
        d = self.data
        return d.q.copy(), d.qvel.copy(), d.integral.copy(), d.t, d.steps

    def _restore(self, good: tuple) -> None:
        q, qvel, integral, t, steps = good
        self.stepper.reset(self.data, q, qvel)
        self.data.integral[:] = integral
        self.data.t, self.data.steps = t, steps

    # ---- callbacks ---------------------------------------------------------------------------------------
    def _on_twist(self, msg: Twist | TwistStamped) -> None:
        tw = msg.twist if isinstance(msg, TwistStamped) else msg
        v, w = tw.linear.x, tw.angular.z
        if not (np.isfinite(v) and np.isfinite(w)):
            self._warn(f"cmd_vel rejected: non-finite linear.x {v} or angular.z {w}")
            return
        self._command = ("twist", np.array([v, w]), time.monotonic())

    def _on_rates(self, msg: Float64MultiArray) -> None:
        u = np.asarray(msg.data, dtype=float)
        names = self.model.actuated_joint_names
        if u.size != len(names):
            self._warn(f"joint_commands rejected: {u.size} values, expected {len(names)} ({', '.join(names)})")
            return
        if not np.all(np.isfinite(u)):
            self._warn(f"joint_commands rejected: non-finite values {u.tolist()}", "joint_commands-nan")
            return
        u, clipped = limit_rates(self.model, u)
        if clipped:
            self._warn("joint_commands beyond the URDF joint speed limits "
                       f"{self.model.actuated_velocity_limits.tolist()}: clipped", "joint_commands-limit")
        self._command = ("rates", u, time.monotonic())

    def _on_map(self, msg, to_grid) -> None:  # noqa: ANN001
        try:
            grid = to_grid(msg)
        except MessageError as e:
            self._warn(f"terrain map rejected: {e}", "map " + str(e).split(":")[0])
            return
        self.stepper.set_terrain(grid)
        self.terrain = grid
        self.get_logger().info(f"terrain replaced: {grid.nx} x {grid.ny} nodes at {grid.dx:.3g} m, x "
                               f"{grid.x_min:.2f}..{grid.x_max:.2f}, y {grid.y_min:.2f}..{grid.y_max:.2f} m")
        self._publish_terrain()

    def _on_reset(self, request, response):  # noqa: ANN001, ANN202
        self.stepper.reset(self.data, self.q0)
        if self.sensors is not None:
            self.sensors.reset()
        self._good = self._snapshot()
        self._wall0, self._sim0 = time.monotonic(), 0.0
        self._command = ("twist", np.zeros(2), -np.inf)
        response.success, response.message = True, "reset to the initial pose"
        self.publish()
        return response

    def _on_pause(self, request, response):  # noqa: ANN001, ANN202
        self.paused = bool(request.data)
        self._wall0, self._sim0 = time.monotonic(), self.data.t
        response.success, response.message = True, "paused" if self.paused else "running"
        return response

    # ---- stepping ----------------------------------------------------------------------------------------
    def due_steps(self) -> int:
        """Steps to take now: real time, the steps that bring simulated time to wall time × factor (at
        most MAX_CATCH_UP_S worth); as fast as possible, one publish period."""
        if self.paused:
            return 0
        if self.rtf <= 0:
            return self.steps_per_publish
        target = self._sim0 + self.rtf * (time.monotonic() - self._wall0)
        n = int((target - self.data.t) / self.dt + 1e-9)
        cap = max(1, int(MAX_CATCH_UP_S / self.dt))
        if n > cap:  # fell behind: drop the backlog instead of racing to catch up
            self._wall0, self._sim0 = time.monotonic(), self.data.t
            n = cap
        return max(n, 0)

    def seconds_to_next_step(self) -> float:
        if self.paused:
            return 0.05
        if self.rtf <= 0:
            return 0.0
        target = self.data.t + self.dt * self.steps_per_publish
        return max(0.0, (target - self._sim0) / self.rtf - (time.monotonic() - self._wall0))

    def tick(self) -> int:
        """Advance the due steps (in publish-period chunks) and publish after each chunk; returns steps taken."""
        n = self.due_steps()
        done = 0
        while done < n:
            k = min(self.steps_per_publish - self.data.steps % self.steps_per_publish, n - done)
            if not self._advance(k):
                return done
            done += k
            if self.data.steps % self.steps_per_publish == 0:
                self.publish()
        return done

    def _advance(self, n: int) -> bool:
        kind, cmd, t_cmd = self._command
        if time.monotonic() - t_cmd > self.cmd_timeout:
            kind, cmd = "twist", np.zeros(2)
        try:
            if kind == "rates":
                self.stepper.advance(self.data, n, rates=cmd)
            else:
                v, w = cmd
                if v or w:
                    q = self.data.q
                    v, w, s = limit_command(self.model, self.stepper.controller, q,
                                            forward_kinematics(self.model, q), v, w)
                    if s < 1:
                        self._warn(f"cmd_vel ({cmd[0]:.3g} m/s, {cmd[1]:.3g} rad/s) beyond the wheels' speed limits "
                                   f"(URDF <limit velocity>): scaled to ({v:.3g}, {w:.3g})", "cmd_vel-limit")
                self.stepper.advance(self.data, n, command=(v, w))
        except WmrError as e:
            self._diverged(f"step failed: {e}")
            return False
        d = self.data
        if not (np.all(np.isfinite(d.q)) and np.all(np.isfinite(d.qvel))
                and np.abs(d.qvel[:6]).max() < DIVERGED_SPEED):
            self._diverged("the state diverged (non-finite or a body speed above "
                           f"{DIVERGED_SPEED:g} m/s or rad/s)")
            return False
        self._good = self._snapshot()
        return True

    def _diverged(self, why: str) -> None:
        self.get_logger().error(f"{why}; back to the last good state at t = {self._good[3]:.3f} s and stopped "
                                "(send a new command to go on)", throttle_duration_sec=2.0)
        self._restore(self._good)
        self._command = ("twist", np.zeros(2), -np.inf)
        self._wall0, self._sim0 = time.monotonic(), self.data.t

    # ---- publishing --------------------------------------------------------------------------------------
    def publish(self) -> None:
        d = self.data
        t = convert.stamp(self.t0 + d.t)
        if self.pub_clock is not None:
            self.pub_clock.publish(Clock(clock=t))
        self.pub_odom.publish(convert.odometry(t, self.odom_frame, self.base_frame, d.q, d.qvel, 1e-9, 1e-9))
        self.pub_tf.publish(TFMessage(transforms=[convert.transform(t, self.odom_frame, self.base_frame, d.q)]))
        self.pub_joints.publish(convert.joint_state(t, self.joint_names, d.q[7:], d.qvel[6:]))
        period = self.data.steps // self.steps_per_publish
        if self.markers and period % self.marker_every == 0:
            self.pub_markers.publish(self._contact_markers(t))
        if self.sensors is not None:
            self._publish_sensors(t)

    def _publish_sensors(self, t) -> None:  # noqa: ANN001
        d, s = self.data, self.sensors.spec
        quat, gyro, accel = self.sensors.imu(d.t, d.q, d.qvel)
        self.pub_imu.publish(convert.imu(t, self.base_frame, quat, gyro, accel, s.imu_attitude_std ** 2,
                                         s.imu_gyro_std ** 2, s.imu_accel_std ** 2))
        if (d.steps // self.steps_per_publish) % self.gps_every == 0:  # GPS at its own rate
            pos, gquat, lla = self.sensors.gps(d.q)
            var = s.gps_position_std ** 2
            self.pub_gps.publish(convert.odometry(t, self.odom_frame, self.base_frame, np.r_[gquat, pos],
                                                  np.zeros(6), var, var))
            self.pub_fix.publish(convert.nav_sat_fix(t, self.gps_frame, lla, var))

    def _contact_markers(self, t) -> MarkerArray:  # noqa: ANN001
        d = self.data
        c = wheel_contacts(self.model, forward_kinematics(self.model, d.q), self.terrain)
        forces = None
        if self.stepper.mode == "dynamic":
            forces = np.einsum("wij,wj->wi", c.frames, d.contact_force)
        return convert.contact_markers(t, self.odom_frame, c.points, c.normals, c.dz <= 0.01, forces)

    def _publish_terrain(self) -> None:
        b = getattr(self.terrain, "bounds", None)
        x, y = self.data.q[4], self.data.q[5]
        if b is None:
            b = (x - 10, x + 10, y - 10, y + 10)
        b = (max(b[0], x - 25), min(b[1], x + 25), max(b[2], y - 25), min(b[3], y + 25))
        spacing = max(0.05, (b[1] - b[0]) / 150, (b[3] - b[2]) / 150)
        self.pub_terrain.publish(convert.terrain_marker(convert.stamp(self.t0 + self.data.t), self.odom_frame,
                                                        self.terrain, b, spacing))


def main(args: list[str] | None = None) -> int:
    """Console script ``wmr-ros-sim`` (and ``ros2 run wmr_dynamics sim_node``)."""
    return run_node("wmr-ros-sim", SimNode, args, wait_s=SimNode.seconds_to_next_step, tick=SimNode.tick)


if __name__ == "__main__":
    sys.exit(main())
