"""The floating base of a kinodyn model from messages (docs/conventions.md, docs/core-model-layout.md).

A floating-base model has ``q = [x, y, z, qx, qy, qz, qw, joints]`` and ``v = [base linear, base angular,
joints]`` with both base velocities in the base frame, as the twist of nav_msgs/Odometry (given in
``child_frame_id``, REP-105). The base pose of a geometry_msgs/Pose goes to ``q[:7]``, a Twist (or the time
derivative of its components, an Accel) to ``v[:6]``. A fixed-base model has no base coordinates: its nodes
refuse a base input other than the message default (identity pose, zero twist) instead of ignoring it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from kinodyn.spatial import quat_normalize

from kinodyn_common.conversions import pose_to_matrix

if TYPE_CHECKING:
    from geometry_msgs.msg import Accel, Pose, Twist
    from nav_msgs.msg import Odometry

    from kinodyn import Model

BASE_COORDINATE_NAMES = (
    "base_linear_x",
    "base_linear_y",
    "base_linear_z",
    "base_angular_x",
    "base_angular_y",
    "base_angular_z",
)
"""Names of the six base velocity coordinates (base frame) in answers indexed like ``v``: an effort along
``base_linear_*`` is a force, along ``base_angular_*`` a torque, on the base."""
IDENTITY_POSE = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
"""``[position; quaternion (x, y, z, w)]`` of a default geometry_msgs/Pose."""
FIXED_BASE_HINT = (
    "the model is fixed-base (parameter floating_base is false): leave it at the default, or start the node "
    "with floating_base:=true"
)


def coordinate_names(model: Model) -> list[str]:
    """Names of the velocity coordinates, in the order of ``v``: the base's (if floating), then the joints."""
    base = BASE_COORDINATE_NAMES if model.floating_base else ()
    return [*base, *model.joint_names]


def pose_array(pose: Pose) -> np.ndarray:
    """``[x, y, z, qx, qy, qz, qw]`` of a Pose, unchecked."""
    p, o = pose.position, pose.orientation
    return np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w], dtype=np.float64)


def linear_angular(msg: Twist | Accel) -> np.ndarray:
    """``[linear; angular]`` of a Twist or an Accel, unchecked."""
    a, b = msg.linear, msg.angular
    return np.array([a.x, a.y, a.z, b.x, b.y, b.z], dtype=np.float64)


def base_configuration(pose: Pose, what: str) -> np.ndarray:
    """``q[:7]`` of a base pose, quaternion normalized; ValueError (naming ``what``) for a pose that
    ``conversions.pose_to_matrix`` refuses (non-finite, non-unit quaternion, ...)."""
    try:
        pose_to_matrix(pose)  # the checks of every pose the nodes take
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    values = pose_array(pose)
    values[3:] = quat_normalize(values[3:])
    return values


def base_vector(msg: Twist | Accel, what: str) -> np.ndarray:
    """``[linear; angular]`` of a base twist or acceleration; ValueError (naming ``what``) unless finite."""
    values = linear_angular(msg)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what} is not finite: linear {values[:3]}, angular {values[3:]}")
    return values


def configuration(model: Model, joint_positions: np.ndarray, base_pose: Pose, what: str) -> np.ndarray:
    """The model's ``q`` from the joint positions (model order) and the base pose ``what`` of a request.

    Floating base: ``[base_configuration(base_pose); joint_positions]``. Fixed base: ``joint_positions``, and
    ValueError unless ``base_pose`` is the default (identity) pose.
    """
    if model.floating_base:
        return np.concatenate([base_configuration(base_pose, what), joint_positions])
    if not np.array_equal(pose_array(base_pose), IDENTITY_POSE):
        raise ValueError(f"{what} is set but {FIXED_BASE_HINT}")
    return joint_positions


def velocity(model: Model, joint_values: np.ndarray, base: Twist | Accel, what: str) -> np.ndarray:
    """A velocity-space vector (velocity or acceleration) from joint values and the base's ``what``.

    Floating base: ``[base_vector(base); joint_values]``. Fixed base: ``joint_values``, and ValueError unless
    ``base`` is zero.
    """
    if model.floating_base:
        return np.concatenate([base_vector(base, what), joint_values])
    if np.any(linear_angular(base) != 0.0):
        raise ValueError(f"{what} is set but {FIXED_BASE_HINT}")
    return joint_values


def joint_part(model: Model, values: np.ndarray) -> np.ndarray:
    """The joint entries of a velocity-space vector (the base's six dropped for a floating base)."""
    return values[6:] if model.floating_base else values


def odometry_base_state(msg: Odometry, root_link: str) -> tuple[str, np.ndarray, np.ndarray]:
    """``(header.frame_id, q[:7], v[:6])`` of an Odometry message describing the base.

    ValueError for an empty ``header.frame_id``, a ``child_frame_id`` neither empty nor ``root_link``,
    or a non-finite or non-unit pose or a non-finite twist.
    """
    if not msg.header.frame_id:
        raise ValueError("Odometry has an empty header.frame_id; name the odometry frame (e.g. 'odom')")
    if msg.child_frame_id not in ("", root_link):
        raise ValueError(
            f"Odometry child_frame_id {msg.child_frame_id!r} is not the URDF root link {root_link!r}; "
            "the base pose and twist must be those of the root link"
        )
    return (
        msg.header.frame_id,
        base_configuration(msg.pose.pose, "Odometry pose"),
        base_vector(msg.twist.twist, "Odometry twist"),
    )


def base_induced_twist(model: Model, q: np.ndarray, frame: str, base_velocity: np.ndarray) -> np.ndarray:
    """Twist ``[v; w]`` of ``frame`` (world axes, at the frame origin) that the base velocity alone causes:
    the base columns of the ``local_world_aligned`` Jacobian times ``v[:6]`` (joints held)."""
    twist: np.ndarray = model.frame_jacobian(q, frame, "local_world_aligned")[:, :6] @ base_velocity
    return twist
