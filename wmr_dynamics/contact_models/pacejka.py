"""Pacejka magic formula with Nicolas–Comstock combined slip, thesis eqs. C.10–C.18, Table C.1."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

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

#: Table C.1 coefficients (longitudinal s, lateral a)
TABLE_C1 = dict(Bs=1.0 / 15.0, Cs=1.5, Ds=1.0, Es=0.3, Ks=100.0, Ba=8.0 / 75.0, Ca=1.5, Da=1.0, Ea=0.6, Ka=100.0)


def magic_formula(x: ArrayLike, B: float, C: float, D: float, E: float, K: float) -> NDArray:
    """``D sin(C atan(B(1−E)K x + E atan(B K x)))`` — eq. C.13 with x = s, or C.14 with x = 2α/π."""
    x = np.asarray(x, dtype=float)
    return D * np.sin(C * np.arctan(B * (1 - E) * K * x + E * np.arctan(B * K * x)))


@njit(inline="always")  # four wheels, per evaluation: inlined, not called
def _mf_ratio(x: float, B: float, C: float, D: float, E: float, K: float) -> tuple[float, float]:
    """``g(x) = magic_formula(x)/x`` (even in x, finite at 0) and ``g'(x)``; a Taylor series near 0."""
    a = B * K
    ax = a * x
    if abs(ax) < 1e-3:  # f/D = C a x − a³x³ (C(1+E)/3 + C³/6) + O(x⁵)
        c3 = D * a * a * a * (C * (1.0 + E) / 3.0 + C * C * C / 6.0)
        return D * C * a - c3 * x * x, -2.0 * c3 * x
    u = a * (1.0 - E) * x + E * math.atan(ax)
    du = a * (1.0 - E + E / (1.0 + ax * ax))
    sin_phi, cos_phi = _sin_cos_c_atan(C, u)
    df = D * cos_phi * C * du / (1.0 + u * u)
    ix = 1.0 / x
    g = D * sin_phi * ix
    return g, (df - g) * ix  # (f/x)' = (f' − f/x)/x


@njit(inline="always")
def _sin_cos_c_atan(C: float, u: float) -> tuple[float, float]:
    """(sin φ, cos φ) of the magic formula's φ = C·atan(u) (eqs. C.13–C.14 and their derivatives).

    For C = 3/2 (Table C.1's C_s and C_a) without a trigonometric call — the half-angle identities of θ = atan u,
    whose cosine is r = 1/√(1 + u²) and sine u·r: cos(θ/2) = (1 + r)·k and sin(θ/2) = u·r·k with k = 1/√(2(1 + r))
    (|θ| < π/2, and 1 − r = u²r²/(1 + r) without cancellation), hence sin(3θ/2) = u·r·k·(1 + 2r) and
    cos(3θ/2) = k·(2r − 1)(1 + r).  Two square roots in place of an arctangent, a sine and a cosine: the
    Pacejka kernel 0.37 → 0.29 µs per four wheels (2026-11-29).  Other C: atan, sin, cos."""
    if C == 1.5:
        r = 1.0 / math.sqrt(1.0 + u * u)
        k = 1.0 / math.sqrt(2.0 + 2.0 * r)
        return u * r * k * (1.0 + 2.0 * r), k * (2.0 * r - 1.0) * (1.0 + r)
    phi = C * math.atan(u)
    return math.sin(phi), math.cos(phi)


@njit(inline="always")  # four wheels, per evaluation: inlined, not called
def _lateral_ratio(t: float, B: float, C: float, D: float, E: float, K: float) -> tuple[float, float]:
    """``g_y(t) = f'_y(α)/tan α`` with ``α = atan t`` (C.14) and its derivative in t."""
    alpha = math.atan(t)
    h, dh = _mf_ratio(alpha, B, C, D, E, K * 2.0 / math.pi)  # f'_y(α)/α
    w = 1.0 / (1.0 + t * t)  # dα/dt
    if abs(t) < 1e-3:  # atan(t)/t = 1 − t²/3 + O(t⁴)
        q, dq = 1.0 - t * t / 3.0, -2.0 * t / 3.0
    else:
        it = 1.0 / t
        q = alpha * it
        dq = (w - q) * it  # (α/t)' = (α' − α/t)/t
    return h * q, dh * w * q + h * dq


@njit(_nrt=False)
def _pacejka_kernel(v: NDArray, Rw: NDArray, dz: NDArray, P: NDArray, aux: NDArray, f: NDArray, df_dv: NDArray,
                    df_dRw: NDArray, df_ddz: NDArray, mw: NDArray, work: NDArray) -> None:
    """C.3–C.4 normal force, C.10–C.18 tangential; P rows: kp kd mu Bs Cs Ds Es Ks Ba Ca Da Ea Ka c_rr v_eps."""
    one = P.shape[0] == 1
    for w in range(v.shape[0]):
        for i in range(3):
            f[w, i] = 0.0
            df_dRw[w, i] = 0.0
            df_ddz[w, i] = 0.0
            for j in range(3):
                df_dv[w, i, j] = 0.0
        if dz[w] >= 0.0:
            continue
        p = 0 if one else w
        kp, kd, mu = P[p, 0], P[p, 1], P[p, 2]
        crr, eps = P[p, 13], P[p, 14]
        vx, vy, vz, rw = v[w, 0], v[w, 1], v[w, 2], Rw[w]
        fz = -kp * dz[w] - kd * vz  # C.3
        if fz <= 0.0:  # C.4
            continue
        # sx = sgn(Vx)·s = −vx/|Vx|, sy = sgn(Vx)·tan α = vy/|Vx|  (C.10–C.12), |Vx| ≈ sqrt(Vx² + eps²)
        Vx = vx + rw
        iU = 1.0 / math.sqrt(Vx * Vx + eps * eps)
        iU3 = iU * iU * iU
        sx = -vx * iU
        sy = vy * iU
        dsx_dRw = vx * Vx * iU3
        dsx_dvx = dsx_dRw - iU
        dsy_dvx = -vy * Vx * iU3
        dsy_dvy = iU
        # C.18 with f'_x = s·gx(s), f'_y = tanα·gy(α):  F = |gx gy| / sqrt(gx² + gy²)  (no 0/0 at s or α = 0)
        gx, dgx = _mf_ratio(sx, P[p, 3], P[p, 4], P[p, 5], P[p, 6], P[p, 7])
        gy, dgy = _lateral_ratio(sy, P[p, 8], P[p, 9], P[p, 10], P[p, 11], P[p, 12])
        S2 = gx * gx + gy * gy
        if S2 > 0.0:
            iS = 1.0 / math.sqrt(S2)
            prod = gx * gy
            sg = 1.0 if prod >= 0.0 else -1.0
            F = abs(prod) * iS
            Fs = F * iS * iS  # |g_x g_y| / S³
            dF_dsx = (sg * gy * iS - Fs * gx) * dgx
            dF_dsy = (sg * gx * iS - Fs * gy) * dgy
        else:
            F, dF_dsx, dF_dsy = 0.0, 0.0, 0.0
        nx = mu * F * sx + crr * rw  # C.16 (+ rolling resistance as in C.5, per unit normal force)
        ny = -mu * F * sy  # C.17
        dnx_dsx = mu * (F + sx * dF_dsx)
        dnx_dsy = mu * sx * dF_dsy
        dny_dsx = -mu * sy * dF_dsx
        dny_dsy = -mu * (F + sy * dF_dsy)
        f[w, 0] = nx * fz
        f[w, 1] = ny * fz
        f[w, 2] = fz
        df_dv[w, 0, 0] = fz * (dnx_dsx * dsx_dvx + dnx_dsy * dsy_dvx)
        df_dv[w, 0, 1] = fz * dnx_dsy * dsy_dvy
        df_dRw[w, 0] = fz * (dnx_dsx * dsx_dRw + dnx_dsy * dsy_dvx + crr)
        df_dv[w, 1, 0] = fz * (dny_dsx * dsx_dvx + dny_dsy * dsy_dvx)
        df_dv[w, 1, 1] = fz * dny_dsy * dsy_dvy
        df_dRw[w, 1] = fz * (dny_dsx * dsx_dRw + dny_dsy * dsy_dvx)
        df_dv[w, 0, 2] = -kd * nx
        df_dv[w, 1, 2] = -kd * ny
        df_dv[w, 2, 2] = -kd
        df_ddz[w, 0] = -kp * nx
        df_ddz[w, 1] = -kp * ny
        df_ddz[w, 2] = -kp


class PacejkaContact(CompiledContactModel):
    """Pacejka/Nicolas–Comstock contact model (thesis eqs. C.10–C.18, coefficients Table C.1).

    * Normal force exactly as :class:`~wmr_dynamics.contact_models.LinearContact` (C.3–C.4):
      ``f_z = max(0, −kp·Δz − kd·v_z)`` while ``Δz < 0``.
    * Slip (C.10–C.12): ``V_x = v_x + Rω`` (wheel-centre speed), ``s = −v_x/V_x``, ``α = atan(v_y/V_x)``;
      ``s > 0`` when driving (wheel surface faster than the ground), ``α > 0`` when sliding left.
    * Pure-slip curves (C.13–C.14): ``f'_x(s)/f_z`` and ``f'_y(α)/f_z`` by the magic formula
      (:func:`magic_formula`); they peak at ``C·atan(...) = π/2`` (s ≈ 0.30, α ≈ 0.37 rad for Table C.1).
    * Combined slip (C.16–C.18): ``f_x = sgn(V_x)·mu·F·s·f_z``, ``f_y = −sgn(V_x)·mu·F·tan α·f_z``,
      ``F = |f'_x f'_y| / sqrt(s² f'_y² + f'_x² tan² α)``.  The absolute value keeps ``f_x`` odd in s
      (as in the thesis author's code); forces oppose slip in forward and reverse driving.

    Singularities, handled without thresholds on s or α: writing ``f'_x = s·g_x(s)`` and
    ``f'_y = tan α·g_y(α)`` turns C.18 into ``F = |g_x g_y| / sqrt(g_x² + g_y²)``, exactly equal for
    s, α ≠ 0 and smooth through s = 0 and α = 0.  ``sgn(V_x)·s = −v_x/|V_x|`` and
    ``sgn(V_x)·tan α = v_y/|V_x|`` remove the sign discontinuity; only ``V_x = 0`` (the thesis's "poorly
    defined near stationary") is regularized, by ``|V_x| ≈ sqrt(V_x² + v_eps²)``.  With that, the model and
    its analytic Jacobian are smooth except at ``f_z = 0`` and ``Δz = 0``.

    Note that the Nicolas–Comstock combination as printed does not reduce to ``f'_x(s)`` at α → 0 (the
    longitudinal stiffness there is ``g_x(0)·g_y(0)/sqrt(g_x(0)² + g_y(0)²)``, about 0.7·C_s·B_s·K_s·D_s
    for Table C.1); we reproduce the thesis's equations, not Brach & Brach's later correction.

    Args:
        kp, kd: normal stiffness N/m (> 0) and damping N·s/m (>= 0, default ``kp/20``).
        mu: friction coefficient (>= 0), default 1 (VEHICLES.md).
        Bs, Cs, Ds, Es, Ks, Ba, Ca, Da, Ea, Ka: magic-formula coefficients, defaults Table C.1.
        c_rr: rolling resistance, ``f_x += c_rr·Rω·f_z`` (s/m, <= 0), default 0.
        v_eps: speed (m/s, > 0) below which ``|V_x|`` is regularized; default 1e-3 (the thesis author's
            threshold).
        dz_target: informational rest sinkage (m, < 0), as for the linear model.
    """

    name = "pacejka"
    kernel = staticmethod(_pacejka_kernel)
    smooth_force = True

    def __init__(self, kp, kd=None, mu=1.0, Bs=TABLE_C1["Bs"], Cs=TABLE_C1["Cs"], Ds=TABLE_C1["Ds"],
                 Es=TABLE_C1["Es"], Ks=TABLE_C1["Ks"], Ba=TABLE_C1["Ba"], Ca=TABLE_C1["Ca"], Da=TABLE_C1["Da"],
                 Ea=TABLE_C1["Ea"], Ka=TABLE_C1["Ka"], c_rr=0.0, v_eps=1e-3, dz_target=-0.02) -> None:
        m = self.name
        cols = [("kp", per_wheel(m, "kp", kp, positive, "> 0 (N/m)"))]
        cols.append(("kd", per_wheel(m, "kd", cols[0][1] / 20.0 if kd is None else kd, nonnegative,
                                     ">= 0 (N·s/m)")))
        cols.append(("mu", per_wheel(m, "mu", mu, nonnegative, ">= 0")))
        given = dict(Bs=Bs, Cs=Cs, Ds=Ds, Es=Es, Ks=Ks, Ba=Ba, Ca=Ca, Da=Da, Ea=Ea, Ka=Ka)
        for k, val in given.items():
            if k[0] == "E":
                cols.append((k, per_wheel(m, k, val, lambda a: a <= 1, "<= 1 (Pacejka curvature factor)")))
            else:
                cols.append((k, per_wheel(m, k, val, positive, "> 0")))
        cols.append(("c_rr", per_wheel(m, "c_rr", c_rr, nonpositive, "<= 0 (s/m)")))
        cols.append(("v_eps", per_wheel(m, "v_eps", v_eps, positive, "> 0 (m/s)")))
        dzt = per_wheel(m, "dz_target", dz_target, lambda a: a < 0, "< 0 (m)")
        self._P = stack_rows(m, cols)
        stack_rows(m, cols[:1] + [("dz_target", dzt)])
        self._aux = np.zeros(1)
        self.dz_target = unbox(dzt)
        self._params = {k: unbox(a) for k, a in cols}
        self._params["dz_target"] = unbox(dzt)

    def _row(self, key: str) -> float:
        return float(self._P[0, ["kp", "kd", "mu", *TABLE_C1, "c_rr", "v_eps"].index(key)])

    def longitudinal_curve(self, s: ArrayLike) -> NDArray:
        """Pure-slip ``f'_x(s)/f_z`` (eq. C.13), first wheel's coefficients."""
        return magic_formula(s, *(self._row(k) for k in ("Bs", "Cs", "Ds", "Es", "Ks")))

    def lateral_curve(self, alpha: ArrayLike) -> NDArray:
        """Pure-slip ``f'_y(α)/f_z`` (eq. C.14, α in rad), first wheel's coefficients."""
        x = 2.0 * np.asarray(alpha, dtype=float) / np.pi
        return magic_formula(x, *(self._row(k) for k in ("Ba", "Ca", "Da", "Ea", "Ka")))
