"""Thesis Table 2.7 (§2.5.4): dynamic Zoë's step-size accuracy on the benchmark terrains.

Through the benchmark's own functions (benchmarks/zoe_rough.py): Zoë (steering held straight, naive
controller, ideal actuators, dynamic runs starting at the commanded velocity as in the thesis author's demo).

- The issue's claim itself: at 1 m/s for 10 s on all ten terrains, the mean final position error of
  Δt = 0.10 s vs 0.01 s is at most 0.06 m for piecewise-linear and Pacejka contact (docs/zoe_rough.md, full
  study: 0.037 and 0.040 m; Ishigami with its lookup table 0.057 m, left to the study for its cost).
- A fast version at 0.5 m/s for 4 s on two terrains, for the iteration counts and per-terrain bounds: the
  full study gives at t = 4 s, largest over the ten terrains, 0.007 m (linear) and 0.008 m (Pacejka);
  we allow 0.02 m per terrain.  Yaw at 4 s: ≤ 0.002 rad on the ten; we allow 0.01 rad.  Mean iterations per
  step on these runs: ≤ 1.1 (linear) and ≤ 3.2 (Pacejka, Δt = 0.10).
No wall-clock times are asserted.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import zoe_rough as bench  # noqa: E402
from shared_paths import TERRAINS  # noqa: E402

TERRAIN_IDS = (1, 2)
DURATION = 4.0  # s
DT_COARSE = 0.10
POS_TOL = 0.02  # m per terrain at t = 4 s (module docstring)
YAW_TOL = 0.01  # rad (module docstring)
MAX_MEAN_ITER = {"linear": 1.5, "pacejka": 4.0}  # observed ≤ 1.1 and ≤ 3.2 (module docstring)

pytestmark = pytest.mark.skipif(not all((TERRAINS / f"zoe_rough_{k}.txt").is_file() for k in TERRAIN_IDS),
                                reason=f"benchmark terrains not found in {TERRAINS}")


@pytest.fixture(scope="module")
def runs():
    model = bench.zoe_model()
    out = {}
    for tid in TERRAIN_IDS:
        terrain = bench.load_terrain(tid, TERRAINS)
        q0 = bench.initial_state(model, terrain)
        for kind in ("linear", "pacejka"):
            opts = bench.dynamics_options(model, kind)
            for dt in (bench.DT_REF, DT_COARSE):
                out[(tid, kind, dt)] = bench.run_one(model, terrain, kind, dt, q0, terrain_id=tid, duration=DURATION,
                                                     options=opts)
    return out


def test_steering_is_held_straight_and_the_rover_drives_forward(runs):
    model = bench.zoe_model()
    steer = [7 + model.joint_index(j) for j in ("s1_joint", "s2_joint")]
    for (_, _, dt), r in runs.items():
        assert r.steps == round(DURATION / dt)
        assert np.all(np.isfinite(r.q))
        assert np.abs(r.q[:, steer]).max() < 1e-6  # rigid joint constraints θ_s = 0
        # about 0.5 m/s × 4 s: less where the wheels slip, more where the rover pitches or rolls downhill
        assert 1.7 < r.q[-1, 4] - r.q[0, 4] < 2.2


@pytest.mark.parametrize("kind", ["linear", "pacejka"])
def test_coarse_step_stays_close_to_the_fine_step(runs, kind):
    for tid in TERRAIN_IDS:
        pos, yaw = bench.pose_errors(runs[(tid, kind, DT_COARSE)], runs[(tid, kind, bench.DT_REF)])
        assert pos < POS_TOL, f"terrain {tid}: dt 0.10 vs 0.01 differ by {pos:.4f} m"
        assert yaw < YAW_TOL, f"terrain {tid}: yaw differs by {yaw:.4f} rad"
        assert pos > 0.0  # the step size does change the prediction


@pytest.mark.parametrize("kind", ["linear", "pacejka"])
def test_force_balance_needs_few_iterations(runs, kind):
    limit = bench.dynamics_options(bench.zoe_model(), kind).max_iterations
    for tid in TERRAIN_IDS:
        for dt in (bench.DT_REF, DT_COARSE):
            it = runs[(tid, kind, dt)].iterations
            assert it.size == round(DURATION / dt) and np.all(np.isfinite(it))
            assert it.max() <= limit
            assert it.mean() <= MAX_MEAN_ITER[kind]
    # the nonlinear model needs more iterations than the linear one, more at the larger step (thesis Table 2.7)
    lin = np.mean([runs[(t, "linear", bench.DT_REF)].mean_iterations for t in TERRAIN_IDS])
    pac = {dt: np.mean([runs[(t, "pacejka", dt)].mean_iterations for t in TERRAIN_IDS])
           for dt in (bench.DT_REF, DT_COARSE)}
    assert pac[bench.DT_REF] > lin and pac[DT_COARSE] > pac[bench.DT_REF]


def test_summary_rows_and_table(runs):
    rows = bench.summarize(list(runs.values()))
    r = bench.find(rows, "linear", DT_COARSE)
    assert r is not None and r.n == len(TERRAIN_IDS) and r.pos_err is not None
    assert r.pos_err_short is not None and r.pos_err_short <= r.pos_max_short + 1e-12
    assert bench.find(rows, "linear", bench.DT_REF).pos_err is None  # the reference itself
    text = bench.format_table(rows, markdown=True)
    assert "| piecewise-linear | 0.10 |" in text and "0.0401" in text  # the thesis's value alongside


ALL_TERRAINS = tuple(range(1, 11))


@pytest.mark.skipif(not all((TERRAINS / f"zoe_rough_{k}.txt").is_file() for k in ALL_TERRAINS),
                    reason=f"benchmark terrains not found in {TERRAINS}")
@pytest.mark.parametrize("kind", ["linear", "pacejka"])
def test_table_2_7_at_one_metre_per_second_meets_the_issue_bound(kind):
    """1 m/s, 10 s, ten terrains: mean final position error of Δt 0.10 vs 0.01 s ≤ 0.06 m (the issue's bound;
    thesis Table 2.7: 0.040 / 0.029 m), and the coarse step really changes the prediction."""
    model = bench.zoe_model()
    opts = bench.dynamics_options(model, kind)
    errors = []
    for tid in ALL_TERRAINS:
        terrain = bench.load_terrain(tid, TERRAINS)
        q0 = bench.initial_state(model, terrain)
        fine, coarse = (bench.run_one(model, terrain, kind, dt, q0, terrain_id=tid, speed=1.0, options=opts)
                        for dt in (bench.DT_REF, DT_COARSE))
        assert 9.0 < fine.q[-1, 4] - q0[4] < 10.5  # 10 m commanded
        errors.append(bench.pose_errors(coarse, fine)[0])
    assert 0.0 < np.mean(errors) <= bench.TARGET_POS_ERR, errors
