"""Compiled kernels of the terramechanics contact models (thesis C.19–C.36; Ding et al. eqs. 16–19).

Each model is a *slip function* ``F(s, β, h)`` of slip ratio s, slip angle β and sinkage ``h = −Δz``,
computed for a wheel driving forwards (``Rω >= 0``); a wheel spinning backwards is its mirror image
(``v_x → −v_x``, ``Rω → −Rω``, ``f_x → −f_x``), as in the thesis author's code.  ``F`` returns the 5-tuple
``[f_x, f_y (shear part), f_z, B, M_R]`` where ``B`` is the bulldozing integral ``∫ R_b (r − h(θ) cos θ) dθ``
(a function of h only) and ``f_y = f_y(shear) − sgn(β)·B``.

Derivatives: the slip functions are written for complex arguments and differentiated by the complex step
``∂F/∂x = Im F(x + iε)/ε`` (Squire & Trapp 1998; Martins et al. 2003), which is exact to rounding (no
subtraction, unlike finite differences), so the Jacobian is that of the very quadrature that gives the force.
The chain rule from (s, β, h) to (v_c, Rω, Δz) is analytic.

Parameter rows ``P[w]``: a header (indices below) then the model's parameters from ``HDR``.  The header's
``RHO`` is the ratio of the radius the slip ratio's ``rω`` uses to the radius of the input ``Rω`` (1, or Ding's
r_s/r), ``HOFF`` the sinkage offset (m): the stresses are evaluated at ``h = −Δz + HOFF`` (0, or Ding's R_j − r:
the sinkage of the R_j circle when the rim, whose Δz the collision gives, sinks by −Δz).
``aux`` = Gauss–Legendre nodes (nq) and weights (nq) on [0, 1], then the lookup tables if any.
"""

from __future__ import annotations

import cmath
import math

from numpy.typing import NDArray

from wmr_dynamics._jit import njit

# header columns of a parameter row
MODEL, NQ, KD, VEPS, BEPS, SLO, SHI, HMAX, KWALL, RHO, LUT_OFF, LUT_NS, LUT_NB, LUT_NH, LUT_WARP, HOFF = range(16)
HDR = 16
ISHIGAMI, DING = 0.0, 1.0
CSTEP = 1e-30  # complex-step size
S_EPS = 0.01  # slip ratio below which Ding's |s| is rounded (s·tanh(s/S_EPS))
H_MIN = 1e-10  # m: shallower contact carries no force (avoids θ = 0 divisions; the force there is ~1e-15 N)


@njit(_nrt=False)
def _csat(u: complex) -> complex:
    """Odd extension of the Janosi–Hanamoto shear curve ``1 − exp(−u)``: ``sgn(u)(1 − exp(−|u|))``."""
    if u.real >= 0.0:
        return 1.0 - cmath.exp(-u)
    return cmath.exp(u) - 1.0


@njit(_nrt=False)
def _cpow(x: complex, e: complex) -> complex:
    """``x**e`` for ``Re x > 0`` (0 otherwise), valid for complex x and e."""
    if x.real <= 0.0:
        return 0j
    return cmath.exp(e * cmath.log(x))


@njit(_nrt=False)
def _bulldoze_coeffs(phi: float, Xc: float) -> tuple[float, float]:
    """D1, D2 of eqs. C.35–C.36 (Ding eq. 19)."""
    cot = 1.0 / math.tan(Xc)
    return cot + math.tan(Xc + phi), cot + cot * cot * math.tan(phi)


@njit(_nrt=False)
def _ishigami_slip_function(s: complex, beta: complex, h: complex, q: NDArray, xg: NDArray, wg: NDArray,
                            beps: float) -> tuple:
    """Thesis eqs. C.21–C.36 by Gauss–Legendre quadrature on [θ_r, θ_m] and [θ_m, θ_f]."""
    r, b, c, phi, Xc = q[HDR], q[HDR + 1], q[HDR + 2], q[HDR + 3], q[HDR + 4]
    kc, kphi, n, a0, a1 = q[HDR + 5], q[HDR + 6], q[HDR + 7], q[HDR + 8], q[HDR + 9]
    gam, lam, kx0, kx1, ky0, ky1 = q[HDR + 10], q[HDR + 11], q[HDR + 12], q[HDR + 13], q[HDR + 14], q[HDR + 15]
    thf = cmath.acos(1.0 - h / r)  # C.21
    thr = -cmath.acos(1.0 - lam * h / r)  # C.22, behind the bottom (negative angle)
    thm = (a0 + a1 * s) * thf  # C.23
    K = r ** n * (kc / b + kphi)
    tphi = math.tan(phi)
    D1, D2 = _bulldoze_coeffs(phi, Xc)
    absb = cmath.sqrt(beta * beta + beps * beps) - beps  # smooth |β| for the Table C.2 moduli
    kx = kx0 + kx1 * absb
    ky = ky0 + ky1 * absb
    tb = cmath.tan(beta)
    cf = cmath.cos(thf)
    sf = cmath.sin(thf)
    Ix, Iy, Iz, Ib = 0j, 0j, 0j, 0j
    for seg in range(2):
        if seg == 0:  # front region θ_m..θ_f
            lo, L = thm, thf - thm
        else:  # rear region θ_r..θ_m
            lo, L = thr, thm - thr
        for i in range(xg.shape[0]):
            th = lo + L * xg[i]
            wt = L * wg[i]
            if seg == 0:  # C.24, first line
                base = cmath.cos(th) - cf
            else:  # C.24, second line: (θ − θ_r)/(θ_m − θ_r) is the node's x
                base = cmath.cos(thf - xg[i] * (thf - thm)) - cf
            sig = K * _cpow(base, n + 0j)
            ct = cmath.cos(th)
            st = cmath.sin(th)
            jx = r * (thf - th - (1.0 - s) * (sf - st))  # C.28
            jy = r * (1.0 - s) * (thf - th) * tb  # C.29
            tmax = c + sig * tphi
            tx = tmax * _csat(jx / kx)  # C.25
            ty = tmax * _csat(jy / ky)  # C.26
            Ix += wt * (tx * ct - sig * st)
            Iz += wt * (tx * st + sig * ct)
            Iy += wt * ty
            hth = r * (ct - cf)  # depth of the rim point below the soil surface
            if hth.real < 0.0:
                hth = 0j
            Ib += wt * D1 * (c * hth + 0.5 * D2 * gam * hth * hth) * (r - hth * ct)  # C.31, C.34
    # C.30; C.31 shear part, opposing the lateral slip; C.32; the bulldozing integral; no moment
    return (r * b * Ix + 0j, -r * b * Iy + 0j, r * b * Iz + 0j, Ib + 0j, 0j)


@njit(_nrt=False)
def _ding_normal(s: complex, h: complex, q: NDArray) -> tuple:
    """Ding et al. eq. 16's contact patch, stresses and normal force F_N at slip ratio s and sinkage h of the
    R_j circle: (θ_1, θ_m, |s|, cos θ_1, A, B, C, D, σ_m, F_N)."""
    r, b, Rj, rs, Ks = q[HDR], q[HDR + 1], q[HDR + 2], q[HDR + 3], q[HDR + 4]
    c, phi, kx, n0, n1 = q[HDR + 5], q[HDR + 6], q[HDR + 7], q[HDR + 9], q[HDR + 10]
    th1 = cmath.acos(1.0 - h / Rj)  # θ'_1 = acos((r − z)/R_j) with h = z + R_j − r the sinkage of the R_j circle
    thm = 0.5 * th1  # "θ_m simplified as a half of θ_1"; θ_2 = 0
    sa = s * cmath.tanh(s / S_EPS)  # |s|, smooth at 0: the driving-slip fit applied to skid by symmetry
    N = n0 + n1 * sa
    c1, s1 = cmath.cos(th1), cmath.sin(th1)
    cm, sm = cmath.cos(thm), cmath.sin(thm)
    sigm = Ks * cmath.exp(N * math.log(r)) * _cpow(cm - c1, N)
    # linearized (triangular) stress distributions, integrated in closed form (Ding et al. ref. [15])
    A = (cm - 1.0) / thm + (cm - c1) / (th1 - thm)
    B = sm / thm + (sm - s1) / (th1 - thm)
    C = 0.5 * th1
    jm = rs * ((th1 - thm) - (1.0 - s) * (s1 - sm))
    D = _csat(jm / kx)
    taum = (c + sigm * math.tan(phi)) * D
    FN = r * b * A * sigm + rs * b * B * taum  # eq. 16
    return th1, thm, sa, c1, A, B, C, D, sigm, FN


@njit(_nrt=False)
def _ding_slip_function(s: complex, beta: complex, h: complex, q: NDArray, xg: NDArray, wg: NDArray,
                        beps: float, w_others: float, n_avg: float) -> tuple:
    """Ding et al. eq. 16 (closed form) and eqs. 17–19 (side force, quadrature of closed-form stresses).

    W̄, the wheels' average normal force (eq. 16): the parameter if > 0; if < 0 ("actual") the mean of this
    wheel's F_N and the others' (their sum ``w_others``) over ``n_avg`` wheels, so the complex step also
    differentiates this wheel's share of W̄; 0 switches the compensation off."""
    r, b, Rj, rs = q[HDR], q[HDR + 1], q[HDR + 2], q[HDR + 3]
    c, phi, ky = q[HDR + 5], q[HDR + 6], q[HDR + 8]
    cP1, cP2, cP3, cM = q[HDR + 11], q[HDR + 12], q[HDR + 13], q[HDR + 14]
    Wq, Xc, gam = q[HDR + 15], q[HDR + 16], q[HDR + 17]
    th1, thm, sa, c1, A, B, C, D, sigm, FN = _ding_normal(s, h, q)
    tphi = math.tan(phi)
    comp = 0j  # the normal-force compensation (W̄ − F_N)/W̄, limited to F_N in [0, 2 W̄]
    if Wq > 0.0:  # a fixed W̄
        comp = (Wq - FN) / Wq
    elif Wq < 0.0:  # the wheels' actual mean normal force
        Wbar = (w_others + FN) / n_avg
        if Wbar.real > 0.0:
            comp = (Wbar - FN) / Wbar
    if comp.real > 1.0:
        comp = 1.0 + 0j
    elif comp.real < -1.0:
        comp = -1.0 + 0j
    t = tphi / (r * A)
    MR = rs * rs * C * D * (b * c + (1.0 + cM * comp) * FN * t) / (1.0 + rs * B * D * t)  # eq. 16
    FDP = (MR * (A * A + B * B) / (rs * A * C) - B * FN / A) * (1.0 + cP1 + cP2 * sa) * (1.0 + cP3 * comp)
    # side force, eqs. 17–19, over the same triangular normal stress
    D1, D2 = _bulldoze_coeffs(phi, Xc)
    tb = cmath.tan(beta)
    Iy, Ib = 0j, 0j
    for seg in range(2):
        if seg == 0:
            lo, L = thm, th1 - thm
        else:
            lo, L = 0j, thm
        for i in range(xg.shape[0]):
            th = lo + L * xg[i]
            wt = L * wg[i]
            sig = sigm * (1.0 - xg[i]) if seg == 0 else sigm * xg[i]
            jy = r * (1.0 - s) * (th1 - th) * tb
            Iy += wt * (c + sig * tphi) * _csat(jy / ky)  # eq. 18 (with tan φ, as in C.26)
            ct = cmath.cos(th)
            hth = Rj * (ct - c1)
            Ib += wt * D1 * (c * hth + 0.5 * D2 * gam * hth * hth) * (Rj - hth * ct)
    return (FDP + 0j, -r * b * Iy + 0j, FN + 0j, Ib + 0j, MR + 0j)


@njit(_nrt=False)
def slip_function(model: float, s: complex, beta: complex, h: complex, q: NDArray, xg: NDArray, wg: NDArray,
                  beps: float, w_others: float = 0.0, n_avg: float = 1.0) -> tuple:
    """The model's slip function, a 5-tuple (module docstring); ``w_others``, ``n_avg``: Ding's actual W̄
    (:func:`_ding_slip_function`; the defaults make W̄ this wheel's own F_N)."""
    if model == DING:
        return _ding_slip_function(s, beta, h, q, xg, wg, beps, w_others, n_avg)
    else:
        return _ishigami_slip_function(s, beta, h, q, xg, wg, beps)


# The per-wheel helpers are inlined into the kernels: called, each passed its arrays field by field, they made
# the lookup-table kernel 0.61 µs per four wheels instead of 0.43 (Zoë, 2026-11-28).
@njit(inline="always")
def _slip_ratio(vx: float, rw: float, q: NDArray) -> tuple:
    """(sgn Rω, slip ratio s, ∂s/∂v_x, ∂s/∂(Rω)), mirrored for Rω < 0 (see :func:`_slip_map`)."""
    eps, rho = q[VEPS], q[RHO]
    sg = 1.0 if rw >= 0.0 else -1.0
    W = math.sqrt(rw * rw + eps * eps)
    if q[MODEL] == DING:
        W3 = W * W * W
        V = sg * (vx + rw)  # wheel-centre speed in the mirrored (driving forwards) frame
        if V <= rho * W:  # driving
            s = 1.0 - V / (rho * W)
            ds_dvx = -sg / (rho * W)
            ds_dRw = -sg / (rho * W) + V * rw / (rho * W3)
        else:  # skid
            s = rho * W / V - 1.0
            ds_dvx = -rho * W / (V * V) * sg
            ds_dRw = ds_dvx + rho * rw / (W * V)
    else:
        iW = 1.0 / W
        s = -sg * vx * iW
        ds_dvx = -sg * iW
        ds_dRw = sg * vx * rw * (iW * iW * iW)
    if s < q[SLO]:
        s, ds_dvx, ds_dRw = q[SLO], 0.0, 0.0
    elif s > q[SHI]:
        s, ds_dvx, ds_dRw = q[SHI], 0.0, 0.0
    return sg, s, ds_dvx, ds_dRw


@njit(inline="always")
def _slip_map(vx: float, vy: float, rw: float, q: NDArray) -> tuple:
    """Slip ratio, slip angle and their derivatives w.r.t. v_x, v_y, Rω (mirrored for Rω < 0).

    Ishigami (C.19): ``s = −v_x/Rω``.  Ding (Wong's slip and skid, with the shearing radius r_s = ρ·R, R the
    radius of the input Rω — the rim's, whose Δz the collision gives):
    ``s = 1 − V_x/(r_s ω)`` while ``V_x <= r_s ω`` (driving), ``s = r_s ω/V_x − 1`` beyond (skid, in
    (−1, 0]); the two branches meet with equal slope at s = 0.  ``|Rω|`` and ``|V_x|`` are regularized as
    ``sqrt(x² + v_eps²)``; s is clipped to [s_lo, s_hi].
    ``β = atan(v_y/|V_x|)`` (C.20, with the sign of V_x taken out so that f_y opposes v_y).
    """
    sg, s, ds_dvx, ds_dRw = _slip_ratio(vx, rw, q)
    eps = q[VEPS]
    Vx = vx + rw
    U = math.sqrt(Vx * Vx + eps * eps)
    den = U * U + vy * vy
    beta = math.atan2(vy, U)
    db_dVx = -vy / den * Vx / U  # ∂β/∂v_x = ∂β/∂(Rω)
    return sg, s, ds_dvx, ds_dRw, beta, db_dVx, U / den, db_dVx


@njit(inline="always")
def _slip_tangent(vx: float, vy: float, rw: float, q: NDArray) -> tuple:
    """:func:`_slip_map` with ``tan β = v_y/|V_x|`` (and its derivatives) in place of β: the lookup table's β
    axis, which needs no arctangent."""
    sg, s, ds_dvx, ds_dRw = _slip_ratio(vx, rw, q)
    eps = q[VEPS]
    Vx = vx + rw
    iU = 1.0 / math.sqrt(Vx * Vx + eps * eps)
    t = vy * iU
    dt_dVx = -t * Vx * (iU * iU)  # ∂t/∂v_x = ∂t/∂(Rω)
    return sg, s, ds_dvx, ds_dRw, t, dt_dVx, iU, dt_dVx


@njit(inline="always")
def _zero(w: int, f: NDArray, df_dv: NDArray, df_dRw: NDArray, df_ddz: NDArray) -> None:
    for i in range(3):
        f[w, i] = 0.0
        df_dRw[w, i] = 0.0
        df_ddz[w, i] = 0.0
        for j in range(3):
            df_dv[w, i, j] = 0.0


@njit(inline="always")
def _assemble(w: int, q: NDArray, vz: float, sl: tuple, beta: float, pen: float, clipped: bool, wk: NDArray,
              f: NDArray, df_dv: NDArray, df_dRw: NDArray, df_ddz: NDArray) -> None:
    """Forces and Jacobian of wheel w from the slip function's values/partials ``wk`` (rows: F, ∂s, ∂β, ∂h;
    columns f_x, f_y (shear), f_z, the bulldozing integral B): :func:`_assemble_values`."""
    _assemble_values(w, q, vz, sl, beta, pen, clipped, (wk[0, 0], wk[1, 0], wk[2, 0], wk[3, 0]),
                     (wk[0, 1], wk[1, 1], wk[2, 1], wk[3, 1]), (wk[0, 2], wk[1, 2], wk[2, 2], wk[3, 2]), wk[0, 3],
                     wk[3, 3], f, df_dv, df_dRw, df_ddz)


@njit(inline="always")
def _assemble_values(w: int, q: NDArray, vz: float, sl: tuple, beta: float, pen: float, clipped: bool, X: tuple,
                     Y: tuple, Z: tuple, bull: float, dbull: float, f: NDArray, df_dv: NDArray, df_dRw: NDArray,
                     df_ddz: NDArray) -> None:
    """Forces and Jacobian of wheel w from the slip function's values and partials (F, ∂s, ∂β, ∂h) of f_x (X),
    f_y's shear part (Y) and f_z (Z), and the bulldozing integral B and ∂B/∂h (``bull``, ``dbull``).

    ``sl`` is :func:`_slip_map`'s tuple and ``beta`` its β — or, for the lookup table, :func:`_slip_tangent`'s
    tuple and tan β, with ∂/∂(tan β) in place of ∂β: the bulldozing sign is then smoothed in tan β, which
    differs from β by less than β³/3 where the smoothing acts (|β| of a few ``beta_eps``).  (Scalars, not a
    work array: the compiler keeps them in registers — stores into ``f`` might alias a work array — the lookup
    table kernel 0.181 → 0.166 µs per four wheels, the same numbers to the bit.)"""
    sg, _, ds_dvx, ds_dRw, _, db_dvx, db_dvy, db_dRw = sl
    beps, kd, kwall = q[BEPS], q[KD], q[KWALL]
    isq = 1.0 / math.sqrt(beta * beta + beps * beps)
    sgb = beta * isq  # smooth sgn(β) of the bulldozing term
    dsgb = beps * beps * (isq * isq * isq)
    # lateral force = shear part − sgn(β)·bulldozing
    Y = (Y[0] - sgb * bull, Y[1], Y[2] - dsgb * bull, Y[3] - sgb * dbull)
    for k, c in enumerate((X, Y, Z)):
        m = sg if k == 0 else 1.0
        f[w, k] = m * c[0]
        df_dv[w, k, 0] = m * (c[1] * ds_dvx + c[2] * db_dvx)
        df_dv[w, k, 1] = m * c[2] * db_dvy
        df_dv[w, k, 2] = 0.0
        df_dRw[w, k] = m * (c[1] * ds_dRw + c[2] * db_dRw)
        df_ddz[w, k] = -m * c[3]
    fz = Z[0] + pen - kd * vz
    if fz > 0.0:
        f[w, 2] = fz
        df_dv[w, 2, 2] = -kd
        if clipped:
            df_ddz[w, 2] = -kwall
    else:  # the ground cannot pull (C.4)
        f[w, 2] = 0.0
        df_dRw[w, 2] = 0.0
        df_ddz[w, 2] = 0.0
        for j in range(3):
            df_dv[w, 2, j] = 0.0


@njit(_nrt=False)
def _ding_actual_loads(v: NDArray, Rw: NDArray, dz: NDArray, P: NDArray, fn: NDArray) -> float:
    """Ding's eq.-16 normal force F_N of every wheel into ``fn`` (0 out of contact) and their sum: the wheels'
    actual loads, whose mean is W̄ when ``mean_wheel_load="actual"``."""
    one = P.shape[0] == 1
    total = 0.0
    for w in range(v.shape[0]):
        q = P[0] if one else P[w]
        fn[w] = 0.0
        h = -dz[w] + q[HOFF]
        if q[MODEL] != DING or h <= H_MIN:
            continue
        sl = _slip_map(v[w, 0], v[w, 1], Rw[w], q)
        fn[w] = _ding_normal(complex(sl[1], 0.0), complex(min(h, q[HMAX]), 0.0), q)[9].real
        total += fn[w]
    return total


@njit(_nrt=False)
def terra_kernel(v: NDArray, Rw: NDArray, dz: NDArray, P: NDArray, aux: NDArray, f: NDArray, df_dv: NDArray,
                 df_dRw: NDArray, df_ddz: NDArray, mw: NDArray, work: NDArray) -> None:
    """Direct (quadrature) evaluation of the Ishigami or Ding model for every wheel (``work``: rows 0–3 the slip
    function's values and partials, row 4 the wheels' loads)."""
    one = P.shape[0] == 1
    wk = work[:4]
    nw = v.shape[0]
    fn = work[4]
    total = 0.0
    for w in range(nw):  # Ding with W̄ the wheels' actual mean normal force: their loads first
        q = P[0] if one else P[w]
        if q[MODEL] == DING and q[HDR + 15] < 0.0:
            total = _ding_actual_loads(v, Rw, dz, P, fn)
            break
    for w in range(nw):
        q = P[0] if one else P[w]
        h, pen, clipped = -dz[w] + q[HOFF], 0.0, False
        if h <= H_MIN:  # (in contact, _assemble writes every entry)
            _zero(w, f, df_dv, df_dRw, df_ddz)
            continue
        nq = int(q[NQ])
        xg, wg = aux[:nq], aux[nq:2 * nq]
        sl = _slip_map(v[w, 0], v[w, 1], Rw[w], q)
        s, beta = sl[1], sl[4]
        if h > q[HMAX]:
            pen, h, clipped = q[KWALL] * (h - q[HMAX]), q[HMAX], True
        others = total - fn[w]
        cb = slip_function(q[MODEL], complex(s, CSTEP), complex(beta, 0.0), complex(h, 0.0), q, xg, wg, q[BEPS],
                           others, float(nw))
        for k in range(5):
            wk[0, k] = cb[k].real
            wk[1, k] = cb[k].imag / CSTEP
        cb = slip_function(q[MODEL], complex(s, 0.0), complex(beta, CSTEP), complex(h, 0.0), q, xg, wg, q[BEPS],
                           others, float(nw))
        for k in range(5):
            wk[2, k] = cb[k].imag / CSTEP
        if clipped:
            for k in range(5):
                wk[3, k] = 0.0
        else:
            cb = slip_function(q[MODEL], complex(s, 0.0), complex(beta, 0.0), complex(h, CSTEP), q, xg, wg,
                               q[BEPS], others, float(nw))
            for k in range(5):
                wk[3, k] = cb[k].imag / CSTEP
        _assemble(w, q, v[w, 2], sl, beta, pen, clipped, wk, f, df_dv, df_dRw, df_ddz)
        if q[MODEL] == DING:
            _axle_moment(w, q, sl, wk, mw)


@njit(_nrt=False)
def _axle_moment(w: int, q: NDArray, sl: tuple, wk: NDArray, mw: NDArray) -> None:
    """Ding et al.'s resistance moment M_R (eq. 16) as the moment the engine adds about the wheel's axis (``mw``
    row w: the moment, N·m, and its partials w.r.t. v_x, v_y, v_z, Rω, Δz).

    The force balance applies the contact force at the rim point below the hub, whose moment about the axle is
    already −r·f_x; the soil's moment about the axle is −M_R (it resists the wheel's turning, mirrored when the
    wheel turns backwards), so the moment added is r·f_x − sgn·M_R = sgn·(r·F_DP − M_R): the wheel then needs
    a drive torque M_R at steady state, as in Ding et al.'s Fig. 7, not r·F_DP."""
    sg, _, ds_dvx, ds_dRw, _, db_dvx, db_dvy, db_dRw = sl
    r = q[HDR]
    mw[w, 0] = sg * (r * wk[0, 0] - wk[0, 4])
    g_s = sg * (r * wk[1, 0] - wk[1, 4])  # ∂/∂s, ∂/∂β, ∂/∂h of the moment
    g_b = sg * (r * wk[2, 0] - wk[2, 4])
    g_h = sg * (r * wk[3, 0] - wk[3, 4])
    mw[w, 1] = g_s * ds_dvx + g_b * db_dvx
    mw[w, 2] = g_b * db_dvy
    mw[w, 3] = 0.0
    mw[w, 4] = g_s * ds_dRw + g_b * db_dRw
    mw[w, 5] = -g_h  # h = −Δz + offset


# ---- lookup table (thesis App. C: "precomputing a lookup table ... trilinear interpolation") ---------------

@njit
def build_lut(q: NDArray, xg: NDArray, wg: NDArray, s_grid: NDArray, b_grid: NDArray, h_grid: NDArray,
              out: NDArray) -> None:
    """Tabulate ``[f_x, f_y(shear), f_z]`` over (s, β, h), node-major (``out[3 ((i nb + j) nh + k) + m]``), then
    the bulldozing integral over h (``out[3 n3 + k]``), into ``out``.

    ``b_grid`` must be ``atan(c·u/(1 − |u|))`` for u uniform in [−1, 1], c = ``q[LUT_WARP]`` (the nodes of
    :func:`lut_kernel`'s u axis).
    """
    ns, nb, nh = s_grid.shape[0], b_grid.shape[0], h_grid.shape[0]
    n3 = ns * nb * nh
    for i in range(ns):
        for j in range(nb):
            for k in range(nh):
                idx = (i * nb + j) * nh + k
                if h_grid[k] <= H_MIN:
                    out[3 * idx] = out[3 * idx + 1] = out[3 * idx + 2] = 0.0
                    if i == 0 and j == 0:
                        out[3 * n3 + k] = 0.0
                    continue
                cb = slip_function(q[MODEL], complex(s_grid[i], 0.0), complex(b_grid[j], 0.0),
                                   complex(h_grid[k], 0.0), q, xg, wg, q[BEPS])
                for m in range(3):
                    out[3 * idx + m] = cb[m].real
                if i == 0 and j == 0:
                    out[3 * n3 + k] = cb[3].real


@njit(inline="always")
def _cell(x: float, lo: float, hi: float, n: int) -> tuple[int, float, float]:
    """x's cell on n nodes uniform in [lo, hi]: (index, fraction within the cell, 1 / the cell's width)."""
    r = (n - 1) / (hi - lo)
    u = (x - lo) * r
    i = int(math.floor(u))
    if i < 0:
        i = 0
    elif i > n - 2:
        i = n - 2
    return i, u - i, r


@njit(_nrt=False)
def lut_kernel(v: NDArray, Rw: NDArray, dz: NDArray, P: NDArray, aux: NDArray, f: NDArray, df_dv: NDArray,
               df_dRw: NDArray, df_ddz: NDArray, mw: NDArray, work: NDArray) -> None:
    """Trilinear interpolation in (s, u(tan β), h); the Jacobian is that of the interpolant (exact within a cell).
    (``work`` is not used.)

    The β axis is uniform in ``u = t/(|t| + c)``, t = tan β = v_y/|V_x| and c = ``q[LUT_WARP]``: nodes crowd
    around β = 0, where f_y turns, u = ±1 is β = ±π/2, and u and its derivative need one division — no
    arctangent or asinh (with the node-major table, 0.43 → 0.20 µs per four wheels; and closer to the integrals
    than the asinh(β) axis it replaced: test_contact_models)."""
    one = P.shape[0] == 1
    for w in range(v.shape[0]):
        q = P[0] if one else P[w]
        h, pen, clipped = -dz[w] + q[HOFF], 0.0, False
        if h <= H_MIN:  # (in contact, _assemble_values writes every entry)
            _zero(w, f, df_dv, df_dRw, df_ddz)
            continue
        sl = _slip_tangent(v[w, 0], v[w, 1], Rw[w], q)
        s, t = sl[1], sl[4]
        if h > q[HMAX]:
            pen, h, clipped = q[KWALL] * (h - q[HMAX]), q[HMAX], True
        off, ns, nb, nh = int(q[LUT_OFF]), int(q[LUT_NS]), int(q[LUT_NB]), int(q[LUT_NH])
        i, ts, rs = _cell(s, q[SLO], q[SHI], ns)
        c = q[LUT_WARP]
        iden = 1.0 / (abs(t) + c)
        j, tb, rt = _cell(t * iden, -1.0, 1.0, nb)
        rt *= c * iden * iden  # 1 / the cell's width in t: (du/dt) / Δu, du/dt = c/(|t| + c)²
        k, th, rh = _cell(h, 0.0, q[HMAX], nh)
        # the cell's corners (node-major: a node's three values are adjacent), interpolated along h, then
        # (tan) β, then s; each level's differences give that axis's partial
        b00 = off + 3 * ((i * nb + j) * nh + k)
        b01 = b00 + 3 * nh
        b10 = b00 + 3 * nb * nh
        b11 = b10 + 3 * nh
        if clipped:
            rh = 0.0
        cell = (b00, b01, b10, b11, th, tb, ts, rs, rt, rh)
        n3 = ns * nb * nh
        b0, b1 = aux[off + 3 * n3 + k], aux[off + 3 * n3 + k + 1]
        _assemble_values(w, q, v[w, 2], sl, t, pen, clipped, _trilinear(aux, cell, 0), _trilinear(aux, cell, 1),
                         _trilinear(aux, cell, 2), (1.0 - th) * b0 + th * b1, (b1 - b0) * rh, f, df_dv, df_dRw,
                         df_ddz)


@njit(inline="always")
def _trilinear(aux: NDArray, cell: tuple, m: int) -> tuple:
    """Output m's (value, ∂s, ∂(tan β), ∂h) in the cell (corner offsets b00, b01, b10, b11; fractions th, tb, ts
    along h, tan β, s; 1 / the cell's widths rs, rt, rh)."""
    b00, b01, b10, b11, th, tb, ts, rs, rt, rh = cell
    v00, v01, v10, v11 = aux[b00 + m], aux[b01 + m], aux[b10 + m], aux[b11 + m]
    g00, g01 = aux[b00 + 3 + m] - v00, aux[b01 + 3 + m] - v01  # ∂/∂h × dh on the four h edges
    g10, g11 = aux[b10 + 3 + m] - v10, aux[b11 + 3 + m] - v11
    c00, c01, c10, c11 = v00 + th * g00, v01 + th * g01, v10 + th * g10, v11 + th * g11
    e0, e1 = c01 - c00, c11 - c10  # ∂/∂t × the cell's width in t, at s nodes i, i + 1
    c0, c1 = c00 + tb * e0, c10 + tb * e1
    h0, h1 = g00 + tb * (g01 - g00), g10 + tb * (g11 - g10)
    return c0 + ts * (c1 - c0), (c1 - c0) * rs, (e0 + ts * (e1 - e0)) * rt, (h0 + ts * (h1 - h0)) * rh
