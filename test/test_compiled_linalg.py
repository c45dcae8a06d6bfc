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


def test_cholesky_rejects_indefinite():
    A = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert not L.cholesky(A, 2, np.zeros((2, 2)))


@pytest.mark.parametrize("n", [1, 4, 9, 13])
def test_lu_factor_and_solve_match_scipy(n):
    """P A = L U with partial pivoting (scipy.linalg.lu_factor's convention: row k swapped with piv[k], in order;
    U's diagonal stored as its reciprocals) and the solve, on the leading block of a larger workspace; a matrix
    with a zero leading entry needs a swap."""
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n))
    A[0, 0] = 0.0 if n > 1 else 1.0
    big = np.zeros((20, 20))
    big[:n, :n] = A
    LU, piv = np.zeros((20, 20)), np.zeros(20, dtype=np.int64)
    assert L.lu_factor(big, n, LU, piv, 1e-10)
    lu_ref, piv_ref = sla.lu_factor(A)
    np.testing.assert_array_equal(piv[:n], piv_ref)
    lu_ref[np.diag_indices(n)] = 1.0 / np.diag(lu_ref)  # lu_factor keeps U's diagonal as reciprocals
    np.testing.assert_allclose(LU[:n, :n], lu_ref, rtol=1e-10, atol=1e-12)
    b = rng.normal(size=n)
    x = np.r_[b, np.zeros(3)]
    L.lu_solve(LU, piv, n, x)
    np.testing.assert_allclose(x[:n], np.linalg.solve(A, b), rtol=1e-9, atol=1e-12)
    assert not x[n:].any()


def test_lu_factor_rejects_a_numerically_singular_matrix():
    """A pivot at or below rel_tol × the largest entry: singular (the Newton step then takes the normal
    equations); just above it the factor goes through."""
    A = np.array([[2.0, 4.0, 1.0], [1.0, 2.0, 3.0], [3.0, 6.0, 0.5]])  # column 1 = 2 × column 0
    LU, piv = np.zeros((3, 3)), np.zeros(3, dtype=np.int64)
    assert not L.lu_factor(A, 3, LU, piv, 1e-10)
    A[2, 1] += 1e-6 * 6.0  # rank 3, smallest pivot ≈ 2e-6 of the largest entry
    assert L.lu_factor(A, 3, LU, piv, 1e-10)
    assert not L.lu_factor(A, 3, LU, piv, 1e-5)


def _rigid_basis(A, targets, rel_tol=1e-9):
    """Rows of A appended one by one with orthonormalize_last; returns (basis, targets, count)."""
    n = A.shape[1]
    basis, t = np.zeros((n, n)), np.zeros(n)
    nb = 0
    for r in range(A.shape[0]):
        basis[nb] = A[r]
        t[nb] = targets[r]
        if L.orthonormalize_last(basis, t, nb, n, rel_tol):
            nb += 1
    return basis, t, nb


@pytest.mark.parametrize("seed", range(6))
def test_rigid_basis_keeps_targets_and_drops_dependent_rows(seed):
    # 5 rows of rank 4 (the last a combination of two others, with a consistent target): the basis spans them,
    # is orthonormal, and v = Σ t_k b_k meets every row's target (oracle: numpy's rank and products)
    rng = np.random.default_rng(seed)
    n = 13
    R = rng.normal(size=(4, n))
    if seed % 2:
        R[:2] = np.eye(n)[[6, 9]]  # unit rows (ideal actuators)
    R = np.vstack([R, 0.3 * R[0] - 2.0 * R[2]])
    v_true = rng.normal(size=n)
    targets = R @ v_true
    basis, t, nb = _rigid_basis(R, targets)
    assert nb == np.linalg.matrix_rank(R) == 4
    B = basis[:nb]
    np.testing.assert_allclose(B @ B.T, np.eye(nb), atol=1e-12)
    np.testing.assert_allclose(R @ B.T @ B, R, atol=1e-10)  # spans the rows
    np.testing.assert_allclose(R @ (B.T @ t[:nb]), targets, atol=1e-10)


@pytest.mark.parametrize("unit", [True, False])
def test_null_space_rows_complement_the_basis(unit):
    rng = np.random.default_rng(4)
    n = 13
    R = np.eye(n)[[6, 7, 8, 9]] if unit else rng.normal(size=(4, n))
    basis, _, nb = _rigid_basis(R, np.zeros(4))
    N = np.zeros((n, n))
    nz = L.null_space_rows(basis, nb, n, N, np.zeros(n))
    assert nz == n - nb
    Nz = N[:nz]
    np.testing.assert_allclose(Nz @ Nz.T, np.eye(nz), atol=1e-12)
    np.testing.assert_allclose(R @ Nz.T, 0.0, atol=1e-12)
    ref = sla.null_space(R)  # the same subspace as SciPy's (SVD) null space
    np.testing.assert_allclose(Nz.T @ Nz, ref @ ref.T, atol=1e-10)
    if unit:  # unit rigid rows: the complement is the other unit rows, exactly
        np.testing.assert_array_equal(Nz, np.eye(n)[[i for i in range(n) if i not in (6, 7, 8, 9)]])


def test_null_space_of_no_rigid_rows_is_everything():
    N = np.zeros((5, 5))
    assert L.null_space_rows(np.zeros((5, 5)), 0, 5, N, np.zeros(5)) == 5
    np.testing.assert_array_equal(N, np.eye(5))
