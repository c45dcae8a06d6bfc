"""Thesis §2.5.2–2.5.3 (LandTamer), qualitative.

The ramp (:mod:`wmr_dynamics.scenarios.landtamer_ramp`, the set-up of benchmarks/landtamer_ramp.py): the DAE /
force-balance dynamics and the stiff ODE agree (final position within 0.1 m, compared here on the first 5 s:
the acceleration and the climb), the wheels slip back down the slope going up the ramp (s > 0) and forward
going down (s < 0), and the middle wheels slide outward in both turns.
Extreme phenomena (:mod:`wmr_dynamics.scenarios.extreme_phenomena`, the set-up of
benchmarks/extreme_phenomena.py): past the critical slip the normalized longitudinal force falls (loss of
traction, μ = 0.6), yaw stability is lost in the fast turn, and a 7 rad/s turn at 5 m/s rolls the LandTamer
over with its cg raised to 1.25 m but not at the baseline 0.83 m.  No wall-clock times are asserted.
"""

import numpy as np
import pytest

from wmr_dynamics.scenarios import extreme_phenomena as xp
from wmr_dynamics.scenarios import landtamer_ramp as lr

LEFT, RIGHT = 0, 1
ML, MR = lr.MIDDLE_WHEELS


@pytest.fixture(scope="module")
def model():
    return lr.landtamer()


@pytest.fixture(scope="module")
def terrain():
    return lr.ramp_terrain()


@pytest.fixture(scope="module")
def ramp_run(model, terrain):
    """The full 20 s ramp scenario, DAE at Δt = 0.04 s (about 1 s of computing)."""
    res = lr.run_dae(model, terrain, lr.ramp_command, lr.DURATION, lr.DT)
    S, A = lr.dae_slips(model, terrain, res)
    return res, S, A


def test_ramp_is_traversed_between_2_and_10_s(ramp_run, terrain):
    res, _, _ = ramp_run
    t0, t1 = lr.ramp_contact_interval(res, terrain)
    assert 1.7 < t0 < 2.3 and 9.7 < t1 < 10.4
    assert res.q[:, 6].max() > 1.5 + 0.3  # the body frame rode over the 1.5 m plateau
    assert not res.rolled_over and np.all(np.isfinite(res.q))


def test_slip_ratio_positive_climbing_negative_descending(ramp_run):
    res, S, _ = ramp_run
    ph = lr.phases(res.t, res.q)
    assert ph["climb"].sum() > 20 and ph["descent"].sum() > 20  # ≥ 0.8 s on each slope
    assert np.all(S[ph["climb"]].mean(0) > 0.02)  # every wheel: slips back, in the direction of gravity
    assert np.all(S[ph["descent"]].mean(0) < -0.02)
    # SimResult reports the same quantity (at the step's end velocity): same signs
    assert np.all(res.slip_ratio[ph["climb"]].mean(0) > 0.02)
    assert np.all(res.slip_ratio[ph["descent"]].mean(0) < -0.02)


def test_middle_wheels_slide_outward_in_both_turns(ramp_run):
    res, _, A = ramp_run
    ph = lr.phases(res.t, res.q)
    # contact-frame y points left; a left turn's centre is on the left: outward = α < 0, and the reverse
    assert np.all(A[ph["left"]][:, [ML, MR]].mean(0) < -0.01)
    assert np.all(A[ph["right"]][:, [ML, MR]].mean(0) > 0.01)
    # the body itself drifts outward (v_y < 0 turning left, > 0 turning right)
    assert res.qvel[ph["left"], 4].mean() < -0.01 < 0.01 < res.qvel[ph["right"], 4].mean()


@pytest.fixture(scope="module")
def climb_pair(model, terrain):
    """DAE and stiff ODE (BDF, thesis tolerances) over the first 5 s: acceleration and the climb."""
    duration = 5.0
    dae = lr.run_dae(model, terrain, lr.ramp_command, duration, lr.DT)
    ode = lr.run_ode(model, terrain, lr.ramp_command, duration, "BDF", sample_dt=lr.DT)
    return dae, ode


def test_dae_and_stiff_ode_agree_on_the_climb(climb_pair, model, terrain):
    dae, ode = climb_pair
    np.testing.assert_allclose(ode.t, dae.t, atol=1e-9)
    assert dae.q[-1, 6] > 1.0  # well up the ramp
    assert np.linalg.norm(dae.q[-1, 4:6] - ode.q[-1, 4:6]) < 0.1  # m, horizontal
    assert abs(dae.q[-1, 6] - ode.q[-1, 6]) < 0.05
    ph = lr.phases(dae.t, dae.q)
    assert ph["climb"].sum() > 10
    assert np.all(ode.slip_ratio[ph["climb"]].mean(0) > 0.02)  # the ODE also slips back on the climb
    S, _ = lr.dae_slips(model, terrain, dae)
    assert np.abs(S[ph["climb"]].mean(0) - ode.slip_ratio[ph["climb"]].mean(0)).max() < 0.03


def test_stiff_ode_needs_small_steps(climb_pair):
    _, ode = climb_pair
    # solver work, not time: the adaptive stiff solver takes steps below the DAE's 0.04 s and evaluates its
    # right-hand side (one collision + dynamics evaluation each) many times per DAE step
    assert ode.step_times.size > 5.0 / lr.DT
    assert ode.result.n_rhs > 5 * (5.0 / lr.DT)


# ---- extreme phenomena -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def traction(model):
    return xp.run_traction(0.0), xp.run_traction(xp.TURN_RATE), xp.run_traction(xp.TURN_RATE, v_high=xp.V_LOW)


def test_force_falls_past_the_critical_slip(traction, model):
    straight, _, _ = traction
    crit = xp.critical_slip(xp.MU_LOW)
    assert 0.15 < crit["s_drive"] < 0.4 and crit["peak_drive"] == pytest.approx(0.96 * xp.MU_LOW, abs=0.02)
    m = xp.traction_metrics(straight, model)
    # the simulation reaches the model's peak, then goes far past the critical slip, where the force is lower
    assert m.peak_drive == pytest.approx(crit["peak_drive"], abs=0.02)
    assert m.max_s_drive > crit["s_drive"] + 0.3
    assert m.drop_drive > 0.15
    assert m.min_s_brake < crit["s_brake"] - 0.3 and m.drop_brake > 0.03
    # force balance satisfied the contact model at every step (thesis: cost minimized to zero)
    assert m.nonconverged == 0


def test_normalized_force_vs_slip_follows_the_model(traction):
    straight, _, _ = traction
    nx, _ = xp.normalized_force(straight)
    k = np.isfinite(nx[:-1]) & (np.abs(straight.slip_angle[:-1]) < 1e-3)
    s = straight.slip_ratio[:-1][k]
    np.testing.assert_allclose(nx[:-1][k], xp.model_curve(xp.MU_LOW, s), atol=2e-3)


def test_yaw_stability_lost_in_the_fast_turn(traction):
    _, fast, slow = traction
    yf, ys = xp.yaw_metrics(fast), xp.yaw_metrics(slow)
    assert yf.mean_rate_turning < 0.5 * xp.TURN_RATE  # far below the command while turning
    assert yf.max_sideslip > 30.0 > ys.max_sideslip  # sliding sideways
    assert yf.heading_change_after > 20.0  # keeps rotating after the command returned to 0
    assert abs(ys.heading_change_after) < 5.0  # the same turn at 0.5 m/s does not


@pytest.fixture(scope="module")
def rollover():
    return xp.run_rollover(None, duration=3.0), xp.run_rollover(xp.CG_RAISED, duration=3.0)


def test_raised_cg_rolls_over_baseline_does_not(rollover):
    base, raised = rollover
    mb = xp.rollover_metrics(base, lr.landtamer())
    mr = xp.rollover_metrics(raised, lr.landtamer(xp.CG_RAISED))
    assert lr.cg_height(lr.landtamer(), body_only=True) == pytest.approx(0.83, abs=0.01)
    assert lr.cg_height(lr.landtamer(xp.CG_RAISED), body_only=True) == pytest.approx(1.25, abs=1e-9)
    assert not base.rolled_over and raised.rolled_over
    # baseline: wheels lift off in the turn (zero normal force) but the body stays nearly level
    assert mb.lifted_turn and mb.max_tilt < 10.0
    assert any(mb.recontact.values())  # at least one lifted wheel lands again
    # raised: rolls outward (to the right in a left turn), pivoting last on the back right wheel
    assert mr.t_rollover is not None and xp.ROLL_TURN_AT < mr.t_rollover < 2.6
    assert mr.last_wheel == "BR"
    assert mr.nonconverged_before == 0


def test_radau_and_bdf_agree_and_a_failing_solver_is_a_model_error(model):
    """The stiff-ODE baseline with SciPy's other stiff solver: Radau and BDF predict the same 2 s of accelerating
    on flat ground (to the solvers' tolerances); a right-hand side that turns non-finite (here: a NaN command
    after 0.5 s) ends in a ModelError naming the solver, not a raw SciPy/NumPy error."""
    from wmr_dynamics.errors import ModelError
    from wmr_dynamics.terrain import Plane

    def command(t):
        return (1.0, 0.0)

    flat = Plane()
    runs = {m: lr.run_ode(model, flat, command, 2.0, m, slips=False) for m in ("BDF", "Radau")}
    qb, qr = runs["BDF"].result.q[-1], runs["Radau"].result.q[-1]
    assert qb[4] > 1.0  # accelerated towards 1 m/s
    assert np.linalg.norm(qb[4:7] - qr[4:7]) < 0.01
    with pytest.raises(ModelError, match="Radau"):
        lr.run_ode(model, flat, lambda t: (np.nan if t > 0.5 else 1.0, 0.0), 2.0, "Radau", slips=False)
