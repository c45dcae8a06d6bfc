"""Thesis Table 2.4 (§2.5.1): stabilized DAE vs. unconstrained kinematics with terrain fitting, against the thesis.

Rocky 7 driven straight, open loop, at 0.5 m/s for 10 s with the naive controller over two random rough terrains
(:mod:`wmr_dynamics.scenarios.table_2_4_rocky7`; the baseline's terrain fits:
:mod:`wmr_dynamics.kinematics.terrain_fit`).  The oracle is the thesis, not our own runs:

- Table 2.4 at Δt = 0.04 s (typed in below as ``TABLE_2_4``): mean contact-point speed ‖v_c‖, and the final
  position and yaw errors relative to the stabilized DAE at Δt = 0.01 s (the thesis's reference: "objectively
  more correct ... linearization errors are least for the smallest step size");
- its text: the DAE's mean ‖v_c‖ is "nearly 40% less" than the unconstrained method's; its position and yaw
  errors are "92% and 80% smaller"; the unconstrained method "incorrectly predicted that the rover drove
  straight as commanded" while the DAE "correctly predicts deviation"; the DAE is ≥ 10× cheaper than
  terrain fitting with ``fminsearch``, and with a Newton fit "Newton's method would usually converge in 1-2
  steps".

Two terrains are a small sample of the thesis's ten: a Table 2.4 figure is matched within a stated tolerance,
and each ratio claim with a margin (the constants below say which).  Costs are counted in collision
evaluations, not wall-clock time.  Closed forms where they exist: the unconstrained method, commanded straight
with zero angular velocity and its yaw kept, drives exactly straight.
"""

import numpy as np
import pytest

from wmr_dynamics import spatial
from wmr_dynamics.kinematics import euler_step, evaluate
from wmr_dynamics.kinematics.terrain_fit import implied_velocity, unconstrained_states
from wmr_dynamics.scenarios import table_2_4_rocky7 as t24

# Thesis Table 2.4, Δt = 0.04 s (10 terrains): mean ‖v_c‖ (m/s), pos. err. (m), yaw err. (rad) vs the DAE at 0.01 s
TABLE_2_4 = {"dae": (0.0721, 0.0412, 0.0268), "unc": (0.1158, 0.5199, 0.1367)}
UNC_VC_TOL = 0.10  # relative: the unconstrained method's ‖v_c‖ does not depend on our DAE; 2 of 10 terrains
DAE_VC_TOL = 0.30  # relative: our DAE runs σ = 1/Δt, the thesis's wmrde σ = 10/s (docs/table_2_4.md), 2 terrains
VC_RATIO = 0.85  # DAE / unconstrained mean ‖v_c‖ at most this (thesis 0.0721 / 0.1158 = 0.62, "nearly 40% less")
POS_RATIO, YAW_RATIO = 0.2, 0.5  # DAE / unconstrained errors at most these (thesis: 92% / 80% smaller = 0.08 / 0.2)

SEEDS = (0, 1)
DT = 0.04


@pytest.fixture(scope="module")
def model():
    return t24.rocky7_model()


@pytest.fixture(scope="module")
def runs(model):
    """Per terrain: (DAE at 0.04 s, unconstrained with the Newton fit at 0.04 s, DAE at 0.01 s = the reference)."""
    out = []
    for seed in SEEDS:
        terrain = t24.make_terrain(seed)
        q0 = t24.initial_state(model, terrain)
        out.append((t24.run_dae(model, terrain, DT, q0, seed), t24.run_unconstrained(model, terrain, DT, q0, seed),
                    t24.run_dae(model, terrain, 0.01, q0, seed)))
    return out


def final_errors(run, ref):
    """(final position error m, |final yaw error| rad) of a run relative to the reference run."""
    pos = float(np.linalg.norm(run.q[-1, 4:7] - ref.q[-1, 4:7]))
    yaw = abs(float((run.yaw - ref.yaw + np.pi) % (2 * np.pi) - np.pi))
    return pos, yaw


def test_both_methods_start_together_and_run_ten_seconds(runs):
    for dae, unc, ref in runs:
        assert dae.steps == unc.steps == 250 and ref.steps == 1000
        np.testing.assert_array_equal(dae.q[0], unc.q[0])
        np.testing.assert_array_equal(dae.q[0], ref.q[0])
        assert np.all(np.isfinite(dae.q)) and np.all(np.isfinite(unc.q)) and np.all(np.isfinite(ref.q))
        assert dae.contact_speed.shape == unc.contact_speed.shape == (250, 6)


def test_mean_contact_point_speeds_match_table_2_4(runs):
    dae = np.mean([d.contact_speed.mean() for d, _, _ in runs])
    unc = np.mean([u.contact_speed.mean() for _, u, _ in runs])
    assert unc == pytest.approx(TABLE_2_4["unc"][0], rel=UNC_VC_TOL)
    assert dae == pytest.approx(TABLE_2_4["dae"][0], rel=DAE_VC_TOL)


def test_the_dae_slips_less_than_terrain_fitting(runs):
    """Thesis: "the mean contact point velocity using our DAE method is nearly 40% less" (Δt = 0.04 s)."""
    for dae, unc, _ in runs:
        assert dae.contact_speed.mean() < unc.contact_speed.mean()
    dae = np.mean([d.contact_speed.mean() for d, _, _ in runs])
    unc = np.mean([u.contact_speed.mean() for _, u, _ in runs])
    assert dae < VC_RATIO * unc


def test_final_errors_relative_to_the_dae_at_the_smallest_step_match_table_2_4(runs):
    errs = {"dae": np.mean([final_errors(d, ref) for d, _, ref in runs], axis=0),
            "unc": np.mean([final_errors(u, ref) for _, u, ref in runs], axis=0)}
    # the unconstrained method misses a deviation of the thesis's size (0.52 m, 0.137 rad) ...
    assert errs["unc"][0] > 0.5 * TABLE_2_4["unc"][1]
    # ... while the DAE's own step-size error at 0.04 s stays within the thesis's (0.041 m, 0.027 rad) ...
    assert errs["dae"][0] < 1.5 * TABLE_2_4["dae"][1] and errs["dae"][1] < 1.5 * TABLE_2_4["dae"][2]
    # ... "92% and 80% smaller" than the unconstrained method's
    assert errs["dae"][0] < POS_RATIO * errs["unc"][0]
    assert errs["dae"][1] < YAW_RATIO * errs["unc"][1]


def test_dae_deviates_while_terrain_fitting_drives_straight_as_commanded(runs):
    for dae, unc, _ in runs:
        assert abs(dae.q[-1, 5] - dae.q[0, 5]) > 0.01  # m: the DAE rover drifts off the straight line
        # closed form: zero commanded angular velocity and the yaw kept → x–z plane motion, exactly straight
        assert abs(unc.q[-1, 5] - unc.q[0, 5]) < 1e-3  # m
        assert abs(unc.yaw - float(spatial.quat_to_rpy(unc.q[0, :4])[2])) < 1e-9 and abs(dae.yaw) > 1e-3
        # it still travels about 5 m forward (0.5 m/s along the pitched body x axis: at most v·t)
        assert 4.5 < unc.q[-1, 4] - unc.q[0, 4] <= 5.0 + 1e-9


def test_terrain_fitting_keeps_the_wheels_on_the_ground(model, runs):
    terrain = t24.make_terrain(SEEDS[0])
    _, unc, _ = runs[0]
    for q in unc.q[::25]:
        assert np.abs(evaluate(model, q, terrain).contacts.dz).max() < 1e-4  # the fit's tolerance is 1e-5 m


def test_the_newton_fit_converges_in_a_few_collision_evaluations_the_dae_in_one(runs):
    """The DAE: one collision detection per step (an Euler step is one solve).  The Newton fit (thesis: "Newton's
    method would usually converge in 1-2 steps"): the initial residual plus 1–2 iterations of at most two
    line-search trials each, so fewer than 5 evaluations per step on average, but more than twice the DAE's."""
    for dae, unc, _ in runs:
        assert 2 * dae.steps < unc.collisions < 5 * unc.steps


def test_implied_velocity_inverts_the_euler_step(model):
    rng = np.random.default_rng(4)
    terrain = t24.make_terrain(SEEDS[0])
    q0 = t24.initial_state(model, terrain)
    for _ in range(5):
        qvel = rng.normal(size=model.num_dof)
        q1 = euler_step(q0, qvel, DT)
        np.testing.assert_allclose(implied_velocity(q0, q1, DT), qvel, atol=1e-9)


# ---- the thesis's terrain fit: derivative-free Nelder–Mead (MATLAB fminsearch) -------------------------------
NM_STEPS = 10


@pytest.fixture(scope="module")
def short_runs(model):
    """DAE, Newton-fit and Nelder–Mead-fit runs on one terrain for NM_STEPS steps at dt 0.04 (a few seconds)."""
    terrain = t24.make_terrain(SEEDS[0])
    q0 = t24.initial_state(model, terrain)
    duration = NM_STEPS * DT
    return {"dae": t24.run_dae(model, terrain, DT, q0, SEEDS[0], duration=duration),
            "newton": t24.run_unconstrained(model, terrain, DT, q0, SEEDS[0], "newton", duration),
            "nelder-mead": t24.run_unconstrained(model, terrain, DT, q0, SEEDS[0], "nelder-mead", duration)}


def test_nelder_mead_fit_reaches_the_newton_fit_quality(short_runs):
    nm, newton = short_runs["nelder-mead"], short_runs["newton"]
    assert nm.method == "unc_nm" and nm.steps == newton.steps == NM_STEPS
    # same objective and free states: the wheels end on the ground within the Newton fit's own tolerance
    # (1e-5 m); with fminsearch's default settings the same steps leave 0.16 mm mean, 2.9 mm max
    assert nm.max_abs_dz < 1e-5  # m
    assert nm.mean_abs_dz < 0.2 * 1e-5  # m
    # ... and the same motion
    np.testing.assert_allclose(nm.q[:, 4:7], newton.q[:, 4:7], atol=1e-5)


def test_nelder_mead_fit_costs_at_least_ten_times_the_dae_in_collision_evaluations(short_runs):
    dae, nm = short_runs["dae"], short_runs["nelder-mead"]
    assert dae.steps == NM_STEPS
    assert nm.collisions / nm.steps >= 10  # thesis: the DAE (one collision per step) is ≥ 10× faster
    assert short_runs["newton"].collisions / NM_STEPS < 10  # the Newton fit is far cheaper


def test_fit_option_is_validated(model):
    terrain = t24.make_terrain(SEEDS[0])
    q0 = t24.initial_state(model, terrain)
    with pytest.raises(ValueError, match="fit must be one of"):
        unconstrained_states(model, terrain, q0, t24.nominal_velocity(model, q0), DT, 3, fit="fminsearch")
    with pytest.raises(ValueError, match="fit must be one of"):
        t24.run_unconstrained(model, terrain, DT, q0, fit="fminsearch")
