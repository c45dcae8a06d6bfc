"""The dynamic engine against physics, not against a second copy of itself (issue 9, item 4).

Every test compares ``Simulator(mode="dynamic")`` — on the compiled and on the Python engine — or a contact
model with an oracle that shares no code with the package:

1. free flight: momentum theorems and the closed-form parabola, with the centre of mass, linear and angular
   momentum computed here from the model's frames, masses and inertias (own forward kinematics and
   velocity recursion, cross-checked with Pinocchio), converging at the integrator's first order;
2. a vehicle with locked wheels on an incline at the Coulomb limit of the piecewise-linear contact model
   (thesis eqs. C.3–C.9): slides with a = g(sin φ − μ cos φ) above tan φ = μ, holds (creep at the closed-form
   speed) below;
3. joint spring–damper (eq. 2.74) oscillation periods in free flight vs 2π√(I_eff/k);
4. Pacejka / Nicolas–Comstock contact forces (thesis App. C, eqs. C.10–C.18, Table C.1) computed by hand.

Tolerances come from the physics and the integrator (symplectic Euler, eqs. 2.85–2.86, with model forces at
the step's end velocities, eq. 2.83), each justified where it is asserted.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from wmr_dynamics import Frame, JointSpring, Simulator, Wheel, WmrModel
from wmr_dynamics.contact_models import LinearContact, PacejkaContact
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.kinematics import initialize_contact
from wmr_dynamics.terrain import Plane

G = 9.81  # m/s², the thesis's gravity (the engine's value, wmr_dynamics.model.G)
ENGINES = ["compiled", "python"]
WHEELS = (("fl", 0.3, 0.25), ("fr", 0.3, -0.25), ("rl", -0.3, 0.25), ("rr", -0.3, -0.25))
WHEEL_R = 0.12


def box_inertia(m: float, a: float, b: float, c: float) -> tuple:
    """Solid box a × b × c (m) of mass m (kg) about its centre."""
    return ((m * (b * b + c * c) / 12, 0.0, 0.0), (0.0, m * (a * a + c * c) / 12, 0.0),
            (0.0, 0.0, m * (a * a + b * b) / 12))


def vehicle(name: str, body_com=(0.0, 0.0, 0.05), body_inertia=None, extra=(), springs=None) -> WmrModel:
    """A 36 kg four-wheel vehicle (30 kg body, 4 × 1.5 kg wheels, all wheels actuated) plus ``extra`` frames."""
    frames = [Frame("body", mass=30.0, com=body_com, inertia=body_inertia or box_inertia(30.0, 0.8, 0.5, 0.2))]
    wheel_inertia = ((0.01, 0.0, 0.0), (0.0, 0.018, 0.0), (0.0, 0.0, 0.01))
    for n, x, y in WHEELS:
        frames.append(Frame(n, "body", "RY", actuated=True, xyz=(x, y, -0.05), mass=1.5, inertia=wheel_inertia))
    frames.extend(extra)
    return WmrModel(frames, [Wheel(n, WHEEL_R, 0.06) for n, _, _ in WHEELS], joint_springs=springs or {},
                    name=name)


def simulator(model: WmrModel, terrain, contact, dt: float, engine: str) -> Simulator:
    sim = Simulator(model, terrain, mode="dynamic", dt=dt, dynamics=DynamicsOptions(contact=contact), engine=engine)
    assert sim.engine_used == engine
    return sim


# ---------------------------------------------------------------------------------------------------------------
# Oracle kinematics: written from the frame-tree definition (thesis §2.2.1, Alg. 1: T_i = T_p(i) · T0_i · joint),
# not from the package's kernels; checked against Pinocchio below.
def _rotation(axis: int, angle: float) -> np.ndarray:
    k = np.zeros((3, 3))
    a, b = (axis + 1) % 3, (axis + 2) % 3
    k[b, a], k[a, b] = 1.0, -1.0  # skew(e_axis)
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * k @ k  # Rodrigues


def oracle_fk(model: WmrModel, q: np.ndarray) -> np.ndarray:
    """World poses (nf, 4, 4) of the frames at state q = [quat xyzw; xyz; θ]."""
    x, y, z, w = q[:4] / np.linalg.norm(q[:4])
    T = np.zeros((model.num_frames, 4, 4))
    T[0, :3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    T[0, :3, 3], T[0, 3, 3] = q[4:7], 1.0
    for i in range(1, model.num_frames):
        J = np.eye(4)
        jt, th = int(model.joint_type[i]), q[6 + i]
        if jt < 3:
            J[:3, :3] = _rotation(jt, th)
        else:
            J[jt - 3, 3] = th
        T[i] = T[model.parent[i]] @ model.T0[i] @ J
    return T


def oracle_momenta(model: WmrModel, q: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre of mass, linear momentum, angular momentum about the centre of mass), world frame, from the
    frames' masses, centres of mass and inertias: L = Σ R I Rᵀ ω_i + m_i (c_i − c) × ċ_i."""
    T = oracle_fk(model, q)
    nf = model.num_frames
    om, vo = np.zeros((nf, 3)), np.zeros((nf, 3))  # angular velocity, velocity of the frame origin
    om[0], vo[0] = T[0, :3, :3] @ qvel[:3], T[0, :3, :3] @ qvel[3:6]
    for i in range(1, nf):
        p, jt = model.parent[i], int(model.joint_type[i])
        axis = T[i, :3, jt % 3]  # joint axis in world (a column of R_p · R0, unchanged by the joint's motion)
        om[i] = om[p] + (axis * qvel[5 + i] if jt < 3 else 0.0)
        vo[i] = vo[p] + np.cross(om[p], T[i, :3, 3] - T[p, :3, 3]) + (axis * qvel[5 + i] if jt >= 3 else 0.0)
    m = model.mass
    c = np.einsum("fij,fj->fi", T[:, :3, :3], model.com) + T[:, :3, 3]
    vc = vo + np.cross(om, c - T[:, :3, 3])
    com = (m[:, None] * c).sum(0) / m.sum()
    P = (m[:, None] * vc).sum(0)
    L = sum(T[i, :3, :3] @ model.inertia[i] @ T[i, :3, :3].T @ om[i] + m[i] * np.cross(c[i] - com, vc[i])
            for i in range(nf))
    return com, P, L


def pinocchio_centroidal(model: WmrModel, q: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, ...]:
    """The same three quantities from Pinocchio (free-flyer q = [xyz; quat], v = [v_b; ω_b; θ̇])."""
    pm = pin.Model()
    kinds = (pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ, pin.JointModelPX, pin.JointModelPY,
             pin.JointModelPZ)
    ids = [pm.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")]
    for i in range(1, model.num_frames):
        T0 = model.T0[i]
        ids.append(pm.addJoint(ids[model.parent[i]], kinds[model.joint_type[i]](), pin.SE3(T0[:3, :3], T0[:3, 3]),
                               f"j{i}"))
    for i, jid in enumerate(ids):
        pm.appendBodyToJoint(jid, pin.Inertia(model.mass[i], model.com[i], model.inertia[i]), pin.SE3.Identity())
    pd = pm.createData()
    pin.computeCentroidalMomentum(pm, pd, np.r_[q[4:7], q[:4], q[7:]], np.r_[qvel[3:6], qvel[:3], qvel[6:]])
    return pd.com[0].copy(), pd.hg.linear.copy(), pd.hg.angular.copy()


# ---------------------------------------------------------------------------------------------------------------
# 1. Free flight
def tumbler() -> WmrModel:
    """Asymmetric body (off-centre CoM, full inertia tensor) + 4 wheels + a passive, massive RX arm."""
    arm = Frame("arm", "body", "RX", xyz=(-0.1, 0.0, 0.2), rpy=(0.0, 0.3, 0.0), mass=2.0, com=(0.0, 0.1, 0.15),
                inertia=box_inertia(2.0, 0.1, 0.2, 0.3))
    return vehicle("tumbler", body_com=(0.05, -0.02, 0.04),
                   body_inertia=((1.2, 0.05, -0.08), (0.05, 2.0, 0.1), (-0.08, 0.1, 2.6)), extra=[arm])


def test_oracle_momenta_match_pinocchio():
    model = tumbler()
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = model.state(xyz=rng.normal(size=3), rpy=rng.uniform(-1, 1, 3), joints=rng.normal(size=model.num_joints))
        qvel = rng.normal(size=model.num_dof)
        for mine, ref in zip(oracle_momenta(model, q, qvel), pinocchio_centroidal(model, q, qvel), strict=True):
            np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_free_flight_conserves_momentum_and_follows_the_parabola(engine):
    """Out of contact only gravity acts (internal actuator and joint forces cancel), so
    ċ = P/M with Ṗ = M g (horizontal P constant, P_z = P_z0 − M g t), c(t) = c0 + (P0/M) t − ½ g t² e_z, and
    L about the centre of mass is constant (gravity has no moment about it).  The wheels spin at the
    commanded 10 rad/s (gyroscopic coupling), the passive arm swings freely and the body tumbles about all axes.
    """
    model = tumbler()
    M, T, v = model.total_mass, 0.6, 1.2
    q0 = model.state(xyz=(0.0, 0.0, 10.0), rpy=(0.1, 0.2, 0.3))
    qvel0 = np.zeros(model.num_dof)
    qvel0[:3], qvel0[3:6] = (1.5, -2.0, 2.5), (1.0, 0.5, 2.0)  # ω_b (rad/s), v_b (m/s)
    qvel0[6:10] = v / WHEEL_R  # the rate the ideal actuators hold for the command (v, 0)
    qvel0[10] = 0.5  # arm
    c0, P0, L0 = oracle_momenta(model, q0, qvel0)
    w0 = float(np.linalg.norm(qvel0[:3]))
    T0 = oracle_fk(model, q0)
    rho = max(np.linalg.norm(T0[i, :3, :3] @ model.com[i] + T0[i, :3, 3] - c0) for i in range(model.num_frames))
    contact = LinearContact.from_vehicle(M, model.num_wheels)
    errors, signed = {}, {}
    for dt in (0.004, 0.001):
        r = simulator(model, Plane(), contact, dt, engine).run(T, (v, 0.0), q0=q0, qvel0=qvel0)
        assert r.dz.min() > 5.0 and not r.contact_force.any()  # never near the ground
        out = [oracle_momenta(model, r.q[k], r.qvel[k]) for k in range(len(r.t))]
        com, P, L = (np.array([o[j] for o in out]) for j in range(3))
        t = r.t[:, None]
        ez = np.array([0.0, 0.0, 1.0])
        e_com = com - (c0 + P0 / M * t - 0.5 * G * t * t * ez)
        e_P = (P - (P0 - M * G * t * ez)) / M
        e_L = L - L0
        signed[dt] = (e_com, e_P, e_L)
        errors[dt] = dict(com=np.abs(e_com).max(), P_h=np.abs(e_P[:, :2]).max(), P_z=np.abs(e_P[:, 2]).max(),
                          L=np.linalg.norm(e_L, axis=1).max())
        # the pinned wheel rates and the final state's momenta also agree with Pinocchio's
        np.testing.assert_allclose(r.qvel[:, 6:10], v / WHEEL_R, rtol=1e-9)
        for mine, ref in zip(out[-1], pinocchio_centroidal(model, r.q[-1], r.qvel[-1]), strict=True):
            np.testing.assert_allclose(mine, ref, rtol=1e-10, atol=1e-10)
    coarse, fine = errors[0.004], errors[0.001]
    print(f"\nfree flight [{engine}] errors dt=4 ms: {coarse}\n                        dt=1 ms: {fine}")
    # First order (symplectic Euler, eqs. 2.85–2.86): a quarter of the step gives a quarter of the error.  3..5.5
    # leaves room for the O(dt²) remainder, ~|ω|dt ≈ 1.4 % of the error at dt = 4 ms; an engine converging to
    # wrong physics would stall (ratio → 1) instead.
    for key in coarse:
        assert 3.0 <= coarse[key] / fine[key] <= 5.5, (key, coarse[key], fine[key])
    # Richardson: (4 e(dt/4) − e(dt))/3 removes the first-order term, so it must be small against e(dt/4): a bias
    # of the engine's limit (e.g. a wrong inertia) would survive it.
    for e_c, e_f in zip(signed[0.004], signed[0.001], strict=True):
        rich = np.abs(4.0 * e_f[::4] - e_c).max() / 3.0
        print(f"  Richardson residual / e(dt/4) = {rich / np.abs(e_f).max():.3f}")
        assert rich <= 0.15 * np.abs(e_f).max(), (rich, np.abs(e_f).max())
    # Absolute size at dt = 1 ms.  A first-order Lie–Euler step errs by ~(|ω|dt)² of a rotating quantity per step,
    # i.e. a relative drift ~ε = (|ω|dt)(|ω|T) over the run; allow 2ε of the quantity's scale: |L0| for L,
    # u = |P0|/M + |ω|ρ (the fastest mass point's speed about the centre of mass) for P/M, u·T for the path.
    eps = 2.0 * (w0 * 0.001) * (w0 * T)
    u = np.linalg.norm(P0) / M + w0 * rho
    print(f"  budget 2ε = {eps:.4f}: L {fine['L'] / np.linalg.norm(L0):.4f}, P/M {fine['P_h'] / u:.4f}, "
          f"{fine['P_z'] / u:.4f}, path {fine['com'] / (u * T):.4f}")
    assert fine["L"] <= eps * np.linalg.norm(L0)
    assert max(fine["P_h"], fine["P_z"]) <= eps * u
    assert fine["com"] <= eps * u * T


# ---------------------------------------------------------------------------------------------------------------
# 2. Incline at the Coulomb limit
MU = 0.5


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("friction", ["pyramid", "cone"])
@pytest.mark.parametrize("ratio", [1.4, 1.1, 0.9, 0.5])  # tan φ / μ
def test_locked_wheels_on_an_incline_slide_above_and_hold_below_tan_phi_mu(engine, friction, ratio):
    """Wheels held by ideal actuators (command 0 → zero wheel rate), vehicle facing down the slope.

    Sliding (all contacts at the Coulomb cap |f_x| = μ f_z, eqs. C.7 / C.9, with Σ f_z = M g cos φ): the rigid
    vehicle accelerates down the slope at a = g (sin φ − μ cos φ), whatever the load split between the axles.
    Holding (tan φ < μ): friction f_x = c_slip·v (C.5) balances M g sin φ at the creep speed
    v = M g sin φ / (n |c_slip|) while no contact saturates (φ = 0.5·atan μ); near the limit (0.9) the uphill
    wheels, unloaded by the slope, may saturate, so then 0 < v <= M g sin φ / |c_slip| (at least one wheel
    unsaturated — if all were, friction μ M g cos φ > M g sin φ would stop the vehicle).
    """
    model = vehicle("sled")
    M, n = model.total_mass, model.num_wheels
    phi = math.atan(ratio * MU)
    kp = M * G / (n * 0.02)  # 2 cm rest sinkage per wheel
    c_slip = -8.0 * kp  # stiff: creep ≈ 1 mm/s (VEHICLES.md's default −0.1 kp would creep at ~0.1 m/s)
    contact = LinearContact(kp=kp, kd=kp / 20.0, c_slip=c_slip, mu=MU, friction=friction)
    normal = np.array([math.sin(phi), 0.0, math.cos(phi)])  # ground falls towards +x
    ground = Plane(normal=normal)
    q0 = initialize_contact(model, model.state(xyz=(0.0, 0.0, 0.5), rpy=(0.0, phi, 0.0)), ground)
    q0[4:7] -= normal * M * G * math.cos(phi) / (n * kp)  # start at the mean rest sinkage
    dt, T = 0.01, 2.0
    r = simulator(model, ground, contact, dt, engine).run(T, (0.0, 0.0), q0=q0)
    assert r.converged.all()
    np.testing.assert_allclose(r.qvel[:, 6:10], 0.0, atol=1e-9)  # wheels held
    down = np.array([math.cos(phi), 0.0, -math.sin(phi)])
    s = (r.q[:, 4:7] - r.q[0, 4:7]) @ down  # distance travelled down the slope, m
    late = r.t >= T / 2  # after the start-up transient
    fit = np.polyfit(r.t[late], s[late], 2)
    a_meas, v_mid = 2.0 * fit[0], np.polyval(np.polyder(fit), 0.75 * T)
    a_slide = G * (math.sin(phi) - MU * math.cos(phi))
    weight_n = M * G * math.cos(phi)
    fz = r.contact_force[late][:-1, :, 2]
    # steady state after T/2: the start-up heave/pitch transient has decayed — normal loads carry M g cos φ and the
    # body turns at < 2e-5 rad/s (its points then move < 0.2 m × 2e-5 rad/s = 4e-6 m/s, < 1 % of the creep speed)
    np.testing.assert_allclose(fz.sum(1), weight_n, rtol=1e-3)
    assert np.abs(r.qvel[late, :3]).max() < 2e-5
    print(f"\nincline [{engine}, {friction}] tanφ/μ={ratio}: a={a_meas:.9f} m/s² (slide law {a_slide:.9f}), "
          f"v(3T/4)={v_mid:.7g} m/s, creep law {M * G * math.sin(phi) / (n * -c_slip):.7g} m/s, "
          f"ΣN err {np.abs(fz.sum(1) / weight_n - 1).max():.1e}, |ω| {np.abs(r.qvel[late, :3]).max():.1e}")
    if ratio > 1.0:
        # every contact at the cap (pure longitudinal slip: pyramid and cone agree)
        fx = r.contact_force[late][:-1, :, 0]
        np.testing.assert_allclose(fx, -MU * fz, rtol=1e-9, atol=1e-9 * weight_n)
        # a = g sin φ − μ Σf_z / M: the normal-load tolerance above (1e-3) propagates to 1e-3 μ g cos φ; allow
        # twice that (≈ 9 mm/s²) — a 2 % error in μ or in the normal load would already exceed it
        assert abs(a_meas - a_slide) <= 2e-3 * MU * G * math.cos(phi)
    else:
        assert abs(a_meas) <= 1e-3  # holds: no acceleration (a sliding vehicle would have |a| >= 0.45 m/s²)
        v_one = M * G * math.sin(phi) / -c_slip
        assert 0.0 < v_mid <= v_one
        if ratio == 0.5:
            # no wheel saturated: exact creep speed
            assert np.all(np.abs(r.contact_force[late][:-1, :, 0]) < MU * fz)
            assert v_mid == pytest.approx(v_one / n, rel=0.01)


# ---------------------------------------------------------------------------------------------------------------
# 3. Joint spring (eq. 2.74) oscillation in free flight
def _rotor_model(k: float) -> tuple[WmrModel, float]:
    """A 4 kg rotor on a passive RY joint with its centre of mass on the axis (the spring torque is the only
    moment on it), I_yy = 0.08 kg·m².  The vehicle is symmetric in y, so the motion stays planar about y:
    L_y = I_sys ω_b + I_r θ̇ = 0 and I_r (ω̇_b + θ̈) = −k θ give I_eff = I_r (1 − I_r / I_sys), I_sys being the whole
    vehicle's moment of inertia about the y axis through its centre of mass."""
    rotor = Frame("rotor", "body", "RY", xyz=(0.2, 0.0, 0.15), mass=4.0,
                  inertia=((0.05, 0.0, 0.0), (0.0, 0.08, 0.0), (0.0, 0.0, 0.04)))
    model = vehicle("rotor", extra=[rotor], springs={"rotor": JointSpring(k, 0.0)})
    # frame data typed in, as above: (mass, com in the body frame, I_yy)
    parts = [(30.0, (0.0, 0.05), 30.0 * (0.8**2 + 0.2**2) / 12)]
    parts += [(1.5, (x, -0.05), 0.018) for _, x, _ in WHEELS]
    parts += [(4.0, (0.2, 0.15), 0.08)]
    m_tot = sum(p[0] for p in parts)
    xc = sum(p[0] * p[1][0] for p in parts) / m_tot
    zc = sum(p[0] * p[1][1] for p in parts) / m_tot
    I_sys = sum(Iyy + m * ((x - xc) ** 2 + (z - zc) ** 2) for m, (x, z), Iyy in parts)
    return model, 0.08 * (1.0 - 0.08 / I_sys)


def _slider_model(k: float) -> tuple[WmrModel, float]:
    """A 6 kg slider on a passive PZ joint whose line passes through the centre of mass of the rest (body and
    wheels, all on x = y = 0 by symmetry): the spring force acts along the line joining the two centres of mass,
    so nothing rotates and the two masses oscillate with the reduced mass m_s (M − m_s) / M."""
    z_rest = (30.0 * 0.05 + 4 * 1.5 * -0.05) / 36.0
    slider = Frame("slider", "body", "PZ", xyz=(0.0, 0.0, z_rest + 0.2), mass=6.0,
                   inertia=box_inertia(6.0, 0.1, 0.1, 0.1))
    model = vehicle("slider", extra=[slider], springs={"slider": JointSpring(k, 0.0)})
    return model, 6.0 * 36.0 / 42.0


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("build", "k", "theta0"), [(_rotor_model, 40.0, 0.1), (_slider_model, 3000.0, 0.02)],
                         ids=["rotor", "slider"])
def test_undamped_joint_spring_period_in_free_flight(engine, build, k, theta0):
    """τ = −k θ (eq. 2.74, zero damping): period 2π √(I_eff / k) (uniform gravity does not act on the
    relative motion in free fall).  The engine applies the spring at the step's end state (eq. 2.83), i.e.
    backward Euler on the oscillator: phase atan(ω dt) per step, so the period is 2π dt / atan(ω dt), longer
    than the closed form by (ω dt)²/3 to leading order, and the amplitude decays (not checked)."""
    model, I_eff = build(k)
    T_exact = 2.0 * math.pi * math.sqrt(I_eff / k)
    omega = 2.0 * math.pi / T_exact
    dt = 0.002
    sim = simulator(model, Plane(), LinearContact.from_vehicle(model.total_mass, model.num_wheels), dt, engine)
    q0 = model.state(xyz=(0.0, 0.0, 20.0), joints={model.joint_names[-1]: theta0})
    r = sim.run(3.0 * T_exact, (0.0, 0.0), q0=q0)
    assert not r.contact_force.any()
    theta = r.q[:, -1]
    k0 = np.flatnonzero(np.sign(theta[:-1]) * np.sign(theta[1:]) < 0)
    crossings = r.t[k0] - theta[k0] * dt / (theta[k0 + 1] - theta[k0])  # linear interpolation
    assert len(crossings) >= 5
    T_meas = 2.0 * (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    T_scheme = 2.0 * math.pi * dt / math.atan(omega * dt)
    print(f"\nspring [{engine}] {model.name}: T={T_meas:.7f} s, closed form {T_exact:.7f} s "
          f"(rel {T_meas / T_exact - 1:+.2e}, scheme's dispersion {(omega * dt) ** 2 / 3:.2e})")
    # the closed form, up to the scheme's dispersion ((ω dt)²/3 ≈ 7e-4 here) — a 1 % error in I_eff would be 5e-3
    assert abs(T_meas / T_exact - 1.0) <= 0.5 * (omega * dt) ** 2
    # and the scheme's own period, up to the zero-crossing interpolation (θ'' ≈ 0 at a crossing: error ≪ dt)
    assert abs(T_meas / T_scheme - 1.0) <= 1e-4


# ---------------------------------------------------------------------------------------------------------------
# 4. Pacejka / Nicolas–Comstock, by hand from thesis App. C
TABLE_C1 = dict(Bs=1 / 15, Cs=1.5, Ds=1.0, Es=0.3, Ks=100.0, Ba=8 / 75, Ca=1.5, Da=1.0, Ea=0.6, Ka=100.0)


def hand_pacejka(s: float, alpha: float, Vx: float, fz: float, mu: float, c: dict = TABLE_C1) -> tuple[float, float]:
    """(f_x, f_y) from eqs. C.13, C.14, C.18, C.16, C.17 as printed (Table C.1 coefficients unless ``c``)."""
    fxp = c["Ds"] * math.sin(c["Cs"] * math.atan(c["Bs"] * (1 - c["Es"]) * c["Ks"] * s
                                                 + c["Es"] * math.atan(c["Bs"] * c["Ks"] * s)))  # C.13, / f_z
    x = 2 * alpha / math.pi
    fyp = c["Da"] * math.sin(c["Ca"] * math.atan(c["Ba"] * (1 - c["Ea"]) * c["Ka"] * x
                                                 + c["Ea"] * math.atan(c["Ba"] * c["Ka"] * x)))  # C.14, / f_z
    ta = math.tan(alpha)
    if s == 0.0:  # C.18's 0/0 at s = 0: f'_x ≈ k_s s, k_s = D_s C_s B_s K_s (slope of C.13 at 0)
        ks = c["Ds"] * c["Cs"] * c["Bs"] * c["Ks"]
        F = ks * fyp / math.sqrt(fyp**2 + ks**2 * ta**2)
    elif alpha == 0.0:  # 0/0 at α = 0: f'_y ≈ k_α α, k_α = D_a C_a B_a K_a · 2/π (slope of C.14 at 0)
        ka = c["Da"] * c["Ca"] * c["Ba"] * c["Ka"] * 2 / math.pi
        F = fxp * ka / math.sqrt(s**2 * ka**2 + fxp**2)
    else:
        F = fxp * fyp / math.sqrt(s**2 * fyp**2 + fxp**2 * ta**2)  # C.18
    sgn = math.copysign(1.0, Vx)
    return sgn * mu * F * s * fz, -sgn * mu * F * ta * fz  # C.16, C.17


@pytest.mark.parametrize(("s", "alpha", "Vx", "fz"), [
    (0.1, 0.05, 2.0, 300.0),  # driving, drifting left: below both peaks
    (0.4, 0.3, 1.5, 150.0),  # s past the longitudinal peak (≈0.3)
    (-0.2, -0.1, 3.0, 500.0),  # braking, drifting right
    (0.15, 0.2, -1.0, 250.0),  # reversing: sgn(V_x) = −1
    (0.1, 0.0, 2.0, 300.0),  # pure longitudinal slip (α → 0 limit of C.18)
    (0.0, 0.2, 2.0, 300.0),  # pure lateral slip (s → 0 limit of C.18)
])
def test_pacejka_nicolas_comstock_point_values(s, alpha, Vx, fz):
    """Inputs from (s, α, V_x) by inverting C.10–C.12: v_x = −s V_x, v_y = V_x tan α, Rω = V_x − v_x; normal
    force f_z = −kp Δz − kd v_z (C.3) with v_z = 0.1 m/s.  The model's default coefficients must be Table C.1.
    v_eps (the |V_x| regularization) is set negligible so the printed equations apply; rtol 1e-9 is rounding."""
    kp, kd, mu, vz = 2.0e4, 1.0e3, 0.8, 0.1
    model = PacejkaContact(kp=kp, kd=kd, mu=mu, v_eps=1e-9)
    vx, vy = -s * Vx, Vx * math.tan(alpha)
    dz = -(fz + kd * vz) / kp
    f, *_ = model.evaluate(np.array([[vx, vy, vz]]), np.array([Vx - vx]), np.array([dz]))
    fx, fy = hand_pacejka(s, alpha, Vx, fz, mu)
    np.testing.assert_allclose(f[0], [fx, fy, fz], rtol=1e-9, atol=1e-9 * fz)
    # friction opposes the slip velocity (dissipative), and the combined force respects μ f_z
    assert fx * vx + fy * vy <= 0.0
    assert math.hypot(fx, fy) <= mu * fz * (1 + 1e-12)


@pytest.mark.parametrize(("Cs", "Ca"), [(1.3, 1.9), (1.65, 1.5), (1.5, 1.2)])
def test_pacejka_other_shape_factors(Cs, Ca):
    """Shape factors C other than Table C.1's 3/2 (for which the kernel's sin/cos of C·atan(u) come from the
    half-angle identities, not from trigonometric calls) against the printed equations by hand."""
    c = dict(TABLE_C1, Cs=Cs, Ca=Ca)
    kp, mu, Vx, fz = 2.0e4, 0.9, 2.0, 300.0
    model = PacejkaContact(kp=kp, kd=0.0, mu=mu, v_eps=1e-9, Cs=Cs, Ca=Ca)
    for s, alpha in ((0.1, 0.05), (0.45, 0.3), (-0.2, -0.4), (0.02, 0.6)):
        vx, vy = -s * Vx, Vx * math.tan(alpha)
        f, *_ = model.evaluate(np.array([[vx, vy, 0.0]]), np.array([Vx - vx]), np.array([-fz / kp]))
        np.testing.assert_allclose(f[0, :2], hand_pacejka(s, alpha, Vx, fz, mu, c), rtol=1e-9, atol=1e-9 * fz)


@pytest.mark.parametrize(("s", "alpha"), [(-0.2, 0.1), (0.25, -0.15)])
def test_pacejka_opposite_sign_slips_take_the_magnitude_of_c18(s, alpha):
    """With s and α of opposite signs C.18 as printed gives F < 0, which would push the wheel along its slip;
    the model takes |F| (the thesis author's code; PacejkaContact's docstring): the magnitudes are C.16–C.18's
    and each component opposes its slip velocity."""
    fz, Vx, mu, kp = 400.0, 2.0, 1.0, 2.0e4
    vx, vy = -s * Vx, Vx * math.tan(alpha)
    f, *_ = PacejkaContact(kp=kp, kd=0.0, mu=mu, v_eps=1e-9).evaluate(
        np.array([[vx, vy, 0.0]]), np.array([Vx - vx]), np.array([-fz / kp]))
    fx, fy = hand_pacejka(s, alpha, Vx, fz, mu)
    assert fx * vx > 0.0  # the printed formula's sign is unphysical here
    np.testing.assert_allclose(np.abs(f[0, :2]), np.abs([fx, fy]), rtol=1e-9)
    assert f[0, 0] * vx < 0.0 and f[0, 1] * vy < 0.0
