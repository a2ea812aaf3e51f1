"""iLQR on linear-quadratic problems: one iteration gives the discrete LQR (finite-horizon Riccati)
solution; with control bounds it converges to the optimum of the condensed box-constrained QP."""

from __future__ import annotations

import numpy as np
import pytest
from kinodyn.control.trajopt import ILQR, ILQROptions, QuadraticCost

N = 30


class LinearDynamics:
    """``x_{k+1} = A x_k + B u_k`` with control bounds."""

    def __init__(self, A: np.ndarray, B: np.ndarray, bound: float = np.inf) -> None:
        self.A, self.B = A, B
        self.nx, self.nu = B.shape
        self.u_lower, self.u_upper = np.full(self.nu, -bound), np.full(self.nu, bound)

    def step(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return self.A @ x + self.B @ u

    def jacobians(self, X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = X.shape[0]
        return np.broadcast_to(self.A, (n, self.nx, self.nx)), np.broadcast_to(self.B, (n, self.nx, self.nu))


def _problem(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A random unstable (spectral radius > 1) system of 4 states and 2 inputs, weights and a start."""
    rng = np.random.default_rng(seed)
    A = np.eye(4) + 0.1 * rng.normal(size=(4, 4))
    A *= 1.05 / max(1.0, np.abs(np.linalg.eigvals(A)).max())
    B = 0.1 * rng.normal(size=(4, 2))
    L = rng.normal(size=(4, 4))
    Q = 0.1 * (L @ L.T)
    W = np.diag(rng.uniform(0.05, 0.5, size=2))
    Qf = 10.0 * np.eye(4)
    return A, B, Q, W, Qf, rng.normal(scale=3.0, size=4)


def _riccati_gains(A: np.ndarray, B: np.ndarray, Q: np.ndarray, W: np.ndarray, Qf: np.ndarray) -> np.ndarray:
    """Finite-horizon discrete LQR: ``P_N = Qf``, ``K_k = -(W + B^T P B)^-1 B^T P A``,
    ``P = Q + A^T P A + A^T P B K_k`` (textbook form, written independently of the solver)."""
    P, gains = Qf, []
    for _ in range(N):
        K = -np.linalg.solve(W + B.T @ P @ B, B.T @ P @ A)
        P = Q + A.T @ P @ A + A.T @ P @ B @ K
        gains.append(K)
    return np.array(gains[::-1])


def _condensed(A: np.ndarray, B: np.ndarray, Q: np.ndarray, W: np.ndarray, Qf: np.ndarray,
               x0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``J(u) = 1/2 u^T H u + g^T u + c`` over the stacked controls, states eliminated."""
    nx, nu = B.shape
    Sx = np.zeros(((N + 1) * nx, nx))
    Su = np.zeros(((N + 1) * nx, N * nu))
    Sx[:nx] = np.eye(nx)
    for k in range(N):
        Sx[(k + 1) * nx:(k + 2) * nx] = A @ Sx[k * nx:(k + 1) * nx]
        Su[(k + 1) * nx:(k + 2) * nx] = A @ Su[k * nx:(k + 1) * nx]
        Su[(k + 1) * nx:(k + 2) * nx, k * nu:(k + 1) * nu] = B
    Qbar = np.kron(np.eye(N + 1), Q)
    Qbar[-nx:, -nx:] = Qf
    H = np.kron(np.eye(N), W) + Su.T @ Qbar @ Su
    return H, Su.T @ Qbar @ Sx @ x0


@pytest.mark.parametrize("seed", range(3))
def test_one_iteration_is_the_discrete_lqr_solution(seed: int) -> None:
    """Unbounded controls, no regularisation: after one iteration the controls equal the condensed
    least-squares optimum and the gains the Riccati gains (1e-9); the next iteration finds nothing left
    to gain and stops with ``converged``."""
    A, B, Q, W, Qf, x0 = _problem(seed)
    dyn = LinearDynamics(A, B)
    cost = QuadraticCost(Q=Q, W=W, Qf=Qf, x_goal=np.zeros(4))
    u0 = np.zeros((N, 2))
    one = ILQR(dyn, cost, ILQROptions(max_iterations=1, mu_init=0.0)).solve(x0, u0)
    H, g = _condensed(A, B, Q, W, Qf, x0)
    u_star = -np.linalg.solve(H, g).reshape(N, 2)
    assert one.iterations == 1
    assert len(one.cost_history) == 2
    np.testing.assert_allclose(one.u, u_star, rtol=0, atol=1e-9 * np.abs(u_star).max())
    gains = _riccati_gains(A, B, Q, W, Qf)
    np.testing.assert_allclose(one.K, gains, rtol=0, atol=1e-9 * np.abs(gains).max())
    # the optimal policy u_k = K_k x_k along the solution
    policy = np.einsum("kij,kj->ki", gains, one.x[:-1])
    np.testing.assert_allclose(one.u, policy, rtol=0, atol=1e-9 * np.abs(u_star).max())
    full = ILQR(dyn, cost, ILQROptions(mu_init=0.0)).solve(x0, u0)
    assert full.status == "converged"
    assert full.iterations == 2
    np.testing.assert_allclose(full.u, one.u, rtol=0, atol=1e-12 * np.abs(u_star).max())


@pytest.mark.parametrize("seed", range(3))
def test_bounded_controls_reach_the_box_qp_optimum(seed: int) -> None:
    """Bounds at 40 % of the unbounded optimum's largest |u|: the converged controls satisfy the KKT
    conditions of the condensed box-constrained QP (1e-6 of |g|), with bounds active at some knots, and the
    cost decreases at every accepted step."""
    A, B, Q, W, Qf, x0 = _problem(seed)
    H, g = _condensed(A, B, Q, W, Qf, x0)
    bound = 0.4 * np.abs(np.linalg.solve(H, g)).max()
    dyn = LinearDynamics(A, B, bound)
    cost = QuadraticCost(Q=Q, W=W, Qf=Qf, x_goal=np.zeros(4))
    options = ILQROptions(gradient_tolerance=1e-10, cost_tolerance=1e-14)
    r = ILQR(dyn, cost, options).solve(x0, np.zeros((N, 2)))
    assert r.converged
    u = r.u.ravel()
    grad = H @ u + g
    tol = 1e-6 * np.abs(g).max()
    at_lower, at_upper = u <= -bound, u >= bound
    assert at_lower.any() or at_upper.any()
    interior = ~(at_lower | at_upper)
    np.testing.assert_allclose(grad[interior], 0.0, atol=tol)
    assert np.all(grad[at_lower] >= -tol)
    assert np.all(grad[at_upper] <= tol)
    assert np.all(np.diff(r.cost_history) < 0.0)


@pytest.mark.parametrize(("field", "value"), [
    ("max_iterations", 0), ("max_iterations", 2.5), ("cost_tolerance", 0.0), ("gradient_tolerance", np.nan),
    ("mu_init", -1.0), ("mu_factor", 1.0), ("armijo", 1.0), ("line_search", (0.5, 1.0)), ("line_search", ()),
])
def test_bad_options_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        ILQROptions(**{field: value})


def test_bad_problems_are_refused() -> None:
    A, B, Q, W, Qf, _ = _problem(0)
    cost = QuadraticCost(Q=Q, W=W, Qf=Qf, x_goal=np.zeros(4))
    solver = ILQR(LinearDynamics(A, B), cost)
    with pytest.raises(ValueError, match="x0"):
        solver.solve(np.zeros(3), np.zeros((N, 2)))
    with pytest.raises(ValueError, match="finite"):
        solver.solve(np.full(4, np.nan), np.zeros((N, 2)))
    with pytest.raises(ValueError, match="W must be positive definite"):
        QuadraticCost(Q=Q, W=np.zeros(2), Qf=Qf, x_goal=np.zeros(4))
    with pytest.raises(ValueError, match="Q must be symmetric"):
        QuadraticCost(Q=Q + np.triu(np.ones((4, 4)), 1), W=W, Qf=Qf, x_goal=np.zeros(4))
    with pytest.raises(ValueError, match="the cost is for"):
        ILQR(LinearDynamics(A, B[:, :1]), cost)


class WrongJacobians(LinearDynamics):
    """Reports ``-B`` for ``f_u``: every feedforward points uphill."""

    def jacobians(self, X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fx, fu = super().jacobians(X, U)
        return fx, -fu


def test_no_descent_ends_at_the_regularisation_limit() -> None:
    """With wrong derivatives no line-search step is accepted: the regularisation grows past ``mu_max`` and
    the solver stops with ``regularisation_limit``, returning the initial trajectory and its cost."""
    A, B, Q, W, Qf, x0 = _problem(1)
    cost = QuadraticCost(Q=Q, W=W, Qf=Qf, x_goal=np.zeros(4))
    u0 = np.zeros((N, 2))
    r = ILQR(WrongJacobians(A, B), cost, ILQROptions(mu_max=1e4)).solve(x0, u0)
    assert r.status == "regularisation_limit"
    assert not r.converged
    assert len(r.cost_history) == 1
    assert r.mu > 1e4
    np.testing.assert_array_equal(r.u, u0)
    assert r.cost == cost.total(r.x, u0)
