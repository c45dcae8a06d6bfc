"""3D wheel odometry for a real robot: measured joint rates (+ IMU roll/pitch) through the vehicle's kinematic
or enhanced-kinematic model → pose.  One implementation for the ROS node (``wmr-ros-odometry``) and the
offline tool (``wmr-odometry BAG``).

The terrain under a real robot is unknown, so the motion model runs on an unbounded level plane
(navigation kinematics, thesis §2.2.5 with the actuated joint rates known, eq. 2.37; enhanced mode adds the
body-level slip of eqs. 2.44–2.49): it gives the body-frame twist [ω_b; v_b] that the measured wheel and
steering rates imply.  The pose is then dead-reckoned in 3D with the attitude from the IMU:

    ψ̇ = (ω_y sin φ + ω_z cos φ) / cos θ                     (Z-Y-X Euler rates, yaw from roll φ, pitch θ)
    ṗ = R_z(ψ) R_y(θ) R_x(φ) v_b                           (body velocity into the world frame)

Without an IMU, φ and θ are the model's own on level ground (planar odometry).  An interval's joint rates are
the position differences of two joint-state messages over their stamps' difference (the mean rate: exact for
encoders, whatever the timing of the velocity field), else the message's velocities.  Calibrated parameters
(see :class:`OdometryParams`) set the model (kinematic or enhanced), the slip parameters p1…p6 and per-wheel radii.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics import spatial
from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import WmrModel

#: the model's internal step, s (the measured interval is split into steps of at most this)
STEP_S = 0.01
#: a gap between two joint-state messages longer than this (s) is not integrated over (a dropout)
MAX_GAP_S = 0.5


@dataclass(frozen=True)
class OdometryParams:
    """Calibrated odometry parameters (the calibration's output YAML; unknown keys are an error).

    Attributes:
        model: ``"kinematic"`` or ``"enhanced"``.
        slip: p1…p6 of the enhanced model (:class:`~wmr_dynamics.kinematics.enhanced.SlipParams`).
        wheels: per wheel joint overrides, as the vehicle YAML's ``wheels:`` section (e.g. ``{FL_joint:
            {radius: 0.33}}``, m).
        track_scale: the track width (the lateral offsets of the body's child frames) as a multiple of the URDF's.
    """

    model: str = "kinematic"
    slip: tuple[float, ...] = (0.0,) * 6
    wheels: dict = field(default_factory=dict)
    track_scale: float = 1.0

    #: keys a calibration writes besides these three (read and kept by the calibration tools, not used here)
    KEYS = ("model", "slip", "wheels", "covariance", "vehicle", "note", "process_noise", "sensor_offset",
            "calibration", "alpha", "contact", "calibration_parameters", "track_scale", "cg_offset")

    @classmethod
    def load(cls, path: str | Path) -> OdometryParams:
        """Read the YAML file ``path`` (ModelError naming the file and the key for anything wrong)."""
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise ModelError(f"{p}: cannot read odometry parameters: {e}") from None
        return cls.from_mapping(data, str(p))

    @classmethod
    def from_mapping(cls, data: object, p: str = "odometry parameters") -> OdometryParams:
        """The parameters of an already-parsed YAML mapping (e.g. a calibration node's message); ``p`` names
        the source in errors."""
        if not isinstance(data, dict):
            raise ModelError(f"{p}: expected a mapping of keys, got {type(data).__name__}")
        unknown = set(data) - set(cls.KEYS)
        if unknown:
            raise ModelError(f"{p}: unknown keys {sorted(unknown)}; allowed: {list(cls.KEYS)}")
        model = data.get("model", "kinematic")
        if model == "dynamic":
            raise ModelError(f"{p}: model: dynamic parameters are a contact block for the vehicle YAML (wmr-sim, "
                             "load_model), not an odometry model; calibrate --model enhanced or kinematic for odometry")
        if model == "diffdrive":
            raise ModelError(f"{p}: model: diffdrive parameters are a calibration baseline (thesis eqs. 3.64-3.66), "
                             "not an odometry model; calibrate --model enhanced or kinematic for odometry")
        if model not in ("kinematic", "enhanced"):
            raise ModelError(f"{p}: model: expected kinematic or enhanced, got {model!r}")
        slip = data.get("slip", [0.0] * 6)
        try:
            slip = tuple(float(v) for v in slip)
        except (TypeError, ValueError):
            raise ModelError(f"{p}: slip: expected 6 numbers p1..p6, got {slip!r}") from None
        if len(slip) != 6 or not all(math.isfinite(v) for v in slip):
            raise ModelError(f"{p}: slip: expected 6 finite numbers p1..p6, got {list(slip)}")
        wheels = data.get("wheels") or {}
        if not isinstance(wheels, dict):
            raise ModelError(f"{p}: wheels: expected a mapping joint -> {{radius: m}}, got {wheels!r}")
        track = data.get("track_scale", 1.0)
        if isinstance(track, bool) or not isinstance(track, (int, float)) or not (0.2 < track < 5.0):
            raise ModelError(f"{p}: track_scale: expected a number in (0.2, 5), got {track!r}")
        return cls(model, slip, wheels, float(track))


def model_variant(model: WmrModel, track_scale: float = 1.0, cg: tuple[float, float] = (0.0, 0.0)) -> WmrModel:
    """``model`` with calibrated dimensions: the lateral (y) offsets of the body's child frames scaled by
    ``track_scale`` (the track width), and the body's centre of mass moved by ``cg`` = (dx, dy) m."""
    import dataclasses

    if track_scale == 1.0 and cg == (0.0, 0.0):
        return model
    body = model.frames[0].name
    frames = []
    for f in model.frames:
        if f.parent == body and track_scale != 1.0:
            f = dataclasses.replace(f, xyz=(f.xyz[0], f.xyz[1] * track_scale, f.xyz[2]))
        if f.parent is None and cg != (0.0, 0.0):
            f = dataclasses.replace(f, com=(f.com[0] + cg[0], f.com[1] + cg[1], f.com[2]))
        frames.append(f)
    return WmrModel(frames, model.wheels, model.joint_constraints, model.joint_springs, model.name, model.config,
                    model.source, model.fixed_frames)


def apply_params(model: WmrModel, params: OdometryParams) -> WmrModel:
    """The model with the calibrated wheel overrides (rebuilt from its URDF and YAML) and track scale;
    unchanged without any."""
    if not params.wheels:
        return model_variant(model, params.track_scale)
    from wmr_dynamics.urdf import load_model

    cfg = dict(model.config)
    wheels = {k: dict(v) for k, v in (cfg.get("wheels") or {}).items()}
    for joint, spec in params.wheels.items():
        if joint not in model.wheel_joint_names:
            raise ModelError(f"odometry parameters: wheels.{joint}: not a wheel joint of {model.name} "
                             f"({', '.join(model.wheel_joint_names)})")
        wheels.setdefault(joint, {}).update(spec)
    cfg["wheels"] = wheels
    return model_variant(load_model(model.source, cfg), params.track_scale)


class WheelOdometry:
    """Dead reckoning from joint states (see the module docstring).

    Args:
        model: the vehicle.  params: calibrated parameters (default: kinematic model, no slip).
        initial_pose: x, y, z (m), yaw (rad) of the start (default the origin, yaw 0).
    """

    def __init__(self, model: WmrModel, params: OdometryParams | None = None,
                 initial_pose: ArrayLike = (0.0, 0.0, 0.0, 0.0)) -> None:
        self._base = model
        self._build(params or OdometryParams())
        pose = np.asarray(initial_pose, dtype=float)
        if pose.shape != (4,) or not np.all(np.isfinite(pose)):
            raise ModelError(f"initial_pose: expected finite x, y, z (m), yaw (rad), got {pose.tolist()}")
        self.position = pose[:3].copy()
        self.roll = self.pitch = 0.0
        self._imu = False  # an IMU attitude has been given
        self._ref_ns: int | None = None
        self._attitudes: deque[tuple[float, float, float]] = deque(maxlen=1000)  # (t, roll, pitch) not yet due
        self.yaw = float(pose[3])
        self.twist = np.zeros(6)  # [ω_b; v_b] of the last interval
        self.t: float | None = None
        self._t_model = 0.0
        self._last_pos: NDArray | None = None

    def _build(self, params: OdometryParams) -> None:
        from wmr_dynamics.kinematics.enhanced import SlipParams
        from wmr_dynamics.model import is_revolute
        from wmr_dynamics.stepper import Stepper
        from wmr_dynamics.terrain import Plane

        self.model = apply_params(self._base, params)
        self.params = params
        self.stepper = Stepper(self.model, Plane(), mode=params.model, dt=STEP_S, slip=SlipParams(params.slip))
        self.data = self.stepper.make_data()
        self.actuated = self.model.actuated_joint_names
        self._revolute = np.array([is_revolute(int(self.model.joint_type[self.model.joint_index(n) + 1]))
                                   for n in self.actuated])

    def set_params(self, params: OdometryParams) -> None:
        """Switch to new calibrated parameters (a calibration running live) without losing the pose: new slip
        parameters take effect at the next update; new wheel radii or another model rebuild the model."""
        from wmr_dynamics.kinematics.enhanced import SlipParams

        if (params.wheels, params.model, params.track_scale) != (self.params.wheels, self.params.model,
                                                                 self.params.track_scale):
            self._build(params)
        else:
            self.stepper.set_slip(SlipParams(params.slip))
            self.params = params

    def rpy(self) -> NDArray:
        return np.array([self.roll, self.pitch, self.yaw])

    def quaternion(self) -> NDArray:
        """(x, y, z, w) of the current attitude."""
        return spatial.rpy_to_quat(self.rpy())

    def seconds(self, stamp_ns: int) -> float:
        """A message stamp (integer ns) on this odometry's clock, s: from the whole second of the first stamp
        seen (a float of epoch seconds would round stamps by 0.1 µs; the same stamps always give the same
        times, whichever message came first)."""
        if self._ref_ns is None:
            self._ref_ns = int(stamp_ns) - int(stamp_ns) % 10**9
        return (int(stamp_ns) - self._ref_ns) * 1e-9

    def set_attitude(self, roll: float, pitch: float, t: float | None = None) -> None:
        """The IMU's roll and pitch (rad) measured at time ``t`` (s, the clock of :meth:`update`): applied by
        the first update after ``t`` (at once when ``t`` is None).  Ordering by stamp makes the result
        independent of whether an IMU message arrives just before or just after the joint states."""
        if math.isfinite(roll) and math.isfinite(pitch):
            self._imu = True
            if t is None:
                self.roll, self.pitch = float(roll), float(pitch)
            else:
                self._attitudes.append((float(t), float(roll), float(pitch)))

    def update(self, t: float, names: list[str], position: ArrayLike, velocity: ArrayLike | None) -> bool:
        """Integrate up to time ``t`` (s) with the joint states of one message; returns False when the
        message was not used (first message, a gap, no actuated joints, time going backwards)."""
        pos_of = dict(zip(names, np.asarray(position, dtype=float), strict=False)) if len(position) else {}
        vel = np.asarray(velocity, dtype=float) if velocity is not None and len(velocity) else None
        vel_of = dict(zip(names, vel, strict=False)) if vel is not None and len(vel) == len(names) else {}
        missing = [n for n in self.actuated if n not in vel_of and n not in pos_of]
        if missing:
            raise ModelError(f"joint states: no position or velocity for the actuated joints {missing} "
                             f"(the message names {list(names)})")
        pos = np.array([pos_of.get(n, np.nan) for n in self.actuated])
        while self._attitudes and self._attitudes[0][0] < t:
            _, self.roll, self.pitch = self._attitudes.popleft()
        if self.t is None or t <= self.t or t - self.t > MAX_GAP_S:
            self.t, self._last_pos = t, pos
            self._t_model = 0.0
            return False
        dt = t - self.t
        # the interval's mean rates: position differences where both messages have positions (exact for
        # encoders, whatever the velocity field's timing), else the message's velocities
        d = pos - self._last_pos
        d = np.where(self._revolute & (np.abs(d) > np.pi), np.arctan2(np.sin(d), np.cos(d)), d)  # wrapped angles
        vel_now = np.array([vel_of.get(n, np.nan) for n in self.actuated])
        rates = np.where(np.isfinite(d), d / dt, vel_now)
        self.t, self._last_pos = t, pos
        if not np.all(np.isfinite(rates)):
            return False
        self._t_model += dt
        n = int(self._t_model / STEP_S + 1e-6)  # stamps in float seconds: tolerate their rounding
        if n == 0:
            return True
        self._t_model -= n * STEP_S
        # measured rates are not clipped to the URDF limits; the plane is unbounded: its own pose never matters
        self.stepper.advance(self.data, n, rates=rates, clip=False)
        self.twist = self.data.qvel[:6].copy()
        if not self._imu:  # no IMU: the attitude the model itself has on level ground
            self.roll, self.pitch, _ = spatial.quat_to_rpy(self.data.q[:4])
        self._integrate(n * STEP_S)
        return True

    def _integrate(self, dt: float) -> None:
        pos, yaw = dead_reckon(self.position, self.yaw, self.twist[None], np.array([self.roll]),
                               np.array([self.pitch]), np.array([dt]))
        self.position, self.yaw = pos[-1], float(yaw[-1])


def rotation_zyx(roll: NDArray, pitch: NDArray, yaw: NDArray) -> NDArray:
    """(n, 3, 3) R = R_z(ψ) R_y(θ) R_x(φ) of n attitudes (rad) — :func:`wmr_dynamics.spatial.rpy_to_rot`, batched."""
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    return np.stack([np.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], -1),
                     np.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], -1),
                     np.stack([-sp, cp * sr, cp * cr], -1)], -2)


def dead_reckon(position: ArrayLike, yaw: float, twist: NDArray, roll: NDArray, pitch: NDArray,
                dt: NDArray) -> tuple[NDArray, NDArray]:
    """Dead reckoning over n segments from ``position`` (m, world) and ``yaw`` (rad): segment k lasts dt[k] s
    with the body twist twist[k] = [ω_b; v_b] (rad/s, m/s) and the attitude roll[k], pitch[k] (rad):

        ψ̇ = (ω_y sin φ + ω_z cos φ) / cos θ          (Z-Y-X Euler rates)
        Δp = R(φ, θ, ψ_mid) v_b dt                    (ψ_mid: the segment's midpoint yaw)

    Returns the positions (n, 3) and yaws (n,) (wrapped to (−π, π]) at the end of each segment."""
    twist = np.atleast_2d(twist)
    rate = (twist[:, 1] * np.sin(roll) + twist[:, 2] * np.cos(roll)) / np.maximum(np.cos(pitch), 1e-3)
    yaws = yaw + np.cumsum(rate * dt)
    R = rotation_zyx(roll, pitch, yaws - 0.5 * rate * dt)
    pos = np.asarray(position, dtype=float) + np.cumsum(np.einsum("nij,nj->ni", R, twist[:, 3:6]) * dt[:, None], axis=0)
    return pos, np.arctan2(np.sin(yaws), np.cos(yaws))


def odometry_from_bag(bag: str | Path, model: WmrModel, params: OdometryParams | None = None,
                      joint_states_topic: str = "/joint_states", imu_topic: str | None = "/imu",
                      initial_pose: ArrayLike = (0.0, 0.0, 0.0, 0.0)) -> NDArray:
    """Dead reckoning over a rosbag2's joint states (+ IMU roll/pitch when ``imu_topic`` is in the bag).

    Returns an (n, 8) array, one row per joint-state message used: stamp (ns, the header stamp), t (s since
    the first joint-state message), x, y, z (m), roll, pitch, yaw (rad).  Messages are taken in the bag's
    log-time order, as a node receives them on replay; the IMU attitude in effect at a joint state is the
    latest one stamped before it (:meth:`WheelOdometry.set_attitude`), so the node and this function give the
    same path.
    """
    from wmr_dynamics.io.bag import BagError, read, topics

    available = topics(bag)
    if joint_states_topic not in available:
        raise BagError(f"{bag}: no topic {joint_states_topic} (topics: {', '.join(sorted(available))})")
    use_imu = imu_topic is not None and imu_topic in available
    odo = WheelOdometry(model, params, initial_pose)
    rows, t0 = [], None
    for topic, _, _, msg in read(bag, [joint_states_topic] + ([imu_topic] if use_imu else [])):
        stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
        if topic == imu_topic:
            o = msg.orientation
            r, p, _ = spatial.quat_to_rpy(np.array([o.x, o.y, o.z, o.w]))
            odo.set_attitude(r, p, odo.seconds(stamp))
            continue
        t0 = stamp if t0 is None else t0
        odo.update(odo.seconds(stamp), list(msg.name), msg.position, msg.velocity)
        rows.append([stamp, (stamp - t0) * 1e-9, *odo.position, *odo.rpy()])
    if not rows:
        raise BagError(f"{bag}: no messages on {joint_states_topic}")
    return np.array(rows, dtype=float)
