"""Kinematic motion prediction (thesis §2.2.4–2.3) against closed forms and invariants."""

import numpy as np
import pytest
from shared_paths import TERRAINS

from wmr_dynamics import ModelError, TerrainError, load_model
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.kinematics import (
    actuated_indices,
    actuation_kinematics,
    evaluate,
    initialize_contact,
    solve_velocity,
)
from wmr_dynamics.kinematics.dae import solve_velocity_limited
from wmr_dynamics.kinematics.enhanced import SlipParams, composite_inertia
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import HeightGrid, Plane, load_wmrde_grid

ZOE_TERRAINS = [TERRAINS / f"zoe_rough_{k}.txt" for k in range(1, 11)]


# ---- contact initialization (§2.2.4) ------------------------------------------------------------------
@pytest.fixture(scope="module")
def zoe_grids():
    return [load_wmrde_grid(p) for p in ZOE_TERRAINS]


@pytest.mark.parametrize("name", ["rocky7", "zoe", "eldorado2", "pvc_tricycle"])
def test_contact_initialization_puts_every_wheel_on_the_ten_rough_terrains(name, zoe_grids):
    model = load_model(name)
    grids = zoe_grids + ([load_wmrde_grid(TERRAINS / "rocky_rough_0.txt")] if name == "rocky7" else [])
    for grid in grids:
        for x in (0.0, 4.0):
            q0 = model.state(xyz=(x, 0.5, 1.0), rpy=(0, 0, 0.3))
            q = initialize_contact(model, q0, grid)
            ks = evaluate(model, q, grid)
            assert np.abs(ks.contacts.dz).max() < 1e-3
            assert np.abs(ks.c_joint).max(initial=0.0) < 1e-3
            # the fixed states stayed fixed: x, y, yaw and actuated joints
            np.testing.assert_allclose(q[4:6], q0[4:6])
            assert (q[7:][model.actuated[1:]] == q0[7:][model.actuated[1:]]).all()
            wheels = model.wheel_frame - 1
            np.testing.assert_array_equal(q[7:][wheels], q0[7:][wheels])


@pytest.mark.parametrize("name", ["landtamer", "recbot", "crusher"])
def test_contact_initialization_of_overconstrained_vehicles_is_a_least_squares_optimum(name, zoe_grids):
    # More wheels than free states (rigid chassis): no pose touches every wheel; the result must be a local
    # minimum of L = ‖[Δz; c]‖² (eq. 2.28): random small moves of the free states do not lower it.
    model = load_model(name)
    grid = zoe_grids[0]
    q = initialize_contact(model, model.state(xyz=(2.0, 0.0, 1.5)), grid)

    def cost(state):
        ks = evaluate(model, state, grid)
        return ks.contacts.dz @ ks.contacts.dz + ks.c_joint @ ks.c_joint

    best = cost(q)
    rng = np.random.default_rng(0)
    passive = ~model.actuated.copy()
    passive[model.wheel_frame] = False
    free = [6] + [7 + j for j in np.flatnonzero(passive[1:])]
    for _ in range(20):
        trial = q.copy()
        trial[free] += rng.normal(scale=1e-3, size=len(free))
        assert cost(trial) >= best - 1e-9


# ---- stabilized DAE (§2.2.5) ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["rocky7", "landtamer", "zoe", "crusher", "recbot", "eldorado2", "pvc_tricycle"])
def test_straight_driving_on_flat_ground_has_zero_slip(name):
    model = load_model(name)
    r = Simulator(model, Plane(), dt=0.04).run(3.0, (0.5, 0.0), progress=False)
    assert r.contact_speed.max() < 1e-6
    np.testing.assert_allclose(r.q[-1, 4] - r.q[0, 4], 1.5, atol=1e-6)  # 0.5 m/s for 3 s
    assert abs(r.q[-1, 5] - r.q[0, 5]) < 1e-9 and np.abs(r.rpy()[:, 2]).max() < 1e-9


def test_skid_steer_turn_matches_the_closed_form_least_squares_yaw_rate():
    # LandTamer (Table E.1), six fixed wheels at x ∈ {l, 0, −l}, y = ±w.  Wheel rates give wheel speeds u_i.
    # Least squares over (v_x, v_y, ω_z) of the no-slip rows  v_x − ω y_i = u_i,  v_y + ω x_i = 0  gives
    #   v_x = mean(u), v_y = 0, ω = Σ(−y_i u_i) / (Σ y_i² + Σ x_i²).
    model = load_model("landtamer")
    l, w, r = 1.0668, 0.81915, 0.4191
    u_left, u_right = 0.4, 1.2
    rates = {n: (u_left if n.endswith("L") else u_right) / r for n in model.wheel_names}
    order = np.array([rates[n] for n in model.wheel_names])
    x = np.array([l, l, 0, 0, -l, -l])
    y = np.array([w, -w, w, -w, w, -w])
    u = np.array([u_left if yy > 0 else u_right for yy in y])
    omega_lsq = (-y @ u) / (y @ y + x @ x)
    sim = Simulator(model, Plane(), dt=0.02, controller=lambda q, T, v, om: order)
    res = sim.run(2.0, (0.0, 0.0), progress=False)
    np.testing.assert_allclose(res.qvel[:, 2], omega_lsq, atol=1e-9)
    np.testing.assert_allclose(res.qvel[:, 3], u.mean(), atol=1e-9)
    np.testing.assert_allclose(res.qvel[:, 4], 0.0, atol=1e-9)


def test_rk4_is_more_accurate_than_euler_on_a_skid_steer_circle():
    model = load_model("landtamer")
    r = 0.4191
    rates = np.array([0.6 if n.endswith("L") else 1.4 for n in model.wheel_names]) / r

    def final_error(integrator, dt):
        sim = Simulator(model, Plane(), dt=dt, integrator=integrator, controller=lambda q, T, v, om: rates)
        res = sim.run(4.0, (0.0, 0.0), progress=False)
        v, om = res.qvel[0, 3], res.qvel[0, 2]  # constant on flat ground
        T = res.t[-1]
        x0, y0 = res.q[0, 4:6]
        exact = np.array([x0 + v / om * np.sin(om * T), y0 + v / om * (1 - np.cos(om * T))])
        return np.linalg.norm(res.q[-1, 4:6] - exact)

    e_euler, e_rk4 = final_error("euler", 0.1), final_error("rk4", 0.1)
    assert e_rk4 < 1e-5 < e_euler
    assert final_error("euler", 0.05) == pytest.approx(e_euler / 2, rel=0.1)  # first order


def test_rocky7_keeps_all_six_wheels_in_contact_on_rough_terrain():
    model = load_model("rocky7")
    grid = load_wmrde_grid(TERRAINS / "rocky_rough_0.txt")
    res = Simulator(model, grid, dt=0.04).run(10.0, (0.5, 0.0), progress=False)
    assert np.abs(res.dz).max() < 0.02
    assert res.summary()["contact_fraction"] == 1.0
    assert res.q[-1, 4] - res.q[0, 4] > 4.0  # it drove across


# RecBot's steering limit (±0.6 rad) bounds the feasible yaw rate at 0.6 m/s to about 0.17 rad/s.
@pytest.mark.parametrize("name, omega", [("recbot", 0.15), ("recbot", -0.15), ("zoe", 0.3), ("zoe", -0.2)])
def test_steered_vehicles_follow_the_commanded_yaw_rate_without_slip(name, omega):
    model = load_model(name)
    res = Simulator(model, Plane(), dt=0.02).run(10.0, (0.6, omega), progress=False)
    late = slice(-100, None)
    np.testing.assert_allclose(res.qvel[late, 2], omega, atol=2e-3)
    np.testing.assert_allclose(res.qvel[late, 3], 0.6, atol=2e-3)
    assert res.contact_speed[late].max() < 2e-3


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_a_turn_tighter_than_the_steering_limits_holds_the_passive_axles_at_their_limit(engine):
    # Zoë at 0.14 m/s, 0.54 rad/s asks for ~75° of axle steer; its axles stop at ±0.6 rad (URDF).  The dynamic
    # model has no joint stops, so the controller must not wind a passive axle past its limit (it did, and
    # rollouts on rough terrain tipped over).
    model = load_model("zoe")
    sim = Simulator(model, Plane(), mode="dynamic", dt=0.04, engine=engine)
    res = sim.run(4.0, (0.14, 0.54), progress=False)
    steer = [7 + model.joint_index(j) for j in ("s1_joint", "s2_joint")]
    limit = model.joint_upper[[s - 6 for s in steer]]
    np.testing.assert_allclose(limit, 0.6)
    # (the axles are steered by wheel-speed differences against slip forces: they settle near, not at, the
    # limit — without the clamp they wound to 1.3 rad)
    assert np.abs(res.q[:, steer]).max() < 0.6 + 0.1
    assert np.abs(res.q[-1, steer]).min() > 0.6 - 0.1  # it does steer about as far as it can
    assert res.qvel[-25:, 2].mean() > 0.1  # and turns left

def test_actuation_kinematics_gives_ackermann_wheel_rates_and_inverts_navigation():
    # RecBot with its front wheels steered to the Ackermann angles for (v, ω) about the rear-axle centre (the
    # body origin): the inverse kinematics is consistent (zero residual), its rear wheel rates are the
    # closed form (v − ω y) / r, and navigation kinematics driven by its actuated rates reproduces (v, ω).
    model = load_model("recbot")
    v, omega, l, w1, w2, r_rear = 0.8, 0.25, 1.770, 0.635, 0.610, 12 * 0.0254
    steer = {"steerL_joint": np.arctan(l * omega / (v - omega * w1)),
             "steerR_joint": np.arctan(l * omega / (v + omega * w1))}
    q = initialize_contact(model, model.state(xyz=(0, 0, 1.0), joints=steer), Plane())
    ks = evaluate(model, q, Plane())
    inv = actuation_kinematics(model, ks, v=v, omega=omega, sigma=25.0)
    # (RecBot stands pitched by 1.6° — its front wheels are smaller — so "flat-ground" Ackermann is off by ~1e-4)
    assert np.abs(inv.residual).max() < 2e-4
    assert inv.qvel[5 + model.frame_index("BL")] == pytest.approx((v - omega * w2) / r_rear, rel=1e-3)
    assert inv.qvel[5 + model.frame_index("BR")] == pytest.approx((v + omega * w2) / r_rear, rel=1e-3)
    act = actuated_indices(model)
    nav = solve_velocity(model, ks, act, inv.qvel[act], sigma=25.0)
    np.testing.assert_allclose(nav.qvel, inv.qvel, atol=2e-4)
    assert nav.qvel[2] == pytest.approx(omega, abs=1e-4) and nav.qvel[3] == pytest.approx(v, abs=1e-4)


# ---- enhanced kinematics (§2.3) --------------------------------------------------------------------------------
def _body_slip_at_the_contacts(model, ks, qvel, p2, p6):
    """Tangential contact-point slip (nw, 2) m/s of the body slip of eqs. 2.48–2.50 with only p2 (rolling
    resistance) and p6 (angular slip) nonzero, written out with rigid-body kinematics (no library slip code, no
    wheel Jacobians).  qvel: the plain DAE solution [ω_b; v_b; θ̇] (body coordinates)."""
    T = ks.T_world
    R_wb, p_b = T[0, :3, :3], T[0, :3, 3]
    # whole-vehicle centre of mass c in body coordinates
    coms = np.einsum("nij,nj->ni", T[:, :3, :3], model.com) + T[:, :3, 3]
    c = R_wb.T @ ((model.mass[:, None] * coms).sum(0) / model.mass.sum() - p_b)
    w_b, v_b = qvel[:3], qvel[3:6]
    V_lon = (v_b + np.cross(w_b, c))[0]  # eq. 2.45: forward velocity of the cg (lon = body x)
    V_ang = w_b[2]  # yaw rate (ang = body z)
    w_s = np.array([0.0, 0.0, p6 * V_ang])  # eq. 2.49
    v_s = np.array([p2 * V_lon, 0.0, 0.0])  # eq. 2.48, at the cg
    v_bs = v_s - np.cross(w_s, c)  # eq. 2.50: the same rigid motion seen at the body origin
    slip = np.empty((model.num_wheels, 2))
    for w, (r, C) in enumerate(zip(ks.contacts.points, ks.contacts.frames, strict=True)):
        u = v_bs + np.cross(w_s, R_wb.T @ (r - p_b))  # slip velocity of the contact point, body coordinates
        slip[w] = (C.T @ R_wb @ u)[:2]  # eq. 2.52: its longitudinal and lateral parts in the contact frame
    return slip


def test_enhanced_path_applies_the_body_slip_of_eqs_2_48_to_2_52_on_rough_terrain():
    """Rocky 7 turning on a thesis rough terrain with rolling resistance p2 and angular slip p6 (the terms of
    eqs. 2.48–2.49 that need no force model).  Oracle at states along the run: the body slip written out in
    :func:`_body_slip_at_the_contacts`, then the DAE solve (eq. 2.38) given those contact slips; the enhanced
    Simulator must return that q̇'.  Skipping the slip (the p = 0 short cut) or getting it wrong moves q̇' by
    about |p|·v, far above the tolerance; over the run the rover covers about (1 + p2) of the plain distance."""
    p2, p6, v, omega, dt = -0.2, -0.3, 0.5, 0.15, 0.04
    model = load_model("rocky7")
    grid = load_wmrde_grid(TERRAINS / "rocky_rough_0.txt")
    ctrl = BodyVelocityController(model)
    plain = Simulator(model, grid, dt=dt, controller=ctrl, engine="python")
    enhanced = Simulator(model, grid, dt=dt, controller=ctrl, mode="enhanced", slip=SlipParams(p=(0, p2, 0, 0, 0, p6)))
    assert enhanced.engine_used == "compiled"  # enhanced kinematics runs on the compiled engine
    run = enhanced.run(3.0, (v, omega), progress=False)
    base = plain.run(3.0, (v, omega), progress=False)
    known = actuated_indices(model)
    for q in run.q[::15]:
        ks = evaluate(model, q, grid)
        q_plain = plain.velocity(q, v, omega).qvel
        slip = _body_slip_at_the_contacts(model, ks, q_plain, p2, p6)
        expected = solve_velocity_limited(model, ks, known, ctrl(q, ks.T_world, v, omega), 1.0 / dt, slip_xy=slip)
        got = enhanced.velocity(q, v, omega).qvel
        np.testing.assert_allclose(got, expected.qvel, rtol=0, atol=1e-9)
        assert np.abs(got[:6] - q_plain[:6]).max() > 0.2 * abs(p2) * v  # the slip really changed the motion
    # the whole run: rolling resistance p2 < 0 shortens the path by about |p2| (eq. 2.48: v_slip = p2 V_lon)
    dist = [np.linalg.norm(np.diff(r.q[:, 4:6], axis=0), axis=1).sum() for r in (run, base)]
    assert dist[0] / dist[1] == pytest.approx(1.0 + p2, abs=0.05)


def test_rolling_resistance_p2_scales_forward_speed():
    # eq. 2.48: v_slip,lon = p2 V_lon on flat ground → the body moves at (1 + p2) v (eq. 2.52 keeps contact).
    model = load_model("landtamer")
    sim = Simulator(model, Plane(), dt=0.05, mode="enhanced", slip=SlipParams(p=(0, -0.2, 0, 0, 0, 0)))
    res = sim.run(2.0, (1.0, 0.0), progress=False)
    assert res.q[-1, 4] - res.q[0, 4] == pytest.approx(0.8 * 2.0, rel=1e-6)


def test_angular_slip_p6_scales_skid_steer_yaw_rate():
    model = load_model("landtamer")
    rates = np.array([0.4 if n.endswith("L") else 1.2 for n in model.wheel_names]) / 0.4191
    ctl = lambda q, T, v, om: rates  # noqa: E731
    plain = Simulator(model, Plane(), dt=0.05, controller=ctl).run(1.0, (0, 0), progress=False)
    slip = Simulator(model, Plane(), dt=0.05, controller=ctl, mode="enhanced",
                     slip=SlipParams(p=(0, 0, 0, 0, 0, -0.3))).run(1.0, (0, 0), progress=False)
    # eq. 2.49: ω_slip = p6 V_ang; the yaw rate about the cg frame's z equals the body's
    np.testing.assert_allclose(slip.qvel[:-1, 2], 0.7 * plain.qvel[:-1, 2], rtol=1e-6)


def test_lateral_slip_p3_on_a_side_slope():
    # eq. 2.48 lateral term: v_slip,lat = p3 (f_lat / f_z) V_lon; at rest-like speed f is gravity:
    # on a side slope rolled by φ, gravity in body axes is g (0, sin φ·(−1)·(−1)…) — computed here directly.
    phi, p3, v = np.radians(10.0), 0.5, 1.0
    ground = Plane(normal=(0.0, -np.sin(phi), np.cos(phi)))  # rises towards +y: the vehicle rolls by +φ
    model = load_model("landtamer")
    sim = Simulator(model, ground, dt=0.05, mode="enhanced", slip=SlipParams(p=(0, 0, p3, 0, 0, 0)))
    q0 = sim.initial_state(xyz=(0.0, 0.0))
    info = sim.velocity(q0, v, 0.0)
    R = evaluate(model, q0, ground).T_world[0, :3, :3]
    g_body = R.T @ np.array([0.0, 0.0, -9.81])
    np.testing.assert_allclose(info.qvel[4], p3 * (g_body[1] / g_body[2]) * v, rtol=1e-3)
    assert abs(info.qvel[4]) > 0.05  # the slip is really there (downhill)


def _first_velocity_on_slope(normal, p, v=1.0):
    """q̇' of the enhanced model at its initial state on a plane, and gravity in body axes (the body force of
    eq. 2.44 at the first step, where the nominal motion is a pure forward speed v)."""
    ground = Plane(normal=normal)
    model = load_model("landtamer")
    sim = Simulator(model, ground, dt=0.05, mode="enhanced", slip=SlipParams(p=p))
    q0 = sim.initial_state(xyz=(0.0, 0.0))
    info = sim.velocity(q0, v, 0.0)
    R = evaluate(model, q0, ground).T_world[0, :3, :3]
    return info.qvel, R.T @ np.array([0.0, 0.0, -9.81])


def test_longitudinal_slip_p1_on_an_uphill_slope():
    # eq. 2.48: v_slip,lon = p1 (f_lon / f_z) V_lon, f = gravity in body axes at the first step (f_z < 0, so
    # a negative p1 makes the rover lose speed uphill)
    th, p1, v = np.radians(15.0), -0.4, 1.0
    qvel, g = _first_velocity_on_slope((-np.sin(th), 0.0, np.cos(th)), (p1, 0, 0, 0, 0, 0), v)
    assert g[0] < 0  # really uphill
    np.testing.assert_allclose(qvel[3], v + p1 * (g[0] / g[2]) * v, rtol=1e-3)
    assert qvel[3] < 0.95 * v


def test_understeer_p4_and_asymmetry_p5_turn_a_straight_command():
    # eq. 2.49: ω_slip = p4 (f_lat / f_z) V_lon + p5 V_lon: on a side slope p4 yaws the rover by the lateral
    # force; p5 (left/right rolling-resistance asymmetry) yaws it even on flat ground
    phi, p4, p5, v = np.radians(10.0), 0.3, 0.05, 1.0
    qvel, g = _first_velocity_on_slope((0.0, -np.sin(phi), np.cos(phi)), (0, 0, 0, p4, 0, 0), v)
    np.testing.assert_allclose(qvel[2], p4 * (g[1] / g[2]) * v, rtol=1e-3)
    assert abs(qvel[2]) > 0.01
    qvel, _ = _first_velocity_on_slope((0.0, 0.0, 1.0), (0, 0, 0, 0, p5, 0), v)
    np.testing.assert_allclose(qvel[2], p5 * v, rtol=1e-3)


def test_rollover_margin_on_a_side_slope_matches_the_static_tipping_condition():
    # Static vehicle on a slope rolled by φ: the gravity line from the cg meets the ground h·tan φ from the
    # point below the cg, so margin = w − h tan φ (w: half track, h: cg height above the ground plane).
    model = load_model("landtamer")
    w = 0.81915
    for phi_deg in (10.0, 30.0, 50.0):
        phi = np.radians(phi_deg)
        ground = Plane(normal=(0.0, -np.sin(phi), np.cos(phi)))
        sim = Simulator(model, ground, dt=0.05)
        q = sim.initial_state(xyz=(0.0, 0.0))
        ks = evaluate(model, q, ground)
        _, com, _ = composite_inertia(model, ks.T_world)
        cg = ks.T_world[0, :3, :3] @ com + ks.T_world[0, :3, 3]
        h = (cg - ks.contacts.points.mean(0)) @ ground.unit_normal
        margin = sim.velocity(q, 0.0, 0.0).rollover_margin
        assert margin == pytest.approx(w - h * np.tan(phi), abs=2e-3)
        assert (margin > 0) == (phi_deg < np.degrees(np.arctan(w / h)))


# ---- bad input -------------------------------------------------------------------------------------------------
def test_nan_or_inf_command_raises_a_clear_error():
    sim = Simulator(load_model("zoe"), Plane(), dt=0.05)
    with pytest.raises(ModelError, match="command: non-finite value nan at index 0"):
        sim.run(1.0, (np.nan, 0.0))
    with pytest.raises(ModelError, match="not finite"):
        sim.run(1.0, lambda t: (0.5, np.inf if t > 0.3 else 0.0))
    with pytest.raises(ModelError, match="velocity command must be finite"):
        BodyVelocityController(load_model("zoe"))(sim.initial_state(), evaluate(sim.model, sim.initial_state(),
                                                                               Plane()).T_world, np.nan, 0.0)


def test_terrain_hole_raises_a_clear_error_not_a_nan_state():
    heights = np.zeros((40, 40))
    heights[20, 25] = np.nan
    with pytest.raises(TerrainError, match="NaN"):
        HeightGrid(-2.0, -2.0, 0.2, 0.2, heights)


@pytest.mark.parametrize("kwargs, match", [({"dt": 0.0}, "dt must be"), ({"mode": "quantum"}, "mode 'quantum'"),
                                           ({"integrator": "rk2"}, "integrator"), ({"baumgarte": 100.0}, "baumgarte")])
def test_bad_simulator_arguments(kwargs, match):
    args = {"dt": 0.04} | kwargs
    with pytest.raises(ModelError, match=match):
        Simulator(load_model("zoe"), Plane(), **args)


def test_navigation_kinematics_with_a_gyro_uses_the_measured_yaw_rate():
    # Skid-steer odometry: with the encoders alone the yaw rate is the least-squares one (it underestimates a
    # skidding turn); with a gyro the measured angular velocity is used as known (eq. 2.37).
    from wmr_dynamics.kinematics import navigation_kinematics

    model = load_model("landtamer")
    q = initialize_contact(model, model.state(xyz=(0, 0, 1.0)), Plane())
    ks = evaluate(model, q, Plane())
    rates = np.array([0.5 if n.endswith("L") else 1.5 for n in model.wheel_names]) / 0.4191
    enc = navigation_kinematics(model, ks, rates, sigma=25.0)
    gyro = navigation_kinematics(model, ks, rates, sigma=25.0, gyro=(0.0, 0.0, 0.9))
    assert gyro.qvel[2] == 0.9 and enc.qvel[2] < 0.9
    assert gyro.qvel[3] == pytest.approx(1.0, abs=1e-9) and enc.qvel[3] == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ModelError, match="expected 6 actuated joint rates"):
        navigation_kinematics(model, ks, rates[:3], sigma=25.0)


@pytest.mark.parametrize("lift", [0.0, 0.03])
def test_solve_velocity_is_the_least_squares_solution_of_the_weighted_system(lift):
    """Oracle: the normal equations of eq. 2.38.  With the known part of q̇' held at its values, the residual
    r = W (A q̇' − v) of the least-squares solve is orthogonal to every unknown column of W A (W: the contact
    set's row weights); with a wheel lifted (``lift`` m) its rows are weighted down and it still holds."""
    from wmr_dynamics.kinematics.dae import contact_rows

    model = load_model("rocky7")
    grid = load_wmrde_grid(TERRAINS / "rocky_rough_0.txt")
    q = initialize_contact(model, model.state(xyz=(1.0, 0.5, 1.0), rpy=(0.0, 0.0, 0.3)), grid)
    q[6] += lift
    q[4] += 0.02  # off the initialized pose: the contact rows are not all consistent
    ks = evaluate(model, q, grid)
    known = actuated_indices(model)
    values = np.random.default_rng(4).uniform(-1.0, 1.0, known.size)
    contact = contact_rows(ks)
    assert lift == 0.0 or not contact.in_contact.all()
    for sol in (solve_velocity(model, ks, known, values, 25.0, contact=contact),
                solve_velocity_limited(model, ks, known, values, 25.0, max_rounds=0, contact=contact)):
        nw = model.num_wheels
        wt = np.ones(ks.A.shape[0])
        wt[0:3 * nw:3] = wt[1:3 * nw:3] = contact.weight[:, 0]
        wt[2:3 * nw:3] = contact.weight[:, 1]
        unknown = np.setdiff1d(np.arange(model.num_dof), known)
        np.testing.assert_array_equal(sol.qvel[known], values)
        assert np.abs(sol.residual).max() > 1e-3  # an inconsistent system: the orthogonality is not trivial
        np.testing.assert_allclose((ks.A * wt[:, None])[:, unknown].T @ sol.residual, 0.0, atol=1e-9)
        np.testing.assert_allclose(sol.v_contact, (ks.A_wheel @ sol.qvel).reshape(nw, 3), atol=1e-12)


def test_solve_velocity_names_bad_known_sets():
    model = load_model("rocky7")
    ks = evaluate(model, model.state(xyz=(0.0, 0.0, 0.3)), Plane())
    with pytest.raises(ModelError, match="known: joint-space indices"):
        solve_velocity(model, ks, [model.num_dof], [0.0], 25.0)
    with pytest.raises(ModelError, match="max_rounds"):
        solve_velocity_limited(model, ks, [3], [0.1], 25.0, max_rounds=-1)


@pytest.mark.parametrize("phi_deg, tips", [(20.0, False), (50.0, True)])
def test_a_compiled_kinematic_run_reports_the_rollover_margin_and_a_predicted_tip_over(phi_deg, tips):
    """The compiled kinematic step skips the margin; run() fills it in: on a side slope it is the static
    tipping condition w − h tan φ, and past the tipping angle the summary predicts the tip-over the
    kinematic model itself (wheels held on the ground) cannot show."""
    model = load_model("landtamer")
    phi = np.radians(phi_deg)
    ground = Plane(normal=(0.0, -np.sin(phi), np.cos(phi)))
    sim = Simulator(model, ground, dt=0.05)
    assert sim.engine_used == "compiled"
    res = sim.run(1.0, (0.0, 0.0))
    q = res.q[0]
    ks = evaluate(model, q, ground)
    _, com, _ = composite_inertia(model, ks.T_world)
    cg = ks.T_world[0, :3, :3] @ com + ks.T_world[0, :3, 3]
    h = (cg - ks.contacts.points.mean(0)) @ ground.unit_normal
    s = res.summary()
    assert s["min_rollover_margin_m"] == pytest.approx(0.81915 - h * np.tan(phi), abs=3e-3)
    assert s["tip_over_predicted"] is tips and s["rolled_over"] is False


def test_driving_up_an_89_degree_wall_predicts_a_tip_over():
    """The reliability issue's example: the kinematic model drove up an 89° wall and reported no rollover."""
    a = np.radians(89.0)
    res = Simulator(load_model("landtamer"), Plane(normal=(-np.sin(a), 0.0, np.cos(a))), dt=0.04).run(2.0, (0.5, 0.0))
    s = res.summary()
    assert s["tip_over_predicted"] and s["min_rollover_margin_m"] < -1.0


def test_the_support_polygon_is_the_convex_hull_of_scipy():
    """The rollover margin's support polygon (Andrew's monotone chain into preallocated arrays) against qhull:
    the same vertices, counter-clockwise, for random contact sets of 3–12 wheels."""
    from scipy.spatial import ConvexHull

    from wmr_dynamics.kinematics.enhanced import _convex_hull

    rng = np.random.default_rng(7)
    for _ in range(200):
        pts = rng.normal(size=(int(rng.integers(3, 13)), 2))
        order, out = np.zeros(len(pts), dtype=np.int64), np.zeros((2 * len(pts), 2))
        k = _convex_hull(pts, order, out)
        ref = pts[ConvexHull(pts).vertices]  # counter-clockwise in 2-D
        assert k == len(ref)
        start = int(np.argmin(np.linalg.norm(ref - out[0], axis=1)))
        np.testing.assert_array_equal(out[:k], np.roll(ref, -start, axis=0))
