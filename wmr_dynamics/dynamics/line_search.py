"""Line search satisfying the strong Wolfe conditions (thesis App. D; Nocedal & Wright Alg. 3.2 and 3.3).

Used by the force-balance Newton iteration (eq. 2.84).  The step is searched in (0, 1]: the full Newton
step is tried first; if it fails, and an acceptable step must exist in (0, 1), the "zoom" bisects to it.
"""

from __future__ import annotations

from collections.abc import Callable

C1 = 1e-4  # sufficient decrease (eq. D.2)
C2 = 0.9  # curvature (eq. D.4)


def strong_wolfe(phi: Callable[[float], tuple[float, float]], phi0: float, dphi0: float, c1: float = C1,
                 c2: float = C2, max_iter: int = 30) -> tuple[float, float]:
    """Step α ∈ (0, 1] for φ(α) = f(x + α p), given φ(0) and φ'(0) < 0; returns (α, φ(α)).

    ``phi(α)`` must return (φ(α), φ'(α)).  If no step satisfies the conditions within ``max_iter``
    evaluations, the best sufficient-decrease step found is returned (or the smallest tried).
    """
    phi1, dphi1 = phi(1.0)
    if _wolfe(phi1, dphi1, 1.0, phi0, dphi0, c1, c2):
        return 1.0, phi1
    if phi1 > phi0 + c1 * dphi0 or dphi1 >= 0.0:
        # Alg. 3.2: an acceptable step lies in (0, 1): zoom (Alg. 3.3) with bisection
        return _zoom(phi, 0.0, phi0, 1.0, phi0, dphi0, c1, c2, max_iter)
    return 1.0, phi1  # still descending steeply at the full step: take it (steps are capped at 1)


def _wolfe(phi_a: float, dphi_a: float, a: float, phi0: float, dphi0: float, c1: float, c2: float) -> bool:
    return phi_a <= phi0 + c1 * a * dphi0 and abs(dphi_a) <= -c2 * dphi0  # eqs. D.2, D.4


def _zoom(phi: Callable[[float], tuple[float, float]], lo: float, phi_lo: float, hi: float, phi0: float,
          dphi0: float, c1: float, c2: float, max_iter: int) -> tuple[float, float]:
    """Nocedal & Wright Alg. 3.3 with bisection as the interpolation; lo always satisfies sufficient decrease."""
    best_a, best_phi = (lo, phi_lo) if lo > 0 else (None, None)
    for _ in range(max_iter):
        a = 0.5 * (lo + hi)
        phi_a, dphi_a = phi(a)
        if phi_a > phi0 + c1 * a * dphi0 or phi_a >= phi_lo:
            hi = a
        else:
            if abs(dphi_a) <= -c2 * dphi0:
                return a, phi_a
            if dphi_a * (hi - lo) >= 0.0:
                hi = lo
            lo, phi_lo = a, phi_a
            best_a, best_phi = lo, phi_lo
    if best_a is not None:
        return best_a, best_phi
    return a, phi_a
