"""Maps between the time derivative of a rotation parameterization and angular velocity.

Robot Dynamics lecture notes (ETH), §2.5.1, (2.82)-(2.107): ``I_omega_IB = E_R(chi) chi_dot`` with ``chi`` the
parameters of ``C_IB``. The notes' seven E_R give the angular velocity in the fixed (world, inertial) frame I.
The body-frame maps (◇, not in the notes, needed by the floating-base velocity (2.245)) follow
from ``B_omega = C_IB^T I_omega``: ``E_body = C^T E_world`` and ``E_body^-1 = E_world^-1 C``.

Parameter layouts and names are those of rotations.PARAMETERIZATIONS. For the quaternion and the
angle-axis (4 parameters, 3 degrees of freedom) ``E`` is 3x4 and the "inverse" is the 4x3 right
inverse whose rates keep the unit constraint (``q . q_dot = 0``, ``n . n_dot = 0``):
``E @ E_inv = I3`` and ``E_inv @ E`` is the projector onto those rates.

Singular cases raise ValueError in the inverse maps (the forward maps are defined everywhere):
- Tait-Bryan sets "euler_zyx", "euler_xyz": ``|cos(middle)| < SINGULARITY_TOLERANCE`` (gimbal lock);
- proper sets "euler_zyz", "euler_zxz": ``|sin(middle)| < SINGULARITY_TOLERANCE``;
- "angle_axis": ``|sin(theta/2)| < SINGULARITY_TOLERANCE`` (theta = 0: the axis rate is undefined);
- "rotvec": ``|phi| = 2 pi k``, k >= 1 (lie.JACOBIAN_SINGULARITY_TOLERANCE); |phi| = 0 is regular;
- "quaternion": never.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.spatial.lie import so3_left_jacobian, so3_left_jacobian_inverse
from kinodyn.spatial.rotations import (
    FloatArray,
    as_unit_axis,
    as_unit_quaternion,
    as_vector,
    elementary_rotation,
    parameter_size,
    parameters_to_matrix,
    skew,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

SINGULARITY_TOLERANCE = 1e-9
"""Inverse maps raise when the quantity that vanishes at their singularity is below this."""
FRAMES = ("world", "body")

_UNIT = {"x": np.array([1.0, 0.0, 0.0]), "y": np.array([0.0, 1.0, 0.0]), "z": np.array([0.0, 0.0, 1.0])}


def _euler_rate_matrix_world(angles: FloatArray, sequence: str) -> FloatArray:
    """Columns: the three rotation axes in the fixed frame, ``[e_a, C_a e_b, C_a C_b e_c]``.

    Robot Dynamics lecture notes (ETH), §2.5.1 construction of (2.86), (2.88), (2.90), (2.92).
    """
    a, b, c = sequence[0], sequence[1], sequence[2]
    first = elementary_rotation(a, angles[0])
    first_two = first @ elementary_rotation(b, angles[1])
    return np.column_stack([_UNIT[a], first @ _UNIT[b], first_two @ _UNIT[c]])


def _euler_rate_matrix_world_inverse(angles: FloatArray, sequence: str) -> FloatArray:
    """Inverse of _euler_rate_matrix_world (Robot Dynamics lecture notes (ETH), (2.87), (2.89), (2.91),
    (2.93)); det = +-cos or +-sin of the middle angle, which is checked against SINGULARITY_TOLERANCE."""
    E = _euler_rate_matrix_world(angles, sequence)
    determinant = float(np.linalg.det(E))
    if abs(determinant) < SINGULARITY_TOLERANCE:
        kind = "cos" if sequence[0] != sequence[2] else "sin"
        raise ValueError(
            f"Euler {sequence} rates are undefined at gimbal lock: middle angle {angles[1]:.12g} has "
            f"|{kind}| = {abs(determinant):.3g} < {SINGULARITY_TOLERANCE}; use a quaternion or rotation "
            "vector near this orientation"
        )
    return np.asarray(np.linalg.inv(E), dtype=np.float64)


def _quaternion_h(quaternion: FloatArray) -> FloatArray:
    """``H(xi) = [[v]x + w I, -v]`` in (x, y, z, w) storage (Robot Dynamics lecture notes (ETH),
    (2.96)-(2.97))."""
    v, w = quaternion[:3], quaternion[3]
    return np.column_stack([skew(v) + w * np.eye(3), -v])


def _angle_axis_rate_matrix_world(value: FloatArray) -> FloatArray:
    """``[n, sin(theta) I + (1 - cos(theta)) [n]x]`` (Robot Dynamics lecture notes (ETH), (2.100),
    (2.102))."""
    angle, axis = value[0], as_unit_axis(value[1:])
    return np.column_stack([axis, math.sin(angle) * np.eye(3) + (1.0 - math.cos(angle)) * skew(axis)])


def _angle_axis_rate_matrix_world_inverse(value: FloatArray) -> FloatArray:
    """``[n^T; -cot(theta/2)/2 [n]x^2 - [n]x/2]`` (Robot Dynamics lecture notes (ETH), (2.101), (2.103), with
    ``sin(theta)/(1 - cos(theta)) = cot(theta/2)``)."""
    angle, axis = value[0], as_unit_axis(value[1:])
    sin_half = math.sin(0.5 * angle)
    if abs(sin_half) < SINGULARITY_TOLERANCE:
        raise ValueError(
            f"angle-axis rates are undefined at angle {angle:.12g} (a multiple of 2 pi, identity rotation): "
            "the axis rate has no solution; use a quaternion or rotation vector there"
        )
    K = skew(axis)
    return np.vstack([axis, -0.5 * math.cos(0.5 * angle) / sin_half * (K @ K) - 0.5 * K])


def _rate_matrix_world(parameterization: str, value: FloatArray) -> FloatArray:
    if parameterization.startswith("euler_"):
        return _euler_rate_matrix_world(value, parameterization.removeprefix("euler_"))
    if parameterization == "quaternion":
        return 2.0 * _quaternion_h(as_unit_quaternion(value))
    if parameterization == "angle_axis":
        return _angle_axis_rate_matrix_world(value)
    return so3_left_jacobian(value)


def _rate_matrix_world_inverse(parameterization: str, value: FloatArray) -> FloatArray:
    if parameterization.startswith("euler_"):
        return _euler_rate_matrix_world_inverse(value, parameterization.removeprefix("euler_"))
    if parameterization == "quaternion":
        H_T: FloatArray = _quaternion_h(as_unit_quaternion(value)).T
        return 0.5 * H_T
    if parameterization == "angle_axis":
        return _angle_axis_rate_matrix_world_inverse(value)
    return so3_left_jacobian_inverse(value)


def _check(parameterization: str, value: ArrayLike, frame: str) -> FloatArray:
    if frame not in FRAMES:
        raise ValueError(f"angular velocity frame must be one of {FRAMES}, got {frame!r}")
    size = parameter_size(parameterization)
    return as_vector(value, size, f"{parameterization} parameters")


def rate_matrix(parameterization: str, value: ArrayLike, frame: str = "world") -> FloatArray:
    """``E`` (3 x m) with ``omega = E @ chi_dot``, omega in the world frame (Robot Dynamics lecture notes
    (ETH), (2.82)) or body frame.

    ``value`` holds the parameters of ``C_world_body`` (layout of rotations.parameters_to_matrix).
    """
    chi = _check(parameterization, value, frame)
    E = _rate_matrix_world(parameterization, chi)
    if frame == "world":
        return E
    C_T: FloatArray = parameters_to_matrix(parameterization, chi).T  # body <- world
    return C_T @ E


def inverse_rate_matrix(parameterization: str, value: ArrayLike, frame: str = "world") -> FloatArray:
    """``E^-1`` (m x 3) with ``chi_dot = E^-1 @ omega``; raises ValueError at the singularities listed
    in the module docstring."""
    chi = _check(parameterization, value, frame)
    E_inv = _rate_matrix_world_inverse(parameterization, chi)
    if frame == "world":
        return E_inv
    return E_inv @ parameters_to_matrix(parameterization, chi)


def angular_velocity_from_rates(
    parameterization: str, value: ArrayLike, rates: ArrayLike, frame: str = "world"
) -> FloatArray:
    """Angular velocity ``E(chi) chi_dot`` in ``frame`` ("world" or "body") of the rotation ``chi``."""
    E = rate_matrix(parameterization, value, frame)
    return E @ as_vector(rates, E.shape[1], f"{parameterization} rates")


def rates_from_angular_velocity(
    parameterization: str, value: ArrayLike, omega: ArrayLike, frame: str = "world"
) -> FloatArray:
    """Parameter rates ``E^-1(chi) omega`` for the angular velocity ``omega`` given in ``frame``."""
    return inverse_rate_matrix(parameterization, value, frame) @ as_vector(omega, 3, "angular velocity")
