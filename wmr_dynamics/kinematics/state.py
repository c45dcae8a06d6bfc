"""State-space bookkeeping: q̇ = V(q) q̇' (thesis eq. 2.14) and the Euler step (eq. 2.39).

The orientation is a unit quaternion (x, y, z, w); its rate for a body-frame angular velocity ω is
q̇ = ½ q ⊗ [ω; 0].  The step integrates the orientation exactly for constant ω over the step (so it stays a
unit quaternion) and the position and joints with Euler.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.series import COS_TAYLOR, SIN_TAYLOR


@njit(_nrt=False)
def _state_rate(q: NDArray, qvel: NDArray, out: NDArray) -> None:
    """out = V(q) q̇' (eq. 2.14): quaternion rate, world-frame position rate, joint rates."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    wx, wy, wz = qvel[0], qvel[1], qvel[2]
    # ½ q ⊗ (ω, 0)
    out[0] = 0.5 * (w * wx + y * wz - z * wy)
    out[1] = 0.5 * (w * wy + z * wx - x * wz)
    out[2] = 0.5 * (w * wz + x * wy - y * wx)
    out[3] = -0.5 * (x * wx + y * wy + z * wz)
    out[4], out[5], out[6] = _position_rate(q, qvel)
    for k in range(6, qvel.shape[0]):
        out[k + 1] = qvel[k]


@njit(inline="always")
def _position_rate(q: NDArray, qvel: NDArray) -> tuple:
    """The world-frame position rate R(q) v_b of eq. 2.14 (R from the quaternion, normalized on the fly)."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    k = 2.0 / (x * x + y * y + z * z + w * w)  # (one division, not nine)
    r00 = 1.0 - (y * y + z * z) * k
    r01 = (x * y - z * w) * k
    r02 = (x * z + y * w) * k
    r10 = (x * y + z * w) * k
    r11 = 1.0 - (x * x + z * z) * k
    r12 = (y * z - x * w) * k
    r20 = (x * z - y * w) * k
    r21 = (y * z + x * w) * k
    r22 = 1.0 - (x * x + y * y) * k
    vx, vy, vz = qvel[3], qvel[4], qvel[5]
    return r00 * vx + r01 * vy + r02 * vz, r10 * vx + r11 * vy + r12 * vz, r20 * vx + r21 * vy + r22 * vz


def state_rate(q: NDArray, qvel: NDArray) -> NDArray:
    """q̇ = V(q) q̇' (thesis eq. 2.14) for a state q and joint-space velocity q̇' (body coordinates)."""
    out = np.empty(q.shape[0])
    _state_rate(q, qvel, out)
    return out


@njit(inline="always")
def _half_angle(a2: float) -> tuple:
    """(sin(a/2)/a, cos(a/2)) for a rotation angle a = √a2 (rad): the exponential map's quaternion
    (sin(a/2) u, cos(a/2)) = (sin(a/2)/a · a u, cos(a/2)).  For a ≤ 0.2 (a step's rotation; h = a/2 ≤ 0.1) by
    the Taylor series in h², truncated beyond h¹² (error < 1e-20): no square root, sine, cosine or division
    (libm's beyond)."""
    if a2 > 0.04:
        a = math.sqrt(a2)
        return math.sin(0.5 * a) / a, math.cos(0.5 * a)
    h2 = 0.25 * a2
    a, b = SIN_TAYLOR, COS_TAYLOR  # (sin h / h to h¹², cos h to h¹²: the first six of each)
    sinc = 1.0 + h2 * (a[0] + h2 * (a[1] + h2 * (a[2] + h2 * (a[3] + h2 * (a[4] + h2 * a[5])))))
    cos = 1.0 + h2 * (b[0] + h2 * (b[1] + h2 * (b[2] + h2 * (b[3] + h2 * (b[4] + h2 * b[5])))))
    return 0.5 * sinc, cos


@njit(_nrt=False)
def _euler_step(q: NDArray, qvel: NDArray, dt: float, out: NDArray) -> None:
    """q[i+1] = q[i] + V(q[i]) q̇'[i] Δt (eq. 2.39), with the orientation advanced by exp(ω Δt / 2)."""
    wx, wy, wz = qvel[0] * dt, qvel[1] * dt, qvel[2] * dt
    s, dw = _half_angle(wx * wx + wy * wy + wz * wz)
    dx, dy, dz = wx * s, wy * s, wz * s
    x, y, z, w = q[0], q[1], q[2], q[3]
    # body-frame increment: q ⊗ dq
    nx = w * dx + x * dw + y * dz - z * dy
    ny = w * dy - x * dz + y * dw + z * dx
    nz = w * dz + x * dy - y * dx + z * dw
    nw = w * dw - x * dx - y * dy - z * dz
    r4, r5, r6 = _position_rate(q, qvel)  # the rates of eq. 2.14 (as _state_rate), without allocating
    n = np.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    out[0], out[1], out[2], out[3] = nx / n, ny / n, nz / n, nw / n
    out[4], out[5], out[6] = q[4] + r4 * dt, q[5] + r5 * dt, q[6] + r6 * dt
    for k in range(7, q.shape[0]):
        out[k] = q[k] + qvel[k - 1] * dt


def euler_step(q: NDArray, qvel: NDArray, dt: float) -> NDArray:
    """One step of eq. 2.39 (s); returns the new state with a unit quaternion."""
    out = np.empty(q.shape[0])
    _euler_step(q, qvel, dt, out)
    return out
