"""Force-balance optimization (thesis §2.4.3): the analytic ∂e/∂x, the solution, and a user-supplied model.

Everything runs on the one compiled engine; the user's Python contact model below is called back from it.
"""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from wmr_dynamics import load_model
from wmr_dynamics.compiled.engine import ForceBalanceProblem
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.kinematics import initialize_contact
from wmr_dynamics.model import G
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import Plane, gaussian_rough_terrain


class SmoothTireModel:
    """A user's own contact model (eq. 2.71) in plain Python: a smooth, nonlinear tire.

    f_z = kp·softplus(−Δz/ε)·ε − kd v_z ; f_x = −μ f_z tanh(v_x / v0) ; f_y = −μ f_z tanh(v_y / v0)
    """

    def __init__(self, kp, kd, mu=0.8, v0=0.05, eps=1e-3):
        self.kp, self.kd, self.mu, self.v0, self.eps = kp, kd, mu, v0, eps

    def evaluate(self, vc, Rw, dz):
        nw = len(dz)
        s = -dz / self.eps
        sp = self.eps * np.logaddexp(0.0, s)  # smooth max(−Δz, 0)
        dsp = -1.0 / (1.0 + np.exp(-s))  # d sp / d Δz
        fz = self.kp * sp - self.kd * vc[:, 2]
        tx, ty = np.tanh(vc[:, 0] / self.v0), np.tanh(vc[:, 1] / self.v0)
        f = np.stack([-self.mu * fz * tx, -self.mu * fz * ty, fz], axis=1)
        dv = np.zeros((nw, 3, 3))
        dv[:, 2, 2] = -self.kd
        dv[:, 0, 0] = -self.mu * fz * (1 - tx**2) / self.v0
        dv[:, 1, 1] = -self.mu * fz * (1 - ty**2) / self.v0
        dv[:, 0, 2] = -self.mu * tx * -self.kd
        dv[:, 1, 2] = -self.mu * ty * -self.kd
        ddz = np.zeros((nw, 3))
        ddz[:, 2] = self.kp * dsp
        ddz[:, 0] = -self.mu * tx * self.kp * dsp
        ddz[:, 1] = -self.mu * ty * self.kp * dsp
        return f, dv, np.zeros((nw, 3)), ddz


def tire_for(model):
    kp = model.total_mass * G / (model.num_wheels * 0.02)
    return SmoothTireModel(kp, kp / 20)


DATA = Path(__file__).parent / "data"


# rocker.urdf: its mimic constraint has no model, so it is a rigid row (projected out of e)
@pytest.mark.parametrize("name", ["zoe", "rocky7", "landtamer", "recbot", str(DATA / "rocker.urdf")])
def test_force_balance_jacobian_matches_finite_differences(name):
    model = load_model(name)
    ground = gaussian_rough_terrain(rms=0.05, corr_len=0.5, seed=3)
    rng = np.random.default_rng(0)
    q = initialize_contact(model, model.state(xyz=(1.0, 0.0, 1.0), rpy=(0, 0, 0.2)), ground)
    q[6] -= 0.01
    qvel = rng.normal(scale=0.2, size=model.num_dof)
    u = rng.normal(scale=1.0, size=len(model.actuated_joint_names))
    fb = ForceBalanceProblem(model, ground, DynamicsOptions(contact=tire_for(model)), q, qvel, u, 0.04)
    evaluate = fb.evaluate
    x = fb.x0 + rng.normal(scale=0.05, size=fb.x0.shape)
    e, J, _, _ = evaluate(x)
    h = 1e-6
    J_fd = np.stack([(evaluate(x + h * d)[0] - evaluate(x - h * d)[0]) / (2 * h) for d in np.eye(len(x))], axis=1)
    np.testing.assert_allclose(J, J_fd, rtol=1e-5, atol=1e-6 * np.abs(J_fd).max())


@pytest.mark.parametrize("name, c_rr", [("zoe", 0.0), ("rocky7", 0.0), ("zoe", -50.0)])
def test_the_linear_models_jacobian_matches_finite_differences_with_capped_and_free_wheels(name, c_rr):
    """The piecewise-linear model's partials change at its friction caps (a free axis: C_x or C_y; a capped one: its
    ±μ ∂f_z term), and rolling resistance (c_rr ≠ 0) adds ∂f_x/∂Rω.  ∂e/∂x against central differences at points
    where some wheels' friction is capped and some is not (away from the caps' kinks by more than the difference
    step)."""
    from wmr_dynamics.contact_models import LinearContact

    model = load_model(name)
    ground = gaussian_rough_terrain(rms=0.05, corr_len=0.5, seed=3)
    contact = LinearContact(model.total_mass * G / (model.num_wheels * 0.02), mu=0.6, c_rr=c_rr)  # VEHICLES.md's kp
    rng = np.random.default_rng(1)
    q = initialize_contact(model, model.state(xyz=(1.0, 0.0, 1.0), rpy=(0, 0, 0.2)), ground)
    q[6] -= 0.01
    qvel = rng.normal(scale=0.2, size=model.num_dof)
    u = rng.normal(scale=2.0, size=len(model.actuated_joint_names))
    fb = ForceBalanceProblem(model, ground, DynamicsOptions(contact=contact), q, qvel, u, 0.04)
    capped = free = 0
    for _ in range(6):
        x = fb.x0 + rng.normal(scale=0.3, size=fb.x0.shape)
        e, J, _, fc = fb.evaluate(x)
        on = fc[:, 2] > 0.0
        at_cap = np.isclose(np.abs(fc[on, :2]), 0.6 * fc[on, 2:3], rtol=1e-12, atol=0.0)
        capped, free = capped + at_cap.sum(), free + (~at_cap).sum()
        h = 1e-7
        J_fd = np.stack([(fb.evaluate(x + h * d)[0] - fb.evaluate(x - h * d)[0]) / (2 * h) for d in np.eye(len(x))],
                        axis=1)
        np.testing.assert_allclose(J, J_fd, rtol=1e-5, atol=1e-6 * np.abs(J_fd).max())
    assert capped > 0 and free > 0  # both kinds of rows were checked


def test_user_model_static_equilibrium_on_flat_ground():
    # Zoë at rest (ideal actuators holding zero wheel rate): normal forces carry the weight, nothing moves.
    model = load_model("zoe")
    options = DynamicsOptions(contact=tire_for(model))
    st = Stepper(model, Plane(), "dynamic", 0.04, dynamics=options)
    d = st.make_data(initialize_contact(model, model.state(xyz=(0, 0, 1.0)), Plane()))
    st.advance(d, 250, rates=np.zeros(4))  # 10 s at dt 0.04
    assert d.contact_force[:, 2].sum() == pytest.approx(model.total_mass * G, rel=1e-3)
    assert np.linalg.norm(d.q[4:6]) < 1e-3 and np.abs(d.qvel).max() < 1e-3
    # the models are satisfied (eq. 2.77 at its minimum) to the Newton loop's stopping tolerance (a fraction of
    # the weight), and the loop did stop there
    assert d.converged and d.cost <= options.tolerance * model.total_mass * G


def _drive(model, ground, opts, steps=100, dt=0.04, u_scale=1.0):
    st = Stepper(model, ground, "dynamic", dt, dynamics=opts)
    d = st.make_data(initialize_contact(model, model.state(xyz=(0.0, 0.0, 1.0)), ground))
    u = u_scale * np.ones(len(model.actuated_joint_names))
    its = []
    for _ in range(steps):
        st.advance(d, rates=u)
        its.append(d.iterations)
    return d.q, d.qvel, d, np.array(its)


def test_constant_mass_matrix_is_exact_for_a_rigid_vehicle():
    # LandTamer has only wheel joints: M does not depend on q (§2.4.4), so reusing it changes nothing.
    model = load_model("landtamer")
    a = _drive(model, Plane(), DynamicsOptions(contact=tire_for(model)))
    b = _drive(model, Plane(), DynamicsOptions(contact=tire_for(model), constant_mass_matrix=True))
    np.testing.assert_allclose(b[0], a[0], atol=1e-8)  # equal up to round-off


def test_fused_body_bias_approximation_stays_close_when_mass_is_in_the_body():
    # eq. 2.89: c ≈ [−I_b g + v_b ×f I_b v_b; 0]; Zoë carries 90 % of its mass in the body.
    model = load_model("zoe")
    ground = gaussian_rough_terrain(rms=0.05, corr_len=0.5, seed=2)
    a = _drive(model, ground, DynamicsOptions(contact=tire_for(model)))
    b = _drive(model, ground, DynamicsOptions(contact=tire_for(model), approximate_bias=True))
    travel = np.linalg.norm(a[0][4:6])
    assert travel > 1.0
    assert np.linalg.norm(b[0][4:7] - a[0][4:7]) < 0.02 * travel


def test_one_newton_step_per_time_step_converges_at_steady_state():
    # §2.4.4 non-iterative variant: the force-balance error is not zero every step but is driven to zero.
    model = load_model("zoe")
    q, qvel, r, its = _drive(model, Plane(), DynamicsOptions(contact=tire_for(model), max_iterations=1),
                             steps=200)
    assert its.max() <= 1
    assert r.cost < 1e-4 * model.total_mass * G
    assert qvel[3] == pytest.approx(0.325, rel=1e-3)  # wheel rate 1 rad/s × radius 0.325 m, no slip at steady state


@pytest.mark.parametrize("name", ["zoe", "rocky7"])
def test_force_balance_jacobian_with_pi_actuators(name):
    from wmr_dynamics.actuators import PIActuator

    model = load_model(name)
    ground = gaussian_rough_terrain(rms=0.05, corr_len=0.5, seed=3)
    na = len(model.actuated_joint_names)
    opts = DynamicsOptions(contact=tire_for(model), actuator=PIActuator(kp=50.0, ki=5.0, torque_limit=400.0, n=na))
    rng = np.random.default_rng(1)
    q = initialize_contact(model, model.state(xyz=(1.0, 0.0, 1.0)), ground)
    q[6] -= 0.01
    fb = ForceBalanceProblem(model, ground, opts, q, rng.normal(scale=0.2, size=model.num_dof), rng.normal(size=na),
                             0.04, integral=rng.normal(scale=0.5, size=na))
    evaluate = fb.evaluate
    x = fb.x0 + rng.normal(scale=0.05, size=fb.x0.shape)
    _, J, _, _ = evaluate(x)
    h = 1e-6
    J_fd = np.stack([(evaluate(x + h * d)[0] - evaluate(x - h * d)[0]) / (2 * h) for d in np.eye(len(x))], axis=1)
    np.testing.assert_allclose(J, J_fd, rtol=1e-5, atol=1e-6 * np.abs(J_fd).max())


def test_touchdown_that_the_newton_iteration_cannot_settle_is_retaken_in_half_steps():
    # LandTamer dropped 0.2 m onto flat ground at dt 0.04 (a case that exhausted 20 iterations with a kN-level
    # residual): §2.4.4 suggests decreasing the step; every step must end converged, weight carried at rest.
    from wmr_dynamics.compiled import dynamics as D
    from wmr_dynamics.dynamics.force_balance import DynamicsOptions as Opts

    model = load_model("landtamer")
    opts = Opts.from_config(model, contact="pacejka")
    q = initialize_contact(model, model.state(xyz=(0, 0, 1.0)), Plane())
    q[6] += 0.2
    converged, iterations, states = [], [], []
    st = Stepper(model, Plane(), "dynamic", 0.04, dynamics=opts)
    d = st.make_data(q)
    for _ in range(40):
        states.append((d.q.copy(), d.qvel.copy()))
        st.advance(d, rates=np.zeros(6))
        converged.append(d.converged)
        iterations.append(d.iterations)
    assert all(converged)
    assert d.contact_force[:, 2].sum() == pytest.approx(model.total_mass * G, rel=1e-3)
    # the touchdown step (the most iterations): its force balance alone does not converge; the whole step,
    # retaken as half steps, does
    qk, vk = states[int(np.argmax(iterations))]
    e, z = st.engine, np.zeros(6)
    alone = D.force_balance_step(e.md, e.td, e.fd, e.workspace(), qk, vk, z, np.zeros(6), 0.04, np.empty_like(qk),
                                 np.empty_like(vk))
    assert alone[0] == 0 and not alone[3]
    whole = D.dynamic_step(e.md, e.td, e.fd, e.workspace(), qk, vk, z, np.zeros(6), 0.04, np.empty_like(qk),
                           np.empty_like(vk), np.zeros(model.num_wheels), np.zeros((model.num_wheels, 3)))
    assert whole[0] == 0 and whole[3] and whole[4] >= 2  # status, converged, sub-steps


def test_dynamic_simulator_starts_from_a_given_velocity():
    from wmr_dynamics.simulate import Simulator

    model = load_model("zoe")
    sim = Simulator(model, Plane(), mode="dynamic", dt=0.04)
    qvel0 = np.zeros(model.num_dof)
    qvel0[3] = 1.0
    qvel0[5 + model.wheel_frame] = 1.0 / model.wheel_radii  # rolling at 1 m/s
    res = sim.run(1.0, (1.0, 0.0), qvel0=qvel0, progress=False)
    assert res.q[-1, 4] - res.q[0, 4] == pytest.approx(1.0, rel=0.02)  # no acceleration phase from rest
    assert res.summary()["unconverged_steps"] == 0


def test_a_failed_line_search_ends_the_newton_loop_and_the_step_is_halved():
    """Zoë (YAML defaults: piecewise-linear contact, ideal actuators) starting from rest on rough terrain 1 with
    (v, ω) = (0.64, 0.42): at step 4 the ideal actuators have spun the wheels up (slip ratios near 1) and the
    Newton loop reaches a point where the Gauss–Newton step is no descent direction of ‖e‖² (a friction cap's
    kink).  The loop must stop there, unconverged, well before its iteration cap, rather than creep on with
    α ≈ 1e-9 — and the step, retaken as half steps, must converge.  Oracle: at the point the loop stopped,
    ‖e(x + α p)‖ with p = −(∂e/∂x)⁻¹ e evaluated independently (ForceBalanceProblem) meets the sufficient
    decrease for no α = 2^−k, k = 0..12."""
    from wmr_dynamics.compiled import dynamics as D
    from wmr_dynamics.compiled.controllers import controller_rates
    from wmr_dynamics.kinematics.fk import _forward_kinematics
    from wmr_dynamics.scenarios import zoe_rough
    from wmr_dynamics.simulate import Simulator

    model = load_model("zoe")
    terrain = zoe_rough.load_terrain(1)
    # (the trajectory as the Newton loop without the previous step's factor takes it: its state at step 4)
    opts = dataclasses.replace(DynamicsOptions.from_config(model), reuse_factor=False)
    sim = Simulator(model, terrain, mode="dynamic", dt=0.04, dynamics=opts)
    eng = sim.compiled
    cmd = np.array([0.64132817, 0.42315941])  # (the batch's trajectory 4)
    run = eng.rollout(sim.initial_state(), np.zeros(model.num_dof), np.tile(cmd, (6, 1)), 0.04)
    q, qvel = run.q[4].copy(), run.qvel[4].copy()
    ws = eng.workspace()
    _forward_kinematics(eng.md.parent, eng.md.jtype, eng.md.T0, q, ws.T_parent, ws.T_world)
    u = np.zeros(len(model.actuated_joint_names))
    controller_rates(eng.md, eng.cd, q, ws.T_world, cmd, u)
    # the step's force balance alone
    status, it, norm, converged = D.force_balance_step(eng.md, eng.td, eng.fd, ws, q, qvel, u, np.zeros(len(u)),
                                                       0.04, np.empty_like(q), np.empty_like(qvel))
    assert status == 0 and not converged
    assert it < eng.fd.max_iterations // 2
    nx = int(ws.counts[D.C_INPUTS])
    x = ws.x[:nx].copy()
    fb = ForceBalanceProblem(model, terrain, eng.options, q, qvel, u, 0.04)
    e, J, _, _ = fb.evaluate(x)
    np.testing.assert_allclose(np.linalg.norm(e), norm, rtol=1e-9)
    assert norm > 1e3 * eng.fd.tolerance
    p = -np.linalg.solve(J, e)
    phi0, dphi0 = e @ e, 2.0 * e @ (J @ p)
    assert dphi0 < 0.0  # p is a descent direction of the model the loop linearized ...
    for k in range(13):  # ... but ‖e‖² does not decrease along it: the line search had to fail
        a = 0.5 ** k
        ea = fb.evaluate(x + a * p)[0]
        assert ea @ ea > phi0 + D.C1 * a * dphi0
    # the whole step (dynamic_step) retakes it as half steps, which converge
    res = D.dynamic_step(eng.md, eng.td, eng.fd, eng.workspace(), q, qvel, u, np.zeros(len(u)), 0.04,
                         np.empty_like(q), np.empty_like(qvel), np.zeros(model.num_wheels),
                         np.zeros((model.num_wheels, 3)))
    assert res[0] == 0 and res[3] and res[4] >= 2
