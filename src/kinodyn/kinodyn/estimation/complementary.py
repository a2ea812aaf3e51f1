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
    FilterArrays,
    FootMeasurement,
    GateParameters,
    LeggedFilter,
    navigation_block,
)
from kinodyn.estimation.registry import FilterKernels
from kinodyn.spatial import so3_log
from kinodyn.spatial.rotations import as_rotation_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.estimation.noise import NoiseParameters
    from kinodyn.spatial.rotations import FloatArray

_SMALL_ANGLE = 1e-8  # rad: below it the rotation increment's series limits are used


class ComplementaryState(NamedTuple):
    core: FilterArrays
    gravity: np.ndarray
    gains: np.ndarray  # position, velocity


@njit(cache=True)
def propagate(s: ComplementaryState, w_m: np.ndarray, a_m: np.ndarray, dt: float,
              accelerometer_variance: float, gyroscope_variance: float) -> None:
    c = s.core
    a = c.C @ (a_m - c.biases[:3]) + s.gravity
    for i in range(3):
        c.p[i] += c.v[i] * dt + 0.5 * a[i] * dt * dt
        c.v[i] += a[i] * dt
    phi = (w_m - c.biases[3:]) * dt
    t = math.sqrt(phi @ phi)
    K = np.array([[0.0, -phi[2], phi[1]], [phi[2], 0.0, -phi[0]], [-phi[1], phi[0], 0.0]])
    a_, b_ = (1.0, 0.5) if t < _SMALL_ANGLE else (math.sin(t) / t, (1.0 - math.cos(t)) / (t * t))
    c.C[:, :] = c.C @ (np.eye(3) + a_ * K + b_ * K @ K)
    for i in range(c.P.shape[0]):
        c.P[i, i] += (1e-4 + accelerometer_variance + gyroscope_variance) * dt


@njit(cache=True)
def correct(s: ComplementaryState, positions: np.ndarray, covariances: np.ndarray, accepted: np.ndarray,
            nis_feet: np.ndarray) -> float:
    c = s.core
    m = positions.shape[0]
    error = np.zeros(3)
    nis = 0.0
    for k in range(m):
        nu = c.feet[k] - c.C @ positions[k] - c.p
        nis_feet[k] = (nu @ nu) / (c.P[0, 0] + covariances[k, 0, 0] + 1e-12)
        accepted[k] = True
        nis += nis_feet[k]
        error += nu / m
    for i in range(3):
        c.p[i] += s.gains[0] * error[i]
        c.v[i] += s.gains[1] * error[i]
    for i in range(c.P.shape[0]):
        c.P[i, i] *= 1.0 - s.gains[0]
    return nis


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


class ComplementaryFilter(LeggedFilter):
    """The complementary filter (module doc), a ``LeggedFilter``; it accepts every foot (``gate`` is inf)."""

    Parameters = ComplementaryParameters
    KERNELS = FilterKernels(ComplementaryState, propagate, correct, navigation_block)

    def __init__(self, noise: NoiseParameters | None = None, gravity: float = 9.81,
                 gate_probability: float = ComplementaryParameters.gate_probability,
                 position_gain: float = ComplementaryParameters.position_gain,
                 velocity_gain: float = ComplementaryParameters.velocity_gain) -> None:
        self._gravity = self._configure(
            ComplementaryParameters(gate_probability, position_gain, velocity_gain), noise, gravity)
        self.gate = math.inf
        self._gains = np.array([position_gain, velocity_gain])
        self._start_uninitialized()

    def _start(self, covariance: FloatArray) -> None:
        self._P = covariance

    def _sync(self) -> None:
        self._state = ComplementaryState(self._core(), self._gravity, self._gains)

    def _append(self, foot: FootMeasurement) -> None:
        n = self._P.shape[0]
        P = np.zeros((n + 3, n + 3))
        P[:n, :n] = self._P
        P[n:, n:] = self._P[:3, :3] + self._C @ foot.covariance @ self._C.T
        self._P = P
        self._feet = np.vstack([self._feet, self._p + self._C @ foot.position])
        self._names.append(foot.name)
        self._sync()

    def nees(self, position: ArrayLike, velocity: ArrayLike, rotation: ArrayLike) -> float:
        error = np.concatenate([np.asarray(position) - self._p, np.asarray(velocity) - self._v,
                                so3_log(self._C.T @ as_rotation_matrix(rotation))])
        return float(error @ np.linalg.solve(self._P[:9, :9], error))
