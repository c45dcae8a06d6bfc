"""Constrained dynamics with force-balance optimization (thesis §2.4.2–2.4.4, eqs. 2.53–2.89).

One time step at (q, q̇'[i]):

1. M (CRBA, Alg. 3), c (RNEA, Alg. 4, or the fused-body approximation eq. 2.89);
2. A = [A_wheel; A_act; A_joint] (eq. 2.55; A_joint also holds a unit row per joint spring); a linearly
   independent subset ``indep`` by QR with column pivoting (eqs. 2.66–2.68).  "Rigid" rows — ideal
   actuators (§2.4.4) and joint constraints without a model — are always kept and are not optimized; the
   others are tested after projecting them out;
3. force balance: find the velocities x = v(input) (eq. 2.75) at which the constraint forces λ (eqs.
   2.79–2.81) equal the model forces — contact (eq. 2.71), actuator (2.73), joint (2.74) — evaluated at the
   next step's velocities (eq. 2.83): minimize ‖e‖², e = A_Iᵀλ − Aᵀ f_model (eqs. 2.76–2.78), projected
   off the rigid rows' force directions, by Gauss–Newton (eq. 2.84) with the strong-Wolfe line search
   (App. D), warm-started from the current velocities;
4. q̈' (eq. 2.82), then symplectic Euler (eqs. 2.85–2.86).

Sign convention: λ and model forces are forces *on the robot* along the constraint directions, so
M q̈' = τ − c + A_Iᵀ λ (eqs. 2.69, 2.82 with λ the force on the robot).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray

from wmr_dynamics.collision import wheel_contacts
from wmr_dynamics.dynamics.line_search import strong_wolfe
from wmr_dynamics.dynamics.rigid_body import _crba, _plucker_all, _rnea
from wmr_dynamics.errors import ModelError
from wmr_dynamics.kinematics.fk import _forward_kinematics
from wmr_dynamics.kinematics.jacobians import wheel_jacobians
from wmr_dynamics.kinematics.state import euler_step
from wmr_dynamics.model import G, WmrModel
from wmr_dynamics.terrain import Terrain


@dataclass
class DynamicsOptions:
    """Settings of the dynamic model (thesis §2.4.3–2.4.4).

    Attributes:
        contact: wheel–ground contact model (``wmr_dynamics.contact_models``), eq. 2.71.
        actuator: actuator model (eq. 2.73); ``None`` = ideal actuators (joint rates = commands, §2.4.4).
        max_iterations: Newton iterations per step (1 = the non-iterative variant of §2.4.4).
        tolerance: stop when ‖e‖ (N, N·m) is below this fraction of the vehicle's weight.
        qr_tolerance: |R(i, i)| threshold of eq. 2.68, relative to the largest.
        constant_mass_matrix: compute M once and reuse it (§2.4.4).
        approximate_bias: fused-body bias force, eq. 2.89, instead of the RNEA.
        collision_samples: coarse samples of each wheel's circle in the contact search
            (``collision.wheel_contacts``'s ``n_samples``, ≥ 8); fewer is faster, 36 (10°) finds step edges.
    """

    contact: object
    actuator: object | None = None
    max_iterations: int = 20
    tolerance: float = 1e-7
    qr_tolerance: float = 1e-9
    constant_mass_matrix: bool = False
    approximate_bias: bool = False
    collision_samples: int = 36

    @classmethod
    def from_config(cls, model: WmrModel, contact: str | None = None, actuator: str | None = None,
                    **overrides) -> DynamicsOptions:
        """Options from the vehicle YAML (``contact:``, ``actuators:``), optionally overriding the contact
        model name ("linear", "pacejka", "ishigami", "ding") and the actuator ("ideal", "pi")."""
        from wmr_dynamics.actuators import actuator_from_config
        from wmr_dynamics.contact_models import contact_model_from_config

        cfg_c = dict(model.config.get("contact") or {})
        if contact is not None and contact != cfg_c.get("model", "linear"):
            cfg_c = {"model": contact}  # another model: its own defaults (kp from the vehicle's mass)
        cfg_a = dict(model.config.get("actuators") or {"model": "ideal"})
        if actuator is not None:
            cfg_a["model"] = actuator
        act = actuator_from_config(cfg_a, len(model.actuated_joint_names))
        return cls(contact=contact_model_from_config(cfg_c, model.wheel_radii, model.wheel_widths,
                                                     mass=model.total_mass, n_wheels=model.num_wheels),
                   actuator=None if getattr(act, "ideal", False) else act, **overrides)


@dataclass
class StepResult:
    """One dynamic step: new state and velocity, and diagnostics (forces in contact-frame coordinates)."""

    q: NDArray
    qvel: NDArray
    qacc: NDArray
    contact_force: NDArray  # (nw, 3) model contact forces on the wheels, N
    contact_points: NDArray  # (nw, 3) world contact points at the step start, m
    dz: NDArray  # (nw,) contact height error at the step start, m
    v_contact: NDArray  # (nw, 3) contact-point velocities at the step end, m/s
    slip_ratio: NDArray  # (nw,)
    slip_angle: NDArray  # (nw,) rad
    iterations: int
    cost: float  # final ‖e‖, N
    n_indep: int
    converged: bool = True  # ‖e‖ reached the tolerance (or at most 0.1 % of the weight)
    substeps: int = 1  # > 1 when the step was retaken as shorter steps


@dataclass
class _Cache:
    M: NDArray | None = None
    prev: dict = field(default_factory=dict)


class ForceBalance:
    """The dynamic model of one vehicle: call :meth:`step` once per time step."""

    def __init__(self, model: WmrModel, terrain: Terrain, options: DynamicsOptions) -> None:
        self.model, self.terrain, self.opt = model, terrain, options
        m = model
        self.act_cols = np.flatnonzero(m.actuated) + 5
        self.wheel_cols = m.wheel_frame + 5
        # Joint rows: the holonomic constraints (eq. 2.26) and one unit row per joint spring, each with its
        # spring-damper model (eq. 2.74) enforced through the force balance — implicitly, so stiff springs on
        # light joints stay stable at large steps.  A constraint without a model is rigid.
        springs = [(m.joint_index(j), s) for j, s in m.joint_springs.items()]
        A_s = np.zeros((len(springs), m.num_dof))
        for r, (j, _) in enumerate(springs):
            A_s[r, 6 + j] = 1.0
        self.A_joint = np.vstack([m.A_joint, A_s])
        self.b_joint = np.r_[m.b_joint, [s.rest for _, s in springs]]
        k = np.r_[[c.stiffness if c.stiffness is not None else np.nan for c in m.joint_constraints],
                  [s.stiffness for _, s in springs]]
        d = np.r_[[c.damping if c.damping is not None else 0.0 for c in m.joint_constraints],
                  [s.damping for _, s in springs]]
        self.joint_rigid = np.isnan(k)
        self.joint_k, self.joint_d = np.nan_to_num(k), d
        self.weight = m.total_mass * G
        self.ideal = options.actuator is None
        self.cache = _Cache()
        if int(options.collision_samples) != options.collision_samples or options.collision_samples < 8:
            raise ModelError(f"collision_samples must be an integer >= 8, got {options.collision_samples!r}")
        if options.max_iterations < 1:
            raise ModelError(f"max_iterations must be >= 1, got {options.max_iterations}")

    # ---- per-step quantities ---------------------------------------------------------------------------
    def _mass_and_bias(self, q: NDArray, qvel: NDArray, T_parent: NDArray, T_world: NDArray) -> tuple:
        m = self.model
        X = np.zeros((m.num_frames, 6, 6))
        _plucker_all(T_parent, X)
        if self.cache.M is None or not self.opt.constant_mass_matrix:
            M = np.empty((m.num_dof, m.num_dof))
            _crba(m.parent, m.joint_type, m.I_spatial, X, np.empty((m.num_frames, 6, 6)), M)
            self.cache.M = M
        M = self.cache.M
        if self.opt.approximate_bias:  # eq. 2.89: the whole vehicle as one rigid body
            from wmr_dynamics import spatial
            from wmr_dynamics.kinematics.enhanced import composite_inertia

            _, _, I_b = composite_inertia(m, T_world)
            g = np.r_[0.0, 0.0, 0.0, T_world[0, :3, :3].T @ np.array([0.0, 0.0, -G])]
            c = np.zeros(m.num_dof)
            c[:6] = -I_b @ g + spatial.crf(qvel[:6]) @ (I_b @ qvel[:6])
        else:
            nf = m.num_frames
            c = np.empty(m.num_dof)
            _rnea(m.parent, m.joint_type, m.I_spatial, X, T_world[0, :3, :3], qvel, np.zeros(m.num_dof), G,
                  np.zeros((nf, 6)), np.empty((nf, 6)), np.empty((nf, 6)), np.empty((nf, 6)), c)
        return M, c, np.zeros(m.num_dof)

    def problem(self, q: NDArray, qvel: NDArray, u: NDArray, dt: float):
        """Set up the force-balance problem of one step (steps 1–2 of the module docstring).

        Returns ``(evaluate, x0, info)``: ``evaluate(x)`` gives (e, ∂e/∂x, (q̇'[i+1], contact forces, v_c))
        for input velocities x (eq. 2.75), ``x0`` is the warm start, ``info`` holds contacts and sizes.
        """
        m, opt = self.model, self.opt
        nw, nact, nc, n = m.num_wheels, self.act_cols.size, len(self.b_joint), m.num_dof
        T_parent = np.empty((m.num_frames, 4, 4))
        T_world = np.empty((m.num_frames, 4, 4))
        _forward_kinematics(m.parent, m.joint_type, m.T0, q, T_parent, T_world)
        contacts = wheel_contacts(m, T_world, self.terrain, n_samples=opt.collision_samples)
        M, c, tau = self._mass_and_bias(q, qvel, T_parent, T_world)
        A_w = wheel_jacobians(m, T_world, contacts)
        A_a = np.zeros((nact, n))
        A_a[np.arange(nact), self.act_cols] = 1.0
        A = np.vstack([A_w, A_a, self.A_joint])  # eq. 2.55
        rows_w = np.arange(3 * nw)
        rows_a = 3 * nw + np.arange(nact)
        rows_j = 3 * nw + nact + np.arange(nc)
        rigid = np.r_[rows_a if self.ideal else np.zeros(0, dtype=np.int64), rows_j[self.joint_rigid]].astype(np.int64)
        c_joint = self.A_joint[:, 6:] @ q[7:] - self.b_joint  # eq. 2.25 residuals (springs: θ − rest)
        v_rigid = np.r_[u if self.ideal else np.zeros(0), -c_joint[self.joint_rigid] / dt][: rigid.size]
        indep, inputs = self._independent_rows(A, rigid)
        A_I = A[indep]
        Mc = sla.cho_factor(M)
        MinvAT = sla.cho_solve(Mc, A_I.T)  # M⁻¹ A_Iᵀ
        C = A_I @ MinvAT  # eq. 2.80
        Cc = sla.cho_factor(C + 1e-12 * np.trace(C) / len(C) * np.eye(len(C)))
        Minv_f = sla.cho_solve(Mc, tau - c)
        d_const = -A_I @ Minv_f  # eq. 2.88
        pos_rigid = np.searchsorted(indep, rigid)  # positions of the rigid rows inside indep (indep is sorted)
        pos_input = np.searchsorted(indep, inputs)
        # Projector removing the rigid rows' force directions from e (their forces are whatever they need).
        A_R = A[rigid]
        P = np.eye(n) - A_R.T @ np.linalg.solve(A_R @ A_R.T, A_R) if rigid.size else np.eye(n)
        radius = m.wheel_radii
        dz0 = contacts.dz
        act_theta = q[7 + self.act_cols - 6]

        def evaluate(x: NDArray, need_jac: bool = True):
            v_I = np.empty(len(indep))
            v_I[pos_rigid] = v_rigid
            v_I[pos_input] = x
            b = (v_I - A_I @ qvel) / dt  # eq. 2.61
            lam = sla.cho_solve(Cc, b + d_const)  # eq. 2.79
            qvel_next = qvel + dt * (Minv_f + MinvAT @ lam)  # eqs. 2.82–2.83
            vc = (A_w @ qvel_next).reshape(nw, 3)
            Rw = radius * qvel_next[self.wheel_cols]
            dz = dz0 + vc[:, 2] * dt
            f_c, df_dv, df_dRw, df_ddz = opt.contact.evaluate(vc, Rw, dz)
            f_model = np.zeros(A.shape[0])
            f_model[rows_w] = f_c.ravel()
            cj = c_joint + dt * (self.A_joint @ qvel_next)
            soft = ~self.joint_rigid
            f_model[rows_j[soft]] = (-self.joint_k * cj - self.joint_d * (self.A_joint @ qvel_next))[soft]
            if not self.ideal:
                f_act, df_act = opt.actuator.evaluate(act_theta, qvel_next[self.act_cols], u, dt)
                f_model[rows_a] = f_act
            e = P @ (A_I.T @ lam - A.T @ f_model)  # eq. 2.78
            if not need_jac:
                return e, None, (qvel_next, f_c, vc)
            dlam = sla.cho_solve(Cc, np.eye(len(indep))[:, pos_input]) / dt
            dq = dt * MinvAT @ dlam  # d q̇'[i+1] / dx
            dvc = (A_w @ dq).reshape(nw, 3, -1)
            dfc = (np.einsum("wij,wjx->wix", df_dv, dvc)
                   + df_dRw[:, :, None] * (radius[:, None] * dq[self.wheel_cols])[:, None, :]
                   + df_ddz[:, :, None] * dt * dvc[:, 2][:, None, :])
            df = np.zeros((A.shape[0], len(x)))
            df[rows_w] = dfc.reshape(3 * nw, -1)
            if nc:
                df[rows_j] = (-(self.joint_k * dt + self.joint_d)[:, None] * (self.A_joint @ dq)) * soft[:, None]
            if not self.ideal:
                df[rows_a] = np.atleast_2d(df_act) @ dq[self.act_cols]  # (na, na) ∂f/∂θ̇ (eq. 2.73)
            J = P @ (A_I.T @ dlam - A.T @ df)
            return e, J, (qvel_next, f_c, vc)

        x0 = A[inputs] @ qvel  # warm start: the constraint velocities stay as they are (§2.4.4)
        return evaluate, x0, {"contacts": contacts, "n_indep": len(indep), "act_theta": act_theta}

    def step(self, q: NDArray, qvel: NDArray, u: NDArray, dt: float, max_halvings: int = 3) -> StepResult:
        """Advance one step of ``dt`` seconds with actuated joint rate commands ``u`` (rad/s or m/s).

        If the force balance does not converge (typically when wheels re-establish contact, §2.4.4
        "Limitations"), the step is retaken as two half steps, up to ``max_halvings`` times; a step that
        still misses the tolerance is returned with ``converged=False``.  The non-iterative variant
        (``max_iterations=1``) never retakes steps: its error is meant to decay over steps.
        """
        m = self.model
        u = np.asarray(u, dtype=float)
        if u.shape != self.act_cols.shape or not np.all(np.isfinite(u)):
            raise ModelError(f"actuator commands: expected {self.act_cols.size} finite rates "
                             f"({', '.join(m.actuated_joint_names)}), got {u!r}")
        r = self._step(q, qvel, u, dt)
        if r.converged or max_halvings <= 0 or self.opt.max_iterations == 1:  # the non-iterative variant accepts
            return r
        a = self.step(q, qvel, u, dt / 2, max_halvings - 1)
        b = self.step(a.q, a.qvel, u, dt / 2, max_halvings - 1)
        b.qacc = (b.qvel - qvel) / dt
        b.dz = a.dz
        b.contact_points = a.contact_points
        b.iterations = r.iterations + a.iterations + b.iterations
        b.substeps = a.substeps + b.substeps
        return b

    def _step(self, q: NDArray, qvel: NDArray, u: NDArray, dt: float) -> StepResult:
        m, opt = self.model, self.opt
        evaluate, x, info = self.problem(q, qvel, u, dt)
        e, J, extra = evaluate(x)
        tol = opt.tolerance * self.weight
        it = 0
        while it < opt.max_iterations and np.linalg.norm(e) > tol:
            it += 1
            g = J.T @ e
            H = J.T @ J
            H += (1e-12 * np.trace(H) / max(len(H), 1) + 1e-300) * np.eye(len(H))
            p = -sla.cho_solve(sla.cho_factor(H), g)  # Gauss–Newton step (eq. 2.84, Hessian ≈ 2 JᵀJ)

            def phi(alpha: float, x=x, p=p):
                ee, JJ, _ = evaluate(x + alpha * p)
                return float(ee @ ee), float(2.0 * (JJ.T @ ee) @ p)

            alpha, _ = strong_wolfe(phi, float(e @ e), float(2.0 * g @ p))
            x = x + alpha * p
            e, J, extra = evaluate(x)
        qvel_next, f_c, vc = extra
        if not np.all(np.isfinite(qvel_next)):
            raise ModelError(f"{m.name}: the dynamic step produced a non-finite velocity (dt={dt} s too large?)")
        converged = bool(np.linalg.norm(e) <= max(tol, 1e-3 * self.weight))
        if not self.ideal and hasattr(opt.actuator, "commit") and converged:
            opt.actuator.commit(info["act_theta"], qvel_next[self.act_cols], u, dt)
        qacc = (qvel_next - qvel) / dt
        q_next = euler_step(q, qvel_next, dt)  # eq. 2.86 with q̇'[i+1]
        Rw = m.wheel_radii * qvel_next[self.wheel_cols]
        V_x = vc[:, 0] + Rw  # wheel-centre speed over ground: the contact point moves at v_x = V_x − Rω
        denom = np.maximum(np.abs(Rw), np.abs(V_x))
        # slip ratio (eq. 2.40, s = (Rω − V_x)/V_x, normalized by the larger speed so it stays in [−1, 1])
        slip_ratio = np.where(denom > 1e-9, (Rw - V_x) / np.where(denom > 1e-9, denom, 1.0), 0.0)
        slip_angle = np.arctan2(vc[:, 1], np.abs(V_x))  # eq. 2.42
        return StepResult(q_next, qvel_next, qacc, f_c, info["contacts"].points, info["contacts"].dz, vc,
                          slip_ratio, slip_angle, it, float(np.linalg.norm(e)), info["n_indep"], converged)

    def _independent_rows(self, A: NDArray, rigid: NDArray) -> tuple[NDArray, NDArray]:
        """indep (sorted row indices, eqs. 2.66–2.68) and the input rows (indep minus rigid rows)."""
        rows = np.setdiff1d(np.arange(A.shape[0]), rigid)
        if rigid.size:
            N = sla.null_space(A[rigid])  # test the other rows with the rigid directions projected out
            Ared = A[rows] @ N
        else:
            Ared = A[rows]
        _, R, piv = sla.qr(Ared.T, mode="economic", pivoting=True)  # eq. 2.66: Q R = Aᵀ E
        diag = np.abs(np.diag(R))
        keep = diag > self.opt.qr_tolerance * max(diag.max(initial=0.0), 1e-300)  # eq. 2.68
        inputs = np.sort(rows[piv[: len(diag)][keep]])
        return np.sort(np.r_[rigid, inputs]).astype(np.int64), inputs
