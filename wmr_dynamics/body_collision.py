"""Non-wheel collision geometry against the terrain: how deep the chassis (or any link that is not a wheel)
goes into the ground during a run.

The models let only wheels touch the ground (thesis §2.2.2); a body that sinks into a rock or an SDF box is
reported, not prevented (full body contact is not modelled).  The URDF's ``<collision>`` boxes, cylinders
and spheres of every link except the wheels are sampled on their surfaces (box faces on a 5 × 5 grid,
cylinder rims at 16 points and their end faces' centres, spheres at 26 directions; meshes are not read) and
the points are checked against the terrain height on a subsample of the run's states (at most
``MAX_ROWS``): penetration = terrain height − point height, where positive.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics import spatial
from wmr_dynamics.model import WmrModel

#: states checked per run at most (evenly spread, always including the last)
MAX_ROWS = 400


@dataclass(frozen=True)
class BodyPoints:
    """Surface points of the non-wheel collision geometry: ``frame[i]`` (model frame index) holds ``points[i]``
    (m, in that frame); ``link[i]`` names the URDF link."""

    frame: NDArray
    points: NDArray
    link: list[str]


def _box(size: NDArray) -> NDArray:
    g = np.linspace(-0.5, 0.5, 5)
    pts = []
    for axis in range(3):
        a, b = [i for i in range(3) if i != axis]
        for side, u, v in itertools.product((-0.5, 0.5), g, g):
            p = np.zeros(3)
            p[axis], p[a], p[b] = side, u, v
            pts.append(p * size)
    return np.unique(np.round(np.array(pts), 12), axis=0)


def _cylinder(radius: float, length: float) -> NDArray:
    a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
    rim = np.column_stack([radius * np.cos(a), radius * np.sin(a), np.zeros(16)])
    return np.vstack([rim + [0, 0, -length / 2], rim + [0, 0, length / 2], [[0, 0, -length / 2], [0, 0, length / 2]]])


def _sphere(radius: float) -> NDArray:
    d = np.array([p for p in itertools.product((-1, 0, 1), repeat=3) if any(p)], dtype=float)
    return radius * d / np.linalg.norm(d, axis=1)[:, None]


def body_points(model: WmrModel) -> BodyPoints | None:
    """The sampled non-wheel collision geometry of ``model`` (from its URDF), or None when it has none (or the
    model was not built from a URDF file)."""
    src = Path(model.source) if model.source else None
    if src is None or not src.is_file() or src.suffix.lower() != ".urdf":
        return None
    from urdf_parser_py.urdf import URDF, Box, Cylinder, Sphere

    from wmr_dynamics.urdf import _parse_urdf

    try:
        robot = _parse_urdf(src)
    except Exception:  # noqa: BLE001 - the model loaded from it; a re-parse failure only loses this check
        return None
    assert isinstance(robot, URDF)
    wheels = {model.frames[int(f)].name for f in model.wheel_frame}  # wheel and track links
    frames, points, links = [], [], []
    for link in robot.links:
        if link.name in wheels:
            continue
        if link.name in model.frame_names:
            fi, T_link = model.frame_index(link.name), np.eye(4)
        elif link.name in model.fixed_frames:
            parent, T_link = model.fixed_frames[link.name]
            fi = model.frame_index(parent)
        else:
            continue
        for col in link.collisions or []:
            g = col.geometry
            if isinstance(g, Box):
                local = _box(np.asarray(g.size, dtype=float))
            elif isinstance(g, Cylinder):
                local = _cylinder(float(g.radius), float(g.length))
            elif isinstance(g, Sphere):
                local = _sphere(float(g.radius))
            else:
                continue  # meshes are not read
            o = col.origin
            T_col = np.eye(4)
            if o is not None:
                T_col[:3, :3] = spatial.rpy_to_rot(o.rpy or (0.0, 0.0, 0.0))
                T_col[:3, 3] = o.xyz or (0.0, 0.0, 0.0)
            T = np.asarray(T_link) @ T_col
            pts = local @ T[:3, :3].T + T[:3, 3]
            frames += [fi] * len(pts)
            points.append(pts)
            links += [link.name] * len(pts)
    if not points:
        return None
    return BodyPoints(np.array(frames, dtype=int), np.vstack(points), links)


@dataclass(frozen=True)
class Penetration:
    """The deepest non-wheel collision point below the terrain over a run: depth (m, > 0 = inside the ground),
    time (s) and link; ``checked`` states were examined."""

    depth: float
    t: float
    link: str
    checked: int


def body_penetration(model: WmrModel, terrain: object, t: NDArray, q: NDArray,
                     points: BodyPoints | None = None) -> Penetration | None:
    """How deep the non-wheel collision geometry goes into ``terrain`` over the states ``q`` at times ``t``
    (a subsample of at most :data:`MAX_ROWS`); None when the model has no such geometry."""
    from wmr_dynamics.kinematics import forward_kinematics

    bp = points if points is not None else body_points(model)
    if bp is None or len(q) == 0:
        return None
    rows = np.unique(np.r_[np.linspace(0, len(q) - 1, min(MAX_ROWS, len(q))).astype(int), len(q) - 1])
    best = (-np.inf, 0.0, "")
    for k in rows:
        if not np.all(np.isfinite(q[k])):
            continue
        T = forward_kinematics(model, q[k])
        w = np.einsum("nij,nj->ni", T[bp.frame, :3, :3], bp.points) + T[bp.frame, :3, 3]
        h = np.asarray(terrain.height(w[:, 0], w[:, 1]), dtype=float)
        d = h - w[:, 2]
        i = int(np.nanargmax(d)) if np.any(np.isfinite(d)) else 0
        if np.isfinite(d[i]) and d[i] > best[0]:
            best = (float(d[i]), float(t[k]), bp.link[i])
    return Penetration(max(best[0], 0.0), best[1], best[2], len(rows))
