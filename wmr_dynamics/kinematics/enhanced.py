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
from typing import NamedTuple

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


class EnhancedWork(NamedTuple):
    """Preallocated scratch of the enhanced-kinematics kernels (:func:`_composite_inertia`,
    :func:`_rollover_margin`), so that a compiled step allocates nothing; one per kinematic workspace
    (``compiled.kinematics.KinematicWorkspace.enhanced``), made by :func:`enhanced_work`."""

    inertia: NDArray  # (6, 6) I_b, the whole vehicle's spatial inertia about the body origin (eq. B.13)
    rot: NDArray  # (3, 3) R_body,i of one frame
    inertia_c: NDArray  # (3, 3) one frame's rotational inertia about its centre of mass, frame axes
    inertia_sum: NDArray  # (3, 3) Σ_i of the rotational inertias about the body origin, body axes
    com_frame: NDArray  # (3,) one frame's centre of mass, frame coordinates (m)
    com_body: NDArray  # (3,) the same in body coordinates (m)
    moment: NDArray  # (3,) Σ_i m_i c_i, body coordinates (kg·m)
    cg: NDArray  # (3,) centre of gravity, world (m)
    force: NDArray  # (3,) linear body force, world (N)
    plane_pts: NDArray  # (nw, 2) contact points projected on the ground plane (m)
    hull: NDArray  # (2 nw, 2) their convex hull, counter-clockwise (its first rows)
    order: NDArray  # (nw,) int64: the projected points sorted by x


@njit
def enhanced_work(nw: int) -> EnhancedWork:
    """An :class:`EnhancedWork` for a vehicle of ``nw`` wheels."""
    z = np.zeros
    return EnhancedWork(z((6, 6)), z((3, 3)), z((3, 3)), z((3, 3)), z(3), z(3), z(3), z(3), z(3), z((nw, 2)),
                        z((2 * nw, 2)), np.zeros(nw, dtype=np.int64))


def composite_inertia(model: WmrModel, T_world: NDArray) -> tuple[float, NDArray, NDArray]:
    """Whole-vehicle mass (kg), centre of mass (m) and spatial inertia I_b^c about the body origin, body axes."""
    I_b = np.zeros((6, 6))
    m = _composite_inertia(np.ascontiguousarray(model.I_spatial), np.ascontiguousarray(T_world, dtype=float), I_b,
                           enhanced_work(model.num_wheels))
    return m, np.array([I_b[2, 4], I_b[0, 5], I_b[1, 3]]) / m, I_b


@njit
def _composite_inertia(I_spatial: NDArray, T_world: NDArray, I_b: NDArray, work: EnhancedWork) -> float:
    """I_b = Σ_i X_iᵀ I_i X_i, the whole tree's spatial inertia about the body origin in body axes, written
    into ``I_b`` (6, 6) as [[Ī, m c×], [m c×ᵀ, m 1]] (eq. B.13); returns the mass m (kg).

    Each frame's mass m_i, centre c_i and rotational inertia about it are read from its I_spatial (frame
    coordinates) and moved to body coordinates (c_b = R c_i + p; Ī_b += R Ī_c Rᵀ + m_i (|c_b|² 1 − c_b c_bᵀ)).
    ``work``: scratch (:class:`EnhancedWork`; its ``inertia`` may be ``I_b`` itself)."""
    T0 = T_world[0]
    m = 0.0
    h, Ib, R, Ic = work.moment, work.inertia_sum, work.rot, work.inertia_c
    c, cb = work.com_frame, work.com_body
    for a in range(3):
        h[a] = 0.0
        for b in range(3):
            Ib[a, b] = 0.0
    for i in range(I_spatial.shape[0]):
        I6 = I_spatial[i]
        mi = I6[3, 3]
        if mi == 0.0:
            continue
        c[0], c[1], c[2] = I6[2, 4] / mi, I6[0, 5] / mi, I6[1, 3] / mi  # m c× is the upper right block
        cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
        for a in range(3):
            for b in range(3):
                Ic[a, b] = I6[a, b] - mi * ((cc if a == b else 0.0) - c[a] * c[b])  # about c_i, frame axes
        for a in range(3):  # R = R_body,i = R_wbᵀ R_wi; p = R_wbᵀ (p_wi − p_wb)
            for b in range(3):
                R[a, b] = T0[0, a] * T_world[i, 0, b] + T0[1, a] * T_world[i, 1, b] + T0[2, a] * T_world[i, 2, b]
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


@njit(inline="always")
def _mass_and_cg(I_spatial: NDArray, T_world: NDArray, cg: NDArray) -> float:
    """The tree's mass (kg; returned) and centre of mass (m, world coordinates; into ``cg``): Σ m_i (R_i c_i + p_i)
    / m over the frames, m_i c_i read from each I_spatial's m c× block (eq. B.13)."""
    m = 0.0
    cg[0] = cg[1] = cg[2] = 0.0
    for i in range(I_spatial.shape[0]):
        mi = I_spatial[i, 3, 3]
        if mi == 0.0:
            continue
        h0, h1, h2 = I_spatial[i, 2, 4], I_spatial[i, 0, 5], I_spatial[i, 1, 3]  # m_i c_i, frame axes
        for a in range(3):
            cg[a] += T_world[i, a, 0] * h0 + T_world[i, a, 1] * h1 + T_world[i, a, 2] * h2 + mi * T_world[i, a, 3]
        m += mi
    for a in range(3):
        cg[a] /= m
    return m


@njit(_nrt=False)
def _body_force(I_b: NDArray, R_wb: NDArray, v_b: NDArray, gravity: float, f_b: NDArray) -> None:
    """f_b = I_b g − v_b ×* (I_b v_b) (thesis eq. 2.44): the spatial force (N·m; N, body coordinates) the
    body must feel to move with v_b, g = [0; R_wbᵀ (0, 0, −G)].  (−f_b is the fused-body bias of eq. 2.89.)
    Allocation-free (the kinematic and the dynamic step call it every step)."""
    g0, g1, g2 = -gravity * R_wb[2, 0], -gravity * R_wb[2, 1], -gravity * R_wb[2, 2]
    w0, w1, w2, v0, v1, v2 = v_b[0], v_b[1], v_b[2], v_b[3], v_b[4], v_b[5]
    n0, n1, n2 = _row_dot6(I_b, 0, v_b), _row_dot6(I_b, 1, v_b), _row_dot6(I_b, 2, v_b)  # I_b v_b
    f0, f1, f2 = _row_dot6(I_b, 3, v_b), _row_dot6(I_b, 4, v_b), _row_dot6(I_b, 5, v_b)
    # v ×* f = [ω × n + v × f; ω × f] (eq. B.15)
    f_b[0] = _gravity_row(I_b, 0, g0, g1, g2) - ((w1 * n2 - w2 * n1) + (v1 * f2 - v2 * f1))
    f_b[1] = _gravity_row(I_b, 1, g0, g1, g2) - ((w2 * n0 - w0 * n2) + (v2 * f0 - v0 * f2))
    f_b[2] = _gravity_row(I_b, 2, g0, g1, g2) - ((w0 * n1 - w1 * n0) + (v0 * f1 - v1 * f0))
    f_b[3] = _gravity_row(I_b, 3, g0, g1, g2) - (w1 * f2 - w2 * f1)
    f_b[4] = _gravity_row(I_b, 4, g0, g1, g2) - (w2 * f0 - w0 * f2)
    f_b[5] = _gravity_row(I_b, 5, g0, g1, g2) - (w0 * f1 - w1 * f0)


@njit(inline="always")
def _row_dot6(M: NDArray, i: int, v: NDArray) -> float:
    """Σ_j M[i, j] v[j] over six columns, summed left to right."""
    s = 0.0
    for j in range(6):
        s += M[i, j] * v[j]
    return s


@njit(inline="always")
def _gravity_row(I_b: NDArray, i: int, g0: float, g1: float, g2: float) -> float:
    """Row i of I_b [0; g]: Σ_j I_b[i, 3 + j] g_j, summed left to right."""
    s = 0.0
    s += I_b[i, 3] * g0
    s += I_b[i, 4] * g1
    s += I_b[i, 5] * g2
    return s


@njit(_nrt=False)
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
    ws0, ws1, ws2 = a_ang * P[12], a_ang * P[13], a_ang * P[14]
    vs0, vs1, vs2 = a_lon * P[6] + a_lat * P[9], a_lon * P[7] + a_lat * P[10], a_lon * P[8] + a_lat * P[11]
    # eq. 2.50: back to the body origin, (X_b^cg)⁻¹ [ω; v] = [ω; v + com × ω]
    out[0], out[1], out[2] = ws0, ws1, ws2
    out[3] = vs0 + (com[1] * ws2 - com[2] * ws1)
    out[4] = vs1 + (com[2] * ws0 - com[0] * ws2)
    out[5] = vs2 + (com[0] * ws1 - com[1] * ws0)
    return True


@njit(_nrt=False)
def _rollover_margin(cg: NDArray, f: NDArray, points: NDArray, normals: NDArray, work: EnhancedWork) -> float:
    """Signed distance (m) from the support-polygon boundary to where the line of the cg force ``f`` (world)
    through the cg meets the ground: positive inside the polygon of the contact points (stable), negative
    outside: liftoff is imminent (thesis §2.3, "Limitations", after Tarokh [124]).  The ground plane passes
    through the mean contact point with the mean contact normal; the polygon is the convex hull of the
    projected points (Andrew's monotone chain).  ``work``: scratch (:class:`EnhancedWork`); allocation-free."""
    nw = points.shape[0]
    n0 = n1 = n2 = 0.0
    p0 = p1 = p2 = 0.0
    inv = 1.0 / nw
    for w in range(nw):
        n0 += normals[w, 0] * inv
        n1 += normals[w, 1] * inv
        n2 += normals[w, 2] * inv
        p0 += points[w, 0] * inv
        p1 += points[w, 1] * inv
        p2 += points[w, 2] * inv
    s = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    n0, n1, n2 = n0 / s, n1 / s, n2 / s
    denom = f[0] * n0 + f[1] * n1 + f[2] * n2
    if denom >= -1e-12:  # the force does not push into the ground: nothing holds the vehicle down
        return -np.inf
    t = ((p0 - cg[0]) * n0 + (p1 - cg[1]) * n1 + (p2 - cg[2]) * n2) / denom
    x0, x1, x2 = cg[0] + t * f[0], cg[1] + t * f[1], cg[2] + t * f[2]
    r0, r1, r2 = (1.0, 0.0, 0.0) if abs(n0) < 0.9 else (0.0, 1.0, 0.0)
    e10, e11, e12 = n1 * r2 - n2 * r1, n2 * r0 - n0 * r2, n0 * r1 - n1 * r0  # e1 = n × ref
    s = math.sqrt(e10 * e10 + e11 * e11 + e12 * e12)
    e10, e11, e12 = e10 / s, e11 / s, e12 / s
    e20, e21, e22 = n1 * e12 - n2 * e11, n2 * e10 - n0 * e12, n0 * e11 - n1 * e10  # e2 = n × e1
    pts = work.plane_pts
    for w in range(nw):
        d0, d1, d2 = points[w, 0] - p0, points[w, 1] - p1, points[w, 2] - p2
        pts[w, 0] = d0 * e10 + d1 * e11 + d2 * e12
        pts[w, 1] = d0 * e20 + d1 * e21 + d2 * e22
    d0, d1, d2 = x0 - p0, x1 - p1, x2 - p2
    px, py = d0 * e10 + d1 * e11 + d2 * e12, d0 * e20 + d1 * e21 + d2 * e22
    hull = work.hull
    nh = _convex_hull(pts, work.order, hull)
    if nh < 3:  # fewer than 3 non-collinear contacts: no area to stand on
        best = np.inf
        for w in range(nw):
            best = min(best, math.hypot(pts[w, 0] - px, pts[w, 1] - py))
        return -best
    worst = -np.inf  # max over the edges of the signed distance outside (counter-clockwise hull)
    for k in range(nh):
        ax, ay = hull[k, 0], hull[k, 1]
        bx, by = hull[(k + 1) % nh, 0], hull[(k + 1) % nh, 1]
        dx, dy = bx - ax, by - ay
        worst = max(worst, (dy * (px - ax) - dx * (py - ay)) / math.sqrt(dx * dx + dy * dy))  # (not hypot: slow)
    return -worst


@njit(_nrt=False)
def _convex_hull(pts: NDArray, order: NDArray, out: NDArray) -> int:
    """Counter-clockwise convex hull of the 2-D points ``pts`` (n, 2) without collinear points (Andrew's monotone
    chain) into the first rows of ``out`` (2n, 2); returns their number.  ``order`` (n,) int64: scratch, the
    points sorted by x (ties by y), by insertion sort (stable, as numpy's sort of so few keys)."""
    n = pts.shape[0]
    for j in range(n):
        key = pts[j, 0] + 1e-9 * pts[j, 1]
        i = j
        while i > 0 and pts[order[i - 1], 0] + 1e-9 * pts[order[i - 1], 1] > key:
            order[i] = order[i - 1]
            i -= 1
        order[i] = j
    k = 0
    for sweep in range(2):
        start = k
        for j in range(n):
            p = order[j] if sweep == 0 else order[n - 1 - j]
            px, py = pts[p, 0], pts[p, 1]
            while k >= start + 2 and _cross(out[k - 2, 0], out[k - 2, 1], out[k - 1, 0], out[k - 1, 1], px,
                                            py) <= 1e-12:
                k -= 1
            out[k, 0], out[k, 1] = px, py
            k += 1
        k -= 1  # the last point of each chain starts the other
    return max(k, 0)


@njit(inline="always")
def _cross(ox: float, oy: float, ax: float, ay: float, bx: float, by: float) -> float:
    """z of (a − o) × (b − o)."""
    return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)
