"""IMU model: specific force and angular rate in the IMU frame, with white noise and bias random walk.

True values at the end of a step, for the IMU frame I (a URDF link) with world placement ``C_WI``:

- angular rate ``I ω = C_WI^T W ω`` (the frame's angular velocity, Robot Dynamics lecture notes (ETH) §2.5);
- specific force ``I f = C_WI^T (a - g)``, where ``a`` is the mean world acceleration of the IMU
  point over the last step, ``(v_I(t) - v_I(t - dt)) / dt`` (what an IMU averaging over its
  sample period measures); at rest it reads ``-g``, i.e. +9.81 m/s² along the world's up axis;
- orientation ``C_WI`` as a quaternion (x, y, z, w), ground truth (no noise).

Noise, per axis, with the usual continuous-time densities (e.g. Kalibr's IMU parameters): reading
``= true + b + σ / sqrt(dt) n``, bias ``b += σ_b sqrt(dt) n'``, n, n' standard normal from a seeded
``numpy.random.Generator``. Units: ``σ`` in (m/s²)/√Hz or (rad/s)/√Hz, ``σ_b`` in m/s³/√Hz or rad/s²/√Hz.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kinodyn.inputs import F64
from kinodyn.kernel import IN1, INT, KF, KI, OUT1, OUT2, Kernel
from kinodyn.kinematics.forward import frame_placement_kernel
from kinodyn.kinematics.jacobians import LOCAL_WORLD_ALIGNED, frame_jacobian_kernel
from kinodyn.spatial.compiled import rotation_to_quaternion

if TYPE_CHECKING:
    from kinodyn.model import Model


@dataclass(frozen=True)
class ImuNoise:
    """Noise densities of the accelerometer and gyroscope (zero: noiseless)."""

    accelerometer_noise_density: float = 0.0
    accelerometer_random_walk: float = 0.0
    gyroscope_noise_density: float = 0.0
    gyroscope_random_walk: float = 0.0

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not (np.isfinite(value) and value >= 0.0):
                raise ValueError(f"IMU {name} must be finite and >= 0, got {value}")


@dataclass(frozen=True)
class ImuReading:
    """One IMU sample: ``orientation`` (x, y, z, w) of the IMU frame in the world, ``angular_velocity``
    [rad/s] and ``linear_acceleration`` (specific force) [m/s²], both in the IMU frame."""

    orientation: np.ndarray
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray


@njit(cache=True)
def frame_kinematics(ki: np.ndarray, kf: np.ndarray, q: np.ndarray, frame: int, placement: np.ndarray,
                     jacobian: np.ndarray, orientation: np.ndarray) -> None:
    """The IMU frame's ``placement`` (4x4, world <- frame), its ``local_world_aligned`` ``jacobian``
    (6 x nv) and ``orientation`` (x, y, z, w) of the placement's rotation: the kernels of
    ``Model.frame_placement``, ``Model.frame_jacobian`` and ``spatial.matrix_to_quat`` in one call (the
    rotation of a placement needs none of ``matrix_to_quat``'s input checks)."""
    frame_placement_kernel(ki, kf, q, frame, placement)
    frame_jacobian_kernel(ki, kf, q, frame, LOCAL_WORLD_ALIGNED, jacobian)
    rotation_to_quaternion(placement[:3, :3], orientation)


_FRAME_KINEMATICS = Kernel(frame_kinematics, KI, KF, IN1, INT, OUT2, OUT2, OUT1)


class ImuSensor:
    """An IMU on frame ``frame`` of ``model``; call ``reset`` once, then ``update`` after every step."""

    def __init__(self, model: Model, frame: str, noise: ImuNoise | None = None,
                 rng: np.random.Generator | int | None = None) -> None:
        self.model = model
        self.frame = model.frame_id(frame)
        self.noise = noise or ImuNoise()
        self._noiseless = not any(vars(self.noise).values())  # no draws: every density is 0
        self.rng = np.random.default_rng(rng)
        self.accelerometer_bias = np.zeros(3)
        self.gyroscope_bias = np.zeros(3)
        self._velocity = np.zeros(3)
        self._placement = np.empty((4, 4))
        self._jacobian = np.empty((6, model.nv))
        self._q_shape = (model.nq,)
        self.reading: ImuReading | None = None

    def _kinematics(self, q: np.ndarray, v: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(C_WI, its quaternion (x, y, z, w), world linear velocity of the IMU point, world angular
        velocity)`` at the state ``(q, v)``."""
        if type(q) is not np.ndarray or q.dtype is not F64 or q.shape != self._q_shape:
            q = self.model.check_q(q)  # the kernel takes a float64 array of nq entries, unchecked
        orientation = np.empty(4)
        ki, kf = self.model.kernel_data
        _FRAME_KINEMATICS.call(ki, kf, q, self.frame, self._placement, self._jacobian, orientation)
        twist = self._jacobian @ v
        return self._placement[:3, :3], orientation, twist[:3], twist[3:]

    def reset(self, q: np.ndarray, v: np.ndarray, dt: float) -> ImuReading:
        """Restart at ``(q, v)`` (the first reading assumes no acceleration over the previous step)."""
        _, _, self._velocity, _ = self._kinematics(q, v)
        return self.update(q, v, dt)

    def update(self, q: np.ndarray, v: np.ndarray, dt: float) -> ImuReading:
        """The reading at ``(q, v)``, ``dt`` after the previous ``update`` (or ``reset``)."""
        C, orientation, velocity, omega = self._kinematics(q, v)
        acceleration = (velocity - self._velocity) / dt
        self._velocity = velocity
        specific_force = C.T @ (acceleration - self.model.gravity)
        rate = C.T @ omega
        if self._noiseless:  # every noise term is zero: the biases stay zero, and adding them is all there is
            specific_force += self.accelerometer_bias
            rate += self.gyroscope_bias
        else:
            n = self.noise
            rng = self.rng
            root_dt = np.sqrt(dt)
            self.accelerometer_bias = self.accelerometer_bias + n.accelerometer_random_walk * root_dt * \
                rng.standard_normal(3)
            self.gyroscope_bias = self.gyroscope_bias + n.gyroscope_random_walk * root_dt * \
                rng.standard_normal(3)
            specific_force += self.accelerometer_bias + n.accelerometer_noise_density / root_dt * \
                rng.standard_normal(3)
            rate += self.gyroscope_bias + n.gyroscope_noise_density / root_dt * rng.standard_normal(3)
        self.reading = ImuReading(orientation, rate, specific_force)
        return self.reading
