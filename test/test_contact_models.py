"""Contact models (thesis App. C, Ding et al. eqs. 16–20) against independent oracles.

* every analytic / complex-step Jacobian against central finite differences of the model's own force;
* closed forms (linear), the magic formula's analytically known peak (Pacejka), a scipy.integrate.quad
  implementation of C.19–C.36 (Ishigami), the Wong–Reece stress integrals (Ding), physical monotonicity;
* zero force out of contact, vectorization, per-wheel parameters, bad input, interpreted kernels.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq, minimize_scalar

from wmr_dynamics import load_model
from wmr_dynamics.contact_models import (
    TABLE_C1,
    ContactModel,
    DingContact,
    IshigamiContact,
    LinearContact,
    PacejkaContact,
    _terra,
    contact_model_for_vehicle,
    contact_model_from_config,
    magic_formula,
    make_contact_model,
)
from wmr_dynamics.errors import ModelError

G = 9.81
R, B = 0.09, 0.11  # El-Dorado II-like wheel (vehicle YAML), m


def fd_jacobian(model, v, Rw, dz, h=1e-6):
    """Central differences of ``model.evaluate`` in every input, all wheels at once."""
    def F(v_, Rw_, dz_):
        return model.evaluate(v_, Rw_, dz_)[0]
    nw = len(dz)
    Jv = np.empty((nw, 3, 3))
    for j in range(3):
        e = np.zeros((nw, 3))
        e[:, j] = h
        Jv[:, :, j] = (F(v + e, Rw, dz) - F(v - e, Rw, dz)) / (2 * h)
    JR = (F(v, Rw + h, dz) - F(v, Rw - h, dz)) / (2 * h)
    Jd = (F(v, Rw, dz + h) - F(v, Rw, dz - h)) / (2 * h)
    return Jv, JR, Jd


def assert_jacobian(model, v, Rw, dz, rtol=2e-5, h=1e-6):
    _, dv, dR, dd = model.evaluate(v, Rw, dz)
    Jv, JR, Jd = fd_jacobian(model, v, Rw, dz, h)
    for name, an, num in (("df_dv", dv, Jv), ("df_dRw", dR, JR), ("df_ddz", dd, Jd)):
        scale = np.abs(num).max() + 1e-12
        np.testing.assert_allclose(an, num, rtol=rtol, atol=rtol * scale, err_msg=f"{model.name}: {name}")


def terra_inputs(model, rng, n, h_range=(0.002, 0.04)):
    """Inputs that give slip ratio s, slip angle β and sinkage h, for Rω of both signs (so both signs of V_x)."""
    lo, hi = model.params["slip_limits"]
    s = rng.uniform(lo + 0.02, hi - 0.02, n)
    beta = rng.uniform(-1.2, 1.2, n)
    h = rng.uniform(*h_range, n)
    Rw = rng.choice([-1.0, 1.0], n) * rng.uniform(0.05, 0.6, n)
    sg = np.where(Rw >= 0, 1.0, -1.0)
    W = np.sqrt(Rw ** 2 + model.params["v_eps"] ** 2)
    if model.name == "ding":  # Wong's slip (s >= 0) and skid (s < 0)
        rho = model.kernel_data()[0][0, _terra.RHO]  # r_s / r
        Vx = sg * np.where(s >= 0, (1 - s) * rho * W, rho * W / (1 + s))
        vx = Vx - Rw
    else:
        vx = -sg * s * W
        Vx = vx + Rw
    vy = np.tan(beta) * np.sqrt(Vx ** 2 + model.params["v_eps"] ** 2)
    vz = rng.normal(0, 0.05, n)
    return np.c_[vx, vy, vz], Rw, -h


# ---- Jacobians ---------------------------------------------------------------------------------------------

def test_linear_jacobian():
    rng = np.random.default_rng(1)
    for friction in ("pyramid", "cone"):
        m = LinearContact(kp=1000.0, kd=50.0, c_slip=-100.0, mu=0.8, friction=friction, c_rr=-5.0)
        n = 400
        v = rng.normal(0, 0.3, (n, 3))
        Rw = rng.normal(0, 0.5, n)
        dz = rng.uniform(-0.03, -0.001, n)
        fz = -1000.0 * dz - 50.0 * v[:, 2]
        fx, fy = -100.0 * v[:, 0] - 5.0 * Rw, -100.0 * v[:, 1]
        lim = 0.8 * fz
        gap = np.minimum(np.abs(np.abs(fx) - lim), np.abs(np.abs(fy) - lim)) if friction == "pyramid" else \
            np.abs(np.hypot(fx, fy) - lim)
        keep = (fz > 1.0) & (gap > 1e-3)  # away from the cap switch and f_z = 0 (one-sided derivatives there)
        assert keep.sum() > 250
        f = m.evaluate(v[keep], Rw[keep], dz[keep])[0]
        capped = np.abs(f[:, :2]).max(axis=1) if friction == "pyramid" else np.hypot(f[:, 0], f[:, 1])
        assert (capped >= 0.8 * f[:, 2] - 1e-9).sum() > 50  # both sides of the cap are tested
        assert_jacobian(m, v[keep], Rw[keep], dz[keep])


def test_pacejka_jacobian_both_directions_and_turning():
    rng = np.random.default_rng(2)
    m = PacejkaContact(kp=2000.0, mu=0.9, c_rr=-0.01)
    n = 400
    v = rng.normal(0, 0.4, (n, 3))
    Rw = rng.normal(0, 1.0, n)
    dz = rng.uniform(-0.03, -0.001, n)
    keep = (-2000.0 * dz - 100.0 * v[:, 2] > 1.0) & (np.abs(v[:, 0] + Rw) > 0.02)
    assert ((v[keep, 0] + Rw[keep]) < 0).sum() > 100  # reverse driving included
    assert_jacobian(m, v[keep], Rw[keep], dz[keep])
    # the smooth formulation through s = 0, α = 0 and the regularized V_x = 0
    v0 = np.array([[0.0, 0.0, 0.0], [1e-9, 0.2, 0.0], [0.3, 1e-9, 0.0], [0.1, 0.05, 0.0], [0.0, 0.0, 0.0]])
    Rw0 = np.array([1.0, -0.7, 0.4, -0.1, 0.0])
    dz0 = np.full(5, -0.01)
    out = m.evaluate(v0, Rw0, dz0)
    assert all(np.all(np.isfinite(a)) for a in out)
    assert_jacobian(m, v0[:4], Rw0[:4], dz0[:4], h=1e-7)


@pytest.mark.parametrize("kind", ["ishigami", "ishigami_lut", "ding"])
def test_terramechanics_jacobian(kind):
    rng = np.random.default_rng(3)
    if kind == "ding":
        m = DingContact(R, B, lug_height=0.01, mean_wheel_load=70.0, kd=20.0)
    else:
        m = IshigamiContact(R, B, kd=20.0, lookup_table=kind.endswith("lut"))
    v, Rw, dz = terra_inputs(m, rng, 300)
    # deeper than max_sinkage: stress frozen at max_sinkage + penalty spring
    v2, Rw2, dz2 = terra_inputs(m, rng, 20, h_range=(0.046, 0.06))
    v, Rw, dz = np.r_[v, v2], np.r_[Rw, Rw2], np.r_[dz, dz2]
    f = m.evaluate(v, Rw, dz)[0]
    keep = f[:, 2] > 0.5
    assert keep.sum() > 250
    assert_jacobian(m, v[keep], Rw[keep], dz[keep], rtol=5e-5)


# ---- linear model ------------------------------------------------------------------------------------------

def test_linear_closed_form():
    m = LinearContact(kp=1144.5, kd=57.225, c_slip=-114.45, mu=1.0)
    v = np.array([[0.01, -0.02, 0.03], [0.0, 0.0, -0.1]])
    f = m.evaluate(v, np.array([0.3, -0.2]), np.array([-0.015, -0.004]))[0]
    np.testing.assert_allclose(f[:, 2], -1144.5 * np.array([-0.015, -0.004]) - 57.225 * v[:, 2])  # C.3
    np.testing.assert_allclose(f[0, :2], -114.45 * v[0, :2])  # C.5–C.6, below the cap
    # the ground cannot pull (C.4): separating fast, f'_z < 0
    assert np.all(m.evaluate(np.array([[0.1, 0.1, 1.0]]), np.array([0.0]), np.array([-0.001]))[0] == 0.0)


def test_linear_static_rest_sinkage_carries_weight():
    # VEHICLES.md "uniform" model for Rocky 7 (14 kg, 6 wheels): at Δz = dz_target each wheel carries m g / n
    m = LinearContact.from_vehicle(14.0, 6)
    assert m.params["kp"] == pytest.approx(14 * G / (6 * 0.02))
    assert m.params["kd"] == pytest.approx(m.params["kp"] / 20)
    assert m.params["c_slip"] == pytest.approx(-0.1 * m.params["kp"])
    f = m.evaluate(np.zeros((6, 3)), np.zeros(6), np.full(6, m.dz_target))[0]
    np.testing.assert_allclose(f[:, 2], 14 * G / 6)
    assert f[:, 2].sum() == pytest.approx(14 * G)
    assert m.rest_dz(14 * G / 6) == pytest.approx(-0.02)
    # and from the bundled YAML, through the vehicle model
    c = contact_model_for_vehicle(load_model("rocky7"))
    assert isinstance(c, LinearContact) and c.params["kp"] == 1144.5 and c.params["c_slip"] == -114.45
    assert c.rest_dz(14 * G / 6) == pytest.approx(-0.02, rel=1e-4)


def test_linear_coulomb_caps():
    rng = np.random.default_rng(4)
    n = 500
    v = rng.normal(0, 1.0, (n, 3)) * np.array([1, 1, 0.05])
    Rw, dz = rng.normal(0, 1, n), rng.uniform(-0.03, -0.001, n)
    for friction in ("pyramid", "cone"):
        m = LinearContact(kp=1000.0, mu=0.7, friction=friction)
        f = m.evaluate(v, Rw, dz)[0]
        fz = f[:, 2]
        if friction == "pyramid":  # C.7–C.8 on each axis
            assert np.all(np.abs(f[:, :2]) <= 0.7 * fz[:, None] + 1e-9)
        else:  # C.9, direction of the slip force kept
            mag = np.hypot(f[:, 0], f[:, 1])
            assert np.all(mag <= 0.7 * fz + 1e-9)
            sat = mag > 0.7 * fz - 1e-9
            assert sat.sum() > 100
            sat &= fz > 0
            cosang = -(f[sat, 0] * v[sat, 0] + f[sat, 1] * v[sat, 1]) / (mag[sat] * np.hypot(v[sat, 0], v[sat, 1]))
            np.testing.assert_allclose(cosang, 1.0, atol=1e-12)
        # friction opposes slip
        assert np.all(f[:, 0] * v[:, 0] <= 1e-12) and np.all(f[:, 1] * v[:, 1] <= 1e-12)


# ---- anisotropic piecewise-linear model (C_x ≠ C_y, μ_x ≠ μ_y, eqs. C.5–C.8) --------------------------------

def test_linear_anisotropic_closed_forms():
    """Separate C_x, C_y below the caps; each axis capped at its own μ f_z (pyramid): a wheel with μ_y < μ_x
    sliding sideways saturates laterally at μ_y f_z while its longitudinal force is still C_x v_x."""
    m = LinearContact(kp=1000.0, kd=50.0, c_slip_x=-300.0, c_slip_y=-80.0, mu_x=0.9, mu_y=0.3, c_rr=-5.0)
    v = np.array([[0.01, 0.02, 0.1], [0.02, 2.0, 0.0], [-3.0, 0.05, 0.0], [0.01, -5.0, 0.0]])
    Rw, dz = np.array([0.4, 0.0, 0.3, 0.0]), np.full(4, -0.02)
    f, df_dv, _, df_ddz = m.evaluate(v, Rw, dz)
    fz = 1000.0 * 0.02 - 50.0 * v[:, 2]
    np.testing.assert_allclose(f[:, 2], fz)
    np.testing.assert_allclose(f[0, :2], [-300.0 * 0.01 - 5.0 * 0.4, -80.0 * 0.02])  # C.5, C.6
    np.testing.assert_allclose(f[1], [-300.0 * 0.02, -0.3 * fz[1], fz[1]])  # lateral cap μ_y f_z (C.8)
    np.testing.assert_allclose(f[2], [0.9 * fz[2], -80.0 * 0.05, fz[2]])  # longitudinal cap μ_x f_z (C.7)
    np.testing.assert_allclose(f[3, 1], 0.3 * fz[3])
    assert df_dv[1, 1, 1] == 0.0 and df_ddz[1, 1] == pytest.approx(0.3 * 1000.0)  # ±μ_y ∂f_z on the capped axis
    assert df_dv[1, 0, 0] == -300.0 and df_dv[0, 1, 1] == -80.0


def test_linear_anisotropic_cone_is_the_friction_ellipse():
    """friction="cone" with μ_x ≠ μ_y: the slip force scaled onto (f_x/μ_x)² + (f_y/μ_y)² = f_z², its direction
    kept; inside, untouched; μ_x = μ_y is the circle of C.9."""
    rng = np.random.default_rng(21)
    n = 400
    v = rng.normal(0, 1.0, (n, 3)) * np.array([1, 1, 0.05])
    Rw, dz = rng.normal(0, 1, n), rng.uniform(-0.03, -0.001, n)
    m = LinearContact(kp=1000.0, c_slip_x=-150.0, c_slip_y=-60.0, mu_x=0.8, mu_y=0.35, friction="cone")
    f = m.evaluate(v, Rw, dz)[0]
    fz = f[:, 2]
    on = fz > 1e-9
    fpx, fpy = -150.0 * v[:, 0], -60.0 * v[:, 1]
    ell = np.hypot(f[:, 0] / 0.8, f[:, 1] / 0.35)
    assert np.all(ell[on] <= fz[on] * (1 + 1e-12))
    sat = on & (np.hypot(fpx / 0.8, fpy / 0.35) > fz)
    assert 100 < sat.sum() < on.sum()
    np.testing.assert_allclose(ell[sat], fz[sat], rtol=1e-12)
    np.testing.assert_allclose(f[sat, 0] * fpy[sat] - f[sat, 1] * fpx[sat], 0.0, atol=1e-9)  # parallel to f'
    assert np.all(f[sat, 0] * fpx[sat] >= 0) and np.all(f[sat, 1] * fpy[sat] >= 0)
    free = on & ~sat
    np.testing.assert_allclose(f[free, :2], np.c_[fpx, fpy][free], rtol=1e-12)
    iso = LinearContact(kp=1000.0, c_slip=-150.0, mu=0.6, friction="cone").evaluate(v, Rw, dz)[0]
    assert np.all(np.hypot(iso[:, 0], iso[:, 1]) <= 0.6 * iso[:, 2] * (1 + 1e-12))


def test_linear_anisotropic_jacobian():
    rng = np.random.default_rng(22)
    for friction in ("pyramid", "cone"):
        m = LinearContact(kp=1000.0, kd=50.0, c_slip_x=-100.0, c_slip_y=-40.0, mu_x=0.9, mu_y=0.4,
                          friction=friction, c_rr=-5.0)
        n = 400
        v, Rw, dz = rng.normal(0, 0.3, (n, 3)), rng.normal(0, 0.5, n), rng.uniform(-0.03, -0.001, n)
        fz = -1000.0 * dz - 50.0 * v[:, 2]
        fx, fy = -100.0 * v[:, 0] - 5.0 * Rw, -40.0 * v[:, 1]
        gap = (np.minimum(np.abs(np.abs(fx) - 0.9 * fz), np.abs(np.abs(fy) - 0.4 * fz)) if friction == "pyramid"
               else np.abs(np.hypot(fx / 0.9, fy / 0.4) - fz))
        keep = (fz > 1.0) & (gap > 1e-3)
        f = m.evaluate(v[keep], Rw[keep], dz[keep])[0]
        assert (np.abs(f[:, 1]) >= 0.4 * f[:, 2] - 1e-9).sum() > 30 if friction == "pyramid" else True
        assert_jacobian(m, v[keep], Rw[keep], dz[keep])


def test_linear_single_and_per_axis_keys():
    """The old single keys mean both axes; per-axis keys override one; params keep the shortest form."""
    rng = np.random.default_rng(23)
    v, Rw, dz = rng.normal(0, 1.0, (50, 3)) * [1, 1, 0.05], rng.normal(0, 1, 50), rng.uniform(-0.03, -0.001, 50)
    one = LinearContact(kp=1000.0, c_slip=-90.0, mu=0.7)
    two = LinearContact(kp=1000.0, c_slip_x=-90.0, c_slip_y=-90.0, mu_x=0.7, mu_y=0.7)
    for a, b in zip(one.evaluate(v, Rw, dz), two.evaluate(v, Rw, dz), strict=True):
        np.testing.assert_array_equal(a, b)
    assert one.params["mu"] == 0.7 and one.params["c_slip"] == -90.0 and "mu_x" not in one.params
    aniso = LinearContact(kp=1000.0, mu=0.8, mu_y=0.3)  # mu_x from mu
    assert aniso.params["mu_x"] == 0.8 and aniso.params["mu_y"] == 0.3 and "mu" not in aniso.params
    assert aniso.axis_params() == {"c_slip_x": -100.0, "c_slip_y": -100.0, "mu_x": 0.8, "mu_y": 0.3}
    assert LinearContact(**aniso.params).axis_params() == aniso.axis_params()  # params rebuild the model
    m = contact_model_from_config({"model": "linear", "params": {"mu_x": 0.9, "mu_y": 0.4, "c_slip_y": -50.0}},
                                  [R] * 4, B, mass=30.0)
    kp = 30 * G / (4 * 0.02)
    assert m.axis_params() == pytest.approx({"c_slip_x": -0.1 * kp, "c_slip_y": -50.0, "mu_x": 0.9, "mu_y": 0.4})
    assert m.params["kp"] == pytest.approx(kp)
    for col, key in enumerate(LinearContact.COLUMNS):
        if key in m.axis_params():
            assert m.kernel_data()[0][0, col] == m.axis_params()[key]


@pytest.mark.parametrize("kwargs, match", [
    (dict(mu=0.5, mu_x=0.4, mu_y=0.3), "parameter 'mu' is given with both 'mu_x' and 'mu_y'"),
    (dict(c_slip=-1.0, c_slip_x=-2.0, c_slip_y=-3.0), "parameter 'c_slip' is given with both"),
    (dict(mu_y=-0.1), r"parameter 'mu_y' must be >= 0 \(a friction coefficient"),
    (dict(c_slip_x=5.0), "parameter 'c_slip_x' must be <= 0"),
    (dict(mu_x=float("nan")), "parameter 'mu_x' must be finite"),
    (dict(mu_x=[0.5, 0.6], kp=[1.0, 2.0, 3.0]), "per-wheel parameters have different lengths"),
])
def test_linear_bad_axis_parameters(kwargs, match):
    kwargs = {"kp": 1000.0, **kwargs}
    with pytest.raises(ModelError, match=match):
        LinearContact(**kwargs)


def test_vehicle_yaml_takes_per_axis_friction_and_option_words():
    from wmr_dynamics.errors import VehicleConfigError
    from wmr_dynamics.vehicle_schema import validate

    validate({"contact": {"model": "linear", "params": {"mu_x": 1.0, "mu_y": 0.4, "friction": "cone"}}})
    validate({"contact": {"model": "ding", "params": {"mean_wheel_load": "actual", "preset": "slope"}}})
    with pytest.raises(VehicleConfigError, match=r"contact\.params\.mu_y\[1\]: expected a finite number, got None"):
        validate({"contact": {"model": "linear", "params": {"mu_y": [0.4, None]}}})
    with pytest.raises(ModelError, match=r"contact: linear contact model: parameter 'mu_y' must be >= 0"):
        contact_model_from_config({"model": "linear", "params": {"mu_y": -1.0}}, [R] * 4, B, mass=30.0)


# ---- Pacejka -----------------------------------------------------------------------------------------------

def test_pacejka_zero_slip_and_symmetry():
    m = PacejkaContact(kp=1000.0)
    rng = np.random.default_rng(5)
    n = 50
    Rw = rng.uniform(-1, 1, n)
    vy = rng.uniform(-0.3, 0.3, n)
    dz = np.full(n, -0.01)
    f = m.evaluate(np.c_[np.zeros(n), vy, np.zeros(n)], Rw, dz)[0]
    assert np.all(f[:, 0] == 0.0)  # s = 0 → f_x = 0 (C.16)
    f = m.evaluate(np.c_[vy, np.zeros(n), np.zeros(n)], Rw, dz)[0]
    assert np.all(f[:, 1] == 0.0)  # α = 0 → f_y = 0 (C.17)
    v = np.c_[rng.uniform(-0.3, 0.3, n), vy, np.zeros(n)]
    fa = m.evaluate(v, Rw, dz)[0]
    fb = m.evaluate(v * [1, -1, 1], Rw, dz)[0]  # f_y(−α) = −f_y(α), f_x even in α
    np.testing.assert_allclose(fb[:, 1], -fa[:, 1], atol=1e-12)
    np.testing.assert_allclose(fb[:, 0], fa[:, 0], atol=1e-12)
    fc = m.evaluate(v * [-1, 1, 1], -Rw, dz)[0]  # reverse driving is the mirror image (sgn(V_x) terms)
    np.testing.assert_allclose(fc[:, 0], -fa[:, 0], atol=1e-12)
    np.testing.assert_allclose(fc[:, 1], fa[:, 1], atol=1e-12)
    assert np.all(fa[:, 0] * v[:, 0] <= 0) and np.all(fa[:, 1] * v[:, 1] <= 0)  # forces oppose slip
    assert np.all(np.hypot(fa[:, 0], fa[:, 1]) <= fa[:, 2] * 1.0 + 1e-9)  # |f_xy| <= mu D f_z


@pytest.mark.parametrize("C", [1.5, 1.3, 1.9])
def test_pacejka_sin_cos_of_c_atan(C):
    """The magic formula's (sin φ, cos φ), φ = C·atan(u): for C = 3/2 by half-angle identities (no trigonometric
    call) — against libm's sin and cos of C·atan(u) over u from 1e-9 to 1e9 of either sign, and through 0."""
    from wmr_dynamics.contact_models.pacejka import _sin_cos_c_atan
    u = np.r_[0.0, np.geomspace(1e-9, 1e9, 400)]
    for x in np.r_[-u[::-1], u]:
        sp, cp = _sin_cos_c_atan(C, float(x))
        phi = C * math.atan(x)
        assert sp == pytest.approx(math.sin(phi), abs=2e-16, rel=1e-15)
        assert cp == pytest.approx(math.cos(phi), abs=2e-16, rel=1e-15)


def peak_argument(B, C, E, K):
    """sin(C atan(·)) peaks where C atan(·) = π/2: the x solving B(1−E)K x + E atan(B K x) = tan(π/(2C))."""
    return brentq(lambda x: B * (1 - E) * K * x + E * math.atan(B * K * x) - math.tan(math.pi / (2 * C)), 0, 1)


def test_pacejka_magic_formula_peak_at_known_slip():
    m = PacejkaContact(kp=1000.0)
    c = TABLE_C1
    for k, curve, scale in (("s", m.longitudinal_curve, 1.0), ("a", m.lateral_curve, np.pi / 2)):  # C.13, C.14
        x_star = peak_argument(c["B" + k], c["C" + k], c["E" + k], c["K" + k])
        peak = minimize_scalar(lambda a, f=curve: -f(a), bounds=(0.01, 1.5), method="bounded", options={"xatol": 1e-10})
        assert peak.x == pytest.approx(x_star * scale, rel=1e-5)
        assert -peak.fun == pytest.approx(c["D" + k], rel=1e-12)
        assert curve(2 * peak.x) < c["D" + k]  # the force decreases beyond the critical slip (Fig. C.2)
    assert m.longitudinal_curve(0.0) == 0.0
    np.testing.assert_allclose(magic_formula(0.3, 1 / 15, 1.5, 1.0, 0.3, 100.0), m.longitudinal_curve(0.3))
    # Table C.1: s* ≈ 0.30, α* ≈ 0.37 rad
    assert 0.29 < minimize_scalar(lambda a: -m.longitudinal_curve(a), bounds=(0, 1), method="bounded").x < 0.31


# ---- Ishigami ----------------------------------------------------------------------------------------------

def _sat(u):
    return math.copysign(1 - math.exp(-abs(u)), u)


PHI_C2, XC_C2 = math.radians(37.2), math.radians(26.4)  # Table C.2


def ishigami_quad(s, beta, h, r=R, b=B, c=800.0, phi=PHI_C2, Xc=XC_C2, kc=1.37e3,
                  kphi=8.14e5, n=1.0, a0=0.4, a1=0.15, rho=1.6e3, lam=1.0, beps=1e-2):
    """Thesis eqs. C.21–C.36 integrated by adaptive quadrature (scipy.integrate.quad), written from the text."""
    thf, thr = math.acos(1 - h / r), -math.acos(1 - lam * h / r)
    thm = (a0 + a1 * s) * thf
    absb = math.hypot(beta, beps) - beps
    kx, ky = 0.036 + 0.043 * absb, 0.013 + 0.020 * absb

    def sigma(t):
        if t >= thm:
            return r ** n * (kc / b + kphi) * (math.cos(t) - math.cos(thf)) ** n
        return r ** n * (kc / b + kphi) * (math.cos(thf - (t - thr) / (thm - thr) * (thf - thm)) - math.cos(thf)) ** n

    def tau_x(t):
        return (c + sigma(t) * math.tan(phi)) * _sat(r * (thf - t - (1 - s) * (math.sin(thf) - math.sin(t))) / kx)

    def tau_y(t):
        return (c + sigma(t) * math.tan(phi)) * _sat(r * (1 - s) * (thf - t) * math.tan(beta) / ky)

    D1 = 1 / math.tan(Xc) + math.tan(Xc + phi)
    D2 = 1 / math.tan(Xc) + (1 / math.tan(Xc)) ** 2 / (1 / math.tan(phi))

    def depth(t):
        return r * (math.cos(t) - math.cos(thf))

    def bulldoze(t):
        return D1 * (c * depth(t) + D2 * rho * G * depth(t) ** 2 / 2) * (r - depth(t) * math.cos(t))

    def integral(fn):
        return quad(fn, thr, thf, points=[thm, 0.0], epsabs=1e-12, epsrel=1e-11, limit=200)[0]

    fx = r * b * integral(lambda t: tau_x(t) * math.cos(t) - sigma(t) * math.sin(t))
    fz = r * b * integral(lambda t: tau_x(t) * math.sin(t) + sigma(t) * math.cos(t))
    fy = -(r * b * integral(tau_y) + beta / math.hypot(beta, beps) * integral(bulldoze))
    return np.array([fx, fy, fz])


def test_ishigami_quadrature_matches_adaptive_integration():
    m = IshigamiContact(R, B)
    for s in (-0.8, -0.2, 0.0, 0.35, 0.9):
        for beta in (-0.6, 0.0, 0.05, 0.4):
            for h in (0.002, 0.01, 0.03):
                ref = ishigami_quad(s, beta, h)
                got = m.slip_forces(s, beta, h)
                np.testing.assert_allclose([got["f_x"], got["f_y"], got["f_z"]], ref, atol=1e-5 * abs(ref[2]))
    # and evaluate() maps (v_c, Rω, Δz) to (s, β, h) as C.19–C.20 say, with the mirror for Rω < 0
    Rw, s, beta, h = 0.4, 0.3, 0.2, 0.01
    vx = -s * math.sqrt(Rw ** 2 + 1e-6)
    vy = math.tan(beta) * math.sqrt((vx + Rw) ** 2 + 1e-6)
    fwd = m.evaluate(np.array([[vx, vy, 0.0], [-vx, vy, 0.0]]), np.array([Rw, -Rw]), np.array([-h, -h]))[0]
    np.testing.assert_allclose(fwd[0], ishigami_quad(s, beta, h), rtol=1e-5)
    np.testing.assert_allclose(fwd[1], fwd[0] * [-1, 1, 1], rtol=1e-12)


def test_ishigami_physics():
    m = IshigamiContact(R, B)
    s = np.linspace(0.0, 0.8, 17)
    for h in (0.003, 0.01, 0.02):  # drawbar pull grows with slip ratio while driving
        assert np.all(np.diff(m.slip_forces(s, 0.0, h)["f_x"]) > 0)
    hs = np.linspace(0.001, 0.045, 23)
    for s0 in (-0.5, 0.0, 0.5):  # normal force grows with sinkage
        assert np.all(np.diff(m.slip_forces(s0, 0.0, hs)["f_z"]) > 0)
    # normal force falls with slip at fixed sinkage (the slip-sinkage effect of Fig. C.5)
    assert np.all(np.diff(m.slip_forces(s, 0.0, 0.01)["f_z"]) < 0)
    b = np.linspace(0.05, 1.2, 12)  # lateral force opposes lateral slip, odd in β
    fy = m.slip_forces(0.3, b, 0.01)["f_y"]
    assert np.all(fy < 0)
    np.testing.assert_allclose(m.slip_forces(0.3, -b, 0.01)["f_y"], -fy, rtol=1e-12)


def test_ishigami_lookup_table_agrees_with_integration():
    # Tolerance: the default 41 x 49 x 41 table (β nodes crowded near 0, uniform in tan β/(|tan β| + 0.345))
    # reproduces the direct model to within 0.5% of the largest normal force in the sample everywhere, and 1.5%
    # of the local normal force beyond 5 mm of sinkage (measured: 0.12% and 0.70%; the asinh(β/0.1) axis before
    # it: 0.26% and 0.91%).  Trilinear error grows with grid spacing squared and is largest where the lateral
    # shear turns over within a few hundredths of a radian of β = 0 (braking, deep sinkage).
    rng = np.random.default_rng(6)
    direct = IshigamiContact(R, B)
    lut = IshigamiContact(R, B, lookup_table=True)
    assert lut.lut_shape == (41, 49, 41)
    v, Rw, dz = terra_inputs(direct, rng, 3000, h_range=(0.001, 0.045))
    fd, fl = direct.evaluate(v, Rw, dz)[0], lut.evaluate(v, Rw, dz)[0]
    err = np.abs(fl - fd).max(axis=1)
    assert err.max() < 0.005 * fd[:, 2].max()
    deep = -dz > 0.005
    assert np.all(err[deep] < 0.015 * fd[deep, 2])


# ---- Ding --------------------------------------------------------------------------------------------------

KS, C_SOIL, PHI, KX = 1.796e6, 24.5, math.radians(35.75), 0.01045


def wong_reece(s, h, n0=0.63, n1=0.72, r=R, b=B):
    """Wong–Reece integrals of the curved stress distributions Ding's closed form approximates (θ_m = θ_1/2)."""
    th1 = math.acos(1 - h / r)
    thm, N = th1 / 2, n0 + n1 * abs(s)

    def sig(t):
        a = t if t >= thm else th1 - t / thm * (th1 - thm)
        return KS * r ** N * (math.cos(a) - math.cos(th1)) ** N

    def tau(t):
        j = r * ((th1 - t) - (1 - s) * (math.sin(th1) - math.sin(t)))
        return (C_SOIL + sig(t) * math.tan(PHI)) * _sat(j / KX)

    def integral(fn):
        return quad(fn, 0, th1, points=[thm], epsabs=1e-12, limit=200)[0]

    FN = r * b * integral(lambda t: sig(t) * math.cos(t) + tau(t) * math.sin(t))
    FDP = r * b * integral(lambda t: tau(t) * math.cos(t) - sig(t) * math.sin(t))
    MR = r * r * b * integral(tau)
    # the chord/area ratio of the normal stress alone: how much a triangle under-/over-estimates it
    tri = integral(lambda t: sig(thm) * (t / thm if t < thm else (th1 - t) / (th1 - thm)) * math.cos(t))
    return FDP, FN, MR, tri / integral(lambda t: sig(t) * math.cos(t))


def triangles(s, h, n0=0.63, n1=0.72, r=R, b=B, Rj=R, rs=R):
    """Wong–Reece integrals of *triangular* σ, τ through the exact σ(θ_m), τ(θ_m): what eq. 16 must equal."""
    th1 = math.acos(1 - h / Rj)
    thm, N = th1 / 2, n0 + n1 * abs(s)
    sm = KS * r ** N * (math.cos(thm) - math.cos(th1)) ** N
    tm = (C_SOIL + sm * math.tan(PHI)) * _sat(rs * ((th1 - thm) - (1 - s) * (math.sin(th1) - math.sin(thm))) / KX)

    def tri(t):
        return t / thm if t < thm else (th1 - t) / (th1 - thm)

    def integral(fn):
        return quad(fn, 0, th1, points=[thm], epsabs=1e-13, epsrel=1e-12, limit=200)[0]

    FN = r * b * sm * integral(lambda t: tri(t) * math.cos(t)) + rs * b * tm * integral(lambda t: tri(t) * math.sin(t))
    FDP = rs * b * tm * integral(lambda t: tri(t) * math.cos(t)) - r * b * sm * integral(lambda t: tri(t) * math.sin(t))
    return FDP, FN, rs * rs * b * tm * integral(tri)


def test_ding_closed_form_is_the_triangle_integral():
    # With the empirical factors off, eq. 16 must be exactly the Wong–Reece integrals of triangular stresses
    # (this pins down A, B, C, D, τ_m, which the paper's text does not define), with and without lugs.
    for lug in (0.0, 0.01):
        m = DingContact(R, B, lug_height=lug, c_p1=0, c_p2=0, c_p3=0, c_m=0)
        Rj = rs = R + 0.5 * lug
        assert m.equivalent_radius == pytest.approx(Rj)
        for s in (-0.3, 0.1, 0.5, 0.9):
            for h in (0.004, 0.015):
                # h is the R_j circle's sinkage; slip_forces takes the rim's, as Δz is: h − (R_j − r)
                got = m.slip_forces(s, 0.0, h - (Rj - R))
                np.testing.assert_allclose([got["f_x"], got["f_z"], got["M_R"]],
                                           triangles(s, h, Rj=Rj, rs=rs), rtol=1e-8, atol=1e-9)


def test_ding_approximates_wong_reece():
    # Justification of the tolerance: Ding replaces the curved normal stress (cos θ − cos θ_1)^N by a chord
    # triangle, which under-estimates its area for N < 1 (concave) and over-estimates it for N > 1; the
    # normal-force ratio must follow that chord/area ratio (computed independently from σ alone) to within
    # 3% (the rest is the shear term's own linearization), and the drawbar pull, a small difference of two
    # large terms, must agree to 5% of the normal force.
    m = DingContact(R, B, c_p1=0, c_p2=0, c_p3=0, c_m=0)
    for s in (0.1, 0.3, 0.6, 0.9):
        for h in (0.005, 0.01, 0.02):
            FDP, FN, MR, chord = wong_reece(s, h)
            got = m.slip_forces(s, 0.0, h)
            assert got["f_z"] / FN == pytest.approx(chord, abs=0.03)
            assert 0.75 < got["f_z"] / FN < 1.1 and 0.75 < got["M_R"] / MR < 1.1
            assert abs(got["f_x"] - FDP) < 0.05 * FN


def test_ding_empirical_factors_and_side_force():
    base = DingContact(R, B, c_p1=0, c_p2=0, c_p3=0, c_m=0)
    s, h = 0.4, 0.012
    ref = base.slip_forces(s, 0.0, h)
    # normal-force compensation vanishes when F_N equals the mean wheel load; the slip factor remains
    m = DingContact(R, B, mean_wheel_load=float(ref["f_z"]))
    got = m.slip_forces(s, 0.0, h)
    fit = m.params
    assert got["f_z"] == pytest.approx(ref["f_z"])
    assert got["f_x"] == pytest.approx(ref["f_x"] * (1 + fit["c_p1"] + fit["c_p2"] * s), rel=1e-10)
    # a heavier-than-average wheel (F_N < W̄ is light): compensation changes F_DP as (1 + c_P3 (W̄ − F_N)/W̄)
    heavy = DingContact(R, B, mean_wheel_load=float(ref["f_z"]) / 1.2, c_m=0.0).slip_forces(s, 0.0, h)
    comp = (ref["f_z"] / 1.2 - ref["f_z"]) / (ref["f_z"] / 1.2)
    assert heavy["f_x"] == pytest.approx(got["f_x"] * (1 + fit["c_p3"] * comp), rel=1e-10)
    # side force (eqs. 17–19) opposes lateral slip, grows with slip angle, includes bulldozing
    b = np.linspace(0.05, 1.0, 10)
    fy = m.slip_forces(s, b, h)["f_y"]
    assert np.all(fy < 0) and np.all(np.diff(fy) < 0)
    no_bulldoze = DingContact(R, B, mean_wheel_load=float(ref["f_z"]), rho_d=0.0, c=0.0).slip_forces(s, b, h)["f_y"]
    assert np.all(no_bulldoze > fy)
    slope = DingContact(R, B, preset="slope")
    assert slope.params["n0"] == 0.66 and slope.params["c_m"] == 0.214


def single_wheel_fd(model, v, Rw, dz, w, h=1e-6):
    """Central differences of wheel w's force in wheel w's own inputs (the other wheels held)."""
    def F(dv=None, dR=0.0, dd=0.0):
        v2, R2, d2 = v.copy(), Rw.copy(), dz.copy()
        if dv is not None:
            v2[w] += dv
        R2[w] += dR
        d2[w] += dd
        return model.evaluate(v2, R2, d2)[0][w]
    Jv = np.stack([(F(dv=h * e) - F(dv=-h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    return Jv, (F(dR=h) - F(dR=-h)) / (2 * h), (F(dd=h) - F(dd=-h)) / (2 * h)


def test_ding_mean_wheel_load_is_the_wheels_actual_mean_normal_force():
    """mean_wheel_load="actual": W̄ of eq. 16 is the mean of the evaluated wheels' eq.-16 normal forces — the forces
    equal those with W̄ fixed at that mean (computed independently, per wheel, by slip_forces); one wheel alone
    carries the mean load (no compensation); each wheel's own derivative holds its share of W̄."""
    rng = np.random.default_rng(31)
    m = DingContact(R, B, lug_height=0.01, mean_wheel_load="actual")
    v, Rw, dz = terra_inputs(m, rng, 4, h_range=(0.004, 0.03))
    f = m.evaluate(v, Rw, dz)[0]
    s_beta = [_terra._slip_map(v[w, 0], v[w, 1], Rw[w], m.kernel_data()[0][0]) for w in range(4)]
    fn = np.array([m.slip_forces(sb[1], sb[4], -dz[w])["f_z"] for w, sb in enumerate(s_beta)])
    fixed = DingContact(R, B, lug_height=0.01, mean_wheel_load=float(fn.mean()))
    np.testing.assert_allclose(f, fixed.evaluate(v, Rw, dz)[0], rtol=1e-10, atol=1e-10)
    assert np.ptp(fn) > 0.3 * fn.mean()  # the wheels' loads differ, so the compensation acts
    off = DingContact(R, B, lug_height=0.01)  # no compensation
    assert np.abs(f[:, 0] - off.evaluate(v, Rw, dz)[0][:, 0]).max() > 0.01 * fn.mean()
    np.testing.assert_allclose(m.evaluate(v[:1], Rw[:1], dz[:1])[0], off.evaluate(v[:1], Rw[:1], dz[:1])[0],
                               rtol=1e-12, atol=1e-12)
    # a wheel out of contact carries 0 and counts in the mean: W̄ = (sum of the others)/4
    dz2 = dz.copy()
    dz2[3] = 0.05
    fn2 = fn.copy()
    fn2[3] = 0.0
    np.testing.assert_allclose(m.evaluate(v, Rw, dz2)[0][:3],
                               DingContact(R, B, lug_height=0.01, mean_wheel_load=float(fn2.mean()))
                               .evaluate(v[:3], Rw[:3], dz2[:3])[0], rtol=1e-10, atol=1e-10)
    _, dv, dR, dd = m.evaluate(v, Rw, dz)
    for w in range(4):
        Jv, JR, Jd = single_wheel_fd(m, v, Rw, dz, w)
        for an, num in ((dv[w], Jv), (dR[w], JR), (dd[w], Jd)):
            np.testing.assert_allclose(an, num, rtol=2e-5, atol=2e-5 * np.abs(num).max())
    with pytest.raises(ModelError, match=r"'mean_wheel_load' must be a load > 0 \(N\), 'actual'"):
        DingContact(R, B, mean_wheel_load="average")


def test_ding_lug_radius_used_for_sinkage_and_wheel_speed():
    """With lugs, Δz and Rω are the rim's (radius r, what the collision and dynamics give): the soil deforms from
    θ'_1 = acos((r − z)/R_j) (z = −Δz, Ding et al.), so the lugs bear load before the rim touches (0 < Δz <
    R_j − r), and the slip ratio is s = 1 − V_x/(r_s ω) with ω = Rω/r."""
    lug, r = 0.01, R
    Rj = rs = r + 0.5 * lug
    m = DingContact(r, B, lug_height=lug, c_p1=0, c_p2=0, c_p3=0, c_m=0, v_eps=1e-9)  # (|Rω| not regularized)
    omega = 4.0
    for s in (0.1, 0.4):
        for z in (-0.002, 0.003, 0.012):  # rim above the soil (lugs only), and sunk
            Vx = (1 - s) * rs * omega
            v = np.array([[Vx - r * omega, 0.0, 0.0]])  # v_x = V_x − Rω with Rω = r ω
            f = m.evaluate(v, np.array([r * omega]), np.array([-z]))[0][0]
            FDP, FN, _ = triangles(s, z + Rj - r, Rj=Rj, rs=rs)  # the R_j circle sinks by z + R_j − r
            np.testing.assert_allclose([f[0], f[2]], [FDP, FN], rtol=1e-7)
            assert f[2] > 0
    v0 = np.zeros((1, 3))
    assert m.evaluate(v0, np.array([0.3]), np.array([Rj - r + 1e-6]))[0][0, 2] == 0.0  # lugs clear of the soil
    assert m.evaluate(v0, np.array([0.3]), np.array([Rj - r - 1e-4]))[0][0, 2] > 0.0
    smooth = DingContact(r, B, c_p1=0, c_p2=0, c_p3=0, c_m=0)
    assert smooth.evaluate(v0, np.array([0.3]), np.array([1e-4]))[0][0, 2] == 0.0


# ---- all models --------------------------------------------------------------------------------------------

def all_models():
    return [LinearContact(1000.0), LinearContact(1000.0, friction="cone"), PacejkaContact(1000.0),
            IshigamiContact(R, B), IshigamiContact(R, B, lookup_table=True), DingContact(R, B, mean_wheel_load=70.0)]


def test_zero_force_out_of_contact():
    rng = np.random.default_rng(7)
    v, Rw = rng.normal(0, 0.5, (10, 3)), rng.normal(0, 0.5, 10)
    dz = np.r_[np.zeros(2), rng.uniform(1e-4, 0.1, 8)]
    for m in all_models():
        for a in m.evaluate(v, Rw, dz):
            assert np.all(a == 0.0), m.name


def test_vectorization_and_per_wheel_parameters():
    rng = np.random.default_rng(8)
    for m in all_models():
        v, Rw, dz = terra_inputs(IshigamiContact(R, B), rng, 7)
        batch = m.evaluate(v, Rw, dz)
        for w in range(7):
            single = m.evaluate(v[w:w + 1], Rw[w:w + 1], dz[w:w + 1])
            for a, b in zip(batch, single, strict=True):
                np.testing.assert_array_equal(a[w], b[0])
    radii = np.array([0.08, 0.09, 0.10])
    per = IshigamiContact(radii, B, lookup_table=True, lut_shape=(9, 9, 9))
    v, Rw, dz = rng.normal(0, 0.1, (3, 3)), np.full(3, 0.3), np.full(3, -0.01)
    f = per.evaluate(v, Rw, dz)[0]
    for w in range(3):
        one = IshigamiContact(radii[w], B, lookup_table=True, lut_shape=(9, 9, 9))
        np.testing.assert_allclose(f[w], one.evaluate(v[w:w + 1], Rw[w:w + 1], dz[w:w + 1])[0][0], rtol=1e-13)
    with pytest.raises(ModelError, match="parameters were given for 3 wheels, called with 2"):
        per.evaluate(v[:2], Rw[:2], dz[:2])
    kp = LinearContact(kp=[1000.0, 2000.0])
    np.testing.assert_allclose(kp.evaluate(np.zeros((2, 3)), np.zeros(2), np.full(2, -0.01))[0][:, 2], [10.0, 20.0])


def test_python_subclass_and_factories():
    class Sticky(ContactModel):  # the docstring's example of a user model
        name = "sticky"

        def evaluate(self, v_c, R_omega, dz):
            v_c, R_omega, dz = self.check_inputs(v_c, R_omega, dz)
            nw = len(dz)
            f, df_dv, df_dRw, df_ddz = np.zeros((nw, 3)), np.zeros((nw, 3, 3)), np.zeros((nw, 3)), np.zeros((nw, 3))
            on = dz < 0
            f[on, 2] = -500.0 * dz[on]
            df_ddz[on, 2] = -500.0
            return f, df_dv, df_dRw, df_ddz

    s = Sticky()
    assert s.kernel is None
    assert s.evaluate([[0, 0, 0]], [0.0], [-0.01])[0][0, 2] == pytest.approx(5.0)
    for name, cls in (("linear", LinearContact), ("pacejka", PacejkaContact)):
        assert isinstance(make_contact_model(name, kp=100.0), cls)
    assert isinstance(make_contact_model("ishigami", radius=R, width=B, lookup_table=False), IshigamiContact)
    m = contact_model_from_config({"model": "ding", "params": {"preset": "slope"}}, R, B, mass=30.0, n_wheels=4)
    assert isinstance(m, DingContact) and m.params["mean_wheel_load"] == "actual"  # the wheels' mean F_N
    assert m.params["kd"] == pytest.approx(30 * G / (4 * 0.02) / 20)  # the "uniform" model's damping
    m = contact_model_from_config({"model": "pacejka"}, [R] * 4, B, mass=30.0)
    assert m.params["kp"] == pytest.approx(30 * G / (4 * 0.02))
    assert isinstance(contact_model_from_config(None, [R] * 4, B, mass=30.0), LinearContact)
    ev = PacejkaContact(100.0)
    f = np.empty((1, 3)), np.empty((1, 3, 3)), np.empty((1, 3)), np.empty((1, 3))
    ev.evaluate_into(np.array([[0.1, 0.1, 0.0]]), np.array([0.3]), np.array([-0.01]), *f)
    np.testing.assert_array_equal(f[0], ev.evaluate([[0.1, 0.1, 0.0]], [0.3], [-0.01])[0])


@pytest.mark.parametrize("call, match", [
    (lambda: make_contact_model("sand"), "unknown contact model 'sand'; valid models: linear, pacejka, ishigami, ding"),
    (lambda: make_contact_model("linear", kp=1.0, stiffness=2.0), r"unknown parameter\(s\) \['stiffness'\]; valid "
                                                                 r"parameters: kp, kd, c_slip"),
    (lambda: make_contact_model("ishigami", radius=0.1), r"missing required parameter\(s\) \['width'\]"),
    (lambda: LinearContact(kp=-1.0), "parameter 'kp' must be > 0"),
    (lambda: LinearContact(kp=1.0, c_slip=5.0), "parameter 'c_slip' must be <= 0"),
    (lambda: LinearContact(kp=1.0, friction="ellipse"), "parameter 'friction' must be 'pyramid' or 'cone'"),
    (lambda: LinearContact(kp=[1.0, 2.0], kd=[1.0, 2.0, 3.0]), "per-wheel parameters have different lengths"),
    (lambda: LinearContact(kp=float("nan")), "parameter 'kp' must be finite"),
    (lambda: PacejkaContact(kp=1.0, Es=1.5), "parameter 'Es' must be <= 1"),
    (lambda: PacejkaContact(kp=1.0, v_eps=0.0), "parameter 'v_eps' must be > 0"),
    (lambda: IshigamiContact(R, -B), "parameter 'width' must be > 0"),
    (lambda: IshigamiContact(R, B, phi=2.0), r"parameter 'phi' must be in \(0, pi/2\) rad"),
    (lambda: IshigamiContact(R, B, slip_limits=(0.5, 0.1)), "'slip_limits' must satisfy -1 <= lo < hi <= 1"),
    (lambda: IshigamiContact(R, B, a0=0.9, a1=0.2), "'a0', 'a1' must keep"),
    (lambda: IshigamiContact(R, B, n_quad=1), "'n_quad' must be an integer in 2..64"),
    (lambda: IshigamiContact(R, B, max_sinkage=0.2), "'max_sinkage' must be <= the wheel radius"),
    (lambda: IshigamiContact(R, B, lookup_table=True, lut_shape=(1, 5, 5)), "'lut_shape'"),
    (lambda: DingContact(R, B, preset="moon"), "parameter 'preset' must be one of"),
    (lambda: DingContact(R, B, lug_shear_coeff=2.0), r"'lug_shear_coeff' must be in \[0, 1\]"),
    (lambda: DingContact(R, B, mean_wheel_load=-3.0), "'mean_wheel_load' must be > 0"),
    (lambda: contact_model_from_config({"model": "linear", "params": {"kp": 1.0}, "extra": 1}, R, B),
     r"contact: unknown key\(s\) \['extra'\]"),
    (lambda: contact_model_from_config({"model": "linear", "params": [1, 2]}, R, B), "params must be a mapping"),
    (lambda: contact_model_from_config(None, R, B), "no vehicle mass"),
    (lambda: contact_model_from_config({"model": "linear", "params": {"mu": 1.0}}, R, B),
     r"contact: linear contact model: missing required parameter\(s\) \['kp'\]"),
])
def test_bad_parameters_raise_model_error(call, match):
    with pytest.raises(ModelError, match=match):
        call()


def test_bad_inputs_raise_model_error():
    m = LinearContact(1000.0)
    with pytest.raises(ModelError, match=r"v_c must have shape \(n_wheels, 3\)"):
        m.evaluate(np.zeros((2, 2)), np.zeros(2), np.zeros(2))
    with pytest.raises(ModelError, match=r"R_omega must have shape \(2,\)"):
        m.evaluate(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    with pytest.raises(ModelError, match=r"dz has NaN or inf at indices \[1\]"):
        m.evaluate(np.zeros((2, 3)), np.zeros(2), [0.0, np.nan])
    with pytest.raises(ModelError, match="v_c must be numeric"):
        m.evaluate("fast", np.zeros(2), np.zeros(2))


def test_interpreted_kernels_give_the_same_forces_and_jacobians():
    # NUMBA_DISABLE_JIT=1 runs the same kernel source as plain Python (DESIGN.md "Speed")
    code = r"""
import json, numpy as np
from wmr_dynamics.contact_models import *
rng = np.random.default_rng(9)
v = rng.normal(0, 0.2, (4, 3)); Rw = np.array([0.3, -0.4, 0.5, -0.2]); dz = np.array([-0.01, -0.02, -0.005, -0.015])
models = [LinearContact(1000.0, mu=0.5), LinearContact(1000.0, mu=0.5, friction="cone"), PacejkaContact(1000.0),
          IshigamiContact(0.09, 0.11), IshigamiContact(0.09, 0.11, lookup_table=True, lut_shape=(5, 5, 5)),
          DingContact(0.09, 0.11, mean_wheel_load=70.0)]
out = []
for m in models:
    f, dv, dR, dd = m.evaluate(v, Rw, dz)
    h = 1e-6
    num = [(m.evaluate(v, Rw, dz + h)[0] - m.evaluate(v, Rw, dz - h)[0]) / (2 * h),
           (m.evaluate(v, Rw + h, dz)[0] - m.evaluate(v, Rw - h, dz)[0]) / (2 * h)]
    out.append([f.tolist(), dv.tolist(), dR.tolist(), dd.tolist(), num[0].tolist(), num[1].tolist()])
print(json.dumps(out))
"""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    interp = json.loads(r.stdout)
    rng = np.random.default_rng(9)
    v = rng.normal(0, 0.2, (4, 3))
    Rw, dz = np.array([0.3, -0.4, 0.5, -0.2]), np.array([-0.01, -0.02, -0.005, -0.015])
    models = all_models()
    models[0], models[1] = LinearContact(1000.0, mu=0.5), LinearContact(1000.0, mu=0.5, friction="cone")
    models[4] = IshigamiContact(R, B, lookup_table=True, lut_shape=(5, 5, 5))
    for m, got in zip(models, interp, strict=True):
        compiled = m.evaluate(v, Rw, dz)
        for a, b in zip(compiled, got[:4], strict=True):
            np.testing.assert_allclose(np.array(b), a, rtol=1e-11, atol=1e-9, err_msg=m.name)
        scale = np.abs(compiled[3]).max()
        np.testing.assert_allclose(np.array(got[3]), np.array(got[4]), rtol=1e-4, atol=1e-5 * scale, err_msg=m.name)
        scale = np.abs(compiled[2]).max()
        np.testing.assert_allclose(np.array(got[2]), np.array(got[5]), rtol=1e-4, atol=1e-5 * scale, err_msg=m.name)


def test_interpreted_new_kernels_give_the_same_results():
    """The anisotropic linear model, Ding's actual W̄ with lugs and the tilted-box terrain query run as plain
    Python under NUMBA_DISABLE_JIT=1 and agree with the compiled kernels."""
    code = r"""
import json, numpy as np
from wmr_dynamics.contact_models import *
from wmr_dynamics.terrain import OrientedBox
rng = np.random.default_rng(19)
v = rng.normal(0, 0.4, (4, 3)); Rw = np.array([0.3, -0.4, 0.5, -0.2]); dz = np.array([-0.01, -0.02, -0.005, -0.015])
models = [LinearContact(1000.0, mu_x=0.5, mu_y=0.2, c_slip_y=-30.0),
          LinearContact(1000.0, mu_x=0.5, mu_y=0.2, c_slip_y=-30.0, friction="cone"),
          DingContact(0.09, 0.11, lug_height=0.01, mean_wheel_load="actual")]
out = [[a.tolist() for a in m.evaluate(v, Rw, dz)] for m in models]
box = OrientedBox((0.2, -0.1, 0.3), (1.0, 0.7, 0.3), (0.3, -0.4, 0.9))
x, y = rng.uniform(-0.8, 0.8, 50), rng.uniform(-0.8, 0.8, 50)
h, n = box.height_normal(x, y)
print(json.dumps([out, h.tolist(), n.tolist()]))
"""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    interp, h_i, n_i = json.loads(r.stdout)
    from wmr_dynamics.terrain import OrientedBox

    rng = np.random.default_rng(19)
    v = rng.normal(0, 0.4, (4, 3))
    Rw, dz = np.array([0.3, -0.4, 0.5, -0.2]), np.array([-0.01, -0.02, -0.005, -0.015])
    models = [LinearContact(1000.0, mu_x=0.5, mu_y=0.2, c_slip_y=-30.0),
              LinearContact(1000.0, mu_x=0.5, mu_y=0.2, c_slip_y=-30.0, friction="cone"),
              DingContact(R, B, lug_height=0.01, mean_wheel_load="actual")]
    for m, got in zip(models, interp, strict=True):
        for a, b in zip(m.evaluate(v, Rw, dz), got, strict=True):
            np.testing.assert_allclose(np.array(b), a, rtol=1e-11, atol=1e-9, err_msg=m.name)
    f0 = np.array(interp[0][0])
    assert np.any(np.abs(f0[:, 1]) == 0.2 * f0[:, 2])  # a lateral cap μ_y f_z reached (the capped branch ran)
    box = OrientedBox((0.2, -0.1, 0.3), (1.0, 0.7, 0.3), (0.3, -0.4, 0.9))
    x, y = rng.uniform(-0.8, 0.8, 50), rng.uniform(-0.8, 0.8, 50)
    h, n = box.height_normal(x, y)
    assert (h > 0).sum() > 10
    np.testing.assert_array_equal(np.array(h_i), h)
    np.testing.assert_array_equal(np.array(n_i), n)
