"""Enhanced kinematics: body-level slip (thesis §2.3, eqs. 2.44–2.52) and a rollover-risk indicator.

Slip is predicted at the centre of gravity from the force the body must feel (gravity, Coriolis and
centripetal terms, eq. 2.44), parameterized by six numbers p1…p6 (eqs. 2.48–2.49), then converted to wheel
slip (eq. 2.52) so the wheels stay on the terrain when q̇' is re-solved (eq. 2.38).

The kernels here are the one implementation: the compiled kinematic step calls them
(:mod:`wmr_dynamics.compiled.kinematics`), the dynamic step's fused-body bias (eq. 2.89) is −:func:`_body_force`,
and :func:`composite_inertia` is their checked Python entry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import WmrModel


@dataclass(frozen=True)
class SlipParams:
    """Body slip parameters of eqs. 2.48–2.49 and the slip directions (unit vectors in body coordinates).

    p1: longitudinal slip per normalized longitudinal force; p2: rolling resistance; p3: lateral slip per
    normalized lateral force; p4: under/oversteer; p5: left/right rolling-resistance asymmetry; p6:
    angular slip in skidding turns.  All dimensionless.

    Signs: the body force of eq. 2.44 is implemented as the gravity and inertial load f = I_b g − v ×* (I_b v),
    whose f_z is negative (−m·G on level ground).  So f_lon/f_z and f_lat/f_z are the traction the ground
    must supply in units of the weight (f_lat/f_z = +a_c/G toward the centre of a turn, f_lon/f_z > 0
    uphill), and a vehicle that slips back when pushing has p1 < 0, covers less ground than its wheels
    roll p2 < 0, slides outward in turns p3 < 0, understeers p4 < 0, yaws less than its wheels command
    p6 < 0.  The thesis writes eqs. 2.48–2.49 with a positive normal force: its p1, p3, p4 have the
    opposite signs (docs/calibration.md).
    """

    p: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    lon: tuple[float, float, float] = (1.0, 0.0, 0.0)
    lat: tuple[float, float, float] = (0.0, 1.0, 0.0)
    ang: tuple[float, float, float] = (0.0, 0.0, 1.0)

    def __post_init__(self) -> None:
        if len(self.p) != 6 or not np.all(np.isfinite(self.p)):
            raise ModelError(f"slip parameters p: expected 6 finite numbers (p1..p6), got {self.p!r}")

    @property
    def is_zero(self) -> bool:
        return not any(self.p)

    def kernel_data(self) -> NDArray:
        """(15,) the parameters as the kernels take them: p1…p6, lon, lat, ang."""
        return np.array([*self.p, *self.lon, *self.lat, *self.ang], dtype=float)


def composite_inertia(model: WmrModel, T_world: NDArray) -> tuple[float, NDArray, NDArray]:
    """Whole-vehicle mass (kg), centre of mass (m) and spatial inertia I_b^c about the body origin, body axes."""
    I_b = np.zeros((6, 6))
    m = _composite_inertia(np.ascontiguousarray(model.I_spatial), np.ascontiguousarray(T_world, dtype=float), I_b)
    return m, np.array([I_b[2, 4], I_b[0, 5], I_b[1, 3]]) / m, I_b


@njit
def _composite_inertia(I_spatial: NDArray, T_world: NDArray, I_b: NDArray) -> float:
    """I_b = Σ_i X_iᵀ I_i X_i, the whole tree's spatial inertia about the body origin in body axes, written
    into ``I_b`` (6, 6) as [[Ī, m c×], [m c×ᵀ, m 1]] (eq. B.13); returns the mass m (kg).

    Each frame's mass m_i, centre c_i and rotational inertia about it are read from its I_spatial (frame
    coordinates) and moved to body coordinates (c_b = R c_i + p; Ī_b += R Ī_c Rᵀ + m_i (|c_b|² 1 − c_b c_bᵀ))."""
    T0 = T_world[0]
    m = 0.0
    h = np.zeros(3)
    Ib = np.zeros((3, 3))
    R = np.empty((3, 3))
    Ic = np.empty((3, 3))
    for i in range(I_spatial.shape[0]):
        I6 = I_spatial[i]
        mi = I6[3, 3]
        if mi == 0.0:
            continue
        c = np.array([I6[2, 4], I6[0, 5], I6[1, 3]]) / mi  # m c× is the upper right block
        cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
        for a in range(3):
            for b in range(3):
                Ic[a, b] = I6[a, b] - mi * ((cc if a == b else 0.0) - c[a] * c[b])  # about c_i, frame axes
        for a in range(3):  # R = R_body,i = R_wbᵀ R_wi; p = R_wbᵀ (p_wi − p_wb)
            for b in range(3):
                R[a, b] = T0[0, a] * T_world[i, 0, b] + T0[1, a] * T_world[i, 1, b] + T0[2, a] * T_world[i, 2, b]
        cb = np.zeros(3)
        for a in range(3):
            s = 0.0
            for k in range(3):
                s += T0[k, a] * (T_world[i, k, 3] - T0[k, 3])
            for b in range(3):
                s += R[a, b] * c[b]
            cb[a] = s
        cbb = cb[0] * cb[0] + cb[1] * cb[1] + cb[2] * cb[2]
        for a in range(3):
            for b in range(3):
                s = 0.0
                for k in range(3):
                    for l2 in range(3):
                        s += R[a, k] * Ic[k, l2] * R[b, l2]
                Ib[a, b] += s + mi * ((cbb if a == b else 0.0) - cb[a] * cb[b])
            h[a] += mi * cb[a]
        m += mi
    for a in range(6):
        for b in range(6):
            I_b[a, b] = 0.0
    for a in range(3):
        for b in range(3):
            I_b[a, b] = Ib[a, b]
        I_b[3 + a, 3 + a] = m
    # m c× = h× in the upper right block, its transpose in the lower left
    I_b[0, 4], I_b[0, 5], I_b[1, 3], I_b[1, 5], I_b[2, 3], I_b[2, 4] = -h[2], h[1], h[2], -h[0], -h[1], h[0]
    for a in range(3):
        for b in range(3):
            I_b[3 + b, a] = I_b[a, 3 + b]
    return m


@njit
def _body_force(I_b: NDArray, R_wb: NDArray, v_b: NDArray, gravity: float, f_b: NDArray) -> None:
    """f_b = I_b g − v_b ×* (I_b v_b) (thesis eq. 2.44): the spatial force (N·m; N, body coordinates) the
    body must feel to move with v_b, g = [0; R_wbᵀ (0, 0, −G)].  (−f_b is the fused-body bias of eq. 2.89.)"""
    g3 = np.array([-gravity * R_wb[2, 0], -gravity * R_wb[2, 1], -gravity * R_wb[2, 2]])
    Iv = np.zeros(6)
    Ig = np.zeros(6)
    for i in range(6):
        for j in range(6):
            Iv[i] += I_b[i, j] * v_b[j]
        for j in range(3):
            Ig[i] += I_b[i, 3 + j] * g3[j]
    w0, w1, w2, v0, v1, v2 = v_b[0], v_b[1], v_b[2], v_b[3], v_b[4], v_b[5]
    n0, n1, n2, f0, f1, f2 = Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5]
    # v ×* f = [ω × n + v × f; ω × f] (eq. B.15)
    f_b[0] = Ig[0] - ((w1 * n2 - w2 * n1) + (v1 * f2 - v2 * f1))
    f_b[1] = Ig[1] - ((w2 * n0 - w0 * n2) + (v2 * f0 - v0 * f2))
    f_b[2] = Ig[2] - ((w0 * n1 - w1 * n0) + (v0 * f1 - v1 * f0))
    f_b[3] = Ig[3] - (w1 * f2 - w2 * f1)
    f_b[4] = Ig[4] - (w2 * f0 - w0 * f2)
    f_b[5] = Ig[5] - (w0 * f1 - w1 * f0)


@njit
def _body_slip(P: NDArray, com: NDArray, v_b: NDArray, f_b: NDArray, out: NDArray) -> bool:
    """Spatial slip velocity of the body frame v_b,slip (eqs. 2.45–2.50), body coordinates, into ``out``.

    ``P`` (15,): p1…p6, then the unit slip directions lon, lat, ang (body axes; :class:`SlipParams`).  The
    cg frame is the body frame moved to the centre of mass ``com`` (X_b^cg = [[1, 0], [−com×, 1]]), so
    v_cg = [ω; v − com × ω] (eq. 2.45) and the linear part of f_cg equals f_b's (eq. 2.46).  Returns False
    when the normal force f_z at the cg is zero (free fall), where eqs. 2.48–2.49 are undefined."""
    w0, w1, w2 = v_b[0], v_b[1], v_b[2]
    vc0 = v_b[3] - (com[1] * w2 - com[2] * w1)
    vc1 = v_b[4] - (com[2] * w0 - com[0] * w2)
    vc2 = v_b[5] - (com[0] * w1 - com[1] * w0)
    f_z = f_b[5]
    if abs(f_z) < 1e-9:
        return False
    f_lon = f_b[3] * P[6] + f_b[4] * P[7] + f_b[5] * P[8]
    f_lat = f_b[3] * P[9] + f_b[4] * P[10] + f_b[5] * P[11]
    V_lon = vc0 * P[6] + vc1 * P[7] + vc2 * P[8]
    V_ang = w0 * P[12] + w1 * P[13] + w2 * P[14]
    a_lon = P[0] * f_lon / f_z * V_lon + P[1] * V_lon  # eq. 2.48
    a_lat = P[2] * f_lat / f_z * V_lon
    a_ang = P[3] * f_lat / f_z * V_lon + P[4] * V_lon + P[5] * V_ang  # eq. 2.49
    ws = np.array([a_ang * P[12], a_ang * P[13], a_ang * P[14]])
    vs = np.array([a_lon * P[6] + a_lat * P[9], a_lon * P[7] + a_lat * P[10], a_lon * P[8] + a_lat * P[11]])
    # eq. 2.50: back to the body origin, (X_b^cg)⁻¹ [ω; v] = [ω; v + com × ω]
    out[0], out[1], out[2] = ws[0], ws[1], ws[2]
    out[3] = vs[0] + (com[1] * ws[2] - com[2] * ws[1])
    out[4] = vs[1] + (com[2] * ws[0] - com[0] * ws[2])
    out[5] = vs[2] + (com[0] * ws[1] - com[1] * ws[0])
    return True


@njit
def _rollover_margin(cg: NDArray, f: NDArray, points: NDArray, normals: NDArray) -> float:
    """Signed distance (m) from the support-polygon boundary to where the line of the cg force ``f`` (world)
    through the cg meets the ground: positive inside the polygon of the contact points (stable), negative
    outside: liftoff is imminent (thesis §2.3, "Limitations", after Tarokh [124]).  The ground plane passes
    through the mean contact point with the mean contact normal; the polygon is the convex hull of the
    projected points (Andrew's monotone chain)."""
    nw = points.shape[0]
    n = np.zeros(3)
    p0 = np.zeros(3)
    for w in range(nw):
        for a in range(3):
            n[a] += normals[w, a] / nw
            p0[a] += points[w, a] / nw
    n /= math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    denom = f[0] * n[0] + f[1] * n[1] + f[2] * n[2]
    if denom >= -1e-12:  # the force does not push into the ground: nothing holds the vehicle down
        return -np.inf
    t = ((p0[0] - cg[0]) * n[0] + (p0[1] - cg[1]) * n[1] + (p0[2] - cg[2]) * n[2]) / denom
    x = cg + t * f
    ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(n, ref)
    e1 /= math.sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2])
    e2 = np.cross(n, e1)
    pts = np.empty((nw, 2))
    for w in range(nw):
        d = points[w] - p0
        pts[w, 0] = d[0] * e1[0] + d[1] * e1[1] + d[2] * e1[2]
        pts[w, 1] = d[0] * e2[0] + d[1] * e2[1] + d[2] * e2[2]
    d = x - p0
    px, py = d[0] * e1[0] + d[1] * e1[1] + d[2] * e1[2], d[0] * e2[0] + d[1] * e2[1] + d[2] * e2[2]
    hull = _convex_hull(pts)
    if hull.shape[0] < 3:  # fewer than 3 non-collinear contacts: no area to stand on
        best = np.inf
        for w in range(nw):
            best = min(best, math.hypot(pts[w, 0] - px, pts[w, 1] - py))
        return -best
    worst = -np.inf  # max over the edges of the signed distance outside (counter-clockwise hull)
    for k in range(hull.shape[0]):
        ax, ay = hull[k]
        bx, by = hull[(k + 1) % hull.shape[0]]
        L = math.hypot(bx - ax, by - ay)
        worst = max(worst, ((by - ay) * (px - ax) - (bx - ax) * (py - ay)) / L)
    return -worst


@njit
def _convex_hull(pts: NDArray) -> NDArray:
    """Counter-clockwise convex hull of 2-D points without collinear points (Andrew's monotone chain)."""
    order = np.argsort(pts[:, 0] + 1e-9 * pts[:, 1])
    n = pts.shape[0]
    out = np.empty((2 * n, 2))
    k = 0
    for sweep in range(2):
        start = k
        for j in range(n):
            p = pts[order[j] if sweep == 0 else order[n - 1 - j]]
            while k >= start + 2 and _cross(out[k - 2], out[k - 1], p) <= 1e-12:
                k -= 1
            out[k] = p
            k += 1
        k -= 1  # the last point of each chain starts the other
    return out[:max(k, 0)].copy()


@njit
def _cross(o: NDArray, a: NDArray, b: NDArray) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
