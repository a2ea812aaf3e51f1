"""The nodes' input guards: input bounds, finite outputs, callbacks that drop bad messages, undeclared
parameters."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, TransformStamped, Vector3
from kinodyn_common.conversions import (
    MAX_TRANSLATION,
    InputError,
    JointStateError,
    pose_to_matrix,
)
from kinodyn_common.finite import non_finite_field, publish_finite
from kinodyn_common.input_bounds import JointBounds, check_magnitude, check_reach, reach_radius
from kinodyn_common.parameters import reject_undeclared_parameters
from kinodyn_common.problem_log import DistinctProblemLog, dropping_bad_messages
from kinodyn_common.stamps import NS, stamp_to_ns
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import Float64MultiArray

from kinodyn import Model
from kinodyn_interfaces.msg import ContactStates, JointPDCommand
from tf2_msgs.msg import TFMessage

if TYPE_CHECKING:

    from rclpy.context import Context

    from conftest import RecordingLogger

REPO = Path(__file__).resolve().parents[3]
ARM7 = Model.from_urdf(str(REPO / "urdf" / "arm7.urdf"))
PLANAR = Model.from_urdf(str(REPO / "urdf" / "planar_2link.urdf"))
SLIDER = Model.from_urdf(
    """<robot name="slider">
  <link name="base"/><link name="tip"/>
  <link name="carriage"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="carriage"/>
    <origin xyz="0 0 1"/><axis xyz="1 0 0"/><limit lower="-0.5" upper="0.3" effort="1" velocity="1"/></joint>
  <joint name="spin" type="continuous"><parent link="carriage"/><child link="arm"/>
    <origin xyz="0 0.2 0"/><axis xyz="0 0 1"/></joint>
  <joint name="tool" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0.3 0 0.4"/></joint>
</robot>"""
)


# --- input bounds ---------------------------------------------------------------------------------
def test_joint_bounds_widen_finite_limits_and_bound_continuous_joints() -> None:
    bounds = JointBounds.from_model(SLIDER, margin=0.1, continuous_bound=1e6)
    assert bounds.names == ("slide", "spin")
    np.testing.assert_allclose(bounds.lower, [-0.6, -1e6], rtol=0, atol=1e-15)
    np.testing.assert_allclose(bounds.upper, [0.4, 1e6], rtol=0, atol=1e-15)
    inside = np.array([0.39, -9.9e5])
    assert bounds.check_q(inside) is inside
    assert bounds.check(["spin"], np.array([1e6])).tolist() == [1e6]


@pytest.mark.parametrize(
    ("names", "values", "bad"),
    [
        (["slide", "spin"], [0.41, 0.0], ("slide",)),
        (["slide", "spin"], [-0.7, 1e300], ("slide", "spin")),
        (["spin"], [-1.5e6], ("spin",)),
    ],
)
def test_positions_outside_the_bounds_are_refused_naming_the_joints(names: list[str], values: list[float],
                                                                    bad: tuple[str, ...]) -> None:
    bounds = JointBounds.from_model(SLIDER, margin=0.1, continuous_bound=1e6)
    with pytest.raises(JointStateError, match="outside the URDF limits plus joint_position_margin") as info:
        bounds.check(names, np.array(values))
    assert info.value.key == ("position_out_of_bounds", "position")
    for name in bad:
        assert f"{name} = " in str(info.value)


def test_check_magnitude() -> None:
    v = np.array([-3.0, 2.0])
    assert check_magnitude(v, 3.0, "velocity", "joint_velocity_bound") is v
    assert check_magnitude(np.zeros(0), 1.0, "velocity", "joint_velocity_bound").size == 0
    with pytest.raises(InputError, match="velocity 1e\\+200 exceeds joint_velocity_bound = 1000"):
        check_magnitude(np.array([0.0, -1e200]), 1e3, "velocity", "joint_velocity_bound")


def test_reach_radius_bounds_the_forward_kinematics_and_is_attained_by_the_stretched_planar_arm() -> None:
    rng = np.random.default_rng(3)
    for model, frame in ((ARM7, "ee_link"), (PLANAR, PLANAR.frame_names[-1]), (SLIDER, "tip")):
        reach = reach_radius(model, frame)
        samples = [model.random_configuration(rng) for _ in range(2000)]
        distances = [np.linalg.norm(model.frame_placement(q, frame)[:3, 3]) for q in samples]
        assert max(distances) <= reach
    # planar arm: straight up at q = 0, the sum of its link lengths (second source: FK)
    tip = PLANAR.frame_names[-1]
    assert reach_radius(PLANAR, tip) == pytest.approx(
        np.linalg.norm(PLANAR.frame_placement(np.zeros(2), tip)[:3, 3]), abs=1e-15
    )
    # slider by hand: |(0,0,1)| + travel 0.5 + |(0,0.2,0)| + |(0.3,0,0.4)|
    assert reach_radius(SLIDER, "tip") == pytest.approx(1.0 + 0.5 + 0.2 + 0.5, abs=1e-15)


def test_check_reach() -> None:
    T = np.eye(4)
    T[:3, 3] = [0.0, 0.0, 2.5]
    assert check_reach(T, 1.8, 0.7, "tool") is T
    T[0, 3] = 1e5
    with pytest.raises(InputError, match=r"beyond the reach of 'tool' \(1.8 m from the URDF\)") as info:
        check_reach(T, 1.8, 0.7, "tool")
    assert info.value.key == ("target_out_of_reach", ())


def test_poses_beyond_max_translation_and_bad_stamps_are_input_errors() -> None:
    pose = Pose()
    pose.orientation.w = 1.0
    pose.position.x = MAX_TRANSLATION
    pose_to_matrix(pose)
    pose.position.x = 1e300
    with pytest.raises(InputError, match="exceeds 1e\\+09 m") as info:
        pose_to_matrix(pose)
    assert info.value.kind == "translation_too_large"
    pose.position.x, pose.orientation.w = 0.0, 0.0
    with pytest.raises(InputError, match="not a unit quaternion"):
        pose_to_matrix(pose)
    assert stamp_to_ns(Time(sec=3, nanosec=999_999_999)) == 3_999_999_999
    for stamp in (Time(sec=-1), Time(sec=0, nanosec=NS)):
        with pytest.raises(InputError, match="is not a time"):
            stamp_to_ns(stamp)


# --- finite outputs -------------------------------------------------------------------------------
def test_non_finite_field_finds_nan_and_inf_in_nested_messages_and_arrays() -> None:
    tf = TFMessage(transforms=[TransformStamped(), TransformStamped()])
    assert non_finite_field(tf) is None
    tf.transforms[1].transform.rotation.w = math.nan
    assert non_finite_field(tf) == "transforms[1].transform.rotation.w"
    odometry = Odometry()
    odometry.twist.covariance[35] = -math.inf
    assert non_finite_field(odometry) == "twist.covariance[35]"
    assert non_finite_field(Float64MultiArray(data=[1e308, -0.0, 5e-324])) is None
    assert non_finite_field(Float64MultiArray(data=[1.0, math.inf])) == "data[1]"
    schedule = ContactStates(names=["a", "b", "c"], in_contact=[True] * 3, points=[Point() for _ in range(3)],
                             forces=[Vector3() for _ in range(3)])
    assert non_finite_field(schedule) is None
    schedule.forces[2].y = math.nan
    assert non_finite_field(schedule) == "forces[2].y"
    command = JointPDCommand(name=["j"], position=[0.0], velocity=[0.0], effort=[0.0], kp=[1.0],
                             kd=[-math.inf])
    assert non_finite_field(command) == "kd[0]"


class FakePublisher:
    topic_name = "/x/out"

    def __init__(self) -> None:
        self.sent: list[Float64MultiArray] = []

    def publish(self, msg: Float64MultiArray) -> None:
        self.sent.append(msg)


def test_publish_finite_drops_non_finite_messages_with_one_error_per_topic(logger: RecordingLogger) -> None:
    publisher = FakePublisher()
    problems = DistinctProblemLog(logger)
    good = Float64MultiArray(data=[1.0])
    assert publish_finite(publisher, good, problems)
    for _ in range(3):
        assert not publish_finite(publisher, Float64MultiArray(data=[math.nan]), problems)
    assert publisher.sent == [good]
    assert logger.lines == [
        (
            "error",
            "not publishing on /x/out: data[0] is not finite (the input that produced it passed validation; "
            "please report it)",
        )
    ]


# --- callbacks that drop bad messages -------------------------------------------------------------
def test_dropping_bad_messages_logs_once_per_cause_and_keeps_going(logger: RecordingLogger) -> None:
    handled: list[int] = []

    def callback(msg: int) -> None:
        if msg == 1:
            raise JointStateError("length_mismatch", f"message {msg}: lengths", "velocity")
        if msg == 2:
            raise JointStateError("length_mismatch", f"message {msg}: lengths", "effort")
        if msg == 3:
            raise ZeroDivisionError("float division by zero")
        handled.append(msg)

    guarded = dropping_bad_messages(DistinctProblemLog(logger), "joint_states message", callback)
    for msg in (1, 1, 2, 3, 3, 0, 1):
        guarded(msg)
    assert handled == [0]
    assert logger.lines == [
        ("warning", "ignoring joint_states message: message 1: lengths"),
        ("warning", "ignoring joint_states message: message 2: lengths"),
        (
            "error",
            "dropped joint_states message: processing it failed with ZeroDivisionError: float division by "
            "zero; the node goes on",
        ),
    ]


# --- undeclared parameters ------------------------------------------------------------------------
def test_a_misspelled_parameter_is_an_error_naming_it_and_the_accepted_ones(ros_context: Context) -> None:
    overrides = [Parameter("rate_hzz", value=10.0), Parameter("rate_hz", value=20.0)]
    node = Node("guards_test", context=ros_context, parameter_overrides=overrides)
    try:
        assert node.declare_parameter("rate_hz", 50.0).value == 20.0
        with pytest.raises(ValueError, match="unknown parameter rate_hzz") as info:
            reject_undeclared_parameters(node)
        message = str(info.value)
        assert message.startswith("unknown parameter rate_hzz for node guards_test (misspelled")
        assert "its parameters are: " in message
        assert "rate_hz" in message.split("its parameters are: ")[1]
        reject_undeclared_parameters(node, known={"rate_hz", "rate_hzz"})  # a node's own list of names
        node.declare_parameter("rate_hzz", 1.0)
        reject_undeclared_parameters(node)
    finally:
        node.destroy_node()
