"""The box-constrained IK step QP against scipy's bounded least squares and enumeration (not clamping)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from kinodyn.ik.limits import ConfigurationLimit, VelocityLimit, active_indices, intersect_bounds
from kinodyn.ik.qp import solve_box_qp
from scipy.optimize import lsq_linear

if TYPE_CHECKING:
    from kinodyn.model import Model


def damped_problem(
    rng: np.random.Generator, n: int = 7, damping: float = 1e-3
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    J = rng.standard_normal((6, n))
    e = rng.standard_normal(6)
    H = J.T @ J + damping * np.eye(n)
    g = J.T @ e
    return J, e, H, g, np.linalg.solve(H, g)


def reference_solution(J: np.ndarray, e: np.ndarray, damping: float, lower: np.ndarray,
                       upper: np.ndarray) -> np.ndarray:
    """min |J δ - e|² + λ|δ|² over the box, by scipy (an independent bounded least-squares solver)."""
    n = J.shape[1]
    A = np.vstack([J, np.sqrt(damping) * np.eye(n)])
    b = np.concatenate([e, np.zeros(n)])
    return lsq_linear(A, b, bounds=(lower, upper), tol=1e-14, method="bvls").x


def test_step_qp_matches_bounded_least_squares_and_differs_from_clamping() -> None:
    rng = np.random.default_rng(21)
    differing = 0
    for _ in range(30):
        J, e, H, g, unconstrained = damped_problem(rng)
        lower, upper = -0.3 * rng.uniform(0.1, 1.0, 7), 0.3 * rng.uniform(0.1, 1.0, 7)
        step = solve_box_qp(H, g, lower, upper)
        assert np.all(step >= lower)
        assert np.all(step <= upper)
        np.testing.assert_allclose(step, reference_solution(J, e, 1e-3, lower, upper), atol=1e-9)
        differing += not np.allclose(step, np.clip(unconstrained, lower, upper), atol=1e-3)
    assert differing > 20  # clamping the unconstrained step is (almost always) not the constrained optimum


def enumerated_minimum(H: np.ndarray, g: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Box QP by enumerating the 3^n active sets (free, at lower, at upper): the feasible minimum."""
    n = g.shape[0]
    best, best_value = None, np.inf
    for code in range(3 ** n):
        states = [(code // 3 ** i) % 3 for i in range(n)]
        fixed = [i for i in range(n) if states[i]]
        free = [i for i in range(n) if not states[i]]
        x = np.zeros(n)
        for i in fixed:
            x[i] = lower[i] if states[i] == 1 else upper[i]
        if free:
            rhs = g[free] - H[np.ix_(free, fixed)] @ x[fixed]
            x[free] = np.linalg.solve(H[np.ix_(free, free)], rhs)
        if np.all(x >= lower - 1e-12) and np.all(x <= upper + 1e-12):
            value = 0.5 * x @ H @ x - g @ x
            if value < best_value:
                best, best_value = x, value
    assert best is not None
    return best


def test_a_bound_the_unconstrained_step_violates_is_released() -> None:
    """H with strong coupling: the bound the unconstrained step violates is not active at the optimum."""
    H = np.array([[1.0, 0.99], [0.99, 1.0]])
    g = np.array([2.0, 1.9])
    np.testing.assert_allclose(np.linalg.solve(H, g), [5.9798995, -4.0201005], atol=1e-6)  # out of the box
    lower, upper = np.array([-1.0, 0.45]), np.array([1.0, 1.0])
    step = solve_box_qp(H, g, lower, upper)
    expected = enumerated_minimum(H, g, lower, upper)
    np.testing.assert_allclose(step, expected, atol=1e-12)
    assert expected[1] > lower[1]  # the guess from the unconstrained step (x1 at its lower bound) is wrong


def test_tight_boxes_against_enumeration_and_bounded_least_squares() -> None:
    """Small damping and a tight box: many bounds active, several released along the way."""
    rng = np.random.default_rng(22)
    for trial in range(200):
        n = 4 if trial < 100 else 7
        J, e, H, g, _ = damped_problem(rng, n=n, damping=1e-6)
        lower, upper = -0.05 * np.ones(n), 0.05 * np.ones(n)
        step = solve_box_qp(H, g, lower, upper)
        assert np.all(step >= lower)
        assert np.all(step <= upper)
        reference = enumerated_minimum(H, g, lower, upper) if n == 4 else \
            reference_solution(J, e, 1e-6, lower, upper)
        np.testing.assert_allclose(step, reference, atol=1e-8)


def test_limits_rows(panda: Model) -> None:
    v_idx, q_idx = active_indices(panda, panda.joint_names[:7])
    np.testing.assert_array_equal(v_idx, np.arange(7))
    limit = ConfigurationLimit(panda, q_idx)
    q = panda.random_configuration(3)
    lower, upper = limit.step_bounds(q)
    np.testing.assert_allclose(q[:7] + lower, panda.lower_limit[:7], atol=1e-15)
    np.testing.assert_allclose(q[:7] + upper, panda.upper_limit[:7], atol=1e-15)
    velocity = VelocityLimit(panda, v_idx)
    lo, hi = intersect_bounds([limit, velocity], q, 7, dt=0.01)
    np.testing.assert_allclose(hi, np.minimum(upper, panda.velocity_limit[:7] * 0.01))
    np.testing.assert_allclose(lo, np.maximum(lower, -panda.velocity_limit[:7] * 0.01))
    with pytest.raises(KeyError, match="unknown joint"):
        active_indices(panda, ["panda_joint9"])
    with pytest.raises(ValueError, match="empty box"):
        solve_box_qp(np.eye(7), np.zeros(7), np.ones(7), np.zeros(7))
    with pytest.raises(ValueError, match="must be finite"):
        solve_box_qp(np.eye(7), np.full(7, np.nan), -np.ones(7), np.ones(7))
