"""Perfectly inelastic impulses for unilateral velocity constraints (hard contacts, joint limits).

Robot Dynamics lecture notes (ETH) §3.7.3, (3.65)-(3.69): at an impact ``M (u+ - u-) = J^T λ`` (λ: impulse
on the robot) and
the constrained velocity becomes zero, ``λ = -Λ J u-`` with ``Λ = (J M^-1 J^T)^-1``, so
``Δu = -M^-1 J^T Λ J u-``. With several one-sided rows (a ground contact can push, not pull; a joint
limit stops motion in one direction only) the impulse solves the linear complementarity problem

    w = A λ + b >= 0,  λ >= 0,  λ·w = 0,   A = G M^-1 G^T,  b = G u-,

where each row of G is oriented so that ``G u >= 0`` is the admissible (separating) side. With
``M = R^T R`` and ``B = R^-T G^T`` (so ``A = B^T B``, ``b = B^T R u-``) these are the optimality
conditions of the non-negative least-squares problem ``min ||B λ + R u-||`` over ``λ >= 0`` (the
kinetic energy of ``u+``, Gauss's principle), solved exactly by ``scipy.optimize.nnls``, also when
rows are dependent; when every row is active it reduces to the notes' formula.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.optimize


def inelastic_impulse(M: np.ndarray, G: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Δu, λ)`` for rows ``G`` (k x nv, admissible side ``G u >= 0``) at pre-impact velocity ``u``."""
    R = np.linalg.cholesky(M).T
    B = scipy.linalg.solve_triangular(R, G.T, trans="T")
    lam, _ = scipy.optimize.nnls(B, -(R @ u))
    return scipy.linalg.solve_triangular(R, B @ lam), lam
