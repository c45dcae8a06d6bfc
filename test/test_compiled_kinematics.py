"""The compiled kinematic path (stabilized DAE, Euler) against the Python Simulator it compiles."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.compiled.data import TERRAIN_BOX, model_data
from wmr_dynamics.compiled.terrain import compile_terrain, height_normal
from wmr_dynamics.errors import ModelError
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.scenarios import zoe_rough as zoe
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.terrain import Box, Composite, HeightGrid, Plane, Steps, gaussian_rough_terrain


def both(model, terrain, duration, command, **kw):
    """The same run as one compiled call and as the Python loop of single compiled steps (engine="python")."""
    out = []
    for engine in ("compiled", "python"):
        sim = Simulator(model, terrain, engine=engine, **kw)
        assert sim.engine_used == engine
        out.append(sim.run(duration, command, progress=False))
    return out


def assert_same(a, b, atol=1e-12):
    np.testing.assert_allclose(b.q, a.q, atol=atol)
    np.testing.assert_allclose(b.qvel, a.qvel, atol=atol * 10)
    np.testing.assert_allclose(b.dz, a.dz, atol=atol)
    np.testing.assert_allclose(b.contact_points, a.contact_points, atol=atol)
    np.testing.assert_allclose(b.contact_speed, a.contact_speed, atol=1e-10)
    np.testing.assert_allclose(b.residual, a.residual, atol=1e-10)


@pytest.mark.parametrize("mode, integrator", [("kinematic", "euler"), ("kinematic", "rk4"), ("enhanced", "euler")])
def test_one_call_and_the_step_loop_give_the_same_run(mode, integrator):
    """Rocky 7 turning on rough ground: the whole run in one compiled call equals single compiled steps called
    from Python with the contact set carried between them (the path of a custom controller)."""
    from wmr_dynamics.kinematics.enhanced import SlipParams

    model = wmr.load_model("rocky7")
    terrain = gaussian_rough_terrain(rms=0.04, corr_len=0.4, bounds=(-3, 8, -4, 4), seed=7)
    kw = {"slip": SlipParams(p=(-0.2, -0.1, 0.3, 0.1, 0.02, -0.2))} if mode == "enhanced" else {}
    one, loop = both(model, terrain, 2.0, lambda t: (0.5, 0.3 if t > 1.0 else 0.0), dt=0.04, mode=mode,
                     integrator=integrator, **kw)
    assert_same(one, loop)
    # the margin: computed in the run's steps (run() asks the compiled rollout for it), as in the loop's steps
    np.testing.assert_allclose(loop.rollover_margin[:-1], one.rollover_margin[:-1], atol=1e-12)
    assert np.all(one.rollover_margin > 0.1)


def test_joint_limits_are_hard_stops():
    """The PVC tricycle's camber joints run into their ±0.35 rad stops on steep rough ground."""
    model = wmr.load_model("pvc_tricycle")
    terrain = gaussian_rough_terrain(rms=0.08, corr_len=0.3, bounds=(-3, 8, -4, 4), seed=3)
    cc = Simulator(model, terrain, dt=0.04).run(3.0, (0.5, 0.0), progress=False)
    camber = [model.joint_index(j) for j in ("pvc2_joint", "pvc3_joint")]
    theta = cc.q[:, 7:][:, camber]
    assert theta.max() > 0.34  # a stop was reached ...
    # ... and held: a rate that would pass the stop within the step (σ = 1/Δt) is set to σ·(limit − θ), which
    # lands the joint exactly on it (Euler on a joint coordinate is exact)
    assert np.all(np.abs(theta) <= 0.35 + 1e-9)


def test_a_box_is_exact_in_the_step_edges_included():
    """No rasterizing: the closed form of a box — its height on the closed footprint, the base elsewhere,
    normals up — holds up to a nanometre from its vertical faces."""
    box = Box(center=(2.0, 0.5), size=(1.0, 2.0), height=0.2)
    td = compile_terrain(box)
    assert td.kind == TERRAIN_BOX
    eps = 1e-9
    for x, y, h in ((2.0, 0.5, 0.2), (0.5, 0.0, 0.0), (2.3, 1.2, 0.2), (1.5 + eps, 0.0, 0.2), (1.5 - eps, 0.0, 0.0),
                    (2.0, 1.5 - eps, 0.2), (2.0, 1.5 + eps, 0.0), (2.5 - eps, -0.5 + eps, 0.2)):
        got = height_normal(td.kind, td.params, td.grid, x, y)
        assert got == (h, 0.0, 0.0, 1.0)


def test_a_box_beside_a_sloped_plane_leaves_the_plane_as_it_is():
    """A Composite of a sloped plane and a box, driven on the plane away from the box, is the plane: the run is
    the plane's to 1e-9 (the Composite's contacts come from the full search, the plane's from the warm-started
    one: both end at the same minimum, to the polish's tolerance).  (Rasterized over the box's bounds, as the
    step did before, the plane was clamped flat beyond them: 0.4 m high at x = 10 m where it is 1 m.)"""
    model = wmr.load_model("zoe")
    plane = Plane(normal=(-0.1, 0.0, 1.0))  # h = 0.1 x
    world = Composite([plane, Box(center=(12.0, 0.0), size=(1.0, 1.0), height=0.5)])
    runs = []
    for t in (world, plane):
        sim = Simulator(model, t, dt=0.04)
        runs.append(sim.run(4.0, (0.5, 0.0), q0=sim.initial_state(xyz=(1.5, 0.0, 0.0), yaw=0.0), progress=False))
    assert runs[0].q[-1, 6] - runs[0].q[0, 6] == pytest.approx(0.1 * (runs[0].q[-1, 4] - runs[0].q[0, 4]), rel=0.02)
    np.testing.assert_allclose(runs[0].q, runs[1].q, rtol=0, atol=1e-9)


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_a_box_as_wide_as_the_world_is_a_step(mode):
    """Physics oracle for the exact box in the step: a 10 cm box 10 m wide whose face is at x = 2 m is, where the
    wheels go, the same height field as a single 10 cm step at x = 2 m — so Zoë's run over it (the wheels meet
    the vertical face and climb it) is the Steps run to the last digit.  (Rasterized at 2 cm, the face was a
    5:1 ramp and the kinematic runs differed; the dynamic ones did not: their contacts never fell on it.)"""
    model = wmr.load_model("zoe")
    box = Composite([Plane(), Box(center=(4.0, 0.0), size=(4.0, 10.0), height=0.1)])  # x in [2, 6] exactly
    step = Steps(x_start=2.0, step_length=4.0, step_height=0.1, n_steps=1)
    runs = [Simulator(model, t, mode=mode, dt=0.04).run(8.0, (0.5, 0.0), progress=False) for t in (box, step)]
    # both axles climbed it: the body rose by the step's height from where it stood (settled) at t = 1 s
    assert runs[0].q[-1, 6] - runs[0].q[25, 6] == pytest.approx(0.1, abs=2e-3)
    np.testing.assert_array_equal(runs[0].q, runs[1].q)


def test_bad_commands_are_named():
    model = wmr.load_model("rocky7")
    sim = Simulator(model, Plane(), mode="kinematic", engine="compiled")
    with pytest.raises(ModelError, match="command at t=0.12 s is not finite"):
        sim.run(0.4, lambda t: (0.2, np.inf if t > 0.1 else 0.0), progress=False)
    with pytest.raises(ModelError, match="joint rates: expected 8 rates"):
        sim.velocity(sim.initial_state(), 0.0, 0.0, rates=np.zeros(3))
    custom = lambda q, T, v, w: np.zeros(8)  # noqa: E731
    with pytest.raises(ModelError, match="custom controller"):
        Simulator(model, Plane(), controller=custom, engine="compiled")


def test_flat_ground_straight_driving_has_no_slip_on_the_compiled_path():
    """Closed form: on flat ground a straight command gives zero contact-point speed, distance v·t."""
    model = wmr.load_model("landtamer")
    sim = Simulator(model, HeightGrid(-5, -5, 0.5, 0.5, np.zeros((41, 41))), mode="kinematic", engine="compiled")
    r = sim.run(4.0, (0.7, 0.0), progress=False)
    assert np.abs(r.contact_speed[:-1]).max() < 1e-9
    assert r.summary()["distance_m"] == pytest.approx(0.7 * 4.0, rel=1e-6)


# ---- the step and rollout kernels driven by given actuated rates ---------------------------------------------
from wmr_dynamics.compiled.controllers import controller_data  # noqa: E402
from wmr_dynamics.compiled.kinematics import (  # noqa: E402
    INTEGRATOR_EULER,
    STATUS_COMMAND,
    KinematicsData,
    kinematic_rollout,
    kinematic_step,
    kinematic_workspace,
)
from wmr_dynamics.compiled.linalg import least_squares  # noqa: E402


def compiled_rates_run(model, terrain, U, dt, q0):
    md, td = model_data(model), compile_terrain(terrain)
    n1, nw = len(U), model.num_wheels
    out = (np.full((n1, model.num_states), np.nan), np.zeros((n1, model.num_dof)), np.zeros((n1, nw)),
           np.zeros((n1, nw, 3)), np.zeros((n1, nw)), np.zeros(n1))
    kd = KinematicsData(1.0 / dt, np.zeros(15), False, False, INTEGRATOR_EULER)
    status = kinematic_rollout(md, td, controller_data(None, model, direct=True), kd, kinematic_workspace(md),
                               np.asarray(q0, dtype=float), np.ascontiguousarray(U, dtype=float), dt, *out,
                               np.zeros(n1), True)
    return status, out


def rates(model, n, dt, wheel_speed, steer=0.0, seed=0):
    """(n+1, na) smooth actuated rates: wheels at wheel_speed (m/s) / r with a slow differential wobble,
    steering joints at steer · sin(t)."""
    t = np.arange(n + 1)[:, None] * dt
    rng = np.random.default_rng(seed)
    U = np.zeros((n + 1, len(model.actuated_joint_names)))
    radius = dict(zip(model.wheel_joint_names, model.wheel_radii, strict=True))
    for j, name in enumerate(model.actuated_joint_names):
        if name in radius:
            U[:, j] = wheel_speed / radius[name] * (1.0 + 0.2 * np.sin(0.7 * t[:, 0] + rng.uniform(0, 6)))
        else:
            U[:, j] = steer * np.sin(t[:, 0] + rng.uniform(0, 6))
    return U


def test_rates_driven_rollout_holds_the_steering_at_its_stops():
    """PVC tricycle: torus wheels, camber joints, and the actuated steering commanded past its URDF stops
    (±0.6 rad): the active set holds it there."""
    model, dt = wmr.load_model("pvc_tricycle"), 0.04
    terrain = gaussian_rough_terrain(rms=0.08, corr_len=0.3, bounds=(-3, 8, -4, 4), seed=3)
    q0 = Simulator(model, terrain, dt=dt).initial_state()
    U = rates(model, 75, dt, 0.4, steer=0.8, seed=1)
    status, out = compiled_rates_run(model, terrain, U, dt, q0)
    assert status == (0, -1)
    theta = out[0][:, 7:]
    steer = model.joint_index("steer1_joint")
    assert np.abs(theta[:, steer]).max() > 0.6 - 1e-3  # the steering stop (±0.6 rad) was reached and held
    assert np.abs(theta[:, steer]).max() < 0.6 + 0.05
    assert out[0][-1, 4] - q0[4] > 0.8  # it drove


def test_kinematic_step_is_one_row_of_the_rollout():
    model, dt = wmr.load_model("rocky7"), 0.04
    terrain = gaussian_rough_terrain(rms=0.04, corr_len=0.3, bounds=(-3, 8, -4, 4), seed=3)
    q0 = Simulator(model, terrain, dt=dt).initial_state()
    U = rates(model, 5, dt, 0.4, steer=0.3)
    _, (Q, QV, DZ, _, VC, _) = compiled_rates_run(model, terrain, U, dt, q0)
    md, td = model_data(model), compile_terrain(terrain)
    ws = kinematic_workspace(md)
    kd = KinematicsData(1.0 / dt, np.zeros(15), False, False, INTEGRATOR_EULER)
    q, nw = q0.copy(), model.num_wheels
    q_next, qvel, dz, vc = np.zeros_like(q), np.zeros(model.num_dof), np.zeros(nw), np.zeros(nw)
    for k in range(5):
        assert kinematic_step(md, td, kd, ws, q, U[k], dt, q_next, qvel, dz, vc) == 0
        np.testing.assert_array_equal(qvel, QV[k])
        np.testing.assert_array_equal(dz, DZ[k])
        np.testing.assert_array_equal(vc, VC[k])
        np.testing.assert_array_equal(q_next, Q[k + 1])
        q = q_next.copy()


def test_a_non_finite_rate_is_an_error_code_not_a_crash():
    model, dt = wmr.load_model("zoe"), 0.04
    terrain = Plane()
    q0 = Simulator(model, terrain, dt=dt).initial_state()
    U = rates(model, 10, dt, 0.5)
    U[6, 2] = np.nan
    status, out = compiled_rates_run(model, terrain, U, dt, q0)
    assert status == (STATUS_COMMAND, 6)
    assert np.all(np.isfinite(out[0][:7])) and np.all(np.isnan(out[0][7:]))  # rows up to the failure written
    md, td = model_data(model), compile_terrain(terrain)
    z = np.zeros(model.num_wheels)
    kd = KinematicsData(25.0, np.zeros(15), False, False, INTEGRATOR_EULER)
    assert kinematic_step(md, td, kd, kinematic_workspace(md), q0, U[6], dt, np.zeros_like(q0),
                          np.zeros(model.num_dof), z, z.copy()) == STATUS_COMMAND


def test_fast_collision_method_finds_the_same_contacts_along_the_zoe_benchmark_run():
    """The fast search (``method=1``, not the engine's default) against the sampled one at every 10th state of
    a 10 s Zoë run on zoe_rough_2: Δz within 0.1 mm; contact points within 3 mm (Δz is flat along the rim
    near its minimum, so the point moves more than Δz: 1.3 mm measured)."""
    from wmr_dynamics.compiled.collision import METHOD_FAST, METHOD_SAMPLED, compiled_wheel_contacts

    model, terrain, dt = zoe.zoe_model(), zoe.load_terrain(2), 0.04
    q0 = Simulator(model, terrain, dt=dt).initial_state()
    status, out = compiled_rates_run(model, terrain, rates(model, 250, dt, 0.5), dt, q0)
    assert status == (0, -1)
    td = compile_terrain(terrain)
    for q in out[0][::10]:
        T = forward_kinematics(model, q)
        a, b = (compiled_wheel_contacts(model, T, td, method=m) for m in (METHOD_SAMPLED, METHOD_FAST))
        np.testing.assert_allclose(b.dz, a.dz, atol=1e-4)
        np.testing.assert_allclose(b.points, a.points, atol=3e-3)


def test_least_squares_is_lstsq_on_the_selected_columns():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(14, 13))
    cols = np.array([0, 1, 2, 3, 4, 5, 6, 8, 11], dtype=np.int64)
    b = rng.normal(size=14)
    N, x = np.zeros((13, 13)), np.zeros(13)
    assert least_squares(A, 14, cols, cols.size, b, N, x, np.zeros(13))
    np.testing.assert_allclose(x[:cols.size], np.linalg.lstsq(A[:, cols], b, rcond=None)[0], rtol=0, atol=1e-10)
    A[:, cols[4]] = 0.0  # a column that no constraint sees (a free joint): exactly 0, as the minimum norm
    assert least_squares(A, 14, cols, cols.size, b, N, x, np.zeros(13))
    ref = np.linalg.lstsq(A[:, cols], b, rcond=None)[0]
    assert x[4] == 0.0
    np.testing.assert_allclose(x[:cols.size], ref, rtol=0, atol=1e-10)
    A[:, cols[3]] = A[:, cols[2]]  # dependent columns: the same fit, the split between them only to ~1e-4
    b = A[:, cols] @ rng.normal(size=cols.size)
    assert least_squares(A, 14, cols, cols.size, b, N, x, np.zeros(13))
    np.testing.assert_allclose(A[:, cols] @ x[:cols.size], b, rtol=0, atol=1e-9)
    np.testing.assert_allclose(x[:cols.size], np.linalg.lstsq(A[:, cols], b, rcond=None)[0], rtol=0, atol=1e-3)
    assert not least_squares(np.zeros((3, 3)), 3, cols, 2, b, N, x, np.zeros(13))


_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import wmr_dynamics as wmr
from test_compiled_kinematics import compiled_rates_run, rates
from wmr_dynamics.terrain import gaussian_rough_terrain
model = wmr.load_model("rocky7")
terrain = gaussian_rough_terrain(rms=0.04, corr_len=0.3, bounds=(-1, 2, -1, 1), seed=3)
q0 = model.state(xyz=(0.0, 0.0, 0.45))
q0[7:] = 0.05
status, out = compiled_rates_run(model, terrain, rates(model, 3, 0.04, 0.4, steer=0.3), 0.04, q0)
print(json.dumps([list(status)] + [np.asarray(a).tolist() for a in out]))
"""


def test_the_rollout_runs_interpreted_with_numba_disabled_and_gives_the_same_numbers():
    import json
    import os
    import subprocess

    root = Path(__file__).resolve().parents[1]
    runs = []
    for disable in ("1", "0"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable, PYTHONPATH=str(root))
        res = subprocess.run([sys.executable, "-c", _SCRIPT, str(Path(__file__).parent)], env=env, cwd=root,
                             capture_output=True, text=True, check=True)
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert runs[0][0] == runs[1][0] == [0, -1]
    for a, b in zip(runs[0][1:], runs[1][1:], strict=True):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=0, atol=1e-12)


def test_the_kinematic_steps_allocate_nothing(tmp_path):
    """Every scratch array of the kinematic step (plain, enhanced with its composite inertia, body force and
    rollover-margin hull, RK4) lives in the workspace: a rollout of 110 steps makes as many NRT allocations as
    one of 10 (numba's allocation counter, NUMBA_NRT_STATS=1 in a fresh process)."""
    code = (
        "import numpy as np, wmr_dynamics as wmr\n"
        "from numba.core.runtime import rtsys\n"
        "from wmr_dynamics.simulate import Simulator\n"
        "from wmr_dynamics.terrain import gaussian_rough_terrain\n"
        "from wmr_dynamics.kinematics.enhanced import SlipParams\n"
        "m = wmr.load_model('rocky7')\n"
        "t = gaussian_rough_terrain(rms=0.03, corr_len=0.3, bounds=(-2, 10, -4, 4), seed=1)\n"
        "slip = SlipParams(p=(-0.1, -0.05, -0.1, -0.05, 0.01, -0.05))\n"
        "for mode, integ in (('kinematic', 'euler'), ('enhanced', 'euler'), ('enhanced', 'rk4')):\n"
        "    sim = Simulator(m, t, mode=mode, dt=0.04, slip=slip, integrator=integ)\n"
        "    counts = []\n"
        "    for n in (10, 110):\n"
        "        a = rtsys.get_allocation_stats().alloc\n"
        "        sim.compiled.rollout(sim.initial_state(), np.tile([0.5, 0.1], (n + 1, 1)), 0.04)\n"
        "        counts.append(rtsys.get_allocation_stats().alloc - a)\n"
        "    print(mode, integ, counts[1] - counts[0])\n")
    env = dict(os.environ, NUMBA_NRT_STATS="1")
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300, capture_output=True,
                         text=True).stdout.split("\n")
    assert out[:3] == ["kinematic euler 0", "enhanced euler 0", "enhanced rk4 0"]


@pytest.mark.parametrize("mode", ["kinematic", "dynamic"])
def test_a_constant_command_runs_as_the_same_command_given_as_a_function(mode):
    """run() checks and tiles a constant (v, ω) once instead of calling it at every step: the same run, bit for
    bit, as the function t → (v, ω); and the speed limits scale both alike (Zoë's wheels: 3.25 m/s)."""
    model = wmr.load_model("zoe")
    terrain = gaussian_rough_terrain(rms=0.03, corr_len=0.5, bounds=(-3, 8, -4, 4), seed=2)
    sim = Simulator(model, terrain, mode=mode, dt=0.04)
    for cmd in ((0.6, 0.2), (5.0, 0.0)):
        a = sim.run(2.0, cmd, progress=False)
        b = sim.run(2.0, lambda _t, c=cmd: c, progress=False)
        np.testing.assert_array_equal(a.q, b.q)
        np.testing.assert_array_equal(a.rollover_margin, b.rollover_margin)
    d = a.summary()["distance_m"]  # 5 m/s limited to 3.25 m/s (dynamic: from rest, so less)
    assert d == pytest.approx(2.0 * 3.25, rel=0.05) if mode == "kinematic" else 0.8 * 6.5 < d < 1.02 * 6.5


def test_a_states_only_rollout_takes_the_same_steps_and_records_no_diagnostics():
    """``CompiledKinematics.rollout(record=False)`` (a planner's call): the same states and q̇' as the recording
    rollout, bit for bit, and NaN where the diagnostics would be; a run's margin is the margin-computing
    rollout's."""
    model = wmr.load_model("rocky7")
    terrain = gaussian_rough_terrain(rms=0.04, corr_len=0.4, bounds=(-3, 8, -4, 4), seed=7)
    sim = Simulator(model, terrain, dt=0.04)
    q0 = sim.initial_state()
    cmds = np.tile((0.5, 0.2), (51, 1))
    full = sim.compiled.rollout(q0, cmds, 0.04, margin=True)
    states = sim.compiled.rollout(q0, cmds, 0.04, record=False)
    np.testing.assert_array_equal(states[0], full[0])
    np.testing.assert_array_equal(states[1], full[1])
    assert all(np.isnan(a).all() for a in states[2:])
    assert all(np.isfinite(a).all() for a in full[2:])
    run = sim.run(2.0, (0.5, 0.2), q0=q0, progress=False)
    np.testing.assert_array_equal(run.rollover_margin, full[6])
