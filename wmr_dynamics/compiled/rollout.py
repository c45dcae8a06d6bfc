"""Compiled rollouts: a whole dynamic simulation — or a batch of them, in parallel over cores — in one call.

A rollout records, for rows k = 0..n (time k·Δt), the state at the start of step k and the step's
diagnostics, exactly as ``Simulator.run`` does in dynamic mode (the last row's step is solved for its
diagnostics only).  Batches run one rollout per trajectory over ``prange``; each trajectory allocates its
own workspace once, so threads share nothing but the read-only model, terrain and commands.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.controllers import ControllerData, controller_rates
from wmr_dynamics.compiled.data import ModelData, TerrainData
from wmr_dynamics.compiled.dynamics import (
    C_FK_READY,
    DynamicsData,
    DynamicsWorkspace,
    _dynamic_step,
    dynamic_step,
    dynamics_workspace,
)
from wmr_dynamics.kinematics.fk import _forward_kinematics


@njit(inline="always")
def _slip_ratio(ws: DynamicsWorkspace, w: int) -> float:
    """Slip ratio of wheel w (eq. 2.40, normalized by the larger speed)."""
    rw = ws.Rw[w]
    vx = ws.vc[w, 0] + rw  # wheel-centre speed over ground
    den = max(abs(rw), abs(vx))
    return (rw - vx) / den if den > 1e-9 else 0.0


@njit(_nrt=False)
def _slip(md: ModelData, ws: DynamicsWorkspace, w: int) -> tuple:
    """Slip ratio (eq. 2.40, normalized by the larger speed) and slip angle (eq. 2.42) of wheel w."""
    return _slip_ratio(ws, w), math.atan2(ws.vc[w, 1], abs(ws.vc[w, 0] + ws.Rw[w]))


@njit
def dynamic_rollout(md: ModelData, td: TerrainData, fd: DynamicsData, cd: ControllerData, ws: DynamicsWorkspace,
                    q0: NDArray, qvel0: NDArray, cmds: NDArray, dt: float, integral: NDArray, u: NDArray,
                    Q: NDArray, QV: NDArray, DZ: NDArray, CP: NDArray, VC: NDArray, F: NDArray, SR: NDArray,
                    SA: NDArray, IT: NDArray, COST: NDArray, CONV: NDArray, record: bool) -> tuple:
    """Simulate len(cmds) − 1 steps from (q0, q̇'0) with command rows ``cmds`` (see ``controller_rates``).

    With ``record`` every row k of the outputs is written (shapes (n+1, ...)); without, only Q is written
    per row and the diagnostics arrays (shape (1, ...)) keep running extremes in row 0: DZ → max |Δz|,
    VC → max ‖v_c‖, F[0, :, 2] → min normal force per wheel, SR/SA → max |slip ratio| / |slip angle|,
    IT → total iterations, COST → max ‖e‖, CONV → all converged.
    Returns (status, row of the failure or −1).
    """
    nw = md.wheel_frame.shape[0]
    nq, ndof = q0.shape[0], qvel0.shape[0]
    return _rollout_loop(md, td, fd, cd, ws, q0, qvel0, cmds, dt, integral, u, Q, QV, DZ, CP, VC, F, SR, SA, IT,
                         COST, CONV, record, np.empty(nq), np.empty(ndof), np.empty(nq), np.empty(ndof),
                         np.empty(nw), np.empty((nw, 3)), np.empty((nw, 2)))


@njit(inline="always")
def _widest_angles(record: bool, widest: NDArray, SA: NDArray, status: int, row: int) -> tuple:
    """Without ``record``: each wheel's largest slip angle (eq. 2.42) into SA[0] from ``widest`` (see
    :func:`_rollout_loop`).  Returns (status, row), the loop's result."""
    if not record:
        for w in range(widest.shape[0]):
            SA[0, w] = math.atan2(widest[w, 1], widest[w, 0])
    return status, row


# The loops over the steps are functions of their own, compiled without reference counting: from a function
# that counts references (one that allocates, as the callers above), every call of the step would count the
# references of every array in the model, terrain and workspace tuples it is passed (Zoë's kinematic step: 4.41
# → 4.26 µs; the dynamic step: no change beyond the noise; docs/benchmarks.md).
@njit(_nrt=False)
def _rollout_loop(md: ModelData, td: TerrainData, fd: DynamicsData, cd: ControllerData, ws: DynamicsWorkspace,
                  q0: NDArray, qvel0: NDArray, cmds: NDArray, dt: float, integral: NDArray, u: NDArray, Q: NDArray,
                  QV: NDArray, DZ: NDArray, CP: NDArray, VC: NDArray, F: NDArray, SR: NDArray, SA: NDArray,
                  IT: NDArray, COST: NDArray, CONV: NDArray, record: bool, q: NDArray, qv: NDArray,
                  q_next: NDArray, qv_next: NDArray, dz: NDArray, pts: NDArray, widest: NDArray) -> tuple:
    """:func:`dynamic_rollout`'s steps, into its outputs, with its work arrays q, qv, q_next, qv_next, dz, pts and
    ``widest`` (nw, 2): without ``record``, the (|v_x|, |v_y|) of each wheel's largest slip angle so far — the
    angles compared by cross-multiplication (atan2(|v_y|, |v_x|) grows with |v_y|/|v_x|), one atan2 per wheel at
    the end rather than one per wheel and step."""
    n = cmds.shape[0] - 1
    nw = md.wheel_frame.shape[0]
    nq, ndof = q0.shape[0], qvel0.shape[0]
    for i in range(nq):
        q[i] = q0[i]
    for i in range(ndof):
        qv[i] = qvel0[i]
    if not record:
        for w in range(nw):
            DZ[0, w] = 0.0
            VC[0, w] = 0.0
            F[0, w, 2] = np.inf
            SR[0, w] = 0.0
            SA[0, w] = 0.0
            widest[w, 0], widest[w, 1] = 1.0, 0.0  # a slip angle of 0
        IT[0], COST[0], CONV[0] = 0.0, 0.0, True
    for k in range(n + 1):
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
        controller_rates(md, cd, q, ws.T_world, cmds[k], u)
        for i in range(u.shape[0]):
            if not math.isfinite(u[i]):
                return _widest_angles(record, widest, SA, 4, k)
        ws.counts[C_FK_READY] = 1  # ws.T_world is q's FK: the step's set-up uses it (set here, after the last exit)
        # (inlined: one call per step less, docs/benchmarks.md "The whole step outside the sub-steps' loop")
        status, it, cost, conv, _ = _dynamic_step(md, td, fd, ws, q, qv, u, integral, dt, q_next, qv_next, dz, pts)
        for i in range(nq):
            Q[k, i] = q[i]
        if status != 0:
            return _widest_angles(record, widest, SA, status, k)
        if record:
            for i in range(ndof):
                QV[k, i] = qv[i]
            CONV[k], IT[k], COST[k] = conv, it, cost
            for w in range(nw):
                DZ[k, w] = dz[w]
                VC[k, w] = math.sqrt(ws.vc[w, 0] ** 2 + ws.vc[w, 1] ** 2 + ws.vc[w, 2] ** 2)
                SR[k, w], SA[k, w] = _slip(md, ws, w)
                for r in range(3):
                    CP[k, w, r] = pts[w, r]
                    F[k, w, r] = ws.fc[w, r]
        else:
            IT[0] += it
            COST[0] = max(COST[0], cost)
            CONV[0] = CONV[0] and conv
            for w in range(nw):
                DZ[0, w] = max(DZ[0, w], abs(dz[w]))
                VC[0, w] = max(VC[0, w], math.sqrt(ws.vc[w, 0] ** 2 + ws.vc[w, 1] ** 2 + ws.vc[w, 2] ** 2))
                F[0, w, 2] = min(F[0, w, 2], ws.fc[w, 2])
                SR[0, w] = max(SR[0, w], abs(_slip_ratio(ws, w)))
                ax, ay = abs(ws.vc[w, 0] + ws.Rw[w]), abs(ws.vc[w, 1])
                if ay * widest[w, 0] > widest[w, 1] * ax:  # a wider slip angle (eq. 2.42) than any so far
                    widest[w, 0], widest[w, 1] = ax, ay
        if k < n:
            for i in range(nq):
                q[i] = q_next[i]
            for i in range(ndof):
                qv[i] = qv_next[i]
    return _widest_angles(record, widest, SA, 0, -1)


@njit
def dynamic_advance(md: ModelData, td: TerrainData, fd: DynamicsData, cd: ControllerData, ws: DynamicsWorkspace,
                    q: NDArray, qvel: NDArray, cmd: NDArray, n: int, dt: float, integral: NDArray, u: NDArray,
                    dz: NDArray, pts: NDArray, slip: NDArray, stats: NDArray) -> tuple:
    """Advance (q, q̇', integral) in place by ``n`` steps with one command row ``cmd`` (the stepper's call).

    The last step's diagnostics stay in ``ws`` (forces ws.fc, v_c ws.vc), ``dz``/``pts`` (at its start) and
    ``slip`` (2, nw) (slip ratio and angle, rad, at its end); ``stats`` (4,) gets the force-balance
    iterations summed over the steps, the last step's ‖e‖, whether every step converged (1/0) and the number
    of steps completed (kept current, so a Python model's exception in a callback leaves it exact).
    Returns (status, index of the failing step or −1); on failure q, q̇' hold the state the failing step
    started from.
    """
    return _advance_loop(md, td, fd, cd, ws, q, qvel, cmd, n, dt, integral, u, dz, pts, slip, stats,
                         np.empty(q.shape[0]), np.empty(qvel.shape[0]))


@njit(_nrt=False)  # reference-count free: see _rollout_loop
def _advance_loop(md: ModelData, td: TerrainData, fd: DynamicsData, cd: ControllerData, ws: DynamicsWorkspace,
                  q: NDArray, qvel: NDArray, cmd: NDArray, n: int, dt: float, integral: NDArray, u: NDArray,
                  dz: NDArray, pts: NDArray, slip: NDArray, stats: NDArray, q_next: NDArray,
                  qv_next: NDArray) -> tuple:
    """:func:`dynamic_advance`'s steps, with its work arrays q_next, qv_next."""
    stats[0], stats[1], stats[2], stats[3] = 0.0, 0.0, 1.0, 0.0
    for k in range(n):
        _forward_kinematics(md.parent, md.jtype, md.T0, q, ws.T_parent, ws.T_world)
        controller_rates(md, cd, q, ws.T_world, cmd, u)
        for i in range(u.shape[0]):
            if not math.isfinite(u[i]):
                return 4, k
        ws.counts[C_FK_READY] = 1  # as in _rollout_loop
        status, it, cost, conv, _ = dynamic_step(md, td, fd, ws, q, qvel, u, integral, dt, q_next, qv_next, dz, pts)
        if status != 0:
            return status, k
        stats[0] += it
        stats[1] = cost
        if not conv:
            stats[2] = 0.0
        for w in range(dz.shape[0]):
            slip[0, w], slip[1, w] = _slip(md, ws, w)
        for i in range(q.shape[0]):
            q[i] = q_next[i]
        for i in range(qvel.shape[0]):
            qvel[i] = qv_next[i]
        stats[3] = k + 1
    return 0, -1


@njit(parallel=True)
def dynamic_rollout_batch(md: ModelData, td: TerrainData, fd: DynamicsData, cd: ControllerData, q0: NDArray,
                          qvel0: NDArray, cmds: NDArray, dt: float, contact_P: NDArray, Q: NDArray,
                          stats: NDArray, status: NDArray) -> None:
    """N rollouts in parallel: q0 (N, nq), qvel0 (N, ndof), cmds (N, n+1, m); contact_P (N, k, p) per-trajectory
    contact parameters or an empty (0, k, p) array for the model's own.

    Writes Q (N, n+1, nq) and per trajectory ``stats`` (N, 8): max |slip ratio|, max |slip angle| (rad),
    min normal force (N, over wheels and steps), max |Δz| (m), max ‖v_c‖ (m/s), mean force-balance
    iterations per step, all converged (1/0), rolled over (1/0: the body's z axis pointed down at some
    row); ``status`` (N, 2): status code and failing row (−1 if none).
    """
    N = q0.shape[0]
    nw = md.wheel_frame.shape[0]
    na = md.actuated_frames.shape[0]
    n = cmds.shape[1] - 1
    for b in prange(N):
        f = fd
        if contact_P.shape[0] > 0:
            f = DynamicsData(fd.A_joint, fd.b_joint, fd.joint_kind, fd.joint_P, fd.contact_kind,
                             contact_P[b], fd.contact_aux, fd.act_kind, fd.act_P, fd.max_iterations, fd.tolerance,
                             fd.accept, fd.qr_tolerance, fd.constant_mass, fd.max_halvings, fd.n_samples,
                             fd.approximate_bias, fd.contact_slot, fd.actuator_slot, fd.contact_moment,
                             fd.reuse_factor)
        ws = dynamics_workspace(md, f)
        c = ControllerData(cd.kind, cd.steer_frame, cd.steer_actuated, cd.steer_wheels, cd.steer_gain,
                           cd.max_steer_rate, np.zeros(cd.rates.shape[0]), np.zeros(cd.steer_rate.shape[0]),
                           cd.steering_efficiency)
        DZ, VC, SR, SA = np.empty((1, nw)), np.empty((1, nw)), np.empty((1, nw)), np.empty((1, nw))
        F = np.empty((1, nw, 3))
        IT, COST = np.empty(1), np.empty(1)
        CONV = np.empty(1, dtype=np.bool_)
        dummy3 = np.empty((1, nw, 3))
        dummyq = np.empty((1, qvel0.shape[1]))
        # ``record`` a runtime False, not the literal: a literal argument is a specialization of its own, a second
        # compiled copy of the rollout loop with the force balance inlined (≈ 250 s of the install's warm-up)
        st, row = dynamic_rollout(md, td, f, c, ws, q0[b], qvel0[b], cmds[b], dt, np.zeros(max(na, 1))[:na],
                                  np.empty(max(na, 1)), Q[b], dummyq, DZ, dummy3, VC, F, SR, SA, IT, COST, CONV,
                                  N < 0)
        status[b, 0], status[b, 1] = st, row
        fmin = np.inf
        for w in range(nw):
            fmin = min(fmin, F[0, w, 2])
        stats[b, 0] = SR[0].max()
        stats[b, 1] = SA[0].max()
        stats[b, 2] = fmin
        stats[b, 3] = DZ[0].max()
        stats[b, 4] = VC[0].max()
        stats[b, 5] = IT[0] / (n + 1)
        stats[b, 6] = 1.0 if CONV[0] else 0.0
        rolled = 0.0
        for k in range(n + 1):
            x, y = Q[b, k, 0], Q[b, k, 1]
            if 1.0 - 2.0 * (x * x + y * y) < 0.0:  # R[2, 2] of the body quaternion
                rolled = 1.0
        stats[b, 7] = rolled
