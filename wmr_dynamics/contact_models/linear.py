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


@njit(_nrt=False)
def _linear_kernel(v: NDArray, Rw: NDArray, dz: NDArray, P: NDArray, aux: NDArray, f: NDArray, df_dv: NDArray,
                   df_dRw: NDArray, df_ddz: NDArray, mw: NDArray, work: NDArray) -> None:
    """Eqs. C.3–C.8 (pyramid) or C.9 (cone, elliptic with μ_x ≠ μ_y) for every wheel; P rows: kp, kd, C_x, c_rr,
    μ_x, cone, C_y, μ_y (:data:`LinearContact.COLUMNS`)."""
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
        kp, kd, cx, crr, mux, cone, cy, muy = P[p, 0], P[p, 1], P[p, 2], P[p, 3], P[p, 4], P[p, 5], P[p, 6], P[p, 7]
        vx, vy, vz = v[w, 0], v[w, 1], v[w, 2]
        fz = -kp * dz[w] - kd * vz  # C.3
        if fz <= 0.0:  # C.4; the tangential caps mu*fz are then zero too
            continue
        fx = cx * vx + crr * Rw[w]  # C.5
        fy = cy * vy  # C.6
        f[w, 2] = fz
        df_dv[w, 2, 2] = -kd
        df_ddz[w, 2] = -kp
        dx_vx, dx_Rw, dy_vy = cx, crr, cy  # unsaturated derivatives
        if cone > 0.5 and mux > 0.0 and muy > 0.0:
            # C.9, with μ_x ≠ μ_y the elliptic cone (f_x/μ_x)² + (f_y/μ_y)² <= f_z²: the slip force scaled back
            # onto it (direction kept).  In g = (f'_x, r f'_y), r = μ_x/μ_y, it is the circle ||g|| <= μ_x f_z:
            # f = f'·lim/m, lim = μ_x f_z, m = ||g||; d f_i = a (d f'_i − e_i dm) + μ_x e_i d f_z with a = lim/m,
            # e = f'/m and dm = u_x d f'_x + r u_y d f'_y, u = g/m.  r = 1 is eq. C.9's circle, to the last digit.
            r = mux / muy
            gy = r * fy
            m = math.sqrt(fx * fx + gy * gy)
            lim = mux * fz
            if m > lim:
                ux, uy = fx / m, gy / m
                ex, ey = ux, fy / m
                a = lim / m
                ruy = r * uy
                pxx, pxy, pyx, pyy = 1.0 - ex * ux, -ex * ruy, -ey * ux, 1.0 - ey * ruy
                df_dv[w, 0, 0] = a * pxx * dx_vx
                df_dv[w, 0, 1] = a * pxy * dy_vy
                df_dRw[w, 0] = a * pxx * dx_Rw
                df_dv[w, 1, 0] = a * pyx * dx_vx
                df_dv[w, 1, 1] = a * pyy * dy_vy
                df_dRw[w, 1] = a * pyx * dx_Rw
                df_dv[w, 0, 2] = ex * mux * -kd
                df_ddz[w, 0] = ex * mux * -kp
                df_dv[w, 1, 2] = ey * mux * -kd
                df_ddz[w, 1] = ey * mux * -kp
                f[w, 0] = lim * ex
                f[w, 1] = lim * ey
            else:
                f[w, 0] = fx
                f[w, 1] = fy
                df_dv[w, 0, 0] = dx_vx
                df_dRw[w, 0] = dx_Rw
                df_dv[w, 1, 1] = dy_vy
            continue
        # C.7–C.8 ("pyramid"), applied symmetrically: |f_x| <= μ_x f_z, |f_y| <= μ_y f_z (also the cone with a
        # zero μ, whose ellipse degenerates to the segment along the other axis)
        lim = mux * fz
        if fx > lim or fx < -lim:
            sgn = 1.0 if fx > 0.0 else -1.0
            f[w, 0] = sgn * lim
            df_dv[w, 0, 2] = sgn * mux * -kd
            df_ddz[w, 0] = sgn * mux * -kp
        else:
            f[w, 0] = fx
            df_dv[w, 0, 0] = dx_vx
            df_dRw[w, 0] = dx_Rw
        lim = muy * fz
        if fy > lim or fy < -lim:
            sgn = 1.0 if fy > 0.0 else -1.0
            f[w, 1] = sgn * lim
            df_dv[w, 1, 2] = sgn * muy * -kd
            df_ddz[w, 1] = sgn * muy * -kp
        else:
            f[w, 1] = fy
            df_dv[w, 1, 1] = dy_vy


class LinearContact(CompiledContactModel):
    """Piecewise-linear contact model (thesis eqs. C.3–C.9): the "uniform" model of VEHICLES.md.

    * Normal force (C.3–C.4): ``f_z = max(0, −kp·Δz − kd·v_z)`` if ``Δz < 0``, else 0.  The thesis writes
      ``K_p Δz + K_d v_z``; here ``kp, kd > 0`` carry the sign, as in the thesis author's code.
    * Slip force (C.5–C.6): ``f'_x = C_x·v_x + c_rr·Rω``, ``f'_y = C_y·v_y``.  ``C_x, C_y <= 0`` (N per m/s of
      slip velocity) so friction opposes slip (Fig. C.1); ``c_rr <= 0`` is rolling resistance.
    * Friction cap: ``friction="pyramid"`` bounds each axis, ``|f_x| <= μ_x·f_z``, ``|f_y| <= μ_y·f_z``
      (C.7–C.8, applied to both signs); ``friction="cone"`` is the Coulomb limit ``||(f_x, f_y)|| <= μ·f_z``
      (C.9) — with ``μ_x ≠ μ_y`` the elliptic cone ``(f_x/μ_x)² + (f_y/μ_y)² <= f_z²`` — scaling the slip force
      back onto it (direction kept).
    * Derivatives are exact, one-sided at the kinks (the cap switches at ``|f'| = μ f_z``, the normal
      force at ``f'_z = 0`` and ``Δz = 0``): at a capped axis ``∂f/∂v_slip = 0`` and ``∂f/∂(v_z, Δz)`` is
      ``±μ ∂f_z``.

    Anisotropic friction (eqs. C.5–C.8 have separate ``C_x, C_y`` and ``μ_x, μ_y``): ``c_slip_x``, ``c_slip_y``,
    ``mu_x``, ``mu_y`` set one axis each; ``c_slip`` and ``mu`` set both (the axis values default to them), so
    the bundled YAMLs' single keys mean what they always did.

    Args:
        kp: normal stiffness, N/m (> 0).
        kd: normal damping, N·s/m (>= 0); default ``kp/20`` (VEHICLES.md).
        c_slip: slip coefficient of both axes, N·s/m (<= 0); default ``−0.1·kp`` (VEHICLES.md).
        mu: friction coefficient of both axes (>= 0); default 1.
        friction: ``"pyramid"`` (C.7–C.8, default) or ``"cone"`` (C.9).
        c_rr: rolling-resistance coefficient, N·s/m (<= 0); default 0 (VEHICLES.md).
        dz_target: the design rest sinkage Δz (m, < 0) that ``kp`` was chosen for
            (``kp = m·g / (n_wheels·|dz_target|)``); informational — the force law does not use it, contact
            initialization and :meth:`rest_dz` do.
        c_slip_x, c_slip_y: C_x, C_y of eqs. C.5, C.6, N·s/m (<= 0); default ``c_slip``.
        mu_x, mu_y: μ_x, μ_y of eqs. C.7, C.8 (>= 0); default ``mu``.

    Every numeric parameter may be a number or a list with one entry per wheel.
    """

    name = "linear"
    kernel = staticmethod(_linear_kernel)
    #: the columns of the parameter rows ``kernel_data()[0]`` (e.g. for per-trajectory parameters of a batch)
    COLUMNS = ("kp", "kd", "c_slip_x", "c_rr", "mu_x", "friction", "c_slip_y", "mu_y")

    def __init__(self, kp, kd=None, c_slip=None, mu=None, friction: str = "pyramid", c_rr=0.0,
                 dz_target=-0.02, *, c_slip_x=None, c_slip_y=None, mu_x=None, mu_y=None) -> None:
        m = self.name
        kp_a = per_wheel(m, "kp", kp, positive, "> 0 (N/m)")
        kd_a = per_wheel(m, "kd", kp_a / 20.0 if kd is None else kd, nonnegative, ">= 0 (N·s/m)")
        for both, x, y in (("c_slip", c_slip_x, c_slip_y), ("mu", mu_x, mu_y)):
            if (c_slip if both == "c_slip" else mu) is not None and x is not None and y is not None:
                raise ModelError(f"{m} contact model: parameter '{both}' is given with both '{both}_x' and '{both}_y', "
                                 f"which override it; give '{both}' (both axes) or the per-axis values")
        slip_what = "<= 0 (N per m/s; friction opposes slip, eqs. C.5–C.6, VEHICLES.md uses -0.1*kp)"
        c_a = per_wheel(m, "c_slip", -0.1 * kp_a if c_slip is None else c_slip, nonpositive, slip_what)
        cx_a = c_a if c_slip_x is None else per_wheel(m, "c_slip_x", c_slip_x, nonpositive, slip_what)
        cy_a = c_a if c_slip_y is None else per_wheel(m, "c_slip_y", c_slip_y, nonpositive, slip_what)
        mu_what = ">= 0 (a friction coefficient, eqs. C.7–C.9)"
        mu_a = per_wheel(m, "mu", 1.0 if mu is None else mu, nonnegative, mu_what)
        mux_a = mu_a if mu_x is None else per_wheel(m, "mu_x", mu_x, nonnegative, mu_what)
        muy_a = mu_a if mu_y is None else per_wheel(m, "mu_y", mu_y, nonnegative, mu_what)
        crr_a = per_wheel(m, "c_rr", c_rr, nonpositive, "<= 0 (N per m/s; rolling resistance, eq. C.5)")
        dzt = per_wheel(m, "dz_target", dz_target, lambda a: a < 0, "< 0 (m, a sinkage)")
        if friction not in ("pyramid", "cone"):
            raise ModelError(f"{m} contact model: parameter 'friction' must be 'pyramid' or 'cone', got {friction!r}")
        cone = np.array([1.0 if friction == "cone" else 0.0])
        self._P = stack_rows(m, [("kp", kp_a), ("kd", kd_a), ("c_slip_x", cx_a), ("c_rr", crr_a), ("mu_x", mux_a),
                                 ("friction", cone), ("c_slip_y", cy_a), ("mu_y", muy_a)])
        stack_rows(m, [("kp", kp_a), ("dz_target", dzt)])  # same-length check only
        self._aux = np.zeros(1)
        self.dz_target = unbox(dzt)
        self.friction = friction
        # the parameters in their shortest form: one key for both axes where they are equal (what the bundled
        # YAMLs and calibrated YAMLs write), per-axis keys where they differ
        params = dict(kp=unbox(kp_a), kd=unbox(kd_a))
        for both, xa, ya in (("c_slip", self._P[:, 2], self._P[:, 6]), ("mu", self._P[:, 4], self._P[:, 7])):
            if np.array_equal(xa, ya):
                params[both] = unbox(xa.copy())
            else:
                params[f"{both}_x"], params[f"{both}_y"] = unbox(xa.copy()), unbox(ya.copy())
        params.update(friction=friction, c_rr=unbox(crr_a), dz_target=unbox(dzt))
        self._params = params

    def axis_params(self) -> dict[str, float | NDArray]:
        """``c_slip_x``, ``c_slip_y``, ``mu_x``, ``mu_y`` (C_x, C_y of eqs. C.5–C.6, μ_x, μ_y of C.7–C.8)."""
        return {k: unbox(self._P[:, self.COLUMNS.index(k)].copy()) for k in ("c_slip_x", "c_slip_y", "mu_x", "mu_y")}

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
