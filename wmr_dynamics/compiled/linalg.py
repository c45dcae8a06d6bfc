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
def cho_solve_columns(L: NDArray, n: int, B: NDArray, ncols: int) -> None:
    """Solve (L Lᵀ) X = B in place for the first ``ncols`` columns of B (n × ncols block).

    Row by row with the columns innermost: each element sees the same operations in the same order as a
    column-at-a-time substitution (so the same rounding), but the inner loop runs along a row of B, contiguous
    and free of a dependency chain, so the compiler vectorizes it."""
    for i in range(n):  # L Y = B
        for k in range(i):
            t = L[i, k]
            for c in range(ncols):
                B[i, c] -= t * B[k, c]
        d = L[i, i]
        for c in range(ncols):
            B[i, c] /= d
    for i in range(n - 1, -1, -1):  # Lᵀ X = Y
        for k in range(i + 1, n):
            t = L[k, i]
            for c in range(ncols):
                B[i, c] -= t * B[k, c]
        d = L[i, i]
        for c in range(ncols):
            B[i, c] /= d


@njit(_nrt=False)
def orthonormal_rows(A: NDArray, nrows: int, ncols: int, select: NDArray, basis: NDArray) -> int:
    """Orthonormal basis (rows of ``basis``) of the span of the selected rows of A (``select[r]`` true).

    Gram–Schmidt, twice per row for accuracy; a row already in the span adds nothing.  Returns the number
    of basis rows; ``I − basisᵀ basis`` is then the projector off those rows (the rigid-row projector of
    the force balance).
    """
    nb = 0
    for r in range(nrows):
        if select[r]:
            nb = _add_to_basis(A, r, ncols, basis, nb)
    return nb


@njit(_nrt=False)
def independent_rows(A: NDArray, nrows: int, ncols: int, rigid: NDArray, tol: float, basis: NDArray, nb: int,
                     resid: NDArray, norms: NDArray, keep: NDArray) -> int:
    """Linearly independent rows of A (thesis eqs. 2.66–2.68), with the ``rigid`` rows always kept.

    Pivoted QR of Aᵀ is Gram–Schmidt with column pivoting: repeatedly take the row with the largest
    component orthogonal to the rows taken so far (|R(i, i)| of eq. 2.66) until that component is at most
    ``tol`` times the first one (eq. 2.68).  ``basis[:nb]`` must hold an orthonormal basis of the rigid rows
    (:func:`orthonormal_rows`), so the others are tested with the rigid directions projected out, as the
    Python path does with a null space.  Writes ``keep[r]`` (True = kept: rigid or independent) for
    r < nrows and returns the number of kept rows; ``basis`` is extended by the kept rows' directions.
    Work arrays: ``basis`` (≥ ncols × ncols), ``resid`` (≥ nrows × ncols), ``norms`` (≥ nrows).
    """
    for r in range(nrows):
        keep[r] = rigid[r]
        for c in range(ncols):  # candidates with the rigid directions removed
            resid[r, c] = A[r, c]
        if not rigid[r]:
            _orthogonalize(resid, r, ncols, basis, 0, nb)
    first = -1.0
    while True:
        best, best_norm = -1, -1.0
        for r in range(nrows):
            if keep[r]:
                continue
            s = 0.0
            for c in range(ncols):
                s += resid[r, c] * resid[r, c]
            norms[r] = math.sqrt(s)
            if norms[r] > best_norm:
                best, best_norm = r, norms[r]
        if best < 0:
            break
        if first < 0.0:
            first = max(best_norm, 1e-300)
        if best_norm <= tol * first or nb >= ncols:
            break
        keep[best] = True
        for c in range(ncols):
            basis[nb, c] = resid[best, c] / best_norm
        nb += 1
        for r in range(nrows):  # modified Gram–Schmidt: remove the new direction from the rest
            if not keep[r]:
                _orthogonalize(resid, r, ncols, basis, nb - 1, nb)
    count = 0
    for r in range(nrows):
        if keep[r]:
            count += 1
    return count


@njit(_nrt=False)
def _orthogonalize(V: NDArray, r: int, ncols: int, basis: NDArray, b0: int, b1: int) -> None:
    for b in range(b0, b1):
        d = 0.0
        for c in range(ncols):
            d += V[r, c] * basis[b, c]
        for c in range(ncols):
            V[r, c] -= d * basis[b, c]


@njit(_nrt=False)
def _add_to_basis(A: NDArray, r: int, ncols: int, basis: NDArray, nb: int) -> int:
    """Append row r of A, orthonormalized against basis[:nb] (twice, for accuracy); returns the new count."""
    for c in range(ncols):
        basis[nb, c] = A[r, c]
    _orthogonalize(basis, nb, ncols, basis, 0, nb)
    _orthogonalize(basis, nb, ncols, basis, 0, nb)
    s = 0.0
    for c in range(ncols):
        s += basis[nb, c] * basis[nb, c]
    s = math.sqrt(s)
    if s <= 1e-12:
        return nb  # dependent rigid row: its direction is already in the basis
    for c in range(ncols):
        basis[nb, c] /= s
    return nb + 1


@njit(_nrt=False)  # allocation-free: no reference counting of its arrays per call
def least_squares(A: NDArray, nrows: int, cols: NDArray, ncols: int, b: NDArray, N: NDArray, x: NDArray) -> bool:
    """x[:ncols] = argmin ‖A[:nrows, cols[:ncols]] x − b[:nrows]‖ (the pseudoinverse solution of thesis eq. 2.38).

    Normal equations (AᵀA + εI) x = Aᵀb by :func:`cholesky`, with ε = 1e-13 · mean(diag AᵀA): where the columns
    have full rank this is ``np.linalg.lstsq``'s solution to ~κ(A)² · 1e-16 relative (κ ≤ ~1e3 for a vehicle
    with three wheels on the ground: ≤ 1e-10).  Where they do not, a column no row sees (a free joint) gets
    exactly 0, as in ``lstsq``'s minimum-norm solution; dependent columns get the same fit A x but their
    split is fixed only to ~1e-16/1e-13 relative (``lstsq`` splits them evenly) — a QR with column pivoting
    would be needed for that.  Work: ``N`` (≥ ncols × ncols), overwritten by the factor.  Returns False if
    the factorization failed (all-zero or non-finite A).
    """
    for a in range(ncols):  # Aᵀb and the lower triangle of AᵀA, accumulated row by row (A is row-major)
        x[a] = 0.0
        for c in range(a + 1):
            N[a, c] = 0.0
    for r in range(nrows):
        for a in range(ncols):
            ra = A[r, cols[a]]
            if ra == 0.0:
                continue
            x[a] += ra * b[r]
            for c in range(a + 1):
                N[a, c] += ra * A[r, cols[c]]
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
