"""Box-constrained least-squares step ``min ½ δ^T H δ - g^T δ  s.t.  lower <= δ <= upper`` with OSQP.

Before calling OSQP, ``BoxQP.solve`` tries the active set the unconstrained minimizer suggests
(the bounds it violates, grown while the reduced solution violates more) and accepts that
closed-form solution only if it satisfies the KKT conditions of the QP (stationarity on the free
variables, multiplier signs on the bounded ones), i.e. only if it is the QP's optimum. Otherwise
OSQP solves the QP. Either way the result is the solution of the same QP.

The problem structure (dense upper triangle of H, identity constraint matrix) depends only on
the number of variables, so one OSQP workspace per size and thread is set up once and then
reused through ``update`` (new H values, g and bounds) and warm starts. Setting up costs about
0.4 ms, an update and solve some 20-50 µs.
"""

from __future__ import annotations

import threading

import numpy as np
import osqp
import scipy.sparse as sp
from numba import njit

FloatArray = np.ndarray

OSQP_SETTINGS = {
    "verbose": False,
    "eps_abs": 1e-7,
    "eps_rel": 1e-7,
    "max_iter": 4000,
    "polishing": True,  # exact active-set solution: the step lands on the limits, not 1e-6 off
    "warm_starting": True,
}
_ACCEPTED = ("solved", "solved inaccurate")
KKT_TOLERANCE = 1e-12
"""Relative tolerance on the KKT conditions of a closed-form active-set solution."""


class BoxQP:
    """OSQP workspace for box-constrained QPs of a fixed size n."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._upper_rows, self._upper_cols = np.triu_indices(n)
        order = np.lexsort((self._upper_rows, self._upper_cols))  # CSC order: by column, then row
        self._upper_rows, self._upper_cols = self._upper_rows[order], self._upper_cols[order]
        pattern = sp.csc_matrix((np.ones(order.size), (self._upper_rows, self._upper_cols)), shape=(n, n))
        self.closed_form_solves = 0
        self.osqp_solves = 0
        self._solver = osqp.OSQP()
        self._solver.setup(P=pattern, q=np.zeros(n), A=sp.identity(n, format="csc"),
                           l=-np.ones(n), u=np.ones(n), **OSQP_SETTINGS)

    def solve(self, H: FloatArray, g: FloatArray, lower: FloatArray, upper: FloatArray,
              unconstrained: FloatArray) -> FloatArray:
        """Minimizer of ``½ δ^T H δ - g^T δ`` over ``lower <= δ <= upper`` (H symmetric PSD).

        ``unconstrained``: the minimizer without bounds (``H δ = g``), used to guess the active
        set and to warm-start OSQP. The returned δ lies in the box exactly: OSQP's
        tolerance-level violations are removed by clipping. Raises ``RuntimeError`` when OSQP
        does not solve the problem.
        """
        if np.any(lower > upper):
            raise ValueError(f"empty box: lower {lower} exceeds upper {upper}")
        try:
            exact, guess = _active_set_solution(H, g, lower, upper, unconstrained)
        except np.linalg.LinAlgError:  # singular reduced H (Gauss-Newton, PSD H): OSQP decides
            exact, guess = False, unconstrained
        if exact:
            self.closed_form_solves += 1
            return guess
        self.osqp_solves += 1
        self._solver.update(Px=H[self._upper_rows, self._upper_cols], q=-g, l=lower, u=upper)
        self._solver.warm_start(x=np.clip(unconstrained, lower, upper))
        result = self._solver.solve(raise_error=False)  # the status is checked below
        status = result.info.status
        if status not in _ACCEPTED:
            raise RuntimeError(f"OSQP could not solve the IK step QP (status {status!r}, "
                               f"{result.info.iter} iterations); check that H is finite and the limits "
                               "consistent")
        return np.clip(result.x, lower, upper)


@njit(cache=True)
def _active_set_solution(H: np.ndarray, g: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                         unconstrained: np.ndarray) -> tuple[bool, np.ndarray]:
    """``(True, δ)`` if the bounds violated by ``unconstrained`` (grown as needed) are the QP's active set.

    ``(False, _)`` when the guess fails the KKT conditions: ``H δ - g`` zero on the free variables,
    >= 0 on those at their lower bound and <= 0 on those at their upper bound.
    """
    n = g.shape[0]
    at_lower = unconstrained < lower
    at_upper = unconstrained > upper
    x = np.empty(n)
    for _ in range(n):
        free = np.flatnonzero(~(at_lower | at_upper))
        fixed = np.flatnonzero(at_lower | at_upper)
        for i in range(n):
            x[i] = lower[i] if at_lower[i] else (upper[i] if at_upper[i] else 0.0)
        if free.shape[0] > 0:
            rhs = g[free] - H[free][:, fixed] @ x[fixed]
            x[free] = np.linalg.solve(H[free][:, free], rhs)
        grown = False
        for i in free:
            if x[i] < lower[i]:
                at_lower[i] = True
                grown = True
            elif x[i] > upper[i]:
                at_upper[i] = True
                grown = True
        if not grown:
            break
    else:
        return False, x
    gradient = H @ x - g
    tolerance = KKT_TOLERANCE * (np.max(np.abs(H)) * np.max(np.abs(x)) + np.max(np.abs(g)) + 1.0)
    for i in range(n):
        if at_lower[i]:
            if gradient[i] < -tolerance:
                return False, x
        elif at_upper[i]:
            if gradient[i] > tolerance:
                return False, x
        elif abs(gradient[i]) > tolerance:
            return False, x
    return True, x


_workspaces = threading.local()


def box_qp(n: int) -> BoxQP:
    """The calling thread's OSQP workspace for n variables (created on first use)."""
    cache = _workspaces.__dict__.setdefault("by_size", {})
    if n not in cache:
        cache[n] = BoxQP(n)
    return cache[n]
