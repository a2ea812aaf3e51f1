"""Box-constrained QP ``min 1/2 x^T H x + g^T x  s.t.  lower <= x <= upper`` by projected Newton.

The step of the control-limited backward pass (Tassa, Mansard and Todorov 2014, "Control-limited
differential dynamic programming"; Bertsekas 1982): a coordinate is *clamped* when it sits on a bound and
the gradient pushes it outwards; a Newton step on the *free* coordinates (the clamped ones held), projected
onto the box with an Armijo backtracking search, repeats until the free gradient vanishes or the free set
and the point stop changing. When the unconstrained minimiser lies in the box it is the answer at once.
``H`` must be symmetric positive definite (the caller regularises it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_ITERATIONS = 100
GRADIENT_TOLERANCE = 1e-10  # on |grad_free|, relative to max(1, |g|)
ARMIJO = 0.1  # sufficient decrease, fraction of the directional derivative along the projected step
BACKTRACK = 0.5
MIN_STEP = 1e-12


@dataclass(frozen=True)
class BoxQPSolution:
    """``x``; ``free`` (bool per coordinate); ``H_free_inv`` = inverse of ``H`` on the free coordinates."""

    x: np.ndarray
    free: np.ndarray
    H_free_inv: np.ndarray


def _clamped(x: np.ndarray, grad: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    return ((x <= lower) & (grad > 0.0)) | ((x >= upper) & (grad < 0.0))


def solve_box_qp(H: np.ndarray, g: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                 x0: np.ndarray) -> BoxQPSolution | None:
    """The minimiser, searched from the start ``x0`` (projected onto the box); ``None`` when ``H`` is not
    positive definite (the caller raises its regularisation)."""
    try:
        L_inv = np.linalg.inv(np.linalg.cholesky(H))
    except np.linalg.LinAlgError:
        return None
    H_inv = L_inv.T @ L_inv
    unconstrained = -(H_inv @ g)
    if np.all((unconstrained >= lower) & (unconstrained <= upper)):
        return BoxQPSolution(x=unconstrained, free=np.ones(g.shape[0], dtype=bool), H_free_inv=H_inv)
    x = np.clip(x0, lower, upper)
    tolerance = GRADIENT_TOLERANCE * max(1.0, float(np.abs(g).max(initial=0.0)))

    def value(y: np.ndarray) -> float:
        return float(0.5 * y @ H @ y + g @ y)

    for _ in range(MAX_ITERATIONS):
        grad = g + H @ x
        free = ~_clamped(x, grad, lower, upper)
        if not free.any() or float(np.abs(grad[free]).max()) <= tolerance:
            break
        step = np.zeros_like(x)
        step[free] = -np.linalg.solve(H[np.ix_(free, free)], grad[free])  # principal block of a PD matrix
        f0, t = value(x), 1.0
        while True:
            trial = np.clip(x + t * step, lower, upper)
            if value(trial) <= f0 + ARMIJO * float(grad @ (trial - x)) or t < MIN_STEP:
                break
            t *= BACKTRACK
        if t < MIN_STEP or np.array_equal(trial, x):
            break
        x = trial
    free = ~_clamped(x, g + H @ x, lower, upper)
    return BoxQPSolution(x=x, free=free, H_free_inv=np.linalg.inv(H[np.ix_(free, free)]))
