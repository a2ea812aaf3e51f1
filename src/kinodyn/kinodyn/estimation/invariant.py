"""Right-invariant EKF on SE_{2+K}(3) with IMU biases, for IMU + leg-kinematics estimation.

Hartley, Ghaffari, Eustice, Grizzle, "Contact-aided invariant extended Kalman filtering for robot state
estimation", IJRR 2020 (arXiv 1904.09251): the state ``X = (C, v, p, d_1..d_K)`` in SE_{2+K}(3) (§4) with the
biases appended as in the "imperfect IEKF" (§6), the right-invariant error ``eta = X_true X^-1 = Exp(xi)``
(§3), log-linear error dynamics (§3.2, Theorem 2), the right-invariant kinematic measurement ``Y = X^-1 b``
(§5.3) and the touchdown augmentation / lift-off marginalisation of the contact points (§5.4). Inputs, outputs
and ``UpdateReport`` semantics are those of ``LeggedFilter`` (Robot Dynamics Essential, §5.3;
docs/estimation.md, "Invariant EKF").

Error vector, ordered as the ESKF's state so the two filters share indices:
``[xi_p, xi_v, xi_theta, db_a, db_g, xi_d1..xi_dK]`` with, to first order, ``C_true = Exp(xi_theta) C``
(world-frame rotation error), ``x_true = x + xi_theta x x + xi_x`` for x in {v, p, d_k}, ``b_true = b + db``.

Discretisation: the covariance transition ``Phi`` is the exact Jacobian of the discrete nominal step (Robot
Dynamics Essential, (110)) with respect to the error; its bias-free part is
``expm(A dt) = I + A dt + A^2 dt^2 / 2`` (A nilpotent, exact, §3.2), its bias columns carry ``J_l(omega dt)``
and the end-of-step velocity/position. The white IMU noise enters through the same bias columns (noise held
over the step), the bias and foot random walks additively.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from kinodyn.estimation.consistency import nees
from kinodyn.estimation.filter import (
    FilterArrays,
    FootMeasurement,
    GateParameters,
    LeggedFilter,
    symmetric_part_into,
)
from kinodyn.estimation.kalman import sparse_product, stance_update
from kinodyn.estimation.layout import BA_, BG_, NAV, P_, TH_, V_
from kinodyn.estimation.registry import FilterKernels, register_filter
from kinodyn.spatial.compiled import skew as skew_into
from kinodyn.spatial.compiled import so3_exp as so3_exp_into
from kinodyn.spatial.compiled import so3_left_jacobian as so3_left_jacobian_into
from kinodyn.spatial.lie import so3_left_jacobian, so3_left_jacobian_inverse, so3_log
from kinodyn.spatial.rotations import FloatArray, as_rotation_matrix, as_vector, rotvec_to_matrix, skew

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.estimation.noise import NoiseParameters

# ----------------------------------------------------------------------------------------- compiled steps


@njit(cache=True)
def _minus_cross(x: np.ndarray, M: np.ndarray, out: np.ndarray, row: int, col: int) -> None:
    """``out[row:row+3, col:col+3] = -[x]x M``."""
    for j in range(3):
        out[row, col + j] = x[2] * M[1, j] - x[1] * M[2, j]
        out[row + 1, col + j] = x[0] * M[2, j] - x[2] * M[0, j]
        out[row + 2, col + j] = x[1] * M[0, j] - x[0] * M[1, j]


@njit(cache=True)
def propagate(  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel, one compiled pass)
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
    so3_exp_into(phi, E)
    so3_left_jacobian_into(phi, J)
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
    skew_into(gravity, G)
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
    B = sparse_product(Phi, P)
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
def propagate_readings(  # noqa: PLR0913, PLR0917  (flat arrays for a compiled kernel)
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


_P, _V, _TH = slice(0, 3), slice(3, 6), slice(6, 9)


class InvariantState(NamedTuple):
    """The compiled state of ``InvariantEKF`` (registry module doc; its arrays are the filter's, worked on in
    place): the common fields, then ``gravity`` (3) and the noise densities ``noise`` =
    ``[s_a, s_g, s_ba, s_bg, s_foot]``."""

    core: FilterArrays
    gravity: np.ndarray
    noise: np.ndarray


@njit(cache=True)
def propagate_state(s: InvariantState, omega_m: np.ndarray, accel_m: np.ndarray, dt: float,
                    accelerometer_variance: float, gyroscope_variance: float) -> None:
    """``propagate_readings`` on the filter's state (registry ``propagate``)."""
    c = s.core
    propagate_readings(c.C, c.p, c.v, c.biases, c.feet, c.P, omega_m, accel_m, dt, accelerometer_variance,
                       gyroscope_variance, s.gravity, s.noise)


@njit(cache=True)
def correct_state(s: InvariantState, positions: np.ndarray, covariances: np.ndarray, accepted: np.ndarray,
                  nis_feet: np.ndarray) -> float:
    """Right-invariant kinematic correction (Hartley §5.3) of every foot in the state, in state order
    (registry ``correct``): the innovation ``nu = C y + p - d`` (the first rows of ``X Y - b``,
    ``Y = X^-1 b``) with ``H = [-I at p, I at d]`` (no angle block) through ``kalman.stance_update``, then
    ``X <- Exp(K nu) X`` and ``b <- b + K_b nu``."""
    c = s.core
    C, p, v, feet = c.C, c.p, c.v, c.feet
    nis, dx, Pn = stance_update(C, p, feet, c.P, positions, covariances, np.zeros((positions.shape[0], 3, 3)),
                                c.gate, accepted, nis_feet)
    if dx.shape[0] == 0:
        return nis
    symmetric_part_into(Pn, c.P)
    # X <- Exp(dx_nav) X: C <- R C, x <- R x + J_l dx_x (x = v, p, d_k)
    R = np.empty((3, 3))
    J = np.empty((3, 3))
    dth = dx[TH_:TH_ + 3].copy()
    so3_exp_into(dth, R)
    so3_left_jacobian_into(dth, J)
    C[:, :] = R @ C
    v[:] = R @ v + J @ dx[V_:V_ + 3]
    p[:] = R @ p + J @ dx[P_:P_ + 3]
    for k in range(feet.shape[0]):
        feet[k] = R @ feet[k] + J @ dx[NAV + 3 * k:NAV + 3 * k + 3]
    for i in range(6):
        c.biases[i] += dx[BA_ + i]
    return nis


@njit(cache=True)
def navigation_covariance_state(s: InvariantState, out: np.ndarray) -> None:
    """``T P T^T`` (registry ``navigation_covariance``) with ``T`` the first-order map from ``[xi_p, xi_v,
    xi_theta, db_a, db_g]`` to the ESKF error ``[dp, dv, dtheta, db_a, db_g]``: ``dp = xi_p - [p]x xi_theta``,
    ``dv = xi_v - [v]x xi_theta``, ``dtheta = C^T xi_theta`` (from ``Exp(xi_theta) C = C Exp(C^T
    xi_theta)``)."""
    C, p, v = s.core.C, s.core.p, s.core.v
    T = np.eye(NAV)
    for i in range(3):
        for j in range(3):
            T[TH_ + i, TH_ + j] = C[j, i]
    T[0, 7], T[0, 8], T[1, 6], T[1, 8], T[2, 6], T[2, 7] = p[2], -p[1], -p[2], p[0], p[1], -p[0]
    T[3, 7], T[3, 8], T[4, 6], T[4, 8], T[5, 6], T[5, 7] = v[2], -v[1], -v[2], v[0], v[1], -v[0]
    out[:, :] = T @ np.ascontiguousarray(s.core.P[:NAV, :NAV]) @ T.T


@dataclass(frozen=True)
class InvariantParameters(GateParameters):
    """``InvariantEKF``'s settings: ``gate_probability`` (``GateParameters``)."""


def sek3_exp(xi_theta: FloatArray, columns: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Exponential of SE_K(3) (Hartley 2020 §3, eq. (4)): ``(Exp(xi_theta), J_l(xi_theta) c_i)``.

    ``columns`` is (m, 3): the translational parts (v, p, d_k); returns the rotation and the (m, 3) columns.
    """
    return rotvec_to_matrix(xi_theta), columns @ so3_left_jacobian(xi_theta).T


def sek3_log(rotation: FloatArray, columns: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Logarithm of SE_K(3), the inverse of ``sek3_exp`` for rotation angles below pi."""
    xi_theta = so3_log(rotation)
    return xi_theta, columns @ so3_left_jacobian_inverse(xi_theta).T


@register_filter("invariant")
class InvariantEKF(LeggedFilter):
    """Right-invariant EKF with biases (Hartley et al. 2020), implementing ``LeggedFilter``.

    ``noise`` gives the IMU and foot densities and the initial standard deviations (set in the ESKF
    convention and mapped to the invariant error, so both filters start equally uncertain); ``gravity`` is
    the magnitude of ``g = [0, 0, -gravity]``; ``gate_probability`` (its ``InvariantParameters``) the per-foot
    chi-square gate (3 dof).
    """

    Parameters = InvariantParameters
    KERNELS = FilterKernels(InvariantState, propagate_state, correct_state, navigation_covariance_state)

    def __init__(
        self, noise: NoiseParameters | None = None, gravity: float = 9.81,
        gate_probability: float = InvariantParameters.gate_probability,
    ) -> None:
        self._g = self._configure(InvariantParameters(gate_probability), noise, gravity)
        n = self.noise
        self._noise = np.array([
            n.accelerometer_noise_density, n.gyroscope_noise_density,
            n.accelerometer_random_walk, n.gyroscope_random_walk, n.foot_random_walk,
        ])
        self._start_uninitialized()

    def _sync(self) -> None:
        """The compiled state over the current arrays (after any of them was replaced)."""
        self._state = InvariantState(self._core(), self._g, self._noise)

    def _start(self, covariance: FloatArray) -> None:
        """P is ``covariance`` (ESKF convention) mapped to the invariant error by the inverse of the
        first-order map of ``navigation_covariance``."""
        T_inv = self._to_invariant()
        self._P = T_inv @ covariance @ T_inv.T

    # ------------------------------------------------------------------------------ error conversions
    def _to_invariant(self) -> FloatArray:
        """Inverse of the first-order map to the ESKF error (``navigation_covariance_state``): from ``[dp, dv,
        dtheta, db_a, db_g]`` to ``[xi_p, xi_v, xi_theta, db_a, db_g]``."""
        T = np.eye(NAV)
        T[_P, _TH] = skew(self._p) @ self._C
        T[_V, _TH] = skew(self._v) @ self._C
        T[_TH, _TH] = self._C
        return T

    def nees(self, position: ArrayLike, velocity: ArrayLike, rotation: ArrayLike) -> float:
        """9-dof NEES of the invariant error ``xi = Log(X_true X^-1)`` restricted to ``(p, v, theta)``."""
        R_eta = as_rotation_matrix(rotation) @ self._C.T
        columns = np.stack([
            as_vector(position, 3, "position") - R_eta @ self._p,
            as_vector(velocity, 3, "velocity") - R_eta @ self._v,
        ])
        xi_theta, xi_pv = sek3_log(R_eta, columns)
        return nees(np.concatenate([xi_pv[0], xi_pv[1], xi_theta]), self._P[:9, :9])

    # ---------------------------------------------------------------------------------------- update
    def _append(self, foot: FootMeasurement) -> None:
        """Append ``d = p + C y``: ``xi_d = xi_p - C w`` to first order, so its rows copy those of ``xi_p``
        and add ``C Sigma C^T`` (Hartley §5.4)."""
        n = self._P.shape[0]
        cov = np.zeros((n + 3, n + 3))
        cov[:n, :n] = self._P
        cov[n:, :n] = self._P[_P, :]
        cov[:n, n:] = self._P[:, _P]
        cov[n:, n:] = self._P[_P, _P] + self._C @ foot.covariance @ self._C.T
        self._P = cov
        self._feet = np.vstack([self._feet, self._p + self._C @ foot.position])
        self._names.append(foot.name)
        self._sync()
