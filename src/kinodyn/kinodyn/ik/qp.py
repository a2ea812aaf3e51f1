"""Box-constrained step ``min ½ δ^T H δ - g^T δ  s.t.  lower <= δ <= upper``, H positive definite.

Primal active-set method for bound constraints (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
§16.5, Algorithm 16.3, specialised to simple bounds): start from the unconstrained minimizer
clipped into the box, with the clipped bounds as the working set; solve the equality-constrained
problem on the free variables (Cholesky of the reduced H); step towards its minimizer until a
bound blocks (that bound joins the working set); at the minimizer, release the bound whose
multiplier (the gradient component ``H δ - g``) has the wrong sign, or stop when none has: the
KKT conditions hold and δ is the QP's unique minimizer. Every iterate lies in the box, and the
objective never increases. For a strictly convex QP the method terminates after finitely many
steps; a cap of ``MAX_ACTIVE_SET_ITERATIONS`` working-set changes guards against cycling from
rounding, and the iterate it stops at is feasible.

Compiled, allocation-light, for the IK inner loop (``kinodyn.ik.descent``); ``solve_box_qp`` is
the checked Python entry point.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn.linalg import cholesky_solve

FloatArray = np.ndarray
MAX_ACTIVE_SET_ITERATIONS = 200
KKT_TOLERANCE = 1e-12
"""Relative size of a multiplier below which a bound is not released (rounding, not a descent)."""


@njit(cache=True)
def box_qp(H: np.ndarray, g: np.ndarray, lower: np.ndarray, upper: np.ndarray, unconstrained: np.ndarray,
           x: np.ndarray) -> bool:
    """Write the minimizer into ``x``; return whether the KKT conditions were reached (see module doc).

    ``unconstrained``: ``H^{-1} g``, the start of the method. ``lower <= upper`` is the caller's
    responsibility (``solve_box_qp`` checks it).
    """
    n = g.shape[0]
    state = np.zeros(n, dtype=np.int8)  # -1 at lower bound, +1 at upper bound, 0 free
    _clipped_start(unconstrained, lower, upper, x, state)
    A = np.empty((n, n))
    b = np.empty(n)
    free = np.empty(n, dtype=np.int64)
    scale = KKT_TOLERANCE * (np.max(np.abs(H)) + np.max(np.abs(g)) + 1.0)
    minimized = False  # x minimizes the objective with the working-set bounds fixed
    for _ in range(MAX_ACTIVE_SET_ITERATIONS):
        if minimized:
            release = _bound_to_release(H, g, x, state, scale)
            if release < 0:
                return True
            state[release] = 0
            minimized = False
            continue
        nf = _free_minimizer(H, g, x, state, free, A, b)
        blocking, bound = _step_towards(x, b, free, nf, lower, upper)
        if blocking < 0:
            minimized = True
        else:
            state[blocking] = bound
            x[blocking] = lower[blocking] if bound < 0 else upper[blocking]
    return False


@njit(cache=True)
def _clipped_start(unconstrained: np.ndarray, lower: np.ndarray, upper: np.ndarray, x: np.ndarray,
                   state: np.ndarray) -> None:
    """``x``: the unconstrained minimizer clipped into the box; the clipped bounds form the working set."""
    for i in range(x.shape[0]):
        if unconstrained[i] <= lower[i]:
            x[i], state[i] = lower[i], -1
        elif unconstrained[i] >= upper[i]:
            x[i], state[i] = upper[i], 1
        else:
            x[i] = unconstrained[i]


@njit(cache=True)
def _bound_to_release(H: np.ndarray, g: np.ndarray, x: np.ndarray, state: np.ndarray, scale: float) -> int:
    """The working-set bound whose multiplier is the most negative (below the tolerance), or -1."""
    n = g.shape[0]
    release, worst = -1, -scale * (1.0 + np.max(np.abs(x)))
    for i in range(n):
        if state[i] != 0:
            gradient = -g[i]
            for k in range(n):
                gradient += H[i, k] * x[k]
            multiplier = gradient * state[i] * -1.0  # >= 0 at an optimal bound
            if multiplier < worst:
                release, worst = i, multiplier
    return release


@njit(cache=True)
def _free_minimizer(H: np.ndarray, g: np.ndarray, x: np.ndarray, state: np.ndarray, free: np.ndarray,
                    A: np.ndarray, b: np.ndarray) -> int:
    """The minimizer over the free variables (working-set bounds fixed) into ``b[:nf]``, their indices into
    ``free[:nf]``; returns ``nf``."""
    n = g.shape[0]
    nf = 0
    for i in range(n):
        if state[i] == 0:
            free[nf] = i
            nf += 1
    for a in range(nf):
        i = free[a]
        s = g[i]
        for k in range(n):
            if state[k] != 0:
                s -= H[i, k] * x[k]
        b[a] = s
        for c in range(a + 1):
            A[a, c] = H[i, free[c]]
    cholesky_solve(A, b, nf)
    return nf


@njit(cache=True)
def _step_towards(x: np.ndarray, b: np.ndarray, free: np.ndarray, nf: int, lower: np.ndarray,
                  upper: np.ndarray) -> tuple[int, int]:
    """Move the free variables towards their minimizer ``b`` until a bound blocks; returns the blocking
    variable and its bound (-1 lower, +1 upper), or (-1, 0) when the full step is taken."""
    step, blocking, bound = 1.0, -1, 0
    for a in range(nf):
        i = free[a]
        p = b[a] - x[i]
        if p < 0.0 and x[i] + p < lower[i]:
            ratio = (lower[i] - x[i]) / p
            if ratio < step:
                step, blocking, bound = ratio, i, -1
        elif p > 0.0 and x[i] + p > upper[i]:
            ratio = (upper[i] - x[i]) / p
            if ratio < step:
                step, blocking, bound = ratio, i, 1
    for a in range(nf):
        i = free[a]
        x[i] = b[a] if blocking < 0 else x[i] + step * (b[a] - x[i])
        x[i] = min(max(x[i], lower[i]), upper[i])
    return blocking, bound


def solve_box_qp(H: FloatArray, g: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """Minimizer of ``½ δ^T H δ - g^T δ`` over ``lower <= δ <= upper`` (H symmetric positive definite).

    Raises ``ValueError`` for an empty box or non-finite H, g, and ``RuntimeError`` when the
    active-set method does not reach the KKT conditions.
    """
    H, g = np.ascontiguousarray(H, dtype=float), np.ascontiguousarray(g, dtype=float)
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if np.any(lower > upper):
        raise ValueError(f"empty box: lower {lower} exceeds upper {upper}")
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(g))):
        raise ValueError("H and g must be finite")
    x = np.empty_like(g)
    if not box_qp(H, g, lower, upper, np.linalg.solve(H, g), x):
        raise RuntimeError(f"the box QP active-set method did not converge in {MAX_ACTIVE_SET_ITERATIONS} "
                           "working-set changes; check that H is well conditioned")
    return x
