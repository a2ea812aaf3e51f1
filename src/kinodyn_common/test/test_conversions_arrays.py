"""kinodyn_common.conversions for the kinematics and dynamics nodes: per-joint vectors, wrenches,
multi-arrays.

Second sources: values written by hand, numpy's own row-major strides, a JointState in another name order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from kinodyn_common import conversions

NAMES = ("joint1", "joint2", "joint3")


def test_joint_state_vector_follows_the_names_of_the_message() -> None:
    msg = JointState(name=["joint3", "joint1", "joint2"], position=[0.0, 0.0, 0.0], velocity=[3.0, 1.0, 2.0])
    conversions.joint_state_to_q(msg, NAMES)
    np.testing.assert_array_equal(
        conversions.joint_state_vector(msg, msg.velocity, NAMES, "velocity"), [1.0, 2.0, 3.0]
    )
    np.testing.assert_array_equal(
        conversions.joint_state_vector(msg, [30.0, 10.0, 20.0], NAMES, "acceleration"), [10, 20, 30]
    )


def test_joint_state_vector_empty_is_zero() -> None:
    msg = JointState(name=["joint2", "joint1", "joint3"], position=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(conversions.joint_state_vector(msg, [], NAMES, "acceleration"), np.zeros(3))


@pytest.mark.parametrize(
    ("values", "kind", "text"),
    [
        ([1.0, 2.0], "length_mismatch", "2 acceleration values for 3 joint names"),
        ([1.0, math.nan, 2.0], "non_finite", "non-finite acceleration for 'joint1'"),
        ([1.0, 2.0, math.inf], "non_finite", "non-finite acceleration for 'joint2'"),
    ],
)
def test_joint_state_vector_rejects_bad_values(values: list[float], kind: str, text: str) -> None:
    msg = JointState(name=["joint3", "joint1", "joint2"], position=[0.0, 0.0, 0.0])
    with pytest.raises(conversions.JointStateError, match=text) as info:
        conversions.joint_state_vector(msg, values, NAMES, "acceleration")
    assert info.value.kind == kind


def _wrench(frame: str, values: list[float]) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = frame
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = values
    return msg


def test_wrenches_by_link_orders_force_then_torque_and_sums_per_link() -> None:
    wrenches = conversions.wrenches_by_link(
        [
            _wrench("a", [1, 2, 3, 4, 5, 6]),
            _wrench("b", [0, 0, 1, 0, 0, 0]),
            _wrench("a", [1, 0, 0, 0, 0, -6]),
        ]
    )
    assert sorted(wrenches) == ["a", "b"]
    np.testing.assert_array_equal(wrenches["a"], [2, 2, 3, 4, 5, 0])
    np.testing.assert_array_equal(wrenches["b"], [0, 0, 1, 0, 0, 0])
    assert conversions.wrenches_by_link([]) == {}


@pytest.mark.parametrize(
    ("wrench", "text"),
    [
        (_wrench("", [0, 0, 0, 0, 0, 0]), "wrench 0 has an empty header.frame_id"),
        (_wrench("link", [0, 0, math.nan, 0, 0, 0]), "wrench 0 on 'link' is not finite"),
    ],
)
def test_wrenches_by_link_rejects_bad_wrenches(wrench: WrenchStamped, text: str) -> None:
    with pytest.raises(ValueError, match=text):
        conversions.wrenches_by_link([wrench])


def test_matrix_to_multiarray_is_row_major_with_std_msgs_strides() -> None:
    M = np.arange(6.0).reshape(2, 3)
    msg = conversions.array_to_multiarray(M, ["rows", "columns"])
    assert list(msg.data) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert [(d.label, d.size, d.stride) for d in msg.layout.dim] == [("rows", 2, 6), ("columns", 3, 3)]
    assert msg.layout.data_offset == 0
    np.testing.assert_array_equal(conversions.multiarray_to_array(msg), M)


def test_vector_to_multiarray_and_back() -> None:
    msg = conversions.array_to_multiarray(np.array([1.5, -2.0]), ["joints"])
    assert [(d.label, d.size, d.stride) for d in msg.layout.dim] == [("joints", 2, 2)]
    np.testing.assert_array_equal(conversions.multiarray_to_array(msg), [1.5, -2.0])
    plain = Float64MultiArray(data=[1.0, 2.0])  # no layout: read as a 1-d array
    np.testing.assert_array_equal(conversions.multiarray_to_array(plain), [1.0, 2.0])


def test_three_dimensional_round_trip_matches_numpy_strides() -> None:
    a = np.random.default_rng(0).normal(size=(2, 3, 4))
    msg = conversions.array_to_multiarray(a, ["i", "j", "k"])
    # std_msgs: stride of dim i = numpy's element stride of axis i times the size of axis i
    numpy_strides = [s // a.itemsize * n for s, n in zip(a.strides, a.shape, strict=True)]
    assert [d.stride for d in msg.layout.dim] == numpy_strides
    assert [d.stride for d in msg.layout.dim] == [24, 12, 4]
    np.testing.assert_array_equal(conversions.multiarray_to_array(msg), a)


def test_array_to_multiarray_needs_one_label_per_axis() -> None:
    with pytest.raises(ValueError, match="one label per axis"):
        conversions.array_to_multiarray(np.eye(2), ["rows"])


def test_multiarray_with_a_layout_that_does_not_fit_is_rejected() -> None:
    msg = Float64MultiArray(data=[1.0, 2.0, 3.0])
    msg.layout.dim = [
        MultiArrayDimension(label="rows", size=2, stride=4),
        MultiArrayDimension(size=2, stride=2),
    ]
    with pytest.raises(ValueError, match="does not describe its 3 values row-major"):
        conversions.multiarray_to_array(msg)
