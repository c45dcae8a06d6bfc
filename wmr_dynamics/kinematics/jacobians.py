"""Wheel Jacobians (thesis Alg. 2, eqs. 2.16–2.24), track elements' belt columns (Pecka et al.'s Contact Surface
Motion) and holonomic joint-constraint Jacobians (eqs. 2.25–2.26)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.collision import KIND_BELT, Contacts, _element_circle, _model_data
from wmr_dynamics.compiled.data import ModelData
from wmr_dynamics.model import WmrModel


@njit(_nrt=False)
def _wheel_jacobian(parent: NDArray, jtype: NDArray, T_world: NDArray, wheel_frame: int, r_c: NDArray,
                    R_c: NDArray, A: NDArray, tmp: NDArray) -> None:
    """Alg. 2 for one wheel: ``A`` (3 × ndof) with ``A q̇' = v_c`` in contact-frame coordinates.

    ``r_c`` is the contact point and ``R_c`` the contact frame (columns x̂_c, ŷ_c, ẑ_c), both in world
    coordinates; ``tmp`` is a 3 × ndof work array.
    """
    tmp[:, :] = 0.0
    i = wheel_frame
    while i > 0:  # lines 4–11, chain from the wheel up to (not including) the body
        a = jtype[i] % 3
        if jtype[i] < 3:  # revolute: axis × (r_c − r_i)  (line 6)
            ux, uy, uz = T_world[i, 0, a], T_world[i, 1, a], T_world[i, 2, a]
            dx = r_c[0] - T_world[i, 0, 3]
            dy = r_c[1] - T_world[i, 1, 3]
            dz = r_c[2] - T_world[i, 2, 3]
            tmp[0, i + 5] = uy * dz - uz * dy
            tmp[1, i + 5] = uz * dx - ux * dz
            tmp[2, i + 5] = ux * dy - uy * dx
        else:  # prismatic: the axis itself (line 8)
            for r in range(3):
                tmp[r, i + 5] = T_world[i, r, a]
        i = parent[i]
    # line 12: [r_c − r_b]×ᵀ R_b = −[d]× R_b ; line 13: R_b
    dx = r_c[0] - T_world[0, 0, 3]
    dy = r_c[1] - T_world[0, 1, 3]
    dz = r_c[2] - T_world[0, 2, 3]
    for c in range(3):
        bx, by, bz = T_world[0, 0, c], T_world[0, 1, c], T_world[0, 2, c]
        tmp[0, c] = -(dy * bz - dz * by)
        tmp[1, c] = -(dz * bx - dx * bz)
        tmp[2, c] = -(dx * by - dy * bx)
        for r in range(3):
            tmp[r, 3 + c] = T_world[0, r, c]
    # line 14: to contact-frame coordinates, A = R_cᵀ A
    for r in range(3):
        for c in range(A.shape[1]):
            A[r, c] = R_c[0, r] * tmp[0, c] + R_c[1, r] * tmp[1, c] + R_c[2, r] * tmp[2, c]


@njit(_nrt=False)
def _belt_column(md: ModelData, T_world: NDArray, w: int, r_c: NDArray, R_c: NDArray, A: NDArray) -> None:
    """Contact Surface Motion (Pecka et al. §IV-C) for track element ``w``: its sprocket joint's column of A.

    Alg. 2's revolute column ŷ × (r_c − r_i) would be the velocity of a point *turning with* the sprocket.  A
    track's contact point is fixed to the outline instead, and the belt slides along the outline at
    v_t = r_s θ̇: for an arc the column is r_s/ρ · ŷ × (r_c − o), the tangent of the element's circle (centre o,
    radius ρ) at the contact point scaled to the belt speed; for a run point r_s along its run (``wheel_run``),
    backwards on the lower run and forwards on the upper — for a level lower run, −r_s x̂_hub (the belt runs
    backwards under the track when the vehicle drives forwards); rows are in contact-frame coordinates.

    Only the tangential rows get it: the belt slides along the outline, which does not move the outline into
    the ground, so the normal row (Δz's rate) is the hull's motion alone — Pecka et al.'s surface motion lies in
    the contact plane.  (Where the normal is not perpendicular to the belt — a belt point on a tread with the
    track pitched — the belt's speed would otherwise read as the contact sinking or lifting.)
    """
    f = md.wheel_frame[w]
    o0, o1, o2, a0, a1, a2, b0, b1, b2 = _element_circle(md, T_world, w, f)
    rx, rz = md.wheel_centre[w, 3], md.wheel_centre[w, 4]  # along the run: half its spacing (WmrModel.wheel_run)
    if rx != 0.0 or rz != 0.0:  # a run point (its contact may slide along its stretch): r_s ∓ along the run
        s = md.wheel_radius[w] / math.sqrt(rx * rx + rz * rz) / md.wheel_circle[w]
        if md.wheel_kind[w] == KIND_BELT:  # the lower run moves backwards, the upper forwards
            s = -s
        cx, cy, cz = s * (rx * a0 + rz * b0), s * (rx * a1 + rz * b1), s * (rx * a2 + rz * b2)
    else:
        s = md.wheel_radius[w] / md.wheel_circle[w]
        ux, uy, uz = T_world[f, 0, 1], T_world[f, 1, 1], T_world[f, 2, 1]
        dx, dy, dz = r_c[0] - o0, r_c[1] - o1, r_c[2] - o2
        cx, cy, cz = s * (uy * dz - uz * dy), s * (uz * dx - ux * dz), s * (ux * dy - uy * dx)
    for r in range(2):
        A[r, f + 5] = R_c[0, r] * cx + R_c[1, r] * cy + R_c[2, r] * cz
    A[2, f + 5] = 0.0


@njit
def _wheel_jacobians(md: ModelData, T_world: NDArray, points: NDArray, frames: NDArray, A: NDArray) -> None:
    """Stacked Alg. 2 (eq. 2.24): ``A`` is (3·nw × ndof), rows x, y, z of wheel 0, then wheel 1, …"""
    tmp = np.empty((3, A.shape[1]))
    for w in range(md.wheel_frame.shape[0]):
        _wheel_jacobian(md.parent, md.jtype, T_world, md.wheel_frame[w], points[w], frames[w], A[3 * w:3 * w + 3],
                        tmp)
        if md.wheel_kind[w] != 0:
            _belt_column(md, T_world, w, points[w], frames[w], A[3 * w:3 * w + 3])


def wheel_jacobians(model: WmrModel, T_world: NDArray, contacts: Contacts) -> NDArray:
    """Wheel Jacobians of all wheels, thesis Alg. 2 / eq. 2.24.

    Args:
        model: the WMR model.  T_world: (nf, 4, 4) from forward kinematics.
        contacts: wheel contacts for the same state (:func:`~wmr_dynamics.collision.wheel_contacts`).

    Returns:
        (3·nw, ndof) matrix A_wheel with ``A_wheel q̇' = v_c``: rows 3w, 3w+1, 3w+2 are wheel w's contact
        point velocity (m/s) along its contact frame's x (longitudinal), y (lateral) and z (normal) axes,
        for the joint-space velocity q̇' = [ω_b; v_b; θ̇] (body coordinates, eq. 2.13).
    """
    A = np.empty((3 * model.num_wheels, model.num_dof))
    _wheel_jacobians(_model_data(model), np.ascontiguousarray(T_world, dtype=float), contacts.points,
                     contacts.frames, A)
    return A


def joint_constraint_residual(model: WmrModel, q: NDArray) -> NDArray:
    """c = A_joint θ − b for every holonomic joint constraint (eqs. 2.25, E.1), in rad or m."""
    return model.A_joint[:, 6:] @ q[7:] - model.b_joint
