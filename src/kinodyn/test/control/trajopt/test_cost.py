"""The quadratic cost, its state-bound penalty and their derivatives (against central differences), and
the URDF state bounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from kinodyn.control.trajopt import QuadraticCost, state_bounds

import kinodyn as kd

URDF = Path(__file__).resolve().parents[5] / "urdf"


def _cost(rng: np.random.Generator, n: int) -> QuadraticCost:
    L = rng.normal(size=(4, 4))
    bounds = (np.array([-1.0, -np.inf, -0.5, -2.0]), np.array([1.0, 0.3, np.inf, 2.0]))
    return QuadraticCost(Q=L @ L.T, W=[0.5, 2.0], Qf=np.diag([10.0, 1.0, 3.0, 0.0]),
                         x_goal=rng.normal(size=4), x_ref=rng.normal(size=(n, 4)), u_ref=rng.normal(size=2),
                         x_bounds=bounds, limit_weight=50.0)


def test_gradients_and_hessians_equal_central_differences() -> None:
    """States straddling the bounds: l_x, l_u, phi_x equal central differences of the total (1e-6); the
    Hessians l_xx, phi_xx equal differences of the gradients (the penalty's Hessian is piecewise constant,
    so states sit away from the bounds by more than the step)."""
    rng = np.random.default_rng(1)
    n = 6
    cost = _cost(rng, n)
    X = rng.uniform(-2.5, 2.5, size=(n + 1, 4))
    U = rng.normal(size=(n, 2))
    X[np.abs(X - np.clip(X, cost.x_lower, cost.x_upper)) < 1e-3] += 1e-2
    d = cost.derivatives(X, U)
    h = 1e-6

    def grad_x(Xp: np.ndarray) -> np.ndarray:
        g = cost.derivatives(Xp, U)
        return np.vstack([g.lx, g.phi_x])

    for k in range(n + 1):
        for i in range(4):
            Xp, Xm = X.copy(), X.copy()
            Xp[k, i] += h
            Xm[k, i] -= h
            numeric = (cost.total(Xp, U) - cost.total(Xm, U)) / (2 * h)
            analytic = d.lx[k, i] if k < n else d.phi_x[i]
            assert abs(analytic - numeric) < 1e-6 * max(1.0, abs(numeric))
            column = (grad_x(Xp)[k] - grad_x(Xm)[k]) / (2 * h)
            hessian = d.lxx[k] if k < n else d.phi_xx
            tol = 1e-6 * max(1.0, np.abs(column).max())
            np.testing.assert_allclose(hessian[:, i], column, rtol=0, atol=tol)
    for k in range(n):
        for i in range(2):
            Up, Um = U.copy(), U.copy()
            Up[k, i] += h
            Um[k, i] -= h
            numeric = (cost.total(X, Up) - cost.total(X, Um)) / (2 * h)
            assert abs(d.lu[k, i] - numeric) < 1e-6 * max(1.0, abs(numeric))
    np.testing.assert_array_equal(d.luu, np.diag([0.5, 2.0]))


def test_penalty_is_zero_inside_the_bounds() -> None:
    rng = np.random.default_rng(2)
    cost = _cost(rng, 3)
    unbounded = QuadraticCost(Q=cost.Q, W=cost.W, Qf=cost.Qf, x_goal=cost.x_goal, x_ref=cost.x_ref,
                              u_ref=cost.u_ref)
    X = rng.uniform(-0.2, 0.2, size=(4, 4))
    U = rng.normal(size=(3, 2))
    assert cost.total(X, U) == unbounded.total(X, U)
    X[2, 0] = 1.5  # 0.5 over x_upper[0]
    assert cost.total(X, U) - unbounded.total(X, U) == pytest.approx(0.5 * 50.0 * 0.5**2, rel=1e-12)


def test_state_bounds_from_the_urdf() -> None:
    """arm7: position limits moved in by the margin, velocity limits both ways; a margin wider than half
    the range meets in the middle."""
    m = kd.Model.from_urdf(URDF / "arm7.urdf")
    lower, upper = state_bounds(m, margin=0.05)
    np.testing.assert_allclose(lower, np.r_[m.lower_limit + 0.05, -m.velocity_limit])
    np.testing.assert_allclose(upper, np.r_[m.upper_limit - 0.05, m.velocity_limit])
    lower, upper = state_bounds(m, margin=10.0)
    np.testing.assert_allclose(lower[:7], 0.5 * (m.lower_limit + m.upper_limit))
    np.testing.assert_allclose(upper[:7], lower[:7])
    with pytest.raises(ValueError, match="margin"):
        state_bounds(m, margin=-0.1)


def test_bad_costs_are_refused() -> None:
    box = (-np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="x_ref"):
        QuadraticCost(Q=np.eye(2), W=[1.0], Qf=np.eye(2), x_goal=np.zeros(2), x_ref=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="Qf must be positive semi-definite"):
        QuadraticCost(Q=np.eye(2), W=[1.0], Qf=[1.0, -1.0], x_goal=np.zeros(2))
    with pytest.raises(ValueError, match="limit_weight"):
        QuadraticCost(Q=np.eye(2), W=[1.0], Qf=np.eye(2), x_goal=np.zeros(2), x_bounds=box)
    with pytest.raises(ValueError, match="x_bounds"):
        QuadraticCost(Q=np.eye(2), W=[1.0], Qf=np.eye(2), x_goal=np.zeros(2), x_bounds=box[::-1],
                      limit_weight=1.0)
    cost = QuadraticCost(Q=np.eye(2), W=[1.0], Qf=np.eye(2), x_goal=np.zeros(2), u_ref=np.zeros((4, 1)))
    with pytest.raises(ValueError, match="N = 3"):
        cost.total(np.zeros((4, 2)), np.zeros((3, 1)))
