"""Wheel–terrain collision detection: contact points, contact frames, Δz, contact angles (thesis §2.2.1) — the
one implementation, a compiled loop over wheels (:func:`wheel_contacts_kernel`; the compiled steps and
:func:`wmr_dynamics.collision.wheel_contacts` call it).

For each wheel the contact point is the point of the wheel surface with the smallest (most negative)
contact height error

    Δz = (r_contact − r_terrain) · n̂                                               (thesis eq. 2.8)

with r_terrain = [x, y, h(x, y)] and n̂ the terrain normal at the contact point's (x, y).  Δz > 0 is
separation, Δz < 0 penetration.  Rim points are parameterized by the contact angle δ,

    r = r_wheel − R (sin δ x̂_w + cos δ ẑ_w)                                       (thesis eq. 2.9)

a counter-clockwise rotation about the wheel's y axis starting from its −z axis.  With r_terrain straight below the
point only the z difference remains: Δz = (z − h) n_z.  The search runs in the hub frame (the wheel frame at zero
wheel angle: the same circle, its x̂ and ẑ not turning with the wheel), so δ stays near 0 below the axle and is the
contact angle the searches report and start from (:func:`_hub_circle`).

Wheel shapes:

- ``cylinder``: the thesis's thin 3D circle of radius R in the wheel's x–z plane.
- ``torus`` (Auchter et al.): a tread of crown radius ρ around a centre-line circle of radius R − ρ.  The
  tread point nearest the ground is the centre-line point moved by ρ against the terrain normal, so the
  contact point slides across the tread (along ŷ_w) as the wheel tilts relative to the ground; its Δz is the
  centre line's minus ρ on a locally planar terrain.

The contact frame (§2.2.1, Fig. 2.3) has its origin at the contact point, ẑ_c = n̂, x̂_c the longitudinal
direction ŷ_w × n̂ (normalized; forward for a wheel rolling along its x axis; a wheel lying flat falls back
to its x axis projected on the ground plane) and ŷ_c = ẑ_c × x̂_c.

Search, ``method=0`` (default): δ is sampled on the whole circle (so a step's edge in front of the wheel is
found), the best sample is refined by ``N_REFINE`` rounds of five offsets around it, each shrinking the
bracket 4×, and a last parabola through the best and its neighbours is kept where it lowers Δz (smooth
minima); on a plane this converges to the closed-form optimum.  It is written for speed:

- one wheel at a time, its centre and scaled axes in local scalars; nothing is allocated;
- no trigonometric call in the search: the sines and cosines of the sample angles and of the refinement
  offsets are constants (module tables for the default ``N_SAMPLES``), a candidate's (sin δ, cos δ) comes
  from its parent's by angle addition, and the parabola's small shift by its Taylor series;
- the search evaluates Δz with products by 1/dx, 1/dy (``TerrainData`` grid params[4:6]); the chosen
  point is evaluated once more with :func:`~wmr_dynamics.compiled.terrain.height_normal`, which divides,
  so the reported Δz, point and normal are those of ``HeightGrid.height_normal`` on cell edges too.

**Warm start** (method 0, issue 14): the steps call the search with the same ``angle`` array every step, so
it holds each wheel's previous contact angle (hub frame; NaN: none — a new workspace, ``Stepper.reset``, the
Python query and ``Simulator.velocity``/``step`` without ``contact_angle``).  From it the search finds the
minimum of Δz(δ) next to the previous angle by a few safeguarded root-finding steps (:func:`_polish`: a
plane-exact first step, then the secant; on a grid the rim's crossing of a cell edge, where Δz has a kink,
solved for directly), then checks
that no coarse sample out to a quarter turn on both sides lies lower (the jump check, :func:`_no_lower_sample`:
no second, lower minimum such as an edge or a step coming within the rim's reach; on a grid the samples that
lie above their cell's highest node are not queried) — ≈ 15 terrain queries in place of the full search's
≈ 58.  The full search ends with the same polish from its sampled minimum, so where both searches find the
same minimum they agree to the polish's tolerance (1e-9 rad; at a kink both return its lower side).  Where
Δz(δ) has two minima within one coarse spacing (on the thesis terrains the rim's crossings of neighbouring
cell edges, Δz within ~2 mm of each other) the warm start keeps the one it tracks and the full search takes
the one its sampling reaches: measured against a dense search (20,001 samples), the two are equally far from
the global minimum (benchmarks/collision_warm.py, docs/benchmarks.md).  The full search runs instead where
the contact may have jumped: no previous angle, the polish leaving one coarse spacing around the previous
angle, a wheel more than ``WARM_DZ_MAX`` · (R − ρ) above the ground, a failed jump check, a value not finite,
or a terrain with edges (steps, ramps, boxes, composites: :func:`_warm_terrain`).  Not sampled: the rim's
half beyond ±90° (terrain there, above the axle, reaches the samples at ±90° first).

``method=1`` is the fast search documented at :func:`wheel_contacts_kernel` (not warm-started).

``method=2`` (``METHOD_EDGES``, the dynamic step's) is method 0 with a track's contacts as the belt's surface
sees them (issue 13; docs/tracks.md): a roller arc's normal turned to the direction from a step's corner (or
face) to its centre (:func:`_belt_surface`), its search carried on to the edge on terrains with edges
(:func:`_arc_descend`), and a run point sliding along its stretch of the run there (:func:`_run_contact`).
Wheels are searched as in method 0; on a plane the contacts are method 0's.

Two things made it fast (measured per wheel, Zoë on the thesis terrains, method 0): the small helpers are
``inline="always"`` (kernels load from numba's cache as machine code, so calls between them are never
inlined by LLVM, and each call reference-counts the arrays it passes — 4.6 → 1.5 µs), and the kernel is
compiled with ``_nrt=False`` (it allocates nothing, so it needs no reference counting of the ~20 arrays of
its arguments at all — 1.5 → 0.87 µs).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics._jit import njit
from wmr_dynamics.compiled.data import (
    TERRAIN_BICUBIC,
    TERRAIN_GRID,
    TERRAIN_PLANE,
    ModelData,
    TerrainData,
    model_data,
)
from wmr_dynamics.compiled.series import COS_TAYLOR, SIN_TAYLOR
from wmr_dynamics.compiled.terrain import height_normal
from wmr_dynamics.errors import ModelError, TerrainError
from wmr_dynamics.model import WmrModel

KIND_WHEEL, KIND_ARC, KIND_BELT, KIND_UPPER = 0, 1, 2, 3  # ModelData.wheel_kind (model.ELEMENT_KINDS)
N_SAMPLES = 36  # coarse samples of δ on the circle (10°)
N_REFINE = 4  # refinement rounds, each shrinking the δ bracket 4× (final spacing ≈ 0.04°)
METHOD_SAMPLED, METHOD_FAST, METHOD_EDGES = 0, 1, 2  # METHOD_EDGES: sampled, and tracks' edge contacts
FAST_WINDOW = 5  # method 1: coarse samples within ±5 · 10° of the lowest rim point
FAST_ROUNDS = 2  # method 1: sampled refinement rounds (10° → 2.5° → 0.625°) before the fixed-point iteration
FAST_ITERATIONS = 6  # method 1: at most this many fixed-point / bisection steps
FAST_TOLERANCE = 1e-5  # rad: method 1 stops when the next step is smaller


@dataclass(frozen=True)
class Contacts:
    """Per-wheel contact data, all in world coordinates (index = wheel number, ``model.wheel_names``).

    Attributes:
        points: (nw, 3) contact points r_contact, m.
        frames: (nw, 3, 3) contact-frame rotations R_c^w; columns x̂_c (longitudinal), ŷ_c (lateral),
            ẑ_c (terrain normal).
        dz: (nw,) contact height error Δz, m (eq. 2.8); < 0 is penetration.
        angle: (nw,) contact angle δ, rad (eq. 2.9), measured in the hub frame (the wheel frame at zero
            wheel rotation), so δ = 0 is straight below the axle.
        lateral: (nw,) offset of the contact point along the wheel axis ŷ_w from the wheel centre, m
            (nonzero only for torus wheels).
    """

    points: NDArray
    frames: NDArray
    dz: NDArray
    angle: NDArray
    lateral: NDArray

    @property
    def normals(self) -> NDArray:
        """(nw, 3) terrain normals at the contact points."""
        return self.frames[:, :, 2]

    def in_contact(self, tolerance: float = 0.0) -> NDArray:
        """(nw,) bool: Δz <= tolerance (m)."""
        return self.dz <= tolerance


def _trig_table(n_samples: int) -> tuple:
    """(sin, cos) of the refinement offsets: per round r, step_r and step_r / 2 (step_r = 2π / n / 4^r), then
    h = 2 step_final of the parabola — ``4 N_REFINE + 2`` floats, as the kernels index them."""
    step, out = 2.0 * math.pi / n_samples, []
    for _ in range(N_REFINE):
        out += [math.sin(step), math.cos(step), math.sin(0.5 * step), math.cos(0.5 * step)]
        step /= 4.0
    return (*out, math.sin(2.0 * step), math.cos(2.0 * step))


_D36 = np.linspace(-np.pi, np.pi, N_SAMPLES, endpoint=False)
_SIN36, _COS36 = np.sin(_D36), np.cos(_D36)  # the coarse samples, as np.linspace places them
_TRIG36 = _trig_table(N_SAMPLES)


@njit(inline="always")
def _trig(n_samples: int) -> tuple:
    """The refinement offsets' (sin, cos) of :func:`_trig_table` (constants for the default n_samples)."""
    if n_samples == N_SAMPLES:
        return _TRIG36
    step = 2.0 * math.pi / n_samples
    s0, s1, s2, s3 = step, step / 4.0, step / 16.0, step / 64.0
    h = 2.0 * step / 256.0
    return (math.sin(s0), math.cos(s0), math.sin(0.5 * s0), math.cos(0.5 * s0),
            math.sin(s1), math.cos(s1), math.sin(0.5 * s1), math.cos(0.5 * s1),
            math.sin(s2), math.cos(s2), math.sin(0.5 * s2), math.cos(0.5 * s2),
            math.sin(s3), math.cos(s3), math.sin(0.5 * s3), math.cos(0.5 * s3), math.sin(h), math.cos(h))


@njit(inline="always")
def _query(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float, by: float,
           bz: float, s: float, c: float) -> tuple:
    """The search's terrain query at the rim point r = o − s·a − c·b of (sin δ, cos δ) = (s, c) (eq. 2.9; a = rc·x̂_h,
    b = rc·ẑ_h, the hub frame's axes: :func:`_hub_circle`): (Δz without the tube radius (eq. 2.8), n̂·a, n̂·b,
    dΔz/dδ − n̂·dr/dδ).  On a grid the bilinear cell of ``HeightGrid._cell`` with products by 1/dx, 1/dy
    (params[4:6]) — it differs from it by rounding only.

    The last entry is the part of Δz's derivative along the rim that n̂·dr/dδ = s n̂·b − c n̂·a leaves out: with Δz
    = (z − h) n_z, (z − h) dn_z/dδ (on a bilinear cell n_z = 1/√(1 + h_x² + h_y²) turns with the cross term of the
    cell; zero on a plane; left out on a bicubic grid).  (Callers that do not use it: compiled away.)"""
    x, y, z = ox - s * ax - c * bx, oy - s * ay - c * by, oz - s * az - c * bz
    if td.kind != TERRAIN_GRID:
        h, nx, ny, nz = height_normal(td.kind, td.params, td.grid, x, y)
        return (z - h) * nz, nx * ax + ny * ay + nz * az, nx * bx + ny * by + nz * bz, 0.0
    p, g = td.params, td.grid
    ny_, nx_ = g.shape[0], g.shape[1]
    fx = (x - p[0]) * p[4]
    fy = (y - p[1]) * p[5]
    cx = min(max(fx, 0.0), nx_ - 1.0)
    cy = min(max(fy, 0.0), ny_ - 1.0)
    i = min(int(cx), nx_ - 2)
    j = min(int(cy), ny_ - 2)
    tx, ty = cx - i, cy - j
    h00, h10, h01, h11 = g[j, i], g[j, i + 1], g[j + 1, i], g[j + 1, i + 1]
    d1, d2, d3 = h10 - h00, h01 - h00, h11 - h01 - h10 + h00
    h = h00 + tx * d1 + ty * d2 + tx * ty * d3
    inx, iny = fx == cx, fy == cy  # clamped direction: no slope
    gx = (d1 + ty * d3) * p[4] if inx else 0.0
    gy = (d2 + tx * d3) * p[5] if iny else 0.0
    nz = 1.0 / math.sqrt(1.0 + gx * gx + gy * gy)
    # dn_z/dδ = −n_z³ (h_x dh_x/dδ + h_y dh_y/dδ), dh_x/dδ = d3 p4 p5 dy/dδ, dh_y/dδ = d3 p4 p5 dx/dδ
    # (dr/dδ = s b − c a)
    k = d3 * p[4] * p[5] if (inx and iny) else 0.0
    dn = -nz * nz * nz * k * (gx * (s * by - c * ay) + gy * (s * bx - c * ax))
    return (z - h) * nz, nz * (az - gx * ax - gy * ay), nz * (bz - gx * bx - gy * by), (z - h) * dn




@njit(inline="always")
def _sin_cos(t: float) -> tuple:
    """(sin t, cos t): Taylor series for |t| ≤ 0.35 (truncation < 1e-18; products only), libm beyond."""
    if abs(t) > 0.35:
        return math.sin(t), math.cos(t)
    a, b = SIN_TAYLOR, COS_TAYLOR
    t2 = t * t
    s = t * (1.0 + t2 * (a[0] + t2 * (a[1] + t2 * (a[2] + t2 * (a[3] + t2 * (a[4] + t2 * a[5]))))))
    c = 1.0 + t2 * (b[0] + t2 * (b[1] + t2 * (b[2] + t2 * (b[3] + t2 * (b[4] + t2 * (b[5] + t2 * b[6]))))))
    return s, c


@njit(inline="always")
def _unit(s: float, c: float) -> tuple:
    r = math.sqrt(s * s + c * c)
    return s / r, c / r


@njit(_nrt=False)  # allocation-free: no reference counting of the arrays it is passed (see the module notes)
def wheel_contacts_kernel(md: ModelData, td: TerrainData, T_world: NDArray, n_samples: int, points: NDArray,
                          frames: NDArray, dz: NDArray, angle: NDArray, lateral: NDArray, method: int = 0) -> int:
    """Contacts of every wheel into the preallocated outputs (see ``collision.Contacts``): points (nw, 3) m,
    frames (nw, 3, 3), dz (nw,) m, angle (nw,) rad (hub frame), lateral (nw,) m.  Returns 0, or 1 + the index
    of the first wheel whose terrain query was not finite (NaN state or terrain data).

    ``angle`` is read before it is written: a finite entry is that wheel's previous contact angle, where method
    0 starts its search (the warm start of the module notes); NaN runs the full search.  Callers that do not
    step one state to the next pass NaN (``compiled_wheel_contacts`` does).

    ``method`` 0 (default): the sampled search of the module notes — ``n_samples`` coarse samples of δ on the
    whole circle, ``N_REFINE`` rounds of five offsets, a parabola (≈ 58 terrain queries per wheel).

    ``method`` 1: a faster search for wheels rolling on terrain (≈ 20 queries; ``n_samples`` is ignored,
    the default 36 are used): only the 11 coarse samples within ±50° of the rim point lowest in world z,
    two of the refinement rounds (bracket 10° → 1.25°), then a fixed-point iteration on the stationarity
    condition n̂ · dr/dδ = 0 — (sin δ, cos δ) ∥ (n̂·x̂_w, n̂·ẑ_w), exact in one step on a plane — safeguarded
    by bisection on the sign of dΔz/dδ (a minimum on a convex cell edge of a grid is a kink the iteration
    cannot reach).  Trade-off, measured for Zoë on the ten thesis rough terrains along the 10 s benchmark
    path (10,040 wheel contacts, one core of this project's machines): 0.87 → 0.44 µs per wheel (the C++
    reference: 1.7 µs discretized, 0.35 µs root finding), Δz within 0.085 mm of method 0.  The minimum
    itself is found to ~1e-5 rad; the differences come from wheels whose Δz(δ) has two nearly equal minima,
    e.g. straddling a concave cell edge, where the two methods may pick different ones (the contact point
    then differs by up to a few mm, and the normal with the grid cell); a whole 10 s Zoë run moves by
    0.3 mm.  For wheels on the ground
    (|Δz| < 3 cm) of every bundled vehicle at random poses on a rough grid: within 0.02 mm; on a plane:
    identical.  It misses contacts more than ~50° from the lowest rim point (a wheel pushed against a step
    or wall: use method 0 there), and for a wheel well above the ground, whose Δz(δ) has many shallow
    minima, the methods may settle in different ones (measured up to 16 mm at Δz ≈ 0.6 m, where method 0
    itself is 2.5 mm above the true minimum) — harmless for contact.
    """
    fast = method == METHOD_FAST
    edges = method == METHOD_EDGES  # track elements: the belt surface's contacts (the dynamic model's)
    if fast:
        n_samples = N_SAMPLES
    trig = _trig(n_samples)
    warm = not fast and _warm_terrain(td.kind)
    nw = md.wheel_frame.shape[0]
    for w in range(nw):
        f = md.wheel_frame[w]
        T = T_world[f]
        tube = md.wheel_tube[w]
        kind = md.wheel_kind[w]
        if kind == KIND_WHEEL:  # the circle in the hub frame, as the contact angle is reported (see _hub_circle)
            rc = md.wheel_circle[w] - tube
            ox, oy, oz, ax, ay, az, bx, by, bz = _hub_circle(md, T_world, f, rc, 0.0, 0.0)
        else:  # a track element: its circle in the (non-turning) hub frame
            rc = md.wheel_circle[w]
            ox, oy, oz, ax, ay, az, bx, by, bz = _element_circle(md, T_world, w, f)
        taken, ok, sb, cb = False, True, 0.0, 1.0
        known = math.nan  # the contact angle where it is known (a run's fixed point), else from the contact point
        if kind == KIND_BELT:  # a fixed point of the lower run: δ = 0 in the hub frame
            taken, known = True, 0.0
        elif kind == KIND_UPPER:  # a fixed point of the upper run: δ = π
            taken, cb, known = True, -1.0, math.pi
        elif warm and math.isfinite(angle[w]):  # warm start at the previous step's contact angle (hub frame)
            taken, sb, cb = _warm_search(td, ox, oy, oz, ax, ay, az, bx, by, bz, angle[w], n_samples, trig,
                                         WARM_DZ_MAX * rc)
        if not taken:
            ok, sb, cb = _search(td, ox, oy, oz, ax, ay, az, bx, by, bz, n_samples, trig, fast)
            if edges and kind == KIND_ARC and not warm:  # a roller on a terrain with edges: reach the edge
                sb, cb = _arc_descend(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb, n_samples)
            elif warm and ok:  # the warm start's polish, so that both searches end at the same minimum
                sb, cb = _search_polish(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb, n_samples)
        v, cx, cy, cz, nx, ny, nz = _rim_exact(td, ox, oy, oz, ax, ay, az, bx, by, bz, tube, sb, cb)
        if not (ok and math.isfinite(v) and math.isfinite(nx) and math.isfinite(ny) and math.isfinite(nz)):
            return w + 1
        if edges and kind == KIND_ARC:  # a track's roller arc: the belt surface's normal (at an edge: the corner)
            v, cx, cy, cz, nx, ny, nz = _belt_surface(ox, oy, oz, ax, ay, az, bx, by, bz, rc, v, cx, cy, cz, nx, ny,
                                                      nz)
        elif edges and kind != KIND_WHEEL and md.wheel_centre[w, 5] != 0.0 and not _warm_terrain(td.kind):
            # a run point that slides (WmrModel.wheel_slides), on a terrain with edges
            v, cx, cy, cz, nx, ny, nz = _run_contact(td, ax, ay, az, bx, by, bz, rc, md.wheel_centre[w, 3],
                                                     md.wheel_centre[w, 4], kind == KIND_UPPER, v, cx, cy, cz, nx, ny,
                                                     nz)
            known = math.nan  # (the contact slid along the run)
        _frame(md, T_world, w, f, T, tube, v, cx, cy, cz, nx, ny, nz, ox, oy, oz, points, frames, dz, angle,
               lateral, known)
    return 0


@njit(inline="always")
def _rim_at(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float, by: float,
            bz: float, s0: float, c0: float, t: float) -> float:
    """Δz of the rim point at δ0 + t, δ0 given by (sin δ0, cos δ0) = (s0, c0)."""
    st, ct = math.sin(t), math.cos(t)
    v, _, _, _ = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, s0 * ct + c0 * st, c0 * ct - s0 * st)
    return v


@njit(inline="always")
def _along(td: TerrainData, run: bool, q: tuple, t: float) -> float:
    """Δz at the parameter t of an edge search: the rim point at δ0 + t (q = o, a, b, sin δ0, cos δ0) or, with
    ``run``, the run point c + t e (q = c, e)."""
    if run:
        return _run_height(td, q[0], q[1], q[2], q[3], q[4], q[5], t)
    return _rim_at(td, q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], t)


@njit(inline="always")
def _golden(td: TerrainData, run: bool, q: tuple, lo: float, b: float, hi: float, fb: float, tol: float) -> tuple:
    """Golden-section search of :func:`_along`'s Δz on (lo, hi) around b, where Δz(b) = fb is below both ends,
    until the bracket is narrower than ``tol``: (t, Δz) of the lowest point found.  Δz may jump (a step's
    edge): the bracket closes on the jump from its lower side."""
    golden = 0.3819660112501051
    for _ in range(60):
        if hi - lo < tol:
            break
        x = b + golden * (hi - b) if hi - b > b - lo else b - golden * (b - lo)
        fx = _along(td, run, q, x)
        if fx < fb:
            if x > b:
                lo = b
            else:
                hi = b
            b, fb = x, fx
        elif x > b:
            hi = x
        else:
            lo = x
    return b, fb


@njit(_nrt=False)  # rare (terrains with edges): a call, not inlined code in the wheel loop
def _arc_descend(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float,
                 by: float, bz: float, sb: float, cb: float, n_samples: int) -> tuple:
    """The search's minimum carried on to where Δz(δ) stops falling, for a roller arc on a terrain with edges
    (steps, boxes): there the minimum is a step's edge — Δz falls towards it on the upper tread and jumps up
    beyond it — and the refinement rounds, whose reach shrinks 4× a round, stop short of it when the best
    coarse sample lies further off (measured: 1.6° short, Δz 1.9 mm off, for a 0.127 m roller a 6 cm step
    touching it 45° ahead).  From the best δ: if a neighbour at the search's final resolution h is lower, walk
    on with doubling steps (at most two coarse steps) until Δz rises; then shrink the bracket (that one, or
    ±h) by golden section to h/64 — the edge, approached from the tread, or the smooth minimum.  Returns
    (sin δ, cos δ)."""
    h = 2.0 * (2.0 * math.pi / n_samples) / 4.0 ** N_REFINE
    f0 = _rim_at(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb, 0.0)
    fm = _rim_at(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb, -h)
    fp = _rim_at(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb, h)
    g, a, b, c, fb = 1.0, -h, 0.0, h, f0  # a < b < c along g, f(b) below f(a) and f(c)
    step = h
    reach = 2.0 * (2.0 * math.pi / n_samples)
    if fm < f0 or fp < f0:  # still falling: walk on
        g = 1.0 if fp < fm else -1.0
        a, b, fb = 0.0, g * h, min(fm, fp)
    while fb < f0:
        step *= 2.0
        c = b + g * step
        if abs(c) > reach:
            c = g * reach
            break
        fc = _rim_at(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb, c)
        if not fc < fb:
            break
        a, b, fb = b, c, fc
    q = (ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb)
    b, fb = _golden(td, False, q, min(a, c), b, max(a, c), fb, h / 64.0)
    st, ct = math.sin(b), math.cos(b)
    return sb * ct + cb * st, cb * ct - sb * st


@njit(inline="always")
def _belt_surface(ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float, by: float, bz: float,
                  rho: float, v: float, cx: float, cy: float, cz: float, nx: float, ny: float, nz: float) -> tuple:
    """A roller arc's contact with the normal of the belt surface (issue 13: "on edges, from the belt surface"):
    (Δz, contact point, n̂) in place of eq. 2.8's (v, rim point c, terrain normal n̂).

    E = c − v n̂ is the point of the terrain's tangent plane nearest the rim point — at a step, its edge.  The
    normal keeps n̂'s component a along the circle's axis ŷ and turns its in-plane part p̂ (unit) to the
    direction û from the edge to the centre o: n̂' = a ŷ + √(1 − a²) û, Δz' = (|d| − ρ)/√(1 − a²), contact
    point o − ρ û, where d is o − E without its ŷ part and, when E lies above the centre along p̂ (a face
    higher than the axle), without its p̂ part too: then the contact is the step's face, d the centre's
    distance from it.  Where the terrain is smooth the rim point minimizing Δz is a tangency (p̂ ∥ d), so this
    is eq. 2.8's contact — exactly, on a plane in any pose.  At a step the tread's vertical normal would
    push the roller straight up and leave the belt's motion partly along the normal; the corner's (or the
    face's) normal pushes the track back as well as up, and the belt runs in the contact plane, so the belt
    moving down the front of the roller climbs a face by friction.  A circle lying flat (|a| → 1), or a
    centre at E keeps eq. 2.8's contact."""
    a = nx * (by * az - bz * ay) + ny * (bz * ax - bx * az) + nz * (bx * ay - by * ax)
    inv = 1.0 / (rho * rho)
    yx, yy, yz = (by * az - bz * ay) * inv, (bz * ax - bx * az) * inv, (bx * ay - by * ax) * inv  # ŷ = ẑ × x̂
    a *= inv
    k = 1.0 - a * a
    if not k > 1e-6:
        return v, cx, cy, cz, nx, ny, nz
    sk = math.sqrt(k)
    px, py, pz = (nx - a * yx) / sk, (ny - a * yy) / sk, (nz - a * yz) / sk
    dx, dy, dz = ox - cx + v * nx, oy - cy + v * ny, oz - cz + v * nz  # o − E
    s = dx * yx + dy * yy + dz * yz
    dx, dy, dz = dx - s * yx, dy - s * yy, dz - s * yz
    h = dx * px + dy * py + dz * pz
    if h < 0.0:  # E above the centre: the face of the step
        dx, dy, dz = dx - h * px, dy - h * py, dz - h * pz
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if not dn > 1e-3 * rho:
        return v, cx, cy, cz, nx, ny, nz
    ux, uy, uz = dx / dn, dy / dn, dz / dn
    return ((dn - rho) / sk, ox - rho * ux, oy - rho * uy, oz - rho * uz, a * yx + sk * ux, a * yy + sk * uy,
            a * yz + sk * uz)


@njit(inline="always")
def _run_height(td: TerrainData, px: float, py: float, pz: float, ex: float, ey: float, ez: float,
                t: float) -> float:
    """Vertical Δz (m) of the run point P + t e."""
    h, _, _, _ = height_normal(td.kind, td.params, td.grid, px + t * ex, py + t * ey)
    return pz + t * ez - h


@njit(_nrt=False)  # rare (terrains with edges): a call, not inlined code in the wheel loop
def _run_contact(td: TerrainData, ax: float, ay: float, az: float, bx: float, by: float, bz: float, rho: float,
                 rx: float, rz: float, upper: bool, v: float, cx: float, cy: float, cz: float, nx: float, ny: float,
                 nz: float) -> tuple:
    """A run point's contact on a terrain with edges (issue 13: "on edges, from the belt surface"): (Δz, contact
    point, n̂) in place of eq. 2.8's at the fixed point c.

    The point's stretch of the run is c + t e, t ∈ [−1, 1], e = (r_x x̂_h + r_z ẑ_h) (``WmrModel.wheel_run``, hub axes).
    A step's edge (a stair nosing, a pallet board) under a rigid run touches the belt between the fixed
    points, where eq. 2.8 at those points does not see it.  The contact slides to the stretch's lowest
    vertical Δz(t) — 9 samples, then golden section around the best to 1e-4 of the stretch (an edge is a
    jump of Δz(t): the section closes on it); where nothing is 1 µm lower than at t = 0 (flat ground under a
    level run) the fixed point stays.  The normal is the belt's, m̂ ⟂ e in the hub's x–z plane into the
    track (ẑ_h for a level lower run, −ẑ_h for the upper run), Δz = Δz_v(t)·m̂_z the terrain point's depth
    below the belt along it.  A belt facing away from the ground or steeper than 78° (m̂_z < 0.2) keeps eq.
    2.8's contact at the fixed point."""
    ex, ey, ez = (rx * ax + rz * bx) / rho, (rx * ay + rz * by) / rho, (rx * az + rz * bz) / rho
    rl = math.sqrt(rx * rx + rz * rz)
    if not rl > 0.0:
        return v, cx, cy, cz, nx, ny, nz
    g = -1.0 if upper else 1.0
    k = g / (rho * rl)
    mx, my, mz = k * (rx * bx - rz * ax), k * (rx * by - rz * ay), k * (rx * bz - rz * az)
    if not mz > 0.2:
        return v, cx, cy, cz, nx, ny, nz
    f0 = _run_height(td, cx, cy, cz, ex, ey, ez, 0.0)
    tb, fb = 0.0, f0
    for i in range(9):
        t = -1.0 + 0.25 * i
        f = _run_height(td, cx, cy, cz, ex, ey, ez, t)
        if f < fb:
            tb, fb = t, f
    q = (cx, cy, cz, ex, ey, ez, 0.0, 0.0, 0.0, 0.0, 0.0)
    tb, fb = _golden(td, True, q, max(tb - 0.25, -1.0), tb, min(tb + 0.25, 1.0), fb, 1e-4)
    if not fb < f0 - 1e-6:
        tb, fb = 0.0, f0
    return fb * mz, cx + tb * ex, cy + tb * ey, cz + tb * ez, mx, my, mz


@njit(inline="always")
def _element_circle(md: ModelData, T_world: NDArray, w: int, f: int) -> tuple:
    """A track element's circle in world coordinates: (centre o, a = ρ·x̂_h, b = ρ·ẑ_h), ρ the circle radius and
    x̂_h, ẑ_h the hub frame's axes (R_parent · R0: the joint frame at zero displacement, which does not turn
    with the sprocket), the centre at ``wheel_centre`` in the hub frame (Pecka et al.: the belt outline is
    fixed to the track frame while the belt itself moves)."""
    return _hub_circle(md, T_world, f, md.wheel_circle[w], md.wheel_centre[w, 0], md.wheel_centre[w, 2])


@njit(inline="always")
def _hub_circle(md: ModelData, T_world: NDArray, f: int, rho: float, cx: float, cz: float) -> tuple:
    """The circle of radius ρ about the point (cx, 0, cz) of frame f's hub frame, in world coordinates: (centre o,
    a = ρ·x̂_h, b = ρ·ẑ_h), x̂_h, ẑ_h the hub frame's axes (R_parent · R0: the joint frame at zero displacement).

    A wheel's rim (eq. 2.9) is searched in its hub frame, not the wheel frame that turns with it (issue 14): the
    two differ by the wheel's turn about their common y axis, so the rim is the same circle, and the contact
    angle δ — reported in the hub frame, and where the warm start starts — stays near 0 below the axle: its
    (sin δ, cos δ) come from a short series (``_sin_cos``) rather than libm, and no atan2 converts the previous
    angle into the wheel frame (docs/benchmarks.md, "Kept null space, one call per step, the hub-frame contact
    search")."""
    p = md.parent[f]
    o0 = o1 = o2 = 0.0
    a0 = a1 = a2 = b0 = b1 = b2 = 0.0
    for r in range(3):
        hx = T_world[p, r, 0] * md.T0[f, 0, 0] + T_world[p, r, 1] * md.T0[f, 1, 0] + T_world[p, r, 2] * md.T0[f, 2, 0]
        hz = T_world[p, r, 0] * md.T0[f, 0, 2] + T_world[p, r, 1] * md.T0[f, 1, 2] + T_world[p, r, 2] * md.T0[f, 2, 2]
        o = T_world[f, r, 3] + cx * hx + cz * hz
        if r == 0:
            o0, a0, b0 = o, rho * hx, rho * hz
        elif r == 1:
            o1, a1, b1 = o, rho * hx, rho * hz
        else:
            o2, a2, b2 = o, rho * hx, rho * hz
    return o0, o1, o2, a0, a1, a2, b0, b1, b2


@njit(inline="always")
def _search(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float, by: float,
            bz: float, n_samples: int, trig: tuple, fast: bool) -> tuple:
    """(finite, sin δ, cos δ) of the best rim point: method 0 (``fast`` False) or 1, as documented at
    :func:`wheel_contacts_kernel`.  Each stage is a loop with one terrain query in it (compile time: the
    query is inlined once per call site)."""
    ok = True
    step = 2.0 * math.pi / n_samples
    k0, k1 = 0, n_samples  # coarse samples δ = −π + k·step, all of them ...
    if fast:  # ... or those nearest the rim point lowest in world z: (sin δ, cos δ) ∥ (x̂_z, ẑ_z)
        k0 = int(round((math.atan2(az, bz) + math.pi) / step)) - FAST_WINDOW
        k1 = k0 + 2 * FAST_WINDOW + 1
    sb, cb, fb, n1b, n2b = 0.0, 1.0, math.inf, 0.0, 0.0
    for kk in range(k0, k1):
        k = kk % n_samples
        if n_samples == N_SAMPLES:
            s, c = _SIN36[k], _COS36[k]
        else:
            d = -math.pi + k * step
            s, c = math.sin(d), math.cos(d)
        v, n1, n2, _ = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, s, c)
        if v < fb:
            sb, cb, fb, n1b, n2b = s, c, v, n1, n2
        elif v != v:
            ok = False
    rounds = FAST_ROUNDS if fast else N_REFINE
    for r in range(rounds):  # offsets −step, −step/2, (0,) +step/2, +step around the best; bracket ÷ 4
        s1, c1, s2, c2 = trig[4 * r], trig[4 * r + 1], trig[4 * r + 2], trig[4 * r + 3]
        s0, c0, f0, m1, m2 = sb, cb, fb, n1b, n2b  # the centre: already evaluated
        for o in range(5):
            if o == 2:
                s, c, v, n1, n2 = s0, c0, f0, m1, m2
            else:
                so, co = (-s1, c1) if o == 0 else ((-s2, c2) if o == 1 else ((s2, c2) if o == 3 else (s1, c1)))
                s, c = s0 * co + c0 * so, c0 * co - s0 * so
                v, n1, n2, _ = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, s, c)
            if o == 0 or v < fb:  # the first candidate starts the round's minimum (as np.argmin)
                sb, cb, fb, n1b, n2b = s, c, v, n1, n2
            if v != v:
                ok = False
    if not fast:  # a parabola through (best − h, best, best + h), kept only where it lowers Δz
        h = 2.0 * step / 4.0 ** N_REFINE
        sh, ch = trig[4 * N_REFINE], trig[4 * N_REFINE + 1]
        fm = fp = 0.0
        s0, c0 = sb, cb
        for e in range(3):
            if e == 0:
                s, c = s0 * ch - c0 * sh, c0 * ch + s0 * sh
            elif e == 1:
                s, c = s0 * ch + c0 * sh, c0 * ch - s0 * sh
            else:
                curv = fm - 2.0 * fb + fp
                shift = min(max(0.5 * h * (fm - fp) / curv, -h), h) if curv > 0.0 else 0.0
                if shift == 0.0:
                    break
                ss, cs = _sin_cos(shift)
                s, c = s0 * cs + c0 * ss, c0 * cs - s0 * ss
            v, _, _, _ = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, s, c)
            if e == 0:
                fm = v
            elif e == 1:
                fp = v
            elif v < fb:
                sb, cb = s, c
        return ok, sb, cb
    # method 1: the minimum lies within ± the last round's half step of the best sample.  Iterate the fixed
    # point (sin δ, cos δ) ∥ (n̂·x̂_w, n̂·ẑ_w) of n̂·dr/dδ = 0, bisecting on the sign of dΔz/dδ ∝ s n̂·ẑ − c n̂·x̂
    # whenever it leaves the bracket (a minimum on a convex cell edge is a kink it cannot reach).
    hs, hc = trig[4 * FAST_ROUNDS - 2], trig[4 * FAST_ROUNDS - 1]
    s, c, n1, n2 = sb, cb, n1b, n2b
    if s * n2 - c * n1 < 0.0:  # Δz decreases with δ: the minimum is above
        slo, clo, shi, chi = s, c, s * hc + c * hs, c * hc - s * hs
    else:
        slo, clo, shi, chi = s * hc - c * hs, c * hc + s * hs, s, c
    for _ in range(FAST_ITERATIONS):
        sn, cn = _unit(n1, n2)
        if not (sn * clo - cn * slo > 0.0 and shi * cn - chi * sn > 0.0):  # outside (lo, hi): bisect
            sn, cn = _unit(slo + shi, clo + chi)
        if abs(sn * c - cn * s) < FAST_TOLERANCE:
            break
        s, c = sn, cn
        v, n1, n2, _ = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, s, c)
        if v < fb:
            sb, cb, fb = s, c, v
        elif v != v:
            ok = False
        if s * n2 - c * n1 < 0.0:
            slo, clo = s, c
        else:
            shi, chi = s, c
    return ok, sb, cb


# ---- warm start: the search started at the previous step's contact angle (issue 14 item 1) ----------------
# The contact angle moves little between steps.  The warm start finds the minimum of Δz(δ) next to the previous
# angle by a few safeguarded root-finding steps on the stationarity condition (:func:`_polish`), then checks that
# no coarse sample of the full search out to ±90° lies lower (:func:`_no_lower_sample`: no second, lower minimum
# — an edge or a step within the rim's reach); on grids the samples that their cell's highest node proves to
# lie above the terrain are not queried.  The full search ends with the same polish, so the two agree to its
# tolerance where they find the same minimum.  Any sign of a jump sends the wheel to the full search
# (:func:`_search`): see :func:`_warm_search`.
WARM_DZ_MAX = 0.25  # × the centre-line radius: a wheel higher above the ground than this gets the full search
POLISH_ITERATIONS = 10  # queries of the polish before it gives up (the caller then keeps its own result)
POLISH_TOLERANCE = 1e-9  # rad: the polish stops when its next step is smaller (a root of g)
CROSSING_OFFSET = 1e-9  # rad: the polish queries a grid line's crossing this far before and after it
NO_LOWER_MARGIN = 1e-12  # m: a coarse sample this little below the polished minimum is not a second minimum
POLISH_SLACK = 1e-6  # m: a polish may end this much above its start (at a kink, its lower side within 1e-9 rad)


@njit(inline="always")
def _warm_terrain(kind: int) -> bool:
    """Terrains whose height is continuous (plane, bilinear and bicubic grids): there a contact moves
    continuously, or a second minimum appears that the jump check sees.  Steps, ramps, boxes and composites
    have edges where the contact jumps between two steps: they always get the full search."""
    return kind == TERRAIN_GRID or kind == TERRAIN_PLANE or kind == TERRAIN_BICUBIC


@njit(inline="always")
def _coarse(k: int, n_samples: int) -> tuple:
    """(sin δ, cos δ) of the full search's coarse sample k (δ = −π + k · 2π / n), the very same floats."""
    k = k % n_samples
    if n_samples == N_SAMPLES:
        return _SIN36[k], _COS36[k]
    d = -math.pi + k * (2.0 * math.pi / n_samples)
    return math.sin(d), math.cos(d)


@njit(inline="always")
def _cell(td: TerrainData, x: float) -> int:
    """The index along x of the grid cell that ``_query`` interpolates at x (clamped to the grid)."""
    return min(int(min(max((x - td.params[0]) * td.params[4], 0.0), td.grid.shape[1] - 1.0)), td.grid.shape[1] - 2)


@njit(inline="always")
def _cell_y(td: TerrainData, y: float) -> int:
    """The index along y of the grid cell that ``_query`` interpolates at y (clamped to the grid)."""
    return min(int(min(max((y - td.params[1]) * td.params[5], 0.0), td.grid.shape[0] - 1.0)), td.grid.shape[0] - 2)


@njit(inline="always")
def _crossing(td: TerrainData, ox: float, oy: float, ax: float, ay: float, bx: float, by: float, s0: float, c0: float,
              lo: float, hi: float) -> float:
    """The rim parameter t in (lo, hi) (δ = δ0 + t, δ0 = (s0, c0)) where the rim point crosses a grid line between
    the cells of its points at lo and hi, by Newton's method on x(t) (or y(t)) = the line (dx/dδ = −c a_x + s b_x
    of eq. 2.9); NaN where the two lie in the same cell."""
    sl, cl = _sin_cos(lo)
    sh, ch = _sin_cos(hi)
    sl, cl, sh, ch = s0 * cl + c0 * sl, c0 * cl - s0 * sl, s0 * ch + c0 * sh, c0 * ch - s0 * sh
    xl, xh = ox - sl * ax - cl * bx, ox - sh * ax - ch * bx
    il, ih = _cell(td, xl), _cell(td, xh)
    if il != ih:  # the grid line next to lo's cell towards hi's
        o, p, q, f_lo, f_hi, line = ox, ax, bx, xl, xh, td.params[0] + (il + (ih > il)) * td.params[2]
    else:
        yl, yh = oy - sl * ay - cl * by, oy - sh * ay - ch * by
        jl, jh = _cell_y(td, yl), _cell_y(td, yh)
        if jl == jh:
            return math.nan
        o, p, q, f_lo, f_hi, line = oy, ay, by, yl, yh, td.params[1] + (jl + (jh > jl)) * td.params[3]
    t = lo + (line - f_lo) * (hi - lo) / (f_hi - f_lo)
    for _ in range(2):  # (the chord's error ~ R w² / 8 for a bracket w: 1e-5 → 1e-10 → 1e-20 m)
        st, ct = _sin_cos(t)
        s, c = s0 * ct + c0 * st, c0 * ct - s0 * st
        t -= (o - s * p - c * q - line) / (s * q - c * p)
    return t


@njit(inline="always")
def _polish(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float, by: float,
            bz: float, s0: float, c0: float, v0: float, n1: float, n2: float, dn0: float, width: float) -> tuple:
    """(converged, t, sin δ, cos δ, Δz): the minimum of Δz(δ) next to δ0 = (s0, c0) (Δz v0, n̂·a = n1, n̂·b = n2
    and ``_query``'s derivative term dn0 there), δ = δ0 + t, |t| < ``width``.

    It is where Δz's derivative along the rim g(δ) = n̂·dr/dδ + (z − h) dn_z/dδ = s n̂·b − c n̂·a + … (m/rad;
    eq. 2.9's dr/dδ; see ``_query``) changes sign, in a bracket [g < 0, g > 0] found by

    - a first step to where the rim's radius is parallel to n̂, (sin δ, cos δ) ∥ (n̂·a, n̂·b) — on a plane the
      minimum itself (method 1's fixed point);
    - on a grid, where the bracket's ends lie in different cells, the rim's crossing of a grid line between
      them (:func:`_crossing`), queried just before and after it: g jumps there (the cells' slopes differ), and
      where it jumps from < 0 to > 0 the minimum is the crossing — the lower of the two sides is returned;
    - otherwise the secant of g between the last two points, or bisection where that leaves the bracket;
    - a step past the window's edge on a side where g has not changed sign yet (a kink's far slope can send the
      first step there) probes just inside the edge, once.

    It stops at the crossing, or when the next step is shorter than ``POLISH_TOLERANCE``.  Not converged: g
    keeps its sign up to the window's edge (the contact moved further: the caller keeps its own result or runs
    the full search), a value not finite, or ``POLISH_ITERATIONS`` queries."""
    grid = td.kind == TERRAIN_GRID
    g = s0 * n2 - c0 * n1 + dn0
    lo, hi, lo_known, hi_known = -width, width, False, False
    if g < 0.0:
        lo, lo_known = 0.0, True
    else:
        hi, hi_known = 0.0, True
    t, gt, s, c, v = 0.0, g, s0, c0, v0
    tn = math.atan2(-g, s0 * n1 + c0 * n2)  # n̂·(o − r) > 0 there: the rim point lies below the centre along n̂
    side, t_side, s_side, c_side, v_side, g_side, probed = 0, 0.0, 0.0, 0.0, 0.0, 0.0, False
    for _ in range(POLISH_ITERATIONS):
        if side == 0:
            if abs(tn - t) < POLISH_TOLERANCE:  # (before the bracket test: g = 0 at δ0 puts δ0 at its end)
                return True, t, s, c, v
            if not (lo < tn < hi):
                if lo_known and hi_known:
                    tn = 0.5 * (lo + hi)
                elif probed or (tn >= hi) == hi_known:
                    return False, t, s, c, v
                else:  # past the window's edge on a side with no bracket yet (a kink): probe just inside the edge
                    tn, probed = 0.999 * (hi if tn >= hi else lo), True
        st, ct = _sin_cos(tn)
        sn, cn = s0 * ct + c0 * st, c0 * ct - s0 * st
        vn, m1, m2, dn = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, sn, cn)
        if vn != vn:
            return False, t, s, c, v
        gn = sn * m2 - cn * m1 + dn
        if side == 1:  # the crossing's far side: a jump of g from < 0 to > 0 is the minimum
            if g_side < 0.0 < gn:
                return (True, t_side, s_side, c_side, v_side) if v_side <= vn else (True, tn, sn, cn, vn)
            side = 0
        tp, gp = t, gt
        t, gt, s, c, v = tn, gn, sn, cn, vn
        if gn < 0.0:
            lo, lo_known = t, True
        elif gn > 0.0:
            hi, hi_known = t, True
        else:
            return True, t, s, c, v
        if side == -1:  # the crossing's near side queried: now its far side
            side, t_side, s_side, c_side, v_side, g_side = 1, t, s, c, v, gt
            tn = t + 2.0 * CROSSING_OFFSET
            continue
        tc = _crossing(td, ox, oy, ax, ay, bx, by, s0, c0, lo, hi) if grid and lo_known and hi_known else math.nan
        if lo + CROSSING_OFFSET < tc < hi - CROSSING_OFFSET:
            side, tn = -1, tc - CROSSING_OFFSET
        else:
            tn = t - gt * (t - tp) / (gt - gp) if gt != gp else 0.5 * (lo + hi)
    return False, t, s, c, v


@njit(inline="always")
def _search_polish(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float,
                   by: float, bz: float, sb: float, cb: float, n_samples: int) -> tuple:
    """The full search's minimum (sb, cb) polished as the warm start's (:func:`_polish`): within the last refinement
    round's offset (4× its final spacing; where the sampled minimum lies next to a kink, a wider window may
    probe past it), else within one coarse spacing as the warm start; (sb, cb) as they were where neither
    converges to a point no higher than them (by ``POLISH_SLACK``)."""
    v, n1, n2, dn = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb)
    width = 2.0 * math.pi / n_samples
    for r in range(2):
        ok, _, s, c, vp = _polish(td, ox, oy, oz, ax, ay, az, bx, by, bz, sb, cb, v, n1, n2, dn,
                                  width / 4.0 ** (N_REFINE - 1) if r == 0 else width)
        if ok and vp <= v + POLISH_SLACK:
            return s, c
    return sb, cb


@njit(inline="always")
def _grid_top(td: TerrainData, x: float, y: float) -> float:
    """An upper bound of a grid's bilinear height at (x, y): the highest node of the cell that ``_query``
    interpolates there (``grid_bounds``, params[7:]) — one load."""
    return td.params[7 + _cell_y(td, y) * (td.grid.shape[1] - 1) + _cell(td, x)]


@njit(inline="always")
def _no_lower_sample(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float,
                     by: float, bz: float, sm: float, cm: float, delta: float, v: float, n_samples: int,
                     trig: tuple) -> bool:
    """The jump check: no coarse sample of the full search within ±90° of δ (hub frame), nor the rim points ½ and
    ⅛ of a spacing on both sides of the polished minimum (sm, cm) = (sin δ, cos δ), lies lower than its Δz ``v``
    (less ``NO_LOWER_MARGIN``), and none is not finite.  A second, lower minimum —
    an edge or a step coming within the rim's reach, a ridge under a wheel above the ground — fails it, and the
    wheel gets the full search.  On a plane Δz(δ) has one minimum: nothing to check.  On a bilinear grid a
    sample whose rim point lies above the highest node of its cell (``_grid_top``) by more than v / n_z min has
    Δz > v and is not queried.  (The half of the rim beyond ±90° is not sampled: terrain
    there, above the axle, would reach the samples at ±90° first.)"""
    if td.kind == TERRAIN_PLANE:
        return True
    level = v - NO_LOWER_MARGIN
    for side in range(4):  # ½ and ⅛ of a spacing on both sides of the minimum (sm, cm): a deeper one next to it
        sr = trig[2] if side == 0 else (-trig[2] if side == 1 else (trig[6] if side == 2 else -trig[6]))
        cr = trig[3] if side < 2 else trig[7]  # (trig: the refinement rounds' offsets, _trig_table)
        vk, _, _, _ = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, sm * cr + cm * sr, cm * cr - sm * sr)
        if not (vk >= level):
            return False
    grid = td.kind == TERRAIN_GRID
    margin = max(v, 0.0) / td.params[6] if grid else 0.0
    s1, c1 = trig[0], trig[1]  # one coarse spacing: the samples by angle addition from sample k0 (no table lookup)
    s0, c0 = _coarse(int(round((delta + math.pi) * n_samples / (2.0 * math.pi))), n_samples)
    for side in range(2):
        s, c = s0, c0
        sr = s1 if side == 0 else -s1
        for j in range(side, n_samples // 4 + 1):  # (sample k0 once)
            if j > 0:
                s, c = s * c1 + c * sr, c * c1 - s * sr
            if grid:
                x, y, z = ox - s * ax - c * bx, oy - s * ay - c * by, oz - s * az - c * bz
                if z - margin > _grid_top(td, x, y):  # (NaN bounds: queried)
                    continue
            vk, _, _, _ = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, s, c)
            if not (vk >= level):
                return False
    return True


@njit(inline="always")
def _warm_search(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float,
                 by: float, bz: float, delta: float, n_samples: int, trig: tuple, dz_max: float) -> tuple:
    """(taken, sin δ, cos δ): the minimum of Δz(δ) found from the previous contact angle ``delta`` (hub frame) —
    :func:`_polish` within one coarse sample spacing of it, then the jump check (:func:`_no_lower_sample`).
    ``taken`` False (the caller then runs the full search): the polish left that window, did not converge or
    ended higher than it started (past a ridge of Δz(δ) into a shallower minimum), a value not finite, the
    wheel more than ``dz_max`` above the ground (there Δz(δ) has several shallow minima and the lowest may
    move far), or a failed jump check."""
    s0, c0 = _sin_cos(delta)  # (hub frame: δ near 0, the series)
    v0, n1, n2, dn = _query(td, ox, oy, oz, ax, ay, az, bx, by, bz, s0, c0)
    if not (v0 <= dz_max):  # (NaN: the full search reports it)
        return False, 0.0, 1.0
    ok, t, s, c, v = _polish(td, ox, oy, oz, ax, ay, az, bx, by, bz, s0, c0, v0, n1, n2, dn,
                             2.0 * math.pi / n_samples)
    if not (ok and v <= min(dz_max, v0 + POLISH_SLACK)
            and _no_lower_sample(td, ox, oy, oz, ax, ay, az, bx, by, bz, s, c, delta + t, v, n_samples, trig)):
        return False, 0.0, 1.0
    return True, s, c


@njit(inline="always")
def _rim_exact(td: TerrainData, ox: float, oy: float, oz: float, ax: float, ay: float, az: float, bx: float,
               by: float, bz: float, tube: float, s: float, c: float) -> tuple:
    """Δz (eq. 2.8, minus the tube radius ρ) of the rim point at (sin δ, cos δ) = (s, c) with the terrain's exact
    query: (dz, c_x, c_y, c_z, n_x, n_y, n_z), c the centre-line point."""
    cx, cy, cz = ox - s * ax - c * bx, oy - s * ay - c * by, oz - s * az - c * bz
    h, nx, ny, nz = height_normal(td.kind, td.params, td.grid, cx, cy)
    return (cz - h) * nz - tube, cx, cy, cz, nx, ny, nz


@njit(inline="always")
def _frame(md: ModelData, T_world: NDArray, w: int, f: int, T: NDArray, tube: float, v: float, cx: float, cy: float,
           cz: float, nx: float, ny: float, nz: float, ox: float, oy: float, oz: float, points: NDArray,
           frames: NDArray, dz: NDArray, angle: NDArray, lateral: NDArray, known: float) -> None:
    """Contact point (torus: moved by the tube radius against n̂), contact frame x̂_c = ŷ_w × n̂, ŷ_c = n̂ × x̂_c,
    lateral offset, and δ in the hub frame about the circle's centre o (a wheel's hub) — ``known`` where the caller
    knows it (a run's fixed point; NaN: from the contact point, an arctangent)."""
    dz[w] = v
    px, py, pz = cx - tube * nx, cy - tube * ny, cz - tube * nz
    points[w, 0], points[w, 1], points[w, 2] = px, py, pz
    yx, yy, yz = T[0, 1], T[1, 1], T[2, 1]
    ax, ay, az = yy * nz - yz * ny, yz * nx - yx * nz, yx * ny - yy * nx
    norm = math.sqrt(ax * ax + ay * ay + az * az)
    if norm < 1e-9:  # a wheel lying flat: the wheel's x axis projected on the ground plane
        d = T[0, 0] * nx + T[1, 0] * ny + T[2, 0] * nz
        ax, ay, az = T[0, 0] - d * nx, T[1, 0] - d * ny, T[2, 0] - d * nz
        norm = math.sqrt(ax * ax + ay * ay + az * az)
    ax, ay, az = ax / norm, ay / norm, az / norm
    frames[w, 0, 0], frames[w, 1, 0], frames[w, 2, 0] = ax, ay, az
    frames[w, 0, 1], frames[w, 1, 1], frames[w, 2, 1] = ny * az - nz * ay, nz * ax - nx * az, nx * ay - ny * ax
    frames[w, 0, 2], frames[w, 1, 2], frames[w, 2, 2] = nx, ny, nz
    lateral[w] = (px - T[0, 3]) * yx + (py - T[1, 3]) * yy + (pz - T[2, 3]) * yz
    if known == known:
        angle[w] = known
        return
    p = md.parent[f]
    vx, vy, vz = cx - ox, cy - oy, cz - oz
    h0 = 0.0  # hub axes x and z: columns of R_parent · R0
    h2 = 0.0
    for r in range(3):
        hx = T_world[p, r, 0] * md.T0[f, 0, 0] + T_world[p, r, 1] * md.T0[f, 1, 0] + T_world[p, r, 2] * md.T0[f, 2, 0]
        hz = T_world[p, r, 0] * md.T0[f, 0, 2] + T_world[p, r, 1] * md.T0[f, 1, 2] + T_world[p, r, 2] * md.T0[f, 2, 2]
        c = vx if r == 0 else (vy if r == 1 else vz)
        h0 += c * hx
        h2 += c * hz
    angle[w] = math.atan2(-h0, -h2)


def compiled_wheel_contacts(model: WmrModel, T_world: NDArray, terrain_data: TerrainData,
                            n_samples: int = N_SAMPLES, method: int = METHOD_SAMPLED) -> Contacts:
    """:func:`wheel_contacts_kernel` for one state, into a new :class:`Contacts`.

    Args:
        model: the WMR model.  T_world: (num_frames, 4, 4) world transforms (forward kinematics).
        terrain_data: from :func:`wmr_dynamics.compiled.terrain.compile_terrain` or ``query_terrain_data``.
        n_samples: coarse samples of δ on the full circle (≥ 8).
        method: ``METHOD_SAMPLED`` (0, the sampled search) or ``METHOD_FAST`` (1); see
            :func:`wheel_contacts_kernel`.
    Raises:
        TerrainError: the terrain query under a wheel was not finite (NaN state or terrain data).
    """
    if n_samples < 8:
        raise ModelError(f"n_samples: need at least 8 samples of the wheel circle, got {n_samples}")
    if method not in (METHOD_SAMPLED, METHOD_FAST, METHOD_EDGES):
        raise ModelError(f"method: {METHOD_SAMPLED} (sampled), {METHOD_FAST} (fast) or {METHOD_EDGES} (sampled, and "
                         f"tracks' edge contacts), got {method!r}")
    nw = model.num_wheels
    points, frames = np.empty((nw, 3)), np.empty((nw, 3, 3))
    dz, angle, lateral = np.empty(nw), np.full(nw, np.nan), np.empty(nw)  # no previous angle: the full search
    args = (_model_data(model), terrain_data, np.ascontiguousarray(T_world, dtype=float), int(n_samples), points,
            frames, dz, angle, lateral)
    if n_samples == N_SAMPLES and method == METHOD_SAMPLED:  # the kinematic step's specialization
        bad = _wheel_contacts_default(*args[:3], *args[4:])
    else:
        bad = wheel_contacts_kernel(*args) if method == METHOD_SAMPLED else wheel_contacts_kernel(*args, int(method))
    if bad:
        raise TerrainError(f"terrain returned a non-finite height or normal under wheel {model.wheel_names[bad - 1]}")
    return Contacts(points=points, frames=frames, dz=dz, angle=angle, lateral=lateral)


@njit(_nrt=False)
def _wheel_contacts_default(md: ModelData, td: TerrainData, T_world: NDArray, points: NDArray, frames: NDArray,
                            dz: NDArray, angle: NDArray, lateral: NDArray) -> int:
    """:func:`wheel_contacts_kernel` with the default search (``N_SAMPLES``, ``METHOD_SAMPLED``) as constants: the
    Python contact query (``wheel_contacts``, the start-up's drop onto the terrain).  (The kinematic step inlines
    the kernel instead: ``compiled.kinematics._wheel_contacts``.)"""
    return wheel_contacts_kernel(md, td, T_world, N_SAMPLES, points, frames, dz, angle, lateral, METHOD_SAMPLED)


_MODEL_DATA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _model_data(model: WmrModel) -> ModelData:
    """model_data(model), made once per model (models are immutable)."""
    md = _MODEL_DATA.get(model)
    if md is None:
        md = _MODEL_DATA[model] = model_data(model)
    return md
