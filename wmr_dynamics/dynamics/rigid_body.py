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


@njit(_nrt=False)
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


@njit(_nrt=False)
def _plucker_all(T_parent: NDArray, X: NDArray) -> None:
    for i in range(1, T_parent.shape[0]):
        _plucker_child_parent(T_parent[i], X[i])


@njit(_nrt=False)  # allocation-free: no reference counting of its arrays per call
def _crba(parent: NDArray, jtype: NDArray, I_spatial: NDArray, X: NDArray, Ic: NDArray, M: NDArray) -> None:
    """Alg. 3: joint-space inertia M (ndof × ndof); Ic is a (nf, 6, 6) work array.

    X are motion transforms from :func:`_plucker_child_parent`, [[E, 0], [B, E]] (eq. B.10): the products
    skip the zero upper-right block (its terms are exact zeros, so the sums are those of the dense products)
    and keep their 6-vectors in scalars, so nothing is allocated."""
    nf = parent.shape[0]
    for i in range(nf):  # line 1
        for r in range(6):
            for c in range(6):
                Ic[i, r, c] = I_spatial[i, r, c]
    for i in range(nf - 1, 0, -1):  # lines 2–4: Ic_p += Xᵀ Ic_i X, one column of X at a time
        p = parent[i]
        for c in range(6):
            k0 = 3 if c >= 3 else 0  # X[k, c] = 0 for k < 3 when c ≥ 3
            y0 = y1 = y2 = y3 = y4 = y5 = 0.0  # y = Ic_i X[:, c]
            for k in range(k0, 6):
                x = X[i, k, c]
                y0 += Ic[i, 0, k] * x
                y1 += Ic[i, 1, k] * x
                y2 += Ic[i, 2, k] * x
                y3 += Ic[i, 3, k] * x
                y4 += Ic[i, 4, k] * x
                y5 += Ic[i, 5, k] * x
            for r in range(3):  # rows 0–2 of Xᵀ y: every k
                Ic[p, r, c] += (X[i, 0, r] * y0 + X[i, 1, r] * y1 + X[i, 2, r] * y2 + X[i, 3, r] * y3
                                + X[i, 4, r] * y4 + X[i, 5, r] * y5)
            for r in range(3, 6):  # rows 3–5: X[k, r] = 0 for k < 3
                Ic[p, r, c] += X[i, 3, r] * y3 + X[i, 4, r] * y4 + X[i, 5, r] * y5
    n = M.shape[0]
    for r in range(n):
        for c in range(n):
            M[r, c] = 0.0
    for r in range(6):  # line 6
        for c in range(6):
            M[r, c] = Ic[0, r, c]
    for i in range(1, nf):
        si = jtype[i]
        f0, f1, f2, f3, f4, f5 = Ic[i, 0, si], Ic[i, 1, si], Ic[i, 2, si], Ic[i, 3, si], Ic[i, 4, si], Ic[i, 5, si]
        M[i + 5, i + 5] = Ic[i, si, si]  # lines 8–9
        j = i
        while j > 0:  # line 12: f = X_{p(j)}^jᵀ f (rows 3–5 of Xᵀ see only f3..f5)
            g0 = (X[j, 0, 0] * f0 + X[j, 1, 0] * f1 + X[j, 2, 0] * f2 + X[j, 3, 0] * f3 + X[j, 4, 0] * f4
                  + X[j, 5, 0] * f5)
            g1 = (X[j, 0, 1] * f0 + X[j, 1, 1] * f1 + X[j, 2, 1] * f2 + X[j, 3, 1] * f3 + X[j, 4, 1] * f4
                  + X[j, 5, 1] * f5)
            g2 = (X[j, 0, 2] * f0 + X[j, 1, 2] * f1 + X[j, 2, 2] * f2 + X[j, 3, 2] * f3 + X[j, 4, 2] * f4
                  + X[j, 5, 2] * f5)
            g3 = X[j, 3, 3] * f3 + X[j, 4, 3] * f4 + X[j, 5, 3] * f5
            g4 = X[j, 3, 4] * f3 + X[j, 4, 4] * f4 + X[j, 5, 4] * f5
            g5 = X[j, 3, 5] * f3 + X[j, 4, 5] * f4 + X[j, 5, 5] * f5
            f0, f1, f2, f3, f4, f5 = g0, g1, g2, g3, g4, g5
            j = parent[j]
            if j == 0:  # lines 15–16
                M[0, i + 5] = M[i + 5, 0] = f0
                M[1, i + 5] = M[i + 5, 1] = f1
                M[2, i + 5] = M[i + 5, 2] = f2
                M[3, i + 5] = M[i + 5, 3] = f3
                M[4, i + 5] = M[i + 5, 4] = f4
                M[5, i + 5] = M[i + 5, 5] = f5
            else:  # lines 18–19
                fs = _pick6(jtype[j], f0, f1, f2, f3, f4, f5)
                M[j + 5, i + 5] = fs
                M[i + 5, j + 5] = fs


@njit(inline="always")
def _pick6(s: int, f0: float, f1: float, f2: float, f3: float, f4: float, f5: float) -> float:
    """Component s of the 6-vector (f0, …, f5)."""
    if s == 0:
        return f0
    if s == 1:
        return f1
    if s == 2:
        return f2
    if s == 3:
        return f3
    if s == 4:
        return f4
    return f5


@njit(_nrt=False)
def _cross_motion(v: NDArray, m: NDArray, out: NDArray) -> None:
    """out = v ×m m (eq. B.14)."""
    out[0] = v[1] * m[2] - v[2] * m[1]
    out[1] = v[2] * m[0] - v[0] * m[2]
    out[2] = v[0] * m[1] - v[1] * m[0]
    out[3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    out[4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    out[5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit(_nrt=False)
def _cross_force(v: NDArray, f: NDArray, out: NDArray) -> None:
    """out = v ×f f (eq. B.15): [ω × n + v × f; ω × f]."""
    out[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] = v[1] * f[5] - v[2] * f[4]
    out[4] = v[2] * f[3] - v[0] * f[5]
    out[5] = v[0] * f[4] - v[1] * f[3]


@njit(_nrt=False)  # allocation-free: no reference counting of its arrays per call
def _rnea(parent: NDArray, jtype: NDArray, I_spatial: NDArray, X: NDArray, R_wb: NDArray, qvel: NDArray,
          qacc: NDArray, gravity: float, f_ext: NDArray, vel: NDArray, acc: NDArray, frc: NDArray,
          tau: NDArray) -> None:
    """Alg. 4 generalized to inverse dynamics: tau = M qacc + c − (external forces in joint space).

    ``qacc = 0`` and ``f_ext = 0`` give the bias force c.  ``f_ext[i]`` is a spatial force on frame i in
    frame-i coordinates (line 10, "+ f_ext").  Work arrays vel, acc, frc are (nf, 6).  The joint's motion
    subspace h = q̇_i e_s(i) (line 8: v ×m h is q̇_i times column s(i) of v×) and the 6-vectors I v, v ×f I v
    stay in scalars: nothing is allocated.
    """
    nf = parent.shape[0]
    for r in range(6):
        vel[0, r] = qvel[r]  # line 1
        acc[0, r] = qacc[r]
    for r in range(3):  # line 2: a_1 = −g, gravity (0, 0, −G) world expressed in body axes
        acc[0, 3 + r] += gravity * R_wb[2, r]
    for i in range(nf):
        if i > 0:
            p = parent[i]
            s = jtype[i]
            qd = qvel[i + 5]
            for r in range(6):  # line 7
                a = 0.0
                b = 0.0
                for k in range(6):
                    a += X[i, r, k] * vel[p, k]
                    b += X[i, r, k] * acc[p, k]
                vel[i, r] = a
                acc[i, r] = b
            vel[i, s] += qd
            acc[i, s] += qacc[i + 5]
            # line 8: a += v ×m h, h = q̇ e_s (eq. B.14, column s of [ω×, 0; v×, ω×])
            w0, w1, w2, v0, v1, v2 = vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5]
            if s == 0:
                acc[i, 1] += w2 * qd
                acc[i, 2] -= w1 * qd
                acc[i, 4] += v2 * qd
                acc[i, 5] -= v1 * qd
            elif s == 1:
                acc[i, 0] -= w2 * qd
                acc[i, 2] += w0 * qd
                acc[i, 3] -= v2 * qd
                acc[i, 5] += v0 * qd
            elif s == 2:
                acc[i, 0] += w1 * qd
                acc[i, 1] -= w0 * qd
                acc[i, 3] += v1 * qd
                acc[i, 4] -= v0 * qd
            elif s == 3:
                acc[i, 4] += w2 * qd
                acc[i, 5] -= w1 * qd
            elif s == 4:
                acc[i, 3] -= w2 * qd
                acc[i, 5] += w0 * qd
            else:
                acc[i, 3] += w1 * qd
                acc[i, 4] -= w0 * qd
        # line 10: f = I a + v ×f I v − f_ext
        w0, w1, w2, v0, v1, v2 = vel[i, 0], vel[i, 1], vel[i, 2], vel[i, 3], vel[i, 4], vel[i, 5]
        n0 = n1 = n2 = m0 = m1 = m2 = 0.0  # I v = [n; m]
        for k in range(6):
            vk = vel[i, k]
            n0 += I_spatial[i, 0, k] * vk
            n1 += I_spatial[i, 1, k] * vk
            n2 += I_spatial[i, 2, k] * vk
            m0 += I_spatial[i, 3, k] * vk
            m1 += I_spatial[i, 4, k] * vk
            m2 += I_spatial[i, 5, k] * vk
        for r in range(6):
            a = 0.0
            for k in range(6):
                a += I_spatial[i, r, k] * acc[i, k]
            frc[i, r] = a
        # v ×f (I v) = [ω × n + v × m; ω × m] (eq. B.15)
        frc[i, 0] += (w1 * n2 - w2 * n1 + v1 * m2 - v2 * m1) - f_ext[i, 0]
        frc[i, 1] += (w2 * n0 - w0 * n2 + v2 * m0 - v0 * m2) - f_ext[i, 1]
        frc[i, 2] += (w0 * n1 - w1 * n0 + v0 * m1 - v1 * m0) - f_ext[i, 2]
        frc[i, 3] += (w1 * m2 - w2 * m1) - f_ext[i, 3]
        frc[i, 4] += (w2 * m0 - w0 * m2) - f_ext[i, 4]
        frc[i, 5] += (w0 * m1 - w1 * m0) - f_ext[i, 5]
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
