"""Initial attitude and IMU biases from a standing period (seed 003 §5.3: roll and pitch are observable from
gravity in the accelerometer, yaw is not; REP-105: the estimate starts at zero yaw and position in odom).

At rest the accelerometer measures ``a_m = C_WI^T [0, 0, g] + b_a`` and the gyro ``w_m = b_g`` (seed 003
(114) with ``a = 0``, ``w = 0``). Over the window: the gyro bias is the mean gyro reading; the mean specific
force gives roll and pitch (its direction) and the accelerometer bias along gravity (``|mean a| - g``; the
horizontal components cannot be told from a tilt). The rotation is the IMU's ``C_WI`` whose base yaw is zero.
"""

from __future__ import annotations

import math

import numpy as np

from kinodyn.spatial.rotations import FloatArray, euler_to_matrix

MIN_SAMPLES = 2
STAMP_RESOLUTION = 1e-9  # s: header stamps are integer nanoseconds


def level_rotation(specific_force: FloatArray) -> FloatArray:
    """``C_WB`` with zero yaw (ZYX Euler) that maps the base-frame ``specific_force`` at rest onto +z.

    ``C^T e_z = f / |f| = [-sin(pitch), sin(roll) cos(pitch), cos(roll) cos(pitch)]``.
    """
    fx, fy, fz = specific_force / np.linalg.norm(specific_force)
    roll = math.atan2(fy, fz)
    pitch = math.atan2(-fx, math.hypot(fy, fz))
    return euler_to_matrix([0.0, pitch, roll], "zyx")


class StandingInitializer:
    """Accumulates IMU samples while the robot stands; ``add`` returns True once ``duration`` seconds (stamp
    time) of samples are in. A sample that shows motion (gyro norm above ``max_gyro``, or a specific force
    whose norm differs from ``gravity``, or that differs from the window's mean, by more than
    ``max_accel_deviation``) is discarded and restarts the window; ``restart_reason`` tells why.

    ``imu_rotation`` is the extrinsic ``C_BI`` (IMU frame in the base): the result makes the base level in
    yaw, not the IMU.
    """

    def __init__(self, imu_rotation: FloatArray, duration: float = 0.5, gravity: float = 9.81,
                 max_gyro: float = 0.05, max_accel_deviation: float = 0.5) -> None:
        for name, value in (("duration", duration), ("gravity", gravity), ("max_gyro", max_gyro),
                            ("max_accel_deviation", max_accel_deviation)):
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"StandingInitializer {name} must be finite and > 0, got {value!r}")
        self.imu_rotation = np.array(imu_rotation, dtype=np.float64)
        self.duration = float(duration)
        self.gravity = float(gravity)
        self.max_gyro = float(max_gyro)
        self.max_accel_deviation = float(max_accel_deviation)
        self.restarts = 0
        self.restart_reason: str | None = None
        self._start = math.nan
        self._last = math.nan
        self._count = 0
        self._gyro_sum = np.zeros(3)
        self._accel_sum = np.zeros(3)

    @property
    def elapsed(self) -> float:
        """Stamp time covered by the current window (0 before the first sample)."""
        return 0.0 if self._count == 0 else self._last - self._start

    @property
    def samples(self) -> int:
        """Samples in the current window."""
        return self._count

    @property
    def done(self) -> bool:
        return self._count >= MIN_SAMPLES and self.elapsed >= self.duration - STAMP_RESOLUTION

    def add(self, stamp: float, angular_velocity: FloatArray, linear_acceleration: FloatArray) -> bool:
        """Add one finite IMU sample (IMU frame); True when the window is complete."""
        w = np.asarray(angular_velocity, dtype=np.float64)
        a = np.asarray(linear_acceleration, dtype=np.float64)
        if not (math.isfinite(stamp) and np.all(np.isfinite(w)) and np.all(np.isfinite(a))):
            raise ValueError("StandingInitializer.add takes finite samples; gate the IMU stream first")
        reason = self._motion(w, a)
        if reason is not None:
            self.restarts += 1
            self.restart_reason = reason
            self._count = 0
            self._gyro_sum[:] = 0.0
            self._accel_sum[:] = 0.0
            return False
        if self._count == 0:
            self._start = stamp
        self._last = stamp
        self._count += 1
        self._gyro_sum += w
        self._accel_sum += a
        return self.done

    def _motion(self, w: FloatArray, a: FloatArray) -> str | None:
        gyro = float(np.linalg.norm(w))
        if gyro > self.max_gyro:
            return f"moving: gyro {gyro:.3g} rad/s > max_gyro {self.max_gyro:g} while standing"
        deviation = abs(float(np.linalg.norm(a)) - self.gravity)
        if deviation > self.max_accel_deviation:
            return (f"moving: | |a| - g | = {deviation:.3g} m/s^2 > max_accel_deviation "
                    f"{self.max_accel_deviation:g} while standing")
        if self._count:
            drift = float(np.linalg.norm(a - self._accel_sum / self._count))
            if drift > self.max_accel_deviation:
                return (f"moving: specific force {drift:.3g} m/s^2 off the window's mean > "
                        f"max_accel_deviation {self.max_accel_deviation:g}")
        return None

    @property
    def gyroscope_bias(self) -> FloatArray:
        self._require_done()
        return self._gyro_sum / self._count

    @property
    def accelerometer_bias(self) -> FloatArray:
        """Bias along the measured gravity direction, ``(|mean a| - g) a / |a|`` (IMU frame)."""
        self._require_done()
        mean = self._accel_sum / self._count
        norm = float(np.linalg.norm(mean))
        return (norm - self.gravity) * mean / norm

    @property
    def rotation(self) -> FloatArray:
        """``C_WI`` with roll and pitch from the mean specific force and the base's yaw at zero."""
        self._require_done()
        C_BI = self.imu_rotation
        return level_rotation(C_BI @ (self._accel_sum / self._count)) @ C_BI

    def _require_done(self) -> None:
        if not self.done:
            raise RuntimeError(f"StandingInitializer has {self.elapsed:.3f} s of {self.duration:g} s: "
                               "wait until add() returns True")
