"""Piecewise-linear ("uniform", Open-Dynamics-Engine-like) contact model, thesis eqs. C.3–C.9."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.contact_models._base import (
    CompiledContactModel,
    nonnegative,
    nonpositive,
    per_wheel,
    positive,
    stack_rows,
    unbox,
)
from wmr_dynamics.errors import ModelError

G = 9.81  # m/s², VEHICLES.md


@njit
def _linear_kernel(v: NDArray, Rw: NDArray, dz: NDArray, P: NDArray, aux: NDArray, f: NDArray, df_dv: NDArray,
                   df_dRw: NDArray, df_ddz: NDArray) -> None:
    """Eqs. C.3–C.8 (pyramid) or C.9 (cone) for every wheel; P rows: kp, kd, c_slip, c_rr, mu, cone."""
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
        kp, kd, c, crr, mu, cone = P[p, 0], P[p, 1], P[p, 2], P[p, 3], P[p, 4], P[p, 5]
        vx, vy, vz = v[w, 0], v[w, 1], v[w, 2]
        fz = -kp * dz[w] - kd * vz  # C.3
        if fz <= 0.0:  # C.4; the tangential caps mu*fz are then zero too
            continue
        fx = c * vx + crr * Rw[w]  # C.5
        fy = c * vy  # C.6
        f[w, 2] = fz
        df_dv[w, 2, 2] = -kd
        df_ddz[w, 2] = -kp
        lim = mu * fz
        dx_vx, dx_Rw, dy_vy = c, crr, c  # unsaturated derivatives
        if cone > 0.5:  # C.9: ||f_xy|| <= mu f_z, scaling the slip force back onto the cone
            m = math.sqrt(fx * fx + fy * fy)
            if m > lim:
                ux, uy = fx / m, fy / m
                a = lim / m  # f_xy = lim * u;  d f_xy = a (I − u uᵀ) d f'_xy + u mu d fz
                pxx, pxy, pyy = 1.0 - ux * ux, -ux * uy, 1.0 - uy * uy
                df_dv[w, 0, 0] = a * pxx * dx_vx
                df_dv[w, 0, 1] = a * pxy * dy_vy
                df_dRw[w, 0] = a * pxx * dx_Rw
                df_dv[w, 1, 0] = a * pxy * dx_vx
                df_dv[w, 1, 1] = a * pyy * dy_vy
                df_dRw[w, 1] = a * pxy * dx_Rw
                df_dv[w, 0, 2] = ux * mu * -kd
                df_ddz[w, 0] = ux * mu * -kp
                df_dv[w, 1, 2] = uy * mu * -kd
                df_ddz[w, 1] = uy * mu * -kp
                f[w, 0] = lim * ux
                f[w, 1] = lim * uy
            else:
                f[w, 0] = fx
                f[w, 1] = fy
                df_dv[w, 0, 0] = dx_vx
                df_dRw[w, 0] = dx_Rw
                df_dv[w, 1, 1] = dy_vy
            continue
        # C.7–C.8 ("pyramid"), applied symmetrically: |f_x| <= mu f_z, |f_y| <= mu f_z
        if fx > lim or fx < -lim:
            sgn = 1.0 if fx > 0.0 else -1.0
            f[w, 0] = sgn * lim
            df_dv[w, 0, 2] = sgn * mu * -kd
            df_ddz[w, 0] = sgn * mu * -kp
        else:
            f[w, 0] = fx
            df_dv[w, 0, 0] = dx_vx
            df_dRw[w, 0] = dx_Rw
        if fy > lim or fy < -lim:
            sgn = 1.0 if fy > 0.0 else -1.0
            f[w, 1] = sgn * lim
            df_dv[w, 1, 2] = sgn * mu * -kd
            df_ddz[w, 1] = sgn * mu * -kp
        else:
            f[w, 1] = fy
            df_dv[w, 1, 1] = dy_vy


class LinearContact(CompiledContactModel):
    """Piecewise-linear contact model (thesis eqs. C.3–C.9): the "uniform" model of VEHICLES.md.

    * Normal force (C.3–C.4): ``f_z = max(0, −kp·Δz − kd·v_z)`` if ``Δz < 0``, else 0.  The thesis writes
      ``K_p Δz + K_d v_z``; here ``kp, kd > 0`` carry the sign, as in the thesis author's code.
    * Slip force (C.5–C.6): ``f'_x = c_slip·v_x + c_rr·Rω``, ``f'_y = c_slip·v_y``.  ``c_slip <= 0`` (N per
      m/s of slip velocity) so friction opposes slip (Fig. C.1); ``c_rr <= 0`` is rolling resistance.
    * Friction cap: ``friction="pyramid"`` bounds each axis, ``|f_x|, |f_y| <= mu·f_z`` (C.7–C.8, applied to
      both signs); ``friction="cone"`` is the true Coulomb limit ``||(f_x, f_y)|| <= mu·f_z`` (C.9), scaling
      the slip force back onto the cone (direction kept).
    * Derivatives are exact, one-sided at the kinks (the cap switches at ``|f'| = mu f_z``, the normal
      force at ``f'_z = 0`` and ``Δz = 0``): at a capped axis ``∂f/∂v_slip = 0`` and ``∂f/∂(v_z, Δz)`` is
      ``±mu ∂f_z``.

    Args:
        kp: normal stiffness, N/m (> 0).
        kd: normal damping, N·s/m (>= 0); default ``kp/20`` (VEHICLES.md).
        c_slip: slip coefficient, N·s/m (<= 0); default ``−0.1·kp`` (VEHICLES.md).
        mu: friction coefficient (>= 0); default 1.
        friction: ``"pyramid"`` (C.7–C.8, default) or ``"cone"`` (C.9).
        c_rr: rolling-resistance coefficient, N·s/m (<= 0); default 0 (VEHICLES.md).
        dz_target: the design rest sinkage Δz (m, < 0) that ``kp`` was chosen for
            (``kp = m·g / (n_wheels·|dz_target|)``); informational — the force law does not use it, contact
            initialization and :meth:`rest_dz` do.

    Every numeric parameter may be a number or a list with one entry per wheel.
    """

    name = "linear"
    kernel = staticmethod(_linear_kernel)

    def __init__(self, kp, kd=None, c_slip=None, mu=1.0, friction: str = "pyramid", c_rr=0.0,
                 dz_target=-0.02) -> None:
        m = self.name
        kp_a = per_wheel(m, "kp", kp, positive, "> 0 (N/m)")
        kd_a = per_wheel(m, "kd", kp_a / 20.0 if kd is None else kd, nonnegative, ">= 0 (N·s/m)")
        c_a = per_wheel(m, "c_slip", -0.1 * kp_a if c_slip is None else c_slip, nonpositive,
                        "<= 0 (N per m/s; friction opposes slip, eq. C.5, VEHICLES.md uses -0.1*kp)")
        mu_a = per_wheel(m, "mu", mu, nonnegative, ">= 0")
        crr_a = per_wheel(m, "c_rr", c_rr, nonpositive, "<= 0 (N per m/s; rolling resistance, eq. C.5)")
        dzt = per_wheel(m, "dz_target", dz_target, lambda a: a < 0, "< 0 (m, a sinkage)")
        if friction not in ("pyramid", "cone"):
            raise ModelError(f"{m} contact model: parameter 'friction' must be 'pyramid' or 'cone', got {friction!r}")
        cone = np.array([1.0 if friction == "cone" else 0.0])
        self._P = stack_rows(m, [("kp", kp_a), ("kd", kd_a), ("c_slip", c_a), ("c_rr", crr_a), ("mu", mu_a),
                                 ("friction", cone)])
        stack_rows(m, [("kp", kp_a), ("dz_target", dzt)])  # same-length check only
        self._aux = np.zeros(1)
        self.dz_target = unbox(dzt)
        self.friction = friction
        self._params = dict(kp=unbox(kp_a), kd=unbox(kd_a), c_slip=unbox(c_a), mu=unbox(mu_a), friction=friction,
                            c_rr=unbox(crr_a), dz_target=unbox(dzt))

    @classmethod
    def from_vehicle(cls, mass: float, n_wheels: int, dz_target: float = -0.02, g: float = G,
                     friction: str = "pyramid", mu: float = 1.0) -> LinearContact:
        """VEHICLES.md's "uniform" model for a vehicle of ``mass`` kg on ``n_wheels`` wheels.

        ``kp = mass·g / (n_wheels·|dz_target|)`` so that each wheel carries ``mass·g/n_wheels`` at rest with
        ``Δz = dz_target``; ``kd = kp/20``; ``c_slip = −0.1·kp``; ``mu = 1``; no rolling resistance.
        """
        if not (np.isfinite(mass) and mass > 0):
            raise ModelError(f"linear contact model: mass must be > 0 kg, got {mass!r}")
        if int(n_wheels) != n_wheels or n_wheels < 1:
            raise ModelError(f"linear contact model: n_wheels must be a positive integer, got {n_wheels!r}")
        if not (np.isfinite(dz_target) and dz_target < 0):
            raise ModelError(f"linear contact model: dz_target must be < 0 m, got {dz_target!r}")
        kp = mass * g / (n_wheels * -dz_target)
        return cls(kp=kp, kd=kp / 20.0, c_slip=-0.1 * kp, mu=mu, friction=friction, dz_target=dz_target)

    def rest_dz(self, load) -> NDArray | float:
        """Contact-height error (m) at which a wheel at rest carries ``load`` N: ``−load/kp`` (eq. C.3)."""
        out = -np.asarray(load, dtype=float) / self._P[:, 0]
        return float(out[0]) if out.size == 1 else out
