"""Model / Data and the stateful stepper (wmr_dynamics.stepper): a run advanced call by call is the run.

Oracles: ``Simulator.run`` (one call for the whole run) for the same commands; closed forms for the terrain
swap (a plane raised by h lifts the vehicle by h); a second, untouched stepper for the claims that state lives
in SimData only (shared options, reset).
"""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

import wmr_dynamics as wmr
from wmr_dynamics.actuators import PIActuator
from wmr_dynamics.contact_models import ContactModel
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.errors import ModelError
from wmr_dynamics.kinematics.enhanced import SlipParams
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.stepper import SimData, Stepper
from wmr_dynamics.terrain import HeightGrid, Plane, gaussian_rough_terrain

DT = 0.04


@pytest.fixture(scope="module")
def rough():
    return gaussian_rough_terrain(rms=0.03, corr_len=0.4, bounds=(-3, 6, -4, 4), seed=5)


def command(t):
    return 0.5, 0.3 * np.sin(t)


def by_calls(stepper: Stepper, data: SimData, n: int) -> np.ndarray:
    """States at t_k = k·dt, k = 0..n, advancing one step per call with the command at t_k."""
    Q = [data.q.copy()]
    for k in range(n):
        stepper.advance(data, command=command(k * stepper.dt))
        Q.append(data.q.copy())
    return np.array(Q)


@pytest.mark.parametrize("name, mode", [("rocky7", "kinematic"), ("landtamer", "kinematic"), ("zoe", "dynamic"),
                                        ("rocky7", "dynamic"), ("zoe", "enhanced")])
def test_one_step_per_call_is_the_one_call_run(name, mode, rough):
    """Row by row equal to Simulator.run: the contact set (kinematic), the force balance's state and the time
    carry from call to call in SimData."""
    model = wmr.load_model(name)
    kw = {"slip": SlipParams(lon=(0.1, 0.05), lat=(0.1, 0.0), ang=(0.0, 0.2))} if mode == "enhanced" else {}
    sim = Simulator(model, rough, mode=mode, dt=DT, **kw)
    q0 = sim.initial_state()
    n = 40
    res = sim.run(n * DT, command, q0=q0, progress=False)
    stepper = Stepper(model, rough, mode=mode, dt=DT, **kw)
    data = stepper.make_data(q0)
    Q = by_calls(stepper, data, n)
    np.testing.assert_allclose(Q, res.q, atol=1e-12)
    assert data.t == pytest.approx(n * DT) and data.steps == n
    assert np.linalg.norm(Q[-1, 4:6] - Q[0, 4:6]) > 0.5  # it drove


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_n_steps_in_one_call_and_rates_instead_of_a_command(mode):
    """advance(n) equals n calls of advance(1); the naive controller's rates v/r given directly equal the
    command (v, 0) through it."""
    model = wmr.load_model("zoe")
    ctrl = BodyVelocityController(model, "naive")
    stepper = Stepper(model, Plane(), mode=mode, dt=DT, controller=ctrl)
    a, b, c = (stepper.make_data() for _ in range(3))
    stepper.advance(a, 25, command=(0.6, 0.0))
    for _ in range(25):
        stepper.advance(b, command=(0.6, 0.0))
    stepper.advance(c, 25, rates=np.full(4, 0.6) / model.wheel_radii)
    np.testing.assert_allclose(b.q, a.q, atol=1e-13)
    np.testing.assert_allclose(c.q, a.q, atol=1e-13)
    # (dynamic: from rest, the wheels slip while the vehicle accelerates)
    assert a.q[4] == pytest.approx(0.6 * 25 * DT, rel=0.05 if mode == "dynamic" else 1e-6)


def test_terrain_swapped_between_calls_lifts_the_vehicle_by_the_step():
    """Kinematic Zoë at rest on z = 0; the ground is replaced by the plane z = 0.05 m: the Baumgarte rows
    (eqs. 2.35–2.36) lift it onto the new ground, Δz → 0, body exactly 5 cm higher."""
    model = wmr.load_model("zoe")
    stepper = Stepper(model, Plane(), mode="kinematic", dt=DT)
    data = stepper.make_data()
    z0 = data.q[6]
    stepper.advance(data, 5, command=(0.0, 0.0))
    stepper.set_terrain(Plane(point=(0.0, 0.0, 0.05)))
    stepper.advance(data, 30, command=(0.0, 0.0))
    assert data.q[6] - z0 == pytest.approx(0.05, abs=1e-6)
    np.testing.assert_allclose(data.dz, 0.0, atol=1e-6)
    with pytest.raises(ModelError, match="set_terrain: expected a Terrain"):
        stepper.set_terrain(np.zeros((3, 3)))


def test_dynamic_terrain_swap_to_an_equal_grid_changes_nothing():
    """A flat HeightGrid in place of the plane z = 0 (another terrain kind, same argument type: no recompile)
    continues the run exactly as if nothing had been swapped."""
    model = wmr.load_model("zoe")
    grid = HeightGrid(-5.0, -5.0, 0.5, 0.5, np.zeros((21, 41)))
    st_a, st_b = Stepper(model, Plane(), dt=DT), Stepper(model, Plane(), dt=DT)
    a, b = st_a.make_data(), st_b.make_data()
    for st, d in ((st_a, a), (st_b, b)):
        st.advance(d, 10, command=(0.5, 0.2))
    st_b.set_terrain(grid)
    for st, d in ((st_a, a), (st_b, b)):
        st.advance(d, 20, command=(0.5, 0.2))
    np.testing.assert_allclose(b.q, a.q, atol=1e-12)
    np.testing.assert_allclose(b.contact_force, a.contact_force, atol=1e-9)


def test_state_lives_in_data_shared_options_interleaved_runs_and_reset(rough):
    """Two steppers share the model and one DynamicsOptions with a PI actuator and a cached mass matrix;
    advanced interleaved, each equals a run alone; reset() then replays the first run exactly (integrals,
    cached matrix and time dropped)."""
    model = wmr.load_model("landtamer")
    base = DynamicsOptions.from_config(model, contact="pacejka")
    opts = dataclasses.replace(base, actuator=PIActuator(kp=2000.0, ki=500.0, torque_limit=3000.0),
                               constant_mass_matrix=True)
    alone = Stepper(model, rough, dt=DT, dynamics=opts)
    ref = alone.make_data()
    q0 = ref.q.copy()
    Q_ref = by_calls(alone, ref, 30)
    assert np.abs(ref.integral).max() > 1e-4  # the integrals did change
    s1, s2 = Stepper(model, rough, dt=DT, dynamics=opts), Stepper(model, rough, dt=DT, dynamics=opts)
    d1, d2 = s1.make_data(q0), s2.make_data(q0)
    d2.q[4] += 0.3  # the second vehicle elsewhere, driving another command
    for k in range(30):
        s1.advance(d1, command=command(k * DT))
        s2.advance(d2, command=(1.0, -0.4))
    np.testing.assert_allclose(d1.q, Q_ref[-1], atol=1e-12)
    np.testing.assert_allclose(d1.integral, ref.integral, atol=1e-12)
    alone.reset(ref, q0)
    assert ref.t == 0.0 and ref.steps == 0 and not ref.integral.any()
    np.testing.assert_allclose(by_calls(alone, ref, 30), Q_ref, atol=1e-12)


def test_custom_controller_is_called_before_each_step(rough):
    """A Python controller callable gets (q, T_world, v, ω) before every step; its rates drive the step exactly
    as the same rates given directly; a non-finite output is named and the data keeps the steps done."""
    model = wmr.load_model("zoe")
    calls = []

    def controller(q, T_world, v, omega):
        calls.append((T_world.shape, np.allclose(T_world[0, :3, 3], q[4:7])))
        return np.full(4, v / 0.325) if len(calls) < 100 else np.full(4, np.nan)

    for mode in ("kinematic", "dynamic"):
        stepper = Stepper(model, rough, mode=mode, dt=DT, controller=controller)
        direct = Stepper(model, rough, mode=mode, dt=DT)
        a, b = stepper.make_data(), direct.make_data()
        stepper.advance(a, 10, command=(0.65, 0.0))
        direct.advance(b, 10, rates=np.full(4, 0.65 / 0.325))
        np.testing.assert_allclose(a.q, b.q, atol=1e-13)
        assert a.q[4] > 0.2
    assert len(calls) == 20 and calls[0] == ((model.num_frames, 4, 4), True)
    with pytest.raises(ModelError, match="controller output: non-finite value nan"):
        stepper.advance(a, 100, command=(0.65, 0.0))
    assert a.steps == 10 + 79 and a.t == pytest.approx(a.steps * DT)


def test_bad_calls_are_named_and_a_failed_step_keeps_the_state_it_started_from():
    model = wmr.load_model("zoe")
    stepper = Stepper(model, Plane(), mode="dynamic", dt=DT)
    data = stepper.make_data()
    for kwargs, match in (({}, "exactly one of"), ({"command": (1, 0), "rates": np.zeros(4)}, "exactly one of"),
                          ({"rates": np.zeros(3)}, "rates: expected 4 numbers, got 3"),
                          ({"command": (np.nan, 0.0)}, "command: non-finite value nan at index 0"),
                          ({"command": (1, 0), "n": -1}, "n must be a non-negative integer")):
        with pytest.raises(ModelError, match=match):
            stepper.advance(data, **kwargs)
    with pytest.raises(ModelError, match="mode 'fast' is not one of"):
        Stepper(model, Plane(), mode="fast")
    with pytest.raises(ModelError, match="body quaternion q\\[0:4\\] \\(x, y, z, w\\) is zero"):
        stepper.make_data(np.zeros(model.num_states))
    # a Python contact model that fails on its 40th call, inside a 100-step call: the exception reaches the
    # caller, and the data holds the state after the steps that completed (equal to a clean run of as many)
    base = DynamicsOptions.from_config(model).contact
    calls = []

    class Flaky(ContactModel):
        def evaluate(self, v_c, R_omega, dz):
            calls.append(1)
            if len(calls) == 40:
                raise ModelError("wheel-force sensor lost")
            return base.evaluate(v_c, R_omega, dz)

    flaky = Stepper(model, Plane(), dt=DT, dynamics=DynamicsOptions(contact=Flaky()))
    d = flaky.make_data()
    with pytest.raises(ModelError, match="wheel-force sensor lost"):
        flaky.advance(d, 100, command=(0.5, 0.0))
    assert 0 < d.steps < 40 and d.t == pytest.approx(d.steps * DT)
    clean = stepper.make_data()
    stepper.advance(clean, d.steps, command=(0.5, 0.0))
    np.testing.assert_allclose(d.q, clean.q, atol=1e-12)


def test_the_stepper_runs_the_same_kernels_as_python_under_numba_disable_jit():
    """NUMBA_DISABLE_JIT=1 (debugging, coverage): the stepper calls the plain-Python kernels and gets the
    compiled run's state."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json; from wmr_dynamics.stepper import Stepper; from wmr_dynamics.terrain import Plane; "
            "from wmr_dynamics.urdf import load_model; s = Stepper(load_model('zoe'), Plane(), mode='kinematic', "
            "dt=0.05); d = s.make_data(); [s.advance(d, 2, command=(0.5, 0.3)) for _ in range(3)]; "
            "print(json.dumps(d.q.tolist()))")
    out = {}
    for flag in ("0", "1"):
        r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, NUMBA_DISABLE_JIT=flag),
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-2000:]
        out[flag] = np.array(json.loads(r.stdout.strip().splitlines()[-1]))
    assert out["1"][4] > 0.1  # it drove
    np.testing.assert_allclose(out["1"], out["0"], atol=1e-9)


def test_a_start_pose_below_the_ground_is_placed_on_it_and_nothing_is_launched():
    """The vehicle YAML puts Zoë 5 m below flat ground: the start is placed on the terrain (§2.2.4), and a
    dynamic run from it stays on the ground (it used to launch the rover 59 m up)."""
    root = Path(__file__).resolve().parent.parent
    cfg = yaml.safe_load((root / "config" / "zoe.yaml").read_text())
    cfg["initial_pose"] = {"xyz": [0.0, 0.0, -5.0], "rpy": [0.0, 0.0, 0.0]}
    model = wmr.load_model(root / "urdf" / "zoe.urdf", cfg)
    stepper = Stepper(model, Plane(), mode="dynamic", dt=0.01)
    data = stepper.make_data()
    z0 = data.q[6]
    assert 0.2 < z0 < 1.0  # on the ground: wheel radius 0.325 m plus the suspension
    stepper.advance(data, 100, command=(0.5, 0.0))
    assert abs(data.q[6] - z0) < 0.05 and data.q[4] > 0.2


def test_direct_rates_beyond_the_urdf_limits_are_clipped_with_one_warning():
    """Zoë's wheels: 10 rad/s at most (URDF <limit velocity>): 40 rad/s drives as 10 rad/s, warned once."""
    import warnings

    from wmr_dynamics import load_model
    from wmr_dynamics.stepper import Stepper
    from wmr_dynamics.terrain import Plane

    zoe = load_model("zoe")
    st = Stepper(zoe, Plane(), "kinematic", 0.01)
    fast, ref = st.make_data(), st.make_data()
    with pytest.warns(UserWarning, match="beyond the URDF speed limits"):
        st.advance(fast, 100, rates=[40.0] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning
        st.advance(fast, 1, rates=[40.0] * 4)
        st.advance(ref, 101, rates=[10.0] * 4)
    np.testing.assert_allclose(fast.q, ref.q, atol=1e-12)
