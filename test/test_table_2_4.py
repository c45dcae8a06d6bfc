"""Thesis Table 2.4 (§2.5.1), qualitative: stabilized DAE vs. unconstrained kinematics with terrain fitting.

Rocky 7 driven straight, open loop, at 0.5 m/s for 10 s with the naive controller over two random rough
terrains at Δt = 0.04 s, through the benchmark's own functions (benchmarks/table_2_4_rocky7.py).  Asserts
the thesis's findings: the DAE slips less, it predicts the deviation from the commanded straight line that
the unconstrained method misses, and terrain fitting costs more per step (counted in collision evaluations,
not wall-clock time).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import table_2_4_rocky7 as bench  # noqa: E402

from wmr_dynamics.kinematics import euler_step, evaluate  # noqa: E402

SEEDS = (0, 1)
DT = 0.04


@pytest.fixture(scope="module")
def model():
    return bench.rocky7_model()


@pytest.fixture(scope="module")
def runs(model):
    out = []
    for seed in SEEDS:
        terrain = bench.make_terrain(seed)
        q0 = bench.initial_state(model, terrain)
        out.append((bench.run_dae(model, terrain, DT, q0, seed), bench.run_unconstrained(model, terrain, DT, q0, seed)))
    return out


def test_both_methods_start_together_and_run_ten_seconds(runs):
    for dae, unc in runs:
        assert dae.steps == unc.steps == 250
        np.testing.assert_array_equal(dae.q[0], unc.q[0])
        assert np.all(np.isfinite(dae.q)) and np.all(np.isfinite(unc.q))
        assert dae.contact_speed.shape == unc.contact_speed.shape == (250, 6)


def test_dae_has_lower_mean_contact_point_speed(runs):
    for dae, unc in runs:
        assert dae.contact_speed.mean() < unc.contact_speed.mean()
    mean_dae = np.mean([d.contact_speed.mean() for d, _ in runs])
    mean_unc = np.mean([u.contact_speed.mean() for _, u in runs])
    assert mean_dae < 0.85 * mean_unc  # thesis: ~40% lower at dt 0.04


def test_dae_deviates_while_terrain_fitting_drives_straight_as_commanded(runs):
    for dae, unc in runs:
        assert abs(dae.q[-1, 5] - dae.q[0, 5]) > 0.01  # m: the DAE rover drifts off the straight line
        assert abs(unc.q[-1, 5] - unc.q[0, 5]) < 1e-3  # m: the unconstrained one does not
        assert abs(unc.yaw) < 1e-9 and abs(dae.yaw) > 1e-3
        # it still travels about 5 m forward (0.5 m/s along the pitched body x axis)
        assert 4.5 < unc.q[-1, 4] - unc.q[0, 4] <= 5.0 + 1e-9


def test_terrain_fitting_keeps_the_wheels_on_the_ground(model, runs):
    terrain = bench.make_terrain(SEEDS[0])
    _, unc = runs[0]
    for q in unc.q[::25]:
        assert np.abs(evaluate(model, q, terrain).contacts.dz).max() < 1e-4


def test_terrain_fitting_costs_more_collision_evaluations_than_the_dae(runs):
    for dae, unc in runs:
        assert dae.collisions == dae.steps  # one collision detection per DAE step
        assert unc.collisions > 2 * dae.collisions  # every fit iteration / line-search trial needs one


def test_implied_velocity_inverts_the_euler_step(model):
    rng = np.random.default_rng(4)
    terrain = bench.make_terrain(SEEDS[0])
    q0 = bench.initial_state(model, terrain)
    for _ in range(5):
        qvel = rng.normal(size=model.num_dof)
        q1 = euler_step(q0, qvel, DT)
        np.testing.assert_allclose(bench.implied_velocity(q0, q1, DT), qvel, atol=1e-9)


def test_summary_rows_compare_with_the_reference(runs):
    rows = bench.summarize([r for pair in runs for r in pair]
                           + [bench.Run("dae", bench.DT_REF, d.seed, d.q, d.contact_speed, d.contact_points, 1.0, 1)
                              for d, _ in runs])
    unc = next(r for r in rows if r.method == "unc")
    dae = next(r for r in rows if r.method == "dae" and r.dt == DT)
    assert dae.pos_err == pytest.approx(0.0) and dae.yaw_err == pytest.approx(0.0)  # its own reference here
    assert unc.pos_err > 0.05 and unc.abs_y < 1e-3
    assert "unconstrained" in bench.format_table(rows) and "| stabilized DAE |" in bench.format_table(rows, True)


# ---- the thesis's terrain fit: derivative-free Nelder–Mead (MATLAB fminsearch) -------------------------------
NM_STEPS = 10


@pytest.fixture(scope="module")
def short_runs(model):
    """DAE, Newton-fit and Nelder–Mead-fit runs on one terrain for NM_STEPS steps at dt 0.04 (a few seconds)."""
    terrain = bench.make_terrain(SEEDS[0])
    q0 = bench.initial_state(model, terrain)
    duration = NM_STEPS * DT
    return {"dae": bench.run_dae(model, terrain, DT, q0, SEEDS[0], duration=duration),
            "newton": bench.run_unconstrained(model, terrain, DT, q0, SEEDS[0], "newton", duration),
            "nelder-mead": bench.run_unconstrained(model, terrain, DT, q0, SEEDS[0], "nelder-mead", duration)}


def test_nelder_mead_fit_reaches_the_newton_fit_quality(short_runs):
    nm, newton = short_runs["nelder-mead"], short_runs["newton"]
    assert nm.method == "unc_nm" and nm.steps == newton.steps == NM_STEPS
    # same objective and free states: the wheels end on the ground as with the Newton fit (mean |Δz| ~0.3 µm);
    # (with fminsearch's default settings the same steps leave 0.16 mm mean, 2.9 mm max)
    assert nm.mean_abs_dz < 2e-6  # m
    assert nm.max_abs_dz < 1e-5  # m: the Newton fit's own tolerance
    # ... and the same motion
    np.testing.assert_allclose(nm.q[:, 4:7], newton.q[:, 4:7], atol=1e-5)


def test_nelder_mead_fit_costs_at_least_ten_times_the_dae_in_collision_evaluations(short_runs):
    dae, nm = short_runs["dae"], short_runs["nelder-mead"]
    assert dae.steps == NM_STEPS and dae.collisions == dae.steps
    assert nm.collisions / nm.steps >= 10 * dae.collisions / dae.steps  # thesis: the DAE is ≥ 10× faster
    assert short_runs["newton"].collisions / NM_STEPS < 10  # the Newton fit is far cheaper


def test_fit_option_is_validated(model):
    terrain = bench.make_terrain(SEEDS[0])
    with pytest.raises(ValueError, match="fit must be one of"):
        bench.unconstrained_states(model, terrain, DT, bench.initial_state(model, terrain), fit="fminsearch")
