"""Strong-Wolfe line search (thesis App. D) on functions with known minimizers."""

import numpy as np
import pytest

from wmr_dynamics.dynamics.line_search import C1, C2, strong_wolfe


def make_phi(f, grad, x, p):
    def phi(a):
        y = x + a * p
        return f(y), grad(y) @ p
    return phi


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def rosenbrock_grad(x):
    return np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])


@pytest.mark.parametrize("x0", [(-1.2, 1.0), (0.0, 0.0), (2.0, 2.0), (-0.5, 1.5)])
def test_returned_step_satisfies_the_strong_wolfe_conditions(x0):
    x = np.array(x0)
    p = -rosenbrock_grad(x)  # steepest descent: the full step is usually far too long
    phi = make_phi(rosenbrock, rosenbrock_grad, x, p)
    phi0, dphi0 = phi(0.0)
    a, phi_a = strong_wolfe(phi, phi0, dphi0)
    assert 0 < a <= 1
    assert phi_a == pytest.approx(rosenbrock(x + a * p))
    assert phi_a <= phi0 + C1 * a * dphi0  # D.2
    assert abs(phi(a)[1]) <= C2 * abs(dphi0) + 1e-12  # D.4


def test_full_newton_step_on_a_quadratic_is_taken():
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    f = lambda x: 0.5 * x @ A @ x  # noqa: E731
    g = lambda x: A @ x  # noqa: E731
    x = np.array([1.0, -2.0])
    p = -np.linalg.solve(A, g(x))
    phi = make_phi(f, g, x, p)
    a, phi_a = strong_wolfe(phi, *phi(0.0))
    assert a == 1.0 and phi_a == pytest.approx(0.0, abs=1e-15)


def test_newton_with_the_line_search_minimizes_rosenbrock():
    def hess(x):
        return np.array([[2 - 400 * (x[1] - 3 * x[0] ** 2), -400 * x[0]], [-400 * x[0], 200.0]])

    x = np.array([-1.2, 1.0])
    for _ in range(100):
        g = rosenbrock_grad(x)
        if np.linalg.norm(g) < 1e-10:
            break
        H = hess(x)
        p = -np.linalg.solve(H, g) if np.all(np.linalg.eigvalsh(H) > 0) else -g
        phi = make_phi(rosenbrock, rosenbrock_grad, x, p)
        a, _ = strong_wolfe(phi, *phi(0.0))
        x = x + a * p
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-8)
