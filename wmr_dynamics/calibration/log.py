"""Driving logs for calibration: encoders, IMU attitude and ground-truth poses on one clock.

A :class:`DrivingLog` holds, as arrays sorted by time (s from ``t0_ns``, the whole second of the log's first
stamp):

- **joint states** of the model's actuated joints (positions rad/m, rates rad/s or m/s; NaN where a message
  lacks a joint or a field), matched to the URDF's joints by name;
- **IMU** roll and pitch (rad), the attitude inputs of the prediction (thesis §3.4: "IMU attitude
  measurements were used as inputs");
- **poses** of the ground-truth sensor (GPS/INS): x, y (m, world), yaw (rad), and their covariance Σ_meas
  (3 × 3, eq. 3.21).

Messages are used by their header stamps.  Unsorted stamps are sorted, repeated stamps keep the first
message, non-finite values are dropped; :attr:`DrivingLog.notes` counts what was done.  Gaps and dropouts
are handled where intervals are cut (:func:`wmr_dynamics.calibration.ipem.intervals`): an interval with a gap
in any stream is skipped, never integrated over.

Sources: a rosbag2 (MCAP or SQLite3; :func:`log_from_bag`) with ``sensor_msgs/JointState``,
``sensor_msgs/Imu`` and ``nav_msgs/Odometry`` or ``sensor_msgs/NavSatFix`` (+ the IMU's yaw), or three CSV
files (:func:`log_from_csv`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics import spatial
from wmr_dynamics.errors import WmrError
from wmr_dynamics.model import WmrModel

#: Σ_meas used when a pose message carries no covariance: position std (m), yaw std (rad)
DEFAULT_POSE_STD = (0.02, 0.01)


class CalibrationError(WmrError, ValueError):
    """A log or setting that calibration cannot use (the message names the input and the problem)."""


@dataclass
class DrivingLog:
    """Time-aligned encoder, IMU and pose streams (see the module docstring).  Times in s from ``t0_ns``."""

    joint_names: list[str]
    joint_t: NDArray  # (n,)
    joint_position: NDArray  # (n, na)
    joint_velocity: NDArray  # (n, na)
    imu_t: NDArray  # (m,)
    imu_rp: NDArray  # (m, 2) roll, pitch, rad
    pose_t: NDArray  # (k,)
    pose: NDArray  # (k, 3) x, y (m), yaw (rad) of the pose sensor
    pose_cov: NDArray  # (k, 3, 3) Σ_meas of (x, y, yaw)
    t0_ns: int = 0
    source: str = ""
    notes: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.joint_t, self.joint_position, self.joint_velocity = _clean(
            "joint states", self.notes, self.joint_t, self.joint_position, self.joint_velocity, allow_nan=True)
        self.imu_t, self.imu_rp = _clean("imu", self.notes, self.imu_t, self.imu_rp)
        self.pose_t, self.pose, self.pose_cov = _clean("poses", self.notes, self.pose_t, self.pose, self.pose_cov)
        if len(self.joint_t) < 2:
            raise CalibrationError(f"{self.source or 'log'}: fewer than 2 usable joint-state messages")
        if len(self.pose_t) < 2:
            raise CalibrationError(f"{self.source or 'log'}: fewer than 2 usable pose measurements")

    @property
    def duration(self) -> float:
        """Span of the pose measurements, s."""
        return float(self.pose_t[-1] - self.pose_t[0])

    def rates(self) -> NDArray:
        """(n−1, na) mean joint rates over each pair of consecutive joint-state messages: position differences
        over stamp differences where both have positions (exact for encoders), else the later message's
        velocities; a difference beyond ±π is taken as a wrapped angle.  NaN where neither is known."""
        d = np.diff(self.joint_position, axis=0)
        d = np.where(np.abs(d) > np.pi, np.arctan2(np.sin(d), np.cos(d)), d)  # a wrapped encoder angle
        return np.where(np.isfinite(d), d / np.diff(self.joint_t)[:, None], self.joint_velocity[1:])

    def cut(self, t_start: float, t_end: float) -> DrivingLog:
        """The part of the log between two times (s): for evaluating on data not calibrated on."""
        j = (self.joint_t >= t_start) & (self.joint_t <= t_end)
        i = (self.imu_t >= t_start) & (self.imu_t <= t_end)
        p = (self.pose_t >= t_start) & (self.pose_t <= t_end)
        return DrivingLog(self.joint_names, self.joint_t[j], self.joint_position[j], self.joint_velocity[j],
                          self.imu_t[i], self.imu_rp[i], self.pose_t[p], self.pose[p], self.pose_cov[p], self.t0_ns,
                          f"{self.source}[{t_start:g}:{t_end:g} s]", dict(self.notes))


def _clean(name: str, notes: dict, t: NDArray, *cols: NDArray, allow_nan: bool = False) -> tuple[NDArray, ...]:
    """Sort by time, keep the first of repeated stamps, drop rows with non-finite values (or, with
    ``allow_nan``, rows without a single finite value in any column); counts go into ``notes``."""
    t = np.asarray(t, dtype=float).ravel()
    cols = tuple(np.asarray(c, dtype=float).reshape(len(t), *np.shape(c)[1:]) for c in cols)
    if np.any(np.diff(t) < 0):
        notes[f"{name}: unsorted stamps (sorted)"] = int(np.sum(np.diff(t) < 0))
    order = np.argsort(t, kind="stable")
    t, cols = t[order], tuple(c[order] for c in cols)
    first = np.ones(len(t), dtype=bool)
    first[1:] = np.diff(t) > 0
    if (~first).any():
        notes[f"{name}: repeated stamps (first kept)"] = int((~first).sum())
    flat = [c.reshape(len(t), int(np.prod(c.shape[1:]))) for c in cols]
    if allow_nan:
        ok = np.isfinite(np.hstack(flat)).any(axis=1) if flat else np.ones(len(t), dtype=bool)
    else:
        ok = np.all([np.isfinite(f).all(axis=1) for f in flat], axis=0) if flat else np.ones(len(t), dtype=bool)
    ok &= np.isfinite(t)
    if (~ok & first).any():
        notes[f"{name}: rows with non-finite values (dropped)"] = int((~ok & first).sum())
    keep = first & ok
    return (t[keep], *(c[keep] for c in cols))


def _stamp(msg: object) -> int:
    s = msg.header.stamp
    return int(s.sec) * 10**9 + int(s.nanosec)


def _yaw_std_cov(cov: NDArray, default: tuple[float, float]) -> NDArray:
    """3 × 3 Σ_meas of (x, y, yaw) from a 6 × 6 pose covariance (x, y, z, roll, pitch, yaw), or the default
    where it has no positive diagonal."""
    c = np.asarray(cov, dtype=float).reshape(6, 6)[np.ix_([0, 1, 5], [0, 1, 5])]
    if not (np.all(np.isfinite(c)) and np.all(np.diag(c) > 0)):
        return np.diag([default[0] ** 2, default[0] ** 2, default[1] ** 2])
    return c


def log_from_bag(bag: str | Path, model: WmrModel, joint_states_topic: str = "/joint_states",
                 imu_topic: str | None = "/imu", pose_topic: str = "/gps/odom",
                 pose_std: tuple[float, float] | None = None, quiet: bool = False) -> DrivingLog:
    """A :class:`DrivingLog` from a rosbag2 (folder or its .mcap / .db3 file).

    Args:
        model: the vehicle; its actuated joints are looked up by name in the joint states.
        joint_states_topic: ``sensor_msgs/JointState``.  imu_topic: ``sensor_msgs/Imu`` (roll/pitch inputs;
            None or absent from the bag: the model's own attitude on level ground).
        pose_topic: ground truth, ``nav_msgs/Odometry`` (GPS/INS pose and covariance) or ``sensor_msgs/NavSatFix``
            (converted to a local east-north plane about the first fix, yaw from the IMU's orientation).
        pose_std: (position m, yaw rad) standard deviations to use instead of the messages' covariances
            (default: the messages', else :data:`DEFAULT_POSE_STD`).
        quiet: no warning on stderr for a damaged bag tail.

    A corrupt or truncated bag keeps the messages read before the damage (noted in ``notes['truncated']``);
    a bag without the named topics, or joint states that name none of the actuated joints, raises
    :class:`CalibrationError` naming what the bag has.
    """
    from wmr_dynamics.io.bag import BagError, read, topics

    available = topics(bag)
    for role, topic in (("joint states", joint_states_topic), ("poses", pose_topic)):
        if topic not in available:
            raise CalibrationError(f"{bag}: no {role} topic {topic} (the bag has: {', '.join(sorted(available))})")
    pose_type = available[pose_topic]
    if pose_type not in ("nav_msgs/msg/Odometry", "sensor_msgs/msg/NavSatFix"):
        raise CalibrationError(f"{bag}: {pose_topic} is {pose_type}; expected nav_msgs/msg/Odometry or "
                               "sensor_msgs/msg/NavSatFix")
    use_imu = imu_topic is not None and imu_topic in available
    if pose_type == "sensor_msgs/msg/NavSatFix" and not use_imu:
        raise CalibrationError(f"{bag}: a NavSatFix pose topic ({pose_topic}) needs an IMU topic for the yaw; "
                               f"{imu_topic!r} is not in the bag")
    builder = LogBuilder(model, "navsatfix" if pose_type == "sensor_msgs/msg/NavSatFix" else "odometry", pose_std,
                         str(bag))
    add = {joint_states_topic: builder.joint_state, pose_topic: builder.pose, imu_topic: builder.imu}
    try:
        for topic, _, _, msg in read(bag, [joint_states_topic, pose_topic] + ([imu_topic] if use_imu else [])):
            add[topic](msg)
    except BagError as e:
        builder.notes["truncated"] = str(e)
        if not quiet:
            print(f"warning: {e}; using the {len(builder.J)} joint states and {len(builder.P)} poses read before it",
                  file=sys.stderr)
    return builder.build(topic=joint_states_topic)


class LogBuilder:
    """Collects JointState, Imu and Odometry / NavSatFix messages (rosbags or rclpy objects) into a
    :class:`DrivingLog`: the bag reader and the live calibration node share it.  Times are s from the whole
    second of the first stamp seen; a NavSatFix datum is the first valid fix."""

    def __init__(self, model: WmrModel, pose_type: str = "odometry", pose_std: tuple[float, float] | None = None,
                 source: str = "") -> None:
        if pose_type not in ("odometry", "navsatfix"):
            raise CalibrationError(f"pose type {pose_type!r}: expected odometry or navsatfix")
        self.model, self.pose_type, self.pose_std, self.source = model, pose_type, pose_std, source
        self.names = list(model.actuated_joint_names)
        self.J: list[tuple] = []
        self.I: list[tuple] = []
        self.P: list[tuple] = []
        self.notes: dict = {}
        self.ref_ns: int | None = None
        self.datum: tuple[float, float, float] | None = None

    def seconds(self, ns: int) -> float:
        if self.ref_ns is None:
            self.ref_ns = ns - ns % 10**9
        return (ns - self.ref_ns) * 1e-9

    def joint_state(self, msg: object) -> float:
        t = self.seconds(_stamp(msg))
        self.J.append((t, *_joint_row(msg, self.names)))
        return t

    def imu(self, msg: object) -> float:
        t = self.seconds(_stamp(msg))
        o = msg.orientation
        r, p, y = spatial.quat_to_rpy(np.array([o.x, o.y, o.z, o.w]))
        self.I.append((t, r, p, y, float(msg.orientation_covariance[8])))
        return t

    def pose(self, msg: object) -> float:
        t = self.seconds(_stamp(msg))
        self.P.append((t, msg))
        return t

    def prune(self, before: float) -> None:
        """Forget messages stamped before ``before`` (s): a live node keeps a window."""
        self.J = [j for j in self.J if j[0] >= before]
        self.I = [i for i in self.I if i[0] >= before]
        self.P = [p for p in self.P if p[0] >= before]

    def build(self, t_from: float = -math.inf, t_to: float = math.inf, topic: str = "joint states",
              poses: tuple[float, float] | None = None) -> DrivingLog:
        """The :class:`DrivingLog` of the messages stamped in [t_from, t_to] (s); ``poses``: the poses' own
        time range (default the same)."""
        J = [j for j in self.J if t_from <= j[0] <= t_to]
        if not J:
            raise CalibrationError(f"{self.source}: no messages on {topic}")
        pos, vel = np.array([j[1] for j in J]), np.array([j[2] for j in J])
        if not np.isfinite(pos).any() and not np.isfinite(vel).any():
            seen = sorted({n for j in J for n in j[3]})
            raise CalibrationError(f"{self.source}: {topic} names none of {self.model.name}'s actuated joints "
                                   f"({', '.join(self.names)}); the messages name: {', '.join(seen[:20])}")
        imu = np.array([i[:5] for i in self.I if t_from - 1.0 <= i[0] <= t_to]).reshape(-1, 5)
        p_from, p_to = poses or (t_from, t_to)
        P = [p for p in self.P if p_from - 1e-9 <= p[0] <= p_to + 1e-9]
        std = self.pose_std
        if self.pose_type == "odometry":
            poses = [(t, m.pose.pose.position.x, m.pose.pose.position.y, _yaw(m.pose.pose.orientation),
                      _yaw_std_cov(m.pose.covariance, DEFAULT_POSE_STD) if std is None else
                      np.diag([std[0] ** 2, std[0] ** 2, std[1] ** 2])) for t, m in P]
        else:
            if self.datum is None:
                first = next((m for _, m in self.P if int(m.status.status) >= 0 and math.isfinite(m.latitude)), None)
                if first is not None:
                    self.datum = (first.latitude, first.longitude, first.altitude)
            poses = _fix_poses(P, imu, std, self.datum)
        return DrivingLog(list(self.names), np.array([j[0] for j in J]), pos, vel, imu[:, 0], imu[:, 1:3],
                          np.array([p[0] for p in poses]), np.array([p[1:4] for p in poses]).reshape(-1, 3),
                          np.array([p[4] for p in poses]).reshape(-1, 3, 3), self.ref_ns or 0, self.source,
                          dict(self.notes))


def _yaw(o: object) -> float:
    return float(spatial.quat_to_rpy(np.array([o.x, o.y, o.z, o.w]))[2])


def _joint_row(msg: object, names: list[str]) -> tuple[NDArray, NDArray, list[str]]:
    """(positions, velocities) of ``names`` in a JointState (NaN where absent), and the message's names."""
    mn = list(msg.name)
    idx = {n: i for i, n in enumerate(mn)}
    pos, vel = np.full(len(names), np.nan), np.full(len(names), np.nan)
    p, v = np.asarray(msg.position, dtype=float), np.asarray(msg.velocity, dtype=float)
    for k, n in enumerate(names):
        i = idx.get(n)
        if i is not None:
            if len(p) == len(mn):
                pos[k] = p[i]
            if len(v) == len(mn):
                vel[k] = v[i]
    return pos, vel, mn


def _fix_poses(P: list, imu: NDArray, std: tuple[float, float] | None,
               datum: tuple[float, float, float] | None) -> list[tuple]:
    """NavSatFix → (t, x east, y north (m) about ``datum``, yaw from the IMU at that time, Σ_meas)."""
    from wmr_dynamics.sensors import local_from_lla

    fixes = [(t, m) for t, m in P if int(m.status.status) >= 0 and math.isfinite(m.latitude)]
    if not fixes or len(imu) == 0:
        return []
    lla = np.array([[m.latitude, m.longitude, m.altitude] for _, m in fixes])
    xyz = local_from_lla(lla, datum or tuple(lla[0]))
    out = []
    for (t, m), p in zip(fixes, xyz, strict=True):
        k = int(np.clip(np.searchsorted(imu[:, 0], t), 0, len(imu) - 1))
        if k > 0 and abs(imu[k - 1, 0] - t) < abs(imu[k, 0] - t):
            k -= 1
        if abs(imu[k, 0] - t) > 0.1:  # no IMU yaw within 0.1 s of the fix
            continue
        if std is not None:
            cov = np.diag([std[0] ** 2, std[0] ** 2, std[1] ** 2])
        else:
            c = np.asarray(m.position_covariance, dtype=float).reshape(3, 3)
            pv = c[0, 0] if c[0, 0] > 0 else DEFAULT_POSE_STD[0] ** 2
            yv = imu[k, 4] if imu[k, 4] > 0 else DEFAULT_POSE_STD[1] ** 2
            cov = np.diag([pv, c[1, 1] if c[1, 1] > 0 else pv, yv])
        out.append((t, p[0], p[1], imu[k, 3], cov))
    return out


def log_from_csv(joints: str | Path, poses: str | Path, imu: str | Path | None = None,
                 pose_std: tuple[float, float] = DEFAULT_POSE_STD, joint_names: list[str] | None = None,
                 model: WmrModel | None = None) -> DrivingLog:
    """A :class:`DrivingLog` from CSV files with a header row (times in s):

    - ``joints``: ``t_s`` then one column per actuated joint, named as the URDF's joints (positions, rad/m);
    - ``poses``: ``t_s,x_m,y_m,yaw_rad`` (ground-truth sensor pose);
    - ``imu`` (optional): ``t_s,roll_rad,pitch_rad``.

    ``model`` (or ``joint_names``) picks and orders the actuated joints.
    """
    names = list(model.actuated_joint_names) if model is not None else list(joint_names or [])
    jt, jh = _read_csv(joints)
    missing = [n for n in names if n not in jh]
    if missing or not names:
        raise CalibrationError(f"{joints}: no column for the actuated joints {missing or '(none given)'} "
                               f"(columns: {', '.join(jh)})")
    jpos = np.column_stack([jt[:, jh.index(n)] for n in names])
    pt, ph = _read_csv(poses, ["t_s", "x_m", "y_m", "yaw_rad"])
    if imu is not None:
        it, _ = _read_csv(imu, ["t_s", "roll_rad", "pitch_rad"])
    else:
        it = np.zeros((0, 3))
    cov = np.tile(np.diag([pose_std[0] ** 2, pose_std[0] ** 2, pose_std[1] ** 2]), (len(pt), 1, 1))
    return DrivingLog(names, jt[:, 0], jpos, np.full_like(jpos, np.nan), it[:, 0], it[:, 1:3], pt[:, 0], pt[:, 1:4],
                      cov, 0, str(joints))


def _read_csv(path: str | Path, columns: list[str] | None = None) -> tuple[NDArray, list[str]]:
    p = Path(path)
    try:
        lines = p.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CalibrationError(f"{p}: cannot read: {e}") from None
    if not lines:
        raise CalibrationError(f"{p}: empty file (expected a header row and data rows)")
    head = [h.strip() for h in lines[0].split(",")]
    if columns is not None and head[:len(columns)] != columns:
        raise CalibrationError(f"{p}: header {head} does not start with {columns}")
    if head[0] != "t_s":
        raise CalibrationError(f"{p}: the first column must be t_s (time, s), got {head[0]!r}")
    rows = []
    for k, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            row = [float(x) for x in line.split(",")]
        except ValueError:
            raise CalibrationError(f"{p}:{k}: not a row of numbers: {line[:80]!r}") from None
        if len(row) != len(head):
            raise CalibrationError(f"{p}:{k}: {len(row)} values, the header has {len(head)}")
        rows.append(row)
    return np.array(rows, dtype=float).reshape(-1, len(head)), head


def log_from_sensors(model: WmrModel, sensors: object, pose_std: tuple[float, float] = DEFAULT_POSE_STD) -> DrivingLog:
    """A :class:`DrivingLog` from a :class:`~wmr_dynamics.sensors.SensorLog` (simulated sensors, no bag): the
    actuated joints' encoder readings, the IMU's roll and pitch, the GPS/INS poses with Σ_meas from
    ``pose_std`` (position m, yaw rad)."""
    idx = [model.joint_index(n) for n in model.actuated_joint_names]
    rpy_imu = np.array([spatial.quat_to_rpy(q) for q in sensors.imu_quat]).reshape(-1, 3)
    yaw = np.array([spatial.quat_to_rpy(q)[2] for q in sensors.gps_quat])
    poses = np.column_stack([sensors.gps_position[:, :2], yaw])
    cov = np.tile(np.diag([pose_std[0] ** 2, pose_std[0] ** 2, pose_std[1] ** 2]), (len(yaw), 1, 1))
    return DrivingLog(list(model.actuated_joint_names), sensors.joint_t, sensors.joint_position[:, idx],
                      sensors.joint_velocity[:, idx], sensors.imu_t, rpy_imu[:, :2], sensors.gps_t, poses, cov, 0,
                      "simulated sensors")
