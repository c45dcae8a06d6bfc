"""The collision search's warm start (issue 14 item 1) and the cases where it must not be taken.

Each wheel's contact search (thesis §2.2.1: the rim point of eq. 2.9 minimizing Δz of eq. 2.8) starts at the
previous step's contact angle (``angle``, hub frame; NaN: none): the coarse samples next to it, a walk down to
the lowest, a jump check on the samples out to ±90°, then the full search's refinement.  Where the contact
has not jumped the result is the full search's bit for bit, so the oracle of every case is the full search at
the same state (a NaN previous angle); whether the shortcut was taken is counted in plain Python
(NUMBA_DISABLE_JIT=1, the same kernels, the full search ``_search`` wrapped by a counter).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics.compiled.collision import N_SAMPLES, WARM_DZ_MAX, wheel_contacts_kernel
from wmr_dynamics.compiled.data import TERRAIN_GRID, TerrainData, model_data
from wmr_dynamics.compiled.terrain import compile_terrain
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.scenarios import zoe_rough as zoe
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import HeightGrid, Steps, gaussian_rough_terrain

ROOT = Path(__file__).resolve().parents[1]
DT = 0.04


def contacts(model, td, q, previous=None):
    """(dz, angle, points, frames) of the kernel at state q, warm-started from ``previous`` angles (None: NaN, the
    full search); the specialization of the dynamic step's call (run-time sample count)."""
    nw = model.num_wheels
    points, frames, dz, lateral = np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty(nw), np.empty(nw)
    angle = np.full(nw, np.nan) if previous is None else np.array(previous, dtype=float)
    T = np.ascontiguousarray(forward_kinematics(model, q))
    assert wheel_contacts_kernel(model_data(model), td, T, N_SAMPLES, points, frames, dz, angle, lateral) == 0
    return dz, angle, points, frames


def assert_same_bits(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def kerb(height):
    """Flat ground with a kerb of ``height`` (m) at x = 1 m, its face one 2 cm cell wide (a rasterized step)."""
    x = np.arange(-2.0, 4.0 + 1e-9, 0.02)
    y = np.arange(-2.0, 2.0 + 1e-9, 0.02)
    return HeightGrid(x[0], y[0], 0.02, 0.02, np.where(x[None, :] >= 1.0, height, 0.0) * np.ones((len(y), 1)))


def kerb_states(model, d_from=0.6, d_to=0.1, step=0.005):
    """Zoë rolling towards the kerb, wheels 1 cm in the ground: the front wheels' centres d before its face."""
    rc = model.wheel_radii[0]
    T0 = forward_kinematics(model, model.state(xyz=(0.0, 0.0, 1.0)))
    z_body = rc - 0.01 - (T0[model.wheel_frame, 2, 3].min() - 1.0)
    front = T0[model.wheel_frame, 0, 3].max()
    return [model.state(xyz=(1.0 - d - front, 0.0, z_body)) for d in np.arange(d_from, d_to, -step)]


@pytest.fixture(scope="module")
def rolling():
    """Zoë, dynamic, 4 s on rough terrain 3: the model, compiled terrain and the run's states."""
    model = zoe.zoe_model()
    terrain = zoe.load_terrain(3)
    sim = zoe.make_simulator(model, terrain, "linear", DT, zoe.dynamics_options(model, "linear"))
    r = sim.run(4.0, (zoe.SPEED, 0.0), q0=zoe.initial_state(model, terrain), progress=False)
    return model, sim.compiled.td, r.q


def test_rolling_on_rough_ground_the_warm_start_gives_the_full_searchs_contacts(rolling):
    model, td, Q = rolling
    prev = None
    for q in Q:
        warm = contacts(model, td, q, prev)
        assert_same_bits(warm, contacts(model, td, q))
        prev = warm[1]


def test_on_steep_bumps_a_second_minimum_sends_the_wheel_to_the_full_search():
    """LandTamer, kinematic, 8 s at 1 m/s on RMS 5 cm terrain of correlation length 0.2 m: Δz(δ) there often has
    a second minimum 10–30° beside the tracked one.  (A jump check on every other coarse sample missed some:
    Δz up to 11 mm off the full search's on this run.)"""
    model = wmr.load_model("landtamer")
    sim = Simulator(model, gaussian_rough_terrain(rms=0.05, corr_len=0.2, seed=3), mode="kinematic", dt=0.04)
    Q = sim.run(8.0, (1.0, 0.0), progress=False).q
    prev = None
    for q in Q:
        warm = contacts(model, sim.compiled.td, q, prev)
        assert_same_bits(warm, contacts(model, sim.compiled.td, q))
        prev = warm[1]


@pytest.mark.parametrize("height", [0.06, 0.12, 0.25])
def test_a_kerb_coming_within_the_rims_reach_is_found(height):
    """When the kerb's edge comes within reach of a front wheel's rim its contact jumps forward while the bottom
    of the rim stays a local minimum: a warm start that tracked that minimum would miss the kerb."""
    model = zoe.zoe_model()
    td = compile_terrain(kerb(height))
    prev, jumps = None, 0
    for q in kerb_states(model):
        warm, cold = contacts(model, td, q, prev), contacts(model, td, q)
        assert_same_bits(warm, cold)
        if prev is not None:
            jumps += int((np.abs(cold[1] - prev) > np.radians(5.0)).any())
        prev = warm[1]
    assert jumps > 0


def test_a_wheel_touching_down_from_high_above_gets_the_full_searchs_contact(rolling):
    """The vehicle lowered from 0.5 m above a pose of the run, 1 cm at a time, warm-started from each height."""
    model, td, Q = rolling
    prev = None
    for lift in np.arange(0.5, -0.005, -0.01):
        q = Q[50].copy()
        q[6] += lift
        warm = contacts(model, td, q, prev)
        assert_same_bits(warm, contacts(model, td, q))
        prev = warm[1]


@pytest.mark.parametrize("offset_deg", [35.0, -35.0, 90.0, 180.0])
def test_a_previous_angle_far_from_the_contact_gives_the_full_searchs_contact(rolling, offset_deg):
    model, td, Q = rolling
    full = contacts(model, td, Q[10])
    assert_same_bits(contacts(model, td, Q[10], full[1] + np.radians(offset_deg)), full)


def test_terrains_with_edges_get_the_full_search():
    """Steps (jumps in height): the full search's contacts from any previous angle."""
    model = zoe.zoe_model()
    td = compile_terrain(Steps(x_start=0.5, step_length=0.4, step_height=0.08, n_steps=3))
    q = model.state(xyz=(0.3, 0.0, 0.3))
    full = contacts(model, td, q)
    for off in (0.0, 0.3, -0.3):
        assert_same_bits(contacts(model, td, q, full[1] + off), full)


def test_a_non_finite_terrain_under_a_warm_started_wheel_is_reported(rolling):
    model, td, Q = rolling
    q = Q[20]
    prev = contacts(model, td, q)[1]
    T = np.ascontiguousarray(forward_kinematics(model, q))
    w = 1
    p = T[model.wheel_frame[w], :3, 3]
    i, j = int((p[0] - td.params[0]) / td.params[2]), int((p[1] - td.params[1]) / td.params[3])
    holes = td.grid.copy()
    holes[j - 2:j + 3, i - 2:i + 3] = np.nan  # the cells below the wheel
    nw = model.num_wheels
    out = [np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty(nw), prev.copy(), np.empty(nw)]
    bad = TerrainData(TERRAIN_GRID, td.params, holes)
    assert wheel_contacts_kernel(model_data(model), bad, T, N_SAMPLES, *out) == w + 1


@pytest.mark.parametrize("mode", ["dynamic", "kinematic"])
def test_reset_and_a_new_workspace_start_without_a_previous_angle(mode):
    """Stepper.reset drops the contact angles with the other cached state: the run after reset replays a fresh
    stepper's bit for bit."""
    model = zoe.zoe_model()
    terrain = zoe.load_terrain(2)
    opts = zoe.dynamics_options(model, "linear") if mode == "dynamic" else None
    stepper = Stepper(model, terrain, mode=mode, dt=DT, dynamics=opts)
    data = stepper.make_data(zoe.initial_state(model, terrain))
    assert np.isnan(data.workspace.angle).all()
    q0 = data.q.copy()

    def run(d):
        out = []
        for _ in range(25):
            stepper.advance(d, command=(zoe.SPEED, 0.0))
            out.append(d.q.copy())
        return np.array(out)

    first = run(data)
    assert np.isfinite(data.workspace.angle).all()
    stepper.reset(data, q0)
    assert np.isnan(data.workspace.angle).all()
    np.testing.assert_array_equal(run(data), first)
    np.testing.assert_array_equal(run(stepper.make_data(q0)), first)


def test_a_warm_started_run_equals_a_cold_one():
    """Zoë dynamic, 10 s on rough terrain 5, one step per call: as shipped, and with the angles dropped before
    every step (every search the full one): the same trajectory, bit for bit."""
    model = zoe.zoe_model()
    terrain = zoe.load_terrain(5)
    stepper = Stepper(model, terrain, mode="dynamic", dt=DT, dynamics=zoe.dynamics_options(model, "linear"))
    q0 = zoe.initial_state(model, terrain)
    warm, cold = stepper.make_data(q0), stepper.make_data(q0)
    for _ in range(250):
        stepper.advance(warm, command=(zoe.SPEED, 0.0))
        cold.workspace.angle[:] = np.nan
        stepper.advance(cold, command=(zoe.SPEED, 0.0))
        np.testing.assert_array_equal(warm.q, cold.q)
    assert warm.q[4] - q0[4] > 4.0  # it drove


# ---- which searches ran: the same kernels in plain Python, the full search counted ------------------------
_COUNT = r"""
import json, sys
import numpy as np
import wmr_dynamics.compiled.collision as C
from wmr_dynamics.compiled.terrain import compile_terrain
from wmr_dynamics.kinematics import forward_kinematics
sys.path.insert(0, sys.argv[1])
from test_collision_warm_start import kerb, kerb_states
from wmr_dynamics.scenarios import zoe_rough as zoe

full = [0]
search = C._search
def counted(*args):
    full[0] += 1
    return search(*args)
C._search = counted
model = zoe.zoe_model()
md = C._model_data(model)

def run(td, states):
    nw = model.num_wheels
    points, frames, dz, lateral = np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty(nw), np.empty(nw)
    angle = np.full(nw, np.nan)
    out = []
    for q in states:
        full[0] = 0
        T = np.ascontiguousarray(forward_kinematics(model, q))
        assert C.wheel_contacts_kernel(md, td, T, C.N_SAMPLES, points, frames, dz, angle, lateral) == 0
        out.append([full[0], dz.tolist(), angle.tolist()])
    return out

rough = zoe.load_terrain(3)
sim = zoe.make_simulator(model, rough, "linear", 0.04, zoe.dynamics_options(model, "linear"))
roll = sim.run(1.2, (zoe.SPEED, 0.0), q0=zoe.initial_state(model, rough), progress=False).q
high = []
for lift in np.arange(0.5, -0.005, -0.05):
    qh = roll[-1].copy(); qh[6] += lift; high.append(qh)
td = compile_terrain(rough)
print(json.dumps({"states": roll.tolist(), "roll": run(td, roll), "high": run(td, high),
                  "kerb": run(compile_terrain(kerb(0.12)), kerb_states(model))}))
"""


@pytest.fixture(scope="module")
def counted():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _COUNT, str(Path(__file__).parent)], env=env, capture_output=True,
                         text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_rolling_takes_the_warm_start_after_the_first_step(counted):
    full = [r[0] for r in counted["roll"]]
    assert full[0] == 4  # no previous angle: four full searches
    assert sum(full[1:]) == 0  # then none: the warm start every time


def test_the_kerb_sends_the_jumping_wheels_to_the_full_search(counted):
    rows = counted["kerb"]
    angle = np.array([r[2] for r in rows])
    jumped = np.abs(np.diff(angle, axis=0)) > np.radians(5.0)  # the contact jumped to the kerb's edge
    full = np.array([r[0] for r in rows[1:]])
    assert jumped.any()
    assert (full[jumped.any(axis=1)] >= jumped.sum(axis=1)[jumped.any(axis=1)]).all()
    assert (full == 0).mean() > 0.5  # between the jumps the wheels roll on the warm start


def test_a_wheel_high_above_the_ground_gets_the_full_search(counted):
    rc = zoe.zoe_model().wheel_radii[0]
    for n_full, dz, _ in counted["high"][1:]:
        assert n_full >= sum(d > WARM_DZ_MAX * rc for d in dz)
    assert counted["high"][1][0] == 4  # 0.45 m up: every wheel


def test_plain_python_gives_the_compiled_kernels_numbers(counted):
    """NUMBA_DISABLE_JIT=1 runs the same warm-started kernels: the compiled ones give the same numbers."""
    model = zoe.zoe_model()
    td = compile_terrain(zoe.load_terrain(3))
    prev = None
    for q, row in zip(counted["states"], counted["roll"], strict=True):
        dz, angle, _, _ = contacts(model, td, np.array(q), prev)
        np.testing.assert_allclose(dz, row[1], rtol=0, atol=1e-13)
        np.testing.assert_allclose(angle, row[2], rtol=0, atol=1e-13)
        prev = angle
