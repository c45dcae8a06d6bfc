"""Integrated Prediction Error Minimization (IPEM, thesis Ch. 3): systematic and stochastic calibration of a
motion model from interval residuals, online (identification EKF) and offline (batch optimization).

Systematic (§3.2.1): measurement z_μ = r(t) (eq. 3.7), prediction h_μ = 0 (3.8), covariance
R_μ = Σ_meas(t) + P(t) (3.21) with P propagated along the prediction (3.22–3.24), Jacobian H_μ by forward
differences of the prediction (3.27).

Stochastic (§3.2.2): z_σ = vec(r rᵀ) (3.28–3.30), h_σ = vec(R_μ) (3.31), R_σ by Bohrnstedt–Goldberger
(3.35–3.38), s = vec(U) with Q′ = UᵀU (3.40–3.41).  Q′ is the spectral density of white noise on the body's
forward, lateral and yaw velocity (v_x, v_y, ω_z); U is diagonal (the thesis's "parsimonious
parametrization", §3.4.1), so Q′ = diag(s²).  P is linear in Q′, so H_σ (3.42) is exact:
∂P/∂s_i = 2 s_i M_i, M_i the propagated response to a unit density on input i.

Online (§3.2.4): the identification EKF over ξ = [p; s] (3.48–3.54), outliers gated by the Mahalanobis
distance of the innovation (3.68).  Offline: p* = argmin Σ rᵀ R_μ⁻¹ r (3.44) by least squares, then s* by
maximum likelihood of the residuals (3.46–3.47).

The state error is δx = (x, y, ψ) of the body in the world; the dead reckoning of
:func:`wmr_dynamics.odometry.dead_reckon` is ṗ = R(φ, θ, ψ) v_b, ψ̇ = (ω_y sin φ + ω_z cos φ)/cos θ, so
F = ∂f/∂x has the one column ∂ṗ/∂ψ = (−ṗ_y, ṗ_x, 0) (the planar form of eq. 3.62) and G = ∂f/∂u maps
(v_x, v_y, ω_z) through R and cos φ / cos θ (eq. 3.63).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from wmr_dynamics.calibration.log import CalibrationError
from wmr_dynamics.calibration.predict import Interval, Predictor, Trace, pose_difference
from wmr_dynamics.errors import WmrError
from wmr_dynamics.odometry import rotation_zyx

#: default Mahalanobis gate of eq. 3.68 (the thesis used 90 for Crusher, §3.4.1)
DEFAULT_GATE = 90.0
#: default initial standard deviations of the stochastic parameters s (√(m²/s), √(m²/s), √(rad²/s))
DEFAULT_S0 = (0.05, 0.05, 0.02)
#: finite-difference step of eq. 3.27 for each kind of parameter
FD_STEP = {"radius_scale": 1e-4, "alpha": 1e-4, "sensor_x": 1e-4, "sensor_y": 1e-4}
FD_STEP_SLIP = 1e-4
#: halvings of an online update that makes its own interval's prediction worse (then no update)
STEP_HALVINGS = 4


# ---- covariance propagation --------------------------------------------------------------------------------
def propagate(tr: Trace, P0: NDArray, s: NDArray) -> tuple[NDArray, NDArray]:
    """P(t) by eqs. 3.22–3.24 along a prediction trace, from P(t0) = ``P0`` with Q′ = diag(s²); and
    M (3, 3, 3): M[i] the part of P due to a unit spectral density on input i (P = P0-term + Σ s_i² M[i]).

    Each Φ_k = I + F_k Δt_k (eq. 3.23) is a shear (x, y += a_k ψ, b_k ψ), so a product of them is the shear
    of the summed (a, b): the recursion P_k = Φ_{k−1} P_{k−1} Φ_{k−1}ᵀ + Q_{k−1} (3.22) unrolls to
    P(t) = Φ_{0:n} P0 Φ_{0:n}ᵀ + Σ_k Φ_{k+1:n} Q_k Φ_{k+1:n}ᵀ, evaluated at once."""
    dt, phi, theta = tr.dt, tr.roll, tr.pitch
    R = _rotation_rows(phi, theta, tr.yaw)  # (n, 2, 3): the first two rows of R(φ, θ, ψ)
    pdot = np.einsum("nij,nj->ni", R, tr.twist[:, 3:6])
    a, b = -pdot[:, 1] * dt, pdot[:, 0] * dt  # Φ_k = I + F_k Δt_k, F's one column ∂ṗ/∂ψ = (−ṗ_y, ṗ_x, 0)
    A, B = np.cumsum(a[::-1])[::-1], np.cumsum(b[::-1])[::-1]  # suffix sums: Φ_{k:n}
    A_after, B_after = np.r_[A[1:], 0.0], np.r_[B[1:], 0.0]  # Φ_{k+1:n}, which carries Q_k to t
    G = np.zeros((len(dt), 3, 3))  # eq. 3.63: inputs (v_x, v_y, ω_z)
    G[:, :2, :2] = R[:, :, :2]
    G[:, 2, 2] = np.cos(phi) / np.maximum(np.cos(theta), 1e-3)
    PG = G.copy()  # Φ_{k+1:n} G_k
    PG[:, 0, :] += A_after[:, None] * G[:, 2, :]
    PG[:, 1, :] += B_after[:, None] * G[:, 2, :]
    M = np.einsum("nai,nbi,n->iab", PG, PG, dt)  # eq. 3.24 per unit density, summed
    Phi = np.eye(3)
    if len(dt):
        Phi[0, 2], Phi[1, 2] = A[0], B[0]
    P = Phi @ np.asarray(P0, dtype=float) @ Phi.T + np.einsum("i,iab->ab", np.asarray(s, dtype=float) ** 2, M)
    return P, M


def _rotation_rows(phi: NDArray, theta: NDArray, psi: NDArray) -> NDArray:
    return rotation_zyx(phi, theta, psi)[:, :2, :]


# ---- stochastic measurement (eqs. 3.28–3.38) -------------------------------------------------------------
_I, _J = np.triu_indices(3)  # eqs. 3.37–3.38: row and column of each vec() element (row-major upper triangle)


def vec(A: NDArray) -> NDArray:
    """The upper triangle of a symmetric 3 × 3 matrix, row-major (eqs. 3.29–3.30)."""
    return np.asarray(A)[_I, _J]


def stochastic_covariance(R_mu: NDArray) -> NDArray:
    """R_σ = Cov[vec(r rᵀ)] for r ~ N(0, R_μ) (eqs. 3.34–3.36, Bohrnstedt–Goldberger 3.35)."""
    return R_mu[np.ix_(_I, _I)] * R_mu[np.ix_(_J, _J)] + R_mu[np.ix_(_I, _J)] * R_mu[np.ix_(_J, _I)]


# ---- one interval ---------------------------------------------------------------------------------------------
@dataclass
class IntervalFit:
    """The quantities of one interval at parameters (p, s): residual r (x, y m, ψ rad; eq. 3.56), its
    covariance R_μ (3.21), the response matrices M of :func:`propagate`, and, when asked, H_μ (3 × n_p)."""

    interval: Interval
    r: NDArray
    R_mu: NDArray
    M: NDArray
    H: NDArray | None = None

    @property
    def nees(self) -> float:
        """rᵀ R_μ⁻¹ r: the normalized estimation error squared (3 degrees of freedom when R_μ is right)."""
        return float(self.r @ np.linalg.solve(self.R_mu, self.r))


def fit_interval(pred: Predictor, iv: Interval, p: NDArray, s: NDArray, jacobian: bool = False) -> IntervalFit:
    """Predict ``iv`` with parameters ``p``, its residual and covariance with stochastic parameters ``s``, and,
    with ``jacobian``, H_μ by forward differences (eq. 3.27)."""
    x_pred, tr = pred.predict(iv, p, trace=True)
    log = pred.log
    P, M = propagate(tr, log.pose_cov[iv.i0], s)
    R_mu = log.pose_cov[iv.i1] + P  # eq. 3.21
    H = None
    if jacobian:
        H = np.empty((3, len(p)))
        for i, name in enumerate(pred.names):
            eps = FD_STEP.get(name, FD_STEP_SLIP)
            pi = np.array(p, dtype=float)
            pi[i] += eps
            # the measurement responds to δp as r(p̂) ≈ (∂g/∂p)(p − p̂): the innovation's H is +∂g/∂p
            # (eq. 3.27 writes it for z = r with h ≡ 0, as −∂g/∂p)
            H[:, i] = pose_difference(pred.predict(iv, pi)[0], x_pred) / eps
    return IntervalFit(iv, pred.residual(iv, x_pred), R_mu, M, H)


# ---- online: the identification EKF (eqs. 3.48–3.54) ------------------------------------------------------
@dataclass
class OnlineSettings:
    """Settings of :class:`OnlineIpem`.

    Attributes:
        p_std: initial standard deviation of every systematic parameter, or None (default): each parameter's
            own (:attr:`Predictor.prior_std`, e.g. 0.5 for slip, 0.1 for a radius scale; c_rr's from the log).
        s0: initial stochastic parameters (√ of the spectral densities of v_x, v_y (m²/s) and ω_z (rad²/s)).
        s_std: their initial standard deviation.
        process_noise: standard deviation added per interval to each parameter (Q of eq. 3.49, as a fraction
            of its initial standard deviation): 0 for a fixed vehicle, more to follow changing conditions.
        gate: Mahalanobis distance above which an interval is an outlier (eq. 3.68).
        stochastic: calibrate s as well.  stochastic_after: accepted intervals before s is updated (large
            early residuals would overestimate Q′, §3.2.4).  s_max: bounds on s (the thesis bounds Q′ for
            the same reason, §3.2.4; a transient the model cannot follow must not swamp the systematic part).
    """

    p_std: float | None = None
    s0: tuple[float, float, float] = DEFAULT_S0
    s_std: float = 0.05
    process_noise: float = 0.0
    gate: float = DEFAULT_GATE
    stochastic: bool = True
    stochastic_after: int = 5
    s_max: tuple[float, float, float] = (0.5, 0.5, 0.2)


@dataclass
class Step:
    """The record of one interval of online calibration."""

    interval: Interval
    r: NDArray  # residual with the parameters before the update
    R_mu: NDArray
    mahalanobis: float
    accepted: bool
    p: NDArray  # parameters after the update
    s: NDArray
    failed: str = ""  # why the prediction failed (the interval was skipped)


@dataclass
class OnlineIpem:
    """Online IPEM (thesis §3.2.4): feed intervals in time order with :meth:`update`.

    The state ξ = [p; s] and its covariance 𝒫 are :attr:`p`, :attr:`s` and :attr:`cov`.
    """

    predictor: Predictor
    p: NDArray
    settings: OnlineSettings = field(default_factory=OnlineSettings)
    s: NDArray = field(default=None)  # type: ignore[assignment]
    cov: NDArray = field(default=None)  # type: ignore[assignment]
    history: list[Step] = field(default_factory=list)

    def __post_init__(self) -> None:
        st = self.settings
        self.p = np.array(self.p, dtype=float)
        self.s = np.array(st.s0 if self.s is None else self.s, dtype=float)
        n = len(self.p)
        if self.cov is None:
            self.cov = np.diag(np.r_[prior_std(self.predictor, st.p_std, n) ** 2, [st.s_std ** 2] * 3])
        self._Q = np.diag(np.diag(self.cov)) * st.process_noise ** 2
        self.accepted = 0

    def update(self, iv: Interval) -> Step:
        """One interval: process update (3.48–3.49), gate (3.68), measurement update (3.50–3.54)."""
        st, n = self.settings, len(self.p)
        try:
            fit = fit_interval(self.predictor, iv, self.p, self.s, jacobian=True)
        except WmrError as e:  # the model failed on this interval (e.g. a dynamic prediction diverged): skip it
            step = Step(iv, np.full(3, np.nan), np.full((3, 3), np.nan), math.inf, False, self.p.copy(),
                        self.s.copy(), str(e))
            self.history.append(step)
            return step
        self.cov = self.cov + self._Q  # eq. 3.49
        H_mu = fit.H
        S_mu = H_mu @ self.cov[:n, :n] @ H_mu.T + fit.R_mu
        d_m = float(fit.r @ np.linalg.solve(S_mu, fit.r))  # eq. 3.68
        ok = d_m <= st.gate and np.all(np.isfinite(fit.r))
        if ok:
            use_s = st.stochastic and self.accepted >= st.stochastic_after
            if use_s:
                H = np.zeros((9, n + 3))
                H[:3, :n] = H_mu
                for i in range(3):
                    H[3:, n + i] = vec(2.0 * self.s[i] * fit.M[i])  # eq. 3.42, exact (P linear in Q′)
                y = np.r_[fit.r, vec(np.outer(fit.r, fit.r)) - vec(fit.R_mu)]  # eqs. 3.50, 3.28, 3.31
                R = np.zeros((9, 9))
                R[:3, :3], R[3:, 3:] = fit.R_mu, stochastic_covariance(fit.R_mu)
            else:
                H = np.zeros((3, n + 3))
                H[:, :n] = H_mu
                y, R = fit.r, fit.R_mu
            S = H @ self.cov @ H.T + R  # eq. 3.51
            K = np.linalg.solve(S, H @ self.cov).T  # eq. 3.52 (S symmetric)
            K = K * self._step_scale(iv, fit, (K @ y)[:n])
            xi = np.r_[self.p, self.s] + K @ y  # eq. 3.53
            I_KH = np.eye(n + 3) - K @ H
            self.cov = I_KH @ self.cov @ I_KH.T + K @ R @ K.T  # eq. 3.54 in Joseph form (any gain: stays PSD)
            self.p = self.predictor.clip(xi[:n])
            self.s = np.minimum(np.abs(xi[n:]), st.s_max)  # Q′ = UᵀU: s's sign is immaterial
            self.accepted += 1
        step = Step(iv, fit.r, fit.R_mu, d_m, bool(ok), self.p.copy(), self.s.copy())
        self.history.append(step)
        return step

    def _step_scale(self, iv: Interval, fit: IntervalFit, dp: NDArray) -> float:
        """Step control of the measurement update: the fraction (1, ½, ¼, …, 0) of the update ``dp`` after which
        this interval's prediction is no worse than before it.  A linear model always passes at 1 (the
        update shrinks the residual); a nonlinear one far from its estimate (the dynamic model's contact
        constants) can be linearized badly, and a full step would throw the filter to where its predictions
        make no sense.  Scaling the gain keeps eq. 3.54 (Joseph form) exact for the step taken."""
        before = fit.nees
        scale = 1.0
        for _ in range(STEP_HALVINGS):
            trial = self.predictor.clip(self.p + scale * dp)
            try:
                r = self.predictor.residual(iv, self.predictor.predict(iv, trial)[0])
                if float(r @ np.linalg.solve(fit.R_mu, r)) <= before * (1.0 + 1e-9) + 1e-12:
                    return scale
            except WmrError:
                pass  # the trial diverged: a smaller step
            scale *= 0.5
        return 0.0


def prior_std(pred: Predictor, p_std: float | None, n: int) -> NDArray:
    """The parameters' prior standard deviations: ``p_std`` for each, or the predictor's own."""
    return np.full(n, float(p_std)) if p_std is not None else pred.prior_std


# ---- offline (eqs. 3.44–3.47) ------------------------------------------------------------------------------
def calibrate_offline(pred: Predictor, ivs: list[Interval], p0: NDArray, s0: NDArray, gate: float = DEFAULT_GATE,
                      iterations: int = 4, p_std: float | None = None,
                      progress: Callable[[str], None] | None = None) -> tuple[NDArray, NDArray, NDArray]:
    """Batch IPEM over all intervals at once.

    p* = argmin Σ r_kᵀ R_μ,k⁻¹ r_k (eq. 3.44) by Gauss–Newton with the H_μ of eq. 3.27 (each step halved
    until the objective falls), with a weak prior N(p0, p_std²) (default: each parameter's own,
    :attr:`Predictor.prior_std`; estimates stay inside :attr:`Predictor.bounds`) so parameters the log cannot
    observe (e.g. p1 without slopes or accelerations) stay where they started; then
    s* = argmax Σ log N(r_k; 0, R_μ,k(s))
    (eqs. 3.46–3.47).  Intervals beyond the Mahalanobis ``gate`` at the current estimate are left out.
    Returns (p*, s*, the covariance of p* (inverse of the Gauss–Newton normal matrix)).
    """
    from scipy.optimize import minimize

    p, s = np.array(p0, dtype=float), np.array(s0, dtype=float)
    prior = np.diag(1.0 / prior_std(pred, p_std, len(p)) ** 2)
    A = prior
    for it in range(iterations):
        fits = _fits(pred, ivs, p, s, jacobian=True)
        inl = [f for f in fits if f.nees <= gate] or fits
        A = prior + sum(f.H.T @ np.linalg.solve(f.R_mu, f.H) for f in inl)
        b = sum(f.H.T @ np.linalg.solve(f.R_mu, f.r) for f in inl) - prior @ (p - p0)
        step = pred.clip(p + np.linalg.solve(A, b)) - p  # kept inside the parameters' plausible ranges
        cost = _cost(inl, p, p0, prior)
        for _ in range(6):  # backtracking: accept the first step that lowers eq. 3.44's objective
            trial = _fits(pred, [f.interval for f in inl], p + step, s)
            if len(trial) == len(inl) and _cost(trial, p + step, p0, prior) < cost:
                break
            step = step * 0.5
        else:
            step, trial = np.zeros_like(p), inl
        p = p + step
        s = _max_likelihood_s(trial, s, minimize)  # the fits at the new p (r and M do not depend on s)
        if progress:
            progress(f"offline iteration {it + 1}/{iterations}: {len(fits) - len(inl)} of {len(fits)} intervals "
                     f"beyond the gate; p = {np.round(p, 4).tolist()}, s = {np.round(s, 4).tolist()}")
        if np.all(np.abs(step) < 1e-5):
            break
    return p, s, np.linalg.inv(A)


def _fits(pred: Predictor, ivs: list[Interval], p: NDArray, s: NDArray, jacobian: bool = False) -> list[IntervalFit]:
    """fit_interval over ``ivs``, leaving out the intervals whose prediction fails (a WmrError)."""
    out = []
    for iv in ivs:
        try:
            out.append(fit_interval(pred, iv, p, s, jacobian))
        except WmrError:
            continue
    return out


def _cost(fits: list[IntervalFit], p: NDArray, p0: NDArray, prior: NDArray) -> float:
    """Σ rᵀ R_μ⁻¹ r (eq. 3.44) plus the prior's term."""
    return sum(f.nees for f in fits) + float((p - p0) @ prior @ (p - p0))


def _max_likelihood_s(fits: list[IntervalFit], s0: NDArray, minimize: Callable) -> NDArray:
    """s maximizing Σ log N(r_k; 0, R_μ,k(s)) (eqs. 3.46–3.47); R_μ,k(s) = R_μ,k(s0) + Σ_i (s_i² − s0_i²) M_k,i."""
    M = np.array([f.M for f in fits])  # (n, 3, 3, 3)
    base = np.array([f.R_mu for f in fits]) - np.einsum("i,nijk->njk", s0 ** 2, M)
    r = np.array([f.r for f in fits])

    def nll(x: NDArray) -> float:
        R = base + np.einsum("i,nijk->njk", np.exp(2.0 * x), M)  # s = exp(x): positive densities s²
        sign, logdet = np.linalg.slogdet(R)
        if np.any(sign <= 0):
            return 1e30
        return 0.5 * float(np.sum(logdet) + np.einsum("ni,ni->", r, np.linalg.solve(R, r[..., None])[..., 0]))

    res = minimize(nll, np.log(np.maximum(np.abs(s0), 1e-6)), method="Nelder-Mead",
                   options={"xatol": 1e-3, "fatol": 1e-6, "maxiter": 600})
    return np.exp(res.x)


# ---- evaluation -------------------------------------------------------------------------------------------------
@dataclass
class Evaluation:
    """Prediction errors of a model over intervals: per interval position error ‖r_xy‖ (m), |yaw error| (rad),
    NEES (rᵀ R_μ⁻¹ r), and the residuals in the initial body frame (for scatter plots, Fig. 3.6)."""

    position_error: NDArray
    yaw_error: NDArray
    nees: NDArray
    residual_body: NDArray  # (n, 3): along-track, cross-track (m), yaw (rad)
    cov_body: NDArray  # (n, 3, 3) R_μ in the same frame

    @property
    def summary(self) -> dict:
        return {"intervals": int(len(self.position_error)),
                "mean_position_error_m": float(np.mean(self.position_error)) if len(self.position_error) else None,
                "mean_yaw_error_rad": float(np.mean(self.yaw_error)) if len(self.yaw_error) else None,
                "mean_nees": float(np.mean(self.nees)) if len(self.nees) else None}


def evaluate(pred: Predictor, ivs: list[Interval], p: NDArray, s: NDArray) -> Evaluation:
    """Errors of predictions with (p, s) over ``ivs`` (no calibration)."""
    if not ivs:
        raise CalibrationError(f"{pred.log.source}: no usable intervals to evaluate")
    fits = _fits(pred, ivs, p, s)  # an interval whose prediction fails is left out (and not counted)
    if not fits:
        raise CalibrationError(f"{pred.log.source}: the model's prediction failed on every interval")
    rb, cb = [], []
    for f in fits:
        yaw0 = pred.log.pose[f.interval.i0, 2]
        c, sn = math.cos(yaw0), math.sin(yaw0)
        T = np.array([[c, sn, 0.0], [-sn, c, 0.0], [0.0, 0.0, 1.0]])  # world → initial body axes
        rb.append(T @ f.r)
        cb.append(T @ f.R_mu @ T.T)
    r = np.array([f.r for f in fits])
    return Evaluation(np.linalg.norm(r[:, :2], axis=1), np.abs(r[:, 2]), np.array([f.nees for f in fits]),
                      np.array(rb), np.array(cb))
