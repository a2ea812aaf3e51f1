"""Quadratic tracking and effort cost of Robot Dynamics Essential §4.1, (100)-(101), on a discrete trajectory:

    J = sum_{k<N} [ 1/2 |x_k - x_ref,k|^2_Q + 1/2 |u_k - u_ref,k|^2_W ] + 1/2 |x_N - x_goal|^2_Qf

with ``Q, Qf`` symmetric positive semi-definite and ``W`` symmetric positive definite (the text writes W
for the input weight). The running terms are summed over the knots, not multiplied by ``dt``.

State bounds ``x in [x_lower, x_upper]`` (the OCP's ``x in X``; e.g. the URDF's joint position and
velocity limits, ``state_bounds``) enter as the exterior penalty ``1/2 limit_weight |x - clip(x, x_lower,
x_upper)|^2`` on every knot x_0..x_N: zero inside the bounds, so a solution may overshoot a bound slightly;
tighten the bounds by a margin where the limit is hard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.control._inputs import MATRIX_NDIM

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.model import Model


def _weight(matrix: ArrayLike, size: int, name: str, definite: bool) -> np.ndarray:
    """``matrix`` (size, size) or its diagonal (size,), checked symmetric and PSD (PD if ``definite``)."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.shape == (size,):
        m = np.diag(m)
    if m.shape != (size, size) or not np.all(np.isfinite(m)):
        raise ValueError(f"{name} must be finite, ({size}, {size}) or its diagonal ({size},), "
                         f"got shape {m.shape}")
    if not np.allclose(m, m.T, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(m).max()))):
        raise ValueError(f"{name} must be symmetric")
    smallest = float(np.linalg.eigvalsh(m).min()) if size else 1.0
    if smallest < 0.0 or (definite and smallest <= 0.0):
        kind = "definite" if definite else "semi-definite"
        raise ValueError(f"{name} must be positive {kind}; its smallest eigenvalue is {smallest:.3g}")
    result: np.ndarray = 0.5 * (m + m.T)
    return result


def _reference(value: ArrayLike, size: int, rows: int | None, name: str) -> np.ndarray:
    """A reference (size,) held constant or one row per knot (rows, size); finite."""
    r = np.asarray(value, dtype=np.float64)
    if r.shape != (size,) and (rows is None or r.shape != (rows, size)):
        shapes = f"({size},)" + ("" if rows is None else f" or ({rows}, {size})")
        raise ValueError(f"{name} must have shape {shapes}, got {r.shape}")
    if not np.all(np.isfinite(r)):
        raise ValueError(f"{name} must be finite")
    return r


def state_bounds(model: Model, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(x_lower, x_upper)`` of ``x = (q, v)`` from the URDF: position limits moved inwards by ``margin``
    [rad or m] (never past each other) and ``|v| <= velocity`` limit; infinite where the URDF has none."""
    if not (np.isfinite(margin) and margin >= 0.0):
        raise ValueError(f"margin must be finite and >= 0, got {margin}")
    lower = np.array(model.lower_limit, dtype=np.float64)
    upper = np.array(model.upper_limit, dtype=np.float64)
    middle = np.where(np.isfinite(lower) & np.isfinite(upper), 0.5 * (lower + upper), 0.0)
    lower, upper = np.minimum(lower + margin, middle), np.maximum(upper - margin, middle)
    vmax = np.array(model.velocity_limit, dtype=np.float64)
    return np.concatenate([lower, -vmax]), np.concatenate([upper, vmax])


@dataclass(frozen=True)
class CostDerivatives:
    """Gradients and Hessians of the cost along a trajectory (``l_uu`` is constant; ``l_ux`` is zero)."""

    lx: np.ndarray  # (N, nx)
    lu: np.ndarray  # (N, nu)
    lxx: np.ndarray  # (N, nx, nx)
    luu: np.ndarray  # (nu, nu)
    phi_x: np.ndarray  # (nx,)
    phi_xx: np.ndarray  # (nx, nx)


class QuadraticCost:
    """``QuadraticCost(Q, W, Qf, x_goal, x_ref=None, u_ref=None, x_bounds=None, limit_weight=0.0)``
    (see the module doc).

    ``x_ref`` defaults to ``x_goal`` and ``u_ref`` to zero; either is one row (held) or one per running
    knot (N rows, N the horizon it is then tied to). ``x_bounds = (x_lower, x_upper)`` (nx,) each, with
    ``limit_weight > 0``; ``None`` for no bounds.
    """

    def __init__(self, Q: ArrayLike, W: ArrayLike, Qf: ArrayLike, x_goal: ArrayLike,
                 x_ref: ArrayLike | None = None, u_ref: ArrayLike | None = None,
                 x_bounds: tuple[ArrayLike, ArrayLike] | None = None, limit_weight: float = 0.0) -> None:
        W_ = np.asarray(W, dtype=np.float64)
        nu = W_.shape[0] if W_.ndim else 0
        x_goal = np.asarray(x_goal, dtype=np.float64)
        if x_goal.ndim != 1:
            raise ValueError(f"x_goal must be a vector, got shape {x_goal.shape}")
        self.nx, self.nu = x_goal.shape[0], nu
        self.Q = _weight(Q, self.nx, "Q", definite=False)
        self.W = _weight(W_, nu, "W", definite=True)
        self.Qf = _weight(Qf, self.nx, "Qf", definite=False)
        self.x_goal = _reference(x_goal, self.nx, None, "x_goal")
        x_ref = self.x_goal if x_ref is None else np.asarray(x_ref, dtype=np.float64)
        u_ref = np.zeros(nu) if u_ref is None else np.asarray(u_ref, dtype=np.float64)
        rows = next((r.shape[0] for r in (x_ref, u_ref) if r.ndim == MATRIX_NDIM), None)
        self.x_ref = _reference(x_ref, self.nx, rows, "x_ref")
        self.u_ref = _reference(u_ref, self.nu, rows, "u_ref")
        self.horizon = rows  # None: any horizon
        self.x_lower = np.full(self.nx, -np.inf)
        self.x_upper = np.full(self.nx, np.inf)
        self.limit_weight = float(limit_weight)
        if x_bounds is not None:
            lower, upper = (np.asarray(b, dtype=np.float64) for b in x_bounds)
            if lower.shape != (self.nx,) or upper.shape != (self.nx,) or np.isnan(lower).any() \
                    or np.isnan(upper).any() or np.any(lower > upper):
                raise ValueError(f"x_bounds must be two ({self.nx},) arrays with x_lower <= x_upper "
                                 "(+-inf allowed)")
            if not (np.isfinite(self.limit_weight) and self.limit_weight > 0.0):
                raise ValueError(f"limit_weight must be finite and > 0 with x_bounds, got {limit_weight}")
            self.x_lower, self.x_upper = lower, upper

    def _excess(self, X: np.ndarray) -> np.ndarray:
        """``x - clip(x, x_lower, x_upper)`` per knot: how far each state is outside its bounds."""
        result: np.ndarray = X - np.clip(X, self.x_lower, self.x_upper)
        return result

    def _errors(self, X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = U.shape[0]
        if X.shape != (n + 1, self.nx) or U.shape != (n, self.nu):
            raise ValueError(f"X, U must have shapes (N+1, {self.nx}), (N, {self.nu}); "
                             f"got {X.shape}, {U.shape}")
        if self.horizon is not None and n != self.horizon:
            raise ValueError(f"the references have {self.horizon} rows; the trajectory has N = {n} steps")
        return X[:-1] - self.x_ref, U - self.u_ref, X[-1] - self.x_goal

    def total(self, X: np.ndarray, U: np.ndarray) -> float:
        """``J`` of states ``X`` (N+1, nx) and controls ``U`` (N, nu)."""
        ex, eu, ef = self._errors(X, U)
        running = np.einsum("ki,ij,kj->", ex, self.Q, ex) + np.einsum("ki,ij,kj->", eu, self.W, eu)
        limits = self.limit_weight * float(np.sum(self._excess(X) ** 2))
        return 0.5 * float(running + ef @ self.Qf @ ef + limits)

    def derivatives(self, X: np.ndarray, U: np.ndarray) -> CostDerivatives:
        """First and second derivatives of ``J`` along ``(X, U)``."""
        ex, eu, ef = self._errors(X, U)
        excess = self.limit_weight * self._excess(X)
        outside = self.limit_weight * (excess != 0.0)
        lxx = self.Q + outside[:-1, :, None] * np.eye(self.nx)
        return CostDerivatives(lx=ex @ self.Q + excess[:-1], lu=eu @ self.W, lxx=lxx, luu=self.W,
                               phi_x=self.Qf @ ef + excess[-1], phi_xx=self.Qf + np.diag(outside[-1]))
