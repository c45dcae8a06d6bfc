"""Terrain surfaces for wheel–ground collision (thesis §2.2.1, §2.5).

Every surface is a height field z = h(x, y) in the **world frame** (x forward, y left, z up; metres).
`Terrain.height` gives h and `Terrain.normal` the unit normal n = (−∂h/∂x, −∂h/∂y, 1)/‖·‖ of the *same*
surface, pointing out of the ground (n_z > 0).  Both take NumPy arrays of any broadcastable shapes and
evaluate all query points in one call (the built-in surfaces in the compiled kernel the contact search uses);
NaN query coordinates raise :class:`TerrainError`.

Surfaces: :class:`Plane`, :class:`HeightGrid` (bilinear, the thesis's benchmark terrains), :class:`SmoothGrid`
(a HeightGrid's nodes through a bicubic spline), :class:`Ramp`
(the LandTamer ramp of thesis §2.5.2), :class:`Box`, :class:`OrientedBox` (a box in any orientation),
:class:`Steps`, :class:`Composite` (pointwise max),
:func:`gaussian_rough_terrain` (thesis §2.5.1).  Loaders: :func:`load_wmrde_grid`, :func:`load_heightmap`,
:func:`load_sdf_world`, and the dispatcher :func:`load_terrain`.  See ``docs/terrain.md``.
"""

from wmr_dynamics.terrain.loaders import (
    load_heightmap,
    load_sdf_world,
    load_terrain,
    load_wmrde_grid,
    terrain_presets,
)
from wmr_dynamics.terrain.surfaces import (
    Bounds,
    Box,
    Composite,
    HeightGrid,
    OrientedBox,
    Plane,
    Ramp,
    SmoothGrid,
    Steps,
    Terrain,
    gaussian_rough_terrain,
)

__all__ = [
    "Bounds", "Box", "Composite", "HeightGrid", "OrientedBox", "Plane", "Ramp", "SmoothGrid", "Steps", "Terrain",
    "gaussian_rough_terrain",
    "load_heightmap", "load_sdf_world", "load_terrain", "load_wmrde_grid", "terrain_presets",
]
