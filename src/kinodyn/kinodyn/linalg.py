"""Compiled dense linear algebra shared by the dynamics, inverse-kinematics and simulator kernels."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_solve(A: np.ndarray, b: np.ndarray, n: int) -> None:
    """Solve ``A[:n, :n] x = b[:n]`` for symmetric positive definite A, of which only the lower triangle
    is read; it is overwritten by the Cholesky factor, b by x. Raises if A is not positive definite."""
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            raise ValueError("matrix is not positive definite (a body or subtree without mass or inertia?)")
        d = np.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= A[i, k] * b[k]
        b[i] = s / A[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= A[k, i] * b[k]
        b[i] = s / A[i, i]
