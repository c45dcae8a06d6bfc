"""Tests of wmr_dynamics.terrain against closed forms, finite differences and raw file contents."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest
from scipy.interpolate import RectBivariateSpline
from shared_paths import TERRAINS

from wmr_dynamics.errors import TerrainError
from wmr_dynamics.terrain import (
    Box,
    Composite,
    HeightGrid,
    OrientedBox,
    Plane,
    Ramp,
    SmoothGrid,
    Steps,
    Terrain,
    gaussian_rough_terrain,
    load_heightmap,
    load_sdf_world,
    load_terrain,
    load_wmrde_grid,
    terrain_presets,
)

REPO = Path(__file__).resolve().parents[1]
ZOE = TERRAINS / "zoe_rough_1.txt"
needs_zoe = pytest.mark.skipif(not ZOE.is_file(), reason="benchmark terrain data not available")


def fd_normal(t: Terrain, x: np.ndarray, y: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Normal from central finite differences of ``t.height`` (the oracle for every analytic normal)."""
    gx = (t.height(x + eps, y) - t.height(x - eps, y)) / (2 * eps)
    gy = (t.height(x, y + eps) - t.height(x, y - eps)) / (2 * eps)
    n = np.stack([-gx, -gy, np.ones_like(gx)], axis=-1)
    return n / np.linalg.norm(n, axis=-1, keepdims=True)


# ------------------------------------------------------------------------------------------------ plane
def test_plane_tilted_matches_plane_equation():
    a, b, c = 0.3, -0.2, 1.0                     # unnormalized normal
    x0, y0, z0 = 1.0, 2.0, 0.5
    p = Plane(normal=(a, b, c), point=(x0, y0, z0))
    x = np.linspace(-3, 3, 7)[:, None]
    y = np.linspace(-1, 4, 5)[None, :]
    # a(x - x0) + b(y - y0) + c(z - z0) = 0
    expected = z0 - (a * (x - x0) + b * (y - y0)) / c
    np.testing.assert_allclose(p.height(x, y), expected, atol=1e-12)
    n = p.normal(x, y)
    assert n.shape == (7, 5, 3)
    unit = np.array([a, b, c]) / math.sqrt(a * a + b * b + c * c)
    np.testing.assert_allclose(n, np.broadcast_to(unit, n.shape))


@pytest.mark.parametrize("normal", [(0, 0, -1), (1, 0, 0), (0, 0, 0)])
def test_plane_rejects_non_upward_normal(normal):
    with pytest.raises(TerrainError, match="normal"):
        Plane(normal=normal)


# ------------------------------------------------------------------------------------------ height grid
H = np.array([[0.0, 1.0, 2.0, 4.0],
              [3.0, 5.0, 4.0, 0.0],
              [1.0, 1.0, 2.0, 6.0]])       # (ny=3, nx=4)
GRID = dict(x_min=1.0, y_min=-1.0, dx=0.5, dy=0.25)


def test_height_grid_exact_at_nodes_and_attributes():
    g = HeightGrid(heights=H, **GRID)
    assert (g.nx, g.ny) == (4, 3)
    assert g.x_max == pytest.approx(2.5) and g.y_max == pytest.approx(-0.5)
    j, i = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    np.testing.assert_allclose(g.height(1.0 + 0.5 * i, -1.0 + 0.25 * j), H, atol=1e-12)


def test_height_grid_bilinear_hand_computed():
    g = HeightGrid(heights=H, **GRID)
    # (1.25, -0.9): cell i=0, j=0, tx = 0.5, ty = 0.4; corners h00=0, h10=1, h01=3, h11=5
    # (1-.5)(1-.4)*0 + .5*(1-.4)*1 + (1-.5)*.4*3 + .5*.4*5 = 0 + .3 + .6 + 1.0 = 1.9
    assert g.height(1.25, -0.9) == pytest.approx(1.9)
    # (2.4, -0.6): cell i=2, j=1, tx = 0.8, ty = 0.6; corners h00=4, h10=0, h01=2, h11=6
    # .2*.4*4 + .8*.4*0 + .2*.6*2 + .8*.6*6 = .32 + 0 + .24 + 2.88 = 3.44
    assert g.height(2.4, -0.6) == pytest.approx(3.44)
    # gradient in the first cell: dh/dx = ((1-ty)(h10-h00) + ty(h11-h01))/dx = (.6*1 + .4*2)/.5 = 2.8
    # dh/dy = ((1-tx)(h01-h00) + tx(h11-h10))/dy = (.5*3 + .5*4)/.25 = 14
    n = np.array([-2.8, -14.0, 1.0])
    np.testing.assert_allclose(g.normal(1.25, -0.9), n / np.linalg.norm(n), atol=1e-12)


def test_height_grid_normal_is_gradient_of_height():
    rng = np.random.default_rng(3)
    g = HeightGrid(-2.0, 1.0, 0.2, 0.3, rng.normal(0, 0.5, (12, 15)))
    i, j = rng.integers(0, 14, 500), rng.integers(0, 11, 500)
    x = g.x_min + (i + rng.uniform(0.1, 0.9, 500)) * g.dx   # strictly inside cells
    y = g.y_min + (j + rng.uniform(0.1, 0.9, 500)) * g.dy
    np.testing.assert_allclose(g.normal(x, y), fd_normal(g, x, y), atol=1e-6)
    h, n = g.height_normal(x, y)
    np.testing.assert_array_equal(h, g.height(x, y))
    np.testing.assert_array_equal(n, g.normal(x, y))


def test_height_grid_clamps_outside():
    g = HeightGrid(heights=H, **GRID)
    y = np.array([-0.95, -0.7, -0.55])
    np.testing.assert_allclose(g.height(-10.0, y), g.height(g.x_min, y))
    np.testing.assert_allclose(g.height(10.0, y), g.height(g.x_max, y))
    np.testing.assert_allclose(g.height(1.3, 5.0), g.height(1.3, g.y_max))
    np.testing.assert_allclose(g.height(-3.0, -7.0), H[0, 0])
    # the normal is that of the clamped surface: no slope across the edge
    x, yy = np.full(3, -4.0), y
    np.testing.assert_allclose(g.normal(x, yy), fd_normal(g, x, yy), atol=1e-6)
    assert np.all(g.normal(x, yy)[:, 0] == 0.0)


# ------------------------------------------------------------------------------------------- smooth grid
def _smooth_grid(seed: int = 6) -> tuple[SmoothGrid, RectBivariateSpline, np.ndarray, np.ndarray]:
    g = gaussian_rough_terrain(rms=0.05, corr_len=0.3, bounds=(-1.0, 2.0, -0.8, 0.7), seed=seed)
    xs, ys = g.x_min + g.dx * np.arange(g.nx), g.y_min + g.dy * np.arange(g.ny)
    return SmoothGrid(g), RectBivariateSpline(ys, xs, np.asarray(g.heights), kx=3, ky=3, s=0), xs, ys


def test_smooth_grid_is_scipys_bicubic_spline_with_its_exact_normal():
    """Oracle: scipy's own evaluation (FITPACK) of the interpolating spline and of its partial derivatives."""
    sg, spline, xs, ys = _smooth_grid()
    rng = np.random.default_rng(11)
    x = np.r_[rng.uniform(xs[0], xs[-1], 400), xs[::7], xs[-1], xs[0]]  # inside, on knots, on the border
    y = np.r_[rng.uniform(ys[0], ys[-1], 400), ys[: xs[::7].size], ys[0], ys[-1]]
    h, n = sg.height_normal(x, y)
    np.testing.assert_allclose(h, spline.ev(y, x), rtol=0, atol=1e-12)
    gx, gy = spline.ev(y, x, dy=1), spline.ev(y, x, dx=1)  # ∂h/∂x is the spline's 2nd coordinate
    expect = np.stack([-gx, -gy, np.ones_like(gx)], axis=-1) / np.sqrt(1 + gx**2 + gy**2)[:, None]
    np.testing.assert_allclose(n, expect, rtol=0, atol=1e-12)
    # it interpolates the grid's nodes, and the normal is the gradient of the height (finite differences)
    X, Y = np.meshgrid(xs, ys)
    np.testing.assert_allclose(sg.height(X, Y), sg.grid.heights, rtol=0, atol=1e-12)
    inner = (x > xs[0] + 1e-3) & (x < xs[-1] - 1e-3) & (y > ys[0] + 1e-3) & (y < ys[-1] - 1e-3)
    np.testing.assert_allclose(n[inner], fd_normal(sg, x[inner], y[inner]), atol=1e-7)
    assert sg.bounds == sg.grid.bounds


def test_smooth_grid_clamps_outside_with_no_slope_across_the_edge():
    sg, spline, xs, ys = _smooth_grid(2)
    y = np.array([-0.5, 0.1, 0.6])
    np.testing.assert_allclose(sg.height(-5.0, y), spline.ev(y, np.full(3, xs[0])), rtol=0, atol=1e-12)
    np.testing.assert_allclose(sg.height(0.3, 9.0), spline.ev(ys[-1], 0.3), rtol=0, atol=1e-12)
    n = sg.normal(np.full(3, 7.0), y)
    assert np.all(n[:, 0] == 0.0)  # clamped in x: no x slope; the y slope is the border's
    gy = spline.ev(y, np.full(3, xs[-1]), dx=1)
    np.testing.assert_allclose(n[:, 1], -gy / np.sqrt(1 + gy**2), rtol=0, atol=1e-12)


def test_smooth_grid_needs_a_height_grid_of_four_by_four_nodes():
    with pytest.raises(TerrainError, match="4 x 4"):
        SmoothGrid(HeightGrid(0.0, 0.0, 1.0, 1.0, np.zeros((3, 5))))
    with pytest.raises(TerrainError, match="SmoothGrid"):
        SmoothGrid(Plane())  # type: ignore[arg-type]


@needs_zoe
def test_wmrde_zoe_file_header_nodes_and_normals():
    g = load_wmrde_grid(ZOE)
    assert (g.nx, g.ny) == (201, 101)
    assert g.dx == pytest.approx(0.1) and g.dy == pytest.approx(0.1)
    assert (g.x_min, g.y_min, g.x_max, g.y_max) == pytest.approx((-6.0, -5.0, 14.0, 5.0))
    raw = ZOE.read_text().strip().rstrip(",").split(",")    # independent parse of the raw file
    for i, j in [(0, 0), (200, 0), (0, 100), (37, 58), (200, 100)]:
        expected = float(raw[6 + i + j * 201])
        assert g.height(-6.0 + 0.1 * i, -5.0 + 0.1 * j) == pytest.approx(expected, abs=1e-9)
    rng = np.random.default_rng(0)
    x = -6.0 + 0.1 * (rng.integers(0, 200, 300) + rng.uniform(0.1, 0.9, 300))
    y = -5.0 + 0.1 * (rng.integers(0, 100, 300) + rng.uniform(0.1, 0.9, 300))
    np.testing.assert_allclose(g.normal(x, y), fd_normal(g, x, y), atol=1e-6)


# ------------------------------------------------------------------------------------- analytic shapes
def test_ramp_heights_and_normals_closed_form():
    a = math.radians(20.0)
    r = Ramp(x_start=1.0, height=1.5, slope_deg=20.0, top_length=5.0)
    run = 1.5 / math.tan(a)
    x = np.array([0.5, 1.0 + 0.3 * run, 1.0 + run + 2.0, 1.0 + run + 5.0 + 0.5 * run, 1.0 + 2 * run + 5.5])
    np.testing.assert_allclose(r.height(x, 3.0), [0.0, 0.45, 1.5, 0.75, 0.0], atol=1e-12)
    n = r.normal(x, -7.0)
    up, incline, decline = [0, 0, 1], [-math.sin(a), 0, math.cos(a)], [math.sin(a), 0, math.cos(a)]
    np.testing.assert_allclose(n, [up, incline, up, decline, up], atol=1e-12)
    # yawed 90 deg about origin (2, 1): the incline rises along +y
    ry = Ramp(x_start=0.5, yaw=math.pi / 2, origin=(2.0, 1.0))
    np.testing.assert_allclose(ry.height(-40.0, 1.5 + 0.5), math.tan(a) * 0.5, atol=1e-12)
    np.testing.assert_allclose(ry.normal(-40.0, 2.0), [0.0, -math.sin(a), math.cos(a)], atol=1e-12)
    # up only: the plateau continues
    assert Ramp(down=False).height(1e3, 0.0) == pytest.approx(1.5)


def test_ramp_normal_matches_finite_differences_at_any_yaw():
    r = Ramp(x_start=0.3, height=0.8, slope_deg=30.0, top_length=1.0, yaw=0.7, origin=(0.5, -0.2))
    rng = np.random.default_rng(5)
    x, y = rng.uniform(-3, 6, 2000), rng.uniform(-3, 6, 2000)
    s = (x - 0.5) * math.cos(0.7) + (y + 0.2) * math.sin(0.7)
    kinks = np.array([r.x_start, r.s_top, r.s_top_end, r.s_end])
    ok = np.min(np.abs(s[:, None] - kinks[None, :]), axis=1) > 1e-3
    np.testing.assert_allclose(r.normal(x[ok], y[ok]), fd_normal(r, x[ok], y[ok]), atol=1e-6)


def test_steps_heights_and_normals():
    st = Steps(x_start=1.0, step_length=0.5, step_height=0.1, n_steps=3)
    x = np.array([0.99, 1.0, 1.2, 1.5, 2.2, 2.5, 10.0])
    np.testing.assert_allclose(st.height(x, 4.0), [0.0, 0.1, 0.1, 0.2, 0.3, 0.3, 0.3], atol=1e-12)
    np.testing.assert_allclose(st.normal(x, 4.0), np.tile([0.0, 0.0, 1.0], (7, 1)))
    sy = Steps(0.0, 1.0, 0.2, 2, yaw=math.pi / 2)
    np.testing.assert_allclose(sy.height(50.0, [-0.5, 0.5, 1.5]), [0.0, 0.2, 0.4], atol=1e-12)


def test_box_heights_and_normals():
    b = Box(center=(2.0, 1.0), size=(2.0, 0.4), height=0.3, yaw=math.pi / 4)
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    inside = [(2.0 + 0.9 * c, 1.0 + 0.9 * s), (2.0 - 0.15 * s, 1.0 + 0.15 * c)]      # along the box axes
    outside = [(2.0 + 0.9, 1.0), (2.0 + 1.1 * c, 1.0 + 1.1 * s), (2.0 - 0.25 * s, 1.0 + 0.25 * c)]
    pts = np.array(inside + outside)
    np.testing.assert_allclose(b.height(pts[:, 0], pts[:, 1]), [0.3, 0.3, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(b.normal(pts[:, 0], pts[:, 1]), np.tile([0.0, 0.0, 1.0], (5, 1)))


def test_composite_max_and_normal_of_winner():
    tilt = Plane(normal=(-0.1, 0.0, 1.0))                 # h = 0.1 x
    comp = Composite([tilt, Box(center=(1.0, 0.0), size=(1.0, 1.0), height=0.5)])
    x = np.array([-1.0, 1.0, 3.0, 6.0])
    np.testing.assert_allclose(comp.height(x, 0.0), [0.0, 0.5, 0.3, 0.6])   # box base 0 beats -0.1 at x=-1
    n_tilt = np.array([-0.1, 0.0, 1.0]) / math.sqrt(1.01)    # (-dh/dx, -dh/dy, 1)
    np.testing.assert_allclose(comp.normal(x, 0.0), [[0, 0, 1], [0, 0, 1], n_tilt, n_tilt], atol=1e-12)
    assert comp.bounds == pytest.approx((0.5, 1.5, -0.5, 0.5))
    with pytest.raises(TerrainError):
        Composite([])



class _Bump(Terrain):
    """A user terrain (no compiled form): h = 0.2 exp(−x²), so a Composite with it combines Python answers."""

    def height(self, x, y):
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        return 0.2 * np.exp(-x * x)

    def normal(self, x, y):
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        g = -0.4 * x * np.exp(-x * x)
        n = np.stack([-g, np.zeros_like(g), np.ones_like(g)], axis=-1)
        return n / np.linalg.norm(n, axis=-1, keepdims=True)


@pytest.mark.parametrize("nested", [False, True])
def test_composite_of_a_grid_a_ramp_and_boxes_nested_or_not_is_the_max_with_ties_to_the_first(nested):
    """Closed forms: a HeightGrid holding the plane h = 0.05 (x + 5) (bilinear interpolation is exact on it),
    a Ramp from x = 2 at 20°, a box 0.4 m high on [−1, 1]²; a second, equal box later in the list never wins."""
    grid = HeightGrid(-5.0, -5.0, 0.5, 0.5, 0.05 * (np.arange(21.0)[None, :] * 0.5) + np.zeros((21, 1)))
    ramp = Ramp(x_start=2.0, height=1.0, slope_deg=20.0, down=False)
    box, twin = Box((0.0, 0.0), (2.0, 2.0), 0.4), Box((0.0, 0.0), (2.0, 2.0), 0.4, base=-np.inf)
    comp = Composite([grid, Composite([ramp, box]), twin] if nested else [grid, ramp, box, twin])
    x = np.array([-4.0, 0.5, 2.5, 4.0, 4.5])
    h, n = comp.height_normal(x, 0.2)
    t = math.tan(math.radians(20.0))
    expect = np.maximum.reduce([0.05 * (x + 5), np.clip((x - 2.0) * t, 0, 1.0), np.where(np.abs(x) <= 1, 0.4, 0.0)])
    np.testing.assert_allclose(h, expect, atol=1e-12)
    n_grid, n_ramp = np.array([-0.05, 0, 1]) / math.sqrt(1.0025), np.array([-t, 0, 1]) / math.sqrt(1 + t * t)
    winner = [n_grid, [0, 0, 1], n_grid, n_ramp, n_ramp]  # at x = 2.5: 0.375 (grid) > 0.18 (ramp)
    np.testing.assert_allclose(n, winner, atol=1e-12)


def test_composite_with_a_user_terrain_combines_the_members_answers():
    comp = Composite([Plane(point=(0, 0, 0.1)), _Bump()])
    x = np.array([-2.0, -0.3, 0.0, 1.0])
    np.testing.assert_allclose(comp.height(x, 1.0), np.maximum(0.1, 0.2 * np.exp(-x * x)), atol=1e-15)
    np.testing.assert_allclose(comp.normal(x, 1.0), np.where((0.2 * np.exp(-x * x) > 0.1)[:, None],
                                                             _Bump().normal(x, 1.0), [0.0, 0.0, 1.0]), atol=1e-15)


ALL = [
    Plane(normal=(0.2, 0.1, 1.0), point=(0, 0, 1)),
    HeightGrid(0.0, 0.0, 0.5, 0.5, np.arange(20.0).reshape(4, 5) ** 0.5),
    SmoothGrid(HeightGrid(-0.5, -0.5, 0.5, 0.4, np.arange(30.0).reshape(5, 6) ** 0.5)),
    Ramp(), Steps(0.0, 0.3, 0.05, 4, yaw=0.3), Box((0, 0), (1, 2), 0.2, 0.4),
    Composite([Plane(), Ramp(yaw=1.0)]),
]


@pytest.mark.parametrize("t", ALL, ids=lambda t: type(t).__name__)
def test_broadcasting_and_unit_normals(t):
    x = np.linspace(-1, 3, 4)[:, None]
    y = np.linspace(-1, 2, 5)[None, :]
    h, n = t.height_normal(x, y)
    assert h.shape == (4, 5) and n.shape == (4, 5, 3)
    np.testing.assert_array_equal(h, t.height(x, y))
    np.testing.assert_array_equal(n, t.normal(x, y))
    np.testing.assert_allclose(np.linalg.norm(n, axis=-1), 1.0)
    assert np.all(n[..., 2] > 0)
    assert t.height(0.5, 0.25).shape == () and t.normal(0.5, 0.25).shape == (3,)
    with pytest.raises(TerrainError, match="NaN"):
        t.height(np.nan, 0.0)


def test_to_grid_samples_the_surface():
    r = Ramp(x_start=0.0, height=0.5, slope_deg=30.0, top_length=1.0)
    g = r.to_grid(spacing=0.1)
    assert g.bounds[0] == pytest.approx(r.bounds[0]) and g.x_max >= r.bounds[1] - 1e-9
    xs = g.x_min + g.dx * np.arange(g.nx)
    np.testing.assert_allclose(g.heights[3], r.height(xs, g.y_min + 3 * g.dy), atol=1e-12)
    with pytest.raises(TerrainError, match="unbounded"):
        Plane().to_grid()
    with pytest.raises(TerrainError, match="spacing"):
        r.to_grid(spacing=0.0)


# ---------------------------------------------------------------------------------------- rough terrain
def corr_length_1_over_e(h: np.ndarray, d: float) -> float:
    """Lag (m) where the empirical autocorrelation (mean over x and y lags) falls to 1/e (linear interp.)."""
    h = h - h.mean()
    var = np.mean(h * h)
    rho = [1.0]
    for k in range(1, 30):
        rho.append(0.5 * (np.mean(h[:, :-k] * h[:, k:]) + np.mean(h[:-k, :] * h[k:, :])) / var)
        if rho[-1] < math.exp(-1):
            r0, r1 = rho[-2], rho[-1]
            return d * (k - 1 + (r0 - math.exp(-1)) / (r0 - r1))
    raise AssertionError("autocorrelation never fell to 1/e")


def test_gaussian_rough_statistics():
    g = gaussian_rough_terrain(rms=0.05, corr_len=0.2, bounds=(0.0, 60.0, 0.0, 60.0), seed=1)
    assert g.dx == pytest.approx(0.04) and g.dy == pytest.approx(0.04)
    assert g.x_min == 0.0 and g.x_max >= 60.0 and g.y_max >= 60.0
    h = g.heights
    assert abs(np.sqrt(np.mean(h**2)) - 0.05) < 0.005
    assert abs(h.mean()) < 0.005
    assert corr_length_1_over_e(h, g.dx) == pytest.approx(0.2, rel=0.10)
    # another correlation length, explicit spacing
    g2 = gaussian_rough_terrain(rms=0.2, corr_len=0.5, bounds=(0.0, 50.0, -20.0, 20.0), spacing=0.1, seed=2)
    assert np.sqrt(np.mean(g2.heights**2)) == pytest.approx(0.2, rel=0.10)
    assert corr_length_1_over_e(g2.heights, 0.1) == pytest.approx(0.5, rel=0.10)


def test_gaussian_rough_seeds():
    kw = dict(bounds=(0.0, 3.0, 0.0, 2.0))
    a, b, c = (gaussian_rough_terrain(seed=s, **kw) for s in (4, 4, 5))
    np.testing.assert_array_equal(a.heights, b.heights)
    assert np.abs(a.heights - c.heights).max() > 0.01


@pytest.mark.parametrize("kw, name", [(dict(rms=0.0), "rms"), (dict(corr_len=-1.0), "corr_len"),
                                      (dict(spacing=float("nan")), "spacing"), (dict(seed=-3), "seed"),
                                      (dict(bounds=(1.0, 0.0, 0.0, 1.0)), "bounds")])
def test_gaussian_rough_bad_arguments(kw, name):
    with pytest.raises(TerrainError, match=name):
        gaussian_rough_terrain(**kw)


# ------------------------------------------------------------------------------------------ heightmaps
def write_yaml(path: Path, **keys) -> Path:
    path.write_text("".join(f"{k}: {v}\n" for k, v in keys.items()))
    return path


def test_heightmap_yaml_npy_origin_and_flip(tmp_path):
    img = np.array([[3.0, 3.5, 4.0],      # row 0 = top = largest y
                    [2.0, 2.5, 3.0],
                    [1.0, 1.5, 2.0],
                    [0.0, 0.5, 1.0]])
    np.save(tmp_path / "m.npy", img)
    y = write_yaml(tmp_path / "m.yaml", image="m.npy", resolution=0.5, origin="[10.0, -2.0]",
                   height_scale=0.1)
    g = load_heightmap(y)
    assert (g.nx, g.ny, g.x_min, g.y_min, g.dx) == (3, 4, 10.0, -2.0, 0.5)
    for r in range(4):
        for c in range(3):
            assert g.height(10.0 + 0.5 * c, -2.0 + 0.5 * (3 - r)) == pytest.approx(0.1 * img[r, c])
    assert np.all(np.diff(g.height(10.25, np.linspace(-2, -0.5, 7))) > 0)   # increases with y
    assert load_terrain(y).height(10.0, -2.0) == pytest.approx(0.0)
    bare = load_heightmap(tmp_path / "m.npy", resolution=0.5, origin=(10.0, -2.0))
    np.testing.assert_allclose(bare.heights, 10 * g.heights)


def test_heightmap_png_round_trip(tmp_path):
    from PIL import Image

    ny, nx = 20, 30
    yy, xx = np.mgrid[0:ny, 0:nx]
    val = (ny - 1 - yy) / (ny - 1) * 0.7 + 0.3 * xx / (nx - 1)      # brighter toward the top => up with y
    for bits, dtype in [(8, np.uint8), (16, np.uint16)]:
        full = 2**bits - 1
        Image.fromarray(np.round(val * full).astype(dtype)).save(tmp_path / f"m{bits}.png")
        y = write_yaml(tmp_path / f"m{bits}.yaml", image=f"m{bits}.png", resolution=0.2, origin="[1.0, 2.0]",
                       z_min=-1.0, z_max=2.0)
        g = load_heightmap(y)
        assert (g.nx, g.ny) == (nx, ny)
        expected = -1.0 + 3.0 * val[::-1]                           # row 0 of the grid = bottom of the image
        np.testing.assert_allclose(g.heights, expected, atol=3.0 * 0.5 / full + 1e-6)   # quantization
        assert g.height(1.0, 2.0) == pytest.approx(-1.0, abs=1e-6)     # bottom-left pixel = origin, value 0
        assert g.height(1.0 + 0.2 * (nx - 1), 2.0 + 0.2 * (ny - 1)) == pytest.approx(2.0, abs=1e-6)
        assert np.all(np.diff(g.height(3.0, 2.0 + 0.2 * np.arange(ny))) > 0)
    # RGB(A) written by matplotlib: gray = mean of RGB; its colormap adds ~1 level of error
    mpimg.imsave(tmp_path / "rgb.png", val, cmap="gray", vmin=0.0, vmax=1.0)
    via = load_terrain(tmp_path / "rgb.png", z_min=-1.0, z_max=2.0, resolution=0.2, origin=(1.0, 2.0))
    np.testing.assert_allclose(via.heights, -1.0 + 3.0 * val[::-1], atol=3.0 * 2.0 / 255)
    assert via.dx == 0.2 and via.x_min == 1.0
    # colour image: gray = mean of R, G, B (alpha ignored)
    rgba = np.zeros((2, 2, 4), np.uint8)
    rgba[..., 0], rgba[..., 1], rgba[..., 2], rgba[..., 3] = 255, [[0, 51], [102, 255]], 0, 128
    Image.fromarray(rgba, "RGBA").save(tmp_path / "c.png")
    c = load_heightmap(tmp_path / "c.png", resolution=1.0, z_min=0.0, z_max=3.0)
    np.testing.assert_allclose(c.heights, [[(255 + 102) / 255, 2.0], [1.0, (255 + 51) / 255]], atol=1e-6)


def test_shipped_rough_hills():
    p = REPO / "worlds" / "rough_hills.yaml"
    g = load_terrain(p)
    assert isinstance(g, HeightGrid) and (g.nx, g.ny) == (100, 100)
    assert (REPO / "worlds" / "rough_hills.npy").stat().st_size < 100_000
    assert np.isfinite(g.heights).all() and 0.05 < np.ptp(g.heights) < 1.0


# ------------------------------------------------------------------------------------------- SDF worlds
SDF = """<?xml version="1.0"?>
<sdf version="1.6"><world name="w">
  <model name="ground"><static>true</static><pose>0 0 -0.2 0 0 0</pose><link name="l"><collision name="c">
    <geometry><plane><normal>0 0 1</normal><size>50 50</size></plane></geometry></collision></link></model>
  <model name="b1"><pose>2 1 0 0 0 0</pose><link name="l"><pose>0 0 0.25 0 0 0</pose><collision name="c">
    <geometry><box><size>1 2 0.5</size></box></geometry></collision></link></model>
  <model name="b2"><pose>-3 0 0.1 0 0 1.5707963268</pose><link name="l"><collision name="c">
    <geometry><box><size>2 0.4 0.2</size></box></geometry></collision></link></model>
  {extra}
</world></sdf>"""


def test_sdf_world_boxes_and_plane(tmp_path):
    (tmp_path / "w.sdf").write_text(SDF.format(extra=""))
    t = load_sdf_world(tmp_path / "w.sdf")
    x = np.array([2.0, 2.45, 2.0, 2.6, -3.0, -3.0, -3.0, -2.7, 10.0])
    y = np.array([1.0, 1.95, 0.1, 1.0, 0.9, -0.9, 1.1, 0.0, 10.0])
    np.testing.assert_allclose(t.height(x, y), [0.5, 0.5, 0.5, -0.2, 0.2, 0.2, -0.2, -0.2, -0.2])
    np.testing.assert_allclose(t.normal(x, y), np.tile([0.0, 0.0, 1.0], (9, 1)))


def test_sdf_heightmap_npy(tmp_path):
    img = np.array([[0.0, 1.0], [2.0, 3.0]])        # row 0 = +y edge
    np.save(tmp_path / "hm.npy", img)
    extra = ("<model name='hm'><link name='l'><collision name='c'><geometry><heightmap>"
             "<uri>file://hm.npy</uri><size>4 2 1</size><pos>1 0 0.5</pos></heightmap></geometry></collision>"
             "</link></model>")
    (tmp_path / "w.sdf").write_text(SDF.format(extra=extra))
    t = load_sdf_world(tmp_path / "w.sdf")
    # spans x -1..3, y -1..1; heights = 0.5 + value
    np.testing.assert_allclose(t.height([-1.0, 3.0, -1.0, 3.0, 1.0], [1.0, 1.0, -1.0, -1.0, 0.0]),
                               [0.5, 1.5, 2.5, 3.5, 2.0])


def test_shipped_obstacles_world():
    t = load_terrain(REPO / "worlds" / "obstacles.sdf")
    np.testing.assert_allclose(t.height([3.0, 3.45, 6.0, 6.0, 0.0, 4.5], [0.5, 0.75, -1.0, -1.52, 0.0, 0.0]),
                               [0.1, 0.1, 0.3, 0.3, 0.0, 0.0])


# --------------------------------------------------------------------------------------------- presets
def test_load_terrain_presets_and_passthrough():
    assert set(terrain_presets()) == {"flat", "rough", "ramp", "steps"}
    p = Plane()
    assert load_terrain(p) is p
    assert load_terrain("flat").height(3.0, 4.0) == 0.0
    assert load_terrain("ramp").height(100.0, 0.0) == 0.0 and load_terrain("ramp").bounds is not None
    r1 = load_terrain("rough", seed=3, bounds=(0.0, 2.0, 0.0, 2.0))
    assert np.sqrt(np.mean(r1.heights**2)) == pytest.approx(0.05)
    assert load_terrain("steps").height(100.0, 0.0) > 0.0
    with pytest.raises(TerrainError, match="ramp"):
        load_terrain("ramp", bogus=1)


# ------------------------------------------------------------------------------------------- bad input
def test_missing_files(tmp_path):
    for loader, name in [(load_wmrde_grid, "a.txt"), (load_heightmap, "a.yaml"), (load_sdf_world, "a.sdf")]:
        with pytest.raises(TerrainError, match="a\\.(txt|yaml|sdf).*not found"):
            loader(tmp_path / name)


def test_wmrde_wrong_count(tmp_path):
    f = tmp_path / "short.txt"
    f.write_text("0,1,3,0,1,2,1,2,3,4,5,")
    with pytest.raises(TerrainError, match=r"short\.txt.*count.*6.*5"):
        load_wmrde_grid(f)


def test_wmrde_non_numeric(tmp_path):
    f = tmp_path / "text.txt"
    f.write_text("0,1,2,0,1,2,1,2,abc,4,")
    with pytest.raises(TerrainError, match=r"text\.txt.*'abc'"):
        load_wmrde_grid(f)


def test_wmrde_bad_header(tmp_path):
    f = tmp_path / "head.txt"
    f.write_text("1,0,2,0,1,2,1,2,3,4,")
    with pytest.raises(TerrainError, match=r"head\.txt.*header"):
        load_wmrde_grid(f)


def test_nan_holes_error_and_fill(tmp_path):
    h = np.array([[1.0, 2.0, 3.0], [4.0, np.nan, 6.0], [7.0, 8.0, np.inf]])
    with pytest.raises(TerrainError, match=r"2 non-finite.*i=1, j=1.*x=0\.5, y=0\.25"):
        HeightGrid(0.0, 0.0, 0.5, 0.25, h)
    g = HeightGrid(0.0, 0.0, 0.5, 0.25, h, fill_holes=True)
    # nearest valid node in metres (dy = 0.25 < dx = 0.5): the hole at [1, 1] has two at 0.25 m (2 and 8);
    # the one at [2, 2] has [1, 2] = 6 at 0.25 m, [2, 1] = 8 at 0.5 m
    assert g.heights[1, 1] in (2.0, 8.0)
    assert g.heights[2, 2] == 6.0
    f = tmp_path / "holes.txt"
    f.write_text("0,1,2,0,1,2,1,nan,3,4,")
    with pytest.raises(TerrainError, match=r"holes\.txt.*1 non-finite"):
        load_wmrde_grid(f)
    assert load_wmrde_grid(f, fill_holes=True).heights[0, 1] == 1.0


@pytest.mark.parametrize("args, name", [((0.0, 0.0, 0.0, 1.0, np.zeros((2, 2))), "dx"),
                                        ((0.0, 0.0, 1.0, -1.0, np.zeros((2, 2))), "dy"),
                                        ((0.0, 0.0, 1.0, 1.0, np.zeros((1, 5))), "2 x 2"),
                                        ((0.0, 0.0, 1.0, 1.0, np.zeros(4)), "2-D")])
def test_height_grid_bad_construction(args, name):
    with pytest.raises(TerrainError, match=name):
        HeightGrid(*args)


def test_unknown_suffix_and_png_without_range(tmp_path):
    with pytest.raises(TerrainError, match=r"terrain\.xyz.*\.txt.*\.yaml.*\.sdf"):
        load_terrain(tmp_path / "terrain.xyz")
    mpimg.imsave(tmp_path / "m.png", np.zeros((3, 3)), cmap="gray")
    with pytest.raises(TerrainError, match=r"m\.png.*z_min"):
        load_terrain(tmp_path / "m.png")
    y = write_yaml(tmp_path / "j.yaml", image="m.jpg", resolution=0.1, origin="[0, 0]")
    with pytest.raises(TerrainError, match=r"j\.yaml.*unknown image format '\.jpg'"):
        load_heightmap(y)


def test_heightmap_missing_and_unknown_keys(tmp_path):
    y = write_yaml(tmp_path / "k.yaml", image="m.npy", origin="[0, 0]")
    with pytest.raises(TerrainError, match=r"k\.yaml.*missing key 'resolution'"):
        load_heightmap(y)
    y = write_yaml(tmp_path / "u.yaml", image="m.npy", resolution=0.1, origin="[0, 0]", z_mn=0)
    with pytest.raises(TerrainError, match=r"u\.yaml.*unknown key.*z_mn"):
        load_heightmap(y)


def test_sdf_without_terrain(tmp_path):
    f = tmp_path / "empty.sdf"
    f.write_text("<sdf version='1.6'><world name='w'><model name='m'><link name='l'><collision name='c'>"
                 "<geometry><sphere><radius>1</radius></sphere></geometry></collision></link></model>"
                 "</world></sdf>")
    with pytest.warns(UserWarning, match="sphere"), \
            pytest.raises(TerrainError, match=r"empty\.sdf.*no terrain"):
        load_sdf_world(f)


def test_sdf_model_uri(tmp_path):
    extra = ("<model name='hm'><link name='l'><collision name='c'><geometry><heightmap>"
             "<uri>model://terrain/h.png</uri><size>4 2 1</size></heightmap></geometry></collision></link>"
             "</model>")
    (tmp_path / "m.sdf").write_text(SDF.format(extra=extra))
    with pytest.raises(TerrainError, match=r"m\.sdf.*model 'hm'.*model URIs are not resolvable"):
        load_sdf_world(tmp_path / "m.sdf")


def pitched_ramp(theta: float, x0: float = 1.0, length: float = 6.0, width: float = 3.0, thick: float = 0.2):
    """The centre and rotation of a box whose top face is the ramp h = (x − x0) tan θ for x0 <= x <= x0 + L cos θ
    (|y| <= width/2): pitched by −θ (its +x end up), the low end buried."""
    n_top = np.array([-math.sin(theta), 0.0, math.cos(theta)])
    mid_top = np.array([x0 + 0.5 * length * math.cos(theta), 0.0, 0.5 * length * math.sin(theta)])
    return mid_top - 0.5 * thick * n_top, (length, width, thick)


def box_top_lp(center, rotation, size, x, y):
    """Independent oracle: the highest z with (x, y, z) inside the box, by linear programming over its six
    half-spaces n·p <= n·c + a (scipy's HiGHS), or None where the vertical line misses it."""
    from scipy.optimize import linprog

    A, b = [], []
    for i in range(3):
        for sgn in (1.0, -1.0):
            n = sgn * rotation[:, i]
            A.append(n)
            b.append(n @ center + 0.5 * size[i])
    res = linprog(c=[0.0, 0.0, -1.0], A_ub=np.array(A), b_ub=np.array(b),
                  bounds=[(x, x), (y, y), (None, None)], method="highs")
    return None if res.status != 0 else res.x[2]


@pytest.mark.parametrize("theta_deg", [-20.0, 10.0, 35.0])
def test_oriented_box_pitched_top_is_the_plane_and_its_normal(theta_deg):
    """A box pitched by θ: on its top face the height is the closed-form plane z = c_z + a_z/cos θ − (x − c_x) tan θ
    with the normal (sin θ, 0, cos θ); beyond the top's raised edge the end face that looks up (slope 90° − |θ|,
    normal ±(cos θ, 0, −sin θ)); the end that looks down is a jump to the base; outside, the base."""
    th = math.radians(theta_deg)
    c, size = np.array([2.0, -1.0, 0.3]), np.array([2.0, 1.0, 0.4])
    box = OrientedBox(c, size, (0.0, th, 0.0), base=-0.5)
    ax, az = 0.5 * size[0], 0.5 * size[2]
    top_lo, top_hi = sorted((c[0] - ax * math.cos(th) + az * math.sin(th),
                             c[0] + ax * math.cos(th) + az * math.sin(th)))
    x = np.linspace(top_lo + 1e-6, top_hi - 1e-6, 41)
    y = np.full_like(x, -1.0 + 0.3)
    h, n = box.height_normal(x, y)
    np.testing.assert_allclose(h, c[2] + az / math.cos(th) - (x - c[0]) * math.tan(th), atol=1e-12)
    np.testing.assert_allclose(n, np.tile([math.sin(th), 0.0, math.cos(th)], (x.size, 1)), atol=1e-15)
    # the face that looks up: the one at the raised end (+x end for θ < 0, −x end for θ > 0)
    sgn = -1.0 if th > 0 else 1.0
    e = sgn * np.array([math.cos(th), 0.0, -math.sin(th)])  # its outward normal, n_z = |sin θ| > 0
    p_face = c + ax * e
    edge_top = top_lo if th > 0 else top_hi
    edge_bottom = (c + ax * e - az * np.array([math.sin(th), 0.0, math.cos(th)]))[0]
    xf = np.linspace(min(edge_top, edge_bottom) + 1e-6, max(edge_top, edge_bottom) - 1e-6, 9)
    hf, nf = box.height_normal(xf, np.full_like(xf, -1.0))
    np.testing.assert_allclose(hf, p_face[2] - e[0] / e[2] * (xf - p_face[0]), atol=1e-10)
    np.testing.assert_allclose(nf, np.tile(e, (xf.size, 1)), atol=1e-15)
    # the normals are those of the height field (finite differences), off the edges
    np.testing.assert_allclose(fd_normal(box, np.r_[x[1:-1], xf[1:-1]], np.full(x.size + xf.size - 4, -1.0)),
                               np.r_[n[1:-1], nf[1:-1]], atol=1e-6)
    # the other end looks down: the height drops from the top's lower edge straight to the base
    low = top_hi if th > 0 else top_lo
    out = low + (1e-6 if th > 0 else -1e-6)
    assert box.height(out, -1.0) == -0.5
    assert box.height(c[0], 2.0) == -0.5 and box.height(c[0], -1.0 + 0.5 + 1e-9) == -0.5   # beside it


def test_oriented_box_any_rotation_matches_linear_programming():
    """Random rotations and points against an independent solver of 'the highest point of the box above (x, y)'."""
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(6):
        rpy = rng.uniform(-math.pi, math.pi, 3)
        c, size = rng.uniform(-1, 1, 3), rng.uniform(0.5, 1.5, 3)
        box = OrientedBox(c, size, rpy, base=-10.0)
        pts = c[:2] + rng.uniform(-0.7, 0.7, (40, 2)) * size.max()
        h = box.height(pts[:, 0], pts[:, 1])
        for (x, y), hk in zip(pts, h, strict=True):
            ref = box_top_lp(c, box.rotation, size, x, y)
            assert (hk == -10.0) if ref is None else hk == pytest.approx(ref, abs=1e-9)
        hits += (h > -10.0).sum()
        inside = h > -10.0
        n = box.normal(pts[inside, 0], pts[inside, 1])
        np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-14)
        assert np.all(n[:, 2] > 0.0)
    assert 60 < hits < 220  # both hits and misses were compared


def test_oriented_box_upright_is_the_box():
    """roll = pitch = 0: an OrientedBox (its own kernel, the slab method) is the Box of height z + lz/2, to the last
    digit; a Box's own results are unchanged (test_box_heights_and_normals)."""
    rng = np.random.default_rng(12)
    ob = OrientedBox((3.0, 0.5, 0.05), (1.0, 0.6, 0.1), (0.0, 0.0, 0.7))
    b = Box((3.0, 0.5), (1.0, 0.6), 0.1, yaw=0.7)
    x, y = rng.uniform(2, 4, 2000), rng.uniform(-0.5, 1.5, 2000)
    for a, bb in zip(ob.height_normal(x, y), b.height_normal(x, y), strict=True):
        np.testing.assert_array_equal(a, bb)
    np.testing.assert_allclose(ob.bounds, b.bounds, atol=1e-15)
    from wmr_dynamics.compiled.data import TERRAIN_BOX, TERRAIN_OBOX
    from wmr_dynamics.compiled.terrain import compile_terrain

    assert compile_terrain(ob).kind == TERRAIN_OBOX and compile_terrain(b).kind == TERRAIN_BOX  # exact, no raster


def test_oriented_box_bad_input():
    with pytest.raises(TerrainError, match=r"OrientedBox size must be positive"):
        OrientedBox((0, 0, 0), (1, -1, 1))
    with pytest.raises(TerrainError, match=r"OrientedBox center must be 3 finite numbers"):
        OrientedBox((0, 0), (1, 1, 1))
    with pytest.raises(TerrainError, match=r"give rpy or rotation, not both"):
        OrientedBox((0, 0, 0), (1, 1, 1), (0, 0, 0), rotation=np.eye(3))
    with pytest.raises(TerrainError, match=r"rotation must be a rotation matrix"):
        OrientedBox((0, 0, 0), (1, 1, 1), rotation=np.diag([1.0, 1.0, -1.0]))


def test_sdf_tilted_boxes_load_as_oriented_boxes(tmp_path):
    """Gazebo ramps: a box whose <pose> pitches it (here split over the model, link and collision poses) loads as
    the box's top surface — the closed-form ramp plane and normal — and a rolled box's top tilts sideways."""
    th = math.radians(12.0)
    c, size = pitched_ramp(th, x0=1.0, length=4.0, width=2.0, thick=0.2)
    extra = (f"<model name='ramp'><pose>{c[0] - 0.5} {c[1]} {c[2]} 0 0 0</pose><link name='l'>"
             f"<pose>0.5 0 0 0 {-th / 2} 0</pose><collision name='c'><pose>0 0 0 0 {-th / 2} 0</pose><geometry>"
             f"<box><size>{size[0]} {size[1]} {size[2]}</size></box></geometry></collision></link></model>"
             "<model name='bank'><pose>6 6 0.5 0.2 0 0</pose><link name='l'><collision name='c'><geometry>"
             "<box><size>2 2 0.2</size></box></geometry></collision></link></model>")
    (tmp_path / "t.sdf").write_text(SDF.format(extra=extra))
    t = load_sdf_world(tmp_path / "t.sdf")
    assert sum(isinstance(m, OrientedBox) for m in t.surfaces) == 2
    x = np.linspace(1.2, 1.0 + 4.0 * math.cos(th) - 0.2, 15)
    h, n = t.height_normal(x, np.full_like(x, -0.5))  # (y = -0.5: beside the SDF's box b1)
    np.testing.assert_allclose(h, (x - 1.0) * math.tan(th), atol=1e-12)
    np.testing.assert_allclose(n, np.tile([-math.sin(th), 0.0, math.cos(th)], (x.size, 1)), atol=1e-12)
    assert t.height(0.5, -0.5) == pytest.approx(-0.2)  # the ground plane before the ramp (its low end is buried)
    # roll 0.2: the top normal R_x(0.2) e_z = (0, −sin 0.2, cos 0.2), the top through (6, 6, 0.5) + 0.1 n
    hb, nb = t.height_normal(6.3, 6.4)
    top = np.array([6.0, 6.0, 0.5]) + 0.1 * np.array([0.0, -math.sin(0.2), math.cos(0.2)])
    assert hb == pytest.approx(top[2] + math.tan(0.2) * (6.4 - top[1]), abs=1e-12)
    np.testing.assert_allclose(nb, [0.0, -math.sin(0.2), math.cos(0.2)], atol=1e-12)
    # a tilted plane's normal is rotated too; a tilted heightmap is refused, naming it
    tilt = ("<model name='slope'><pose>0 0 0 0 -0.1 0</pose><link name='l'><collision name='c'><geometry>"
            "<plane><normal>0 0 1</normal></plane></geometry></collision></link></model>")
    (tmp_path / "p.sdf").write_text(SDF.format(extra=tilt))
    assert load_sdf_world(tmp_path / "p.sdf").height(10.0, 0.0) == pytest.approx(10.0 * math.tan(0.1), abs=1e-12)
    hm = ("<model name='hm'><pose>0 0 0 0.1 0 0</pose><link name='l'><collision name='c'><geometry><heightmap>"
          "<uri>hm.npy</uri><size>4 2 1</size></heightmap></geometry></collision></link></model>")
    np.save(tmp_path / "hm.npy", np.zeros((2, 2)))
    (tmp_path / "h.sdf").write_text(SDF.format(extra=hm))
    with pytest.raises(TerrainError, match=r"h\.sdf.*model 'hm'.*tilted heightmap.*not supported"):
        load_sdf_world(tmp_path / "h.sdf")


def test_sdf_malformed_xml(tmp_path):
    (tmp_path / "bad.sdf").write_text("<sdf><world>")
    with pytest.raises(TerrainError, match=r"bad\.sdf.*invalid XML"):
        load_sdf_world(tmp_path / "bad.sdf")
