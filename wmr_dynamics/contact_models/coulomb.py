"""Coulomb contact with static friction (stiction): the ``coulomb`` contact mode (issue 13, deliverable 5).

Every slip-velocity model of the thesis (App. C) needs a slip velocity to make a tangential force, so a
vehicle parked on a slope creeps.  In the ``coulomb`` mode the tangential contact rows of a wheel are held
*rigid* (zero slip velocity, like an ideal actuator's row, thesis §2.4.4) while the constraint force they
need stays inside the friction cone ``‖(f_x, f_y)‖ <= μ f_z``, and the wheel slides with the Coulomb force
``μ f_z`` opposite to its slip beyond it.  Which wheels stick is an active set decided inside the compiled
force balance (:func:`wmr_dynamics.compiled.dynamics._coulomb_active_set`); this module holds the parameters
and the force law of the *model rows*:

* normal force (eqs. C.3–C.4, as :class:`~wmr_dynamics.contact_models.LinearContact`):
  ``f_z = max(0, −kp·Δz − kd·v_z)`` for ``Δz < 0``, else 0;
* tangential force of a sliding wheel (Coulomb): ``f_t = −μ f_z v_t / sqrt(‖v_t‖² + v_eps²)`` with
  ``v_t = (v_x, v_y)`` the contact-point slip velocity (the velocity of the wheel's material point at the
  contact, which includes its spin: ``v_x = 0`` is rolling without slip, App. C).  ``v_eps`` only rounds
  the sign function at ``v_t = 0`` so that Newton's method has a derivative there; a contact slower than
  ``10·v_eps`` is handed to the sticking set by the force balance.

The tangential outputs of :meth:`evaluate` are the *sliding* force of every wheel: which wheels stick is
state of the force balance, not of this stateless law; in a simulation the sticking wheels' tangential
forces are the rigid rows' constraint forces (``contact_force`` of the results).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.contact_models._base import (
    CompiledContactModel,
    nonnegative,
    per_wheel,
    positive,
    stack_rows,
    unbox,
)

G = 9.81  # m/s², VEHICLES.md


@njit(_nrt=False)
def _coulomb_kernel(v: NDArray, Rw: NDArray, dz: NDArray, P: NDArray, aux: NDArray, f: NDArray, df_dv: NDArray,
                    df_dRw: NDArray, df_ddz: NDArray, mw: NDArray, work: NDArray) -> None:
    """Normal force C.3–C.4 and the (rounded) Coulomb sliding force for every wheel; P rows: kp, kd, μ, v_eps
    (:data:`CoulombContact.COLUMNS`)."""
    one = P.shape[0] == 1
    for w in range(v.shape[0]):
        for i in range(3):
            f[w, i] = 0.0
            df_dRw[w, i] = 0.0
            df_ddz[w, i] = 0.0
            for j in range(3):
                df_dv[w, i, j] = 0.0
        if dz[w] >= 0.0:  # C.3: no penetration, no force
            continue
        p = 0 if one else w
        kp, kd, mu, eps = P[p, 0], P[p, 1], P[p, 2], P[p, 3]
        vx, vy, vz = v[w, 0], v[w, 1], v[w, 2]
        fz = -kp * dz[w] - kd * vz  # C.3
        if fz <= 0.0:  # C.4
            continue
        f[w, 2] = fz
        df_dv[w, 2, 2] = -kd
        df_ddz[w, 2] = -kp
        s = math.sqrt(vx * vx + vy * vy + eps * eps)
        ux, uy = vx / s, vy / s  # the slip direction (rounded at 0)
        lim = mu * fz
        f[w, 0] = -lim * ux
        f[w, 1] = -lim * uy
        # ∂u_i/∂v_j = (δ_ij − u_i u_j)/s;  ∂f_t/∂f_z = −μ u
        a = lim / s
        df_dv[w, 0, 0] = -a * (1.0 - ux * ux)
        df_dv[w, 0, 1] = a * ux * uy
        df_dv[w, 1, 0] = a * uy * ux
        df_dv[w, 1, 1] = -a * (1.0 - uy * uy)
        df_dv[w, 0, 2] = -mu * ux * -kd
        df_dv[w, 1, 2] = -mu * uy * -kd
        df_ddz[w, 0] = -mu * ux * -kp
        df_ddz[w, 1] = -mu * uy * -kp


class CoulombContact(CompiledContactModel):
    """Coulomb friction with stiction (the ``coulomb`` contact mode; docs/contact_models.md).

    Normal force as the piecewise-linear model's penetration spring–damper (eqs. C.3–C.4); tangential rows
    held rigid (zero slip) while the force they need lies in the cone ``‖(f_x, f_y)‖ <= μ f_z``, Coulomb
    sliding ``μ f_z`` against the slip beyond it (decided by the compiled force balance's active set).

    Args:
        kp: normal stiffness, N/m (> 0).
        kd: normal damping, N·s/m (>= 0); default ``kp/20`` (VEHICLES.md).
        mu: Coulomb friction coefficient (>= 0), static = kinetic; default 1.
        v_eps: m/s (> 0): rounding of the sliding force's direction at zero slip (see the module docstring);
            default 1e-4.
        dz_target: the design rest sinkage Δz (m, < 0) that ``kp`` was chosen for; informational, as for
            :class:`~wmr_dynamics.contact_models.LinearContact`.

    Every numeric parameter may be a number or a list with one entry per wheel.
    """

    name = "coulomb"
    kernel = staticmethod(_coulomb_kernel)
    #: the columns of the parameter rows ``kernel_data()[0]``
    COLUMNS = ("kp", "kd", "mu", "v_eps")

    def __init__(self, kp, kd=None, mu=1.0, v_eps=1e-4, dz_target=-0.02) -> None:
        m = self.name
        kp_a = per_wheel(m, "kp", kp, positive, "> 0 (N/m)")
        kd_a = per_wheel(m, "kd", kp_a / 20.0 if kd is None else kd, nonnegative, ">= 0 (N·s/m)")
        mu_a = per_wheel(m, "mu", mu, nonnegative, ">= 0 (a friction coefficient)")
        eps_a = per_wheel(m, "v_eps", v_eps, positive, "> 0 (m/s)")
        dzt = per_wheel(m, "dz_target", dz_target, lambda a: a < 0, "< 0 (m, a sinkage)")
        self._P = stack_rows(m, [("kp", kp_a), ("kd", kd_a), ("mu", mu_a), ("v_eps", eps_a)])
        stack_rows(m, [("kp", kp_a), ("dz_target", dzt)])  # same-length check only
        self._aux = np.zeros(1)
        self.dz_target = unbox(dzt)
        self._params = dict(kp=unbox(kp_a), kd=unbox(kd_a), mu=unbox(mu_a), v_eps=unbox(eps_a),
                            dz_target=unbox(dzt))

    def rest_dz(self, load) -> NDArray | float:
        """Contact-height error (m) at which a wheel at rest carries ``load`` N: ``−load/kp`` (eq. C.3)."""
        out = -np.asarray(load, dtype=float) / self._P[:, 0]
        return float(out[0]) if out.size == 1 else out
