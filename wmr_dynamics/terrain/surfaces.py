"""Terrain surfaces (height fields with consistent normals) and Gaussian rough terrain; see the package
docstring of :mod:`wmr_dynamics.terrain` for conventions.

The heights and normals of Plane, HeightGrid, SmoothGrid, Ramp, Steps, Box and OrientedBox are evaluated by one
compiled kernel, :func:`wmr_dynamics.compiled.terrain.height_normal` — the one the contact search uses; the
classes here hold and check the parameters.  Terrains are immutable: the compiled form is made once per object.
"""

from __future__ import annotations

import abc
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from wmr_dynamics.compiled.terrain import exact_terrain_data, has_exact_form, height_normal_points
from wmr_dynamics.errors import TerrainError

Bounds = tuple[float, float, float, float]
"""(x_min, x_max, y_min, y_max) in metres, world frame."""


# ----------------------------------------------------------------------------------------------- helpers
def _xy(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Query coordinates as broadcast float arrays; NaN → TerrainError."""
    xa, ya = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    if np.isnan(xa).any() or np.isnan(ya).any():
        raise TerrainError("terrain query: x/y coordinates contain NaN")
    return xa, ya


def _compiled_query(terrain: Terrain, x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(heights, normals) of a terrain with a compiled kind at broadcast (x, y): shapes s and s + (3,)."""
    xa, ya = _xy(x, y)
    td = exact_terrain_data(terrain)
    out = np.empty((xa.size, 4))
    height_normal_points(td.kind, td.params, td.grid, np.ascontiguousarray(xa).reshape(-1),
                         np.ascontiguousarray(ya).reshape(-1), out)
    h = out[:, 0].reshape(xa.shape)
    return (h[()] if h.ndim == 0 else h), out[:, 1:].reshape(xa.shape + (3,))


class _Compiled:
    """height / normal / height_normal of a surface with a compiled kind (mixin for Terrain subclasses)."""

    def height(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        return _compiled_query(self, x, y)[0]  # type: ignore[arg-type]

    def normal(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        return _compiled_query(self, x, y)[1]  # type: ignore[arg-type]

    def height_normal(self, x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        return _compiled_query(self, x, y)  # type: ignore[arg-type]


#: plausibility limits of terrain data (m): heights and world coordinates beyond them are refused as wrong
#: units or corrupt files (a 1e30 m height makes every force balance fail); grid spacings outside the range too
MAX_HEIGHT = 1e5
MAX_COORDINATE = 1e7
MIN_SPACING, MAX_SPACING = 1e-6, 1e4


def _num(name: str, value: Any, positive: bool = False) -> float:
    """``value`` as a finite float (> 0 if ``positive``), else TerrainError naming ``name``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TerrainError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or (positive and v <= 0.0):
        raise TerrainError(f"{name} must be {'> 0' if positive else 'finite'}, got {v}")
    return v


def _vec(name: str, value: Any, n: int) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        v = np.zeros(0)
    if v.size != n or not np.isfinite(v).all():
        raise TerrainError(f"{name} must be {n} finite numbers, got {value!r}")
    return v


def _int(name: str, value: Any, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise TerrainError(f"{name} must be an integer >= {lo}, got {value!r}")
    return int(value)


def _check_bounds(name: str, b: Any) -> Bounds:
    xmin, xmax, ymin, ymax = (float(v) for v in _vec(name, b, 4))
    if not (xmax > xmin and ymax > ymin):
        raise TerrainError(f"{name} = {tuple(b)} must satisfy xmin < xmax and ymin < ymax")
    return xmin, xmax, ymin, ymax


def _n_nodes(lo: float, hi: float, spacing: float) -> int:
    """Nodes lo, lo+spacing, … covering [lo, hi] (the last node is ≥ hi)."""
    return max(2, math.ceil((hi - lo) / spacing - 1e-9) + 1)


def _rect_aabb(origin: np.ndarray, yaw: float, s0: float, s1: float, l0: float, l1: float) -> Bounds:
    """World AABB of the rectangle s∈[s0,s1] (along yaw), l∈[l0,l1] (lateral) about ``origin``."""
    c, s = math.cos(yaw), math.sin(yaw)
    ss, ll = np.meshgrid([s0, s1], [l0, l1])
    xs, ys = origin[0] + c * ss - s * ll, origin[1] + s * ss + c * ll
    return float(xs.min()), float(xs.max()), float(ys.min()), float(ys.max())


# ------------------------------------------------------------------------------------------------- base
class Terrain(abc.ABC):
    """A terrain height field z = h(x, y) in the world frame (metres, z up)."""

    @abc.abstractmethod
    def height(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """Height h (m, world z) at world positions (x, y) (m); shape = broadcast(x, y).shape."""

    @abc.abstractmethod
    def normal(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """Unit outward normal (world frame, n_z > 0) at (x, y) (m); shape broadcast(x, y).shape + (3,).

        Equals (−∂h/∂x, −∂h/∂y, 1)/‖·‖ of the surface `height` describes.
        """

    def height_normal(self, x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """``(height(x, y), normal(x, y))`` in one call (subclasses share the work where they can)."""
        return self.height(x, y), self.normal(x, y)

    @property
    def bounds(self) -> Bounds | None:
        """(x_min, x_max, y_min, y_max) (m, world) where the terrain is defined or interesting, or None
        (unbounded)."""
        return None

    def to_grid(self, bounds: Bounds | None = None, spacing: float = 0.05) -> HeightGrid:
        """Sample the heights on a square grid of ``spacing`` (m) covering ``bounds`` (default `bounds`).

        The grid starts at (x_min, y_min); its last node is at or just beyond (x_max, y_max).  Sharp
        features (box and step edges) become slopes one cell wide.  Raises TerrainError for an unbounded
        terrain without ``bounds`` and for non-positive spacing.
        """
        b = self.bounds if bounds is None else bounds
        if b is None:
            raise TerrainError(f"{type(self).__name__}.to_grid: terrain is unbounded, pass "
                               "bounds=(xmin, xmax, ymin, ymax)")
        xmin, xmax, ymin, ymax = _check_bounds("bounds", b)
        d = _num("spacing", spacing, positive=True)
        gx, gy = np.meshgrid(xmin + d * np.arange(_n_nodes(xmin, xmax, d)),
                             ymin + d * np.arange(_n_nodes(ymin, ymax, d)))
        return HeightGrid(xmin, ymin, d, d, self.height(gx, gy), source=f"{type(self).__name__}.to_grid")


# --------------------------------------------------------------------------------------------- surfaces
class Plane(_Compiled, Terrain):
    """The plane through ``point`` (m, world) with normal ``normal`` (world; normalized, must have n_z > 0).

    h(x, y) = p_z − (n_x (x − p_x) + n_y (y − p_y)) / n_z.  Unbounded.
    """

    def __init__(self, normal: ArrayLike = (0.0, 0.0, 1.0), point: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        n = _vec("Plane normal", normal, 3)
        norm = float(np.linalg.norm(n))
        if norm == 0.0 or n[2] / norm <= 1e-9:
            raise TerrainError(f"Plane normal {n.tolist()} must have a positive z component (a height field "
                               "cannot hold a vertical or overhanging plane)")
        self.unit_normal = n / norm
        self.point = _vec("Plane point", point, 3)

    def __repr__(self) -> str:
        return f"Plane(normal={self.unit_normal.round(6).tolist()}, point={self.point.tolist()})"


class HeightGrid(_Compiled, Terrain):
    """A regular height grid with bilinear interpolation (the wmrde benchmark terrains, thesis §2.5.4).

    ``heights[j, i]`` (m) is the height of node (x_min + i·dx, y_min + j·dy) (m, world); shape (ny, nx),
    ny, nx ≥ 2.  Between nodes the height is bilinear in the cell containing the query.  **Outside the
    grid** the query is clamped to the nearest grid point, so the height continues the edge values
    unchanged outward; the normal is that of the same clamped surface (zero slope across the edge).
    On a cell edge the gradient is that of the cell on the +x / +y side (the last cell at the far edge).

    Non-finite heights (holes) raise TerrainError naming their count and the first one (row-major
    order), unless ``fill_holes=True``: each hole then takes the height of the nearest finite node
    (Euclidean distance in metres).  Implausible magnitudes are refused (wrong units or a corrupt file): a
    height beyond ±``MAX_HEIGHT`` (1e5 m), a grid reaching beyond ±``MAX_COORDINATE`` (1e7 m), a spacing outside
    [``MIN_SPACING``, ``MAX_SPACING``] = [1e-6, 1e4] m.  ``source`` (e.g. a file name) prefixes error messages.
    Attributes ``x_min, y_min, dx, dy`` (m), ``heights`` (read-only array), ``nx, ny``.
    """

    def __init__(self, x_min: float, y_min: float, dx: float, dy: float, heights: ArrayLike, *,
                 fill_holes: bool = False, source: str | None = None) -> None:
        w = f"{source}: " if source else "HeightGrid: "
        self.x_min, self.y_min = _num(w + "x_min", x_min), _num(w + "y_min", y_min)
        self.dx = _num(w + "grid spacing dx", dx, positive=True)
        self.dy = _num(w + "grid spacing dy", dy, positive=True)
        try:
            h = np.array(heights, dtype=float)
        except (TypeError, ValueError):
            raise TerrainError(f"{w}heights must be a 2-D array of numbers") from None
        if h.ndim != 2:
            raise TerrainError(f"{w}heights must be a 2-D array (ny, nx), got {h.ndim}-D shape {h.shape}")
        if h.shape[0] < 2 or h.shape[1] < 2:
            raise TerrainError(f"{w}heights must have at least 2 x 2 nodes, got shape {h.shape}")
        if self.dx < MIN_SPACING or self.dy < MIN_SPACING or self.dx > MAX_SPACING or self.dy > MAX_SPACING:
            raise TerrainError(f"{w}grid spacing (dx={self.dx:g}, dy={self.dy:g}) m must lie in "
                               f"[{MIN_SPACING:g}, {MAX_SPACING:g}] m")
        for name, lo, n, d in (("x", self.x_min, h.shape[1] if h.ndim == 2 else 0, self.dx),
                               ("y", self.y_min, h.shape[0] if h.ndim == 2 else 0, self.dy)):
            if abs(lo) > MAX_COORDINATE or abs(lo + max(n - 1, 0) * d) > MAX_COORDINATE:
                raise TerrainError(f"{w}the grid spans {name} = {lo:g} .. {lo + max(n - 1, 0) * d:g} m, beyond "
                                   f"±{MAX_COORDINATE:g} m (wrong units or origin?)")
        bad = ~np.isfinite(h)
        big = np.abs(np.where(bad, 0.0, h)) > MAX_HEIGHT
        if big.any():
            j, i = (int(v) for v in np.argwhere(big)[0])
            raise TerrainError(f"{w}{int(big.sum())} height(s) beyond ±{MAX_HEIGHT:g} m, first {h[j, i]:g} m at node "
                               f"(i={i}, j={j}) (wrong units or height scale?)")
        if bad.any():
            n_bad, (j, i) = int(bad.sum()), (int(v) for v in np.argwhere(bad)[0])
            if not fill_holes or n_bad == h.size:
                raise TerrainError(
                    f"{w}{n_bad} non-finite height(s) (NaN/inf holes) of {h.size}; first at node (i={i}, "
                    f"j={j}) = (x={self.x_min + i * self.dx:.6g}, y={self.y_min + j * self.dy:.6g}) m"
                    + ("" if fill_holes else "; fill_holes=True fills each with the nearest valid height"))
            from scipy import ndimage

            idx = ndimage.distance_transform_edt(bad, sampling=(self.dy, self.dx), return_distances=False,
                                                 return_indices=True)
            h = h[tuple(idx)]
        h.setflags(write=False)
        self.heights = h
        self.ny, self.nx = h.shape

    @property
    def x_max(self) -> float:
        """x of the last node column (m)."""
        return self.x_min + (self.nx - 1) * self.dx

    @property
    def y_max(self) -> float:
        """y of the last node row (m)."""
        return self.y_min + (self.ny - 1) * self.dy

    @property
    def bounds(self) -> Bounds:
        return self.x_min, self.x_max, self.y_min, self.y_max

    def __repr__(self) -> str:
        return (f"HeightGrid(x {self.x_min:g}..{self.x_max:g} m, y {self.y_min:g}..{self.y_max:g} m, "
                f"{self.nx}x{self.ny} nodes, dx={self.dx:g}, dy={self.dy:g})")


class SmoothGrid(_Compiled, Terrain):
    """A :class:`HeightGrid`'s nodes interpolated by a bicubic (C²) spline instead of bilinearly (Auchter's
    smooth terrains, ``wmr_dynamics.scenarios.auchter_pvc``).

    The interpolating tensor-product cubic spline of scipy's ``RectBivariateSpline`` (s = 0) through the nodes:
    the heights at the nodes are the grid's, and the normal is the exact normal of the spline surface, so the
    contact frame turns continuously as a wheel rolls (a bilinear grid's normal jumps at every cell edge).
    Queries outside the grid are clamped to it, like :class:`HeightGrid` (zero slope across the edge).  Needs at
    least 4 x 4 nodes.  Attribute ``grid``: the HeightGrid.
    """

    def __init__(self, grid: HeightGrid) -> None:
        if not isinstance(grid, HeightGrid) or grid.nx < 4 or grid.ny < 4:
            raise TerrainError(f"SmoothGrid needs a HeightGrid of at least 4 x 4 nodes, got {grid!r}")
        from scipy.interpolate import RectBivariateSpline

        self.grid = grid
        xs = grid.x_min + grid.dx * np.arange(grid.nx)
        ys = grid.y_min + grid.dy * np.arange(grid.ny)
        spline = RectBivariateSpline(ys, xs, np.asarray(grid.heights), kx=3, ky=3, s=0)
        ty, tx = spline.get_knots()  # (y knots, x knots): the spline's first coordinate is y
        self._tx, self._ty = tx, ty
        self._coeffs = spline.get_coeffs().reshape(ty.size - 4, tx.size - 4)
        for a in (self._tx, self._ty, self._coeffs):
            a.setflags(write=False)

    def spline_knots_coefficients(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x knots, y knots, coefficients (n_y, n_x)) of the spline h(x, y) = Σ_a Σ_b B_a(y) B_b(x) c[a, b]."""
        return self._tx, self._ty, self._coeffs

    @property
    def bounds(self) -> Bounds:
        """The grid's (x_min, x_max, y_min, y_max), m."""
        return self.grid.bounds

    def __repr__(self) -> str:
        return f"SmoothGrid({self.grid!r})"


class _Profile(_Compiled, Terrain):
    """A surface h = f(s) of the along-track coordinate s = (p − origin)·(cos yaw, sin yaw) (m)."""

    lateral_half_width = 5.0
    """Half-width (m) of the region `bounds` reports (the surface itself is infinite laterally)."""

    def _setup(self, yaw: float, origin: ArrayLike) -> None:
        self.yaw = _num("yaw", yaw)
        self.origin = _vec("origin", origin, 2)
        self._dir = np.array([math.cos(self.yaw), math.sin(self.yaw)])

    def _bounds_along(self, s0: float, s1: float) -> Bounds:
        w = self.lateral_half_width
        return _rect_aabb(self.origin, self.yaw, s0 - 1.0, s1 + 1.0, -w, w)


class Ramp(_Profile):
    """Flat ground (z = 0), an incline, a plateau and (if ``down``) a descent; thesis §2.5.2 (LandTamer).

    Along s = (p − origin)·(cos yaw, sin yaw) (m; yaw in rad about world z, origin (m) in the world x-y
    plane): h = 0 for s < x_start, rises at ``slope_deg`` (degrees) to ``height`` (m), stays there for
    ``top_length`` (m), then descends at the same slope back to 0 — or, with ``down=False``, stays at
    ``height`` for all larger s.  Infinite laterally.  On the incline n = (−sin a cos yaw, −sin a sin yaw,
    cos a), a = slope.  The defaults are the thesis's 1.5 m high, 20° ramp.  Attributes ``s_top``,
    ``s_top_end``, ``s_end`` (m): s at the end of the incline, of the plateau, of the descent.
    """

    def __init__(self, x_start: float = 0.0, height: float = 1.5, slope_deg: float = 20.0,
                 top_length: float = 5.0, down: bool = True, yaw: float = 0.0,
                 origin: ArrayLike = (0.0, 0.0)) -> None:
        self.x_start = _num("Ramp x_start", x_start)
        self.ramp_height = _num("Ramp height", height, positive=True)
        self.slope_deg = _num("Ramp slope_deg", slope_deg, positive=True)
        self.top_length = _num("Ramp top_length", top_length)
        if self.slope_deg >= 90.0 or self.top_length < 0.0:
            raise TerrainError(f"Ramp needs slope_deg < 90 and top_length >= 0, got {self.slope_deg}, "
                               f"{self.top_length}")
        self.down = bool(down)
        self._setup(yaw, origin)
        self._tan = math.tan(math.radians(self.slope_deg))
        self.s_top = self.x_start + self.ramp_height / self._tan
        self.s_top_end = self.s_top + self.top_length
        self.s_end = self.s_top_end + (self.ramp_height / self._tan if self.down else 0.0)

    @property
    def bounds(self) -> Bounds:
        return self._bounds_along(self.x_start, self.s_end)


class Steps(_Profile):
    """A staircase of ``n_steps`` steps along direction ``yaw`` (rad) from ``origin`` (m, world x-y).

    With s the along-track coordinate (m, as in :class:`Ramp`): h = 0 for s < x_start, and
    h = k · step_height (m) for x_start + (k−1)·step_length ≤ s < x_start + k·step_length, k = 1…n_steps;
    beyond the last step the top landing (n_steps · step_height) continues.  A negative step_height
    gives a descending staircase.  Normals are (0, 0, 1) everywhere: the risers are vertical, and
    collision sees them only through the height jump.  Infinite laterally.
    """

    def __init__(self, x_start: float, step_length: float, step_height: float, n_steps: int,
                 yaw: float = 0.0, origin: ArrayLike = (0.0, 0.0)) -> None:
        self.x_start = _num("Steps x_start", x_start)
        self.step_length = _num("Steps step_length", step_length, positive=True)
        self.step_height = _num("Steps step_height", step_height)
        self.n_steps = _int("Steps n_steps", n_steps, 1)
        self._setup(yaw, origin)

    @property
    def bounds(self) -> Bounds:
        return self._bounds_along(self.x_start, self.x_start + self.n_steps * self.step_length)


class Box(_Compiled, Terrain):
    """A rectangular block: height ``height`` (m) on its footprint, ``base`` (m, default 0) elsewhere.

    The footprint is centred at ``center`` (m, world x-y), of side lengths ``size`` = (lx, ly) (m) along
    the box axes, rotated by ``yaw`` (rad) about world z; edges belong to the footprint.  Normals are
    (0, 0, 1) everywhere: the vertical faces are seen by collision only through the height jump.
    (``base=-inf`` makes the block contribute nothing outside its footprint inside a :class:`Composite`.)
    """

    def __init__(self, center: ArrayLike, size: ArrayLike, height: float, yaw: float = 0.0, *,
                 base: float = 0.0) -> None:
        self.center, self.size = _vec("Box center", center, 2), _vec("Box size", size, 2)
        if (self.size <= 0).any():
            raise TerrainError(f"Box size must be positive, got {self.size.tolist()}")
        self.box_height, self.yaw = _num("Box height", height), _num("Box yaw", yaw)
        self.base = -math.inf if base == -math.inf else _num("Box base (or -inf)", base)


    @property
    def bounds(self) -> Bounds:
        lx, ly = 0.5 * self.size
        return _rect_aabb(self.center, self.yaw, -lx, lx, -ly, ly)


class OrientedBox(_Compiled, Terrain):
    """A solid rectangular box in any orientation — a Gazebo ``<box>`` whose ``<pose>`` has roll and pitch, as
    ramps are written: its height field is the **top of the box** where the vertical line through (x, y) meets
    it, ``base`` (m, default 0) elsewhere.

    The box is centred at ``center`` = (x, y, z) (m, world), of side lengths ``size`` = (lx, ly, lz) (m) along
    its own axes, rotated by ``rpy`` = (roll, pitch, yaw) (rad; R = Rz(yaw) Ry(pitch) Rx(roll), fixed axes as
    in SDF and App. A) or by ``rotation`` (a 3×3 rotation matrix, world from box axes; give one of the two).
    The top is a plane where one face is uppermost and a ridge where two meet; a face that looks down (n_z < 0)
    is hidden, so the height jumps at its edge (like a :class:`Box`'s vertical faces).  Normals are those of
    the uppermost face, n = sgn(n_z)·R e_i: a box pitched by θ has the top normal (sin θ, 0, cos θ) for
    θ > 0 (the box's +x end low).  Where a point's line meets only edges or vertices the higher face wins.
    Everything below the top is taken as solid ground (a height field has no overhangs).  With roll = pitch
    = 0 it is a :class:`Box` of height z + lz/2.
    """

    def __init__(self, center: ArrayLike, size: ArrayLike, rpy: ArrayLike | None = None, *,
                 rotation: ArrayLike | None = None, base: float = 0.0) -> None:
        self.center, self.size = _vec("OrientedBox center", center, 3), _vec("OrientedBox size", size, 3)
        if (self.size <= 0).any():
            raise TerrainError(f"OrientedBox size must be positive, got {self.size.tolist()}")
        if rpy is not None and rotation is not None:
            raise TerrainError("OrientedBox: give rpy or rotation, not both")
        if rotation is None:
            r, p, y = _vec("OrientedBox rpy", (0.0, 0.0, 0.0) if rpy is None else rpy, 3)
            cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
            R = np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                          [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                          [-sp, cp * sr, cp * cr]])
        else:
            R = _vec("OrientedBox rotation", rotation, 9).reshape(3, 3)
            if not np.allclose(R @ R.T, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
                raise TerrainError(f"OrientedBox rotation must be a rotation matrix (orthonormal, det +1), got "
                                   f"{R.tolist()}")
        self.rotation = R
        self.base = -math.inf if base == -math.inf else _num("OrientedBox base (or -inf)", base)

    def __repr__(self) -> str:
        return (f"OrientedBox(center={self.center.tolist()}, size={self.size.tolist()}, "
                f"rotation={self.rotation.round(6).tolist()}, base={self.base})")

    @property
    def corners(self) -> np.ndarray:
        """(8, 3) world coordinates (m) of the box's corners."""
        signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], dtype=float)
        return self.center + (signs * 0.5 * self.size) @ self.rotation.T

    @property
    def bounds(self) -> Bounds:
        c = self.corners
        return float(c[:, 0].min()), float(c[:, 0].max()), float(c[:, 1].min()), float(c[:, 1].max())


class Composite(Terrain):
    """The pointwise maximum of several surfaces; the normal is that of the surface attaining the max.

    On ties the first surface in ``surfaces`` wins.  `bounds` is the union of the members' bounds
    (None if no member is bounded).  A composite of built-in surfaces with at most one HeightGrid or SmoothGrid
    is evaluated by the compiled kernel; one with a user's Terrain among its members combines the members'
    own answers.
    """

    def __init__(self, surfaces: list[Terrain] | tuple[Terrain, ...]) -> None:
        self.surfaces = tuple(surfaces)
        if not self.surfaces or not all(isinstance(s, Terrain) for s in self.surfaces):
            raise TerrainError(f"Composite needs a non-empty sequence of Terrain objects, got {surfaces!r}")

    def height_normal(self, x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        if has_exact_form(self):
            return _compiled_query(self, x, y)
        x, y = _xy(x, y)
        hn = [s.height_normal(x, y) for s in self.surfaces]          # loop over surfaces, not points
        hs = np.stack([np.broadcast_to(h, x.shape) for h, _ in hn])
        ns = np.stack([np.broadcast_to(n, x.shape + (3,)) for _, n in hn])
        k = np.argmax(hs, axis=0)[None]
        return np.take_along_axis(hs, k, 0)[0], np.take_along_axis(ns, k[..., None], 0)[0]

    def height(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        if has_exact_form(self):
            return _compiled_query(self, x, y)[0]
        x, y = _xy(x, y)
        return np.max(np.stack([np.broadcast_to(s.height(x, y), x.shape) for s in self.surfaces]), axis=0)

    def normal(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        return self.height_normal(x, y)[1]

    @property
    def bounds(self) -> Bounds | None:
        bs = np.array([b for b in (s.bounds for s in self.surfaces) if b is not None])
        if bs.size == 0:
            return None
        return float(bs[:, 0].min()), float(bs[:, 1].max()), float(bs[:, 2].min()), float(bs[:, 3].max())


# ------------------------------------------------------------------------------------------ rough terrain
def gaussian_rough_terrain(rms: float = 0.05, corr_len: float = 0.2, bounds: Bounds = (-2.0, 12.0, -4.0, 4.0),
                           spacing: float | None = None, seed: int = 0) -> HeightGrid:
    """A zero-mean Gaussian random height field (thesis §2.5.1: RMS 0.05 m, correlation length 0.2 m).

    The autocorrelation is Gaussian, C(r) = rms² · exp(−r²/corr_len²), r the horizontal lag (m): the
    **correlation length** corr_len (m) is the lag at which the correlation falls to 1/e.  White noise on
    a grid of ``spacing`` (m, default corr_len/5) padded by 3·corr_len is filtered in the Fourier domain by
    exp(−k²·corr_len²/8) (the square root of the Gaussian power spectrum), cropped, its sample mean removed
    and rescaled so the sample RMS equals ``rms`` (m) exactly.  The grid starts at (x_min, y_min) of
    ``bounds`` (m, world) and covers it.  Reproducible: the same ``seed`` (int ≥ 0) gives the same grid.
    """
    rms, corr_len = _num("rms", rms, positive=True), _num("corr_len", corr_len, positive=True)
    xmin, xmax, ymin, ymax = _check_bounds("bounds", bounds)
    d = corr_len / 5.0 if spacing is None else _num("spacing", spacing, positive=True)
    seed = _int("seed", seed, 0)
    nx, ny, pad = _n_nodes(xmin, xmax, d), _n_nodes(ymin, ymax, d), math.ceil(3.0 * corr_len / d)
    shape = (ny + 2 * pad, nx + 2 * pad)
    if shape[0] * shape[1] > 50_000_000:
        raise TerrainError(f"gaussian_rough_terrain: {nx} x {ny} nodes (bounds {bounds}, spacing {d:g} m) "
                           "is too large; use a coarser spacing or smaller bounds")
    noise = np.random.default_rng(seed).standard_normal(shape)
    ky = 2.0 * np.pi * np.fft.fftfreq(shape[0], d=d)[:, None]
    kx = 2.0 * np.pi * np.fft.rfftfreq(shape[1], d=d)[None, :]
    filt = np.exp(-(kx * kx + ky * ky) * corr_len**2 / 8.0)
    field = np.fft.irfft2(np.fft.rfft2(noise) * filt, s=shape)[pad:pad + ny, pad:pad + nx]
    field = field - field.mean()
    field *= rms / math.sqrt(float(np.mean(field * field)))
    return HeightGrid(xmin, ymin, d, d, field, source="gaussian_rough_terrain")
