"""Small dense linear algebra for the compiled kernels, written out as loops (DESIGN.md, "Speed").

Calling LAPACK from numba costs microseconds of dispatch and allocation per call; the systems of one time
step are at most a few dozen rows, so plain loops over preallocated arrays are faster.  Every function
works on the leading block of its arguments (``n`` rows/columns), so one workspace sized for the largest
problem serves every step.  Nothing here allocates.
"""

from __future__ import annotations

import math

from numpy.typing import NDArray

from wmr_dynamics._jit import njit


@njit(_nrt=False)
def cholesky(A: NDArray, n: int, L: NDArray) -> bool:
    """Cholesky factor A = L Lᵀ of the leading n × n block of symmetric A into the lower triangle of L.

    Reads only A's lower triangle; ``L`` may be ``A`` itself.  Returns False (and leaves L partial) if a pivot
    is not positive, i.e. A is not numerically positive definite.
    """
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / d
    return True


@njit(_nrt=False)
def cho_solve(L: NDArray, n: int, b: NDArray) -> None:
    """Solve (L Lᵀ) x = b in place (b: length ≥ n) with L from :func:`cholesky`."""
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):  # Lᵀ x = y
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]


@njit(_nrt=False)
def lu_factor(A: NDArray, n: int, LU: NDArray, piv: NDArray, rel_tol: float) -> bool:
    """LU factorization with partial pivoting, P A = L U, of the leading n × n block of A into LU (L unit lower
    triangular below the diagonal, U above it and the reciprocals 1/U_kk on it; ``LU`` may be ``A``); row k was
    swapped with row piv[k] (whole rows, in the order k = 0, 1, …: :func:`lu_solve` applies them so).  Returns
    False (LU partial) where a pivot is at most ``rel_tol`` × the largest |entry| of A: A is numerically
    singular."""
    amax = 0.0
    for i in range(n):
        for j in range(n):
            t = A[i, j]
            LU[i, j] = t
            amax = max(amax, abs(t))
    tol = rel_tol * amax
    for k in range(n):
        p, big = k, abs(LU[k, k])
        for i in range(k + 1, n):
            t = abs(LU[i, k])
            if t > big:
                p, big = i, t
        if not big > tol:
            return False
        piv[k] = p
        if p != k:
            for j in range(n):
                LU[k, j], LU[p, j] = LU[p, j], LU[k, j]
        d = 1.0 / LU[k, k]
        LU[k, k] = d  # U's diagonal kept as reciprocals: lu_solve multiplies (a division's latency, 9× per solve)
        for i in range(k + 1, n):
            m = LU[i, k] * d
            LU[i, k] = m
            if m != 0.0:
                for j in range(k + 1, n):
                    LU[i, j] -= m * LU[k, j]
    return True


@njit(_nrt=False)
def lu_solve(LU: NDArray, piv: NDArray, n: int, b: NDArray) -> None:
    """Solve A x = b in place (b: length ≥ n) with P A = L U from :func:`lu_factor`.

    Both substitutions by columns: once x_k is known, every later row's update by it is independent of the
    others, so the dependency chain is n updates long, not n²/2 as in the row-by-row dot products (each
    x_i still sums its terms in the order of k: L y = P b as row by row, to the bit), and U x = y multiplies by
    the reciprocals 1/U_kk that :func:`lu_factor` keeps on the diagonal instead of dividing (n divisions were on
    the chain): the 9 × 9 solve of Zoë's force balance 0.106 → 0.077 µs (2026-11-29)."""
    for k in range(n):  # P b
        p = piv[k]
        if p != k:
            b[k], b[p] = b[p], b[k]
    for k in range(n):  # L y = P b
        t = b[k]
        if t != 0.0:
            for i in range(k + 1, n):
                b[i] -= LU[i, k] * t
    for k in range(n - 1, -1, -1):  # U x = y (LU's diagonal: 1/U_kk)
        t = b[k] * LU[k, k]
        b[k] = t
        if t != 0.0:
            for i in range(k):
                b[i] -= LU[i, k] * t


@njit(_nrt=False)  # allocation-free: no reference counting of its arrays per call
def least_squares(A: NDArray, nrows: int, cols: NDArray, ncols: int, b: NDArray, N: NDArray, x: NDArray,
                  row: NDArray) -> bool:
    """x[:ncols] = argmin ‖A[:nrows, cols[:ncols]] x − b[:nrows]‖ (the pseudoinverse solution of thesis eq. 2.38).

    Normal equations (AᵀA + εI) x = Aᵀb by :func:`cholesky`, with ε = 1e-13 · mean(diag AᵀA): where the columns
    have full rank this is ``np.linalg.lstsq``'s solution to ~κ(A)² · 1e-16 relative (κ ≤ ~1e3 for a vehicle
    with three wheels on the ground: ≤ 1e-10).  Where they do not, a column no row sees (a free joint) gets
    exactly 0, as in ``lstsq``'s minimum-norm solution; dependent columns get the same fit A x but their
    split is fixed only to ~1e-16/1e-13 relative (``lstsq`` splits them evenly) — a QR with column pivoting
    would be needed for that.  Work: ``N`` (≥ ncols × ncols), overwritten by the factor; ``row`` (≥ ncols).
    Returns False if the factorization failed (all-zero or non-finite A).
    """
    for a in range(ncols):  # Aᵀb and the lower triangle of AᵀA, accumulated row by row (A is row-major)
        x[a] = 0.0
        for c in range(a + 1):
            N[a, c] = 0.0
    for r in range(nrows):
        for a in range(ncols):  # the row's chosen columns gathered once, so the inner loop runs on contiguous data
            row[a] = A[r, cols[a]]
        for a in range(ncols):
            ra = row[a]
            if ra == 0.0:
                continue
            x[a] += ra * b[r]
            for c in range(a + 1):
                N[a, c] += ra * row[c]
    tr = 0.0
    for a in range(ncols):
        tr += N[a, a]
    eps = 1e-13 * tr / max(ncols, 1)
    for a in range(ncols):
        N[a, a] += eps
    if not cholesky(N, ncols, N):
        return False
    cho_solve(N, ncols, x)
    return True


@njit(_nrt=False)
def orthonormalize_last(basis: NDArray, target: NDArray, nb: int, ncols: int, rel_tol: float) -> bool:
    """Orthonormalize the candidate row ``basis[nb]`` against the orthonormal rows ``basis[:nb]`` (Gram–Schmidt,
    twice for accuracy), carrying its target value along: if ``basis[k] · v = target[k]`` holds for every row
    k ≤ nb before, it holds after (the rigid rows' velocity targets, so that Σ target[k] basis[k] is a velocity
    meeting all of them).  Returns False (candidate dependent on the rows before it: its component off them is
    at most ``rel_tol`` times its norm) or True (``basis[nb]`` is then a unit row)."""
    s0 = 0.0
    for c in range(ncols):
        s0 += basis[nb, c] * basis[nb, c]
    for _ in range(2):
        for b in range(nb):
            d = 0.0
            for c in range(ncols):
                d += basis[nb, c] * basis[b, c]
            if d == 0.0:
                continue
            for c in range(ncols):
                basis[nb, c] -= d * basis[b, c]
            target[nb] -= d * target[b]
    s = 0.0
    for c in range(ncols):
        s += basis[nb, c] * basis[nb, c]
    if not (s > rel_tol * rel_tol * s0 and s > 1e-300):
        return False
    s = math.sqrt(s)
    for c in range(ncols):
        basis[nb, c] /= s
    target[nb] /= s
    return True


@njit(inline="always")
def _remove_unit_components(V: NDArray, m: int, B: NDArray, nb: int, col: int, ncols: int) -> bool:
    """V[m] −= Σ_b B[b, col] B[b] (V[m]'s components along the orthonormal rows B[:nb] when V[m] is the unit vector
    e_col); returns whether any was non-zero."""
    any_ = False
    for b in range(nb):
        d = B[b, col]
        if d != 0.0:
            any_ = True
            for c in range(ncols):
                V[m, c] -= d * B[b, c]
    return any_


@njit(inline="always")
def _remove_components(V: NDArray, m: int, B: NDArray, nb: int, ncols: int) -> None:
    """V[m] ← V[m] − Σ_b (V[m] · B[b]) B[b] (modified Gram–Schmidt against the orthonormal rows B[:nb])."""
    for b in range(nb):
        d = 0.0
        for c in range(ncols):
            d += V[m, c] * B[b, c]
        for c in range(ncols):
            V[m, c] -= d * B[b, c]


@njit(_nrt=False)
def null_space_rows(basis: NDArray, nb: int, ncols: int, N: NDArray, work: NDArray) -> int:
    """Orthonormal rows ``N[:ncols − nb]`` spanning the orthogonal complement of the orthonormal rows
    ``basis[:nb]``: Gram–Schmidt of the unit vectors, pivoted (next is the unit vector with the largest
    component off the rows so far; ``work`` (≥ ncols) holds those components squared).  Where the basis rows
    are unit rows (ideal actuators, locked joints) the complement is the other unit rows, found with no
    arithmetic beyond skipped zeros.  Returns the number of rows."""
    for j in range(ncols):
        s = 1.0
        for b in range(nb):
            s -= basis[b, j] * basis[b, j]
        work[j] = s
    nz = 0
    while nz + nb < ncols:
        best, best_w = -1, 0.0
        for j in range(ncols):
            if work[j] > best_w:
                best, best_w = j, work[j]
        if best < 0 or best_w <= 1e-12:
            break
        for c in range(ncols):
            N[nz, c] = 0.0
        N[nz, best] = 1.0
        # e_best's components along the rows so far are their entries in column best; none: it is a row of the
        # complement as is
        exact = not _remove_unit_components(N, nz, basis, nb, best, ncols)
        exact = not _remove_unit_components(N, nz, N, nz, best, ncols) and exact
        if not exact:  # a second pass, for accuracy, then unit length
            _remove_components(N, nz, basis, nb, ncols)
            _remove_components(N, nz, N, nz, ncols)
            s = 0.0
            for c in range(ncols):
                s += N[nz, c] * N[nz, c]
            s = math.sqrt(s)
            for c in range(ncols):
                N[nz, c] /= s
        for c in range(ncols):
            work[c] -= N[nz, c] * N[nz, c]
        work[best] = -1.0
        nz += 1
    return nz
