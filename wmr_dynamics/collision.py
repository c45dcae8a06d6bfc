"""Wheel–terrain collision detection: contact points, contact frames, Δz, contact angles (thesis §2.2.1).

The physics (eqs. 2.8–2.9, the wheel shapes, the δ search, the contact frame) is documented at, and implemented
once in, :mod:`wmr_dynamics.compiled.collision`; this module is its Python entry point for one state.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics.compiled.collision import (
    METHOD_EDGES,
    METHOD_SAMPLED,
    N_REFINE,
    N_SAMPLES,
    Contacts,
    compiled_wheel_contacts,
)
from wmr_dynamics.compiled.terrain import query_terrain_data
from wmr_dynamics.kinematics.fk import check_state, forward_kinematics
from wmr_dynamics.model import WmrModel
from wmr_dynamics.terrain import Terrain

__all__ = ["N_REFINE", "N_SAMPLES", "Contacts", "drop_onto_terrain", "wheel_contacts"]


def wheel_contacts(model: WmrModel, T_world: NDArray, terrain: Terrain, n_samples: int = N_SAMPLES,
                   track_edges: bool = False) -> Contacts:
    """Contact point, frame, Δz and contact angle of every wheel (thesis §2.2.1, eqs. 2.8–2.9).

    The sampled search of :func:`wmr_dynamics.compiled.collision.wheel_contacts_kernel` on the exact terrain:
    the compiled kind of a Plane, HeightGrid, SmoothGrid, Ramp or Steps; any other terrain (Box, Composite, a
    user's Terrain subclass) is queried through its own ``height_normal``, one point at a time.

    Args:
        model: the WMR model.
        T_world: (num_frames, 4, 4) world transforms from :func:`~wmr_dynamics.kinematics.forward_kinematics`.
        terrain: the ground surface.
        n_samples: coarse samples of δ on the full circle before refinement (≥ 8).
        track_edges: a track's contacts as the dynamic model sees them — roller arcs with the belt surface's
            normal (a step's corner or face), run points sliding along their stretch of the run on terrains
            with edges (docs/tracks.md); False (default): eq. 2.8 at every element, as the kinematic model.
    Raises:
        ModelError: n_samples < 8.  TerrainError: a non-finite height or normal under a wheel (named).
    """
    return compiled_wheel_contacts(model, T_world, query_terrain_data(terrain), n_samples,
                                   METHOD_EDGES if track_edges else METHOD_SAMPLED)


def drop_onto_terrain(model: WmrModel, q: ArrayLike, terrain: Terrain, clearance: float = 0.0) -> NDArray:
    """Move the body vertically so the lowest wheel has Δz = ``clearance`` (m); returns a new state.

    A quick placement (orientation and joints unchanged) for pictures and as a starting guess; the
    terrain-contact initialization of thesis §2.2.4 also solves for attitude and passive joints.
    """
    q = check_state(model, q).copy()
    for _ in range(20):
        c = wheel_contacts(model, forward_kinematics(model, q), terrain)
        k = int(np.argmin(c.dz))
        err = c.dz[k] - clearance
        if abs(err) < 1e-9:
            break
        # Δz changes by n_z per metre of vertical body motion (eq. 2.8 with a locally planar terrain).
        q[6] -= err / max(c.normals[k, 2], 0.1)
    return q
