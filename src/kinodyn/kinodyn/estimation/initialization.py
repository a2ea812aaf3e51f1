"""Initial attitude and IMU biases from a standing period (Robot Dynamics Essential, §5.3: roll and pitch are
observable from gravity in the accelerometer, yaw is not; REP-105: the estimate starts at zero yaw and
position in odom).

At rest the accelerometer measures ``a_m = C_WI^T [0, 0, g] + b_a`` and the gyro ``w_m = b_g`` (Robot Dynamics
Essential, (114) with ``a = 0``, ``w = 0``). Over the window: the gyro bias is the mean gyro reading; the mean
specific force gives roll and pitch (its direction) and the accelerometer bias along gravity (``|mean a| -
g``; the horizontal components cannot be told from a tilt). The rotation is the IMU's ``C_WI`` whose base yaw
is zero.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.spatial.rotations import FloatArray, euler_to_matrix, skew

if TYPE_CHECKING:
    from kinodyn.estimation.noise import NoiseParameters

MIN_SAMPLES = 2
STAMP_RESOLUTION = 1e-9  # s: header stamps are integer nanoseconds
RESOLUTION = 1e-6
"""Initial std of the position (m) and the yaw (rad), zero by definition in odom: the float resolution of a
metre-scale state, kept so that P is positive definite (Cholesky, NEES)."""


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

    def covariance(self, noise: NoiseParameters, lever: FloatArray | None = None) -> FloatArray:
        """15x15 covariance of the initial error ``[dp, dv, dtheta(local), db_a, db_g]`` (ESKF convention,
        ``LeggedFilter.initialize``; docs/estimation.md "Initialisation").

        Position and yaw are zero by definition in odom (REP-105): variance ``RESOLUTION**2`` only (P stays
        positive definite). The mean specific force ``|a| u`` (``u`` = gravity's direction in the IMU frame)
        gives ``a_true = g C^T e_z + b_a``, so a horizontal accelerometer bias (or the window's mean noise
        ``n``) looks like a tilt, ``u x dtheta = (db_a + n) / g`` with ``db_a = b_a - b^_a`` of horizontal
        prior ``noise.initial_accelerometer_bias`` and, along ``u``, the mean noise ``sigma_a^2 / T`` (``T``
        the window's time, ``sigma_a`` the white-noise density): the tilt is exactly correlated with the
        bias. The zero base yaw (ZYX) makes the error a roll and pitch of the base, ``dtheta = L [u]x (db_a +
        n) / g`` (``L``: ``_tilt_map``), which turns about ``u`` by ``-sin(pitch) droll``. The gyroscope bias
        is the mean of the window: ``sigma_g^2 / T``. The velocity keeps ``noise.initial_velocity``. With
        the IMU started at ``rotation @ lever`` (the base at the origin, ``lever`` in the IMU frame), its
        position error is that of the tilt, ``dp = -C [lever]x dtheta``."""
        self._require_done()
        mean = self._accel_sum / self._count
        u = mean / np.linalg.norm(mean)
        T = self.elapsed * self._count / (self._count - 1)  # samples x period
        sb2 = noise.initial_accelerometer_bias**2
        mean_a2 = noise.accelerometer_noise_density**2 / T
        M = self._tilt_map(u) @ skew(u) / self.gravity  # dtheta = M (db_a + n)
        P_bb = sb2 * (np.eye(3) - np.outer(u, u)) + mean_a2 * np.outer(u, u)
        P = np.zeros((15, 15))
        P[0:3, 0:3] = RESOLUTION**2 * np.eye(3)
        P[3:6, 3:6] = noise.initial_velocity**2 * np.eye(3)
        P[6:9, 6:9] = M @ (P_bb + mean_a2 * np.eye(3)) @ M.T + RESOLUTION**2 * np.outer(u, u)
        P[6:9, 9:12] = M @ P_bb
        P[9:12, 6:9] = P[6:9, 9:12].T
        P[9:12, 9:12] = P_bb
        P[12:15, 12:15] = noise.gyroscope_noise_density**2 / T * np.eye(3)
        if lever is not None:
            J = np.eye(15)
            J[0:3, 6:9] = -self.rotation @ skew(np.asarray(lever, dtype=np.float64))
            P = J @ P @ J.T
        result: FloatArray = 0.5 * (P + P.T)
        return result

    def _tilt_map(self, u: FloatArray) -> FloatArray:
        """``L`` with ``dtheta = L t`` for a tilt error ``t`` perpendicular to ``u`` (IMU frame): in the base,
        the error of ``Ry(pitch) Rx(roll)`` is ``e_x droll + Rx(roll)^T e_y dpitch``, whose part across
        ``u`` must be ``t``."""
        C_BI = self.imu_rotation
        u_B = C_BI @ u
        roll = math.atan2(u_B[1], u_B[2])
        V = np.array([[1.0, 0.0], [0.0, math.cos(roll)], [0.0, -math.sin(roll)]])  # [e_x, Rx^T e_y]
        across = (np.eye(3) - np.outer(u_B, u_B)) @ V
        result: FloatArray = C_BI.T @ V @ np.linalg.pinv(across) @ (np.eye(3) - np.outer(u_B, u_B)) @ C_BI
        return result

    def _require_done(self) -> None:
        if not self.done:
            raise RuntimeError(f"StandingInitializer has {self.elapsed:.3f} s of {self.duration:g} s: "
                               "wait until add() returns True")
