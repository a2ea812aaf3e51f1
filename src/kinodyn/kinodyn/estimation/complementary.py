"""A third legged filter that shows the registry seam: a complementary filter in one module, registered by
one line, ``register_filter("complementary")(ComplementaryFilter)`` (the tests do; the estimator does not
offer it).

Strapdown integration of the IMU (Robot Dynamics Essential, (110)); each kinematic update pulls the IMU
position towards the mean of the stance feet's leg odometry ``d - C r`` by ``position_gain`` and the velocity
by ``velocity_gain`` times that correction. Its covariance is a diagonal that grows with time and shrinks with
the gain: a toy, not an estimator to use. It lives in the package rather than beside its test because the
compiled loop's on-disk cache names each filter's state type by module: every process that loads the cache
must be able to import it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from kinodyn.estimation.filter import (
    FilterState,
    FootMeasurement,
    GateParameters,
    call_kernel,
    checked_input_variance,
)
from kinodyn.estimation.noise import NoiseParameters
from kinodyn.estimation.registry import FilterKernels
from kinodyn.spatial import so3_log
from kinodyn.spatial.rotations import FloatArray, as_rotation_matrix

if TYPE_CHECKING:
    from collections.abc import Sequence

_SMALL_ANGLE = 1e-8  # rad: below it the rotation increment's series limits are used


class ComplementaryState(NamedTuple):
    C: np.ndarray
    p: np.ndarray
    v: np.ndarray
    biases: np.ndarray
    feet: np.ndarray
    P: np.ndarray
    gate: float
    gravity: np.ndarray
    gains: np.ndarray  # position, velocity


@njit(cache=True)
def propagate(s: ComplementaryState, w_m: np.ndarray, a_m: np.ndarray, dt: float,
              accelerometer_variance: float, gyroscope_variance: float) -> None:
    a = s.C @ (a_m - s.biases[:3]) + s.gravity
    for i in range(3):
        s.p[i] += s.v[i] * dt + 0.5 * a[i] * dt * dt
        s.v[i] += a[i] * dt
    phi = (w_m - s.biases[3:]) * dt
    t = math.sqrt(phi @ phi)
    K = np.array([[0.0, -phi[2], phi[1]], [phi[2], 0.0, -phi[0]], [-phi[1], phi[0], 0.0]])
    a_, b_ = (1.0, 0.5) if t < _SMALL_ANGLE else (math.sin(t) / t, (1.0 - math.cos(t)) / (t * t))
    s.C[:, :] = s.C @ (np.eye(3) + a_ * K + b_ * K @ K)
    for i in range(s.P.shape[0]):
        s.P[i, i] += (1e-4 + accelerometer_variance + gyroscope_variance) * dt


@njit(cache=True)
def correct(s: ComplementaryState, positions: np.ndarray, covariances: np.ndarray, accepted: np.ndarray,
            nis_feet: np.ndarray) -> float:
    m = positions.shape[0]
    error = np.zeros(3)
    nis = 0.0
    for k in range(m):
        nu = s.feet[k] - s.C @ positions[k] - s.p
        nis_feet[k] = (nu @ nu) / (s.P[0, 0] + covariances[k, 0, 0] + 1e-12)
        accepted[k] = True
        nis += nis_feet[k]
        error += nu / m
    for i in range(3):
        s.p[i] += s.gains[0] * error[i]
        s.v[i] += s.gains[1] * error[i]
    for i in range(s.P.shape[0]):
        s.P[i, i] *= 1.0 - s.gains[0]
    return nis


@njit(cache=True)
def navigation_covariance(s: ComplementaryState, out: np.ndarray) -> None:
    out[:, :] = s.P[:15, :15]


@dataclass(frozen=True)
class ComplementaryParameters(GateParameters):
    """``position_gain`` in (0, 1], ``velocity_gain`` >= 0 (1/s per metre of correction)."""

    position_gain: float = 0.2
    velocity_gain: float = 5.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 < self.position_gain <= 1.0 or not 0.0 <= self.velocity_gain < math.inf:
            raise ValueError(f"position_gain must be in (0, 1] and velocity_gain finite and >= 0, got "
                             f"{self.position_gain!r}, {self.velocity_gain!r}")


class ComplementaryFilter(FilterState):
    """The complementary filter (module doc), a ``LeggedFilter``; it accepts every foot (``gate`` is inf)."""

    Parameters = ComplementaryParameters
    KERNELS = FilterKernels(ComplementaryState, propagate, correct, navigation_covariance)

    def __init__(self, noise: NoiseParameters | None = None, gravity: float = 9.81,
                 gate_probability: float = ComplementaryParameters.gate_probability,
                 position_gain: float = ComplementaryParameters.position_gain,
                 velocity_gain: float = ComplementaryParameters.velocity_gain) -> None:
        self.parameters = ComplementaryParameters(gate_probability, position_gain, velocity_gain)
        self.noise = noise if noise is not None else NoiseParameters()
        self.gate = math.inf
        self._gravity = np.array([0.0, 0.0, -gravity])
        self._gains = np.array([position_gain, velocity_gain])
        self._initialized = False
        self.initialize(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3))
        self._initialized = False

    def initialize(self, rotation: FloatArray, position: FloatArray, velocity: FloatArray,
                   accelerometer_bias: FloatArray, gyroscope_bias: FloatArray,
                   covariance: FloatArray | None = None) -> None:
        self._C = np.array(as_rotation_matrix(rotation))
        self._p, self._v = np.array(position, dtype=float), np.array(velocity, dtype=float)
        self._biases = np.concatenate([accelerometer_bias, gyroscope_bias]).astype(float)
        self._names: list[str] = []
        self._feet = np.zeros((0, 3))
        self._P = np.eye(15) * 1e-4 if covariance is None else np.array(covariance, dtype=float)
        self._initialized = True
        self._sync()

    def _sync(self) -> None:
        self._state = ComplementaryState(self._C, self._p, self._v, self._biases, self._feet, self._P,
                                         self.gate, self._gravity, self._gains)

    def kernel_state(self) -> ComplementaryState:
        return self._state

    def propagate(self, angular_velocity: FloatArray, linear_acceleration: FloatArray, dt: float,
                  input_variance: tuple[float, float] = (0.0, 0.0)) -> None:
        self._require_initialized()
        accelerometer, gyroscope = checked_input_variance(input_variance)
        call_kernel(propagate, self._state, np.array(angular_velocity, dtype=float),
                    np.array(linear_acceleration, dtype=float), float(dt), accelerometer, gyroscope)

    def _remove(self, names: Sequence[str]) -> None:
        keep = [i for i, name in enumerate(self._names) if name not in names]
        index = np.concatenate([np.arange(15)] + [15 + 3 * i + np.arange(3) for i in keep])
        self._P = np.ascontiguousarray(self._P[np.ix_(index, index)])
        self._feet = np.ascontiguousarray(self._feet[keep])
        self._names = [self._names[i] for i in keep]
        self._sync()

    def _append(self, foot: FootMeasurement) -> None:
        n = self._P.shape[0]
        P = np.zeros((n + 3, n + 3))
        P[:n, :n] = self._P
        P[n:, n:] = self._P[:3, :3] + self._C @ foot.covariance @ self._C.T
        self._P = P
        self._feet = np.vstack([self._feet, self._p + self._C @ foot.position])
        self._names.append(foot.name)
        self._sync()

    def nees(self, position: FloatArray, velocity: FloatArray, rotation: FloatArray) -> float:
        error = np.concatenate([np.asarray(position) - self._p, np.asarray(velocity) - self._v,
                                so3_log(self._C.T @ as_rotation_matrix(rotation))])
        return float(error @ np.linalg.solve(self._P[:9, :9], error))
