"""Compiled dense linear algebra shared by the kernels: views of flat blocks, and a Cholesky solve.

``rows_view`` / ``matrices_view`` view part of a flat float64 block as rows or 3x3 matrices with
``as_strided`` (numba's ``reshape`` calls a C helper, ~15 ns per view); ``work_block`` is a kernel's scratch
taken from a ``kinodyn.data.Data`` or, for the calls without one, allocated.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

NO_WORK = np.empty(0)  # the work block of the calls without a Data: ``work_block`` allocates


@njit(cache=True, inline="always")
def rows_view(kf: np.ndarray, start: int, n: int, width: int) -> np.ndarray:
    """``kf[start:start + n * width]`` viewed as (n, width) (``as_strided``: numba's ``reshape``
    calls a C helper, ~15 ns per view)."""
    return as_strided(kf[start:start + n * width], shape=(n, width), strides=(8 * width, 8))


@njit(cache=True, inline="always")
def matrices_view(kf: np.ndarray, start: int, n: int) -> np.ndarray:
    """``kf[start:start + 9 n]`` viewed as (n, 3, 3)."""
    return as_strided(kf[start:start + 9 * n], shape=(n, 3, 3), strides=(72, 24, 8))


@njit(cache=True, inline="always")
def work_block(work: np.ndarray, size: int) -> np.ndarray:
    """``work[:size]``, or a new block of ``size`` entries when ``work`` is empty (a call without a Data).

    Raises when ``work`` is neither empty nor large enough (a Data of another model).
    """
    if work.shape[0] == 0:
        return np.empty(size)
    if work.shape[0] < size:
        raise ValueError("the Data's work block is too small for this model; create the Data from this model")
    return work[:size]


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
