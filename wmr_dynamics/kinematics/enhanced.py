"""Enhanced kinematics: body-level slip (thesis §2.3, eqs. 2.44–2.52) and a rollover-risk indicator.

Slip is predicted at the centre of gravity from the force the body must feel (gravity, Coriolis and
centripetal terms, eq. 2.44), parameterized by six numbers p1…p6 (eqs. 2.48–2.49), then converted to wheel
slip (eq. 2.52) so the wheels stay on the terrain when q̇' is re-solved (eq. 2.38).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics import spatial
from wmr_dynamics.errors import ModelError
from wmr_dynamics.model import G, WmrModel


@dataclass(frozen=True)
class SlipParams:
    """Body slip parameters of eqs. 2.48–2.49 and the slip directions (unit vectors in body coordinates).

    p1: longitudinal slip per normalized longitudinal force; p2: rolling resistance; p3: lateral slip per
    normalized lateral force; p4: under/oversteer; p5: left/right rolling-resistance asymmetry; p6:
    angular slip in skidding turns.  All dimensionless.
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


def composite_inertia(model: WmrModel, T_world: NDArray) -> tuple[float, NDArray, NDArray]:
    """Whole-vehicle mass (kg), centre of mass (m) and spatial inertia I_b^c about the body origin, body axes."""
    T_bw = spatial.inv_homogeneous(T_world[0])
    T = np.einsum("ij,njk->nik", T_bw, T_world)  # every frame in body coordinates
    m = float(model.mass.sum())
    coms = np.einsum("nij,nj->ni", T[:, :3, :3], model.com) + T[:, :3, 3]
    c = (model.mass[:, None] * coms).sum(0) / m
    d = coms - c
    I_c = (np.einsum("nij,njk,nlk->il", T[:, :3, :3], model.inertia, T[:, :3, :3])
           + np.einsum("n,nij->ij", model.mass, (d * d).sum(1)[:, None, None] * np.eye(3)
                       - d[:, :, None] * d[:, None, :]))
    return m, c, spatial.spatial_inertia(m, c, I_c)


def body_force(I_b: NDArray, R_wb: NDArray, v_b: NDArray) -> NDArray:
    """f_b = I_b^c g − v_b ×f I_b^c v_b (thesis eq. 2.44), spatial force in body coordinates (N·m; N)."""
    g = np.r_[0.0, 0.0, 0.0, R_wb.T @ np.array([0.0, 0.0, -G])]
    return I_b @ g - spatial.crf(v_b) @ (I_b @ v_b)


def body_slip(params: SlipParams, com: NDArray, v_b: NDArray, f_b: NDArray) -> NDArray:
    """Spatial slip velocity of the body frame v_b,slip (eqs. 2.45–2.50), body coordinates."""
    X = spatial.plucker(spatial.homogeneous(np.eye(3), -com))  # X_b^cg: body → cg-frame coordinates
    v_cg = X @ v_b  # eq. 2.45
    f_cg = np.linalg.solve(X.T, f_b)  # eq. 2.46, (X_b^cg)^-T f_b
    lon, lat, ang = (np.asarray(a, dtype=float) for a in (params.lon, params.lat, params.ang))
    f_lin = f_cg[3:]
    f_z = f_lin[2]
    if abs(f_z) < 1e-9:
        raise ModelError("enhanced kinematics: the normal force at the cg is zero (free fall?)")
    f_lon, f_lat = f_lin @ lon, f_lin @ lat
    V_lon, V_ang = v_cg[3:] @ lon, v_cg[:3] @ ang
    p1, p2, p3, p4, p5, p6 = params.p
    v_slip = (p1 * f_lon / f_z * V_lon + p2 * V_lon) * lon + (p3 * f_lat / f_z * V_lon) * lat  # eq. 2.48
    w_slip = (p4 * f_lat / f_z * V_lon + p5 * V_lon + p6 * V_ang) * ang  # eq. 2.49
    return np.linalg.solve(X, np.r_[w_slip, v_slip])  # eq. 2.50


def wheel_slip_from_body(A_wheel: NDArray, v_b_slip: NDArray) -> NDArray:
    """(nw, 2) longitudinal and lateral contact slip velocities, m/s, of a body slip (eq. 2.52)."""
    v = A_wheel[:, :6] @ v_b_slip
    return np.stack([v[0::3], v[1::3]], axis=1)


def rollover_margin(cg_world: ArrayLike, force_world: ArrayLike, points: NDArray, normals: NDArray) -> float:
    """Signed distance (m) from the support-polygon boundary to where the cg force line meets the ground.

    Positive inside the polygon of the contact points (stable), negative outside: liftoff is imminent
    (thesis §2.3, "Limitations", after Tarokh [124]).  The ground plane passes through the mean contact
    point with the mean contact normal.
    """
    P, f = np.asarray(cg_world, dtype=float), np.asarray(force_world, dtype=float)
    n = normals.mean(0)
    n /= np.linalg.norm(n)
    p0 = points.mean(0)
    denom = f @ n
    if denom >= -1e-12:  # the force does not push into the ground: nothing holds the vehicle down
        return -np.inf
    x = P + ((p0 - P) @ n) / denom * f
    e1 = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    pts = np.stack([(points - p0) @ e1, (points - p0) @ e2], axis=1)
    xy = np.array([(x - p0) @ e1, (x - p0) @ e2])
    return _polygon_margin(pts, xy)


def _polygon_margin(pts: NDArray, xy: NDArray) -> float:
    """Signed distance from a point to the convex hull of 2D points (positive inside)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(pts)
    except (QhullError, ValueError):  # fewer than 3 non-collinear contacts: no area to stand on
        return -float(np.min(np.linalg.norm(pts - xy, axis=1)))
    # hull.equations rows: [a, b, c] with a x + b y + c <= 0 inside, (a, b) unit outward normals
    return float(-np.max(hull.equations[:, :2] @ xy + hull.equations[:, 2]))
