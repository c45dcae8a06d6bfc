"""Stabilized-DAE kinematic motion prediction (thesis §2.2.5, eqs. 2.33–2.38) and terrain-contact
initialization (§2.2.4, eqs. 2.27–2.32).

One evaluation at a state q:  forward kinematics (Alg. 1) → collision (§2.2.1) → wheel Jacobians (Alg. 2)
→ the constraint system

    [A_wheel; A_joint] q̇' = [v_c; −σ c],   v_c = [v_x, v_y, −σ Δz] per wheel        (eqs. 2.34–2.36)

with some elements of q̇' known (eq. 2.37: actuated joint rates in navigation kinematics, body velocity in
actuation kinematics) and the rest solved in the least-squares sense by the pseudoinverse (eq. 2.38) — by the
compiled engine's solve (:func:`wmr_dynamics.compiled.kinematics.velocity_solve`, with its joint-limit active
set); collision, forward kinematics and the Jacobians are the compiled kernels too.
Only wheels in contact constrain the motion (§2.2.2); the rows are weighted (the contact set, the weights
and why: :mod:`wmr_dynamics.kinematics.contact_set`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics import spatial
from wmr_dynamics.collision import Contacts, wheel_contacts
from wmr_dynamics.compiled.collision import _model_data
from wmr_dynamics.errors import ModelError
from wmr_dynamics.kinematics.contact_set import update_contact_set
from wmr_dynamics.kinematics.fk import check_state, forward_kinematics
from wmr_dynamics.kinematics.jacobians import joint_constraint_residual, wheel_jacobians
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain


@dataclass(frozen=True)
class KinematicState:
    """Everything the constraint system needs at one state q (kept so callers do not recompute it).

    Attributes:
        q: the state.  T_world: (nf, 4, 4) frame transforms.  contacts: wheel contacts.
        A_wheel: (3 nw, ndof) stacked wheel Jacobians (eq. 2.24).  c_joint: (nc,) joint-constraint
            residuals (eq. 2.25).  A: [A_wheel; A_joint] (eq. 2.34).
    """

    q: NDArray
    T_world: NDArray
    contacts: Contacts
    A_wheel: NDArray
    c_joint: NDArray
    A: NDArray


def evaluate(model: WmrModel, q: ArrayLike, terrain: Terrain) -> KinematicState:
    """Forward kinematics, collision detection and Jacobians at state q (the first three blocks of Fig. 2.6)."""
    q = check_state(model, q)
    T = forward_kinematics(model, q)
    contacts = wheel_contacts(model, T, terrain)
    A_wheel = wheel_jacobians(model, T, contacts)
    return KinematicState(q, T, contacts, A_wheel, joint_constraint_residual(model, q),
                          np.vstack([A_wheel, model.A_joint]))


@dataclass(frozen=True)
class VelocitySolution:
    """Result of eq. 2.38.

    Attributes:
        qvel: joint-space velocity q̇' = [ω_b; v_b; θ̇] (rad/s, m/s, body coordinates).
        v_contact: (nw, 3) contact-point velocities A_wheel q̇' in contact-frame coordinates (m/s):
            x, y are the slip velocities; z the normal velocity (−σΔz when satisfied).
        residual: A q̇' − v, the part of the constraints the least-squares solution could not meet
            (slip the kinematics had to accept; zero when the constraints are consistent), lifted wheels'
            rows weighted as in the solve.
    """

    qvel: NDArray
    v_contact: NDArray
    residual: NDArray

    @property
    def slip_speed(self) -> NDArray:
        """(nw,) ‖v_c‖ per wheel, m/s (Table 2.4's 'contact point velocity')."""
        return np.linalg.norm(self.v_contact, axis=1)


class ContactRows(NamedTuple):
    """The contact set at one state and the row weights it gives eq. 2.38 (:mod:`~wmr_dynamics.kinematics.
    contact_set`): ``in_contact`` (nw,) bool, ``weight`` (nw, 2) each wheel's (slip-row, normal-row) weight."""

    in_contact: NDArray
    weight: NDArray


def contact_rows(ks: KinematicState, in_contact: NDArray | None = None, qvel_prev: NDArray | None = None,
                 sigma: float = 1.0) -> ContactRows:
    """The contact set at ``ks``, advanced from the previous step's set ``in_contact`` (nw,) bool (updated in
    place; :func:`~wmr_dynamics.kinematics.contact_set.update_contact_set`), a lifted wheel's Δz predicted 1/σ s
    ahead (σ, 1/s) under the previous step's q̇' ``qvel_prev``.  Without a carried set every wheel counts as
    having been in contact (the wheels within ``CONTACT_OFF_M`` of the ground)."""
    nw = ks.contacts.dz.shape[0]
    state = np.ones(nw, dtype=bool) if in_contact is None else in_contact
    dz = np.ascontiguousarray(ks.contacts.dz, dtype=float)
    dz_pred = dz if qvel_prev is None else dz + (ks.A_wheel[2::3] @ qvel_prev) / sigma
    weight = np.ones((nw, 2))
    update_contact_set(dz, np.ascontiguousarray(dz_pred, dtype=float), state, weight)
    return ContactRows(state.copy(), weight)


def solve_velocity(model: WmrModel, ks: KinematicState, known: ArrayLike, known_values: ArrayLike,
                   sigma: float, slip_xy: NDArray | None = None, contact: ContactRows | None = None
                   ) -> VelocitySolution:
    """Solve the stabilized constraint system for the unknown part of q̇' (eqs. 2.35–2.38).

    Args:
        model: the WMR model.  ks: :func:`evaluate` at the current state.
        known: joint-space indices whose values are given (e.g. actuated joints, eq. 2.37).
        known_values: their values (rad/s, m/s).
        sigma: Baumgarte gain σ (1/s), 0 < σ ≤ 1/Δt (eq. 2.35).
        slip_xy: optional (nw, 2) prescribed contact slip velocities (m/s), e.g. from enhanced
            kinematics (eq. 2.52); zero (no slip) by default.
        contact: the contact set and row weights (:func:`contact_rows`; only wheels in contact constrain
            the motion, §2.2.2); default :func:`contact_rows` of ``ks`` without history.
    """
    return _solve(model, ks, known, known_values, sigma, slip_xy, contact, -1)


def _solve(model: WmrModel, ks: KinematicState, known: ArrayLike, known_values: ArrayLike, sigma: float,
           slip_xy: NDArray | None, contact: ContactRows | None, rounds: int) -> VelocitySolution:
    """The weighted system of eqs. 2.34–2.36 at ``ks`` assembled and solved (eqs. 2.37–2.38) by the compiled
    engine's :func:`~wmr_dynamics.compiled.kinematics.velocity_solve` (``rounds`` ≥ 0: with the joint limits as
    hard stops)."""
    from wmr_dynamics.compiled.kinematics import kinematic_workspace, velocity_solve

    known = np.asarray(known, dtype=np.int64).reshape(-1)
    known_values = np.asarray(known_values, dtype=float)
    if known.shape != known_values.shape:
        raise ModelError(f"known_values: expected {known.shape[0]} values, got shape {known_values.shape}")
    if not np.all(np.isfinite(known_values)):
        raise ModelError(f"known joint-space velocities contain NaN or inf: {known_values.tolist()}")
    if known.size and (known.min() < 0 or known.max() >= model.num_dof):
        raise ModelError(f"known: joint-space indices must be in 0..{model.num_dof - 1}, got {known.tolist()}")
    nw = model.num_wheels
    contact = contact_rows(ks) if contact is None else contact
    md = _model_data(model)
    ws = kinematic_workspace(md)
    ws.A[:3 * nw] = ks.A_wheel  # the kernel weights the rows and builds v (eqs. 2.35-2.36)
    ws.dz[:] = ks.contacts.dz
    ws.in_contact[:] = contact.in_contact
    ws.row_weight[:] = contact.weight
    ws.known[:] = False
    ws.known[known] = True
    ws.value[known] = known_values
    slip = np.zeros((nw, 2)) if slip_xy is None else np.ascontiguousarray(slip_xy, dtype=float).reshape(nw, 2)
    if not velocity_solve(md, ws, np.ascontiguousarray(ks.q, dtype=float), float(sigma), slip, int(rounds)):
        raise ModelError(f"kinematic velocity solve of '{model.name}' failed: the constraint system is all zero "
                         "or not finite")
    qvel = ws.qvel.copy()
    return VelocitySolution(qvel=qvel, v_contact=(ks.A_wheel @ qvel).reshape(nw, 3), residual=ws.A @ qvel - ws.v)


def solve_velocity_limited(model: WmrModel, ks: KinematicState, known: ArrayLike, known_values: ArrayLike,
                           sigma: float, slip_xy: NDArray | None = None, max_rounds: int = 4,
                           contact: ContactRows | None = None) -> VelocitySolution:
    """:func:`solve_velocity` with the URDF joint limits as hard stops (an active set; not in the thesis).

    A joint whose solved or commanded rate would carry it past a limit within the Baumgarte horizon 1/σ (one
    step at σ = 1/Δt) is moved to the known set with the rate σ·(limit − θ) that brings it exactly to the
    limit — or back inside, if it was out (Baumgarte, as eq. 2.36) — and the system is solved again, at most
    ``max_rounds`` times (the compiled engine's active set).
    """
    if max_rounds < 0:
        raise ModelError(f"max_rounds must be >= 0, got {max_rounds}")
    return _solve(model, ks, known, known_values, sigma, slip_xy, contact, int(max_rounds))


def actuated_indices(model: WmrModel) -> NDArray:
    """Joint-space indices of the actuated joints (frame i → index i + 5)."""
    return np.flatnonzero(model.actuated) + 5


# ---- terrain contact initialization (§2.2.4) ------------------------------------------------------------
def _free_map(model: WmrModel, q: NDArray, free_joints: NDArray) -> NDArray:
    """dq̇'/dx for the free states x = [z, roll, pitch, passive θ] (eqs. 2.29–2.31): ndof × nfree."""
    rpy = spatial.quat_to_rpy(q[:4])
    R = spatial.quat_to_rot(q[:4])
    M = np.zeros((model.num_dof, 3 + len(free_joints)))
    M[3:6, 0] = R[2, :]  # world z expressed in body coordinates
    # body angular velocity of Euler-rate changes with yaw held (R = Rz Ry Rx, App. A)
    cr, sr = np.cos(rpy[0]), np.sin(rpy[0])
    M[0:3, 1] = (1.0, 0.0, 0.0)
    M[0:3, 2] = (0.0, cr, -sr)
    for k, j in enumerate(free_joints):
        M[6 + j, 3 + k] = 1.0
    return M


def _apply(q: NDArray, x_step: NDArray, free_joints: NDArray) -> NDArray:
    out = q.copy()
    rpy = spatial.quat_to_rpy(q[:4]) + np.r_[x_step[1], x_step[2], 0.0]
    out[:4] = spatial.rpy_to_quat(rpy)
    out[6] += x_step[0]
    out[7 + free_joints] += x_step[3:]
    return out


def initialize_contact(model: WmrModel, q0: ArrayLike, terrain: Terrain, tol: float = 1e-5,
                       max_iter: int = 100) -> NDArray:
    """Put the wheels on the terrain: Newton (Gauss–Newton) with a backtracking line search (§2.2.4).

    Free states (eq. 2.27): body z, roll, pitch and the passive joints other than wheel spin; x, y, yaw and
    actuated joints stay as in ``q0``.  Minimizes L = ‖[Δz; c]‖² (eq. 2.28 with the holonomic joint
    constraints appended) using the wheel Jacobians' normal rows (eqs. 2.29–2.32).  When the free states
    can put every wheel on the ground (rocker-bogies, articulated axles) the result has |Δz| < ``tol``; a
    vehicle with more wheels than free states (a rigid six-wheeler on rough ground) ends at the
    least-squares optimum instead.

    Args:
        tol: stop when every |Δz| and |c| is below this (m or rad), or when a step no longer lowers L.
    Returns:
        The initialized state.
    Raises:
        ModelError: the terrain gave no finite contact (e.g. the start pose is far off the map).
    """
    q = check_state(model, q0).copy()
    # passive joints, except wheel spin (a round wheel's rotation does not move its contact)
    passive = ~model.actuated.copy()
    passive[model.wheel_frame] = False
    free_joints = np.flatnonzero(passive[1:])
    nw = model.num_wheels

    def residual(state: NDArray) -> tuple[NDArray, KinematicState]:
        ks = evaluate(model, state, terrain)
        return np.r_[ks.contacts.dz, ks.c_joint], ks

    e, ks = residual(q)
    for _ in range(max_iter):
        if np.abs(e).max() < tol:
            break
        A_z = np.vstack([ks.A_wheel[2:3 * nw:3], model.A_joint])  # eq. 2.32 and the joint rows
        J = A_z @ _free_map(model, q, free_joints)
        dx = -np.linalg.lstsq(J, e, rcond=1e-9)[0]
        cost, alpha = e @ e, 1.0
        slope = 2.0 * e @ (J @ dx)  # directional derivative of L along dx (negative)
        while alpha > 1e-6:  # backtracking line search with the Armijo condition (App. D, simplified)
            q_try = _apply(q, alpha * dx, free_joints)
            e_try, ks_try = residual(q_try)
            if e_try @ e_try <= cost + 1e-4 * alpha * slope:
                break
            alpha *= 0.5
        else:
            break  # no descent left: a least-squares optimum
        q, e, ks = q_try, e_try, ks_try
        if cost - e @ e < 1e-14 * max(cost, 1e-12):
            break
    if not np.all(np.isfinite(e)):
        raise ModelError(f"contact initialization of '{model.name}': non-finite contact height errors")
    return q


def actuation_kinematics(model: WmrModel, ks: KinematicState, v: float, omega: float, sigma: float,
                         held_joints: dict[int, float] | None = None,
                         in_contact: NDArray | None = None) -> VelocitySolution:
    """Actuation (inverse) kinematics: actuated joint rates that realize a body velocity (eq. 2.37 reversed).

    Known: the body's forward speed ``v`` (m/s, body x) and yaw rate ``omega`` (rad/s, body z), plus any
    joint rates in ``held_joints`` (joint-space index → rate).  Unknown: the other body velocity components
    and every other joint rate, solved by least squares (eq. 2.38) so that the wheels roll without slip as
    far as the mechanism allows (Auchter et al.'s inverse kinematics).  The actuated joint commands are
    ``solution.qvel[actuated_indices(model)]``.  ``in_contact``: the contact set carried from the previous
    call, (nw,) bool, advanced in place (:func:`contact_rows`).
    """
    held = held_joints or {}
    known = np.array([2, 3, *held.keys()], dtype=np.int64)
    values = np.array([omega, v, *held.values()], dtype=float)
    return solve_velocity(model, ks, known, values, sigma, contact=contact_rows(ks, in_contact))


def navigation_kinematics(model: WmrModel, ks: KinematicState, joint_rates: ArrayLike, sigma: float,
                          gyro: ArrayLike | None = None, in_contact: NDArray | None = None) -> VelocitySolution:
    """Navigation (forward) kinematics for odometry and simulation (§2.2.5, eq. 2.37).

    Known: the actuated joint rates (encoders, rad/s or m/s, in ``model.actuated_joint_names`` order) and,
    if given, the body angular velocity measured by a gyroscope (rad/s, body axes).  Unknown: the rest of
    the body velocity and the passive joint rates, by least squares (eq. 2.38).  ``in_contact``: the
    contact set carried from the previous call, (nw,) bool, advanced in place (:func:`contact_rows`).
    """
    act = actuated_indices(model)
    rates = np.asarray(joint_rates, dtype=float)
    if rates.shape != act.shape:
        raise ModelError(f"joint_rates: expected {act.size} actuated joint rates "
                         f"({', '.join(model.actuated_joint_names)}), got shape {rates.shape}")
    contact = contact_rows(ks, in_contact)
    if gyro is None:
        return solve_velocity(model, ks, act, rates, sigma, contact=contact)
    w = np.asarray(gyro, dtype=float)
    if w.shape != (3,):
        raise ModelError(f"gyro: expected the 3 body angular velocity components (rad/s), got shape {w.shape}")
    return solve_velocity(model, ks, np.r_[0, 1, 2, act], np.r_[w, rates], sigma, contact=contact)
