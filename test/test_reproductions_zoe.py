"""Thesis Table 2.7 (§2.5.4): dynamic Zoë's step-size accuracy on the ten benchmark terrains, against the thesis.

The thesis's conditions (§2.5.4): Zoë commanded straight at 1 m/s for 10 s on each of the ten rough terrains
``zoe_rough_{1..10}.txt``, errors of the final pose relative to the same model at Δt = 0.01 s, averaged over the
ten terrains.  The set-up is :mod:`wmr_dynamics.scenarios.zoe_rough` (steering held straight as in the
benchmark, naive controller, ideal actuators, dynamic runs starting at the commanded velocity as in the thesis
author's demo); the oracle is the thesis:

- Table 2.7 (pos. err. m, yaw err. rad, Newton iterations per step), typed in below as ``TABLE_2_7``;
- its text: "For all three [contact models], mean final position error is 5 cm or less and mean final yaw
  error is less than 1° after driving 10 m using a .10 s step size"; "the number [of iterations] also
  increases with step-size for the nonlinear models"; the contact model "has the biggest impact" on it.

Our implementation is not the thesis's (contact parameters from VEHICLES.md, our force-balance tolerance of
1e-7 of the weight; the thesis gives neither exactly), so where a Table 2.7 figure is compared directly we
require its order of magnitude: within a factor ``FACTOR`` = 2 either way.  The bound of the issue that asked
for this study (mean position error ≤ 0.06 m at Δt = 0.10 s) is kept as well.  No wall-clock times are asserted.
"""

import numpy as np
import pytest

from wmr_dynamics.scenarios import zoe_rough as zoe

# Thesis Table 2.7 (10 terrains, 1 m/s, 10 s): (contact model, Δt s) -> (pos. err. m, yaw err. rad, iter / step)
TABLE_2_7 = {
    ("linear", 0.01): (None, None, 0.9990), ("linear", 0.02): (0.0039, 0.0003, 0.9980),
    ("linear", 0.04): (0.0126, 0.0009, 0.9960), ("linear", 0.10): (0.0401, 0.0039, 0.9901),
    ("pacejka", 0.01): (None, None, 1.7364), ("pacejka", 0.02): (0.0037, 0.0006, 1.8663),
    ("pacejka", 0.04): (0.0109, 0.0014, 2.0100), ("pacejka", 0.10): (0.0292, 0.0038, 2.3624),
}
THESIS_POS_BOUND = 0.05  # m: "mean final position error is 5 cm or less" at Δt = 0.10 s (thesis §2.5.4)
THESIS_YAW_BOUND = np.radians(1.0)  # rad: "mean final yaw error is less than 1°" at Δt = 0.10 s
ISSUE_POS_BOUND = 0.06  # m: the issue's bound on the same mean
FACTOR = 2.0  # a Table 2.7 figure is matched when ours is within this factor of it (module docstring)

SPEED, DURATION = 1.0, 10.0  # m/s, s: the thesis's test
DTS = (0.01, 0.04, 0.10)
KINDS = ("linear", "pacejka")


@pytest.fixture(scope="module")
def model():
    return zoe.zoe_model()


@pytest.fixture(scope="module")
def runs(model):
    """(kind, terrain, Δt) -> Run: both contact models at three step sizes on all ten terrains (a few seconds on
    the compiled engine)."""
    out = {}
    for kind in KINDS:
        opts = zoe.dynamics_options(model, kind)
        for tid in zoe.TERRAINS:
            terrain = zoe.load_terrain(tid)  # the thesis author's terrain files: required, never skipped
            q0 = zoe.initial_state(model, terrain)
            for dt in DTS:
                out[(kind, tid, dt)] = zoe.run_one(model, terrain, kind, dt, q0, terrain_id=tid, speed=SPEED,
                                                   duration=DURATION, options=opts)
    return out


def mean_errors(runs, kind, dt):
    """Mean over the ten terrains of (final position error m, final |yaw error| rad) vs Δt = 0.01 s."""
    e = np.array([zoe.pose_errors(runs[(kind, t, dt)], runs[(kind, t, zoe.DT_REF)]) for t in zoe.TERRAINS])
    return e.mean(axis=0)


def test_the_ten_terrains_and_ten_metres_of_the_thesis_are_run(model, runs):
    assert zoe.TERRAINS == tuple(range(1, 11)) and zoe.DT_REF == 0.01
    steer = [7 + model.joint_index(j) for j in zoe.STEER_JOINTS]
    for (_, _, dt), r in runs.items():
        assert r.steps == round(DURATION / dt) and np.all(np.isfinite(r.q))
        assert np.abs(r.q[:, steer]).max() < 1e-6  # rigid joint constraints θ_s = 0 hold the steering straight
        # 1 m/s for 10 s: 10 m commanded; a little less where the wheels slip or the ground rises under them
        assert 9.0 < r.q[-1, 4] - r.q[0, 4] < 10.5
        assert r.unconverged == 0  # every step's force balance met its tolerance


@pytest.mark.parametrize("kind", KINDS)
def test_final_errors_at_the_coarse_step_meet_the_thesis(runs, kind):
    """Table 2.7 at Δt = 0.10 s: mean position error ≤ 5 cm (and the issue's 6 cm), mean yaw error < 1°."""
    pos, yaw = mean_errors(runs, kind, 0.10)
    assert 0.0 < pos <= THESIS_POS_BOUND <= ISSUE_POS_BOUND, f"mean position error {pos:.4f} m"
    assert yaw < THESIS_YAW_BOUND, f"mean yaw error {yaw:.4f} rad"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dt", [0.04, 0.10])
def test_position_errors_are_of_the_order_of_table_2_7(runs, kind, dt):
    pos, _ = mean_errors(runs, kind, dt)
    thesis = TABLE_2_7[(kind, dt)][0]
    assert thesis / FACTOR <= pos <= FACTOR * thesis, f"{pos:.4f} m vs the thesis's {thesis} m"


@pytest.mark.parametrize("kind", KINDS)
def test_errors_grow_with_the_step_size(runs, kind):
    """Table 2.7: every error column grows with Δt (0.02 → 0.04 → 0.10 s)."""
    p04, _ = mean_errors(runs, kind, 0.04)
    p10, _ = mean_errors(runs, kind, 0.10)
    assert 0.0 < p04 < p10


@pytest.mark.parametrize("kind", KINDS)
def test_newton_iterations_per_step_are_of_the_order_of_table_2_7(runs, kind):
    # (a step whose Newton iteration reaches its limit is retaken as sub-steps and counts them all; that every
    # step converged in the end is asserted above)
    for dt in DTS:
        its = [runs[(kind, t, dt)].iterations for t in zoe.TERRAINS]
        assert all(it.size == round(DURATION / dt) and np.all(np.isfinite(it)) and it.min() >= 0 for it in its)
        mean = float(np.mean(np.concatenate(its)))
        thesis = TABLE_2_7[(kind, dt)][2]
        assert thesis / FACTOR <= mean <= FACTOR * thesis, f"Δt {dt}: {mean:.3f} iterations vs the thesis's {thesis}"


def test_iterations_depend_on_the_contact_model_and_grow_with_the_step_for_the_nonlinear_one(runs):
    """Thesis §2.5.4: the contact model has the biggest impact on the iteration count (the nonlinear Pacejka
    model needs more than the piecewise-linear one), and for the nonlinear models it grows with the step."""
    mean = {(k, dt): np.mean(np.concatenate([runs[(k, t, dt)].iterations for t in zoe.TERRAINS]))
            for k in KINDS for dt in DTS}
    for dt in DTS:
        assert mean[("pacejka", dt)] > mean[("linear", dt)]
    assert mean[("pacejka", 0.01)] < mean[("pacejka", 0.04)] < mean[("pacejka", 0.10)]
