"""Error-state EKF of the IMU navigation state with the feet in contact in the state (Robot Dynamics
Essential, §5.2-§5.3).

Nominal state: ``p, v`` (world) of the IMU origin, ``C = C_WI``, biases ``b_a, b_g`` (IMU frame), one world
position ``d_k`` per foot in contact (Bloesch et al. 2012). Error ``[dp, dv, dtheta, db_a, db_g, dd_1..dd_K]``
with the local orientation error ``C_true = C Exp(dtheta)`` (Robot Dynamics Essential, (109)).

- propagate: exact nominal step (110), ``P <- F P F^T + Q`` with F (111) extended by identity foot blocks and
  Q from the continuous densities (Solà 2017 §5.4.3, docs/estimation.md "ESKF");
- update_contacts: lift-off marginalises a foot (its rows and columns are dropped); a foot in contact is
  corrected by the stance relation ``0 = d - p - C r`` (Robot Dynamics Essential, §5.3) unless its own NIS
  exceeds the chi-square gate; the applied feet go through one Joseph-form update (113) and the reset
  (injection, ``P <- G P G^T``); a touchdown appends ``d = p + C r`` with the covariance of that expression
  (from P and the measurement covariance), which adds no information to the rest of the state;
- observability constraint (OC-EKF; Bloesch et al. 2013, "State estimation for legged robots on unstable and
  slippery terrain", IROS; Hesch et al. 2014, "Consistency analysis and improvement of vision-aided inertial
  navigation", IEEE T-RO 30(1) / Huang, Mourikis, Roumeliotis 2010 on EKF inconsistency): the absolute
  position and the yaw about gravity are unobservable, but F and H linearised at estimates that change at
  every update make the yaw look observable, so P's yaw (and then x/y) shrinks without information.
  The yaw direction ``N = [e x p; e x v; C^T e; 0; 0; e x d_k]`` is taken at the last prior (the nominal
  after propagation); F is changed least so that it maps N at one prior onto N at the next, and each H
  least so that ``H N = 0`` (the feet's parts of N fixed at touchdown). Position directions need nothing.
The compiled steps are in kinodyn._kernels.estimation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from kinodyn._kernels import estimation as kernels
from kinodyn.estimation.consistency import gate, nees
from kinodyn.estimation.filter import (
    FilterState,
    FootMeasurement,
    checked_input_variance,
    initial_covariance,
)
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.spatial.lie import so3_log
from kinodyn.spatial.rotations import FloatArray, as_rotation_matrix, skew

NAV = kernels.NAV


def _vector3(name: str, value: ArrayLike) -> FloatArray:
    array = np.array(value, dtype=np.float64)
    if array.shape != (3,) or not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be a finite 3-vector, got {value!r}")
    return array


class ErrorStateEKF(FilterState):
    """The error-state EKF (a ``LeggedFilter``); ``gravity`` is the magnitude of g along world -z (m/s^2),
    ``gate_probability`` the per-foot chi-square gate of the stance update. ``observability_constrained``
    (default) makes it an OC-EKF (module doc): no update gives information about the yaw; False is the
    plain EKF, whose linearisation at changing estimates makes yaw look observable (over-confident)."""

    def __init__(
        self, noise: NoiseParameters | None = None, gate_probability: float = 0.9999, gravity: float = 9.81,
        observability_constrained: bool = True,
    ) -> None:
        if not (np.isfinite(gravity) and gravity > 0.0):
            raise ValueError(f"gravity must be finite and > 0 (m/s^2), got {gravity!r}")
        self.noise = noise if noise is not None else NoiseParameters()
        self.gate = gate(3, gate_probability)
        self.observability_constrained = bool(observability_constrained)
        self._gravity = np.array([0.0, 0.0, -gravity])
        n = self.noise
        self._densities = np.repeat(
            [
                0.0,
                n.accelerometer_noise_density**2,
                n.gyroscope_noise_density**2,
                n.accelerometer_random_walk**2,
                n.gyroscope_random_walk**2,
            ],
            3,
        )
        self._foot_density = n.foot_random_walk**2
        self._kernel_params = np.concatenate([self._densities, [self._foot_density], self._gravity])
        self._q_nav = np.zeros(NAV)
        self._F = np.zeros((NAV, NAV))
        self._initialized = False
        self._set_state(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))

    def _set_state(
        self, C: FloatArray, p: FloatArray, v: FloatArray, b_a: FloatArray, b_g: FloatArray,
        covariance: ArrayLike | None = None,
    ) -> None:
        P = initial_covariance(self.noise, covariance)
        self._C = np.array(C, dtype=np.float64, order="C")  # a copy: the caller keeps its matrix
        self._p, self._v = p.copy(), v.copy()
        self._biases = np.concatenate([b_a, b_g])
        self._names: list[str] = []
        self._feet = np.zeros((0, 3))
        self._P = P
        # OC-EKF linearisation point: the last prior (nominal after propagation) and each foot's part of the
        # yaw direction, fixed at touchdown (kernels.constrain_transition, kernels.update)
        self._prior_C, self._prior_p, self._prior_v = self._C.copy(), self._p.copy(), self._v.copy()
        self._null_feet = np.zeros((0, 3))

    def initialize(
        self,
        rotation: ArrayLike,
        position: ArrayLike,
        velocity: ArrayLike,
        accelerometer_bias: ArrayLike,
        gyroscope_bias: ArrayLike,
        covariance: ArrayLike | None = None,
    ) -> None:
        """Start from this nominal state, no feet, with ``covariance`` (15x15, see
        ``filter.initial_covariance``; None: the initial standard deviations of ``noise``)."""
        self._set_state(
            as_rotation_matrix(rotation),
            _vector3("position", position),
            _vector3("velocity", velocity),
            _vector3("accelerometer_bias", accelerometer_bias),
            _vector3("gyroscope_bias", gyroscope_bias),
            covariance,
        )
        self._initialized = True

    def propagate(
        self,
        angular_velocity: ArrayLike,
        linear_acceleration: ArrayLike,
        dt: float,
        input_variance: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        """One IMU step with the raw readings ``w_m``, ``a_m`` (IMU frame) held over ``dt`` seconds;
        ``input_variance`` (accelerometer, gyroscope) of a reading error constant over the step adds
        ``variance * dt^2`` to the velocity and angle blocks of Q (``LeggedFilter.propagate``)."""
        self._require_initialized()
        w_m = _vector3("angular_velocity", angular_velocity)
        a_m = _vector3("linear_acceleration", linear_acceleration)
        if not (np.isfinite(dt) and dt > 0.0):
            raise ValueError(f"dt must be finite and > 0 (s), got {dt!r}")
        accelerometer, gyroscope = checked_input_variance(input_variance)
        kernels.propagate_readings(
            self._C, self._p, self._v, self._biases, self._P, w_m, a_m, float(dt), accelerometer, gyroscope,
            self._densities, self._foot_density, self._gravity, self._F, self._q_nav,
            self.observability_constrained, self._prior_C, self._prior_p, self._prior_v,
        )

    def _correct(self, positions: FloatArray, covariances: FloatArray, accepted: np.ndarray) -> float:
        """The stance relation ``h = d - p - C r`` (Robot Dynamics Essential, §5.3), one stacked Joseph-form
        update of the gated feet and the reset (kernel kinodyn._kernels.estimation.update)."""
        n = len(accepted)
        return float(kernels.update(
            self._C, self._p, self._v, self._biases, self._feet, self._P,
            np.arange(n, dtype=np.int64), positions, covariances, self.gate, accepted, np.empty(n),
            self.observability_constrained, self._prior_C, self._prior_p, self._null_feet,
        ))

    def _remove(self, names: Sequence[str]) -> None:
        """Marginalise feet: drop their state and their rows and columns of P."""
        slots = [self._names.index(name) for name in names]
        keep = np.ones(self._P.shape[0], dtype=bool)
        for slot in slots:
            keep[NAV + 3 * slot : NAV + 3 * slot + 3] = False
        self._P = np.ascontiguousarray(self._P[np.ix_(keep, keep)])
        self._feet = np.delete(self._feet, slots, axis=0)
        self._null_feet = np.delete(self._null_feet, slots, axis=0)
        self._names = [name for name in self._names if name not in names]

    def _append(self, foot: FootMeasurement) -> None:
        """Augment the state with ``d = p + C r``: ``J = dd/ddx = [I, 0, -C[r]x, 0, 0, 0..]``, so
        ``P_dx = J P`` and ``P_dd = J P J^T + C N C^T``; the foot's part of the yaw direction is J applied to
        the prior's, ``e x p + J_th C_prior^T e``."""
        n = self._P.shape[0]
        J = np.zeros((3, n))
        J[:, 0:3] = np.eye(3)
        J[:, 6:9] = -self._C @ skew(foot.position)
        up = np.array([-self._prior_p[1], self._prior_p[0], 0.0])
        self._null_feet = np.vstack([self._null_feet, up + J[:, 6:9] @ self._prior_C[2]])
        JP = J @ self._P
        P_dd = JP @ J.T + self._C @ foot.covariance @ self._C.T
        P = np.empty((n + 3, n + 3))
        P[:n, :n] = self._P
        P[n:, :n] = JP
        P[:n, n:] = JP.T
        P[n:, n:] = 0.5 * (P_dd + P_dd.T)
        self._P = P
        self._feet = np.vstack([self._feet, self._p + self._C @ foot.position])
        self._names.append(foot.name)

    def kernel_state(self) -> tuple[np.ndarray, ...]:
        """The arrays the compiled estimator loop works on in place (kinodyn._kernels.estimator)."""
        return (self._C, self._p, self._v, self._biases, self._feet, self._P, self._F, self._q_nav,
                self._kernel_params, self._prior_C, self._prior_p, self._prior_v, self._null_feet)

    @property
    def transition_matrix(self) -> FloatArray:
        """The 15x15 navigation block of the last propagation's F."""
        return self._F.copy()

    def navigation_covariance(self) -> FloatArray:
        return self._P[:NAV, :NAV].copy()

    def nees(self, position: ArrayLike, velocity: ArrayLike, rotation: ArrayLike) -> float:
        error = np.concatenate(
            [
                _vector3("position", position) - self._p,
                _vector3("velocity", velocity) - self._v,
                so3_log(self._C.T @ as_rotation_matrix(rotation)),
            ]
        )
        return nees(error, self._P[:9, :9])
