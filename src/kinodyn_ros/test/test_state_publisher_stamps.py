"""state_publisher bounds the stamps of what it puts on /tf by its own clock (max_stamp_lead)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kinodyn_common.conversions import InputError
from kinodyn_common.stamps import ns_to_stamp
from kinodyn_control.testing import in_process_node, rclpy_context
from kinodyn_ros.nodes.state_publisher import StatePublisher
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

if TYPE_CHECKING:
    from collections.abc import Iterator

    from builtin_interfaces.msg import Time

# The private reads marked SLF001 are the node's state under test (its callbacks driven directly).
URDF = Path(__file__).resolve().parents[3] / "urdf" / "quadruped.urdf"


@pytest.fixture
def publisher() -> Iterator[StatePublisher]:
    with in_process_node(StatePublisher, {"robot_description_file": URDF, "odometry_topic": "odom"}) as node:
        yield node


def _stamp(ns: int) -> Time:
    return ns_to_stamp(ns)


def test_messages_stamped_beyond_max_stamp_lead_are_refused_naming_topic_stamp_and_clock(
    publisher: StatePublisher,
) -> None:
    now = publisher.get_clock().now().nanoseconds
    joints = JointState(name=["LF_HAA"], position=[0.1])
    joints.header.stamp = _stamp(now + 10_000_000_000)
    with pytest.raises(InputError, match=r"joint_states stamped .* (9\.9\d*|10\.0\d*) s ahead of the node's "
                                         r"clock .*max_stamp_lead 0\.5 s"):
        publisher._on_joint_state(joints)  # noqa: SLF001  (the node's state under test)
    assert not publisher._pending  # nothing of it waits for /tf  # noqa: SLF001
    odometry = Odometry()
    odometry.header.frame_id, odometry.pose.pose.orientation.w = "odom", 1.0
    odometry.header.stamp = _stamp(now + 10_000_000_000)
    with pytest.raises(InputError, match=r"odometry stamped .* ahead of the node's clock"):
        publisher._on_odometry(odometry)  # noqa: SLF001  (the node's state under test)
    joints.header.stamp = _stamp(now + 100_000_000)  # within the bound: taken
    publisher._on_joint_state(joints)  # noqa: SLF001  (the node's state under test)
    assert set(publisher._pending) == {"LF_HAA"}  # noqa: SLF001  (the node's state under test)


def test_max_stamp_lead_must_be_positive() -> None:
    with rclpy_context({"robot_description_file": URDF, "max_stamp_lead": -1.0}), \
            pytest.raises(ValueError, match="max_stamp_lead must be a positive number"):
        StatePublisher()
