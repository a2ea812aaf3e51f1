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

import numpy as np

from kinodyn.model import Model
from kinodyn.spatial import matrix_to_quat


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
        self.reading: ImuReading | None = None

    def _kinematics(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(C_WI, world linear velocity of the IMU point, world angular velocity)``."""
        T = self.model.frame_placement(q, self.frame)
        twist = self.model.frame_jacobian(q, self.frame, "local_world_aligned") @ v
        return T[:3, :3], twist[:3], twist[3:]

    def reset(self, q: np.ndarray, v: np.ndarray, dt: float) -> ImuReading:
        """Restart at ``(q, v)`` (the first reading assumes no acceleration over the previous step)."""
        _, self._velocity, _ = self._kinematics(q, v)
        return self.update(q, v, dt)

    def update(self, q: np.ndarray, v: np.ndarray, dt: float) -> ImuReading:
        """The reading at ``(q, v)``, ``dt`` after the previous ``update`` (or ``reset``)."""
        C, velocity, omega = self._kinematics(q, v)
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
        self.reading = ImuReading(matrix_to_quat(C), rate, specific_force)
        return self.reading
