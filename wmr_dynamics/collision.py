"""Wheel–terrain collision detection: contact points, contact frames, Δz, contact angles (thesis §2.2.1).

For each wheel the contact point is the point of the wheel surface with the smallest (most negative)
contact height error

    Δz = (r_contact − r_terrain) · n̂                                               (thesis eq. 2.8)

with r_terrain = [x, y, h(x, y)] and n̂ the terrain normal at the contact point's (x, y).  Δz > 0 is
separation, Δz < 0 penetration.  Rim points are parameterized by the contact angle δ,

    r = r_wheel − R (sin δ x̂_w + cos δ ẑ_w)                                       (thesis eq. 2.9)

a counter-clockwise rotation about the wheel's y axis starting from its −z axis.

Wheel shapes:

- ``cylinder``: the thesis's thin 3D circle of radius R in the wheel's x–z plane.
- ``torus`` (Auchter et al.): a tread of crown radius ρ around a centre-line circle of radius R − ρ.  The
  tread point nearest the ground is the centre-line point moved by ρ against the terrain normal, so the
  contact point slides across the tread (along ŷ_w) as the wheel tilts relative to the ground.

Search: δ is sampled on the whole circle (so a step's edge in front of the wheel is found), the best
sample is refined by repeated local sampling, which on a plane converges to the closed-form optimum.

The contact frame (§2.2.1, Fig. 2.3) has its origin at the contact point, ẑ_c = n̂, x̂_c the
longitudinal direction ŷ_w × n̂ (normalized; forward for a wheel rolling along its x axis) and
ŷ_c = ẑ_c × x̂_c.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics.errors import ModelError, TerrainError
from wmr_dynamics.kinematics.fk import check_state, forward_kinematics
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain

N_SAMPLES = 36  # coarse samples of δ on the circle (10°)
N_REFINE = 4  # refinement rounds, each shrinking the δ bracket 4× (final spacing ≈ 0.04°)


@dataclass(frozen=True)
class Contacts:
    """Per-wheel contact data, all in world coordinates (index = wheel number, ``model.wheel_names``).

    Attributes:
        points: (nw, 3) contact points r_contact, m.
        frames: (nw, 3, 3) contact-frame rotations R_c^w; columns x̂_c (longitudinal), ŷ_c (lateral),
            ẑ_c (terrain normal).
        dz: (nw,) contact height error Δz, m (eq. 2.8); < 0 is penetration.
        angle: (nw,) contact angle δ, rad (eq. 2.9), measured in the hub frame (the wheel frame at zero
            wheel rotation), so δ = 0 is straight below the axle.
        lateral: (nw,) offset of the contact point along the wheel axis ŷ_w from the wheel centre, m
            (nonzero only for torus wheels).
    """

    points: NDArray
    frames: NDArray
    dz: NDArray
    angle: NDArray
    lateral: NDArray

    @property
    def normals(self) -> NDArray:
        """(nw, 3) terrain normals at the contact points."""
        return self.frames[:, :, 2]

    def in_contact(self, tolerance: float = 0.0) -> NDArray:
        """(nw,) bool: Δz <= tolerance (m)."""
        return self.dz <= tolerance


def _rim(T: NDArray, radius: NDArray, delta: NDArray) -> NDArray:
    """Points r_wheel − R (sin δ x̂ + cos δ ẑ) for wheels T (nw,4,4), radii (nw,), angles (nw, k) → (nw, k, 3)."""
    x_axis, z_axis, centre = T[:, None, :3, 0], T[:, None, :3, 2], T[:, None, :3, 3]
    return centre - radius[:, None, None] * (np.sin(delta)[..., None] * x_axis + np.cos(delta)[..., None] * z_axis)


def _dz(terrain: Terrain, T: NDArray, centre_radius: NDArray, tube: NDArray, delta: NDArray):
    """Δz (eq. 2.8) of the rim / tread points at angles δ; returns (dz, centre-line points, normals)."""
    c = _rim(T, centre_radius, delta)
    h, n = terrain.height_normal(c[..., 0], c[..., 1])
    # eq. 2.8 with r_terrain = [x, y, h(x, y)] below the point: only the z difference remains.
    # Torus: the tread point is c − ρ n̂, whose Δz is Δz(c) − ρ on a locally planar terrain.
    dz = (c[..., 2] - h) * n[..., 2]
    return dz - tube[:, None], c, n


def wheel_contacts(model: WmrModel, T_world: NDArray, terrain: Terrain, n_samples: int = N_SAMPLES) -> Contacts:
    """Contact point, frame, Δz and contact angle of every wheel (thesis §2.2.1, eqs. 2.8–2.9).

    Args:
        model: the WMR model.
        T_world: (num_frames, 4, 4) world transforms from :func:`~wmr_dynamics.kinematics.forward_kinematics`.
        terrain: the ground surface.
        n_samples: coarse samples of δ on the full circle before refinement.
    """
    if n_samples < 8:
        raise ModelError(f"n_samples: need at least 8 samples of the wheel circle, got {n_samples}")
    T = T_world[model.wheel_frame]
    tube = model.wheel_tube_radii
    r_centre = model.wheel_radii - tube
    nw = len(T)
    delta = np.linspace(-np.pi, np.pi, n_samples, endpoint=False)[None, :].repeat(nw, axis=0)
    dz, _, _ = _dz(terrain, T, r_centre, tube, delta)
    best = delta[np.arange(nw), np.argmin(dz, axis=1)]
    step = 2 * np.pi / n_samples
    offsets = np.linspace(-1.0, 1.0, 5)
    for _ in range(N_REFINE):
        cand = best[:, None] + step * offsets[None, :]
        dz, _, _ = _dz(terrain, T, r_centre, tube, cand)
        best = cand[np.arange(nw), np.argmin(dz, axis=1)]
        step /= 4.0
    # Last: a parabola through (best − h, best, best + h), kept only where it lowers Δz (smooth minima).
    h = 2.0 * step
    cand = best[:, None] + h * np.array([-1.0, 0.0, 1.0])[None, :]
    f, _, _ = _dz(terrain, T, r_centre, tube, cand)
    curv = f[:, 0] - 2.0 * f[:, 1] + f[:, 2]
    shift = np.where(curv > 0, 0.5 * h * (f[:, 0] - f[:, 2]) / np.where(curv > 0, curv, 1.0), 0.0)
    cand = np.stack([best, best + np.clip(shift, -h, h)], axis=1)
    dz, c, n = _dz(terrain, T, r_centre, tube, cand)
    k = np.argmin(dz, axis=1)
    rows = np.arange(nw)
    best, dz, c, n = cand[rows, k], dz[rows, k], c[rows, k], n[rows, k]
    if not (np.all(np.isfinite(dz)) and np.all(np.isfinite(n))):
        bad = [model.wheel_names[i] for i in np.flatnonzero(~np.isfinite(dz))]
        raise TerrainError(f"terrain returned NaN height or normal under wheels {bad}")
    points = c - tube[:, None] * n  # torus: the tread point nearest the ground (tube = 0 for a circle)
    y_w = T[:, :3, 1]
    x_c = np.cross(y_w, n)
    norm = np.linalg.norm(x_c, axis=1)
    # A wheel lying flat (axis ∥ normal) has no rolling direction: fall back to the wheel's x axis.
    flat = norm < 1e-9
    x_c[flat] = T[flat, :3, 0] - (T[flat, :3, 0] * n[flat]).sum(1)[:, None] * n[flat]
    x_c /= np.linalg.norm(x_c, axis=1)[:, None]
    y_c = np.cross(n, x_c)
    frames = np.stack([x_c, y_c, n], axis=2)
    lateral = ((points - T[:, :3, 3]) * y_w).sum(axis=1)
    # δ is reported in the hub frame (the wheel frame at zero spin, T_p(i)^w · T0_i), so that δ = 0 is
    # straight below the axle whatever the wheel's rotation angle.
    hub = np.einsum("nij,njk->nik", T_world[model.parent[model.wheel_frame], :3, :3],
                    model.T0[model.wheel_frame, :3, :3])
    v = c - T[:, :3, 3]
    angle = np.arctan2(-(v * hub[:, :, 0]).sum(1), -(v * hub[:, :, 2]).sum(1))
    return Contacts(points=points, frames=frames, dz=dz, angle=angle, lateral=lateral)


def drop_onto_terrain(model: WmrModel, q: ArrayLike, terrain: Terrain, clearance: float = 0.0) -> NDArray:
    """Move the body vertically so the lowest wheel has Δz = ``clearance`` (m); returns a new state.

    A quick placement (orientation and joints unchanged) for pictures and as a starting guess; the
    terrain-contact initialization of thesis §2.2.4 also solves for attitude and passive joints.
    """
    q = check_state(model, q).copy()
    for _ in range(20):
        c = wheel_contacts(model, forward_kinematics(model, q), terrain)
        k = int(np.argmin(c.dz))
        err = c.dz[k] - clearance
        if abs(err) < 1e-9:
            break
        # Δz changes by n_z per metre of vertical body motion (eq. 2.8 with a locally planar terrain).
        q[6] -= err / max(c.normals[k, 2], 0.1)
    return q
