"""Compiled terrain queries (plane, bilinear height grid) and the conversion of any Terrain to them."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.data import TERRAIN_GRID, TERRAIN_PLANE, TerrainData
from wmr_dynamics.errors import TerrainError


def compile_terrain(terrain, spacing: float = 0.02) -> TerrainData:  # noqa: ANN001
    """``terrain`` as :class:`TerrainData`: Plane and HeightGrid exactly; any other terrain rasterized with
    ``to_grid(spacing=...)`` (m) over its bounds — analytic edges become bilinear ramps one cell wide."""
    from wmr_dynamics.terrain import HeightGrid, Plane

    if isinstance(terrain, Plane):
        n, p = terrain.unit_normal, terrain.point
        return TerrainData(TERRAIN_PLANE, np.array([n[0], n[1], n[2], float(n @ p)]), np.zeros((2, 2)))
    if not isinstance(terrain, HeightGrid):
        if getattr(terrain, "bounds", None) is None:
            raise TerrainError(f"{type(terrain).__name__} terrain is unbounded: the compiled path needs a Plane, a "
                               "HeightGrid or a bounded terrain to rasterize")
        terrain = terrain.to_grid(spacing=spacing)
    return TerrainData(TERRAIN_GRID, np.array([terrain.x_min, terrain.y_min, terrain.dx, terrain.dy]),
                       np.ascontiguousarray(terrain.heights, dtype=float))


@njit
def height_normal(kind: int, params: NDArray, grid: NDArray, x: float, y: float) -> tuple:
    """(h, n_x, n_y, n_z) at (x, y) (m, world): the plane, or HeightGrid's bilinear cell (clamped outside)."""
    if kind == TERRAIN_PLANE:
        nx, ny, nz = params[0], params[1], params[2]
        return (params[3] - nx * x - ny * y) / nz, nx, ny, nz
    ny_, nx_ = grid.shape[0], grid.shape[1]
    fx = (x - params[0]) / params[2]
    fy = (y - params[1]) / params[3]
    cx = min(max(fx, 0.0), nx_ - 1.0)
    cy = min(max(fy, 0.0), ny_ - 1.0)
    i = min(int(cx), nx_ - 2)
    j = min(int(cy), ny_ - 2)
    tx, ty = cx - i, cy - j
    h00, h10, h01, h11 = grid[j, i], grid[j, i + 1], grid[j + 1, i], grid[j + 1, i + 1]
    a, b, c = h10 - h00, h01 - h00, h11 - h01 - h10 + h00
    h = h00 + tx * a + ty * b + tx * ty * c
    gx = (a + ty * c) / params[2] if fx == cx else 0.0  # clamped direction: no slope
    gy = (b + tx * c) / params[3] if fy == cy else 0.0
    s = math.sqrt(1.0 + gx * gx + gy * gy)
    return h, -gx / s, -gy / s, 1.0 / s
