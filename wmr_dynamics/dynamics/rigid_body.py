"""Joint-space inertia (CRBA, thesis Alg. 3) and bias force (RNEA, Alg. 4) of the floating-base frame tree.

Spatial vectors are [angular; linear] (eq. B.1); joint type codes 0..5 (RX..PZ) are also the spatial index
s(i) of the joint's motion subspace.  The kernels work on the model's flat arrays and preallocated outputs.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.errors import ModelError
from wmr_dynamics.kinematics.fk import _forward_kinematics, check_state
from wmr_dynamics.model import G, WmrModel


@njit
def _plucker_child_parent(T: NDArray, X: NDArray) -> None:
    """X_{p(i)}^i (motion, parent → child coordinates) from T = T_i^{p(i)} (eqs. B.2–B.10)."""
    # T_{p}^{i} = inverse of T: R' = Rᵀ, t' = −Rᵀ p;  X = [[R', 0], [[t']× R', R']]
    for r in range(3):
        for c in range(3):
            X[r, c] = T[c, r]
            X[r + 3, c + 3] = T[c, r]
            X[r, c + 3] = 0.0
    t0 = -(T[0, 0] * T[0, 3] + T[1, 0] * T[1, 3] + T[2, 0] * T[2, 3])
    t1 = -(T[0, 1] * T[0, 3] + T[1, 1] * T[1, 3] + T[2, 1] * T[2, 3])
    t2 = -(T[0, 2] * T[0, 3] + T[1, 2] * T[1, 3] + T[2, 2] * T[2, 3])
    for c in range(3):
        R0, R1, R2 = X[0, c], X[1, c], X[2, c]
        X[3, c] = t1 * R2 - t2 * R1
        X[4, c] = t2 * R0 - t0 * R2
        X[5, c] = t0 * R1 - t1 * R0


@njit
def _plucker_all(T_parent: NDArray, X: NDArray) -> None:
    for i in range(1, T_parent.shape[0]):
        _plucker_child_parent(T_parent[i], X[i])


@njit
def _crba(parent: NDArray, jtype: NDArray, I_spatial: NDArray, X: NDArray, Ic: NDArray, M: NDArray) -> None:
    """Alg. 3: joint-space inertia M (ndof × ndof); Ic is a (nf, 6, 6) work array."""
    nf = parent.shape[0]
    Ic[:] = I_spatial  # line 1
    tmp = np.empty((6, 6))
    for i in range(nf - 1, 0, -1):  # lines 2–4: Ic_p += Xᵀ Ic_i X
        Xi = X[i]
        for r in range(6):
            for c in range(6):
                s = 0.0
                for k in range(6):
                    s += Ic[i, r, k] * Xi[k, c]
                tmp[r, c] = s
        p = parent[i]
        for r in range(6):
            for c in range(6):
                s = 0.0
                for k in range(6):
                    s += Xi[k, r] * tmp[k, c]
                Ic[p, r, c] += s
    M[:, :] = 0.0
    M[:6, :6] = Ic[0]  # line 6
    f = np.empty(6)
    g = np.empty(6)
    for i in range(1, nf):
        si = jtype[i]
        for r in range(6):
            f[r] = Ic[i, r, si]  # line 8
        M[i + 5, i + 5] = f[si]  # line 9
        j = i
        while j > 0:
            for r in range(6):  # line 12: f = X_{p(j)}^jᵀ f
                s = 0.0
                for k in range(6):
                    s += X[j, k, r] * f[k]
                g[r] = s
            f[:] = g
            j = parent[j]
            if j == 0:  # lines 15–16
                for r in range(6):
                    M[r, i + 5] = f[r]
                    M[i + 5, r] = f[r]
            else:  # lines 18–19
                M[j + 5, i + 5] = f[jtype[j]]
                M[i + 5, j + 5] = f[jtype[j]]


@njit
def _cross_motion(v: NDArray, m: NDArray, out: NDArray) -> None:
    """out = v ×m m (eq. B.14)."""
    out[0] = v[1] * m[2] - v[2] * m[1]
    out[1] = v[2] * m[0] - v[0] * m[2]
    out[2] = v[0] * m[1] - v[1] * m[0]
    out[3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    out[4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    out[5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit
def _cross_force(v: NDArray, f: NDArray, out: NDArray) -> None:
    """out = v ×f f (eq. B.15): [ω × n + v × f; ω × f]."""
    out[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] = v[1] * f[5] - v[2] * f[4]
    out[4] = v[2] * f[3] - v[0] * f[5]
    out[5] = v[0] * f[4] - v[1] * f[3]


@njit
def _rnea(parent: NDArray, jtype: NDArray, I_spatial: NDArray, X: NDArray, R_wb: NDArray, qvel: NDArray,
          qacc: NDArray, gravity: float, f_ext: NDArray, vel: NDArray, acc: NDArray, frc: NDArray,
          tau: NDArray) -> None:
    """Alg. 4 generalized to inverse dynamics: tau = M qacc + c − (external forces in joint space).

    ``qacc = 0`` and ``f_ext = 0`` give the bias force c.  ``f_ext[i]`` is a spatial force on frame i in
    frame-i coordinates (line 10, "+ f_ext").  Work arrays vel, acc, frc are (nf, 6).
    """
    nf = parent.shape[0]
    tmp = np.empty(6)
    tmp2 = np.empty(6)
    h = np.zeros(6)
    for r in range(6):
        vel[0, r] = qvel[r]  # line 1
        acc[0, r] = qacc[r]
    for r in range(3):  # line 2: a_1 = −g, gravity (0, 0, −G) world expressed in body axes
        acc[0, 3 + r] += gravity * R_wb[2, r]
    for i in range(nf):
        if i > 0:
            p = parent[i]
            s = jtype[i]
            for r in range(6):
                h[r] = 0.0
            h[s] = qvel[i + 5]
            for r in range(6):  # line 7
                a = 0.0
                b = 0.0
                for k in range(6):
                    a += X[i, r, k] * vel[p, k]
                    b += X[i, r, k] * acc[p, k]
                vel[i, r] = a + h[r]
                acc[i, r] = b
            acc[i, s] += qacc[i + 5]
            _cross_motion(vel[i], h, tmp)  # line 8
            for r in range(6):
                acc[i, r] += tmp[r]
        # line 10: f = I a + v ×f I v − f_ext
        for r in range(6):
            a = 0.0
            b = 0.0
            for k in range(6):
                a += I_spatial[i, r, k] * acc[i, k]
                b += I_spatial[i, r, k] * vel[i, k]
            frc[i, r] = a
            tmp2[r] = b
        _cross_force(vel[i], tmp2, tmp)
        for r in range(6):
            frc[i, r] += tmp[r] - f_ext[i, r]
    for i in range(nf - 1, 0, -1):  # lines 12–15
        tau[i + 5] = frc[i, jtype[i]]
        p = parent[i]
        for r in range(6):
            s = 0.0
            for k in range(6):
                s += X[i, k, r] * frc[i, k]
            frc[p, r] += s
    for r in range(6):  # line 16
        tau[r] = frc[0, r]


def _transforms(model: WmrModel, q: NDArray) -> tuple[NDArray, NDArray]:
    T_parent = np.empty((model.num_frames, 4, 4))
    T_world = np.empty((model.num_frames, 4, 4))
    _forward_kinematics(model.parent, model.joint_type, model.T0, q, T_parent, T_world)
    X = np.zeros((model.num_frames, 6, 6))
    _plucker_all(T_parent, X)
    return T_world, X


def crba(model: WmrModel, q: ArrayLike) -> NDArray:
    """Joint-space inertia matrix M(q) (ndof × ndof), thesis Alg. 3, for q̇' = [ω_b; v_b; θ̇] (body coords)."""
    q = check_state(model, q)
    _, X = _transforms(model, q)
    M = np.empty((model.num_dof, model.num_dof))
    _crba(model.parent, model.joint_type, model.I_spatial, X, np.empty((model.num_frames, 6, 6)), M)
    return M


def rnea(model: WmrModel, q: ArrayLike, qvel: ArrayLike, qacc: ArrayLike | None = None,
         f_ext: ArrayLike | None = None, gravity: float = G) -> NDArray:
    """Inverse dynamics τ = M q̈' + c(q, q̇') − Σ Jᵀ f_ext (thesis Alg. 4, line 10 with external forces).

    Args:
        q: state.  qvel, qacc: joint-space velocity and acceleration (body coordinates), length ndof.
        f_ext: (nf, 6) spatial forces [torque; force] on each frame, in that frame's coordinates (N·m, N).
        gravity: m/s² along world −z.
    """
    q = check_state(model, q)
    qvel = _vector(model, qvel, "qvel")
    qacc = np.zeros(model.num_dof) if qacc is None else _vector(model, qacc, "qacc")
    fe = np.zeros((model.num_frames, 6)) if f_ext is None else np.asarray(f_ext, dtype=float)
    if fe.shape != (model.num_frames, 6):
        raise ModelError(f"f_ext: expected shape ({model.num_frames}, 6), got {fe.shape}")
    T_world, X = _transforms(model, q)
    nf = model.num_frames
    tau = np.empty(model.num_dof)
    _rnea(model.parent, model.joint_type, model.I_spatial, X, T_world[0, :3, :3], qvel, qacc, gravity, fe,
          np.empty((nf, 6)), np.empty((nf, 6)), np.empty((nf, 6)), tau)
    return tau


def rnea_bias(model: WmrModel, q: ArrayLike, qvel: ArrayLike, gravity: float = G) -> NDArray:
    """Joint-space bias force c(q, q̇') including gravity (thesis Alg. 4), N and N·m."""
    return rnea(model, q, qvel, None, None, gravity)


def _vector(model: WmrModel, v: ArrayLike, name: str) -> NDArray:
    v = np.asarray(v, dtype=float)
    if v.shape != (model.num_dof,):
        raise ModelError(f"{name}: expected {model.num_dof} joint-space values (6 body + {model.num_joints} joints), "
                         f"got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ModelError(f"{name}: contains NaN or inf")
    return v
