"""Flat-array views of a model and a terrain for the compiled kernels (Pinocchio's Model, MuJoCo's mjModel).

Numba compiles a function once per argument *type*; a ``NamedTuple`` of arrays is one such type, so every
kernel takes a :class:`ModelData` and a :class:`TerrainData` instead of a dozen loose arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.model import G, WmrModel

#: TerrainData.kind values
TERRAIN_PLANE = 0  # params = (n_x, n_y, n_z, d): the plane n·r = d, n unit, n_z > 0
# params = (x_min, y_min, dx, dy, 1/dx, 1/dy, then compiled.terrain.grid_bounds: n_z min, the cells' highest nodes);
# grid = heights (ny, nx), bilinear (HeightGrid)
TERRAIN_GRID = 1
TERRAIN_RAMP = 2  # params = (x_start, height, tan a, s_top, s_top_end, s_end, down, cos yaw, sin yaw, o_x, o_y)
TERRAIN_STEPS = 3  # params = (x_start, step_length, step_height, n_steps, cos yaw, sin yaw, o_x, o_y)
# params = (x_lo, x_hi, y_lo, y_hi, n_tx, n_ty, tx[n_tx], ty[n_ty]); grid = (n_ty − 4, n_tx − 4) coefficients of a
# tensor-product cubic B-spline (SmoothGrid), clamped to [x_lo, x_hi] × [y_lo, y_hi]
TERRAIN_BICUBIC = 4
TERRAIN_PYTHON = 5  # params = (slot,): a Terrain written in Python, called back (compiled.callbacks)
TERRAIN_BOX = 6  # params = (c_x, c_y, cos yaw, sin yaw, l_x / 2, l_y / 2, height, base)
# params = (n, then per member: kind, len, its len params); grid = the one gridded member's (Composite)
TERRAIN_COMPOSITE = 7
TERRAIN_OBOX = 8  # params = (c_x, c_y, c_z, R (3×3, row-major), a_x, a_y, a_z (half sizes), base): OrientedBox


class ModelData(NamedTuple):
    """A :class:`~wmr_dynamics.model.WmrModel` as flat arrays (names and meaning as on the model)."""

    parent: NDArray  # (nf,) int64, parent frame index (−1 for the body)
    jtype: NDArray  # (nf,) int64, joint type 0..5 = RX RY RZ PX PY PZ (−1 for the body)
    T0: NDArray  # (nf, 4, 4) joint frame in its parent at zero displacement
    I_spatial: NDArray  # (nf, 6, 6) spatial inertia about the frame origin, frame coordinates
    joint_lower: NDArray  # (nf,) rad or m (−inf: none)
    joint_upper: NDArray  # (nf,)
    wheel_frame: NDArray  # (nw,) int64
    wheel_radius: NDArray  # (nw,) m, rolling radius (contact speed per rad/s; a track's sprocket radius)
    wheel_tube: NDArray  # (nw,) m, torus tube radius (0 = thin cylinder)
    wheel_kind: NDArray  # (nw,) int64, 0 wheel, 1 track arc, 2 lower-run point, 3 upper-run point (ELEMENT_KINDS)
    wheel_centre: NDArray  # (nw, 6) m: the element's circle centre in the hub frame (x, 0, z; 0 for a wheel), then
    # a run point's half spacing along its run (r_x, r_z; 0 for wheels and arcs: the belt's direction there), then 1
    # where its contact slides within ±(r_x, r_z) on terrains with edges, else 0 — WmrModel.wheel_centre, .wheel_run
    # and .wheel_slides in one array: every non-inlined kernel call passes ModelData by value, and a sixth array
    # field of its own made the Zoë step ≈ 5 % slower
    wheel_circle: NDArray  # (nw,) m, the element's circle radius for collision (a wheel's outer radius)
    actuated_frames: NDArray  # (na,) int64, frames of the actuated joints (WmrModel.actuated_joint_names order)
    A_joint: NDArray  # (nc, ndof) holonomic joint constraints (eq. 2.26)
    b_joint: NDArray  # (nc,)
    total_mass: float  # kg
    gravity: float  # m/s²


class TerrainData(NamedTuple):
    """A terrain for the compiled kernels: ``kind`` (TERRAIN_*), ``params``, ``grid``."""

    kind: int
    params: NDArray  # (k,) float64, see the TERRAIN_* kinds
    grid: NDArray  # (ny, nx) float64 heights (a 2 × 2 dummy for a plane)


def model_data(model: WmrModel) -> ModelData:
    """The model's flat arrays as a :class:`ModelData` (shares the model's read-only arrays)."""
    c = np.ascontiguousarray
    return ModelData(
        parent=c(model.parent), jtype=c(model.joint_type), T0=c(model.T0), I_spatial=c(model.I_spatial),
        joint_lower=c(model.joint_lower), joint_upper=c(model.joint_upper), wheel_frame=c(model.wheel_frame),
        wheel_radius=c(model.wheel_radii), wheel_tube=c(model.wheel_tube_radii), wheel_kind=c(model.wheel_kind),
        wheel_centre=np.hstack([model.wheel_centre, model.wheel_run[:, [0, 2]],
                                model.wheel_slides[:, None].astype(float)]), wheel_circle=c(model.wheel_circle),
        actuated_frames=np.flatnonzero(model.actuated).astype(np.int64), A_joint=c(model.A_joint),
        b_joint=c(model.b_joint), total_mass=float(model.total_mass), gravity=float(G))
