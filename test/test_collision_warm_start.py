"""The collision search's warm start (issue 14 item 1) and the cases where it must not be taken.

Each wheel's contact search (thesis §2.2.1: the rim point of eq. 2.9 minimizing Δz of eq. 2.8) starts at the
previous step's contact angle (``angle``, hub frame; NaN: none): a few root-finding steps to the minimum next
to it, then a jump check on the coarse samples out to ±90°.  The oracles: a dense search of Δz(δ) (20,001
rim points over ±90° of the lowest one, the terrain's own query), the full search at the same state (a NaN
previous angle; it ends with the same polish, so where both find the same minimum they agree to its
tolerance), and closed forms on a plane and at a grid's ridge.  Whether the shortcut was taken is counted in
plain Python (NUMBA_DISABLE_JIT=1, the same kernels, the full search ``_search`` wrapped by a counter).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wmr_dynamics as wmr
from wmr_dynamics import spatial
from wmr_dynamics.compiled.collision import N_SAMPLES, WARM_DZ_MAX, wheel_contacts_kernel
from wmr_dynamics.compiled.data import TERRAIN_GRID, TerrainData, model_data
from wmr_dynamics.compiled.terrain import compile_terrain, grid_bounds
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.scenarios import zoe_rough as zoe
from wmr_dynamics.simulate import Simulator
from wmr_dynamics.stepper import Stepper
from wmr_dynamics.terrain import HeightGrid, Plane, Steps, gaussian_rough_terrain

ROOT = Path(__file__).resolve().parents[1]
DT = 0.04
GAP_MAX = 1.5e-3  # m: Δz of the minimum found above the dense search's (two minima within one coarse spacing)
GAP_MEAN = 3e-5  # m: ... on average over a run (measured: warm start 1.3e-5, full search 0.6–1.1e-5)


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


def assert_same_minimum(a, b):
    """Two searches' contacts at the same minimum: Δz to 1e-12 m, angles to 1e-8 rad, points to 1e-8 m."""
    np.testing.assert_allclose(a[0], b[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a[1], b[1], rtol=0, atol=1e-8)
    np.testing.assert_allclose(a[2], b[2], rtol=0, atol=1e-8)


def rim(model, T, w, delta):
    """World points of wheel w's rim at wheel-frame angles ``delta`` (eq. 2.9; tube-less wheels)."""
    F = T[model.wheel_frame[w]]
    rc = model.wheel_circle[w]
    return F[:3, 3] - rc * (np.sin(delta)[:, None] * F[:3, 0] + np.cos(delta)[:, None] * F[:3, 2])


def dz_at(terrain, r):
    """Δz (eq. 2.8) of world points r (k, 3) with the terrain's own query."""
    h, n = terrain.height_normal(r[:, 0], r[:, 1])
    return (r[:, 2] - h) * np.asarray(n).reshape(-1, 3)[:, 2]


def dense_minimum(model, terrain, T, w, n=20001):
    """The smallest Δz over n rim points within ±90° of wheel w's lowest rim point."""
    F = T[model.wheel_frame[w]]
    low = np.arctan2(F[2, 0], F[2, 2])
    return dz_at(terrain, rim(model, T, w, low + np.linspace(-np.pi / 2, np.pi / 2, n))).min()


def wheel_angle(model, T, w, point):
    """The wheel-frame angle δ of a rim point (eq. 2.9 solved for δ)."""
    F = T[model.wheel_frame[w]]
    v = point - F[:3, 3]
    return np.arctan2(-v @ F[:3, 0], -v @ F[:3, 2])


class Gaps(list):
    """Gaps to the dense search's minimum (m), and how many of the wheels checked were local minima to 1 nm."""

    local = wheels = 0


def assert_minimum(model, terrain, q, found, gaps):
    """For each wheel in or near contact (Δz < 5 mm): its contact is a local minimum of Δz(δ) — no rim point
    within ±2e-3 rad (±0.7 mm of rim) lower by more than 0.2 mm (the sampled search's resolution where its
    polish does not converge; and a penetrating rim's Δz = (z − h) n_z jumps where n_z does, at cell edges:
    past a cell's corner, where two edges are crossed within a fraction of a mm, the lower side of the first
    jump may not be the lowest — both searches alike, up to 86 µm on LandTamer's 4 cm grid), and the wheel
    counted in ``gaps.local`` where none is lower by more than 1 nm —
    not below the dense search's minimum (less its sampling error: at a kink of Δz, where its samples straddle
    the minimum) and at most GAP_MAX above it; its gap goes to ``gaps``.  (Higher up, Δz(δ) has shallow
    minima that both searches may miss by a few mm — LandTamer's run: up to 4.9 mm, both alike.)"""
    T = forward_kinematics(model, q)
    for w in range(model.num_wheels):
        if found[0][w] >= 5e-3:
            continue
        d = wheel_angle(model, T, w, found[2][w])
        near = dz_at(terrain, rim(model, T, w, d + np.linspace(-2e-3, 2e-3, 401)))
        assert near.min() >= found[0][w] - 2e-4, (w, near.min(), found[0][w])
        gaps.local += int(near.min() >= found[0][w] - 1e-9)
        gaps.wheels += 1
        gap = found[0][w] - dense_minimum(model, terrain, T, w)
        assert -2e-5 <= gap <= GAP_MAX, (w, gap)
        gaps.append(gap)


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


def test_rolling_on_rough_ground_the_warm_start_finds_the_minimum(rolling):
    """Zoë on rough terrain 3: every warm-started contact is a local minimum, as near the dense search's global
    one as the full search's contacts are; where both searches find the same minimum they agree."""
    model, td, Q = rolling
    terrain = zoe.load_terrain(3)
    prev, gaps, full_gaps, same = None, Gaps(), Gaps(), 0
    for q in Q:
        warm, full = contacts(model, td, q, prev), contacts(model, td, q)
        assert_minimum(model, terrain, q, warm, gaps)
        assert_minimum(model, terrain, q, full, full_gaps)
        for w in np.flatnonzero(np.abs(warm[1] - full[1]) < 1e-3):
            assert_same_minimum([x[w] for x in warm[:3]], [x[w] for x in full[:3]])
            same += 1
        prev = warm[1]
    assert np.mean(gaps) <= GAP_MEAN and np.mean(full_gaps) <= GAP_MEAN
    assert same >= 0.9 * Q.shape[0] * model.num_wheels  # mostly the same minimum
    assert gaps.local >= 0.97 * gaps.wheels and full_gaps.local >= 0.9 * full_gaps.wheels
    assert gaps.local > full_gaps.local  # the polish's point where the sampled search's is kept


def test_on_steep_bumps_a_second_minimum_is_not_missed():
    """LandTamer, kinematic, 8 s at 1 m/s on RMS 5 cm terrain of correlation length 0.2 m: Δz(δ) there often has
    a second minimum 10–30° beside the tracked one.  (A jump check on every other coarse sample missed some:
    Δz up to 11 mm off the full search's on this run.)"""
    model = wmr.load_model("landtamer")
    terrain = gaussian_rough_terrain(rms=0.05, corr_len=0.2, seed=3)
    sim = Simulator(model, terrain, mode="kinematic", dt=0.04)
    Q = sim.run(8.0, (1.0, 0.0), progress=False).q
    prev, gaps = None, Gaps()
    for q in Q[::2]:
        warm = contacts(model, sim.compiled.td, q, prev)
        assert_minimum(model, terrain, q, warm, gaps)
        prev = warm[1]
    assert np.mean(gaps) <= GAP_MEAN and gaps.local >= 0.9 * gaps.wheels  # (measured 92 %: its 4 cm grid)


def test_on_a_plane_the_warm_start_is_the_closed_form_contact():
    """A tilted plane: the contact is the rim point whose radius is parallel to the normal (the polish's first
    step), from previous angles up to 8° off."""
    model = zoe.zoe_model()
    n = np.array([0.2, -0.1, 1.0]) / np.linalg.norm([0.2, -0.1, 1.0])
    td = compile_terrain(Plane(normal=n))
    q = model.state(xyz=(0.3, 0.2, 0.33))
    full = contacts(model, td, q)
    T = forward_kinematics(model, q)
    for w in range(model.num_wheels):
        F = T[model.wheel_frame[w]]
        a, b = F[:3, 0], F[:3, 2]
        s, c = n @ a, n @ b  # (sin δ, cos δ) ∥ (n̂·x̂_w, n̂·ẑ_w)
        closed = F[:3, 3] - model.wheel_circle[w] * (s * a + c * b) / np.hypot(s, c)
        np.testing.assert_allclose(full[2][w], closed, rtol=0, atol=1e-10)
        for off in np.radians([-8.0, -1.0, 0.5, 8.0]):
            prev = full[1].copy()
            prev[w] += off
            np.testing.assert_allclose(contacts(model, td, q, prev)[2][w], closed, rtol=0, atol=1e-10)


def test_a_minimum_on_a_ridge_between_cells_is_the_crossing():
    """Flat ground with a ridge along y at x = 1 m (one grid line, 5 cm high, 10 cm cells): a wheel on the ridge
    touches it at the grid line (a kink of Δz(δ), where no root of its derivative exists), from either side."""
    model = zoe.zoe_model()
    x = np.arange(-1.0, 3.0 + 1e-9, 0.1)
    y = np.arange(-2.0, 2.0 + 1e-9, 0.1)
    terrain = HeightGrid(x[0], y[0], 0.1, 0.1, np.where(np.isclose(x, 1.0), 0.05, 0.0)[None, :] * np.ones((len(y), 1)))
    td = compile_terrain(terrain)
    T0 = forward_kinematics(model, model.state(xyz=(0.0, 0.0, 1.0)))
    front = T0[model.wheel_frame, 0, 3].max()
    q = model.state(xyz=(1.0 - front + 0.02, 0.0, 0.31 - (T0[model.wheel_frame, 2, 3].min() - 1.0)))
    full = contacts(model, td, q)
    T = forward_kinematics(model, q)
    ridge = [w for w in range(model.num_wheels) if abs(T[model.wheel_frame[w], 0, 3] - 1.0) < 0.05]
    assert ridge
    for w in ridge:
        assert abs(full[2][w][0] - 1.0) < 1e-8  # at the grid line
        for off in np.radians([-6.0, 6.0]):
            prev = full[1].copy()
            prev[w] += off
            warm = contacts(model, td, q, prev)
            assert abs(warm[2][w][0] - 1.0) < 1e-8
            assert_same_minimum([v[w] for v in warm[:3]], [v[w] for v in full[:3]])


def test_grid_bounds_bound_every_cell():
    """The jump check's bounds: each cell's entry is its highest node; n_z min bounds every cell's normal."""
    rng = np.random.default_rng(4)
    h = rng.normal(0.0, 0.05, (7, 9))
    out = grid_bounds(h, 0.1, 0.2)
    top = out[1:].reshape(6, 8)
    for j in range(6):
        for i in range(8):
            assert top[j, i] == h[j:j + 2, i:i + 2].max()
    grid = HeightGrid(0.0, 0.0, 0.1, 0.2, h)
    px, py = rng.uniform(0.0, 0.8, 2000), rng.uniform(0.0, 1.2, 2000)
    hh, nn = grid.height_normal(px, py)
    assert (np.asarray(nn)[:, 2] >= out[0] - 1e-15).all()
    i, j = np.minimum((px / 0.1).astype(int), 7), np.minimum((py / 0.2).astype(int), 5)
    assert (hh <= top[j, i] + 1e-15).all()
    assert np.isnan(grid_bounds(np.where(np.arange(63).reshape(7, 9) == 5, np.nan, h), 0.1, 0.2)).all()


@pytest.mark.parametrize("height", [0.06, 0.12, 0.25])
def test_a_kerb_coming_within_the_rims_reach_is_found(height):
    """When the kerb's edge comes within reach of a front wheel's rim its contact jumps forward while the bottom
    of the rim stays a local minimum: a warm start that tracked that minimum would miss the kerb."""
    model = zoe.zoe_model()
    td = compile_terrain(kerb(height))
    prev, jumps = None, 0
    for q in kerb_states(model):
        warm, cold = contacts(model, td, q, prev), contacts(model, td, q)
        assert_same_minimum(warm, cold)
        if prev is not None:
            jumps += int((np.abs(cold[1] - prev) > np.radians(5.0)).any())
        prev = warm[1]
    assert jumps > 0


def test_a_wheel_touching_down_from_high_above_finds_the_minimum(rolling):
    """The vehicle lowered from 0.5 m above a pose of the run, 1 cm at a time, warm-started from each height: the
    wheels higher than WARM_DZ_MAX (R − ρ) get the full search, those touching down a minimum (as
    ``assert_minimum``)."""
    model, td, Q = rolling
    terrain = zoe.load_terrain(3)
    prev, gaps = None, Gaps()
    for lift in np.arange(0.5, -0.005, -0.01):
        q = Q[50].copy()
        q[6] += lift
        warm, full = contacts(model, td, q, prev), contacts(model, td, q)
        high = full[0] > WARM_DZ_MAX * model.wheel_circle
        for a, b in zip(warm, full, strict=True):
            np.testing.assert_array_equal(a[high], b[high])
        assert_minimum(model, terrain, q, warm, gaps)
        prev = warm[1]
    assert len(gaps) >= 8 and np.mean(gaps) <= GAP_MEAN


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


@pytest.mark.parametrize("mode", ["dynamic", "kinematic"])
def test_a_warm_started_run_keeps_the_full_searchs_trajectory(mode):
    """Zoë, 10 s on rough terrain 5: the run as one ``Stepper.advance`` call (the warm start from the second step
    on) and as 250 calls of one step (each call starts without a previous angle: every search the full one)
    end within 2 cm and 0.01 rad of each other."""
    model = zoe.zoe_model()
    terrain = zoe.load_terrain(5)
    opts = zoe.dynamics_options(model, "linear") if mode == "dynamic" else None
    stepper = Stepper(model, terrain, mode=mode, dt=DT, dynamics=opts)
    q0 = zoe.initial_state(model, terrain)
    warm, cold = stepper.make_data(q0), stepper.make_data(q0)
    stepper.advance(warm, 250, command=(zoe.SPEED, 0.0))
    for _ in range(250):
        stepper.advance(cold, command=(zoe.SPEED, 0.0))
    assert cold.q[4] - q0[4] > 4.0  # it drove
    assert np.linalg.norm(warm.q[4:7] - cold.q[4:7]) < 0.02
    assert abs(spatial.quat_to_rpy(warm.q[:4])[2] - spatial.quat_to_rpy(cold.q[:4])[2]) < 0.01


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
    """The full search runs for a wheel only where the jump check finds a lower coarse sample or the polish
    leaves one coarse spacing: a few percent of the searches on rough terrain."""
    full = [r[0] for r in counted["roll"]]
    assert full[0] == 4  # no previous angle: four full searches
    assert sum(full[1:]) <= 0.1 * 4 * (len(full) - 1)  # then the warm start nearly every time (measured: 4 %)


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
