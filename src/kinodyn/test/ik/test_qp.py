"""The box-constrained IK step QP against scipy's bounded least squares; clamping is not its solution."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.ik.limits import ConfigurationLimit, VelocityLimit, active_indices, intersect_bounds
from kinodyn.ik.qp import BoxQP, box_qp
from scipy.optimize import lsq_linear


def damped_problem(rng: np.random.Generator, n: int = 7, damping: float = 1e-3):
    J = rng.standard_normal((6, n))
    e = rng.standard_normal(6)
    H = J.T @ J + damping * np.eye(n)
    g = J.T @ e
    return J, e, H, g, np.linalg.solve(H, g)


def reference_solution(J, e, damping, lower, upper) -> np.ndarray:
    """min |J δ - e|² + λ|δ|² over the box, by scipy (an independent bounded least-squares solver)."""
    n = J.shape[1]
    A = np.vstack([J, np.sqrt(damping) * np.eye(n)])
    b = np.concatenate([e, np.zeros(n)])
    return lsq_linear(A, b, bounds=(lower, upper), tol=1e-14, method="bvls").x


def test_step_qp_matches_bounded_least_squares_and_differs_from_clamping() -> None:
    rng = np.random.default_rng(21)
    qp = box_qp(7)
    differing = 0
    for _ in range(30):
        J, e, H, g, unconstrained = damped_problem(rng)
        lower, upper = -0.3 * rng.uniform(0.1, 1.0, 7), 0.3 * rng.uniform(0.1, 1.0, 7)
        step = qp.solve(H, g, lower, upper, unconstrained)
        assert np.all(step >= lower) and np.all(step <= upper)
        np.testing.assert_allclose(step, reference_solution(J, e, 1e-3, lower, upper), atol=1e-6)
        differing += not np.allclose(step, np.clip(unconstrained, lower, upper), atol=1e-3)
    assert differing > 20  # clamping the unconstrained step is (almost always) not the constrained optimum


def test_osqp_path_solves_when_the_active_set_guess_fails() -> None:
    """H with strong coupling: the bound the unconstrained step violates is not the active one."""
    qp = BoxQP(2)
    H = np.array([[1.0, 0.99], [0.99, 1.0]])
    g = np.array([2.0, 1.9])
    unconstrained = np.linalg.solve(H, g)  # (1.5025..., 0.4025...)
    lower, upper = np.array([-1.0, 0.45]), np.array([1.0, 1.0])
    step = qp.solve(H, g, lower, upper, unconstrained)
    assert qp.osqp_solves == 1 and qp.closed_form_solves == 0
    # Reference: enumerate the 9 active-set combinations of a 2-D box QP and keep the feasible minimum.
    best, best_value = None, np.inf
    for fix0 in (None, 0, 1):
        for fix1 in (None, 0, 1):
            x = np.zeros(2)
            fixed = {i: (lower, upper)[f][i] for i, f in ((0, fix0), (1, fix1)) if f is not None}
            free = [i for i in range(2) if i not in fixed]
            for i, v in fixed.items():
                x[i] = v
            if free:
                rhs = g[free] - H[np.ix_(free, list(fixed))] @ x[list(fixed)]
                x[free] = np.linalg.solve(H[np.ix_(free, free)], rhs)
            if np.all(x >= lower - 1e-12) and np.all(x <= upper + 1e-12):
                value = 0.5 * x @ H @ x - g @ x
                if value < best_value:
                    best, best_value = x, value
    np.testing.assert_allclose(step, best, atol=1e-6)


def test_osqp_path_is_used_and_correct() -> None:
    """Force OSQP: a guess that needs dropping a bound fails the KKT check."""
    rng = np.random.default_rng(22)
    qp = BoxQP(7)
    used_osqp = 0
    for _ in range(200):
        J, e, H, g, unconstrained = damped_problem(rng, damping=1e-6)
        lower, upper = -0.05 * np.ones(7), 0.05 * np.ones(7)
        before = qp.osqp_solves
        step = qp.solve(H, g, lower, upper, unconstrained)
        used_osqp += qp.osqp_solves > before
        np.testing.assert_allclose(step, reference_solution(J, e, 1e-6, lower, upper), atol=1e-5)
        assert np.all(step >= lower) and np.all(step <= upper)
    assert used_osqp > 0


def test_limits_rows(panda) -> None:
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
        box_qp(7).solve(np.eye(7), np.zeros(7), np.ones(7), np.zeros(7), np.zeros(7))
