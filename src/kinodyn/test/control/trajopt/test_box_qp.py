"""The box QP's solutions satisfy the KKT conditions of ``min 1/2 x^T H x + g^T x, lower <= x <= upper``
(a certificate of the unique optimum for positive definite H)."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.control.trajopt import solve_box_qp


def _random_problem(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    A = rng.normal(size=(n, n))
    H = A @ A.T + 0.1 * np.eye(n)
    g = rng.normal(scale=5.0, size=n)
    lower = -rng.uniform(0.1, 2.0, size=n)
    upper = rng.uniform(0.1, 2.0, size=n)
    lower[rng.random(n) < 0.2] = -np.inf
    return H, g, lower, upper


@pytest.mark.parametrize("seed", range(20))
def test_solution_satisfies_kkt(seed: int) -> None:
    """Inside the box; free coordinates: zero gradient; on a bound: the gradient points outwards; the
    returned inverse is that of H on the free coordinates."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 8))
    H, g, lower, upper = _random_problem(rng, n)
    s = solve_box_qp(H, g, lower, upper, rng.normal(size=n))
    assert s is not None
    x, grad = s.x, g + H @ s.x
    tol = 1e-9 * max(1.0, np.abs(g).max())
    assert np.all(x >= lower)
    assert np.all(x <= upper)
    at_lower, at_upper = x <= lower, x >= upper
    interior = ~(at_lower | at_upper)
    np.testing.assert_allclose(grad[interior], 0.0, atol=tol)
    assert np.all(grad[at_lower] >= -tol)
    assert np.all(grad[at_upper] <= tol)
    np.testing.assert_array_equal(s.free, interior | (at_lower & (grad <= 0)) | (at_upper & (grad >= 0)))
    np.testing.assert_allclose(s.H_free_inv @ H[np.ix_(s.free, s.free)], np.eye(s.free.sum()), atol=1e-9)


def test_some_problems_have_active_bounds_and_some_none() -> None:
    """The random problems above exercise both paths: the unconstrained minimiser and active bounds."""
    active = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 8))
        H, g, lower, upper = _random_problem(rng, n)
        s = solve_box_qp(H, g, lower, upper, np.zeros(n))
        assert s is not None
        active.append(bool(np.any(~s.free)))
    assert any(active)
    assert not all(active)


def test_indefinite_hessian_is_refused() -> None:
    H = np.diag([1.0, -1.0])
    assert solve_box_qp(H, np.ones(2), -np.ones(2), np.ones(2), np.zeros(2)) is None


def test_every_coordinate_clamped() -> None:
    """A gradient pushing every coordinate out of the box: the corner, nothing free, an empty inverse."""
    s = solve_box_qp(np.eye(2), np.array([10.0, -10.0]), -np.ones(2), np.ones(2), np.zeros(2))
    assert s is not None
    np.testing.assert_array_equal(s.x, [-1.0, 1.0])
    assert not s.free.any()
    assert s.H_free_inv.shape == (0, 0)
