"""kinodyn_common.floating_base: base pose, twist and Odometry to the model's q and v (no DDS).

Second sources: scipy's Rotation (scalar-last quaternions, as ROS) for the base orientation, the core's
``frame_placement`` of the root link, and central finite differences of ``frame_placement`` along
``Model.integrate`` for the twist the base velocity gives a frame.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from geometry_msgs.msg import Accel, Point, Pose, Quaternion, Twist, Vector3
from kinodyn.spatial import so3_log
from nav_msgs.msg import Odometry
from scipy.spatial.transform import Rotation

from kinodyn import Model
from kinodyn_common import floating_base

if TYPE_CHECKING:
    from collections.abc import Sequence

QUADRUPED = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"
FLOATING = Model.from_urdf(QUADRUPED, floating_base=True)
FIXED = Model.from_urdf(QUADRUPED)


def pose(position: Sequence[float], xyzw: Sequence[float] | np.ndarray) -> Pose:
    x, y, z, w = (float(c) for c in xyzw)
    return Pose(
        position=Point(x=float(position[0]), y=float(position[1]), z=float(position[2])),
        orientation=Quaternion(x=x, y=y, z=z, w=w),
    )


def twist(values: Sequence[float]) -> Twist:
    v = [float(c) for c in values]
    return Twist(linear=Vector3(x=v[0], y=v[1], z=v[2]), angular=Vector3(x=v[3], y=v[4], z=v[5]))


def test_base_pose_is_the_root_link_placement_of_the_floating_model() -> None:
    rotation = Rotation.random(random_state=3)
    position = [0.3, -1.2, 0.45]
    q_base = floating_base.base_configuration(pose(position, rotation.as_quat()), "base_pose")
    q = np.concatenate([q_base, np.zeros(len(FLOATING.joint_names))])
    T = FLOATING.frame_placement(q, "base_link")
    np.testing.assert_allclose(T[:3, :3], rotation.as_matrix(), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(T[:3, 3], position)


def test_base_pose_quaternion_is_normalized_within_the_tolerance() -> None:
    xyzw = np.array([0.0, 0.0, 0.6, 0.8]) * (1.0 + 5e-7)  # |q| - 1 = 5e-7, within kinodyn's 1e-6
    q_base = floating_base.base_configuration(pose([0, 0, 0], xyzw), "base_pose")
    assert np.linalg.norm(q_base[3:]) == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(q_base[3:], [0.0, 0.0, 0.6, 0.8], rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("position", "xyzw", "expected"),
    [
        ([0, 0, 0], [0, 0, 0, 0], "not a unit quaternion"),
        ([0, 0, 0], [0, 0, 0, 1.1], "not a unit quaternion"),
        ([0, math.nan, 0], [0, 0, 0, 1], "non-finite"),
        ([0, 0, 0], [math.inf, 0, 0, 1], "non-finite"),
    ],
)
def test_bad_base_poses_are_refused_naming_the_field(position: Sequence[float], xyzw: Sequence[float],
                                                     expected: str) -> None:
    with pytest.raises(ValueError, match=expected) as error:
        floating_base.base_configuration(pose(position, xyzw), "base_pose")
    assert str(error.value).startswith("base_pose: ")


def test_base_twist_and_acceleration_must_be_finite() -> None:
    np.testing.assert_array_equal(floating_base.base_vector(twist([1, 2, 3, 4, 5, 6]), "base_twist"),
                                  [1, 2, 3, 4, 5, 6])
    accel = Accel(linear=Vector3(x=1.0), angular=Vector3(z=-2.0))
    np.testing.assert_array_equal(floating_base.base_vector(accel, "base_acceleration"), [1, 0, 0, 0, 0, -2])
    with pytest.raises(ValueError, match="base_twist is not finite"):
        floating_base.base_vector(twist([0, 0, 0, 0, math.nan, 0]), "base_twist")


def test_floating_model_takes_base_then_joints() -> None:
    joints = np.arange(len(FLOATING.joint_names), dtype=float)
    q = floating_base.configuration(FLOATING, joints, pose([1, 2, 3], [0, 0, 0, 1]), "base_pose")
    assert q.shape == (FLOATING.nq,)
    np.testing.assert_array_equal(q, np.concatenate([[1, 2, 3, 0, 0, 0, 1], joints]))
    v = floating_base.velocity(FLOATING, joints, twist([1, 2, 3, 4, 5, 6]), "base_twist")
    assert v.shape == (FLOATING.nv,)
    np.testing.assert_array_equal(floating_base.joint_part(FLOATING, v), joints)
    names = floating_base.coordinate_names(FLOATING)
    assert len(names) == FLOATING.nv
    assert tuple(names[:6]) == floating_base.BASE_COORDINATE_NAMES
    assert names[6:] == list(FLOATING.joint_names)


def test_fixed_model_takes_joints_only_and_refuses_a_base_input() -> None:
    joints = np.arange(len(FIXED.joint_names), dtype=float)
    assert floating_base.configuration(FIXED, joints, Pose(), "base_pose") is joints
    assert floating_base.velocity(FIXED, joints, Accel(), "base_acceleration") is joints
    assert floating_base.joint_part(FIXED, joints) is joints
    assert floating_base.coordinate_names(FIXED) == list(FIXED.joint_names)
    for bad in (pose([0, 0, 0.1], [0, 0, 0, 1]), pose([0, 0, 0], [0, 0, 0, -1])):
        with pytest.raises(ValueError, match="base_pose is set but the model is fixed-base"):
            floating_base.configuration(FIXED, joints, bad, "base_pose")
    with pytest.raises(ValueError, match="base_twist is set but the model is fixed-base"):
        floating_base.velocity(FIXED, joints, twist([0, 0, 0, 0, 0, 1e-9]), "base_twist")


def odometry(frame: str, child: str, xyzw: Sequence[float] = (0.0, 0.0, 0.0, 1.0),
             twist_values: Sequence[float] = (0.0,) * 6) -> Odometry:
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = frame, child
    msg.pose.pose = pose([1.0, 2.0, 0.5], xyzw)
    msg.twist.twist = twist(twist_values)
    return msg


def test_odometry_gives_the_base_state_in_its_frame() -> None:
    frame, q_base, v_base = floating_base.odometry_base_state(
        odometry("odom", "base_link", twist_values=(0.1, 0, 0, 0, 0, 0.2)), "base_link"
    )
    assert frame == "odom"
    np.testing.assert_array_equal(q_base, [1.0, 2.0, 0.5, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(v_base, [0.1, 0, 0, 0, 0, 0.2])
    assert floating_base.odometry_base_state(odometry("odom", ""), "base_link")[0] == "odom"


@pytest.mark.parametrize(
    ("msg", "expected"),
    [
        (odometry("", "base_link"), "empty header.frame_id"),
        (odometry("odom", "imu_link"), "child_frame_id 'imu_link' is not the URDF root link 'base_link'"),
        (odometry("odom", "base_link", xyzw=(0, 0, 0, 0)), "Odometry pose: "),
        (odometry("odom", "base_link", twist_values=(math.inf, 0, 0, 0, 0, 0)), "Odometry twist is not"),
    ],
)
def test_bad_odometry_is_refused(msg: Odometry, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        floating_base.odometry_base_state(msg, "base_link")


def test_base_induced_twist_matches_finite_differences() -> None:
    rng = np.random.default_rng(5)
    q = FLOATING.random_configuration(rng)
    v_base = rng.normal(size=6)
    v = np.concatenate([v_base, np.zeros(len(FLOATING.joint_names))])
    h = 1e-6
    before, after = (FLOATING.frame_placement(FLOATING.integrate(q, v, s * h), "LF_FOOT") for s in (-1, 1))
    linear = (after[:3, 3] - before[:3, 3]) / (2 * h)
    angular = so3_log(after[:3, :3] @ before[:3, :3].T) / (2 * h)  # world axes
    expected = np.concatenate([linear, angular])
    induced = floating_base.base_induced_twist(FLOATING, q, "LF_FOOT", v_base)
    np.testing.assert_allclose(induced, expected, rtol=0, atol=1e-8)
