"""Forward position kinematics of the frame tree (thesis Alg. 1).

Kernels (``_name``) take the model's flat arrays and a preallocated output, loop over frames and allocate
nothing, so they compile with numba and run inside rollouts; the public wrappers validate input and
allocate results.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import WmrModel


@njit(_nrt=False)
def _body_transform(q: NDArray, T: NDArray) -> None:
    """T_b^w from the pose part of the state: quaternion (x, y, z, w) and position (Alg. 1, line 1)."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    n = np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    T[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    T[0, 1] = 2.0 * (x * y - z * w)
    T[0, 2] = 2.0 * (x * z + y * w)
    T[1, 0] = 2.0 * (x * y + z * w)
    T[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    T[1, 2] = 2.0 * (y * z - x * w)
    T[2, 0] = 2.0 * (x * z - y * w)
    T[2, 1] = 2.0 * (y * z + x * w)
    T[2, 2] = 1.0 - 2.0 * (x * x + y * y)
    T[0, 3] = q[4]
    T[1, 3] = q[5]
    T[2, 3] = q[6]
    T[3, 0] = 0.0
    T[3, 1] = 0.0
    T[3, 2] = 0.0
    T[3, 3] = 1.0


@njit(_nrt=False)
def _joint_transform(jtype: int, T0: NDArray, theta: float, T: NDArray) -> None:
    """T_i^{p(i)} = T0 with the joint displacement applied (Alg. 1, lines 4–11)."""
    for r in range(4):
        for c in range(4):
            T[r, c] = T0[r, c]
    a = jtype % 3
    if jtype < 3:
        # line 8: R = R0 · Rot(a, θ); only the two columns other than the axis change.
        cth, sth = np.cos(theta), np.sin(theta)
        i, j = (a + 1) % 3, (a + 2) % 3
        for r in range(3):
            ci, cj = T0[r, i], T0[r, j]
            T[r, i] = cth * ci + sth * cj
            T[r, j] = -sth * ci + cth * cj
    else:
        # line 10: r = r0 + (axis column of R0) · θ — the joint axis is a column of R0 (App. A).
        for r in range(3):
            T[r, 3] = T0[r, 3] + T0[r, a] * theta


@njit(_nrt=False)
def _forward_kinematics(parent: NDArray, jtype: NDArray, T0: NDArray, q: NDArray,
                        T_parent: NDArray, T_world: NDArray) -> None:
    """Alg. 1: ``T_parent[i] = T_i^{p(i)}`` and ``T_world[i] = T_i^w`` for every model frame."""
    _body_transform(q, T_world[0])
    for r in range(4):
        for c in range(4):
            T_parent[0, r, c] = T_world[0, r, c]
    for i in range(1, parent.shape[0]):
        _joint_transform(jtype[i], T0[i], q[6 + i], T_parent[i])
        p = parent[i]
        # line 12: T_i^w = T_{p(i)}^w · T_i^{p(i)} (affine product, bottom row stays 0 0 0 1)
        for r in range(3):
            for c in range(4):
                s = 0.0
                for k in range(3):
                    s += T_world[p, r, k] * T_parent[i, k, c]
                T_world[i, r, c] = s
            T_world[i, r, 3] += T_world[p, r, 3]
        T_world[i, 3, 0] = 0.0
        T_world[i, 3, 1] = 0.0
        T_world[i, 3, 2] = 0.0
        T_world[i, 3, 3] = 1.0


def check_state(model: WmrModel, q: ArrayLike, name: str = "q") -> NDArray:
    """Return ``q`` as a float array after checking its length, finiteness and quaternion norm."""
    q = np.asarray(q, dtype=float)
    if q.shape != (model.num_states,):
        raise ModelError(f"{name}: model '{model.name}' has {model.num_states} states "
                         f"(quaternion 4, position 3, joints {model.num_joints}); got shape {q.shape}")
    if not np.all(np.isfinite(q)):
        raise ModelError(f"{name}: state contains NaN or inf at indices {np.flatnonzero(~np.isfinite(q)).tolist()}")
    if np.linalg.norm(q[:4]) < 1e-9:
        raise ModelError(f"{name}: orientation quaternion (first 4 values) is zero")
    return q


def forward_kinematics(model: WmrModel, q: ArrayLike) -> NDArray:
    """World transforms of all model frames, thesis Alg. 1.

    Args:
        model: the WMR model.
        q: state ``[quat_xyzw; position (m); θ (rad or m)]`` (length ``model.num_states``).

    Returns:
        ``(num_frames, 4, 4)`` array, ``T[i] = T_i^w`` (frame i's pose in the world frame).
    """
    q = check_state(model, q)
    T_parent = np.empty((model.num_frames, 4, 4))
    T_world = np.empty((model.num_frames, 4, 4))
    _forward_kinematics(model.parent, model.joint_type, model.T0, q, T_parent, T_world)
    return T_world
