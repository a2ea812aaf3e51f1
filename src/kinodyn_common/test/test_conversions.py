"""kinodyn_common.conversions: JointState by name, transforms and poses, Odometry (no DDS).

Second sources: scipy's Rotation for quaternions (scalar-last, as ROS), hand-written matrices.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Quaternion, Transform
from kinodyn_common.conversions import (
    JointStateError,
    joint_state_positions,
    joint_state_to_q,
    matrix_to_pose,
    matrix_to_transform,
    odometry_to_pose,
    pose_to_matrix,
    q_to_joint_state,
    transform_stamped,
    transform_to_matrix,
)
from nav_msgs.msg import Odometry
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState

NAMES = ("joint1", "joint2", "joint3")


def test_joint_state_is_mapped_by_name_not_position() -> None:
    msg = JointState(name=["joint3", "joint1", "joint2"], position=[3.0, 1.0, 2.0])
    np.testing.assert_array_equal(joint_state_to_q(msg, NAMES), [1.0, 2.0, 3.0])


def test_partial_joint_state_keeps_the_caller_order() -> None:
    msg = JointState(name=["joint3", "joint1"], position=[3.0, 1.0], velocity=[0.0, 0.0])
    positions = joint_state_positions(msg, NAMES, allow_partial=True)
    assert positions.names == ("joint1", "joint3")
    np.testing.assert_array_equal(positions.values, [1.0, 3.0])


def test_ignored_names_are_accepted_and_dropped() -> None:
    msg = JointState(name=["joint1", "gripper_mimic"], position=[1.0, 5.0])
    positions = joint_state_positions(msg, NAMES, allow_partial=True, ignored_names=["gripper_mimic"])
    assert positions.names == ("joint1",)


@pytest.mark.parametrize(
    ("msg", "kind", "text"),
    [
        (
            JointState(name=["joint1", "elbow"], position=[0.0, 0.0]),
            "unknown_names",
            "unknown joints 'elbow'",
        ),
        (
            JointState(name=["joint1", "joint2", "joint3"], position=[0.0, math.nan, 0.0]),
            "non_finite",
            "non-finite positions for 'joint2'",
        ),
        (
            JointState(name=["joint1", "joint2", "joint3"], position=[0.0, math.inf, 0.0]),
            "non_finite",
            "'joint2'",
        ),
        (
            JointState(name=["joint1", "joint2", "joint3"], position=[0.0, 0.0]),
            "length_mismatch",
            "3 names but 2 positions",
        ),
        (
            JointState(name=["joint1", "joint2", "joint3"], position=[0.0] * 3, velocity=[0.0]),
            "length_mismatch",
            "3 names but 1 velocity values",
        ),
        (JointState(name=["joint1", "joint1", "joint3"], position=[0.0] * 3), "duplicate_names", "'joint1'"),
        (JointState(name=["joint1", "joint3"], position=[0.0] * 2), "missing_names", "lacks joints 'joint2'"),
    ],
)
def test_bad_joint_state_raises_a_clear_error(msg: JointState, kind: str, text: str) -> None:
    with pytest.raises(JointStateError, match=text) as info:
        joint_state_to_q(msg, NAMES)
    assert info.value.kind == kind


def _key(msg: JointState) -> tuple[object, ...]:
    with pytest.raises(JointStateError) as info:
        joint_state_to_q(msg, NAMES)
    return info.value.key


def test_keys_name_the_cause_not_the_received_values() -> None:
    """One throttle key per cause: each length-mismatch field its own, while unknown names, whatever
    they are, share one (a received name in the key would let random input grow the log without bound)."""
    three = ["joint1", "joint2", "joint3"]
    length_keys = {
        _key(JointState(name=three, position=[0.0])),
        _key(JointState(name=three, position=[0.0] * 3, velocity=[0.0])),
        _key(JointState(name=three, position=[0.0] * 3, effort=[0.0, 0.0])),
        _key(JointState(name=three, position=[0.0] * 3, effort=[0.0] * 4)),
    }
    assert len(length_keys) == 3
    unknown = [_key(JointState(name=["joint1", name], position=[0.0, 0.0])) for name in ("elbow", "wrist")]
    assert unknown[0] == unknown[1] == ("unknown_names", ())
    nan_positions = ([math.nan, 0.0, 0.0], [0.0, 0.0, math.inf])
    nan_keys = {_key(JointState(name=three, position=p)) for p in nan_positions}
    assert nan_keys == {("non_finite", "position")}
    huge = [f"j{i}" for i in range(20_000)]
    with pytest.raises(JointStateError, match=r"'j9', \.\.\. \(20000 in all\); the URDF's") as info:
        joint_state_to_q(JointState(name=huge, position=[0.0] * len(huge)), NAMES)
    assert len(str(info.value)) < 300


def test_q_to_joint_state_round_trip() -> None:
    q, qdot = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    msg = q_to_joint_state(NAMES, q, Time(sec=5, nanosec=7), qdot)
    assert list(msg.name) == list(NAMES)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (5, 7)
    np.testing.assert_array_equal(joint_state_to_q(msg, NAMES), q)
    np.testing.assert_array_equal(msg.velocity, qdot)


def random_transform(rng: np.random.Generator) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    T[:3, 3] = rng.normal(size=3)
    return T


def test_transform_round_trip_and_quaternion_order_match_scipy() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        T = random_transform(rng)
        msg = matrix_to_transform(T)
        r = msg.rotation
        xyzw = np.array([r.x, r.y, r.z, r.w])
        assert xyzw[3] >= 0.0
        reference = Rotation.from_matrix(T[:3, :3]).as_quat()  # scipy stores (x, y, z, w)
        np.testing.assert_allclose(xyzw, reference * np.sign(reference[3]), rtol=0, atol=1e-15)
        np.testing.assert_allclose(transform_to_matrix(msg), T, rtol=0, atol=1e-15)
        np.testing.assert_allclose(pose_to_matrix(matrix_to_pose(T)), T, rtol=0, atol=1e-15)


def test_transform_of_a_quarter_turn_about_z_written_by_hand() -> None:
    h = math.sqrt(0.5)
    msg = Transform(rotation=Quaternion(x=0.0, y=0.0, z=h, w=h))
    msg.translation.x = 1.0
    expected = np.array(
        [[0.0, -1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]
    )
    np.testing.assert_allclose(transform_to_matrix(msg), expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    ("rotation", "text"),
    [
        (Quaternion(x=0.0, y=0.0, z=0.0, w=2.0), "not a unit quaternion"),
        (Quaternion(x=0.0, y=0.0, z=0.0, w=math.nan), "non-finite"),
    ],
)
def test_bad_rotation_is_rejected(rotation: Quaternion, text: str) -> None:
    with pytest.raises(ValueError, match=text):
        transform_to_matrix(Transform(rotation=rotation))


def test_transform_stamped_carries_frames_and_stamp() -> None:
    T = random_transform(np.random.default_rng(4))
    msg = transform_stamped("base_link", "link1", T, Time(sec=3, nanosec=4))
    assert (msg.header.frame_id, msg.child_frame_id) == ("base_link", "link1")
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (3, 4)
    np.testing.assert_allclose(transform_to_matrix(msg.transform), T, rtol=0, atol=1e-15)


def test_odometry_to_pose() -> None:
    T = random_transform(np.random.default_rng(5))
    msg = Odometry()
    msg.header.frame_id, msg.child_frame_id = "odom", "base_link"
    msg.pose.pose = matrix_to_pose(T)
    frame, child, pose = odometry_to_pose(msg)
    assert (frame, child) == ("odom", "base_link")
    np.testing.assert_allclose(pose, T, rtol=0, atol=1e-15)
    msg.header.frame_id = ""
    with pytest.raises(ValueError, match=r"empty header\.frame_id"):
        odometry_to_pose(msg)
