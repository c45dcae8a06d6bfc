"""Compiled terrain representations and the wheel–terrain contact search against closed forms and brute force."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from shared_paths import TERRAINS

import wmr_dynamics as wmr
from wmr_dynamics.collision import drop_onto_terrain, wheel_contacts
from wmr_dynamics.compiled.collision import (
    METHOD_FAST,
    METHOD_SAMPLED,
    compiled_wheel_contacts,
    wheel_contacts_kernel,
)
from wmr_dynamics.compiled.data import TERRAIN_COMPOSITE, TERRAIN_GRID, TerrainData, model_data
from wmr_dynamics.compiled.terrain import compile_terrain, height_normal
from wmr_dynamics.errors import TerrainError
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.terrain import Box, Composite, HeightGrid, Plane, Ramp, Terrain, load_terrain

ROOT = Path(__file__).resolve().parents[1]
VEHICLES = sorted(wmr.bundled_vehicles())
TILTED = Plane(normal=(0.15, -0.25, 1.0), point=(1.0, -2.0, 0.3))


@pytest.fixture(scope="module")
def rough():
    return load_terrain(TERRAINS / "zoe_rough_3.txt")


def _hn(td, xs, ys):
    return np.array([height_normal(td.kind, td.params, td.grid, x, y) for x, y in zip(xs, ys, strict=True)])


def _states(model, terrain, rng, n):
    """n random states near the ground: random pose and joints, dropped so the lowest wheel touches."""
    out = []
    for _ in range(n):
        x, y = rng.uniform(-3.0, 10.0), rng.uniform(-3.0, 3.0)
        q = model.state(xyz=(x, y, float(terrain.height(x, y)) + 1.0),
                        rpy=(rng.normal(0, 0.15), rng.normal(0, 0.15), rng.uniform(-np.pi, np.pi)))
        lo, hi = np.maximum(model.joint_lower[1:], -0.3), np.minimum(model.joint_upper[1:], 0.3)
        q[7:] = rng.uniform(lo, hi)
        out.append(drop_onto_terrain(model, q, terrain, clearance=rng.uniform(-0.02, 0.0)))
    return out


# ---------------------------------------------------------------------------------------------- terrain
class _UserRamp(Terrain):
    """A user's terrain (no exact compiled form): a ramp's height and normal through its public queries."""

    def __init__(self, ramp, bounds=(-1.0, 5.0, -3.0, 3.0)):
        self.ramp, self._bounds = ramp, bounds

    def height(self, x, y):
        return self.ramp.height(x, y)

    def normal(self, x, y):
        return self.ramp.normal(x, y)

    @property
    def bounds(self):
        return self._bounds


def test_a_user_terrain_is_rasterized_and_matches_the_analytic_ramp_away_from_its_edges():
    """A terrain without a compiled kind (a user's Terrain subclass) is rasterized at ``spacing``."""
    ramp = Ramp(x_start=1.0, height=0.5, slope_deg=15.0, top_length=1.0, yaw=0.3, origin=(0.5, -0.2))
    td = compile_terrain(_UserRamp(ramp), spacing=0.02)
    assert td.kind == TERRAIN_GRID and td.params[2] == td.params[3] == 0.02
    rng = np.random.default_rng(2)
    s = rng.uniform(-0.5, ramp.s_end + 0.5, 400)
    edges = np.array([ramp.x_start, ramp.s_top, ramp.s_top_end, ramp.s_end])
    s = s[np.abs(s[:, None] - edges[None, :]).min(axis=1) > 0.05]  # a cell diagonal (0.028 m) and a margin
    lat = rng.uniform(-3, 3, s.size)
    c, sn = np.cos(ramp.yaw), np.sin(ramp.yaw)
    xs, ys = ramp.origin[0] + c * s - sn * lat, ramp.origin[1] + sn * s + c * lat
    inside = (xs > -1.0) & (xs < 5.0) & (ys > -3.0) & (ys < 3.0)
    xs, ys = xs[inside], ys[inside]
    got = _hn(td, xs, ys)
    np.testing.assert_allclose(got[:, 0], ramp.height(xs, ys), atol=1e-9)
    np.testing.assert_allclose(got[:, 1:], ramp.normal(xs, ys), atol=1e-9)
    # at an edge the rasterized slope is a bilinear ramp at most one cell wide
    x_kink, y_kink = ramp.origin[0] + c * ramp.s_top, ramp.origin[1] + sn * ramp.s_top
    assert abs(height_normal(td.kind, td.params, td.grid, x_kink, y_kink)[0] - 0.5) < 0.02 * np.tan(np.radians(15))


def test_built_in_composites_are_exact_in_the_step():
    """Box and Composite of built-in surfaces take their exact kinds (no rasterizing): a composite ramp's kink
    and a box's vertical edge are where the closed forms put them, to the last digit."""
    ramp = Ramp(x_start=1.0, height=0.5, slope_deg=15.0, top_length=1.0)
    td = compile_terrain(Composite([ramp]))
    assert td.kind == TERRAIN_COMPOSITE
    t = np.tan(np.radians(15.0))
    for s in (0.5, 1.0 + 0.25 / t, 1.0 + 0.5 / t):  # flat, mid-incline, the kink at the top
        assert height_normal(td.kind, td.params, td.grid, s, 0.7)[0] == pytest.approx(min(max((s - 1.0) * t, 0), 0.5),
                                                                                     abs=1e-12)
    box = Composite([Plane(), Box(center=(3.0, 0.0), size=(1.0, 0.6), height=0.1)])
    td = compile_terrain(box)
    assert td.kind == TERRAIN_COMPOSITE
    # the face at x = 2.5: the full height just inside, the ground just outside (a 2 cm raster: a ramp between)
    assert height_normal(td.kind, td.params, td.grid, 2.5 + 1e-9, 0.0)[0] == pytest.approx(0.1, abs=1e-15)
    assert height_normal(td.kind, td.params, td.grid, 2.5 - 1e-9, 0.0)[0] == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_array_equal(height_normal(td.kind, td.params, td.grid, 2.5 + 1e-9, 0.0)[1:], [0.0, 0.0, 1.0])


def test_unbounded_terrain_without_bounds_is_refused():
    with pytest.raises(TerrainError, match="unbounded"):
        compile_terrain(_UserRamp(Ramp(), bounds=None))


# -------------------------------------------------------------------------------------------- contacts
@pytest.mark.parametrize("name", VEHICLES)
def test_contacts_on_a_rough_grid_are_the_lowest_rim_points_of_a_dense_search(name, rough):
    """Oracle: eq. 2.8 minimized by brute force over 20,000 rim angles per wheel with the terrain's own query.
    The reported Δz is that of a rim point (never below the dense minimum by more than Δz can change between
    two dense samples) and, for wheels near the ground,
    within 0.2 mm of it (a wheel high above rough ground has many shallow minima: the search may settle in
    another one, harmless for contact)."""
    model = wmr.load_model(name)
    rng = np.random.default_rng(sum(map(ord, name)))
    delta = np.linspace(-np.pi, np.pi, 20_000, endpoint=False)
    for q in _states(model, rough, rng, 3):
        T = forward_kinematics(model, q)
        c = wheel_contacts(model, T, rough)
        for w, f in enumerate(model.wheel_frame):
            x, z, o = T[f, :3, 0], T[f, :3, 2], T[f, :3, 3]
            if model.wheel_kind[w] != 0:  # a track element: its circle in the (non-turning) hub frame
                H = T[model.parent[f]] @ model.T0[f]
                x, z, o = H[:3, 0], H[:3, 2], (H @ np.r_[model.wheel_centre[w], 1.0])[:3]
            rc, tube = model.wheel_circle[w] - model.wheel_tube_radii[w], model.wheel_tube_radii[w]
            if model.wheel_kind[w] == 2:  # a belt point: the circle's lowest point in the hub frame, δ = 0
                point = o - rc * z
                h, n = rough.height_normal(point[:1], point[1:2])
                assert c.dz[w] == pytest.approx((point[2] - h[0]) * n[0, 2], abs=1e-12)
                continue
            rim = o - rc * (np.sin(delta)[:, None] * x + np.cos(delta)[:, None] * z)  # eq. 2.9
            h, n = rough.height_normal(rim[:, 0], rim[:, 1])
            dense = (rim[:, 2] - h) * n[:, 2] - tube  # eq. 2.8, r_terrain straight below the point
            assert c.dz[w] >= dense.min() - np.abs(np.diff(dense)).max() / 2 - 1e-12
            if dense.min() < 0.03:
                assert c.dz[w] <= dense.min() + 2e-4
            # the contact point is on the wheel: its centre line at distance R − ρ from the centre
            centre_line = c.points[w] + tube * c.normals[w]
            assert np.linalg.norm(centre_line - o) == pytest.approx(rc, abs=1e-12)
        R = c.frames
        np.testing.assert_allclose(np.einsum("wji,wjk->wik", R, R), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)


def test_torus_wheels_slide_their_contact_across_the_tread():
    """pvc_tricycle: torus wheels; a strong roll moves the contact point along the wheel axis by −ρ (n̂·ŷ_w)."""
    model = wmr.load_model("pvc_tricycle")
    q = drop_onto_terrain(model, model.state(xyz=(0.0, 0.0, 1.0), rpy=(0.4, -0.1, 0.7)), TILTED)
    T = forward_kinematics(model, q)
    c = wheel_contacts(model, T, TILTED)
    y_w = T[model.wheel_frame, :3, 1]
    np.testing.assert_allclose(c.lateral, -model.wheel_tube_radii * (y_w @ TILTED.unit_normal), atol=1e-6)
    assert np.abs(c.lateral).max() > 0.002


@pytest.mark.parametrize("method", [METHOD_SAMPLED, METHOD_FAST])
@pytest.mark.parametrize("name", ["zoe", "pvc_tricycle"])
def test_dz_on_a_tilted_plane_has_the_closed_form(name, method):
    """Δz = n·c − d − (R − ρ) √(1 − (n·ŷ_w)²) − ρ: the lowest point of a circle (ρ = 0) or torus of crown
    radius ρ over a plane, the contact point on the plane's parallel through it."""
    model = wmr.load_model(name)
    td = compile_terrain(TILTED)
    n, d = td.params[:3], td.params[3]
    rho = model.wheel_tube_radii
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = model.state(xyz=(rng.uniform(-2, 2), rng.uniform(-2, 2), 1.0), rpy=rng.normal(0, 0.3, 3))
        q[7:] = rng.uniform(-0.3, 0.3, model.num_joints)
        T = forward_kinematics(model, q)
        got = compiled_wheel_contacts(model, T, td, method=method)
        Tw = T[model.wheel_frame]
        expect = Tw[:, :3, 3] @ n - d - (model.wheel_radii - rho) * np.sqrt(1.0 - (Tw[:, :3, 1] @ n) ** 2) - rho
        np.testing.assert_allclose(got.dz, expect, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got.points @ n - d, got.dz, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", VEHICLES)
def test_fast_method_finds_the_same_contacts_for_wheels_on_the_ground(name, rough):
    """Method 1 (windowed coarse samples, two rounds, safeguarded fixed point) against method 0: Δz within
    0.1 mm for wheels on the ground (measured ≤ 0.02 mm); wheels high in the air may settle in other minima."""
    model = wmr.load_model(name)
    td = compile_terrain(rough)
    rng = np.random.default_rng(sum(map(ord, name)) + 1)
    for q in _states(model, rough, rng, 8):
        T = forward_kinematics(model, q)
        ref, got = compiled_wheel_contacts(model, T, td), compiled_wheel_contacts(model, T, td, method=METHOD_FAST)
        on = np.abs(ref.dz) < 0.03  # the dropped wheel (−2 cm … 0) and any others near the ground
        assert on.any()
        np.testing.assert_allclose(got.dz[on], ref.dz[on], rtol=0, atol=1e-4)  # (where two minima are nearly
        # equal the point, and with it the grid cell and normal, may differ: the documented trade-off)


def test_a_non_finite_query_returns_the_wheel_number():
    model = wmr.load_model("rocky7")
    md = model_data(model)
    grid = HeightGrid(-2.0, -2.0, 0.02, 0.02, np.zeros((201, 201)))
    q = drop_onto_terrain(model, model.state(xyz=(0.0, 0.0, 0.5)), grid)
    T = forward_kinematics(model, q)
    out = [np.empty((6, 3)), np.empty((6, 3, 3)), np.empty(6), np.empty(6), np.empty(6)]
    td = compile_terrain(grid)
    assert wheel_contacts_kernel(md, td, T, 36, *out) == 0
    # HeightGrid refuses NaN heights; the kernel's data need not come from one: a hole under wheel 2 only
    c = T[model.wheel_frame[2], :3, 3]
    i, j = int((c[0] + 2.0) / 0.02), int((c[1] + 2.0) / 0.02)
    holes = td.grid.copy()
    holes[j - 1:j + 2, i - 1:i + 2] = np.nan  # cells within 0.04 m of its lowest point; wheel 1's rim stays 0.02 m off
    assert wheel_contacts_kernel(md, TerrainData(TERRAIN_GRID, td.params, holes), T, 36, *out) == 3
    # a NaN state (wheel 4's frame)
    T_bad = T.copy()
    T_bad[model.wheel_frame[4], 0, 3] = np.nan
    assert wheel_contacts_kernel(md, td, T_bad, 36, *out) == 5
    with pytest.raises(TerrainError, match=model.wheel_names[4]):
        compiled_wheel_contacts(model, T_bad, td)


_SCRIPT = """
import json, sys
import numpy as np
import wmr_dynamics as wmr
from wmr_dynamics.collision import drop_onto_terrain
from wmr_dynamics.compiled.collision import compiled_wheel_contacts
from wmr_dynamics.compiled.terrain import compile_terrain
from wmr_dynamics.kinematics import forward_kinematics
from wmr_dynamics.terrain import load_terrain
terrain = load_terrain(sys.argv[1])
model = wmr.load_model("pvc_tricycle")
q = drop_onto_terrain(model, model.state(xyz=(2.0, 0.5, 1.0), rpy=(0.1, -0.2, 0.4)), terrain)
out = []
for method in (0, 1):
    c = compiled_wheel_contacts(model, forward_kinematics(model, q), compile_terrain(terrain), method=method)
    out += [np.asarray(getattr(c, k)).tolist() for k in ("points", "frames", "dz", "angle", "lateral")]
print(json.dumps(out))
"""


def test_the_kernel_runs_interpreted_with_numba_disabled_and_gives_the_same_numbers():
    path = str(TERRAINS / "zoe_rough_3.txt")
    runs = []
    for disable in ("1", "0"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable, PYTHONPATH=str(ROOT))
        out = subprocess.run([sys.executable, "-c", _SCRIPT, path], env=env, capture_output=True, text=True,
                             check=True, cwd=ROOT)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for a, b in zip(*runs, strict=True):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=0, atol=1e-13)


@pytest.mark.parametrize("name", ["zoe", "rocky7", "landtamer"])
def test_a_wheels_spin_angle_does_not_move_its_contact(name, rough):
    """The rim is searched in the hub frame (``collision._hub_circle``: the wheel frame at zero wheel angle, the
    same circle): the contact — Δz, point, frame, hub-frame angle — of every wheel is the same, bit for bit, for
    any angle the wheels have turned by, in the full search and warm-started from the previous angle (the wheel
    frame's axes, which turn with the wheel, enter nothing)."""
    model = wmr.load_model(name)
    td = compile_terrain(rough)
    rng = np.random.default_rng(4)
    cols = [7 + model.joint_names.index(j) for j in model.wheel_joint_names]
    for q in _states(model, rough, rng, 5):
        spun = q.copy()
        spun[cols] += rng.uniform(-40.0, 40.0, len(cols))  # several turns either way
        a, b = (compiled_wheel_contacts(model, forward_kinematics(model, s), td) for s in (q, spun))
        for x, y in ((a.dz, b.dz), (a.points, b.points), (a.frames, b.frames), (a.angle, b.angle)):
            np.testing.assert_array_equal(x, y)
        for s, c in ((q, a), (spun, b)):  # warm-started from a previous angle 0.02 rad off
            T = forward_kinematics(model, s)
            nw = model.num_wheels
            points, frames, dz = np.empty((nw, 3)), np.empty((nw, 3, 3)), np.empty(nw)
            angle, lateral = c.angle + 0.02, np.empty(nw)
            assert wheel_contacts_kernel(model_data(model), td, T, 36, points, frames, dz, angle, lateral) == 0
            if s is q:
                warm = (dz.copy(), points.copy(), angle.copy())
        np.testing.assert_array_equal(dz, warm[0])
        np.testing.assert_array_equal(points, warm[1])
        np.testing.assert_array_equal(angle, warm[2])
