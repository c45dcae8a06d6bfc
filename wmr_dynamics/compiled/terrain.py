"""Compiled terrain queries (plane, bilinear height grid, ramp, steps) and the conversion of any Terrain to them."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.data import TERRAIN_GRID, TERRAIN_PLANE, TERRAIN_RAMP, TERRAIN_STEPS, TerrainData
from wmr_dynamics.errors import TerrainError


def compile_terrain(terrain, spacing: float = 0.02, bounds: tuple | None = None,  # noqa: ANN001
                    margin: float = 0.5) -> TerrainData:
    """``terrain`` as :class:`TerrainData` for the compiled kernels.

    Plane, HeightGrid, Ramp and Steps are represented exactly (the grid with ``HeightGrid``'s bilinear cells,
    clamping outside it and one-sided slopes at its border).  Any other terrain (Box, Composite, ...) is
    rasterized with its ``to_grid`` at ``spacing`` (m) over ``bounds`` (x_min, x_max, y_min, y_max; m; default
    its own bounds) grown by ``margin`` (m) on every side, so that beyond a feature the clamped grid holds
    the surroundings' height and not the feature's edge.  Rasterizing turns analytic edges (a box's or a
    step's vertical face) into bilinear ramps one cell wide; away from edges heights and normals are exact
    for piecewise-planar surfaces.  Raises TerrainError for a terrain without bounds when none are given.
    """
    from wmr_dynamics.terrain import HeightGrid, Plane, Ramp, Steps

    if isinstance(terrain, Plane):
        n, p = terrain.unit_normal, terrain.point
        return TerrainData(TERRAIN_PLANE, np.array([n[0], n[1], n[2], float(n @ p)]), _readonly(np.zeros((2, 2))))
    if isinstance(terrain, Ramp):
        t = terrain
        return TerrainData(TERRAIN_RAMP, np.array([t.x_start, t.ramp_height, t._tan, t.s_top, t.s_top_end, t.s_end,
                                                   1.0 if t.down else 0.0, t._dir[0], t._dir[1], *t.origin]),
                           _readonly(np.zeros((2, 2))))
    if isinstance(terrain, Steps):
        t = terrain
        return TerrainData(TERRAIN_STEPS, np.array([t.x_start, t.step_length, t.step_height, float(t.n_steps),
                                                    t._dir[0], t._dir[1], *t.origin]), _readonly(np.zeros((2, 2))))
    if not isinstance(terrain, HeightGrid):
        b = bounds if bounds is not None else getattr(terrain, "bounds", None)
        if b is None:
            raise TerrainError(f"{type(terrain).__name__} terrain is unbounded: the compiled path needs a Plane, a "
                               "HeightGrid, a Ramp, Steps, a bounded terrain to rasterize, or bounds=(x_min, x_max, "
                               "y_min, y_max)")
        m = float(margin)
        terrain = terrain.to_grid(bounds=(b[0] - m, b[1] + m, b[2] - m, b[3] + m), spacing=spacing)
    return TerrainData(TERRAIN_GRID, np.array([terrain.x_min, terrain.y_min, terrain.dx, terrain.dy,
                                               1.0 / terrain.dx, 1.0 / terrain.dy]),
                       _readonly(np.array(terrain.heights, dtype=float, order="C")))


def _readonly(grid: NDArray) -> NDArray:
    """The grid as a read-only array: one argument type for every terrain kind (a writable grid for some kinds
    would make a second numba specialization of every kernel, doubling the cold compile), and the read-only
    one, which numba lets LLVM treat as never written, keeps the step as fast as it is."""
    grid.flags.writeable = False
    return grid


@njit(inline="always")
def height_normal(kind: int, params: NDArray, grid: NDArray, x: float, y: float) -> tuple:
    """(h, n_x, n_y, n_z) at (x, y) (m, world): the plane, or HeightGrid's bilinear cell (clamped outside)."""
    if kind == TERRAIN_PLANE:
        nx, ny, nz = params[0], params[1], params[2]
        return (params[3] - nx * x - ny * y) / nz, nx, ny, nz
    if kind == TERRAIN_RAMP:
        return _ramp(params, x, y)
    if kind == TERRAIN_STEPS:  # Steps._profile: vertical risers, normals up
        s = (x - params[6]) * params[4] + (y - params[7]) * params[5]
        k = min(max(math.floor((s - params[0]) / params[1]) + 1.0, 0.0), params[3])
        return k * params[2], 0.0, 0.0, 1.0
    ny_, nx_ = grid.shape[0], grid.shape[1]
    fx = (x - params[0]) / params[2]  # divided as HeightGrid._cell does: the same cell on its edges (a product
    fy = (y - params[1]) / params[3]  # with 1/dx can round a node's 3.0 to 2.9999999999999996: another normal)
    cx = min(max(fx, 0.0), nx_ - 1.0)
    cy = min(max(fy, 0.0), ny_ - 1.0)
    i = min(int(cx), nx_ - 2)
    j = min(int(cy), ny_ - 2)
    tx, ty = cx - i, cy - j
    h00, h10, h01, h11 = grid[j, i], grid[j, i + 1], grid[j + 1, i], grid[j + 1, i + 1]
    a, b, c = h10 - h00, h01 - h00, h11 - h01 - h10 + h00
    h = h00 + tx * a + ty * b + tx * ty * c
    gx = (a + ty * c) * params[4] if fx == cx else 0.0  # clamped direction: no slope
    gy = (b + tx * c) * params[5] if fy == cy else 0.0
    s = math.sqrt(1.0 + gx * gx + gy * gy)
    return h, -gx / s, -gy / s, 1.0 / s


@njit(inline="always")
def _ramp(p: NDArray, x: float, y: float) -> tuple:
    """Ramp._profile: flat, incline at tan a, plateau, optional descent, along s = (r − o)·(cos yaw, sin yaw)."""
    s = (x - p[9]) * p[7] + (y - p[10]) * p[8]
    t, top = p[2], p[1]
    h = min(max((s - p[0]) * t, 0.0), top)
    dh = t if p[0] <= s < p[3] else 0.0
    if p[6] > 0.5:
        h = min(h, min(max((p[5] - s) * t, 0.0), top))
        if p[4] <= s < p[5]:
            dh -= t
    gx, gy = dh * p[7], dh * p[8]
    n = math.sqrt(1.0 + gx * gx + gy * gy)
    return h, -gx / n, -gy / n, 1.0 / n
