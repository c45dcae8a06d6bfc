"""IPEM calibration (thesis Ch. 3): covariance propagation against Monte-Carlo, the stochastic measurement's
covariance against sampling, parameter recovery on logs with known truth, gating, and what bad logs do."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wmr_dynamics import load_model, spatial
from wmr_dynamics.calibration import (
    CalibrationError,
    OnlineIpem,
    OnlineSettings,
    Predictor,
    calibrate,
    calibrate_offline,
    evaluate,
    intervals,
    log_from_sensors,
)
from wmr_dynamics.calibration.ipem import propagate, stochastic_covariance, vec
from wmr_dynamics.calibration.log import DrivingLog
from wmr_dynamics.calibration.predict import Trace
from wmr_dynamics.kinematics.enhanced import SlipParams
from wmr_dynamics.odometry import dead_reckon, rotation_zyx
from wmr_dynamics.sensors import SensorSpec, lla_from_local, local_from_lla, sample_sensors
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import Plane

QUIET = SensorSpec(encoder_rate_std=0.0, imu_attitude_std=0.0, imu_gyro_std=0.0, imu_accel_std=0.0,
                   gps_position_std=0.0, gps_attitude_std=0.0)


def _random_commands(n: int, dt: float, seed: int, v_max: float = 2.0, w_max: float = 0.6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    knots = np.arange(0, n * dt + 6, 3.0)
    v, w = rng.uniform(0.2, v_max, len(knots)), rng.uniform(-w_max, w_max, len(knots))
    t = np.arange(n) * dt
    return np.column_stack([np.interp(t, knots, v), np.interp(t, knots, w)])


def _enhanced_truth(model, p_true, duration: float = 120.0, seed: int = 0, dt: float = 0.01):  # noqa: ANN001, ANN202
    """A log of the enhanced model itself with slip ``p_true`` (noise-free sensors)."""
    st = Stepper(model, Plane(), "enhanced", dt, slip=SlipParams(tuple(p_true)), integrator="rk4")
    data = st.make_data()
    cmds = _random_commands(int(duration / dt), dt, seed)
    Q, QV = [data.q.copy()], [data.qvel.copy()]
    for c in cmds:
        st.advance(data, 1, command=c)
        Q.append(data.q.copy())
        QV.append(data.qvel.copy())
    t = np.arange(len(Q)) * dt
    return log_from_sensors(model, sample_sensors(t, np.array(Q), np.array(QV), QUIET), pose_std=(1e-3, 1e-4))


@pytest.fixture(scope="module")
def landtamer():
    return load_model("landtamer")


@pytest.fixture(scope="module")
def enhanced_log(landtamer):
    return _enhanced_truth(landtamer, (0.0, -0.05, -0.6, -0.2, 0.0, -0.08))


# ---- covariance propagation and the stochastic measurement -------------------------------------------------
def test_batched_rotation_is_spatial_rpy_to_rot():
    rng = np.random.default_rng(1)
    a = rng.uniform(-3, 3, (20, 3))
    R = rotation_zyx(a[:, 0], a[:, 1], a[:, 2])
    for k in range(20):
        np.testing.assert_allclose(R[k], spatial.rpy_to_rot(a[k]), atol=1e-14)


def test_propagated_covariance_matches_monte_carlo_on_a_unicycle():
    """Eqs. 3.22-3.24 against 4000 dead-reckoned unicycles with white noise of density Q' on (v_x, v_y, ω_z)."""
    n, dt = 100, 0.02  # 2 s
    twist = np.zeros((n, 6))
    twist[:, 3], twist[:, 2] = 1.5, 0.4  # 1.5 m/s, 0.4 rad/s
    roll, pitch = np.full(n, 0.1), np.full(n, -0.05)
    q_density = np.array([0.02, 0.01, 0.004])
    P0 = np.diag([1e-4, 2e-4, 1e-5])
    pos0, yaw0 = np.zeros(3), 0.3
    nominal, yaws = dead_reckon(pos0, yaw0, twist, roll, pitch, np.full(n, dt))
    mid = np.r_[yaw0, yaws[:-1]] + 0.5 * (yaws - np.r_[yaw0, yaws[:-1]])
    P, _ = propagate(Trace(np.full(n, dt), mid, twist, roll, pitch), P0, np.sqrt(q_density))
    rng = np.random.default_rng(7)
    L0 = np.linalg.cholesky(P0)
    ends = []
    for _ in range(4000):
        x0 = L0 @ rng.standard_normal(3)
        tw = twist.copy()
        noise = rng.standard_normal((n, 3)) * np.sqrt(q_density / dt)  # white noise of density Q'
        tw[:, 3] += noise[:, 0]
        tw[:, 4] += noise[:, 1]
        tw[:, 2] += noise[:, 2] / (np.cos(roll) / np.cos(pitch))  # ψ̇ noise = ω_z noise · cos φ / cos θ
        pos, y = dead_reckon(pos0 + [x0[0], x0[1], 0.0], yaw0 + x0[2], tw, roll, pitch, np.full(n, dt))
        d = y[-1] - yaws[-1]
        ends.append([pos[-1, 0] - nominal[-1, 0], pos[-1, 1] - nominal[-1, 1], math.atan2(math.sin(d), math.cos(d))])
    S = np.cov(np.array(ends).T)
    # 4000 samples: a variance is known to about ±2.2 % (1 σ); the linearization adds a little more
    np.testing.assert_allclose(np.diag(S), np.diag(P), rtol=0.1)
    corr = S[0, 1] / math.sqrt(S[0, 0] * S[1, 1])
    assert corr == pytest.approx(P[0, 1] / math.sqrt(P[0, 0] * P[1, 1]), abs=0.05)


def test_stochastic_measurement_covariance_matches_sampling():
    """R_σ of eqs. 3.34-3.38 (Bohrnstedt-Goldberger) against the sample covariance of vec(r rᵀ)."""
    R = np.array([[0.04, 0.01, 0.002], [0.01, 0.09, -0.003], [0.002, -0.003, 0.0025]])
    r = np.random.default_rng(3).multivariate_normal(np.zeros(3), R, 200_000)
    z = np.array([vec(np.outer(x, x)) for x in r[:50_000]])
    np.testing.assert_allclose(z.mean(0), vec(R), rtol=0.05, atol=2e-4)
    S = np.cov(z.T)
    Rs = stochastic_covariance(R)
    np.testing.assert_allclose(S, Rs, rtol=0.1, atol=0.05 * np.abs(Rs).max())
    assert vec(np.arange(9.0).reshape(3, 3)).tolist() == [0, 1, 2, 4, 5, 8]  # eq. 3.30's order


def test_local_tangent_plane_round_trip():
    xyz = np.array([[0.0, 0.0, 0.0], [120.5, -80.25, 3.0], [-1500.0, 2200.0, -10.0]])
    datum = (40.4433, -79.9436, 300.0)
    np.testing.assert_allclose(local_from_lla(lla_from_local(xyz, datum), datum), xyz, atol=1e-6)


# ---- recovery on logs of known truth -------------------------------------------------------------------------
def test_set_slip_gives_the_stepper_built_with_that_slip(landtamer):
    slip = SlipParams((0.0, -0.05, -0.6, -0.2, 0.0, -0.08))
    a, b = Stepper(landtamer, Plane(), "enhanced", 0.01, slip=slip), Stepper(landtamer, Plane(), "enhanced", 0.01)
    b.set_slip(slip)
    da, db = a.make_data(), b.make_data()
    for c in _random_commands(200, 0.01, 2):
        a.advance(da, 1, command=c)
        b.advance(db, 1, command=c)
    np.testing.assert_array_equal(da.q, db.q)
    plain = Stepper(landtamer, Plane(), "enhanced", 0.01)
    dp = plain.make_data()
    plain.advance(dp, 200, command=(1.5, 0.4))
    b.set_slip(SlipParams())  # back to zero slip: the plain kinematic model again
    db = b.make_data()
    b.advance(db, 200, command=(1.5, 0.4))
    np.testing.assert_allclose(db.q, dp.q, atol=1e-12)


def test_online_ekf_recovers_known_slip_parameters(landtamer, enhanced_log):
    """Noise-free log of the enhanced model with p = (0, -0.05, -0.6, -0.2, 0, -0.08): the EKF from p = 0
    finds the parameters the log can observe (p1 needs slopes or accelerations, p5 an asymmetry)."""
    pred = Predictor(landtamer, enhanced_log, "enhanced")
    ekf = OnlineIpem(pred, pred.nominal, OnlineSettings(stochastic=False, s0=(0.01, 0.01, 0.003)))
    for iv in intervals(enhanced_log, 2.0):
        ekf.update(iv)
    assert all(h.accepted for h in ekf.history)
    np.testing.assert_allclose(ekf.p[[1, 2, 3, 5]], [-0.05, -0.6, -0.2, -0.08], atol=0.02)
    ev0 = evaluate(pred, intervals(enhanced_log, 2.0), pred.nominal, ekf.s)
    ev = evaluate(pred, intervals(enhanced_log, 2.0), ekf.p, ekf.s)
    assert ev.summary["mean_position_error_m"] < 0.05 * ev0.summary["mean_position_error_m"]


def test_gating_rejects_planted_outliers(landtamer, enhanced_log):
    """Poses displaced by 3 m at the ends of four intervals: those four fail the Mahalanobis gate (eq. 3.68),
    the rest pass and the parameters are still found."""
    log = enhanced_log
    ivs = intervals(log, 2.0)
    bad = {ivs[k].i1 for k in (20, 31, 42, 50)}
    pose = log.pose.copy()
    pose[list(bad), 0] += 3.0
    planted = DrivingLog(log.joint_names, log.joint_t, log.joint_position, log.joint_velocity, log.imu_t, log.imu_rp,
                         log.pose_t, pose, log.pose_cov, source="planted outliers")
    pred = Predictor(landtamer, planted, "enhanced")
    ekf = OnlineIpem(pred, pred.nominal, OnlineSettings(stochastic=False, s0=(0.01, 0.01, 0.003), gate=30.0))
    for iv in intervals(planted, 2.0):
        ekf.update(iv)
    rejected = {h.interval.i1 for h in ekf.history if not h.accepted}
    # an outlier ends one interval and starts the next: both are off, and only those
    assert bad <= rejected
    assert rejected <= bad | {ivs[k + 1].i1 for k in (20, 31, 42, 50)}
    np.testing.assert_allclose(ekf.p[[2, 5]], [-0.6, -0.08], atol=0.03)


def _diffdrive_noise_log(model, q_density, duration: float, seed: int) -> DrivingLog:  # noqa: ANN001
    """A unicycle whose twist is the differential drive's from the encoders plus white noise of density
    ``q_density`` on (v_x, v_y, ω_z); poses measured almost perfectly."""
    pred_probe = Predictor(model, _enhanced_truth(model, (0,) * 6, 4.0, seed), "diffdrive")
    left, right, B = pred_probe._dd
    dt = 0.02
    n = int(duration / dt)
    rng = np.random.default_rng(seed)
    cmds = _random_commands(n, dt, seed, 1.5, 0.5)
    na = len(model.actuated_joint_names)
    # wheel rates with v = cmd v, ω = cmd ω under eqs. 3.64-3.65 (same rate on every wheel of a side)
    wl, wr = (cmds[:, 0] - 0.5 * B * cmds[:, 1]), (cmds[:, 0] + 0.5 * B * cmds[:, 1])
    r = left.sum() or 1.0
    side = np.where(left > 0, 1, 0)
    rates = np.where(side[None, :] == 1, wl[:, None] / r, wr[:, None] / (right.sum()))
    twist = np.zeros((n, 6))
    twist[:, 3], twist[:, 2] = cmds[:, 0], cmds[:, 1]
    noise = rng.standard_normal((n, 3)) * np.sqrt(np.asarray(q_density) / dt)
    twist[:, 3] += noise[:, 0]
    twist[:, 4] += noise[:, 1]
    twist[:, 2] += noise[:, 2]
    pos, yaw = dead_reckon(np.zeros(3), 0.0, twist, np.zeros(n), np.zeros(n), np.full(n, dt))
    jt = np.arange(n + 1) * dt
    jp = np.vstack([np.zeros(na), np.cumsum(rates * dt, axis=0)])
    pose = np.column_stack([np.r_[0.0, pos[:, 0]], np.r_[0.0, pos[:, 1]], np.r_[0.0, yaw]])
    k = np.arange(0, n + 1, 5)  # 10 Hz poses
    cov = np.tile(np.diag([1e-8, 1e-8, 1e-10]), (len(k), 1, 1))
    return DrivingLog(list(model.actuated_joint_names), jt, jp, np.full_like(jp, np.nan), np.zeros(0), np.zeros((0, 2)),
                      jt[k], pose[k], cov, source="diffdrive with white noise")


def test_stochastic_calibration_recovers_a_known_process_noise(landtamer):
    """White noise of known density Q' on the unicycle's twist: the online EKF (eqs. 3.28-3.54) and the
    offline maximum likelihood (3.46-3.47) both find Q' within 25 %."""
    q_true = np.array([0.01, 0.004, 0.002])
    log = _diffdrive_noise_log(landtamer, q_true, 600.0, 5)
    pred = Predictor(landtamer, log, "diffdrive")
    ivs = intervals(log, 2.0)
    ekf = OnlineIpem(pred, [1.0], OnlineSettings(p_std=1e-6, s0=tuple(np.sqrt(2 * q_true)), s_std=0.05,
                                                 stochastic_after=0, gate=1e9))
    for iv in ivs:
        ekf.update(iv)
    np.testing.assert_allclose(ekf.s ** 2, q_true, rtol=0.25)
    _, s, _ = calibrate_offline(pred, ivs, np.array([1.0]), np.sqrt(2 * q_true), gate=1e9, iterations=1, p_std=1e-6)
    np.testing.assert_allclose(s ** 2, q_true, rtol=0.25)
    ev = evaluate(pred, ivs, np.array([1.0]), s)
    assert 0.8 * 3 < ev.summary["mean_nees"] < 1.2 * 3


def test_interrupted_calibration_keeps_what_it_learned(landtamer, enhanced_log, tmp_path):
    out = tmp_path / "cal.yaml"
    seen = []

    def progress(line: str) -> None:
        seen.append(line)
        if len(seen) == 12:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        calibrate(landtamer, enhanced_log, "enhanced", 2.0, out=out, progress=progress)
    from wmr_dynamics.odometry import OdometryParams

    params = OdometryParams.load(out)
    assert params.model == "enhanced"
    # the 12th interval's estimate is on disk, and it is not the starting point
    assert params.slip[2] < -0.2
    import yaml

    assert yaml.safe_load(out.read_text())["calibration"]["intervals"] == len(intervals(enhanced_log, 2.0))


# ---- bad logs ---------------------------------------------------------------------------------------------------
def test_unsorted_and_repeated_stamps_are_sorted_and_dropped(enhanced_log):
    log = enhanced_log
    order = np.r_[np.arange(50), 60, np.arange(50, len(log.joint_t))]  # one repeated, out of order
    messy = DrivingLog(log.joint_names, log.joint_t[order], log.joint_position[order], log.joint_velocity[order],
                       log.imu_t, log.imu_rp, log.pose_t, log.pose, log.pose_cov)
    np.testing.assert_array_equal(messy.joint_t, log.joint_t)
    assert messy.notes == {"joint states: unsorted stamps (sorted)": 1, "joint states: repeated stamps (first kept)": 1}


def test_a_gap_in_the_joint_states_skips_the_intervals_over_it(enhanced_log):
    log = enhanced_log
    keep = (log.joint_t < 30.0) | (log.joint_t > 31.0)
    gappy = DrivingLog(log.joint_names, log.joint_t[keep], log.joint_position[keep], log.joint_velocity[keep],
                       log.imu_t, log.imu_rp, log.pose_t, log.pose, log.pose_cov)
    ivs = intervals(gappy, 2.0)
    assert not any(iv.t0 < 31.0 and iv.t1 > 30.0 for iv in ivs)
    assert len(ivs) >= len(intervals(log, 2.0)) - 2


def test_a_log_of_other_joints_is_refused(landtamer, enhanced_log):
    with pytest.raises(CalibrationError, match="actuated joints"):
        Predictor(load_model("zoe"), enhanced_log, "enhanced")
    with pytest.raises(CalibrationError, match="model 'stochastic'"):
        Predictor(landtamer, enhanced_log, "stochastic")
    with pytest.raises(CalibrationError, match="contact 'ishigami' cannot be calibrated"):
        Predictor(landtamer, enhanced_log, "dynamic", contact="ishigami")
    with pytest.raises(CalibrationError, match="every actuated joint must be a wheel"):
        rec = load_model("recbot")
        Predictor(rec, _enhanced_truth(rec, (0,) * 6, 3.0), "diffdrive")


def test_kinematic_model_recovers_the_tyres_rolling_radius_and_the_track_width(landtamer, tmp_path):
    """The truth rolls on 97 % of the URDF's wheel radius and has a 5 % wider track: the kinematic model's
    radius_scale and track_scale find them, and the YAML carries what the odometry applies."""
    from wmr_dynamics.odometry import OdometryParams, apply_params

    truth = apply_params(landtamer, OdometryParams(wheels={j: {"radius": w.radius * 0.97} for j, w in
                                                           zip(landtamer.wheel_joint_names, landtamer.wheels,
                                                               strict=True)}, track_scale=1.05))
    assert truth.frames[1].xyz[1] == pytest.approx(1.05 * landtamer.frames[1].xyz[1])
    log = _enhanced_truth(truth, (0,) * 6, 60.0, seed=3)
    out = tmp_path / "radius.yaml"
    res = calibrate(landtamer, log, "kinematic", 2.0, out=out)
    assert res.parameters["radius_scale"] == pytest.approx(0.97, abs=0.002)
    assert res.parameters["track_scale"] == pytest.approx(1.05, abs=0.01)
    params = OdometryParams.load(out)
    assert params.model == "kinematic" and params.track_scale == pytest.approx(res.parameters["track_scale"])
    calibrated = apply_params(landtamer, params)
    assert calibrated.wheels[0].radius == pytest.approx(0.97 * landtamer.wheels[0].radius, rel=0.002)
    assert calibrated.frames[1].xyz[1] == pytest.approx(1.05 * landtamer.frames[1].xyz[1], rel=0.01)


def test_an_interval_whose_prediction_fails_is_skipped_not_fatal(landtamer, enhanced_log):
    """A prediction that fails (as a dynamic model diverging at some parameter values does) skips its interval
    with the reason recorded; the others are used, online and in evaluation."""
    from wmr_dynamics.errors import SimulationError

    pred = Predictor(landtamer, enhanced_log, "enhanced")
    ivs = intervals(enhanced_log, 2.0)[:8]
    real = pred.predict

    def predict(iv, p, trace=False):  # noqa: ANN001, ANN202
        if iv == ivs[3]:
            raise SimulationError("the state became non-finite")
        return real(iv, p, trace)

    pred.predict = predict
    ekf = OnlineIpem(pred, pred.nominal, OnlineSettings(stochastic=False))
    for iv in ivs:
        ekf.update(iv)
    assert ekf.history[3].failed == "the state became non-finite" and not ekf.history[3].accepted
    assert all(h.accepted for k, h in enumerate(ekf.history) if k != 3)
    assert evaluate(pred, ivs, ekf.p, ekf.s).summary["intervals"] == 7
