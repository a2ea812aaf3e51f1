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
from collections.abc import Sequence

import numpy as np

from kinodyn._kernels import invariant as kernels
from kinodyn.estimation.consistency import gate, nees
from kinodyn.estimation.filter import (
    FilterState,
    FootMeasurement,
    checked_input_variance,
    initial_covariance,
)
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.spatial.lie import so3_left_jacobian, so3_left_jacobian_inverse, so3_log
from kinodyn.spatial.rotations import FloatArray, as_rotation_matrix, as_vector, rotvec_to_matrix, skew

NAVIGATION_SIZE = 15
"""Size of ``[xi_p, xi_v, xi_theta, db_a, db_g]``; foot k occupies ``15 + 3k .. 18 + 3k``."""
_P, _V, _TH = slice(0, 3), slice(3, 6), slice(6, 9)
_UNUSED_15X15, _UNUSED_15, _UNUSED_3X3, _UNUSED_3, _UNUSED_FEET = (
    np.zeros((15, 15)), np.zeros(15), np.eye(3), np.zeros(3), np.zeros((0, 3)))


def sek3_exp(xi_theta: FloatArray, columns: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Exponential of SE_K(3) (Hartley 2020 §3, eq. (4)): ``(Exp(xi_theta), J_l(xi_theta) c_i)``.

    ``columns`` is (m, 3): the translational parts (v, p, d_k); returns the rotation and the (m, 3) columns.
    """
    return rotvec_to_matrix(xi_theta), columns @ so3_left_jacobian(xi_theta).T


def sek3_log(rotation: FloatArray, columns: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Logarithm of SE_K(3), the inverse of ``sek3_exp`` for rotation angles below pi."""
    xi_theta = so3_log(rotation)
    return xi_theta, columns @ so3_left_jacobian_inverse(xi_theta).T


class InvariantEKF(FilterState):
    """Right-invariant EKF with biases (Hartley et al. 2020), implementing ``LeggedFilter``.

    ``noise`` gives the IMU and foot densities and the initial standard deviations (set in the ESKF
    convention and mapped to the invariant error, so both filters start equally uncertain); ``gravity`` is
    the magnitude of ``g = [0, 0, -gravity]``; ``gate_probability`` the per-foot chi-square gate (3 dof).
    The constructor takes the same arguments as ``ErrorStateEKF``.
    """

    def __init__(
        self, noise: NoiseParameters | None = None, gate_probability: float = 0.9999, gravity: float = 9.81
    ) -> None:
        if not (math.isfinite(gravity) and gravity > 0.0):
            raise ValueError(f"gravity must be finite and > 0 (m/s^2), got {gravity!r}")
        self.noise = NoiseParameters() if noise is None else noise
        self.gate = gate(3, gate_probability)
        self._g = np.array([0.0, 0.0, -float(gravity)])
        self._C = np.eye(3)
        self._v = np.zeros(3)
        self._p = np.zeros(3)
        self._biases = np.zeros(6)
        self._names: list[str] = []
        self._feet = np.zeros((0, 3))
        self._P = np.zeros((NAVIGATION_SIZE, NAVIGATION_SIZE))
        n = self.noise
        self._noise = np.array([
            n.accelerometer_noise_density, n.gyroscope_noise_density,
            n.accelerometer_random_walk, n.gyroscope_random_walk, n.foot_random_walk,
        ])
        self._kernel_params = np.concatenate([self._noise, self._g])
        self._initialized = False

    def kernel_state(self) -> tuple[np.ndarray, ...]:
        """The arrays the compiled estimator loop works on in place (kinodyn._kernels.estimator; the ESKF's
        layout: its transition, Q and observability-constraint slots are unused placeholders here)."""
        return (self._C, self._p, self._v, self._biases, self._feet, self._P, _UNUSED_15X15, _UNUSED_15,
                self._kernel_params, _UNUSED_3X3, _UNUSED_3, _UNUSED_3, _UNUSED_FEET)

    # ----------------------------------------------------------------------------------------- state
    def initialize(
        self,
        rotation: FloatArray,
        position: FloatArray,
        velocity: FloatArray,
        accelerometer_bias: FloatArray,
        gyroscope_bias: FloatArray,
        covariance: FloatArray | None = None,
    ) -> None:
        """Set the state, drop every foot, and set the covariance: ``covariance`` (15x15 of ``[p, v,
        theta(local), b_a, b_g]``, ESKF convention, ``filter.initial_covariance``; None: the diagonal of
        ``noise.initial_*``) mapped to the invariant error by the inverse of the first-order map of
        ``navigation_covariance``."""
        C = as_rotation_matrix(rotation)
        P0 = initial_covariance(self.noise, covariance)
        vectors = [
            as_vector(value, 3, name).copy()
            for name, value in (
                ("position", position),
                ("velocity", velocity),
                ("accelerometer_bias", accelerometer_bias),
                ("gyroscope_bias", gyroscope_bias),
            )
        ]
        self._C = np.array(C)
        self._p, self._v = vectors[0], vectors[1]
        self._biases = np.concatenate(vectors[2:])
        self._names = []
        self._feet = np.zeros((0, 3))
        T_inv = self._to_invariant()
        self._P = T_inv @ P0 @ T_inv.T
        self._initialized = True

    # ------------------------------------------------------------------------------ error conversions
    def _to_eskf(self) -> FloatArray:
        """15x15 first-order map from ``[xi_p, xi_v, xi_theta, db_a, db_g]`` to the ESKF error
        ``[dp, dv, dtheta, db_a, db_g]``: ``dp = xi_p - [p]x xi_theta``, ``dv = xi_v - [v]x xi_theta``,
        ``dtheta = C^T xi_theta`` (from ``Exp(xi_theta) C = C Exp(C^T xi_theta)``)."""
        T = np.eye(NAVIGATION_SIZE)
        T[_P, _TH] = -skew(self._p)
        T[_V, _TH] = -skew(self._v)
        T[_TH, _TH] = self._C.T
        return T

    def _to_invariant(self) -> FloatArray:
        """Inverse of ``_to_eskf``."""
        T = np.eye(NAVIGATION_SIZE)
        T[_P, _TH] = skew(self._p) @ self._C
        T[_V, _TH] = skew(self._v) @ self._C
        T[_TH, _TH] = self._C
        return T

    def navigation_covariance(self) -> FloatArray:
        """15x15 covariance of ``[dp, dv, dtheta(local), db_a, db_g]`` (ESKF convention), ``T P T^T`` with
        ``T`` the first-order map ``_to_eskf``."""
        T = self._to_eskf()
        return T @ self._P[:NAVIGATION_SIZE, :NAVIGATION_SIZE] @ T.T

    def nees(self, position: FloatArray, velocity: FloatArray, rotation: FloatArray) -> float:
        """9-dof NEES of the invariant error ``xi = Log(X_true X^-1)`` restricted to ``(p, v, theta)``."""
        R_eta = as_rotation_matrix(rotation) @ self._C.T
        columns = np.stack([
            as_vector(position, 3, "position") - R_eta @ self._p,
            as_vector(velocity, 3, "velocity") - R_eta @ self._v,
        ])
        xi_theta, xi_pv = sek3_log(R_eta, columns)
        return nees(np.concatenate([xi_pv[0], xi_pv[1], xi_theta]), self._P[:9, :9])

    # ----------------------------------------------------------------------------------- propagation
    def propagate(
        self,
        angular_velocity: FloatArray,
        linear_acceleration: FloatArray,
        dt: float,
        input_variance: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        """One IMU step: nominal strapdown (Robot Dynamics Essential, (110)) and ``P <- Phi P Phi^T + Q``
        (Hartley §3.2, §6; the kernel kinodyn._kernels.invariant.propagate states Phi and Q).

        ``angular_velocity``/``linear_acceleration`` are the raw readings (IMU frame), held over ``dt`` > 0;
        ``input_variance`` (accelerometer, gyroscope) of a reading error constant over the step enters
        through the same bias columns as the white noise: the kernel's density ``s`` becomes
        ``sqrt(s^2 + variance dt)``, so ``s^2/dt`` grows by the variance (``LeggedFilter.propagate``).
        """
        self._require_initialized()
        # fresh contiguous writable copies: one compiled signature whatever the caller passes
        omega_m = np.array(as_vector(angular_velocity, 3, "angular_velocity"))
        accel_m = np.array(as_vector(linear_acceleration, 3, "linear_acceleration"))
        if not math.isfinite(dt) or dt <= 0.0:
            raise ValueError(f"dt must be finite and > 0 s, got {dt!r}")
        accelerometer, gyroscope = checked_input_variance(input_variance)
        kernels.propagate_readings(
            self._C, self._p, self._v, self._biases, self._feet, self._P, omega_m, accel_m, float(dt),
            accelerometer, gyroscope, self._g, self._noise,
        )

    # ---------------------------------------------------------------------------------------- update
    def _correct(self, positions: FloatArray, covariances: FloatArray, accepted: np.ndarray) -> float:
        """The right-invariant kinematic correction (Hartley §5.3-§5.4): innovation ``nu = C y + p - d``
        (``= X Y - b`` with ``Y = X^-1 b``), ``H = [-I, 0, 0, 0, 0, .., I, ..]``, ``N = C Sigma_y C^T``, each
        foot first gated by its own 3-dof NIS (kernel kinodyn._kernels.invariant.update). A new foot is
        appended at ``d = p + C y`` with ``xi_d = xi_p - C w`` (``_append``)."""
        n = len(accepted)
        return float(kernels.update(
            self._C, self._p, self._v, self._biases, self._feet, self._P,
            np.arange(n, dtype=np.int64), positions, covariances, self.gate, accepted, np.empty(n),
        ))

    def _remove(self, names: Sequence[str]) -> None:
        """Drop the feet ``names`` with their rows and columns of P (Hartley §5.4)."""
        keep = [i for i, name in enumerate(self._names) if name not in names]
        index = np.concatenate(
            [np.arange(NAVIGATION_SIZE)] + [NAVIGATION_SIZE + 3 * i + np.arange(3) for i in keep]
        )
        self._P = np.ascontiguousarray(self._P[np.ix_(index, index)])
        self._feet = np.ascontiguousarray(self._feet[keep])
        self._names = [self._names[i] for i in keep]

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
