"""The terrain queries — the one implementation of every surface's height and normal (plane, bilinear height grid,
ramp, steps, bicubic spline grid, and a call back into Python for any other :class:`~wmr_dynamics.terrain.Terrain`) —
and the conversion of a Terrain to them.  The surfaces' public ``height``/``normal``/``height_normal`` call
:func:`height_normal_points`; the contact search inlines :func:`height_normal`.
"""

from __future__ import annotations

import math
import weakref

import numba
import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled import callbacks as _cb
from wmr_dynamics.compiled.data import (
    TERRAIN_BICUBIC,
    TERRAIN_BOX,
    TERRAIN_COMPOSITE,
    TERRAIN_GRID,
    TERRAIN_OBOX,
    TERRAIN_PLANE,
    TERRAIN_PYTHON,
    TERRAIN_RAMP,
    TERRAIN_STEPS,
    TerrainData,
)
from wmr_dynamics.errors import TerrainError


def compile_terrain(terrain, spacing: float = 0.02, bounds: tuple | None = None,  # noqa: ANN001
                    margin: float = 0.5) -> TerrainData:
    """``terrain`` as :class:`TerrainData` for the compiled steps.

    Every built-in surface with an exact compiled form (:func:`exact_terrain_data`: Plane, HeightGrid,
    SmoothGrid, Ramp, Steps, Box, OrientedBox, and a Composite of them with at most one HeightGrid or SmoothGrid) is
    represented exactly — the same kernel its public ``height``/``normal`` evaluate, so a step sees the
    surface those queries describe: a box's and a step's vertical faces are jumps in height with upward
    normals, and the contact search finds the rim point above the edge (thesis eq. 2.8) as it does for Steps.

    Any other terrain — a user's ``Terrain`` subclass (also as a Composite member), a subclass of Box or
    Composite (it may override ``height``), a Composite of two gridded surfaces — is rasterized with its
    ``to_grid`` at ``spacing`` (m) over ``bounds`` (x_min, x_max, y_min, y_max; m; default its own bounds)
    grown by ``margin`` (m) on every side, so that beyond a feature the clamped grid holds the surroundings'
    height and not the feature's edge.  Rasterizing turns analytic edges into bilinear ramps one cell wide;
    away from edges heights and normals are exact for piecewise-planar surfaces.  Rasterized rather than
    called back point by point (``TERRAIN_PYTHON``, what the public contact query ``collision.wheel_contacts``
    does): a callback leaves compiled code for every one of the ~60 terrain queries per wheel and step (an
    object-mode round trip each, orders of magnitude slower than the step) and would hold the GIL in the
    parallel batch rollout.  Raises TerrainError for such a terrain without bounds when none are given.
    """
    from wmr_dynamics.terrain import HeightGrid, Plane, Ramp, SmoothGrid, Steps

    exact_type = isinstance(terrain, (Plane, HeightGrid, SmoothGrid, Ramp, Steps)) or type(terrain) in _builtin_types()
    if exact_type and has_exact_form(terrain):
        return exact_terrain_data(terrain)
    b = bounds if bounds is not None else getattr(terrain, "bounds", None)
    if b is None:
        raise TerrainError(f"{type(terrain).__name__} terrain is unbounded and has no exact compiled form: the "
                           "compiled path needs a built-in surface (Plane, HeightGrid, SmoothGrid, Ramp, Steps, "
                           "Box, OrientedBox, a Composite of them with at most one grid), a bounded terrain to "
                           "rasterize, or bounds=(x_min, x_max, y_min, y_max)")
    m = float(margin)
    kind, params, grid = _pack(terrain.to_grid(bounds=(b[0] - m, b[1] + m, b[2] - m, b[3] + m), spacing=spacing))
    return TerrainData(kind, params, _readonly(grid))


_NO_GRID = np.zeros((2, 2))
_EXACT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_QUERY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _pack(terrain) -> tuple | None:  # noqa: ANN001
    """(kind, params, grid) of the exact compiled form of a built-in surface (see the TERRAIN_* kinds), or None:
    a Composite with a member that has none (a user's terrain) or with two gridded members (one grid array)."""
    from wmr_dynamics.terrain import Box, Composite, HeightGrid, OrientedBox, Plane, Ramp, SmoothGrid, Steps

    t = terrain
    if isinstance(t, SmoothGrid):
        tx, ty, coeffs = t.spline_knots_coefficients()
        return (TERRAIN_BICUBIC, np.r_[tx[0], tx[-1], ty[0], ty[-1], tx.size, ty.size, tx, ty],
                np.ascontiguousarray(coeffs, dtype=float))
    if isinstance(t, HeightGrid):
        heights = np.array(t.heights, dtype=float, order="C")
        return (TERRAIN_GRID, np.r_[t.x_min, t.y_min, t.dx, t.dy, 1.0 / t.dx, 1.0 / t.dy,
                                    grid_bounds(heights, t.dx, t.dy)], heights)
    if isinstance(t, Plane):
        n, p = t.unit_normal, t.point
        return TERRAIN_PLANE, np.array([n[0], n[1], n[2], float(n @ p)]), _NO_GRID
    if isinstance(t, Ramp):
        return (TERRAIN_RAMP, np.array([t.x_start, t.ramp_height, t._tan, t.s_top, t.s_top_end, t.s_end,
                                        1.0 if t.down else 0.0, t._dir[0], t._dir[1], *t.origin]), _NO_GRID)
    if isinstance(t, Steps):
        return (TERRAIN_STEPS, np.array([t.x_start, t.step_length, t.step_height, float(t.n_steps), t._dir[0],
                                         t._dir[1], *t.origin]), _NO_GRID)
    if isinstance(t, OrientedBox):
        return TERRAIN_OBOX, np.array([*t.center, *t.rotation.ravel(), *(0.5 * t.size), t.base]), _NO_GRID
    if isinstance(t, Box):
        return (TERRAIN_BOX, np.array([*t.center, math.cos(t.yaw), math.sin(t.yaw), 0.5 * t.size[0],
                                       0.5 * t.size[1], t.box_height, t.base]), _NO_GRID)
    if isinstance(t, Composite):
        members = _flatten(t, [])
        if members is None or sum(k in (TERRAIN_GRID, TERRAIN_BICUBIC) for k, _, _ in members) > 1:
            return None
        grid = next((g for k, _, g in members if k in (TERRAIN_GRID, TERRAIN_BICUBIC)), _NO_GRID)
        return (TERRAIN_COMPOSITE, np.concatenate([[len(members)], *([k, p.size, *p] for k, p, _ in members)]),
                grid)
    return None


def grid_bounds(heights: NDArray, dx: float, dy: float) -> NDArray:
    """The bounds a HeightGrid's ``params`` carry after its first six (``TERRAIN_GRID``) for the contact search's
    jump check (``collision._no_lower_sample``): ``(n_z min, M[ny − 1, nx − 1] row-major)``.

    - n_z min: a lower bound of the bilinear surface's normal z component over the grid,
      1 / √(1 + g_x² + g_y²) with g_x (g_y) the largest height difference of x (y) neighbours over dx (dy) — a
      bilinear cell's slope along x lies between those of its two x edges.
    - M[j, i]: the highest of cell (i, j)'s four nodes, which bounds the bilinear surface over the cell (it lies
      within the hull of its corners; outside the grid the surface is the edge cells' height, clamped).

    A grid with a NaN height gives NaN bounds: the jump check then queries every sample, which reports the NaN.
    """
    h = np.asarray(heights, dtype=float)
    gx = np.abs(np.diff(h, axis=1)).max(initial=0.0) / dx
    gy = np.abs(np.diff(h, axis=0)).max(initial=0.0) / dy
    top = np.maximum(np.maximum(h[:-1, :-1], h[:-1, 1:]), np.maximum(h[1:, :-1], h[1:, 1:]))
    if np.isnan(h).any():
        top[:] = np.nan
    return np.r_[1.0 / math.sqrt(1.0 + gx * gx + gy * gy), top.ravel()]


def _flatten(composite, out: list) -> list | None:  # noqa: ANN001
    """The packed members of a Composite, nested Composites flattened (the max is associative; the order, which
    breaks ties, is kept); None if one has no exact form."""
    from wmr_dynamics.terrain import Composite

    for t in composite.surfaces:
        packed = None
        if isinstance(t, Composite):
            if _flatten(t, out) is None:
                return None
            continue
        if type(t) in _builtin_types():
            packed = _pack(t)
        if packed is None:
            return None
        out.append(packed)
    return out


def exact_terrain_data(terrain) -> TerrainData:  # noqa: ANN001
    """The exact compiled form of a built-in surface (Plane, HeightGrid, SmoothGrid, Ramp, Steps, Box, a Composite
    of them with at most one gridded member; subclasses too), made once per terrain object (terrains are
    immutable) — what their ``height``/``normal`` methods evaluate.  TerrainError if it has none."""
    try:
        td = _EXACT[terrain]
    except (KeyError, TypeError):
        packed = _pack(terrain)
        td = None if packed is None else TerrainData(packed[0], packed[1], _readonly(packed[2]))
        _remember(_EXACT, terrain, td)
    if td is None:
        raise TerrainError(f"{type(terrain).__name__} has no exact compiled form (a Composite needs built-in members "
                           "with at most one HeightGrid or SmoothGrid)")
    return td


def query_terrain_data(terrain) -> TerrainData:  # noqa: ANN001
    """The terrain for exact queries (the contact search of ``collision.wheel_contacts``), made once per terrain
    object: the exact compiled form of a built-in surface (:func:`exact_terrain_data`), and ``TERRAIN_PYTHON`` —
    its own ``height_normal`` called back point by point — for any other Terrain (a user's subclass, a Composite
    with one among its members, a Composite of two grids)."""
    try:
        return _QUERY[terrain]
    except (KeyError, TypeError):
        pass
    if type(terrain) in _builtin_types() and has_exact_form(terrain):
        td = exact_terrain_data(terrain)
    else:
        td = TerrainData(TERRAIN_PYTHON, np.array([float(_cb.terrain_slot(terrain))]), _readonly(np.zeros((2, 2))))
    _remember(_QUERY, terrain, td)
    return td


def has_exact_form(terrain) -> bool:  # noqa: ANN001
    """Whether :func:`exact_terrain_data` can represent ``terrain``."""
    try:
        exact_terrain_data(terrain)
    except TerrainError:
        return False
    return True


def _builtin_types() -> tuple:
    from wmr_dynamics.terrain import Box, Composite, HeightGrid, OrientedBox, Plane, Ramp, SmoothGrid, Steps

    return Plane, HeightGrid, SmoothGrid, Ramp, Steps, Box, OrientedBox, Composite


def _remember(cache: weakref.WeakKeyDictionary, terrain, td: TerrainData | None) -> None:  # noqa: ANN001
    try:
        cache[terrain] = td
    except TypeError:  # unhashable (a user class with __eq__ and no __hash__): made anew each time
        pass


def _readonly(grid: NDArray) -> NDArray:
    """The grid as a read-only array: one argument type for every terrain kind (a writable grid for some kinds
    would make a second numba specialization of every kernel, doubling the cold compile), and the read-only
    one, which numba lets LLVM treat as never written, keeps the step as fast as it is."""
    grid.flags.writeable = False
    return grid


@njit(inline="always")
def height_normal(kind: int, params: NDArray, grid: NDArray, x: float, y: float) -> tuple:
    """(h, n_x, n_y, n_z) at (x, y) (m, world) of the terrain ``kind`` (``TerrainData``): the plane, HeightGrid's
    bilinear cell (clamped outside), the ramp's or the steps' profile, the bicubic spline, the box, the max of
    a composite, or a Python terrain called back.  The normal is (−∂h/∂x, −∂h/∂y, 1)/‖·‖ of the same surface.

    The kinds a step runs on are inlined; the others are one call (:func:`_other`), so that the kernels which
    inline this function several times (the contact search) compile as fast as before they existed."""
    if kind == TERRAIN_GRID:
        return _grid(params, 0, grid, x, y)
    if kind == TERRAIN_PLANE:
        return _plane(params, 0, x, y)
    if kind == TERRAIN_RAMP:
        return _ramp(params, 0, x, y)
    if kind == TERRAIN_STEPS:
        return _steps(params, 0, x, y)
    return _other(kind, params, grid, x, y)


@njit(_nrt=False)
def _other(kind: int, params: NDArray, grid: NDArray, x: float, y: float) -> tuple:
    """:func:`height_normal` of a composite, a Python terrain, a bicubic spline, a box or an oriented box."""
    if kind == TERRAIN_COMPOSITE:
        return _composite(params, grid, x, y)
    if kind == TERRAIN_PYTHON:
        return _python_terrain(int(params[0]), x, y)
    if kind == TERRAIN_BICUBIC:
        return _bicubic(params, 0, grid, x, y)
    if kind == TERRAIN_BOX:
        return _box(params, 0, x, y)
    return _obox(params, 0, x, y)


@njit(inline="always")
def _composite(p: NDArray, grid: NDArray, x: float, y: float) -> tuple:
    """Composite: the pointwise maximum of its members' heights, and the normal of the first member attaining it.
    params = (n, then per member: kind, len, its params); ``grid``: its gridded member's.  Each member reads its
    params at their offset in ``p`` (a slice per member and query would reference-count the array)."""
    off = 1
    h, nx, ny, nz = -math.inf, 0.0, 0.0, 1.0
    for k in range(int(p[0])):
        kind, n, o = int(p[off]), int(p[off + 1]), off + 2
        if kind == TERRAIN_GRID:
            hk, ax, ay, az = _grid(p, o, grid, x, y)
        elif kind == TERRAIN_PLANE:
            hk, ax, ay, az = _plane(p, o, x, y)
        elif kind == TERRAIN_RAMP:
            hk, ax, ay, az = _ramp(p, o, x, y)
        elif kind == TERRAIN_STEPS:
            hk, ax, ay, az = _steps(p, o, x, y)
        elif kind == TERRAIN_BICUBIC:
            hk, ax, ay, az = _bicubic(p, o, grid, x, y)
        elif kind == TERRAIN_BOX:
            hk, ax, ay, az = _box(p, o, x, y)
        else:
            hk, ax, ay, az = _obox(p, o, x, y)
        if k == 0 or hk > h:
            h, nx, ny, nz = hk, ax, ay, az
        off += 2 + n
    return h, nx, ny, nz


@njit(inline="always")
def _plane(p: NDArray, o: int, x: float, y: float) -> tuple:
    """Plane n·r = d: h = (d − n_x x − n_y y) / n_z, the normal n."""
    nx, ny, nz = p[o], p[o + 1], p[o + 2]
    return (p[o + 3] - nx * x - ny * y) / nz, nx, ny, nz


@njit(inline="always")
def _steps(p: NDArray, o: int, x: float, y: float) -> tuple:
    """Steps: h = k · step_height on step k (clamped to 0 … n_steps) along s, vertical risers, normals up."""
    s = (x - p[o + 6]) * p[o + 4] + (y - p[o + 7]) * p[o + 5]
    k = min(max(math.floor((s - p[o]) / p[o + 1]) + 1.0, 0.0), p[o + 3])
    return k * p[o + 2], 0.0, 0.0, 1.0


@njit(inline="always")
def _box(p: NDArray, o: int, x: float, y: float) -> tuple:
    """Box: its height on the (closed) rotated footprint, the base elsewhere; normals up."""
    dx, dy = x - p[o], y - p[o + 1]
    u, v = p[o + 2] * dx + p[o + 3] * dy, -p[o + 3] * dx + p[o + 2] * dy
    return (p[o + 6] if abs(u) <= p[o + 4] and abs(v) <= p[o + 5] else p[o + 7]), 0.0, 0.0, 1.0


@njit(inline="always")
def _obox(p: NDArray, o: int, x: float, y: float) -> tuple:
    """OrientedBox (a box tilted by roll/pitch, e.g. an SDF ramp): the top of the solid box where the vertical line
    through (x, y) meets it, the base elsewhere.  params = (c_x, c_y, c_z, R row-major (9), half sizes a_x, a_y,
    a_z, base): the box {c + R u : |u_i| <= a_i}, R its rotation (world from box axes).

    The line r(t) = (x, y, c_z + t) is, in box coordinates, u(t) = p0 + t d with p0 = Rᵀ(x − c_x, y − c_y, 0)
    and d = Rᵀ e_z (the third row of R).  Each axis bounds t to a slab [(−a_i − p0_i)/d_i, (a_i − p0_i)/d_i]
    (sorted), or, for an axis perpendicular to z (|d_i| < 1e-12: a vertical pair of faces), requires
    |p0_i| <= a_i (Kay & Kajiya's slab method).  The line meets the box iff the slabs overlap, t_lo <= t_hi; the
    height is c_z + t_hi, the exit through the face i that set t_hi, whose outward normal sgn(d_i) R e_i points
    up (n_z = |d_i| > 0) and is the normalized (−∂h/∂x, −∂h/∂y, 1) of that face's plane.  A box's faces that look
    down are jumps in height, as a :class:`Box`'s vertical faces are."""
    dx, dy = x - p[o], y - p[o + 1]
    t_lo, t_hi, face, sgn = -math.inf, math.inf, 0, 1.0
    for i in range(3):
        p0 = p[o + 3 + i] * dx + p[o + 6 + i] * dy  # (Rᵀ (dx, dy, 0))_i
        di, a = p[o + 9 + i], p[o + 12 + i]
        if abs(di) < 1e-12:  # faces i vertical: inside their slab or not at all
            if abs(p0) > a:
                return p[o + 15], 0.0, 0.0, 1.0
            continue
        ta, tb = (-a - p0) / di, (a - p0) / di
        lo, hi = (ta, tb) if ta <= tb else (tb, ta)
        if lo > t_lo:
            t_lo = lo
        if hi < t_hi:
            t_hi, face, sgn = hi, i, (1.0 if di > 0.0 else -1.0)
    if t_lo > t_hi:
        return p[o + 15], 0.0, 0.0, 1.0
    return p[o + 2] + t_hi, sgn * p[o + 3 + face], sgn * p[o + 6 + face], sgn * p[o + 9 + face]


@njit(inline="always")
def _grid(params: NDArray, o: int, grid: NDArray, x: float, y: float) -> tuple:
    """HeightGrid: the bilinear cell containing (x, y), clamped to the grid outside it with no slope across the
    edge; on a cell edge the gradient of the cell on the +x / +y side."""
    ny_, nx_ = grid.shape[0], grid.shape[1]
    fx = (x - params[o]) / params[o + 2]  # divided, not multiplied by 1/dx: a product can round a node's 3.0 to
    fy = (y - params[o + 1]) / params[o + 3]  # 2.9999999999999996, another cell and another normal on its edge
    cx = min(max(fx, 0.0), nx_ - 1.0)
    cy = min(max(fy, 0.0), ny_ - 1.0)
    i = min(int(cx), nx_ - 2)
    j = min(int(cy), ny_ - 2)
    tx, ty = cx - i, cy - j
    h00, h10, h01, h11 = grid[j, i], grid[j, i + 1], grid[j + 1, i], grid[j + 1, i + 1]
    a, b, c = h10 - h00, h01 - h00, h11 - h01 - h10 + h00
    h = h00 + tx * a + ty * b + tx * ty * c
    gx = (a + ty * c) * params[o + 4] if fx == cx else 0.0  # clamped direction: no slope
    gy = (b + tx * c) * params[o + 5] if fy == cy else 0.0
    s = math.sqrt(1.0 + gx * gx + gy * gy)
    return h, -gx / s, -gy / s, 1.0 / s


@njit(inline="always")
def _ramp(p: NDArray, o: int, x: float, y: float) -> tuple:
    """Ramp (thesis §2.5.2): flat, incline at tan a, plateau, optional descent, along s = (r − origin)·(cos yaw,
    sin yaw); (h, n) with n from dh/ds.  Like every kind here it reads its params at offset ``o`` of ``p`` (0, or
    a Composite member's)."""
    s = (x - p[o + 9]) * p[o + 7] + (y - p[o + 10]) * p[o + 8]
    t, top = p[o + 2], p[o + 1]
    h = min(max((s - p[o]) * t, 0.0), top)
    dh = t if p[o] <= s < p[o + 3] else 0.0
    if p[o + 6] > 0.5:
        h = min(h, min(max((p[o + 5] - s) * t, 0.0), top))
        if p[o + 4] <= s < p[o + 5]:
            dh -= t
    gx, gy = dh * p[o + 7], dh * p[o + 8]
    n = math.sqrt(1.0 + gx * gx + gy * gy)
    return h, -gx / n, -gy / n, 1.0 / n


@njit
def _python_terrain(slot: int, x: float, y: float) -> tuple:
    """A Python terrain (TERRAIN_PYTHON), called back from an object-mode block (not inlined: the kernels that
    inline :func:`height_normal` stay free of object mode)."""
    with numba.objmode(h="float64", nx="float64", ny="float64", nz="float64"):
        h, nx, ny, nz = _cb.terrain_height_normal(slot, x, y)
    return h, nx, ny, nz


@njit(inline="always")
def _bicubic(p: NDArray, o: int, coef: NDArray, x: float, y: float) -> tuple:
    """SmoothGrid: the tensor-product cubic B-spline h = Σ_a Σ_b B_a(y) B_b(x) c[a, b] (knots and coefficients
    as scipy's ``RectBivariateSpline`` builds them, ``TERRAIN_BICUBIC`` params) and its gradient, at (x, y)
    clamped to the spline's rectangle; no slope across a clamped direction (as :class:`HeightGrid`)."""
    ntx = int(p[o + 4])
    xc, yc = min(max(x, p[o]), p[o + 1]), min(max(y, p[o + 2]), p[o + 3])
    lx, bx0, bx1, bx2, bx3, dx0, dx1, dx2, dx3 = _bspline3(p, o + 6, ntx - 4, xc)
    ly, by0, by1, by2, by3, dy0, dy1, dy2, dy3 = _bspline3(p, o + 6 + ntx, int(p[o + 5]) - 4, yc)
    bx, dx, by, dy = (bx0, bx1, bx2, bx3), (dx0, dx1, dx2, dx3), (by0, by1, by2, by3), (dy0, dy1, dy2, dy3)
    h = gx = gy = 0.0
    for a in range(4):
        sh = sd = 0.0
        for b in range(4):
            c = coef[ly - 3 + a, lx - 3 + b]
            sh += bx[b] * c
            sd += dx[b] * c
        h += by[a] * sh
        gx += by[a] * sd
        gy += dy[a] * sh
    if xc != x:  # clamped direction: no slope
        gx = 0.0
    if yc != y:
        gy = 0.0
    s = math.sqrt(1.0 + gx * gx + gy * gy)
    return h, -gx / s, -gy / s, 1.0 / s


@njit(inline="always")
def _bspline3(t: NDArray, off: int, n: int, u: float) -> tuple:
    """The four cubic B-splines nonzero at ``u`` and their derivatives, for the knots t[off : off + n + 4] of a
    spline with n coefficients: (l, N_{l−3}, …, N_l, N'_{l−3}, …, N'_l) with t_l ≤ u < t_{l+1} (the last span at
    the right end).  Cox–de Boor recurrence N_{i,k} = ω_{i,k} N_{i,k−1} + (1 − ω_{i+1,k}) N_{i+1,k−1} and the
    derivative N'_{i,3} = 3 (N_{i,2} / (t_{i+3} − t_i) − N_{i+1,2} / (t_{i+4} − t_{i+1})) (de Boor, *A Practical
    Guide to Splines*, 1978, ch. IX–X), unrolled for degree 3."""
    lo, hi = 3, n - 1
    if u >= t[off + hi]:
        lo = hi
    else:
        while hi - lo > 1:  # bisection keeping t_lo ≤ u < t_hi
            mid = (lo + hi) // 2
            if t[off + mid] <= u:
                lo = mid
            else:
                hi = mid
    k = off + lo
    left1, left2, left3 = u - t[k], u - t[k - 1], u - t[k - 2]
    right1, right2, right3 = t[k + 1] - u, t[k + 2] - u, t[k + 3] - u
    w = 1.0 / (right1 + left1)  # degree 1
    a0, a1 = right1 * w, left1 * w
    w = a0 / (right1 + left2)  # degree 2
    m0, sv = right1 * w, left2 * w
    w = a1 / (right2 + left1)
    m1, m2 = sv + right2 * w, left1 * w
    e0 = m0 / (right1 + left3)  # degree 3: e_j = N_{l−2+j,2} / (t_{l+1+j} − t_{l−2+j})
    e1 = m1 / (right2 + left2)
    e2 = m2 / (right3 + left1)
    return (lo, right1 * e0, left3 * e0 + right2 * e1, left2 * e1 + right3 * e2, left1 * e2,
            -3.0 * e0, 3.0 * (e0 - e1), 3.0 * (e1 - e2), 3.0 * e2)


@njit(_nrt=False)
def height_normal_points(kind: int, params: NDArray, grid: NDArray, x: NDArray, y: NDArray, out: NDArray) -> None:
    """:func:`height_normal` at the points (x[k], y[k]) (m, world; (n,) arrays) into ``out`` (n, 4): h, n_x, n_y,
    n_z — the one evaluation behind the surfaces' ``height``, ``normal`` and ``height_normal``."""
    for k in range(x.shape[0]):
        h, nx, ny, nz = height_normal(kind, params, grid, x[k], y[k])
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = h, nx, ny, nz
