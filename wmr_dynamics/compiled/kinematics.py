"""Compiled kinematic step and rollout: the stabilized DAE of thesis §2.2.5 (eqs. 2.33–2.39) as numba kernels.

The same computation as ``Simulator`` in ``kinematic`` mode with the Euler integrator
(:func:`wmr_dynamics.kinematics.dae.solve_velocity_limited`): forward kinematics (Alg. 1) → collision
(§2.2.1) → wheel Jacobians (Alg. 2) → the constraint system [A_wheel; A_joint] q̇' = [v_c; −σ c] with
v_c = (0, 0, −σΔz) per wheel in contact (eqs. 2.34–2.36; the rows weighted, a lifted wheel's weakly, see
:mod:`wmr_dynamics.kinematics.contact_set`) → actuated rates known (eq. 2.37) → least squares for the
rest (eq. 2.38, :func:`~wmr_dynamics.compiled.linalg.least_squares`: normal equations by Cholesky, the
pseudoinverse solution when the unknown columns have full rank, which they have for any vehicle with three
wheels on the ground) → URDF joint limits as hard stops (the same active set as the Python path) → Euler
step (eq. 2.39).

Entry points: :func:`kinematic_step` (one step for given actuated rates), :func:`kinematic_rollout` (a whole
run driven by command rows through a compiled controller; ``controller_data(None, model, direct=True)``
takes the rows as the actuated rates themselves), :func:`kinematic_velocity` (the velocity solve alone).

Speed, Zoë on the thesis rough terrains at Δt = 0.04 s, one core of this project's machines: 5.0 µs per
step with the Python path's collision search (≈ 8,000× real time; ~3.5 µs of it the search), 3.4 µs with
``method=1``, the fast search of :func:`~wmr_dynamics.compiled.collision.wheel_contacts_kernel` (≈ 11,800×;
the thesis author's C++ library on the same machines and terrains: 3,740×).  The per-row work runs in
``_nrt=False`` kernels (no reference counting of the workspace's arrays per call) with Alg. 1, Alg. 2 and
the controller inlined; the one allocation per step is the state rate inside ``_euler_step``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.collision import N_SAMPLES
from wmr_dynamics.compiled import controllers as _ctl
from wmr_dynamics.compiled.collision import wheel_contacts_kernel
from wmr_dynamics.compiled.controllers import ControllerData
from wmr_dynamics.compiled.data import ModelData, TerrainData
from wmr_dynamics.compiled.linalg import least_squares
from wmr_dynamics.kinematics import contact_set as _cs
from wmr_dynamics.kinematics import fk as _fk
from wmr_dynamics.kinematics import jacobians as _jac
from wmr_dynamics.kinematics.state import _euler_step

STATUS_TERRAIN, STATUS_SINGULAR, STATUS_NONFINITE, STATUS_COMMAND = 1, 2, 3, 4
MAX_LIMIT_ROUNDS = 4  # solve_velocity_limited's max_rounds

# Alg. 1 and Alg. 2 of the kinematics package, inlined here: a call that is not inlined passes its arrays
# through reference counting (~0.1 µs per wheel Jacobian); same source, so one implementation.
_forward_kinematics = njit(inline="always", cache=False)(getattr(_fk._forward_kinematics, "py_func",
                                                                _fk._forward_kinematics))
_wheel_jacobian = njit(inline="always", cache=False)(getattr(_jac._wheel_jacobian, "py_func", _jac._wheel_jacobian))
_controller_rates = njit(inline="always", cache=False)(getattr(_ctl.controller_rates, "py_func",
                                                              _ctl.controller_rates))
_update_contact_set = njit(inline="always", cache=False)(getattr(_cs.update_contact_set, "py_func",
                                                                _cs.update_contact_set))
_normal_target = _cs.normal_target


class KinematicWorkspace(NamedTuple):
    """Preallocated arrays of one kinematic step (nf frames, n = nf + 5 dof, nw wheels, nr = 3 nw + nc rows)."""

    T_parent: NDArray  # (nf, 4, 4)
    T_world: NDArray  # (nf, 4, 4)
    points: NDArray  # (nw, 3) contact points, m
    frames: NDArray  # (nw, 3, 3) contact frames
    dz: NDArray  # (nw,) Δz, m (eq. 2.8)
    angle: NDArray  # (nw,) contact angles, rad
    lateral: NDArray  # (nw,) m
    jtmp: NDArray  # (3, n) Jacobian work
    A: NDArray  # (nr, n) [A_wheel; A_joint] (eq. 2.34)
    v: NDArray  # (nr,) right-hand side of eqs. 2.35–2.36
    known: NDArray  # (n,) bool
    value: NDArray  # (n,) known values
    unk: NDArray  # (n,) int64 unknown columns
    N: NDArray  # (n, n) normal matrix / its Cholesky factor
    rhs: NDArray  # (nr,)
    x: NDArray  # (n,)
    qvel: NDArray  # (n,) the solved q̇'
    u: NDArray  # (na,) actuated rates
    q_next: NDArray  # (nq,)
    in_contact: NDArray  # (nw,) bool, the contact set (kinematics.contact_set; carried from step to step)
    dz_pred: NDArray  # (nw,) Δz predicted one Baumgarte horizon ahead, m
    row_weight: NDArray  # (nw, 2) each wheel's (slip-row, normal-row) weight in eq. 2.38 (contact_set)


@njit
def kinematic_workspace(md: ModelData) -> KinematicWorkspace:
    """Allocate a :class:`KinematicWorkspace` for the model (once per rollout, not per step)."""
    nf = md.parent.shape[0]
    n = nf + 5
    nw = md.wheel_frame.shape[0]
    nr = 3 * nw + md.A_joint.shape[0]
    z = np.zeros
    return KinematicWorkspace(z((nf, 4, 4)), z((nf, 4, 4)), z((nw, 3)), z((nw, 3, 3)), z(nw), z(nw), z(nw),
                              z((3, n)), z((nr, n)), z(nr), np.zeros(n, dtype=np.bool_), z(n),
                              np.zeros(n, dtype=np.int64), z((n, n)), z(nr), z(n), z(n),
                              z(max(md.actuated_frames.shape[0], 1)), z(nf + 6), np.ones(nw, dtype=np.bool_),
                              z(nw), np.ones((nw, 2)))


@njit(inline="always")
def _evaluate(md: ModelData, td: TerrainData, ws: KinematicWorkspace, q: NDArray, sigma: float, fk_done: bool,
              method: int) -> int:
    """FK (Alg. 1, unless ``fk_done``), collision, the contact set (advanced one step), [A_wheel; A_joint]
    (eqs. 2.24, 2.26) and v (eqs. 2.35–2.36), each wheel's rows weighted by ``row_weight``."""
    nw = md.wheel_frame.shape[0]
    n = md.parent.shape[0] + 5
    if not fk_done:
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
    if wheel_contacts_kernel(md, td, ws.T_world, N_SAMPLES, ws.points, ws.frames, ws.dz, ws.angle, ws.lateral,
                             method) != 0:
        return STATUS_TERRAIN
    for w in range(nw):
        _wheel_jacobian(md.parent, md.jtype, ws.T_world, md.wheel_frame[w], ws.points[w], ws.frames[w],
                        ws.A[3 * w:3 * w + 3], ws.jtmp)
        rate = 0.0  # the wheel's normal velocity under the previous solve's q̇' (ws.qvel)
        for j in range(n):
            rate += ws.A[3 * w + 2, j] * ws.qvel[j]
        ws.dz_pred[w] = ws.dz[w] + rate / sigma
    _update_contact_set(ws.dz, ws.dz_pred, ws.in_contact, ws.row_weight)  # rows only for wheels in contact
    for w in range(nw):
        for c in range(3):
            wt = ws.row_weight[w, 1 if c == 2 else 0]
            if wt != 1.0:
                for j in range(n):
                    ws.A[3 * w + c, j] *= wt
        ws.v[3 * w] = 0.0
        ws.v[3 * w + 1] = 0.0
        ws.v[3 * w + 2] = -sigma * _normal_target(ws.dz[w], ws.in_contact[w]) * ws.row_weight[w, 1]  # eq. 2.35
    for k in range(md.A_joint.shape[0]):
        r = 3 * nw + k
        c = -md.b_joint[k]  # eq. 2.25: c = A_joint θ − b
        for j in range(n):
            ws.A[r, j] = md.A_joint[k, j]
            if j >= 6:
                c += md.A_joint[k, j] * q[j + 1]
        ws.v[r] = -sigma * c  # eq. 2.36
    return 0


@njit(inline="always")
def _solve(ws: KinematicWorkspace, n: int, nr: int) -> bool:
    """Eqs. 2.37–2.38: q̇'[known] = value, the rest by least squares against rhs = v − A[:, known] value."""
    nu = 0
    for j in range(n):
        if not ws.known[j]:
            ws.unk[nu] = j
            nu += 1
    for r in range(nr):
        s = ws.v[r]
        for j in range(n):
            if ws.known[j]:
                s -= ws.A[r, j] * ws.value[j]
        ws.rhs[r] = s
    if not least_squares(ws.A, nr, ws.unk, nu, ws.rhs, ws.N, ws.x):
        return False
    for j in range(n):
        ws.qvel[j] = ws.value[j] if ws.known[j] else 0.0
    for a in range(nu):
        ws.qvel[ws.unk[a]] = ws.x[a]
    return True


@njit(_nrt=False)  # allocation-free: no reference counting of the workspace's arrays per call
def kinematic_velocity(md: ModelData, td: TerrainData, ws: KinematicWorkspace, q: NDArray, u: NDArray,
                       sigma: float, fk_done: bool = False, method: int = 0) -> int:
    """q̇' at state q for the actuated rates u (rad/s or m/s, ``actuated_frames`` order) and Baumgarte gain σ
    (1/s), as ``solve_velocity_limited``; the result in ws.qvel (and Δz, contacts, A, v in ws).

    ``fk_done``: ws.T_world already holds the forward kinematics of q.  ``method``: the collision search
    (0: the Python path's, 1: fast).  Returns 0, or STATUS_TERRAIN / STATUS_SINGULAR / STATUS_NONFINITE /
    STATUS_COMMAND (a non-finite rate in u).
    """
    nf = md.parent.shape[0]
    n = nf + 5
    nr = 3 * md.wheel_frame.shape[0] + md.A_joint.shape[0]
    for k in range(md.actuated_frames.shape[0]):
        if not math.isfinite(u[k]):
            return STATUS_COMMAND
    st = _evaluate(md, td, ws, q, sigma, fk_done, method)
    if st != 0:
        return st
    for j in range(n):
        ws.known[j] = False
    for k in range(md.actuated_frames.shape[0]):  # eq. 2.37
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
            if rate > sigma * (hi - th):  # would pass the limit within the horizon 1/σ
                ws.known[5 + i], ws.value[5 + i], hit = True, sigma * (hi - th), True
            elif rate < sigma * (lo - th):
                ws.known[5 + i], ws.value[5 + i], hit = True, sigma * (lo - th), True
        if not hit:
            break
    for j in range(n):
        if not math.isfinite(ws.qvel[j]):
            return STATUS_NONFINITE
    return 0


@njit(inline="always")
def _contact_speeds(md: ModelData, ws: KinematicWorkspace, qvel: NDArray, vc: NDArray) -> None:
    """vc[w] = ‖A_wheel,w q̇'‖ (m/s): the contact-point velocity of wheel w (``VelocitySolution.slip_speed``;
    the rows in ws.A carry the wheel's row weight, divided out here)."""
    n = qvel.shape[0]
    for w in range(md.wheel_frame.shape[0]):
        s2 = 0.0
        for c in range(3):
            s = 0.0
            for j in range(n):
                s += ws.A[3 * w + c, j] * qvel[j]
            s /= ws.row_weight[w, 1 if c == 2 else 0]
            s2 += s * s
        vc[w] = math.sqrt(s2)


@njit(inline="always")
def _residual(md: ModelData, ws: KinematicWorkspace) -> float:
    """‖A q̇' − v‖ of the last solve (VelocitySolution.residual's norm; lifted wheels' rows weighted)."""
    nr = 3 * md.wheel_frame.shape[0] + md.A_joint.shape[0]
    n = md.parent.shape[0] + 5
    res = 0.0
    for r in range(nr):
        s = -ws.v[r]
        for j in range(n):
            s += ws.A[r, j] * ws.qvel[j]
        res += s * s
    return math.sqrt(res)


@njit
def kinematic_step(md: ModelData, td: TerrainData, ws: KinematicWorkspace, q: NDArray, u: NDArray, dt: float,
                   sigma: float, q_next: NDArray, qvel: NDArray, dz: NDArray, vc: NDArray, method: int = 0) -> int:
    """One step of the stabilized-DAE kinematic model (eqs. 2.33–2.39) from state q for actuated rates u.

    Args:
        q: (nq,) state.  u: (na,) actuated joint rates (rad/s or m/s, ``actuated_frames`` order), held over
            the step.  dt: s.  sigma: Baumgarte gain, 1/s (0 < σ ≤ 1/dt).  method: collision search.
        q_next: (nq,) out, the state at t + dt (eq. 2.39).  qvel: (ndof,) out, the q̇' used.  dz: (nw,) out,
            Δz at q, m.  vc: (nw,) out, ‖v_c‖ per wheel at q, m/s.
    Returns:
        0, or STATUS_TERRAIN (1) / STATUS_SINGULAR (2) / STATUS_NONFINITE (3) / STATUS_COMMAND (4).
    """
    st = kinematic_velocity(md, td, ws, q, u, sigma, False, method)
    if st != 0:
        return st
    for j in range(qvel.shape[0]):
        qvel[j] = ws.qvel[j]
    for w in range(md.wheel_frame.shape[0]):
        dz[w] = ws.dz[w]
    _contact_speeds(md, ws, qvel, vc)
    _euler_step(q, qvel, dt, q_next)  # eq. 2.39
    for i in range(q_next.shape[0]):
        if not math.isfinite(q_next[i]):
            return STATUS_NONFINITE
    return 0


@njit(_nrt=False)
def _rollout_row(md: ModelData, td: TerrainData, cd: ControllerData, ws: KinematicWorkspace, q: NDArray,
                 cmd: NDArray, sigma: float, k: int, last: bool, QV: NDArray, DZ: NDArray, CP: NDArray, VC: NDArray,
                 RES: NDArray, method: int) -> int:
    """Row k of :func:`kinematic_rollout` at state q: FK, controller, velocity solve, diagnostics (allocation-
    and reference-count-free; the Euler step, which allocates its state rate, is the caller's)."""
    _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
    _controller_rates(md, cd, q, ws.T_world, cmd, ws.u)
    st = kinematic_velocity(md, td, ws, q, ws.u, sigma, True, method)
    if st != 0:
        return st
    RES[k] = _residual(md, ws)
    for w in range(md.wheel_frame.shape[0]):
        DZ[k, w] = ws.dz[w]
        for c in range(3):
            CP[k, w, c] = ws.points[w, c]
    if not last:
        for j in range(QV.shape[1]):
            QV[k, j] = ws.qvel[j]
        _contact_speeds(md, ws, ws.qvel, VC[k])
    return 0


@njit
def kinematic_rollout(md: ModelData, td: TerrainData, cd: ControllerData, ws: KinematicWorkspace, q0: NDArray,
                      cmds: NDArray, dt: float, sigma: float, Q: NDArray, QV: NDArray, DZ: NDArray, CP: NDArray,
                      VC: NDArray, RES: NDArray, method: int = 0) -> tuple:
    """Rows k = 0..n (n = len(cmds) − 1, t_k = k·dt) exactly as ``Simulator.run`` in kinematic mode with Euler
    integration: row k holds the state at t_k and the velocity solve there for command row ``cmds[k]``
    (through ``controller_rates``; a ``direct`` ControllerData takes the rows as actuated rates); the last
    row's solve gives its Δz, contact points and residual, its q̇' and ‖v_c‖ repeat the previous row's.

    Outputs (preallocated): Q (n+1, nq), QV (n+1, ndof), DZ (n+1, nw) m, CP (n+1, nw, 3) m, VC (n+1, nw) m/s,
    RES (n+1,).  ``method``: the collision search (0: the Python path's, 1: fast).  Returns (status, row of
    the failure or −1); rows from the failing one on are not written (Q's is).
    """
    n = cmds.shape[0] - 1
    nq = q0.shape[0]
    q = q0.copy()  # the running state: the rollout's only allocation
    for k in range(n + 1):
        for i in range(nq):
            Q[k, i] = q[i]
        st = _rollout_row(md, td, cd, ws, q, cmds[k], sigma, k, k == n, QV, DZ, CP, VC, RES, method)
        if st != 0:
            return st, k
        if k == n:
            break
        _euler_step(q, ws.qvel, dt, ws.q_next)  # eq. 2.39
        for i in range(nq):
            if not math.isfinite(ws.q_next[i]):
                return STATUS_NONFINITE, k
            q[i] = ws.q_next[i]
    if n > 0:
        for j in range(QV.shape[1]):
            QV[n, j] = QV[n - 1, j]
        for w in range(VC.shape[1]):
            VC[n, w] = VC[n - 1, w]
    else:
        for j in range(QV.shape[1]):
            QV[0, j] = ws.qvel[j]
        _contact_speeds(md, ws, ws.qvel, VC[0])
    return 0, -1


@njit
def kinematic_advance(md: ModelData, td: TerrainData, cd: ControllerData, ws: KinematicWorkspace, q: NDArray,
                      cmd: NDArray, n: int, dt: float, sigma: float, vc: NDArray) -> tuple:
    """Advance q in place by ``n`` Euler steps (eq. 2.39) with one command row ``cmd`` (the stepper's call).

    The contact set carried in ``ws`` continues from the previous call.  The last step's solve stays in
    ``ws`` (q̇' in ws.qvel, Δz, contact points); its ‖v_c‖ per wheel goes to ``vc``.  Returns (status, index
    of the failing step or −1); on failure q holds the state the failing step started from.
    """
    nq = q.shape[0]
    for k in range(n):
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
        _controller_rates(md, cd, q, ws.T_world, cmd, ws.u)
        st = kinematic_velocity(md, td, ws, q, ws.u, sigma, True, 0)
        if st != 0:
            return st, k
        _contact_speeds(md, ws, ws.qvel, vc)
        _euler_step(q, ws.qvel, dt, ws.q_next)  # eq. 2.39
        for i in range(nq):
            if not math.isfinite(ws.q_next[i]):
                return STATUS_NONFINITE, k
        for i in range(nq):
            q[i] = ws.q_next[i]
    return 0, -1
