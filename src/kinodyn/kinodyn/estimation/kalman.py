"""The compiled computations the two Kalman filters (``eskf``, ``invariant``) share: small matrix products
(also the covariance maps of ``legs.base_output``), the product of a sparse transition with the covariance,
and the gated stance update up to the correction.

The stance relation of a foot in contact, ``0 = d - p - C r``, linearised in either filter's error
(``layout`` module), has the Jacobian ``H = [-I at p, A at theta, I at d_k]``: the error-state EKF's
``A = C [r]x`` (Robot Dynamics Essential, §5.3), the right-invariant EKF's ``A = 0`` (Hartley et al. 2020,
§5.3). Given A per foot, the update is one computation (Robot Dynamics Essential, §5.1 and (113)): innovation
``nu = p + C r - d``, noise ``N = C Sigma C^T``, a per-foot chi-square gate on its 3-dof NIS, the used feet
stacked, ``K = P H^T S^-1`` by Cholesky and P by the Joseph form ``(I-KH) P (I-KH)^T + K N K^T``. What comes
after the correction (the ESKF's injection and reset, the invariant EKF's ``X <- Exp(dx) X``) is each
filter's own.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kinodyn.estimation.layout import NAV, P_, TH_


@njit(cache=True, inline="always")
def matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
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


@njit(cache=True)
def sparse_product(F: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``F P[:F.shape[1]]`` (F.shape[0] x P.shape[1]), skipping the zeros of F (a transition is mostly
    zeros)."""
    rows, inner, n = F.shape[0], F.shape[1], P.shape[1]
    B = np.zeros((rows, n))
    for i in range(rows):
        for k in range(inner):
            f = F[i, k]
            if f != 0.0:
                for j in range(n):
                    B[i, j] += f * P[k, j]
    return B


@njit(cache=True)
def stance_rows(P: np.ndarray, slot: int, A: np.ndarray, HP: np.ndarray) -> None:
    """``HP = H P`` (3 x n) for the stance Jacobian H (module doc) of the foot in state slot ``slot``."""
    d0 = NAV + 3 * slot
    for i in range(3):
        for j in range(P.shape[0]):
            HP[i, j] = (
                P[d0 + i, j]
                - P[P_ + i, j]
                + A[i, 0] * P[TH_, j]
                + A[i, 1] * P[TH_ + 1, j]
                + A[i, 2] * P[TH_ + 2, j]
            )


@njit(cache=True)
def times_stance_transpose(M: np.ndarray, slot: int, A: np.ndarray, out: np.ndarray, col: int) -> None:
    """``out[:, col:col+3] = M H^T`` for the stance Jacobian H (module doc) of the foot in ``slot``."""
    d0 = NAV + 3 * slot
    for i in range(M.shape[0]):
        for j in range(3):
            out[i, col + j] = (
                M[i, d0 + j]
                - M[i, P_ + j]
                + M[i, TH_] * A[j, 0]
                + M[i, TH_ + 1] * A[j, 1]
                + M[i, TH_ + 2] * A[j, 2]
            )


@njit(cache=True)
def stance_update(
    C: np.ndarray, p: np.ndarray, feet: np.ndarray, P: np.ndarray, positions: np.ndarray,
    covariances: np.ndarray, A: np.ndarray, gate: float, used: np.ndarray, nis_feet: np.ndarray,
) -> tuple[float, np.ndarray, np.ndarray]:
    """The gated stance update (module doc) of every foot in the state, in state order, measured at
    ``positions`` (IMU frame, ``covariances`` likewise), with H's angle blocks ``A`` (K x 3 x 3): a foot whose
    own 3-dof NIS (into ``nis_feet``) exceeds ``gate`` is left out (``used`` False), the others are applied
    together. Returns the NIS of the stacked innovation, the correction ``dx`` (n) and the Joseph-form
    covariance (n x n, not yet symmetrised); nan and empty arrays if no foot is used. P, the state and the
    inputs are left as they are."""
    n = P.shape[0]
    m = positions.shape[0]
    HP_all = np.empty((m, 3, n))
    N_all = np.empty((m, 3, 3))
    nu_all = np.empty((m, 3))
    S1 = np.empty((3, 3))
    count = 0
    for k in range(m):
        stance_rows(P, k, A[k], HP_all[k])
        N_all[k] = C @ covariances[k] @ C.T
        nu_all[k] = p + C @ positions[k] - feet[k]
        times_stance_transpose(HP_all[k], k, A[k], S1, 0)
        S1 += N_all[k]
        nis_feet[k] = nu_all[k] @ np.linalg.solve(S1, nu_all[k])
        used[k] = nis_feet[k] <= gate
        if used[k]:
            count += 1
    if count == 0:
        return np.nan, np.empty(0), np.empty((0, 0))
    rows = 3 * count
    HP = np.empty((rows, n))
    nu = np.empty(rows)
    Nm = np.zeros((rows, rows))
    order = np.empty(count, dtype=np.int64)
    c = 0
    for k in range(m):
        if used[k]:
            order[c] = k
            HP[3 * c : 3 * c + 3] = HP_all[k]
            nu[3 * c : 3 * c + 3] = nu_all[k]
            Nm[3 * c : 3 * c + 3, 3 * c : 3 * c + 3] = N_all[k]
            c += 1
    S = np.empty((rows, rows))
    for c in range(count):
        times_stance_transpose(HP, order[c], A[order[c]], S, 3 * c)
    S += Nm
    S = 0.5 * (S + S.T)
    L = np.linalg.cholesky(S)
    # K^T = S^-1 H P via the Cholesky factor
    Kt = np.linalg.solve(L.T, np.linalg.solve(L, HP))
    w = np.linalg.solve(L, nu)
    K = np.ascontiguousarray(Kt.T)
    # Joseph form with sparse H: M = P - K (H P); P <- M - (M H^T) K^T + K N K^T
    M = P - K @ HP
    MHt = np.empty((n, rows))
    for c in range(count):
        times_stance_transpose(M, order[c], A[order[c]], MHt, 3 * c)
    return float(w @ w), K @ nu, M - MHt @ Kt + (K @ Nm) @ Kt
