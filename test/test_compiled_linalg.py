"""Hand-written small linear algebra of the compiled path against numpy/scipy (independent oracles)."""

import numpy as np
import pytest
import scipy.linalg as sla

from wmr_dynamics.compiled import linalg as L


@pytest.mark.parametrize("n", [1, 3, 13])
def test_cholesky_and_solves_match_numpy(n):
    rng = np.random.default_rng(n)
    B = rng.normal(size=(n, n))
    A = B @ B.T + n * np.eye(n)
    big = np.zeros((20, 20))
    big[:n, :n] = A  # works on the leading block of a larger workspace
    Lf = np.zeros((20, 20))
    assert L.cholesky(big, n, Lf)
    np.testing.assert_allclose(np.tril(Lf[:n, :n]), np.linalg.cholesky(A), rtol=1e-12, atol=1e-12)
    b = rng.normal(size=n)
    x = np.r_[b, np.zeros(3)]
    L.cho_solve(Lf, n, x)
    np.testing.assert_allclose(x[:n], np.linalg.solve(A, b), rtol=1e-10)
    Bm = np.zeros((20, 5))
    Bm[:n, :4] = rng.normal(size=(n, 4))
    ref = np.linalg.solve(A, Bm[:n, :4])
    L.cho_solve_columns(Lf, n, Bm, 4)
    np.testing.assert_allclose(Bm[:n, :4], ref, rtol=1e-10)
    assert np.all(Bm[:, 4] == 0.0)  # columns beyond ncols untouched


def test_cholesky_rejects_indefinite():
    A = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert not L.cholesky(A, 2, np.zeros((2, 2)))


def _python_selection(A, rigid, tol):
    """Eqs. 2.66–2.68 with SciPy (an independent oracle): null space of the rigid rows, then pivoted QR."""
    rows = np.flatnonzero(~rigid)
    if rigid.any():
        Ared = A[rows] @ sla.null_space(A[rigid])
    else:
        Ared = A[rows]
    _, R, piv = sla.qr(Ared.T, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    keep = d > tol * d.max()
    return np.sort(np.r_[np.flatnonzero(rigid), rows[piv[: len(d)][keep]]])


@pytest.mark.parametrize("seed", range(6))
def test_independent_rows_match_pivoted_qr(seed):
    rng = np.random.default_rng(seed)
    n = 13
    base = rng.normal(size=(9, n))
    # 12 candidate rows of rank 9 (three are combinations of others), plus 3 rigid unit rows
    mix = rng.normal(size=(3, 9))
    A = np.vstack([base, mix @ base, np.eye(n)[[6, 8, 11]]])
    rigid = np.zeros(len(A), dtype=bool)
    rigid[-3:] = seed % 2 == 0
    nA = len(A)
    basis, resid, norms = np.zeros((n, n)), np.zeros((nA, n)), np.zeros(nA)
    keep = np.zeros(nA, dtype=np.bool_)
    nb = L.orthonormal_rows(A, nA, n, rigid, basis)
    assert nb == rigid.sum()
    count = L.independent_rows(A, nA, n, rigid, 1e-9, basis, nb, resid, norms, keep)
    ours = np.flatnonzero(keep)
    assert count == len(ours) == np.linalg.matrix_rank(A)
    assert np.all(keep[rigid])
    # the same rank and row space as the Python rule (row choice among equals may differ by rounding)
    ref = _python_selection(A, rigid, 1e-9)
    assert len(ref) == len(ours)
    assert np.linalg.matrix_rank(np.vstack([A[ours], A[ref]])) == len(ours)
    # the basis is orthonormal and spans the kept rows
    Bk = basis[:count]
    np.testing.assert_allclose(Bk @ Bk.T, np.eye(count), atol=1e-10)
    np.testing.assert_allclose(A[ours] @ Bk.T @ Bk, A[ours], atol=1e-9)


def test_projector_from_rigid_basis_equals_python_projector():
    rng = np.random.default_rng(3)
    A_R = rng.normal(size=(4, 13))
    basis = np.zeros((13, 13))
    nb = L.orthonormal_rows(A_R, 4, 13, np.ones(4, dtype=np.bool_), basis)
    P_ours = np.eye(13) - basis[:nb].T @ basis[:nb]
    P_ref = np.eye(13) - A_R.T @ np.linalg.solve(A_R @ A_R.T, A_R)  # P = I − A_Rᵀ(A_R A_Rᵀ)⁻¹A_R
    np.testing.assert_allclose(P_ours, P_ref, atol=1e-12)
