"""Divergence in library runs is an error or a flagged result, never silent nonsense (reliability issue,
item 3): a state gone non-finite, a wheel sunk deeper than its diameter, or a body faster than the command and
the wheels allow stop Simulator.run with a DivergenceError naming the time, the likely cause and the fix
(the run kept as ``.result``); rollout_batch marks such trajectories with STATUS_DIVERGED."""

from __future__ import annotations

import re

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.errors import CommandError, DivergenceError, SimulationError
from wmr_dynamics.simulate import STATUS_DIVERGED, Simulator, allowed_body_speed
from wmr_dynamics.terrain import Plane, gaussian_rough_terrain


@pytest.fixture(scope="module")
def zoe():
    return wmr.load_model("zoe")


@pytest.fixture(scope="module")
def rough():
    return gaussian_rough_terrain(rms=0.05, corr_len=0.2, seed=1)


def test_a_huge_yaw_rate_in_kinematic_mode_is_a_divergence_error_not_a_silent_result(zoe, rough):
    sim = Simulator(zoe, rough, mode="kinematic", dt=0.04)
    with pytest.raises(DivergenceError) as e:
        sim.run(2.0, (0.5, 1e6), progress=False, limit_speeds=False)
    msg = str(e.value)
    assert msg.startswith("zoe: kinematic run diverged at t = 0 s (step 0)")
    assert "the wheels' speed limits allow 3.25 m/s" in msg and "Fix: a smaller dt" in msg
    assert e.value.result.q.shape == (51, zoe.num_states)  # the run is not lost
    assert isinstance(e.value, SimulationError)


def test_a_speed_beyond_the_wheel_limits_is_a_divergence_error(zoe, rough):
    sim = Simulator(zoe, rough, mode="kinematic", dt=0.04)
    with pytest.raises(DivergenceError, match=r"the body moved at 9.\d+e\+05 m/s, beyond 40 m/s"):
        sim.run(1.0, (1e6, 0.0), progress=False, limit_speeds=False)


def test_a_wheel_deeper_than_its_diameter_is_a_divergence_error(rough):
    model = wmr.load_model("rocky7")
    sim = Simulator(model, rough, mode="kinematic", dt=0.04)
    with pytest.raises(DivergenceError) as e:
        sim.run(2.0, (0.5, 50.0), progress=False, limit_speeds=False)
    m = re.search(r"wheel '(\w+)' is (\d+\.\d+) m deep in the ground, more than its diameter (\d+\.\d+) m",
                  str(e.value))
    assert m is not None, str(e.value)
    assert float(m.group(3)) == pytest.approx(2.0 * model.wheel_radius(m.group(1)), abs=0.005)
    assert float(m.group(2)) > float(m.group(3))  # deeper than the diameter: what makes it a divergence


def test_a_dynamic_blow_up_is_named_divergence_not_a_terrain_fault(zoe, rough):
    sim = Simulator(zoe, rough, mode="dynamic", dt=0.01)
    with pytest.raises(DivergenceError) as e:
        sim.run(1.0, (1e6, 0.0), progress=False, limit_speeds=False)
    msg = str(e.value)  # (a state that is no longer finite, or a body speed beyond the bound: both diverged)
    assert msg.startswith("zoe: dynamic run diverged") or "the run diverged" in msg
    assert "terrain returned" not in msg


def test_sane_runs_pass_the_check(zoe, rough):
    for mode, dt in (("kinematic", 0.04), ("dynamic", 0.01)):
        r = Simulator(zoe, rough, mode=mode, dt=dt).run(1.0, (1.0, 0.3), progress=False)
        assert np.isfinite(r.q).all() and r.summary()["distance_m"] > 0.5


def test_a_batch_trajectory_faster_than_its_wheels_allow_is_flagged(zoe):
    sim = Simulator(zoe, Plane(), mode="dynamic", dt=0.01)
    cmds = np.zeros((2, 20, 2))
    cmds[0, :, 0], cmds[1, :, 0] = 0.5, 100.0
    qvel0 = np.zeros((2, zoe.num_dof))
    qvel0[1, 3] = 100.0  # the second starts at 100 m/s forward: beyond 2 x the 3.25 m/s its wheels allow
    r = sim.rollout_batch(cmds, qvel0=qvel0)
    assert r.status[0, 0] == 0
    assert r.status[1].tolist() == [STATUS_DIVERGED, 0]


def test_allowed_speed_is_bounded_by_the_wheel_limits_and_a_floor(zoe):
    assert allowed_body_speed(zoe, 1e6, 0.0, 1.0) == (40.0, "the wheels' speed limits allow 3.25 m/s")
    assert allowed_body_speed(zoe, 1.0, 0.0, 1.0)[0] == 40.0
    assert allowed_body_speed(zoe, 0.5, 0.0, 1.0)[1] == "the command asks for 0.5 m/s"


def test_limit_speeds_scales_commands_to_the_wheel_limits_with_one_warning(zoe):
    """Zoë's wheels are limited to 10 rad/s (3.25 m/s at r = 0.325 m): 1e6 m/s becomes about 3.25 m/s — by
    default (the divergence tests above switch the limits off to reach the divergence checks)."""
    sim = Simulator(zoe, Plane(), mode="kinematic", dt=0.04)
    with pytest.warns(UserWarning, match=r"zoe: 1 command\(s\) needed wheel rates beyond the URDF joint speed limits"):
        r = sim.run(1.0, (1e6, 0.0), progress=False)
    assert r.summary()["distance_m"] == pytest.approx(3.25, rel=0.02)
    # a time-varying command: only the rows beyond the limits are scaled (1 m/s, then 10 m/s -> 3.25 m/s)
    with pytest.warns(UserWarning, match=r"1 command\(s\) needed"):
        r = sim.run(1.0, lambda t: (1.0 if t < 0.5 else 10.0, 0.0), progress=False, limit_speeds=True)
    assert r.summary()["distance_m"] == pytest.approx(0.5 * 1.0 + 0.5 * 3.25, rel=0.03)


def test_a_failing_step_on_the_python_path_names_its_step_and_time(zoe):
    """A custom controller whose output goes NaN at its 4th call: the error names the step and its time."""
    calls = []

    def controller(q, T_world, v, omega):
        calls.append(1)
        return np.full(4, np.nan if len(calls) > 3 else 1.0)

    sim = Simulator(zoe, Plane(), mode="kinematic", dt=0.04, controller=controller)
    with pytest.raises(CommandError, match=r"^joint rates: non-finite value nan at index 0 \(step 3, t = 0.12 s\)$"):
        sim.run(1.0, (0.5, 0.0), progress=False)
