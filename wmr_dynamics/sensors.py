"""Simulated sensors for calibration and odometry: wheel encoders, an IMU, GPS/INS pose and a GNSS fix, with
configurable noise, sampled from a simulated run (:class:`~wmr_dynamics.simulate.SimResult`).

- **Encoders** (``joint_states``): joint positions and rates (rad, rad/s) with white noise on the rates.
- **IMU** (``imu``): attitude (x, y, z, w), angular rate ω_b (rad/s) and specific force f_b = Rᵀ(a_w − g)
  (m/s², g = (0, 0, −9.81)), a_w by central differences of the world velocity; white noise on each.
- **GPS/INS** (``gps/odom``): body position (m) and attitude in the world frame with white noise.
- **Fix** (``fix``): the noisy position as latitude/longitude/altitude about a datum, by the local tangent
  plane (x east, y north): Δφ = y / M, Δλ = x / (N cos φ0), with the WGS-84 meridian and prime-vertical radii
  M, N at the datum latitude φ0 — exact to millimetres over a few kilometres.

Each sensor has its own rate; a sample is taken at the first simulation step at or after its time.  The
noise generator is seeded, so a recording is reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics import spatial
from wmr_dynamics.errors import ModelError

G = 9.81  # m/s², the engine's gravity
WGS84_A, WGS84_E2 = 6378137.0, 6.69437999014e-3  # semi-major axis (m), first eccentricity squared


@dataclass(frozen=True)
class SensorSpec:
    """Rates (Hz, simulated time) and noise standard deviations of the simulated sensors."""

    joint_rate_hz: float = 50.0
    encoder_rate_std: float = 0.0  # rad/s
    imu_rate_hz: float = 100.0
    imu_attitude_std: float = 0.002  # rad, on roll, pitch and yaw
    imu_gyro_std: float = 0.005  # rad/s
    imu_accel_std: float = 0.05  # m/s²
    gps_rate_hz: float = 10.0
    gps_position_std: float = 0.02  # m
    gps_attitude_std: float = 0.005  # rad
    datum: tuple[float, float, float] = (40.4433, -79.9436, 300.0)  # lat, lon (deg), altitude (m)
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("joint_rate_hz", "imu_rate_hz", "gps_rate_hz"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ModelError(f"sensor {name}: expected a positive rate in Hz, got {v}")
        for name in ("encoder_rate_std", "imu_attitude_std", "imu_gyro_std", "imu_accel_std", "gps_position_std",
                     "gps_attitude_std"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v >= 0):
                raise ModelError(f"sensor {name}: expected a standard deviation >= 0, got {v}")


@dataclass(frozen=True)
class SensorLog:
    """Sampled sensor readings; each block's first array is its times (s)."""

    joint_t: NDArray
    joint_position: NDArray
    joint_velocity: NDArray
    imu_t: NDArray
    imu_quat: NDArray
    imu_gyro: NDArray
    imu_accel: NDArray
    gps_t: NDArray
    gps_position: NDArray
    gps_quat: NDArray
    fix_lla: NDArray  # (n, 3) lat, lon (deg), altitude (m) of the GPS samples


def _sample(t: NDArray, rate_hz: float) -> NDArray:
    """Indices of the steps at or after each multiple of 1/rate_hz (each step at most once)."""
    ticks = np.arange(t[0], t[-1] + 1e-9, 1.0 / rate_hz)
    idx = np.unique(np.searchsorted(t, ticks - 1e-9))
    return idx[idx < len(t)]


def world_velocity(q: NDArray, qvel: NDArray) -> NDArray:
    """(n, 3) body velocity in the world frame, R(q) v_b (m/s)."""
    return np.einsum("nij,nj->ni", np.array([spatial.quat_to_rot(x[:4]) for x in q]), qvel[:, 3:6])


def lla_from_local(xyz: NDArray, datum: tuple[float, float, float]) -> NDArray:
    """(n, 3) latitude, longitude (deg), altitude (m) of local east-north-up points ``xyz`` (m) about ``datum``."""
    lat0 = math.radians(datum[0])
    s2 = math.sin(lat0) ** 2
    N = WGS84_A / math.sqrt(1 - WGS84_E2 * s2)  # prime-vertical radius of curvature
    M = WGS84_A * (1 - WGS84_E2) / (1 - WGS84_E2 * s2) ** 1.5  # meridian radius of curvature
    lat = datum[0] + np.degrees(xyz[:, 1] / M)
    lon = datum[1] + np.degrees(xyz[:, 0] / (N * math.cos(lat0)))
    return np.column_stack([lat, lon, datum[2] + xyz[:, 2]])


def local_from_lla(lla: NDArray, datum: tuple[float, float, float]) -> NDArray:
    """(n, 3) local east-north-up points (m) of latitudes, longitudes (deg) and altitudes (m) about ``datum``
    (the inverse of :func:`lla_from_local`)."""
    lla = np.atleast_2d(np.asarray(lla, dtype=float))
    lat0 = math.radians(datum[0])
    s2 = math.sin(lat0) ** 2
    N = WGS84_A / math.sqrt(1 - WGS84_E2 * s2)
    M = WGS84_A * (1 - WGS84_E2) / (1 - WGS84_E2 * s2) ** 1.5
    return np.column_stack([np.radians(lla[:, 1] - datum[1]) * N * math.cos(lat0),
                            np.radians(lla[:, 0] - datum[0]) * M, lla[:, 2] - datum[2]])


def specific_force(quat: NDArray, a_world: NDArray) -> NDArray:
    """What an accelerometer measures: f_b = Rᵀ (a_w − g) with g = (0, 0, −G) (m/s²), for (n, 4) attitudes
    (x, y, z, w) and (n, 3) world accelerations."""
    R = np.array([spatial.quat_to_rot(x) for x in np.atleast_2d(quat)])
    return np.einsum("nji,nj->ni", R, np.atleast_2d(a_world) + np.array([0.0, 0.0, G]))


def noisy_quat(q: NDArray, std: float, rng: np.random.Generator) -> NDArray:
    """(n, 4) attitudes with white noise of ``std`` rad on roll, pitch and yaw."""
    q = np.atleast_2d(q)
    rpy = np.array([spatial.quat_to_rpy(x) for x in q]) + rng.normal(0.0, std, (len(q), 3))
    return np.array([spatial.rpy_to_quat(r) for r in rpy])


class SensorStream:
    """The same sensors sampled one reading at a time (the simulator node): the IMU's acceleration is the
    backward difference of the world velocity since the previous IMU reading."""

    def __init__(self, spec: SensorSpec | None = None) -> None:
        self.spec = spec or SensorSpec()
        self.rng = np.random.default_rng(self.spec.seed)
        self._prev: tuple[float, NDArray] | None = None

    def reset(self) -> None:
        self._prev = None

    def imu(self, t: float, q: NDArray, qvel: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        """(attitude x, y, z, w; angular rate rad/s; specific force m/s²) at time ``t`` (s), with noise."""
        s, rng = self.spec, self.rng
        v_w = world_velocity(q[None], qvel[None])[0]
        a_w = np.zeros(3) if self._prev is None or t <= self._prev[0] else (v_w - self._prev[1]) / (t - self._prev[0])
        self._prev = (t, v_w)
        f = specific_force(q[:4], a_w)[0] + rng.normal(0.0, s.imu_accel_std, 3)
        return noisy_quat(q[:4], s.imu_attitude_std, rng)[0], qvel[:3] + rng.normal(0.0, s.imu_gyro_std, 3), f

    def gps(self, q: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        """(position m, attitude x, y, z, w, latitude/longitude deg/altitude m) of a GPS/INS reading, with noise."""
        s, rng = self.spec, self.rng
        pos = q[4:7] + rng.normal(0.0, s.gps_position_std, 3)
        return pos, noisy_quat(q[:4], s.gps_attitude_std, rng)[0], lla_from_local(pos[None], s.datum)[0]


def sample_sensors(t: NDArray, q: NDArray, qvel: NDArray, spec: SensorSpec | None = None) -> SensorLog:
    """Sensor readings of a run with states ``q`` (n, nq) and velocities ``qvel`` (n, ndof) at times ``t`` (n,)."""
    spec = spec or SensorSpec()
    if len(t) < 3:
        raise ModelError(f"sensors: a run of at least 3 samples is needed, got {len(t)}")
    rng = np.random.default_rng(spec.seed)
    j = _sample(t, spec.joint_rate_hz)
    joint_v = qvel[j, 6:] + rng.normal(0.0, spec.encoder_rate_std, qvel[j, 6:].shape)
    # IMU: central differences of the world velocity give the acceleration a_w
    v_w = world_velocity(q, qvel)
    a_w = np.gradient(v_w, t, axis=0)
    i = _sample(t, spec.imu_rate_hz)
    f_b = specific_force(q[i, :4], a_w[i])
    imu_gyro = qvel[i, :3] + rng.normal(0.0, spec.imu_gyro_std, (len(i), 3))
    imu_accel = f_b + rng.normal(0.0, spec.imu_accel_std, (len(i), 3))
    imu_quat = noisy_quat(q[i, :4], spec.imu_attitude_std, rng)
    g = _sample(t, spec.gps_rate_hz)
    gps_pos = q[g, 4:7] + rng.normal(0.0, spec.gps_position_std, (len(g), 3))
    gps_quat = noisy_quat(q[g, :4], spec.gps_attitude_std, rng)
    return SensorLog(t[j], q[j, 7:].copy(), joint_v, t[i], imu_quat, imu_gyro, imu_accel, t[g], gps_pos, gps_quat,
                     lla_from_local(gps_pos, spec.datum))
