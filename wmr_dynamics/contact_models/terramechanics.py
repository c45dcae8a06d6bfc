"""Terramechanics contact models for rigid wheels in loose soil: Ishigami (thesis C.19–C.36) and Ding et al.

Common conventions (see :mod:`wmr_dynamics.contact_models._terra` for the kernels):

* sinkage ``h = −Δz`` (m); no force for ``Δz >= 0``.  Above ``max_sinkage`` (default half the radius) the
  stress model is evaluated at ``max_sinkage`` and a penalty spring of the tangent normal stiffness there
  (``kwall``, N/m) continues the normal force, so a deeply sunk wheel is still supported.
* a wheel driving forwards (``Rω >= 0``) is computed directly; ``Rω < 0`` is its mirror image
  (``v_x → −v_x``, ``Rω → −Rω``, ``f_x → −f_x``), so forces flip with the driving direction.
  The slip ratio is discontinuous at ``Rω = 0`` with ``v_x ≠ 0`` — the thesis's "singular when the wheel
  is stationary" (C.19); ``|Rω|`` and ``|V_x|`` are regularized by ``sqrt(x² + v_eps²)``.
* slip ratio clipped to ``slip_limits``; beyond, the forces do not change with slip (zero derivative).
* ``β = atan(v_y/|V_x|)`` (C.20), so the lateral force opposes ``v_y`` whatever the sign of ``V_x``; the
  bulldozing term's ``sgn(β)`` (the discontinuity of Fig. C.5) is smoothed to ``β/sqrt(β² + beta_eps²)``.
* an optional normal damping ``f_z −= kd·v_z`` (the thesis author's code adds one), then ``f_z >= 0``.
* f_x, f_z come from the stresses (drawbar pull and normal load); the resistance moment about the axle that
  the stresses also produce has no place in the force-only interface (2.71) and is not returned.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wmr_dynamics.contact_models import _terra as T
from wmr_dynamics.contact_models._base import (
    CompiledContactModel,
    nonnegative,
    per_wheel,
    positive,
    stack_rows,
    unbox,
)
from wmr_dynamics.errors import ModelError

G = 9.81
PHI_TABLE_C2, XC_TABLE_C2 = math.radians(37.2), math.radians(26.4)  # Table C.2 angles, rad
PHI_TOYOURA = math.radians(35.75)  # Ding et al. Sec. V.B, rad
# the lookup table's β nodes: tan β = c u/(1 − |u|), u uniform in [−1, 1] (T.lut_kernel); c = 0.345 puts as many
# nodes near β = 0 as the asinh(β/0.1) axis it replaced, and fits the integrals better (0.12 % vs 0.26 % of
# the largest normal force in test_ishigami_lookup_table_agrees_with_integration's sample)
LUT_WARP = 0.345


class _TerraContact(CompiledContactModel):
    """Shared construction: parameter rows, quadrature nodes, penalty stiffness, lookup tables."""

    kernel = staticmethod(T.terra_kernel)
    _model_id = T.ISHIGAMI
    smooth_force = True

    def _slip_limits(self, slip_limits) -> tuple[float, float]:
        try:
            lo, hi = (float(x) for x in slip_limits)
        except (TypeError, ValueError):
            raise ModelError(f"{self.name} contact model: parameter 'slip_limits' must be a pair (lo, hi), got "
                             f"{slip_limits!r}") from None
        if not (-1.0 <= lo < hi <= 1.0):
            raise ModelError(f"{self.name} contact model: parameter 'slip_limits' must satisfy -1 <= lo < hi <= 1, "
                             f"got {slip_limits!r}")
        return lo, hi

    def _build(self, model_cols: list[tuple[str, NDArray]], *, radius: NDArray, kd, v_eps, beta_eps, slip_limits,
               max_sinkage, n_quad, rho: NDArray, lookup_table: bool, lut_shape,
               h_off: NDArray | None = None) -> None:
        m = self.name
        lo, hi = self._slip_limits(slip_limits)
        if not isinstance(n_quad, (int, np.integer)) or not 2 <= n_quad <= 64:
            raise ModelError(f"{m} contact model: parameter 'n_quad' must be an integer in 2..64, got {n_quad!r}")
        hmax = per_wheel(m, "max_sinkage", 0.5 * radius if max_sinkage is None else max_sinkage, positive, "> 0 (m)")
        header = [("model", np.array([self._model_id])), ("n_quad", np.array([float(n_quad)])),
                  ("kd", per_wheel(m, "kd", kd, nonnegative, ">= 0 (N·s/m)")),
                  ("v_eps", per_wheel(m, "v_eps", v_eps, positive, "> 0 (m/s)")),
                  ("beta_eps", per_wheel(m, "beta_eps", beta_eps, positive, "> 0 (rad)")),
                  ("s_lo", np.array([lo])), ("s_hi", np.array([hi])), ("max_sinkage", hmax),
                  ("kwall", np.zeros(1)), ("rho", rho), ("lut_off", np.array([-1.0])),
                  ("ns", np.zeros(1)), ("nb", np.zeros(1)), ("nh", np.zeros(1)), ("lut_warp", np.array([LUT_WARP])),
                  ("h_off", np.zeros(1) if h_off is None else h_off)]
        P = stack_rows(m, header + model_cols)
        if np.any(P[:, T.HMAX] > stack_rows(m, [("radius", radius), ("max_sinkage", hmax)])[:, 0]):
            raise ModelError(f"{m} contact model: parameter 'max_sinkage' must be <= the wheel radius, got "
                             f"{max_sinkage!r}")
        x, wts = np.polynomial.legendre.leggauss(n_quad)
        self._xg, self._wg = 0.5 * (x + 1.0), 0.5 * wts
        # penalty stiffness beyond max_sinkage: tangent dF_z/dh at (s = 0, β = 0, h = max_sinkage)
        for q in P:
            out = T.slip_function(q[T.MODEL], 0j, 0j, complex(q[T.HMAX], T.CSTEP), q, self._xg, self._wg, q[T.BEPS])
            q[T.KWALL] = max(out[2].imag / T.CSTEP, out[2].real / q[T.HMAX], 0.0)
        aux = [self._xg, self._wg]
        self.lookup_table = bool(lookup_table)
        if self.lookup_table:
            try:
                ns, nb, nh = (int(n) for n in lut_shape)
            except (TypeError, ValueError):
                raise ModelError(f"{m} contact model: parameter 'lut_shape' must be three integers, got "
                                 f"{lut_shape!r}") from None
            if min(ns, nb, nh) < 2 or ns * nb * nh > 5_000_000:
                raise ModelError(f"{m} contact model: parameter 'lut_shape' needs 2..(5e6 cells) points per axis, "
                                 f"got {lut_shape!r}")
            offset, built = 2 * n_quad, {}
            for q in P:
                key = q.tobytes()
                if key not in built:  # one table per distinct parameter row
                    tab = np.empty(4 * ns * nb * nh)
                    u = np.linspace(-1.0, 1.0, nb)
                    b_grid = np.arctan2(LUT_WARP * u, 1.0 - np.abs(u))
                    T.build_lut(q, self._xg, self._wg, np.linspace(lo, hi, ns), b_grid, np.linspace(0.0, q[T.HMAX], nh),
                                tab)
                    built[key] = offset
                    aux.append(tab)
                    offset += tab.size
                q[T.LUT_OFF], q[T.LUT_NS], q[T.LUT_NB], q[T.LUT_NH] = built[key], ns, nb, nh
            self.kernel = T.lut_kernel
            self.lut_shape = (ns, nb, nh)
        self._P = np.ascontiguousarray(P)
        self._aux = np.concatenate(aux)

    def slip_forces(self, s: ArrayLike, beta: ArrayLike, sinkage: ArrayLike, wheel: int = 0,
                    mean_wheel_load: float | None = None) -> dict[str, NDArray]:
        """The model's forces as functions of slip ratio, slip angle (rad) and sinkage (m), wheel driving forwards.

        ``sinkage`` is −Δz, the sinkage of the wheel's rim (Ding: of the rim radius r; the lugs reach deeper).
        Evaluates the stress integrals directly (never the lookup table), without damping, clipping or
        penalty.  Returns ``f_x`` (drawbar pull), ``f_y`` (side force incl. bulldozing), ``f_z`` (normal
        load) in N and ``M_R`` (resistance moment, N·m; Ding only, 0 for Ishigami), broadcast together.
        ``mean_wheel_load`` (N, Ding): W̄ for this evaluation; by default the model's — with ``"actual"``,
        a single wheel's own F_N (it carries the mean load: no compensation).
        """
        q = self._P[0 if self._P.shape[0] == 1 else wheel].copy()
        if mean_wheel_load is not None:
            if self._model_id != T.DING:
                raise ModelError(f"{self.name} contact model: slip_forces takes mean_wheel_load for the ding model "
                                 "only")
            q[T.HDR + 15] = per_wheel(self.name, "mean_wheel_load", mean_wheel_load, positive, "> 0 (N)")[0]
        s, beta, h = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (s, beta, sinkage)))
        res = {k: np.zeros(s.shape) for k in ("f_x", "f_y", "f_z", "M_R")}
        out = np.empty(5, np.complex128)
        for idx in np.ndindex(s.shape):
            hj = h[idx] + q[T.HOFF]
            if hj <= T.H_MIN:
                continue
            out = T.slip_function(q[T.MODEL], complex(s[idx]), complex(beta[idx]), complex(hj), q, self._xg,
                                  self._wg, q[T.BEPS])
            b = beta[idx]
            sgb = b / math.sqrt(b * b + q[T.BEPS] ** 2)
            res["f_x"][idx] = out[0].real
            res["f_y"][idx] = out[1].real - sgb * out[3].real
            res["f_z"][idx] = out[2].real
            res["M_R"][idx] = out[4].real
        return res


class IshigamiContact(_TerraContact):
    """Ishigami et al. terramechanics model (thesis eqs. C.19–C.36, Table C.2 soil), by stress integration.

    Slip (C.19–C.20): ``s = −v_x/(Rω)`` (positive when driving), ``β = atan(v_y/V_x)``.  Contact patch
    (C.21–C.23): ``θ_f = acos(1 − h/r)``, ``θ_r = −acos(1 − λh/r)`` (the exit angle lies behind the bottom
    point, hence the minus sign the thesis omits), ``θ_m = (a0 + a1·s)θ_f``.  Normal stress C.24, shear
    stresses C.25–C.29 (with the odd extension ``sgn(j)(1 − e^{−|j|/k})`` so that shear opposes slip in
    both directions), forces C.30–C.32, bulldozing C.34–C.36 with unit weight ``ρ_d·g``.  The integrals are
    Gauss–Legendre quadratures with ``n_quad`` nodes on each side of θ_m (where σ has its kink).

    ``lookup_table=True`` tabulates ``[f_x, f_y(shear), f_z]`` over (s, β, Δz) — the three dimensions the
    thesis names — on a ``lut_shape`` grid over ``slip_limits`` × [−π/2, π/2] × [0, max_sinkage] (and the
    bulldozing integral over Δz), then interpolates trilinearly; the Jacobian is the interpolant's own
    (exact inside a cell, one-sided on cell faces), not finite differences.

    Args:
        radius, width: wheel radius r and width b, m (numbers or one per wheel).
        c: cohesion, Pa (Table C.2: 0.80 kPa).  phi: internal friction angle, rad (37.2°).
        X_c: soil destructive angle, rad (26.4°).  k_c: N/m^(n+1) (1.37e3).  k_phi: N/m^(n+2) (8.14e5).
        n: sinkage exponent (1).  a0, a1: θ_m coefficients (0.40, 0.15).  rho_d: soil density, kg/m³ (1.6e3).
        lam: wheel sinkage ratio λ of C.22 (Table C.2 gives 0.9–1.1; default 1).
        kx0, kx1, ky0, ky1: shear deformation moduli ``k_x = kx0 + kx1·|β|``, ``k_y = ky0 + ky1·|β|``, m,
            β in rad (Table C.2: 0.036 + 0.043β, 0.013 + 0.020β).
        kd: normal damping, N·s/m (default 0; :func:`contact_model_from_config` gives the "uniform" model's
            ``m·g/(n·0.02)/20``, as the thesis author's code — without damping a vehicle bounces on the soil).
            g: gravity for the soil's unit weight, m/s².
        v_eps, beta_eps: regularizations (m/s, rad).  slip_limits: (lo, hi) within [−1, 1].
        max_sinkage: m, default radius/2.  n_quad: quadrature nodes per region (default 8).
        lookup_table, lut_shape: see above (default 41 × 49 × 41).
    """

    name = "ishigami"
    _model_id = T.ISHIGAMI

    def __init__(self, radius, width, *, c=800.0, phi=PHI_TABLE_C2, X_c=XC_TABLE_C2, k_c=1.37e3,
                 k_phi=8.14e5, n=1.0, a0=0.40, a1=0.15, rho_d=1.6e3, lam=1.0, kx0=0.036, kx1=0.043, ky0=0.013,
                 ky1=0.020, kd=0.0, g=G, v_eps=1e-3, beta_eps=1e-2, slip_limits=(-1.0, 1.0), max_sinkage=None,
                 n_quad=8, lookup_table=False, lut_shape=(41, 49, 41)) -> None:
        m = self.name
        r = per_wheel(m, "radius", radius, positive, "> 0 (m)")
        b = per_wheel(m, "width", width, positive, "> 0 (m)")
        angle = (lambda a: (a > 0) & (a < np.pi / 2), "in (0, pi/2) rad")
        cols = [("radius", r), ("width", b), ("c", per_wheel(m, "c", c, nonnegative, ">= 0 (Pa)")),
                ("phi", per_wheel(m, "phi", phi, *angle)), ("X_c", per_wheel(m, "X_c", X_c, *angle)),
                ("k_c", per_wheel(m, "k_c", k_c, nonnegative, ">= 0")),
                ("k_phi", per_wheel(m, "k_phi", k_phi, nonnegative, ">= 0")),
                ("n", per_wheel(m, "n", n, positive, "> 0")),
                ("a0", per_wheel(m, "a0", a0, nonnegative, ">= 0")),
                ("a1", per_wheel(m, "a1", a1, nonnegative, ">= 0")),
                ("gamma", per_wheel(m, "rho_d", rho_d, nonnegative, ">= 0 (kg/m³)") * float(g)),
                ("lam", per_wheel(m, "lam", lam, lambda a: (a > 0) & (a <= 2), "in (0, 2]")),
                ("kx0", per_wheel(m, "kx0", kx0, positive, "> 0 (m)")),
                ("kx1", per_wheel(m, "kx1", kx1, nonnegative, ">= 0 (m/rad)")),
                ("ky0", per_wheel(m, "ky0", ky0, positive, "> 0 (m)")),
                ("ky1", per_wheel(m, "ky1", ky1, nonnegative, ">= 0 (m/rad)"))]
        lo, hi = self._slip_limits(slip_limits)
        a0v, a1v = cols[8][1], cols[9][1]
        if np.any(a0v + a1v * lo <= 0) or np.any(a0v + a1v * hi >= 1):
            raise ModelError(f"{m} contact model: parameters 'a0', 'a1' must keep θ_m = (a0 + a1 s) θ_f inside the "
                             f"contact patch, 0 < a0 + a1 s < 1 for s in slip_limits {slip_limits!r}")
        if np.any(np.asarray(k_c) / b + np.asarray(k_phi) <= 0):
            raise ModelError(f"{m} contact model: parameters 'k_c', 'k_phi' give no soil stiffness (k_c/b + k_phi = 0)")
        self._build(cols, radius=r, kd=kd, v_eps=v_eps, beta_eps=beta_eps, slip_limits=slip_limits,
                    max_sinkage=max_sinkage, n_quad=n_quad, rho=np.ones(1), lookup_table=lookup_table,
                    lut_shape=lut_shape)
        self._params = {k: unbox(a) for k, a in cols if k != "gamma"}
        self._params.update(rho_d=unbox(per_wheel(m, "rho_d", rho_d)), g=g, kd=kd, v_eps=v_eps, beta_eps=beta_eps,
                            slip_limits=tuple(slip_limits), max_sinkage=unbox(self._P[:, T.HMAX]), n_quad=n_quad,
                            lookup_table=self.lookup_table)


#: Toyoura sand, Ding et al. Sec. V.B: identified on flat terrain and when climbing slopes
DING_TOYOURA = {
    "flat": dict(n0=0.63, n1=0.72, c_p1=-0.276, c_p2=0.633, c_p3=-0.304, c_m=0.354),
    "slope": dict(n0=0.66, n1=0.72, c_p1=-0.379, c_p2=0.616, c_p3=-0.448, c_m=0.214),
}


class DingContact(_TerraContact):
    """Ding et al. lugged-wheel terramechanics: closed-form drawbar pull / normal force (eq. 16), side force (17–19).

    Eq. 16 is the Wong–Reece integral with the normal and shear stresses replaced by triangles peaking at
    ``θ_m = θ_1/2`` (θ_2 = 0), integrated in closed form (Ding et al.'s ref. [15]):

    * ``σ_m = K_s r^N (cos θ_m − cos θ_1)^N``, ``N = n0 + n1·|s|`` (slip-sinkage),
      ``τ_m = (c + σ_m tan φ)·D``, ``D = 1 − exp(−j_m/K)``, ``j_m = r_s[(θ_1 − θ_m) − (1 − s)(sin θ_1 − sin θ_m)]``,
    * ``A = (cos θ_m − cos θ_2)/(θ_m − θ_2) + (cos θ_m − cos θ_1)/(θ_1 − θ_m)``,
      ``B = (sin θ_m − sin θ_2)/(θ_m − θ_2) + (sin θ_m − sin θ_1)/(θ_1 − θ_m)``, ``C = (θ_1 − θ_2)/2``,
    * ``F_N = r b A σ_m + r_s b B τ_m``; ``M_R`` and ``F_DP`` as printed in eq. 16, with the slip factor
      ``(1 + c_P1 + c_P2 |s|)`` and the normal-force compensation ``(W̄ − F_N)/W̄`` (c_P3, c_M), the latter
      limited to [−1, 1] (F_N within [0, 2 W̄]) beyond which the linear fit would change the sign of M_R.

    Ding's fit is for driving (s >= 0); skid (s < 0) uses the same fit in ``|s|`` (rounded as
    ``s·tanh(s/0.01)`` so that it stays smooth at s = 0), and the slip ratio follows Wong's convention,
    ``s = 1 − V_x/(r_s ω)`` driving, ``s = r_s ω/V_x − 1`` skidding, so it stays within [−1, 1] and a
    locked wheel (s = −1) sinks like a spinning one (s = +1) — without this the normal force would jump
    thirty-fold as ω changes sign at standstill.

    (A, B, D and τ_m are not defined in the paper's text; these are the definitions for which eq. 16 is an
    identity when the compensations are off — ``F_DP = r_s b A τ_m − r b B σ_m``, ``M_R = r_s² b C τ_m`` —
    i.e. the integrals of the triangular stresses.)

    Lugs (height ``lug_height``): ``R_j = r + lug_deform_coeff·lug_height`` is the radius at which the soil
    starts to deform, ``r_s = r + lug_shear_coeff·lug_height`` the shearing radius.  The inputs are the rim's,
    as the collision and the dynamics compute them for a wheel of radius r: the rim sinkage ``z = −Δz`` and
    ``Rω = r·ω``.  The soil deforms from ``θ'_1 = acos((r − z)/R_j)`` (Ding et al.), i.e. the R_j circle sinks
    by ``h = z + R_j − r`` — the lugs touch the soil (and carry load) before the rim does, from
    ``Δz < R_j − r`` — and the slip ratio uses the shearing speed ``r_s ω = (r_s/r)·Rω``.  With
    ``lug_height = 0`` everything reduces to a smooth wheel and, driving, ``s = −v_x/(Rω)`` (C.19).

    Side force (eqs. 17–19): ``F_S = r b ∫ τ_y dθ + ∫ R_b (R_j − h(θ) cos θ) dθ`` over [0, θ_1], with the same
    triangular σ, ``τ_y = (c + σ tan φ)(1 − exp(−r(1 − s)(θ_1 − θ) tan β / k_y))`` (the paper prints
    ``c + σ``; we use ``tan φ`` as C.26 does) and ``R_b`` of eq. 19 with ``X_c = π/4 − φ/2``, by
    Gauss–Legendre quadrature.  ``f = (F_DP, −F_S, F_N)``, applied at the rim point below the hub, so the
    overturning moment ``M_O ≈ F_S r`` of eq. 20 is F_S's own moment about the contact frame's x axis.  The
    resistance moment ``M_R`` (eq. 16) is the kernel's axle moment (``mw``, :meth:`axle_moment`): the force
    balance adds r·f_x − M_R about the wheel's axis, so the soil's moment on the wheel is −M_R and a driven wheel
    needs the drive torque M_R (:meth:`slip_forces` gives M_R itself).

    Args:
        radius, width: rim radius r and width b, m.  lug_height: m (default 0).
        lug_deform_coeff, lug_shear_coeff: R_j and r_s coefficients in [0, 1] (default 0.5 each; the paper gives
            no numbers — an assumption).
        preset: ``"flat"`` (default) or ``"slope"``: Toyoura-sand n0, n1, c_P1, c_P2, c_P3, c_M of Sec. V.B.
        K_s: Pa/m^N (1796 kPa/m^N).  c: Pa (24.5).  phi: rad (35.75°).  kx: shear modulus K, m (10.45 mm).
        ky: lateral shear modulus, m (19 mm).  n0, n1, c_p1, c_p2, c_p3, c_m: override the preset.
        mean_wheel_load: W̄ of eq. 16, "the average normal force of the wheels": ``"actual"`` — the mean of
            the eq.-16 normal forces F_N of the wheels evaluated together (all wheels of the vehicle in a
            simulation; 0 for a wheel out of contact), what :func:`contact_model_from_config` uses; a number
            (N) for a fixed W̄; None (default) switches the normal-force compensation off.  With ``"actual"``
            the Jacobian holds each wheel's own share of W̄ (∂W̄/∂x_w = ∂F_N,w/∂x_w / n); the coupling
            between wheels through W̄ is left out (the interface has one 3×3 block per wheel), so Newton's
            method in force balance converges to the same forces, with a slightly inexact Jacobian.
        rho_d: soil density for the bulldozing term, kg/m³ (1.6e3: the paper gives none; Table C.2's value).
        kd, g, v_eps, beta_eps, max_sinkage, n_quad: as for :class:`IshigamiContact`.
        slip_limits: default (−1, 1).
    """

    name = "ding"
    _model_id = T.DING
    has_axle_moment = True

    def __init__(self, radius, width, *, lug_height=0.0, lug_deform_coeff=0.5, lug_shear_coeff=0.5,
                 preset: str = "flat", K_s=1.796e6, c=24.5, phi=PHI_TOYOURA, kx=0.01045, ky=0.019, n0=None,
                 n1=None, c_p1=None, c_p2=None, c_p3=None, c_m=None, mean_wheel_load=None, rho_d=1.6e3, kd=0.0,
                 g=G, v_eps=1e-3, beta_eps=1e-2, slip_limits=(-1.0, 1.0), max_sinkage=None, n_quad=8) -> None:
        m = self.name
        if preset not in DING_TOYOURA:
            raise ModelError(f"{m} contact model: parameter 'preset' must be one of {sorted(DING_TOYOURA)}, "
                             f"got {preset!r}")
        fit = dict(DING_TOYOURA[preset])
        for k, val in dict(n0=n0, n1=n1, c_p1=c_p1, c_p2=c_p2, c_p3=c_p3, c_m=c_m).items():
            if val is not None:
                fit[k] = val
        r = per_wheel(m, "radius", radius, positive, "> 0 (m)")
        b = per_wheel(m, "width", width, positive, "> 0 (m)")
        hl = per_wheel(m, "lug_height", lug_height, nonnegative, ">= 0 (m)")
        unit = (lambda a: (a >= 0) & (a <= 1), "in [0, 1]")
        Rj = r + per_wheel(m, "lug_deform_coeff", lug_deform_coeff, *unit) * hl
        rs = r + per_wheel(m, "lug_shear_coeff", lug_shear_coeff, *unit) * hl
        phi_a = per_wheel(m, "phi", phi, lambda a: (a > 0) & (a < np.pi / 2), "in (0, pi/2) rad")
        if isinstance(mean_wheel_load, str):
            if mean_wheel_load != "actual":
                raise ModelError(f"{m} contact model: parameter 'mean_wheel_load' must be a load > 0 (N), 'actual' "
                                 f"(the wheels' mean normal force) or None (no compensation), got {mean_wheel_load!r}")
            W = np.array([-1.0])
        else:
            W = per_wheel(m, "mean_wheel_load", 0.0 if mean_wheel_load is None else mean_wheel_load,
                          positive if mean_wheel_load is not None else nonnegative,
                          "> 0 (N), 'actual' (the wheels' mean normal force) or None (no compensation)")
        cols = [("radius", r), ("width", b), ("R_j", Rj), ("r_s", rs),
                ("K_s", per_wheel(m, "K_s", K_s, positive, "> 0 (Pa/m^N)")),
                ("c", per_wheel(m, "c", c, nonnegative, ">= 0 (Pa)")), ("phi", phi_a),
                ("kx", per_wheel(m, "kx", kx, positive, "> 0 (m)")),
                ("ky", per_wheel(m, "ky", ky, positive, "> 0 (m)")),
                ("n0", per_wheel(m, "n0", fit["n0"], positive, "> 0")),
                ("n1", per_wheel(m, "n1", fit["n1"], nonnegative, ">= 0")),
                ("c_p1", per_wheel(m, "c_p1", fit["c_p1"])), ("c_p2", per_wheel(m, "c_p2", fit["c_p2"])),
                ("c_p3", per_wheel(m, "c_p3", fit["c_p3"])), ("c_m", per_wheel(m, "c_m", fit["c_m"])),
                ("mean_wheel_load", W), ("X_c", np.pi / 4 - phi_a / 2),
                ("gamma", per_wheel(m, "rho_d", rho_d, nonnegative, ">= 0 (kg/m³)") * float(g))]
        self._build(cols, radius=Rj, kd=kd, v_eps=v_eps, beta_eps=beta_eps, slip_limits=slip_limits,
                    max_sinkage=max_sinkage, n_quad=n_quad, rho=rs / r, lookup_table=False, lut_shape=None,
                    h_off=Rj - r)
        self.preset = preset
        self._params = {k: unbox(a) for k, a in cols if k not in ("gamma", "X_c", "R_j", "r_s", "mean_wheel_load")}
        self._params.update(lug_height=unbox(hl), lug_deform_coeff=lug_deform_coeff, lug_shear_coeff=lug_shear_coeff,
                            preset=preset, mean_wheel_load=mean_wheel_load, rho_d=rho_d, kd=kd, g=g, v_eps=v_eps,
                            beta_eps=beta_eps, slip_limits=tuple(slip_limits), max_sinkage=unbox(self._P[:, T.HMAX]),
                            n_quad=n_quad)

    @property
    def equivalent_radius(self) -> float | NDArray:
        """R_j = r + lug_deform_coeff·lug_height, m: the radius at which the soil starts to deform (the
        collision model keeps the rim radius r; the kernel adds R_j − r to the sinkage)."""
        return unbox(self._P[:, T.HDR + 2])
