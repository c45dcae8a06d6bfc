"""Constrained dynamics with force-balance optimization (thesis §2.4.2–2.4.4, eqs. 2.53–2.89).

One time step at (q, q̇'[i]):

1. M (CRBA, Alg. 3), c (RNEA, Alg. 4, or the fused-body approximation eq. 2.89);
2. A = [A_wheel; A_act; A_joint] (eq. 2.55; A_joint also holds a unit row per joint spring).  "Rigid" rows —
   ideal actuators (§2.4.4) and joint constraints without a model — are always met: q̇'[i+1] = q̇'_p + Nᵀz
   with q̇'_p meeting their velocity targets and N an orthonormal basis of their null space;
3. force balance: find the unknowns z at which the constraint forces equal the model forces — contact
   (eq. 2.71), actuator (2.73), joint (2.74) — evaluated at the next step's velocities (eq. 2.83):
   e(z) = N (M q̈' + c − Aᵀ f_model) = 0 (eq. 2.82 along the directions the rigid rows leave free; eqs.
   2.76–2.78 with these unknowns in place of the input rows' velocities of eq. 2.75, which needs no
   independent-row selection, eqs. 2.66–2.68), by Gauss–Newton (eq. 2.84) with a backtracking line search
   (the sufficient decrease of App. D's eq. D.2; docs/dynamics.md), warm-started from the current velocities
   and half the last step's acceleration;
4. q̈' (eq. 2.82), then symplectic Euler (eqs. 2.85–2.86).

Sign convention: λ and model forces are forces *on the robot* along the constraint directions, so
M q̈' = τ − c + A_Iᵀ λ (eqs. 2.69, 2.82 with λ the force on the robot).

The step itself is one implementation, the compiled kernel :mod:`wmr_dynamics.compiled.dynamics`; this
module holds what configures it: the immutable :class:`DynamicsOptions` and the joint rows
(:func:`joint_rows`).  State that a step changes lives in :class:`~wmr_dynamics.stepper.SimData`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import WmrModel


@dataclass(frozen=True)
class DynamicsOptions:
    """Settings of the dynamic model (thesis §2.4.3–2.4.4).

    Attributes:
        contact: wheel–ground contact model (``wmr_dynamics.contact_models``), eq. 2.71.
        actuator: actuator model (eq. 2.73); ``None`` = ideal actuators (joint rates = commands, §2.4.4).
        max_iterations: Newton iterations per step (1 = the non-iterative variant of §2.4.4).
        tolerance: stop when ‖e‖ (N, N·m) is below this fraction of the vehicle's weight.  The default 1e-5
            (≈ 19 mN for Zoë) is 50× tighter than the thesis author's C++ (‖e‖² < 1 N²); against the
            previous 1e-7 the Table 2.7 runs end within 2 µm of the same positions while the nonlinear
            contact models take ≈ 0.5 fewer Newton iterations per step (docs/benchmarks.md, 2026-11-27).
        qr_tolerance: a rigid row whose component off the rigid rows before it is at most this fraction of its
            norm depends on them (held through them; the role of eq. 2.68's threshold).
        constant_mass_matrix: compute M once and reuse it (§2.4.4).
        approximate_bias: fused-body bias force, eq. 2.89, instead of the RNEA.
        collision_samples: coarse samples of each wheel's circle in the contact search
            (``collision.wheel_contacts``'s ``n_samples``, ≥ 8); fewer is faster, 36 (10°) finds step edges.
        reuse_factor: start each step's Newton loop with a chord step on the previous step's factor of ∂e/∂x
            (same null space and Δt), kept if it lowers ‖e‖ — the iteration-matrix reuse of implicit ODE
            solvers.  ``True``: at every step; ``False``: never.  ``None`` (default): at every step where the
            contact model's force law is smooth and nonlinear (``smooth_force``: Pacejka, the terramechanics
            models), whose Newton loop needs several steps; for the piecewise-linear models, whose one Newton
            step is exact, only where it has been paying — where chord steps ended the loop without a Newton
            step — with an exponential back-off after misses (``compiled.dynamics._reuse_paid``: the Talon at
            Δt 0.01 takes it at most steps, Zoë at Δt 0.04 at about one in six); never in the ``coulomb`` mode.
    """

    contact: object
    actuator: object | None = None
    max_iterations: int = 20
    tolerance: float = 1e-5
    qr_tolerance: float = 1e-9
    constant_mass_matrix: bool = False
    approximate_bias: bool = False
    collision_samples: int = 36
    reuse_factor: bool | None = None

    def __post_init__(self) -> None:
        if self.reuse_factor is not None and not isinstance(self.reuse_factor, bool):
            raise ModelError(f"reuse_factor must be True, False or None, got {self.reuse_factor!r}")
        n = self.collision_samples
        if isinstance(n, bool) or int(n) != n or n < 8:
            raise ModelError(f"collision_samples must be an integer >= 8, got {n!r}")
        if isinstance(self.max_iterations, bool) or int(self.max_iterations) != self.max_iterations \
                or self.max_iterations < 1:
            raise ModelError(f"max_iterations must be an integer >= 1, got {self.max_iterations!r}")
        for name in ("tolerance", "qr_tolerance"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise ModelError(f"{name} must be a positive number, got {v!r}")

    @classmethod
    def from_config(cls, model: WmrModel, contact: str | None = None, actuator: str | None = None,
                    **overrides) -> DynamicsOptions:
        """Options from the vehicle YAML (``contact:``, ``actuators:``), optionally overriding the contact
        model name ("linear", "pacejka", "ishigami", "ding", "coulomb") and the actuator ("ideal", "pi").  Without
        a ``contact`` block: "linear", or "coulomb" for a vehicle with tracks."""
        from wmr_dynamics.actuators import actuator_from_config
        from wmr_dynamics.contact_models import contact_model_from_config

        cfg_c = model.config.get("contact") or {}
        if not cfg_c and model.track_names:  # tracks default to static friction (docs/tracks.md)
            cfg_c = "coulomb"
        cfg_c = {"model": cfg_c} if isinstance(cfg_c, str) else dict(cfg_c)  # ``contact: coulomb``: the short form
        if contact is not None and contact != cfg_c.get("model", "linear"):
            cfg_c = {"model": contact}  # another model: its own defaults (kp from the vehicle's mass)
        cfg_a = dict(model.config.get("actuators") or {"model": "ideal"})
        if actuator is not None:
            cfg_a["model"] = actuator
        act = actuator_from_config(cfg_a, len(model.actuated_joint_names))
        return cls(contact=contact_model_from_config(cfg_c, model.wheel_radii, model.wheel_widths,
                                                     mass=model.total_mass, n_wheels=model.num_wheels),
                   actuator=None if getattr(act, "ideal", False) else act, **overrides)




class JointRows(NamedTuple):
    """The force balance's joint rows: the holonomic constraints (eq. 2.26) and one unit row per joint spring,
    each with its joint model (eq. 2.74, :mod:`wmr_dynamics.joint_models`) enforced through the force
    balance — implicitly, so stiff springs on light joints stay stable at large steps.  A constraint without
    a model (no stiffness, no ``model``) is rigid: its row's model is None."""

    A: NDArray  # (nc, ndof)
    b: NDArray  # (nc,) values of the residuals' zero (constraint value, spring rest)
    models: tuple  # (nc,) JointModel or None (rigid)


def joint_rows(model: WmrModel) -> JointRows:
    """The :class:`JointRows` of ``model`` (its ``joint_constraints`` and ``joint_springs``)."""
    from wmr_dynamics.joint_models import SpringDamper

    m = model
    springs = [(m.joint_index(j), s) for j, s in m.joint_springs.items()]
    A_s = np.zeros((len(springs), m.num_dof))
    for r, (j, _) in enumerate(springs):
        A_s[r, 6 + j] = 1.0

    def law(row: object) -> object:
        if row.model is not None:
            return row.model
        if row.stiffness is None:
            return None
        return SpringDamper(row.stiffness, row.damping if row.damping is not None else 0.0)

    c = np.ascontiguousarray
    return JointRows(c(np.vstack([m.A_joint, A_s]), dtype=float),
                     c(np.r_[m.b_joint, [s.rest for _, s in springs]], dtype=float),
                     tuple(law(r) for r in (*m.joint_constraints, *(s for _, s in springs))))
