"""The unconstrained kinematic baseline of thesis §2.5.1: free motion, then terrain fitting (Tarokh & McDermott).

Each step of the traditional method integrates a nominal joint-space velocity q̇' for Δt (eq. 2.39), keeps the
resulting x, y and yaw, and re-fits the other pose states — z, roll, pitch and the passive joints — to the
terrain by minimizing the contact error objective of §2.2.4,

    L(x) = Σ_wheels Δz² + ‖c‖²   (m²),   x = [z (m), roll, pitch (rad), free joint angles (rad or m)],

with Δz the wheels' contact height errors (eq. 2.8) and c the joint-constraint residuals (eq. 2.26).  Two fits:

- ``"newton"``: the library's own §2.2.4 minimization, :func:`wmr_dynamics.kinematics.initialize_contact`
  (Gauss–Newton with a line search on the wheel Jacobians; the thesis notes this would shrink the speed gap);
- ``"nelder-mead"``: the thesis's method, a derivative-free Nelder–Mead search as MATLAB's ``fminsearch``
  (:func:`scipy.optimize.minimize` with ``method="Nelder-Mead"``, fminsearch's coefficients and stopping test),
  over the same free states, warm-started from the free-motion pose (:func:`nelder_mead_fit`).

Also here: the joint-space velocity implied by two consecutive states (:func:`implied_velocity`, the inverse of
:func:`~wmr_dynamics.kinematics.euler_step`) and the contact-point velocities a state sequence implies
(:func:`contact_velocities`) — how the baseline's slip is measured, since it never solves for a velocity.

Every evaluation of L is one collision evaluation, made through ``wmr_dynamics.kinematics.dae.wheel_contacts``
(looked up at call time), so that instrumentation wrapping that function (e.g.
:class:`wmr_dynamics.scenarios.table_2_4_rocky7.ContactCounter`) counts the fit's work alongside the DAE's.
"""

from __future__ import annotations

import time

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize

from wmr_dynamics import spatial
from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.kinematics import dae as _dae
from wmr_dynamics.kinematics import (
    euler_step,
    forward_kinematics,
    initialize_contact,
    joint_constraint_residual,
    wheel_jacobians,
)
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain

FITS = ("newton", "nelder-mead")

# Nelder–Mead settings (fminsearch's names in brackets).  Chosen so that the fit is as good as the Newton fit's
# 1e-5 m tolerance (docs/table_2_4.md, "settings sweep").
NM_XATOL = 1e-5  # m or rad: simplex size at convergence [TolX; fminsearch's default is 1e-4]
NM_FATOL = 1e-10  # m²: spread of L over the simplex at convergence [TolFun; default 1e-4]
NM_SIMPLEX_STEP = 0.01  # m or rad: initial simplex x0 + h e_i.  fminsearch's default (x0_i · 1.05) hardly moves
#                         a coordinate that is near zero at the warm start (the roll of a nearly level rover)
NM_MAXFEV_PER_VAR = 200  # [MaxFunEvals = MaxIter = 200 · number of variables, fminsearch's default]
NM_RESTART_L = 1e-10  # m²: restart (fresh simplex at the result) while L exceeds this, i.e. while some |Δz|
#                       may exceed 1e-5 m (the Newton fit's tolerance); a stalled simplex is NM's known failure
NM_RESTARTS = 3  # at most this many restarts per step


def free_joint_indices(model: WmrModel) -> NDArray:
    """Joint indices (into ``q[7:]``) of the passive joints other than wheel spin: the fit's free joints, as in
    :func:`~wmr_dynamics.kinematics.initialize_contact` (Rocky 7: both rockers and both bogies)."""
    passive = ~model.actuated.copy()
    passive[model.wheel_frame] = False
    return np.flatnonzero(passive[1:])


def free_states(q: NDArray, free_joints: NDArray) -> NDArray:
    """x = [z (m), roll, pitch (rad), free joint angles] of state ``q``."""
    rpy = spatial.quat_to_rpy(q[:4])
    return np.r_[q[6], rpy[0], rpy[1], q[7 + free_joints]]


def with_free_states(q: NDArray, x: NDArray, free_joints: NDArray, yaw: float) -> NDArray:
    """State ``q`` with its free states replaced by ``x``; x, y, ``yaw`` (rad, given) and the other joints kept."""
    out = q.copy()
    out[:4] = spatial.rpy_to_quat((x[1], x[2], yaw))
    out[6] = x[0]
    out[7 + free_joints] = x[3:]
    return out


def fit_objective(model: WmrModel, terrain: Terrain, q: NDArray, x: NDArray, free_joints: NDArray,
                  yaw: float) -> float:
    """L(x) = Σ Δz² + ‖c‖² (m², §2.2.4) at state ``q`` with free states ``x``; ``inf`` where not finite.

    One collision evaluation (forward kinematics + ``dae.wheel_contacts``), no Jacobians.
    """
    s = with_free_states(q, x, free_joints, yaw)
    dz = _dae.wheel_contacts(model, forward_kinematics(model, s), terrain).dz
    c = joint_constraint_residual(model, s)
    L = float(dz @ dz + c @ c)
    return L if np.isfinite(L) else np.inf


def nelder_mead_fit(model: WmrModel, q: NDArray, terrain: Terrain, xatol: float = NM_XATOL,
                    fatol: float = NM_FATOL, simplex_step: float | None = NM_SIMPLEX_STEP,
                    restarts: int = NM_RESTARTS, restart_L: float = NM_RESTART_L) -> tuple[NDArray, int]:
    """Terrain fitting with derivative-free Nelder–Mead (the thesis's ``fminsearch``), started from ``q``.

    Minimizes :func:`fit_objective` over z, roll, pitch and the free joints with x, y, yaw kept.  Initial
    simplex x0 + h·e_i with h = ``simplex_step`` (m or rad), or fminsearch's / scipy's default (5% of each
    nonzero coordinate) with ``None``.  Stops when the simplex is within ``xatol`` (m or rad) and its L values
    within ``fatol`` (m²) of the best vertex, or after 200 evaluations per variable (fminsearch's defaults);
    then restarts from the result (at most ``restarts`` times) while L > ``restart_L`` (m²).

    Returns:
        The fitted state and the number of restarts used.
    """
    free_joints = free_joint_indices(model)
    yaw = float(spatial.quat_to_rpy(q[:4])[2])
    x = free_states(q, free_joints)
    nx = len(x)
    opts: dict = {"xatol": xatol, "fatol": fatol, "maxfev": NM_MAXFEV_PER_VAR * nx,
                  "maxiter": NM_MAXFEV_PER_VAR * nx}
    used = 0
    for attempt in range(restarts + 1):
        if simplex_step is not None:
            opts["initial_simplex"] = np.vstack([x, x + simplex_step * np.eye(nx)])
        res = minimize(lambda xx: fit_objective(model, terrain, q, xx, free_joints, yaw), x,
                       method="Nelder-Mead", options=opts)
        x = res.x
        used = attempt
        if res.fun <= restart_L:
            break
    return with_free_states(q, x, free_joints, yaw), used


def unconstrained_states(model: WmrModel, terrain: Terrain, q0: NDArray, qvel: NDArray, dt: float, steps: int,
                         fit: str = "newton", nm_options: dict | None = None) -> tuple[NDArray, float, int]:
    """The Tarokh–McDermott method for ``steps`` steps of ``dt`` (s) from ``q0`` with the nominal q̇' ``qvel``
    (held constant; body coordinates, eq. 2.13): Euler step (eq. 2.39), keep x, y, yaw, re-fit the rest.

    Args:
        fit: ``"newton"`` (:func:`~wmr_dynamics.kinematics.initialize_contact`) or ``"nelder-mead"``
            (:func:`nelder_mead_fit`, keyword arguments from ``nm_options``).
    Returns:
        The (steps+1, nq) states, the wall time of the loop (s) and the number of Nelder–Mead restarts.
    """
    if fit not in FITS:
        raise ValueError(f"fit must be one of {FITS}, got {fit!r}")
    Q = np.empty((steps + 1, model.num_states))
    q = np.asarray(q0, dtype=float)
    qvel = np.asarray(qvel, dtype=float)
    restarts = 0
    nm_options = nm_options or {}
    start = time.perf_counter()
    for k in range(steps):
        Q[k] = q
        # x, y, yaw of the free motion are kept; z, roll, pitch and the passive joints are re-fitted
        if fit == "newton":
            q = initialize_contact(model, euler_step(q, qvel, dt), terrain)
        else:
            q, used = nelder_mead_fit(model, euler_step(q, qvel, dt), terrain, **nm_options)
            restarts += used
    wall = time.perf_counter() - start
    Q[steps] = q
    return Q, wall, restarts


def _quat_mul(a: NDArray, b: NDArray) -> NDArray:
    """Hamilton product of quaternions (x, y, z, w)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz])


def implied_velocity(q0: NDArray, q1: NDArray, dt: float) -> NDArray:
    """The joint-space velocity q̇' = [ω_b; v_b; θ̇] that :func:`~wmr_dynamics.kinematics.euler_step` maps from
    ``q0`` to ``q1`` in ``dt`` (s).

    ω_b (rad/s) from the body-frame relative rotation q0⁻¹ ⊗ q1 (axis × angle / dt), v_b = R(q0)ᵀ Δp / dt
    (m/s, body coordinates), joint rates by finite difference.
    """
    dq = _quat_mul(q0[:4] * np.array([-1.0, -1.0, -1.0, 1.0]), q1[:4])
    if dq[3] < 0:
        dq = -dq
    s = np.linalg.norm(dq[:3])
    angle = 2.0 * np.arctan2(s, dq[3])
    omega = dq[:3] * (angle / s if s > 1e-15 else 2.0) / dt
    v = spatial.quat_to_rot(q0[:4]).T @ (q1[4:7] - q0[4:7]) / dt
    return np.r_[omega, v, (q1[7:] - q0[7:]) / dt]


def contact_velocities(model: WmrModel, terrain: Terrain, Q: NDArray, dt: float
                       ) -> tuple[NDArray, NDArray, NDArray]:
    """What a state sequence ``Q`` (n+1, nq) spaced ``dt`` (s) implies at the contacts.

    Returns:
        ‖v_c‖ (n, nw) m/s — the wheel Jacobians (Alg. 2) at q[k] times :func:`implied_velocity` of q[k] → q[k+1];
        the contact points (n+1, nw, 3), world, m; the contact height errors Δz (n+1, nw), m.
    """
    n = len(Q) - 1
    speed = np.empty((n, model.num_wheels))
    points = np.empty((n + 1, model.num_wheels, 3))
    dz = np.empty((n + 1, model.num_wheels))
    for k in range(n + 1):
        T = forward_kinematics(model, Q[k])
        contacts = wheel_contacts(model, T, terrain)
        points[k], dz[k] = contacts.points, contacts.dz
        if k < n:
            A = wheel_jacobians(model, T, contacts)
            speed[k] = np.linalg.norm((A @ implied_velocity(Q[k], Q[k + 1], dt)).reshape(-1, 3), axis=1)
    return speed, points, dz
