"""Actuator (thesis eq. 2.73) and joint-constraint (eq. 2.74) models: closed forms, derivatives, state, errors."""

from __future__ import annotations

import numpy as np
import pytest

from wmr_dynamics import load_model
from wmr_dynamics.actuators import (
    ActuatorModel,
    IdealActuator,
    PIActuator,
    TorqueSpeedActuator,
    actuator_from_config,
)
from wmr_dynamics.errors import ModelError
from wmr_dynamics.joint_models import SpringDamper

DT = 0.01


def fd_rate_jacobian(act, theta, theta_dot, u, dt, h=1e-7):
    n = len(theta_dot)
    J = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        fp, fm = act.evaluate(theta, theta_dot + e, u, dt)[0], act.evaluate(theta, theta_dot - e, u, dt)[0]
        J[:, j] = (fp - fm) / (2 * h)
    return J


def test_pi_closed_form_and_derivative():
    act = PIActuator(kp=[5.0, 20.0, 2000.0], ki=[0.0, 3.0, 40.0])
    th, td, u = np.zeros(3), np.array([0.1, -0.3, 2.0]), np.array([0.5, 0.0, 1.5])
    f, d = act.evaluate(th, td, u, DT)
    e = u - td
    np.testing.assert_allclose(f, [5.0, 20.0, 2000.0] * e + np.array([0.0, 3.0, 40.0]) * e * DT)
    np.testing.assert_allclose(d, np.diag(-(np.array([5.0, 20.0, 2000.0]) + np.array([0.0, 3.0, 40.0]) * DT)))
    np.testing.assert_allclose(d, fd_rate_jacobian(act, th, td, u, DT), rtol=1e-7, atol=1e-6)


def test_pi_integral_is_the_callers_state_and_advances_only_when_asked():
    act = PIActuator(kp=1.0, ki=10.0, n=2)
    th, u = np.zeros(2), np.array([1.0, -1.0])
    # evaluate uses the given committed integral advanced by this step: f = kp e + ki (I + e dt)
    I0 = np.array([0.3, -0.1])
    for td in (np.zeros(2), np.array([0.5, 0.5]), np.array([0.2, -0.2])):  # Newton / line-search trials
        f, _ = act.evaluate(th, td, u, DT, integral=I0)
        np.testing.assert_allclose(f, (u - td) + 10.0 * (I0 + (u - td) * DT))
    np.testing.assert_array_equal(I0, [0.3, -0.1])  # never changed by evaluate
    # the model holds no state: without an integral it starts from zero every time
    np.testing.assert_allclose(act.evaluate(th, np.zeros(2), u, DT)[0], u * (1.0 + 10.0 * DT))
    # steady state with a constant error: the integral grows linearly, step by step
    integral = np.zeros(2)
    for k in range(1, 6):
        integral = act.advance(np.zeros(2), u, DT, integral)
        np.testing.assert_allclose(integral, u * DT * k)


@pytest.mark.parametrize("saturation", ["clip", "tanh"])
def test_pi_torque_limit(saturation):
    act = PIActuator(kp=100.0, ki=50.0, torque_limit=2.0, saturation=saturation, n=4)
    th, u = np.zeros(4), np.array([1.0, -1.0, 0.005, -0.002])
    td = np.zeros(4)
    f, d = act.evaluate(th, td, u, DT)
    assert np.all(np.abs(f) <= 2.0)
    if saturation == "clip":
        np.testing.assert_array_equal(f[:2], [2.0, -2.0])
        assert d[0, 0] == d[1, 1] == 0.0  # derivative at the limit: zero once saturated
        np.testing.assert_allclose(np.diag(d)[2:], -(100.0 + 50.0 * DT))
    else:
        np.testing.assert_allclose(f, 2.0 * np.tanh((100.0 * u + 50.0 * u * DT) / 2.0))
    td2 = np.array([0.3, -0.2, 0.001, 0.0])
    np.testing.assert_allclose(act.evaluate(th, td2, u, DT)[1], fd_rate_jacobian(act, th, td2, u, DT),
                               rtol=1e-6, atol=1e-6)
    integral = np.zeros(4)
    for _ in range(200):  # anti-windup: |ki·I| never exceeds the limit
        integral = act.advance(td, u, DT, integral)
    assert np.all(np.abs(50.0 * integral) <= 2.0 + 1e-12)
    assert np.abs(50.0 * integral[0]) == pytest.approx(2.0)  # the saturated joints wind up to the cap


def test_torque_speed_line():
    act = TorqueSpeedActuator(stall_torque=4.0, no_load_speed=10.0, gain=3.0)
    # unsaturated voltage: f = stall (1 + gain)(u − θ̇)/ω0
    f, d = act.evaluate(0.0, np.array([1.0]), np.array([1.2]), DT)
    assert f[0] == pytest.approx(4.0 * 4.0 * 0.2 / 10.0) and d[0, 0] == pytest.approx(-4.0 * 4.0 / 10.0)
    # full voltage toward the command: the motor line stall·(1 − θ̇/ω0), stall torque at rest, 0 at ω0
    f, d = act.evaluate(0.0, np.array([0.0, 5.0, 10.0, 0.0, -5.0]), np.array([10.0, 10.0, 10.0, -10.0, -10.0]), DT)
    np.testing.assert_allclose(f, [4.0, 2.0, 0.0, -4.0, -2.0])
    np.testing.assert_allclose(np.diag(d)[[1, 4]], -4.0 / 10.0)  # (θ̇ = ω0 = u sits on the voltage switch)
    # capped at the stall torque when driven backwards against the command
    f, d = act.evaluate(0.0, np.array([-3.0]), np.array([10.0]), DT)
    assert f[0] == 4.0 and d[0, 0] == 0.0
    td, u = np.array([0.3, 4.0, -6.0, 9.5]), np.array([0.5, 9.0, -2.0, 12.0])
    np.testing.assert_allclose(act.evaluate(0.0, td, u, DT)[1], fd_rate_jacobian(act, 0.0, td, u, DT),
                               rtol=1e-6, atol=1e-7)
    lim = TorqueSpeedActuator(stall_torque=4.0, no_load_speed=10.0, torque_limit=1.5)
    assert np.all(np.abs(lim.evaluate(0.0, np.zeros(3), np.array([10.0, -10.0, 0.1]), DT)[0]) <= 1.5)


def test_spring_damper_closed_form():
    sd = SpringDamper(stiffness=[2250.0, 8.0e4], damping=[112.5, 4.0e3], rest=[0.0, 0.01])
    c, cd = np.array([0.02, -0.03]), np.array([-0.1, 0.5])
    f, dc, dcd = sd.evaluate(c, cd)
    np.testing.assert_allclose(f, [-2250.0 * 0.02 + 112.5 * 0.1, -8.0e4 * (-0.04) - 4.0e3 * 0.5])
    np.testing.assert_allclose(dc, [-2250.0, -8.0e4])
    np.testing.assert_allclose(dcd, [-112.5, -4.0e3])
    h = 1e-7
    np.testing.assert_allclose((sd.evaluate(c + h, cd)[0] - sd.evaluate(c - h, cd)[0]) / (2 * h), dc, rtol=1e-6)
    np.testing.assert_allclose((sd.evaluate(c, cd + h)[0] - sd.evaluate(c, cd - h)[0]) / (2 * h), dcd, rtol=1e-6)
    # Rocky 7's rocker differential (VEHICLES.md: Kp 2250, Kd Kp/20), from the model's joint constraints
    m = load_model("rocky7")
    rocker = SpringDamper.from_constraints(m.joint_constraints)
    assert rocker.evaluate([0.01], [0.0])[0][0] == pytest.approx(-22.5)


def test_ideal_actuator_and_config():
    m = load_model("rocky7")
    na = len(m.actuated_joint_names)
    ideal = actuator_from_config(m.config["actuators"], na)
    assert isinstance(ideal, IdealActuator) and ideal.ideal
    with pytest.raises(ModelError, match="ideal actuator: there is no force model"):
        ideal.evaluate(np.zeros(na), np.zeros(na), np.zeros(na), DT)
    assert isinstance(actuator_from_config(None, na), IdealActuator)
    pi = actuator_from_config({"model": "pi", "pi": m.config["actuators"]["pi"]}, na)  # VEHICLES.md: Kp 5, Ki 0
    assert isinstance(pi, PIActuator) and not pi.ideal
    f, _ = pi.evaluate(np.zeros(na), np.zeros(na), np.full(na, 0.4), DT)
    np.testing.assert_allclose(f, 5.0 * 0.4)
    ts = actuator_from_config({"model": "torque_speed", "torque_speed": {"stall_torque": 3.0, "no_load_speed": 8.0}}, 2)
    assert isinstance(ts, TorqueSpeedActuator)

    class Coupled(ActuatorModel):  # a user model coupling two joints (synchronous drive)
        def evaluate(self, theta, theta_dot, u, dt):
            e = np.asarray(u) - np.asarray(theta_dot)
            return np.array([e[0] + e[1], e[0] + e[1]]), -np.ones((2, 2))

    assert Coupled().evaluate(None, [0.0, 0.0], [1.0, 2.0], DT)[0][1] == 3.0


@pytest.mark.parametrize("call, match", [
    (lambda: PIActuator(kp=-1.0), "parameter 'kp' must be >= 0"),
    (lambda: PIActuator(kp=1.0, ki=float("nan")), "parameter 'ki' has NaN"),
    (lambda: PIActuator(kp=1.0, torque_limit=0.0), "parameter 'torque_limit' must be > 0"),
    (lambda: PIActuator(kp=1.0, saturation="soft"), "parameter 'saturation' must be 'clip' or 'tanh'"),
    (lambda: PIActuator(kp=[1.0, 2.0], ki=[1.0, 2.0, 3.0]), "per-joint parameters have different lengths"),
    (lambda: PIActuator(kp=1.0, n=2).evaluate(0, np.zeros(3), np.zeros(3), DT), "called with 3 joints"),
    (lambda: PIActuator(kp=1.0).evaluate(0, np.zeros(2), np.zeros(2), DT, integral=[0.0, np.nan]),
     r"integral has NaN or inf at indices \[1\]"),
    (lambda: PIActuator(kp=1.0).evaluate(0, np.zeros(2), np.zeros(2), 0.0), "dt must be a positive number"),
    (lambda: PIActuator(kp=1.0).evaluate(0, np.zeros(2), np.zeros(3), DT), "u has 3 entries, expected 2"),
    (lambda: PIActuator(kp=1.0).evaluate(0, [0.0, np.inf], np.zeros(2), DT),
     r"theta_dot has NaN or inf at indices \[1\]"),
    (lambda: TorqueSpeedActuator(stall_torque=1.0, no_load_speed=0.0), "parameter 'no_load_speed' must be > 0"),
    (lambda: TorqueSpeedActuator(stall_torque=[1.0, 2.0], no_load_speed=1.0).evaluate(0, np.zeros(3), np.zeros(3), DT),
     "parameter 'stall_torque' has 2 entries for 3 joints"),
    (lambda: SpringDamper(stiffness=-1.0, damping=0.0), "parameter 'stiffness' must be >= 0"),
    (lambda: SpringDamper(1.0, 1.0).evaluate([0.0, 1.0], [0.0]), "c_dot has 1 entries"),
    (lambda: actuator_from_config({"model": "hydraulic"}, 2), "unknown model 'hydraulic'; valid models: ideal, pi, "
                                                              "torque_speed"),
    (lambda: actuator_from_config({"model": "pi", "pi": {"kp": 1.0, "kd": 2.0}}, 2),
     r"pi: unknown parameter\(s\) \['kd'\]"),
    (lambda: actuator_from_config({"model": "pi", "pi": {"kp": [1.0, 2.0, 3.0]}}, 2), "'kp' has 3 entries for 2"),
    (lambda: actuator_from_config({"model": "pi", "pi": {"ki": 1.0}}, 2),
     r"actuators: pi: missing parameter\(s\) kp under 'actuators.pi' \(required: kp; optional: ki, "
     r"saturation, torque_limit\)"),
    (lambda: actuator_from_config({"model": "torque_speed", "torque_speed": {"gain": 1.0}}, 2),
     r"missing parameter\(s\) stall_torque, no_load_speed under 'actuators.torque_speed'"),
    (lambda: actuator_from_config({"model": "pi", "extra": 1}, 2), r"unknown key\(s\) \['extra'\]"),
    (lambda: actuator_from_config({"model": "pi", "pi": 5}, 2), "'pi' must be a mapping"),
    (lambda: actuator_from_config("pi", 2), "must be a mapping"),
])
def test_bad_parameters_raise_model_error(call, match):
    with pytest.raises(ModelError, match=match):
        call()
