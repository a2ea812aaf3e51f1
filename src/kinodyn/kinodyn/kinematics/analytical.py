"""Frame pose parameters and the analytical Jacobian (Robot Dynamics lecture notes (ETH), §2.8.3-2.8.6).

``chi_e = [I r_IE; chi_R(C_IE)]`` stacks the frame origin in world coordinates and a rotation
parameterization of ``C_world_frame`` (2.133)-(2.138). Its Jacobian along the generalized velocity,
``chi_e_dot = J_A v``, follows from the geometric Jacobian by (2.189)-(2.192):
``J_A = [J_P; E_R^-1 J_R]``, with ``J_P``, ``J_R`` the "local_world_aligned" frame Jacobian (origin
velocity and angular velocity, both in world axes) and ``E_R^-1`` the world-frame inverse rate map
of spatial.rates. For a floating base the columns follow ``v`` (base twist in the base frame),
so ``J_A v`` is the rate of ``chi_e`` along ``model.integrate(q, v, t)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kinodyn.spatial.rates import inverse_rate_matrix
from kinodyn.spatial.rotations import FloatArray, matrix_to_parameters

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from kinodyn.model import Model


def frame_pose_parameters(model: Model, q: ArrayLike, frame: str | int, parameterization: str) -> FloatArray:
    """``chi_e = [position of the frame origin in world; chi_R]`` (3 + m), Robot Dynamics lecture notes (ETH),
    (2.137)-(2.138).

    ``chi_R`` is on the branch of rotations.matrix_to_parameters (e.g. quaternion w >= 0).
    """
    placement = model.frame_placement(q, frame)
    return np.concatenate([placement[:3, 3], matrix_to_parameters(parameterization, placement[:3, :3])])


def analytical_jacobian(model: Model, q: ArrayLike, frame: str | int, parameterization: str) -> FloatArray:
    """Analytical Jacobian ``J_A = [J_P; E_R^-1 J_R]`` ((3 + m) x nv) of frame_pose_parameters.

    Robot Dynamics lecture notes (ETH), (2.145)-(2.148) and (2.192). m is 3 for Euler angles and the rotation
    vector, 4 for the quaternion and the angle-axis (their rows keep the unit constraint). Raises ValueError
    where ``E_R`` is singular (Euler gimbal lock, angle-axis at angle 0; see spatial.rates).
    """
    placement = model.frame_placement(q, frame)
    chi_R = matrix_to_parameters(parameterization, placement[:3, :3])
    J = model.frame_jacobian(q, frame, "local_world_aligned")
    return np.vstack([J[:3], inverse_rate_matrix(parameterization, chi_R, "world") @ J[3:]])
