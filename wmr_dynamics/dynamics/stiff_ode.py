"""The conventional baseline of thesis §2.4.1 / §2.5.2: unconstrained dynamics (eq. 2.53) with contact,
actuator and joint-constraint forces added directly, integrated by a stiff adaptive solver (SciPy BDF/Radau).

    M(q) q̈' = τ_act + τ_spring − c(q, q̇') + A_wheelᵀ f_c(v_c, Rω, Δz) + A_jointᵀ f_joint

Contact forces enter as generalized forces A_wheelᵀ f (virtual power: f · v_c = f · A_wheel q̇').  The
actuators are PI controllers on the joint rates (the thesis's ramp test uses a P actuator); their
integral states are ODE states.  This is the "stiff ODE" the DAE formulation is compared with.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray
from scipy.integrate import solve_ivp

from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.dynamics.force_balance import joint_rows
from wmr_dynamics.dynamics.rigid_body import _crba, _plucker_all, _rnea
from wmr_dynamics.errors import ModelError
from wmr_dynamics.kinematics.fk import _forward_kinematics
from wmr_dynamics.kinematics.jacobians import wheel_jacobians
from wmr_dynamics.kinematics.state import state_rate
from wmr_dynamics.model import G, WmrModel
from wmr_dynamics.terrain import Terrain


@dataclass
class OdeResult:
    """Samples of a stiff-ODE run at the requested times."""

    t: NDArray
    q: NDArray
    qvel: NDArray
    wall_time_s: float
    n_rhs: int  # right-hand-side evaluations (the solver's cost)
    method: str


def simulate_stiff_ode(model: WmrModel, terrain: Terrain, contact: object, command: Callable[[float, NDArray], NDArray],
                       q0: NDArray, duration: float, kp: float, ki: float = 0.0, method: str = "BDF",
                       rtol: float = 1e-6, atol: float = 1e-8, sample_dt: float = 0.01,
                       max_step: float = np.inf) -> OdeResult:
    """Integrate eq. 2.53 with forces added directly (the thesis's stiff-ODE comparison, §2.5.2).

    Args:
        contact: wheel–ground contact model with ``evaluate(v_c, Rω, Δz)`` (eq. 2.71).
        command: (t, q) → actuated joint rate commands (rad/s), e.g. a controller of the body velocity.
        q0: initial state (q̇' = 0 initially).
        kp, ki: PI actuator gains (N·m per rad/s, N·m per rad) on every actuated joint.
        method: ``"BDF"`` or ``"Radau"`` (SciPy's stiff solvers).  sample_dt: output spacing, s.
    """
    if method not in ("BDF", "Radau", "LSODA"):
        raise ModelError(f"method must be a stiff solver: BDF, Radau or LSODA; got {method!r}")
    m = model
    nq, n, nf = m.num_states, m.num_dof, m.num_frames
    act = np.flatnonzero(m.actuated) + 5
    wheel_cols = m.wheel_frame + 5
    jr = joint_rows(m)  # constraints and springs, each with its joint model (eq. 2.74)
    if any(law is None for law in jr.models):
        raise ModelError(f"{m.name}: the stiff-ODE baseline needs a spring-damper model (eq. 2.74) for every joint "
                         "constraint; set stiffness/damping in the vehicle YAML")
    counter = [0]

    def rhs(t: float, y: NDArray) -> NDArray:
        counter[0] += 1
        q, qvel, integ = y[:nq].copy(), y[nq:nq + n], y[nq + n:]
        q[:4] /= np.linalg.norm(q[:4])
        T_parent, T_world = np.empty((nf, 4, 4)), np.empty((nf, 4, 4))
        _forward_kinematics(m.parent, m.joint_type, m.T0, q, T_parent, T_world)
        X = np.zeros((nf, 6, 6))
        _plucker_all(T_parent, X)
        M = np.empty((n, n))
        _crba(m.parent, m.joint_type, m.I_spatial, X, np.empty((nf, 6, 6)), M)
        c = np.empty(n)
        _rnea(m.parent, m.joint_type, m.I_spatial, X, T_world[0, :3, :3], qvel, np.zeros(n), G, np.zeros((nf, 6)),
              np.empty((nf, 6)), np.empty((nf, 6)), np.empty((nf, 6)), c)
        contacts = wheel_contacts(m, T_world, terrain)
        A_w = wheel_jacobians(m, T_world, contacts)
        vc = (A_w @ qvel).reshape(-1, 3)
        f_c = contact.evaluate(vc, m.wheel_radii * qvel[wheel_cols], contacts.dz)[0]
        tau = A_w.T @ f_c.ravel() - c
        if jr.models:
            cj, cj_dot = jr.A[:, 6:] @ q[7:] - jr.b, jr.A @ qvel
            f_j = [law.evaluate(cj[k:k + 1], cj_dot[k:k + 1])[0][0] for k, law in enumerate(jr.models)]
            tau += jr.A.T @ np.asarray(f_j)
        err = command(t, q) - qvel[act]
        tau[act] += kp * err + ki * integ
        qacc = sla.cho_solve(sla.cho_factor(M), tau)
        return np.r_[state_rate(q, qvel), qacc, err]

    y0 = np.r_[q0, np.zeros(n), np.zeros(act.size)]
    t_eval = np.arange(0.0, duration + 1e-12, sample_dt)
    start = time.perf_counter()
    try:
        sol = solve_ivp(rhs, (0.0, duration), y0, method=method, t_eval=t_eval, rtol=rtol, atol=atol,
                        max_step=max_step)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError) as e:
        raise ModelError(f"stiff ODE solver {method} failed (rtol={rtol}, atol={atol}): {e}; the contact forces "
                         "make the system stiff — tighten the tolerances or limit max_step") from None
    wall = time.perf_counter() - start
    if not sol.success:
        raise ModelError(f"stiff ODE solver {method} failed: {sol.message}")
    Y = sol.y.T
    q = Y[:, :nq]
    q[:, :4] /= np.linalg.norm(q[:, :4], axis=1, keepdims=True)
    return OdeResult(sol.t, q, Y[:, nq:nq + n], wall, counter[0], method)
