"""The public API's arrays are checked at the boundary (reliability issue, item 1): a zero or non-finite
quaternion, ragged or wrong-shaped commands, states of the wrong length and arguments of the wrong type are
errors naming the argument — never a ZeroDivisionError, a numba SystemError or a crash in the kernels."""

from __future__ import annotations

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.errors import ArgumentError, CommandError, ModelError, StateError, UrdfError, WmrError
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import Plane


@pytest.fixture(scope="module")
def zoe():
    return wmr.load_model("zoe")


@pytest.fixture(scope="module")
def kin(zoe):
    return Simulator(zoe, Plane(), mode="kinematic", dt=0.04)


@pytest.fixture(scope="module")
def dyn(zoe):
    return Simulator(zoe, Plane(), mode="dynamic", dt=0.01)


def _zero_quat(sim):
    q = sim.initial_state()
    q[:4] = 0.0
    return q


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_a_zero_quaternion_is_refused_by_run(kin, dyn, mode):
    sim = kin if mode == "kinematic" else dyn
    with pytest.raises(StateError, match=r"q0: the body quaternion q\[0:4\] \(x, y, z, w\) is zero"):
        sim.run(0.1, (0.5, 0.0), q0=_zero_quat(sim), progress=False)


def test_a_zero_quaternion_is_refused_by_rollout_batch_naming_the_row(dyn):
    good = dyn.initial_state()
    with pytest.raises(StateError, match=r"q0: the body quaternion .* is zero \(row 1\)"):
        dyn.rollout_batch(np.zeros((2, 5, 2)), q0=np.array([good, _zero_quat(dyn)]))
    with pytest.raises(StateError, match="is zero"):
        dyn.rollout_batch(np.zeros((2, 5, 2)), q0=_zero_quat(dyn))


def test_a_zero_quaternion_is_refused_by_step_velocity_and_stepper(zoe, kin):
    with pytest.raises(StateError, match="q: the body quaternion"):
        kin.step(_zero_quat(kin), 0.5, 0.0)
    with pytest.raises(StateError, match="q: the body quaternion"):
        kin.velocity(_zero_quat(kin), 0.5, 0.0)
    stepper = Stepper(zoe, Plane(), mode="kinematic", dt=0.04)
    with pytest.raises(StateError, match="q: the body quaternion"):
        stepper.make_data(_zero_quat(kin))


def test_a_non_unit_quaternion_is_normalised_with_a_warning(kin):
    q = kin.initial_state()
    q[:4] *= 2.0
    with pytest.warns(UserWarning, match="q0: the body quaternion has norm 2; normalised"):
        r = kin.run(0.08, (0.5, 0.0), q0=q, progress=False)
    np.testing.assert_allclose(np.linalg.norm(r.q[0, :4]), 1.0, atol=1e-12)


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_non_finite_and_short_states_are_named(kin, dyn, mode):
    sim = kin if mode == "kinematic" else dyn
    q = sim.initial_state()
    q[6] = np.nan
    with pytest.raises(StateError, match="q0: non-finite value nan at index 6"):
        sim.run(0.1, (0.5, 0.0), q0=q, progress=False)
    # a short state used to reach the compiled kinematic rollout unchecked (heap corruption)
    with pytest.raises(StateError, match=r"q0: expected 14 state values .* got 5"):
        sim.run(0.1, (0.5, 0.0), q0=sim.initial_state()[:5], progress=False)
    with pytest.raises(StateError, match="q0: ragged rows"):
        sim.run(0.1, (0.5, 0.0), q0=[[1, 2], [3]], progress=False)


def test_initial_velocity_is_checked(dyn):
    with pytest.raises(StateError, match=r"qvel0: expected 13 joint-space velocities .* got 2"):
        dyn.run(0.1, (0.5, 0.0), qvel0=[1.0, 2.0], progress=False)
    with pytest.raises(StateError, match="qvel0: non-finite value inf at index 3"):
        dyn.run(0.1, (0.5, 0.0), qvel0=np.r_[0, 0, 0, np.inf, np.zeros(9)], progress=False)


@pytest.mark.parametrize("commands, message", [
    ([[[0, 0], [0, 0]], [[0, 0]]], "commands: ragged rows"),
    (np.zeros((5, 2)), r"commands: expected shape \(N, steps\+1, 2\) .* got \(5, 2\)"),
    (np.zeros((2, 5, 3)), r"got \(2, 5, 3\)"),
    (np.zeros((0, 5, 2)), r"got \(0, 5, 2\)"),
    ([[["a", "b"]]], "commands: expected numbers, got <U1 values"),
    ("forward", "commands: expected numbers, got the string 'forward'"),
    (None, "commands: expected numbers, got None"),
    (np.full((1, 3, 2), np.nan), r"commands: non-finite value nan at index \[0, 0, 0\]"),
])
def test_bad_batch_commands_are_named(dyn, commands, message):
    with pytest.raises(CommandError, match=message):
        dyn.rollout_batch(commands)


@pytest.mark.parametrize("command, message", [
    ((0.5,), r"command: expected 2 numbers \(v m/s, omega rad/s\), got 1"),
    ((0.5, 0.1, 0.2), "got 3"),
    ("ab", "command: expected numbers, got the string 'ab'"),
    (None, "command: expected numbers, got None"),
    ((np.nan, 0.0), "command: non-finite value nan at index 0"),
    (lambda t: (1.0,), r"command at t=0 s must be \(v m/s, omega rad/s\)"),
])
def test_bad_run_commands_are_named(kin, command, message):
    with pytest.raises(CommandError, match=message):
        kin.run(0.1, command, progress=False)


def test_other_arguments_are_named(zoe, kin):
    with pytest.raises(ArgumentError, match="duration must be a positive number of seconds, got 'ab'"):
        kin.run("ab", (0.5, 0.0))
    with pytest.raises(ArgumentError, match="dt must be a positive number of seconds, got -1.0"):
        Simulator(zoe, Plane(), dt=-1)
    with pytest.raises(ArgumentError, match="model: expected a WmrModel"):
        Simulator("zoe", Plane())
    with pytest.raises(ArgumentError, match="terrain: expected a Terrain"):
        Simulator(zoe, "flat")
    with pytest.raises(StateError, match=r"initial position xyz: expected 2 or 3 numbers .* got 4"):
        kin.initial_state([1, 2, 3, 4])
    with pytest.raises(StateError, match="initial yaw must be a finite number of rad, got \\[1, 2\\]"):
        kin.initial_state(None, [1, 2])
    with pytest.raises(UrdfError, match=r"config: expected a vehicle YAML path or a dict of its keys, got list"):
        wmr.load_model("zoe", config=[1, 2])


def test_the_new_errors_keep_the_old_bases():
    for cls in (ArgumentError, StateError, CommandError):
        assert issubclass(cls, ModelError) and issubclass(cls, ValueError) and issubclass(cls, WmrError)
