"""Compiled leg kinematics of the legged estimator: every foot in the IMU frame with its encoder covariance,
in one pass (seed 003 §5.3 (115); ``kinodyn.estimation.legs.LegKinematics``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn._kernels.common import unpack
from kinodyn._kernels.kinematics import _walk_up


@njit(cache=True)
def feet_in_imu(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frames: np.ndarray, C_IB: np.ndarray,
                r_BI: np.ndarray, first_column: int, variance: float, J: np.ndarray, out: np.ndarray) -> None:
    """Row k of ``out`` (K x 12) = foot ``frames[k]``: its position ``C_IB (r_BF - r_BI)`` in the IMU frame,
    then the row-major 3x3 covariance ``variance * J_I J_I^T`` with ``J_I = C_IB C_BF J_local[:3, first:]``
    (the leg Jacobian of the foot origin in IMU axes over the joint columns ``first_column:``).

    ``q`` places the base at the origin (identity orientation), so world = base coordinates; ``J`` (6 x nv)
    is scratch. ``_walk_up`` gives the foot placement ``(C_BF, d)`` and its LOCAL Jacobian.
    """
    md = unpack(ki, kf)
    nv = J.shape[1]
    M = np.empty((3, 3))
    JI = np.empty((3, nv))
    for k in range(frames.shape[0]):
        J[:, :] = 0.0
        C, d = _walk_up(md, q, frames[k], True, J)
        for a in range(3):  # M = C_IB C_BF
            for b in range(3):
                M[a, b] = C_IB[a, 0] * C[b] + C_IB[a, 1] * C[3 + b] + C_IB[a, 2] * C[6 + b]
        row = out[k]
        e0, e1, e2 = d[0] - r_BI[0], d[1] - r_BI[1], d[2] - r_BI[2]
        for a in range(3):
            row[a] = C_IB[a, 0] * e0 + C_IB[a, 1] * e1 + C_IB[a, 2] * e2
            for c in range(first_column, nv):
                JI[a, c] = M[a, 0] * J[0, c] + M[a, 1] * J[1, c] + M[a, 2] * J[2, c]
        for a in range(3):
            for b in range(a, 3):
                s = 0.0
                for c in range(first_column, nv):
                    s += JI[a, c] * JI[b, c]
                row[3 + 3 * a + b] = row[3 + 3 * b + a] = variance * s
