"""Compiled leg kinematics of the legged estimator: every foot in the IMU frame with its encoder covariance
and orientation, in one pass (Robot Dynamics Essential, §5.3 (115);
``kinodyn.estimation.legs.LegKinematics``), and the rolling-foot correction of a stance foot's position
(``roll_back``; docs/estimation.md "Rolling feet")."""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn._kernels.common import unpack
from kinodyn._kernels.kinematics import _walk_up, rotation_log


@njit(cache=True)
def feet_in_imu(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frames: np.ndarray, C_IB: np.ndarray,
                r_BI: np.ndarray, first_column: int, variance: float, J: np.ndarray, out: np.ndarray) -> None:
    """Row k of ``out`` (K x 21) = foot ``frames[k]``: its position ``C_IB (r_BF - r_BI)`` in the IMU frame,
    then the row-major 3x3 covariance ``variance * J_I J_I^T`` with ``J_I = C_IB C_BF J_local[:3, first:]``
    (the leg Jacobian of the foot origin in IMU axes over the joint columns ``first_column:``), then the
    row-major foot orientation ``C_IF = C_IB C_BF``.

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
        for a in range(3):
            for b in range(3):
                row[12 + 3 * a + b] = M[a, b]


@njit(cache=True)
def roll_back(C: np.ndarray, fk: np.ndarray, feet: np.ndarray, radii: np.ndarray, touchdown: np.ndarray
              ) -> None:
    """Move each foot ``feet[k]`` (rows of ``fk``, ``feet_in_imu``) from its sphere's centre to the point
    that stays fixed while the sphere rolls: ``r -= C^T rho (phi x n)``, ``phi = Log(C C_IF touchdown^T)``
    (world rotation of the foot since ``touchdown``, its ``C_WF`` then), ``n = e_z``, ``rho = radii``;
    feet of radius 0 are left as they are. ``C`` = ``C_WI``."""
    R = np.empty((3, 3))
    for k in range(feet.shape[0]):
        f = feet[k]
        rho = radii[f]
        if rho == 0.0:
            continue
        row = fk[f]
        T = touchdown[f]
        for a in range(3):  # R = C C_IF T^T
            for b in range(3):
                s = 0.0
                for c in range(3):
                    s += (C[a, 0] * row[12 + c] + C[a, 1] * row[15 + c] + C[a, 2] * row[18 + c]) * T[b, c]
                R[a, b] = s
        phi = rotation_log(R)
        d0, d1 = rho * phi[1], -rho * phi[0]  # rho (phi x e_z), world; its z is 0
        for a in range(3):
            row[a] -= C[0, a] * d0 + C[1, a] * d1


@njit(cache=True, inline="always")
def _mm(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A @ B`` by loops (small matrices, any layout)."""
    n, k, m = A.shape[0], A.shape[1], B.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            s = 0.0
            for t in range(k):
                s += A[i, t] * B[t, j]
            out[i, j] = s
    return out


@njit(cache=True, inline="always")
def _skew(x: np.ndarray) -> np.ndarray:
    out = np.zeros((3, 3))
    out[0, 1], out[0, 2], out[1, 2] = -x[2], x[1], -x[0]
    out[1, 0], out[2, 0], out[2, 1] = x[2], -x[1], x[0]
    return out


@njit(cache=True, inline="always")
def _quaternion(m: np.ndarray, out: np.ndarray) -> None:
    """``out`` = (x, y, z, w) of the rotation ``m``, ``w >= 0``, normalised: Shepperd's method, as
    ``kinodyn.spatial.matrix_to_quat``."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    pivot, best = 3, trace
    for a in range(3):
        if m[a, a] > best:
            pivot, best = a, m[a, a]
    if pivot == 3:
        s = 2.0 * np.sqrt(max(1.0 + trace, 0.0))
        x, y, z, w = (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s
    elif pivot == 0:
        s = 2.0 * np.sqrt(max(1.0 + 2.0 * m[0, 0] - trace, 0.0))
        x, y, z, w = 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s
    elif pivot == 1:
        s = 2.0 * np.sqrt(max(1.0 + 2.0 * m[1, 1] - trace, 0.0))
        x, y, z, w = (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s
    else:
        s = 2.0 * np.sqrt(max(1.0 + 2.0 * m[2, 2] - trace, 0.0))
        x, y, z, w = (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s
    sign = -1.0 if w < 0.0 else 1.0
    n = sign / np.sqrt(x * x + y * y + z * z + w * w)
    out[0], out[1], out[2], out[3] = x * n, y * n, z * n, w * n


@njit(cache=True)
def base_output(C: np.ndarray, p: np.ndarray, v: np.ndarray, w: np.ndarray, P: np.ndarray, C_BI: np.ndarray,
                u: np.ndarray, gyro_variance: float, out: np.ndarray) -> None:
    """The published base state from the IMU state (``ImuExtrinsics.base_output``), into ``out`` (85,):
    position p_B = p - C u (3), quaternion of C_WB = C C_BI^T (4), base-frame linear velocity
    C_BI (C^T v + u x w) (3) and angular velocity C_BI w (3), then the row-major 6x6 pose and twist
    covariances J P J^T (+ the gyro white noise for the twist), symmetrised; the Jacobians are those of
    ``ImuExtrinsics.output_jacobians``."""
    CT = C.T
    ctv = np.zeros(3)  # C^T v
    a = np.zeros(3)  # C^T v + u x w
    cross = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
    for i in range(3):
        ctv[i] = CT[i, 0] * v[0] + CT[i, 1] * v[1] + CT[i, 2] * v[2]
        a[i] = ctv[i] + cross[i]
    for i in range(3):
        out[i] = p[i] - (C[i, 0] * u[0] + C[i, 1] * u[1] + C[i, 2] * u[2])
        out[7 + i] = C_BI[i, 0] * a[0] + C_BI[i, 1] * a[1] + C_BI[i, 2] * a[2]
        out[10 + i] = C_BI[i, 0] * w[0] + C_BI[i, 1] * w[1] + C_BI[i, 2] * w[2]
    _quaternion(_mm(C, C_BI.T), out[3:7])
    noise = np.zeros((6, 3))  # twist Jacobian of the gyro bias and of its white noise
    noise[:3] = -_mm(C_BI, _skew(u))
    noise[3:] = -C_BI
    Jp = np.zeros((6, 15))
    Jt = np.zeros((6, 15))
    Cs = _mm(C, _skew(u))
    C_BI_CT = _mm(C_BI, CT)
    C_BI_sv = _mm(C_BI, _skew(ctv))
    for i in range(3):
        Jp[i, i] = 1.0
        for j in range(3):
            Jp[i, 6 + j] = Cs[i, j]
            Jp[3 + i, 6 + j] = C[i, j]
            Jt[i, 3 + j] = C_BI_CT[i, j]
            Jt[i, 6 + j] = C_BI_sv[i, j]
    for i in range(6):
        for j in range(3):
            Jt[i, 12 + j] = noise[i, j]
    pose = _mm(_mm(Jp, P), Jp.T)
    twist = _mm(_mm(Jt, P), Jt.T)
    gyro = _mm(noise, noise.T)
    for i in range(6):
        for j in range(6):
            out[13 + 6 * i + j] = 0.5 * (pose[i, j] + pose[j, i])
            out[49 + 6 * i + j] = 0.5 * (twist[i, j] + twist[j, i]
                                         + gyro_variance * (gyro[i, j] + gyro[j, i]))
