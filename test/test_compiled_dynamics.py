"""The compiled dynamic path (wmr_dynamics.compiled) against the Python force balance it compiles.

Oracle: ``Simulator(engine="python")`` — the step-by-step ForceBalance (itself tested against Pinocchio,
finite differences and closed forms).  Both paths take the same decisions (independent rows, Newton
iterations, line-search steps, sub-steps), so states agree to rounding (1e-8 after hundreds of steps).
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.actuators import PIActuator
from wmr_dynamics.contact_models import LinearContact
from wmr_dynamics.controllers import BodyVelocityController
from wmr_dynamics.dynamics.force_balance import DynamicsOptions
from wmr_dynamics.errors import ModelError
from wmr_dynamics.scenarios import zoe_rough as zoe
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Box, HeightGrid, Plane, Ramp, gaussian_rough_terrain


def both(model, terrain, duration, command, q0=None, qvel0=None, **kw):
    runs = {}
    for engine in ("python", "compiled"):
        sim = Simulator(model, terrain, mode="dynamic", engine=engine, **kw)
        assert sim.engine_used == engine
        runs[engine] = sim.run(duration, command, q0=q0, qvel0=qvel0, progress=False)
    return runs["python"], runs["compiled"]


def assert_same(py, cc, atol=1e-8):
    assert py.q.shape == cc.q.shape
    np.testing.assert_allclose(cc.q, py.q, atol=atol)
    np.testing.assert_allclose(cc.qvel, py.qvel, atol=atol * 10)
    np.testing.assert_allclose(cc.contact_force, py.contact_force, atol=1e-6 * max(1.0, np.abs(py.contact_force).max()))
    np.testing.assert_allclose(cc.dz, py.dz, atol=atol)
    np.testing.assert_allclose(cc.contact_points, py.contact_points, atol=atol)
    np.testing.assert_allclose(cc.slip_ratio, py.slip_ratio, atol=1e-6)
    np.testing.assert_allclose(cc.slip_angle, py.slip_angle, atol=1e-6)
    np.testing.assert_array_equal(cc.iterations, py.iterations)
    np.testing.assert_array_equal(cc.converged, py.converged)


@pytest.fixture(scope="module")
def zoe_model():
    return zoe.zoe_model()


@pytest.fixture(scope="module")
def rough():
    return zoe.load_terrain(1)


@pytest.mark.parametrize("kind,duration", [("linear", 3.0), ("pacejka", 2.0), ("ishigami_lut", 1.0)])
def test_zoe_rough_terrain_matches_python(zoe_model, rough, kind, duration):
    ctrl = BodyVelocityController(zoe_model, "naive")
    q0 = zoe.initial_state(zoe_model, rough)
    py, cc = both(zoe_model, rough, duration, (0.5, 0.0), q0=q0, dt=0.04, controller=ctrl,
                  dynamics=zoe.dynamics_options(zoe_model, kind))
    assert_same(py, cc)
    assert cc.q[-1, 4] > 0.5 * 0.5 * duration  # it drove forward


def test_geometric_controller_turning_with_steering_matches_python(rough):
    model = wmr.load_model("zoe")  # passive axle steering driven by differential wheel speeds
    sim = Simulator(model, rough, mode="kinematic")
    q0 = sim.initial_state()
    py, cc = both(model, rough, 2.0, lambda t: (0.5, 0.3 if t > 0.5 else 0.0), q0=q0, dt=0.04)
    assert_same(py, cc)
    assert abs(cc.q[-1, 7:]).max() > 0.01  # the axles did steer


@pytest.mark.parametrize("name", ["rocky7", "pvc_tricycle", "recbot"])
def test_articulated_vehicles_on_a_rough_grid_match_python(name):
    model = wmr.load_model(name)
    terrain = gaussian_rough_terrain(rms=0.03, corr_len=0.3, bounds=(-2, 6, -3, 3), seed=4)
    py, cc = both(model, terrain, 1.5, (0.4, 0.2), dt=0.04)
    assert_same(py, cc, atol=1e-7)


def test_pi_actuators_and_substeps_match_python():
    """LandTamer with P(I) actuators (ki > 0 here, so the integral state matters), dropped from 3 cm so the first
    contact needs sub-steps, on a slope; the PI integral left in the actuator matches too."""
    model = wmr.load_model("landtamer")
    terrain = Plane(normal=(np.sin(0.1), 0.0, np.cos(0.1)))
    q0 = Simulator(model, terrain).initial_state()
    q0[6] += 0.03
    runs = []
    for engine in ("python", "compiled"):
        opts = DynamicsOptions.from_config(model, contact="pacejka", actuator="pi", max_iterations=4)
        opts.actuator = PIActuator(kp=2000.0, ki=500.0, torque_limit=3000.0)
        sim = Simulator(model, terrain, mode="dynamic", dt=0.05, engine=engine, dynamics=opts)
        runs.append((sim.run(2.0, lambda t: (1.0, 0.5 if t > 1 else 0.0), q0=q0, progress=False), opts.actuator))
    (py, a_py), (cc, a_cc) = runs
    assert_same(py, cc, atol=1e-7)
    np.testing.assert_allclose(a_cc.integral, a_py.integral, atol=1e-9)
    assert np.any(py.iterations > 4)  # some steps were retaken as sub-steps (iterations summed over them)


def test_constant_mass_matrix_option_matches_python(zoe_model, rough):
    q0 = zoe.initial_state(zoe_model, rough)
    opts = [DynamicsOptions.from_config(zoe_model, contact="linear", constant_mass_matrix=True) for _ in range(2)]
    res = [Simulator(zoe_model, rough, mode="dynamic", dt=0.04, engine=e, dynamics=o,
                     controller=BodyVelocityController(zoe_model, "naive")).run(1.0, (0.5, 0.0), q0=q0, progress=False)
           for e, o in zip(("python", "compiled"), opts, strict=True)]
    assert_same(*res)


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


def test_batch_per_trajectory_contact_parameters(zoe_model, rough, zoe_sim):
    """Friction μ per trajectory equals separate simulators built with that μ."""
    q0 = zoe.initial_state(zoe_model, rough)
    base = zoe_sim.force_balance.opt.contact
    P0, _ = base.kernel_data(zoe_model.num_wheels)
    mus = [0.05, 1.0]
    P = np.repeat(P0[None], 2, axis=0)
    P[:, :, 4] = np.array(mus)[:, None]  # column 4 = mu (LinearContact)
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
    with pytest.raises(ModelError, match=r"non-finite value at index \[1, 3, 0\]"):
        zoe_sim.rollout_batch(cmds)
    with pytest.raises(ModelError, match="contact_params: expected shape"):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), contact_params=np.zeros((3, 1, 6)))
    with pytest.raises(ModelError, match=r"q0: expected shape \(\d+,\) or \(2, \d+\), got \(3, "):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), q0=np.zeros((3, zoe_sim.model.num_states)))
    q0 = zoe_sim.initial_state()
    q0[5] = np.inf
    with pytest.raises(ModelError, match="q0: contains NaN or inf"):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), q0=q0)
    with pytest.raises(ModelError, match="qvel0: expected shape"):
        zoe_sim.rollout_batch(np.zeros((2, 5, 2)), qvel0=np.zeros(3))


def test_python_only_configurations_fall_back_or_explain(zoe_model, rough):
    custom = lambda q, T, v, w: np.full(4, v / 0.325)  # noqa: E731
    sim = Simulator(zoe_model, rough, mode="dynamic", controller=custom)
    assert sim.engine_used == "python"
    with pytest.raises(ModelError, match="custom controller"):
        Simulator(zoe_model, rough, mode="dynamic", controller=custom, engine="compiled")
    opts = DynamicsOptions.from_config(zoe_model, approximate_bias=True)
    assert Simulator(zoe_model, rough, mode="dynamic", dynamics=opts).engine_used == "python"
    box = Box(center=(2.0, 0.0), size=(1.0, 1.0), height=0.1)
    assert Simulator(zoe_model, box, mode="dynamic").engine_used == "python"  # auto never rasterizes
    assert Simulator(zoe_model, box, mode="dynamic", engine="compiled").engine_used == "compiled"
    ramp = Ramp(x_start=1.0, height=0.3, slope_deg=10.0)
    assert Simulator(zoe_model, ramp, mode="dynamic").engine_used == "compiled"  # exact profile kind
    with pytest.raises(ModelError, match="engine 'warp' is not one of"):
        Simulator(zoe_model, rough, mode="dynamic", engine="warp")
    with pytest.raises(ModelError, match="rollout_batch needs mode='dynamic'"):
        Simulator(zoe_model, rough, mode="kinematic").rollout_batch(np.zeros((1, 3, 2)))


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


def test_fewer_collision_samples_match_python_and_stay_close_to_the_default(zoe_model, rough):
    """DynamicsOptions.collision_samples reaches both paths; 12 coarse samples give nearly the default motion."""
    ctrl = BodyVelocityController(zoe_model, "naive")
    q0 = zoe.initial_state(zoe_model, rough)
    opts = DynamicsOptions.from_config(zoe_model, contact="linear", collision_samples=12)
    py, cc = both(zoe_model, rough, 2.0, (0.5, 0.0), q0=q0, dt=0.04, controller=ctrl, dynamics=opts)
    assert_same(py, cc)
    ref = Simulator(zoe_model, rough, mode="dynamic", dt=0.04, controller=ctrl,
                    dynamics=DynamicsOptions.from_config(zoe_model, contact="linear")).run(2.0, (0.5, 0.0), q0=q0,
                                                                                          progress=False)
    assert np.linalg.norm(cc.q[-1, 4:7] - ref.q[-1, 4:7]) < 1e-3  # m
    with pytest.raises(ModelError, match="collision_samples must be an integer >= 8"):
        Simulator(zoe_model, rough, mode="dynamic",
                  dynamics=DynamicsOptions.from_config(zoe_model, collision_samples=4))


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
    the speed ω0·r less the slip.  Python and compiled paths agree."""
    from wmr_dynamics.actuators import TorqueSpeedActuator

    model = wmr.load_model("landtamer")
    r = float(model.wheel_radii[0])
    w0, stall = 1.0 / r, 400.0  # rad/s, N·m
    q0 = Simulator(model, Plane()).initial_state()
    q0[6] -= 0.01  # pressed 1 cm into the ground: off the contact law's kink at Δz = 0, where the two paths'
    # rounding would pick different one-sided derivatives (and iteration counts) at the first step
    runs = []
    for engine in ("python", "compiled"):
        opts = DynamicsOptions.from_config(model, contact="linear")
        # (a torque limit above the stall torque: at rest the motor line gives exactly the stall torque, and a
        # limit equal to it would put the first step on the cap's kink, where the two paths' rounding picks
        # different one-sided derivatives and different iteration counts)
        opts.actuator = TorqueSpeedActuator(stall_torque=stall, no_load_speed=w0, torque_limit=1.5 * stall)
        sim = Simulator(model, Plane(), mode="dynamic", dt=0.04, engine=engine, dynamics=opts)
        assert sim.engine_used == engine
        runs.append(sim.run(8.0, (2.0, 0.0), q0=q0, progress=False))
    py, cc = runs
    np.testing.assert_allclose(cc.q, py.q, atol=1e-7)
    np.testing.assert_allclose(cc.qvel, py.qvel, atol=1e-6)
    # (at the steady state the warm start's residual sits at the tolerance, so a step may need 0 iterations on
    # one path and 1 on the other: compare the totals, not step by step)
    assert abs(cc.iterations.sum() - py.iterations.sum()) <= 5 and cc.converged.all() and py.converged.all()
    rates = cc.qvel[-1, model.wheel_frame + 5]
    assert np.all(rates < w0) and np.all(rates > 0.97 * w0)  # saturated on the motor line, near no load
    torque = stall * (1.0 - rates / w0)
    assert np.all(torque > 0) and np.all(torque < 0.03 * stall)  # small rolling losses, not the stall torque
    assert cc.qvel[-1, 3] == pytest.approx(w0 * r, rel=0.03)  # 1 m/s, not the commanded 2
