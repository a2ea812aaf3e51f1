"""Compiled steps of the right-invariant EKF with biases (Hartley et al. IJRR 2020; estimation.invariant).

Error layout ``[xi_p, xi_v, xi_theta, db_a, db_g, xi_d1 .. xi_dK]`` (n = 15 + 3K), right-invariant
``X_true = Exp(xi) X``. Every function works in place on caller-owned arrays; P is n x n, C-contiguous.
``biases`` is ``[b_a, b_g]`` (6), ``feet`` is (K, 3) world positions.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kinodyn._kernels.common import skew
from kinodyn.spatial.lie import SMALL_ANGLE

NAV = 15
"""Size of ``[xi_p, xi_v, xi_theta, db_a, db_g]``."""
P_, V_, TH_, BA_, BG_ = 0, 3, 6, 9, 12
"""First index of each navigation block."""


@njit(cache=True)
def so3_exp_left_jacobian(phi: np.ndarray, E: np.ndarray, J: np.ndarray) -> None:
    """``E = Exp(phi) = I + a K + b K^2`` and ``J = J_l(phi) = I + b K + c K^2`` (K = [phi]x,
    a = sin t / t, b = (1 - cos t) / t^2, c = (t - sin t) / t^3; Robot Dynamics lecture notes (ETH), (2.48),
    (2.106)), the coefficients by their Taylor series below SMALL_ANGLE (truncation below 1e-16 there, as in
    kinodyn.spatial.lie)."""
    t2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    if t2 < SMALL_ANGLE * SMALL_ANGLE:
        a = 1.0 - t2 / 6.0 + t2 * t2 / 120.0
        b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
        c = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    else:
        t = math.sqrt(t2)
        a = math.sin(t) / t
        b = (1.0 - math.cos(t)) / t2
        c = (t - math.sin(t)) / (t2 * t)
    K = np.empty((3, 3))
    skew(phi, K)
    for i in range(3):
        for j in range(3):
            K2 = K[i, 0] * K[0, j] + K[i, 1] * K[1, j] + K[i, 2] * K[2, j]
            E[i, j] = a * K[i, j] + b * K2
            J[i, j] = b * K[i, j] + c * K2
        E[i, i] += 1.0
        J[i, i] += 1.0


@njit(cache=True)
def _minus_cross(x: np.ndarray, M: np.ndarray, out: np.ndarray, row: int, col: int) -> None:
    """``out[row:row+3, col:col+3] = -[x]x M``."""
    for j in range(3):
        out[row, col + j] = x[2] * M[1, j] - x[1] * M[2, j]
        out[row + 1, col + j] = x[0] * M[2, j] - x[2] * M[0, j]
        out[row + 2, col + j] = x[1] * M[0, j] - x[0] * M[1, j]


@njit(cache=True)
def propagate(
    C: np.ndarray,
    p: np.ndarray,
    v: np.ndarray,
    biases: np.ndarray,
    feet: np.ndarray,
    P: np.ndarray,
    omega_m: np.ndarray,
    accel_m: np.ndarray,
    dt: float,
    gravity: np.ndarray,
    noise: np.ndarray,
    Phi: np.ndarray,
) -> None:
    """One IMU step: the nominal strapdown step (Robot Dynamics Essential, (110)) of C, p, v, then
    ``P <- Phi P Phi^T + Q`` with ``Phi`` (into the caller's n x n ``Phi``) the Jacobian of the discrete
    step with respect to ``[xi, db]``:

    - bias-free part ``expm(A dt)`` (Hartley §3.2: ``A_v,theta = [g]x``, ``A_p,v = I``, nilpotent, exact);
    - ``d xi_theta+/d db_g = -M``, ``M = C J_l(w dt) dt``; ``d xi_x+/d db_g = -[x+]x M`` for x = p, v, d_k at
      the end of the step; ``d xi_v+/d db_a = -C dt``, ``d xi_p+/d db_a = -C dt^2/2``;
    - ``Q = s_a^2/dt c_a c_a^T + s_g^2/dt c_g c_g^T + diag(rw^2 dt)``: white IMU noise held over the step
      enters through the bias columns ``c_a``, ``c_g``; bias and foot random walks additively.

    ``noise`` = densities ``[s_a, s_g, s_ba, s_bg, s_foot]``.
    """
    n = P.shape[0]
    nfeet = feet.shape[0]
    phi = np.empty(3)
    f = np.empty(3)
    for i in range(3):
        phi[i] = (omega_m[i] - biases[3 + i]) * dt
        f[i] = accel_m[i] - biases[i]
    E = np.empty((3, 3))
    J = np.empty((3, 3))
    so3_exp_left_jacobian(phi, E, J)
    M = C @ J * dt
    acc = C @ f + gravity
    for i in range(3):
        p[i] += v[i] * dt + 0.5 * acc[i] * dt * dt
        v[i] += acc[i] * dt
    # Phi
    Phi[:, :] = 0.0
    for i in range(n):
        Phi[i, i] = 1.0
    G = np.empty((3, 3))
    skew(gravity, G)
    for i in range(3):
        Phi[P_ + i, V_ + i] = dt
        for j in range(3):
            Phi[P_ + i, TH_ + j] = 0.5 * dt * dt * G[i, j]
            Phi[V_ + i, TH_ + j] = dt * G[i, j]
            Phi[P_ + i, BA_ + j] = -0.5 * dt * dt * C[i, j]
            Phi[V_ + i, BA_ + j] = -dt * C[i, j]
            Phi[TH_ + i, BG_ + j] = -M[i, j]
    _minus_cross(p, M, Phi, P_, BG_)
    _minus_cross(v, M, Phi, V_, BG_)
    for k in range(nfeet):
        _minus_cross(feet[k], M, Phi, NAV + 3 * k, BG_)
    # B = Phi P, skipping zeros of Phi; then P = B Phi^T
    B = np.zeros((n, n))
    for i in range(n):
        for k in range(n):
            c = Phi[i, k]
            if c != 0.0:
                for j in range(n):
                    B[i, j] += c * P[k, j]
    for i in range(n):
        for j in range(i, n):
            s = 0.0
            for k in range(n):
                c = Phi[j, k]
                if c != 0.0:
                    s += B[i, k] * c
            P[i, j] = s
    # noise through the bias columns (without their identity rows), then the random walks
    ca = np.sqrt(noise[0] * noise[0] / dt) * Phi[:, BA_:BA_ + 3]
    cg = np.sqrt(noise[1] * noise[1] / dt) * Phi[:, BG_:BG_ + 3]
    ca[BA_:BG_ + 3] = 0.0
    cg[BA_:BG_ + 3] = 0.0
    for i in range(n):
        for j in range(i, n):
            s = 0.0
            for k in range(3):
                s += ca[i, k] * ca[j, k] + cg[i, k] * cg[j, k]
            P[i, j] += s
            P[j, i] = P[i, j]
    for i in range(3):
        P[BA_ + i, BA_ + i] += noise[2] * noise[2] * dt
        P[BG_ + i, BG_ + i] += noise[3] * noise[3] * dt
    for i in range(NAV, n):
        P[i, i] += noise[4] * noise[4] * dt
    C[:, :] = C @ E


@njit(cache=True)
def propagate_readings(
    C: np.ndarray, p: np.ndarray, v: np.ndarray, biases: np.ndarray, feet: np.ndarray, P: np.ndarray,
    omega_m: np.ndarray, accel_m: np.ndarray, dt: float, accelerometer_variance: float,
    gyroscope_variance: float, gravity: np.ndarray, noise: np.ndarray,
) -> None:
    """``propagate`` with a reading error constant over the step of the given variances: the white-noise
    densities ``s`` become ``sqrt(s^2 + variance dt)`` (``InvariantEKF.propagate``); Phi is scratch."""
    densities = noise
    if accelerometer_variance != 0.0 or gyroscope_variance != 0.0:
        densities = noise.copy()
        densities[0] = math.sqrt(noise[0] ** 2 + accelerometer_variance * dt)
        densities[1] = math.sqrt(noise[1] ** 2 + gyroscope_variance * dt)
    n = P.shape[0]
    propagate(C, p, v, biases, feet, P, omega_m, accel_m, dt, gravity, densities, np.empty((n, n)))


@njit(cache=True)
def update(
    C: np.ndarray,
    p: np.ndarray,
    v: np.ndarray,
    biases: np.ndarray,
    feet: np.ndarray,
    P: np.ndarray,
    slots: np.ndarray,
    positions: np.ndarray,
    covariances: np.ndarray,
    gate: float,
    used: np.ndarray,
    nis_feet: np.ndarray,
) -> float:
    """Right-invariant kinematic correction (Hartley §5.3) of the feet in state ``slots`` measured at
    ``positions`` (IMU frame, ``covariances`` likewise).

    Innovation ``nu = C y + p - d`` (the first rows of ``X Y - b``, ``Y = X^-1 b``),
    ``H = [-I at p, I at d]``, ``N = C Sigma C^T``; a foot whose own 3-dof NIS (into ``nis_feet``)
    exceeds ``gate`` is left out (``used`` False), the others are applied together:
    ``K = P H^T S^-1`` by Cholesky, P by the Joseph form, then ``X <- Exp(K nu) X`` and
    ``b <- b + K_b nu``. Returns the stacked NIS (nan if no foot is used).
    """
    n = P.shape[0]
    m = slots.shape[0]
    nu_all = np.empty((m, 3))
    N_all = np.empty((m, 3, 3))
    S1 = np.empty((3, 3))
    count = 0
    for k in range(m):
        d0 = NAV + 3 * slots[k]
        nu_all[k] = C @ positions[k] + p - feet[slots[k]]
        N_all[k] = C @ covariances[k] @ C.T
        for i in range(3):
            for j in range(3):
                S1[i, j] = P[d0 + i, d0 + j] - P[d0 + i, P_ + j] - P[P_ + i, d0 + j] + P[P_ + i, P_ + j]
                S1[i, j] += N_all[k, i, j]
        nis_feet[k] = nu_all[k] @ np.linalg.solve(S1, nu_all[k])
        used[k] = nis_feet[k] <= gate
        if used[k]:
            count += 1
    if count == 0:
        return np.nan
    rows = 3 * count
    order = np.empty(count, dtype=np.int64)
    c = 0
    for k in range(m):
        if used[k]:
            order[c] = k
            c += 1
    # HP = H P (rows x n); S = HP H^T + N
    HP = np.empty((rows, n))
    nu = np.empty(rows)
    Nm = np.zeros((rows, rows))
    for c in range(count):
        k = order[c]
        d0 = NAV + 3 * slots[k]
        for i in range(3):
            nu[3 * c + i] = nu_all[k, i]
            for j in range(n):
                HP[3 * c + i, j] = P[d0 + i, j] - P[P_ + i, j]
            for j in range(3):
                Nm[3 * c + i, 3 * c + j] = N_all[k, i, j]
    S = np.empty((rows, rows))
    for r in range(rows):
        for c in range(count):
            d0 = NAV + 3 * slots[order[c]]
            for j in range(3):
                S[r, 3 * c + j] = HP[r, d0 + j] - HP[r, P_ + j] + Nm[r, 3 * c + j]
    S = 0.5 * (S + S.T)
    L = np.linalg.cholesky(S)
    Kt = np.linalg.solve(L.T, np.linalg.solve(L, HP))
    w = np.linalg.solve(L, nu)
    nis = float(w @ w)
    K = np.ascontiguousarray(Kt.T)
    dx = K @ nu
    # Joseph form with sparse H: M = P - K HP; P <- M - (M H^T) K^T + K N K^T
    Mj = P - K @ HP
    MHt = np.empty((n, rows))
    for c in range(count):
        d0 = NAV + 3 * slots[order[c]]
        for i in range(n):
            for j in range(3):
                MHt[i, 3 * c + j] = Mj[i, d0 + j] - Mj[i, P_ + j]
    Pn = Mj - MHt @ Kt + (K @ Nm) @ Kt
    for i in range(n):
        for j in range(i, n):
            s = 0.5 * (Pn[i, j] + Pn[j, i])
            P[i, j] = s
            P[j, i] = s
    # X <- Exp(dx_nav) X: C <- R C, x <- R x + J_l dx_x (x = v, p, d_k)
    R = np.empty((3, 3))
    J = np.empty((3, 3))
    so3_exp_left_jacobian(dx[TH_:TH_ + 3].copy(), R, J)
    C[:, :] = R @ C
    v[:] = R @ v + J @ dx[V_:V_ + 3]
    p[:] = R @ p + J @ dx[P_:P_ + 3]
    for k in range(feet.shape[0]):
        feet[k] = R @ feet[k] + J @ dx[NAV + 3 * k:NAV + 3 * k + 3]
    for i in range(6):
        biases[i] += dx[BA_ + i]
    return nis
