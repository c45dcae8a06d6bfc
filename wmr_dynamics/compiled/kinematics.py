"""Compiled kinematic step and rollout: the stabilized DAE of thesis §2.2.5 (eqs. 2.33–2.39) as numba kernels.

The same computation as ``Simulator`` in ``kinematic`` mode with the Euler integrator
(:func:`wmr_dynamics.kinematics.dae.solve_velocity_limited`): forward kinematics → collision → wheel
Jacobians → the constraint system [A_wheel; A_joint] q̇' = [v_c; −σ c] with v_c = (0, 0, −σΔz) per wheel
(eqs. 2.34–2.36) → actuated rates known (eq. 2.37) → least squares for the rest (eq. 2.38, normal
equations by Cholesky: the pseudoinverse solution when the unknown columns have full rank, which they
have for any vehicle with three wheels on the ground) → URDF joint limits as hard stops (the same active
set as the Python path) → Euler step (eq. 2.39).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.collision import wheel_contacts_kernel
from wmr_dynamics.compiled.controllers import ControllerData, controller_rates
from wmr_dynamics.compiled.data import ModelData, TerrainData
from wmr_dynamics.compiled.linalg import cho_solve, cholesky
from wmr_dynamics.kinematics.fk import _forward_kinematics
from wmr_dynamics.kinematics.jacobians import _wheel_jacobian
from wmr_dynamics.kinematics.state import _euler_step

STATUS_TERRAIN, STATUS_SINGULAR, STATUS_NONFINITE, STATUS_COMMAND = 1, 2, 3, 4
MAX_LIMIT_ROUNDS = 4  # solve_velocity_limited's max_rounds


class KinematicWorkspace(NamedTuple):
    """Preallocated arrays of one kinematic step (n dof, nw wheels, nr = 3 nw + nc rows)."""

    T_parent: NDArray
    T_world: NDArray
    points: NDArray
    frames: NDArray
    dz: NDArray
    angle: NDArray
    lateral: NDArray
    jtmp: NDArray
    A: NDArray  # (nr, n)
    v: NDArray  # (nr,) right-hand side of eqs. 2.35–2.36
    known: NDArray  # (n,) bool
    value: NDArray  # (n,) known values
    unk: NDArray  # (n,) int64 unknown columns
    N: NDArray  # (n, n) normal matrix / its Cholesky factor
    rhs: NDArray  # (nr,)
    x: NDArray  # (n,)
    qvel: NDArray  # (n,)
    u: NDArray  # (na,)
    q_next: NDArray  # (nq,)


@njit
def kinematic_workspace(md: ModelData) -> KinematicWorkspace:
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    nr = 3 * nw + md.A_joint.shape[0]
    z = np.zeros
    return KinematicWorkspace(z((nf, 4, 4)), z((nf, 4, 4)), z((nw, 3)), z((nw, 3, 3)), z(nw), z(nw), z(nw),
                              z((3, n)), z((nr, n)), z(nr), np.zeros(n, dtype=np.bool_), z(n),
                              np.zeros(n, dtype=np.int64), z((n, n)), z(nr), z(n), z(n),
                              z(max(md.actuated_frames.shape[0], 1)), z(nf + 6))


@njit
def _evaluate(md: ModelData, td: TerrainData, ws: KinematicWorkspace, q: NDArray, sigma: float) -> int:
    """FK (Alg. 1), collision, [A_wheel; A_joint] (eqs. 2.24, 2.26) and v (eqs. 2.35–2.36) at q."""
    nw = md.wheel_frame.shape[0]
    n = md.parent.shape[0] + 5
    _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
    if wheel_contacts_kernel(md, td, ws.T_world, 36, ws.points, ws.frames, ws.dz, ws.angle, ws.lateral) != 0:
        return STATUS_TERRAIN
    for w in range(nw):
        _wheel_jacobian(md.parent, md.jtype, ws.T_world, md.wheel_frame[w], ws.points[w], ws.frames[w],
                        ws.A[3 * w:3 * w + 3], ws.jtmp)
        ws.v[3 * w] = 0.0
        ws.v[3 * w + 1] = 0.0
        ws.v[3 * w + 2] = -sigma * ws.dz[w]  # eq. 2.35
    for k in range(md.A_joint.shape[0]):
        r = 3 * nw + k
        c = -md.b_joint[k]
        for j in range(n):
            ws.A[r, j] = md.A_joint[k, j]
            if j >= 6:
                c += md.A_joint[k, j] * q[j + 1]
        ws.v[r] = -sigma * c  # eq. 2.36
    return 0


@njit
def _solve(ws: KinematicWorkspace, n: int, nr: int) -> bool:
    """Eq. 2.37–2.38: q̇'[known] = value, the rest by least squares (normal equations, Cholesky)."""
    nu = 0
    for j in range(n):
        if not ws.known[j]:
            ws.unk[nu] = j
            nu += 1
    for r in range(nr):  # rhs = v − A[:, known] values
        s = ws.v[r]
        for j in range(n):
            if ws.known[j]:
                s -= ws.A[r, j] * ws.value[j]
        ws.rhs[r] = s
    tr = 0.0
    for a in range(nu):
        ca = ws.unk[a]
        s = 0.0
        for r in range(nr):
            s += ws.A[r, ca] * ws.rhs[r]
        ws.x[a] = s
        for b in range(a + 1):
            cb = ws.unk[b]
            s = 0.0
            for r in range(nr):
                s += ws.A[r, ca] * ws.A[r, cb]
            ws.N[a, b] = s
        tr += ws.N[a, a]
    reg = 1e-13 * tr / max(nu, 1)  # keeps a rank-deficient system (e.g. wheels in the air) solvable
    for a in range(nu):
        ws.N[a, a] += reg
    if not cholesky(ws.N, nu, ws.N):
        return False
    cho_solve(ws.N, nu, ws.x)
    for j in range(n):
        ws.qvel[j] = ws.value[j] if ws.known[j] else 0.0
    for a in range(nu):
        ws.qvel[ws.unk[a]] = ws.x[a]
    return True


@njit
def kinematic_velocity(md: ModelData, td: TerrainData, ws: KinematicWorkspace, q: NDArray, u: NDArray,
                       sigma: float) -> int:
    """q̇' at state q for actuated rates u (``solve_velocity_limited``); result in ws.qvel.  Status 0 = ok."""
    nf = md.parent.shape[0]
    n = nf + 5
    nr = 3 * md.wheel_frame.shape[0] + md.A_joint.shape[0]
    st = _evaluate(md, td, ws, q, sigma)
    if st != 0:
        return st
    for j in range(n):
        ws.known[j] = False
    for k in range(md.actuated_frames.shape[0]):
        c = md.actuated_frames[k] + 5
        ws.known[c] = True
        ws.value[c] = u[k]
    for _ in range(MAX_LIMIT_ROUNDS + 1):  # URDF joint limits as hard stops (an active set)
        if not _solve(ws, n, nr):
            return STATUS_SINGULAR
        hit = False
        for i in range(1, nf):
            th, rate = q[6 + i], ws.qvel[5 + i]
            lo, hi = md.joint_lower[i], md.joint_upper[i]
            if th >= hi - 1e-9 and rate > sigma * (hi - th):
                ws.known[5 + i], ws.value[5 + i], hit = True, sigma * (hi - th), True
            elif th <= lo + 1e-9 and rate < sigma * (lo - th):
                ws.known[5 + i], ws.value[5 + i], hit = True, sigma * (lo - th), True
        if not hit:
            break
    for j in range(n):
        if not math.isfinite(ws.qvel[j]):
            return STATUS_NONFINITE
    return 0


@njit
def kinematic_rollout(md: ModelData, td: TerrainData, cd: ControllerData, ws: KinematicWorkspace, q0: NDArray,
                      cmds: NDArray, dt: float, sigma: float, Q: NDArray, QV: NDArray, DZ: NDArray, CP: NDArray,
                      VC: NDArray, RES: NDArray) -> tuple:
    """Rows k = 0..n as ``Simulator.run`` in kinematic mode with Euler integration (the last row's velocity
    solve gives its Δz, contact points and residual; its q̇' and ‖v_c‖ repeat the previous row's).
    Returns (status, row of the failure or −1)."""
    n = cmds.shape[0] - 1
    nw = md.wheel_frame.shape[0]
    nq = q0.shape[0]
    nr = 3 * nw + md.A_joint.shape[0]
    ndof = nq - 1
    q = ws.q_next.copy()
    q[:] = q0
    for k in range(n + 1):
        Q[k] = q
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
        controller_rates(md, cd, q, ws.T_world, cmds[k], ws.u)
        for i in range(md.actuated_frames.shape[0]):
            if not math.isfinite(ws.u[i]):
                return STATUS_COMMAND, k
        st = kinematic_velocity(md, td, ws, q, ws.u, sigma)
        if st != 0:
            return st, k
        res = 0.0
        for r in range(nr):
            s = -ws.v[r]
            for j in range(ndof):
                s += ws.A[r, j] * ws.qvel[j]
            res += s * s
        RES[k] = math.sqrt(res)
        for w in range(nw):
            DZ[k, w] = ws.dz[w]
            for c in range(3):
                CP[k, w, c] = ws.points[w, c]
        if k == n:
            break
        QV[k] = ws.qvel
        for w in range(nw):
            s2 = 0.0
            for c in range(3):
                s = 0.0
                for j in range(ndof):
                    s += ws.A[3 * w + c, j] * ws.qvel[j]
                s2 += s * s
            VC[k, w] = math.sqrt(s2)
        _euler_step(q, ws.qvel, dt, ws.q_next)  # eq. 2.39
        for i in range(nq):
            if not math.isfinite(ws.q_next[i]):
                return STATUS_NONFINITE, k
        q[:] = ws.q_next
    if n > 0:
        QV[n] = QV[n - 1]
        VC[n] = VC[n - 1]
    else:
        QV[0] = ws.qvel
    return 0, -1
