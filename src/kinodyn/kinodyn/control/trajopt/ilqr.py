"""Iterative LQR with control limits (Robot Dynamics Essential §4.3, (104), which names the backward
Riccati pass, the
policy ``du = K dx + alpha d`` and the line search; the recursion below is the standard one; box
constraints, regularisation and line search follow Tassa, Mansard and Todorov 2014).

About the current trajectory ``(X, U)`` each iteration

1. linearises the dynamics (``f_x``, ``f_u``: no second derivatives of f, i.e. iLQR, not full DDP) and
   takes the cost's derivatives;
2. runs the backward Riccati recursion from ``V_N = phi``: ``Q_x = l_x + f_x^T V'_x``,
   ``Q_u = l_u + f_u^T V'_x``, ``Q_xx = l_xx + f_x^T V'_xx f_x``, ``Q_uu = l_uu + f_u^T V'_xx f_u``,
   ``Q_ux = f_u^T V'_xx f_x``. The feedforward ``d_k`` minimises ``1/2 d^T (Q_uu + mu I) d + Q_u^T d`` within
   the control bounds shifted by ``u_k`` (``box_qp``); the gain ``K_k = -(Q_uu + mu I)_ff^-1 Q_ux,f`` on the
   free controls and zero on the clamped ones. ``V_x = Q_x + K^T Q_uu d + K^T Q_u + Q_ux^T d``,
   ``V_xx = Q_xx + K^T Q_uu K + K^T Q_ux + Q_ux^T K``;
3. rolls out ``u_k = clip(U_k + alpha d_k + K_k (x_k - X_k))`` for ``alpha`` in ``line_search`` until the
   actual reduction is at least ``armijo`` times the expected one,
   ``-(alpha sum d^T Q_u + alpha^2 / 2 sum d^T Q_uu d)``, and lower than the current cost.

Regularisation (Levenberg-Marquardt on ``Q_uu``): ``mu`` grows (factor ``delta`` times ``mu_factor``) when
``Q_uu + mu I`` is not positive definite or the line search fails, shrinks after an accepted step, drops
to 0 below ``mu_min``; above ``mu_max`` the solver stops. Converged when the accepted reduction is below
``cost_tolerance`` times the cost, or the feedforward is below ``gradient_tolerance`` (the mean over the
knots of ``max |d_k| / (|U_k| + 1)``) while ``mu < mu_min``. The cost decreases at every accepted step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control._inputs import MATRIX_NDIM
from kinodyn.control.trajopt.box_qp import solve_box_qp

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.control.trajopt.cost import CostDerivatives, QuadraticCost
    from kinodyn.control.trajopt.dynamics import DiscreteDynamics

STATUSES = ("converged", "max_iterations", "regularisation_limit")


def _default_line_search() -> tuple[float, ...]:
    return tuple(float(a) for a in 10.0 ** np.linspace(0.0, -3.0, 11))


@dataclass(frozen=True)
class ILQROptions:
    """Solver settings (module doc); checked on construction."""

    max_iterations: int = 200
    cost_tolerance: float = 1e-7  # relative reduction of an accepted step
    gradient_tolerance: float = 1e-5
    mu_init: float = 1.0
    mu_min: float = 1e-6
    mu_max: float = 1e10
    mu_factor: float = 1.6
    line_search: tuple[float, ...] = field(default_factory=_default_line_search)
    armijo: float = 1e-4

    def __post_init__(self) -> None:
        if isinstance(self.max_iterations, bool) or not isinstance(self.max_iterations, int) \
                or self.max_iterations < 1:
            raise ValueError(f"max_iterations must be an int >= 1, got {self.max_iterations!r}")
        for name in ("cost_tolerance", "gradient_tolerance", "mu_min", "mu_max", "armijo"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be finite and > 0, got {value}")
        if not (np.isfinite(self.mu_init) and 0.0 <= self.mu_init <= self.mu_max):
            raise ValueError(f"mu_init must be in [0, mu_max = {self.mu_max}], got {self.mu_init}")
        if not (np.isfinite(self.mu_factor) and self.mu_factor > 1.0):
            raise ValueError(f"mu_factor must be finite and > 1, got {self.mu_factor}")
        if not self.armijo < 1.0:
            raise ValueError(f"armijo must be < 1, got {self.armijo}")
        steps = np.asarray(self.line_search, dtype=np.float64)
        if steps.ndim != 1 or steps.size == 0 or not np.all((steps > 0.0) & (steps <= 1.0)) \
                or np.any(np.diff(steps) >= 0.0):
            raise ValueError(f"line_search must be decreasing step sizes in (0, 1], got {self.line_search}")


@dataclass(frozen=True)
class ILQRResult:
    """``status`` (one of ``STATUSES``); ``iterations`` (of the solver's loop, one backward pass each);
    ``cost_history`` (the cost of the initial rollout, then after each accepted step); the trajectory ``x``
    (N+1, nx), ``u`` (N, nu); the gains ``K`` (N, nu, nx) and feedforward ``d`` (N, nu) of a backward pass
    about that trajectory (the policy ``u_k + K_k (x - x_k)`` executes it); ``mu`` at the end."""

    status: str
    iterations: int
    cost_history: list[float]
    x: np.ndarray
    u: np.ndarray
    K: np.ndarray
    d: np.ndarray
    mu: float

    @property
    def converged(self) -> bool:
        return self.status == "converged"

    @property
    def cost(self) -> float:
        return self.cost_history[-1]


@dataclass(frozen=True)
class _BackwardPass:
    K: np.ndarray
    d: np.ndarray
    expected: tuple[float, float]  # (sum d^T Q_u, sum 1/2 d^T Q_uu d)


def rollout(dynamics: DiscreteDynamics, x0: np.ndarray, U: np.ndarray) -> np.ndarray:
    """States (N+1, nx) from ``x0`` under the controls ``U`` (N, nu), clipped to the bounds."""
    X = np.empty((U.shape[0] + 1, dynamics.nx))
    X[0] = x0
    for k in range(U.shape[0]):
        X[k + 1] = dynamics.step(X[k], np.clip(U[k], dynamics.u_lower, dynamics.u_upper))
    return X


class ILQR:
    """``ILQR(dynamics, cost, options=None).solve(x0, u_init)`` (module doc)."""

    def __init__(self, dynamics: DiscreteDynamics, cost: QuadraticCost,
                 options: ILQROptions | None = None) -> None:
        if (cost.nx, cost.nu) != (dynamics.nx, dynamics.nu):
            raise ValueError(f"the cost is for nx={cost.nx}, nu={cost.nu}; the dynamics have "
                             f"nx={dynamics.nx}, nu={dynamics.nu}")
        self.dynamics = dynamics
        self.cost = cost
        self.options = options or ILQROptions()

    def solve(self, x0: ArrayLike, u_init: ArrayLike) -> ILQRResult:
        """Optimise from the state ``x0`` (nx,) starting with the controls ``u_init`` (N, nu), clipped."""
        dyn, opt = self.dynamics, self.options
        x0 = np.asarray(x0, dtype=np.float64)
        U = np.clip(np.asarray(u_init, dtype=np.float64), dyn.u_lower, dyn.u_upper)
        if x0.shape != (dyn.nx,) or U.ndim != MATRIX_NDIM or U.shape[1] != dyn.nu or U.shape[0] < 1:
            raise ValueError(f"x0 must have shape ({dyn.nx},) and u_init (N >= 1, {dyn.nu}); got {x0.shape}, "
                             f"{U.shape}")
        if not (np.all(np.isfinite(x0)) and np.all(np.isfinite(U))):
            raise ValueError("x0 and u_init must be finite")
        X = rollout(dyn, x0, U)
        J = self.cost.total(X, U)
        history = [J]
        mu, delta = opt.mu_init, 1.0
        K = np.zeros((U.shape[0], dyn.nu, dyn.nx))
        d = np.zeros_like(U)
        status, iterations = "max_iterations", 0
        linearisation = None
        while iterations < opt.max_iterations:
            iterations += 1
            if linearisation is None:  # the trajectory changed: linearise it again
                linearisation = (*dyn.jacobians(X[:-1], U), self.cost.derivatives(X, U))
            backward = self._backward(*linearisation, U, d, mu)
            accepted = None
            if backward is not None:
                K, d = backward.K, backward.d
                if float(np.mean(np.max(np.abs(d) / (np.abs(U) + 1.0), axis=1))) < opt.gradient_tolerance \
                        and mu < opt.mu_min:
                    status = "converged"
                    break
                accepted = self._line_search(x0, X, U, K, d, J, backward.expected)
            if accepted is None:  # Q_uu + mu I not positive definite, or no step accepted
                mu, delta = self._increase(mu, delta)
                if mu > opt.mu_max:
                    status = "regularisation_limit"
                    break
                continue
            X, U, J_new = accepted
            linearisation = None
            reduction = J - J_new
            J = J_new
            history.append(J)
            mu, delta = self._decrease(mu, delta)
            if reduction < opt.cost_tolerance * max(abs(J), 1e-300):
                status = "converged"
                break
        if linearisation is None:  # the last step moved the trajectory: gains about the one returned
            K, d, mu = self._final_gains(X, U, d, mu)
        return ILQRResult(status=status, iterations=iterations, cost_history=history, x=X, u=U, K=K, d=d,
                          mu=mu)

    def _final_gains(self, X: np.ndarray, U: np.ndarray, d: np.ndarray,
                     mu: float) -> tuple[np.ndarray, np.ndarray, float]:
        """``K``, ``d`` of a backward pass about ``(X, U)``, ``mu`` raised until ``Q_uu + mu I`` is positive
        definite (at most to ``mu_max``; above it the gains are zero)."""
        linearisation = (*self.dynamics.jacobians(X[:-1], U), self.cost.derivatives(X, U))
        delta = 1.0
        while mu <= self.options.mu_max:
            backward = self._backward(*linearisation, U, d, mu)
            if backward is not None:
                return backward.K, backward.d, mu
            mu, delta = self._increase(mu, delta)
        return np.zeros((U.shape[0], self.dynamics.nu, self.dynamics.nx)), np.zeros_like(U), mu

    def _increase(self, mu: float, delta: float) -> tuple[float, float]:
        delta = max(self.options.mu_factor, delta * self.options.mu_factor)
        return max(self.options.mu_min, mu * delta), delta

    def _decrease(self, mu: float, delta: float) -> tuple[float, float]:
        delta = min(1.0 / self.options.mu_factor, delta / self.options.mu_factor)
        mu = mu * delta
        return (mu if mu > self.options.mu_min else 0.0), delta

    def _backward(self, fx: np.ndarray, fu: np.ndarray, c: CostDerivatives, U: np.ndarray, d_prev: np.ndarray,
                  mu: float) -> _BackwardPass | None:
        """Gains, feedforward, expected reduction; ``None`` when ``Q_uu + mu I`` is not positive definite."""
        dyn = self.dynamics
        n, nu, nx = U.shape[0], dyn.nu, dyn.nx
        K = np.zeros((n, nu, nx))
        d = np.zeros((n, nu))
        Vx, Vxx = c.phi_x, c.phi_xx
        linear = quadratic = 0.0
        reg = mu * np.eye(nu)
        for k in range(n - 1, -1, -1):
            A, B = fx[k], fu[k]
            Qx = c.lx[k] + A.T @ Vx
            Qu = c.lu[k] + B.T @ Vx
            VA, VB = Vxx @ A, Vxx @ B
            Qxx = c.lxx[k] + A.T @ VA
            Quu = c.luu + B.T @ VB
            Qux = B.T @ VA
            Quu = 0.5 * (Quu + Quu.T)
            qp = solve_box_qp(Quu + reg, Qu, dyn.u_lower - U[k], dyn.u_upper - U[k], d_prev[k])
            if qp is None:
                return None
            d[k] = qp.x
            if qp.free.any():
                K[k][qp.free] = -qp.H_free_inv @ Qux[qp.free]
            Kk, dk = K[k], d[k]
            linear += float(dk @ Qu)
            quadratic += 0.5 * float(dk @ Quu @ dk)
            Vx = Qx + Kk.T @ (Quu @ dk) + Kk.T @ Qu + Qux.T @ dk
            Vxx = Qxx + Kk.T @ Quu @ Kk + Kk.T @ Qux + Qux.T @ Kk
            Vxx = 0.5 * (Vxx + Vxx.T)
        return _BackwardPass(K=K, d=d, expected=(linear, quadratic))

    def _line_search(self, x0: np.ndarray, X: np.ndarray, U: np.ndarray, K: np.ndarray, d: np.ndarray,
                     J: float, expected: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, float] | None:
        dyn = self.dynamics
        for alpha in self.options.line_search:
            Xn = np.empty_like(X)
            Un = np.empty_like(U)
            Xn[0] = x0
            try:
                with np.errstate(over="ignore", invalid="ignore"):
                    for k in range(U.shape[0]):
                        Un[k] = np.clip(U[k] + alpha * d[k] + K[k] @ (Xn[k] - X[k]), dyn.u_lower, dyn.u_upper)
                        Xn[k + 1] = dyn.step(Xn[k], Un[k])
                    J_new = self.cost.total(Xn, Un)
            except (ArithmeticError, ValueError):  # the trial's states left the finite numbers
                continue
            if not (np.all(np.isfinite(Xn)) and np.isfinite(J_new)):
                continue
            predicted = -(alpha * expected[0] + alpha**2 * expected[1])
            if J_new < J and (predicted <= 0.0 or J - J_new >= self.options.armijo * predicted):
                return Xn, Un, J_new
        return None
