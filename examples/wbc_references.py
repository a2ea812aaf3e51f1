"""Reference motions of the closed-loop examples, with analytic velocity and acceleration feed-forward.

- ``sinusoid``: ``offset + amplitude sin(2 pi f t + phase)`` and its first two time derivatives.
- ``min_jerk``: the fifth-order rest-to-rest blend ``s = 10 u^3 - 15 u^4 + 6 u^5`` (Flash and Hogan 1985),
  zero velocity and acceleration at both ends, so a task switched on along it asks for no step.
- ``zyx_orientation``: the rotation ``C = Cz(yaw) Cy(pitch) Cx(roll)`` (Robot Dynamics lecture notes (ETH),
  (2.41)) of given angle trajectories, its world angular velocity ``omega = E(chi) chi_dot`` (Robot Dynamics
  lecture notes (ETH), (2.82), the columns of ``E`` being the three rotation axes in the world frame) and
  ``omega_dot = E chi_ddot + Edot chi_dot``, where the second axis turns with ``yaw_dot e_z`` and the third
  with ``yaw_dot e_z + pitch_dot e_2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from kinodyn.spatial.rotations import euler_to_matrix, rot_y, rot_z


@dataclass(frozen=True)
class Trajectory:
    """Value, first and second time derivative at one instant (arrays of one shape)."""

    value: np.ndarray
    rate: np.ndarray
    acceleration: np.ndarray


def sinusoid(t: float, amplitude: np.ndarray, frequency: float, phase: np.ndarray | float = 0.0,
             offset: np.ndarray | float = 0.0) -> Trajectory:
    """``offset + amplitude sin(w t + phase)``, ``w = 2 pi frequency``, element-wise."""
    w = 2.0 * math.pi * frequency
    angle = w * t + np.asarray(phase, dtype=float)
    a = np.asarray(amplitude, dtype=float)
    return Trajectory(offset + a * np.sin(angle), a * w * np.cos(angle), -a * w * w * np.sin(angle))


def min_jerk(t: float, start: np.ndarray, goal: np.ndarray, duration: float) -> Trajectory:
    """Rest-to-rest fifth-order blend from ``start`` (t <= 0) to ``goal`` (t >= duration)."""
    u = min(max(t / duration, 0.0), 1.0)
    s = u**3 * (10.0 - 15.0 * u + 6.0 * u * u)
    ds = 30.0 * u * u * (1.0 - u) ** 2 / duration
    dds = 60.0 * u * (1.0 - u) * (1.0 - 2.0 * u) / duration**2
    start, delta = np.asarray(start, dtype=float), np.asarray(goal, dtype=float) - start
    return Trajectory(start + s * delta, ds * delta, dds * delta)


@dataclass(frozen=True)
class OrientationTrajectory:
    """``rotation`` (world <- frame), world ``angular_velocity`` and ``angular_acceleration``."""

    rotation: np.ndarray
    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray


def zyx_orientation(angles: Trajectory) -> OrientationTrajectory:
    """Orientation of intrinsic yaw-pitch-roll angles ``[yaw, pitch, roll]`` and their rates (module doc)."""
    (yaw, pitch, _), rates, accelerations = angles.value, angles.rate, angles.acceleration
    Cz = rot_z(yaw)
    # E of the Robot Dynamics lecture notes (ETH), (2.82)
    axes = np.column_stack([[0.0, 0.0, 1.0], Cz[:, 1], (Cz @ rot_y(pitch))[:, 0]])
    omega = axes @ rates
    turn_second = rates[0] * axes[:, 0]
    turn_third = turn_second + rates[1] * axes[:, 1]
    omega_dot = (axes @ accelerations + rates[1] * np.cross(turn_second, axes[:, 1])
                 + rates[2] * np.cross(turn_third, axes[:, 2]))
    return OrientationTrajectory(euler_to_matrix(angles.value, "zyx"), omega, omega_dot)
