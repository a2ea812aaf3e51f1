"""Inverse differential kinematics against Robot Dynamics lecture notes (ETH), Example 2.9.1 and closed
forms."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from kinodyn.ik.differential import (
    damped_pseudo_inverse,
    equal_priority_velocity,
    null_space_projector,
    prioritized_velocity,
    pseudo_inverse,
    weighted_pseudo_inverse,
)

# Robot Dynamics lecture notes (ETH), Example 2.9.1: planar 3-link arm, unit links, q_t = (π/6, π/3, π/3),
# (2.211), (2.214).
J_E = 0.5 * np.array([[0.0, -np.sqrt(3.0), -np.sqrt(3.0)], [-4.0, -3.0, -1.0]])
W_E = np.array([1.0, 1.0])
J_J = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
W_J = np.array([0.0, 0.0])
PRINTED = 5e-5  # the example's values are given to 4 decimals


def squared_error(J: np.ndarray, w: np.ndarray, qdot: np.ndarray) -> float:
    """The notes' "‖·‖₂" in Example 2.9.1 is the squared norm (App. A code: e'*e)."""
    e = w - J @ qdot
    return float(e @ e)


def test_single_task_reproduces_example_2_9_1() -> None:
    qdot = pseudo_inverse(J_E) @ W_E
    np.testing.assert_allclose(qdot, [0.0688, -0.5602, -0.5945], atol=PRINTED)
    printed_inverse = [[0.5132, -0.4444], [-0.4491, -0.1111], [-0.7057, 0.1111]]
    np.testing.assert_allclose(pseudo_inverse(J_E), printed_inverse, atol=PRINTED)
    np.testing.assert_allclose(J_E @ qdot, W_E, atol=1e-14)  # (2.213)
    assert squared_error(J_E, W_E, qdot) == pytest.approx(0.0, abs=1e-28)
    assert squared_error(J_J, W_J, qdot) == pytest.approx(0.3185, abs=PRINTED)  # (2.222)
    # Minimum norm (2.196): J^T (J J^T)^{-1} w for the full-row-rank J_E.
    np.testing.assert_allclose(qdot, J_E.T @ np.linalg.solve(J_E @ J_E.T, W_E), atol=1e-14)


def test_equal_priority_reproduces_example_2_9_1() -> None:
    qdot = equal_priority_velocity([(J_E, W_E), (J_J, W_J)])
    np.testing.assert_allclose(qdot, [-0.1335, -0.0667, -1.1325], atol=PRINTED)  # (2.217)
    J = np.vstack([J_E, J_J])
    np.testing.assert_allclose(J @ qdot, [1.0385, 0.9333, -0.1335, -0.0667], atol=PRINTED)  # (2.218)
    assert squared_error(J_E, W_E, qdot) == pytest.approx(0.0059, abs=PRINTED)  # (2.219)
    assert squared_error(J_J, W_J, qdot) == pytest.approx(0.0223, abs=PRINTED)  # (2.220)
    # Second source: least squares of the (square, invertible) stack by scipy.
    reference, *_ = scipy.linalg.lstsq(J, np.concatenate([W_E, W_J]))
    np.testing.assert_allclose(qdot, reference, atol=1e-14)


def test_prioritized_reproduces_example_2_9_1() -> None:
    N1 = null_space_projector(J_E)
    printed_N1 = np.array([[1, -2, 2], [-2, 4, -4], [2, -4, 4]]) / 9.0  # (2.224)
    np.testing.assert_allclose(N1, printed_N1, atol=1e-14)
    assert np.linalg.matrix_rank(N1, tol=1e-12) == 1  # (rounding leaves singular values of ~1e-15)
    qdot = prioritized_velocity([(J_E, W_E), (J_J, W_J)])
    np.testing.assert_allclose(qdot, [-0.1691, -0.0845, -1.0702], atol=PRINTED)
    assert squared_error(J_E, W_E, qdot) == pytest.approx(0.0, abs=1e-28)
    assert squared_error(J_J, W_J, qdot) == pytest.approx(0.0357, abs=PRINTED)
    # Closed form: N1 = n n^T / 9 with n = (1, -2, 2), so q̇ = q̇_single + s n with s minimizing
    # |J_J (q̇_single + s n)|².
    single = pseudo_inverse(J_E) @ W_E
    n = np.array([1.0, -2.0, 2.0])
    s = -(J_J @ n) @ (J_J @ single) / ((J_J @ n) @ (J_J @ n))
    np.testing.assert_allclose(qdot, single + s * n, atol=1e-14)
    # Two-task form (2.206) gives the same result as the recursion (2.207).
    J1p = pseudo_inverse(J_E)
    two_task = J1p @ W_E + N1 @ pseudo_inverse(J_J @ N1) @ (W_J - J_J @ J1p @ W_E)
    np.testing.assert_allclose(qdot, two_task, atol=1e-14)


def test_damped_pseudo_inverse_matches_regularized_least_squares() -> None:
    qdot = damped_pseudo_inverse(J_E, 0.1) @ W_E
    np.testing.assert_allclose(qdot, [0.0650, -0.5571, -0.5896], atol=PRINTED)
    # Second source: the minimizer of |w - J q̇|² + λ²|q̇|² from its normal equations (J^T J + λ² I) q̇ = J^T
    # w.
    rng = np.random.default_rng(3)
    for _ in range(5):
        J = rng.standard_normal((4, 7))
        w = rng.standard_normal(4)
        lam = rng.uniform(1e-3, 1.0)
        expected = np.linalg.solve(J.T @ J + lam**2 * np.eye(7), J.T @ w)
        np.testing.assert_allclose(damped_pseudo_inverse(J, lam) @ w, expected, rtol=1e-10, atol=1e-12)
    # At a singularity (rank-deficient J) the damped inverse stays bounded by 1 / (2 λ).
    singular = np.array([[1.0, 1.0], [1.0, 1.0]])
    assert np.linalg.norm(damped_pseudo_inverse(singular, 0.1), 2) <= 1.0 / (2 * 0.1) + 1e-12
    with pytest.raises(ValueError, match="damping must be positive"):
        damped_pseudo_inverse(J_E, 0.0)


def test_weighted_pseudo_inverse_matches_formula_and_minimizes_weighted_error() -> None:
    rng = np.random.default_rng(4)
    J = rng.standard_normal((6, 4))  # full column rank: (2.202) applies as printed
    weights = rng.uniform(0.1, 3.0, 6)
    W = np.diag(weights)
    np.testing.assert_allclose(weighted_pseudo_inverse(J, weights), np.linalg.solve(J.T @ W @ J, J.T @ W),
                               rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(6)
    qdot = weighted_pseudo_inverse(J, weights) @ w
    gradient = J.T @ W @ (w - J @ qdot)  # stationarity of |W^{1/2}(w - J q̇)|²
    np.testing.assert_allclose(gradient, 0.0, atol=1e-12)
    # Heavier weight on one task makes it better fulfilled than with equal weights.
    stacked = [(J_E, W_E), (J_J, W_J)]
    favour_first = equal_priority_velocity(stacked, weights=[100.0, 100.0, 1.0, 1.0])
    equal = equal_priority_velocity(stacked)
    assert squared_error(J_E, W_E, favour_first) < squared_error(J_E, W_E, equal)


def test_secondary_task_does_not_disturb_primary() -> None:
    rng = np.random.default_rng(5)
    for _ in range(10):
        J1 = rng.standard_normal((3, 7))
        J2 = rng.standard_normal((3, 7))
        J3 = rng.standard_normal((2, 7))
        w1, w2, w3 = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(2)
        primary = pseudo_inverse(J1) @ w1
        qdot = prioritized_velocity([(J1, w1), (J2, w2), (J3, w3)])
        np.testing.assert_allclose(J1 @ qdot, J1 @ primary, atol=1e-12)  # J1 q̇ unchanged
        np.testing.assert_allclose(J1 @ qdot, w1, atol=1e-12)
        # 3 + 3 + 2 = 8 > 7 rows: task 2 is met exactly, task 3 as well as the remaining 1 DoF allows.
        np.testing.assert_allclose(J2 @ qdot, w2, atol=1e-11)
        N = null_space_projector(np.vstack([J1, J2]))
        np.testing.assert_allclose(J1 @ N, 0.0, atol=1e-12)
        np.testing.assert_allclose(J2 @ N, 0.0, atol=1e-12)
        # Task 3 is optimal within the null space of tasks 1 and 2: its residual is orthogonal to J3 N.
        np.testing.assert_allclose((J3 @ N).T @ (w3 - J3 @ qdot), 0.0, atol=1e-11)


def test_rejects_mismatched_tasks() -> None:
    with pytest.raises(ValueError, match="same number of columns"):
        prioritized_velocity([(J_E, W_E), (np.eye(2), W_J)])
    with pytest.raises(ValueError, match="entries but its Jacobian has"):
        equal_priority_velocity([(J_E, [1.0, 2.0, 3.0])])
