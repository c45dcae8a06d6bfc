"""Simulated sensors against closed forms: specific force at rest and in a steady turn, the GNSS fix's
local-tangent-plane conversion at the equator, sensor rates, and noise statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wmr_dynamics.errors import ModelError
from wmr_dynamics.sensors import WGS84_A, WGS84_E2, SensorSpec, lla_from_local, sample_sensors
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Plane
from wmr_dynamics.urdf import load_model

QUIET = SensorSpec(imu_attitude_std=0.0, imu_gyro_std=0.0, imu_accel_std=0.0, gps_position_std=0.0,
                   gps_attitude_std=0.0)


@pytest.fixture(scope="module")
def turning_run():
    """Zoë at 1 m/s turning at 0.25 rad/s on flat ground (a circle of radius 4 m), kinematic model."""
    model = load_model("zoe")
    sim = Simulator(model, Plane(), mode="kinematic", dt=0.01)
    return sim.run(12.0, (1.0, 0.25), q0=sim.initial_state(xyz=(0.0, 0.0), yaw=0.0), progress=False)


def test_specific_force_is_gravity_up_plus_the_centripetal_acceleration(turning_run):
    r = turning_run
    log = sample_sensors(r.t, r.q, r.qvel, QUIET)
    steady = log.imu_t > 4.0  # after the steering transient
    f = log.imu_accel[steady]
    v = r.qvel[-1, 3]
    omega = r.qvel[-1, 2]
    assert v == pytest.approx(1.0, rel=0.03) and omega == pytest.approx(0.25, rel=0.05)
    assert np.median(f[:, 2]) == pytest.approx(9.81, abs=0.02)  # level: gravity reaction straight up
    assert np.median(f[:, 1]) == pytest.approx(v * omega, rel=0.05)  # a_c = v ω toward the centre (+y, left turn)
    assert np.median(np.abs(f[:, 0])) < 0.02  # constant speed: no longitudinal force
    np.testing.assert_allclose(log.imu_gyro[steady, 2], omega, rtol=0.05)


def test_sensor_rates_and_noise_statistics(turning_run):
    r = turning_run
    spec = SensorSpec(joint_rate_hz=50, imu_rate_hz=100, gps_rate_hz=5, imu_gyro_std=0.01, gps_position_std=0.1,
                      seed=3)
    log = sample_sensors(r.t, r.q, r.qvel, spec)
    assert len(log.joint_t) == 601 and len(log.imu_t) == 1201 and len(log.gps_t) == 61
    np.testing.assert_allclose(np.diff(log.gps_t), 0.2, atol=1e-9)
    k = np.searchsorted(r.t, log.gps_t)
    err = log.gps_position - r.q[k, 4:7]
    assert np.std(err) == pytest.approx(0.1, rel=0.15) and abs(np.mean(err)) < 0.03
    assert np.std(log.imu_gyro[:, 0] - r.qvel[np.searchsorted(r.t, log.imu_t), 0]) == pytest.approx(0.01, rel=0.1)
    again = sample_sensors(r.t, r.q, r.qvel, spec)
    np.testing.assert_array_equal(again.gps_position, log.gps_position)  # seeded: reproducible


def test_fix_conversion_matches_the_earth_radii_at_the_equator():
    lla = lla_from_local(np.array([[1000.0, 0.0, 0.0], [0.0, 1000.0, 5.0]]), (0.0, 10.0, 100.0))
    M = WGS84_A * (1 - WGS84_E2)  # meridian radius at the equator
    assert lla[0, 1] - 10.0 == pytest.approx(math.degrees(1000.0 / WGS84_A), rel=1e-12)  # east: N = a
    assert lla[1, 0] == pytest.approx(math.degrees(1000.0 / M), rel=1e-12)  # north
    assert lla[1, 2] == 105.0 and lla[0, 0] == 0.0


def test_bad_sensor_specs_are_rejected():
    with pytest.raises(ModelError, match="gps_rate_hz"):
        SensorSpec(gps_rate_hz=0.0)
    with pytest.raises(ModelError, match="imu_gyro_std"):
        SensorSpec(imu_gyro_std=float("nan"))
