"""SO(3) and SE(3): exponential and logarithm maps, SO(3) Jacobians, homogeneous transforms.

Robot Dynamics lecture notes (ETH), §2.4.5 (rotation vector), §2.5.1 (2.104)-(2.107) and §2.6 (2.108)-(2.112);
Rotations and inverse kinematics (Fredriksson), §2.6-2.7 (exp/log, Rodrigues). Twists are ordered ``[linear;
angular]`` (docs/conventions.md).

Series branches: the coefficients below are ratios that are 0/0 at angle 0 and lose digits to
cancellation near it, so below SMALL_ANGLE they are evaluated from their Taylor series, truncated
where the next term is below 1e-20 (relative) at SMALL_ANGLE. ``so3_exp``, ``so3_log`` and
``so3_left_jacobian`` and ``so3_left_jacobian_inverse`` run the compiled implementations of
``kinodyn.spatial.compiled``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from kinodyn.kernel import IN1, OUT2, Kernel
from kinodyn.spatial import compiled as _c
from kinodyn.spatial.compiled import SMALL_ANGLE
from kinodyn.spatial.rotations import (
    FloatArray,
    as_rotation_matrix,
    as_vector,
    matrix_to_rotvec,
    rotvec_to_matrix,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

_SO3_LEFT_JACOBIAN = Kernel(_c.so3_left_jacobian, IN1, OUT2)
_SO3_LEFT_JACOBIAN_INVERSE = Kernel(_c.so3_left_jacobian_inverse, IN1, OUT2)
JACOBIAN_SINGULARITY_TOLERANCE = 1e-9
"""``|sin(theta/2)|`` below which the SO(3) Jacobian inverse (singular at theta = 2 pi k, k >= 1) raises."""


def so3_exp(phi: ArrayLike) -> FloatArray:
    """Exponential map of SO(3): rotation matrix of the rotation vector ``phi`` (Rodrigues).

    Robot Dynamics lecture notes (ETH), (2.48), Rotations and inverse kinematics (Fredriksson), (7), (22),
    (25); branches as in rotations.rotvec_to_matrix.
    """
    return rotvec_to_matrix(phi)


def so3_log(C: ArrayLike) -> FloatArray:
    """Logarithm of SO(3): rotation vector of ``C`` with angle in [0, pi].

    Robot Dynamics lecture notes (ETH), (2.49)-(2.50), Rotations and inverse kinematics (Fredriksson),
    (29)-(32); small-angle and near-pi branches as in rotations.matrix_to_rotvec.
    """
    return matrix_to_rotvec(C)


def _check_jacobian_invertible(angle: float) -> None:
    """ValueError where ``J_l`` is singular: ``|sin(angle / 2)| < JACOBIAN_SINGULARITY_TOLERANCE``."""
    if angle >= SMALL_ANGLE and abs(math.sin(0.5 * angle)) < JACOBIAN_SINGULARITY_TOLERANCE:
        raise ValueError(
            f"the SO(3) Jacobian is singular at rotation angle {angle:.12g} (a nonzero multiple of 2 pi); "
            "use the equivalent rotation vector of angle in [0, pi] (so3_log(so3_exp(phi)))"
        )


def so3_left_jacobian(phi: ArrayLike) -> FloatArray:
    """Left Jacobian ``J_l(phi) = I + (1-cos t)/t^2 [phi]x + (t - sin t)/t^3 [phi]x^2``, t = |phi|.

    ``so3_exp(phi + d) ~= so3_exp(J_l(phi) d) so3_exp(phi)``; it is the notes' rotation-vector map
    ``I_omega = E_R phi_dot`` (Robot Dynamics lecture notes (ETH), (2.104), (2.106)).
    """
    out = np.empty((3, 3))
    _SO3_LEFT_JACOBIAN.call(as_vector(phi, 3, "rotation vector"), out)
    return out


def so3_left_jacobian_inverse(phi: ArrayLike) -> FloatArray:
    """``J_l(phi)^-1 = I - [phi]x / 2 + (1 - (t/2) cot(t/2))/t^2 [phi]x^2`` (Robot Dynamics lecture notes
    (ETH), (2.105), (2.107)).

    Singular at t = 2 pi k (k >= 1): raises ValueError there.
    """
    vector = as_vector(phi, 3, "rotation vector")
    _check_jacobian_invertible(float(np.linalg.norm(vector)))
    out = np.empty((3, 3))
    _SO3_LEFT_JACOBIAN_INVERSE.call(vector, out)
    return out


def so3_right_jacobian(phi: ArrayLike) -> FloatArray:
    """Right Jacobian ``J_r(phi) = J_l(-phi) = J_l(phi)^T``: ``exp(phi + d) ~= exp(phi) exp(J_r d)``.

    It maps the rotation-vector rate to the body-frame angular velocity (◇, not in the notes).
    """
    J_r: FloatArray = so3_left_jacobian(phi).T
    return J_r


def so3_right_jacobian_inverse(phi: ArrayLike) -> FloatArray:
    """``J_r(phi)^-1 = J_l(phi)^-T``; singular at |phi| = 2 pi k (k >= 1)."""
    J_r_inverse: FloatArray = so3_left_jacobian_inverse(phi).T
    return J_r_inverse


def homogeneous_transform(C: ArrayLike, r: ArrayLike) -> FloatArray:
    """``T_AB = [[C_AB, A r_AB], [0, 1]]`` (Robot Dynamics lecture notes (ETH), (2.109)-(2.110))."""
    T = np.eye(4)
    T[:3, :3] = as_rotation_matrix(C)
    T[:3, 3] = as_vector(r, 3, "translation")
    return T


def _as_transform(T: ArrayLike) -> FloatArray:
    matrix = np.asarray(T, dtype=np.float64)
    if matrix.shape != (4, 4):
        raise ValueError(f"a homogeneous transform must have shape (4, 4), got shape {matrix.shape}")
    if not np.allclose(matrix[3], [0.0, 0.0, 0.0, 1.0], rtol=0.0, atol=1e-12):
        raise ValueError(f"the last row of a homogeneous transform must be [0, 0, 0, 1], got {matrix[3]}")
    as_rotation_matrix(matrix[:3, :3])
    return matrix


def inverse_transform(T: ArrayLike) -> FloatArray:
    """``T_AB^-1 = [[C^T, -C^T r], [0, 1]]`` (Robot Dynamics lecture notes (ETH), (2.111))."""
    matrix = _as_transform(T)
    C, r = matrix[:3, :3], matrix[:3, 3]
    return homogeneous_transform(C.T, -C.T @ r)


def se3_exp(twist: ArrayLike) -> FloatArray:
    """Exponential of the twist ``[v; w]`` (unit time): ``[[exp([w]x), J_l(w) v], [0, 1]]``.

    ◇ The closed form of the matrix exponential of ``[[[w]x, v], [0, 0]]`` (Modern Robotics
    uses ``exp([A] theta)`` in (8.50) without writing it out); ``J_l`` is so3_left_jacobian, whose
    small-angle branch makes this exact at w = 0 (pure translation).
    """
    xi = as_vector(twist, 6, "twist [v; w]")
    T = np.eye(4)
    T[:3, :3] = so3_exp(xi[3:])
    T[:3, 3] = so3_left_jacobian(xi[3:]) @ xi[:3]
    return T


def se3_log(T: ArrayLike) -> FloatArray:
    """Logarithm of SE(3): the twist ``[v; w]`` with ``se3_exp([v; w]) = T`` and |w| in [0, pi].

    ``w = so3_log(C)`` (its small-angle and near-pi branches), ``v = J_l(w)^-1 r`` (regular for
    |w| <= pi).
    """
    matrix = _as_transform(T)
    w = so3_log(matrix[:3, :3])
    return np.concatenate([so3_left_jacobian_inverse(w) @ matrix[:3, 3], w])
