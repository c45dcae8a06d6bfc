"""Compiled wheel–terrain contact search: the algorithm of :func:`wmr_dynamics.collision.wheel_contacts`
(same samples, refinements and parabola, so both paths agree to rounding) as a loop over wheels."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.collision import N_REFINE, N_SAMPLES, Contacts
from wmr_dynamics.compiled.data import ModelData, TerrainData, model_data
from wmr_dynamics.compiled.terrain import height_normal
from wmr_dynamics.errors import ModelError, TerrainError
from wmr_dynamics.model import WmrModel


@njit
def _rim_dz(td: TerrainData, T: NDArray, rc: float, tube: float, s: float, c: float) -> tuple:
    """Δz (eq. 2.8) of the rim point at contact angle δ (eq. 2.9) with s = sin δ, c = cos δ:
    (dz, c_x, c_y, c_z, n_x, n_y, n_z)."""
    cx = T[0, 3] - rc * (s * T[0, 0] + c * T[0, 2])
    cy = T[1, 3] - rc * (s * T[1, 0] + c * T[1, 2])
    cz = T[2, 3] - rc * (s * T[2, 0] + c * T[2, 2])
    h, nx, ny, nz = height_normal(td.kind, td.params, td.grid, cx, cy)
    return (cz - h) * nz - tube, cx, cy, cz, nx, ny, nz


@njit
def _rim_dz_at(td: TerrainData, T: NDArray, rc: float, tube: float, sb: float, cb: float, sa: float,
               ca: float) -> float:
    """Δz at δ = β + α from sin/cos of β and α (angle addition: no trigonometric call per sample)."""
    return _rim_dz(td, T, rc, tube, sb * ca + cb * sa, cb * ca - sb * sa)[0]


@njit
def wheel_contacts_kernel(md: ModelData, td: TerrainData, T_world: NDArray, n_samples: int, points: NDArray,
                          frames: NDArray, dz: NDArray, angle: NDArray, lateral: NDArray) -> int:
    """Contacts of every wheel into the preallocated outputs (see ``collision.Contacts``); returns 0, or
    1 + the index of the first wheel whose terrain query was not finite.

    The samples are those of the Python search (coarse δ on the whole circle, ``N_REFINE`` rounds of five
    around the best, a parabola); sines and cosines of the sample offsets are shared by all wheels, and the
    centre sample of a round, already known, is not evaluated again.
    """
    nw = md.wheel_frame.shape[0]
    step = 2.0 * math.pi / n_samples
    for w in range(nw):  # angle[w], dz[w] hold the best δ and Δz during the search
        angle[w], dz[w] = 0.0, math.inf
    for k in range(n_samples):  # coarse samples on the whole circle
        d = -math.pi + k * step
        s, c = math.sin(d), math.cos(d)
        for w in range(nw):
            v = _rim_dz(td, T_world[md.wheel_frame[w]], md.wheel_radius[w] - md.wheel_tube[w], md.wheel_tube[w],
                        s, c)[0]
            if v < dz[w]:
                angle[w], dz[w] = d, v
    for _ in range(N_REFINE):  # 5 samples around the best, bracket shrinking 4× per round
        s1, c1 = math.sin(step), math.cos(step)
        s2, c2 = math.sin(0.5 * step), math.cos(0.5 * step)
        for w in range(nw):
            T, tube = T_world[md.wheel_frame[w]], md.wheel_tube[w]
            rc = md.wheel_radius[w] - tube
            b0, f0 = angle[w], dz[w]
            sb, cb = math.sin(b0), math.cos(b0)
            best, fbest = b0 - step, _rim_dz_at(td, T, rc, tube, sb, cb, -s1, c1)
            for o in range(1, 5):
                if o == 2:
                    v = f0  # the centre: the previous best, already evaluated
                elif o == 1:
                    v = _rim_dz_at(td, T, rc, tube, sb, cb, -s2, c2)
                elif o == 3:
                    v = _rim_dz_at(td, T, rc, tube, sb, cb, s2, c2)
                else:
                    v = _rim_dz_at(td, T, rc, tube, sb, cb, s1, c1)
                if v < fbest:
                    best, fbest = b0 + step * (-1.0 + 0.5 * o), v
            angle[w], dz[w] = best, fbest
        step /= 4.0
    h = 2.0 * step  # a parabola through (best − h, best, best + h), kept only where it lowers Δz
    sh, ch = math.sin(h), math.cos(h)
    for w in range(nw):
        f = md.wheel_frame[w]
        T, tube = T_world[f], md.wheel_tube[w]
        rc = md.wheel_radius[w] - tube
        best = angle[w]
        sb, cb = math.sin(best), math.cos(best)
        f0 = _rim_dz_at(td, T, rc, tube, sb, cb, -sh, ch)
        f2 = _rim_dz_at(td, T, rc, tube, sb, cb, sh, ch)
        curv = f0 - 2.0 * dz[w] + f2
        shift = min(max(0.5 * h * (f0 - f2) / curv, -h), h) if curv > 0.0 else 0.0
        if shift != 0.0 and _rim_dz_at(td, T, rc, tube, sb, cb, math.sin(shift), math.cos(shift)) < dz[w]:
            sb, cb = math.sin(best + shift), math.cos(best + shift)
        v, cx, cy, cz, nx, ny, nz = _rim_dz(td, T, rc, tube, sb, cb)
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


def compiled_wheel_contacts(model: WmrModel, T_world: NDArray, terrain_data: TerrainData,
                            n_samples: int = N_SAMPLES) -> Contacts:
    """:func:`wmr_dynamics.collision.wheel_contacts` on the compiled kernel (for tests and one-off queries).

    Args:
        model: the WMR model.  T_world: (num_frames, 4, 4) world transforms (forward kinematics).
        terrain_data: from :func:`wmr_dynamics.compiled.terrain.compile_terrain`.
        n_samples: coarse samples of δ on the full circle (≥ 8).
    Raises:
        TerrainError: the terrain query under a wheel was not finite (NaN state or terrain data).
    """
    if n_samples < 8:
        raise ModelError(f"n_samples: need at least 8 samples of the wheel circle, got {n_samples}")
    nw = model.num_wheels
    points, frames = np.empty((nw, 3)), np.empty((nw, 3, 3))
    dz, angle, lateral = np.empty(nw), np.empty(nw), np.empty(nw)
    bad = wheel_contacts_kernel(model_data(model), terrain_data, np.ascontiguousarray(T_world, dtype=float),
                                int(n_samples), points, frames, dz, angle, lateral)
    if bad:
        raise TerrainError(f"terrain returned a non-finite height or normal under wheel {model.wheel_names[bad - 1]}")
    return Contacts(points=points, frames=frames, dz=dz, angle=angle, lateral=lateral)
