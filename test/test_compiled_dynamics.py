"""The dynamic engine's drivers: one-call rollouts, the step-by-step loop, batches, callbacks to Python models.

There is one implementation of the dynamic step (``wmr_dynamics.compiled.dynamics``), checked against physics
in test_physics_oracles.py, test_static_equilibrium.py, test_force_balance.py and the reproductions.  Here
the ways of driving it are checked against each other — a whole run in one compiled call, a Python loop of
single compiled steps (the path of a custom controller, and the ROS stepper's), N trajectories in parallel —
and a user's Python contact or actuator model, called back from the compiled step, against the bundled
kernel it wraps.
"""

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.actuators import ActuatorModel, PIActuator, TorqueSpeedActuator
from wmr_dynamics.compiled.data import TERRAIN_BOX
from wmr_dynamics.contact_models import ContactModel, LinearContact
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.errors import ModelError
from wmr_dynamics.scenarios import zoe_rough as zoe
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Box, HeightGrid, Plane, Ramp


def both(model, terrain, duration, command, q0=None, qvel0=None, **kw):
    """The same run as a Python loop of single compiled steps (engine="python") and as one compiled call."""
    runs = {}
    for engine in ("python", "compiled"):
        sim = Simulator(model, terrain, mode="dynamic", engine=engine, **kw)
        assert sim.engine_used == engine
        runs[engine] = sim.run(duration, command, q0=q0, qvel0=qvel0, progress=False)
    return runs["python"], runs["compiled"]


def assert_same(a, b, atol=1e-12):
    assert a.q.shape == b.q.shape
    np.testing.assert_allclose(b.q, a.q, atol=atol)
    np.testing.assert_allclose(b.qvel, a.qvel, atol=atol * 10)
    np.testing.assert_allclose(b.contact_force, a.contact_force, atol=1e-9 * max(1.0, np.abs(a.contact_force).max()))
    np.testing.assert_allclose(b.dz, a.dz, atol=atol)
    np.testing.assert_allclose(b.contact_points, a.contact_points, atol=atol)
    np.testing.assert_allclose(b.slip_ratio, a.slip_ratio, atol=1e-9)
    np.testing.assert_allclose(b.slip_angle, a.slip_angle, atol=1e-9)
    np.testing.assert_array_equal(b.iterations, a.iterations)
    np.testing.assert_array_equal(b.converged, a.converged)


@pytest.fixture(scope="module")
def zoe_model():
    return zoe.zoe_model()


@pytest.fixture(scope="module")
def rough():
    return zoe.load_terrain(1)


def test_step_by_step_loop_carries_the_pi_integral_and_substeps_like_one_call():
    """LandTamer with PI actuators (the integral is SimData's state, carried from call to call), dropped from
    3 cm so the first contact needs sub-steps, turning on a slope: the Python loop of single steps and the
    one-call rollout give the same run, row for row."""
    model = wmr.load_model("landtamer")
    terrain = Plane(normal=(np.sin(0.1), 0.0, np.cos(0.1)))
    q0 = Simulator(model, terrain).initial_state()
    q0[6] += 0.03
    opts = dataclasses.replace(DynamicsOptions.from_config(model, contact="pacejka", max_iterations=4),
                               actuator=PIActuator(kp=2000.0, ki=500.0, torque_limit=3000.0))
    loop, one = both(model, terrain, 2.0, lambda t: (1.0, 0.5 if t > 1 else 0.0), q0=q0, dt=0.05, dynamics=opts)
    assert_same(loop, one)
    assert np.any(one.iterations > 4)  # some steps were retaken as sub-steps (iterations summed over them)
    assert one.q[-1, 4] > 1.0  # it drove


def test_python_contact_model_runs_inside_the_engine_like_the_kernel_it_wraps(zoe_model, rough):
    """A ContactModel written in Python (here: calling LinearContact's checked Python entry) is called back
    from the compiled step; the run equals the bundled kernel's to rounding, and two simulators share it."""
    base = zoe.dynamics_options(zoe_model, "linear").contact
    calls = []

    class Wrapped(ContactModel):
        def evaluate(self, v_c, R_omega, dz):
            calls.append(len(dz))
            return base.evaluate(v_c, R_omega, dz)

    ctrl = BodyVelocityController(zoe_model, "naive")
    q0 = zoe.initial_state(zoe_model, rough)
    shared = DynamicsOptions(contact=Wrapped())
    runs = [Simulator(zoe_model, rough, mode="dynamic", dt=0.04, controller=ctrl, dynamics=o).run(
        1.0, (0.5, 0.1), q0=q0, progress=False) for o in (DynamicsOptions(contact=base), shared, shared)]
    assert_same(runs[0], runs[1], atol=1e-10)
    assert_same(runs[1], runs[2], atol=0.0)  # shared options: no state leaks from one run into the next
    assert len(calls) > 25 and set(calls) == {zoe_model.num_wheels}


def test_python_actuator_model_runs_inside_the_engine_like_the_kernel_it_wraps():
    """An ActuatorModel written in Python (wrapping the DC-motor law) equals the bundled torque-speed kernel;
    a Python model that returns a wrong shape is named in the error."""
    model = wmr.load_model("landtamer")
    motor = TorqueSpeedActuator(stall_torque=400.0, no_load_speed=2.0, torque_limit=600.0)

    class Motor(ActuatorModel):
        def evaluate(self, theta, theta_dot, u, dt):
            return motor.evaluate(theta, theta_dot, u, dt)

    class Broken(ActuatorModel):
        def evaluate(self, theta, theta_dot, u, dt):
            return np.zeros(2), np.zeros((2, 2))

    contact = DynamicsOptions.from_config(model, contact="linear").contact
    q0 = Simulator(model, Plane()).initial_state()
    q0[6] -= 0.01
    runs = [Simulator(model, Plane(), mode="dynamic", dt=0.04, dynamics=DynamicsOptions(contact=contact, actuator=a))
            .run(2.0, (1.0, 0.2), q0=q0, progress=False) for a in (motor, Motor())]
    assert_same(runs[0], runs[1], atol=1e-10)
    with pytest.raises(ModelError, match=r"actuator model Broken.evaluate: output 0 has shape \(2,\), expected \(6,\)"):
        Simulator(model, Plane(), mode="dynamic", dynamics=DynamicsOptions(contact=contact, actuator=Broken())).run(
            0.1, (1.0, 0.0), q0=q0, progress=False)


# ---- batches ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def zoe_sim(zoe_model, rough):
    return Simulator(zoe_model, rough, mode="dynamic", dt=0.04, controller=BodyVelocityController(zoe_model, "naive"),
                     dynamics=zoe.dynamics_options(zoe_model, "linear"))


def test_batch_equals_single_rollouts(zoe_sim, zoe_model, rough):
    q0 = zoe.initial_state(zoe_model, rough)
    n = 30
    speeds = np.array([0.2, 0.5, 0.8, -0.3])
    cmds = np.zeros((4, n + 1, 2))
    cmds[:, :, 0] = speeds[:, None]
    cmds[:, :, 1] = np.linspace(-0.4, 0.4, 4)[:, None]
    batch = zoe_sim.rollout_batch(cmds, q0=q0)
    assert batch.q.shape == (4, n + 1, zoe_model.num_states) and np.all(batch.status[:, 0] == 0)
    for b in range(4):
        single = zoe_sim.run(n * 0.04, lambda t, b=b: tuple(cmds[b, 0]), q0=q0, progress=False)
        np.testing.assert_allclose(batch.q[b], single.q, atol=1e-12)
        k = slice(0, n + 1)
        assert batch.stat("max_abs_slip_ratio")[b] == pytest.approx(np.abs(single.slip_ratio[k]).max(), abs=1e-12)
        assert batch.stat("min_normal_force_N")[b] == pytest.approx(single.contact_force[k, :, 2].min(), abs=1e-9)
        assert batch.stat("mean_iterations")[b] == pytest.approx(single.iterations[k].mean(), abs=1e-12)
        assert batch.stat("max_abs_dz_m")[b] == pytest.approx(np.abs(single.dz[k]).max(), abs=1e-12)
        np.testing.assert_allclose(batch.final_pose()[b, :3], single.q[-1, 4:7], atol=1e-12)
    assert not batch.stat("rolled_over").any()
    # the commands made different paths
    assert np.ptp(batch.q[:, -1, 4]) > 0.3


def test_a_states_only_rollout_takes_the_same_steps_and_keeps_the_extremes(zoe_sim, zoe_model, rough):
    """``CompiledDynamics.rollout(record=False)`` (a planner's rollout, the C++ benchmark's loop): every state bit
    for bit the recorded rollout's, and one row of running extremes equal to the recorded arrays' over the run."""
    q0 = zoe.initial_state(zoe_model, rough)
    c = zoe_sim.compiled
    n = 40
    cmds = np.tile([0.6, 0.3], (n + 1, 1))
    qvel0 = np.zeros(zoe_model.num_dof)
    full = c.rollout(q0, qvel0, cmds, 0.04)
    bare = c.rollout(q0, qvel0, cmds, 0.04, record=False)
    np.testing.assert_array_equal(bare.q, full.q)
    assert bare.dz.shape == (1, zoe_model.num_wheels) and bare.iterations.shape == (1,)
    np.testing.assert_array_equal(bare.dz[0], np.abs(full.dz).max(axis=0))
    np.testing.assert_array_equal(bare.contact_force[0, :, 2], full.contact_force[:, :, 2].min(axis=0))
    np.testing.assert_array_equal(bare.slip_ratio[0], np.abs(full.slip_ratio).max(axis=0))
    np.testing.assert_allclose(bare.slip_angle[0], np.abs(full.slip_angle).max(axis=0), rtol=1e-15, atol=0)
    assert bare.iterations[0] == full.iterations.sum() and bare.cost[0] == full.cost.max()
    assert bool(bare.converged[0]) == bool(full.converged.all())
    assert np.ptp(full.q[:, 4]) > 0.5  # it drove


def test_batch_per_trajectory_contact_parameters(zoe_model, rough, zoe_sim):
    """Friction μ per trajectory equals separate simulators built with that μ."""
    q0 = zoe.initial_state(zoe_model, rough)
    base = zoe_sim.compiled.options.contact
    P0, _ = base.kernel_data(zoe_model.num_wheels)
    mus = [0.05, 1.0]
    P = np.repeat(P0[None], 2, axis=0)
    for col in ("mu_x", "mu_y"):  # both axes: mu (LinearContact.COLUMNS)
        P[:, :, LinearContact.COLUMNS.index(col)] = np.array(mus)[:, None]
    n = 25
    cmds = np.tile([1.0, 0.8], (2, n + 1, 1))
    batch = zoe_sim.rollout_batch(cmds, q0=q0, contact_params=P)
    for b, mu in enumerate(mus):
        p = base.params
        opts = DynamicsOptions(contact=LinearContact(kp=p["kp"], kd=p["kd"], c_slip=p["c_slip"], mu=mu))
        sim = Simulator(zoe_model, rough, mode="dynamic", dt=0.04, dynamics=opts,
                        controller=BodyVelocityController(zoe_model, "naive"))
        np.testing.assert_allclose(batch.q[b], sim.run(n * 0.04, (1.0, 0.8), q0=q0, progress=False).q, atol=1e-12)
    assert np.linalg.norm(batch.q[0, -1, 4:6] - batch.q[1, -1, 4:6]) > 0.01  # μ = 0.05 slides differently


# ---- errors and fallbacks ------------------------------------------------------------------------------

def test_bad_batch_input_is_named(zoe_sim):
    with pytest.raises(ModelError, match="commands: expected shape"):
        zoe_sim.rollout_batch(np.zeros((3, 10)))
    cmds = np.zeros((2, 5, 2))
    cmds[1, 3, 0] = np.nan
    with pytest.raises(ModelError, match=r"non-finite value nan at index \[1, 3, 0\]"):
        zoe_sim.rollout_batch(cmds)
    with pytest.raises(ModelError, match="contact_params: expected shape"):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), contact_params=np.zeros((3, 1, 6)))
    with pytest.raises(ModelError, match=r"q0: expected shape \(\d+,\) or \(2, \d+\), got \(3, "):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), q0=np.zeros((3, zoe_sim.model.num_states)))
    q0 = zoe_sim.initial_state()
    q0[5] = np.inf
    with pytest.raises(ModelError, match="q0: non-finite value inf at index 5"):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), q0=q0)
    with pytest.raises(ModelError, match="qvel0: expected shape"):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), qvel0=np.zeros(3))


def test_engine_choices_and_what_they_run(zoe_model, rough):
    custom = lambda q, T, v, w: np.full(4, v / 0.325)  # noqa: E731
    sim = Simulator(zoe_model, rough, mode="dynamic", controller=custom)
    assert sim.engine_used == "python"  # a Python loop calling the custom controller between compiled steps
    res = sim.run(1.0, (0.5, 0.0), progress=False)
    assert res.q[-1, 4] - res.q[0, 4] > 0.3
    with pytest.raises(ModelError, match="custom controller"):
        Simulator(zoe_model, rough, mode="dynamic", controller=custom, engine="compiled")
    opts = DynamicsOptions.from_config(zoe_model, approximate_bias=True)
    assert Simulator(zoe_model, rough, mode="dynamic", dynamics=opts).engine_used == "compiled"
    box = Box(center=(2.0, 0.0), size=(1.0, 1.0), height=0.1)
    sim = Simulator(zoe_model, box, mode="dynamic")
    assert sim.engine_used == "compiled" and sim.compiled.td.kind == TERRAIN_BOX  # exact, not rasterized
    ramp = Ramp(x_start=1.0, height=0.3, slope_deg=10.0)
    assert Simulator(zoe_model, ramp, mode="dynamic").engine_used == "compiled"
    with pytest.raises(ModelError, match="engine 'warp' is not one of"):
        Simulator(zoe_model, rough, mode="dynamic", engine="warp")
    with pytest.raises(ModelError, match="rollout_batch needs mode='dynamic'"):
        Simulator(zoe_model, rough, mode="kinematic").rollout_batch(np.zeros((1, 3, 2)))
    with pytest.raises(ModelError, match="dynamics must be a DynamicsOptions"):
        Simulator(zoe_model, rough, mode="dynamic", dynamics={"contact": "linear"})
    with pytest.raises(ModelError, match="must be a contact model with evaluate"):
        Simulator(zoe_model, rough, mode="dynamic", dynamics=DynamicsOptions(contact="linear"))


def test_nan_command_raises(zoe_model):
    heights = np.zeros((5, 5))
    grid = HeightGrid(-1.0, -1.0, 0.5, 0.5, heights)
    sim = Simulator(zoe_model, grid, mode="dynamic", engine="compiled")
    with pytest.raises(ModelError, match="command at t=0.08 s is not finite"):
        sim.run(0.2, lambda t: (np.nan if t > 0.05 else 0.1, 0.0), progress=False)


def test_nopython_disabled_jit_runs_the_same_code(tmp_path):
    """NUMBA_DISABLE_JIT=1 runs the kernels as Python: same numbers as the compiled run (a few steps)."""
    code = (
        "import numpy as np, wmr_dynamics as wmr\n"
        "from wmr_dynamics.simulate import Simulator\n"
        "from wmr_dynamics.terrain import gaussian_rough_terrain\n"
        "m = wmr.load_model('zoe')\n"
        "t = gaussian_rough_terrain(rms=0.03, corr_len=0.3, bounds=(-2, 4, -3, 3), seed=2)\n"
        "s = Simulator(m, t, mode='dynamic', engine='compiled', dt=0.05)\n"
        "r = s.run(0.25, (0.5, 0.2), progress=False)\n"
        "np.save(r'%s', r.q)\n")
    env = dict(os.environ)
    outs = []
    for flag in ("0", "1"):
        out = tmp_path / f"q{flag}.npy"
        env["NUMBA_DISABLE_JIT"] = flag
        subprocess.run([sys.executable, "-c", code % out], check=True, env=env, timeout=300)
        outs.append(np.load(out))
    np.testing.assert_allclose(outs[1], outs[0], atol=1e-12)


def test_fewer_collision_samples_stay_close_to_the_default(zoe_model, rough):
    """DynamicsOptions.collision_samples reaches the engine; 12 coarse samples give nearly the default motion."""
    ctrl = BodyVelocityController(zoe_model, "naive")
    q0 = zoe.initial_state(zoe_model, rough)
    runs = [Simulator(zoe_model, rough, mode="dynamic", dt=0.04, controller=ctrl,
                      dynamics=DynamicsOptions.from_config(zoe_model, contact="linear", **kw)).run(
        2.0, (0.5, 0.0), q0=q0, progress=False) for kw in ({"collision_samples": 12}, {})]
    assert np.linalg.norm(runs[0].q[-1, 4:7] - runs[1].q[-1, 4:7]) < 2e-3  # m (measured 1.3 mm)
    assert np.abs(runs[0].q[-1] - runs[1].q[-1]).max() > 0.0  # but not the very same search
    with pytest.raises(ModelError, match="collision_samples must be an integer >= 8"):
        DynamicsOptions.from_config(zoe_model, collision_samples=4)


@pytest.mark.parametrize("mode", ["dynamic", "kinematic"])
def test_a_compiled_run_announces_itself_instead_of_a_progress_bar(zoe_model, rough, mode, capsys):
    """The compiled engine runs a simulation in one call: with progress requested it prints its estimate before
    and the time taken after; short runs stay silent by default and with progress=False."""
    sim = Simulator(zoe_model, rough, mode=mode, dt=0.04)
    assert sim.engine_used == "compiled"
    sim.run(0.4, (0.5, 0.0), progress=True)
    err = capsys.readouterr().err
    assert "simulating 10 steps on the compiled engine in one call" in err and " done in " in err
    for flag in (None, False):
        sim.run(0.4, (0.5, 0.0), progress=flag)
        assert capsys.readouterr().err == ""


def test_torque_speed_motors_cap_the_wheel_rate_at_their_no_load_speed():
    """LandTamer on flat ground commanded 2 m/s with DC motors (torque–speed line, eq. 2.73) whose no-load speed
    is half the commanded wheel rate: the motors saturate, and the rover settles where each motor's torque
    (stall·(1 − θ̇/ω0)) balances the small rolling losses: θ̇ just below ω0 (the motor line is the oracle),
    the speed ω0·r less the slip."""
    model = wmr.load_model("landtamer")
    r = float(model.wheel_radii[0])
    w0, stall = 1.0 / r, 400.0  # rad/s, N·m
    q0 = Simulator(model, Plane()).initial_state()
    q0[6] -= 0.01  # pressed 1 cm into the ground
    opts = dataclasses.replace(DynamicsOptions.from_config(model, contact="linear"),
                               actuator=TorqueSpeedActuator(stall_torque=stall, no_load_speed=w0,
                                                            torque_limit=1.5 * stall))
    cc = Simulator(model, Plane(), mode="dynamic", dt=0.04, dynamics=opts).run(8.0, (2.0, 0.0), q0=q0, progress=False)
    assert cc.converged.all()
    rates = cc.qvel[-1, model.wheel_frame + 5]
    assert np.all(rates < w0) and np.all(rates > 0.97 * w0)  # saturated on the motor line, near no load
    torque = stall * (1.0 - rates / w0)
    assert np.all(torque > 0) and np.all(torque < 0.03 * stall)  # small rolling losses, not the stall torque
    assert cc.qvel[-1, 3] == pytest.approx(w0 * r, rel=0.03)  # 1 m/s, not the commanded 2
