"""Inverse differential kinematics: pseudo-inverses, null-space projection, multi-task velocity control.

Robot Dynamics lecture notes (ETH), §2.9.1-§2.9.2, (2.193)-(2.207). A task is a pair ``(J_i, w_i*)`` (2.200):
a Jacobian (m_i x n) and the desired task velocity (m_i,). Every function returns the generalized velocity
``q̇`` (n,) or an n-column matrix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from collections.abc import Sequence

FloatArray = np.ndarray
Task = tuple[ArrayLike, ArrayLike]

SINGULAR_VALUE_TOLERANCE = 1e-10
"""Singular values below this fraction of the largest are treated as zero in the pseudo-inverse."""
MATRIX_NDIM = 2


def _as_matrix(J: ArrayLike, name: str = "J") -> FloatArray:
    J = np.asarray(J, dtype=float)
    if J.ndim != MATRIX_NDIM:
        raise ValueError(f"{name} must be a 2-D matrix (rows = task coordinates), got shape {J.shape}")
    return J


def _as_task(task: Task, n: int | None) -> tuple[FloatArray, FloatArray]:
    J = _as_matrix(task[0])
    w = np.asarray(task[1], dtype=float).reshape(-1)
    if w.shape[0] != J.shape[0]:
        raise ValueError(f"task velocity has {w.shape[0]} entries but its Jacobian has {J.shape[0]} rows")
    if n is not None and J.shape[1] != n:
        raise ValueError(f"all task Jacobians need the same number of columns: got {J.shape[1]} and {n}")
    return J, w


def pseudo_inverse(J: ArrayLike, tolerance: float = SINGULAR_VALUE_TOLERANCE) -> FloatArray:
    """Moore-Penrose pseudo-inverse ``J^+`` by SVD (Robot Dynamics lecture notes (ETH), §2.9.1, (2.194),
    (2.196)).

    Singular values below ``tolerance * sigma_max`` count as zero, so at a singularity
    (rank J < m) ``J^+ w`` minimizes ``|w - J q̇|²`` and, among those, ``|q̇|²``.
    """
    return np.linalg.pinv(_as_matrix(J), rtol=tolerance)


def damped_pseudo_inverse(J: ArrayLike, damping: float) -> FloatArray:
    """Damped least-squares inverse ``J^T (J J^T + λ² I)^{-1}`` (Robot Dynamics lecture notes (ETH), §2.9.1,
    (2.195)).

    The notes print ``- λ² I``; the sign is ``+`` (an erratum of the text): the result
    minimizes ``|w - J q̇|² + λ² |q̇|²``, which is finite for every J when ``λ > 0``.
    """
    J = _as_matrix(J)
    if not damping > 0.0:
        raise ValueError(f"damping must be positive, got {damping}; use pseudo_inverse for λ = 0")
    JJt = J @ J.T
    JJt[np.diag_indices_from(JJt)] += damping * damping
    inverse: FloatArray = np.linalg.solve(JJt, J).T
    return inverse


def weighted_pseudo_inverse(J: ArrayLike, weights: ArrayLike,
                            tolerance: float = SINGULAR_VALUE_TOLERANCE) -> FloatArray:
    """Weighted pseudo-inverse ``(J^T W J)^{-1} J^T W``, ``W = diag(weights)`` (Robot Dynamics lecture notes
    (ETH), §2.9.2, (2.202)).

    ``J^{+W} w`` minimizes ``|W^{1/2} (w - J q̇)|²``. Computed as ``(W^{1/2} J)^+ W^{1/2}``, which
    equals (2.202) when J has full column rank and stays defined (minimum-norm) when it does not.
    """
    J = _as_matrix(J)
    weights = np.asarray(weights, dtype=float).reshape(-1)
    if weights.shape[0] != J.shape[0] or np.any(weights < 0.0):
        raise ValueError(f"weights must be {J.shape[0]} non-negative numbers (one per row of J), "
                         f"got {weights}")
    root = np.sqrt(weights)
    inverse: FloatArray = pseudo_inverse(root[:, None] * J, tolerance) * root[None, :]
    return inverse


def null_space_projector(J: ArrayLike, tolerance: float = SINGULAR_VALUE_TOLERANCE) -> FloatArray:
    """``N = I - J^+ J`` with ``J N = 0`` (Robot Dynamics lecture notes (ETH), §2.9.1, (2.197)-(2.199))."""
    J = _as_matrix(J)
    N: FloatArray = np.eye(J.shape[1]) - pseudo_inverse(J, tolerance) @ J
    return N


def equal_priority_velocity(tasks: Sequence[Task], weights: ArrayLike | None = None,
                            tolerance: float = SINGULAR_VALUE_TOLERANCE) -> FloatArray:
    """Multi-task control with equal priority: ``q̇ = J̄^+ w̄`` of the stacked tasks (Robot Dynamics lecture
    notes (ETH), §2.9.2, (2.201)).

    ``weights`` (one per stacked row) selects the weighted pseudo-inverse (2.202) instead.
    """
    if not tasks:
        raise ValueError("equal_priority_velocity needs at least one (J, w) task")
    first_J, _ = _as_task(tasks[0], None)
    stacked = [_as_task(task, first_J.shape[1]) for task in tasks]
    J = np.vstack([J for J, _ in stacked])
    w = np.concatenate([w for _, w in stacked])
    inverse = (pseudo_inverse(J, tolerance) if weights is None
               else weighted_pseudo_inverse(J, weights, tolerance))
    velocity: FloatArray = inverse @ w
    return velocity


def prioritized_velocity(tasks: Sequence[Task], tolerance: float = SINGULAR_VALUE_TOLERANCE) -> FloatArray:
    """Strict priorities by recursive null-space projection, highest first (Robot Dynamics lecture notes
    (ETH), §2.9.2, (2.207)).

    ``q̇ = Σ_i N̄_i q̇_i`` with ``q̇_i = (J_i N̄_i)^+ (w_i* - J_i Σ_{k<i} N̄_k q̇_k)`` and ``N̄_i`` the
    null-space projector of the stack ``[J_1; ...; J_{i-1}]`` (``N̄_1 = I``). Lower-priority tasks
    act only in the null space of the higher ones, so they never change ``J_k q̇`` for k < i.
    """
    if not tasks:
        raise ValueError("prioritized_velocity needs at least one (J, w) task")
    first_J, _ = _as_task(tasks[0], None)
    n = first_J.shape[1]
    qdot = np.zeros(n)
    projector = np.eye(n)
    stack: list[FloatArray] = []
    for task in tasks:
        J, w = _as_task(task, n)
        JN = J @ projector
        qdot += projector @ (pseudo_inverse(JN, tolerance) @ (w - J @ qdot))
        stack.append(J)
        projector = null_space_projector(np.vstack(stack), tolerance)
    return qdot
