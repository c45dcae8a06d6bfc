"""Compiled wheel–terrain contact search: the algorithm of :func:`wmr_dynamics.collision.wheel_contacts`
(same samples, refinements and parabola, so both paths agree to rounding) as a loop over wheels."""

from __future__ import annotations

import math

from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.collision import N_REFINE
from wmr_dynamics.compiled.data import ModelData, TerrainData
from wmr_dynamics.compiled.terrain import height_normal


@njit
def _rim_dz(td: TerrainData, T: NDArray, rc: float, tube: float, delta: float) -> tuple:
    """Δz (eq. 2.8) of the rim point at contact angle δ (eq. 2.9): (dz, c_x, c_y, c_z, n_x, n_y, n_z)."""
    s, c = math.sin(delta), math.cos(delta)
    cx = T[0, 3] - rc * (s * T[0, 0] + c * T[0, 2])
    cy = T[1, 3] - rc * (s * T[1, 0] + c * T[1, 2])
    cz = T[2, 3] - rc * (s * T[2, 0] + c * T[2, 2])
    h, nx, ny, nz = height_normal(td.kind, td.params, td.grid, cx, cy)
    return (cz - h) * nz - tube, cx, cy, cz, nx, ny, nz


@njit
def wheel_contacts_kernel(md: ModelData, td: TerrainData, T_world: NDArray, n_samples: int, points: NDArray,
                          frames: NDArray, dz: NDArray, angle: NDArray, lateral: NDArray) -> int:
    """Contacts of every wheel into the preallocated outputs (see ``collision.Contacts``); returns 0, or
    1 + the index of the first wheel whose terrain query was not finite."""
    for w in range(md.wheel_frame.shape[0]):
        f = md.wheel_frame[w]
        T = T_world[f]
        tube = md.wheel_tube[w]
        rc = md.wheel_radius[w] - tube
        step = 2.0 * math.pi / n_samples
        best, fbest = 0.0, math.inf
        for k in range(n_samples):  # coarse samples on the whole circle
            d = -math.pi + k * step
            v = _rim_dz(td, T, rc, tube, d)[0]
            if v < fbest:
                best, fbest = d, v
        for _ in range(N_REFINE):  # 5 samples around the best, bracket shrinking 4× per round
            b0, fbest = best, math.inf
            for o in range(5):
                d = b0 + step * (-1.0 + 0.5 * o)
                v = _rim_dz(td, T, rc, tube, d)[0]
                if v < fbest:
                    best, fbest = d, v
            step /= 4.0
        h = 2.0 * step  # a parabola through (best − h, best, best + h), kept only where it lowers Δz
        f0 = _rim_dz(td, T, rc, tube, best - h)[0]
        f1 = _rim_dz(td, T, rc, tube, best)[0]
        f2 = _rim_dz(td, T, rc, tube, best + h)[0]
        curv = f0 - 2.0 * f1 + f2
        shift = min(max(0.5 * h * (f0 - f2) / curv, -h), h) if curv > 0.0 else 0.0
        r = _rim_dz(td, T, rc, tube, best)
        r2 = _rim_dz(td, T, rc, tube, best + shift)
        if r2[0] < r[0]:
            r = r2
        v, cx, cy, cz, nx, ny, nz = r
        if not (math.isfinite(v) and math.isfinite(nx) and math.isfinite(ny) and math.isfinite(nz)):
            return w + 1
        _frame(md, T_world, w, f, T, tube, v, cx, cy, cz, nx, ny, nz, points, frames, dz, angle, lateral)
    return 0


@njit
def _frame(md: ModelData, T_world: NDArray, w: int, f: int, T: NDArray, tube: float, v: float, cx: float, cy: float,
           cz: float, nx: float, ny: float, nz: float, points: NDArray, frames: NDArray, dz: NDArray, angle: NDArray,
           lateral: NDArray) -> None:
    """Contact point (torus: moved by the tube radius against n̂), contact frame x̂_c = ŷ_w × n̂, ŷ_c = n̂ × x̂_c,
    lateral offset, and δ in the hub frame."""
    dz[w] = v
    px, py, pz = cx - tube * nx, cy - tube * ny, cz - tube * nz
    points[w, 0], points[w, 1], points[w, 2] = px, py, pz
    yx, yy, yz = T[0, 1], T[1, 1], T[2, 1]
    ax, ay, az = yy * nz - yz * ny, yz * nx - yx * nz, yx * ny - yy * nx
    norm = math.sqrt(ax * ax + ay * ay + az * az)
    if norm < 1e-9:  # a wheel lying flat: the wheel's x axis projected on the ground plane
        d = T[0, 0] * nx + T[1, 0] * ny + T[2, 0] * nz
        ax, ay, az = T[0, 0] - d * nx, T[1, 0] - d * ny, T[2, 0] - d * nz
        norm = math.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax / norm, ay / norm, az / norm
    frames[w, 0, 0], frames[w, 1, 0], frames[w, 2, 0] = ax, ay, az
    frames[w, 0, 1], frames[w, 1, 1], frames[w, 2, 1] = ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax
    frames[w, 0, 2], frames[w, 1, 2], frames[w, 2, 2] = nx, ny, nz
    lateral[w] = (px - T[0, 3]) * yx + (py - T[1, 3]) * yy + (pz - T[2, 3]) * yz
    p = md.parent[f]
    vx, vy, vz = cx - T[0, 3], cy - T[1, 3], cz - T[2, 3]
    h0 = 0.0  # hub axes x and z: columns of R_parent · R0
    h2 = 0.0
    for r in range(3):
        hx = T_world[p, r, 0] * md.T0[f, 0, 0] + T_world[p, r, 1] * md.T0[f, 1, 0] + T_world[p, r, 2] * md.T0[f, 2, 0]
        hz = T_world[p, r, 0] * md.T0[f, 0, 2] + T_world[p, r, 1] * md.T0[f, 1, 2] + T_world[p, r, 2] * md.T0[f, 2, 2]
        c = vx if r == 0 else (vy if r == 1 else vz)
        h0 += c * hx
        h2 += c * hz
    angle[w] = math.atan2(-h0, -h2)
